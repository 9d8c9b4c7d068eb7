//! The command holds still while a person answers a question about it (issue 10 §4, R-P4
//! `ask`).
//!
//! A managed network asks about unknown hosts *while the command runs*, on the terminal the
//! command shares. A running command could repaint the question (print its own "allowed"
//! line over it, hide it with escape sequences) or keep writing until the person answers
//! the wrong thing (stop 8 breaker). So the helper sits between the proxy and the caller on
//! the ask channel ([`interpose`]): before a question reaches the caller, every process of
//! the sandbox but init (cordon's own supervisor) — init's descendants, which are exactly
//! its pid namespace — is stopped with `SIGSTOP`, which no process can catch, block or
//! ignore; when the last open question is answered (or has outlived the proxy's own timeout)
//! exactly those processes get `SIGCONT`. Processes are named by pidfds, so a pid reused
//! meanwhile is never signalled. A process counts as held when none of its threads can run
//! user code (a thread group whose leader exited is looked at thread by thread).
//!
//! Why not the cgroup freezer: the helper itself is in the run's cgroup (its `pids.max`
//! counts it), and a host without a delegated cgroup would have no pause at all. Why
//! repeated passes: a process not yet stopped may fork or `SIGCONT` a stopped one; a pass
//! that finds every process of the namespace stopped ends it (stopped processes do
//! nothing). If that does not happen within [`STOP_WITHIN`], the question is not shown: the
//! proxy gets a deny naming why (fail closed), and the processes are continued.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long stopping every process of the namespace may take before the question is
/// refused instead.
pub(crate) const STOP_WITHIN: Duration = Duration::from_secs(2);

/// The sandbox's processes, named by its init (pid 1 inside, `init` outside): init's
/// descendants. Every process of the sandbox's pid namespace is one — an orphan there is
/// re-parented to init, and no process leaves a pid namespace — and no other process is.
/// Read from `/proc/<pid>/status` (`PPid:`), which needs no ptrace access (init is not
/// dumpable: `/proc/<init>/ns/pid` is refused to an unprivileged helper).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sandbox {
    init: libc::pid_t,
}

/// The processes one [`Sandbox::stop`] stopped (and only those are continued).
#[derive(Debug, Default)]
pub(crate) struct Stopped(Vec<OwnedFd>);

/// `SIGSTOP`'s bit in the `ShdPnd:` mask of `/proc/<pid>/status`.
const STOP_BIT: u64 = 1 << (libc::SIGSTOP - 1);

/// `(PPid, SIGSTOP pending for the thread group)` of `pid`; `None` when it is gone.
///
/// Errors: the file exists but cannot be read (e.g. `/proc` mounted `hidepid`), so
/// whether the process is the sandbox's is unknown.
fn status_of(pid: libc::pid_t) -> io::Result<Option<(libc::pid_t, bool)>> {
    let text = match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Ok(t) => t,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    let ppid = field("PPid:").and_then(|v| v.parse().ok());
    let pending = field("ShdPnd:")
        .and_then(|v| u64::from_str_radix(v, 16).ok())
        .is_some_and(|m| m & STOP_BIT != 0);
    Ok(ppid.map(|p| (p, pending)))
}

/// Whether no thread of `pid` can run user code: each is stopped, traced-stopped or dead,
/// or waits uninterruptibly (`D`, e.g. a `vfork` parent) with the group's `SIGSTOP`
/// pending — it stops before it returns to user space. Every thread is looked at: a
/// thread group whose leader exited (`Z`) can still have running threads.
fn held(pid: libc::pid_t, stop_pending: bool) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true; // gone
    };
    tasks
        .filter_map(|t| t.ok()?.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .all(|tid| {
            match state_of(&format!("/proc/{pid}/task/{tid}/stat")) {
                None => true, // exited meanwhile
                Some(b'T' | b't' | b'Z' | b'X' | b'x') => true,
                Some(b'D') => stop_pending,
                Some(_) => false,
            }
        })
}

/// The scheduler state letter of a `stat` file (after the command name).
fn state_of(path: &str) -> Option<u8> {
    let s = std::fs::read(path).ok()?;
    let close = s.iter().rposition(|&b| b == b')')?;
    s.get(close + 2).copied()
}

impl Sandbox {
    /// The sandbox whose init is `init` (the helper's child, pid 1 of the sandbox).
    ///
    /// Errors: init's `/proc/<init>/status` cannot be read (then nothing could be held).
    pub(crate) fn of_init(init: libc::pid_t) -> io::Result<Sandbox> {
        status_of(init)?.ok_or_else(|| io::Error::other("the sandbox's init is gone"))?;
        Ok(Sandbox { init })
    }

    /// Init's descendants (host pids) with whether their group has `SIGSTOP` pending.
    ///
    /// Errors: some process's status could not be read ([`status_of`]).
    fn members(&self) -> io::Result<Vec<(libc::pid_t, bool)>> {
        let mut all: Vec<(libc::pid_t, libc::pid_t, bool)> = Vec::new();
        for e in std::fs::read_dir("/proc")? {
            let Some(pid) = e
                .ok()
                .and_then(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            if let Some((ppid, pending)) = status_of(pid)? {
                all.push((pid, ppid, pending));
            }
        }
        let mut members: Vec<(libc::pid_t, bool)> = Vec::new();
        let mut frontier = vec![self.init];
        while let Some(parent) = frontier.pop() {
            for &(pid, ppid, pending) in &all {
                if ppid == parent && pid != self.init && !members.iter().any(|m| m.0 == pid) {
                    members.push((pid, pending));
                    frontier.push(pid);
                }
            }
        }
        Ok(members)
    }

    /// Stops every process of the sandbox but init (module docs). The processes already
    /// stopped by someone else stay as they are and are not continued later.
    ///
    /// Errors: the processes could not be listed, or some process was still running after
    /// [`STOP_WITHIN`] (those stopped so far are continued before returning).
    pub(crate) fn stop(&self) -> io::Result<Stopped> {
        let mut stopped = Stopped::default();
        let mut signalled: Vec<libc::pid_t> = Vec::new();
        let until = Instant::now() + STOP_WITHIN;
        loop {
            let members = self.members().inspect_err(|_| stopped.resume())?;
            let running: Vec<libc::pid_t> = members
                .iter()
                .filter(|(p, pending)| !held(*p, *pending))
                .map(|(p, _)| *p)
                .collect();
            if running.is_empty() {
                return Ok(stopped);
            }
            if Instant::now() >= until {
                stopped.resume();
                return Err(io::Error::other(format!(
                    "{} process(es) of the command kept running",
                    running.len()
                )));
            }
            for p in running {
                let Ok(fd) = super::sys::pidfd_open(p) else {
                    continue;
                };
                // The pid may have been reused between the scan and pidfd_open: the
                // descriptor must still name a child of a process of the sandbox.
                let parent = status_of(p).ok().flatten().map(|(pp, _)| pp);
                if !parent.is_some_and(|pp| pp == self.init || members.iter().any(|m| m.0 == pp)) {
                    continue;
                }
                super::template::pidfd_signal(&fd, libc::SIGSTOP);
                if !signalled.contains(&p) {
                    signalled.push(p);
                    stopped.0.push(fd);
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Stopped {
    /// Continues exactly the processes [`Sandbox::stop`] stopped.
    pub(crate) fn resume(&mut self) {
        for fd in self.0.drain(..) {
            super::template::pidfd_signal(&fd, libc::SIGCONT);
        }
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        self.resume();
    }
}

/// What the two relay threads tell the pausing thread.
enum Event {
    /// A question (its id) is about to go to the caller; the reply channel answers `true`
    /// when the command is held, `false` (with the reason) when it could not be.
    Asked(u64, mpsc::Sender<Result<(), String>>),
    /// The caller answered question `id`.
    Answered(u64),
}

/// Puts the helper between the proxy and the caller on the ask channel: returns the end
/// the proxy's asker uses; `caller` is the channel to `cordon run`. Questions pass only
/// with the command stopped (module docs); a question that cannot be held gets
/// `{"allow":false}` naming why, without reaching the caller. `hold` is how long a question
/// keeps the command stopped without an answer (the proxy's own timeout).
///
/// Errors: the socket pair or a thread could not be made.
pub(crate) fn interpose(
    caller: UnixStream,
    sandbox: Sandbox,
    hold: Duration,
) -> io::Result<UnixStream> {
    let (proxy_end, ours) = UnixStream::pair()?;
    let (tx, rx) = mpsc::channel::<Event>();
    // The pausing thread: stops on the first open question, continues after the last.
    std::thread::Builder::new()
        .name("ask-pause".into())
        .spawn(move || {
            let mut open: HashMap<u64, Instant> = HashMap::new();
            let mut held: Option<Stopped> = None;
            loop {
                match rx.recv_timeout(Duration::from_millis(500)) {
                    Ok(Event::Asked(id, reply)) => {
                        if held.is_none() {
                            match sandbox.stop() {
                                Ok(s) => held = Some(s),
                                Err(e) => {
                                    let _ = reply.send(Err(e.to_string()));
                                    continue;
                                }
                            }
                        }
                        open.insert(id, Instant::now() + hold);
                        let _ = reply.send(Ok(()));
                    }
                    Ok(Event::Answered(id)) => {
                        open.remove(&id);
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        open.retain(|_, until| Instant::now() < *until);
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                if open.is_empty() {
                    held = None; // continues the stopped processes
                }
            }
        })?;
    // Both threads write whole lines to the proxy: one writer, shared.
    let to_proxy = std::sync::Arc::new(std::sync::Mutex::new(ours.try_clone()?));
    let send_proxy = |w: &std::sync::Mutex<UnixStream>, line: &[u8]| {
        w.lock()
            .map_err(|_| io::Error::other("poisoned"))
            .and_then(|mut w| w.write_all(line))
    };
    // proxy → caller: each question waits for the command to be held.
    let mut to_caller = caller.try_clone()?;
    let refuse = to_proxy.clone();
    let asked = tx.clone();
    std::thread::Builder::new()
        .name("ask-out".into())
        .spawn(move || {
            let mut lines = BufReader::new(ours);
            let mut line = Vec::new();
            while lines.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                let id = serde_json::from_slice::<cordon_proxy::ask::HostAsk>(&line)
                    .map(|q| q.id)
                    .ok();
                let held = match id {
                    Some(id) => {
                        let (rtx, rrx) = mpsc::channel();
                        let _ = asked.send(Event::Asked(id, rtx));
                        rrx.recv()
                            .unwrap_or_else(|_| Err("the pause thread ended".into()))
                    }
                    None => Err("a malformed question".into()),
                };
                let sent = match held {
                    Ok(()) => to_caller.write_all(&line),
                    Err(why) => {
                        let reply = cordon_proxy::ask::HostReply {
                            id: id.unwrap_or(0),
                            allow: false,
                            rule: format!("not asked: the command could not be paused ({why})"),
                        };
                        let mut out = serde_json::to_vec(&reply).unwrap_or_default();
                        out.push(b'\n');
                        send_proxy(&refuse, &out)
                    }
                };
                if sent.is_err() {
                    break;
                }
                line.clear();
            }
            let _ = to_caller.shutdown(std::net::Shutdown::Write);
        })?;
    // caller → proxy: each answer ends its question.
    std::thread::Builder::new()
        .name("ask-in".into())
        .spawn(move || {
            let mut lines = BufReader::new(caller);
            let mut line = Vec::new();
            while lines.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                if let Ok(r) = serde_json::from_slice::<cordon_proxy::ask::HostReply>(&line) {
                    let _ = tx.send(Event::Answered(r.id));
                }
                if send_proxy(&to_proxy, &line).is_err() {
                    break;
                }
                line.clear();
            }
            if let Ok(w) = to_proxy.lock() {
                let _ = w.shutdown(std::net::Shutdown::Write);
            }
        })?;
    Ok(proxy_end)
}
