//! R-A4: the known-safe list and the dangerous-command detector read long options the way the
//! tools do. getopt_long (coreutils, sed, `file`), pip's optparse and git's parse-options take
//! any unambiguous prefix of a long option (`sort --outp=F` writes F, `git grep --op=CMD` runs
//! CMD), so every prefix of an option that writes or runs something must keep the command off
//! the known-safe list, while exact names of other options (`git diff --text`) stay allowed.

use cordon_execpolicy::{Basis, Decision, DecisionRecord, EvalContext, Policy};
use proptest::prelude::*;

fn eval(argv: &[&str]) -> DecisionRecord {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    Policy::empty().evaluate(&argv, &EvalContext::default())
}

fn known_safe(argv: &[&str]) -> bool {
    let rec = eval(argv);
    rec.decision == Decision::Allow
        && rec
            .segments
            .iter()
            .all(|s| matches!(s.basis, Basis::KnownSafe { .. }))
}

/// Each `bash -c SCRIPT` of `asked` has the finding named beside it; each of `quiet` has
/// none.
fn bash_findings(asked: &[(&str, &str)], quiet: &[&str]) {
    for (script, id) in asked {
        let f = findings(&["bash", "-c", script]);
        assert!(f.iter().any(|i| i == id), "{script}: {f:?}");
    }
    for script in quiet {
        let f = findings(&["bash", "-c", script]);
        assert!(f.is_empty(), "{script}: {f:?}");
    }
}

fn findings(argv: &[&str]) -> Vec<String> {
    eval(argv)
        .segments
        .iter()
        .flat_map(|s| s.findings.iter().map(|f| f.id.as_str().to_string()))
        .collect()
}

/// (command before the option, dangerous option name, exact names of other options of the same
/// tool that are prefixes of it, operands after the option).
type UnsafeOption = (
    &'static [&'static str],
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

const UNSAFE: &[UnsafeOption] = &[
    (&["git", "diff"], "output", &[], &["HEAD"]),
    (&["git", "log"], "output", &[], &["-1"]),
    (&["git", "range-diff"], "output", &[], &["a...b"]),
    (&["git", "log"], "ext-diff", &[], &["-p"]),
    (&["git", "diff"], "textconv", &["text"], &[]),
    (&["git", "show"], "textconv", &["text"], &[]),
    (&["git", "grep"], "open-files-in-pager", &[], &["foo"]),
    (&["git", "cat-file"], "filters", &[], &["HEAD:f"]),
    (&["git", "diff"], "exec-path", &[], &[]),
    (&["sort"], "output", &[], &["in.txt"]),
    (&["sort"], "compress-program", &[], &["-S1", "in.txt"]),
    (&["date"], "set", &[], &[]),
    (&["file"], "compile", &[], &["x"]),
    (&["sed"], "in-place", &[], &["s/a/b/", "f"]),
    (&["sed"], "file", &[], &["p", "f"]),
    (&["pip", "list"], "log", &[], &[]),
    (&["pip", "list"], "log-file", &[], &[]),
    (&["pip", "list"], "local-log", &["local"], &[]),
    (&["pip3", "freeze"], "cache-dir", &[], &[]),
    (&["python3", "-I", "-m", "pip", "list"], "log", &[], &[]),
];

fn argv_with(cmd: &[&str], option: &str, rest: &[&str]) -> Vec<String> {
    cmd.iter()
        .map(|s| s.to_string())
        .chain(std::iter::once(option.to_string()))
        .chain(rest.iter().map(|s| s.to_string()))
        .collect()
}

fn is_known_safe(argv: &[String]) -> bool {
    let v: Vec<&str> = argv.iter().map(String::as_str).collect();
    known_safe(&v)
}

/// R-A4: every prefix of every dangerous long option, with `=VALUE` and as a bare flag, keeps
/// the command off the known-safe list; the exact names of the tool's other options do not.
#[test]
fn r_a4_every_abbreviation_of_an_unsafe_long_option_is_not_known_safe() {
    for (cmd, name, others, rest) in UNSAFE {
        // The command without the option is known-safe: the option is what decides.
        let plain: Vec<String> = cmd
            .iter()
            .chain(rest.iter())
            .map(|s| s.to_string())
            .collect();
        assert!(is_known_safe(&plain), "{plain:?} should be known-safe");
        for len in 1..=name.len() {
            let p = &name[..len];
            for spelling in [format!("--{p}=/home/u/.bashrc"), format!("--{p}")] {
                let argv = argv_with(cmd, &spelling, rest);
                if others.contains(&p) {
                    assert!(
                        is_known_safe(&argv),
                        "{argv:?} is another option, known-safe"
                    );
                } else {
                    assert!(!is_known_safe(&argv), "{argv:?} must not be known-safe");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// R-A4: the same, for any value and with the option after the operands.
    #[test]
    fn r_a4_abbreviated_unsafe_option_anywhere_is_not_known_safe(
        i in 0..UNSAFE.len(),
        len in 1usize..40,
        value in "[a-z/.~]{0,12}",
        after in any::<bool>(),
    ) {
        let (cmd, name, others, rest) = UNSAFE[i];
        let p = &name[..len.min(name.len())];
        prop_assume!(!others.contains(&p));
        let option = format!("--{p}={value}");
        let argv: Vec<String> = if after {
            cmd.iter().chain(rest.iter()).map(|s| s.to_string()).chain([option]).collect()
        } else {
            argv_with(cmd, &option, rest)
        };
        prop_assert!(!is_known_safe(&argv), "{:?}", argv);
    }
}

/// R-A4: exact names that win over an abbreviation, and ordinary reads, stay known-safe.
#[test]
fn r_a4_exact_names_and_plain_reads_stay_known_safe() {
    for argv in [
        &["git", "diff", "--text"][..],
        &["git", "grep", "--text", "foo"],
        &["git", "log", "--oneline"],
        &["git", "diff", "--stat"],
        &["git", "diff", "--output-indicator-new=+"],
        &["git", "grep", "-n", "foo"],
        &["git", "rev-list", "--filter=blob:none", "HEAD"],
        &["git", "--no-pager", "log", "-3"],
        &["git", "config", "--get", "user.name"],
        &["git", "config", "get", "user.name"],
        &["git", "config", "--global", "--list"],
        &[
            "git",
            "config",
            "--file=.gitmodules",
            "--get-regexp",
            "path",
        ],
        &["sort", "file"],
        &["sort", "-t", "o", "-k2", "file"],
        &["date"],
        &["date", "-Iseconds"],
        &["date", "-d", "20200101", "+%s"],
        &["date", "--date=yesterday"],
        &["file", "-b", "x"],
        &["pip", "list", "--local"],
        &["pip", "list", "--outdated"],
        &["rg", "--pretty", "foo"],
        &["tree", "-L", "2"],
        &["python3", "-P", "-m", "pip", "list", "--local"],
    ] {
        assert!(known_safe(argv), "{argv:?} should stay known-safe");
    }
}

/// R-A4: short spellings and look-alike subcommands of the same writes are not known-safe.
#[test]
fn r_a4_other_spellings_of_unsafe_options_are_not_known_safe() {
    for argv in [
        // attached and clustered short options
        &["date", "-s2020-01-01"][..],
        &["date", "-us", "2020-01-01"],
        &["date", "0101000020"],
        &["file", "-zC"],
        &["tree", "-ao", "out.txt"],
        &["tree", "-R", "-H", "."],
        &["sort", "-ro", "f", "f"],
        // exact-name options of tools without abbreviations
        &["rg", "--hostname-bin=/tmp/x", "foo"],
        &["rg", "--pre", "cat", "foo"],
        &["fd", "--exec", "rm"],
        &["go", "env", "--w", "GOFLAGS=-x"],
        &["go", "env", "-w=true", "GOFLAGS=-x"],
        // git config without a read action sets a value, even the value `list`
        &["git", "config", "core.pager", "list"],
        &["git", "config", "--replace-a", "core.pager", "get"],
        &["git", "config", "--list", "--ad", "x.y", "z"],
        // git's global options: unknown or value-taking ones before the subcommand
        &["git", "--exec-path=/tmp", "log"],
        &["git", "--attr-source", "diff", "push"],
        &["git", "grep", "-Ovim", "foo"],
    ] {
        assert!(!known_safe(argv), "{argv:?} must not be known-safe");
    }
}

/// R-A4: abbreviated options do not hide a dangerous command from the detector.
#[test]
fn r_a4_abbreviated_options_keep_their_dangerous_findings() {
    let cases: &[(&[&str], &str, Decision)] = &[
        (
            &["rm", "--r", "/"],
            "rm_recursive_critical",
            Decision::Forbid,
        ),
        (
            &["rm", "--recur", "-f", "/etc"],
            "rm_recursive_critical",
            Decision::Forbid,
        ),
        (
            &["chmod", "--rec", "777", "x"],
            "chmod_world_writable",
            Decision::Forbid,
        ),
        (
            &["chmod", "--ref=a", "--rec", "/etc"],
            "recursive_owner_mode_system",
            Decision::Forbid,
        ),
        (
            &["git", "push", "--force-w", "origin", "main"],
            "git_force_push",
            // nu62: the lease form is asked about, not forbidden.
            Decision::Ask,
        ),
        (
            &["git", "push", "--mirr", "o"],
            "git_force_push",
            Decision::Forbid,
        ),
        (
            &["git", "push", "--del", "origin", "x"],
            "git_push_delete",
            Decision::Ask,
        ),
        (&["git", "reset", "--har"], "git_reset_hard", Decision::Ask),
        (
            &["git", "clean", "--forc", "-d"],
            "git_clean",
            Decision::Ask,
        ),
        // `--attr-source` takes a value: the subcommand is `push`, not `diff`.
        (
            &[
                "git",
                "--attr-source",
                "diff",
                "push",
                "--force",
                "origin",
                "main",
            ],
            "git_force_push",
            Decision::Forbid,
        ),
        (
            &["sed", "--in=.bak", "s/a/b/", "~/.bashrc"],
            "shell_rc_write",
            Decision::Forbid,
        ),
        (
            &["cp", "--target=/usr/bin", "x"],
            "system_file_write",
            Decision::Forbid,
        ),
        (
            &["cp", "--target-dir", "/usr/bin", "x"],
            "system_file_write",
            Decision::Forbid,
        ),
        (
            &["env", "--uns", "X", "rm", "-rf", "/"],
            "rm_recursive_critical",
            Decision::Forbid,
        ),
        (
            &["mdadm", "--zero", "/dev/sda"],
            "disk_overwrite",
            Decision::Forbid,
        ),
        (
            &["flashrom", "--wr", "fw.bin"],
            "disk_overwrite",
            Decision::Forbid,
        ),
    ];
    for (argv, id, decision) in cases {
        let found = findings(argv);
        assert!(
            found.iter().any(|f| f == id),
            "{argv:?}: {id} not in {found:?}"
        );
        assert_eq!(eval(argv).decision, *decision, "{argv:?}");
    }
}

/// New-user pass nu20, G5: `git clean` with a dry run (`-n`, `--dry-run` or a prefix of it)
/// removes nothing, so it has no dangerous finding; read as parse-options reads it, so an
/// `n` that is `-e`'s pattern, a `-n` after `--` (a path) or one cancelled by
/// `--no-dry-run` still leaves the finding.
#[test]
fn a_git_clean_dry_run_is_not_dangerous() {
    for dry in [
        &["git", "clean", "-fdn"][..],
        &["git", "clean", "-fdx", "-n"],
        &["git", "clean", "--dry-run", "-fdx"],
        &["git", "clean", "--dry", "-fdx", "src"],
        &["git", "clean", "-fdx", "src", "-n"],
    ] {
        assert!(
            !findings(dry).contains(&"git_clean".to_string()),
            "{dry:?}: {:?}",
            findings(dry)
        );
    }
    // nu21 K8: a plain dry run is known-safe (it only lists); with `-i` it is not.
    assert!(known_safe(&["git", "clean", "-n"]));
    assert!(known_safe(&["git", "clean", "-ndx"]));
    assert!(!known_safe(&["git", "clean", "-ni"]));
    assert!(!known_safe(&["git", "clean", "-fdx"]));
    // `-c clean.requireForce=false` (or the same through the environment or a config file)
    // deletes without `-f`: flagged without it too.
    assert_eq!(
        findings(&["git", "-c", "clean.requireForce=false", "clean", "-dx"]),
        vec!["git_clean".to_string()]
    );
    assert_eq!(
        findings(&["git", "clean", "-dx"]),
        vec!["git_clean".to_string()]
    );
    // Attack pass 43, J1: after `--end-of-options` a `-n` is a path; `--e` is `--exclude`,
    // whose pattern is the next word.
    for wet in [
        &["git", "clean", "-fdx", "--end-of-options", "-n", "."][..],
        &["git", "clean", "--e", "-n", "-fdx"],
    ] {
        assert_eq!(findings(wet), vec!["git_clean".to_string()], "{wet:?}");
        assert!(!known_safe(wet), "{wet:?}");
    }
    for wet in [
        &["git", "clean", "-fdx"][..],
        &["git", "clean", "-fdxen"],
        &["git", "clean", "-fdx", "-e", "n"],
        &["git", "clean", "-fdx", "--", "-n"],
        &["git", "clean", "-fdx", "-n", "--no-dry-run"],
        &["git", "clean", "-fdx", "--exclude", "-n"],
        &["git", "clean", "-fdx", "--exclude=-n"],
    ] {
        assert_eq!(findings(wet), vec!["git_clean".to_string()], "{wet:?}");
    }
}

/// Attack pass 44, L5: a subcommand that is an alias the command line defines is flagged,
/// whatever it expands to (`clean`, `!sh …`), attached or separate, any case. Twins: an
/// alias defined but not the subcommand, and a built-in with a `-c` of another key, get
/// no `git_alias` finding.
#[test]
fn a_command_line_alias_is_flagged() {
    for argv in [
        &["git", "-c", "alias.x=clean", "x", "-dfx"][..],
        &["git", "-calias.x=clean", "x", "-dfx"],
        &["git", "-c", "ALIAS.X=clean", "x"],
        &["git", "-c", "alias.x=!git clean -fdx", "x"],
        &["git", "--config-env", "alias.x=CMD", "x"],
        &["git", "--config-env=alias.x=CMD", "x"],
    ] {
        assert_eq!(findings(argv), vec!["git_alias".to_string()], "{argv:?}");
    }
    for argv in [
        &["git", "-c", "alias.x=clean", "status"][..],
        &["git", "-c", "user.name=x", "commit", "-m", "m"],
    ] {
        assert!(
            !findings(argv).contains(&"git_alias".to_string()),
            "{argv:?}"
        );
    }
}

/// New-user pass nu58: an alias of the user's git configuration is checked as what it runs
/// (`undo = reset --hard`, `sync = !git fetch && git reset --hard origin/main`, an alias of
/// an alias), its finding naming the alias. Twins: a harmless alias, an alias named like a
/// built-in (git ignores it), and no aliases at all get no finding.
#[test]
fn a_git_config_alias_is_checked_as_what_it_runs() {
    let aliases: std::collections::BTreeMap<String, String> = [
        ("undo", "reset --hard"),
        ("sync", "!git fetch origin && git reset --hard origin/main"),
        ("nuke", "undo"),
        ("lg", "log --oneline"),
        ("status", "reset --hard"),
        ("fp", "push --force"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let with = |argv: &[&str]| {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let rec = Policy::empty().evaluate(
            &argv,
            &EvalContext::default().with_git_aliases(aliases.clone()),
        );
        rec.segments
            .iter()
            .flat_map(|s| {
                s.findings
                    .iter()
                    .map(|f| (f.id.as_str().to_string(), f.reason.clone()))
            })
            .collect::<Vec<_>>()
    };
    for (argv, id) in [
        (&["git", "undo"][..], "git_reset_hard"),
        (&["git", "sync"], "git_reset_hard"),
        (&["git", "nuke"], "git_reset_hard"),
        (&["git", "fp", "origin", "main"], "git_force_push"),
        (&["git", "-C", "sub", "UNDO"], "git_reset_hard"),
    ] {
        let f = with(argv);
        assert!(
            f.iter()
                .any(|(i, r)| i == id && r.contains("alias in your git configuration")),
            "{argv:?}: {f:?}"
        );
    }
    for argv in [&["git", "lg"][..], &["git", "status"], &["git", "log"]] {
        assert!(with(argv).is_empty(), "{argv:?}: {:?}", with(argv));
    }
    assert!(findings(&["git", "undo"]).is_empty());
}

/// Attack pass 59: a `!` alias gets the arguments typed after it; a command line that points
/// git at configuration of its own before a subcommand that is not git's is asked about; an
/// alias that shadows a built-in in another case is the alias; a long chain or an
/// exponential expansion ends, asked about, instead of overflowing the stack or hanging.
#[test]
fn git_config_alias_arguments_moved_configs_and_bounds() {
    let mut aliases: std::collections::BTreeMap<String, String> = [
        ("rsb", "!git reset"),
        ("fgit", "!f() { git \"$@\"; }; f"),
        ("reset", "reset --hard"),
        ("lg", "!git log --oneline \"$@\""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for i in 0..5000 {
        aliases.insert(format!("a{i}"), format!("a{}", i + 1));
    }
    aliases.insert("a5000".into(), "reset --hard".into());
    for i in 0..20 {
        aliases.insert(
            format!("b{i}"),
            format!("!git b{0}; git b{0}; git b{0}; git b{0}", i + 1),
        );
    }
    let ids = |argv: &[&str]| {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        Policy::empty()
            .evaluate(
                &argv,
                &EvalContext::default().with_git_aliases(aliases.clone()),
            )
            .segments
            .iter()
            .flat_map(|s| s.findings.iter().map(|f| f.id.as_str().to_string()))
            .collect::<Vec<_>>()
    };
    for (argv, id) in [
        (&["git", "rsb", "--hard"][..], "git_reset_hard"),
        (&["git", "fgit", "reset", "--hard"], "git_reset_hard"),
        (&["git", "Reset"], "git_reset_hard"),
        (&["git", "a0"], "git_alias"),
        (&["git", "b0"], "git_alias"),
        (
            &["env", "GIT_CONFIG_GLOBAL=.a.cfg", "git", "x"],
            "git_alias",
        ),
        (&["git", "-c", "include.path=/x/a.cfg", "x"], "git_alias"),
        // Another repository's aliases are unknown (its config is not read).
        (&["git", "-C", "../other", "x"], "git_alias"),
        (&["git", "--git-dir=../o/.git", "x"], "git_alias"),
        (&["sh", "-c", "cd nested && git x"], "git_alias"),
        (&["sh", "-c", "HOME=$PWD git x"], "git_alias"),
    ] {
        let f = ids(argv);
        assert!(f.iter().any(|i| i == id), "{argv:?}: {f:?}");
    }
    // Twins: git's own command, and a harmless alias with arguments.
    for argv in [
        &["git", "reset"][..],
        &["sh", "-c", "cd nested && git status"],
        &["git", "-C", "../other", "log"],
        &["env", "GIT_CONFIG_GLOBAL=.a.cfg", "git", "status"],
        &["git", "lg", "-5"],
    ] {
        assert!(ids(argv).is_empty(), "{argv:?}: {:?}", ids(argv));
    }
}

/// Attack pass 59, H3: a backslash-newline inside a word joins it, as bash's reader does;
/// inside single quotes it stays.
#[test]
fn a_line_continuation_inside_a_word_joins_it() {
    assert_eq!(
        findings(&["sh", "-c", "git res\\\net --hard"]),
        vec!["git_reset_hard".to_string()]
    );
    assert_eq!(
        findings(&["sh", "-c", "gi\\\nt reset --hard"]),
        vec!["git_reset_hard".to_string()]
    );
    assert!(findings(&["sh", "-c", "echo 'git res\\\net --hard'"]).is_empty());
}

/// Attack pass 61: work discarded by other git spellings, by a program named only at run
/// time, or by options that arrive at run time is asked about; the everyday forms beside
/// them are not.
#[test]
fn discarding_uncommitted_work_is_asked_about_in_every_spelling() {
    bash_findings(
        &[
            ("git checkout -- .", "git_discard_changes"),
            ("git checkout --theirs src/a.rs", "git_discard_changes"),
            (
                "git checkout main -- ':(glob)**/*.rs'",
                "git_discard_changes",
            ),
            ("git restore src/a.rs", "git_discard_changes"),
            ("git restore -SW src", "git_discard_changes"),
            ("git switch -f main", "git_discard_changes"),
            ("git stash drop stash@{0}", "git_discard_changes"),
            ("g=git; $g reset --hard", "git_reset_hard"),
            ("${G:-git} clean -fdx", "git_clean"),
            (
                "git ls-files -m | xargs git checkout",
                "git_discard_changes",
            ),
            (
                "echo --force | xargs git push origin",
                "git_discard_changes",
            ),
            (
                "find . -name '*.rs' -exec git checkout {} +",
                "git_discard_changes",
            ),
            ("git stash $WHAT", "git_discard_changes"),
            // Attack pass 62.
            ("git checkout f.txt", "git_discard_changes"),
            ("git checkout HEAD f.txt", "git_discard_changes"),
            ("git checkout-index -f -a", "git_discard_changes"),
            ("git read-tree -u --reset HEAD", "git_discard_changes"),
            ("git diff | git apply -R", "git_discard_changes"),
            ("git reset --merge", "git_discard_changes"),
            ("git rm -qf f.txt", "git_discard_changes"),
            ("git rm -rf .", "git_discard_changes"),
            ("git clean -f", "git_discard_changes"),
            ("git clean -fdx", "git_clean"),
            ("git update-ref -d refs/stash", "git_discard_changes"),
            (
                "git reflog delete --updateref --rewrite refs/stash@{0}",
                "git_discard_changes",
            ),
            (
                "git reflog expire --expire=now --all",
                "git_discard_changes",
            ),
            ("git worktree remove --force ../wt", "git_discard_changes"),
            // Attack pass 197 B6: a refspec known only at run time may be `+HEAD:main`.
            ("git push origin \"$BRANCH\"", "git_force_push"),
        ],
        &[
            "git checkout main",
            "git checkout v1.2.3",
            "git checkout release-2.0",
            "git checkout -b feature/x",
            "git checkout -b fix origin/fix",
            "git clean -n",
            "git rm --cached f.txt",
            "git apply fix.patch",
            "git reset --keep HEAD~1",
            "git worktree remove ../wt",
            "git reflog",
            "git restore --staged src/a.rs",
            "git switch main",
            "git stash pop",
            "git stash",
            "git checkout -b \"$BRANCH\"",
            "git stash push -m \"$MSG\"",
            "git ls-files -z | xargs -0 git add",
            "$EDITOR notes.txt",
            "$PYTHON -m pytest -x",
            "\"$CC\" -o out main.c",
        ],
    );
}

/// New-user pass nu60: a plain alias whose expansion is known-safe (`lg = log --oneline`)
/// is allowed as known-safe, through aliases of aliases; one that runs anything else, a
/// `!` alias, an alias the command line redefines, or a writing option typed after it is
/// not.
#[test]
fn a_git_alias_for_a_read_is_known_safe() {
    let aliases: std::collections::BTreeMap<String, String> = [
        ("lg", "log --graph --oneline"),
        ("l", "lg"),
        ("co", "checkout"),
        ("st", "!git status"),
        ("lgp", "log -p --output=patch.txt"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let safe = |argv: &[&str]| {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let rec = Policy::empty().evaluate(
            &argv,
            &EvalContext::default().with_git_aliases(aliases.clone()),
        );
        rec.decision == Decision::Allow
            && rec
                .segments
                .iter()
                .all(|s| matches!(s.basis, Basis::KnownSafe { .. }))
    };
    assert!(safe(&["git", "lg", "-5"]));
    assert!(safe(&["git", "l"]));
    for argv in [
        &["git", "co", "main"][..],
        &["git", "st"],
        &["git", "lgp"],
        &["git", "lg", "--output=x"],
        &["git", "-c", "alias.lg=reset", "lg"],
        // Another repository's aliases are not the ones read here.
        &["git", "-C", "sub", "lg"],
        &["git", "nope"],
    ] {
        assert!(!safe(argv), "{argv:?}");
    }
}

/// Attack pass 62: deleting the project the command started in, everything in it, a
/// directory holding it or a repository's history is asked about, in every spelling the
/// attack used; a build directory, a narrowed `find -delete` and `.gitignore` are not.
#[test]
fn deleting_the_project_or_its_history_is_asked_about() {
    let at = |script: &str| {
        let argv: Vec<String> = ["bash", "-c", script]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut ctx = EvalContext::default();
        ctx.cwd = Some("/var/tmp/w/proj".into());
        Policy::empty()
            .evaluate(&argv, &ctx)
            .segments
            .iter()
            .flat_map(|s| s.findings.iter().map(|f| f.id.as_str().to_string()))
            .collect::<Vec<_>>()
    };
    for script in [
        "rm -rf .git",
        "rm -r -f .git/objects .git/refs",
        "rm -rf *",
        "rm -rf ./.[!.]*",
        "rm -rf .",
        "rm -rf /var/tmp/w/proj",
        "rm -rf /var/tmp/w",
        "cd .. && rm -rf proj",
        "find . -delete",
        "find . -type f -delete",
        "find .git -delete",
        "find . -name x -o -delete",
    ] {
        let f = at(script);
        assert!(f.iter().any(|i| i == "rm_project"), "{script}: {f:?}");
    }
    for script in [
        "rm -rf build",
        "rm -rf target node_modules",
        "rm -rf .gitignore .github/x",
        "find . -name '*.o' -delete",
        "find .git -name '*.lock' -delete",
        "find build -delete",
        "rm .git/index.lock",
    ] {
        let f = at(script);
        assert!(f.is_empty(), "{script}: {f:?}");
    }
    // Without a known start directory, the relative spellings still count.
    for script in ["rm -rf .git", "rm -rf *", "find . -delete"] {
        let f = findings(&["bash", "-c", script]);
        assert!(f.iter().any(|i| i == "rm_project"), "{script}: {f:?}");
    }
}

/// Attack pass 62: a command known only at run time asks (`$x`, `"${a[@]}"`, `sh -c
/// '"$@"' _ …`), and a shell's static input on the command line (heredoc, herestring,
/// `echo … |`) is checked as the commands it holds; twins: the same shapes with a harmless
/// command find nothing but stay unallowed (opaque).
#[test]
fn hidden_and_fed_commands_are_checked() {
    for (script, id) in [
        ("x=\"git reset --hard\"; $x", "dynamic_command"),
        ("a=(git reset --hard); \"${a[@]}\"", "dynamic_command"),
        ("sh -c '\"$@\"' _ git reset --hard", "dynamic_command"),
        ("bash <<EOF\ngit reset --hard\nEOF", "git_reset_hard"),
        (
            "bash <<'EOF'\necho $X; git reset --hard\nEOF",
            "git_reset_hard",
        ),
        ("sh <<< \"git reset --hard\"", "git_reset_hard"),
        ("echo \"git reset --hard\" | sh", "git_reset_hard"),
        ("echo 'rm -rf .git' | bash -s", "rm_project"),
    ] {
        let f = findings(&["bash", "-c", script]);
        assert!(f.iter().any(|i| i == id), "{script}: {f:?}");
    }
    for script in [
        "bash <<EOF\ngit status\nEOF",
        "sh <<< \"ls -la\"",
        "echo 'make test' | sh",
        "python3 <<EOF\nimport os\nEOF",
    ] {
        let f = findings(&["bash", "-c", script]);
        assert!(f.is_empty(), "{script}: {f:?}");
        assert!(!known_safe(&["bash", "-c", script]), "{script}");
    }
}

/// Attack pass 62: a command line git is handed to run — a command key given with `-c`
/// or `GIT_CONFIG_KEY_n`, a command variable, a subcommand's command argument — is
/// checked as what it runs; twins: a harmless pager or editor finds nothing.
#[test]
fn command_lines_handed_to_git_are_checked() {
    bash_findings(
        &[
        (
            "git -c core.fsmonitor='git reset --hard' status",
            "git_reset_hard",
        ),
        ("git -c diff.external='rm -rf .git #' diff", "rm_project"),
        ("git -c pager.log='!git clean -fdx' log", "git_clean"),
        (
            "GIT_EXTERNAL_DIFF='git stash clear #' git diff",
            "git_discard_changes",
        ),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf *' git log",
            "rm_project",
        ),
        (
            "git submodule foreach --recursive 'git reset --hard'",
            "git_reset_hard",
        ),
        ("git bisect run rm -rf .", "rm_project"),
        ("git rebase -x 'git clean -fdx' HEAD~3", "git_clean"),
        ("git difftool -y --extcmd='rm -rf *'", "rm_project"),
        (
            "git filter-branch --tree-filter 'rm -rf .git' HEAD",
            "rm_project",
        ),
        (
            "GIT_CONFIG_PARAMETERS=\"'core.pager'='x'\" git log",
            "git_alias",
        ),

        ],
        &[

        "git -c core.pager=cat log",
        "GIT_PAGER=cat git log -5",
        "git -c user.name=x commit -m m",
        "git submodule foreach git pull",
        "git rebase -x 'cargo test' HEAD~3",

        ],
    );
}

/// New-user pass nu62: as root (home `/root`), a path below the home is no system path;
/// the home itself still is critical, and a home inside a system tree protects nothing.
#[test]
fn below_roots_home_is_not_a_system_path() {
    let ids = |script: &str, home: &str| {
        let argv: Vec<String> = ["bash", "-c", script]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut ctx = EvalContext::default();
        ctx.home = Some(home.into());
        Policy::empty()
            .evaluate(&argv, &ctx)
            .segments
            .iter()
            .flat_map(|s| s.findings.iter().map(|f| f.id.as_str().to_string()))
            .collect::<Vec<_>>()
    };
    assert!(ids("rm -rf ~/x", "/root").is_empty());
    assert!(ids("rm -rf /root/.cache/pip", "/root").is_empty());
    assert!(ids("rm -rf ~", "/root").contains(&"rm_recursive_critical".to_string()));
    assert!(ids("rm -rf /root", "/home/u").contains(&"rm_recursive_critical".to_string()));
    assert!(ids("rm -rf /root/x", "/home/u").contains(&"rm_recursive_critical".to_string()));
    assert!(ids("rm -rf ~/passwd", "/etc").contains(&"rm_recursive_critical".to_string()));
}

/// New-user pass nu62: the reason of an `ask` names the segment that asks in every mode
/// (here `git reset --hard`'s finding), not an unknown segment before it.
#[test]
fn the_reason_names_the_segment_that_asks() {
    let rec = eval(&["bash", "-c", "make clean; git reset --hard"]);
    assert_eq!(rec.decision, Decision::Ask);
    assert!(
        rec.reason.contains("segment 1") && rec.reason.contains("needs approval"),
        "{}",
        rec.reason
    );
}

/// New-user pass nu63 and attack pass 63: the project is the work tree's top, a glob asks
/// only when it takes everything, `.git` asks only for its history, a `..` inside the
/// project is no escape, and a narrowed `find -exec rm {}` is ordinary work; a catch-all
/// find, braces, a find from a run-time directory and deletes of history files ask.
#[test]
fn project_deletes_are_read_against_the_work_tree() {
    let at = |cwd: &str, script: &str| {
        let argv: Vec<String> = ["bash", "-c", script]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let ctx = EvalContext::default()
            .with_cwd(cwd)
            .with_project("/var/tmp/w/proj");
        let rec = Policy::empty().evaluate(&argv, &ctx);
        let ids: Vec<String> = rec
            .segments
            .iter()
            .flat_map(|s| s.findings.iter().map(|f| f.id.as_str().to_string()))
            .collect();
        (rec.decision, ids)
    };
    let top = "/var/tmp/w/proj";
    let sub = "/var/tmp/w/proj/tests";
    for (cwd, script) in [
        (top, "rm -rf *.log"),
        (top, "rm -rf build/ dist/ *.egg-info"),
        (top, "rm -rf tmp*"),
        (sub, "cd build && rm -rf *"),
        (sub, "rm -rf *"),
        (top, "rm -rf .git/rebase-merge"),
        (top, "rm -f .git/index.lock"),
        (top, "find . -name __pycache__ -exec rm -rf {} +"),
        (
            top,
            "find . -name __pycache__ -type d -prune -exec rm -rf {} +",
        ),
        (top, "find . -name '*.pyc' -o -name '*.pyo' -delete"),
        (sub, "rm -rf ../build"),
        (sub, "rm -r ../build/sub"),
    ] {
        let (d, ids) = at(cwd, script);
        assert!(ids.is_empty(), "{cwd} {script}: {ids:?}");
        assert_ne!(d, Decision::Forbid, "{script}");
    }
    for (cwd, script) in [
        (top, "find -delete"),
        (top, "find . -name '*' -delete"),
        (top, "find . -regex '.*' -delete"),
        (top, "find \"$PWD\" -delete"),
        (top, "find . -type f -exec rm -f {} +"),
        (top, "rm -rf {.git,src}"),
        (top, "rm -rf .{git,x}"),
        (top, "rm -f .git/objects/*/* .git/HEAD"),
        (sub, "rm -rf .."),
        (top, "rm -rf ../proj"),
        (sub, "rm -rf ../*"),
    ] {
        let (d, ids) = at(cwd, script);
        assert!(
            ids.iter().any(|i| i == "rm_project"),
            "{cwd} {script}: {ids:?}"
        );
        assert_eq!(d, Decision::Ask, "{script}");
    }
    // Leaving the project with `..` stays forbidden.
    assert_eq!(at(top, "rm -rf ../other").0, Decision::Forbid);
}

/// Attack pass 63: commands git runs through transport and pager options, `ext::` URLs,
/// `core.alternateRefsCommand`, a printf or `/dev/stdin` fed to a shell, `patch -R` and
/// moving the history away are checked; twins stay quiet.
#[test]
fn more_commands_handed_to_git_and_shells_are_checked() {
    bash_findings(
        &[
            (
                "git ls-remote --upload-pack='rm -rf .git;false' .",
                "rm_project",
            ),
            (
                "git fetch --upload-pack 'git reset --hard' .",
                "git_reset_hard",
            ),
            ("git clone -u 'rm -rf .git' . /tmp/x", "rm_project"),
            ("git grep -O'rm -rf .git;true' a", "rm_project"),
            (
                "git archive --exec='git stash clear' --remote=. HEAD",
                "git_discard_changes",
            ),
            (
                "git -c protocol.ext.allow=always ls-remote 'ext::sh -c x'",
                "git_alias",
            ),
            (
                "git -c core.alternateRefsCommand='rm -rf .git' fetch",
                "rm_project",
            ),
            ("printf 'rm -rf .git\\n' | sh", "rm_project"),
            ("sh /dev/stdin <<< 'git reset --hard'", "git_reset_hard"),
            ("git diff | patch -R -p1", "git_discard_changes"),
            ("mv .git/objects /tmp/", "rm_project"),
            ("mv * .git /tmp/", "rm_project"),
        ],
        &[
            "git fetch origin",
            "git config remote.x.url 'ext::sh -c id'",
            "git grep -n foo",
            "printf '%s\\n' a b | sh",
            // A patch that names the files it writes (attack pass 193 F8: one that takes
            // them from the diff may write .git/config, and asks).
            "patch -o fixed.c a.c < fix.diff",
            "mv a.txt b.txt",
            "mv build/* dist/",
        ],
    );
}

/// Attack pass 63: scheduling and locking wrappers are looked through; forms that change
/// a running process run no command.
#[test]
fn scheduling_and_lock_wrappers_are_looked_through() {
    bash_findings(
        &[
            ("ionice -c3 git reset --hard", "git_reset_hard"),
            ("ionice -c 2 -n 7 rm -rf .git", "rm_project"),
            ("chrt -f 10 git reset --hard", "git_reset_hard"),
            ("taskset -c 0 git reset --hard", "git_reset_hard"),
            ("flock /tmp/l git reset --hard", "git_reset_hard"),
            ("flock -w 5 .lock rm -rf *", "rm_project"),
        ],
        &[
            "ionice -p 123",
            "taskset -p 3 123",
            "flock -n .lock make",
            "chrt -p 123",
        ],
    );
}

/// Attack pass 63: a shell's `-c` line known only at run time asks, as a whole command
/// known only at run time does; a static line is read as usual.
#[test]
fn a_shell_line_known_only_at_run_time_asks() {
    bash_findings(
        &[
            ("bash -c \"$CMD\"", "dynamic_command"),
            (
                "xargs -I{} sh -c {} <<< 'git reset --hard'",
                "dynamic_command",
            ),
            ("sh -ec \"$(cat script)\"", "dynamic_command"),
            ("echo 'git reset --hard' | xargs sh -c", "dynamic_command"),
        ],
        &["bash -c 'make test'", "sh -c 'echo \"$1\"' _ x"],
    );
}

/// New-user pass nu63: `GIT_EDITOR=true` (cordon's own advice) and `GIT_PAGER=cat` do not
/// cap a known-safe or allowed command; an editor that runs something does.
#[test]
fn an_inert_editor_or_pager_is_no_cap() {
    assert!(known_safe(&["bash", "-c", "GIT_PAGER=cat git log -3"]));
    assert!(known_safe(&["bash", "-c", "GIT_EDITOR=true git log -3"]));
    assert!(!known_safe(&["bash", "-c", "GIT_PAGER=./p.sh git log -3"]));
}

/// New-user pass nu64: dotted branch names, `checkout -m`, a narrowed find in /tmp and a
/// worktree's bookkeeping are not asked about as losses (or forbidden); a source file is.
#[test]
fn dotted_branches_and_narrowed_finds_are_everyday_work() {
    bash_findings(
        &[
            ("git checkout main.rs", "git_discard_changes"),
            ("git checkout src/app.py", "git_discard_changes"),
        ],
        &[
            "git checkout 2.x",
            "git checkout fix.typo",
            "git checkout renovate/react-18.x",
            "git checkout -b 2.x-fix origin/2.x",
            "git checkout feature.login --",
            "git checkout -m feature",
            "rm -rf .git/worktrees/wt",
        ],
    );
    let rec = eval(&["bash", "-c", "find /tmp -name '*.log' -delete"]);
    assert_eq!(rec.decision, Decision::Ask, "{}", rec.reason);
    assert_eq!(
        eval(&["bash", "-c", "find /tmp -delete"]).decision,
        Decision::Forbid
    );
}

/// New-user pass nu65: a glob naming `.git`, a find selecting `.git`, an alias or command
/// key set for a later command of the run, and `tar --remove-files` of the project ask;
/// `--help` and a reporting `git apply --check -R` do not.
#[test]
fn git_globs_config_sets_and_reports() {
    bash_findings(
        &[
            ("rm -rf .gi?", "rm_project"),
            ("rm -rf .g*", "rm_project"),
            ("find . -name .git -exec rm -rf {} +", "rm_project"),
            ("git config alias.x 'reset --hard' && git x", "git_alias"),
            (
                "git config -f .git/config alias.y '!git reset --hard'",
                "git_alias",
            ),
            ("git config set core.fsmonitor 'rm -rf src'", "git_alias"),
            ("tar -cf /dev/null . --remove-files", "rm_project"),
        ],
        &[
            "git reset --hard --help",
            "git clean --help",
            "git apply --check -R x.patch",
            "git apply -R --stat x.patch",
            "git config user.email a@b",
            "git config --get alias.x",
            "rm -rf .github/tmp",
            "tar -czf out.tgz src",
        ],
    );
}

/// The findings of `bash -c SCRIPT` run at the top of the project `/var/tmp/w/proj`.
fn project_findings(script: &str) -> Vec<String> {
    let argv: Vec<String> = ["bash", "-c", script]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let ctx = EvalContext::default()
        .with_cwd("/var/tmp/w/proj")
        .with_project("/var/tmp/w/proj");
    Policy::empty()
        .evaluate(&argv, &ctx)
        .segments
        .iter()
        .flat_map(|s| s.findings.iter().map(|f| f.id.as_str().to_string()))
        .collect()
}

/// A symbolic link made earlier on the command line to `.git`, the project or a directory
/// holding it, then deleted through (`g/`, `up/*`), deletes what it points to; deleting the
/// link itself or a link to a build directory does not.
#[test]
fn a_delete_through_a_link_made_earlier_is_read_through_it() {
    for script in [
        "ln -s .git g; rm -rf g/",
        "ln -s .. up && rm -rf up/*",
        "ln -sfn /var/tmp/w/proj/.git x; rm -r x/",
        "ln -s . here && rm -rf here/*",
        "ln -s .git a && ln -s a b && rm -rf b/",
        "ln -sr .git sub/g && rm -rf sub/g/objects",
        "ln -s -t links ../proj/.git && rm -rf links/.git/",
        "ln --symbolic .git g; find g/ -delete",
        "ln -s .git g && mv g/objects /tmp/",
    ] {
        for f in [project_findings(script), findings(&["bash", "-c", script])] {
            assert!(f.iter().any(|i| i == "rm_project"), "{script}: {f:?}");
        }
    }
    for script in [
        "ln -s .git g; rm g",
        "ln -s .git g; rm -rf g",
        "ln -s build b && rm -rf b/*",
        "ln -s /tmp/cache c; rm -rf c/",
        "ln .git/config cfg; rm -rf cfg/",
    ] {
        for f in [project_findings(script), findings(&["bash", "-c", script])] {
            assert!(f.is_empty(), "{script}: {f:?}");
        }
    }
}

/// What a pipe hands the next stage is read with it: a reversed diff applied, a git
/// archive extracted over the work tree, and the files `git ls-files` lists fed to rm
/// undo or delete work; a report, another directory and a narrowed list do not.
#[test]
fn work_undone_through_a_pipe_is_asked_about() {
    bash_findings(
        &[
            ("git diff -R | git apply", "git_discard_changes"),
            ("git diff -R HEAD -- src | patch -p1", "git_discard_changes"),
            (
                "git archive HEAD | tar -x --overwrite",
                "git_discard_changes",
            ),
            ("git archive HEAD | tar -xf - -C .", "git_discard_changes"),
            (
                "git archive --format=tar HEAD | tar xv",
                "git_discard_changes",
            ),
            ("git ls-files | xargs rm", "rm_project"),
            ("git ls-files -z | xargs -0 rm -f", "rm_project"),
            ("git ls-files -m src | xargs rm", "rm_project"),
            ("git ls-files --others | xargs -r rm", "rm_project"),
        ],
        &[
            "git diff -R > undo.patch",
            "git diff -R | git apply --check",
            "git diff | git apply --cached",
            "git diff -R | patch --dry-run -p1",
            "git archive HEAD | tar -x -C /tmp/export",
            "git archive HEAD | tar -t",
            "git archive HEAD | tar -xk",
            "git archive --prefix=v1/ HEAD | tar -x",
            "tar -xzf vendor.tgz",
            "git ls-files '*.orig' | xargs rm",
            "git ls-files | xargs wc -l",
        ],
    );
    let f = project_findings("cd /var/tmp/w && git archive HEAD | tar -x -C proj");
    assert!(f.iter().any(|i| i == "git_discard_changes"), "{f:?}");
}

/// `git update-index --force-remove` drops staged work, and an interactive rebase whose
/// todo list an editor command edits with no person looking (`sed -i 1d`) may drop
/// commits; other index updates, inert editors and a rebase that is not interactive do
/// not.
#[test]
fn index_removals_and_scripted_todo_editors_ask() {
    bash_findings(
        &[
            ("git update-index --force-remove X", "git_discard_changes"),
            (
                "git update-index --force-rem -- a.txt b.txt",
                "git_discard_changes",
            ),
            (
                "GIT_SEQUENCE_EDITOR='sed -i 1d' git rebase -i HEAD~3",
                "git_discard_changes",
            ),
            (
                "git -c sequence.editor='sed -i 2d' rebase --interactive main",
                "git_discard_changes",
            ),
            (
                "GIT_EDITOR='sed -i /fixup/d' git rebase -ki HEAD~5",
                "git_discard_changes",
            ),
            (
                "GIT_SEQUENCE_EDITOR=./drop.sh git rebase --edit-todo",
                "git_discard_changes",
            ),
        ],
        &[
            "git update-index --refresh",
            "git update-index --assume-unchanged f.txt",
            "git update-index --remove gone.txt",
            "GIT_SEQUENCE_EDITOR=true git rebase -i --autosquash HEAD~3",
            "GIT_SEQUENCE_EDITOR=: git rebase -i main",
            "GIT_SEQUENCE_EDITOR=true GIT_EDITOR=vim git rebase -i HEAD~2",
            "GIT_SEQUENCE_EDITOR='sed -i 1d' git rebase -Xignore-all-space main",
            "GIT_EDITOR='sed -i 1d' git commit --amend",
        ],
    );
}

/// Code taken from a variable — given to `eval`, fed to a shell or `source /dev/stdin` by
/// a herestring, a heredoc or `echo "$x" |`, or handed over as `<(echo "$x")` — is a
/// command known only at run time (`dynamic_command`), as `$x` alone is; static text,
/// `eval "$(…)"` and a shell running a script file are not.
#[test]
fn code_from_a_variable_is_a_dynamic_command() {
    bash_findings(
        &[
            ("source /dev/stdin <<< \"$x\"", "dynamic_command"),
            (". /dev/stdin <<<\"$cmd\"", "dynamic_command"),
            ("bash <(echo \"$x\")", "dynamic_command"),
            ("eval \"$x\"", "dynamic_command"),
            ("eval $x", "dynamic_command"),
            ("echo \"$x\" | sh", "dynamic_command"),
            ("sh <<< \"$x\"", "dynamic_command"),
            ("eval \"git $sub --hard\"", "dynamic_command"),
            ("bash -s <<< \"$x\"", "dynamic_command"),
            ("printf '%s\\n' \"$cmd\" | bash", "dynamic_command"),
            ("source <(echo \"$x\")", "dynamic_command"),
            ("printf '%s' \"$x\" | source /dev/fd/0", "dynamic_command"),
            ("bash <<EOF\n$cmd\nEOF", "dynamic_command"),
        ],
        &[
            "eval ls",
            "eval \"$(ssh-agent -s)\"",
            "sh <<< 'ls -la'",
            "echo \"$x\" | cat",
            "bash script.sh <<< \"$x\"",
            "echo \"$x\"",
            "source ./env.sh",
        ],
    );
}

/// New-user pass nu64 asked why `cd build && rm -rf *` asks: with `&&` (or `cd build ||
/// exit` before it) the delete runs only where the `cd` took it, so it is no delete of
/// the project's top. Where it may still run at the top — after `;`, `|| true`, a `cd`
/// to a place known only at run time, a `cd` back up — or takes a directory holding the
/// project, it still asks; deletes of `/` and home stay forbidden.
#[test]
fn a_delete_after_a_cd_that_must_have_succeeded_is_judged_there() {
    for script in [
        "cd build && rm -rf *",
        "cd build || exit; rm -rf *",
        "cd build || exit 1\nrm -rf *",
        "cd build || { echo no; exit 1; }; rm -rf *",
        "cd build && make && rm -rf *",
        "cd build && rm -rf * || true",
        "cd build && (rm -rf *)",
        "cd build && bash -c 'rm -rf *'",
        "pushd build && rm -rf *",
    ] {
        let f = project_findings(script);
        assert!(f.is_empty(), "{script}: {f:?}");
    }
    for script in [
        "cd build; rm -rf *",
        "cd build || true; rm -rf *",
        "cd build || rm -rf *",
        "make || cd build && rm -rf *",
        "cd .. && rm -rf *",
        "cd \"$D\" && rm -rf *",
        "cd a && cd \"$X\" && rm -rf *",
        "cd build && cd .. && rm -rf *",
        "(cd build || exit; rm -rf *); rm -rf *",
        "cd build | true && rm -rf *",
        "cd build & rm -rf *",
        "cd build && rm -rf ../*",
    ] {
        let f = project_findings(script);
        assert!(f.iter().any(|i| i == "rm_project"), "{script}: {f:?}");
    }
    for script in [
        "cd / && rm -rf *",
        "cd ~ && rm -rf *",
        "cd build && rm -rf /",
        // Many `cd`s past the tracker's bound lose no directory: `/` is still one.
        &format!("cd build{}; cd /; rm -rf *", " && cd .".repeat(40)),
    ] {
        let rec = eval(&["bash", "-c", script]);
        assert_eq!(rec.decision, Decision::Forbid, "{script}");
    }
}
