//! Read-only subcommands and flags of the common toolchains (R-A4, issue 8 §5): what
//! developers and agents run all day to look around (`npm ls`, `pip list`,
//! `python3 --version`, `awk '{print $1}'`, `yq .a f.yaml`). Anything that can write files,
//! change a project or run code stays off the list (`npm version 1.2.3`, `pip --log f`,
//! `awk 'BEGIN{system("x")}'`, `yq -i`).
//!
//! The caller only asks about a trusted program name whose arguments are all static. The
//! environment is judged separately and once for all programs
//! ([`super::variables::is_sensitive_var`]: `PIP_*`, `npm_config_*`, `PYTHON*`, …).
//!
//! ## Not known-safe: launchers steered by the working directory
//!
//! The policy is pure: it does not read the cwd. Some toolchains, as they are normally
//! installed, let a file in the cwd or its ancestors choose the program that actually runs,
//! so even `--version` may run a binary the project supplies. Those are never known-safe
//! ([`CWD_STEERED`]); they are asked about in `untrusted` mode and run sandboxed, as any
//! command without a rule, in the other modes.
//!
//! Residual (documented, not handled): a host that puts third-party version-manager shims
//! first on `PATH` (asdf or mise with a `path:` version in `.tool-versions`, pyenv's
//! `.python-version`) lets the cwd choose the binary behind any name those shims cover,
//! including `node`, `python3` and `pip3` below. That is a property of the host, not of the
//! command; the sandbox still confines what runs.

use super::{any_long_option, LongOption};

/// Toolchain names whose launcher, as normally installed, picks the program to run from files
/// in the cwd or its ancestors (see the module docs). Never known-safe, whatever the
/// arguments.
///
/// - `cargo`, `rustc`, `rustup`, `rustfmt`, `cargo-fmt`, `cargo-clippy`, `clippy-driver`,
///   `rustdoc`: rustup's proxies honour `rust-toolchain(.toml)` with `path = "./tc"` and run
///   `./tc/bin/<name>`; `rustup --version` also runs the active `rustc`.
/// - `go`, `gofmt`: since Go 1.21 a `toolchain` line in `go.mod`/`go.work` makes `go` run
///   `go1.N` found on `PATH` or fetch one and run it (`GOTOOLCHAIN=auto`, the default).
/// - `pnpm`, `yarn`, `corepack`: corepack and pnpm's own version management run the
///   `packageManager` version that `package.json` names; yarn runs the `yarnPath`/`yarn-path`
///   file that `.yarnrc.yml`/`.yarnrc` names.
/// - `uv`: finds the cwd's `.venv` (or `.python-version`) and runs that interpreter to
///   inspect it, even for `uv pip list`.
pub(crate) const CWD_STEERED: &[&str] = &[
    "cargo",
    "rustc",
    "rustup",
    "rustfmt",
    "rustdoc",
    "cargo-fmt",
    "cargo-clippy",
    "clippy-driver",
    "go",
    "gofmt",
    "pnpm",
    "yarn",
    "corepack",
    "uv",
];

/// `Some(read-only?)` when `name` is one of the toolchains known here, `None` otherwise.
pub(crate) fn read_only(name: &str, args: &[String]) -> Option<bool> {
    if CWD_STEERED.contains(&name) {
        return Some(false);
    }
    let check: fn(&[&str]) -> bool = match name {
        "node" | "nodejs" | "deno" | "bun" | "ruby" | "perl" => version_only,
        "npm" => npm,
        "pip" | "pip3" => pip,
        "python" | "python2" | "python3" => python,
        "awk" | "gawk" | "mawk" | "nawk" => awk,
        "yq" => yq,
        _ => return None,
    };
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    Some(check(&a))
}

/// `X --version` / `-V` / `-v` / `-VV` and nothing else.
fn version_only(a: &[&str]) -> bool {
    matches!(a, [v] if matches!(*v, "--version" | "-V" | "-v" | "-VV" | "-vV"))
}

/// npm's read-only subcommands. `npm version` without arguments prints; with one it bumps.
fn npm(a: &[&str]) -> bool {
    if version_only(a) || a == ["version"] {
        return true;
    }
    match a.first().copied() {
        Some(
            "ls" | "list" | "ll" | "la" | "view" | "info" | "show" | "v" | "outdated" | "root"
            | "prefix" | "explain" | "why" | "search" | "find" | "s" | "se",
        ) => true,
        Some("audit") => !a.iter().any(|x| *x == "fix" || x.starts_with("--fix")),
        Some("config" | "c") => matches!(a.get(1).copied(), Some("get" | "list" | "ls")),
        Some("pkg") => a.get(1) == Some(&"get"),
        _ => false,
    }
}

/// pip's general options (accepted after the subcommand too) that write a file:
/// `--log`/`--log-file`/`--local-log` append a log to any path, `--cache-dir` writes its
/// cache there. pip's optparse takes unambiguous prefixes (`pip list --log-f F` writes F,
/// verified with pip 23.2); `--local` is `pip list --local`, an exact name that wins over
/// the abbreviation of `--local-log`.
const PIP_UNSAFE: &[LongOption] = &[
    LongOption::abbrev("log"),
    LongOption::abbrev("log-file"),
    LongOption::abbrev("local-log").except(&["local"]),
    LongOption::abbrev("cache-dir"),
];

fn pip(a: &[&str]) -> bool {
    if any_long_option(a, PIP_UNSAFE) {
        return false;
    }
    version_only(a)
        || match a.first().copied() {
            Some("list" | "show" | "freeze" | "check") => true,
            Some("config") => matches!(a.get(1).copied(), Some("list" | "get")),
            _ => false,
        }
}

/// `python3 --version`, and `python3 -I -m pip list|show|freeze|check` (also `-P`).
///
/// `-m MODULE` puts the cwd first on `sys.path`, so a plain `python3 -m pip list` imports a
/// `./pip` package the project supplies. Only isolated forms are read-only: `-I` (isolated
/// mode: no cwd, no `PYTHON*` variables, no user site) or `-P` (no unsafe path), alone or
/// clustered with the harmless `-E`, `-s`, `-B` before `-m`.
fn python(a: &[&str]) -> bool {
    if version_only(a) {
        return true;
    }
    let Some(m) = a.iter().position(|x| *x == "-m") else {
        return false;
    };
    let flags = &a[..m];
    let isolated = flags.iter().any(|f| f.contains(['I', 'P']));
    let harmless = flags.iter().all(|f| {
        f.strip_prefix('-')
            .is_some_and(|b| !b.is_empty() && b.chars().all(|c| "IPEsB".contains(c)))
    });
    isolated
        && harmless
        && match &a[m + 1..] {
            ["pip", rest @ ..] => pip(rest),
            _ => false,
        }
}

/// awk without side effects: options limited to `-F`, `-v`, `-e`, `--`; the program must not
/// call `system`, pipe (`|`, `|&`, `| getline`), redirect output (`>`, `>>`), or use gawk
/// directives (`@load`, `@include`). `>` is refused even as a comparison (conservative).
fn awk(a: &[&str]) -> bool {
    let mut programs: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut opts_done = false;
    while i < a.len() {
        let t = a[i];
        if opts_done || !t.starts_with('-') || t == "-" {
            if programs.is_empty() {
                programs.push(t);
            }
            // later operands are input files or `var=value` assignments
            opts_done = true;
            i += 1;
            continue;
        }
        match t {
            "--" => opts_done = true,
            "-F" | "-v" => i += 1,
            "-e" | "--source" => {
                match a.get(i + 1) {
                    Some(p) => programs.push(p),
                    None => return false,
                }
                i += 1;
                opts_done = false;
            }
            _ if t.starts_with("-F") || t.starts_with("-v") => {}
            _ if t.starts_with("--field-separator=") || t.starts_with("--assign=") => {}
            _ => return false, // -f progfile, -i, -l, -E, -p/-o (write profile files), …
        }
        i += 1;
    }
    !programs.is_empty()
        && programs
            .iter()
            .all(|p| !p.contains("system") && !p.contains(['|', '>', '@']))
}

/// yq (Go and Python flavours) without in-place editing or file splitting.
fn yq(a: &[&str]) -> bool {
    !a.iter().any(|x| {
        if let Some(l) = x.strip_prefix("--") {
            l.starts_with("inplace") || l.starts_with("in-place") || l.starts_with("split-exp")
        } else {
            x.starts_with('-') && x.len() > 1 && x[1..].contains(['i', 's'])
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ro(cmd: &str) -> Option<bool> {
        let mut w = cmd.split_whitespace();
        let name = w.next().unwrap();
        let args: Vec<String> = w.map(str::to_string).collect();
        read_only(name, &args)
    }

    #[test]
    fn read_only_and_not() {
        for ok in [
            "npm ls --depth=0",
            "npm view react version",
            "npm config get registry",
            "npm --version",
            "pip list",
            "pip3 show requests",
            "python3 --version",
            "python3 -I -m pip freeze",
            "python3 -P -m pip list",
            "python3 -sE -P -m pip show x",
            "node --version",
            "awk {print}",
            "awk -F: {print$1} /etc/passwd",
            "yq .a f.yaml",
            "yq -P .a f.yaml",
        ] {
            assert_eq!(ro(ok), Some(true), "{ok}");
        }
        for bad in [
            "npm install",
            "npm version 1.2.3",
            "npm audit fix",
            "npm config set x y",
            "yarn",
            "pip install x",
            "uv version 1.0",
            "uv tree",
            "go env -w GOFLAGS=x",
            "go list -mod=mod ./...",
            "go build",
            "python3 x.py",
            "python3 -m pip list",
            "python3 -E -m pip list",
            "python3 -I -c 1 -m pip list",
            "python3 -I -m http.server",
            "python -Im pip list",
            "python3 -c 1",
            "node -e 1",
            "cargo build",
            // cwd-steered launchers: never, whatever the arguments
            "cargo --version",
            "cargo locate-project",
            "rustc --version",
            "rustup --version",
            "go version",
            "go env GOPATH",
            "pnpm why react",
            "yarn list",
            "uv pip list",
            "awk BEGIN{system(\"x\")}",
            "awk {print>\"f\"}",
            "awk -f prog.awk",
            "awk {\"date\"|getline}",
            "yq -i .a=1 f.yaml",
            "yq --inplace .a=1 f.yaml",
            "yq -s .a f.yaml",
        ] {
            assert_eq!(ro(bad), Some(false), "{bad}");
        }
        assert_eq!(ro("make test"), None);
    }
}
