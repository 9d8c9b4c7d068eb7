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
