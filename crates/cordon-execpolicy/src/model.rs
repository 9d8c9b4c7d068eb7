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
    /// What kind of construct (JSON: its snake_case name).
    pub kind: OpaqueKind,
    /// The source text (truncated to 80 characters).
    pub text: String,
}

/// The kinds of [`OpaqueConstruct`] (R-A2). Serialises as the snake_case name
/// (`"command_substitution"`); `Display` prints the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpaqueKind {
    /// An empty argv.
    EmptyCommand,
    /// A wrapper option cordon does not know (`env --frob`).
    UnknownWrapperOption,
    /// `coproc`: the command runs as a coprocess.
    Coproc,
    /// Nesting depth or nested shells beyond the bound.
    NestingTooDeep,
    /// More script text than the parse budget.
    InputTooLarge,
    /// The script does not parse.
    ParseError,
    /// Arithmetic evaluation (`$(( ))`, `(( ))`, `let`, subscripts): may run code held in variables.
    Arithmetic,
    /// A function definition.
    FunctionDefinition,
    /// An `if` statement.
    If,
    /// A `while` loop.
    While,
    /// An `until` loop.
    Until,
    /// A `for` loop.
    For,
    /// A `select` loop.
    Select,
    /// A `case` statement.
    Case,
    /// A stand-alone assignment to a sensitive variable (`PATH=…`).
    SensitiveAssignment,
    /// `$(…)`.
    CommandSubstitution,
    /// `` `…` ``.
    Backticks,
    /// `<(…)` / `>(…)`.
    ProcessSubstitution,
    /// An expansion the grammar left as text (backticks inside `${…}` or a heredoc).
    UnparsedExpansion,
    /// A node the walk does not know.
    UnknownSyntax,
    /// A shell whose options are not static (`bash $FLAGS`).
    DynamicShellArguments,
    /// `env -S STRING`.
    EnvSplitString,
    /// A shell script that is not static (`bash -c "$X"`).
    DynamicShellScript,
    /// `xargs sh -c '…'`: the script's arguments arrive at run time.
    RuntimeScriptArguments,
    /// More segments than the bound.
    TooManySegments,
    /// An empty program name.
    EmptyCommandName,
    /// A program name known only at run time (`$CMD`).
    DynamicCommandName,
    /// A glob as the program name (`r*m`).
    GlobCommandName,
    /// `eval` (its static text is parsed too).
    Eval,
    /// `alias` (static values are parsed too).
    Alias,
    /// `trap` (static actions are parsed too).
    Trap,
    /// `source` / `.`.
    Source,
    /// `exec` with only redirections.
    ExecFd,
    /// `enable` (loads or toggles builtins).
    Enable,
    /// `hash` (changes program lookup).
    Hash,
    /// A builtin that runs text as code (`mapfile -C`, `compgen -C`/`-F`/`-W`): static
    /// text is parsed too.
    BuiltinRunsCode,
    /// A builtin that runs code the script does not show (attack pass 200 P1): `fc`
    /// re-running history (`history -s 'git reset --hard'; fc -s`), a callback, command
    /// or word list known only at run time (`mapfile -C "$cb"`, `compgen -W "$x"`),
    /// `bind -x`, `enable -f` loading a builtin from a shared object.
    BuiltinRunsUnseenCode,
    /// A heredoc or herestring feeding an interpreter.
    HeredocToInterpreter,
    /// A pipe, or the command's own standard input ([`crate::RUN_TIME_STDIN_VAR`]), feeding an
    /// interpreter its program.
    StdinScript,
    /// `find -exec` without `;` or `+`.
    FindExecUnterminated,
    /// `unset` of a function defined earlier (or `unset -f`): later calls run a program.
    UnsetFunction,
    /// A `{ …; }` or `( … )` group after `time`, `coproc` or `!` that the grammar splits.
    KeywordCompound,
    /// `${x@P}`: the value is expanded as a prompt string, which runs the command
    /// substitutions it holds (attack pass 193 F3).
    PromptExpansion,
    /// A variable is assigned text holding command-substitution syntax (`x='a[$(cmd)]'`)
    /// and the script has a context that reads a variable's value as code (arithmetic, also
    /// array subscripts, substring offsets and `for ((…))` headers, `printf -v "$x"`,
    /// `read "$x"`, `declare "$x"`, `unset "$x"`, `${!x}`, `trap`, `eval`): the
    /// substitution runs there (attack passes 193 F3, 197 B1). The substitutions held are
    /// parsed as commands of the script.
    ReevaluatedText,
    /// `BASH_ENV` / `ENV` set to something other than a static plain path (`BASH_ENV=<(…)`),
    /// `PROMPT_COMMAND` set, or an exported function (`BASH_FUNC_f%%=…`) passed on: a shell
    /// started later runs that text (attack passes 193 F2, 197 B3).
    StartupFile,
    /// `CDPATH` set in a script that runs `cd` or `pushd`: where a later `cd` goes is not
    /// the directory written (`CDPATH=.git; cd objects && rm -rf *`), so where the commands
    /// after it run is unknown (attack pass 197 B7). Also `PWD` set in a script that reads
    /// `$PWD/…`, which the detector reads as the working directory (usability pass 200).
    CdSearchPath,
}

impl OpaqueKind {
    /// The stable snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            OpaqueKind::EmptyCommand => "empty_command",
            OpaqueKind::UnknownWrapperOption => "unknown_wrapper_option",
            OpaqueKind::Coproc => "coproc",
            OpaqueKind::NestingTooDeep => "nesting_too_deep",
            OpaqueKind::InputTooLarge => "input_too_large",
            OpaqueKind::ParseError => "parse_error",
            OpaqueKind::Arithmetic => "arithmetic",
            OpaqueKind::FunctionDefinition => "function_definition",
            OpaqueKind::If => "if",
            OpaqueKind::While => "while",
            OpaqueKind::Until => "until",
            OpaqueKind::For => "for",
            OpaqueKind::Select => "select",
            OpaqueKind::Case => "case",
            OpaqueKind::SensitiveAssignment => "sensitive_assignment",
            OpaqueKind::CommandSubstitution => "command_substitution",
            OpaqueKind::Backticks => "backticks",
            OpaqueKind::ProcessSubstitution => "process_substitution",
            OpaqueKind::UnparsedExpansion => "unparsed_expansion",
            OpaqueKind::UnknownSyntax => "unknown_syntax",
            OpaqueKind::DynamicShellArguments => "dynamic_shell_arguments",
            OpaqueKind::EnvSplitString => "env_split_string",
            OpaqueKind::DynamicShellScript => "dynamic_shell_script",
            OpaqueKind::RuntimeScriptArguments => "runtime_script_arguments",
            OpaqueKind::TooManySegments => "too_many_segments",
            OpaqueKind::EmptyCommandName => "empty_command_name",
            OpaqueKind::DynamicCommandName => "dynamic_command_name",
            OpaqueKind::GlobCommandName => "glob_command_name",
            OpaqueKind::Eval => "eval",
            OpaqueKind::Alias => "alias",
            OpaqueKind::Trap => "trap",
            OpaqueKind::Source => "source",
            OpaqueKind::ExecFd => "exec_fd",
            OpaqueKind::Enable => "enable",
            OpaqueKind::Hash => "hash",
            OpaqueKind::BuiltinRunsCode => "builtin_runs_code",
            OpaqueKind::BuiltinRunsUnseenCode => "builtin_runs_unseen_code",
            OpaqueKind::HeredocToInterpreter => "heredoc_to_interpreter",
            OpaqueKind::StdinScript => "stdin_script",
            OpaqueKind::FindExecUnterminated => "find_exec_unterminated",
            OpaqueKind::UnsetFunction => "unset_function",
            OpaqueKind::KeywordCompound => "keyword_compound",
            OpaqueKind::PromptExpansion => "prompt_expansion",
            OpaqueKind::ReevaluatedText => "reevaluated_text",
            OpaqueKind::StartupFile => "startup_file",
            OpaqueKind::CdSearchPath => "cd_search_path",
        }
    }

    /// The control-flow keyword's kind (`if`, `while`, `until`, `for`, `select`, `case`);
    /// anything else is `unknown_syntax`.
    pub(crate) fn control_flow(keyword: &str) -> OpaqueKind {
        match keyword {
            "if" => OpaqueKind::If,
            "while" => OpaqueKind::While,
            "until" => OpaqueKind::Until,
            "for" => OpaqueKind::For,
            "select" => OpaqueKind::Select,
            "case" => OpaqueKind::Case,
            _ => OpaqueKind::UnknownSyntax,
        }
    }

    /// Constructs that are asked about in every approval mode but `bypass`, as a dangerous
    /// finding is (R-A5): a script that does not parse cleanly (its commands are not all
    /// known: attack pass 193 F1, `case … ;& esac; git push --force` ran unasked) and
    /// text that runs as code only at run time ([`OpaqueKind::PromptExpansion`],
    /// [`OpaqueKind::ReevaluatedText`], [`OpaqueKind::StartupFile`]), and an expansion the
    /// parser could not read ([`OpaqueKind::UnparsedExpansion`]: backticks in a heredoc body
    /// were marked so and still ran unasked).
    pub fn asks_in_every_mode(self) -> bool {
        matches!(
            self,
            OpaqueKind::ParseError
                | OpaqueKind::PromptExpansion
                | OpaqueKind::ReevaluatedText
                | OpaqueKind::StartupFile
                | OpaqueKind::CdSearchPath
                | OpaqueKind::BuiltinRunsUnseenCode
                | OpaqueKind::UnparsedExpansion
        )
    }

    /// Constructs whose body the parser walks completely (substitutions, loops,
    /// conditionals, function definitions): every command inside is a segment. A script
    /// whose only such constructs are these, and whose every segment is known-safe, is
    /// visible and may be allowed (issue 8 §5); any other kind keeps it opaque.
    pub fn body_is_visible(self) -> bool {
        matches!(
            self,
            OpaqueKind::CommandSubstitution
                | OpaqueKind::Backticks
                | OpaqueKind::ProcessSubstitution
                | OpaqueKind::If
                | OpaqueKind::While
                | OpaqueKind::Until
                | OpaqueKind::For
                | OpaqueKind::Select
                | OpaqueKind::Case
                | OpaqueKind::FunctionDefinition
        )
    }
}

impl std::fmt::Display for OpaqueKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
    /// Indices of the plain `cd`/`pushd` segments that must have succeeded for this one
    /// to run: every earlier operand of an all-`&&` chain (`cd build && rm -rf *`) and a
    /// `cd x || exit` earlier in the same block. Not serialized.
    #[serde(skip)]
    pub after_cds: Vec<usize>,
    /// Indices into `argv` of words with an unquoted glob or brace character (`*`,
    /// `*.rs`, `{a,b}`): shown as written, not quoted as literals. Not serialized.
    #[serde(skip)]
    pub glob_args: Vec<usize>,
}

impl Segment {
    /// The command as a shell would read it back: static words quoted where needed,
    /// words that expand (`$HOME`, `$(…)`) and unquoted globs (`*`) as written — a glob
    /// shown as `'*'` read as a literal star (new-user pass 146).
    /// Its redirections to and from files follow (`echo hi > ~/.bashrc`): a reason about
    /// what the command writes names the write (new-user pass 152: "`echo hi` is
    /// forbidden: writes shell start-up file").
    pub fn display(&self) -> String {
        let files = self
            .redirections
            .iter()
            .filter(|r| {
                matches!(
                    r.kind,
                    RedirectKind::Read
                        | RedirectKind::Write
                        | RedirectKind::Append
                        | RedirectKind::ReadWrite
                )
            })
            .map(|r| {
                let target = if r.dynamic {
                    r.target.clone()
                } else {
                    shell_word(&r.target)
                };
                format!("{}{} {target}", r.fd.as_deref().unwrap_or(""), r.op)
            });
        std::iter::once(self.display_words())
            .chain(files)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// [`Segment::display`] without the redirections (for a listing that shows them on
    /// lines of their own).
    pub fn display_words(&self) -> String {
        self.argv
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if self.dynamic_args.contains(&i) || self.glob_args.contains(&i) {
                    a.clone()
                } else {
                    shell_word(a)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

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
    /// The text a heredoc or herestring feeds, when it is static (no expansion in it):
    /// what a shell reading its input runs ([`Context::ShellInput`]). Not serialized.
    #[serde(skip)]
    pub text: Option<String>,
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
    /// Code a builtin runs: `mapfile -C`'s callback, `compgen -C`'s command, the
    /// substitutions in `compgen -W`'s word list (parsed when static).
    BuiltinCode,
    /// Commands a shell reads on its standard input, given on the command line: a
    /// heredoc, a herestring or `echo TEXT |` (parsed when static; attack pass 62).
    ShellInput,
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

/// `w` as one shell word: as it is when every character is plain, else single-quoted.
///
/// A word with a control character (a newline in a directory name) is written `$'…'`
/// with the character escaped (`\n`, `\t`, `\r`, `\xHH`): the text stays printable, and
/// pasting it still gives back `w` (new-user pass 230 #3: the printed `'…\n…'` made a
/// directory with a backslash in its name).
pub fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c))
    {
        w.to_string()
    } else if w.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in w.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if c.is_control() && (c as u32) < 0x80 => {
                    out.push_str(&format!("\\x{:02x}", c as u32));
                }
                // A C1 control (U+0080–U+009F): its UTF-8 bytes.
                c if c.is_control() => {
                    let mut b = [0; 4];
                    for byte in c.encode_utf8(&mut b).bytes() {
                        out.push_str(&format!("\\x{byte:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// [`shell_word`] of a name that may not be UTF-8 (a file name's bytes): one that is not
/// is written `$'…'` with every byte outside printable ASCII as `\xNN`, so pasting the word
/// gives back the exact bytes (attack pass 235 #2: a lock file named `\xff.lock` was shown
/// lossily, and the printed `rm -f` removed nothing).
pub fn shell_word_bytes(w: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(w) {
        return shell_word(s);
    }
    let mut out = String::from("$'");
    for &b in w {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod shell_word_tests {
    use super::shell_word;

    /// Each word, pasted into bash, is the word again: plain, quoted, and with control
    /// characters (new-user pass 230 #3: a newline printed as `\n` inside single quotes).
    #[test]
    fn a_shell_word_pasted_into_bash_is_the_word() {
        for w in [
            "plain/path-1.txt",
            "wt5 $(touch PWNED)",
            "a;b'c\"d`e`",
            "nl\nx",
            "tab\tcr\resc\u{1b}\\back'q",
            "c1\u{85}x",
        ] {
            let quoted = shell_word(w);
            assert!(!quoted.chars().any(char::is_control), "{quoted:?}");
            let out = std::process::Command::new("bash")
                .args(["-c", &format!("printf %s {quoted}")])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), w, "{quoted}");
        }
    }

    /// A name that is not UTF-8, pasted into bash, is its exact bytes (attack pass 235 #2);
    /// a UTF-8 one is quoted as [`shell_word`] quotes it.
    #[test]
    fn a_byte_name_pasted_into_bash_is_its_bytes() {
        for w in [b"\xff.lock".as_slice(), b"a'b\\c\xfe\n$(x)", b"plain.lock"] {
            let quoted = super::shell_word_bytes(w);
            assert!(!quoted.chars().any(char::is_control), "{quoted:?}");
            let out = std::process::Command::new("bash")
                .args(["-c", &format!("printf %s {quoted}")])
                .output()
                .unwrap();
            assert_eq!(out.stdout, w, "{quoted}");
        }
    }
}
