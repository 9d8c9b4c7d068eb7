//! Managed network, unknown hosts (issue 10 §4, R-P4 `ask`): a destination no
//! `network.allow`/`deny` rule names is put to the approver while the command runs —
//! scripted here (`--approvals-from`); approved → the request goes through, denied → 403
//! naming the answer, nobody to ask (or `--yes`) → denied at once. "session" and
//! "remember" answers are reused by later runs without asking.
//!
//! The host: `localhost` (a name no rule names) resolving to 127.0.0.1, where the test's
//! server listens; the allow list's address rule `127.0.0.1` lets an approved name reach
//! that internal address (an approval never widens the address check).

mod support;
use support::{out, sandbox_available, text, Project};

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

fn server() -> u16 {
    let up = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = up.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in up.incoming() {
            let Ok(mut s) = s else { continue };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut line = String::new();
            while r.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                line.clear();
            }
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    port
}

/// Fetches argv[1] through the proxy (`localhost` is in `NO_PROXY`: dropped here).
const FETCH: &str = r#"
import os, sys, urllib.request, urllib.error
os.environ.pop("no_proxy", None); os.environ.pop("NO_PROXY", None)
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=30).read().decode())
except urllib.error.HTTPError as e:
    print("HTTP", e.code, e.headers.get("x-cordon-blocked"), file=sys.stderr)
    sys.exit(3)
"#;

struct Setup {
    p: Project,
    cfg: std::path::PathBuf,
    url: String,
}

fn setup() -> Setup {
    let p = Project::new("cordon-ask-");
    let cfg = p.home.join("c.toml");
    std::fs::write(
        &cfg,
        "[profiles.net]\nextends = \"workspace-write\"\n[profiles.net.network]\nmode = \
         \"managed\"\nallow = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let url = format!("http://localhost:{}/", server());
    Setup { p, cfg, url }
}

/// Runs the fetch with `extra` flags (and the scripted `answers`, if any); returns the
/// output, the `--json` report and how long it took.
fn fetch(
    s: &Setup,
    extra: &[&str],
    answers: Option<&str>,
) -> (std::process::Output, serde_json::Value, Duration) {
    fetch_via(s, extra, answers, None)
}

/// [`fetch`], through the `cordon serve` listening on `server` when given.
fn fetch_via(
    s: &Setup,
    extra: &[&str],
    answers: Option<&str>,
    server: Option<&std::path::Path>,
) -> (std::process::Output, serde_json::Value, Duration) {
    let report = s.p.home.join("r.json");
    let _ = std::fs::remove_file(&report);
    let answers_file = s.p.home.join("answers.jsonl");
    let mut args: Vec<String> = vec![
        "run".into(),
        "--config".into(),
        s.cfg.display().to_string(),
        "--profile".into(),
        "net".into(),
        "--report".into(),
        report.display().to_string(),
    ];
    if let Some(a) = answers {
        std::fs::write(&answers_file, a).unwrap();
        args.push("--approvals-from".into());
        args.push(answers_file.display().to_string());
    }
    args.extend(extra.iter().map(|x| x.to_string()));
    args.extend(["--", "python3", "-c", FETCH, &s.url].map(String::from));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let t = Instant::now();
    let mut c = s.p.cordon(&argv);
    if let Some(sock) = server {
        c.env("CORDON_SERVE_SOCKET", sock);
    }
    let o = out(c);
    let took = t.elapsed();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_else(|_| text(&o.stderr)))
            .unwrap_or_else(|e| panic!("report: {e}\n{}", text(&o.stderr)));
    (o, v, took)
}

/// The host asks the scripted approver saw (`{"approval_request": …}` lines on stderr).
fn host_asks(o: &std::process::Output) -> Vec<serde_json::Value> {
    text(&o.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("approval_request").cloned())
        .filter(|r| r["kind"]["kind"] == "network-host")
        .collect()
}

#[test]
fn unknown_host_approved_once_goes_through() {
    if !sandbox_available() {
        return;
    }
    let s = setup();
    let (o, v, _) = fetch(&s, &[], Some("\"once\"\n"));
    assert_eq!(o.status.code(), Some(0), "{}\n{v}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "ok");
    let asks = host_asks(&o);
    assert_eq!(asks.len(), 1, "{}", text(&o.stderr));
    assert_eq!(asks[0]["kind"]["host"], "localhost");
    assert_eq!(v["outcome"], "success", "{v}");
    // The decision log names the answer.
    let log = v["decisions"].to_string();
    assert!(log.contains("approved once by the scripted answers"), "{v}");
}

#[test]
fn unknown_host_denied_is_a_403_naming_the_answer() {
    if !sandbox_available() {
        return;
    }
    let s = setup();
    let (o, v, _) = fetch(&s, &[], Some("\"deny\"\n"));
    assert_eq!(o.status.code(), Some(3), "{}\n{v}", text(&o.stderr));
    assert_eq!(host_asks(&o).len(), 1, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("HTTP 403 denied by the scripted answers"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(v["outcome"], "network-denied", "{v}");
    assert_eq!(v["host"], "localhost", "{v}");
    assert!(
        v["rule"]
            .as_str()
            .is_some_and(|r| r.starts_with("denied by the scripted answers")),
        "{v}"
    );
}

/// Nobody to ask (no terminal, no scripted answers), and `--yes` (which approves the
/// command it showed, not hosts it reaches later): denied at once, nothing asked.
#[test]
fn unknown_host_without_anyone_to_ask_is_denied_without_waiting() {
    if !sandbox_available() {
        return;
    }
    let s = setup();
    for extra in [&[][..], &["--yes"][..]] {
        let (o, v, took) = fetch(&s, extra, None);
        assert_eq!(o.status.code(), Some(3), "{extra:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("HTTP 403 not in network.allow"),
            "{extra:?}: {}",
            text(&o.stderr)
        );
        assert_eq!(v["outcome"], "network-denied", "{v}");
        assert_eq!(v["rule"], "not in network.allow", "{v}");
        // Far below the ask timeout (120 s): nothing waited for an answer.
        assert!(took < Duration::from_secs(60), "{extra:?} took {took:?}");
    }
}

/// Breaker LOW-1: a refusal nobody was asked about (no one to ask, a deny rule) is in the
/// report even when the command carries on and exits 0: `network_denied` lists it and the
/// decision log has a `network-host` entry naming the rule (it was only classified when
/// the run failed, and only answered questions were logged).
#[test]
fn unasked_refusal_is_reported_when_the_command_succeeds() {
    if !sandbox_available() {
        return;
    }
    let s = setup();
    let report = s.p.home.join("r0.json");
    let _ = std::fs::remove_file(&report);
    let cfg = s.cfg.display().to_string();
    let rep = report.display().to_string();
    let script = format!("{FETCH}\n");
    let o = out(s.p.cordon(&[
        "run",
        "--config",
        &cfg,
        "--profile",
        "net",
        "--report",
        &rep,
        "--",
        "sh",
        "-c",
        "python3 -c \"$0\" \"$1\"; echo carried on",
        &script,
        &s.url,
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("carried on"),
        "{}",
        text(&o.stdout)
    );
    // Said on stderr too (nu7: a run that shrugged off its 403 said nothing).
    assert!(
        text(&o.stderr).contains("cordon: note: cordon's proxy blocked localhost:")
            && text(&o.stderr).contains("(not in network.allow)"),
        "{}",
        text(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap())
        .unwrap_or_else(|e| panic!("report: {e}\n{}", text(&o.stderr)));
    let denied = v["network_denied"].as_array().cloned().unwrap_or_default();
    assert!(
        denied
            .iter()
            .any(|d| d["host"] == "localhost" && d["rule"] == "not in network.allow"),
        "{v}"
    );
    let logged = v["decisions"].as_array().cloned().unwrap_or_default();
    assert!(
        logged.iter().any(|d| {
            d["kind"] == "network-host"
                && d["detail"].as_str().is_some_and(|t| {
                    t.starts_with("localhost:") && t.contains("not in network.allow")
                })
        }),
        "{v}"
    );
}

/// "session" is reused by the next run of the same session without asking; "remember"
/// by any later run, even one where nobody can be asked.
#[test]
fn session_and_remembered_host_answers_are_reused() {
    if !sandbox_available() {
        return;
    }
    let s = setup();
    let (o, _, _) = fetch(&s, &["--session", "ask-test"], Some("\"session\"\n"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(host_asks(&o).len(), 1);
    let (o, v, _) = fetch(&s, &["--session", "ask-test"], Some(""));
    assert_eq!(o.status.code(), Some(0), "{}\n{v}", text(&o.stderr));
    assert!(host_asks(&o).is_empty(), "{}", text(&o.stderr));
    // Another session: asked again (denied: no answers left).
    let (o, _, _) = fetch(&s, &["--session", "other"], Some(""));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));

    let (o, _, _) = fetch(&s, &[], Some("\"remember-rule\"\n"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let remembered =
        std::fs::read_to_string(s.p.home.join(".config/cordon/network-hosts.toml")).unwrap();
    assert!(remembered.contains("\"localhost:"), "{remembered}");
    let (o, v, _) = fetch(&s, &[], None);
    assert_eq!(o.status.code(), Some(0), "{}\n{v}", text(&o.stderr));
}

/// The same question through `cordon serve` (the helper forked by the server gets the ask
/// channel like the decision channel).
#[test]
fn unknown_host_is_asked_through_cordon_serve_too() {
    if !sandbox_available() {
        return;
    }
    let s = setup();
    let sock = s.p.root.path().join("run").join("serve.sock");
    // `--no-templates`: a managed network needs a per-command proxy, so a server with
    // templates sends the command back to the cold path.
    let mut server = std::process::Command::new(support::CORDON)
        .arg("serve")
        .arg("--socket")
        .arg(&sock)
        .arg("--no-templates")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(&sock).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "cordon serve did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (o, v, _) = fetch_via(&s, &[], Some("\"once\"\n"), Some(&sock));
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(v["launch"], "server", "{v}");
    assert_eq!(o.status.code(), Some(0), "{}\n{v}", text(&o.stderr));
    assert_eq!(host_asks(&o).len(), 1, "{}", text(&o.stderr));
}

/// The library harness (and `cordon mcp`, which runs on it with the client's elicitation
/// as approver): the harness's approver is asked from the run's thread.
#[test]
fn unknown_host_is_asked_through_the_harness() {
    use cordon_session::approver::ScriptedApprover;
    use cordon_session::harness::{ExecParams, Harness, HarnessOptions};
    use cordon_session::Answer;
    if !sandbox_available() {
        return;
    }
    let s = setup();
    let exec = |answer: Answer| {
        let mut o = HarnessOptions::new(s.p.dir.clone());
        o.helper = Some(support::CORDON.into());
        o.layers.config = Some(s.cfg.clone());
        o.layers.profile = Some("net".into());
        let h =
            Harness::with_approver(o, Box::new(ScriptedApprover::from_answers(&[answer]))).unwrap();
        let mut p = ExecParams::argv(["python3", "-c", FETCH, &s.url]);
        p.timeout = Some(Duration::from_secs(60));
        h.exec(p).unwrap()
    };
    let r = exec(Answer::Once);
    let outcome = r.outcome.expect("finished");
    assert_eq!(outcome.exit_code, 0, "{outcome:?}\n{}", r.output.text);
    assert!(r.output.text.contains("ok"), "{}", r.output.text);
    let r = exec(Answer::Deny);
    let outcome = r.outcome.expect("finished");
    assert_eq!(outcome.exit_code, 3, "{outcome:?}\n{}", r.output.text);
    assert!(
        r.output
            .text
            .contains("HTTP 403 denied by the scripted answers"),
        "{}",
        r.output.text
    );
}

/// A ticker whose main thread exits (`SYS_exit`, leaving a zombie thread-group leader)
/// while a second thread keeps appending to argv[1] (stop 8 breaker: such a process was
/// never looked at, so it ran on — and could `SIGCONT` the others).
const ZOMBIE_LEADER_TICKER: &str = r#"
import ctypes, os, sys, threading, time
def tick():
    while True:
        with open(sys.argv[1], "a") as f:
            f.write("x\n")
        time.sleep(0.01)
threading.Thread(target=tick).start()
time.sleep(0.05)
nr = {"x86_64": 60, "aarch64": 93}.get(os.uname().machine, 60)
ctypes.CDLL(None).syscall(nr, 0)
"#;

/// While a question about a host is open the command holds still (stop 8 breaker: a
/// running command shares the terminal with the prompt and could repaint or outrun it):
/// tickers in the sandbox make no progress until the answer, and run again after it.
/// `user`: run cordon as that uid (the pause reads nothing a user cannot read).
fn held_while_a_host_question_is_open(user: Option<u32>) {
    let s = setup();
    let fifo = s.p.home.join("answers.fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let tick = s.p.dir.join("tick");
    let tock = s.p.dir.join("tock");
    std::fs::write(s.p.dir.join("zl.py"), ZOMBIE_LEADER_TICKER).unwrap();
    let script = format!(
        "(while :; do echo x >> {tick}; sleep 0.01; done) & T=$!\n\
         /usr/bin/python3 zl.py {tock} & Z=$!\n\
         /usr/bin/python3 -c \"$1\" {url}\n\
         n=$(wc -l < {tick}); sleep 0.3; m=$(wc -l < {tick}); kill $T $Z\n\
         echo \"after=$((m-n))\"\n",
        tick = tick.display(),
        tock = tock.display(),
        url = s.url,
    );
    let fifo_arg = fifo.display().to_string();
    let cfg = s.cfg.display().to_string();
    let mut c = s.p.cordon(&[
        "run",
        "--config",
        &cfg,
        "--profile",
        "net",
        "--approvals-from",
        &fifo_arg,
        "--",
        "sh",
        "-c",
        &script,
        "sh",
        FETCH,
    ]);
    if let Some(uid) = user {
        c = s.p.as_user(&c, uid);
    }
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    // Opening the FIFO for writing waits for cordon to open it for reading.
    let mut answers = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            if l.contains("approval_request") && l.contains("network-host") {
                let _ = tx.send(l.clone());
            }
            all.push_str(&l);
            all.push('\n');
        }
        all
    });
    let asked = rx.recv_timeout(Duration::from_secs(60));
    let lines = |f: &std::path::Path| {
        std::fs::read_to_string(f)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let (from, to) = if asked.is_ok() {
        let a = (lines(&tick), lines(&tock));
        std::thread::sleep(Duration::from_millis(500));
        (a, (lines(&tick), lines(&tock)))
    } else {
        ((0, 0), (0, 0))
    };
    answers.write_all(b"\"once\"\n").unwrap();
    drop(answers);
    let o = child.wait_with_output().unwrap();
    let stderr = reader.join().unwrap();
    assert!(asked.is_ok(), "no host question:\n{stderr}");
    assert!(
        from.0 > 0 && from.1 > 0,
        "a ticker never ran {from:?}:\n{stderr}"
    );
    assert_eq!(
        from, to,
        "the command ran on while the question was open (ticker, zombie-leader ticker)\n{stderr}"
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("ok"), "{stdout}");
    let after: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("after="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        after > 0,
        "the command was not continued after the answer: {stdout}"
    );
}

#[test]
fn command_is_held_while_a_host_question_is_open() {
    if !sandbox_available() {
        return;
    }
    held_while_a_host_question_is_open(None);
}

/// The same as an unprivileged user (breaker: the pause read `/proc/<init>/ns/pid`, which
/// only root may, so every managed run of a normal user failed with 125).
#[test]
fn command_is_held_while_a_host_question_is_open_as_a_user() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !sandbox_available() {
        return;
    }
    held_while_a_host_question_is_open(Some(support::TEST_UID));
}

/// A proxy that cannot start is "nothing ran", with the reason, not a command failure with
/// every layer listed as applied (breaker: the report disagreed with what happened).
#[test]
fn proxy_that_cannot_start_is_reported_as_nothing_ran() {
    if !sandbox_available() {
        return;
    }
    let s = setup();
    let report = s.p.home.join("r.json");
    let cfg = s.cfg.display().to_string();
    let rep = report.display().to_string();
    let mut c = s.p.cordon(&[
        "run",
        "--config",
        &cfg,
        "--profile",
        "net",
        "--report",
        &rep,
        "--",
        "touch",
        "ran",
    ]);
    c.env("CORDON_PROXY_LOG", s.p.home.join("missing-dir/log"));
    let o = out(c);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(!s.p.dir.join("ran").exists(), "the command ran");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_ne!(v["outcome"], "command-failed", "{v}");
    assert_eq!(v["applied"], serde_json::json!([]), "{v}");
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("CORDON_PROXY_LOG")),
        "{v}"
    );
}

/// Breaker (stop 19): `$CORDON_PROXY_LOG` through a symlink a previous run planted in the
/// workspace: the helper (host side, often root) appended to the link's target. Refused
/// with nothing run and the target untouched; a FIFO there is refused without hanging; a
/// plain file there is appended to (twin).
#[test]
fn proxy_log_through_a_planted_symlink_is_refused() {
    if !sandbox_available() {
        return;
    }
    let s = setup();
    let victim = s.p.home.join("victim");
    std::fs::write(&victim, "keep\n").unwrap();
    std::os::unix::fs::symlink(&victim, s.p.dir.join("proxy.jsonl")).unwrap();
    let st = std::process::Command::new("mkfifo")
        .arg(s.p.dir.join("fifo.jsonl"))
        .status()
        .unwrap();
    assert!(st.success());
    let cfg = s.cfg.display().to_string();
    let run = |log: &str| {
        let mut c = s.p.cordon(&[
            "run",
            "--config",
            &cfg,
            "--profile",
            "net",
            "--",
            "touch",
            "ran",
        ]);
        c.env("CORDON_PROXY_LOG", s.p.dir.join(log));
        out(c)
    };
    for log in ["proxy.jsonl", "fifo.jsonl"] {
        let o = run(log);
        assert_eq!(o.status.code(), Some(125), "{log}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("CORDON_PROXY_LOG"),
            "{}",
            text(&o.stderr)
        );
        assert!(!s.p.dir.join("ran").exists(), "{log}: the command ran");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    let o = run("plain.jsonl");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(s.p.dir.join("plain.jsonl").is_file());
}

/// An answers file the command may write would let it answer its own questions (breaker:
/// a FIFO in the workspace approved the command's host): refused before anything runs;
/// the same answers outside every writable root are used.
#[test]
fn answers_inside_a_writable_root_are_refused() {
    if !sandbox_available() {
        return;
    }
    let s = setup();
    let inside = s.p.dir.join("answers.jsonl");
    std::fs::write(&inside, "\"once\"\n").unwrap();
    let (cfg, path) = (s.cfg.display().to_string(), inside.display().to_string());
    let o = out(s.p.cordon(&[
        "run",
        "--config",
        &cfg,
        "--profile",
        "net",
        "--approvals-from",
        &path,
        "--",
        "touch",
        "ran",
    ]));
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("could answer its own"),
        "{}",
        text(&o.stderr)
    );
    assert!(!s.p.dir.join("ran").exists());
    // Still works: the home is read-only for the command.
    let outside = s.p.home.join("answers.jsonl");
    std::fs::write(&outside, "\"once\"\n").unwrap();
    let path = outside.display().to_string();
    let o = out(s.p.cordon(&[
        "run",
        "--config",
        &cfg,
        "--profile",
        "net",
        "--approvals-from",
        &path,
        "--",
        "touch",
        "ran",
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(s.p.dir.join("ran").exists());
    // Breaker (stop 18): the same outside file named through a symlink in the workspace
    // (which a concurrent run could swap before the answers are read) is refused.
    let link = s.p.dir.join("answers-link");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let path = link.display().to_string();
    let o = out(s.p.cordon(&[
        "run",
        "--config",
        &cfg,
        "--profile",
        "net",
        "--approvals-from",
        &path,
        "--",
        "touch",
        "ran2",
    ]));
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("passes through the symlink"),
        "{}",
        text(&o.stderr)
    );
    assert!(!s.p.dir.join("ran2").exists());
}

/// Breaker (stop 19): with a managed network the helper (running the proxy) joins the
/// run's cgroup, and its threads came off the command's `pids` budget: a command under
/// `pids = 40` could start only ~30 processes and was then killed as "more than 40".
/// `pids.max` is raised by the proxy's threads, so the command keeps (at least) its budget
/// — and a fork bomb still ends `limit-exceeded{pids}` (the limit holds).
#[test]
fn managed_network_keeps_the_commands_pids_budget() {
    // The helper's threads count only where a cgroup holds the run (root here; a
    // delegated cgroup v2 subtree elsewhere): as another user the limit is RLIMIT_NPROC.
    // SAFETY: geteuid has no preconditions.
    if !sandbox_available() || unsafe { libc::geteuid() } != 0 {
        return;
    }
    let s = setup();
    let cfg = s.p.home.join("pids.toml");
    std::fs::write(
        &cfg,
        "[profiles.np]\nextends = \"workspace-write\"\n[profiles.np.network]\nmode = \
         \"managed\"\nallow = [\"127.0.0.1\"]\n[profiles.np.limits]\npids = 40\n",
    )
    .unwrap();
    let script = "import os, time\n\
                  n = 0\n\
                  try:\n\
                  \x20   while n < 200:\n\
                  \x20       if os.fork() == 0:\n\
                  \x20           time.sleep(5); os._exit(0)\n\
                  \x20       n += 1\n\
                  \x20       print('forked', n, flush=True)\n\
                  except OSError:\n\
                  \x20   time.sleep(2)\n";
    let cfg = cfg.display().to_string();
    let o = out(s.p.cordon(&[
        "run",
        "--config",
        &cfg,
        "--profile",
        "np",
        "--",
        "python3",
        "-c",
        script,
    ]));
    // The count as each fork succeeds: the last line stands even when the watchdog ends
    // the tree before the script's own end (a loaded machine). After its refused fork the
    // script waits, so the watchdog (every 20 ms) sees the limit's event before it ends: a
    // command that exits 0 at once after a refused fork is, by design, not reclassified,
    // and under load it sometimes ended first (a full-suite run here: 0, not 124).
    let forked: u32 = text(&o.stdout)
        .lines()
        .last()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}{}", text(&o.stdout), text(&o.stderr)));
    assert!(forked >= 38, "only {forked} processes under pids = 40");
    assert!(forked < 200, "the pids limit did not hold");
    assert_eq!(o.status.code(), Some(124), "{}", text(&o.stderr));
}
