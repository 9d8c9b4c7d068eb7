#![cfg_attr(not(test), allow(dead_code))] // the table is the audit; its tests read it
//! The audit of tree-sitter-bash's node kinds (R-A2): for every named kind the grammar can
//! produce, how the walk in [`crate::parse`] treats it. A kind that can run a command is
//! either walked into segments or makes the script opaque; the rest are inert words,
//! redirection parts or comments. The unit test below enumerates the grammar's kind table
//! and fails when a kind is missing here, so a grammar upgrade cannot add a command-running
//! construct silently.

/// How the walk treats a node kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KindRole {
    /// A statement: walked, its commands become segments.
    Statement,
    /// A part of a compound statement (clauses, bodies): walked for statements.
    Clause,
    /// `$(…)`, backticks, `<(…)`, `>(…)`: the inner commands become segments (and the
    /// construct is recorded).
    Substitution,
    /// Arithmetic: recorded as opaque `arithmetic` (subscripts may run code); substitutions
    /// inside are still walked.
    Arithmetic,
    /// A word or part of one: evaluated; substitutions inside are walked.
    Word,
    /// Part of a redirection: evaluated like words (heredoc bodies are scanned).
    Redirect,
    /// Runs nothing and contains no command.
    Inert,
    /// A parse error: opaque `parse_error`, statements inside still walked.
    Error,
}

/// Every named node kind of tree-sitter-bash, with its role and a script containing it.
/// For kinds that run commands the example hides `rm -rf /` in that kind (it must be
/// forbidden); for arithmetic the example must not be allowed.
pub(crate) const NODE_KINDS: &[(&str, KindRole, &str)] = {
    use KindRole::*;
    &[
        ("program", Statement, "rm -rf /"),
        ("command", Statement, "rm -rf /"),
        ("redirected_statement", Statement, "rm -rf / > /dev/null"),
        ("list", Statement, "true && rm -rf /"),
        ("pipeline", Statement, "true | rm -rf /"),
        ("subshell", Statement, "(rm -rf /)"),
        ("compound_statement", Statement, "{ rm -rf /; }"),
        ("negated_command", Statement, "! rm -rf /"),
        ("function_definition", Statement, "f() { rm -rf /; }"),
        ("if_statement", Statement, "if true; then rm -rf /; fi"),
        (
            "elif_clause",
            Clause,
            "if false; then :; elif true; then rm -rf /; fi",
        ),
        ("else_clause", Clause, "if false; then :; else rm -rf /; fi"),
        (
            "while_statement",
            Statement,
            "while true; do rm -rf /; done",
        ),
        ("for_statement", Statement, "for x in a; do rm -rf /; done"),
        (
            "c_style_for_statement",
            Statement,
            "for ((;;)); do rm -rf /; done",
        ),
        ("do_group", Clause, "select x in a; do rm -rf /; done"),
        ("case_statement", Statement, "case x in x) rm -rf /;; esac"),
        ("case_item", Clause, "case x in y) :;; x) rm -rf /;; esac"),
        ("test_command", Statement, "[[ -n $(rm -rf /) ]]"),
        ("declaration_command", Statement, "declare x=$(rm -rf /)"),
        ("unset_command", Statement, "unset x $(rm -rf /)"),
        ("variable_assignment", Statement, "x=$(rm -rf /)"),
        ("variable_assignments", Statement, "x=1 y=$(rm -rf /)"),
        ("command_substitution", Substitution, "echo $(rm -rf /)"),
        ("process_substitution", Substitution, "cat <(rm -rf /)"),
        (
            "arithmetic_expansion",
            Arithmetic,
            "echo $((1 + $(rm -rf /)))",
        ),
        ("binary_expression", Arithmetic, "echo $((1 + $(rm -rf /)))"),
        ("unary_expression", Arithmetic, "echo $((-$(rm -rf /)))"),
        ("postfix_expression", Arithmetic, "((x++))"),
        (
            "ternary_expression",
            Arithmetic,
            "echo $((1 ? $(rm -rf /) : 2))",
        ),
        (
            "parenthesized_expression",
            Arithmetic,
            "echo $(( ($(rm -rf /)) ))",
        ),
        ("subscript", Arithmetic, "a[$(rm -rf /)]=1"),
        ("command_name", Word, "rm -rf /"),
        ("word", Word, "rm -rf /"),
        ("string", Word, "echo \"$(rm -rf /)\""),
        ("string_content", Word, "echo \"x\"; rm -rf /"),
        ("raw_string", Word, "'rm' -rf /"),
        ("ansi_c_string", Word, "$'rm' -rf /"),
        ("translated_string", Word, "$\"rm\" -rf /"),
        ("concatenation", Word, "echo a$(rm -rf /)"),
        ("number", Word, "echo 1; rm -rf /"),
        ("simple_expansion", Word, "echo $x; rm -rf /"),
        ("expansion", Word, "echo ${x:-$(rm -rf /)}"),
        ("brace_expression", Word, "echo {1..2}; rm -rf /"),
        ("array", Word, "x=(a $(rm -rf /))"),
        ("extglob_pattern", Word, "case x in *) rm -rf /;; esac"),
        ("regex", Word, "[[ x =~ ^a$ ]] && rm -rf /"),
        ("variable_name", Word, "x=1; rm -rf /"),
        ("special_variable_name", Word, "echo $?; rm -rf /"),
        ("test_operator", Word, "[ -n x ] && rm -rf /"),
        ("file_redirect", Redirect, "echo > >(rm -rf /)"),
        ("file_descriptor", Redirect, "rm -rf / 2>/dev/null"),
        ("herestring_redirect", Redirect, "cat <<< $(rm -rf /)"),
        ("heredoc_redirect", Redirect, "cat <<EOF\n$(rm -rf /)\nEOF"),
        ("heredoc_start", Redirect, "cat <<EOF\n$(rm -rf /)\nEOF"),
        ("heredoc_body", Redirect, "cat <<EOF\n$(rm -rf /)\nEOF"),
        (
            "heredoc_content",
            Redirect,
            "cat <<EOF\n${x}a $(rm -rf /)\nEOF",
        ),
        ("heredoc_end", Redirect, "cat <<EOF\n$(rm -rf /)\nEOF"),
        ("comment", Inert, "rm -rf / # c"),
        ("ERROR", Error, "rm -rf / )"),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Decision, EvalContext, Policy};

    fn contains_kind(n: tree_sitter::Node<'_>, k: &str) -> bool {
        if n.kind() == k {
            return true;
        }
        let mut c = n.walk();
        let found = n.children(&mut c).any(|ch| contains_kind(ch, k));
        found
    }

    /// Every named, visible kind in the grammar's kind table is classified here.
    #[test]
    fn every_grammar_kind_is_classified() {
        let lang: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
        let mut missing = Vec::new();
        for id in 0..lang.node_kind_count() as u16 {
            if !lang.node_kind_is_named(id) || !lang.node_kind_is_visible(id) {
                continue;
            }
            let Some(name) = lang.node_kind_for_id(id) else {
                continue;
            };
            if !NODE_KINDS.iter().any(|(k, _, _)| *k == name) {
                missing.push(name);
            }
        }
        assert!(
            missing.is_empty(),
            "tree-sitter-bash node kinds not classified in grammar.rs (decide whether each \
             runs commands and how the walk handles it): {missing:?}"
        );
    }

    /// Each example contains its kind, and hiding `rm -rf /` in a command-running kind is
    /// still forbidden (arithmetic: never allowed).
    #[test]
    fn command_running_kinds_are_seen() {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
        let policy = Policy::empty();
        let mut failures = Vec::new();
        for (kind, role, example) in NODE_KINDS {
            let tree = p.parse(example, None).unwrap();
            if !contains_kind(tree.root_node(), kind) {
                failures.push(format!(
                    "example for {kind} does not contain it: {example:?} → {}",
                    tree.root_node().to_sexp()
                ));
            }
            let rec = policy.evaluate_script(example, &EvalContext::default());
            let ok = if example.contains("rm -rf /") {
                rec.decision == Decision::Forbid
            } else {
                rec.decision != Decision::Allow
            };
            if !ok || (*role == KindRole::Arithmetic && rec.opaque.is_empty()) {
                failures.push(format!("{kind}: {example:?}\n{rec}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
