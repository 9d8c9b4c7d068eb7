//! Wrappers (R-A2): programs that run another command (`env`, `timeout`, `nice`, `nohup`,
//! `sudo`, `doas`, `exec`, `command`, `builtin`, `time`, `stdbuf`, `setsid`, `xargs`,
//! `coproc`) and shells with `-c`. Each has its option table here; the parser asks
//! [`wrapper_step`] where the inner command starts.

use super::shells::SHELLS;
use super::variables::is_identifier;
use super::LongOption;
use crate::model::{EnvAssignment, OpaqueKind};
use crate::parse::Word;

/// Split `NAME=VALUE` when NAME is an identifier.
pub(crate) fn split_assignment(w: &Word) -> Option<EnvAssignment> {
    if w.text.starts_with('=') {
        return None;
    }
    let (n, v) = w.text.split_once('=')?;
    if !is_identifier(n) {
        return None;
    }
    Some(EnvAssignment {
        name: n.to_string(),
        value: v.to_string(),
        dynamic: w.dynamic,
    })
}

/// Result of looking at one potential wrapper.
pub(crate) enum Step {
    /// Not a wrapper (or a wrapper without an inner command): this word is the program.
    Program,
    /// A wrapper; the inner command starts `consumed` words later.
    Inner {
        consumed: usize,
        env: Vec<EnvAssignment>,
        chdir: Option<String>,
        runtime_args: bool,
        /// Opaque constructs to record (kind, text).
        opaque: Vec<(OpaqueKind, String)>,
    },
    /// A shell with `-c`: the script is word `script` (relative index).
    Shell { script: usize },
    /// A shell whose options are not static (`bash $FLAGS …`): the program is the shell,
    /// and the command is opaque.
    DynamicShell,
    /// `env -S STRING`: opaque; STRING (plus the rest) is parsed best-effort for checks.
    SplitString { text: String },
}

/// Result of scanning wrapper options.
struct Opts {
    /// Index of the first operand (or `words.len()`).
    next: usize,
    /// (option, value) pairs seen; option without dashes-normalisation (e.g. "-u", "--unset").
    seen: Vec<(String, Option<String>)>,
    /// Unknown options or dynamic words in option position.
    unknown: Vec<String>,
}

/// Scan options starting at `words[1]`.
/// `short_arg`: short options taking a value (attached or next word);
/// `short_opt_arg`: short options taking only an attached optional value;
/// `short_flag`: short options without value; `long_arg` / `long_flag` likewise (`--x=v` is
/// accepted for any long option). A lone `-` stops the scan (callers decide its meaning).
// Longer than most: a getopt-style scanner (long, clustered short, attached and separate
// values) in one loop; splitting it would scatter the index arithmetic.
fn scan_opts(
    words: &[Word],
    short_flag: &str,
    short_arg: &str,
    short_opt_arg: &str,
    long_flag: &[&'static str],
    long_arg: &[&'static str],
) -> Opts {
    let mut o = Opts {
        next: words.len(),
        seen: Vec::new(),
        unknown: Vec::new(),
    };
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        if w.dynamic {
            o.unknown.push(w.text.clone());
            i += 1;
            continue;
        }
        let t = w.text.as_str();
        if t == "--" {
            o.next = i + 1;
            return o;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, val) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let name = full_long_name(name, long_flag, long_arg).unwrap_or(name);
            if val.is_none() && long_arg.contains(&name) {
                let v = words.get(i + 1).map(|w| w.text.clone());
                o.seen.push((format!("--{name}"), v));
                i += 2;
                continue;
            }
            if !long_flag.contains(&name) && !long_arg.contains(&name) {
                o.unknown.push(t.to_string());
            }
            o.seen.push((format!("--{name}"), val));
            i += 1;
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            let body: Vec<char> = t[1..].chars().collect();
            let mut k = 0;
            let mut consumed_next = false;
            while k < body.len() {
                let c = body[k];
                if short_arg.contains(c) {
                    let rest: String = body[k + 1..].iter().collect();
                    if rest.is_empty() {
                        let v = words.get(i + 1).map(|w| w.text.clone());
                        o.seen.push((format!("-{c}"), v));
                        consumed_next = true;
                    } else {
                        o.seen.push((format!("-{c}"), Some(rest)));
                    }
                    break;
                }
                if short_opt_arg.contains(c) {
                    let rest: String = body[k + 1..].iter().collect();
                    o.seen
                        .push((format!("-{c}"), (!rest.is_empty()).then_some(rest)));
                    break;
                }
                if !short_flag.contains(c) {
                    o.unknown.push(format!("-{c}"));
                }
                o.seen.push((format!("-{c}"), None));
                k += 1;
            }
            i += if consumed_next { 2 } else { 1 };
            continue;
        }
        o.next = i;
        return o;
    }
    o.next = words.len().min(i);
    o
}

/// The option of the tables that the long option `given` (no dashes, no value) denotes: its
/// exact name, or else the one name it is an unambiguous prefix of. The wrappers here parse
/// with getopt_long, which takes such prefixes (`env --uns X cmd` is `env --unset X cmd`);
/// reading them as unknown flags would take their value for the inner command.
fn full_long_name(
    given: &str,
    long_flag: &[&'static str],
    long_arg: &[&'static str],
) -> Option<&'static str> {
    let all = || long_flag.iter().chain(long_arg).copied();
    if let Some(n) = all().find(|n| *n == given) {
        return Some(n);
    }
    let mut hits = all().filter(|n| LongOption::abbrev(n).matches_body(given));
    match (hits.next(), hits.next()) {
        (Some(n), None) => Some(n),
        _ => None, // unknown or ambiguous: getopt_long refuses it
    }
}

fn opt_value<'a>(o: &'a Opts, names: &[&str]) -> Option<&'a Option<String>> {
    o.seen
        .iter()
        .rev()
        .find(|(n, _)| names.contains(&n.as_str()))
        .map(|(_, v)| v)
}

fn unknown_opaque(name: &str, o: &Opts) -> Vec<(OpaqueKind, String)> {
    if o.unknown.is_empty() {
        Vec::new()
    } else {
        vec![(
            OpaqueKind::UnknownWrapperOption,
            format!("{name} {}", o.unknown.join(" ")),
        )]
    }
}

/// The wrapped command starting `consumed` words in; `Step::Program` when there is none
/// (the wrapper itself runs, e.g. a bare `nohup`).
fn inner(words: &[Word], consumed: usize, o: &Opts, name: &str) -> Step {
    if consumed >= words.len() {
        return Step::Program;
    }
    Step::Inner {
        consumed,
        env: Vec::new(),
        chdir: None,
        runtime_args: false,
        opaque: unknown_opaque(name, o),
    }
}

/// The wrapped command after `VAR=value` assignments (as `env` and `sudo` accept them):
/// starts at `next`; the working directory comes from the first of `chdir_opts` given.
/// `Step::Program` when nothing is left to run.
fn inner_after_assignments(
    words: &[Word],
    mut next: usize,
    o: &Opts,
    chdir_opts: &[&str],
    opaque: Vec<(OpaqueKind, String)>,
) -> Step {
    let mut env = Vec::new();
    while let Some(a) = words.get(next).and_then(split_assignment) {
        env.push(a);
        next += 1;
    }
    if next >= words.len() {
        return Step::Program;
    }
    Step::Inner {
        consumed: next,
        env,
        chdir: opt_value(o, chdir_opts).map(|v| v.clone().unwrap_or_default()),
        runtime_args: false,
        opaque,
    }
}

/// Decide whether `words[0]` (a trusted program named `name`) is a wrapper: each wrapper
/// has its own step function below (option table and where the inner command starts).
pub(crate) fn wrapper_step(name: &str, words: &[Word]) -> Step {
    if let Some(step) = runner_step(name, words) {
        return step;
    }
    match name {
        // Attack pass 200 P2: more programs that run the command they are given.
        "systemd-inhibit" => generic(
            name,
            words,
            "",
            "",
            &["list", "no-pager", "no-legend"],
            &["what", "who", "why", "mode"],
            0,
        ),
        "chronic" => generic(name, words, "ev", "", &[], &[], 0),
        "ifne" => generic(name, words, "n", "", &[], &[], 0),
        "nocache" | "eatmydata" => generic(name, words, "", "", &[], &[], 0),
        "env" => env(name, words),
        "timeout" => timeout(name, words),
        "nice" => nice(name, words),
        "coproc" => coproc(name, words),
        "nohup" | "builtin" => plain(name, words),
        "setsid" => setsid(name, words),
        "stdbuf" => stdbuf(name, words),
        "time" => time(name, words),
        "exec" => exec(name, words),
        "command" => command(name, words),
        "sudo" => sudo(name, words),
        "doas" => doas(name, words),
        "xargs" => xargs(name, words),
        "ionice" => ionice(name, words),
        "chrt" => chrt(name, words),
        "taskset" => taskset(name, words),
        "flock" => flock(name, words),
        // Attack pass 188 F5: each ran the command it wraps unchecked (`busybox sh -c
        // 'git reset --hard'`, `script -c …`, `watch git reset --hard`, `unbuffer …`,
        // `chroot / …`, `strace -o /dev/null …`, `parallel … ::: 1`).
        "busybox" => plain(name, words),
        "unbuffer" => unbuffer(name, words),
        "chroot" => chroot(name, words),
        "strace" | "ltrace" => strace(name, words),
        "watch" => watch(name, words),
        "script" => script(name, words),
        "parallel" => parallel(name, words),
        // Fresh pass 189 #8: more programs that run the command they are given.
        "prlimit" => generic(name, words, "", "p", &[], &["pid"], 0),
        "setpriv" => generic(name, words, "d", "", &[], &[], 0),
        // Fresh pass 190 F5: the options that take a value, so the command is not one.
        "unshare" => generic(
            name,
            words,
            "CfimnprTUuc",
            "SGwRl",
            &[],
            &[
                "propagation",
                "setuid",
                "setgid",
                "wd",
                "root",
                "map-user",
                "map-group",
                "map-users",
                "map-groups",
                "monotonic",
                "boottime",
                "load-interp",
            ],
            0,
        ),
        "fakeroot" => generic(name, words, "uhv", "lisb", &[], &["lib", "faked"], 0),
        "faketime" => faketime(name, words),
        "valgrind" => generic(name, words, "qv", "", &[], &[], 0),
        "xvfb-run" => generic(
            name,
            words,
            "al",
            "nsfepw",
            &["auto-servernum", "listen-tcp"],
            &[
                "server-num",
                "server-args",
                "auth-file",
                "error-file",
                "xauth-protocol",
                "wait",
            ],
            0,
        ),
        "dbus-run-session" => generic(name, words, "", "", &[], &["config-file", "dbus-daemon"], 0),
        "numactl" | "catchsegv" | "rlwrap" | "torsocks" | "proxychains" | "proxychains4"
        | "dbus-launch" | "cgexec" => generic(name, words, "", "", &[], &[], 0),
        // Tools that start commands their own way (namespaces, containers, units) or by
        // their own command language (expect's `spawn`): what they run is parsed
        // best-effort and the command is opaque (fresh pass 190 F6, F8).
        "nsenter" => nsenter(name, words),
        "bwrap" => bwrap(words),
        // Attack pass 193 F4: more programs that run the command they are given.
        "sshpass" => generic(name, words, "ehvV", "pfdP", &[], &[], 0),
        "cordon" => cordon_run(words),
        "tini" => generic(name, words, "hsvwgl", "pe", &[], &[], 0),
        "dumb-init" => generic(
            name,
            words,
            "cvhV",
            "r",
            &["single-child", "verbose", "version", "help"],
            &["rewrite"],
            0,
        ),
        "chpst" => generic(name, words, "vP012", "uUbe/CnlLmdopfc", &[], &[], 0),
        "daemonize" => generic(name, words, "av", "ceoplu", &[], &[], 0),
        "entr" => entr(name, words),
        "perf" => perf(name, words),
        "start-stop-daemon" => start_stop_daemon(words),
        "git-shell" => match words.get(1) {
            Some(w) if w.text == "-c" && words.len() > 2 => Step::Shell { script: 2 },
            _ => Step::Program,
        },
        // Attack pass 197 B4: their options were taken as the program (`systemd-run
        // --scope git reset --hard` ran `--scope`); unknown options make every candidate
        // command checked.
        "systemd-run" => systemd_run(words),
        "firejail" => firejail(words),
        "proot" => proot(words),
        // `setarch ARCH [OPTS] [CMD…]` and its personality links (`linux64 CMD`).
        "setarch" | "linux32" | "linux64" | "i386" | "i486" | "i586" | "i686" | "x86_64"
        | "uname26" | "ppc" | "ppc32" | "ppc64" | "s390" | "s390x" | "sparc" | "sparc32"
        | "sparc64" | "mips" | "mips32" | "mips64" | "parisc" | "parisc32" | "parisc64" => {
            setarch(name, words)
        }
        "ssh-agent" => generic(name, words, "cDdks", "aEPt", &[], &[], 0),
        // `screen -X CMD` sends a command to a session: judged as screen itself.
        "screen" if words.iter().any(|w| w.text == "-X") => Step::Program,
        "screen" => generic(name, words, "aAdDmOrRUilLfqx", "cehpStTX", &[], &[], 0),
        "runuser" | "sg" => run_as(name, words),
        "gdb" => gdb(name, words),
        "tmux" => tmux(name, words),
        // Attack pass C-A: more programs that run the command they are given.
        n if is_loader_name(n) => ld_so(name, words),
        "capsh" => capsh(words),
        "hyperfine" => hyperfine(words),
        "cpulimit" => cpulimit(name, words),
        "trickle" => generic(name, words, "hvVs", "duwtlnLP", &[], &[], 0),
        "sem" => sem(name, words),
        "caffeinate" => generic(name, words, "disum", "tw", &[], &[], 0),
        "box64" | "box86" => generic(name, words, "", "", &[], &[], 0),
        n if is_qemu_user(n) => qemu_user(words),
        "rr" => rr(words),
        "watchexec" => watchexec(words),
        "fish" | "csh" | "tcsh" => foreign_shell(name, words),
        // The same kind, found looking for more: each runs the command it is given.
        "toybox" => plain(name, words),
        "gosu" | "su-exec" | "setuidgid" => generic(name, words, "", "", &[], &[], 1),
        "ccache" | "sccache" | "distcc" | "icecc" => generic(name, words, "", "", &[], &[], 0),
        "memusage" => generic(
            name,
            words,
            "umtT",
            "npdbxy",
            &["unbuffered", "no-timer", "mmap", "time-based", "total"],
            &[
                "progname", "png", "data", "buffer", "title", "x-size", "y-size",
            ],
            0,
        ),
        "heaptrack" => generic(
            name,
            words,
            "dhv",
            "op",
            &[
                "debug",
                "help",
                "version",
                "record-only",
                "raw",
                "use-inject",
            ],
            &["output", "pid"],
            0,
        ),
        "sandbox-exec" => generic(name, words, "", "fpnD", &[], &[], 0),
        "mold" => match words
            .iter()
            .position(|w| w.text == "-run" || w.text == "--run")
        {
            Some(i) => {
                let o = scan_opts(&words[..1], "", "", "", &[], &[]);
                inner(words, i + 1, &o, name)
            }
            None => Step::Program,
        },
        // Their options differ or run the command elsewhere (the host, a session, a
        // chroot, another architecture): every candidate command is checked, opaque.
        "flatpak-spawn" | "schroot" | "dtach" | "abduco" | "arch" if words.len() > 1 => {
            candidates(words, 1)
        }
        s if SHELLS.contains(&s) => shell(name, words),
        _ => Step::Program,
    }
}

/// Whether `name` (a file name, no directory) has the shape of the dynamic loader, which
/// runs the program named by its first operand: `ld.so`, `ld.so.1`, `ld64.so.2`,
/// `ld-linux-x86-64.so.2`, `ld-linux-aarch64.so.1`, `ld-musl-x86_64.so.1`, `ld-2.31.so`.
pub(crate) fn is_loader_name(name: &str) -> bool {
    (name.starts_with("ld-") || name.starts_with("ld.so") || name.starts_with("ld64.so"))
        && name.contains(".so")
}

/// `ld.so [OPTS] PROGRAM [ARGS…]` (the dynamic loader, by any name of its shape: attack
/// pass C-A, `/lib64/ld-linux-x86-64.so.2 /bin/rm -rf .git` ran unchecked). Its options
/// are glibc's exact spellings (`ld.so --help`); `--list`, `--verify` and the other
/// reports run nothing. `--preload`, `--audit`, `--library-path` load other code into the
/// program and `--argv0` renames it (a multi-call binary runs another tool): the command
/// is then opaque. An unknown option makes every candidate command checked.
fn ld_so(name: &str, words: &[Word]) -> Step {
    let mut opaque = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        if w.dynamic {
            return candidates(words, i);
        }
        match w.text.as_str() {
            "--" => {
                i += 1;
                break;
            }
            "--list" | "--verify" | "--help" | "--version" | "--list-tunables"
            | "--list-diagnostics" => return Step::Program,
            "--inhibit-cache" => i += 1,
            "--glibc-hwcaps-prepend" | "--glibc-hwcaps-mask" | "--inhibit-rpath" => i += 2,
            o @ ("--library-path" | "--preload" | "--audit" | "--argv0") => {
                let v = words.get(i + 1).map_or("", |v| v.text.as_str());
                opaque.push((OpaqueKind::UnknownWrapperOption, format!("{name} {o} {v}")));
                i += 2;
            }
            t if t.starts_with('-') => return candidates(words, i),
            _ => break,
        }
    }
    if i >= words.len() {
        return Step::Program;
    }
    if let Some(s) = unsearched_program(words, i) {
        return s;
    }
    Step::Inner {
        consumed: i,
        env: Vec::new(),
        chdir: None,
        runtime_args: false,
        opaque,
    }
}

/// A program operand without a `/` given to a runner that does not search `PATH` (the
/// loader, QEMU user-mode): it opens `./NAME`, whatever file is there, so `ld.so ls` is
/// not `ls`. Both readings are parsed for checks, the command opaque.
fn unsearched_program(words: &[Word], at: usize) -> Option<Step> {
    let w = words.get(at)?;
    if w.dynamic || w.text.contains('/') {
        return None;
    }
    let line = words[at..]
        .iter()
        .map(|w| crate::model::shell_word(&w.text))
        .collect::<Vec<_>>()
        .join(" ");
    Some(Step::SplitString {
        text: format!("./{line}\n{line}"),
    })
}

/// The dynamic loader at a path that is not trusted (`./ld.so`, `/opt/x/ld-linux.so.2`):
/// what it would run is parsed for checks, the command opaque (the file may be any
/// program). `None` when `words[0]` is not of the loader's shape or runs nothing.
pub(crate) fn untrusted_loader_step(words: &[Word]) -> Option<Step> {
    let w = words.first()?;
    if w.dynamic || w.glob {
        return None;
    }
    let base = w.text.rsplit('/').next().unwrap_or_default();
    // cordon itself at another path (a release binary beside the project): its command is
    // judged, opaque (attack pass 214 #2).
    if base == "cordon" {
        return match cordon_run(words) {
            Step::Inner { consumed, .. } => Some(opaque_inner(words, consumed)),
            _ => None,
        };
    }
    if !is_loader_name(base) {
        return None;
    }
    match ld_so(base, words) {
        Step::Inner { consumed, .. } => Some(opaque_inner(words, consumed)),
        s @ Step::SplitString { .. } => Some(s),
        _ => None,
    }
}

/// The candidate command lines as one script to judge (one per line); `Step::Program`
/// when there is none.
fn split_lines(lines: Vec<String>) -> Step {
    if lines.is_empty() {
        return Step::Program;
    }
    Step::SplitString {
        text: lines.join("\n"),
    }
}

/// The words as a shell joins them for `sh -c "$*"`: their texts with spaces.
fn raw_line(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `capsh [--OPT=VALUE]… -- ARGS…` runs `/bin/bash ARGS…` (or the `--shell=` program),
/// and `capsh … == ARGS…` runs capsh again with ARGS (attack pass C-A: `capsh -- -c 'git
/// reset --hard'`). Parsed for checks, the command opaque (capabilities, user, root
/// changed).
fn capsh(words: &[Word]) -> Step {
    let mut shell = "/bin/bash".to_string();
    for (i, w) in words.iter().enumerate().skip(1) {
        if w.dynamic {
            return candidates(words, i);
        }
        let t = w.text.as_str();
        if let Some(s) = t.strip_prefix("--shell=") {
            shell = s.to_string();
        } else if t == "--" || t == "==" {
            if i + 1 >= words.len() && t == "==" {
                return Step::Program;
            }
            let program = if t == "--" {
                crate::model::shell_word(&shell)
            } else {
                "capsh".to_string()
            };
            let rest = &words[i + 1..];
            let args = rest
                .iter()
                .map(|w| crate::model::shell_word(&w.text))
                .collect::<Vec<_>>();
            return Step::SplitString {
                text: std::iter::once(program)
                    .chain(args)
                    .collect::<Vec<_>>()
                    .join(" "),
            };
        }
    }
    Step::Program
}

/// `hyperfine [OPTS] CMD…`: each operand, and the values of `--setup`, `--prepare`,
/// `--conclude`, `--cleanup` and `--reference`, is a command line run through the shell
/// (`-S`/`--shell`, default `sh`; `-N` splits it into words instead). `{name}` in them is
/// replaced by each value of `-L name A,B` (the first of `-P name MIN MAX`). One operand
/// alone is parsed as a shell script; otherwise the lines are parsed best-effort and the
/// command is opaque (attack pass C-A: `hyperfine -N --runs 1 'git reset --hard'`). An
/// unknown option is skipped: its value, if it takes one, is checked as a command too.
fn hyperfine(words: &[Word]) -> Step {
    let mut cmds: Vec<(usize, String)> = Vec::new();
    let mut other = false; // a command not given as an operand
    let mut params: Vec<(String, Vec<String>)> = Vec::new();
    let mut shell: Option<String> = None;
    let mut i = 1;
    let value = |i: usize| words.get(i).map(|w| w.text.clone()).unwrap_or_default();
    while i < words.len() {
        let w = &words[i];
        if w.dynamic {
            return Step::DynamicShell;
        }
        let t = w.text.as_str();
        if t == "--" {
            cmds.extend((i + 1..words.len()).map(|j| (j, words[j].text.clone())));
            break;
        }
        let (opt, attached) = if let Some(l) = t.strip_prefix("--") {
            match l.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (l.to_string(), None),
            }
        } else if t.len() > 1 && t.starts_with('-') {
            let mut chars = t[1..].chars();
            let c = chars.next().map(String::from).unwrap_or_default();
            let rest = chars.as_str();
            (c, (!rest.is_empty()).then(|| rest.to_string()))
        } else {
            cmds.push((i, t.to_string()));
            i += 1;
            continue;
        };
        let next = usize::from(attached.is_none());
        let val = attached.clone().unwrap_or_else(|| value(i + 1));
        match opt.as_str() {
            "s" | "setup" | "p" | "prepare" | "C" | "conclude" | "c" | "cleanup" | "reference" => {
                cmds.push((0, val));
                other = true;
                i += 1 + next;
            }
            "S" | "shell" => {
                shell = Some(val);
                i += 1 + next;
            }
            "L" | "parameter-list" => {
                let vals = if attached.is_some() {
                    value(i + 1)
                } else {
                    value(i + 2)
                };
                params.push((val, vals.split(',').map(str::to_string).collect()));
                i += 2 + next;
            }
            "P" | "parameter-scan" => {
                let min = if attached.is_some() {
                    value(i + 1)
                } else {
                    value(i + 2)
                };
                params.push((val, vec![min]));
                i += 3 + next;
            }
            "w"
            | "warmup"
            | "m"
            | "min-runs"
            | "M"
            | "max-runs"
            | "r"
            | "runs"
            | "D"
            | "parameter-step-size"
            | "style"
            | "sort"
            | "u"
            | "time-unit"
            | "export-asciidoc"
            | "export-csv"
            | "export-json"
            | "export-markdown"
            | "export-orgmode"
            | "output"
            | "input"
            | "n"
            | "command-name"
            | "reference-name"
            | "min-benchmarking-time" => i += 1 + next,
            _ => i += 1,
        }
    }
    if cmds.is_empty() {
        return Step::Program;
    }
    let custom_shell = shell
        .as_deref()
        .filter(|s| !matches!(*s, "none" | "sh" | "bash" | "/bin/sh" | "/bin/bash"));
    if let [(at, _)] = cmds.as_slice() {
        if *at > 0 && !other && params.is_empty() && custom_shell.is_none() && !writes_file(words) {
            return Step::Shell { script: *at };
        }
    }
    let mut lines: Vec<String> = cmds.into_iter().map(|(_, c)| c).collect();
    for (name, vals) in &params {
        let key = format!("{{{name}}}");
        lines = lines
            .iter()
            .flat_map(|l| {
                if l.contains(&key) {
                    vals.iter().map(|v| l.replace(&key, v)).collect()
                } else {
                    vec![l.clone()]
                }
            })
            .collect();
    }
    if let Some(sh) = custom_shell {
        lines = lines
            .iter()
            .map(|l| format!("{sh} -c {}", crate::model::shell_word(l)))
            .collect();
    }
    Step::SplitString {
        text: lines.join("\n"),
    }
}

/// Whether a wrapper's own options write a file (`hyperfine --export-json F`, `--output F`,
/// `watchexec --log-file F`, `--emit-events-to`): what it runs is then not all it does, and
/// the command is opaque rather than judged as the inner command alone.
fn writes_file(words: &[Word]) -> bool {
    words.iter().any(|w| {
        ["--export", "--output", "--log-file", "--emit-events-to"]
            .iter()
            .any(|o| w.text.starts_with(o))
    })
}

/// `cpulimit [OPTS] [--] CMD…`; with `-p PID`, `-e EXE` or `-P PATH` it only limits a
/// process already running.
fn cpulimit(name: &str, words: &[Word]) -> Step {
    const LONG_ARG: &[&str] = &["limit", "cpu", "signal", "pid", "exe", "path"];
    let o = scan_opts(
        words,
        "zivbqkrmhf",
        "lcspeP",
        "",
        &[
            "lazy",
            "include-children",
            "verbose",
            "background",
            "quiet",
            "kill",
            "restore",
            "monitor-forks",
            "help",
            "foreground",
        ],
        LONG_ARG,
    );
    if opt_value(&o, &["-p", "-e", "-P", "--pid", "--exe", "--path"]).is_some() {
        return Step::Program;
    }
    if !o.unknown.is_empty() {
        return candidates(words, 1);
    }
    inner(words, o.next, &o, name)
}

/// `sem [OPTS] CMD…` (GNU parallel's semaphore): runs CMD through the shell, one word
/// alone as a command line.
fn sem(name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "uqv",
        "j",
        "",
        &["fg", "bg", "wait", "ungroup", "quote", "verbose"],
        &[
            "id",
            "jobs",
            "semaphoretimeout",
            "st",
            "semaphorename",
            "timeout",
        ],
    );
    if !o.unknown.is_empty() {
        return candidates(words, 1);
    }
    if o.next + 1 == words.len() && !words[o.next].dynamic {
        return Step::Shell { script: o.next };
    }
    inner(words, o.next, &o, name)
}

/// Whether `name` is a QEMU user-mode emulator (`qemu-x86_64`, `qemu-aarch64-static`),
/// which runs the program given: not `qemu-system-*` or QEMU's tools.
fn is_qemu_user(name: &str) -> bool {
    name.strip_prefix("qemu-").is_some_and(|arch| {
        !arch.is_empty()
            && ![
                "system", "img", "io", "nbd", "storage", "pr-", "ga", "edid", "keymap", "bridge",
                "make",
            ]
            .iter()
            .any(|p| arch.starts_with(p))
    })
}

/// `qemu-ARCH [-OPT [VALUE]]… PROGRAM [ARGS…]`: its options are single-dash words; `-L`,
/// `-E`, `-U`, `-0`, `-cpu`, … take a value. An unknown option makes every candidate
/// command checked.
fn qemu_user(words: &[Word]) -> Step {
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        if w.dynamic {
            return candidates(words, i);
        }
        let t = w.text.as_str();
        let o = t.strip_prefix("--").or_else(|| t.strip_prefix('-'));
        match o {
            None => break,
            Some("") => {
                i += 1;
                break;
            }
            Some(
                "L" | "E" | "U" | "0" | "cpu" | "g" | "s" | "B" | "R" | "d" | "D" | "p" | "seed"
                | "trace" | "plugin" | "r" | "dfilter" | "t",
            ) => i += 2,
            Some(
                "h" | "help" | "version" | "strace" | "singlestep" | "one-insn-per-tb"
                | "enable-fdpic",
            ) => i += 1,
            Some(_) => return candidates(words, i),
        }
    }
    if let Some(s) = unsearched_program(words, i) {
        return s;
    }
    let o = scan_opts(&words[..1], "", "", "", &[], &[]);
    inner(words, i, &o, "qemu")
}

/// `rr record [OPTS] PROGRAM [ARGS…]` (also `rr PROGRAM …`, record being the default):
/// rr's options differ per subcommand, so the command is taken after `--` when there is
/// one, else every candidate is checked. Its other subcommands replay or report a trace.
fn rr(words: &[Word]) -> Step {
    let Some(sub) = words.iter().skip(1).position(|w| !w.text.starts_with('-')) else {
        return Step::Program;
    };
    let sub = sub + 1;
    let from = match words[sub].text.as_str() {
        "record" => sub + 1,
        "replay" | "rerun" | "dump" | "ps" | "pack" | "sources" | "traceinfo" | "buildid"
        | "cpufeatures" | "help" | "explain" | "mark" | "gdb" | "rerun-gdb" | "serve" => {
            return Step::Program
        }
        _ => sub,
    };
    if let Some(dd) = words[from..].iter().position(|w| w.text == "--") {
        let o = scan_opts(&words[..1], "", "", "", &[], &[]);
        return inner(words, from + dd + 1, &o, "rr");
    }
    candidates(words, from)
}

/// `watchexec [OPTS] [--] COMMAND…`: runs COMMAND at start and on every change, its words
/// joined and given to the shell (`-s`/`--shell`; `-n` runs it without one). Its options
/// are many: the command after `--` is taken as it is; without `--` every candidate line
/// is checked, as the shell reads it.
fn watchexec(words: &[Word]) -> Step {
    if let Some(dd) = words.iter().position(|w| w.text == "--") {
        let rest = &words[dd + 1..];
        if writes_file(&words[..dd]) {
            return opaque_inner(words, dd + 1);
        }
        return match rest {
            [] => Step::Program,
            [one] if !one.dynamic => Step::Shell { script: dd + 1 },
            _ => {
                let o = scan_opts(&words[..1], "", "", "", &[], &[]);
                inner(words, dd + 1, &o, "watchexec")
            }
        };
    }
    let lines: Vec<String> = (1..words.len())
        .filter(|&j| !words[j].text.starts_with('-') || words[j].dynamic)
        .take(16)
        .map(|j| raw_line(&words[j..]))
        .collect();
    split_lines(lines)
}

/// `fish -c TEXT`, `csh -c TEXT`, `tcsh -c TEXT` (also `-ic`, fish's `--command[=]TEXT`
/// and `-C`/`--init-command`): the text is in the shell's own language, parsed here as a
/// shell script best-effort, the command opaque; fish's `and`/`or`/`not`/`begin` before
/// a command are dropped for a second reading (attack pass C-A: `fish -c 'git reset
/// --hard'` ran unchecked).
fn foreign_shell(name: &str, words: &[Word]) -> Step {
    let mut texts = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        let t = w.text.as_str();
        let value = words.get(i + 1).map(|v| (v.dynamic, v.text.clone()));
        let got = if let Some(v) = t
            .strip_prefix("--command=")
            .or_else(|| t.strip_prefix("--init-command="))
        {
            Some((w.dynamic, v.to_string()))
        } else if matches!(t, "--command" | "--init-command" | "-C")
            || (t.len() > 1 && t.starts_with('-') && !t.starts_with("--") && t.contains('c'))
        {
            i += 1;
            value
        } else {
            None
        };
        if let Some((dynamic, text)) = got {
            if dynamic {
                return Step::DynamicShell;
            }
            texts.push(text);
        }
        i += 1;
    }
    if texts.is_empty() {
        return Step::Program;
    }
    let mut text = texts.join("\n");
    if name == "fish" {
        let dropped: Vec<String> = text
            .split(['\n', ';'])
            .map(|l| {
                let mut l = l.trim_start();
                while let Some(r) = ["and ", "or ", "not ", "begin ", "! "]
                    .iter()
                    .find_map(|k| l.strip_prefix(k))
                {
                    l = r.trim_start();
                }
                l.to_string()
            })
            .collect();
        text = format!("{text}\n{}", dropped.join("\n"));
    }
    Step::SplitString { text }
}

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… CMD`.
fn env(_name: &str, words: &[Word]) -> Step {
    let n = words.len();
    let o = scan_opts(
        words,
        "i0v",
        "uCS",
        "",
        &[
            "ignore-environment",
            "null",
            "debug",
            "block-signal",
            "default-signal",
            "ignore-signal",
            "list-signal-handling",
        ],
        &["unset", "chdir", "split-string"],
    );
    let mut next = o.next;
    if next < n && !words[next].dynamic && words[next].text == "-" {
        next += 1; // `env -` = `env -i`
    }
    let opaque = unknown_opaque("env", &o);
    if let Some(v) = opt_value(&o, &["-S", "--split-string"]) {
        // `env -S 'cmd args'`: the string is split by env's own rules, not a shell's.
        let mut text = v.clone().unwrap_or_default();
        for w in &words[o.next.min(n)..] {
            text.push(' ');
            text.push_str(&w.text);
        }
        return Step::SplitString { text };
    }
    inner_after_assignments(words, next, &o, &["-C", "--chdir"], opaque)
}

/// `timeout [OPTS] DURATION CMD`.
fn timeout(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "v",
        "sk",
        "",
        &["preserve-status", "foreground", "verbose"],
        &["signal", "kill-after"],
    );
    // o.next is the duration; the command follows it.
    inner(words, o.next + 1, &o, "timeout")
}

/// `nice [-n N | -N] CMD`.
fn nice(_name: &str, words: &[Word]) -> Step {
    let n = words.len();
    // Legacy `nice -10 cmd` / `nice --10 cmd`.
    let mut start = 1;
    while start < n {
        let t = &words[start].text;
        let digits = t.trim_start_matches('-');
        if t.starts_with('-') && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            start += 1;
        } else {
            break;
        }
    }
    let rest = &words[start - 1..];
    let o = scan_opts(rest, "", "n", "", &[], &["adjustment"]);
    let next = o.next + start - 1;
    inner(words, next, &o, "nice")
}

/// `ionice [-c CLASS] [-n LEVEL] [-t] CMD` (attack pass 63: `ionice -c3 git reset --hard`
/// was not looked through). `-p PID` changes a running process: no command.
fn ionice(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "tuh",
        "cnpPV",
        "",
        &["ignore"],
        &["class", "classdata", "pid", "pgid", "uid"],
    );
    if o.seen.iter().any(|(k, _)| {
        matches!(
            k.as_str(),
            "-p" | "-P" | "-u" | "--pid" | "--pgid" | "--uid"
        )
    }) {
        return Step::Program;
    }
    inner(words, o.next, &o, "ionice")
}

/// `chrt [OPTS] PRIORITY CMD` (`-p` changes a running process: no command).
fn chrt(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "abdefiormRv",
        "TPD",
        "",
        &[
            "all-tasks",
            "batch",
            "deadline",
            "fifo",
            "idle",
            "other",
            "rr",
            "reset-on-fork",
            "verbose",
        ],
        &["sched-runtime", "sched-period", "sched-deadline"],
    );
    if o.seen.iter().any(|(k, _)| k == "-p" || k == "--pid")
        || words[1..]
            .iter()
            .any(|w| w.text == "-p" || w.text == "--pid")
    {
        return Step::Program;
    }
    inner(words, o.next + 1, &o, "chrt")
}

/// `taskset [-a] [-c] MASK CMD` (`-p` changes a running process: no command).
fn taskset(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "acV", "", "", &["all-tasks", "cpu-list"], &[]);
    if words[1..]
        .iter()
        .any(|w| w.text == "-p" || w.text == "--pid")
    {
        return Step::Program;
    }
    inner(words, o.next + 1, &o, "taskset")
}

/// `flock [OPTS] FILE CMD [ARGS]` (attack pass 63: `flock /tmp/l git reset --hard`).
/// `flock FILE -c CMDLINE` is parsed as a shell script; `flock FD` runs nothing.
fn flock(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "sxunoF",
        "Ew",
        "",
        &[
            "shared",
            "exclusive",
            "unlock",
            "nonblock",
            "close",
            "no-fork",
            "verbose",
        ],
        &["conflict-exit-code", "timeout", "wait"],
    );
    // `flock FILE -c CMDLINE` (util-linux reads `-c`/`--command` only right after the
    // file; attack pass 193 F4 ran `flock /tmp/l -c 'git reset --hard'` unchecked).
    let after = words.get(o.next + 1).map(|w| w.text.as_str());
    if matches!(after, Some("-c" | "--command")) && o.next + 2 < words.len() {
        return Step::Shell { script: o.next + 2 };
    }
    // Any other spelling of a command line (`-c CMD` before the file, `--command=CMD`):
    // parsed best-effort, the command opaque.
    if let Some(text) = words.iter().enumerate().find_map(|(i, w)| {
        if w.text == "-c" || w.text == "--command" {
            words.get(i + 1).map(|v| v.text.clone())
        } else {
            w.text.strip_prefix("--command=").map(str::to_string)
        }
    }) {
        return Step::SplitString { text };
    }
    inner(words, o.next + 1, &o, "flock")
}

/// Every command line a wrapper with unknown options might run: each suffix of its words
/// from `from` on that starts with an operand (an unknown option may take the next word as
/// its value, so the command may start at any later operand). Parsed best-effort, the
/// command opaque: each candidate is checked (attack pass 193 F4: `nsenter -t 1 git reset
/// --hard` was read as the program `-t`).
fn candidates(words: &[Word], from: usize) -> Step {
    let lines: Vec<String> = (from..words.len())
        .filter(|&j| !words[j].text.starts_with('-') || words[j].dynamic)
        .take(16)
        .map(|j| {
            words[j..]
                .iter()
                .map(|w| crate::model::shell_word(&w.text))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    split_lines(lines)
}

/// `nsenter [OPTS] [CMD…]`: the namespace options take an optional attached file
/// (`-m[FILE]`, `--mount[=FILE]`); `-t`, `-S`, `-G` a value. Unknown options: every
/// candidate command is checked ([`candidates`]).
fn nsenter(name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "aheFZcV",
        "tSGN",
        "muinpCUTrwW",
        &[
            "all",
            "preserve-credentials",
            "no-fork",
            "follow-context",
            "env",
            "join-cgroup",
            "mount",
            "uts",
            "ipc",
            "net",
            "pid",
            "cgroup",
            "user",
            "time",
            "root",
            "wd",
            "user-parent",
            "keep-caps",
        ],
        &["target", "setuid", "setgid", "wdns", "net-socket"],
    );
    if !o.unknown.is_empty() {
        return candidates(words, 1);
    }
    inner(words, o.next, &o, name)
}

/// `bwrap [OPTS] CMD…`: bubblewrap's options are long only, with zero to three values
/// each (`--bind SRC DEST`); an unknown option makes every candidate command checked
/// ([`candidates`]).
fn bwrap(words: &[Word]) -> Step {
    let values = |opt: &str| -> Option<usize> {
        Some(match opt {
            "--bind" | "--bind-try" | "--dev-bind" | "--dev-bind-try" | "--ro-bind"
            | "--ro-bind-try" | "--symlink" | "--setenv" | "--file" | "--bind-data"
            | "--ro-bind-data" | "--chmod" | "--bind-fd" | "--ro-bind-fd" => 2,
            "--overlay" => 3,
            "--args" | "--argv0" | "--unsetenv" | "--lock-file" | "--sync-fd" | "--chdir"
            | "--hostname" | "--uid" | "--gid" | "--tmpfs" | "--proc" | "--dev" | "--dir"
            | "--mqueue" | "--remount-ro" | "--exec-label" | "--file-label" | "--seccomp"
            | "--add-seccomp-fd" | "--userns-block-fd" | "--info-fd" | "--json-status-fd"
            | "--block-fd" | "--cap-add" | "--cap-drop" | "--perms" | "--size" | "--userns"
            | "--userns2" | "--pidns" | "--overlay-src" | "--tmp-overlay" | "--ro-overlay"
            | "--level-prefix" => 1,
            o if o.starts_with("--unshare-")
                || matches!(
                    o,
                    "--share-net"
                        | "--die-with-parent"
                        | "--new-session"
                        | "--as-pid-1"
                        | "--clearenv"
                        | "--disable-userns"
                        | "--assert-userns-disabled"
                ) =>
            {
                0
            }
            _ => return None,
        })
    };
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        if w.dynamic {
            return candidates(words, i);
        }
        if w.text == "--" {
            i += 1;
            break;
        }
        if !w.text.starts_with("--") {
            break;
        }
        match values(&w.text) {
            // `--args FD` reads more options at run time.
            Some(_) if w.text == "--args" => return candidates(words, i),
            Some(n) => i += 1 + n,
            None => return candidates(words, i),
        }
    }
    let o = scan_opts(&words[..1], "", "", "", &[], &[]);
    inner(words, i, &o, "bwrap")
}

/// `entr [-acdnprz] UTILITY [ARGS…]`; with `-s` the utility is a shell command line.
fn entr(name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "acdnprsz", "", "", &[], &[]);
    if o.seen.iter().any(|(n, _)| n == "-s") && o.next < words.len() {
        return Step::Shell { script: o.next };
    }
    inner(words, o.next, &o, name)
}

/// `perf stat|record|trace|… [OPTS] CMD…`: perf's option tables are long and differ per
/// subcommand, so the command is taken after `--` when there is one, else every candidate
/// after the subcommand is checked ([`candidates`]).
fn perf(name: &str, words: &[Word]) -> Step {
    let Some(sub) = words.iter().skip(1).position(|w| !w.text.starts_with('-')) else {
        return Step::Program;
    };
    let sub = sub + 1;
    if !matches!(
        words[sub].text.as_str(),
        "stat"
            | "record"
            | "trace"
            | "mem"
            | "c2c"
            | "kmem"
            | "kvm"
            | "lock"
            | "sched"
            | "timechart"
            | "ftrace"
            | "iostat"
            | "script"
            | "daemon"
    ) {
        return Step::Program;
    }
    if let Some(dd) = words[sub..].iter().position(|w| w.text == "--") {
        let o = scan_opts(&words[..1], "", "", "", &[], &[]);
        return inner(words, sub + dd + 1, &o, name);
    }
    candidates(words, sub + 1)
}

/// `start-stop-daemon -S|--start … -x|--exec PROG [-a|--startas PATH] [-- ARGS…]`: runs
/// PATH (else PROG) with ARGS. Stopping or querying runs nothing. Options are read as its
/// getopt_long does: clustered (`-Sd.`), attached (`-x/usr/bin/git`, `--exec=…`) and
/// abbreviated (`--sta`, `--exe`); an unknown or ambiguous option counts as starting
/// (attack pass 197 B4: `start-stop-daemon -Sd. -x/usr/bin/git -- reset --hard` ran
/// unchecked).
fn start_stop_daemon(words: &[Word]) -> Step {
    // Options after `--` belong to the program: scan only up to it. getopt_long
    // permutes: an operand before `--` does not end the options (it is dropped and the
    // scan goes on).
    let dd = words.iter().position(|w| w.text == "--");
    let mut opts: Vec<Word> = words[..dd.unwrap_or(words.len())].to_vec();
    let o = loop {
        let o = ssd_scan(&opts);
        if o.next >= opts.len() {
            break o;
        }
        opts.remove(o.next);
    };
    let start = o.seen.iter().any(|(n, _)| n == "-S" || n == "--start") || !o.unknown.is_empty();
    // `--startas` wins over `--exec`.
    let prog = opt_value(&o, &["-a", "--startas"])
        .or_else(|| opt_value(&o, &["-x", "--exec"]))
        .cloned()
        .flatten();
    let args: Vec<String> = match dd {
        Some(d) => words[d + 1..].iter().map(|w| w.text.clone()).collect(),
        None => Vec::new(),
    };
    match prog.filter(|_| start) {
        Some(p) => Step::SplitString {
            text: std::iter::once(p)
                .chain(args)
                .map(|a| crate::model::shell_word(&a))
                .collect::<Vec<_>>()
                .join(" "),
        },
        None => Step::Program,
    }
}

/// start-stop-daemon's option table (see [`start_stop_daemon`]).
fn ssd_scan(words: &[Word]) -> Opts {
    scan_opts(
        words,
        "SKTVHoqvbmCt",
        "xpnugsRaNPIkrdcO",
        "",
        &[
            "start",
            "stop",
            "status",
            "test",
            "oknodo",
            "quiet",
            "verbose",
            "background",
            "make-pidfile",
            "remove-pidfile",
            "no-close",
            "help",
            "version",
            "notify-await",
        ],
        &[
            "exec",
            "pid",
            "pidfile",
            "ppid",
            "name",
            "user",
            "group",
            "signal",
            "retry",
            "startas",
            "nicelevel",
            "procsched",
            "iosched",
            "umask",
            "chroot",
            "chdir",
            "chuid",
            "output",
            "notify-timeout",
        ],
    )
}

/// `setarch ARCH [OPTS] [CMD [ARGS…]]`, `linux64 [OPTS] [CMD…]` and the other personality
/// links (util-linux: options stop at the first operand; without CMD it runs a shell, judged
/// as setarch itself).
fn setarch(name: &str, words: &[Word]) -> Step {
    let off = usize::from(name == "setarch");
    if off == 1 && words.get(1).is_none_or(|w| w.text.starts_with('-')) {
        return Step::Program; // `setarch --list`, `setarch -h`
    }
    let rest = &words[off..];
    let o = scan_opts(
        rest,
        "hVv3BFILRSTXZ",
        "",
        "",
        &[
            "help",
            "version",
            "verbose",
            "3gb",
            "4gb",
            "32bit",
            "fdpic-funcptrs",
            "short-inode",
            "addr-compat-layout",
            "addr-no-randomize",
            "whole-seconds",
            "sticky-timeouts",
            "read-implies-exec",
            "mmap-page-zero",
            "uname-2.6",
        ],
        &[],
    );
    if !o.unknown.is_empty() {
        return candidates(words, off + 1);
    }
    inner(words, off + o.next, &o, name)
}

/// `systemd-run [OPTS] CMD…` (options stop at the first operand): the command is opaque (the
/// service manager runs it, maybe outside this sandbox). `--shell`/`-S` starts an
/// interactive shell (judged as systemd-run itself); an unknown option makes every candidate
/// command checked.
fn systemd_run(words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "hqrdGPtSv",
        "pEuHMC",
        "",
        &[
            "help",
            "version",
            "user",
            "system",
            "scope",
            "remain-after-exit",
            "send-sighup",
            "pty",
            "pipe",
            "quiet",
            "wait",
            "collect",
            "same-dir",
            "shell",
            "no-block",
            "no-ask-password",
            "slice-inherit",
            "expand-environment",
            "ignore-failure",
            "background",
        ],
        &[
            "property",
            "setenv",
            "unit",
            "host",
            "machine",
            "capsule",
            "description",
            "slice",
            "uid",
            "gid",
            "nice",
            "working-directory",
            "service-type",
            "on-active",
            "on-boot",
            "on-startup",
            "on-unit-active",
            "on-unit-inactive",
            "on-calendar",
            "on-clock-change",
            "on-timezone-change",
            "path-property",
            "socket-property",
            "timer-property",
            "json",
        ],
    );
    if !o.unknown.is_empty() {
        return candidates(words, 1);
    }
    opaque_inner(words, o.next)
}

/// `cordon run [OPTS] [--] CMD…`: the command a nested cordon runs, judged as any wrapped
/// command (attack pass 214 #2: `cordon run --yes --sandbox forbid -- git reset --hard`
/// inside a run approved the reset itself, unasked by the outer run). Its options are
/// `cordon run --help`'s; an unknown one makes every candidate checked. Other subcommands
/// (`check`, `explain`, …) run nothing: the program itself.
fn cordon_run(words: &[Word]) -> Step {
    if words.get(1).map(|w| w.text.as_str()) != Some("run") {
        return Step::Program;
    }
    let o = scan_opts(
        &words[1..],
        "vyh",
        "pcw",
        "",
        &[
            "verbose",
            "allow-network",
            "json",
            "yes",
            "non-interactive",
            "no-server",
            "plan",
            "dry-run",
            "allow-unconfined",
            "help",
        ],
        &[
            "profile",
            "config",
            "writable",
            "with",
            "deny-read",
            "network",
            "local-port",
            "sandbox",
            "rules",
            "approval-mode",
            "approvals-from",
            "session",
            "timeout",
            "report",
            "json-fd",
            "backend",
        ],
    );
    if !o.unknown.is_empty() {
        return candidates(words, 2);
    }
    inner(words, o.next + 1, &o, "cordon")
}

/// The command starting at word `start` of a wrapper that runs it its own way (a systemd
/// unit, a sandbox of its own): parsed for checks, the command opaque (it may run outside
/// this sandbox). `Step::Program` when there is none.
fn opaque_inner(words: &[Word], start: usize) -> Step {
    if start >= words.len() {
        return Step::Program;
    }
    Step::SplitString {
        text: words[start..]
            .iter()
            .map(|w| crate::model::shell_word(&w.text))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// `proot [OPTS] CMD…`: the command is opaque (a file system view of its own); an unknown
/// option makes every candidate command checked.
fn proot(words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "0VhLHn",
        "rbmqwkivRS",
        "",
        &["root-id", "help", "version", "link2symlink", "kill-on-exit"],
        &[
            "rootfs",
            "bind",
            "mount",
            "qemu",
            "pwd",
            "cwd",
            "kernel-release",
            "change-id",
            "verbose",
        ],
    );
    if !o.unknown.is_empty() {
        return candidates(words, 1);
    }
    opaque_inner(words, o.next)
}

/// `firejail [--OPT[=VALUE]]… CMD…`: its options are single words (values attached with
/// `=`); the command is the first word not starting with `-`. `-c CMDLINE` runs a command
/// line through the shell, as `sh -c`.
fn firejail(words: &[Word]) -> Step {
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        if w.dynamic {
            return candidates(words, i);
        }
        if w.text == "-c" {
            return if i + 1 < words.len() {
                Step::Shell { script: i + 1 }
            } else {
                Step::Program
            };
        }
        if w.text == "--" {
            i += 1;
            break;
        }
        if !w.text.starts_with('-') {
            break;
        }
        i += 1;
    }
    opaque_inner(words, i)
}

/// `coproc [NAME] CMD`.
fn coproc(_name: &str, words: &[Word]) -> Step {
    let n = words.len();
    // `coproc CMD ARGS`: bash runs CMD asynchronously (a NAME is only taken before a
    // compound command, which the grammar does not parse as a command word list).
    if n < 2 {
        return Step::Program;
    }
    let named = n > 2 && !words[1].dynamic && is_identifier(&words[1].text);
    let consumed = if named && words[2].text == "{" { 2 } else { 1 };
    Step::Inner {
        consumed,
        env: Vec::new(),
        chdir: None,
        runtime_args: false,
        opaque: vec![(
            OpaqueKind::Coproc,
            words
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        )],
    }
}

/// `nohup CMD`, `builtin CMD`.
fn plain(name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "", "", "", &[], &[]);
    inner(words, o.next, &o, name)
}

/// `unbuffer [-p] CMD` (expect's).
fn unbuffer(name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "p", "", "", &[], &[]);
    inner(words, o.next, &o, name)
}

/// `chroot [--userspec=U:G] [--groups=G] [--skip-chdir] NEWROOT [CMD…]`: without CMD it
/// runs `$SHELL -i` (the program is then chroot's, judged as chroot).
fn chroot(name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "", "", "", &["skip-chdir"], &["userspec", "groups"]);
    inner(words, o.next + 1, &o, name)
}

/// `strace|ltrace [OPTS] CMD` (the options that take a value: `-o FILE`, `-e EXPR`, `-p
/// PID`, `-s N`, `-u USER`, …).
fn strace(name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "cCdDfFhiqrtTvVwxyzZk",
        "abeEIoOpPsSuUX",
        "",
        &[],
        &[
            "output",
            "expr",
            "signal",
            "trace",
            "status",
            "attach",
            "string-limit",
            "user",
        ],
    );
    inner(words, o.next, &o, name)
}

/// `watch [OPTS] CMD…`: runs CMD (through `sh -c` unless `-x`) again and again.
fn watch(name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "bcCdegprtwx",
        "nq",
        "",
        &[
            "beep",
            "color",
            "no-color",
            "differences",
            "errexit",
            "chgexit",
            "precise",
            "no-rerun",
            "no-title",
            "no-wrap",
            "exec",
        ],
        &["interval", "equexit"],
    );
    // Without `-x` watch gives its words to `sh -c`: one word is a shell command line
    // (`watch 'rm -rf .git'`, fresh pass 189 #1).
    let exec = o.seen.iter().any(|(n, _)| n == "-x" || n == "--exec");
    if !exec && o.next + 1 == words.len() && !words[o.next].dynamic {
        return Step::Shell { script: o.next };
    }
    inner(words, o.next, &o, name)
}

/// `script [OPTS] [FILE]`: with `-c CMD`/`--command CMD` it runs CMD through the shell,
/// parsed as a script; attached values (`-cCMD`, `--command=CMD`) are parsed best-effort
/// and make the command opaque.
fn script(_name: &str, words: &[Word]) -> Step {
    let mut j = 1;
    while j < words.len() {
        let w = &words[j];
        if w.dynamic {
            return Step::DynamicShell;
        }
        let t = w.text.as_str();
        if t == "-c" || t == "--command" {
            return if j + 1 < words.len() {
                Step::Shell { script: j + 1 }
            } else {
                Step::Program
            };
        }
        if let Some(cmd) = t.strip_prefix("--command=") {
            return Step::SplitString { text: cmd.into() };
        }
        if t.starts_with('-') && !t.starts_with("--") && t[1..].contains('c') {
            // `-qc CMD` (the usual spelling: fresh pass 189 #2) or `-cCMD`.
            let at = t.find('c').unwrap_or(0);
            return if at + 1 == t.len() {
                if j + 1 < words.len() {
                    Step::Shell { script: j + 1 }
                } else {
                    Step::Program
                }
            } else {
                Step::SplitString {
                    text: t[at + 1..].into(),
                }
            };
        }
        j += 1;
    }
    Step::Program
}

/// `parallel [OPTS] [CMD] ::: ARGS…`: each argument (of the first `:::` group) is run
/// through a shell — appended to CMD, or in place of its `{}`; without CMD it is the
/// command line itself. The lines it runs are parsed best-effort (fresh pass 189 #3:
/// `parallel ::: 'rm -rf .git'`, `parallel 'rm -rf {}' ::: .git` and `parallel sh -c
/// ::: …` ran unasked).
fn parallel(name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "0kquv",
        "jdnNIS",
        "",
        &[
            "keep-order",
            "quote",
            "ungroup",
            "verbose",
            "null",
            "dry-run",
        ],
        &["jobs", "delimiter", "max-args", "sshlogin"],
    );
    let rest = &words[o.next.min(words.len())..];
    let sep = rest
        .iter()
        .position(|w| matches!(w.text.as_str(), ":::" | "::::" | ":::+"));
    let (cmd, args) = match sep {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &rest[rest.len()..]),
    };
    if cmd.is_empty() && args.is_empty() {
        return Step::Program;
    }
    if sep.is_none() {
        // Arguments from stdin, as xargs.
        return Step::Inner {
            consumed: o.next,
            env: Vec::new(),
            chdir: None,
            runtime_args: true,
            opaque: unknown_opaque(name, &o),
        };
    }
    // Several argument groups, argument files, column or separator options combine the
    // command line at run time (`parallel git ::: reset ::: --hard`, `--colsep`, `-a`,
    // `::::`: fresh pass 190 F7): what it runs is not known here.
    let combined = args.iter().any(|w| w.text.starts_with(":::"))
        || rest.iter().any(|w| w.text == "::::")
        || o.seen.iter().any(|(n, _)| n == "-a")
        || o.unknown
            .iter()
            .any(|u| u.starts_with("--col") || u.starts_with("--arg") || u.starts_with("--link"));
    if combined {
        return Step::DynamicShell;
    }
    let args: Vec<&Word> = args.iter().collect();
    let template = match cmd {
        [one] => one.text.clone(),
        _ => cmd
            .iter()
            .map(|w| crate::model::shell_word(&w.text))
            .collect::<Vec<_>>()
            .join(" "),
    };
    let lines: Vec<String> = args
        .iter()
        .map(|a| {
            if template.is_empty() {
                a.text.clone()
            } else if template.contains("{}") {
                template.replace("{}", &crate::model::shell_word(&a.text))
            } else {
                format!("{template} {}", crate::model::shell_word(&a.text))
            }
        })
        .collect();
    Step::SplitString {
        text: lines.join("\n"),
    }
}

/// A program that runs the command after its options (and `skip` operands before it, such
/// as `faketime`'s timestamp): the short options in `short_arg` and long ones in
/// `long_arg` take a value.
fn generic(
    name: &str,
    words: &[Word],
    short_flag: &str,
    short_arg: &str,
    long_flag: &[&'static str],
    long_arg: &[&'static str],
    skip: usize,
) -> Step {
    let o = scan_opts(words, short_flag, short_arg, "", long_flag, long_arg);
    if !o.unknown.is_empty() && skip == 0 && name != "setpriv" {
        // An unknown option may take the next word as its value: every candidate command
        // is checked (attack pass 193 F4). Not for setpriv, whose recorded options say
        // whether it changes the user.
        return candidates(words, 1);
    }
    inner(words, o.next + skip, &o, name)
}

/// `faketime [-m] [-f] [--exclude-monotonic] [--date-prog PROG] TIMESTAMP CMD…`: the
/// timestamp may start with `-` (`-1d`), so it is the first word after the known options.
fn faketime(name: &str, words: &[Word]) -> Step {
    let mut i = 1;
    while i < words.len() {
        match words[i].text.as_str() {
            "-m" | "-f" | "--exclude-monotonic" => i += 1,
            "--date-prog" => i += 2,
            _ => break,
        }
    }
    let o = scan_opts(&words[..1], "", "", "", &[], &[]);
    inner(words, i + 1, &o, name)
}

/// `runuser|sg [-u USER | GROUP] [-c CMDLINE | [--] CMD…]`: `-c` takes a shell command
/// line; else the command follows the user or group.
fn run_as(name: &str, words: &[Word]) -> Step {
    if let Some(i) = words
        .iter()
        .position(|w| w.text == "-c" || w.text == "--command")
    {
        return if i + 1 < words.len() && !words[i + 1].dynamic {
            Step::Shell { script: i + 1 }
        } else {
            Step::DynamicShell
        };
    }
    // Attached: `--command=CMD`, `-cCMD` (fresh pass 190 F5).
    if let Some(text) = words.iter().find_map(|w| {
        w.text
            .strip_prefix("--command=")
            .or_else(|| w.text.strip_prefix("-c").filter(|r| !r.is_empty()))
    }) {
        return Step::SplitString { text: text.into() };
    }
    let o = scan_opts(words, "flmp", "ugsGw", "", &[], &["user", "group", "shell"]);
    // `sg GROUP CMD`, `runuser USER CMD`: the first operand is not the command.
    let user_opt = o.seen.iter().any(|(n, _)| n == "-u" || n == "--user");
    inner(words, o.next + usize::from(!user_opt), &o, name)
}

/// `gdb … --args PROGRAM ARGS…`: runs PROGRAM (with `-batch -ex run`).
fn gdb(name: &str, words: &[Word]) -> Step {
    match words.iter().position(|w| w.text == "--args") {
        Some(i) => {
            let o = scan_opts(&words[..1], "", "", "", &[], &[]);
            inner(words, i + 1, &o, name)
        }
        None => Step::Program,
    }
}

/// `tmux new[-session]|new-window|split-window|respawn-pane|run-shell … [SHELL-COMMAND]`:
/// the trailing words are a shell command line (best-effort: parsed for checks).
fn tmux(_name: &str, words: &[Word]) -> Step {
    const RUNS: &[&str] = &[
        "new",
        "new-session",
        "new-window",
        "neww",
        "split-window",
        "splitw",
        "respawn-pane",
        "respawnp",
        "respawn-window",
        "respawnw",
        "run-shell",
        "run",
    ];
    // A command sequence that also sends keys or runs hooks is judged as tmux itself.
    const LANGUAGE: &[&str] = &[
        "send-keys",
        "send",
        "display-popup",
        "popup",
        "if-shell",
        "if",
        "pipe-pane",
        "pipep",
        "set-hook",
        "source-file",
        "source",
    ];
    if words.iter().any(|w| LANGUAGE.contains(&w.text.as_str())) {
        return Step::Program;
    }
    // `tmux -c CMDLINE` runs it with the default shell, as `sh -c` does (attack pass 193).
    if words.get(1).is_some_and(|w| w.text == "-c") && words.len() > 2 {
        return Step::Shell { script: 2 };
    }
    let Some(sub) = words.iter().position(|w| RUNS.contains(&w.text.as_str())) else {
        return Step::Program;
    };
    let o = scan_opts(&words[sub..], "AbdDEhIPvkZ", "cefFlnstxyLwp", "", &[], &[]);
    let rest = &words[sub + o.next.min(words.len() - sub)..];
    if rest.is_empty() {
        return Step::Program;
    }
    Step::SplitString {
        text: rest
            .iter()
            .map(|w| w.text.clone())
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// `setsid [-cfw] CMD`.
fn setsid(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "cfw", "", "", &["ctty", "fork", "wait"], &[]);
    inner(words, o.next, &o, "setsid")
}

/// `stdbuf -oL CMD`.
fn stdbuf(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "", "ioe", "", &[], &["input", "output", "error"]);
    inner(words, o.next, &o, "stdbuf")
}

/// `time [-p] CMD` (the keyword and GNU time).
fn time(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "apqvV",
        "fo",
        "",
        &["portability", "append", "verbose", "quiet"],
        &["format", "output"],
    );
    inner(words, o.next, &o, "time")
}

/// `exec [-cl] [-a NAME] CMD`.
fn exec(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "cl", "a", "", &[], &[]);
    inner(words, o.next, &o, "exec")
}

/// `command [-p] CMD` (`-v`/`-V` is a lookup).
fn command(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "pvV", "", "", &[], &[]);
    if o.seen.iter().any(|(k, _)| k == "-v" || k == "-V") {
        return Step::Program; // `command -v x` is a lookup
    }
    inner(words, o.next, &o, "command")
}

/// `sudo [OPTS] [NAME=VALUE]… CMD` (listing/editing modes run nothing).
fn sudo(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(
        words,
        "AbEHiKknPSsVlve",
        "CDghpRrTtUu",
        "",
        &[
            "askpass",
            "background",
            "preserve-env",
            "edit",
            "set-home",
            "login",
            "remove-timestamp",
            "reset-timestamp",
            "list",
            "non-interactive",
            "preserve-groups",
            "stdin",
            "shell",
            "validate",
            "version",
            "help",
        ],
        &[
            "close-from",
            "chdir",
            "group",
            "host",
            "prompt",
            "chroot",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "user",
        ],
    );
    let modes = [
        "-e",
        "--edit",
        "-l",
        "--list",
        "-v",
        "--validate",
        "-k",
        "-K",
        "-V",
    ];
    if o.seen.iter().any(|(k, _)| modes.contains(&k.as_str())) {
        return Step::Program;
    }
    let opaque = unknown_opaque("sudo", &o);
    inner_after_assignments(words, o.next, &o, &["-D", "--chdir"], opaque)
}

/// `doas [-u USER] CMD`.
fn doas(_name: &str, words: &[Word]) -> Step {
    let o = scan_opts(words, "nsL", "uC", "", &[], &[]);
    if o.seen.iter().any(|(k, _)| k == "-C" || k == "-L") {
        return Step::Program;
    }
    inner(words, o.next, &o, "doas")
}

/// `xargs [OPTS] CMD`: arguments arrive at run time.
fn xargs(_name: &str, words: &[Word]) -> Step {
    let n = words.len();
    let o = scan_opts(
        words,
        "0prtxo",
        "adEILnPs",
        "eil",
        &[
            "null",
            "no-run-if-empty",
            "interactive",
            "verbose",
            "exit",
            "open-tty",
            "show-limits",
            "eof",
            "replace",
            "max-lines",
        ],
        &[
            "arg-file",
            "delimiter",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
    );
    if o.next >= n {
        return Step::Program; // runs `echo`
    }
    Step::Inner {
        consumed: o.next,
        env: Vec::new(),
        chdir: None,
        runtime_args: true,
        opaque: unknown_opaque("xargs", &o),
    }
}

/// `bash|sh|… [OPTS] -c SCRIPT`: the script is parsed.
fn shell(_name: &str, words: &[Word]) -> Step {
    let n = words.len();
    let mut has_c = false;
    let mut j = 1;
    while j < n {
        let w = &words[j];
        if w.dynamic {
            if has_c {
                break; // the script itself is dynamic
            }
            return Step::DynamicShell;
        }
        let t = w.text.as_str();
        if t == "--" || t == "-" {
            j += 1;
            break;
        }
        if t.starts_with("--") {
            j += if matches!(t, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if t.len() > 1 && (t.starts_with('-') || t.starts_with('+')) {
            let mut extra = 0;
            for c in t[1..].chars() {
                match c {
                    'c' => has_c = true,
                    'o' | 'O' => extra += 1,
                    _ => {}
                }
            }
            j += 1 + extra;
            continue;
        }
        break;
    }
    if has_c && j < n {
        Step::Shell { script: j }
    } else {
        Step::Program
    }
}

/// Package-manager and environment runners whose inner command may be a program they
/// fetch or a project's script rather than the program of that name (`npx ls` may run
/// the package `ls`): the inner command's findings apply, but it is never known-safe
/// (attack pass 200 P2).
pub(crate) const PACKAGE_RUNNERS: &[&str] = &[
    "npx",
    "npm",
    "pnpm",
    "pnpx",
    "yarn",
    "bunx",
    "bun",
    "uv",
    "uvx",
    "poetry",
    "pipx",
    "pipenv",
    "hatch",
    "pdm",
    "pixi",
    "pyenv",
    "rbenv",
    "bundle",
    "asdf",
    "mise",
    "rtx",
    "direnv",
    "nix",
    "nix-shell",
    "conda",
    "mamba",
    "micromamba",
    "cross-env",
    "cross-env-shell",
    "dotenv",
];

/// One runner's option table: short options without and with a value, long ones likewise,
/// the options whose value is a shell script (`npx -c`, `nix-shell --run`) and those that
/// change the working directory (`uv run --directory`).
struct RunnerOpts {
    short_flag: &'static str,
    short_arg: &'static str,
    long_flag: &'static [&'static str],
    long_arg: &'static [&'static str],
    script: &'static [&'static str],
    chdir: &'static [&'static str],
}

const NPM_EXEC: RunnerOpts = RunnerOpts {
    short_flag: "yqsd",
    short_arg: "pcw",
    long_flag: &[
        "yes",
        "no",
        "no-install",
        "ignore-existing",
        "quiet",
        "silent",
        "prefer-offline",
        "prefer-online",
        "offline",
        "workspaces",
        "include-workspace-root",
        "no-yes",
        "global",
    ],
    long_arg: &[
        "package",
        "call",
        "workspace",
        "registry",
        "cache",
        "userconfig",
        "loglevel",
        "prefix",
        "shell",
        "script-shell",
    ],
    script: &["-c", "--call"],
    chdir: &[],
};

const PNPM_EXEC: RunnerOpts = RunnerOpts {
    short_flag: "rsc",
    short_arg: "FC",
    long_flag: &[
        "recursive",
        "parallel",
        "shell-mode",
        "workspace-root",
        "no-bail",
        "bail",
        "report-summary",
        "reporter-hide-prefix",
        "silent",
        "reverse",
    ],
    long_arg: &["filter", "resume-from", "package", "dir", "reporter"],
    script: &[],
    chdir: &["-C", "--dir"],
};

const YARN_EXEC: RunnerOpts = RunnerOpts {
    short_flag: "q",
    short_arg: "p",
    long_flag: &["quiet"],
    long_arg: &["package", "cwd"],
    script: &[],
    chdir: &["--cwd"],
};

const BUNX: RunnerOpts = RunnerOpts {
    short_flag: "",
    short_arg: "p",
    long_flag: &["bun", "silent", "verbose", "no-install"],
    long_arg: &["package", "cwd"],
    script: &[],
    chdir: &["--cwd"],
};

const UV_RUN: RunnerOpts = RunnerOpts {
    short_flag: "qvnU",
    short_arg: "pfC",
    long_flag: &[
        "frozen",
        "locked",
        "no-sync",
        "isolated",
        "no-project",
        "all-extras",
        "no-dev",
        "dev",
        "only-dev",
        "active",
        "no-active",
        "no-env-file",
        "offline",
        "quiet",
        "verbose",
        "no-cache",
        "exact",
        "inexact",
        "no-editable",
        "all-packages",
        "all-groups",
        "no-default-groups",
        "upgrade",
        "reinstall",
        "compile-bytecode",
        "native-tls",
        "preview",
        "no-config",
        "no-progress",
        "no-python-downloads",
        "managed-python",
        "no-managed-python",
        "isolated",
        "no-build-isolation",
        "no-build",
        "no-binary",
        "refresh",
    ],
    long_arg: &[
        "with",
        "with-editable",
        "with-requirements",
        "python",
        "package",
        "directory",
        "project",
        "env-file",
        "extra",
        "group",
        "no-group",
        "only-group",
        "index",
        "index-url",
        "extra-index-url",
        "default-index",
        "find-links",
        "config-file",
        "cache-dir",
        "color",
        "refresh-package",
        "upgrade-package",
        "reinstall-package",
        "no-build-package",
        "no-binary-package",
        "exclude-newer",
        "resolution",
        "prerelease",
        "link-mode",
        "index-strategy",
        "keyring-provider",
        "config-setting",
        "python-platform",
        "from",
        "allow-insecure-host",
    ],
    script: &[],
    chdir: &["--directory"],
};

const POETRY_RUN: RunnerOpts = RunnerOpts {
    short_flag: "qvn",
    short_arg: "CP",
    long_flag: &[
        "quiet",
        "verbose",
        "no-interaction",
        "no-ansi",
        "ansi",
        "no-plugins",
        "no-cache",
    ],
    long_arg: &["directory", "project"],
    script: &[],
    chdir: &["-C", "--directory"],
};

const PIPX_RUN: RunnerOpts = RunnerOpts {
    short_flag: "qve",
    short_arg: "",
    long_flag: &[
        "no-cache",
        "path",
        "pypackages",
        "verbose",
        "quiet",
        "editable",
        "system-site-packages",
        "preinstall",
    ],
    long_arg: &[
        "spec",
        "python",
        "pip-args",
        "index-url",
        "backend",
        "fetch-missing-python",
    ],
    script: &[],
    chdir: &[],
};

const CONDA_RUN: RunnerOpts = RunnerOpts {
    short_flag: "v",
    short_arg: "np",
    long_flag: &[
        "no-capture-output",
        "live-stream",
        "verbose",
        "debug",
        "dev",
        "no-banner",
    ],
    long_arg: &["name", "prefix", "cwd", "root-prefix"],
    script: &[],
    chdir: &["--cwd"],
};

const NO_OPTS: RunnerOpts = RunnerOpts {
    short_flag: "",
    short_arg: "",
    long_flag: &[],
    long_arg: &[],
    script: &[],
    chdir: &[],
};

/// The command a runner runs after its options starting at word `from`: a script option's
/// value (`npx -c 'SCRIPT'`) is parsed as a shell script; an option the table does not
/// know (its value might be the next word) makes every candidate command checked
/// ([`candidates`]); `--name=value` is one word and no such risk.
fn runner(words: &[Word], from: usize, t: &RunnerOpts, skip: usize) -> Step {
    if from > words.len() {
        return Step::Program;
    }
    let sub = &words[from - 1..];
    let o = scan_opts(sub, t.short_flag, t.short_arg, "", t.long_flag, t.long_arg);
    // A script option, separate (`-c SCRIPT`) or attached (`--call=SCRIPT`, `-cSCRIPT`).
    for (k, w) in sub.iter().enumerate().take(o.next).skip(1) {
        if w.dynamic {
            continue;
        }
        if t.script.contains(&w.text.as_str()) {
            return match sub.get(k + 1) {
                Some(s) if !s.dynamic => Step::Shell {
                    script: from - 1 + k + 1,
                },
                Some(_) => Step::DynamicShell,
                None => Step::Program,
            };
        }
        for s in t.script {
            let attached = if s.starts_with("--") {
                w.text.strip_prefix(&format!("{s}="))
            } else {
                w.text.strip_prefix(s).filter(|r| !r.is_empty())
            };
            if let Some(text) = attached {
                return Step::SplitString { text: text.into() };
            }
        }
    }
    let unknown = o
        .unknown
        .iter()
        .any(|u| !(u.starts_with("--") && u.contains('=')));
    if unknown {
        return candidates(words, from);
    }
    let start = from - 1 + o.next + skip;
    if start >= words.len() {
        return Step::Program;
    }
    Step::Inner {
        consumed: start,
        env: Vec::new(),
        chdir: opt_value(&o, t.chdir).map(|v| v.clone().unwrap_or_default()),
        runtime_args: false,
        opaque: Vec::new(),
    }
}

/// The index of a runner's subcommand (`npm exec`, `uv run`): the first operand, or the
/// second after options (the first may be a global option's value), when it is one of
/// `subs`; before any `--`.
fn runner_subcommand(words: &[Word], subs: &[&str]) -> Option<usize> {
    let mut operands = 0;
    for (i, w) in words.iter().enumerate().skip(1) {
        if w.text == "--" {
            return None;
        }
        if w.text.starts_with('-') {
            continue;
        }
        if !w.dynamic && subs.contains(&w.text.as_str()) {
            return Some(i);
        }
        operands += 1;
        if operands == 2 || !words[i - 1].text.starts_with('-') {
            return None;
        }
    }
    None
}

/// Package-manager and environment runners (attack pass 200 P2): `npx`, `npm exec|x`,
/// `pnpm exec|dlx`, `pnpx`, `yarn exec|dlx`, `bunx`, `bun x`, `uv run`, `uvx`, `poetry
/// run`, `pipx run`, `pipenv|hatch|pdm|pixi run`, `pyenv|rbenv|asdf exec`, `bundle exec`,
/// `mise exec|x`, `direnv exec DIR`, `nix-shell --run`, `nix shell|develop -c`, `conda run`,
/// `cross-env`, `dotenv`. `None` when `name` is none of them.
pub(crate) fn runner_step(name: &str, words: &[Word]) -> Option<Step> {
    let sub = |subs: &[&str]| runner_subcommand(words, subs).map(|i| i + 1);
    let step = match name {
        "npx" => runner(words, 1, &NPM_EXEC, 0),
        "npm" => match sub(&["exec", "x"]) {
            Some(i) => runner(words, i, &NPM_EXEC, 0),
            None => Step::Program,
        },
        "pnpx" => runner(words, 1, &PNPM_EXEC, 0),
        "pnpm" => match sub(&["exec", "dlx"]) {
            Some(i) => pnpm(words, i),
            None => Step::Program,
        },
        "yarn" => match sub(&["exec", "dlx"]) {
            Some(i) => runner(words, i, &YARN_EXEC, 0),
            None => Step::Program,
        },
        "bunx" => runner(words, 1, &BUNX, 0),
        "bun" => match sub(&["x"]) {
            Some(i) => runner(words, i, &BUNX, 0),
            None => Step::Program,
        },
        "uvx" => runner(words, 1, &UV_RUN, 0),
        "uv" => match sub(&["run"]) {
            Some(i)
                if words[i..]
                    .iter()
                    .any(|w| w.text == "-m" || w.text == "--module") =>
            {
                Step::Program // runs a Python module
            }
            Some(i) => runner(words, i, &UV_RUN, 0),
            None => Step::Program,
        },
        "poetry" | "pipenv" | "hatch" | "pdm" | "pixi" => match sub(&["run"]) {
            Some(i) => runner(words, i, &POETRY_RUN, 0),
            None => Step::Program,
        },
        "pipx" => match sub(&["run"]) {
            Some(i) => runner(words, i, &PIPX_RUN, 0),
            None => Step::Program,
        },
        "pyenv" | "rbenv" | "asdf" => match sub(&["exec"]) {
            Some(i) => runner(words, i, &NO_OPTS, 0),
            None => Step::Program,
        },
        "bundle" => match sub(&["exec"]) {
            Some(i) => runner(
                words,
                i,
                &RunnerOpts {
                    long_flag: &["keep-file-descriptors"],
                    long_arg: &["gemfile"],
                    ..NO_OPTS
                },
                0,
            ),
            None => Step::Program,
        },
        "direnv" => match sub(&["exec"]) {
            Some(i) => runner(words, i, &NO_OPTS, 1),
            None => Step::Program,
        },
        "conda" | "mamba" | "micromamba" => match sub(&["run"]) {
            Some(i) => runner(words, i, &CONDA_RUN, 0),
            None => Step::Program,
        },
        "mise" | "rtx" => match sub(&["exec", "x"]) {
            Some(i) => mise(words, i),
            None => Step::Program,
        },
        "nix-shell" => match words
            .iter()
            .position(|w| w.text == "--run" || w.text == "--command")
        {
            Some(i) => match words.get(i + 1) {
                Some(s) if !s.dynamic => Step::Shell { script: i + 1 },
                Some(_) => Step::DynamicShell,
                None => Step::Program,
            },
            None => Step::Program,
        },
        "nix" => match sub(&["shell", "develop"]) {
            Some(_) => match words
                .iter()
                .position(|w| w.text == "-c" || w.text == "--command")
            {
                Some(i) if i + 1 < words.len() => Step::Inner {
                    consumed: i + 1,
                    env: Vec::new(),
                    chdir: None,
                    runtime_args: false,
                    opaque: Vec::new(),
                },
                _ => Step::Program,
            },
            None => Step::Program,
        },
        "cross-env" => {
            let o = scan_opts(&words[..1], "", "", "", &[], &[]);
            inner_after_assignments(words, 1, &o, &[], Vec::new())
        }
        "cross-env-shell" => {
            let mut i = 1;
            while words.get(i).and_then(split_assignment).is_some() {
                i += 1;
            }
            candidates(words, i)
        }
        "dotenv" => match words.iter().position(|w| w.text == "--") {
            Some(i) if i + 1 < words.len() => Step::Inner {
                consumed: i + 1,
                env: Vec::new(),
                chdir: None,
                runtime_args: false,
                opaque: Vec::new(),
            },
            _ => candidates(words, 1),
        },
        _ => return None,
    };
    Some(step)
}

/// `pnpm exec|dlx [-c|--shell-mode] …`: in shell mode the command words are one shell
/// command line.
fn pnpm(words: &[Word], from: usize) -> Step {
    let shell_mode = words[from..]
        .iter()
        .take_while(|w| w.text.starts_with('-'))
        .any(|w| w.text == "--shell-mode" || (!w.text.starts_with("--") && w.text.contains('c')));
    match runner(words, from, &PNPM_EXEC, 0) {
        Step::Inner { consumed, .. } if shell_mode => {
            if words[consumed..].iter().any(|w| w.dynamic) {
                return Step::DynamicShell;
            }
            Step::SplitString {
                text: words[consumed..]
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            }
        }
        s => s,
    }
}

/// `mise exec|x [OPTS] [TOOL@VERSION]… [-- CMD…]` and `-c|--command STRING`: the command
/// follows `--`; without it, the words after the options are tool names and versions.
fn mise(words: &[Word], from: usize) -> Step {
    for (i, w) in words.iter().enumerate().skip(from) {
        if w.text == "--" {
            return if i + 1 < words.len() {
                Step::Inner {
                    consumed: i + 1,
                    env: Vec::new(),
                    chdir: None,
                    runtime_args: false,
                    opaque: Vec::new(),
                }
            } else {
                Step::Program
            };
        }
        if w.text == "-c" || w.text == "--command" {
            return match words.get(i + 1) {
                Some(s) if !s.dynamic => Step::Shell { script: i + 1 },
                Some(_) => Step::DynamicShell,
                None => Step::Program,
            };
        }
    }
    candidates(words, from)
}
