//! Shells and interpreters (R-A2, R-A4): which programs run a script given with `-c`, and
//! which run a program fed on stdin or by a heredoc.

/// Shells whose `-c SCRIPT` is parsed (R-A2).
pub(crate) const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "posh", "hush", "lksh",
    "oksh", "pdksh",
];

/// Interpreters that run a program read from stdin / heredoc.
pub(crate) const INTERPRETERS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "csh",
    "tcsh",
    "rbash",
    "yash",
    "posh",
    "hush",
    "lksh",
    "oksh",
    "pdksh",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "deno",
    "bun",
    "pwsh",
    "tclsh",
    "irb",
    "Rscript",
    "osascript",
    // Programs in their own languages that run shell commands (`!cmd`, `syscmd(…)`).
    "dc",
    "m4",
    "pypy",
    "pypy3",
];

/// Where an interpreter of [`INTERPRETERS`] takes the program it runs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgramSource {
    /// Its standard input: no script operand, or `-`, `-s` (shells), `/dev/stdin`,
    /// `/dev/fd/0`, `/proc/self/fd/0` as the script.
    Stdin,
    /// A script operand: the index into the arguments given (`argv[1..]`).
    Operand(usize),
    /// An option's argument (`sh -c TEXT`, `python3 -c TEXT`, `python3 -m MODULE`,
    /// `perl -e TEXT`, `node -e TEXT`, `php -r TEXT`).
    Argument,
    /// None: an option before any program makes it print information (its version, its
    /// help) and exit ([`info_options`]: `python3 --version`, `perl -v`, `bash --help`).
    Nothing,
}

/// The options with which interpreter `name` prints information (its version, its help,
/// its configuration) and exits without reading a program: the first list wherever it
/// stands before the program; the second only when no script operand follows (`ruby -v`
/// and `lua -v` print the version and then run the script given, if any, and read no input
/// without one). Each from the program's own manual or `--help`; an interpreter not listed
/// reads its input whatever it is given (`tclsh --version` runs its input with `--version`
/// in `argv`, busybox `sh --version` ignores the option), and `sh`, which may be busybox,
/// is not listed. pwsh's parameters are matched without regard to case.
fn info_options(name: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match name {
        "python" | "python3" | "pypy" | "pypy3" => (
            &[
                "-V",
                "-VV",
                "--version",
                "-h",
                "-?",
                "--help",
                "--help-env",
                "--help-xoptions",
                "--help-all",
            ],
            &[],
        ),
        "python2" => (&["-V", "--version", "-h", "-?", "--help"], &[]),
        "perl" => (&["-v", "-V", "--version", "-h", "--help"], &[]),
        "ruby" => (&["--version", "-h", "--help"], &["-v"]),
        "irb" => (&["-v", "--version", "-h", "--help"], &[]),
        "node" | "nodejs" => (&["-v", "--version", "-h", "--help", "--v8-options"], &[]),
        "bun" => (&["-v", "--version", "-h", "--help"], &[]),
        "deno" => (&["-V", "--version", "-h", "--help"], &[]),
        "php" => (
            &[
                "-v",
                "--version",
                "-h",
                "-?",
                "--help",
                "-i",
                "--info",
                "-m",
                "--modules",
            ],
            &[],
        ),
        "lua" => (&[], &["-v"]),
        "pwsh" => (&["-v", "-version", "-help", "-?"], &[]),
        "Rscript" | "m4" => (&["--version", "--help"], &[]),
        "dc" => (&["-V", "--version", "-h", "--help"], &[]),
        "bash" | "rbash" | "zsh" | "dash" | "tcsh" => (&["--version", "--help"], &[]),
        "fish" => (&["-v", "--version", "-h", "--help"], &[]),
        _ => (&[], &[]),
    }
}

/// Options whose next word is their argument, per interpreter: they are not the script
/// (`bash -o errexit <<< TEXT` runs TEXT; taking `errexit` for the script let a heredoc's
/// `git reset --hard` run unchecked). The second list: those whose argument *is* the
/// program. Over-reading is the safe side here: a word wrongly taken for an option's
/// argument can only make the interpreter read its input, which is then checked.
fn option_arguments(name: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match name {
        "python" | "python2" | "python3" => {
            (&["-W", "-X", "--check-hash-based-pycs"], &["-c", "-m"])
        }
        "perl" => (&["-I", "-M", "-m", "-x", "-C", "-l", "-0"], &["-e", "-E"]),
        "ruby" | "irb" => (&["-r", "-I", "-C", "-E", "-F", "-x", "-0"], &["-e"]),
        "node" | "nodejs" | "bun" | "deno" => (
            &[
                "-r",
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "--input-type",
                "-C",
                "--conditions",
                "--env-file",
                "--title",
            ],
            &["-e", "--eval", "-p", "--print"],
        ),
        "php" => (&["-d", "-c", "-z"], &["-r"]),
        "lua" => (&["-l"], &["-e"]),
        "pwsh" => (
            &["-File", "-f", "-WorkingDirectory", "-wd"],
            &["-Command", "-c"],
        ),
        "tclsh" | "Rscript" | "osascript" => (&[], &["-e"]),
        _ => (&[], &[]),
    }
}

/// Where interpreter `name` given `args` (`argv[1..]`) takes its program from. Shells
/// ([`SHELLS`] and `fish`, `csh`, `tcsh`): `-c` (also in a cluster, `-ec`) makes it an
/// argument; `-o NAME`, `+o NAME`, `-O NAME`, `+O NAME` (also ending a cluster, `-euo
/// pipefail`), `--rcfile FILE` and `--init-file FILE` take the next word; `-s` reads
/// stdin. Other interpreters: the options of [`option_arguments`]; `--` ends options.
pub(crate) fn program_source(name: &str, args: &[String]) -> ProgramSource {
    let stdin_path = |a: &str| matches!(a, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0");
    let shell = SHELLS.contains(&name) || matches!(name, "fish" | "csh" | "tcsh");
    let (takes_arg, is_program) = option_arguments(name);
    let (info, info_alone) = info_options(name);
    let is_info = |a: &str| {
        info.iter()
            .any(|o| *o == a || (name == "pwsh" && o.eq_ignore_ascii_case(a)))
            // `perl -V:name` prints one configuration value.
            || (name == "perl" && a.starts_with("-V:"))
    };
    // `ruby -v` with no script after it.
    let mut info_unless_script = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return match args.get(i + 1) {
                Some(s) if stdin_path(s) => ProgramSource::Stdin,
                Some(_) => ProgramSource::Operand(i + 1),
                None => ProgramSource::Stdin,
            };
        }
        if is_info(a) {
            return ProgramSource::Nothing;
        }
        info_unless_script |= info_alone.contains(&a);
        if stdin_path(a) {
            return ProgramSource::Stdin;
        }
        let option = a.len() > 1 && (a.starts_with('-') || (shell && a.starts_with('+')));
        if !option {
            return ProgramSource::Operand(i);
        }
        if shell {
            if a.starts_with("--") {
                i += if matches!(a, "--rcfile" | "--init-file") {
                    2
                } else {
                    1
                };
                continue;
            }
            let cluster = &a[1..];
            if cluster.contains('c') {
                return ProgramSource::Argument;
            }
            if cluster.contains('s') && a.starts_with('-') {
                return ProgramSource::Stdin;
            }
            i += if cluster.ends_with('o') || cluster.ends_with('O') {
                2
            } else {
                1
            };
            continue;
        }
        // `--eval=TEXT`, `-W=x`: the argument is attached.
        let bare = a.split_once('=').map_or(a, |(o, _)| o);
        if is_program.contains(&bare) {
            return ProgramSource::Argument;
        }
        i += if takes_arg.contains(&a) { 2 } else { 1 };
    }
    if info_unless_script {
        ProgramSource::Nothing
    } else {
        ProgramSource::Stdin
    }
}

/// Whether `path` names a file descriptor other than 0 (`/dev/fd/3`, `/proc/self/fd/3`,
/// `/proc/$$/fd/3`): what it reads was opened elsewhere in the script.
pub(crate) fn fd_path(path: &str) -> bool {
    let n = path.strip_prefix("/dev/fd/").or_else(|| {
        path.strip_prefix("/proc/")
            .and_then(|r| r.split_once("/fd/"))
            .map(|(_, n)| n)
    });
    n.is_some_and(|n| n != "0")
}

/// Whether `path` is the standard input (`-` excluded: not every reader takes it so).
pub(crate) fn stdin_path(path: &str) -> bool {
    matches!(path, "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

/// Whether redirection `r` makes standard input (fd 0) a process substitution's output or
/// another file descriptor: `< <(…)`, `0< <(…)`, `<> <(…)`, `< /dev/fd/3`, `<&3`,
/// `0<&3` (attack pass 197 B2). `Some(true)` when the text comes straight from a process
/// substitution, `Some(false)` when from a descriptor opened elsewhere, `None` when the
/// redirection does not set stdin that way.
pub(crate) fn stdin_from_elsewhere(r: &crate::model::Redirection) -> Option<bool> {
    use crate::model::RedirectKind;
    if r.fd.as_deref().is_some_and(|f| f != "0") {
        return None;
    }
    match r.kind {
        RedirectKind::Read | RedirectKind::ReadWrite if r.target.starts_with("<(") => Some(true),
        RedirectKind::Read | RedirectKind::ReadWrite if fd_path(&r.target) => Some(false),
        RedirectKind::Dup if r.op.starts_with('<') && !matches!(r.target.as_str(), "-" | "0") => {
            Some(false)
        }
        _ => None,
    }
}

/// Whether interpreter (or `source`/`.`) segment `idx` of `segs` takes its program from a
/// process substitution or a file descriptor: its input redirected from `<(…)` or from
/// another descriptor ([`stdin_from_elsewhere`]: `bash < <(curl …)`, `bash 0<&3`), a
/// `<(…)` script operand, or a `/dev/fd/N` or `/proc/…/fd/N` script operand (N not 0;
/// `bash /dev/fd/3 3< <(…)`); `source /dev/stdin` reads its input as the shells do. `Some(Some(p))` when the program is the output of
/// the one command `p` run in that substitution, `Some(None)` when it is not known which
/// command writes it, `None` when the program comes from elsewhere (attack pass 193 F2).
pub(crate) fn program_from_substitution(
    segs: &[crate::model::Segment],
    idx: usize,
) -> Option<Option<&crate::model::Segment>> {
    use crate::model::Context;
    let seg = segs.get(idx)?;
    let name = seg.program.name.as_str();
    let operand = if INTERPRETERS.contains(&name) {
        match program_source(name, &seg.argv[1..]) {
            ProgramSource::Stdin => None,
            ProgramSource::Operand(i) => Some(i + 1),
            ProgramSource::Argument | ProgramSource::Nothing => return None,
        }
    } else if matches!(name, "source" | ".") {
        seg.argv
            .iter()
            .skip(1)
            .position(|a| a != "--")
            .map(|i| i + 1)
            .filter(|&i| !stdin_path(&seg.argv[i]))
    } else {
        return None;
    };
    let substituted = |a: &str| a.starts_with("<(");
    // Whether the program comes straight from a process substitution (its producer may
    // be known) rather than from a descriptor opened elsewhere.
    let direct = match operand {
        // The last redirection of fd 0 is the one in effect.
        None => seg
            .redirections
            .iter()
            .rev()
            .find(|r| r.fd.as_deref().is_none_or(|f| f == "0") && r.op.starts_with('<'))
            .and_then(stdin_from_elsewhere)?,
        Some(i) => {
            let a = seg.argv.get(i)?;
            if !(substituted(a) || fd_path(a)) {
                return None;
            }
            substituted(a)
        }
    };
    let fd = !direct;
    let producers: Vec<&crate::model::Segment> = segs
        .iter()
        .filter(|s| {
            s.parent == Some(idx)
                && s.context.last() == Some(&Context::ProcessSubstitution)
                && s.pipeline.is_none()
        })
        .collect();
    Some(match producers.as_slice() {
        [one] if !fd => Some(*one),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(argv: &str) -> ProgramSource {
        let words: Vec<String> = argv.split_whitespace().map(String::from).collect();
        program_source(&words[0], &words[1..])
    }

    /// An option's argument is not the script (the shell then reads its input); a real
    /// script operand is; `-c`/`-e`-style options carry the program themselves.
    #[test]
    fn option_arguments_are_not_the_script() {
        use ProgramSource::*;
        for (argv, want) in [
            ("bash", Stdin),
            ("bash -o errexit", Stdin),
            ("bash -eo pipefail", Stdin),
            ("bash +o history -O extglob", Stdin),
            ("bash --rcfile x --norc", Stdin),
            ("bash -s arg", Stdin),
            ("bash -x script.sh", Operand(1)),
            ("bash -o errexit script.sh", Operand(2)),
            ("bash -ec 'true'", Argument),
            ("sh -", Stdin),
            ("sh /dev/stdin", Stdin),
            ("sh -- script", Operand(1)),
            ("python3", Stdin),
            ("python3 -u", Stdin),
            ("python3 -W ignore", Stdin),
            ("python3 -u script.py", Operand(1)),
            ("python3 -W ignore script.py", Operand(2)),
            ("python3 -c code", Argument),
            ("python3 -m pip", Argument),
            ("perl -e 1", Argument),
            ("perl -I lib", Stdin),
            ("node --eval=1", Argument),
            ("node -r mod app.js", Operand(2)),
            ("php -d x=1", Stdin),
            ("php -r code", Argument),
        ] {
            assert_eq!(source(argv), want, "{argv}");
        }
    }

    /// A version or help option before any program: the interpreter prints and exits,
    /// reading no program from its input; after the program, or for an interpreter that
    /// runs its input anyway, it is not one (new-user pass: `python3 --version` with a
    /// piped stdin was asked).
    #[test]
    fn version_and_help_options_read_no_program() {
        use ProgramSource::*;
        for (argv, want) in [
            ("python3 --version", Nothing),
            ("python3 -V", Nothing),
            ("python3 -VV", Nothing),
            ("python3 -h", Nothing),
            ("python3 --help", Nothing),
            ("python3 -u -V", Nothing),
            ("python -V", Nothing),
            ("python2 --version", Nothing),
            ("pypy3 --version", Nothing),
            ("python3 -W -V", Stdin),
            ("python3 -i", Stdin),
            ("python3 -c code --version", Argument),
            ("python3 script.py --version", Operand(0)),
            ("python3 - --version", Stdin),
            ("perl -v", Nothing),
            ("perl -V", Nothing),
            ("perl -V:osname", Nothing),
            ("perl -h", Nothing),
            ("perl --version", Nothing),
            ("perl -w", Stdin),
            ("node -v", Nothing),
            ("node --version", Nothing),
            ("node -h", Nothing),
            ("nodejs --help", Nothing),
            ("node -", Stdin),
            ("node app.js -v", Operand(0)),
            ("ruby -v", Nothing),
            ("ruby --version", Nothing),
            ("ruby -v app.rb", Operand(1)),
            ("ruby -v -", Stdin),
            ("ruby -v -e code", Argument),
            ("lua -v", Nothing),
            ("lua -v x.lua", Operand(1)),
            ("php -v", Nothing),
            ("deno --version", Nothing),
            ("pwsh -Version", Nothing),
            ("pwsh -VERSION", Nothing),
            ("bash --version", Nothing),
            ("bash --help", Nothing),
            ("bash -x --version", Nothing),
            ("bash -s --version", Stdin),
            ("bash -c x --version", Argument),
            ("bash script.sh --version", Operand(0)),
            ("zsh --version", Nothing),
            ("dash --version", Nothing),
            ("fish -v", Nothing),
            ("tcsh --version", Nothing),
            // busybox `sh` ignores `--version`; `tclsh` runs its input with it in argv.
            ("sh --version", Stdin),
            ("ash --version", Stdin),
            ("tclsh --version", Stdin),
            ("osascript --version", Stdin),
        ] {
            assert_eq!(source(argv), want, "{argv}");
        }
    }
}
