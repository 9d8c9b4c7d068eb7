//! `cordon mcp` through a real MCP client: the official Python `mcp` package (PyPI), in the
//! virtualenv `.ci/run` creates at `<repo>/.ci-venv` (or `$CORDON_TEST_VENV`). The client
//! script is `mcp_client.py` next to this file: tools listed, a confined command, a denied
//! write classified `sandbox-denied`, an approval through elicitation, a 20-command
//! session, an interactive Python REPL on a terminal, kill, refusal without elicitation
//! (R-A6), and the server's exit killing a running session. Bounded by a 180 s timeout.

use std::path::PathBuf;
use std::process::{Command, Stdio};

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
    let root = tempfile::Builder::new()
        .prefix("cordon-mcp-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let dir = root.path().join("proj");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    let rules = root.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[rules]]\npattern = [\"touch\", \"approved.txt\"]\ndecision = \"ask\"\n\
         justification = \"asks\"\n\
         [[rules]]\npattern = [\"touch\", \"approved-2.txt\"]\ndecision = \"ask\"\n\
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
        "ok 20-command session",
        "ok interactive python REPL on a terminal",
        "ok no elicitation: refused (R-A6)",
        "ok server exit killed the sessions",
    ] {
        assert!(out.contains(step), "missing {step:?}:\n{out}\n{err}");
    }
}
