//! End-to-end tests of the decision loop in `cordon run` (issue 9): classification of real
//! runs with hints, timeouts that leave no survivors, escalation needing a fresh approval,
//! the session cache across runs (`--session` + scripted answers), plan mode, and the
//! interactive prompt driven through tmux. One `cordon` process per run.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::{have, out, sandbox_available, text, Project, CORDON};

fn project() -> Project {
    Project::new("cordon-sess-")
}

fn cordon(p: &Project, args: &[&str]) -> Command {
    p.cordon(args)
}

/// The `--json` report: the last JSON line on stderr.
fn report(o: &Output) -> serde_json::Value {
    let err = text(&o.stderr);
    let line = err
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON report in stderr: {err}"));
    serde_json::from_str(line).unwrap()
}

/// Writing outside every writable root → sandbox-denied with the path and a -w hint.
#[test]
fn write_to_read_only_path_is_sandbox_denied_with_the_path() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let outside = p.root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let target = outside.join("x");
    let o = out(cordon(
        &p,
        &["run", "--json", "--", "touch", target.to_str().unwrap()],
    ));
    let v = report(&o);
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert_eq!(v["path"], target.to_str().unwrap());
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("-w {}\n", outside.display())),
        "hint names the smallest widening (the file does not exist: its directory): {err}"
    );
    assert!(!target.exists());
}

/// Writing a protected git hook → sandbox-denied with the R-P3 rule and the hint
/// `.git/hooks/pre-commit is protected (R-P3 …): … -w …`. (`git branch -M`, which writes
/// `.git/config`, now works: the config is a private copy merged back by allow list,
/// `tests/toolchains_git.rs`.)
#[test]
fn protected_git_hook_is_sandbox_denied_with_the_rule() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let o = out(cordon(
        &p,
        &[
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "echo x > .git/hooks/pre-commit",
        ],
    ));
    let v = report(&o);
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert!(v["rule"].as_str().unwrap().contains("R-P3"), "{v}");
    let err = text(&o.stderr);
    assert!(err.contains(".git/hooks"), "{err}");
    assert!(err.contains("is protected (R-P3"), "{err}");
}

/// Ordinary failures stay command-failed: `exit 1`, and a test runner's own "Permission
/// denied" about its own fixture in the workspace.
#[test]
fn ordinary_failures_are_command_failed() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let o = out(cordon(&p, &["run", "--json", "--", "sh", "-c", "exit 1"]));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(report(&o)["outcome"], "command-failed");
    std::fs::create_dir_all(p.dir.join("tests")).unwrap();
    std::fs::write(p.dir.join("tests/fixture.txt"), "x").unwrap();
    let o = out(cordon(
        &p,
        &[
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "echo \"E   PermissionError: [Errno 13] Permission denied: 'tests/fixture.txt'\" >&2; \
             echo '1 failed' >&2; exit 1",
        ],
    ));
    let v = report(&o);
    assert_eq!(v["outcome"], "command-failed", "{v}");
    assert!(v.get("hint").is_none() || v["hint"].is_null(), "{v}");
    assert!(!text(&o.stderr).contains("-w "), "no widening hint");
}

fn survivors(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(marker) && !cmd.contains("cordon") {
                found.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
            }
        }
    }
    found
}

/// `--timeout 100ms` on `sleep` (plus a background child) → timed-out, exit 137, and no
/// process of the tree survives.
#[test]
fn timeout_kills_the_whole_tree() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let marker = "10.4242";
    let started = Instant::now();
    let o = out(cordon(
        &p,
        &[
            "run",
            "--json",
            "--timeout",
            "100ms",
            "--",
            "sh",
            "-c",
            &format!("sleep {marker} & sleep {marker}; wait"),
        ],
    ));
    let elapsed = started.elapsed();
    let v = report(&o);
    assert_eq!(v["outcome"], "timed-out", "{v}");
    assert_eq!(o.status.code(), Some(137));
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}");
    // The pid namespace dies with its helper; give the kernel a moment to reap.
    let deadline = Instant::now() + Duration::from_secs(2);
    while !survivors(marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(survivors(marker), Vec::<String>::new());
}

/// Network off: curl and a getaddrinfo lookup fail at once and are network-denied with the
/// --allow-network hint (not a 72 s DNS retry).
#[test]
fn network_off_lookups_are_network_denied_at_once() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let mut cases: Vec<Vec<&str>> = vec![vec![
        "python3",
        "-c",
        "import socket; socket.getaddrinfo('registry.npmjs.org', 443)",
    ]];
    if have("curl") {
        cases.push(vec!["curl", "-sS", "https://example.com/"]);
    }
    // npm's resolver path (libuv getaddrinfo), when node is installed (not required on CI).
    let node = Command::new("sh")
        .args(["-c", "command -v node"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if node {
        cases.push(vec![
            "node",
            "-e",
            "require('dns').lookup('registry.npmjs.org', e => { console.error(String(e)); process.exit(1) })",
        ]);
    }
    for argv in cases {
        let mut args = vec!["run", "--json", "--"];
        args.extend(&argv);
        let started = Instant::now();
        let o = out(cordon(&p, &args));
        let elapsed = started.elapsed();
        let v = report(&o);
        assert_eq!(v["outcome"], "network-denied", "{argv:?}: {v}");
        assert!(
            text(&o.stderr).contains("allow it once with --allow-network"),
            "{}",
            text(&o.stderr)
        );
        // Bounded, not a timing benchmark: the lookup must not hang on retries.
        assert!(elapsed < Duration::from_secs(10), "{argv:?}: {elapsed:?}");
    }
}

/// R-F2: after a sandbox denial the smallest widening is offered as a NEW request (the
/// tool call's approval does not carry over, even with --session); approved → the retry
/// runs with `-w PATH`; denied → no retry, the outcome stays.
#[test]
fn escalation_needs_a_fresh_approval() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let outside = p.root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let target = outside.join("made");
    let answers = p.root.path().join("answers");
    // 1st answer: the tool call itself (untrusted mode asks for `touch`), for the session;
    // 2nd: the escalation request.
    std::fs::write(&answers, "\"session\"\n\"once\"\n").unwrap();
    let o = out(cordon(
        &p,
        &[
            "run",
            "--json",
            "--approval-mode",
            "untrusted",
            "--session",
            "esc",
            "--approvals-from",
            answers.to_str().unwrap(),
            "--",
            "touch",
            target.to_str().unwrap(),
        ],
    ));
    let v = report(&o);
    assert_eq!(v["outcome_detail"]["outcome"], "sandbox-denied", "{v}");
    assert_eq!(v["escalation"]["escalation"], "offered", "{v}");
    assert_eq!(
        v["retry"]["approval"]["by"], "scripted",
        "fresh answer: {v}"
    );
    assert_eq!(v["retry"]["approval"]["answer"], "once", "{v}");
    assert_eq!(v["outcome"], "success", "{v}");
    assert!(target.exists());
    assert!(text(&o.stderr).contains("retrying with"));
    // The retry worked: no stale denial line for the first attempt (new-user finding).
    assert!(
        !text(&o.stderr).contains("cordon: sandbox-denied"),
        "{}",
        text(&o.stderr)
    );
    // The harness saw both requests (with their ids) before answering; the retry's warns
    // about side effects.
    let requests: Vec<serde_json::Value> = text(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("{\"approval_request\""))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["approval_request"].clone())
        .collect();
    assert_eq!(requests.len(), 2, "{}", text(&o.stderr));
    assert_eq!(requests[0]["approval_id"], v["approval"]["approval_id"]);
    assert_eq!(
        requests[1]["approval_id"],
        v["retry"]["approval"]["approval_id"]
    );
    assert_ne!(requests[0]["run_id"], requests[1]["run_id"]);
    // nu16 N8: each says which answers it takes (an escalation: no session, no rule).
    assert_eq!(
        requests[1]["answers"],
        serde_json::json!(["once", "deny", "abort"]),
        "{}",
        requests[1]
    );
    assert!(requests[1]["warning"]
        .as_str()
        .unwrap()
        .contains("side effects"));
    // nu18 F15: the profile is summarised (name, writable entries, how many denied), not
    // the whole built-in list: each line stays small.
    for l in text(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("{\"approval_request\""))
    {
        assert!(l.len() < 4096, "{} bytes: {l}", l.len());
    }
    let needs = &requests[1]["needs"]["profile"];
    assert_eq!(needs["name"], "workspace-write", "{needs}");
    assert!(needs["deny_entries"].as_u64().unwrap() > 10, "{needs}");
    // New-user pass 150, item 7: it counts deny entries as written, not the denied paths
    // `cordon explain` counts (one entry may name several): named so, not `denied_…`.
    assert!(needs.get("denied_entries").is_none(), "{needs}");
    assert!(
        needs["writable"].to_string().contains(":workspace"),
        "{needs}"
    );

    // Denied: the first attempt's outcome is returned with the reason.
    let target2 = outside.join("made2");
    std::fs::write(&answers, "\"once\"\n\"deny\"\n").unwrap();
    let o = out(cordon(
        &p,
        &[
            "run",
            "--json",
            "--approval-mode",
            "untrusted",
            "--approvals-from",
            answers.to_str().unwrap(),
            "--",
            "touch",
            target2.to_str().unwrap(),
        ],
    ));
    let v = report(&o);
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert!(v["retry_refused"].is_string(), "{v}");
    assert!(v["retry"].is_null(), "{v}");
    assert!(!target2.exists());

    // Not offered in approval mode never (nobody may be asked).
    let o = out(cordon(
        &p,
        &[
            "run",
            "--json",
            "--approval-mode",
            "never",
            "--",
            "touch",
            target2.to_str().unwrap(),
        ],
    ));
    let v = report(&o);
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    assert_eq!(v["escalation"]["escalation"], "not-offered", "{v}");
}

/// Plan mode: the workspace is read-only until plan mode is left.
#[test]
fn plan_mode_is_read_only() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let o = out(cordon(
        &p,
        &["run", "--plan", "--json", "--", "touch", "planned"],
    ));
    let v = report(&o);
    assert_eq!(v["outcome"], "sandbox-denied", "{v}");
    // no widening inside plan mode; the decisions are recorded separately (R-A10)
    assert_eq!(v["escalation"]["escalation"], "not-offered", "{v}");
    let kinds: Vec<&str> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["tool-approval", "sandbox-preparation"], "{v}");
    assert!(!p.dir.join("planned").exists());
    let o = out(cordon(&p, &["run", "--json", "--", "touch", "planned"]));
    assert_eq!(report(&o)["outcome"], "success");
    assert!(p.dir.join("planned").exists());
}

/// The "done when": an agent-style session of ten commands with `--session` and
/// scripted answers — one prompt per distinct key, none for a repeat (also through
/// `bash -lc`), every failure classified with its class and hint. The session file is
/// private.
#[test]
fn agent_session_of_ten_commands() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let answers = p.root.path().join("answers");
    let outside = p.root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let outside_file = outside.join("x");
    let outside_s = outside_file.to_str().unwrap().to_string();
    // (argv, expected approval.by, expected outcome)
    let steps: Vec<(Vec<&str>, &str, &str)> = vec![
        (vec!["git", "status"], "policy", "success"),
        (vec!["touch", "a.txt"], "scripted", "success"),
        (vec!["touch", "a.txt"], "session cache", "success"),
        (
            vec!["bash", "-lc", "touch a.txt"],
            "session cache",
            "success",
        ),
        (vec!["touch", "b.txt"], "scripted", "success"),
        (
            vec!["python3", "-c", "raise SystemExit(1)"],
            "scripted",
            "command-failed",
        ),
        (
            vec!["python3", "-c", "raise SystemExit(1)"],
            "session cache",
            "command-failed",
        ),
        (vec!["touch", &outside_s], "scripted", "sandbox-denied"),
        (
            vec![
                "python3",
                "-c",
                "import socket; socket.getaddrinfo('example.com', 80)",
            ],
            "scripted",
            "network-denied",
        ),
        // `.git/config` is a private copy merged back by allow list (issue 11 §3).
        (vec!["git", "branch", "-m", "main"], "scripted", "success"),
    ];
    let mut prompts = 0;
    for (i, (argv, by, outcome)) in steps.iter().enumerate() {
        // One "session" answer per run; it is consumed only when the run prompts.
        // Escalations after a denial are answered "deny" (second line).
        std::fs::write(&answers, "\"session\"\n\"deny\"\n").unwrap();
        let mut args = vec![
            "run",
            "--json",
            "--approval-mode",
            "untrusted",
            "--session",
            "agent-7",
            "--approvals-from",
            answers.to_str().unwrap(),
            "--",
        ];
        args.extend(argv.iter());
        let o = out(cordon(&p, &args));
        let v = report(&o);
        assert_eq!(v["approval"]["by"], *by, "step {i} {argv:?}: {v}");
        assert_eq!(v["outcome"], *outcome, "step {i} {argv:?}: {v}");
        if *by == "scripted" {
            prompts += 1;
        }
        if matches!(*outcome, "sandbox-denied" | "network-denied") {
            assert!(v["hint"].is_string(), "step {i}: {v}");
        }
        // Filesystem denials are backed by a kernel-side record (issue 9 §5) where the
        // host gives them (rung 1 with seccomp, as in CI).
        if *outcome == "sandbox-denied" && !v["denials"].is_null() {
            assert_eq!(v["confidence"], "high", "step {i}: {v}");
            assert!(v["syscall"].is_string(), "step {i}: {v}");
        }
        if *outcome == "command-failed" {
            assert!(
                v["hint"].is_null(),
                "no widening after an ordinary failure: {v}"
            );
        }
    }
    assert_eq!(prompts, 6, "one prompt per distinct key");
    let file = p.home.join(".local/state/cordon/sessions/agent-7.json");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// Without a TTY, an ask is refused with the reason (R-A6), never hangs waiting for input.
#[test]
fn no_tty_means_non_interactive() {
    let p = project();
    let o = out(cordon(&p, &["run", "--", "git", "reset", "--hard"]));
    assert_eq!(o.status.code(), Some(125));
    let err = text(&o.stderr);
    assert!(err.contains("R-A6"), "{err}");
    assert!(err.contains("--yes"), "{err}");
}

fn tmux(args: &[&str], socket: &Path) -> Output {
    Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(args)
        .output()
        .unwrap()
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The interactive prompt in a real terminal (tmux): `o` runs once, `s` runs and the
/// repeat does not prompt, `d` denies (exit 125, the command did not run).
#[test]
fn interactive_prompt_in_tmux() {
    if !have("tmux") || !sandbox_available() {
        return;
    }
    let p = project();
    let socket = p.root.path().join("tmux.sock");
    let script = p.root.path().join("session.sh");
    let log = p.root.path().join("log");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncd {dir}\nexport HOME={home}\nunset XDG_STATE_HOME XDG_CONFIG_HOME\n\
             C={cordon}\n\
             $C run --approval-mode untrusted -- touch once.txt; echo \"once=$?\" >> {log}\n\
             $C run --approval-mode untrusted --session tty -- touch sess.txt; echo \"sess1=$?\" >> {log}\n\
             $C run --approval-mode untrusted --session tty -- touch sess.txt; echo \"sess2=$?\" >> {log}\n\
             $C run --approval-mode untrusted -- touch denied.txt; echo \"deny=$?\" >> {log}\n\
             sleep 30\n",
            dir = p.dir.display(),
            home = p.home.display(),
            cordon = CORDON,
            log = log.display(),
        ),
    )
    .unwrap();
    let st = tmux(
        &[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "200",
            "-y",
            "50",
            "sh",
            script.to_str().unwrap(),
        ],
        &socket,
    );
    assert!(st.status.success(), "{}", text(&st.stderr));
    let pane = || text(&tmux(&["capture-pane", "-p", "-t", "t"], &socket).stdout);
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    let prompts = |n: usize| pane().matches("(Enter = deny)").count() >= n;

    wait_for("first prompt", || prompts(1));
    let screen = pane();
    assert!(screen.contains("command: touch once.txt"), "{screen}");
    assert!(screen.contains("[o] once"), "{screen}");
    tmux(&["send-keys", "-t", "t", "o"], &socket);
    wait_for("once result", || logged().contains("once="));
    wait_for("session prompt", || prompts(2));
    tmux(&["send-keys", "-t", "t", "s"], &socket);
    wait_for("session result", || logged().contains("sess2="));
    wait_for("deny prompt", || prompts(3));
    tmux(&["send-keys", "-t", "t", "d"], &socket);
    wait_for("deny result", || logged().contains("deny="));
    let _ = tmux(&["kill-server"], &socket);
    let l = logged();
    assert!(l.contains("once=0"), "{l}");
    assert!(l.contains("sess1=0") && l.contains("sess2=0"), "{l}");
    assert!(l.contains("deny=125"), "{l}");
    assert!(p.dir.join("once.txt").exists());
    assert!(p.dir.join("sess.txt").exists());
    assert!(!p.dir.join("denied.txt").exists());
    // exactly three prompts: the repeat of the session-approved command asked nothing
    assert_eq!(pane_count(&l), 4);
}

fn pane_count(log: &str) -> usize {
    log.lines().count()
}

/// An interrupt while the command runs ends it as `cancelled` (not `command-failed`).
#[test]
fn interrupt_is_cancelled() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let mut c = cordon(&p, &["run", "--json", "--", "sleep", "7.4242"]);
    let child = c.stderr(Stdio::piped()).spawn().unwrap();
    // Wait until the sandboxed sleep runs, then interrupt cordon (by its pid).
    wait_for("sleep to start", || !survivors("7.4242").is_empty());
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    let v = report(&o);
    assert_eq!(v["outcome"], "cancelled", "{v}");
    assert_ne!(o.status.code(), Some(0));
}

/// Session files decide later runs' approvals: even when a run may write the directory
/// they live in, the sessions directory stays protected (R-P3), so a command cannot forge
/// approvals. Twin: the rest of that directory is writable.
#[test]
fn session_files_cannot_be_forged_from_inside() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let local = p.home.join(".local");
    std::fs::create_dir_all(&local).unwrap();
    let o = out(cordon(
        &p,
        &[
            "run",
            "-w",
            local.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo ok > ~/.local/other && mkdir -p ~/.local/state/cordon/sessions && \
             echo forged > ~/.local/state/cordon/sessions/agent.json",
        ],
    ));
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        local.join("other").exists(),
        "still works: {}",
        text(&o.stderr)
    );
    assert!(!local.join("state/cordon/sessions/agent.json").exists());
}

/// cordon's whole state directory is protected, not only the session store: the records
/// of sweeps still to finish are acted on by the next run, on the host (attack pass 34,
/// E1: under `-w ~/.local` a forged record in `sweeps/` made the next run unlink and
/// rename arbitrary files). Twin: the rest of `~/.local` is writable.
#[test]
fn sweep_records_cannot_be_forged_from_inside() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let local = p.home.join(".local");
    let sweeps = local.join("state/cordon/sweeps");
    std::fs::create_dir_all(&sweeps).unwrap();
    let o = out(cordon(
        &p,
        &[
            "run",
            "-w",
            local.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo ok > ~/.local/other; echo '{\"pid\":0}' > ~/.local/state/cordon/sweeps/0-x.json; \
             echo x > ~/.local/state/cordon/other; mv ~/.local/state/cordon ~/.local/state/c2",
        ],
    ));
    assert!(
        local.join("other").exists(),
        "still works: {}",
        text(&o.stderr)
    );
    assert!(!sweeps.join("0-x.json").exists(), "{}", text(&o.stderr));
    assert!(!local.join("state/cordon/other").exists());
    assert!(sweeps.is_dir(), "the state directory was moved away");
}

/// Attack pass 35: cordon's own files stay cordon's however they are reached. P1: on a
/// home without `~/.local/state`, the directory cordon makes for the protected state dir
/// is pinned (the command swapped it for its own with `renameat2(RENAME_EXCHANGE)`); P2: a
/// symlinked `~/.local/state` cannot be replaced (only the target was protected); P3: the
/// default `~/.local/state/cordon` is protected while `XDG_STATE_HOME` points elsewhere
/// (the user's login shell reads the default). Twin each time: the rest of `~/.local`
/// stays writable.
#[test]
fn cordons_state_cannot_be_swapped_in_by_any_route() {
    if !sandbox_available() {
        return;
    }
    let forge = "cd ~/.local; echo ok > other; mkdir -p prep/cordon/sweeps; \
                 echo '{\"pid\":0}' > prep/cordon/sweeps/0-x.json; \
                 python3 -c 'import ctypes; l=ctypes.CDLL(None); \
                 print(l.syscall(316, -100, b\"prep\", -100, b\"state\", 2))'; \
                 rm -f state 2>/dev/null; mv prep state; \
                 mkdir -p state/cordon/sweeps; echo '{\"pid\":0}' > state/cordon/sweeps/0-y.json";
    let run = |p: &Project, xdg: Option<&std::path::Path>| {
        let local = p.home.join(".local");
        let mut c = cordon(
            p,
            &[
                "run",
                "-w",
                local.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                forge,
            ],
        );
        if let Some(x) = xdg {
            c.env("XDG_STATE_HOME", x);
        }
        out(c)
    };
    let forged = |p: &Project| {
        let state = p.home.join(".local/state/cordon/sweeps");
        state.join("0-x.json").exists() || state.join("0-y.json").exists()
    };
    // P1: `~/.local` without `state/`.
    let p = project();
    std::fs::create_dir_all(p.home.join(".local")).unwrap();
    let o = run(&p, None);
    assert!(p.home.join(".local/other").exists(), "{}", text(&o.stderr));
    assert!(!forged(&p), "P1: {}", text(&o.stderr));
    // P2: `~/.local/state` a symlink to a directory beside it.
    let p = project();
    std::fs::create_dir_all(p.home.join(".local/realstate/cordon")).unwrap();
    std::os::unix::fs::symlink("realstate", p.home.join(".local/state")).unwrap();
    let o = run(&p, None);
    assert!(p.home.join(".local/other").exists(), "{}", text(&o.stderr));
    assert!(!forged(&p), "P2: {}", text(&o.stderr));
    assert!(p.home.join(".local/state").is_symlink());
    // P3: the state dir is elsewhere for this environment.
    let p = project();
    std::fs::create_dir_all(p.home.join(".local/state/cordon/sweeps")).unwrap();
    let elsewhere = p.root.path().join("xdg-state");
    let o = run(&p, Some(&elsewhere));
    assert!(p.home.join(".local/other").exists(), "{}", text(&o.stderr));
    assert!(!forged(&p), "P3: {}", text(&o.stderr));
}

/// Attack pass 36, P2: `~/.config/cordon` a symlink to a directory not made yet (a stow
/// tree): under `-w ~/.config` the command cannot make the config at the link's target,
/// which every later run would read. Twin: the rest of `~/.config` stays writable.
#[test]
fn a_dangling_cordon_config_link_cannot_be_filled() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let config = p.home.join(".config");
    std::fs::create_dir_all(config.join("stow")).unwrap();
    std::os::unix::fs::symlink("stow/cordon", config.join("cordon")).unwrap();
    let o = out(cordon(
        &p,
        &[
            "run",
            "-w",
            config.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "cd ~/.config; echo ok > other; mkdir -p stow/cordon; \
             printf '[network]\\nmode = \"full\"\\n' > stow/cordon/config.toml; \
             printf 'x' > cordon/rules.toml; true",
        ],
    ));
    assert!(config.join("other").exists(), "{}", text(&o.stderr));
    for f in ["config.toml", "rules.toml"] {
        let made = config.join("stow/cordon").join(f);
        assert!(
            std::fs::metadata(&made).map_or(true, |m| m.len() == 0),
            "{f} made through the link: {}",
            text(&o.stderr)
        );
    }
    assert!(config.join("cordon").is_symlink(), "the link itself stays");
}

/// Attack pass 37, A5/A6: `-w ~/.config` on a home without one — the grant is made a
/// directory before the sandbox is built, and what stays read-only beneath an existing one
/// stays read-only here too: cordon's config (later runs' profile) and git's global config
/// (run by the host's next `git status`). Twin: the rest of it is writable.
#[test]
fn a_missing_writable_grant_keeps_its_protected_paths() {
    if !sandbox_available() {
        return;
    }
    let p = project();
    let config = p.home.join(".config");
    assert!(!config.exists());
    let o = out(cordon(
        &p,
        &[
            "run",
            "-w",
            "~/.config",
            "--",
            "sh",
            "-c",
            "cd ~/.config; echo ok > other; mkdir -p cordon git; \
             echo 'default_profile = \"danger-full-access\"' > cordon/config.toml; \
             printf '[core]\\n\\tfsmonitor = /x\\n' > git/config; true",
        ],
    ));
    assert!(config.join("other").exists(), "{}", text(&o.stderr));
    for f in ["cordon/config.toml", "git/config"] {
        let made = config.join(f);
        assert!(
            std::fs::metadata(&made).map_or(true, |m| m.len() == 0),
            "{f} written: {}",
            text(&o.stderr)
        );
    }
}

/// New-user pass 150, item 8: an invalid scripted answer was reported twice (once by the
/// approver with `taken as "deny"`, once as the refusal's reason). Once, saying both.
#[test]
fn an_invalid_scripted_answer_is_reported_once() {
    let p = project();
    let answers = p.root.path().join("answers");
    std::fs::write(&answers, "\"yes\"\n").unwrap();
    let o = out({
        let mut c = Command::new(CORDON);
        c.args(["run", "--approval-mode", "untrusted", "--approvals-from"])
            .arg(&answers)
            .args(["--", "touch", "ran"])
            .current_dir(&p.dir)
            .env("HOME", &p.home)
            .stdin(Stdio::null());
        c
    });
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("is not valid")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].ends_with("taken as \"deny\""), "{err}");
    assert!(!p.dir.join("ran").exists());
}

/// `--approvals-from fd:N` reads answers from an inherited descriptor.
#[test]
fn approvals_from_a_descriptor() {
    let p = project();
    let answers = p.root.path().join("answers");
    std::fs::write(&answers, "\"deny\"\n").unwrap();
    let o = out({
        let mut c = Command::new("sh");
        c.args([
            "-c",
            &format!(
                "exec {CORDON} run --json --approval-mode untrusted --approvals-from fd:3 -- touch ran 3<{}",
                answers.display()
            ),
        ])
        .current_dir(&p.dir)
        .env("HOME", &p.home)
        .stdin(Stdio::null());
        c
    });
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    let v = report(&o);
    assert_eq!(v["outcome"], "refused", "{v}");
    assert_eq!(v["approval"]["verdict"], "refuse", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("denied by the scripted answers"),
        "{v}"
    );
    assert!(!p.dir.join("ran").exists());
}
