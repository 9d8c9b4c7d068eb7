//! Parsed-command data model (R-A2): what the parser extracts from an argv.
//!
//! Everything here is plain data, `serde`-serialisable with a stable JSON shape (field names
//! are part of the contract: `cordon check --json` prints them).

use serde::Serialize;

/// The outcome of the approval dimension for a command or one of its segments (R-A1, R-A3).
///
/// Ordered by strictness: `Allow < Ask < Forbid`, so `max()` combines decisions
/// ("strictest wins"). Serialises as `"allow"`, `"ask"`, `"forbid"`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run without asking.
    Allow,
    /// A human (or the approval mode, in another layer) must decide.
    Ask,
    /// Never run; the record says why.
    Forbid,
}

impl Decision {
    /// The lowercase name used in TOML and JSON (`"allow"`, `"ask"`, `"forbid"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Forbid => "forbid",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of parsing an argv (or a script) into simple commands (R-A2).
///
/// `segments` are every simple command found, in source order, with commands found inside a
/// command's own words (command/process substitutions) listed right after that command.
/// `opaque` lists every construct whose effect cannot be known statically; a non-empty list
/// means the command can never be allowed by rule (at best `ask`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedCommand {
    /// The simple commands found (after looking through wrappers such as `env`, `sudo`, `bash -c`).
    pub segments: Vec<Segment>,
    /// Constructs that make the command opaque (empty = fully understood).
    pub opaque: Vec<OpaqueConstruct>,
    /// Stand-alone shell variable assignments (`X=1; …`, `export X=1`) seen in scripts.
    pub assignments: Vec<EnvAssignment>,
}

impl ParsedCommand {
    /// True when any construct could not be understood statically.
    pub fn is_opaque(&self) -> bool {
        !self.opaque.is_empty()
    }
}

/// A construct that prevents static understanding of a script (R-A2), e.g.
/// `{"kind": "command_substitution", "text": "$(date)"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpaqueConstruct {
    /// Short stable name (`command_substitution`, `backticks`, `process_substitution`, `eval`,
    /// `source`, `heredoc_to_interpreter`, `function_definition`, `if`, `for`, `while`,
    /// `until`, `case`, `dynamic_command_name`, `glob_command_name`, `alias`, `exec_fd`,
    /// `arithmetic`, `parse_error`, `env_split_string`, `nesting_too_deep`, …).
    pub kind: String,
    /// The source text (truncated to 80 characters).
    pub text: String,
}

/// One simple command (R-A2): a program and its arguments, after wrappers were looked through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// The effective argv (wrappers removed). Dynamic words keep their source spelling
    /// (`$HOME`, `$(date)`), see `dynamic_args`.
    pub argv: Vec<String>,
    /// Indices into `argv` of words whose value is not known statically.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dynamic_args: Vec<usize>,
    /// How the program name was resolved.
    pub program: Program,
    /// Wrappers looked through, outermost first (`env -i`, `timeout 5`, `bash -lc`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wrappers: Vec<Wrapper>,
    /// Environment assignments applied to this command (`VAR=x cmd`, `env VAR=x cmd`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvAssignment>,
    /// Redirections applied to this command (its own and those of enclosing groups/shells).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redirections: Vec<Redirection>,
    /// Syntactic context, outermost first (`subshell`, `command_substitution`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<Context>,
    /// Position in a pipeline, if the command is a pipeline stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<PipelinePosition>,
    /// Index of the segment whose words contained the substitution this segment came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
    /// True when more arguments arrive at run time (`xargs`, `find -exec … {}`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub runtime_args: bool,
    /// True when the command is started in the background (`cmd &`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
    /// A directory change applied by a wrapper (`env -C DIR`, `sudo -D DIR`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chdir: Option<String>,
    /// Free-form observations (e.g. "argument 2 expands $FOO").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Segment {
    /// True when `argv[i]` exists and is statically known.
    pub fn is_static(&self, i: usize) -> bool {
        i < self.argv.len() && !self.dynamic_args.contains(&i)
    }

    /// Output redirections to real files (not `/dev/null`, not fd duplications).
    pub fn file_writes(&self) -> impl Iterator<Item = &Redirection> {
        self.redirections.iter().filter(|r| r.writes_file())
    }
}

/// How a segment's program name was resolved (R-A2, R-A4; see the crate docs on trusted
/// locations).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Program {
    /// The name rules match against: the basename for bare names and trusted absolute
    /// paths, otherwise the spelling as written.
    pub name: String,
    /// Classification of the spelling.
    pub kind: ProgramKind,
}

impl Program {
    /// True when rules may `allow` this program by name and the known-safe list applies:
    /// a bare ASCII name or an absolute path in a trusted location.
    pub fn is_trusted_name(&self) -> bool {
        matches!(self.kind, ProgramKind::Bare | ProgramKind::TrustedPath)
    }
}

/// Classification of a program spelling (R-A2, R-A4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramKind {
    /// A plain ASCII name looked up in `PATH` (`git`).
    Bare,
    /// An absolute path in a trusted location for that program (`/usr/bin/git`).
    TrustedPath,
    /// An absolute path outside the trusted locations (`/tmp/git`): never matches a
    /// basename rule, never known-safe.
    UntrustedPath,
    /// A relative path (`./gradlew`, `bin/tool`): matches only rules spelling that path.
    RelativePath,
    /// The name contains non-ASCII characters (possible look-alike): never allowed.
    NonAscii,
    /// The name is not statically known (`$CMD`, `$(…)`, globs).
    Dynamic,
}

/// A wrapper that was looked through (R-A2), e.g.
/// `{"name": "timeout", "argv": ["timeout", "5"]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wrapper {
    /// The wrapper's canonical name (`env`, `timeout`, `nice`, `nohup`, `sudo`, `doas`,
    /// `exec`, `command`, `builtin`, `xargs`, `time`, `stdbuf`, `setsid`, `bash`, `sh`,
    /// `zsh`, `dash`, `find -exec`).
    pub name: String,
    /// The wrapper's own words (for shells: without the script).
    pub argv: Vec<String>,
}

/// An environment assignment (R-A2), e.g. `{"name": "RUST_LOG", "value": "debug"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvAssignment {
    /// Variable name.
    pub name: String,
    /// Value (source spelling when dynamic).
    pub value: String,
    /// True when the value is not known statically.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dynamic: bool,
}

/// A redirection (R-A2), e.g. `{"op": ">", "kind": "write", "target": "/etc/passwd"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirection {
    /// Explicit file descriptor (`2` in `2>/dev/null`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fd: Option<String>,
    /// Operator as written (`>`, `>>`, `<`, `&>`, `>&`, `<<`, `<<<`, …).
    pub op: String,
    /// Direction / effect.
    pub kind: RedirectKind,
    /// Target path, fd number, heredoc delimiter or herestring text (source spelling).
    pub target: String,
    /// True when the target is not known statically.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dynamic: bool,
}

impl Redirection {
    /// True for output redirections to something other than a harmless device
    /// (`/dev/null`, `/dev/stdout`, `/dev/stderr`, `/dev/tty`, `/dev/fd/N`).
    pub fn writes_file(&self) -> bool {
        matches!(
            self.kind,
            RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite
        ) && (self.dynamic || !is_harmless_device(&self.target))
    }
}

/// True for device paths that are harmless redirection targets.
pub(crate) fn is_harmless_device(t: &str) -> bool {
    matches!(
        t,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/stdin"
    ) || t
        .strip_prefix("/dev/fd/")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// What a redirection does (R-A2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RedirectKind {
    /// `< file`
    Read,
    /// `> file`, `>| file`, `&> file`
    Write,
    /// `>> file`, `&>> file`
    Append,
    /// `<> file`
    ReadWrite,
    /// `2>&1`, `>&-`: duplicate or close a descriptor.
    Dup,
    /// `<<EOF`
    Heredoc,
    /// `<<< text`
    Herestring,
}

/// Syntactic context of a segment (R-A2). JSON: `"subshell"`, `{"function": "f"}`,
/// `{"control_flow": "for"}`, …
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Context {
    /// Inside `$(…)` or backticks.
    CommandSubstitution,
    /// Inside `<(…)` / `>(…)`.
    ProcessSubstitution,
    /// Inside `( … )`.
    Subshell,
    /// Inside `{ …; }`.
    BraceGroup,
    /// Inside the body of a function definition with this name.
    Function(String),
    /// Inside `if`/`for`/`while`/`until`/`case`/`select`.
    ControlFlow(String),
    /// The command run by `find -exec`/`-execdir`/`-ok`/`-okdir`.
    FindExec,
    /// Text given to `eval` (parsed when static).
    Eval,
    /// The value of an `alias` definition (parsed when static).
    Alias,
    /// The action of a `trap` (parsed when static).
    Trap,
}

/// A pipeline stage (R-A2): `{"id": 0, "index": 1, "len": 3}` is the second of three
/// stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PipelinePosition {
    /// Pipeline number, unique within one parse.
    pub id: usize,
    /// 0-based stage index.
    pub index: usize,
    /// Number of stages.
    pub len: usize,
}
