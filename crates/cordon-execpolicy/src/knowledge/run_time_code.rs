//! Programs whose code or identity is decided at run time by means other than a command
//! line (attack pass 193): an interpreter reading its program from a process substitution
//! or a file descriptor, `exec < <(…)` feeding the commands after it, `hash -p`, aliases,
//! `trap "$x"`, and writes into `.git` through a path known only at run time. Each is
//! asked about as a command known only at run time (`dynamic_command`) or as a write of
//! the repository's configuration (`git_alias`).

use super::{expands_variable, finding, shells, Finding, FindingId};
use crate::model::{Decision, RedirectKind, Segment};

/// The checks of this module for segment `idx` (`name`: its program as the detector reads
/// it, `None` when not statically known).
pub(crate) fn check(name: Option<&str>, idx: usize, segs: &[Segment], out: &mut Vec<Finding>) {
    let seg = &segs[idx];
    git_dir_write(seg, out);
    let Some(name) = name else {
        return;
    };
    let ask = |why: String| finding(FindingId::DynamicCommand, Decision::Ask, why);
    let why = match name {
        _ if is_interpreter(name) => program_from_substitution(name, idx, segs)
            .or_else(|| startup_file_option(name, seg))
            .or_else(|| source_from_stdin(name, seg)),
        // `exec < <(curl …); sh`, `exec 0<&3; sh`: the rest of the script's commands read
        // that output (attack pass 197 B2).
        "exec" => seg
            .redirections
            .iter()
            .any(|r| shells::stdin_from_elsewhere(r).is_some())
            .then(|| {
                "exec makes a process substitution's output or another descriptor the input \
                 of the commands after it (a shell among them runs it)"
                    .to_string()
            }),
        // `hash -p /usr/bin/rm ls`: `ls` then runs rm.
        "hash" => seg
            .argv
            .iter()
            .skip(1)
            .any(|a| a.starts_with('-') && a.contains('p'))
            .then(|| "hash -p binds a command name to another program".to_string()),
        // `alias g='git reset'` then `g --hard` on a later line (bash with
        // expand_aliases, sh): what runs is not the name written.
        "alias" => seg
            .argv
            .iter()
            .skip(1)
            .find(|a| a.contains('=') && !a.starts_with('-'))
            .map(|a| format!("alias {a} makes later commands run other text than written")),
        // `trap "$x" EXIT`, as `eval "$x"`.
        "trap" => {
            let at = if seg.argv.get(1).is_some_and(|a| a == "--") {
                2
            } else {
                1
            };
            (seg.argv.len() > at + 1 && !seg.is_static(at) && expands_variable(&seg.argv[at]))
                .then(|| "trap runs text held in a variable".to_string())
        }
        _ => None,
    };
    if let Some(why) = why {
        if !out.iter().any(|f| f.id == FindingId::DynamicCommand) {
            out.push(ask(format!("{why}: what it runs is not checked")));
        }
    }
}

fn is_interpreter(name: &str) -> bool {
    shells::INTERPRETERS.contains(&name) || matches!(name, "source" | ".")
}

/// Why interpreter `name` (segment `idx`) runs a program known only at run time read from
/// a process substitution or a file descriptor ([`shells::program_from_substitution`]);
/// `None` when it does not, or when it is a shell fed the static output of `echo`,
/// `printf` or `cat <<<`, which the parser reads as its commands.
fn program_from_substitution(name: &str, idx: usize, segs: &[Segment]) -> Option<String> {
    let producer = shells::program_from_substitution(segs, idx)?;
    let parsed = shells::SHELLS.contains(&name)
        && producer.is_some_and(|p| crate::parse::static_output(p).is_some());
    (!parsed).then(|| {
        format!("{name} runs a program read from a process substitution or a file descriptor")
    })
}

/// A shell given a start-up file that is not a static plain path: `bash --rcfile <(…) -i`,
/// `--init-file /dev/fd/3`, `--rcfile "$f"` (attack pass 197 B2): the file's text runs
/// before anything else and is not checked.
fn startup_file_option(name: &str, seg: &Segment) -> Option<String> {
    if !shells::SHELLS.contains(&name) {
        return None;
    }
    let given = seg.argv.iter().enumerate().skip(1).any(|(i, a)| {
        let (opt, value, at) = match a.split_once('=') {
            Some((o, v)) => (o, Some(v), i),
            None => (a.as_str(), seg.argv.get(i + 1).map(String::as_str), i + 1),
        };
        matches!(opt, "--rcfile" | "--init-file")
            && value.is_some_and(|v| {
                !seg.is_static(at)
                    || v.starts_with("<(")
                    || v.starts_with("/dev/")
                    || v.starts_with("/proc/")
                    || v.contains(['$', '`'])
            })
    });
    given.then(|| {
        format!(
            "{name} runs a start-up file (--rcfile/--init-file) that is not a static plain path"
        )
    })
}

/// `source /dev/stdin` (`.`, `/dev/fd/0`, `/proc/self/fd/0`) reading anything but a static
/// heredoc or herestring, which the parser reads as its commands, a static file (`<
/// f.sh`, as `source f.sh`) or a pipe (see `piped_script`): `. /dev/stdin <<< "$x"`, `.
/// /dev/stdin` reading the command's own input (attack pass 197 B2).
fn source_from_stdin(name: &str, seg: &Segment) -> Option<String> {
    if !matches!(name, "source" | ".") {
        return None;
    }
    let operand = seg.argv.iter().skip(1).find(|a| *a != "--")?;
    if !shells::stdin_path(operand) || seg.pipeline.is_some_and(|p| p.index > 0) {
        return None;
    }
    let input = seg
        .redirections
        .iter()
        .rev()
        .find(|r| r.fd.as_deref().is_none_or(|f| f == "0") && r.op.starts_with('<'));
    let known = input.is_some_and(|r| match r.kind {
        RedirectKind::Heredoc | RedirectKind::Herestring => r.text.is_some(),
        RedirectKind::Read => {
            !r.dynamic && !r.target.starts_with("<(") && !shells::fd_path(&r.target)
        }
        _ => false,
    });
    (!known).then(|| format!("{name} {operand} runs commands read from its input"))
}

/// A write whose target is known only at run time but lies in the repository's `.git`
/// directory: a `.git` component (`> "$PWD/.git/config"`) or a path `git rev-parse` prints
/// there (`> "$(git rev-parse --git-dir)/config"`, `--git-path`, `--git-common-dir`,
/// `--absolute-git-dir`): asked about, as a literal `.git/config` write is (attack pass
/// 193 F8).
fn git_dir_write(seg: &Segment, out: &mut Vec<Finding>) {
    for r in &seg.redirections {
        if !r.dynamic
            || !matches!(
                r.kind,
                RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite
            )
        {
            continue;
        }
        let t = &r.target;
        let rev_parse = t.contains("rev-parse")
            && [
                "--git-dir",
                "--git-path",
                "--git-common-dir",
                "--absolute-git-dir",
            ]
            .iter()
            .any(|o| t.contains(o));
        let dot_git = t
            .split('/')
            .any(|c| c.trim_matches(['"', '\'']).eq_ignore_ascii_case(".git"));
        if rev_parse || dot_git {
            out.push(finding(
                FindingId::GitAlias,
                Decision::Ask,
                format!(
                    "writes {t} in the repository's .git directory: a later git command of \
                     the same run uses what it sets (hooks, aliases, command keys) unchecked"
                ),
            ));
            return;
        }
    }
}
