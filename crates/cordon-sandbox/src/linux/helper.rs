//! The helper process (R-T3): `<exe> __sandbox-helper --permission-profile env:NAME --
//! <argv…>` with the payload in the environment variable NAME (or, inline and readable by
//! every local user, `--permission-profile <payload>`). Lean on purpose: no clap, no
//! logging setup, a handful of syscalls before the command runs.
//!
//! Rung 1 process tree:
//!
//! ```text
//! cordon ─ helper (host namespaces; forwards signals, cleans placeholders)
//!            └─ init, pid 1 of new user+mount+pid+ipc(+net) namespaces
//!                 (builds the root, confines itself, reaps, forwards signals)
//!                 └─ the command
//! ```
//!
//! When init exits (right after the command), the kernel kills every other process of the
//! pid namespace: nothing the command started outlives it (R-L3). If the helper dies,
//! init gets SIGKILL (`PR_SET_PDEATHSIG`), with the same effect; the helper itself gets
//! SIGKILL when cordon dies.
//!
//! Rung 2 (no user namespaces), with no pid namespace to take the tree down:
//!
//! ```text
//! cordon ─ helper (subreaper; forwards signals)
//!            └─ supervisor (subreaper, own process group; forwards signals, reaps)
//!                 └─ the command (back in the helper's process group; confined by
//!                    Landlock + seccomp + no_new_privs + dropped capabilities)
//! ```
//!
//! Orphans of the command's tree are reparented to the supervisor, which kills every
//! remaining descendant when the command exits — and when the helper dies, however it dies:
//! the kernel wakes it with `PR_SET_PDEATHSIG` (SIGKILL of the helper cannot be caught, so
//! the helper itself could not clean up). Being in its own process group, the supervisor
//! also survives a SIGKILL sent to the helper's whole group (a harness's timeout), and the
//! command cannot signal it (Landlock signal scope). If the supervisor is killed instead,
//! its orphans go to the helper (also a subreaper), which sweeps them when it sees the
//! supervisor exit. Only killing both at once, from outside, would leave the tree running.

use super::features::{probe_fast, LinuxFeatures};
use super::landlock_layer::{self, Grant, Prepared};
use super::mounts;
use super::plan::{plan, LinuxPlan, Rung};
use super::process::{self, CommandSpec, EXIT_SETUP};
use super::seccomp_filter;
use super::sys;
use super::PAYLOAD_FROM_ENV_PREFIX;
use crate::HostFs;
use cordon_policy::{Access, HelperPayload, NetworkPolicy, ResolvedFilesystem, ResolvedProfile};
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::Path;

/// Where the payload comes from.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PayloadArg {
    /// The encoded payload itself, from argv.
    Inline(String),
    /// The name of the environment variable holding it (`env:NAME`).
    Env(String),
}

/// Parsed helper arguments.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct HelperArgs {
    pub payload: PayloadArg,
    pub argv: Vec<OsString>,
    pub report: bool,
}

fn payload_arg(v: String) -> Result<PayloadArg, String> {
    match v.strip_prefix(PAYLOAD_FROM_ENV_PREFIX) {
        // The encoding is URL-safe base64, which has no `:`: the prefix is unambiguous.
        Some(name) => {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err(format!(
                    "--permission-profile {v:?}: not a valid environment variable name"
                ));
            }
            Ok(PayloadArg::Env(name.to_string()))
        }
        None => Ok(PayloadArg::Inline(v)),
    }
}

/// Parses `--permission-profile <p> [--report] -- <argv…>` (also `--permission-profile=<p>`),
/// where `<p>` is the payload or `env:NAME`.
pub(crate) fn parse_args(args: Vec<OsString>) -> Result<HelperArgs, String> {
    let mut it = args.into_iter();
    let mut payload = None;
    let mut report = false;
    loop {
        let Some(a) = it.next() else {
            return Err("missing `--` before the command".into());
        };
        let s = a.to_string_lossy();
        if s == "--" {
            break;
        } else if s == "--permission-profile" {
            let v = it
                .next()
                .ok_or("--permission-profile needs a value")?
                .into_string()
                .map_err(|_| "the payload is not valid UTF-8")?;
            payload = Some(payload_arg(v)?);
        } else if let Some(v) = s.strip_prefix("--permission-profile=") {
            payload = Some(payload_arg(v.to_string())?);
        } else if s == "--report" {
            report = true;
        } else {
            return Err(format!("unexpected helper argument {s:?}"));
        }
    }
    let argv: Vec<OsString> = it.collect();
    let payload = payload.ok_or("missing --permission-profile")?;
    if argv.is_empty() {
        return Err("no command given after `--`".into());
    }
    Ok(HelperArgs {
        payload,
        argv,
        report,
    })
}

/// Sets `PR_SET_PDEATHSIG(SIGKILL)` for the calling process; `Ok(false)` when the parent
/// already died (the race between spawn and this call). An error means the helper (and so
/// the command) could outlive cordon: the caller must not go on.
fn die_with_parent() -> std::io::Result<bool> {
    // SAFETY: getppid has no preconditions.
    let before = unsafe { libc::getppid() };
    sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)?;
    // SAFETY: getppid has no preconditions.
    Ok(unsafe { libc::getppid() } == before)
}

/// The encoded payload. For `env:NAME`, the variable is removed from this process's
/// environment at once (whether or not it is usable), so nothing started later inherits it.
fn take_payload(arg: PayloadArg) -> Result<String, String> {
    match arg {
        PayloadArg::Inline(p) => Ok(p),
        PayloadArg::Env(name) => {
            let v = std::env::var_os(&name);
            // The helper is single-threaded: nothing reads the environment concurrently.
            std::env::remove_var(&name);
            v.ok_or_else(|| {
                format!(
                    "sandbox helper: the environment variable {name} \
                     (--permission-profile env:{name}) is not set"
                )
            })?
            .into_string()
            .map_err(|_| format!("sandbox helper: {name} is not valid UTF-8"))
        }
    }
}

/// See [`super::helper_main`].
pub(crate) fn main(args: Vec<OsString>) -> i32 {
    match die_with_parent() {
        Ok(true) => {}
        Ok(false) => return EXIT_SETUP, // cordon is gone: nobody to run the command for
        Err(e) => {
            eprintln!(
                "cordon: refusing to run: sandbox setup failed: PR_SET_PDEATHSIG: {e} \
                 (the command could outlive cordon)"
            );
            return EXIT_SETUP;
        }
    }
    if let Err(e) = sys::cloexec_from(3) {
        eprintln!(
            "cordon: refusing to run: cannot mark inherited descriptors close-on-exec \
             (close_range failed and /proc/self/fd is unreadable: {e}); is /proc mounted?"
        );
        return EXIT_SETUP;
    }
    let mut args = match parse_args(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("cordon: sandbox helper: {e}");
            return EXIT_SETUP;
        }
    };
    // Moved out (not copied): the inline payload can be large, and it is not needed again.
    let arg = std::mem::replace(&mut args.payload, PayloadArg::Inline(String::new()));
    let encoded = match take_payload(arg) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cordon: {e}");
            return EXIT_SETUP;
        }
    };
    let payload = match HelperPayload::decode(&encoded) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cordon: {e}");
            return EXIT_SETUP;
        }
    };
    let mut features = probe_fast();
    features.disable_by(
        &payload.disabled_layers,
        "the caller (payload disabled_layers)",
    );
    run(&payload, &args, features)
}

fn run(payload: &HelperPayload, args: &HelperArgs, features: LinuxFeatures) -> i32 {
    let plan = match plan(&payload.profile, &features) {
        Ok(p) => p,
        Err(r) => {
            eprintln!("cordon: refusing to run unconfined: {r}");
            return EXIT_SETUP;
        }
    };
    match plan.rung {
        Rung::Namespaces => run_namespaces(payload, args, &plan, features),
        Rung::LandlockOnly => run_landlock_only(payload, args, &plan),
    }
}

/// `TMPDIR` for the child: kept when it names an existing directory the sandbox lets the
/// command write, else `/tmp` when that is writable, else left out.
fn child_env(payload: &HelperPayload, rung: Rung) -> Vec<(String, String)> {
    let fs = &payload.profile.filesystem;
    let host = HostFs;
    let private_tmp = rung == Rung::Namespaces && !tmp_denied(fs);
    let writable = |p: &Path| -> bool {
        if !p.is_absolute() {
            return false;
        }
        if private_tmp && p == Path::new("/tmp") {
            return true;
        }
        if !p.is_dir() {
            return false;
        }
        let a = fs.access_for(&host, p);
        if a.access != Access::Write {
            return false;
        }
        // On rung 1 the host /tmp is replaced by the private one: a path under it is only
        // there when an entry below /tmp binds it in.
        if private_tmp && p.starts_with("/tmp") {
            let ResolvedFilesystem::Restricted { entries, .. } = fs else {
                return false;
            };
            return a
                .entry
                .and_then(|i| entries.get(i))
                .is_some_and(|e| e.path != Path::new("/tmp"));
        }
        true
    };
    let mut env: Vec<(String, String)> = payload
        .env
        .iter()
        .filter(|(k, _)| k != "TMPDIR")
        .cloned()
        .collect();
    let given = payload
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "TMPDIR")
        .map(|(_, v)| v.clone());
    match given {
        Some(t) if writable(Path::new(&t)) => env.push(("TMPDIR".into(), t)),
        _ if writable(Path::new("/tmp")) => env.push(("TMPDIR".into(), "/tmp".into())),
        _ => {}
    }
    if rung == Rung::Namespaces && payload.profile.profile.network == NetworkPolicy::Managed {
        let vars = proxy_env();
        env.retain(|(k, _)| !vars.iter().any(|(v, _)| v == k));
        env.extend(vars);
    }
    env
}

/// The variables that point programs at the relay of a managed network (issue 10 §5):
/// `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (SOCKS5 with remote DNS), `NO_PROXY` in both
/// cases (git, curl, Python, Go, Rust/reqwest, …), and npm's, pip's, yarn's and cargo's
/// own.
pub(crate) fn proxy_env() -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{}", super::relay::PROXY_PORT);
    let socks = format!("socks5h://127.0.0.1:{}", super::relay::PROXY_PORT);
    let no = "localhost,127.0.0.1,::1".to_string();
    let mut v = Vec::new();
    for (k, val) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
        ("NO_PROXY", &no),
    ] {
        v.push((k.to_string(), val.clone()));
        v.push((k.to_ascii_lowercase(), val.clone()));
    }
    for k in [
        "npm_config_proxy",
        "npm_config_https_proxy",
        "PIP_PROXY",
        "YARN_HTTP_PROXY",
        "YARN_HTTPS_PROXY",
        "CARGO_HTTP_PROXY",
    ] {
        v.push((k.to_string(), http.clone()));
    }
    v
}

/// The host side of a managed network: the proxy's unix socket in a fresh private
/// directory (mode 0700, created — never reused — so nothing another run or user made is
/// followed), removed when dropped.
struct ProxySocket {
    dir: std::path::PathBuf,
    path: std::path::PathBuf,
    listener: Option<std::os::unix::net::UnixListener>,
}

impl ProxySocket {
    fn create() -> std::io::Result<ProxySocket> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        // SAFETY: getpid has no preconditions.
        let dir = base.join(format!("cordon-proxy-{}-{nanos}", unsafe {
            libc::getpid()
        }));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let path = dir.join("proxy.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path)?;
        Ok(ProxySocket {
            dir,
            path,
            listener: Some(listener),
        })
    }
}

impl Drop for ProxySocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Starts the filtering proxy for a managed network on the socket's listener, with the
/// profile's `network.allow`/`deny`/`ports`; decisions go to `$CORDON_PROXY_LOG` (JSONL)
/// when set.
fn start_proxy(
    profile: &ResolvedProfile,
    sock: &mut ProxySocket,
) -> Result<cordon_proxy::Running, String> {
    let policy = cordon_proxy::ProxyPolicy::from_rules(&profile.profile.network_rules)?;
    let mut cfg = cordon_proxy::ProxyConfig::new(policy);
    if let Some(p) = std::env::var_os("CORDON_PROXY_LOG") {
        cfg.log = cordon_proxy::DecisionLog::open(Path::new(&p))
            .map_err(|e| format!("cannot open CORDON_PROXY_LOG: {e}"))?;
    }
    let l = sock.listener.take().ok_or("the proxy socket is gone")?;
    cordon_proxy::spawn_unix(cfg, l, 2).map_err(|e| format!("starting the proxy: {e}"))
}

fn tmp_denied(fs: &ResolvedFilesystem) -> bool {
    fs.layered()
        .iter()
        .any(|e| e.path == Path::new("/tmp") && e.access == Access::Deny)
}

/// The confinement every rung applies in the process that will fork (or be) the command:
/// Landlock ruleset prepared (while paths are reachable and capabilities still held),
/// `no_new_privs`, capabilities dropped, Landlock enforced, seccomp installed. Returns the
/// applied layers as reported by the kernel. `extra` and `optional` are Landlock rules on
/// descriptors (see [`landlock_layer::prepare`]).
pub(crate) fn confine(
    profile: &ResolvedProfile,
    plan: &LinuxPlan,
    extra: Vec<(OwnedFd, Grant)>,
    optional: Vec<(OwnedFd, Grant)>,
) -> Result<Vec<String>, String> {
    let mut applied = Vec::new();
    let prepared: Option<Prepared> = match &plan.landlock {
        Some(l) => {
            let rules = landlock_layer::fs_rules(profile, plan.rung);
            let desc = plan
                .applied
                .iter()
                .find(|a| a.starts_with("landlock"))
                .cloned()
                .unwrap_or_else(|| "landlock".into());
            landlock_layer::prepare(l, &rules, extra, optional, desc)?
        }
        None => None,
    };
    sys::prctl(libc::PR_SET_NO_NEW_PRIVS, 1).map_err(|e| format!("no_new_privs: {e}"))?;
    applied.push("no_new_privs".to_string());
    let d = super::caps::drop_all()?;
    applied.push(if d.bounding_and_securebits {
        "capabilities dropped (bounding, ambient, effective; securebits locked)".to_string()
    } else {
        "no capabilities held (unprivileged)".to_string()
    });
    if let Some(p) = prepared {
        applied.push(p.enforce()?);
    }
    if let Some(s) = &plan.seccomp {
        let prog = seccomp_filter::build(seccomp_filter::FilterOptions {
            deny_sockets: s.deny_sockets,
            local_families_only: s.local_families_only,
            allow_pidfd_getfd: plan.unix_guard,
        });
        sys::install_seccomp(&prog).map_err(|e| format!("seccomp: {e}"))?;
        applied.push(
            plan.applied
                .iter()
                .find(|a| a.starts_with("seccomp"))
                .cloned()
                .unwrap_or_else(|| "seccomp".into()),
        );
    }
    Ok(applied)
}

fn is_userns_refusal(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::EINVAL | libc::ENOSPC | libc::EUSERS | libc::EACCES)
    )
}

fn run_namespaces(
    payload: &HelperPayload,
    args: &HelperArgs,
    plan: &LinuxPlan,
    mut features: LinuxFeatures,
) -> i32 {
    let profile = &payload.profile;
    let layout = mounts::layout(&profile.filesystem);
    let placeholders = match mounts::create_placeholders(&layout) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cordon: refusing to run unconfined: {e}");
            return EXIT_SETUP;
        }
    };
    // Everything the child needs is prepared before the clone.
    let env = child_env(payload, Rung::Namespaces);
    let spec = match CommandSpec::new(&args.argv, &env) {
        Ok(s) => s,
        Err(e) => {
            mounts::remove_placeholders(&placeholders);
            eprintln!("cordon: {e}");
            return EXIT_SETUP;
        }
    };
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let (alive_r, alive_w) = match sys::pipe() {
        Ok(p) => p,
        Err(e) => {
            mounts::remove_placeholders(&placeholders);
            eprintln!("cordon: sandbox setup failed: pipe: {e}");
            return EXIT_SETUP;
        }
    };
    let mut proxy_sock = if plan.proxy_relay {
        // Checked before anything starts: a bad list is a refusal, not a dead proxy.
        if let Err(e) = cordon_proxy::ProxyPolicy::from_rules(&profile.profile.network_rules) {
            mounts::remove_placeholders(&placeholders);
            eprintln!("cordon: refusing to run: {e}");
            return EXIT_SETUP;
        }
        match ProxySocket::create() {
            Ok(s) => Some(s),
            Err(e) => {
                mounts::remove_placeholders(&placeholders);
                eprintln!("cordon: sandbox setup failed: the proxy socket: {e}");
                return EXIT_SETUP;
            }
        }
    } else {
        None
    };
    process::block_signals();
    let mut flags =
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if plan.net_namespace {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: the helper is single-threaded (no thread is ever started in it).
    let pid = match unsafe { sys::clone_fork(flags as libc::c_ulong) } {
        Ok(p) => p,
        Err(e) if is_userns_refusal(&e) => {
            // The sysctls allowed it but something else (seccomp of a container, an
            // LSM) did not: learn it and try the next rung (or refuse).
            mounts::remove_placeholders(&placeholders);
            features.user_namespaces = false;
            features.userns_reason = Some(format!("clone(CLONE_NEWUSER) failed: {e}"));
            return run(payload, args, features);
        }
        Err(e) => {
            mounts::remove_placeholders(&placeholders);
            eprintln!("cordon: sandbox setup failed: clone: {e}");
            return EXIT_SETUP;
        }
    };
    if pid == 0 {
        drop(alive_w);
        let sock_path = proxy_sock.as_mut().map(|s| {
            s.listener.take(); // init never serves it
            s.path.clone()
        });
        let code = init_main(
            profile,
            plan,
            &layout,
            &spec,
            uid,
            gid,
            &alive_r,
            args.report,
            sock_path.as_deref(),
        );
        process::exit_now(code);
    }
    drop(alive_r);
    // The proxy lives exactly as long as the command's tree: until init is reaped.
    let proxy = match proxy_sock.as_mut().map(|s| start_proxy(profile, s)) {
        Some(Err(e)) => {
            eprintln!("cordon: sandbox setup failed: {e}");
            // SAFETY: kill has no memory-safety preconditions; `pid` is our child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            process::supervise(pid);
            drop(alive_w);
            mounts::remove_placeholders(&placeholders);
            return EXIT_SETUP;
        }
        Some(Ok(r)) => Some(r),
        None => None,
    };
    let code = process::supervise(pid);
    drop(proxy);
    drop(proxy_sock);
    drop(alive_w);
    mounts::remove_placeholders(&placeholders);
    code
}

/// Pid 1 of the new namespaces. Returns the exit code (never returns to the helper's
/// code path: the caller `_exit`s with it).
#[allow(clippy::too_many_arguments)]
fn init_main(
    profile: &ResolvedProfile,
    plan: &LinuxPlan,
    layout: &mounts::Layout,
    spec: &CommandSpec,
    uid: libc::uid_t,
    gid: libc::gid_t,
    alive: &OwnedFd,
    report: bool,
    proxy_sock: Option<&Path>,
) -> i32 {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        eprintln!("cordon: refusing to run unconfined: sandbox setup failed: {what}: {e}");
        EXIT_SETUP
    };
    if let Err(e) = sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) {
        return fail("PR_SET_PDEATHSIG", &e);
    }
    if sys::peer_gone(alive) {
        return EXIT_SETUP; // the helper is gone: nobody to run the command for
    }
    process::install_init_handlers();
    if let Err(e) = sys::write_file(c"/proc/self/setgroups", b"deny") {
        return fail("setgroups", &e);
    }
    if let Err(e) = sys::write_file(c"/proc/self/uid_map", format!("{uid} {uid} 1\n").as_bytes()) {
        return fail("uid_map", &e);
    }
    if let Err(e) = sys::write_file(c"/proc/self/gid_map", format!("{gid} {gid} 1\n").as_bytes()) {
        return fail("gid_map", &e);
    }
    // The proxy's socket, too (managed network).
    let relay_target = match proxy_sock.map(super::relay::pin) {
        Some(Ok(fd)) => Some(fd),
        Some(Err(e)) => return fail("opening the proxy socket", &e),
        None => None,
    };
    // Listed host sockets are pinned in the host's view, before the root is rebuilt.
    let allowed_sockets = if plan.unix_guard {
        super::unix_guard::pin_allowed(&profile.unix_sockets)
    } else {
        Vec::new()
    };
    let built = match mounts::build(layout) {
        Ok(b) => b,
        Err(e) => return fail("mounts", &e),
    };
    if plan.loopback {
        if let Err(e) = super::loopback::bring_up_lo() {
            return fail("bringing up the private loopback (lo)", &e);
        }
    }
    let relay_listeners = match &relay_target {
        Some(_) => match super::relay::listen() {
            Ok(l) => l,
            Err(e) => return fail("listening on the proxy relay port", &e),
        },
        None => Vec::new(),
    };
    if let Err(e) = std::env::set_current_dir(&profile.cwd) {
        return fail(
            &format!("entering the working directory {}", profile.cwd.display()),
            &e,
        );
    }
    let extra: Vec<(OwnedFd, Grant)> = built
        .host_devpts
        .into_iter()
        .map(|fd| (fd, Grant::Dev))
        .collect();
    let applied = match confine(profile, plan, extra, landlock_layer::stdio_grants()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("cordon: {}", with_refusal_prefix(&e));
            return EXIT_SETUP;
        }
    };
    if report {
        // The plan's first two entries describe the namespaces and the mount layout.
        let mut all: Vec<String> = plan.applied.iter().take(2).cloned().collect();
        all.extend(applied);
        eprintln!("cordon: sandbox: rung 1: {}", all.join("; "));
        for n in built.notes.iter().chain(plan.notes.iter()) {
            eprintln!("cordon: sandbox note: {n}");
        }
    }
    // The command must not be able to read or write init's memory through /proc/1: a
    // failure here is a failed layer, not something to run without.
    if let Err(e) = sys::prctl(libc::PR_SET_DUMPABLE, 0) {
        return fail("PR_SET_DUMPABLE", &e);
    }
    let guard_chan = if plan.unix_guard {
        match super::unix_guard::channel() {
            Ok(p) => Some(p),
            Err(e) => return fail("socketpair for the unix-socket guard", &e),
        }
    } else {
        None
    };
    let child = match process::spawn(spec, || match &guard_chan {
        Some((_, theirs)) => super::unix_guard::install_in_child(theirs),
        None => Ok(()),
    }) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let Some((ours, theirs)) = guard_chan {
        drop(theirs);
        let cfg = super::unix_guard::GuardConfig {
            abstract_ok: plan.net_namespace
                || plan
                    .landlock
                    .as_ref()
                    .is_some_and(|l| l.scope_abstract_unix),
            allowed: allowed_sockets,
        };
        let started = super::unix_guard::receive_listener(&ours)
            .and_then(|l| super::unix_guard::start(l, cfg));
        if let Err(e) = started {
            // The command's connect calls would wait forever: take the tree down.
            // SAFETY: kill has no memory-safety preconditions; `child` is our child.
            unsafe { libc::kill(child, libc::SIGKILL) };
            process::supervise(child);
            return fail("starting the unix-socket guard", &e);
        }
    }
    if let Some(target) = relay_target {
        if let Err(e) = super::relay::start(relay_listeners, target) {
            // SAFETY: kill has no memory-safety preconditions; `child` is our child.
            unsafe { libc::kill(child, libc::SIGKILL) };
            process::supervise(child);
            return fail("starting the proxy relay", &e);
        }
    }
    process::supervise(child)
}

fn with_refusal_prefix(e: &str) -> String {
    if e.starts_with("refusing") {
        e.to_string()
    } else {
        format!("refusing to run unconfined: sandbox setup failed: {e}")
    }
}

fn run_landlock_only(payload: &HelperPayload, args: &HelperArgs, plan: &LinuxPlan) -> i32 {
    let profile = &payload.profile;
    if let Err(e) = std::env::set_current_dir(&profile.cwd) {
        eprintln!(
            "cordon: cannot enter the working directory {}: {e} (cd to an existing \
             directory and run again)",
            profile.cwd.display()
        );
        return EXIT_SETUP;
    }
    let env = child_env(payload, Rung::LandlockOnly);
    let spec = match CommandSpec::new(&args.argv, &env) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cordon: {e}");
            return EXIT_SETUP;
        }
    };
    // The helper is a subreaper too: if the supervisor is killed, its orphans come here
    // and are swept below.
    if let Err(e) = sys::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) {
        eprintln!("cordon: refusing to run unconfined: cannot become a subreaper: {e}");
        return EXIT_SETUP;
    }
    // SAFETY: getpid/getpgrp have no preconditions.
    let (helper, pgrp) = unsafe { (libc::getpid(), libc::getpgrp()) };
    process::block_signals();
    // SAFETY: the helper is single-threaded, so the child may use the Rust runtime.
    let sup = unsafe { libc::fork() };
    if sup < 0 {
        eprintln!(
            "cordon: sandbox setup failed: fork: {}",
            std::io::Error::last_os_error()
        );
        return EXIT_SETUP;
    }
    if sup == 0 {
        let code = supervisor_main(profile, plan, &spec, args.report, helper, pgrp);
        process::exit_now(code);
    }
    let code = process::supervise(sup);
    process::kill_descendants();
    code
}

/// The rung-2 supervisor (see the module docs). Returns its exit code: the command's, or
/// 125 when nothing ran.
fn supervisor_main(
    profile: &ResolvedProfile,
    plan: &LinuxPlan,
    spec: &CommandSpec,
    report: bool,
    helper: libc::pid_t,
    helper_pgrp: libc::pid_t,
) -> i32 {
    process::block_supervisor_signals();
    let death = process::parent_death_signal();
    // SAFETY: getppid has no preconditions.
    if sys::prctl(libc::PR_SET_PDEATHSIG, death as libc::c_ulong).is_err()
        || unsafe { libc::getppid() } != helper
    {
        return EXIT_SETUP; // the helper is already gone: run nothing
    }
    // Its own process group, so a SIGKILL sent to the helper's group spares it.
    // SAFETY: setpgid has no memory-safety preconditions.
    if unsafe { libc::setpgid(0, 0) } != 0 {
        eprintln!(
            "cordon: refusing to run unconfined: sandbox setup failed: setpgid: {}",
            std::io::Error::last_os_error()
        );
        return EXIT_SETUP;
    }
    if let Err(e) = sys::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) {
        eprintln!("cordon: refusing to run unconfined: cannot become a subreaper: {e}");
        return EXIT_SETUP;
    }
    let child = match process::spawn(spec, || {
        // Back into the caller's process group: the command stays in the terminal's
        // foreground group (job control, ^C) as if the supervisor were not there.
        // SAFETY: setpgid has no memory-safety preconditions.
        if unsafe { libc::setpgid(0, helper_pgrp) } != 0 {
            return Err(format!(
                "sandbox setup failed: joining the process group {helper_pgrp}: {}",
                std::io::Error::last_os_error()
            ));
        }
        // Dies with the supervisor (whose own death leaves the rest to the helper).
        sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)
            .map_err(|e| format!("PR_SET_PDEATHSIG: {e}"))?;
        let applied = confine(profile, plan, Vec::new(), landlock_layer::stdio_grants())
            .map_err(|e| with_refusal_prefix(&e))?;
        if report {
            eprintln!("cordon: sandbox: rung 2: {}", applied.join("; "));
            for n in &plan.notes {
                eprintln!("cordon: sandbox note: {n}");
            }
        }
        Ok(())
    }) {
        Ok(p) => p,
        Err(code) => {
            process::kill_descendants();
            return code;
        }
    };
    // `None`: the helper died (SIGKILL included); nobody waits for the code any more.
    let code = process::supervise_while_parent(child, helper).unwrap_or(EXIT_SETUP);
    process::kill_descendants();
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_arguments() {
        let a = parse_args(os(&["--permission-profile", "P", "--", "ls", "-l"])).unwrap();
        assert_eq!(a.payload, PayloadArg::Inline("P".into()));
        assert_eq!(a.argv, os(&["ls", "-l"]));
        assert!(!a.report);
        let a = parse_args(os(&["--report", "--permission-profile=Q", "--", "x", "--"])).unwrap();
        assert_eq!(a.payload, PayloadArg::Inline("Q".into()));
        assert_eq!(a.argv, os(&["x", "--"]));
        assert!(a.report);
        assert!(parse_args(os(&["--permission-profile", "P"])).is_err());
        assert!(parse_args(os(&["--permission-profile", "P", "--"])).is_err());
        assert!(parse_args(os(&["--", "ls"])).is_err());
        assert!(parse_args(os(&["--bogus", "--", "ls"])).is_err());
        let a = parse_args(os(&["--permission-profile", "env:CORDON_X", "--", "ls"])).unwrap();
        assert_eq!(a.payload, PayloadArg::Env("CORDON_X".into()));
        let a = parse_args(os(&["--permission-profile=env:Y", "--", "ls"])).unwrap();
        assert_eq!(a.payload, PayloadArg::Env("Y".into()));
        assert!(parse_args(os(&["--permission-profile", "env:", "--", "ls"])).is_err());
        assert!(parse_args(os(&["--permission-profile", "env:A=B", "--", "ls"])).is_err());
    }

    #[test]
    fn env_payload_is_taken_and_removed() {
        let name = "CORDON_TEST_TAKE_PAYLOAD";
        std::env::set_var(name, "PAYLOAD");
        assert_eq!(
            take_payload(PayloadArg::Env(name.into())).unwrap(),
            "PAYLOAD"
        );
        assert!(
            std::env::var_os(name).is_none(),
            "the variable must be removed"
        );
        let e = take_payload(PayloadArg::Env(name.into())).unwrap_err();
        assert!(e.contains(name), "{e}");
        assert_eq!(take_payload(PayloadArg::Inline("I".into())).unwrap(), "I");
    }
}
