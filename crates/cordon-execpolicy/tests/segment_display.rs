//! How a segment is shown in a decision's reason (new-user pass 146): as a shell would read
//! it back. An unquoted glob stays a glob (`rm -rf *`, not `rm -rf '*'`, which reads as a
//! literal star), a word that expands stays as written (`$HOME/x`), and a static word with
//! special characters is quoted — including a star the user quoted.

use cordon_execpolicy::{EvalContext, Policy};

fn shown(script: &str) -> Vec<String> {
    Policy::empty()
        .evaluate_script(script, &EvalContext::default())
        .segments
        .iter()
        .map(|s| s.segment.display())
        .collect()
}

#[test]
fn globs_and_expansions_are_shown_as_written_and_literals_quoted() {
    assert_eq!(
        shown(r#"rm -rf * src/*.o {a,b}.tmp "$HOME/x" 'a b' '*'"#),
        [r#"rm -rf * src/*.o {a,b}.tmp $HOME/x 'a b' '*'"#]
    );
    assert_eq!(shown("ls -la"), ["ls -la"]);
}

#[test]
fn the_reason_names_the_segment_as_written() {
    let rec = Policy::empty().evaluate_script("cd build; rm -rf *", &EvalContext::default());
    assert!(rec.reason.contains("`rm -rf *`"), "{}", rec.reason);
    assert!(!rec.reason.contains("'*'"), "{}", rec.reason);
}

/// New-user pass 152: a reason about a write names the write — the file redirections
/// follow the words (`echo hi > ~/.bashrc`, not "`echo hi` is forbidden"); descriptor
/// duplications do not.
#[test]
fn file_redirections_are_shown_with_the_command() {
    assert_eq!(
        shown("echo hi > /etc/motd 2>&1; sort < in.txt >> 'out file'"),
        ["echo hi > /etc/motd", "sort < in.txt >> 'out file'"]
    );
    let rec = Policy::empty().evaluate_script("echo hi > /etc/motd", &EvalContext::default());
    assert!(
        rec.reason.contains("`echo hi > /etc/motd`"),
        "{}",
        rec.reason
    );
}

/// Attack pass 188 F7: the grammar hangs a redirection after an `&&`/`||` list on the
/// whole list; bash gives it to the last command only, and only that one is shown (and
/// capped) as writing the file. Twin: a brace group's redirection is every command's.
#[test]
fn a_redirection_after_a_list_is_its_last_commands() {
    assert_eq!(
        shown("mkdir -p d && cd d && printf x >> .git/config"),
        ["mkdir -p d", "cd d", "printf x >> .git/config"]
    );
    assert_eq!(shown("false || echo no > out"), ["false", "echo no > out"]);
    assert_eq!(shown("{ a; b; } > f"), ["a > f", "b > f"]);
}

/// New-user pass 239 #6: an ask names every segment the approval covers, not the first
/// alone. Twin: one asking segment next to a safe one names only itself.
#[test]
fn the_reason_names_every_segment_the_approval_covers() {
    let rec = Policy::empty().evaluate_script(
        "bash -c 'git config core.editor vim; git config alias.st status'",
        &EvalContext::default(),
    );
    assert!(
        rec.reason
            .starts_with("segment 0 `git config core.editor vim` needs approval"),
        "{}",
        rec.reason
    );
    assert!(
        rec.reason.contains(
            "the approval also covers segment 1 `git config alias.st status`: git config sets \
             alias.st"
        ),
        "{}",
        rec.reason
    );
    let rec =
        Policy::empty().evaluate_script("git config core.editor vim; ls", &EvalContext::default());
    assert!(!rec.reason.contains("also covers"), "{}", rec.reason);
}
