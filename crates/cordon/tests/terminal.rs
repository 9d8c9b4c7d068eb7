//! The terminal (issue 11 §4), end to end: `cordon run` started inside a pseudo-terminal
//! made by `script(1)` (util-linux). One sandbox per `cordon` process; bounded times.

use std::path::PathBuf;
use std::process::{Command, Stdio};

const CORDON: &str = env!("CARGO_BIN_EXE_cordon");

fn sandbox_ready() -> bool {
    let ok = Command::new("script").arg("--version").output().is_ok();
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI needs script(1) from util-linux"
        );
        eprintln!("SKIP: no script(1)");
    }
    ok
}

/// A project (a git dir with HEAD: an empty `.git` is cordon's placeholder) in a
/// temporary directory that is also its HOME: (the directory, the project).
fn project() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::Builder::new()
        .prefix("cordon-tty-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let dir: PathBuf = root.path().join("proj");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    (root, dir)
}

/// Runs `inner` (a shell command line) under `cordon run` in a fresh pty of size 21x61.
fn in_pty(inner: &str) -> String {
    in_pty_with("", inner)
}

/// [`in_pty`] with `flags` for `cordon run` (e.g. `--json`).
fn in_pty_with(flags: &str, inner: &str) -> String {
    pty_line(&format!(
        "stty rows 21 cols 61; {CORDON} run {flags} -- sh -c {}",
        shlex_quote(inner)
    ))
}

/// The shell line `line` in a fresh pty (`script(1)`, at most 30 s) in `dir` with HOME
/// `home`, its input and output piped to the test: what is written to its stdin is typed at
/// the terminal (`\x03` is a ^C).
fn pty_child(line: &str, home: &std::path::Path, dir: &std::path::Path) -> std::process::Child {
    pty_command(line, home, dir, true).spawn().unwrap()
}

/// `script(1)` running the shell line `line` in a fresh pty, in `dir` with HOME `home`, its
/// input and output piped (not spawned); `under_timeout`: as `timeout 30 script …`.
fn pty_command(
    line: &str,
    home: &std::path::Path,
    dir: &std::path::Path,
    under_timeout: bool,
) -> Command {
    let mut c = if under_timeout {
        let mut t = Command::new("timeout");
        t.args(["30", "script"]);
        t
    } else {
        Command::new("script")
    };
    c.args(["-qec", line, "/dev/null"])
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("CORDON_DISABLE_LAYERS")
        .env_remove("CORDON_PROFILE")
        .env_remove("CORDON_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    c
}

/// What `from` gives until `needle` has appeared in it (all of it, as read).
///
/// Panics when `from` ends first, naming what it gave.
fn read_until(from: &mut impl std::io::Read, needle: &str) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let n = from.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "ended before {needle:?}: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    seen
}

fn shlex_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `tty`, `ttyname()` and the window size work inside; only the command's own terminal is
/// visible (not the host's other ptys); a pty allocated inside still works; TIOCSTI is
/// refused (escape: typing into the host terminal).
#[test]
fn terminal_resolves_inside_and_injection_is_refused() {
    if !sandbox_ready() {
        return;
    }
    let out = in_pty(
        "tty; stty size; \
         python3 -c 'import os; print(\"NAME\", os.ttyname(0) == os.ttyname(1))'; \
         ls /dev/pts; script -qc tty /dev/null </dev/null; \
         python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b\"x\"); print(\"INJECTED\")' \
           2>/dev/null || echo TIOCSTI_REFUSED",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first(), Some(&"/dev/console"), "{out}");
    assert!(out.contains("21 61"), "window size: {out}");
    assert!(out.contains("NAME True"), "{out}");
    assert!(out.contains("\nptmx\n"), "only ptmx in /dev/pts: {out}");
    assert!(out.contains("/dev/pts/0"), "nested pty: {out}");
    assert!(
        out.contains("TIOCSTI_REFUSED") && !out.contains("INJECTED"),
        "{out}"
    );
}

/// New-user pass nu18 F13: a shell given options only (`bash --norc`) at a terminal keeps
/// the terminal on stderr, so it is interactive: it prints its prompt. (With stderr read
/// by cordon it was not: no prompt, and ^C ended the shell.)
#[test]
fn a_shell_with_options_only_stays_interactive() {
    if !sandbox_ready() {
        return;
    }
    let (root, dir) = project();
    let mut child = pty_child(&format!("{CORDON} run -- bash --norc"), root.path(), &dir);
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let _ = stdin.write_all(b"echo MARK-$((6*7))\nexit\n");
    }
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("MARK-42"), "{out:?}");
    // The prompt (bash's default for --norc), printed only by an interactive shell.
    assert!(out.contains("bash-"), "{out:?}");
}

/// Attack pass 44, L3: after a command that switched the terminal's character set (`ESC(0`
/// and shift-out: line-drawing symbols) or set a scroll region, cordon's own lines are
/// preceded by a reset of those too, not only of the colours.
#[test]
fn the_terminal_is_reset_before_cordons_lines() {
    if !sandbox_ready() {
        return;
    }
    let out = in_pty("printf '\\033(0\\016\\033[2;3r'; echo done");
    let at = out.find("done").expect("the command ran");
    let after = &out[at..];
    for reset in ["\x1b[0m", "\x0f", "\x1b(B", "\x1b7\x1b[r\x1b8"] {
        assert!(
            after.contains(reset),
            "{reset:?} missing after the run: {after:?}"
        );
    }
}

/// nu23 Q7 (nu22 P5): with `--json` at a terminal the reset is a line of its own, so the
/// report's line is the JSON object alone — after a command that ended its output with a
/// newline and after one that left its line open.
#[test]
fn the_json_line_at_a_terminal_is_the_object_alone() {
    if !sandbox_ready() {
        return;
    }
    for inner in ["echo done", "printf done"] {
        let out = in_pty_with("--json", inner);
        let line = out
            .lines()
            .find(|l| l.contains("\"outcome\""))
            .unwrap_or_else(|| panic!("no report line: {out:?}"));
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert_eq!(v["outcome"], "success", "{line}");
    }
}

/// Runs the shell line `line` in a fresh pty, in a project that is also HOME: its output.
fn pty_line(line: &str) -> String {
    let (root, dir) = project();
    let o = Command::new("timeout")
        .args(["30", "script", "-qec", line, "/dev/null"])
        .current_dir(&dir)
        .env("HOME", root.path())
        .env_remove("CORDON_DISABLE_LAYERS")
        .env_remove("CORDON_PROFILE")
        .env_remove("CORDON_CONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).replace('\r', "")
}

/// New-user pass 150, item 2: at a terminal the run asks about a command that needs
/// approval, so its dry run says it would ask (exit 1, as `cordon check`) rather than "no
/// one can be asked here" (exit 125). Twins: with `--non-interactive`, or with stdin not a
/// terminal, no one is asked and the dry run still says it would refuse.
#[test]
fn a_dry_run_at_a_terminal_says_it_would_ask() {
    if !sandbox_ready() {
        return;
    }
    let out = pty_line(&format!(
        "{CORDON} run --dry-run -- git reset --hard; echo EXIT=$?"
    ));
    assert!(
        out.contains("approval: would ask (at this terminal): "),
        "{out}"
    );
    assert!(!out.contains("no one can be asked"), "{out}");
    assert!(out.contains("EXIT=1"), "{out}");
    for flags in ["--non-interactive", "</dev/null"] {
        let line = if flags.starts_with('<') {
            format!("{CORDON} run --dry-run -- git reset --hard {flags}; echo EXIT=$?")
        } else {
            format!("{CORDON} run --dry-run {flags} -- git reset --hard; echo EXIT=$?")
        };
        let out = pty_line(&line);
        assert!(out.contains("approval: would REFUSE: "), "{flags}: {out}");
        assert!(out.contains("no one can be asked here"), "{flags}: {out}");
        assert!(out.contains("EXIT=125"), "{flags}: {out}");
    }
    // `cordon check` cannot know who the run will ask: it says both.
    let out = pty_line(&format!("{CORDON} check -- git reset --hard; echo EXIT=$?"));
    assert!(out.contains("it asks at a terminal"), "{out}");
    assert!(!out.contains("no one can be asked here"), "{out}");
    assert!(out.contains("EXIT=1"), "{out}");
}

/// New-user pass 180, #1: one `^C` typed at the terminal reached the command twice — the
/// terminal sent it to its foreground group, the command in it, and cordon passed its own
/// copy on — so a Python handler ran twice and its traceback was cut off. Now the
/// terminal's signal (`SI_KERNEL`) is not passed on to a command in cordon's group: one
/// `^C`, one `SIGINT`, on the cold path and the default one. (A `kill -INT` of cordon by a
/// program is still passed on: the signal tests in serve.rs.) Twin (attack pass 181, F1):
/// a command that left the terminal's group (`setpgid(0, 0)`) got no `^C` at all and
/// `cordon run` waited on; init now passes the terminal's signal on to it.
#[test]
fn one_ctrl_c_at_the_terminal_is_one_sigint() {
    use std::io::{Read, Write};
    if !sandbox_ready() {
        return;
    }
    let count = "import signal, time\n\
                 n = 0\n\
                 def h(s, f):\n    global n\n    n += 1\n\
                 signal.signal(signal.SIGINT, h)\n\
                 print('ready', flush=True)\n\
                 t = time.time()\n\
                 while time.time() - t < 1.5:\n    time.sleep(0.05)\n\
                 print('total', n, flush=True)\n";
    let leave = "import os, time\n\
                 os.setpgid(0, 0)\n\
                 print('ready', flush=True)\n\
                 time.sleep(4)\n\
                 print('total survived', flush=True)\n";
    for (flags, script, want) in [
        ("--no-server", count, "total 1\n"),
        ("", count, "total 1\n"),
        ("--no-server", leave, "KeyboardInterrupt"),
    ] {
        let (root, dir) = project();
        std::fs::write(dir.join("count.py"), script).unwrap();
        let line = format!("{CORDON} run {flags} -- python3 count.py");
        let mut c = pty_child(&line, root.path(), &dir);
        let mut stdin = c.stdin.take().unwrap();
        let mut stdout = c.stdout.take().unwrap();
        let mut seen = read_until(&mut stdout, "ready");
        std::thread::sleep(std::time::Duration::from_millis(200));
        stdin.write_all(b"\x03").unwrap();
        stdin.flush().unwrap();
        stdout.read_to_end(&mut seen).unwrap();
        let _ = c.wait();
        let out = String::from_utf8_lossy(&seen).replace('\r', "");
        assert!(
            out.contains(want) && !out.contains("survived"),
            "{flags}: {out}"
        );
    }
}

/// Attack pass 183, F1: with cordon the session leader of its terminal (`script -c
/// 'cordon run …'`, `ssh -t`), closing the terminal sends SIGHUP to cordon alone; cordon
/// took it for the terminal's signal to the whole group and did not pass it on, so the
/// command — and cordon — ran on with no terminal. Now the run ends. (The `^C` test above
/// is the twin: a group signal is still not passed on twice.)
#[test]
fn closing_the_terminal_ends_the_run() {
    if !sandbox_ready() {
        return;
    }
    let (root, dir) = project();
    // `sleep 29.PID`: a fractional time, unique to this test, to find it by.
    let marker = format!("29.{}", std::process::id());
    let line = format!("exec {CORDON} run --no-server -- sh -c 'echo ready; exec sleep {marker}'");
    // `script` itself (not under `timeout`, as `pty_child` runs it): SIGKILLed, it closes
    // the terminal's master side and nothing else — the hangup alone ends the run.
    let mut c = pty_command(&line, root.path(), &dir, false)
        .spawn()
        .unwrap();
    let mut stdout = c.stdout.take().unwrap();
    read_until(&mut stdout, "ready");
    c.kill().unwrap();
    let _ = c.wait();
    let alive = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker))
        })
    };
    let t0 = std::time::Instant::now();
    while alive() && t0.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!alive(), "the command outlived its terminal");
}
