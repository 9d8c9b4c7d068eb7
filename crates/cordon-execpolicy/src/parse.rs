//! Shell parsing with tree-sitter-bash (R-A2).
//!
//! An argv is turned into a list of simple commands ([`Segment`]s). Wrappers are looked
//! through, `sh -c` scripts are parsed recursively, and every construct whose effect cannot be
//! known statically is recorded as an [`OpaqueConstruct`].
//!
//! Robustness bounds (exceeding any of them records an opaque construct instead of failing):
//! total script bytes parsed per call [`MAX_INPUT_BYTES`], syntactic nesting depth
//! [`MAX_DEPTH`] (AST nodes plus nested shells), number of segments [`MAX_SEGMENTS`], and
//! nested shell levels `ParseOptions::max_shell_depth`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use tree_sitter::{Node, Parser};

use crate::knowledge::shells::INTERPRETERS;
use crate::knowledge::variables::{
    expansion_evaluates_arithmetic, is_sensitive_var, runs_arithmetic,
};
use crate::knowledge::wrappers::{is_loader_name, untrusted_loader_step, wrapper_step, Step};
use crate::model::*;

/// Maximum number of script bytes parsed for one command (all nested scripts together).
pub const MAX_INPUT_BYTES: usize = 1 << 20;
/// Maximum syntactic nesting depth walked (tree nodes and nested shells together).
pub const MAX_DEPTH: usize = 200;
/// Maximum number of segments extracted from one command.
pub const MAX_SEGMENTS: usize = 10_000;

/// Most `cd`s a segment records as having to succeed before it ([`Segment::after_cds`]):
/// a long `cd a && cd b && …` chain would otherwise cost memory quadratic in its length.
const MAX_AFTER_CDS: usize = 32;

/// Options for resolving program names (trusted locations; R-A2, R-A4).
///
/// An absolute program path (`/usr/bin/git`) is treated as the bare name (`git`) only when
/// its directory is trusted: listed in `trusted_program_dirs`, or listed for that program in
/// `trusted_program_paths`. Any other absolute path (`/tmp/git`) keeps its full spelling,
/// never matches a basename rule and is never known-safe. Wrappers and shells are only
/// looked through when their own path is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// Directories whose programs are trusted to be what their basename says.
    /// Default: `/usr/bin`, `/bin`, `/usr/sbin`, `/sbin`, `/usr/local/bin`.
    pub trusted_program_dirs: Vec<String>,
    /// Extra trusted directories per program, e.g. `cargo -> ["/home/me/.cargo/bin"]`.
    pub trusted_program_paths: BTreeMap<String, Vec<String>>,
    /// How many nested `sh -c` / `eval` levels are parsed before the command becomes opaque
    /// (`nesting_too_deep`). Default 8.
    pub max_shell_depth: usize,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            trusted_program_dirs: ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            trusted_program_paths: BTreeMap::new(),
            max_shell_depth: 8,
        }
    }
}

/// Parse an argv as it would be passed to `execve` (R-A2), with default [`ParseOptions`].
///
/// The argv words themselves are literal (no shell expansion happens on them); a shell
/// program with `-c` (`bash -lc "a && b"`) has its script parsed. Never panics; anything not
/// understood is reported in [`ParsedCommand::opaque`]. An empty argv yields no segments and
/// the opaque construct `empty_command`.
pub fn parse_command(argv: &[String]) -> ParsedCommand {
    parse_command_with(argv, &ParseOptions::default())
}

/// [`parse_command`] with explicit options.
pub fn parse_command_with(argv: &[String], opts: &ParseOptions) -> ParsedCommand {
    let mut b = Builder::new(opts);
    if argv.is_empty() {
        b.opaque(OpaqueKind::EmptyCommand, "");
    } else {
        let words = argv.iter().map(|s| Word::lit(s.clone())).collect();
        b.emit(
            Cursor::root(""),
            words,
            Vec::new(),
            Vec::new(),
            &Frame::default(),
        );
    }
    b.finish()
}

/// What a static `echo TEXT` (escapes read with `-e`), `printf FORMAT ARGS` (`%s`/`%b`
/// conversions only) or `cat <<< TEXT` writes, for a shell reading it on a pipe (attack passes 62, 63: `echo "git reset --hard" | sh`,
/// `printf 'rm -rf .git\n' | sh`).
pub(crate) fn static_output(b: &Segment) -> Option<String> {
    if !b.dynamic_args.is_empty() || !b.is_static(0) {
        return None;
    }
    match b.program.name.as_str() {
        // `cat <<< TEXT`, `cat <<'EOF'`: what it is fed, when it has no file operand.
        "cat" if b.argv.len() == 1 => {
            let fed: Vec<&Redirection> = b
                .redirections
                .iter()
                .filter(|r| matches!(r.kind, RedirectKind::Heredoc | RedirectKind::Herestring))
                .collect();
            match fed.as_slice() {
                [one] => one.text.clone(),
                _ => None,
            }
        }
        "echo" => {
            // `echo -e` decodes backslash escapes (fresh pass 190 F4: `echo -e 'git reset
            // --har\x64' | bash` was read as the literal text); the last of `-e`/`-E`
            // decides, as in bash.
            let opts: Vec<&str> = b.argv[1..]
                .iter()
                .map(String::as_str)
                .take_while(|a| {
                    a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c))
                })
                .collect();
            let escapes = opts
                .iter()
                .flat_map(|o| o[1..].chars())
                .rfind(|c| *c == 'e' || *c == 'E')
                == Some('e');
            let text = b.argv[1 + opts.len()..].join(" ");
            if escapes {
                unescape(&text)
            } else {
                Some(text)
            }
        }
        "printf" => {
            // `printf -- FORMAT …`: `--` only ends printf's options.
            let at = if b.argv.get(1).is_some_and(|a| a == "--") {
                2
            } else {
                1
            };
            printf_output(b.argv.get(at)?, b.argv.get(at + 1..).unwrap_or_default())
        }
        _ => None,
    }
}

/// What `printf FORMAT ARGS…` writes when its only conversions are `%s` and `%b` (each
/// taking the next argument, the format reused while arguments remain, as printf does),
/// with `\n` read as a newline; `None` for any other conversion (attack pass 188 F5:
/// `printf "%s\n" "git reset --hard" | bash` ran unasked; a format without conversions
/// was already read).
fn printf_output(format: &str, args: &[String]) -> Option<String> {
    let mut pieces: Vec<String> = Vec::new();
    let mut rest = format;
    let mut text = String::new();
    // The format split at its conversions; `%%` stays text.
    while let Some(i) = rest.find('%') {
        text.push_str(&rest[..i]);
        match rest[i + 1..].chars().next() {
            Some('%') => text.push('%'),
            Some('s' | 'b') => pieces.push(std::mem::take(&mut text)),
            _ => return None,
        }
        rest = &rest[i + 2..];
    }
    text.push_str(rest);
    let tail = text;
    let mut out = String::new();
    let mut next = args.iter();
    loop {
        for p in &pieces {
            out.push_str(p);
            out.push_str(next.next().map_or("", String::as_str));
        }
        out.push_str(&tail);
        if pieces.is_empty() || next.len() == 0 {
            break;
        }
    }
    unescape(&out)
}

/// `s` with printf's backslash escapes decoded (`\\`, `\a`, `\b`, `\e`, `\f`, `\n`, `\r`,
/// `\t`, `\v`, `\xHH`, `\NNN` octal, `\0NNN`); `None` for an escape it does not know
/// (`\u…`, `\c`), whose output is then not known here (fresh pass 189 #4: `printf
/// '\x72\x6d -rf .git' | sh` was read as the literal text).
fn unescape(s: &str) -> Option<String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        let simple = match c {
            b'\\' => Some(b'\\'),
            b'a' => Some(7),
            b'b' => Some(8),
            b'e' | b'E' => Some(27),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            b'"' | b'\'' => Some(c),
            _ => None,
        };
        if let Some(x) = simple {
            out.push(x);
            continue;
        }
        let digits = |i: usize, max: usize, radix: u32| {
            b[i..]
                .iter()
                .take(max)
                .take_while(|d| (**d as char).is_digit(radix))
                .count()
        };
        match c {
            b'x' => {
                let n = digits(i, 2, 16);
                if n == 0 {
                    return None;
                }
                out.push(u8::from_str_radix(std::str::from_utf8(&b[i..i + n]).ok()?, 16).ok()?);
                i += n;
            }
            b'0'..=b'7' => {
                // `\NNN` (up to three digits, the first one read) or `\0NNN`.
                let start = if c == b'0' { i } else { i - 1 };
                let n = digits(start, 3, 8);
                let v =
                    u32::from_str_radix(std::str::from_utf8(&b[start..start + n]).ok()?, 8).ok()?;
                out.push((v & 0xff) as u8);
                i = start + n;
            }
            _ => return None,
        }
    }
    String::from_utf8(out).ok()
}

/// Parse a shell script (as `bash -c SCRIPT` would run it) with default [`ParseOptions`].
/// Used for rule examples and by [`crate::Policy::evaluate_script`]. Never panics.
pub fn parse_script(script: &str) -> ParsedCommand {
    parse_script_with(script, &ParseOptions::default())
}

/// [`parse_script`] with explicit options.
pub fn parse_script_with(script: &str, opts: &ParseOptions) -> ParsedCommand {
    let mut b = Builder::new(opts);
    b.parse_at(Cursor::root(script), &Frame::default());
    b.finish()
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn parse_tree(src: &str) -> Option<tree_sitter::Tree> {
    fn new_parser() -> Option<Parser> {
        let mut p = Parser::new();
        p.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
        Some(p)
    }
    PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = new_parser();
            }
            let p = slot.as_mut()?;
            let tree = p.parse(grammar_safe(src).as_ref(), None);
            if tree.is_none() {
                p.reset();
            }
            tree
        }
        Err(_) => new_parser()?.parse(grammar_safe(src).as_ref(), None),
    })
}

/// The text handed to the grammar: every non-ASCII character replaced by as many `x` as
/// it has UTF-8 bytes. tree-sitter-bash's external scanner calls C `isdigit` on the
/// lookahead code point, which reads outside the C library's table (and crashes) for code
/// points above 255. Non-ASCII characters are word characters to bash either way, so the
/// tree has the same shape, and byte offsets are unchanged: node text is still read from
/// the original (look-alike detection sees the real characters).
fn grammar_safe(src: &str) -> std::borrow::Cow<'_, str> {
    if src.is_ascii() {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    for c in src.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('x', c.len_utf8()));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `src` with the bash operators tree-sitter-bash 0.25 does not know replaced by stand-ins
/// of the same length that it does, or `None` when there is none: `;&` → `;;` and `;;&` →
/// `;; ` (fall-through terminators, accepted by the grammar except on the last case item;
/// every item's commands are walked either way) and `<>` → `> ` (the read-write
/// redirection, recognised again by [`Builder::redirect`] from the source text). Only
/// used when `src` itself does not parse cleanly and the stand-in does (attack pass 193
/// F1, F8); node text is still read from `src`. An operator escaped by a backslash is left.
fn grammar_gaps(src: &str) -> Option<String> {
    let mut b = src.as_bytes().to_vec();
    let mut changed = false;
    let mut i = 0;
    while i + 1 < b.len() {
        let escaped = i > 0 && b[i - 1] == b'\\';
        match (b[i], b[i + 1]) {
            (b';', b'&') if !escaped => {
                // `;;&` (the first `;` already seen) or `;&`.
                b[i + 1] = if i > 0 && b[i - 1] == b';' {
                    b' '
                } else {
                    b';'
                };
                changed = true;
                i += 2;
            }
            (b'<', b'>') if !escaped && (i == 0 || b[i - 1] != b'<') => {
                b[i] = b'>';
                b[i + 1] = b' ';
                changed = true;
                i += 2;
            }
            _ => i += 1,
        }
    }
    if changed {
        String::from_utf8(b).ok()
    } else {
        None
    }
}

/// A word after quote removal. `dynamic` words keep their source spelling.
#[derive(Debug, Clone, Default)]
pub(crate) struct Word {
    pub text: String,
    pub dynamic: bool,
    /// Contains an unquoted glob or brace character.
    pub glob: bool,
}

impl Word {
    fn lit(text: String) -> Word {
        Word {
            text,
            dynamic: false,
            glob: false,
        }
    }
    /// A word whose value is not statically known; keeps its source spelling.
    fn dynamic(raw: &str) -> Word {
        Word {
            text: raw.to_string(),
            dynamic: true,
            glob: false,
        }
    }
}

/// Inherited state for segments produced under some enclosing construct.
#[derive(Debug, Clone, Default)]
struct Frame {
    wrappers: Rc<Vec<Wrapper>>,
    env: Rc<Vec<EnvAssignment>>,
    redirects: Rc<Vec<Redirection>>,
    context: Rc<Vec<Context>>,
    pipeline: Option<PipelinePosition>,
    parent: Option<usize>,
    runtime_args: bool,
    background: bool,
    chdir: Option<String>,
    /// Indices of the plain `cd` segments that must have succeeded for commands here to
    /// run ([`Segment::after_cds`]).
    after_cds: Rc<Vec<usize>>,
    /// Redirections the grammar hung on a whole `&&`/`||` list (`a && b >> f`), which
    /// bash gives to its last command only: taken by [`Builder::list_stmt`] (attack pass
    /// 188 F7: every command of the list was shown, and capped, as writing `f`).
    list_redirects: Rc<Vec<Redirection>>,
}

impl Frame {
    /// This frame with `cds` added to the `cd`s that must have succeeded, at most
    /// [`MAX_AFTER_CDS`] (fewer only keeps more places a command may run in).
    fn after(&self, cds: &[usize]) -> Frame {
        let mut f = self.clone();
        let room = MAX_AFTER_CDS.saturating_sub(f.after_cds.len());
        if !cds.is_empty() && room > 0 {
            Rc::make_mut(&mut f.after_cds).extend(cds.iter().take(room));
        }
        f
    }

    fn with_context(&self, c: Context) -> Frame {
        let mut f = self.clone();
        Rc::make_mut(&mut f.context).push(c);
        f
    }
    /// Frame for the inside of a substitution: its output is captured, so enclosing
    /// redirections, pipelines and backgrounding do not apply.
    fn for_substitution(&self, c: Context, parent: Option<usize>) -> Frame {
        let mut f = self.clone();
        Rc::make_mut(&mut f.context).push(c);
        f.redirects = Rc::default();
        f.pipeline = None;
        f.background = false;
        f.parent = parent;
        f
    }
}

/// What the wrappers of one command contributed while they were looked through.
struct Unwrapped {
    /// Wrappers looked through (this command's only; the frame holds the enclosing ones).
    wrappers: Vec<Wrapper>,
    /// Word index where each wrapper started.
    wrapper_starts: Vec<usize>,
    /// The frame's environment plus the command's and the wrappers' assignments.
    env: Vec<EnvAssignment>,
    runtime_args: bool,
    chdir: Option<String>,
    /// Word index of the next candidate program.
    start: usize,
}

impl Unwrapped {
    fn new(frame: &Frame, env: Vec<EnvAssignment>) -> Self {
        let mut env_all = frame.env.to_vec();
        env_all.extend(env);
        Unwrapped {
            wrappers: Vec::new(),
            wrapper_starts: Vec::new(),
            env: env_all,
            runtime_args: frame.runtime_args,
            chdir: frame.chdir.clone(),
            start: 0,
        }
    }

    /// Record wrapper `name` spelled `argv` and move past it.
    fn look_through(
        &mut self,
        name: &str,
        argv: &[Word],
        env: Vec<EnvAssignment>,
        chdir: Option<String>,
        runtime_args: bool,
    ) {
        self.wrappers.push(Wrapper {
            name: name.to_string(),
            argv: texts(argv),
        });
        self.wrapper_starts.push(self.start);
        self.env.extend(env);
        if chdir.is_some() {
            self.chdir = chdir;
        }
        self.runtime_args |= runtime_args;
        self.start += argv.len();
    }

    /// The frame for the program's segment, all wrappers (enclosing first) and the env.
    fn into_frame(self, frame: &Frame) -> (Frame, Vec<Wrapper>, Vec<EnvAssignment>) {
        let mut wrappers = frame.wrappers.to_vec();
        wrappers.extend(self.wrappers);
        let mut f = frame.clone();
        f.runtime_args = self.runtime_args;
        f.chdir = self.chdir;
        (f, wrappers, self.env)
    }
}

/// Whether statement `n` ends the script or function where it runs: `exit`, `return`,
/// or a `{ …; }` group whose last command is one of them.
fn ends_run(src: &str, n: Node<'_>) -> bool {
    match kind(n) {
        "command" => n
            .child_by_field_name("name")
            .is_some_and(|c| matches!(node_text(src, c), "exit" | "return")),
        "compound_statement" => children(n)
            .filter(|c| c.is_named() && kind(c) != "comment")
            .last()
            .is_some_and(|c| ends_run(src, c)),
        _ => false,
    }
}

/// Builtins whose effect is not visible in their words: `source`, `exec` with only
/// redirections, `enable`, `coproc`, `hash`, arithmetic (`let`, `test -v 'a[…]'`,
/// `printf -v 'a[…]'`), and builtins that run code the script does not show (`fc`,
/// `bind -x`, `enable -f`). `mapfile -C`, `compgen`/`complete` are [`Builder::builtin_code`]'s.
fn builtin_runs_code(seg: &Segment) -> Option<OpaqueKind> {
    let argv = &seg.argv;
    let flag = |letters: &[char]| {
        argv.iter()
            .skip(1)
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(letters))
    };
    Some(match seg.program.name.as_str() {
        "source" | "." => OpaqueKind::Source,
        "exec"
            if argv.len() == 1
                && seg
                    .redirections
                    .iter()
                    .any(|r| r.kind != RedirectKind::Heredoc) =>
        {
            OpaqueKind::ExecFd
        }
        // `enable -f FILE NAME` loads a builtin from a shared object: its code is unseen.
        "enable" if flag(&['f']) || !seg.dynamic_args.is_empty() => {
            OpaqueKind::BuiltinRunsUnseenCode
        }
        "enable" => OpaqueKind::Enable,
        "coproc" => OpaqueKind::Coproc,
        "hash" => OpaqueKind::Hash,
        "let" => OpaqueKind::Arithmetic,
        "test" | "[" | "printf" if runs_arithmetic(argv, false) => OpaqueKind::Arithmetic,
        // `fc -l` lists history; every other form runs it again (`fc -s`, `fc -e ed`).
        "fc" if flag(&['s', 'e']) || !flag(&['l']) || !seg.dynamic_args.is_empty() => {
            OpaqueKind::BuiltinRunsUnseenCode
        }
        "fc" => OpaqueKind::BuiltinRunsCode,
        "bind" if flag(&['x']) || !seg.dynamic_args.is_empty() => OpaqueKind::BuiltinRunsUnseenCode,
        _ => return None,
    })
}

fn texts(words: &[Word]) -> Vec<String> {
    words.iter().map(|w| w.text.clone()).collect()
}

fn join(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where the walk is: the script text whose tree is being walked, the syntactic nesting
/// depth (tree nodes and nested shells, bounded by [`MAX_DEPTH`]) and the number of nested
/// shell levels (bounded by `ParseOptions::max_shell_depth`).
#[derive(Debug, Clone, Copy)]
struct Cursor<'s> {
    src: &'s str,
    depth: usize,
    shells: usize,
}

impl<'s> Cursor<'s> {
    /// The top level of a parse.
    fn root(src: &'s str) -> Self {
        Cursor {
            src,
            depth: 0,
            shells: 0,
        }
    }
    /// One syntactic level deeper.
    fn down(self) -> Self {
        Cursor {
            depth: self.depth + 1,
            ..self
        }
    }
}

struct Builder<'o> {
    opts: &'o ParseOptions,
    out: ParsedCommand,
    next_pipeline: usize,
    budget: usize,
    full: bool,
    /// Names of the functions defined so far.
    functions: Vec<String>,
    /// Set by [`Builder::list_stmt`]: the plain `cd`s a `cd x || exit` list guarantees
    /// for the statements after it in the same block.
    guard: Vec<usize>,
    /// The first assignment whose value holds command-substitution text
    /// ([`holds_substitution_text`]), and the first context that reads a variable's value
    /// again as code: together they make the script [`OpaqueKind::ReevaluatedText`].
    reeval: (Option<String>, Option<String>),
    /// The static values holding command-substitution text (at most [`MAX_HELD`]): when
    /// the script reads a variable again as code, the substitutions in them are parsed
    /// and checked as commands that may run (attack pass 197 B1: `x='a[$(curl … | sh)]'`).
    held: Vec<String>,
    /// Whether the script sets `CDPATH` ([`OpaqueKind::CdSearchPath`]).
    cdpath: bool,
    /// Whether the script sets `PWD`, which the detector reads as the working directory
    /// ([`OpaqueKind::CdSearchPath`]).
    pwd: bool,
    /// Words the grammar hung on a redirection as extra destinations (`bash 3< <(…)
    /// /dev/fd/3`): bash reads them as arguments of the command. Set by [`Builder::redirect`]
    /// for its caller.
    redirect_args: Vec<Word>,
    /// Set by [`Builder::redirected`] for the simple command its redirections follow (its
    /// body, or the last command of a body that is a pipeline or list: `foo | git reset >x
    /// --hard`), keyed by that command's node id: the words to append to its arguments
    /// ([`Builder::redirect_args`]) and whether its last argument is the first
    /// redirection's descriptor (`bash 0< <(…)`, `git reset {fd}>x`: the grammar reads `0`
    /// or `{fd}` as an argument). Taken by [`Builder::command`] for that node only.
    body_fixups: Vec<(usize, bool, Vec<Word>)>,
}

/// A word the grammar reads as an argument where bash reads the descriptor of the
/// redirection right after it: digits (`0<`) or a `{name}` that receives the descriptor
/// (`{fd}>x`, bash 4.1).
fn is_fd_word(t: &str) -> bool {
    let name = t.strip_prefix('{').and_then(|r| r.strip_suffix('}'));
    match name {
        Some(n) => {
            n.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        }
        None => !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// The simple command that a redirected statement's trailing redirections (and the words
/// the grammar hangs on them) belong to: the body itself, or the last command of a body
/// read as a pipeline, a list or a negation (`foo && ! git reset >x --hard`). `None` for
/// compound bodies (`( … ) >x y` does not parse in bash).
fn last_command(body: Node<'_>) -> Option<Node<'_>> {
    let mut n = body;
    loop {
        match kind(n) {
            "command" => return Some(n),
            "pipeline" | "list" | "negated_command" => {
                let mut c = n.walk();
                let last = n
                    .named_children(&mut c)
                    .filter(|k| kind(k) != "comment")
                    .last()?;
                n = last;
            }
            _ => return None,
        }
    }
}

fn is_statement_kind(k: &str) -> bool {
    matches!(
        k,
        "command"
            | "redirected_statement"
            | "list"
            | "pipeline"
            | "subshell"
            | "compound_statement"
            | "negated_command"
            | "function_definition"
            | "if_statement"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "case_statement"
            | "test_command"
            | "declaration_command"
            | "unset_command"
            | "variable_assignment"
            | "variable_assignments"
            | "ERROR"
    )
}

thread_local! {
    static KIND_NAMES: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

/// `node.kind()` without the per-call `strlen` + UTF-8 check (cached per kind id).
fn kind<'t>(n: impl std::borrow::Borrow<Node<'t>>) -> &'static str {
    let n: &Node<'t> = n.borrow();
    let id = n.kind_id() as usize;
    if id >= 2048 {
        return n.kind(); // ERROR (u16::MAX) and anything unexpected
    }
    KIND_NAMES.with(|cell| {
        let Ok(mut names) = cell.try_borrow_mut() else {
            return n.kind();
        };
        if let Some(k) = names.get(id).filter(|k| !k.is_empty()) {
            return *k;
        }
        let k = n.kind();
        if names.len() <= id {
            names.resize(id + 1, "");
        }
        names[id] = k;
        k
    })
}

fn excerpt(s: &str) -> String {
    const MAX: usize = 80;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(MAX).collect();
        t.push('…');
        t
    }
}

fn node_text<'s>(src: &'s str, n: Node<'_>) -> &'s str {
    let r = n.byte_range();
    src.get(r.clone()).unwrap_or_else(|| {
        // Not on char boundaries (only possible inside error recovery): widen to boundaries.
        let mut s = r.start.min(src.len());
        while s > 0 && !src.is_char_boundary(s) {
            s -= 1;
        }
        let mut e = r.end.min(src.len());
        while e < src.len() && !src.is_char_boundary(e) {
            e += 1;
        }
        &src[s..e]
    })
}

/// Iterate a node's children without allocating for small nodes (index access is cheap
/// there); larger nodes use a tree cursor (index access would be quadratic).
fn children(n: Node<'_>) -> Kids<'_> {
    let count = n.child_count();
    if count <= 8 {
        Kids::Small {
            node: n,
            i: 0,
            count,
        }
    } else {
        let mut cursor = n.walk();
        let started = cursor.goto_first_child();
        Kids::Large { cursor, started }
    }
}

enum Kids<'t> {
    Small {
        node: Node<'t>,
        i: usize,
        count: usize,
    },
    Large {
        cursor: tree_sitter::TreeCursor<'t>,
        started: bool,
    },
}

impl<'t> Iterator for Kids<'t> {
    type Item = Node<'t>;
    fn next(&mut self) -> Option<Node<'t>> {
        match self {
            Kids::Small { node, i, count } => {
                if *i >= *count {
                    return None;
                }
                *i += 1;
                node.child(*i - 1)
            }
            Kids::Large { cursor, started } => {
                if !*started {
                    return None;
                }
                let n = cursor.node();
                *started = cursor.goto_next_sibling();
                Some(n)
            }
        }
    }
}

impl<'o> Builder<'o> {
    fn new(opts: &'o ParseOptions) -> Self {
        Builder {
            opts,
            out: ParsedCommand::default(),
            next_pipeline: 0,
            budget: MAX_INPUT_BYTES,
            full: false,
            functions: Vec::new(),
            guard: Vec::new(),
            reeval: (None, None),
            held: Vec::new(),
            cdpath: false,
            pwd: false,
            redirect_args: Vec::new(),
            body_fixups: Vec::new(),
        }
    }

    fn finish(mut self) -> ParsedCommand {
        if self.cdpath {
            let cd = self.out.segments.iter().find(|s| {
                matches!(s.program.name.as_str(), "cd" | "pushd")
                    || s.argv
                        .first()
                        .is_some_and(|a| matches!(a.as_str(), "cd" | "pushd"))
            });
            if let Some(cd) = cd {
                let text = format!("CDPATH … {}", cd.argv.join(" "));
                self.opaque(OpaqueKind::CdSearchPath, &text);
            }
        }
        if self.pwd {
            // `PWD=/; rm -rf "$PWD/etc"`: `$PWD/…` is not the working directory there.
            let reads = |t: &str| t.starts_with("$PWD") || t.starts_with("${PWD}");
            let read = self.out.segments.iter().find(|s| {
                s.argv.iter().any(|a| reads(a)) || s.redirections.iter().any(|r| reads(&r.target))
            });
            if let Some(seg) = read {
                let text = format!("PWD … {}", seg.argv.join(" "));
                self.opaque(OpaqueKind::CdSearchPath, &text);
            }
        }
        if let (Some(value), Some(context)) = self.reeval.clone() {
            self.opaque(OpaqueKind::ReevaluatedText, &format!("{value} … {context}"));
            // The substitutions such a value holds run where it is read again: checked as
            // commands of the script (a download piped to a shell there is forbidden).
            let frame = Frame::default().with_context(Context::CommandSubstitution);
            for value in std::mem::take(&mut self.held) {
                for body in substitution_bodies(&value) {
                    self.parse_into(body, &frame, Cursor::root(""));
                }
            }
        }
        self.out
    }

    /// Record a context that reads a variable's value again as code (arithmetic, a name
    /// operand taken from a variable, `${!x}`, `trap`, `eval`; attack pass 193 F3).
    fn reeval_context(&mut self, text: &str) {
        if self.reeval.1.is_none() {
            self.reeval.1 = Some(excerpt(text));
        }
    }

    fn opaque(&mut self, kind: OpaqueKind, text: &str) {
        if kind == OpaqueKind::Arithmetic {
            self.reeval_context(text);
        }
        if self.out.opaque.len() >= 256 {
            return;
        }
        let c = OpaqueConstruct {
            kind,
            text: excerpt(text),
        };
        if !self.out.opaque.contains(&c) {
            self.out.opaque.push(c);
        }
    }

    /// The resolved name of a bare or trusted-path program word (no allocation for bare
    /// names); `None` for anything else.
    fn trusted_name<'w>(&self, w: &'w Word) -> Option<Cow<'w, str>> {
        let t = w.text.as_str();
        if w.dynamic || w.glob || t.is_empty() || !t.chars().all(|c| ('!'..='~').contains(&c)) {
            return None;
        }
        if t.starts_with('/') {
            let p = self.classify(w);
            if p.kind == ProgramKind::TrustedPath {
                return Some(Cow::Owned(p.name));
            }
            return system_loader(&p.name).map(|b| Cow::Owned(b.to_string()));
        }
        (!t.contains('/')).then_some(Cow::Borrowed(t))
    }

    /// Classify a program word (see [`ParseOptions`]).
    fn classify(&self, w: &Word) -> Program {
        let t = &w.text;
        let kind = if w.dynamic || w.glob || t.is_empty() {
            ProgramKind::Dynamic
        } else if !t.chars().all(|c| ('!'..='~').contains(&c)) {
            ProgramKind::NonAscii
        } else if t.starts_with('/') {
            let norm = normalize_abs(t);
            if let Some(norm) = norm {
                let (dir, base) = match norm.rfind('/') {
                    Some(0) => ("/", &norm[1..]),
                    Some(i) => (&norm[..i], &norm[i + 1..]),
                    None => ("", norm.as_str()),
                };
                let trusted_dir = |d: &String| d.trim_end_matches('/') == dir.trim_end_matches('/');
                let trusted = !base.is_empty()
                    && (self.opts.trusted_program_dirs.iter().any(trusted_dir)
                        || self
                            .opts
                            .trusted_program_paths
                            .get(base)
                            .is_some_and(|v| v.iter().any(trusted_dir)));
                if trusted {
                    return Program {
                        name: base.to_string(),
                        kind: ProgramKind::TrustedPath,
                    };
                }
                return Program {
                    name: norm,
                    kind: ProgramKind::UntrustedPath,
                };
            }
            ProgramKind::UntrustedPath
        } else if t.contains('/') {
            ProgramKind::RelativePath
        } else {
            ProgramKind::Bare
        };
        Program {
            name: t.clone(),
            kind,
        }
    }

    /// Parse `script` (a nested shell's script, `eval` text, …, one shell level below `at`)
    /// and walk it under `frame`.
    fn parse_into(&mut self, script: &str, frame: &Frame, at: Cursor<'_>) {
        let inner = Cursor {
            src: script,
            depth: at.depth + 1,
            shells: at.shells + 1,
        };
        self.parse_at(inner, frame);
    }

    /// Parse `at.src` and walk it under `frame` (bounds checked at `at`).
    fn parse_at(&mut self, at: Cursor<'_>, frame: &Frame) {
        if at.src.contains("\\\n") {
            let joined = join_continuations(at.src);
            if joined != at.src {
                return self.parse_at(Cursor { src: &joined, ..at }, frame);
            }
        }
        let script = at.src;
        if at.depth > MAX_DEPTH || at.shells > self.opts.max_shell_depth {
            self.opaque(OpaqueKind::NestingTooDeep, script);
            return;
        }
        if script.len() > self.budget {
            self.opaque(
                OpaqueKind::InputTooLarge,
                &format!("{} bytes", script.len()),
            );
            return;
        }
        self.budget -= script.len();
        let Some(tree) = parse_tree(script) else {
            self.opaque(OpaqueKind::ParseError, script);
            return;
        };
        // Bash syntax the grammar lacks (`;&`/`;;&` ending the last case item, the `<>`
        // redirection): read through a same-length stand-in when that parses cleanly.
        let tree = match tree.root_node().has_error().then(|| grammar_gaps(script)) {
            Some(Some(stand_in)) => match parse_tree(&stand_in) {
                Some(t) if !t.root_node().has_error() => t,
                _ => tree,
            },
            _ => tree,
        };
        let root = tree.root_node();
        if root.has_error() {
            // Error recovery may hide ERROR/MISSING nodes in places the walk does not visit.
            self.opaque(OpaqueKind::ParseError, script);
        }
        if kind(root) == "program" {
            self.walk_block(at.down(), root, frame);
        } else {
            self.stmt(at.down(), root, frame);
        }
    }

    /// Walk the statements that are children of a container node.
    fn walk_block(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        // Allocation-free walk with one statement of look-ahead for a trailing `&`.
        let mut cursor = node.walk();
        if !cursor.goto_first_child() {
            return;
        }
        let mut held: Option<Node<'_>> = None;
        // After `cd x || exit`, the rest of the block runs only where the `cd` succeeded.
        let mut local: Option<Frame> = None;
        loop {
            if self.full {
                return;
            }
            let ch = cursor.node();
            let bg = kind(ch) == "&";
            if let Some(h) = held.take() {
                self.guarded_stmt(at, h, frame, &mut local, bg);
            }
            if ch.is_named() {
                held = Some(ch);
            } else if ch.is_missing() || ch.is_error() {
                self.opaque(OpaqueKind::ParseError, node_text(src, ch));
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
        if let Some(h) = held {
            self.guarded_stmt(at, h, frame, &mut local, false);
        }
    }

    /// One statement of a block, under the block's frame plus the `cd`s guaranteed by a
    /// `cd x || exit` before it (`local`), which this statement may extend.
    fn guarded_stmt(
        &mut self,
        at: Cursor<'_>,
        node: Node<'_>,
        frame: &Frame,
        local: &mut Option<Frame>,
        bg: bool,
    ) {
        self.guard.clear();
        let f = local.as_ref().unwrap_or(frame).clone();
        self.stmt_bg(at, node, &f, bg);
        let guard = std::mem::take(&mut self.guard);
        if !bg && kind(node) == "list" && !guard.is_empty() {
            *local = Some(f.after(&guard));
        }
    }

    /// The index of the segment pushed at `first` if it is a plain `cd`/`pushd` run
    /// directly under `frame` (not in a pipeline, a substitution or a subshell).
    fn plain_cd(&self, first: usize, node: Node<'_>, frame: &Frame) -> Option<usize> {
        if !matches!(kind(node), "command" | "redirected_statement") {
            return None;
        }
        let s = self.out.segments.get(first)?;
        (s.program.is_trusted_name()
            && matches!(s.program.name.as_str(), "cd" | "pushd")
            && s.pipeline.is_none()
            && s.context.len() == frame.context.len())
        .then_some(first)
    }

    fn stmt_bg(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame, bg: bool) {
        if bg && !frame.background {
            let mut f = frame.clone();
            f.background = true;
            self.stmt(at, node, &f);
        } else {
            self.stmt(at, node, frame);
        }
    }

    fn stmt(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        if at.depth > MAX_DEPTH {
            self.opaque(OpaqueKind::NestingTooDeep, node_text(src, node));
            return;
        }
        if self.full {
            return;
        }
        if node.is_missing() {
            self.opaque(OpaqueKind::ParseError, &format!("missing {}", kind(node)));
            return;
        }
        let d = at.down();
        match kind(node) {
            "command" => self.command(d, node, frame),
            "redirected_statement" => self.redirected(d, node, frame),
            "list" => self.list_stmt(d, node, frame),
            "negated_command" => self.walk_block(d, node, frame),
            "pipeline" => {
                let stages: Vec<Node<'_>> = children(node)
                    .filter(|n| n.is_named() && kind(n) != "comment")
                    .collect();
                self.pipeline(d, &stages, frame);
            }
            "subshell" => self.walk_block(d, node, &frame.with_context(Context::Subshell)),
            "compound_statement" => {
                if node.child(0).is_some_and(|c| kind(c) == "((") {
                    self.opaque(OpaqueKind::Arithmetic, node_text(src, node));
                    self.scan(d, node, frame);
                } else {
                    self.walk_block(d, node, &frame.with_context(Context::BraceGroup));
                }
            }
            "function_definition" => self.function_definition(d, node, frame),
            "if_statement"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "case_statement" => self.control_flow(d, node, frame),
            "test_command" => self.test_command(d, node, frame),
            "declaration_command" => {
                let text = node_text(src, node);
                // `declare "$x"=1`, `declare -n r=…`: a name taken from a value.
                if text.contains('$') || text.split_whitespace().any(|w| w == "-n") {
                    self.reeval_context(text);
                }
                self.declaration(d, node, frame)
            }
            "unset_command" => {
                let text = node_text(src, node);
                if text.contains('$') {
                    self.reeval_context(text);
                }
                if text.contains('[') {
                    // `unset 'a[$(cmd)]'` evaluates the subscript.
                    self.opaque(OpaqueKind::Arithmetic, text);
                }
                // `f() { ls; }; unset f; f` runs a program named `f`: a later call is no
                // longer the visible function.
                if text.split_whitespace().skip(1).any(|w| {
                    w == "-f"
                        || self
                            .functions
                            .iter()
                            .any(|f| f == w.trim_matches(['\'', '"']))
                }) {
                    self.opaque(OpaqueKind::UnsetFunction, text);
                }
                self.scan(d, node, frame)
            }
            "variable_assignment" => self.assignment(d, node, frame),
            "variable_assignments" => {
                for ch in children(node) {
                    if kind(ch) == "variable_assignment" {
                        self.assignment(d, ch, frame);
                    }
                }
            }
            "comment" | "heredoc_body" | "heredoc_end" | "heredoc_start" => {}
            "ERROR" => self.error_node(d, node, frame),
            other => {
                self.opaque(
                    OpaqueKind::UnknownSyntax,
                    &format!("{other}: {}", node_text(src, node)),
                );
                self.scan(d, node, frame);
            }
        }
    }

    /// `a && b || c`: every operand.
    fn list_stmt(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        // `a && b && c` is list(list(a, b), c): flatten the left spine iteratively so
        // long chains do not count against the nesting bound.
        // Each operand with whether `&&` joins it to what came before.
        let mut groups: Vec<Vec<(bool, Node<'_>)>> = Vec::new();
        let mut cur = node;
        loop {
            let mut kids: Vec<(bool, Node<'_>)> = Vec::new();
            let mut and = false;
            for k in children(cur) {
                if k.is_named() {
                    kids.push((and, k));
                    and = false;
                } else {
                    and = kind(k) == "&&";
                }
            }
            match kids.first() {
                Some((_, first)) if kind(first) == "list" => {
                    let first = *first;
                    groups.push(kids[1..].to_vec());
                    cur = first;
                }
                _ => {
                    groups.push(kids);
                    break;
                }
            }
        }
        // Operands of a leading all-`&&` chain run only where every plain `cd` before
        // them succeeded (`cd build && rm -rf *` never runs at the top).
        let flat: Vec<(bool, Node<'_>)> = groups.iter().rev().flatten().copied().collect();
        // The list's own redirections go to its last operand only (as bash reads them).
        let mut plain = frame.clone();
        plain.list_redirects = Rc::new(Vec::new());
        let mut last = plain.clone();
        Rc::make_mut(&mut last.redirects).extend(frame.list_redirects.iter().cloned());
        let mut chain = true;
        let mut cds: Vec<usize> = Vec::new();
        for (n, (and, k)) in flat.iter().enumerate() {
            if self.full {
                return;
            }
            let frame = if n + 1 == flat.len() { &last } else { &plain };
            chain &= n == 0 || *and;
            let first = self.out.segments.len();
            if chain {
                self.stmt(at, *k, &frame.after(&cds));
                cds.extend(self.plain_cd(first, *k, frame));
            } else {
                self.stmt(at, *k, frame);
            }
        }
        // `cd x || exit` (after an all-`&&` chain): the rest of the block runs only if
        // the chain succeeded.
        let guarded = match flat.split_last() {
            Some(((false, last), [_, middle @ ..])) => {
                middle.iter().all(|(and, _)| *and) && ends_run(src, *last)
            }
            _ => false,
        };
        self.guard = if guarded { cds } else { Vec::new() };
        // Parse errors hidden in operator positions.
        if node.has_error() {
            self.opaque(OpaqueKind::ParseError, node_text(src, node));
        }
    }

    /// `f() { …; }`: the body is walked under the function context.
    fn function_definition(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        if let Some(n) = node.child_by_field_name("name") {
            self.functions.push(node_text(src, n).to_string());
        }
        self.opaque(OpaqueKind::FunctionDefinition, node_text(src, node));
        let name = node
            .child_by_field_name("name")
            .map(|n| node_text(src, n).to_string())
            .unwrap_or_default();
        let f = frame.with_context(Context::Function(name));
        for ch in children(node) {
            if !ch.is_named() || kind(ch) == "word" {
                continue;
            }
            if kind(ch) == "compound_statement" || kind(ch) == "subshell" {
                // The body: walk its statements directly.
                self.walk_block(at, ch, &f);
            } else if is_statement_kind(kind(ch)) {
                self.stmt(at, ch, &f);
            } else {
                self.scan(at, ch, &f);
            }
        }
    }

    /// `if`/`while`/`until`/`for`/`select`/`case`: recorded, then every part walked.
    fn control_flow(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        let kw = node
            .child(0)
            .map(|c| kind(c).to_string())
            .unwrap_or_else(|| kind(node).to_string());
        let kw = match kw.as_str() {
            "if" | "while" | "until" | "for" | "select" | "case" => kw,
            _ => kind(node).trim_end_matches("_statement").to_string(),
        };
        self.opaque(OpaqueKind::control_flow(&kw), node_text(src, node));
        // `for ((i=x; …))`: the header is arithmetic (attack pass 197 B1).
        if kind(node) == "c_style_for_statement" {
            self.reeval_context(node_text(src, node));
        }
        // `for PATH in /tmp; do ls; done` assigns the loop variable.
        if let Some(v) = node.child_by_field_name("variable") {
            self.cdpath |= node_text(src, v) == "CDPATH";
            if is_sensitive_var(node_text(src, v)) {
                self.opaque(OpaqueKind::SensitiveAssignment, node_text(src, node));
            }
        }
        let f = frame.with_context(Context::ControlFlow(kw));
        self.walk_control(at, node, &f);
    }

    /// `[[ … ]]`/`[ … ]`: a segment of its own; substitutions inside walked.
    fn test_command(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        let text = node_text(src, node);
        let mut argv: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        if argv.is_empty() {
            argv.push("[".into());
        }
        if runs_arithmetic(&argv, argv[0] == "[[") {
            self.opaque(OpaqueKind::Arithmetic, text);
        }
        let words = argv.into_iter().map(Word::lit).collect();
        let idx = self.push_segment(words, 0, frame, Vec::new(), Vec::new(), Vec::new());
        let mut f = frame.clone();
        f.parent = idx;
        self.scan(at, node, &f);
    }

    /// `declare`/`export`/`local`/…: assignments and their values.
    fn declaration(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        // `declare 'a[$(cmd)]=1'` and `declare -i x=EXPR` evaluate subscripts and
        // values arithmetically, which runs substitutions held in the text.
        let integer = children(node).any(|ch| {
            kind(ch) == "word" && {
                let t = node_text(src, ch);
                t.starts_with(['-', '+']) && t.contains('i')
            }
        });
        if integer || node_text(src, node).contains('[') {
            self.opaque(OpaqueKind::Arithmetic, node_text(src, node));
        }
        for ch in children(node) {
            if kind(ch) == "variable_assignment" {
                self.assignment(at, ch, frame);
            } else if ch.is_named() {
                // `declare "PROMPT_COMMAND=…"`: a quoted assignment (attack pass 197 B3).
                let t = node_text(src, ch);
                let plain = t.trim_matches(['\'', '"']);
                if let Some((n, v)) = plain.split_once('=') {
                    self.cdpath |= n == "CDPATH";
                    let dynamic = kind(ch) != "raw_string" && t.contains(['$', '`']);
                    if let Some(k) = startup_code(n, v, dynamic) {
                        self.opaque(k, t);
                    }
                }
                self.scan(at, ch, frame);
            }
        }
    }

    /// A parse error: opaque; statements inside still walked.
    fn error_node(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        self.opaque(OpaqueKind::ParseError, node_text(src, node));
        for ch in children(node) {
            if ch.is_named() && is_statement_kind(kind(ch)) {
                self.stmt(at, ch, frame);
            } else if ch.is_named() {
                self.scan(at, ch, frame);
            }
        }
    }

    /// Walk a control-flow construct: statements are walked, other parts scanned for
    /// substitutions.
    fn walk_control(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        if at.depth > MAX_DEPTH {
            self.opaque(OpaqueKind::NestingTooDeep, node_text(src, node));
            return;
        }
        let kids: Vec<Node<'_>> = children(node).collect();
        for (i, ch) in kids.iter().enumerate() {
            if !ch.is_named() {
                if ch.is_missing() {
                    self.opaque(OpaqueKind::ParseError, &format!("missing {}", kind(ch)));
                }
                continue;
            }
            let k = kind(ch);
            if is_statement_kind(k) {
                let bg = kids.get(i + 1).is_some_and(|n| kind(n) == "&");
                if bg {
                    let mut f = frame.clone();
                    f.background = true;
                    self.stmt(at.down(), *ch, &f);
                } else {
                    self.stmt(at.down(), *ch, frame);
                }
            } else if matches!(k, "do_group" | "elif_clause" | "else_clause" | "case_item") {
                self.walk_control(at.down(), *ch, frame);
            } else {
                self.scan(at.down(), *ch, frame);
            }
        }
    }

    fn pipeline(&mut self, at: Cursor<'_>, stages: &[Node<'_>], frame: &Frame) {
        let id = self.next_pipeline;
        self.next_pipeline += 1;
        let len = stages.len();
        for (index, st) in stages.iter().enumerate() {
            let mut f = frame.clone();
            f.pipeline = Some(PipelinePosition { id, index, len });
            self.stmt(at, *st, &f);
        }
    }

    /// A stand-alone assignment (`X=1`, `export X=1`).
    fn assignment(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        let mut pending = Vec::new();
        let a = self.env_assignment(at, node, &mut pending);
        if is_sensitive_var(&a.name) {
            self.opaque(OpaqueKind::SensitiveAssignment, node_text(src, node));
        }
        self.out.assignments.push(a);
        self.walk_pending(at, pending, None, frame);
    }

    /// The name and (quote-removed) value of a `variable_assignment` node.
    fn env_assignment<'t>(
        &mut self,
        at: Cursor<'_>,
        node: Node<'t>,
        pending: &mut Vec<Node<'t>>,
    ) -> EnvAssignment {
        let src = at.src;
        let name_node = node.child_by_field_name("name");
        if let Some(n) = name_node.filter(|n| kind(n) == "subscript") {
            // `a[EXPR]=v`: the subscript is evaluated arithmetically (and its substitutions run).
            self.opaque(OpaqueKind::Arithmetic, node_text(src, n));
            self.collect_subs(at.down(), n, pending);
        }
        let name = name_node
            .map(|n| node_text(src, n).to_string())
            .unwrap_or_default();
        let (value, dynamic, array) = match node.child_by_field_name("value") {
            Some(v) => {
                let w = self.word(at.down(), v, pending);
                (w.text, w.dynamic, kind(v) == "array")
            }
            None => (String::new(), false, false),
        };
        self.assigned(&name, &value, dynamic, array, node_text(src, node));
        EnvAssignment {
            name,
            value,
            dynamic,
        }
    }

    /// What an assignment of `value` to `name` means beyond the variable (attack pass
    /// 193): a value holding command-substitution text is remembered for
    /// [`OpaqueKind::ReevaluatedText`]; a prompt (`PS0`, `PS1`, `PS2`, `PS4`) holding it runs
    /// it when the prompt is shown (`PS4` under `set -x`); `BASH_ENV`/`ENV` that is not a
    /// static plain path names a start-up file whose text is known only at run time.
    ///
    /// `array`: `value` is the raw text of a compound array value `(…)`, whose elements are
    /// judged as the words they are, not as text spliced onto a `(`.
    fn assigned(&mut self, name: &str, value: &str, dynamic: bool, array: bool, text: &str) {
        self.cdpath |= name == "CDPATH";
        self.pwd |= name == "PWD";
        let holds = if array {
            array_holds_substitution_text(value)
        } else {
            holds_substitution_text(value, dynamic)
        };
        if holds && self.reeval.0.is_none() {
            self.reeval.0 = Some(excerpt(text));
        }
        if holds && !dynamic && self.held.len() < MAX_HELD {
            self.held.push(value.to_string());
        }
        if let Some(kind) = startup_code(name, value, dynamic) {
            self.opaque(kind, text);
        }
    }

    /// Find substitutions anywhere below `node` and walk them (no parent segment).
    fn scan(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let mut pending = Vec::new();
        self.collect_subs(at, node, &mut pending);
        self.walk_pending(at, pending, frame.parent, frame);
    }

    fn collect_subs<'t>(&mut self, at: Cursor<'_>, node: Node<'t>, pending: &mut Vec<Node<'t>>) {
        let src = at.src;
        if at.depth > MAX_DEPTH {
            self.opaque(OpaqueKind::NestingTooDeep, node_text(src, node));
            return;
        }
        match kind(node) {
            "command_substitution" | "process_substitution" => pending.push(node),
            _ => {
                if node.is_error() || node.is_missing() {
                    self.opaque(OpaqueKind::ParseError, node_text(src, node));
                }
                match kind(node) {
                    "arithmetic_expansion" => {
                        self.opaque(OpaqueKind::Arithmetic, node_text(src, node))
                    }
                    // `${x@P}` runs the substitutions in x's value; `${!x}` reads x's value
                    // as a name, whose subscript is evaluated (attack pass 193 F3).
                    "expansion" => {
                        let t = node_text(src, node);
                        if t.contains("@P") {
                            self.opaque(OpaqueKind::PromptExpansion, t);
                        }
                        // `${a[x]}`, `${y:x}`: subscripts, offsets and lengths are
                        // evaluated arithmetically (attack pass 197 B1).
                        if t.starts_with("${!") || expansion_evaluates_arithmetic(t) {
                            self.reeval_context(t);
                        }
                    }
                    // `${x:-`cmd`}`: the grammar leaves backticks inside an expansion as text.
                    "word" if has_unparsed_expansion(node_text(src, node)) => {
                        self.opaque(OpaqueKind::UnparsedExpansion, node_text(src, node))
                    }
                    _ => {}
                }
                for ch in children(node) {
                    if ch.is_named() || ch.is_missing() {
                        self.collect_subs(at.down(), ch, pending);
                    }
                }
            }
        }
    }

    /// Walk collected substitution nodes.
    fn walk_pending(
        &mut self,
        at: Cursor<'_>,
        pending: Vec<Node<'_>>,
        parent: Option<usize>,
        frame: &Frame,
    ) {
        let src = at.src;
        for n in pending {
            let text = node_text(src, n);
            if kind(n) == "heredoc_body" {
                let f = frame.for_substitution(Context::CommandSubstitution, parent);
                self.heredoc_backticks(at, n, &f);
                continue;
            }
            let (kind, ctx) = if kind(n) == "process_substitution" {
                (
                    OpaqueKind::ProcessSubstitution,
                    Context::ProcessSubstitution,
                )
            } else if text.starts_with('`') {
                (OpaqueKind::Backticks, Context::CommandSubstitution)
            } else {
                (
                    OpaqueKind::CommandSubstitution,
                    Context::CommandSubstitution,
                )
            };
            self.opaque(kind, text);
            let f = frame.for_substitution(ctx, parent);
            // An unended `` ` `` (a parse error of its own) is walked as the grammar read it.
            if kind == OpaqueKind::Backticks && text.len() >= 2 && text.ends_with('`') {
                self.backtick_body(at, text, in_double_quotes(n), &f);
            } else {
                self.walk_block(at.down(), n, &f);
            }
        }
    }

    /// The backtick substitutions of an unquoted heredoc body, which the grammar leaves as
    /// text (`` cat <<EOF⏎`git reset --hard`⏎EOF `` ran unjudged): each runs as `` `…` ``
    /// does elsewhere. As bash reads the body, a backslash escapes the next character and
    /// a substitution ends at the first backtick not escaped; the `$(…)` the grammar parsed
    /// (with the backticks inside them) are walked as such and skipped here. An unended
    /// one is a parse error.
    fn heredoc_backticks(&mut self, at: Cursor<'_>, body: Node<'_>, frame: &Frame) {
        let src = at.src;
        let text = node_text(src, body);
        let base = body.start_byte();
        let parsed: Vec<std::ops::Range<usize>> = children(body)
            .filter(|c| kind(c) == "command_substitution")
            .map(|c| c.start_byte() - base..c.end_byte() - base)
            .collect();
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if let Some(r) = parsed.iter().find(|r| r.contains(&i)) {
                i = r.end;
                continue;
            }
            match b[i] {
                b'\\' => i += 2,
                b'`' => {
                    let start = i;
                    i += 1;
                    while i < b.len() && b[i] != b'`' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    let Some(sub) = text.get(start..=i) else {
                        self.opaque(OpaqueKind::ParseError, &text[start..]);
                        return;
                    };
                    self.opaque(OpaqueKind::Backticks, sub);
                    self.backtick_body(at, sub, false, frame);
                    i += 1;
                }
                _ => i += 1,
            }
        }
    }

    /// The body of `` `…` `` (its text with the backticks), run as bash runs it: re-read
    /// as a script after one level of backslash escapes is removed (`\\`, `` \` ``, `\$`,
    /// and in double quotes `\"`), so an escaped backtick inside is a command substitution
    /// of its own (`` `echo \`git reset --hard\`` ``, whose inner command the grammar
    /// read as words).
    fn backtick_body(&mut self, at: Cursor<'_>, text: &str, dquoted: bool, frame: &Frame) {
        let Some(body) = text
            .strip_prefix('`')
            .and_then(|t| t.strip_suffix('`'))
            .filter(|_| text.len() >= 2)
        else {
            self.opaque(OpaqueKind::ParseError, text);
            return;
        };
        let body = backtick_unescape(body, dquoted);
        let inner = Cursor {
            src: &body,
            depth: at.depth + 1,
            shells: at.shells,
        };
        self.parse_at(inner, frame);
    }

    /// Evaluate a word node to its text after quote removal.
    // Longer than most: one short arm per word node kind of the grammar (see grammar.rs).
    fn word<'t>(&mut self, at: Cursor<'_>, node: Node<'t>, pending: &mut Vec<Node<'t>>) -> Word {
        let src = at.src;
        let raw = node_text(src, node);
        if at.depth > MAX_DEPTH {
            self.opaque(OpaqueKind::NestingTooDeep, raw);
            return Word::dynamic(raw);
        }
        if node.is_error() || node.is_missing() {
            self.opaque(OpaqueKind::ParseError, raw);
            self.collect_subs(at.down(), node, pending);
            return Word::dynamic(raw);
        }
        match kind(node) {
            "word" => {
                if has_unparsed_expansion(raw) {
                    // The grammar left an expansion as plain text (e.g. x``ls): bash would
                    // still expand it, so its effect is not statically known.
                    self.opaque(OpaqueKind::UnparsedExpansion, raw);
                    return Word::dynamic(raw);
                }
                unescape_word(raw)
            }
            "raw_string" => Word::lit(
                raw.strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(raw)
                    .to_string(),
            ),
            "ansi_c_string" => {
                let inner = raw
                    .strip_prefix("$'")
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(raw);
                match decode_ansi_c(inner) {
                    Some(t) => Word::lit(t),
                    None => Word::dynamic(raw),
                }
            }
            "string" => self.dquote(at.down(), node, pending),
            "translated_string" => {
                let mut w = Word::default();
                for ch in children(node) {
                    if kind(ch) == "string" {
                        w = self.dquote(at.down(), ch, pending);
                    }
                }
                w
            }
            "concatenation" | "command_name" => {
                let mut w = Word::default();
                for ch in children(node) {
                    if !ch.is_named() {
                        let t = node_text(src, ch);
                        if has_unparsed_expansion(t) {
                            // An anonymous token such as an empty `` pair: bash expands it.
                            self.opaque(OpaqueKind::UnparsedExpansion, t);
                            w.dynamic = true;
                        }
                        w.text.push_str(t);
                        continue;
                    }
                    let p = self.word(at.down(), ch, pending);
                    w.text.push_str(&p.text);
                    w.dynamic |= p.dynamic;
                    w.glob |= p.glob;
                }
                w
            }
            "number" => {
                if node.named_child_count() > 0 {
                    self.collect_subs(at.down(), node, pending);
                    Word::dynamic(raw)
                } else {
                    Word::lit(raw.to_string())
                }
            }
            "simple_expansion" | "expansion" => {
                self.collect_subs(at.down(), node, pending);
                Word::dynamic(raw)
            }
            "command_substitution" | "process_substitution" => {
                pending.push(node);
                Word::dynamic(raw)
            }
            "arithmetic_expansion" => {
                self.opaque(OpaqueKind::Arithmetic, raw);
                self.collect_subs(at.down(), node, pending);
                Word::dynamic(raw)
            }
            "brace_expression" | "array" => {
                // `x=(a $(cmd))`: elements may hold substitutions; `a=([x]=1)` evaluates
                // the subscript `x` arithmetically.
                if kind(node) == "array" && raw.contains('[') {
                    self.reeval_context(raw);
                }
                self.collect_subs(at.down(), node, pending);
                Word {
                    text: raw.to_string(),
                    dynamic: true,
                    glob: true,
                }
            }
            "extglob_pattern" => Word {
                text: raw.to_string(),
                dynamic: false,
                glob: true,
            },
            "regex" | "$" | "==" | "=~" | "variable_name" => Word::lit(raw.to_string()),
            other => {
                self.opaque(OpaqueKind::UnknownSyntax, &format!("{other}: {raw}"));
                self.collect_subs(at.down(), node, pending);
                Word::dynamic(raw)
            }
        }
    }

    /// A double-quoted string.
    fn dquote<'t>(&mut self, at: Cursor<'_>, node: Node<'t>, pending: &mut Vec<Node<'t>>) -> Word {
        let src = at.src;
        let r = node.byte_range();
        let inner_start = r.start + 1;
        let inner_end = r.end.saturating_sub(1).max(inner_start);
        let mut w = Word::default();
        let mut pos = inner_start;
        for ch in children(node) {
            let cr = ch.byte_range();
            if cr.start >= inner_end || cr.end <= inner_start {
                continue; // the quotes
            }
            if cr.start > pos {
                if let Some(gap) = src.get(pos..cr.start) {
                    w.text.push_str(&unescape_dquote(gap));
                }
            }
            match kind(ch) {
                "string_content" => {
                    let t = node_text(src, ch);
                    if has_unparsed_expansion(t) {
                        self.opaque(OpaqueKind::UnparsedExpansion, t);
                        w.dynamic = true;
                    }
                    w.text.push_str(&unescape_dquote(t))
                }
                _ if ch.is_named() => {
                    let p = self.word(at.down(), ch, pending);
                    w.text.push_str(&p.text);
                    w.dynamic |= p.dynamic;
                }
                _ => w.text.push_str(node_text(src, ch)),
            }
            pos = cr.end;
        }
        if inner_end > pos {
            if let Some(gap) = src.get(pos..inner_end) {
                w.text.push_str(&unescape_dquote(gap));
            }
        }
        w
    }

    /// A redirection node.
    // Longer than most: the two redirection shapes (heredoc, file/herestring) share the
    // fd/operator/target bookkeeping.
    fn redirect<'t>(
        &mut self,
        at: Cursor<'_>,
        node: Node<'t>,
        pending: &mut Vec<Node<'t>>,
    ) -> Redirection {
        let src = at.src;
        self.redirect_args.clear();
        let mut fd = None;
        let mut op = String::new();
        let mut target: Option<Word> = None;
        let mut extra = Vec::new();
        let kind_node = kind(node);
        if kind_node == "heredoc_redirect" {
            let mut body = None;
            // `<<[-]DELIM` plus continuations (pipeline, `&&` tail, redirects) that the
            // caller handles; the delimiter, the body and the words after the delimiter
            // (`git reset <<EOF --hard`: bash passes them as arguments) matter here.
            let mut c = node.walk();
            let mut more = c.goto_first_child();
            // The end of the delimiter word: a word right after it without a blank is the
            // rest of the delimiter (`<<"E"OF`, which the grammar splits), not an argument.
            let mut delim_end = None;
            while more {
                let (field, ch) = (c.field_name(), c.node());
                more = c.goto_next_sibling();
                if field == Some("argument") && !ch.is_error() && !ch.is_missing() {
                    if delim_end == Some(ch.start_byte()) {
                        if let Some(t) = target.as_mut() {
                            t.text.push_str(node_text(src, ch));
                        }
                        delim_end = Some(ch.end_byte());
                        continue;
                    }
                    delim_end = None;
                    let w = self.word(at.down(), ch, pending);
                    extra.push(w);
                    continue;
                }
                delim_end = None;
                match kind(ch) {
                    "file_descriptor" => fd = Some(node_text(src, ch).to_string()),
                    "heredoc_start" => {
                        delim_end = Some(ch.end_byte());
                        target = Some(Word::lit(node_text(src, ch).to_string()))
                    }
                    "heredoc_body" => {
                        body = Some(node_text(src, ch).to_string());
                        // The grammar parses `$(…)` in an unquoted body but leaves backticks
                        // as text: the body is walked for them with the substitutions.
                        let quoted = target
                            .as_ref()
                            .is_some_and(|t| t.text.contains(['\'', '"', '\\']));
                        if !quoted && node_text(src, ch).contains('`') {
                            pending.push(ch);
                        }
                        self.collect_subs(at.down(), ch, pending)
                    }
                    "<<" | "<<-" if op.is_empty() => op.push_str(kind(ch)),
                    _ if ch.is_error() || ch.is_missing() => {
                        self.opaque(OpaqueKind::ParseError, node_text(src, ch))
                    }
                    _ => {}
                }
            }
            let t = target.unwrap_or_default();
            // Static when the delimiter is quoted (no expansion at all) or the body has
            // nothing to expand.
            let quoted = t.text.contains(['\'', '"', '\\']);
            let text = body.filter(|b| quoted || !b.contains(['$', '`', '\\']));
            self.redirect_args = extra;
            return Redirection {
                fd,
                op: if op.is_empty() { "<<".into() } else { op },
                kind: RedirectKind::Heredoc,
                target: t.text,
                dynamic: false,
                text,
            };
        }
        for ch in children(node) {
            if ch.is_error() || ch.is_missing() {
                self.opaque(OpaqueKind::ParseError, node_text(src, ch));
                continue;
            }
            match kind(ch) {
                "file_descriptor" => fd = Some(node_text(src, ch).to_string()),
                // `<>` read through its stand-in `>` ([`grammar_gaps`]).
                ">" if src.get(ch.start_byte()..ch.start_byte() + 2) == Some("<>") => {
                    op.push_str("<>")
                }
                _ if !ch.is_named() => op.push_str(kind(ch)),
                _ => {
                    let w = self.word(at.down(), ch, pending);
                    if target.is_none() {
                        target = Some(w);
                    } else {
                        extra.push(w);
                    }
                }
            }
        }
        // `<&-`/`>&-` close a descriptor and take no target: the grammar still hangs the
        // next word on them (`git reset <&- --hard`), which bash passes as an argument.
        if matches!(op.as_str(), "<&-" | ">&-") {
            extra.splice(0..0, target.take());
        }
        let target = target.unwrap_or_default();
        let kind = match kind_node {
            "heredoc_redirect" => RedirectKind::Heredoc,
            "herestring_redirect" => RedirectKind::Herestring,
            _ => match op.as_str() {
                "<" => RedirectKind::Read,
                ">>" | "&>>" => RedirectKind::Append,
                "<>" => RedirectKind::ReadWrite,
                "<&" | "<&-" | ">&-" => RedirectKind::Dup,
                ">&" if target.text == "-"
                    || (!target.dynamic
                        && !target.text.is_empty()
                        && target.text.bytes().all(|b| b.is_ascii_digit())) =>
                {
                    RedirectKind::Dup
                }
                _ => RedirectKind::Write,
            },
        };
        let op = if op.is_empty() {
            match kind {
                RedirectKind::Heredoc => "<<".to_string(),
                RedirectKind::Herestring => "<<<".to_string(),
                _ => op,
            }
        } else {
            op
        };
        let text = target.text;
        self.redirect_args = extra;
        let fed = (kind == RedirectKind::Herestring && !target.dynamic).then(|| text.clone());
        Redirection {
            fd,
            op,
            kind,
            target: text,
            dynamic: target.dynamic,
            text: fed,
        }
    }

    // Longer than most: a heredoc carries its own continuations (redirects, a pipeline
    // tail, a list tail) that are walked in order here.
    fn redirected(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        let mut redirects = Vec::new();
        let mut pending = Vec::new();
        let mut after: Vec<Node<'_>> = Vec::new(); // `&&`/`||` continuation after a heredoc
        let mut piped: Vec<Node<'_>> = Vec::new(); // `| …` continuation after a heredoc
        let mut body = None;
        let mut extra_args: Vec<Word> = Vec::new();
        let mut first_redirect: Option<usize> = None;
        let mut c = node.walk();
        let mut fields = Vec::new();
        if c.goto_first_child() {
            loop {
                fields.push((c.field_name(), c.node()));
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        for (field, ch) in fields {
            if field == Some("body") {
                body = Some(ch);
                continue;
            }
            match kind(ch) {
                "file_redirect" | "herestring_redirect" => {
                    first_redirect.get_or_insert(ch.start_byte());
                    redirects.push(self.redirect(at.down(), ch, &mut pending));
                    extra_args.append(&mut self.redirect_args);
                }
                "heredoc_redirect" => {
                    first_redirect.get_or_insert(ch.start_byte());
                    redirects.push(self.redirect(at.down(), ch, &mut pending));
                    extra_args.append(&mut self.redirect_args);
                    // Heredoc continuations: its own redirects, a pipeline tail, a list tail.
                    let mut hc = ch.walk();
                    if hc.goto_first_child() {
                        loop {
                            let (f, n) = (hc.field_name(), hc.node());
                            match (f, kind(n)) {
                                (_, "file_redirect" | "herestring_redirect") => {
                                    redirects.push(self.redirect(at.down(), n, &mut pending));
                                    extra_args.append(&mut self.redirect_args);
                                }
                                (Some("right"), _) => after.push(n),
                                (_, "pipeline") => {
                                    piped.extend(children(n).filter(|x| x.is_named()))
                                }
                                (_, k) if n.is_named() && is_statement_kind(k) => piped.push(n),
                                _ => {}
                            }
                            if !hc.goto_next_sibling() {
                                break;
                            }
                        }
                    }
                }
                _ if ch.is_error() || ch.is_missing() => {
                    self.opaque(OpaqueKind::ParseError, node_text(src, ch));
                }
                _ => {}
            }
        }
        // The simple command the redirections follow: the body, or the last command of a
        // body the grammar reads as a pipeline or list (`foo | git reset >x --hard`).
        let owner_cmd = body.and_then(last_command);
        let fixup_id = owner_cmd.map(|b| b.id());
        match owner_cmd {
            // `bash 0< <(…)`: the grammar reads `0` as the command's last argument (and
            // `git reset {fd}>x` reads `{fd}`); `bash 3< <(…) /dev/fd/3`: `/dev/fd/3` as the
            // redirection's second target.
            Some(b) => {
                let digits = b.named_child(b.named_child_count().saturating_sub(1));
                let drop = b.named_child_count() > 1
                    && digits.is_some_and(|d| {
                        Some(d.end_byte()) == first_redirect && is_fd_word(node_text(src, d))
                    })
                    && redirects.first().is_some_and(|r| r.fd.is_none());
                if drop {
                    if let (Some(r), Some(d)) = (redirects.first_mut(), digits) {
                        r.fd = Some(node_text(src, d).to_string());
                    }
                }
                self.body_fixups.push((b.id(), drop, extra_args));
            }
            None => {
                if let Some(r) = redirects.last_mut().filter(|_| !extra_args.is_empty()) {
                    // Words after a redirection with no simple command to pass them to:
                    // fail closed rather than drop them.
                    self.opaque(
                        OpaqueKind::UnknownSyntax,
                        &format!("words after a redirection: {}", node_text(src, node)),
                    );
                    r.target.push(' ');
                    r.target.push_str(&join(&extra_args));
                }
            }
        }
        let mut f = frame.clone();
        if !redirects.is_empty() {
            if body.is_some_and(|b| kind(b) == "list") && piped.is_empty() {
                Rc::make_mut(&mut f.list_redirects).extend(redirects);
            } else {
                Rc::make_mut(&mut f.redirects).extend(redirects);
            }
        }
        if body.is_none() && !f.redirects.is_empty() {
            self.redirect_only(Vec::new(), Vec::new(), &f);
        }
        // The segment a simple command's redirections belong to: what their substitutions
        // feed (`bash < <(curl …)`: attack pass 193 F2).
        let body_first = self.out.segments.len();
        if let Some(b) = body {
            if piped.is_empty() {
                self.stmt(at, b, &f);
            } else {
                // `cat <<EOF | sh`: the heredoc command is the first pipeline stage.
                let id = self.next_pipeline;
                self.next_pipeline += 1;
                let len = piped.len() + 1;
                f.pipeline = Some(PipelinePosition { id, index: 0, len });
                self.stmt(at, b, &f);
                for (i, st) in piped.iter().enumerate() {
                    let mut g = frame.clone();
                    g.pipeline = Some(PipelinePosition {
                        id,
                        index: i + 1,
                        len,
                    });
                    self.stmt(at, *st, &g);
                }
            }
        }
        // The owner's words must have reached its segment: fail closed when the walk never
        // took them (a shape [`last_command`] misreads).
        if let Some(i) = fixup_id.and_then(|id| self.body_fixups.iter().rposition(|f| f.0 == id)) {
            let (_, _, words) = self.body_fixups.remove(i);
            if !words.is_empty() {
                self.opaque(
                    OpaqueKind::UnknownSyntax,
                    &format!("words after a redirection: {}", node_text(src, node)),
                );
            }
        }
        let owner = (body.is_some_and(|b| kind(b) == "command")
            && self.out.segments.len() > body_first)
            .then_some(body_first);
        self.walk_pending(at, pending, owner, frame);
        if let Some(i) = owner {
            self.substituted_input(at, i, frame);
        }
        for a in after {
            self.stmt(at, a, frame);
        }
    }

    fn command(&mut self, at: Cursor<'_>, node: Node<'_>, frame: &Frame) {
        let src = at.src;
        let mut env = Vec::new();
        let mut words = Vec::new();
        let mut redirects = Vec::new();
        let mut pending = Vec::new();
        let mut inner_stmts = Vec::new();
        let fixup = self
            .body_fixups
            .iter()
            .rposition(|f| f.0 == node.id())
            .map(|i| self.body_fixups.remove(i));
        // The end byte and text of the last word when it is all digits (`0` of `0<`).
        let mut digits: Option<(usize, String)> = None;
        let mut c = node.walk();
        let mut more = c.goto_first_child();
        while more {
            let (field, ch) = (c.field_name(), c.node());
            more = c.goto_next_sibling();
            if ch.is_error() || ch.is_missing() {
                self.opaque(OpaqueKind::ParseError, node_text(src, ch));
                self.collect_subs(at.down(), ch, &mut pending);
                continue;
            }
            match (field, kind(ch)) {
                (_, "variable_assignment") => {
                    env.push(self.env_assignment(at, ch, &mut pending));
                }
                (Some("redirect"), _)
                | (_, "file_redirect" | "herestring_redirect" | "heredoc_redirect") => {
                    let mut r = self.redirect(at.down(), ch, &mut pending);
                    // `bash 0< f x`: the grammar reads the descriptor `0` as an argument.
                    if let Some((_, fd)) = digits
                        .take()
                        .filter(|(end, _)| *end == ch.start_byte() && words.len() > 1)
                    {
                        if r.fd.is_none() {
                            words.pop();
                            r.fd = Some(fd);
                        }
                    }
                    redirects.push(r);
                    words.append(&mut self.redirect_args);
                    continue;
                }
                (Some("name"), _) | (Some("argument"), _) => {
                    let w = self.word(at.down(), ch, &mut pending);
                    let t = node_text(src, ch);
                    digits = is_fd_word(t).then(|| (ch.end_byte(), t.to_string()));
                    words.push(w);
                    continue;
                }
                (_, "comment") => {}
                (_, "subshell" | "compound_statement") => {
                    // `time ( … )`, `coproc ( … )`: the grammar hangs the compound command
                    // under the keyword's command; its commands run.
                    inner_stmts.push(ch);
                }
                (_, k) if ch.is_named() => {
                    self.opaque(
                        OpaqueKind::UnknownSyntax,
                        &format!("{k}: {}", node_text(src, ch)),
                    );
                    self.collect_subs(at.down(), ch, &mut pending);
                }
                _ => {}
            }
            digits = None;
        }
        if let Some((_, drop, mut extra)) = fixup {
            if drop && words.len() > 1 {
                words.pop();
            }
            words.append(&mut extra);
        }
        self.pipeline_prefix(src, node, &mut words);
        let first = if !words.is_empty() {
            self.emit(at, words, env, redirects, frame)
        } else if !redirects.is_empty() {
            self.redirect_only(redirects, env, frame)
        } else {
            None
        };
        self.walk_pending(at, pending, first, frame);
        if let Some(i) = first {
            self.substituted_input(at, i, frame);
        }
        if !inner_stmts.is_empty() {
            let head = node_text(src, node);
            self.opaque(OpaqueKind::KeywordCompound, head);
            for st in inner_stmts {
                self.stmt(at, st, frame);
            }
        }
    }

    /// Bash's pipeline grammar reads `!` and `time [-p] [--]` before a command, in any order
    /// and repetition, as reserved words; the grammar reads only a first `!` (a
    /// `negated_command`) and the rest as words (`time ! git reset --hard`, `! ! rm -rf .git`
    /// ran the command cordon saw as a program named `!`). Drop each `!` of that prefix
    /// (the `time` words stay: they are looked through as the `time` wrapper). A reserved
    /// word of a compound command in command position (`! if …; then …; fi`, `time while
    /// …`) was not read as one by the grammar, which splits it into fake commands (`if …`,
    /// `then :`, `fi`): the script does not parse cleanly.
    fn pipeline_prefix(&mut self, src: &str, node: Node<'_>, words: &mut Vec<Word>) {
        let mut i = 0;
        let mut after_time = false;
        let mut bangs = Vec::new();
        while let Some(w) = words.get(i).filter(|w| !w.dynamic) {
            match w.text.as_str() {
                "!" => {
                    bangs.push(i);
                    after_time = false;
                }
                "time" => after_time = true,
                "-p" | "--" if after_time => {}
                _ => break,
            }
            i += 1;
        }
        if i >= words.len() {
            return;
        }
        let opens_compound = !words[i].dynamic
            && matches!(
                words[i].text.as_str(),
                "if" | "then"
                    | "else"
                    | "elif"
                    | "fi"
                    | "while"
                    | "until"
                    | "for"
                    | "select"
                    | "case"
                    | "esac"
                    | "do"
                    | "done"
                    | "function"
                    | "[["
                    | "(("
            );
        if opens_compound {
            self.opaque(OpaqueKind::ParseError, node_text(src, node));
        }
        for b in bangs.into_iter().rev() {
            words.remove(b);
        }
    }

    /// Look through wrappers, recurse into shells, and push the resulting segment(s).
    /// Returns the index of the first segment produced.
    fn emit(
        &mut self,
        at: Cursor<'_>,
        words: Vec<Word>,
        env: Vec<EnvAssignment>,
        redirects: Vec<Redirection>,
        frame: &Frame,
    ) -> Option<usize> {
        // `env 'BASH_FUNC_ls%%=() { …; }' bash -c ls`: an exported function, which env
        // passes on although the name is not an identifier (attack pass 197 B3).
        if let Some(w) = words.iter().find(|w| {
            w.text
                .split_once('=')
                .is_some_and(|(n, _)| n.starts_with("BASH_FUNC_"))
        }) {
            self.opaque(OpaqueKind::StartupFile, &w.text.clone());
        }
        let mut u = Unwrapped::new(frame, env);
        while u.start < words.len() {
            let w = &words[u.start];
            if !w.dynamic && w.text == "{" && u.start + 1 < words.len() {
                // `time { …; }`, `coproc NAME { …; }`, `! { …; }`: the grammar reads the
                // reserved word `{` as a word and ends the command at the first `;`. The
                // words after `{` are the first inner command; later ones are statements of
                // their own.
                self.opaque(OpaqueKind::KeywordCompound, &w.text);
                u.start += 1;
                continue;
            }
            let Some(pname) = self.trusted_name(w) else {
                // The dynamic loader at another path runs its operand too (attack pass C-A).
                if let Some(Step::SplitString { text }) = untrusted_loader_step(&words[u.start..]) {
                    return self.env_split_string(at, &words[u.start], u, redirects, frame, text);
                }
                break;
            };
            match wrapper_step(&pname, &words[u.start..]) {
                Step::Program => break,
                Step::DynamicShell => {
                    self.opaque(OpaqueKind::DynamicShellArguments, &join(&words[u.start..]));
                    break;
                }
                Step::Inner {
                    consumed,
                    env,
                    chdir,
                    runtime_args,
                    opaque,
                } => {
                    for (k, t) in opaque {
                        self.opaque(k, &t);
                    }
                    let argv = &words[u.start..u.start + consumed];
                    // `env PROMPT_COMMAND=… bash`, `env BASH_ENV=<(…) sh`: judged as the
                    // same assignments written before the command (attack pass 197 B3).
                    for e in &env {
                        let text = format!("{}={}", e.name, e.value);
                        self.assigned(&e.name, &e.value, e.dynamic, false, &text);
                    }
                    u.look_through(&pname, argv, env, chdir, runtime_args);
                }
                Step::SplitString { text } => {
                    return self.env_split_string(at, &words[u.start], u, redirects, frame, text)
                }
                Step::Shell { script } => {
                    let sw = &words[u.start + script];
                    if sw.dynamic {
                        self.opaque(OpaqueKind::DynamicShellScript, &sw.text);
                        break;
                    }
                    let shell = Wrapper {
                        name: pname.to_string(),
                        argv: texts(&words[u.start..u.start + script]),
                    };
                    return self.shell_script(at, shell, &sw.text, u, redirects, frame);
                }
            }
        }
        if u.start >= words.len() {
            // Every word was consumed by wrappers: the last wrapper is the program itself.
            u.start = u.wrapper_starts.pop()?;
            u.wrappers.pop();
        }
        let start = u.start;
        let (f, wrappers, env) = u.into_frame(frame);
        let mut redirects_all = frame.redirects.to_vec();
        redirects_all.extend(redirects);
        let idx = self.push_segment(words, start, &f, wrappers, env, redirects_all)?;
        self.after_push(at, idx, frame);
        Some(idx)
    }

    /// `env -S STRING CMD…`: opaque; the string and the rest are parsed best-effort so
    /// forbid checks still see them.
    fn env_split_string(
        &mut self,
        at: Cursor<'_>,
        env_word: &Word,
        u: Unwrapped,
        redirects: Vec<Redirection>,
        frame: &Frame,
        text: String,
    ) -> Option<usize> {
        self.opaque(OpaqueKind::EnvSplitString, &text);
        let mut f = frame.clone();
        let fw = Rc::make_mut(&mut f.wrappers);
        fw.extend(u.wrappers);
        fw.push(Wrapper {
            name: "env -S".into(),
            argv: vec![env_word.text.clone(), "-S".into()],
        });
        f.env = Rc::new(u.env);
        Rc::make_mut(&mut f.redirects).extend(redirects);
        let before = self.out.segments.len();
        self.parse_into(&text, &f, at);
        (self.out.segments.len() > before).then_some(before)
    }

    /// `bash -c SCRIPT` (after any wrappers): the script is parsed one shell level down
    /// with the wrappers, environment and redirections seen so far.
    fn shell_script(
        &mut self,
        at: Cursor<'_>,
        shell: Wrapper,
        script: &str,
        u: Unwrapped,
        redirects: Vec<Redirection>,
        frame: &Frame,
    ) -> Option<usize> {
        let via_xargs = frame
            .wrappers
            .iter()
            .chain(u.wrappers.iter())
            .any(|w| w.name == "xargs");
        if u.runtime_args && (via_xargs || script.contains("{}")) {
            // `xargs sh -c '…'` / `find -exec sh -c '…' {}`: the script is visible (and
            // checked) but its arguments arrive at run time.
            self.opaque(OpaqueKind::RuntimeScriptArguments, script);
        }
        // `xargs -I{} sh -c {}`: the whole line arrives at run time; read as a command
        // known only then, so that it is asked about (attack pass 63).
        let script = if u.runtime_args && script.trim() == "{}" {
            "$RUN_TIME_LINE"
        } else {
            script
        };
        let mut all_wrappers = frame.wrappers.to_vec();
        all_wrappers.extend(u.wrappers);
        all_wrappers.push(shell);
        let mut redirects_all = frame.redirects.to_vec();
        redirects_all.extend(redirects);
        let f = Frame {
            wrappers: Rc::new(all_wrappers),
            env: Rc::new(u.env),
            redirects: Rc::new(redirects_all),
            context: frame.context.clone(),
            pipeline: frame.pipeline,
            parent: frame.parent,
            runtime_args: false,
            background: frame.background,
            chdir: u.chdir,
            after_cds: frame.after_cds.clone(),
            list_redirects: Rc::new(Vec::new()),
        };
        let before = self.out.segments.len();
        self.parse_into(script, &f, at);
        (self.out.segments.len() > before).then_some(before)
    }

    /// A redirection without a command (`> file`): recorded as the no-op `:` with those
    /// redirections, so writes are still checked.
    fn redirect_only(
        &mut self,
        redirects: Vec<Redirection>,
        env: Vec<EnvAssignment>,
        frame: &Frame,
    ) -> Option<usize> {
        let mut all = frame.redirects.to_vec();
        all.extend(redirects);
        let mut env_all = frame.env.to_vec();
        env_all.extend(env);
        let idx = self.push_segment(
            vec![Word::lit(":".into())],
            0,
            frame,
            frame.wrappers.to_vec(),
            env_all,
            all,
        )?;
        self.out.segments[idx]
            .notes
            .push("redirection without a command (recorded as `:`)".into());
        Some(idx)
    }

    /// Build and push a segment from `words[start..]`.
    fn push_segment(
        &mut self,
        words: Vec<Word>,
        start: usize,
        frame: &Frame,
        wrappers: Vec<Wrapper>,
        env: Vec<EnvAssignment>,
        redirections: Vec<Redirection>,
    ) -> Option<usize> {
        if self.out.segments.len() >= MAX_SEGMENTS {
            if !self.full {
                self.full = true;
                self.opaque(
                    OpaqueKind::TooManySegments,
                    &format!("more than {MAX_SEGMENTS}"),
                );
            }
            return None;
        }
        let program = self.classify(&words[start]);
        let mut words = words;
        words.drain(..start);
        let mut notes = Vec::new();
        let mut dynamic_args = Vec::new();
        let glob_args = words
            .iter()
            .enumerate()
            .filter(|(_, w)| w.glob && !w.dynamic)
            .map(|(i, _)| i)
            .collect();
        for (i, w) in words.iter().enumerate() {
            if w.dynamic {
                dynamic_args.push(i);
                if i > 0 {
                    notes.push(format!("argument {i} is not static: {}", excerpt(&w.text)));
                }
            }
        }
        match program.kind {
            ProgramKind::Dynamic => {
                let w = &words[0];
                let kind = if w.text.is_empty() {
                    OpaqueKind::EmptyCommandName
                } else if w.dynamic {
                    OpaqueKind::DynamicCommandName
                } else {
                    OpaqueKind::GlobCommandName
                };
                self.opaque(kind, &w.text);
            }
            ProgramKind::NonAscii => notes.push(format!(
                "program name {:?} contains non-ASCII or control characters: treated as unknown",
                words[0].text
            )),
            ProgramKind::UntrustedPath => notes.push(format!(
                "program path {} is not in a trusted location: treated as unknown",
                words[0].text
            )),
            _ => {}
        }
        let seg = Segment {
            argv: words.into_iter().map(|w| w.text).collect(),
            dynamic_args,
            program,
            wrappers,
            env,
            redirections,
            context: frame.context.to_vec(),
            pipeline: frame.pipeline,
            parent: frame.parent,
            runtime_args: frame.runtime_args,
            background: frame.background,
            chdir: frame.chdir.clone(),
            notes,
            after_cds: frame.after_cds.to_vec(),
            glob_args,
        };
        self.out.segments.push(seg);
        Some(self.out.segments.len() - 1)
    }

    /// Follow-ups after a segment was pushed: eval/alias/trap texts, find -exec, builtins
    /// that run code, interpreters fed by heredocs or pipes.
    fn after_push(&mut self, at: Cursor<'_>, idx: usize, frame: &Frame) {
        let seg = &self.out.segments[idx];
        if !seg.program.is_trusted_name() {
            return;
        }
        let name = seg.program.name.as_str();
        // Builtins that read a variable's value as a name or as code (`read "$x"`,
        // `printf -v "$x"`, `trap "$x" EXIT`, `eval "$x"`; attack pass 193 F3).
        if !seg.dynamic_args.is_empty()
            && matches!(
                name,
                "read"
                    | "mapfile"
                    | "readarray"
                    | "getopts"
                    | "wait"
                    | "trap"
                    | "eval"
                    | "unset"
                    | "declare"
                    | "typeset"
                    | "local"
                    | "export"
                    | "readonly"
                    | "let"
            )
            || (name == "printf" && seg.argv.iter().any(|a| a == "-v"))
        {
            let text = seg.argv.join(" ");
            self.reeval_context(&text);
        }
        let seg = &self.out.segments[idx];
        // `read PROMPT_COMMAND <<< …`, `printf -v PS4 …`, `declare "BASH_FUNC_f%%=…"`: a
        // start-up variable set from text the grammar does not show as an assignment
        // (attack pass 197 B3).
        // `read CDPATH`, `declare "CDPATH=.git"`, `printf -v CDPATH`.
        self.cdpath |= seg.argv.iter().skip(1).any(|a| {
            a.split(['=', '[', '+']).next() == Some("CDPATH")
                && matches!(
                    seg.program.name.as_str(),
                    "read"
                        | "mapfile"
                        | "readarray"
                        | "printf"
                        | "getopts"
                        | "declare"
                        | "typeset"
                        | "local"
                        | "export"
                        | "readonly"
                )
        });
        let seg = &self.out.segments[idx];
        if let Some(kind) = startup_variable_set(seg) {
            let text = seg.argv.join(" ");
            self.opaque(kind, &text);
        }
        let seg = &self.out.segments[idx];
        let name = seg.program.name.as_str();
        if INTERPRETERS.contains(&name) {
            self.interpreter_input(at, idx, frame);
            return;
        }
        if matches!(name, "source" | ".") {
            self.source_input(at, idx, frame);
        }
        let seg = &self.out.segments[idx];
        let name = seg.program.name.as_str();
        match name {
            "eval" | "alias" | "trap" => self.code_text(at, idx, frame),
            "find" => self.find_exec(at, idx, frame),
            "mapfile" | "readarray" | "compgen" | "complete" => self.builtin_code(at, idx, frame),
            _ => {
                if let Some(kind) = builtin_runs_code(seg) {
                    let text = if kind == OpaqueKind::ExecFd {
                        "exec with redirections".to_string()
                    } else {
                        seg.argv.join(" ")
                    };
                    self.opaque(kind, &text);
                }
            }
        }
    }

    /// An interpreter whose program comes from a heredoc, a herestring or a pipe: opaque;
    /// a shell's static input (a heredoc or herestring without expansions, `echo TEXT |`)
    /// is parsed one shell level down too, so that what it runs is checked (attack pass
    /// 62: `bash <<EOF` with `git reset --hard` in it ran unasked).
    fn interpreter_input(&mut self, at: Cursor<'_>, idx: usize, frame: &Frame) {
        let seg = &self.out.segments[idx];
        // What the interpreter runs is its input: no script operand (an option's argument,
        // `bash -o errexit`, is none), or `-`, `-s`, `/dev/stdin` as the script.
        let program = crate::knowledge::shells::program_source(&seg.program.name, &seg.argv[1..]);
        let reads_input = program == crate::knowledge::shells::ProgramSource::Stdin;
        // `python3 --version <<< TEXT`: it prints its version and reads no input, whatever
        // the input is (new-user pass: with a piped stdin, `cordon run -- python3 --version`
        // was asked).
        let reads_nothing = program == crate::knowledge::shells::ProgramSource::Nothing;
        let fed: Vec<&Redirection> = seg
            .redirections
            .iter()
            .filter(|r| matches!(r.kind, RedirectKind::Heredoc | RedirectKind::Herestring))
            .collect();
        let later_stage = seg.pipeline.filter(|p| p.index > 0);
        let before = later_stage.and_then(|p| {
            self.out.segments.iter().rev().find(|s| {
                s.pipeline
                    .is_some_and(|q| q.id == p.id && q.index + 1 == p.index)
            })
        });
        // A shell's static input: a heredoc or herestring without expansions, and the
        // stage before when [`static_output`] knows what it writes.
        let mut inputs: Vec<String> = Vec::new();
        if crate::knowledge::shells::SHELLS.contains(&seg.program.name.as_str()) && reads_input {
            inputs.extend(fed.iter().filter_map(|r| r.text.clone()));
            inputs.extend(before.and_then(static_output));
        }
        // The caller's stand-in for the command's own stdin ([`crate::RUN_TIME_STDIN_VAR`])
        // is no heredoc: an interpreter reading its program there is said to read a pipe;
        // one given its program reads it as data, as any other command would.
        let own_stdin = fed.iter().any(|r| crate::is_run_time_stdin(r));
        let heredoc = fed.iter().any(|r| !crate::is_run_time_stdin(r)) && !reads_nothing;
        let piped = (later_stage.is_some() || own_stdin) && reads_input;
        let text = seg.argv.join(" ");
        if heredoc {
            self.opaque(OpaqueKind::HeredocToInterpreter, &text);
        }
        if piped {
            self.opaque(OpaqueKind::StdinScript, &text);
        }
        for input in inputs {
            let mut f = frame.with_context(Context::ShellInput);
            f.parent = Some(idx);
            f.pipeline = None;
            self.parse_into(&input, &f, at);
        }
    }

    /// `source /dev/stdin <<< 'TEXT'` (`.`, `/dev/fd/0`, `/proc/self/fd/0`, a heredoc): the
    /// static text it reads is parsed one shell level down as its commands, as a shell's
    /// input is (attack pass 197 B2); other input is asked about by the dangerous-command
    /// detector.
    fn source_input(&mut self, at: Cursor<'_>, idx: usize, frame: &Frame) {
        let seg = &self.out.segments[idx];
        let reads_stdin = seg
            .argv
            .iter()
            .skip(1)
            .find(|a| *a != "--")
            .is_some_and(|a| crate::knowledge::shells::stdin_path(a));
        if !reads_stdin {
            return;
        }
        let text = seg
            .redirections
            .iter()
            .rev()
            .find(|r| r.fd.as_deref().is_none_or(|f| f == "0") && r.op.starts_with('<'))
            .filter(|r| matches!(r.kind, RedirectKind::Heredoc | RedirectKind::Herestring))
            .and_then(|r| r.text.clone());
        if let Some(text) = text {
            let mut f = frame.with_context(Context::ShellInput);
            f.parent = Some(idx);
            f.pipeline = None;
            self.parse_into(&text, &f, at);
        }
    }

    /// A shell whose program is a process substitution's output (`bash < <(echo TEXT)`,
    /// `sh <(printf …)`): when [`static_output`] knows what that writes, it is parsed one
    /// shell level down as the shell's input, so that what it runs is checked (attack pass
    /// 193 F2); any other producer is asked about by the dangerous-command detector.
    fn substituted_input(&mut self, at: Cursor<'_>, idx: usize, frame: &Frame) {
        let seg = &self.out.segments[idx];
        if !seg.program.is_trusted_name()
            || !crate::knowledge::shells::SHELLS.contains(&seg.program.name.as_str())
        {
            return;
        }
        let text =
            match crate::knowledge::shells::program_from_substitution(&self.out.segments, idx) {
                Some(Some(producer)) => static_output(producer),
                _ => None,
            };
        if let Some(text) = text {
            let mut f = frame.with_context(Context::ShellInput);
            f.parent = Some(idx);
            f.pipeline = None;
            self.parse_into(&text, &f, at);
        }
    }

    /// `eval TEXT`, `alias x='TEXT'`, `trap 'TEXT' SIG`: opaque, and static text is parsed
    /// one shell level down so forbid checks see it.
    fn code_text(&mut self, at: Cursor<'_>, idx: usize, frame: &Frame) {
        let seg = &self.out.segments[idx];
        let name = seg.program.name.clone();
        let argv = seg.argv.clone();
        let all_static = seg.dynamic_args.is_empty();
        let nested = |b: &mut Self, kind: OpaqueKind, text: String, ctx: Context| {
            b.opaque(kind, &text);
            let mut f = frame.with_context(ctx);
            f.parent = Some(idx);
            f.pipeline = None;
            b.parse_into(&text, &f, at);
        };
        // `eval -- TEXT` / `trap -- ACTION SIG`: `--` only ends the builtin's options.
        let text_at = if argv.get(1).is_some_and(|a| a == "--") {
            2
        } else {
            1
        };
        match name.as_str() {
            "eval" if all_static && argv.len() > text_at => nested(
                self,
                OpaqueKind::Eval,
                argv[text_at..].join(" "),
                Context::Eval,
            ),
            "eval" => self.opaque(OpaqueKind::Eval, &argv.join(" ")),
            "alias" => {
                self.opaque(OpaqueKind::Alias, &argv.join(" "));
                for a in argv.iter().skip(1) {
                    if let Some((_, v)) = a.split_once('=') {
                        if all_static {
                            nested(self, OpaqueKind::Alias, v.to_string(), Context::Alias);
                        }
                    }
                }
            }
            _ => {
                let sets_action = argv.len() > text_at + 1 && !argv[text_at].starts_with('-');
                if sets_action && all_static {
                    nested(self, OpaqueKind::Trap, argv[text_at].clone(), Context::Trap);
                } else if sets_action {
                    self.opaque(OpaqueKind::Trap, &argv.join(" "));
                }
            }
        }
    }

    /// Code text the builtins `mapfile`/`readarray` (`-C CALLBACK`) and `compgen`/`complete`
    /// (`-C COMMAND`, `-F FUNCTION`, `-W WORDLIST`) run (attack pass 200 P1): a static
    /// callback, command or function is parsed one shell level down as the command it
    /// is, with the arguments the builtin appends as run-time words; a word list whose
    /// static text expands (`compgen -W '$(git reset --hard)'`) has its expansions parsed
    /// (`: WORDLIST`). Text known only at run time, or options that are, is
    /// [`OpaqueKind::BuiltinRunsUnseenCode`].
    fn builtin_code(&mut self, at: Cursor<'_>, idx: usize, frame: &Frame) {
        let seg = &self.out.segments[idx];
        let name = seg.program.name.clone();
        let whole = seg.argv.join(" ");
        let mapfile = matches!(name.as_str(), "mapfile" | "readarray");
        let valued = if mapfile { "dnOsuCc" } else { "oAGWFCXPS" };
        // (option letter, value, value is dynamic)
        let mut code: Vec<(char, String, bool)> = Vec::new();
        let mut unseen = false;
        let mut i = 1;
        while i < seg.argv.len() {
            let a = &seg.argv[i];
            let dynamic = seg.dynamic_args.contains(&i);
            if a == "--" || !a.starts_with('-') || a == "-" {
                if dynamic {
                    unseen = true; // `compgen "$opts"` may be an option after all
                }
                break;
            }
            if dynamic {
                unseen = true;
                i += 1;
                continue;
            }
            let body: Vec<char> = a[1..].chars().collect();
            let mut next = i + 1;
            for (k, &c) in body.iter().enumerate() {
                if valued.contains(c) {
                    let rest: String = body[k + 1..].iter().collect();
                    let (v, d) = if rest.is_empty() {
                        next = i + 2;
                        match seg.argv.get(i + 1) {
                            Some(v) => (v.clone(), seg.dynamic_args.contains(&(i + 1))),
                            None => (String::new(), false),
                        }
                    } else {
                        (rest, false)
                    };
                    code.push((c, v, d));
                    break;
                }
            }
            i = next;
        }
        let mut texts = Vec::new();
        for (c, v, d) in code {
            let runs = match (mapfile, c) {
                (true, 'C') | (false, 'C' | 'F') => true,
                (false, 'W') => v.contains(['$', '`', '<', '>']),
                _ => false,
            };
            if !runs {
                continue;
            }
            if d {
                unseen = true;
            } else if c == 'W' {
                texts.push(format!(": {v}"));
            } else if mapfile {
                // Called as `CALLBACK INDEX LINE`.
                texts.push(format!("{v} \"$MAPFILE_INDEX\" \"$MAPFILE_LINE\""));
            } else {
                // Called as `COMMAND CMDNAME WORD PREVIOUS-WORD`.
                texts.push(format!("{v} \"$COMP_CMD\" \"$COMP_WORD\" \"$COMP_PREV\""));
            }
        }
        if unseen {
            self.opaque(OpaqueKind::BuiltinRunsUnseenCode, &whole);
        }
        for text in texts {
            self.opaque(OpaqueKind::BuiltinRunsCode, &whole);
            let mut f = frame.with_context(Context::BuiltinCode);
            f.parent = Some(idx);
            f.pipeline = None;
            self.parse_into(&text, &f, at);
        }
    }

    /// Extract `find … -exec CMD … ;` commands.
    fn find_exec(&mut self, at: Cursor<'_>, idx: usize, frame: &Frame) {
        let seg = self.out.segments[idx].clone();
        let mut i = 1;
        while i < seg.argv.len() {
            let a = seg.argv[i].as_str();
            if seg.is_static(i) && matches!(a, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let mut j = i + 1;
                let mut words = Vec::new();
                let mut terminated = false;
                while j < seg.argv.len() {
                    let t = &seg.argv[j];
                    if seg.is_static(j)
                        && (t == ";"
                            || (t == "+" && words.last().is_some_and(|w: &Word| w.text == "{}")))
                    {
                        terminated = true;
                        break;
                    }
                    words.push(Word {
                        text: t.clone(),
                        dynamic: !seg.is_static(j) || t == "{}",
                        glob: false,
                    });
                    j += 1;
                }
                if !terminated {
                    self.opaque(OpaqueKind::FindExecUnterminated, &seg.argv[i..].join(" "));
                }
                if !words.is_empty() {
                    let mut f = frame.with_context(Context::FindExec);
                    let mut fw = seg.wrappers.clone();
                    fw.push(Wrapper {
                        name: "find -exec".into(),
                        argv: seg.argv[..=i].to_vec(),
                    });
                    f.wrappers = Rc::new(fw);
                    f.env = Rc::new(seg.env.clone());
                    f.redirects = Rc::new(seg.redirections.clone());
                    f.runtime_args = true;
                    f.chdir = seg.chdir.clone();
                    f.pipeline = seg.pipeline;
                    self.emit(at.down(), words, Vec::new(), Vec::new(), &f);
                }
                i = j + 1;
            } else {
                i += 1;
            }
        }
    }
}

/// Lexically normalise an absolute path: collapse `//` and `/./`; `None` if it contains `..`.
fn normalize_abs(p: &str) -> Option<String> {
    let mut parts = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => return None,
            c => parts.push(c),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// Remove backslash escapes from an unquoted word; detect unquoted glob/brace characters.
/// Whether literal text still holds an unescaped backtick or a `$` that starts an
/// expansion (`$(`, `${`, `$name`, `$1`, `$?`, …): text the grammar did not turn into an
/// expansion node although bash would expand it.
/// Whether an assigned value may hold command-substitution text that runs when the value
/// is read again as code (`x='a[$(cmd)]'; (( x ))`). A static value: it contains `$(`, a
/// backtick, `<(` or `>(`. A dynamic value (its source spelling): a `(` that does not open
/// one of its own substitutions (`"a[${d}(cmd)]"` with `d='$'`), or more than one
/// substitution (one may print such text). Values read from files or command output at
/// run time are not followed.
/// What assigning `value` to `name` (or exporting it, or passing it through `env`) makes
/// a shell started later, or the running one, execute unchecked (attack passes 193 F2, 197
/// B3): a prompt (`PS0`–`PS4`; `PS4` under `set -x`/`SHELLOPTS=xtrace`) whose value is
/// not static or holds expansion syntax ([`OpaqueKind::PromptExpansion`]); `BASH_ENV`/
/// `ENV` that is not a static plain path; `PROMPT_COMMAND` (also an array or an element)
/// with any value, and an exported function `BASH_FUNC_NAME%%`
/// ([`OpaqueKind::StartupFile`]).
fn startup_code(name: &str, value: &str, dynamic: bool) -> Option<OpaqueKind> {
    let base = name.split(['[', '+']).next().unwrap_or(name);
    let expands = dynamic
        || value.contains('`')
        || value
            .match_indices('$')
            .any(|(i, _)| matches!(value.as_bytes().get(i + 1), Some(b'(' | b'{' | b'[')));
    let plain_path = !dynamic
        && !value.contains(['$', '`', '<', '>', '('])
        && !value.starts_with("/dev/")
        && !value.starts_with("/proc/");
    match base {
        "PS0" | "PS1" | "PS2" | "PS3" | "PS4" if expands => Some(OpaqueKind::PromptExpansion),
        "BASH_ENV" | "ENV" if !value.is_empty() && !plain_path => Some(OpaqueKind::StartupFile),
        "PROMPT_COMMAND" if !value.is_empty() && value != "()" => Some(OpaqueKind::StartupFile),
        _ if base.starts_with("BASH_FUNC_") => Some(OpaqueKind::StartupFile),
        _ => None,
    }
}

/// A start-up variable ([`startup_code`]) set by a builtin from its arguments: a name that
/// `read`, `mapfile`/`readarray`, `printf -v`, `getopts` or `let` fills at run time (always
/// asked), or a `NAME=VALUE` word of `declare`/`typeset`/`local`/`export`/`readonly`
/// judged as that assignment.
fn startup_variable_set(seg: &Segment) -> Option<OpaqueKind> {
    let startup = |n: &str| {
        let base = n.split(['[', '+']).next().unwrap_or(n);
        matches!(
            base,
            "PS0" | "PS1" | "PS2" | "PS3" | "PS4" | "BASH_ENV" | "ENV" | "PROMPT_COMMAND"
        ) || base.starts_with("BASH_FUNC_")
    };
    let mut args = seg.argv.iter().enumerate().skip(1);
    match seg.program.name.as_str() {
        "read" | "mapfile" | "readarray" | "printf" | "getopts" | "let" => args
            .filter(|(_, a)| !a.starts_with('-'))
            .any(|(_, a)| startup(a.split('=').next().unwrap_or(a)))
            .then_some(OpaqueKind::StartupFile),
        "declare" | "typeset" | "local" | "export" | "readonly" => args.find_map(|(i, a)| {
            let (n, v) = a.split_once('=')?;
            startup(n)
                .then(|| startup_code(n, v, !seg.is_static(i)))
                .flatten()
        }),
        _ => None,
    }
}

/// At most this many values holding substitution text are kept for [`Builder::held`].
const MAX_HELD: usize = 8;

/// The bodies of the command substitutions (`$(…)`, `` `…` ``) and process substitutions
/// (`<(…)`, `>(…)`) spelled in `value`, outermost only; an unclosed one runs to the end.
fn substitution_bodies(value: &str) -> Vec<&str> {
    let b = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let opens = b[i + 1..].first() == Some(&b'(') && matches!(b[i], b'$' | b'<' | b'>');
        if opens {
            let start = i + 2;
            let mut depth = 1;
            let mut j = start;
            while j < b.len() && depth > 0 {
                match b[j] {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            let end = if depth == 0 { j - 1 } else { j };
            out.extend(value.get(start..end));
            i = j;
        } else if b[i] == b'`' {
            let start = i + 1;
            let end = b[start..]
                .iter()
                .position(|&c| c == b'`')
                .map_or(b.len(), |p| start + p);
            out.extend(value.get(start..end));
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Whether an assigned value holds command-substitution syntax (`$(`, backticks, `<(`,
/// `>(`) as text that a later arithmetic or indirect read runs: a static value spelling it,
/// or a run-time value whose parts can form it: a `(` spliced after other text, more than
/// one substitution side by side, or a substitution whose code spells such syntax as quoted
/// or escaped text (`$(printf '$(')…`). The output of one substitution, even one with real
/// substitutions nested in its code (`$(cd "$(dirname "$0")" && pwd)`), is run-time text,
/// not judged (usability pass 200).
fn holds_substitution_text(value: &str, dynamic: bool) -> bool {
    if !dynamic {
        return ["$(", "`", "<(", ">("].iter().any(|p| value.contains(p));
    }
    if value.starts_with("$((") && value.ends_with("))") {
        // An arithmetic expansion's value is a number.
        return false;
    }
    let b = value.as_bytes();
    let spliced = b
        .iter()
        .enumerate()
        .any(|(i, &c)| c == b'(' && !(i > 0 && matches!(b[i - 1], b'$' | b'(' | b'<' | b'>')));
    let bodies = substitution_bodies(value);
    spliced || bodies.len() > 1 || bodies.iter().any(|c| spells_substitution(c))
}

/// [`holds_substitution_text`] for the raw text of a compound array value `(…)`: its
/// elements as shell words, literal text in quotes or escaped included.
fn array_holds_substitution_text(raw: &str) -> bool {
    let inner = raw
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(raw);
    spells_substitution(inner) || holds_substitution_text(inner, true)
}

/// Whether shell code `code` may spell substitution syntax as literal text: it holds `$(`
/// or a backtick and a single quote or backslash (`printf '$('`, `echo \$\(`), or `<(`/`>(`
/// and any quote or backslash (`echo "<("`). Conservative: a nested substitution beside
/// any single-quoted text counts; one inside double quotes (`"$(dirname "$0")"`) does not.
fn spells_substitution(code: &str) -> bool {
    let quoted = code.contains(['\'', '\\']);
    (quoted && (code.contains("$(") || code.contains('`')))
        || ((quoted || code.contains('"')) && (code.contains("<(") || code.contains(">(")))
}

/// A backtick body with one level of backslash escapes removed, as bash re-reads it: a
/// backslash keeps its literal meaning except before `$`, `` ` ``, `\\` (and `"` when the
/// substitution is in double quotes).
fn backtick_unescape(body: &str, dquoted: bool) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(&n) = chars.peek() {
                if matches!(n, '$' | '`' | '\\') || (dquoted && n == '"') {
                    out.push(n);
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

/// Whether `n` (a command substitution) is inside a double-quoted string of its own
/// script: the nearest enclosing string or substitution is a string.
fn in_double_quotes(n: Node<'_>) -> bool {
    let mut p = n.parent();
    while let Some(a) = p {
        match kind(a) {
            "string" => return true,
            "command_substitution" | "process_substitution" | "heredoc_body" => return false,
            _ => p = a.parent(),
        }
    }
    false
}

fn has_unparsed_expansion(raw: &str) -> bool {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '`' => return true,
            '$' => match chars.peek() {
                Some(n) if n.is_ascii_alphanumeric() || "({_?!#$@*-'\"".contains(*n) => {
                    return true
                }
                _ => {}
            },
            _ => {}
        }
    }
    false
}

/// `script` with each backslash-newline removed where bash's reader removes it before it
/// splits words (attack pass 59: `git res\<newline>et --hard` was read as `git res et
/// --hard`, and the reset ran without approval): everywhere but in the text the reader
/// takes literally, which the grammar finds ([`literal_ranges`]) — a comment (attack pass
/// 224 #1: `true #\<newline>git push --force` hid the push, which bash runs as a command of
/// its own), a single-quoted or `$'…'` string, and the body of a heredoc whose delimiter is
/// quoted. A quote in a comment or a heredoc body starts no string (an apostrophe in `#
/// don't` kept the continuations after it). Where the grammar gives no tree, every
/// backslash-newline outside single quotes is removed.
fn join_continuations(script: &str) -> String {
    let Some(literal) = parse_tree(script).map(|t| literal_ranges(&t, script.as_bytes())) else {
        return join_continuations_outside_quotes(script);
    };
    let b = script.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut next = literal.iter().peekable();
    let mut i = 0;
    while i < b.len() {
        while next.peek().is_some_and(|r| r.end <= i) {
            next.next();
        }
        if let Some(r) = next.peek().filter(|r| r.start <= i) {
            out.extend_from_slice(&b[i..r.end]);
            i = r.end;
            continue;
        }
        match (b[i], b.get(i + 1)) {
            (b'\\', Some(b'\n')) => i += 2,
            // An escaped character (a backslash, a quote) is the backslash's: it starts
            // nothing.
            (b'\\', Some(&c)) => {
                out.extend_from_slice(&[b'\\', c]);
                i += 2;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Only ASCII pairs were removed between whole characters: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| join_continuations_outside_quotes(script))
}

/// The byte ranges of `tree` that bash's reader takes literally (no backslash-newline is
/// removed there) in the source `src`, outermost only, in order: comments, `'…'` and `$'…'` strings, and the
/// bodies of heredocs whose delimiter is quoted (`<<'E'`, `<<"E"`, `<<\E`).
fn literal_ranges(tree: &tree_sitter::Tree, src: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        let literal = match n.kind() {
            "comment" | "raw_string" | "ansi_c_string" => true,
            "heredoc_body" => n.parent().is_some_and(|p| {
                let mut c = p.walk();
                let start = p.children(&mut c).find(|k| k.kind() == "heredoc_start");
                start.is_some_and(|k| {
                    src.get(k.start_byte()..k.end_byte())
                        .is_some_and(|d| d.iter().any(|b| matches!(b, b'\'' | b'"' | b'\\')))
                })
            }),
            _ => false,
        };
        if literal {
            out.push(n.start_byte()..n.end_byte());
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    out.sort_by_key(|r| r.start);
    out
}

/// The grammar-less fallback of [`join_continuations`]: each backslash-newline outside
/// single quotes removed.
fn join_continuations_outside_quotes(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let (mut single, mut double) = (false, false);
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                out.push(c);
            }
            '"' if !single => {
                double = !double;
                out.push(c);
            }
            '\\' if !single => match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some(&n) => {
                    chars.next();
                    out.push(c);
                    out.push(n);
                }
                None => out.push(c),
            },
            _ => out.push(c),
        }
    }
    out
}

fn unescape_word(raw: &str) -> Word {
    let mut w = Word::default();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => w.text.push(n),
            },
            '*' | '?' | '[' | '{' | '}' => {
                w.glob = true;
                w.text.push(c);
            }
            _ => w.text.push(c),
        }
    }
    w
}

/// Remove the escapes that are special inside double quotes.
fn unescape_dquote(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    out.push(chars.next().unwrap_or('\\'));
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decode the body of a `$'…'` string. `None` when an escape is not understood.
fn decode_ansi_c(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let push_code = |out: &mut String, v: u32| -> Option<()> {
            out.push(char::from_u32(v)?);
            Some(())
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let mut v = e.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                push_code(&mut out, v & 0xff)?;
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v = 0u32;
                let mut n = 0;
                while n < max {
                    match chars.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v.checked_mul(16)? + d;
                            chars.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    return None;
                }
                push_code(&mut out, v)?;
            }
            'c' => {
                let c = chars.next()?;
                push_code(&mut out, (c as u32) & 0x1f)?;
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The file name of `path` (normalised, absolute) when it is the dynamic loader in the
/// system's library directories (`/lib64/ld-linux-x86-64.so.2`,
/// `/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2`): root's files, as the trusted program
/// directories are, and a wrapper that runs its operand (attack pass C-A).
fn system_loader(path: &str) -> Option<&str> {
    let (dir, base) = path.rsplit_once('/')?;
    let dir = dir.strip_prefix("/usr").unwrap_or(dir);
    let top = dir.strip_prefix('/')?.split('/').next()?;
    let lib_dir = matches!(top, "lib" | "lib64" | "lib32" | "libx32");
    (lib_dir && !path.contains("/../") && is_loader_name(base)).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg_argvs(p: &ParsedCommand) -> Vec<Vec<String>> {
        p.segments.iter().map(|s| s.argv.clone()).collect()
    }

    /// Each segment lists the plain `cd`s that must have succeeded for it to run: the
    /// earlier operands of an all-`&&` chain, and a `cd x || exit` before it in its block.
    #[test]
    fn segments_record_the_cds_they_run_after() {
        let after = |script: &str| -> Vec<Vec<usize>> {
            parse_script(script)
                .segments
                .iter()
                .map(|s| s.after_cds.clone())
                .collect()
        };
        assert_eq!(
            after("cd a && cd b && ls; ls"),
            [vec![], vec![0], vec![0, 1], vec![]]
        );
        assert_eq!(
            after("cd a || exit; ls; ls"),
            [vec![], vec![], vec![0], vec![0]]
        );
        assert_eq!(
            after("ls && cd a || exit; ls"),
            [vec![], vec![], vec![], vec![1]]
        );
        assert_eq!(
            after("cd a || { echo no; exit 1; }\nls"),
            [vec![], vec![], vec![], vec![0]]
        );
        assert_eq!(
            after("(cd a || exit; ls); ls"),
            [vec![], vec![], vec![0], vec![]]
        );
        assert_eq!(after("cd a && (ls)"), [vec![], vec![0]]);
        // Not guaranteed: `;`, `|| true`, an `||` before the chain, a pipeline, `&`.
        for script in [
            "cd a; ls",
            "cd a || true; ls",
            "make || cd a && ls",
            "cd a | cat && ls",
            "cd a || exit & ls",
            "cd a && ls || exit 1",
        ] {
            assert!(
                after(script).last().is_some_and(Vec::is_empty),
                "{script}: {:?}",
                after(script)
            );
        }
    }

    /// The words the grammar hangs on a redirection (after a heredoc delimiter, after
    /// `<&-`, after any redirection of a pipeline's or list's last command) are arguments,
    /// in bash's order; `{fd}>x` names the descriptor (differential pass 226, class p1).
    #[test]
    fn words_after_a_redirection_are_arguments() {
        let cases: &[(&str, &[&[&str]])] = &[
            (
                "git reset <<EOF --hard\nx\nEOF",
                &[&["git", "reset", "--hard"]],
            ),
            ("rm <<EOF -rf .git\nx\nEOF", &[&["rm", "-rf", ".git"]]),
            (
                "git <<EOF reset --hard\nx\nEOF",
                &[&["git", "reset", "--hard"]],
            ),
            (
                "git reset <<EOF >x --hard\nx\nEOF",
                &[&["git", "reset", "--hard"]],
            ),
            ("cat <<\"E\"OF\nx\nEOF", &[&["cat"]]),
            ("git reset <&- --hard", &[&["git", "reset", "--hard"]]),
            ("git reset 2>&- --hard", &[&["git", "reset", "--hard"]]),
            (
                "foo | git reset >x --hard",
                &[&["foo"], &["git", "reset", "--hard"]],
            ),
            (
                "foo && git reset 2>&1 --hard",
                &[&["foo"], &["git", "reset", "--hard"]],
            ),
            (
                "foo | ! git reset >x --hard",
                &[&["foo"], &["git", "reset", "--hard"]],
            ),
            (
                "foo | git >x reset >y --hard",
                &[&["foo"], &["git", "reset", "--hard"]],
            ),
            ("git reset {fd}>x --hard", &[&["git", "reset", "--hard"]]),
            (
                "foo | git reset {fd}<&- --hard",
                &[&["foo"], &["git", "reset", "--hard"]],
            ),
            ("echo {a,b}>x y", &[&["echo", "{a,b}", "y"]]),
        ];
        for (script, want) in cases {
            let p = parse_script(script);
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|a| a.iter().map(|s| s.to_string()).collect())
                .collect();
            assert_eq!(seg_argvs(&p), want, "{script:?}");
        }
        let fd = parse_script("git reset {fd}>x --hard");
        assert_eq!(fd.segments[0].redirections[0].fd.as_deref(), Some("{fd}"));
        // No simple command to pass them to: opaque rather than dropped.
        assert!(!parse_script("( foo ) >x --hard").opaque.is_empty());
    }

    #[test]
    fn quoting_and_concatenation() {
        let p = parse_script(r#"'r''m' -rf /; "git" status; r\m x; $'\x72m' y"#);
        assert_eq!(
            seg_argvs(&p),
            vec![
                vec!["rm", "-rf", "/"],
                vec!["git", "status"],
                vec!["rm", "x"],
                vec!["rm", "y"]
            ]
        );
        assert!(!p.is_opaque(), "{:?}", p.opaque);
    }

    #[test]
    fn shell_c_flag_forms() {
        for argv in [
            vec!["bash", "-c", "ls && pwd"],
            vec!["/bin/bash", "-lc", "ls && pwd"],
            vec!["sh", "-euc", "ls && pwd"],
            vec!["zsh", "-l", "-c", "ls && pwd"],
            vec!["dash", "-o", "errexit", "-c", "ls && pwd"],
        ] {
            let argv: Vec<String> = argv.into_iter().map(String::from).collect();
            let p = parse_command(&argv);
            assert_eq!(seg_argvs(&p), vec![vec!["ls"], vec!["pwd"]], "{argv:?}");
            assert_eq!(p.segments[0].wrappers.len(), 1);
        }
    }

    #[test]
    fn wrappers_are_recorded() {
        let p = parse_script("env -i FOO=1 timeout 5 nice -n 10 nohup git status");
        assert_eq!(seg_argvs(&p), vec![vec!["git", "status"]]);
        let names: Vec<_> = p.segments[0]
            .wrappers
            .iter()
            .map(|w| w.name.as_str())
            .collect();
        assert_eq!(names, ["env", "timeout", "nice", "nohup"]);
        assert_eq!(p.segments[0].env[0].name, "FOO");
    }

    #[test]
    fn find_exec_extracts_inner() {
        let p = parse_script(r"find . -name x -exec rm -rf {} \;");
        assert_eq!(p.segments.len(), 2);
        assert_eq!(p.segments[1].argv, ["rm", "-rf", "{}"]);
        assert!(p.segments[1].runtime_args);
    }

    #[test]
    fn ansi_c_decoding() {
        assert_eq!(decode_ansi_c(r"\x72\155\u0041").as_deref(), Some("rmA"));
        assert_eq!(decode_ansi_c(r"\q"), None);
    }
}
