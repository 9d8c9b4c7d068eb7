//! R-A4: a known-safe command stays read-only only if nothing outside its argv steers it.
//! Two channels besides the arguments (attack pass 29, F7):
//!
//! - the environment: tools read their options from variables too (`PIP_LOG=f` is
//!   `--log f`, `PIP_PYTHON=./x` re-executes pip under `./x`, `npm_config_*`,
//!   `RIPGREP_CONFIG_PATH` may add `--pre CMD`). One table (`is_sensitive_var`) caps every
//!   segment that assigns one, as it already did for `GIT_*` and `PAGER`;
//! - the working directory, which the pure policy does not read: `python3 -m pip` imports a
//!   `./pip` package, and toolchain launchers run what a project file names (rustup's
//!   `rust-toolchain.toml` `path`, go's `toolchain` line, corepack's `packageManager`,
//!   yarn's `yarnPath`, uv's `.venv`). Those forms are not known-safe.
//!
//! Twins: harmless variables (`LANG=C ls`) and plain forms (`pip3 list`) stay known-safe.

use cordon_execpolicy::{Basis, Decision, DecisionRecord, EvalContext, Policy};

fn eval(script: &str) -> DecisionRecord {
    Policy::empty().evaluate_script(script, &EvalContext::default())
}

fn known_safe(script: &str) -> bool {
    let rec = eval(script);
    rec.decision == Decision::Allow
        && rec
            .segments
            .iter()
            .all(|s| matches!(s.basis, Basis::KnownSafe { .. }))
}

/// Option-equivalent variables of tools on the known-safe list (and of the usual launchers)
/// take a command off the list, like `GIT_PAGER` always did.
#[test]
fn r_a4_option_equivalent_variables_are_not_known_safe() {
    for script in [
        "PIP_LOG=./piplog.txt pip3 list",
        "PIP_PYTHON=./evilpy pip3 list",
        "PIP_CONFIG_FILE=./pip.conf pip list",
        "PIP_CACHE_DIR=/tmp/c pip3 freeze",
        "npm_config_logs_dir=/tmp/l npm ls",
        "NPM_CONFIG_CACHE=/tmp/c npm view react",
        "Npm_Config_Script_Shell=./x npm ls",
        "PYTHONPATH=. python3 --version",
        "PYTHONUSERBASE=./u pip3 list",
        "PYTHONWARNINGS=ignore::evil.W pip3 list",
        "PYTHONPYCACHEPREFIX=/tmp/p python3 -I -m pip list",
        "PYTHONINSPECT=1 pip3 list",
        "NODE_OPTIONS=--require=./x.js node --version",
        "RIPGREP_CONFIG_PATH=./rgrc rg foo",
        "GCONV_PATH=./g cat f",
        "LESSOPEN='|./x %s' git log",
        "LESS=+!./x git log",
        "LESSHISTFILE=./h git log",
        "LD_PRELOAD=./x.so ls",
        "LD_LIBRARY_PATH=. ls",
        "BASH_ENV=./x bash -c ls",
        "AWKPATH=. awk '{print}' f",
        "GIT_PAGER=./x git log",
        "PAGER=./x git log",
        // launchers' variables (capped for rules too, see below)
        "CARGO_HOME=./c cargo --version",
        "RUSTUP_TOOLCHAIN=./tc rustc --version",
        "RUSTC_WRAPPER=./x cargo --version",
        "GOTOOLCHAIN=path go version",
        "GOFLAGS=-toolexec=./x go list",
        "YARN_YARN_PATH=./x.js yarn --version",
        "PYENV_VERSION=x python3 --version",
        "ASDF_DATA_DIR=./a node --version",
    ] {
        assert!(!known_safe(script), "{script} must not be known-safe");
        assert_eq!(eval(script).decision, Decision::Ask, "{script}");
    }
}

/// A stand-alone assignment of one of these variables makes the script opaque (it reaches
/// every later command).
#[test]
fn r_a4_exporting_an_option_variable_is_not_known_safe() {
    for script in [
        "export PIP_LOG=./f; pip3 list",
        "PIP_PYTHON=./x; export PIP_PYTHON; pip3 list",
        "export npm_config_logs_dir=/tmp/l && npm ls",
        "export RIPGREP_CONFIG_PATH=./rgrc; rg foo",
    ] {
        assert!(!known_safe(script), "{script} must not be known-safe");
    }
}

/// Twins: variables that only change formatting or locale do not cap, and the plain forms
/// stay known-safe.
#[test]
fn r_a4_harmless_variables_and_plain_forms_stay_known_safe() {
    for script in [
        "ls",
        "cat f",
        "LANG=C ls",
        "LC_ALL=C.UTF-8 sort f",
        "TZ=UTC date",
        "NO_COLOR=1 rg foo",
        "TERM=dumb git log -1",
        "NODE_ENV=test node --version",
        "PYTHONUNBUFFERED=1 pip3 list",
        "PYTHONDONTWRITEBYTECODE=1 python3 -I -m pip list",
        "pip3 list",
        "pip list --outdated",
        "python3 --version",
        "python3 -I -m pip list",
        "python3 -P -m pip freeze",
        "node --version",
        "npm ls --depth=0",
        "git log",
        "awk '{print $1}' f",
    ] {
        assert!(known_safe(script), "{script} should stay known-safe");
    }
}

/// `python -m MODULE` puts the cwd first on `sys.path`: `./pip` would be imported. Only the
/// isolated forms (`-I`, `-P`) are known-safe.
#[test]
fn r_a4_python_m_without_isolation_is_not_known_safe() {
    for script in [
        "python3 -m pip list",
        "python -m pip freeze",
        "python3 -E -m pip list",
        "python3 -s -B -m pip show x",
        "python3 -Im pip list",
        "python3 -I -m http.server",
        "python3 -I -X importtime -m pip list",
        "python3 -I -m pip --log=x list",
    ] {
        assert!(!known_safe(script), "{script} must not be known-safe");
    }
}

/// Launchers that run what a file in the cwd names are not known-safe, whatever the
/// arguments: the policy does not read the cwd.
#[test]
fn r_a4_cwd_steered_launchers_are_not_known_safe() {
    for script in [
        "cargo --version",
        "cargo version",
        "cargo locate-project",
        "rustc --version",
        "rustup --version",
        "rustfmt --version",
        "go version",
        "go env GOPATH",
        "go list ./...",
        "pnpm ls",
        "yarn list",
        "corepack --version",
        "uv pip list",
        "uv --version",
    ] {
        assert!(!known_safe(script), "{script} must not be known-safe");
        // Not known-safe means the default `ask`: asked about in `untrusted`, run sandboxed
        // in the other modes (nothing stricter than having no rule).
        let rec = eval(script);
        assert_eq!(rec.decision, Decision::Ask, "{script}");
        assert!(
            rec.segments
                .iter()
                .all(|s| matches!(s.basis, Basis::Default { .. })),
            "{script}: {:?}",
            rec.segments.iter().map(|s| &s.basis).collect::<Vec<_>>()
        );
    }
}

/// The same table caps commands allowed by a rule: a rule for `pip3 list` does not cover
/// `PIP_PYTHON=./x pip3 list`, while the plain command stays allowed.
#[test]
fn r_a4_option_variables_cap_rule_allowed_commands_too() {
    let p = Policy::from_toml_str(
        r#"
[[rules]]
pattern = [["pip3", "cargo"], ["list", "build"]]
decision = "allow"
"#,
        "test",
    )
    .unwrap();
    let ctx = EvalContext::default();
    for ok in ["pip3 list", "cargo build", "LANG=C cargo build"] {
        assert_eq!(
            p.evaluate_script(ok, &ctx).decision,
            Decision::Allow,
            "{ok}"
        );
    }
    for capped in [
        "PIP_PYTHON=./x pip3 list",
        "CARGO_BUILD_RUSTC_WRAPPER=./x cargo build",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=./x cargo build",
        "RUSTFLAGS=-Clinker=./x cargo build",
    ] {
        assert_eq!(
            p.evaluate_script(capped, &ctx).decision,
            Decision::Ask,
            "{capped}"
        );
    }
}

/// A third channel: a terminal whose input the caller writes (attack pass 41, E1: git's
/// pager ran `!touch` typed into it). [`DecisionRecord::cap_interactive`] caps every
/// allowed segment at ask — not suggested as a rule, never bypassing the sandbox — and
/// leaves a forbidden or already-asked command as it was.
#[test]
fn an_interactive_terminal_caps_known_safe_commands() {
    let mut r = eval("git log");
    assert_eq!(r.decision, Decision::Allow);
    r.cap_interactive();
    assert_eq!(r.decision, Decision::Ask, "{}", r.reason);
    assert!(r.reason.contains("interactive terminal"), "{}", r.reason);
    assert!(r.suggested_rule.is_none() && !r.sandbox.bypass);
    assert!(matches!(r.segments[0].basis, Basis::KnownSafe { .. }));

    let mut f = eval("rm -rf /");
    let before = (f.decision, f.reason.clone());
    f.cap_interactive();
    assert_eq!((f.decision, f.reason.clone()), before);

    let mut u = eval("python3");
    let before = (u.decision, u.reason.clone(), u.segments[0].caps.len());
    u.cap_interactive();
    assert_eq!(
        (u.decision, u.reason.clone(), u.segments[0].caps.len()),
        before
    );
}
