//! macOS Seatbelt backend (R-T2): SBPL policy text plus `-D` parameters.
//!
//! Only `/usr/bin/sandbox-exec` is trusted. Paths from the profile never appear in the
//! policy text; each is passed as a `-D KEY=path` parameter and referenced as
//! `(param "KEY")`, so a path with quotes or parentheses cannot change the policy. The
//! generator is pure and tested as text on any host (an SBPL evaluator in the test suite
//! checks it against [`ResolvedFilesystem::access_for`]; see `docs/macos.md`).
//!
//! The policy is a list of typed sections ([`Section`]), emitted in this order:
//! 1. [`Section::Base`]: `(deny default)` and the process, sysctl, IPC, terminal and
//!    device allowances every command needs, each with the public report behind it.
//! 2. [`Section::PlatformDefaults`]: for profiles whose default is `deny`, the macOS
//!    system paths a process needs to start (the counterpart of Linux-shaped `:minimal`).
//! 3. [`Section::Regions`]: most-specific-wins (R-P2) encoded exactly: each entry's region
//!    is its subpath minus the subpaths of deeper entries beneath it; the default region
//!    is `/` minus every entry. Regions are disjoint, so their order does not matter.
//! 4. [`Section::Metadata`]: `file-read-metadata` on the ancestors of readable entries and
//!    on symlink spellings, so path lookups, `realpath` and `getcwd` work.
//! 5. [`Section::Pins`]: Seatbelt checks paths, so renaming a directory moves everything
//!    beneath it out of its rules. Every existing entry and every ancestor of one that lies
//!    in a writable region is pinned: `file-write-unlink` (rmdir, rename source) and
//!    `file-write-create` (rename destination) are denied on that literal path, as the
//!    Linux backend pins with mount points (R-P3).
//! 6. [`Section::Network`]: with the network enabled, IP sockets plus the services TLS and
//!    name resolution need; unix sockets only from an allow list.
//! 7. [`Section::Final`]: hard links are refused (`file-link`): a link is a second name for
//!    an inode, so a read-only or denied file linked into a writable region could be
//!    written or read through it; and `TIOCSTI` (typing into the terminal) is refused.
//!
//! SBPL facts relied on (from the production policies cited in `docs/macos.md`): the last
//! matching rule wins; paths are matched in their resolved spelling (`/private/tmp`);
//! `subpath` matches by whole components; `rmdir`/`rename` are checked as
//! `file-write-unlink` on the source path.

use cordon_policy::paths::depth;
use cordon_policy::{Access, NetworkPolicy, ResolvedFilesystem, ResolvedProfile};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The only `sandbox-exec` cordon runs.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// A generated policy: SBPL text and its `(KEY, path)` parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatbeltPolicy {
    /// The SBPL text (contains no path from the profile).
    pub text: String,
    /// Parameters, in order, as `(KEY, path)`; each is passed as `-D KEY=path`.
    pub params: Vec<(String, String)>,
}

impl SeatbeltPolicy {
    /// The `sandbox-exec` arguments before `--`: `-p TEXT -D KEY=path…`.
    pub fn sandbox_exec_args(&self) -> Vec<String> {
        let mut args = vec!["-p".to_string(), self.text.clone()];
        for (k, v) in &self.params {
            args.push("-D".into());
            args.push(format!("{k}={v}"));
        }
        args
    }
}

/// The policy's sections, in emission order (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// `(deny default)` and the allowances every command needs.
    Base,
    /// macOS system paths, for profiles whose default is `deny`.
    PlatformDefaults,
    /// The profile's entries and default, one disjoint region each (R-P2).
    Regions,
    /// Metadata reads on ancestors and symlink spellings of readable entries.
    Metadata,
    /// Entries and their ancestors that cannot be renamed or removed (R-P3).
    Pins,
    /// Network allowances (only when the network is enabled).
    Network,
    /// Closing denials (hard links, TIOCSTI).
    Final,
}

/// Base allowances. Every rule names why it is here; `docs/macos.md` lists the source
/// policy or public report for each, and which production rules were waived.
const BASE: &str = r#"(version 1)
(deny default)
; Children inherit this policy: running and signalling processes of the same sandbox.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
; ps/pgrep list processes (pids and names only; arguments stay hidden, see kern.procargs2).
(allow process-info-listpids)
(allow process-info-pidinfo)
; Host facts read by libc, Node os.cpus(), Python os.cpu_count(), uname. An allow list:
; kern.procargs2 (other processes' arguments and environment) is deliberately absent.
(allow sysctl-read
  (sysctl-name "hw.activecpu") (sysctl-name "hw.byteorder") (sysctl-name "hw.cachelinesize")
  (sysctl-name "hw.cpufamily") (sysctl-name "hw.cputype") (sysctl-name "hw.cpusubtype")
  (sysctl-name "hw.l1dcachesize") (sysctl-name "hw.l1icachesize") (sysctl-name "hw.l2cachesize")
  (sysctl-name "hw.l3cachesize") (sysctl-name "hw.logicalcpu") (sysctl-name "hw.logicalcpu_max")
  (sysctl-name "hw.machine") (sysctl-name "hw.memsize") (sysctl-name "hw.model")
  (sysctl-name "hw.ncpu") (sysctl-name "hw.nperflevels") (sysctl-name "hw.packages")
  (sysctl-name "hw.pagesize") (sysctl-name "hw.pagesize_compat") (sysctl-name "hw.physicalcpu")
  (sysctl-name "hw.physicalcpu_max") (sysctl-name "hw.cpufrequency") (sysctl-name "hw.tbfrequency")
  (sysctl-name "hw.tbfrequency_compat") (sysctl-name "hw.vectorunit")
  (sysctl-name-prefix "hw.optional.") (sysctl-name-prefix "hw.perflevel")
  (sysctl-name "machdep.cpu.brand_string") (sysctl-name-prefix "machdep.cpu.")
  (sysctl-name "kern.argmax") (sysctl-name "kern.boottime") (sysctl-name "kern.hostname")
  (sysctl-name "kern.maxfiles") (sysctl-name "kern.maxfilesperproc") (sysctl-name "kern.maxproc")
  (sysctl-name "kern.ngroups") (sysctl-name "kern.osproductversion") (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype") (sysctl-name "kern.osvariant_status") (sysctl-name "kern.osversion")
  (sysctl-name "kern.secure_kernel") (sysctl-name "kern.usrstack64") (sysctl-name "kern.version")
  (sysctl-name "kern.proc.all") (sysctl-name-prefix "kern.proc.pid.")
  (sysctl-name-prefix "kern.proc.pgrp.") (sysctl-name-prefix "kern.proc.uid.")
  (sysctl-name "sysctl.proc_cputype") (sysctl-name "vm.loadavg") (sysctl-name "vm.swapusage"))
; Node os.cpus() reads per-CPU times through host_processor_info().
(allow mach-host*)
; User and group lookups (getpwuid, id, git's author name).
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership"))
; Preference reads (CFPreferences: defaults, many CLIs linked with Foundation).
(allow user-preference-read)
(allow mach-lookup (global-name "com.apple.cfprefsd.agent") (global-name "com.apple.cfprefsd.daemon"))
; Logging from system libraries.
(allow mach-lookup (global-name "com.apple.logd") (global-name "com.apple.diagnosticd")
  (global-name "com.apple.system.logger"))
; Python multiprocessing (SemLock) and other POSIX semaphore users.
(allow ipc-posix-sem)
; POSIX shared memory: only the names the platform itself uses.
(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata
  (ipc-posix-name "apple.shm.notification_center"))
; Terminals: openpty, REPLs, prompts, stty.
(allow pseudo-tty)
(allow file-read* file-write-data file-ioctl (literal "/dev/tty") (literal "/dev/ptmx")
  (regex #"^/dev/ttys[0-9]+$"))
; Standard streams and the usual device nodes.
(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero")
  (literal "/dev/stdout") (literal "/dev/stderr") (regex #"^/dev/fd/[12]$"))
(allow file-read* (literal "/dev/stdin") (literal "/dev/fd/0") (literal "/dev/random")
  (literal "/dev/urandom") (literal "/dev/autofs_nowait"))
(allow file-read-data file-write-data (subpath "/dev/fd"))
(allow file-read-metadata (literal "/dev") (literal "/dev/fd"))
; getcwd and path lookups start at /; the system symlinks /tmp, /var, /etc resolve.
(allow file-read-metadata (literal "/") (literal "/tmp") (literal "/var") (literal "/etc")
  (literal "/private") (literal "/private/var") (literal "/private/var/folders"))
"#;

/// The macOS system paths a process needs to start (dyld cache, frameworks, libraries,
/// time zone, resolver configuration), for profiles whose default is `deny`.
const PLATFORM_DEFAULTS: &str = r#"; macOS platform defaults (default = "deny"): what a process needs to start.
(allow file-read* file-map-executable
  (subpath "/System") (subpath "/usr/lib") (subpath "/usr/libexec") (subpath "/usr/bin")
  (subpath "/usr/sbin") (subpath "/usr/share") (subpath "/bin") (subpath "/sbin")
  (subpath "/Library/Apple") (subpath "/Library/Developer/CommandLineTools")
  (subpath "/private/var/db/dyld") (subpath "/private/var/db/timezone")
  (subpath "/private/etc") (subpath "/Library/Preferences"))
(allow file-read* (literal "/private/var/select/sh") (literal "/private/var/select/developer_dir")
  (literal "/private/var/db/xcode_select_link"))
(allow file-read-metadata (literal "/private/var/select") (literal "/private/var/db")
  (literal "/Library") (literal "/Library/Developer") (literal "/usr"))
(allow system-mac-syscall (mac-policy-name "vnguard"))
"#;

/// Network allowances when the profile enables the network.
const NETWORK: &str = r#"; Network enabled: IP sockets (remote filters accept only * or localhost).
(allow network-outbound (remote ip "*:*"))
(allow network-inbound (local ip "*:*"))
(allow network-bind (local ip "*:*"))
(allow system-socket)
; Name resolution, TLS trust evaluation and network configuration.
(allow mach-lookup (global-name "com.apple.SecurityServer") (global-name "com.apple.trustd")
  (global-name "com.apple.trustd.agent") (global-name "com.apple.ocspd")
  (global-name "com.apple.networkd") (global-name "com.apple.dnssd.service")
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.SystemConfiguration.configd"))
(allow sysctl-read (sysctl-name-prefix "net.routetable."))
; Unix sockets: only this allow list (the DNS responder). Container-engine sockets
; (docker, podman, colima) are never opened implicitly.
(allow network-outbound (literal "/private/var/run/mDNSResponder"))
"#;

/// Closing denials, last so that no allowance above (not even an unrestricted
/// filesystem's `file*`) overrides them.
const FINAL: &str =
    "; No typing into the terminal's input queue (TIOCSTI = _IOW('t', 114, char) = 0x80017472),
; spelled as a number so it compiles without a symbol table.
(deny file-ioctl (ioctl-command 2147578994))
";

/// Hard links, for restricted filesystems.
const NO_HARD_LINKS: &str =
    "; Hard links are refused: a second name for a read-only or denied file would escape its rules.
(deny file-link)
";

/// Most-specific-wins over the layered entries for a canonical path `p` built from entry
/// paths (no filesystem needed): the access of the deepest entry covering `p`, else
/// `default` — [`ResolvedFilesystem::access_for`] on canonical paths.
fn access_at(default: Access, layered: &[&cordon_policy::ResolvedEntry], p: &Path) -> Access {
    layered
        .iter()
        .filter(|e| p.starts_with(&e.path))
        .max_by_key(|e| depth(&e.path))
        .map_or(default, |e| e.access)
}

/// Paths to pin (R-P3): every existing entry, and every ancestor of an existing entry,
/// whose own access is `write` — those are the names a command could otherwise rename or
/// remove to move an entry's rules away from the files they govern.
pub fn pinned_paths(fs: &ResolvedFilesystem) -> Vec<PathBuf> {
    let ResolvedFilesystem::Restricted { default, .. } = fs else {
        return Vec::new();
    };
    let layered = fs.layered();
    let mut out = BTreeSet::new();
    for e in layered.iter().filter(|e| e.exists) {
        let mut a = e.path.clone();
        loop {
            if access_at(*default, &layered, &a) == Access::Write {
                out.insert(a.clone());
            }
            if !a.pop() {
                break;
            }
        }
    }
    out.into_iter().collect()
}

/// Collects parameters: one key per distinct path, in first-use order.
#[derive(Default)]
struct Params {
    list: Vec<(String, String)>,
}

impl Params {
    fn key(&mut self, prefix: &str, p: &Path) -> String {
        let v = p.to_string_lossy().into_owned();
        if let Some((k, _)) = self
            .list
            .iter()
            .find(|(k, pv)| *pv == v && k.starts_with(prefix))
        {
            return k.clone();
        }
        let k = format!("{prefix}_{}", self.list.len());
        self.list.push((k.clone(), v));
        k
    }
}

/// Generates the SBPL policy for `profile` (R-T2).
pub fn policy(profile: &ResolvedProfile) -> SeatbeltPolicy {
    let mut params = Params::default();
    let mut text = String::new();
    for section in [
        Section::Base,
        Section::PlatformDefaults,
        Section::Regions,
        Section::Metadata,
        Section::Pins,
        Section::Network,
        Section::Final,
    ] {
        emit(section, profile, &mut params, &mut text);
    }
    SeatbeltPolicy {
        text,
        params: params.list,
    }
}

fn emit(section: Section, profile: &ResolvedProfile, params: &mut Params, text: &mut String) {
    let fs = &profile.filesystem;
    let restricted = match fs {
        ResolvedFilesystem::Restricted { default, .. } => Some(*default),
        ResolvedFilesystem::Unrestricted => None,
    };
    match section {
        Section::Base => text.push_str(BASE),
        Section::PlatformDefaults => {
            if restricted == Some(Access::Deny) {
                text.push_str(PLATFORM_DEFAULTS);
            }
        }
        Section::Regions => match restricted {
            None => text.push_str("; Filesystem unrestricted.\n(allow file*)\n"),
            Some(default) => regions(fs, default, params, text),
        },
        Section::Metadata => {
            if restricted.is_some() {
                metadata(fs, params, text);
            }
        }
        Section::Pins => {
            let pins = pinned_paths(fs);
            if !pins.is_empty() {
                text.push_str(
                    "; Pinned: entries and their ancestors in writable regions cannot be renamed or removed.\n",
                );
                for p in pins {
                    let k = params.key("PIN", &p);
                    let _ = writeln!(
                        text,
                        "(deny file-write-unlink file-write-create (literal (param \"{k}\")))"
                    );
                }
            }
        }
        Section::Network => {
            if profile.profile.network == NetworkPolicy::Enabled {
                text.push_str(NETWORK);
            }
        }
        Section::Final => {
            if restricted.is_some() {
                text.push_str(NO_HARD_LINKS);
            }
            text.push_str(FINAL);
        }
    }
}

/// [`Section::Regions`]: one rule per entry region plus the default region.
fn regions(fs: &ResolvedFilesystem, default: Access, params: &mut Params, text: &mut String) {
    let layered = fs.layered();
    let keys: Vec<String> = layered
        .iter()
        .map(|e| params.key("PATH", &e.path))
        .collect();
    let region = |i: usize| -> String {
        let e = layered[i];
        let mut s = format!("(require-all (subpath (param \"{}\"))", keys[i]);
        for (j, d) in layered.iter().enumerate() {
            if j != i && depth(&d.path) > depth(&e.path) && d.path.starts_with(&e.path) {
                let _ = write!(s, " (require-not (subpath (param \"{}\")))", keys[j]);
            }
        }
        s.push(')');
        s
    };
    let mut default_region = String::from("(require-all (subpath \"/\")");
    for k in &keys {
        let _ = write!(default_region, " (require-not (subpath (param \"{k}\")))");
    }
    default_region.push(')');
    text.push_str(
        "; Filesystem: each entry's region is its subpath minus deeper entries (R-P2).\n",
    );
    match default {
        Access::Write => {
            let _ = writeln!(
                text,
                "(allow file-read* file-map-executable file-write* {default_region})"
            );
        }
        Access::Read => {
            let _ = writeln!(
                text,
                "(allow file-read* file-map-executable {default_region})"
            );
        }
        Access::Deny => {}
    }
    for (i, e) in layered.iter().enumerate() {
        let r = region(i);
        match e.access {
            Access::Write => {
                let _ = writeln!(
                    text,
                    "(allow file-read* file-map-executable file-write* {r})"
                );
            }
            Access::Read => {
                let _ = writeln!(text, "(allow file-read* file-map-executable {r})");
            }
            // Explicit, so no platform default or device allowance reaches a denied path.
            Access::Deny => {
                let _ = writeln!(
                    text,
                    "(deny file-read* file-map-executable file-write* {r})"
                );
            }
        }
    }
}

/// [`Section::Metadata`]: `stat` of every ancestor of a readable entry and of the
/// symlink spelling of an entry (e.g. `/tmp` for `/private/tmp`), so lookups and
/// `realpath`/`getcwd` work; contents stay governed by the regions.
fn metadata(fs: &ResolvedFilesystem, params: &mut Params, text: &mut String) {
    let mut lits: BTreeSet<PathBuf> = BTreeSet::new();
    for e in fs.layered() {
        if !e.access.can_read() {
            continue;
        }
        for start in [&e.path, &e.spelled] {
            let mut a = start.clone();
            if start == &e.spelled && e.spelled != e.path {
                lits.insert(a.clone());
            }
            while a.pop() {
                if depth(&a) > 0 {
                    lits.insert(a.clone());
                }
            }
        }
    }
    if lits.is_empty() {
        return;
    }
    text.push_str("; Metadata of ancestors and symlink spellings of readable entries.\n(allow file-read-metadata");
    for l in lits {
        let k = params.key("META", &l);
        let _ = write!(text, " (literal (param \"{k}\"))");
    }
    text.push_str(")\n");
}

/// The wrapped command: `(program, args)` for
/// `/usr/bin/sandbox-exec -p <SBPL> -D KEY=path… -- <argv>`.
pub fn wrap(profile: &ResolvedProfile, argv: &[String]) -> (String, Vec<String>) {
    let mut args = policy(profile).sandbox_exec_args();
    args.push("--".into());
    args.extend(argv.iter().cloned());
    (SANDBOX_EXEC.to_string(), args)
}

/// The outcome of running one probe command under `sandbox-exec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeRun {
    /// The process ran and exited with this code (`None`: killed by a signal).
    Exited(Option<i32>),
    /// It could not be started (e.g. `sandbox-exec` missing), with the error.
    NotStarted(String),
}

/// The rule appended for the deny probe: reading the probe file is refused.
pub const DENY_PROBE_RULE: &str = "(deny file-read* (literal (param \"CORDON_PROBE\")))\n";

/// R-S4 for Seatbelt: before `sandbox_enabled` is reported, the generated `policy` is applied
/// to a trivial command (`/usr/bin/true` must exit 0: the policy compiles on this macOS and
/// can be applied here — it cannot inside another Seatbelt sandbox), and, with one deny rule
/// appended, `/bin/cat probe_file` must fail (the policy is really enforced). `run` executes
/// `sandbox-exec` with the given arguments.
///
/// Errors: what failed, in words a user can act on.
pub fn verify_applies(
    policy: &SeatbeltPolicy,
    probe_file: &Path,
    run: &mut dyn FnMut(&[String]) -> ProbeRun,
) -> Result<(), String> {
    let mut trivial = policy.sandbox_exec_args();
    trivial.extend(["--".into(), "/usr/bin/true".into()]);
    match run(&trivial) {
        ProbeRun::Exited(Some(0)) => {}
        ProbeRun::Exited(code) => {
            return Err(format!(
                "the seatbelt policy did not apply to /usr/bin/true (exit {code:?}): the policy \
                 does not compile on this macOS version, or cordon already runs inside a \
                 sandbox; run `cordon run --dry-run --backend seatbelt -- true` and report it"
            ))
        }
        ProbeRun::NotStarted(e) => return Err(format!("cannot run {SANDBOX_EXEC}: {e}")),
    }
    let mut probe = SeatbeltPolicy {
        text: format!("{}{DENY_PROBE_RULE}", policy.text),
        params: policy.params.clone(),
    };
    probe.params.push((
        "CORDON_PROBE".into(),
        probe_file.to_string_lossy().into_owned(),
    ));
    let mut deny = probe.sandbox_exec_args();
    deny.extend([
        "--".into(),
        "/bin/cat".into(),
        probe_file.to_string_lossy().into_owned(),
    ]);
    match run(&deny) {
        ProbeRun::Exited(Some(0)) => Err(format!(
            "the seatbelt policy was not enforced: a read it denies ({}) succeeded",
            probe_file.display()
        )),
        ProbeRun::Exited(_) => Ok(()),
        ProbeRun::NotStarted(e) => Err(format!("cannot run {SANDBOX_EXEC}: {e}")),
    }
}

/// [`verify_applies`] on this host with the real `sandbox-exec` (stdio discarded), using a
/// probe file created (exclusively) in the system temp dir and removed afterwards. On a host
/// without `sandbox-exec` it reports it missing.
pub fn prepare(profile: &ResolvedProfile) -> Result<Vec<String>, String> {
    if !Path::new(SANDBOX_EXEC).exists() {
        return Err(format!("{SANDBOX_EXEC} not found"));
    }
    let probe = std::env::temp_dir().join(format!(
        "cordon-seatbelt-probe-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| {
            format!(
                "cannot create the seatbelt probe file {}: {e}",
                probe.display()
            )
        })?;
    // The probe runs against the resolved spelling, as Seatbelt matches it.
    let probe_path = std::fs::canonicalize(&probe).unwrap_or_else(|_| probe.clone());
    let mut run = |args: &[String]| -> ProbeRun {
        match std::process::Command::new(SANDBOX_EXEC)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
        {
            Ok(s) => ProbeRun::Exited(s.code()),
            Err(e) => ProbeRun::NotStarted(e.to_string()),
        }
    };
    let result = verify_applies(&policy(profile), &probe_path, &mut run);
    let _ = std::fs::remove_file(&probe);
    result.map(|()| {
        vec![format!(
            "seatbelt policy via {SANDBOX_EXEC} (applied to a trial command and a deny probe)"
        )]
    })
}

/// Marks every open descriptor above 2 close-on-exec, so a descriptor cordon inherited
/// cannot reach the command: Seatbelt checks paths at open time, and an inherited
/// descriptor was opened outside the sandbox (the Linux helper closes them likewise).
///
/// Errors: the descriptor list (`/dev/fd`) cannot be read, or a descriptor cannot be
/// marked; the caller must then refuse to run (fail closed).
#[cfg(unix)]
pub fn cloexec_inherited_fds() -> std::io::Result<()> {
    let fds: Vec<i32> = std::fs::read_dir("/dev/fd")?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .filter(|fd| *fd > 2)
        .collect();
    // The directory's own descriptor is closed by now; it answers EBADF below.
    for fd in fds {
        // SAFETY: fcntl with F_GETFD/F_SETFD only reads and sets the descriptor flags of
        // `fd`; it touches no memory, and a closed `fd` yields EBADF, which is skipped.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags < 0 {
            continue;
        }
        // SAFETY: as above.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{resolve, MemFs, PermissionProfile, ResolveContext};

    fn resolved(name: &str) -> ResolvedProfile {
        let fs = MemFs::new()
            .dir("/Users/u/proj/.git/hooks")
            .file("/Users/u/proj/.git/config", "")
            .dir("/Users/u/.ssh")
            .dir("/private/tmp")
            .symlink("/tmp", "private/tmp");
        let ctx = ResolveContext {
            cwd: "/Users/u/proj".into(),
            home: Some("/Users/u".into()),
            tmpdir: None,
            profile_files: vec![],
            ..Default::default()
        };
        resolve(&PermissionProfile::builtin(name).unwrap(), &ctx, &fs).unwrap()
    }

    /// Golden text for the default profile (R-T2): paths only as params. Reviewed by hand;
    /// its meaning is checked by the evaluator tests in `tests/seatbelt.rs`.
    #[test]
    fn workspace_write_golden() {
        let r = resolved("workspace-write");
        let (prog, args) = wrap(&r, &["git".into(), "status".into()]);
        assert_eq!(prog, "/usr/bin/sandbox-exec");
        assert_eq!(args[0], "-p");
        let golden_path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/golden/seatbelt_workspace_write.sbpl"
        );
        if std::env::var_os("CORDON_BLESS").is_some() {
            std::fs::write(golden_path, &args[1]).unwrap();
        }
        let golden = std::fs::read_to_string(golden_path).unwrap();
        assert_eq!(
            args[1], golden,
            "regenerate with CORDON_BLESS=1 if intended"
        );
        assert!(
            !args[1].contains("/Users/u"),
            "no path spliced into the policy text"
        );
        let dashdash = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(&args[dashdash + 1..], ["git", "status"]);
        assert!(args
            .iter()
            .any(|a| a.starts_with("PATH_") && a.ends_with("=/Users/u/proj")));
    }

    #[test]
    fn hostile_path_cannot_change_the_policy() {
        let fs = MemFs::new()
            .dir("/w/a\") (allow file-write* (subpath \"/")
            .dir("/tmp");
        let ctx = ResolveContext {
            cwd: "/w/a\") (allow file-write* (subpath \"/".into(),
            home: Some("/Users/u".into()),
            tmpdir: None,
            profile_files: vec![],
            ..Default::default()
        };
        let r = resolve(
            &PermissionProfile::builtin("workspace-write").unwrap(),
            &ctx,
            &fs,
        )
        .unwrap();
        let p = policy(&r);
        assert!(!p.text.contains("/w/a"));
        assert!(p
            .params
            .iter()
            .any(|(_, v)| v.contains("(allow file-write*")));
    }

    #[test]
    fn network_and_full_access() {
        let r = resolved("danger-full-access");
        let p = policy(&r);
        assert!(p.text.contains("(allow file*)"));
        assert!(p
            .text
            .contains("(allow network-outbound (remote ip \"*:*\"))"));
        let r = resolved("read-only");
        let p = policy(&r);
        assert!(!p.text.contains("(allow network"));
        assert!(!p
            .text
            .contains("(allow file-read* file-map-executable file-write*"));
    }

    /// Without `sandbox-exec` (any non-macOS host) `prepare` refuses and names it.
    #[test]
    fn prepare_without_sandbox_exec_refuses() {
        if Path::new(SANDBOX_EXEC).exists() {
            return; // a Mac: covered by `cordon status` and `cordon selftest`
        }
        let e = prepare(&resolved("workspace-write")).unwrap_err();
        assert!(e.contains(SANDBOX_EXEC), "{e}");
    }

    /// The deny probe and the trial run both decide `prepare` (R-S4).
    #[test]
    fn verify_applies_needs_both_probes() {
        let p = policy(&resolved("workspace-write"));
        let probe = Path::new("/private/tmp/probe");
        let is_deny_probe = |a: &[String]| a.iter().any(|x| x == "/bin/cat");
        // A sandbox that applies and enforces.
        let mut good = |a: &[String]| ProbeRun::Exited(Some(if is_deny_probe(a) { 1 } else { 0 }));
        assert_eq!(verify_applies(&p, probe, &mut good), Ok(()));
        // Already inside a sandbox: sandbox_apply fails, exit 65/71.
        let mut nested = |_: &[String]| ProbeRun::Exited(Some(71));
        let e = verify_applies(&p, probe, &mut nested).unwrap_err();
        assert!(e.contains("did not apply"), "{e}");
        // Applies but does not enforce.
        let mut lax = |_: &[String]| ProbeRun::Exited(Some(0));
        let e = verify_applies(&p, probe, &mut lax).unwrap_err();
        assert!(e.contains("not enforced"), "{e}");
        // Missing sandbox-exec.
        let mut missing = |_: &[String]| ProbeRun::NotStarted("No such file".into());
        assert!(verify_applies(&p, probe, &mut missing).is_err());
    }
}
