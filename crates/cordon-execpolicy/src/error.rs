//! Load errors for rule files (R-A3).

use std::fmt;

/// Where a rule came from: `SOURCE[:LINE]: rule #N PATTERN` (`N` counted from 1; `LINE`
/// the line of the key at fault when known, else the rule's table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleLocation {
    /// The source label given to the loader (usually the file path).
    pub source_label: String,
    /// 1-based line of the key the error is about (else of the rule's table), when known.
    pub line: Option<usize>,
    /// 0-based index of the rule in its source (said as `#index+1`).
    pub index: usize,
    /// The rule's pattern as written (`["git", ["status", "diff"]]`), or `<invalid>`.
    pub pattern: String,
}

impl fmt::Display for RuleLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source_label)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        // Counted from 1, as people count (new-user pass: the first rule was `#0`).
        write!(f, ": rule #{} {}", self.index + 1, self.pattern)
    }
}

/// Why a rule source could not be loaded (R-A3). Every variant names the source label; the
/// rule-level variants also name the rule (index, pattern and, if known, line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The text is not valid TOML, or `rules` is not an array of tables.
    #[error("{source_label}: invalid rules TOML: {message}")]
    Toml {
        /// Source label.
        source_label: String,
        /// Parser message (includes the line when the TOML parser reports one).
        message: String,
    },
    /// A rule is malformed: missing/invalid `pattern` or `decision`, unknown key, wrong type.
    #[error("{at}: {message}")]
    InvalidRule {
        /// The rule.
        at: RuleLocation,
        /// What is wrong.
        message: String,
    },
    /// One of the rule's `examples` does not match the rule.
    #[error(
        "{at}: example {example:?} does not match this rule; widen the pattern or correct the example"
    )]
    ExampleDoesNotMatch {
        /// The rule.
        at: RuleLocation,
        /// The example as written.
        example: String,
    },
    /// One of the rule's `counterexamples` matches the rule.
    #[error(
        "{at}: counterexample {example:?} matches this rule; narrow the pattern or correct the counterexample"
    )]
    CounterexampleMatches {
        /// The rule.
        at: RuleLocation,
        /// The counterexample as written.
        example: String,
    },
}
