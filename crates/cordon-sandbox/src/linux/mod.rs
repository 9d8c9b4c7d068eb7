//! The Linux backend (R-T3, R-L1..R-L6): confinement with kernel interfaces only — user,
//! mount, pid, ipc and net namespaces, the new mount API, Landlock, seccomp, capabilities
//! — no external binary.
//!
//! - [`probe`] / [`probe_fast`] → [`LinuxFeatures`]: what this kernel offers.
//! - [`plan`] (pure) → [`LinuxPlan`] (which rung, which layers, in words) or a
//!   [`Refusal`] naming the unmet guarantee (R-S4).
//! - [`helper_main`]: the helper process, invoked as
//!   `<exe> __sandbox-helper --permission-profile fd:N [--report-fd M] -- <argv…>` with the
//!   payload ([`HelperPayload::encode`](cordon_policy::HelperPayload::encode)) in the
//!   inherited sealed memfd N ([`payload_descriptor`]); `env:NAME` and the inline form are
//!   still accepted. It writes what it really applied ([`AppliedReport`], typed
//!   [`Layer`]s) to descriptor M before the command starts ([`spawn_reported`]).
//! - [`confine_current_process`]: apply-once self-confinement (R-L6).
//!
//! Exit codes of the helper: the command's code; 128+N when the command was killed by
//! signal N; 127 command not found; 126 not executable; 125 nothing ran (bad payload,
//! refusal, setup failure), always with a `cordon: …` line on stderr.

mod caches;
mod caps;
mod cover_watch;
mod denial_records;
mod features;
pub mod forked;
pub(crate) mod git_config_broker;
mod helper;
mod landlock_layer;
mod layer;
pub mod limits;
mod loopback;
mod mounts;
mod pause;
mod plan;
mod process;
pub mod pty;
mod relay;
mod seccomp_filter;
pub mod server;
pub(crate) mod sys;
mod template;
pub mod tree_removal;
mod unix_guard;
mod unix_listeners;

/// The inode generation of the directory or regular file at `p` (opened without following
/// a final symlink, without blocking; anything else is not opened), when its filesystem
/// keeps one ([`sys::inode_generation`]).
pub fn inode_generation_at(p: &std::path::Path) -> Option<u64> {
    use std::os::fd::AsRawFd as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(p)
        .ok()?;
    let kind = f.metadata().ok()?.file_type();
    if !(kind.is_dir() || kind.is_file()) {
        return None;
    }
    sys::inode_generation(f.as_raw_fd()).ok()
}

/// The variable that tells an executed helper the pid of the process that started it
/// (only the helper reads it; the command's environment is the payload's).
pub const HELPER_PARENT_ENV: &str = "CORDON_HELPER_PARENT";

pub use caches::{clear_layers, probe_overlay, read_only_hint, Cleared};
pub use denial_records::{landlock_audit, source as denial_record_source};
pub use features::{
    probe, probe_fast, valid_layer_names, Availability, LinuxFeatures, Present, ALL_LAYERS,
    DENIAL_RECORDS_LAYER, DISABLE_LAYERS_ENV, LAYER_NAMES,
};
pub use helper::{command_env, offline_env, AppliedReport, HelperOutcome, RunRecords};
pub use layer::{Enforcement, Layer, RootView};
pub use mounts::{
    check_missing_grants, check_placeholders, layout, layout_for, top_level_refusal, Base, Layout,
    Step, StepKind,
};
pub use plan::{
    carve_outs, plan, CarveOut, LandlockPlan, LinuxPlan, Refusal, Rung, SeccompPlan,
    LANDLOCK_ABI_NET, LANDLOCK_ABI_SCOPE, LANDLOCK_CRATE_MAX_ABI, MIN_LANDLOCK_ABI_FS,
};
pub use process::{
    has_controlling_terminal, EXIT_NOEXEC, EXIT_NOTFOUND, EXIT_SETUP, INTERRUPTS_TO_ALL_ENV,
};
pub use relay::{AskChannel, DecisionChannel, ASK_TIMEOUT};
pub use seccomp_filter::denied_syscalls;
pub use unix_guard::mechanism as unix_socket_mechanism;

use cordon_policy::ResolvedProfile;
use std::ffi::OsString;

/// `argv[1]` that makes a cordon binary act as the sandbox helper (R-T3). The CLI must
/// dispatch on it before any other parsing: `if argv[1] == HELPER_SUBCOMMAND {
/// exit(helper_main(argv[2..])) }`.
pub const HELPER_SUBCOMMAND: &str = "__sandbox-helper";

/// The environment variable that can carry the payload to the helper
/// (`--permission-profile env:CORDON_PERMISSION_PROFILE`; [`crate::SandboxManager`] uses a
/// descriptor instead, see [`PAYLOAD_FROM_FD_PREFIX`]). The name is reserved: a copy in the
/// caller's environment never reaches the helper or the command.
///
/// The payload holds the command's whole environment and the path layout. In argv it
/// would be readable by every local user (`/proc/<pid>/cmdline` is mode 0444); a process's
/// environment (`/proc/<pid>/environ`, mode 0400 and ptrace-checked) is readable only by
/// the same user, but one variable is capped at 128 KiB. The helper removes the variable
/// from its own environment before doing anything else.
pub const PAYLOAD_ENV: &str = "CORDON_PERMISSION_PROFILE";

/// The prefix of a `--permission-profile` value that names an environment variable holding
/// the payload (`env:NAME`) instead of the payload itself.
pub const PAYLOAD_FROM_ENV_PREFIX: &str = "env:";

/// The prefix of a `--permission-profile` value that names an inherited descriptor to read
/// the payload from (`fd:N`, e.g. a sealed memfd): what [`crate::SandboxManager::transform`]
/// uses, so neither argv nor the environment carries it and its size is not capped by
/// `MAX_ARG_STRLEN` (128 KiB).
pub const PAYLOAD_FROM_FD_PREFIX: &str = "fd:";

/// Runs the sandbox helper and returns its exit code (see the module docs for the
/// codes). `args` are the arguments after [`HELPER_SUBCOMMAND`]:
/// `--permission-profile fd:<N> [--report] [--report-fd <M>] -- <argv…>` (the payload is
/// read from inherited descriptor N, which is then closed), `--permission-profile
/// env:<NAME> …` (read from the environment variable NAME, which is then removed) or
/// `--permission-profile <payload> …` (inline; visible to every local user in
/// `/proc/<pid>/cmdline`, kept for tests). `--report` prints the applied layers, as
/// enforced, to stderr before the command starts; `--report-fd M` writes the
/// [`AppliedReport`] as one JSON line to M and closes it, before the command starts.
/// Standard input, output and error must not be directories or `O_PATH` descriptors (125).
///
/// Must be called from a single-threaded process (it forks and creates namespaces), early,
/// without having changed signal dispositions other than Rust's default `SIGPIPE` ignore.
/// Payload of another version or malformed → 125 with a message, the command never runs.
pub fn helper_main(args: Vec<OsString>) -> i32 {
    helper::main(args)
}

/// A sealed memory file holding `encoded` (the helper payload), for
/// `--permission-profile fd:N` (see [`PAYLOAD_FROM_FD_PREFIX`]). Close-on-exec: the spawn
/// of the helper passes it ([`crate::ExecRequest::command`], [`pass_descriptors`]), and no
/// other child of this process gets it.
///
/// Errors: `memfd_create`, write or sealing failed.
pub fn payload_descriptor(encoded: &str) -> std::io::Result<std::os::fd::OwnedFd> {
    sys::sealed_memfd(c"cordon-payload", encoded.as_bytes())
}

/// Makes each of `fds` survive into the program `cmd` starts, and only into it: cleared of
/// `FD_CLOEXEC` in the child between fork and exec, while this process's descriptors keep
/// the flag. Every descriptor cordon hands a helper (payload, report pipe, side channels)
/// is made close-on-exec and passed this way: an inheritable one would reach every other
/// child started while it is open — in `cordon mcp`, a later session's helper held an
/// earlier session's outcome pipe, so the earlier session's end was reported only when
/// the later one ended (attack pass 148 F1).
pub fn pass_descriptors(cmd: &mut std::process::Command, fds: &[std::os::fd::RawFd]) {
    for fd in fds {
        sys::inherit_in_child(cmd, *fd);
    }
}

/// Spawns `cmd` (the helper, as built from an [`crate::ExecRequest`]) with
/// `--report-fd N` inserted after [`HELPER_SUBCOMMAND`], waits with `wait`, and returns its
/// result with the helper's [`HelperOutcome`]: what it applied, or why nothing ran (`None`
/// when it said nothing: killed, or not a cordon helper). The helper gets the report pipe,
/// the payload descriptor `args` name, and `extra` (side channels), each passed to it
/// alone ([`pass_descriptors`]).
///
/// Errors: pipe creation or spawn failure (`NotFound` → 127, `PermissionDenied` → 126).
pub fn spawn_reported<T>(
    mut args: Vec<String>,
    extra: &[std::os::fd::RawFd],
    build: impl FnOnce(Vec<String>) -> std::process::Command,
    wait: impl FnOnce(std::process::Child) -> std::io::Result<T>,
) -> std::io::Result<(T, Option<HelperOutcome>)> {
    use std::os::fd::AsRawFd;
    let (r, w) = sys::pipe()?;
    let at = usize::from(args.first().map(String::as_str) == Some(HELPER_SUBCOMMAND));
    args.insert(at, "--report-fd".into());
    args.insert(at + 1, w.as_raw_fd().to_string());
    let payload = payload_fd_of(&args);
    let mut cmd = build(args);
    let passed: Vec<std::os::fd::RawFd> = std::iter::once(w.as_raw_fd())
        .chain(payload)
        .chain(extra.iter().copied())
        .collect();
    pass_descriptors(&mut cmd, &passed);
    let child = cmd.spawn()?;
    server::record_cold();
    drop(w);
    // Read while the helper runs (a report larger than the pipe buffer must not block it);
    // the helper closes its end once the report is written, so this ends before the
    // command does. A bound on the wait afterwards guards against a descriptor leaked to
    // a process that lives on.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(sys::read_to_end(&r, 1024 * 1024).unwrap_or_default());
    });
    let out = wait(child)?;
    let bytes = rx
        .recv_timeout(std::time::Duration::from_secs(2))
        .unwrap_or_default();
    Ok((out, parse_report(&bytes)))
}

/// The helper's report descriptor as read by the caller, on every launch path (cold or
/// through `cordon serve`: one parser, one truth). Line 1: what was applied (or why
/// nothing ran); line 2, after the command's tree ended: the denial records
/// ([`helper::RunRecords`]), attached to the applied report. `None` when line 1 is missing
/// or not a report.
fn parse_report(bytes: &[u8]) -> Option<HelperOutcome> {
    let mut lines = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty());
    let mut report: Option<HelperOutcome> =
        lines.next().and_then(|l| serde_json::from_slice(l).ok());
    if let (Some(HelperOutcome::Applied(a)), Some(records)) = (
        report.as_mut(),
        lines
            .next()
            .and_then(|l| serde_json::from_slice::<helper::RunRecords>(l).ok()),
    ) {
        a.denials = records.denials;
        a.git_config = records.git_config;
        a.signal = records.signal;
        a.cover_lost = records.cover_lost;
        a.helper_peak_rss_kib = records.helper_peak_rss_kib;
    }
    report
}

/// [`spawn_reported`] through a running `cordon serve` ([`server::connect`]): the helper
/// is forked by the server instead of executed, with this process's stdin and stdout,
/// `stderr` (or this process's), the payload descriptor named in `args`, the report pipe
/// and `extra` descriptors at their numbers, `cwd` and exactly `env`. `wait` gets the
/// [`server::ServerChild`] (its `id` is the process to signal).
///
/// Errors: pipe creation or the launch failed (nothing ran).
pub fn spawn_reported_server<T>(
    conn: std::os::unix::net::UnixStream,
    mut args: Vec<String>,
    cwd: &std::path::Path,
    env: Vec<(String, String)>,
    stderr: Option<std::os::fd::RawFd>,
    extra: &[std::os::fd::RawFd],
    wait: impl FnOnce(server::ServerChild) -> std::io::Result<T>,
) -> std::io::Result<(T, Option<HelperOutcome>)> {
    use std::os::fd::AsRawFd;
    let (r, w) = sys::pipe()?;
    let at = usize::from(args.first().map(String::as_str) == Some(HELPER_SUBCOMMAND));
    args.insert(at, "--report-fd".into());
    args.insert(at + 1, w.as_raw_fd().to_string());
    let mut fds = vec![
        (0, 0),
        (1, 1),
        (stderr.unwrap_or(2), 2),
        (w.as_raw_fd(), w.as_raw_fd()),
    ];
    let payload_fd = payload_fd_of(&args);
    fds.extend(
        payload_fd
            .into_iter()
            .chain(extra.iter().copied())
            .map(|f| (f, f)),
    );
    let child = server::launch(conn, args, cwd, env, &fds)?;
    drop(w);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(sys::read_to_end(&r, 1024 * 1024).unwrap_or_default());
    });
    let out = wait(child)?;
    let bytes = rx
        .recv_timeout(std::time::Duration::from_secs(2))
        .unwrap_or_default();
    Ok((out, parse_report(&bytes)))
}

/// The descriptor of `--permission-profile fd:N` in a helper's arguments, if any.
fn payload_fd_of(args: &[String]) -> Option<i32> {
    args.iter()
        .skip_while(|a| *a != "--permission-profile")
        .nth(1)
        .and_then(|v| v.strip_prefix(PAYLOAD_FROM_FD_PREFIX))
        .and_then(|n| n.parse::<i32>().ok())
}

/// Why an inherited descriptor cannot take a report ([`take_inherited_writer`]).
#[derive(Debug)]
pub enum WriterRefusal {
    /// 0, 1 or 2: the command's stdin, stdout and stderr.
    Standard,
    /// Nothing is open at that number.
    NotOpen,
    /// Open, but not for writing (`O_RDONLY`, or an `O_PATH` reference).
    NotWritable,
    /// Another error of `fcntl`.
    Other(std::io::Error),
}

/// Creates the missing directories of `profile`'s writable grants on the host, as the
/// helper would before the sandbox is built ([`mounts::create_missing_grants`]: no symlink
/// followed, a new top-level directory refused, a note on stderr for each). Called by the
/// session before it records the run's writable roots, so that a root the run creates is
/// recorded with its identity before any command can write in it — and found again after
/// a rename even when the run is killed (attack pass 177, F1). The helper then finds them.
///
/// Errors: the grant that could not be created, and why (the run is refused).
pub fn create_missing_grants(profile: &cordon_policy::ResolvedProfile) -> std::io::Result<()> {
    mounts::create_missing_grants(&mounts::layout_for(profile))
}

/// Creates on the host the missing directory `path` (absolute, canonical) of a `-w` grant
/// that lies in a writable root, where the profile's merge drops the grant as already
/// given (R-O1) and no mount step would make it: no symlink followed, a new top-level
/// directory refused, the note on stderr as for any created grant
/// ([`mounts::create_grant_dir`]). New-user pass, stop 40: `-w WS/build` left the command
/// without the directory it was told it had.
///
/// Errors: why the directory could not be created (the run is refused).
pub fn create_grant_dir(path: &std::path::Path) -> std::io::Result<()> {
    mounts::create_grant_dir(path, true)
}

/// Takes an inherited descriptor number given by the user (`--json-fd N`) as a file to
/// write to, after checking it can be: not 0-2, open, and opened for writing (its access
/// mode from `F_GETFL` is `O_WRONLY` or `O_RDWR`, and it is not an `O_PATH` reference).
/// Marked close-on-exec, so no command started later inherits it. A refused number is
/// left as it was.
///
/// Errors: the [`WriterRefusal`] that applies.
pub fn take_inherited_writer(fd: i32) -> Result<std::fs::File, WriterRefusal> {
    if fd <= 2 {
        return Err(WriterRefusal::Standard);
    }
    match sys::fd_status_flags(fd) {
        Err(e) if e.raw_os_error() == Some(libc::EBADF) => return Err(WriterRefusal::NotOpen),
        Err(e) => return Err(WriterRefusal::Other(e)),
        Ok(flags) => {
            let mode = flags & libc::O_ACCMODE;
            if flags & libc::O_PATH != 0 || !(mode == libc::O_WRONLY || mode == libc::O_RDWR) {
                return Err(WriterRefusal::NotWritable);
            }
        }
    }
    sys::take_inherited_fd(fd)
        .map(std::fs::File::from)
        .map_err(WriterRefusal::Other)
}

/// Opens the report file `name` in the directory `dir` (absolute, canonical) for writing,
/// with no symlink followed anywhere: `dir` is opened with `RESOLVE_NO_SYMLINKS` (so a
/// component swapped for a link since the caller checked it is an error, not a detour)
/// and `name` with `O_NOFOLLOW`; the file is created mode 0644 or truncated, and must be a
/// regular file (R-H2: host-side opens near writable roots never follow a planted link).
///
/// Errors: `ELOOP` when a component or `name` is a symlink, `EINVAL` when `name` is not a
/// single normal component or the file is not a regular file, or the open's own error.
pub fn create_report_file(
    dir: &std::path::Path,
    name: &std::ffi::OsStr,
) -> std::io::Result<std::fs::File> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_string());
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes == b"." || bytes == b".." || bytes.contains(&b'/') {
        return Err(bad("not a file name"));
    }
    let dirfd = sys::open_dir_nofollow(dir)?;
    let c = std::ffi::CString::new(bytes).map_err(|_| bad("a NUL byte in the name"))?;
    let fd = sys::open_write_nofollow(dirfd.as_raw_fd(), &c, 0o644)?;
    let st = sys::fstat(fd.as_raw_fd())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(bad("not a regular file"));
    }
    let f = std::fs::File::from(fd);
    f.set_len(0)?;
    Ok(f)
}

/// Opens the decision log `$CORDON_PROXY_LOG` for appending, as the helper does on the
/// host side (often as root): no symlink anywhere on the path (a previous run planted
/// `proxy.jsonl -> /etc/…` in the workspace and the helper appended to the target;
/// breaker, stop 19), created if missing (mode 0600), never a FIFO or device (opened
/// without blocking, then checked to be a regular file). A relative path is taken against
/// the current directory.
///
/// Errors: the path has a symlink or is not a regular file, or an open failed.
pub fn open_append_nofollow(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_string());
    let abs = std::env::current_dir()?.join(path);
    let (Some(dir), Some(name)) = (abs.parent(), abs.file_name()) else {
        return Err(bad("not a file path"));
    };
    let dirfd = sys::open_dir_nofollow(dir)?;
    let c = std::ffi::CString::new(name.as_bytes()).map_err(|_| bad("a NUL byte in the name"))?;
    let fd = sys::open_write_nofollow(dirfd.as_raw_fd(), &c, 0o600)?;
    let st = sys::fstat(fd.as_raw_fd())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(bad("not a regular file"));
    }
    // SAFETY: fcntl on a descriptor we own; F_SETFL with plain flags.
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_APPEND) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(std::fs::File::from(fd))
}

/// The file mapped at address `addr` of this process, from `/proc/self/maps` (`None` when
/// unreadable, anonymous, or the file was deleted since).
pub fn mapped_file_of(addr: usize) -> Option<std::path::PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    for line in maps.lines() {
        // start-end perms offset dev inode   path
        let mut it = line.splitn(6, ' ');
        let range = it.next()?;
        let (a, b) = range.split_once('-')?;
        let (a, b) = (
            usize::from_str_radix(a, 16).ok()?,
            usize::from_str_radix(b, 16).ok()?,
        );
        if addr < a || addr >= b {
            continue;
        }
        let path = it.nth(4)?.trim_start();
        if !path.starts_with('/') || path.ends_with(" (deleted)") {
            return None;
        }
        let p = std::path::PathBuf::from(path);
        return p.is_file().then_some(p);
    }
    None
}

/// Errors of [`confine_current_process`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfineError {
    /// The profile asks for something self-confinement cannot give on this host (R-S4).
    Refused(Refusal),
    /// The process has more than one thread: Landlock and seccomp would confine only the
    /// calling thread.
    MultiThreaded(usize),
    /// A layer failed to apply; the process may be partly confined and must not continue
    /// as if it were unconfined or fully confined.
    Failed(String),
}

impl std::fmt::Display for ConfineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfineError::Refused(r) => write!(f, "refusing to run unconfined: {r}"),
            ConfineError::MultiThreaded(n) => write!(
                f,
                "refusing to confine: the process has {n} threads; self-confinement must \
                 happen before any thread is started"
            ),
            ConfineError::Failed(e) => write!(f, "self-confinement failed: {e}"),
        }
    }
}

impl std::error::Error for ConfineError {}

fn thread_count() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(1)
}

/// Self-confinement (R-L6), "apply once, irreversible": confines the *calling process*
/// with the rung-2 layers (no_new_privs, capabilities dropped, Landlock, seccomp) —
/// namespaces cannot be entered by a running process without side effects on its parent's
/// view, so a profile with carve-outs (deny entries, protected paths) is refused, as is
/// anything else rung 2 cannot guarantee (see [`plan`]). Processes spawned afterwards
/// inherit the confinement; nothing kills them at exit (the caller owns its children).
///
/// Returns the applied layers as enforced by the kernel.
///
/// Errors: [`ConfineError`]; on `Failed` the process may be partly confined: the caller
/// must stop or report, never continue silently.
pub fn confine_current_process(
    profile: &ResolvedProfile,
    features: &LinuxFeatures,
) -> Result<Vec<Layer>, ConfineError> {
    let n = thread_count();
    if n > 1 {
        return Err(ConfineError::MultiThreaded(n));
    }
    let mut f = features.clone();
    f.user_namespaces = Availability::Unavailable(
        "self-confinement cannot move the running process into new namespaces".into(),
    );
    let p = plan(profile, &f).map_err(ConfineError::Refused)?;
    helper::confine(profile, &p, None, Vec::new(), Vec::new()).map_err(|e| match e {
        helper::ConfineFailure::Refused(m) | helper::ConfineFailure::Failed(m) => {
            ConfineError::Failed(m)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn close_on_exec(fd: i32) -> bool {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        assert!(flags >= 0, "descriptor {fd} is not open");
        flags & libc::FD_CLOEXEC != 0
    }

    fn number(env: (String, String)) -> i32 {
        env.1.parse().expect("a descriptor number")
    }

    /// Attack pass 148 F1: every descriptor made for a helper is close-on-exec in the
    /// caller — the payload, the outcome pipe, the proxy's decision log and ask channel.
    /// An inheritable one reached every child started while it was open: a later MCP
    /// session's helper held an earlier session's outcome pipe, and the earlier session's
    /// end was read only when the later one ended.
    #[test]
    fn descriptors_for_a_helper_are_not_inherited_by_other_children() {
        let payload = payload_descriptor("{}").unwrap();
        assert!(close_on_exec(payload.as_raw_fd()), "payload");
        let outcome = limits::OutcomeChannel::new().unwrap();
        assert!(close_on_exec(number(outcome.env())), "outcome pipe");
        let decisions = DecisionChannel::new().unwrap();
        assert!(close_on_exec(number(decisions.env())), "decision log");
        let ask = AskChannel::new().unwrap();
        assert!(close_on_exec(number(ask.env())), "ask channel");
    }

    /// The twin: the one process the spawn passes them to has every one of them open,
    /// and a child spawned without them has none.
    #[test]
    fn a_spawn_passes_its_descriptors_to_its_child_alone() {
        let payload = payload_descriptor("{}").unwrap();
        let outcome = limits::OutcomeChannel::new().unwrap();
        let fds = [payload.as_raw_fd(), number(outcome.env())];
        let probe = |pass: bool| {
            let script = fds
                .iter()
                .map(|fd| format!("[ -e /proc/self/fd/{fd} ] && echo {fd};"))
                .collect::<String>();
            let mut cmd = std::process::Command::new("/bin/sh");
            cmd.args(["-c", &script]);
            if pass {
                pass_descriptors(&mut cmd, &fds);
            }
            String::from_utf8(cmd.output().unwrap().stdout).unwrap()
        };
        let open: Vec<String> = fds.iter().map(|fd| format!("{fd}\n")).collect();
        assert_eq!(probe(true), open.concat());
        assert_eq!(probe(false), "");
    }
}
