//! `cordon mcp` through a real MCP client: the official Python `mcp` package (PyPI), in the
//! virtualenv `.ci/run` creates at `<repo>/.ci-venv` (or `$CORDON_TEST_VENV`). The client
//! script is `mcp_client.py` next to this file: tools listed, a confined command, a denied
//! write classified `sandbox-denied`, an approval through elicitation, a 20-command
//! session, an interactive Python REPL on a terminal, kill, refusal without elicitation
//! (R-A6), and the server's exit killing a running session. Bounded by a 180 s timeout.

use std::path::PathBuf;
use std::process::{Command, Stdio};

mod support;

const CORDON: &str = env!("CARGO_BIN_EXE_cordon");

/// The venv's python, or `None` (skip) when it is missing locally; a failure under CI.
fn venv_python() -> Option<PathBuf> {
    let venv = std::env::var_os("CORDON_TEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci-venv"));
    let py = venv.join("bin/python");
    let ok = py.exists()
        && Command::new(&py)
            .args(["-c", "import mcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI needs the Python MCP client: {} with `mcp` installed (.ci/run creates it)",
            venv.display()
        );
        eprintln!(
            "SKIP: no Python MCP client at {} (run: python3 -m venv .ci-venv && \
             .ci-venv/bin/pip install mcp)",
            venv.display()
        );
        return None;
    }
    Some(py)
}

#[test]
fn python_mcp_client_end_to_end() {
    let Some(py) = venv_python() else { return };
    if !support::sandbox_available() {
        return;
    }
    let root = tempfile::Builder::new()
        .prefix("cordon-mcp-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let dir = root.path().join("proj");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    // A marker is a git dir with HEAD (an empty `.git` is cordon's placeholder).
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let rules = root.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[rules]]\npattern = [\"touch\", \"approved.txt\"]\ndecision = \"ask\"\n\
         justification = \"asks\"\n\
         [[rules]]\npattern = [\"touch\", \"approved-2.txt\"]\ndecision = \"ask\"\n\
         justification = \"asks\"\n\
         [[rules]]\npattern = [\"touch\", \"declined.txt\"]\ndecision = \"ask\"\n\
         justification = \"asks\"\n",
    )
    .unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let o = Command::new("timeout")
        .arg("180")
        .arg(&py)
        .arg(&script)
        .arg(CORDON)
        .arg(&rules)
        .current_dir(&dir)
        .env("HOME", root.path())
        .env_remove("CORDON_DISABLE_LAYERS")
        .env_remove("CORDON_PROFILE")
        .env_remove("CORDON_CONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "stdout:\n{out}\nstderr:\n{err}");
    for step in [
        "ok tools listed",
        "ok confined command",
        "ok denied write classified sandbox-denied",
        "ok approved via elicitation",
        "ok declined form: refused, said so",
        "ok an answer the form does not offer is refused, and said",
        "ok 20-command session",
        "ok interactive python REPL on a terminal",
        "ok no elicitation: refused (R-A6)",
        "ok server exit killed the sessions",
    ] {
        assert!(out.contains(step), "missing {step:?}:\n{out}\n{err}");
    }
}

/// `cordon mcp` in a git project of a fresh home (its temporary root, kept alive by the
/// caller), spoken to in raw JSON-RPC lines: initialized, with its stdin and stdout.
fn raw_server(
    prefix: &str,
) -> (
    tempfile::TempDir,
    std::process::Child,
    std::process::ChildStdin,
    std::io::BufReader<std::process::ChildStdout>,
) {
    raw_server_with(prefix, &[])
}

/// [`raw_server`] with `env` set for the server.
fn raw_server_with(
    prefix: &str,
    env: &[(&str, &std::path::Path)],
) -> (
    tempfile::TempDir,
    std::process::Child,
    std::process::ChildStdin,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::Write;
    let root = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/var/tmp")
        .unwrap();
    let dir = root.path().join("proj");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    // A marker is a git dir with HEAD (an empty `.git` is cordon's placeholder).
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let mut child = Command::new(CORDON)
        .arg("mcp")
        .current_dir(&dir)
        .env("HOME", root.path())
        .env_remove("CORDON_DISABLE_LAYERS")
        .env_remove("CORDON_PROFILE")
        .env_remove("CORDON_CONFIG")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let output = std::io::BufReader::new(child.stdout.take().unwrap());
    for v in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        writeln!(input, "{v}").unwrap();
    }
    (root, child, input, output)
}

/// The server killed outright (SIGKILL: no chance to clean up) still takes its sessions'
/// process trees with it: each helper asked the kernel for SIGKILL when the thread that
/// started it dies (`PR_SET_PDEATHSIG`). Raw JSON-RPC lines; no Python needed.
#[test]
fn killed_server_leaves_no_session_behind() {
    use std::io::{BufRead, Write};
    let (_root, mut child, mut input, mut output) = raw_server("cordon-mcp-kill-");
    let mut send = |v: serde_json::Value| writeln!(input, "{v}").unwrap();
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "exec_command",
        "arguments": {"argv": ["sleep", "2721"], "yield_time_ms": 200}}}),
    );
    let mut reply = String::new();
    let mut found = None;
    for _ in 0..10 {
        reply.clear();
        if output.read_line(&mut reply).unwrap() == 0 {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&reply).unwrap();
        if v["id"] == 2 {
            found = Some(v);
            break;
        }
    }
    let v = found.expect("a reply to tools/call");
    let sc = &v["result"]["structuredContent"];
    if sc["outcome"]["outcome"] == "refused" {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the sandbox does not run: {v}"
        );
        eprintln!("SKIP: the sandbox does not run here: {v}");
        let _ = child.kill();
        let _ = child.wait();
        return;
    }
    assert_eq!(sc["running"], true, "{v}");
    let sleepers = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x002721\x00")
            })
            .count()
    };
    assert_eq!(sleepers(), 1);
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while sleepers() > 0 && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(sleepers(), 0, "a session outlived the killed server");
}

/// New-user pass 157, #1: `stdin` a command does not read (`true`, `head -c 5`) closes the
/// pipe under cordon's write; the server died of SIGPIPE, taking every session along. It
/// answers that call and the next one now. Raw JSON-RPC lines; no Python needed.
#[test]
fn unread_stdin_does_not_end_the_server() {
    use std::io::{BufRead, Write};
    let (_root, mut child, mut input, mut output) = raw_server("cordon-mcp-pipe-");
    let mut send = |v: serde_json::Value| writeln!(input, "{v}").unwrap();
    let big = "x".repeat(400_000);
    for (id, script) in [(2, "true"), (3, "head -c 5; echo"), (4, "echo alive")] {
        send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "exec_command",
            "arguments": {"script": script, "stdin": big}}}),
        );
    }
    let mut answered = Vec::new();
    let mut line = String::new();
    while answered.len() < 3 {
        line.clear();
        if output.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v["id"].as_i64().filter(|i| *i >= 2) {
            answered.push((id, v));
        }
    }
    drop(input);
    let status = child.wait().unwrap();
    assert_eq!(
        answered.len(),
        3,
        "the server ended ({status:?}) after {answered:?}"
    );
    let last = &answered.iter().find(|(id, _)| *id == 4).unwrap().1;
    assert!(last.to_string().contains("alive"), "{last}");
}

/// Attack pass 159, H1: `cordon mcp` reads its configuration again for every command, so
/// it judges it again too: a config planted in its `XDG_CONFIG_HOME` by another sandboxed
/// run after the server started is refused, not obeyed (it ran the next command
/// unconfined). Twin: the first command, before the plant, runs confined.
#[test]
fn a_config_planted_after_the_start_is_refused() {
    use std::io::{BufRead, Write};
    let cfg_root = tempfile::Builder::new()
        .prefix("cordon-mcp-cfg-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let cfg = cfg_root.path().join("xdg");
    std::fs::create_dir_all(&cfg).unwrap();
    let (root, mut child, mut input, mut output) =
        raw_server_with("cordon-mcp-late-", &[("XDG_CONFIG_HOME", &cfg)]);
    let mut call = |id: i64, script: &str| -> serde_json::Value {
        writeln!(
            input,
            "{}",
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "exec_command", "arguments": {"script": script}}})
        )
        .unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            assert!(output.read_line(&mut line).unwrap() > 0, "the server ended");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    let first = call(2, "grep Seccomp: /proc/self/status");
    if first["result"]["structuredContent"]["outcome"]["outcome"] == "refused" {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{first}");
        eprintln!("SKIP: the sandbox does not run here: {first}");
        let _ = child.kill();
        return;
    }
    assert!(first.to_string().contains("Seccomp:\\t2"), "{first}");
    // Another sandboxed run, whose workspace is the config's directory, plants it.
    let o = Command::new(CORDON)
        .args(["run", "--", "sh", "-c"])
        .arg("mkdir -p cordon && printf 'default_profile = \"danger-full-access\"\\n' > cordon/config.toml")
        .current_dir(&cfg)
        .env("HOME", root.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(cfg.join("cordon/config.toml").exists());
    let second = call(3, "grep Seccomp: /proc/self/status");
    assert!(
        !second.to_string().contains("Seccomp:\\t0"),
        "the planted config was obeyed: {second}"
    );
    assert_eq!(second["result"]["isError"], true, "{second}");
    drop(input);
    let _ = child.wait();
}

/// Attack pass 186 F3: a command that cannot be started as given — an argument holding a
/// NUL byte, arguments past the kernel's limit — is refused with 126 and why, not blamed
/// on cordon's install ("cannot start the sandbox helper …: nul byte found … (reinstall
/// cordon)"). Twin: the next command runs. Raw JSON-RPC lines; no Python needed.
#[test]
fn an_unexecutable_request_is_named_not_blamed_on_the_install() {
    use std::io::{BufRead, Write};
    let (_root, mut child, mut input, mut output) = raw_server("cordon-mcp-e2big-");
    let big = "A".repeat(140_000);
    let calls = [
        (2, serde_json::json!(["true\u{0}"]), "NUL byte"),
        (3, serde_json::json!(["echo", big]), "E2BIG"),
        (4, serde_json::json!(["echo", "alive"]), ""),
    ];
    for (id, argv, _) in &calls {
        writeln!(
            input,
            "{}",
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "exec_command", "arguments": {"argv": argv}}})
        )
        .unwrap();
    }
    let mut answers = std::collections::HashMap::new();
    let mut line = String::new();
    while answers.len() < calls.len() {
        line.clear();
        if output.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v["id"].as_i64().filter(|i| *i >= 2) {
            answers.insert(id, v["result"]["structuredContent"]["outcome"].clone());
        }
    }
    drop(input);
    let _ = child.wait();
    let alive = &answers[&4];
    if alive["outcome"] == "refused" {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the sandbox does not run: {alive}"
        );
        eprintln!("SKIP: the sandbox does not run here: {alive}");
        return;
    }
    assert_eq!(alive["exit_code"], 0, "{alive}");
    for (id, _, why) in &calls[..2] {
        let o = &answers[id];
        assert_eq!(o["outcome"], "refused", "{o}");
        assert_eq!(o["exit_code"], 126, "{o}");
        let text = o["why"].to_string();
        assert!(text.contains(why) && !text.contains("reinstall"), "{o}");
    }
}

/// New-user pass: `{"jsonrpc":"2.0","id":3}` (no method) and `[]` got an Invalid Request
/// reply without an `id` (JSON-RPC 2.0 requires the request's, or null), and an unknown
/// method's error said only the method's name. Twin: a line that is not JSON gets no
/// reply, and the server goes on answering. Raw JSON-RPC lines; no Python needed.
#[test]
fn error_replies_carry_the_requests_id() {
    use std::io::{BufRead, Write};
    let (_root, mut child, mut input, mut output) = raw_server("cordon-mcp-rpc-");
    for line in [
        r#"{"jsonrpc":"2.0","id":3}"#,
        "[]",
        "not json",
        r#"{"jsonrpc":"2.0","id":4,"method":"bogus/method"}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    ] {
        writeln!(input, "{line}").unwrap();
    }
    // rmcp answers requests concurrently: id 4's reply may come after id 5's. Read until
    // every expected id (3, null, 4, 5) has its reply.
    let mut replies: Vec<serde_json::Value> = Vec::new();
    let mut line = String::new();
    let expected = [3.into(), serde_json::Value::Null, 4.into(), 5.into()];
    while !expected.iter().all(|id| {
        replies
            .iter()
            .any(|v| v.as_object().unwrap().get("id") == Some(id))
    }) {
        line.clear();
        assert!(output.read_line(&mut line).unwrap() > 0, "{replies:?}");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 1 {
            continue;
        }
        replies.push(v);
    }
    drop(input);
    let _ = child.wait();
    let by_id = |id: serde_json::Value| {
        replies
            .iter()
            .find(|v| v.as_object().unwrap().get("id") == Some(&id))
            .unwrap_or_else(|| panic!("no reply with id {id}: {replies:?}"))
    };
    assert_eq!(by_id(3.into())["error"]["code"], -32600);
    assert_eq!(by_id(serde_json::Value::Null)["error"]["code"], -32600);
    let m = &by_id(4.into())["error"];
    assert_eq!(m["code"], -32601, "{m}");
    assert_eq!(m["message"], "method not found: bogus/method", "{m}");
    assert!(by_id(5.into())["result"].is_object());
    // `not json` got nothing; `[]` one reply.
    assert_eq!(replies.len(), 4, "{replies:?}");
}

/// A call on a session that fails (here: an id no session has) says which session in its
/// structured error, as a refused `write_stdin` line must for a client that keeps several
/// sessions. Twin: `exec_command`'s errors name no session.
#[test]
fn a_session_calls_error_names_the_session() {
    use std::io::{BufRead, Write};
    let (_root, mut child, mut input, mut output) = raw_server("cordon-mcp-sid-");
    let mut send = |v: serde_json::Value| writeln!(input, "{v}").unwrap();
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "write_stdin", "arguments": {"session_id": "s-nope", "chars": "ls\n"}}}),
    );
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "exec_command", "arguments": {"argv": ["true"], "max_output_bytes": -1}}}),
    );
    let mut replies = std::collections::HashMap::new();
    let mut line = String::new();
    while replies.len() < 2 {
        line.clear();
        if output.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v["id"].as_i64().filter(|i| *i >= 2) {
            replies.insert(id, v);
        }
    }
    drop(input);
    let _ = child.wait();
    let r = &replies[&2]["result"];
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["structuredContent"]["session_id"], "s-nope", "{r}");
    assert!(
        r["structuredContent"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("no session s-nope")),
        "{r}"
    );
    let e = &replies[&3]["result"];
    assert_eq!(e["isError"], true, "{e}");
    assert!(e["structuredContent"].get("session_id").is_none(), "{e}");
}
