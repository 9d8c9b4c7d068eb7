//! Shell variables that matter to the policy (R-A2): names whose assignment changes what
//! other commands run, and arithmetic evaluation of names and subscripts.

/// Variables whose assignment changes what other commands do (program lookup, loader,
/// shell start-up, pager hooks, and the option-equivalent settings of the tools on the
/// known-safe list and of the usual toolchains). Assigning one caps a segment at `ask`; a
/// stand-alone assignment of one in a script makes the script opaque.
///
/// This is the one table for the whole policy: a tool that reads its command-line options
/// from the environment too (`PIP_LOG=f` is `--log f`, `npm_config_foo` is `--foo`,
/// `RIPGREP_CONFIG_PATH` may add `--pre CMD`) is listed here by its whole namespace, so an
/// argument check on the known-safe list cannot be bypassed through the environment.
/// Variables that only change formatting (`LANG`, `TZ`, `NO_COLOR`, `NODE_ENV`,
/// `PYTHONUNBUFFERED`, …) are not listed and do not cap.
pub(crate) fn is_sensitive_var(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "CDPATH",
        "HOME",
        // `$PWD/…` is judged as the working directory (`home_spelled`).
        "PWD",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "RUSTC",
        "RUSTDOC",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "ZDOTDIR",
        "XDG_CONFIG_HOME",
        // glibc loads iconv modules from here (code in any program that converts charsets).
        "GCONV_PATH",
        // ripgrep reads extra flags (`--pre CMD`, `--search-zip`) from this file.
        "RIPGREP_CONFIG_PATH",
        // gawk's search path for `-f`/`@include` files and `@load` extensions.
        "AWKPATH",
        "AWKLIBPATH",
        // go's option-equivalents and toolchain selection (`GOTOOLCHAIN=path`, `GOFLAGS=
        // -toolexec=CMD`, a `GOENV` file or `GOPROXY` that supplies the toolchain).
        "GOFLAGS",
        "GOTOOLCHAIN",
        "GOENV",
        "GOROOT",
        "GOPATH",
        "GOBIN",
        "GOMODCACHE",
        "GOWORK",
        "GOPROXY",
        "GOSUMDB",
        "GONOSUMDB",
        "GONOSUMCHECK",
        "GONOPROXY",
        "GOPRIVATE",
        "GOINSECURE",
    ];
    const PREFIX: &[&str] = &[
        "LD_",
        "DYLD_",
        "GIT_",
        "BASH_FUNC_",
        // less: `LESSOPEN`/`LESSCLOSE` run commands, `LESS=+…` and `LESSKEY*` bind
        // commands, `LESSHISTFILE` writes a file (git's pager is less).
        "LESS",
        // pip reads every option from `PIP_<OPTION>` (`PIP_LOG` writes a file,
        // `PIP_PYTHON` re-executes pip under another interpreter, `PIP_CONFIG_FILE`).
        "PIP_",
        // cargo and rustup: `CARGO_BUILD_RUSTC_WRAPPER`, `CARGO_TARGET_<T>_RUNNER`,
        // `CARGO_HOME`, `RUSTUP_TOOLCHAIN` (may be a path), `RUSTC_WRAPPER`,
        // `RUSTC_WORKSPACE_WRAPPER`.
        "CARGO_",
        "RUSTUP_",
        "RUSTC_",
        // yarn (`YARN_YARN_PATH` runs that file), corepack (which package manager
        // version is fetched and run), uv (`UV_PYTHON`, `UV_CONFIG_FILE`).
        "YARN_",
        "COREPACK_",
        "UV_",
        // version managers' shims: the version, root or hooks they run.
        "PYENV_",
        "RBENV_",
        "NODENV_",
        "GOENV_",
        "ASDF_",
        "MISE_",
        "VOLTA_",
    ];
    EXACT.contains(&name)
        || PREFIX.iter().any(|p| name.starts_with(p))
        || npm_config(name)
        || python_sensitive(name)
}

/// npm (and pnpm) read every option from `npm_config_<option>`, matched case-insensitively
/// (`NPM_CONFIG_SCRIPT_SHELL`, `npm_config_logs_dir`).
fn npm_config(name: &str) -> bool {
    name.get(..11)
        .is_some_and(|p| p.eq_ignore_ascii_case("npm_config_"))
}

/// CPython's `PYTHON*` variables, except the few that only change buffering, encoding or
/// hashing. The rest import or run code (`PYTHONPATH`, `PYTHONHOME`, `PYTHONSTARTUP`,
/// `PYTHONUSERBASE` with its `.pth` files, `PYTHONWARNINGS` and `PYTHONBREAKPOINT` import
/// modules, `PYTHONINSPECT` reads code from stdin) or write files (`PYTHONPYCACHEPREFIX`).
fn python_sensitive(name: &str) -> bool {
    const HARMLESS: &[&str] = &[
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONHASHSEED",
        "PYTHONNOUSERSITE",
        "PYTHONSAFEPATH",
    ];
    name.starts_with("PYTHON") && !HARMLESS.contains(&name)
}

/// A shell identifier (`[A-Za-z_][A-Za-z0-9_]*`).
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && cs.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Whether a test/printf argv can run code by arithmetic evaluation. In `[[ … ]]` the operands
/// of `-eq -ne -lt -le -gt -ge` are arithmetic expressions; the name after `-v` (`[[`, `[`,
/// `test`, `printf -v`) may be an array element. A subscript such as `a[$(cmd)]`, spelled
/// directly or held in a variable, runs `cmd`. Only integer literals and plain identifiers
/// are known harmless.
pub(crate) fn runs_arithmetic(argv: &[String], double_bracket: bool) -> bool {
    let int = |t: &str| {
        let d = t.strip_prefix(['-', '+']).unwrap_or(t);
        (!d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            || matches!(t, "$#" | "$?" | "$$" | "$!")
    };
    argv.iter().enumerate().any(|(i, t)| match t.as_str() {
        "-v" => argv.get(i + 1).is_some_and(|n| !is_identifier(n)),
        "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" if double_bracket => {
            !(i > 0 && int(&argv[i - 1]) && argv.get(i + 1).is_some_and(|n| int(n)))
        }
        _ => false,
    })
}

/// Whether parameter expansion `text` (`${…}`) evaluates part of itself arithmetically: an
/// array subscript (`${a[x]}`, `${#a[x]}`, `${a[x]:-d}`; `@` and `*` excepted) or a
/// substring offset or length (`${y:x}`, `${y:0:x}`, `${a[@]:x}`). Either reads a
/// variable's value as an arithmetic expression, whose `a[$(cmd)]` runs `cmd` (attack
/// pass 197 B1).
pub(crate) fn expansion_evaluates_arithmetic(text: &str) -> bool {
    let Some(body) = text.strip_prefix("${") else {
        return false;
    };
    let body = body
        .strip_prefix(['#', '!'])
        .filter(|b| !b.starts_with('}'))
        .unwrap_or(body);
    let name_len = if body.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic()) {
        body.find(|c: char| c != '_' && !c.is_ascii_alphanumeric())
            .unwrap_or(body.len())
    } else if body.starts_with(|c: char| c.is_ascii_digit()) {
        body.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(body.len())
    } else {
        body.chars().next().map_or(0, char::len_utf8)
    };
    let mut rest = &body[name_len..];
    if let Some(sub) = rest.strip_prefix('[') {
        let Some(end) = sub.find(']') else {
            return true;
        };
        if !matches!(&sub[..end], "@" | "*") {
            return true;
        }
        rest = &sub[end + 1..];
    }
    rest.strip_prefix(':')
        .is_some_and(|r| !r.starts_with(['-', '=', '+', '?']))
}
