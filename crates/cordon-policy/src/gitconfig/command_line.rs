//! Which files a git command value runs or reads as code (README "Git configuration",
//! R-P3): the programs of a command line such as `core.fsmonitor = bash tools/fsmon.sh` or
//! `alias.lint = !python3 -u lint.py`, the scripts its interpreters run, the files their
//! options name as code, and the lines nested in it (`sh -c "…"`, `env -S "…"`,
//! `git rebase --exec "…"`, `git -c key=value`). Host git runs these values later, outside
//! the sandbox, at the worktree's top: every such file inside a writable root is kept
//! read-only, and one that is missing gets a placeholder so the command cannot create it.
//!
//! The reading is a model of `sh`, not `sh` itself: it splits with a shell tokenizer
//! (`shlex`), knows the operators, keywords, redirections and `cd`, expands the variables
//! it can know (the environment, assignments made earlier on the line, the worktree for
//! `$PWD`, `$(pwd)` and `$(git rev-parse --show-toplevel)`), and reads each simple
//! command through a table of program families ([`FAMILIES`], [`WRAPPERS`], [`RUNNERS`]).
//! A plain argument (`git diff -- src/`, `sed s/a/b/`) is not code: it is protected only when
//! it is an existing file, so a ref such as `origin/main` never becomes a placeholder in
//! the project (attack pass 56: `!git fetch && git reset --hard origin/main` in
//! `~/.gitconfig` left an untracked `origin/main` in every repository). What a program
//! finds by itself (`make`'s Makefile, `npm run`'s package.json, modules `python3 -m`
//! imports from the current directory) is not named by the value and is not protected:
//! README says so.

use super::{classify, expand_path, value_paths, UserHomes};
use crate::paths::{Entry, FileKind, FsView};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How deep nested command lines are read (`sh -c 'sh -c "…"'`); deeper, a nested line's
/// words are read as part of the line that holds it.
const MAX_DEPTH: usize = 16;
/// Most directories a line's words are taken from (`cd` in a line with a subshell adds).
const MAX_BASES: usize = 64;
/// Most paths one glob names.
const MAX_GLOB: usize = 256;

/// What reading a command line needs: the host view, the worktree it runs at, the homes
/// `~/` stands for, the environment its variables come from, and `~user` homes.
pub(super) struct Reading<'a> {
    fs: &'a dyn FsView,
    worktree: &'a Path,
    homes: &'a [PathBuf],
    env: &'a BTreeMap<String, String>,
    users: &'a UserHomes<'a>,
    /// Each glob's paths, by base and spelling, computed once (attack pass 57: `. /usr/bin/*`
    /// ten thousand times listed `/usr/bin` ten thousand times).
    globs: std::cell::RefCell<std::collections::HashMap<(PathBuf, String), Vec<PathBuf>>>,
}

/// Where a piece of a command line stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// First of a simple command (after an operator or a newline).
    Start,
    /// Any later word.
    Word,
    /// The word after `<`: what the command reads on its standard input.
    Input,
    /// The word after `N<` or `N<>` with N other than 0: a file opened on another
    /// descriptor, which a later `<&N` can feed to a shell (attack pass 61: `exec
    /// 3<tools/p.sh; sh -s <&3`).
    FdInput,
    /// The word after `>`, `>>` or `<<` (an output file or a here-document's delimiter).
    Output,
}

/// One piece: where it stands, its text, and the index of the word it was cut from.
#[derive(Debug, Clone, Copy)]
struct Piece<'w> {
    place: Place,
    text: &'w str,
    word: usize,
}

/// What a piece is to the host, as [`Reader::step`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code<'p> {
    /// Nothing to protect.
    Nothing,
    /// A program run (looked up in `PATH` when it has no `/`).
    Program(&'p str),
    /// A file read as code (a script, a sourced file, `make -f`'s file): protected, with a
    /// placeholder when missing.
    File(&'p str),
    /// An argument: protected when it is an existing file (it may be read as code).
    Arg(&'p str),
    /// The directory later words are taken from (`cd DIR`, `env -C DIR`).
    Cd(&'p str),
    /// The rest of this piece's word, from `usize` bytes into the piece, is a command line.
    Line(usize),
    /// The rest of this piece's word is `key=value` configuration for git (`git -c`).
    GitConfig,
    /// This piece's whole word is not read (code in another language).
    SkipWord,
    /// This piece and the rest of its simple command, joined, are a command line (`eval`).
    LineRest,
    /// `find`'s `-exec`/`-execdir`/`-ok`/`-okdir`: the command after it runs on what the
    /// start directories hold, so they are protected (see [`Reader::find_dirs`]).
    FindRuns,
    /// A file a loop, `read`, `xargs` or `mapfile` reads lines from (`done < list`): the
    /// lines may name what runs, so the file and each existing file its lines name are
    /// protected (attack pass 62).
    DataList(&'p str),
}

/// A program family: how its options and operands are read.
#[derive(Debug)]
struct Family {
    /// Program names without a version suffix (`python3.11` is `python`).
    names: &'static [&'static str],
    /// Options after which the program runs code given on the command line, not a file.
    stop: &'static [&'static str],
    /// Whether that code is a shell command line (read as one) rather than another language.
    stop_is_shell: bool,
    /// Letters that, inside a single-dash cluster (`-ec`, `-uc`), mean the same as `stop`.
    stop_letters: &'static str,
    /// Options that take a value that is not code.
    arg: &'static [&'static str],
    /// Options that take a file that is code (`--rcfile`, `-f`, `--env-file`).
    file: &'static [&'static str],
    /// Options that take a module: code from a file only when spelled as a path
    /// (`-r ./hook.js`; `-r dotenv/config` is a package).
    module: &'static [&'static str],
    /// Whether a script operand must look like a file (a `.` or `/`, no `scheme:`): `bun
    /// run build` and `deno fmt` name a task or a subcommand, `bun x.ts` a file.
    file_shaped: bool,
    /// A letter that ends a cluster whose value is a file (`make -sf x.mk`, `sed -nf x.sed`).
    file_letter: Option<char>,
    /// Whether the first operand is a script the program runs.
    script: bool,
    /// Subcommand words before the script (`deno run`, `go run`).
    sub: &'static [&'static str],
    /// Whether the script only comes after a subcommand word (`go run main.go`).
    sub_required: bool,
}

impl Family {
    const fn new(names: &'static [&'static str]) -> Family {
        Family {
            names,
            stop: &[],
            stop_is_shell: false,
            stop_letters: "",
            arg: &[],
            file: &[],
            module: &[],
            file_shaped: false,
            file_letter: None,
            script: true,
            sub: &[],
            sub_required: false,
        }
    }
}

/// The programs whose command lines [`Reader`] reads option by option.
const FAMILIES: &[Family] = &[
    Family {
        stop: &["-c", "--command"],
        stop_is_shell: true,
        stop_letters: "c",
        arg: &["-o", "+o", "-O", "+O"],
        file: &["--rcfile", "--init-file"],
        ..Family::new(&[
            "sh", "bash", "dash", "zsh", "ksh", "mksh", "yash", "fish", "csh", "tcsh", "ash",
            "rbash",
        ])
    },
    Family {
        stop: &["-c", "-m"],
        stop_letters: "cm",
        arg: &["-W", "-X", "--check-hash-based-pycs"],
        ..Family::new(&["python", "pypy"])
    },
    Family {
        stop: &["-e", "--eval", "-p", "--print"],
        arg: &[
            "-C",
            "--conditions",
            "--input-type",
            "--inspect-port",
            "--title",
            "--stack-size",
        ],
        file: &["--env-file", "--config", "-c"],
        module: &[
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
        ],
        ..Family::new(&["node", "nodejs"])
    },
    Family {
        stop: &["-e", "--eval", "-p", "--print"],
        arg: &["--conditions", "--input-type", "--cwd", "-A"],
        file: &["--env-file", "--config", "-c", "--tsconfig"],
        module: &["-r", "--require", "--import", "--preload"],
        file_shaped: true,
        sub: &["run"],
        ..Family::new(&["tsx", "ts-node", "bun", "deno"])
    },
    Family {
        stop: &["-e", "-E"],
        stop_letters: "eE",
        arg: &["-I", "-M", "-m"],
        ..Family::new(&["perl"])
    },
    Family {
        stop: &["-e"],
        stop_letters: "e",
        arg: &["-I", "-r", "-C", "-E"],
        ..Family::new(&["ruby", "jruby"])
    },
    Family {
        stop: &["-r"],
        arg: &["-d", "-z"],
        file: &["-f", "-c"],
        ..Family::new(&["php"])
    },
    Family {
        stop: &["-e"],
        arg: &["-l"],
        ..Family::new(&["lua", "luajit"])
    },
    Family {
        stop: &["-e", "-E"],
        arg: &["-t", "-p", "--project"],
        file: &["-L", "--load"],
        ..Family::new(&["julia"])
    },
    Family {
        stop: &["-c"],
        file: &["-f"],
        ..Family::new(&["tclsh", "wish", "expect"])
    },
    Family {
        stop: &["-e"],
        ..Family::new(&["Rscript", "osascript", "elixir"])
    },
    Family {
        stop: &["-Command", "-command", "-c"],
        arg: &["-ExecutionPolicy", "-ep", "-WorkingDirectory", "-wd"],
        file: &["-File", "-file", "-f"],
        ..Family::new(&["pwsh", "powershell"])
    },
    Family {
        sub: &["run"],
        sub_required: true,
        ..Family::new(&["go"])
    },
    Family {
        arg: &["--cmd", "-c"],
        file: &["-S", "-u", "-l"],
        script: false,
        ..Family::new(&["vim", "vi", "nvim", "gvim", "view"])
    },
    Family {
        arg: &["--eval"],
        file: &["--script", "-l", "--load"],
        script: false,
        ..Family::new(&["emacs"])
    },
    Family {
        file: &["-k", "--lesskey-file"],
        script: false,
        ..Family::new(&["less"])
    },
    Family {
        arg: &[
            "-p", "-l", "-J", "-L", "-R", "-D", "-b", "-c", "-e", "-m", "-O", "-Q", "-S", "-W",
            "-w", "-E", "-B", "-I", "-o", "-i",
        ],
        file: &["-F"],
        script: false,
        ..Family::new(&["ssh"])
    },
    Family {
        arg: &["-C", "-j", "-l", "-o", "-W", "-I"],
        file: &["-f", "--file", "--makefile"],
        file_letter: Some('f'),
        script: false,
        ..Family::new(&["make", "gmake", "bmake"])
    },
    Family {
        arg: &["-F", "-v"],
        file: &["-f", "--file", "-i", "--include", "-E", "--exec"],
        file_letter: Some('f'),
        script: false,
        ..Family::new(&["awk", "gawk", "mawk", "nawk"])
    },
    Family {
        arg: &["-e", "--expression", "-l"],
        file: &["-f", "--file"],
        file_letter: Some('f'),
        script: false,
        ..Family::new(&["sed", "gsed"])
    },
];

/// A program that runs the command after its own options and operands.
#[derive(Debug)]
struct Wrapper {
    names: &'static [&'static str],
    /// Options that take a value.
    arg: &'static [&'static str],
    /// Operands before the command (`timeout 5`, `flock .lock`).
    operands: u8,
    /// Options whose value is a command line (`env -S`, `nix-shell --run`).
    line: &'static [&'static str],
    /// Options whose value is the command's directory (`env -C`).
    cd: &'static [&'static str],
}

impl Wrapper {
    const fn new(names: &'static [&'static str]) -> Wrapper {
        Wrapper {
            names,
            arg: &[],
            operands: 0,
            line: &[],
            cd: &[],
        }
    }
}

/// Programs that run the command after them.
const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        arg: &["-u", "--unset"],
        line: &["-S", "--split-string"],
        cd: &["-C", "--chdir"],
        ..Wrapper::new(&["env"])
    },
    Wrapper {
        arg: &["-a"],
        ..Wrapper::new(&["exec"])
    },
    Wrapper::new(&[
        "command", "builtin", "nohup", "setsid", "unbuffer", "busybox", "coproc",
    ]),
    Wrapper {
        arg: &["-f", "-o"],
        ..Wrapper::new(&["time"])
    },
    Wrapper {
        arg: &[
            "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group",
        ],
        ..Wrapper::new(&["sudo", "doas"])
    },
    Wrapper {
        arg: &["-n", "--adjustment"],
        ..Wrapper::new(&["nice"])
    },
    Wrapper {
        arg: &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        ..Wrapper::new(&["ionice"])
    },
    Wrapper {
        arg: &["-i", "-o", "-e"],
        ..Wrapper::new(&["stdbuf"])
    },
    Wrapper {
        arg: &["-s", "-k", "--signal", "--kill-after"],
        operands: 1,
        ..Wrapper::new(&["timeout"])
    },
    Wrapper {
        arg: &["-w", "-E", "--timeout", "--conflict-exit-code"],
        operands: 1,
        ..Wrapper::new(&["flock"])
    },
    Wrapper {
        operands: 1,
        ..Wrapper::new(&["chrt", "taskset"])
    },
    Wrapper {
        arg: &[
            "-o", "-e", "-p", "-s", "-u", "-P", "-I", "-b", "-a", "-E", "-X",
        ],
        ..Wrapper::new(&["strace", "ltrace"])
    },
    Wrapper {
        arg: &["-I", "-n", "-P", "-d", "-a", "-L", "-s", "-E", "-i"],
        ..Wrapper::new(&["xargs"])
    },
    Wrapper {
        arg: &["-n", "--interval"],
        ..Wrapper::new(&["watch"])
    },
    Wrapper {
        arg: &["-p", "-I", "-A", "--packages"],
        line: &["--run", "--command"],
        ..Wrapper::new(&["nix-shell"])
    },
    Wrapper {
        arg: &["-E", "--echo", "-T", "--log-timing", "-I", "-O", "-B"],
        line: &["-c", "--command", "-qc", "-ec", "-qec"],
        ..Wrapper::new(&["script"])
    },
];

/// A tool whose subcommand runs a program or script named after it (`uv run x.py`,
/// `npx tsx x.ts`, `direnv exec DIR cmd`).
#[derive(Debug)]
struct Runner {
    names: &'static [&'static str],
    /// The subcommands that run something (none: the first operand is run).
    subs: &'static [&'static str],
    /// Operands after the subcommand before what is run (`direnv exec DIR`).
    operands: u8,
    /// Options that take a value (`uv run --with requests`, `npx -p pkg`).
    arg: &'static [&'static str],
}

/// Tools that run a program or script named after their subcommand.
const RUNNERS: &[Runner] = &[
    Runner {
        names: &["uv", "poetry", "pipenv", "pdm", "hatch", "rye"],
        subs: &["run"],
        operands: 0,
        arg: &[
            "-p",
            "--python",
            "--with",
            "--with-requirements",
            "--project",
            "--directory",
            "--package",
            "--extra",
            "--group",
            "--env-file",
            "--index",
            "--from",
            "-e",
            "--env",
        ],
    },
    Runner {
        names: &["npx", "bunx", "pnpx"],
        subs: &[],
        operands: 0,
        arg: &["-p", "--package"],
    },
    Runner {
        names: &["pnpm", "yarn"],
        subs: &["exec", "dlx"],
        operands: 0,
        arg: &["--filter", "-F", "-C", "--dir"],
    },
    Runner {
        names: &["direnv"],
        subs: &["exec"],
        operands: 1,
        arg: &[],
    },
    Runner {
        names: &["bundle", "mise", "pyenv", "rbenv", "nodenv", "asdf"],
        subs: &["exec"],
        operands: 0,
        arg: &["-C", "--cd"],
    },
    Runner {
        names: &["conda", "mamba", "micromamba", "op", "dotenv", "doppler"],
        subs: &["run"],
        operands: 0,
        arg: &[
            "-n",
            "--name",
            "-p",
            "--prefix",
            "--env-file",
            "-e",
            "--project",
            "-c",
        ],
    },
];

/// Shell words that come before a command without being one.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "fi", "done",
    "export", "readonly", "local", "declare", "typeset",
];

/// Variables whose value is a command line git runs (`sh -c`).
const LINE_VARIABLES: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_ASKPASS",
    "GIT_EXTERNAL_DIFF",
];

/// Variables whose value names a file the shell or git reads as code.
const CODE_VARIABLES: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG",
];

/// Reading state of one simple command.
#[derive(Debug, Clone, Copy, Default)]
enum State {
    /// Looking for the program (after assignments, keywords and wrappers).
    #[default]
    Program,
    /// A wrapper's options and operands (`seen` operands so far), then its command.
    Wrapper(&'static Wrapper, u8),
    /// A runner before its subcommand (`true`) or after it (operands left).
    Runner(&'static Runner, u8, bool),
    /// An interpreter's options, then its script.
    Family(&'static Family, bool),
    /// `git`'s own options and the subcommand's (`-c`, `--exec`).
    Git,
    /// `cd`'s options, then its directory.
    Cd,
    /// `eval`'s words: each is a command line.
    Eval,
    /// `for NAME in WORDS` / `select`: `true` once the name is read. A word of the list
    /// may be what the body runs (attack pass 61: `for f in tools/z*.sh; do sh $f; done`),
    /// so a glob there protects its matches and its directory, and an existing file is
    /// protected.
    Loop(bool),
    /// `find`'s start directories (`true`), then its expression.
    Find(bool),
    /// The rest are arguments.
    Args,
}

/// What the next word is to the option before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    Skip,
    /// The whole next word is code in another language (`python3 -c CODE`).
    SkipWord,
    File,
    Module,
    Line,
    Cd,
    GitConfig,
    SshOption,
}

/// Reads one command line piece by piece (see the module docs).
#[derive(Debug, Default)]
struct Reader {
    state: State,
    pending: Option<Pending>,
    /// The family of the current simple command's program, if it reads code on stdin.
    reads_stdin: bool,
    /// Directories a `PATH=…` assignment on this line put before the rest.
    path_dirs: Vec<String>,
    /// The start directories of the current `find` (attack pass 61: `find tools -name
    /// '*.sh' -exec sh {} \;` runs whatever lands there).
    find_dirs: Vec<String>,
    /// Whether the current simple command reads lines that may name code on its input
    /// (`done`, `read`, `xargs`, `mapfile`, `readarray`).
    reads_lines: bool,
}

/// The name a program is known by: its last component, without a `-dbg` or version
/// suffix (`/usr/bin/python3.11` is `python`).
fn family_name(p: &str) -> &str {
    let name = p.rsplit('/').next().unwrap_or(p);
    let name = name.strip_suffix("-dbg").unwrap_or(name);
    name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
}

/// `NAME=value` with a valid shell name: `(NAME, value)`.
fn assignment(p: &str) -> Option<(&str, &str)> {
    let (n, v) = p.split_once('=')?;
    (n.chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && n.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()))
    .then_some((n, v))
}

/// A single-dash option cluster (`-ec`), not `--long`, `-` or a negative number.
fn cluster(p: &str) -> Option<&str> {
    p.strip_prefix('-').filter(|r| {
        !r.is_empty() && !r.starts_with('-') && !r.starts_with(|c: char| c.is_ascii_digit())
    })
}

impl Reader {
    /// What piece `p` (at `place`) is, advancing the state.
    fn step<'p>(&mut self, place: Place, p: &'p str) -> Code<'p> {
        match place {
            // What an interpreter reads on stdin is code (`sh < x.sh`); `grep foo < README`
            // is not (attack pass 56: README became read-only).
            // `<&3` duplicates a descriptor: no file.
            Place::Input | Place::FdInput if p.starts_with('&') => return Code::Nothing,
            // `xargs sh < list`: the lines go to xargs, which makes them arguments.
            Place::Input if self.reads_lines => return Code::DataList(p),
            Place::Input if self.reads_stdin => return Code::File(p),
            // `exec <f` replaces the shell's own stdin, which every later command reads;
            // `3<f` opens a descriptor a later `<&3` hands to a shell (attack pass 61).
            Place::Input if matches!(self.state, State::Wrapper(w, _) if w.names == ["exec"]) => {
                return Code::File(p)
            }
            Place::FdInput => return Code::File(p),
            Place::Input => return Code::Nothing,
            Place::Output => return Code::Nothing,
            Place::Start => {
                self.state = State::Program;
                self.pending = None;
                self.reads_stdin = false;
                self.reads_lines = false;
            }
            Place::Word => {}
        }
        if let Some(pending) = self.pending.take() {
            return match pending {
                // `sh -c -- 'cmd'`: the line is the word after `--`.
                Pending::Line if p == "--" => {
                    self.pending = Some(Pending::Line);
                    Code::Nothing
                }
                Pending::Skip => Code::Nothing,
                Pending::SkipWord => Code::SkipWord,
                Pending::File => Code::File(p),
                Pending::Module => module(p),
                Pending::Line => Code::Line(0),
                Pending::Cd => Code::Cd(p),
                Pending::GitConfig => Code::GitConfig,
                Pending::SshOption => ssh_option(p, 0),
            };
        }
        match self.state {
            State::Program => self.program(p),
            State::Wrapper(w, seen) => {
                if let Some((name, value)) = assignment(p) {
                    return self.assign(name, value);
                }
                let attached = |opts: &[&str]| {
                    opts.iter().find_map(|o| {
                        if o.len() == 2 && p.len() > 2 && p.starts_with(o) {
                            Some(2)
                        } else {
                            p.strip_prefix(o)
                                .filter(|r| r.starts_with('='))
                                .map(|_| o.len() + 1)
                        }
                    })
                };
                if w.arg.contains(&p) {
                    self.pending = Some(Pending::Skip);
                } else if w.line.contains(&p) {
                    self.pending = Some(Pending::Line);
                } else if w.cd.contains(&p) {
                    self.pending = Some(Pending::Cd);
                } else if let Some(n) = attached(w.line) {
                    return Code::Line(n);
                } else if let Some(n) = attached(w.cd) {
                    return Code::Cd(&p[n..]);
                } else if cluster(p).is_some_and(|c| {
                    c.chars().last().is_some_and(|l| {
                        w.arg.iter().any(|o| {
                            o.strip_prefix('-')
                                .is_some_and(|r| r.len() == l.len_utf8() && r.starts_with(l))
                        })
                    })
                }) {
                    // `sudo -Eu nobody`: the cluster's last option takes the value.
                    self.pending = Some(Pending::Skip);
                } else if p.starts_with('-') {
                } else if seen < w.operands {
                    self.state = State::Wrapper(w, seen + 1);
                } else {
                    self.state = State::Program;
                    return self.program(p);
                }
                Code::Nothing
            }
            State::Runner(r, operands, before_sub) => {
                if r.arg.contains(&p) {
                    self.pending = Some(Pending::Skip);
                    Code::Nothing
                } else if p.starts_with('-') {
                    Code::Nothing
                } else if before_sub {
                    self.state = if r.subs.contains(&p) {
                        State::Runner(r, operands, false)
                    } else {
                        State::Args
                    };
                    Code::Nothing
                } else if operands > 0 {
                    self.state = State::Runner(r, operands - 1, false);
                    Code::Nothing
                } else if p.contains('.') && !p.contains('/') {
                    // `uv run x.py`: a script, not a program on PATH.
                    self.state = State::Args;
                    Code::File(p)
                } else {
                    self.state = State::Program;
                    self.program(p)
                }
            }
            State::Family(f, before_sub) => self.family(f, before_sub, p),
            State::Git => {
                match p {
                    "-c" => self.pending = Some(Pending::GitConfig),
                    "-C" | "--git-dir" | "--work-tree" | "--namespace" => {
                        self.pending = Some(Pending::Skip)
                    }
                    "--exec" | "-x" | "--extcmd" | "--tree-filter" | "--index-filter"
                    | "--msg-filter" | "--env-filter" | "--commit-filter" | "--upload-pack"
                    | "--receive-pack" => self.pending = Some(Pending::Line),
                    "run" | "foreach" => self.state = State::Program,
                    _ => {
                        for o in [
                            "--exec=",
                            "--extcmd=",
                            "--upload-pack=",
                            "--receive-pack=",
                            "--open-files-in-pager=",
                            "-x",
                            "-O",
                        ] {
                            if p.len() > o.len() && p.starts_with(o) {
                                return Code::Line(o.len());
                            }
                        }
                    }
                }
                Code::Nothing
            }
            State::Cd => {
                if p.starts_with('-') && p != "-" {
                    Code::Nothing
                } else {
                    self.state = State::Args;
                    Code::Cd(p)
                }
            }
            State::Eval => {
                self.state = State::Args;
                Code::LineRest
            }
            State::Loop(false) => {
                self.state = State::Loop(true);
                Code::Nothing
            }
            State::Loop(true) if p == "in" => Code::Nothing,
            State::Loop(true) if p.contains(['*', '?', '[']) => Code::File(p),
            State::Loop(true) => Code::Arg(p),
            State::Find(true) if !p.starts_with('-') && !matches!(p, "(" | "!" | "\\(" | "\\!") => {
                self.find_dirs.push(p.to_string());
                Code::Nothing
            }
            State::Find(_) => {
                self.state = State::Find(false);
                if matches!(p, "-exec" | "-execdir" | "-ok" | "-okdir") {
                    self.state = State::Program;
                    Code::FindRuns
                } else {
                    Code::Nothing
                }
            }
            State::Args => Code::Arg(p),
        }
    }

    /// A piece in program position.
    fn program<'p>(&mut self, p: &'p str) -> Code<'p> {
        if let Some((name, value)) = assignment(p) {
            return self.assign(name, value);
        }
        if matches!(p, "done" | "read" | "xargs" | "mapfile" | "readarray") {
            self.reads_lines = true;
        }
        // `time -p cmd`: an option before the program belongs to the keyword.
        if KEYWORDS.contains(&p) || (p.starts_with('-') && p.len() > 1) {
            return Code::Nothing;
        }
        if p == "." || p == "source" {
            self.state = State::Args;
            self.pending = Some(Pending::File);
            return Code::Nothing;
        }
        let name = family_name(p);
        let base = p.rsplit('/').next().unwrap_or(p);
        self.state = if matches!(p, "cd" | "pushd") {
            State::Cd
        } else if p == "eval" {
            State::Eval
        } else if matches!(p, "for" | "select") {
            State::Loop(false)
        } else if base == "find" {
            self.find_dirs.clear();
            State::Find(true)
        } else if let Some(w) = WRAPPERS.iter().find(|w| w.names.contains(&base)) {
            State::Wrapper(w, 0)
        } else if base == "git" {
            State::Git
        } else if let Some(f) = FAMILIES.iter().find(|f| f.names.contains(&name)) {
            self.reads_stdin = f.script;
            State::Family(f, !f.sub.is_empty())
        } else if let Some(r) = RUNNERS.iter().find(|r| r.names.contains(&base)) {
            State::Runner(r, r.operands, !r.subs.is_empty())
        } else {
            State::Args
        };
        Code::Program(p)
    }

    /// `NAME=value` before a command: `PATH` entries are remembered for the programs
    /// after it; a variable naming a code file protects that file.
    fn assign<'p>(&mut self, name: &str, value: &'p str) -> Code<'p> {
        if LINE_VARIABLES.contains(&name) {
            // `GIT_SSH_COMMAND="bash t.sh" git fetch`: git runs the value with `sh -c`.
            return Code::Line(name.len() + 1);
        }
        if name == "PATH" {
            // An empty entry is the current directory, as `.` is.
            self.path_dirs = value
                .split(':')
                .map(|d| if d.is_empty() { "." } else { d }.to_string())
                .collect();
            Code::Nothing
        } else if CODE_VARIABLES.contains(&name) {
            Code::File(value)
        } else {
            Code::Nothing
        }
    }

    /// A piece after an interpreter or a program whose options name code files.
    fn family<'p>(&mut self, f: &'static Family, before_sub: bool, p: &'p str) -> Code<'p> {
        if f.stop.contains(&p)
            || cluster(p).is_some_and(|c| c.chars().any(|l| f.stop_letters.contains(l)))
        {
            self.state = State::Args;
            self.reads_stdin = false;
            // A shell's `-c` string is a command line; another language's code is not
            // read (attack pass 57: `perl -e 'system("./run.sh")'` made a `".` placeholder).
            self.pending = Some(if f.stop_is_shell {
                Pending::Line
            } else {
                Pending::SkipWord
            });
            return Code::Nothing;
        }
        if f.names.contains(&"ssh") && p == "-o" {
            self.pending = Some(Pending::SshOption);
            return Code::Nothing;
        }
        if f.names.contains(&"ssh") && p.starts_with("-o") {
            return ssh_option(p, 2);
        }
        if f.arg.contains(&p) {
            self.pending = Some(Pending::Skip);
            return Code::Nothing;
        }
        if f.file.contains(&p) {
            self.pending = Some(Pending::File);
            return Code::Nothing;
        }
        if f.module.contains(&p) {
            self.pending = Some(Pending::Module);
            return Code::Nothing;
        }
        if let Some((o, v)) = p.split_once('=') {
            if f.file.contains(&o) {
                return Code::File(v);
            }
            if f.module.contains(&o) {
                return module(v);
            }
            if f.arg.contains(&o) {
                return Code::Nothing;
            }
        }
        if let (Some(l), Some(c)) = (f.file_letter, cluster(p)) {
            if let Some(i) = c.find(l) {
                let rest = &c[i + 1..];
                if rest.is_empty() {
                    self.pending = Some(Pending::File);
                    return Code::Nothing;
                }
                return Code::File(rest);
            }
        }
        if p.starts_with('-') || (p.starts_with('+') && f.stop_is_shell) {
            return Code::Nothing;
        }
        if before_sub && f.sub.contains(&p) {
            self.state = State::Family(f, false);
            return Code::Nothing;
        }
        let shaped = !f.file_shaped || (p.contains(['.', '/']) && !p.contains(':'));
        if f.script && matches!(p, "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "-") {
            // `sh /dev/stdin < x.sh`: the script is what `<` feeds (attack pass 62).
            self.state = State::Args;
            self.reads_stdin = true;
            return Code::Nothing;
        }
        if f.script && shaped && !(before_sub && f.sub_required) {
            self.state = State::Args;
            self.reads_stdin = false;
            return Code::File(p);
        }
        if f.script && !shaped {
            // `bun run build`, `deno task dev`: a task or subcommand, not a file.
            self.state = State::Args;
            return Code::Nothing;
        }
        if before_sub && f.sub_required {
            self.state = State::Args;
        }
        Code::Arg(p)
    }
}

/// An ssh `-o` value at byte `at` of `p`: `ProxyCommand=…`/`LocalCommand=…` is a command
/// line; other options name no code (a `UserKnownHostsFile` is data: no placeholder).
fn ssh_option(p: &str, at: usize) -> Code<'_> {
    let o = &p[at..];
    let Some((key, _)) = o.split_once(['=', ' ']) else {
        return Code::Nothing;
    };
    let key = key.to_ascii_lowercase();
    if matches!(
        key.as_str(),
        "proxycommand" | "localcommand" | "knownhostscommand"
    ) {
        Code::Line(at + key.len() + 1)
    } else {
        Code::Nothing
    }
}

/// A module option's value (`node -r X`): a file when spelled as a path (`./h.js`,
/// `../x`, `/abs`, `~/x`), else a package name that names nothing in the project.
fn module(p: &str) -> Code<'_> {
    if p.starts_with("./") || p.starts_with("../") || p.starts_with('/') || p.starts_with("~/") {
        Code::File(p)
    } else {
        Code::Nothing
    }
}

impl<'a> Reading<'a> {
    /// A reading of command lines run at `worktree`.
    pub(super) fn new(
        fs: &'a dyn FsView,
        worktree: &'a Path,
        homes: &'a [PathBuf],
        env: &'a BTreeMap<String, String>,
        users: &'a UserHomes<'a>,
    ) -> Reading<'a> {
        Reading {
            fs,
            worktree,
            homes,
            env,
            users,
            globs: Default::default(),
        }
    }

    /// Every file the command line `cmd` runs or reads as code, as `sh -c` at the worktree
    /// would (absolute, lexically normal; sorted).
    pub(super) fn command(&self, cmd: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        self.line(cmd, &[self.worktree.to_path_buf()], self.env, 0, &mut out);
        out.sort();
        out.dedup();
        out
    }

    /// Every such file of an alias that is not a shell command (`rebase --exec CMD`,
    /// `-c core.hooksPath=…`): read as `git VALUE`.
    pub(super) fn git_arguments(&self, args: &str) -> Vec<PathBuf> {
        self.command(&format!("git {args}"))
    }

    /// Reads `cmd` with `bases` as the directories it runs in, at nesting `depth`.
    fn line(
        &self,
        cmd: &str,
        bases_in: &[PathBuf],
        env_in: &BTreeMap<String, String>,
        depth: usize,
        out: &mut Vec<PathBuf>,
    ) {
        let top = self.worktree.to_string_lossy();
        // A newline separates commands (attack pass 56: `!true\nbash x.sh`), as `;` does;
        // kept before the `;` so that a `# comment` still ends there (attack pass 57:
        // `true # c<newline>bash x.sh` lost its second line to the comment).
        let mut cmd = cmd.replace(['\n', '\r'], "\n ; ");
        for spelling in [
            "$(git rev-parse --show-toplevel)",
            "`git rev-parse --show-toplevel`",
            "$(pwd)",
            "`pwd`",
            "${PWD}",
            "$PWD",
            "~+",
        ] {
            cmd = cmd.replace(spelling, &top);
        }
        // A file whose text a substitution makes part of the line (`eval "$(cat x.sh)"`,
        // `bash -c "$(<x.sh)"`) is code wherever the substitution stands (attack pass 62).
        for f in substituted_files(&cmd) {
            self.code_file(&f, bases_in, out);
        }
        let words = shlex::split(&cmd)
            .unwrap_or_else(|| cmd.split_whitespace().map(str::to_string).collect());
        // Variables: the environment, and what the line assigns before (`S=x.sh; sh "$S"`).
        // A word whose expansion cannot be known (`"$1"`, `"$@"`) names no file cordon
        // could protect: it is read for its place only (attack pass 57: it became a
        // placeholder named `$1`).
        // A nested line (`sh -c '…'`) is read from its word as written, with the variables
        // known at that point: its own assignments then count, and a single-quoted `$D` is
        // not expanded by the outer line (attack pass 57).
        let raw_words = words.clone();
        let mut env = env_in.clone();
        let mut known = Vec::with_capacity(words.len());
        let words: Vec<String> = words
            .into_iter()
            .map(|w| {
                let v = if w.contains('$') {
                    match shell_expand(&w, &env, self.homes) {
                        Some(v) => {
                            known.push(true);
                            v
                        }
                        None => {
                            known.push(false);
                            w
                        }
                    }
                } else {
                    known.push(true);
                    w
                };
                if let Some((n, value)) = assignment(&v) {
                    // Up to an operator stuck to it (`D=tools;`).
                    let value = value
                        .split([';', '&', '|', '(', ')', '<', '>'])
                        .next()
                        .unwrap_or("");
                    env.insert(n.to_string(), value.to_string());
                }
                v
            })
            .collect();
        let pieces = pieces(&words);
        // A `cd DIR` moves where the words after it are. In a line with a subshell (`(cd
        // a); ./x`) a word is taken from every directory the line was in, before and after.
        let subshell = cmd.contains('(');
        let mut bases = bases_in.to_vec();
        let mut seen_bases = bases.clone();
        let mut reader = Reader::default();
        let mut skip_word = None;
        let mut j = 0;
        while j < pieces.len() {
            let pc = pieces[j];
            j += 1;
            if skip_word == Some(pc.word) {
                continue;
            }
            // The rest of this piece's word, from `at` bytes into the piece.
            let rest = |at: usize| {
                let w = &words[pc.word];
                let start = pc.text.as_ptr() as usize - w.as_ptr() as usize;
                w.get(start + at..).unwrap_or("")
            };
            let code = reader.step(pc.place, pc.text);
            if !known[pc.word] && matches!(code, Code::Program(_) | Code::File(_) | Code::Arg(_)) {
                continue;
            }
            match code {
                Code::Nothing => {}
                Code::Program(p) => {
                    if p.contains('/') || p.starts_with('~') {
                        self.code_file(p, &bases, out);
                    } else {
                        for d in &reader.path_dirs {
                            self.code_file(&format!("{d}/{p}"), &bases, out);
                        }
                    }
                }
                Code::File(f) => self.code_file(f, &bases, out),
                Code::Arg(a) => {
                    for b in &bases {
                        for p in super::word_paths(a, b, self.homes, self.users) {
                            let file = match self.fs.entry(&p) {
                                Some(Entry::Kind(k)) => k != FileKind::Dir,
                                Some(Entry::Link(_)) => true,
                                None => false,
                            };
                            if file {
                                out.push(p);
                            }
                        }
                    }
                }
                Code::Cd(d) => {
                    let moved: Vec<PathBuf> = match d {
                        // `cd -`: back to any directory the line was in.
                        "-" => seen_bases.clone(),
                        "~" => self.homes.to_vec(),
                        _ => bases
                            .iter()
                            .flat_map(|b| expand_path(d, b, self.homes, self.users))
                            .collect(),
                    };
                    if !moved.is_empty() {
                        if subshell {
                            bases.extend(moved);
                        } else {
                            bases = moved;
                        }
                    }
                    // Each directory once, and a bounded set (attack pass 57: `(…); cd a;
                    // cd ..` repeated doubled the set each time, 21 GB at 14 pairs).
                    bases.sort();
                    bases.dedup();
                    bases.truncate(MAX_BASES);
                    seen_bases.extend(bases.iter().cloned());
                    seen_bases.sort();
                    seen_bases.dedup();
                    seen_bases.truncate(MAX_BASES);
                }
                Code::Line(at) => {
                    if depth < MAX_DEPTH {
                        // The word as written when expansion changed it (same prefix).
                        let w = &words[pc.word];
                        let start = pc.text.as_ptr() as usize - w.as_ptr() as usize;
                        let prefix = w.get(..start + at).unwrap_or("");
                        let raw = &raw_words[pc.word];
                        let text = match raw.strip_prefix(prefix) {
                            Some(r) if raw != w => r,
                            _ => rest(at),
                        };
                        self.line(text, &bases, &env, depth + 1, out);
                        skip_word = Some(pc.word);
                    }
                    // Deeper: the word's pieces are read as part of this line.
                }
                Code::LineRest => {
                    // `eval bash x.sh`: the words up to the end of the simple command.
                    let mut text = pc.text.to_string();
                    while j < pieces.len() && pieces[j].place != Place::Start {
                        text.push(' ');
                        text.push_str(pieces[j].text);
                        j += 1;
                    }
                    if depth < MAX_DEPTH {
                        self.line(&text, &bases, &env, depth + 1, out);
                    }
                }
                Code::GitConfig => {
                    self.git_config(rest(0), depth, out);
                    skip_word = Some(pc.word);
                }
                Code::SkipWord => skip_word = Some(pc.word),
                Code::DataList(f) => {
                    for b in &bases {
                        // A redirection's target is a path even without a `/`.
                        for list in expand_path(f, b, self.homes, self.users) {
                            if !matches!(self.fs.entry(&list), Some(Entry::Kind(FileKind::File))) {
                                continue;
                            }
                            out.push(list.clone());
                            let Ok(text) = self.fs.read_small_lossy(&list, 64 * 1024) else {
                                continue;
                            };
                            for line in text.lines().take(64) {
                                let Some(w) = line.split_whitespace().next() else {
                                    continue;
                                };
                                for p in expand_path(w, b, self.homes, self.users) {
                                    if matches!(
                                        self.fs.entry(&p),
                                        Some(Entry::Kind(FileKind::File) | Entry::Link(_))
                                    ) {
                                        out.push(p);
                                    }
                                }
                            }
                        }
                    }
                }
                Code::FindRuns => {
                    // Each start directory that is not where the line runs (that one is
                    // the project itself: not covered, see the README).
                    for d in std::mem::take(&mut reader.find_dirs) {
                        for b in &bases {
                            for p in expand_path(&d, b, self.homes, self.users) {
                                if !bases.contains(&p)
                                    && matches!(self.fs.entry(&p), Some(Entry::Kind(FileKind::Dir)))
                                {
                                    out.push(p);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// A file that is code, spelled `f` (a glob names its matches): protected whether or
    /// not it exists.
    fn code_file(&self, f: &str, bases: &[PathBuf], out: &mut Vec<PathBuf>) {
        if f.is_empty() {
            return;
        }
        for b in bases {
            if f.contains(['*', '?', '[']) {
                let key = (b.clone(), f.to_string());
                if let Some(v) = self.globs.borrow().get(&key) {
                    out.extend(v.iter().cloned());
                    continue;
                }
                let v = glob_paths(self.fs, f, b, self.homes, self.users);
                out.extend(v.iter().cloned());
                self.globs.borrow_mut().insert(key, v);
            } else {
                out.extend(expand_path(f, b, self.homes, self.users));
            }
        }
    }

    /// `git -c key=value`: the value read as the same key in a configuration file.
    fn git_config(&self, kv: &str, depth: usize, out: &mut Vec<PathBuf>) {
        let Some((key, value)) = kv.split_once('=') else {
            return;
        };
        let Some((section, rest)) = key.split_once('.') else {
            return;
        };
        let (sub, name) = match rest.rsplit_once('.') {
            Some((sub, name)) => (Some(sub), name),
            None => (None, rest),
        };
        if depth >= MAX_DEPTH {
            return;
        }
        if let Some((kind, _)) = classify(&section.to_ascii_lowercase(), sub, name) {
            out.extend(value_paths(
                self.fs,
                kind,
                value,
                self.worktree,
                self.worktree,
                self.homes,
                self.env,
                self.users,
            ));
        }
    }
}

/// The files `$(cat FILE)`, `$(< FILE)` and `` `cat FILE` `` read into a command line
/// (quotes around FILE removed; at most 16).
fn substituted_files(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    // `$(<` covers `$(< F)` too (the word is taken after leading blanks).
    for opener in ["$(cat ", "$(<", "`cat ", "$( cat "] {
        let mut rest = cmd;
        while let Some(i) = rest.find(opener) {
            rest = &rest[i + opener.len()..];
            let word: String = rest
                .trim_start()
                .chars()
                .take_while(|c| !matches!(c, ')' | '`' | ' ' | '\t' | ';' | '|' | '&'))
                .filter(|c| !matches!(c, '"' | '\''))
                .collect();
            if !word.is_empty() && !word.starts_with('-') && !word.contains('$') && out.len() < 16 {
                out.push(word);
            }
        }
    }
    out
}

/// The pieces of a command line's words: each word cut at shell operators stuck to it
/// (`a&&b`, `(b)`, `b;c`) and at blanks (a quoted `-c` string holds them), each piece
/// knowing whether it starts a simple command or follows a redirection. A file-descriptor
/// number before a redirection (`2>/dev/null`) is not a piece, nor is `&` in `>&2`, and a
/// redirection before a command (`true; 2>/dev/null bash x.sh`) leaves the command's first
/// word its start (attack pass 57).
fn pieces(words: &[String]) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut at_start = true;
    let mut redirect: Option<Place> = None;
    for (i, v) in words.iter().enumerate() {
        let mut start = 0;
        let mut prev = ' ';
        let mut chars = v.char_indices().peekable();
        while let Some((k, c)) = chars.next() {
            let is_redirect = matches!(c, '<' | '>');
            let op = matches!(c, ';' | '&' | '|' | '(' | ')' | '`' | '{' | '}')
                && !(c == '&' && matches!(prev, '<' | '>'));
            if op || is_redirect || c.is_whitespace() {
                let piece = &v[start..k];
                let fd = is_redirect && piece.chars().all(|d| d.is_ascii_digit());
                let other_fd = fd && !piece.trim_start_matches('0').is_empty();
                if !piece.is_empty() && !fd {
                    out.push(Piece {
                        place: place_of(&mut at_start, &mut redirect),
                        text: piece,
                        word: i,
                    });
                }
                if op {
                    at_start = true;
                    redirect = None;
                } else if c == '<' {
                    if chars.peek().is_some_and(|(_, n)| *n == '<') {
                        redirect = Some(Place::Output);
                    } else if prev != '<' {
                        redirect = Some(if other_fd {
                            Place::FdInput
                        } else {
                            Place::Input
                        });
                    }
                } else if c == '>' && prev != '<' {
                    // `<>` opens for reading too: it stays an input.
                    redirect = Some(Place::Output);
                }
                start = k + c.len_utf8();
            }
            prev = c;
        }
        if start < v.len() {
            out.push(Piece {
                place: place_of(&mut at_start, &mut redirect),
                text: &v[start..],
                word: i,
            });
        }
    }
    out
}

/// The place of the next piece: a redirection's target, else the start of a command
/// once per command, else a word.
fn place_of(at_start: &mut bool, redirect: &mut Option<Place>) -> Place {
    if let Some(r) = redirect.take() {
        r
    } else if std::mem::take(at_start) {
        Place::Start
    } else {
        Place::Word
    }
}

/// The paths a word with glob characters names as `sh` expands it: the entries that
/// match, listed through `fs` (at most [`MAX_GLOB`]), and the directory of the last
/// component when the word names one other than `base`, so a match made later cannot
/// appear there (attack pass 55: `bash tools/*.sh` was a placeholder named `*.sh`, and a
/// new `tools/a.sh` ran on the host). A glob in a directory part (`tools/*/run.sh`,
/// `*/run.sh`) is matched component by component, and the directory before its first glob
/// is kept read-only too when it is not `base`.
fn glob_paths(
    fs: &dyn FsView,
    w: &str,
    base: &Path,
    homes: &[PathBuf],
    users: &UserHomes,
) -> Vec<PathBuf> {
    let (root, rest) = match w.strip_prefix('/') {
        Some(r) => (PathBuf::from("/"), r),
        None => match expand_path(".", base, homes, users).into_iter().next() {
            Some(b) => (b, w),
            None => return Vec::new(),
        },
    };
    let comps: Vec<&str> = rest.split('/').filter(|c| !c.is_empty()).collect();
    let globbed = |c: &str| c.contains(['*', '?', '[']);
    let Some(first) = comps.iter().position(|c| globbed(c)) else {
        return expand_path(w, base, homes, users);
    };
    let mut out = Vec::new();
    // The directory before the first glob, spelled as the word does (`~/x`, `../y`).
    let fixed = comps[..first].join("/");
    let fixed_dir = if fixed.is_empty() {
        root.clone()
    } else if w.starts_with('/') {
        root.join(&fixed)
    } else {
        match expand_path(&fixed, base, homes, users).into_iter().next() {
            Some(d) => d,
            None => return Vec::new(),
        }
    };
    if fixed_dir != base {
        out.push(fixed_dir.clone());
    }
    let mut dirs = vec![fixed_dir];
    for (i, c) in comps.iter().enumerate().skip(first) {
        let last = i + 1 == comps.len();
        let mut next = Vec::new();
        if globbed(c) {
            let Ok(matcher) = globset::GlobBuilder::new(c)
                .literal_separator(true)
                .build()
                .map(|g| g.compile_matcher())
            else {
                return out;
            };
            for d in &dirs {
                if last && *d != base && !out.contains(d) {
                    out.push(d.clone());
                }
                for name in fs.list_dir(d, 4096) {
                    if matcher.is_match(Path::new(&name)) && next.len() < MAX_GLOB {
                        next.push(d.join(name));
                    }
                }
            }
        } else {
            next = dirs.iter().map(|d| d.join(c)).collect();
        }
        // Only what is there: a name after a glob (`*/run.sh`) is no placeholder in every
        // directory the glob matched.
        next.retain(|p| fs.entry(p).is_some());
        dirs = next;
    }
    out.extend(dirs);
    out
}

/// `word` with its parameter expansions made as `sh` makes them: `$NAME`, `${NAME}`,
/// `${NAME:-word}`, `${NAME-word}`, `${NAME:=word}` and `${NAME=word}` from `env`
/// (`HOME` from the first of `homes` when `env` has none), an unset name expanding to
/// nothing; `${NAME:+word}` and `${NAME+word}` are the word whatever `env` holds (the
/// host's git may run with NAME set), `${NAME:?…}` is NAME's value. `None` for what cannot
/// be known here: positional and special parameters (`$1`, `$@`, `$$`), command
/// substitution, other `${…}` forms.
pub(super) fn shell_expand(
    word: &str,
    env: &BTreeMap<String, String>,
    homes: &[PathBuf],
) -> Option<String> {
    let value = |name: &str| -> Option<String> {
        env.get(name).cloned().or_else(|| {
            (name == "HOME")
                .then(|| homes.first().map(|h| h.to_string_lossy().into_owned()))
                .flatten()
        })
    };
    let is_name = |n: &str| assignment(&format!("{n}=")).is_some();
    let mut out = String::new();
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(inner) = rest.strip_prefix('{') {
            let end = inner.find('}')?;
            let body = &inner[..end];
            rest = &inner[end + 1..];
            let n = body.find(['-', ':', '+', '=', '?']).unwrap_or(body.len());
            let (name, op) = body.split_at(n);
            // A positional parameter is not known here: with a default (`${1:-run.sh}`),
            // the default counts (fail closed); without one, nothing can be said.
            let positional = !name.is_empty()
                && (name.chars().all(|c| c.is_ascii_digit()) || name == "@" || name == "*");
            if !is_name(name) && !positional {
                return None;
            }
            let v = if positional { None } else { value(name) };
            let set = v.is_some();
            let nonempty = v.as_deref().is_some_and(|v| !v.is_empty());
            let v = v.unwrap_or_default();
            let pick = |colon: bool, word: &str| {
                if (colon && nonempty) || (!colon && set) {
                    v.clone()
                } else {
                    word.to_string()
                }
            };
            out.push_str(&match op {
                "" if positional => return None,
                "" => v.clone(),
                o if o.starts_with(":+") => o[2..].to_string(),
                o if o.starts_with('+') => o[1..].to_string(),
                o if o.starts_with(":-") || o.starts_with(":=") => pick(true, &o[2..]),
                o if o.starts_with('-') || o.starts_with('=') => pick(false, &o[1..]),
                _ if positional => return None,
                o if o.starts_with(":?") || o.starts_with('?') => v.clone(),
                _ => return None,
            });
        } else {
            let n = rest
                .find(|c: char| c != '_' && !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            let name = &rest[..n];
            if !is_name(name) {
                return None;
            }
            out.push_str(&value(name).unwrap_or_default());
            rest = &rest[n..];
        }
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::MemFs;

    fn reading_of<'a>(fs: &'a MemFs, env: &'a BTreeMap<String, String>) -> Reading<'a> {
        Reading::new(fs, Path::new("/w"), &[], env, &|_| None)
    }

    /// Each command line names its path.
    /// An environment with only `PATH=/usr/bin`.
    fn path_env() -> BTreeMap<String, String> {
        [("PATH".to_string(), "/usr/bin".to_string())].into()
    }

    fn names(r: &Reading<'_>, cases: &[(&str, &str)]) {
        for (cmd, want) in cases {
            let got = r.command(cmd);
            assert!(
                got.iter().any(|g| g == Path::new(want)),
                "{cmd:?}: want {want} in {got:?}"
            );
        }
    }

    /// No command line names its path.
    fn names_not(r: &Reading<'_>, cases: &[(&str, &str)]) {
        for (cmd, not) in cases {
            let got = r.command(cmd);
            assert!(
                !got.iter().any(|g| g == Path::new(not)),
                "{cmd:?}: {not} in {got:?}"
            );
        }
    }

    /// Attack pass 56: each way a command value ran a file the command could write, and
    /// each way an ordinary value put a placeholder or a read-only file in the project.
    #[test]
    fn command_lines_name_what_they_run_and_nothing_else() {
        let fs = MemFs::new()
            .file("/w/README", "")
            .file("/w/src/main.c", "")
            .file("/w/tools/a/run.sh", "");
        let env = path_env();
        let r = reading_of(&fs, &env);
        let has = |got: &[PathBuf], p: &str| got.iter().any(|g| g == Path::new(p));
        names(
            &r,
            &[
                ("bash -e x.sh", "/w/x.sh"),
                ("sh -e -u x.sh", "/w/x.sh"),
                ("bash -E -o pipefail x.sh", "/w/x.sh"),
                ("python3 -E x.py", "/w/x.py"),
                ("python3 -O -I x.py", "/w/x.py"),
                ("python3-dbg d.py", "/w/d.py"),
                ("if true; then bash fsmon.sh; fi", "/w/fsmon.sh"),
                ("for i in 1; do bash y.sh; done", "/w/y.sh"),
                ("true && ! bash z.sh", "/w/z.sh"),
                ("2>/dev/null bash r.sh", "/w/r.sh"),
                ("bash 2>/dev/null s.sh", "/w/s.sh"),
                ("bash >&2 q.sh", "/w/q.sh"),
                ("true\nbash n.sh", "/w/n.sh"),
                ("bash <<EOF\n. h.sh\nEOF", "/w/h.sh"),
                ("sh < in.sh", "/w/in.sh"),
                ("sh -ec \"bash e.sh\"", "/w/e.sh"),
                ("bash -lc 'cd tools && bash l.sh'", "/w/tools/l.sh"),
                ("eval \"bash ev.sh\"", "/w/ev.sh"),
                ("S=v.sh; sh \"$S\"", "/w/v.sh"),
                ("BASH_ENV=be.sh bash -c true", "/w/be.sh"),
                (
                    "bash \"$(git rev-parse --show-toplevel)/tools/t.sh\"",
                    "/w/tools/t.sh",
                ),
                ("PATH=tools:$PATH fsmon", "/w/tools/fsmon"),
                ("PATH=$PWD/bin:$PATH fsmon", "/w/bin/fsmon"),
                ("env -u FOO bash u.sh", "/w/u.sh"),
                ("env -S'bash sp.sh'", "/w/sp.sh"),
                ("env -C tools bash ec.sh", "/w/tools/ec.sh"),
                ("timeout -s KILL 5 bash to.sh", "/w/to.sh"),
                ("nice -n 10 bash ni.sh", "/w/ni.sh"),
                ("sudo -u nobody bash su.sh", "/w/su.sh"),
                ("exec -a foo bash ex.sh", "/w/ex.sh"),
                ("flock .lock bash fl.sh", "/w/fl.sh"),
                ("node --env-file .env n.js", "/w/n.js"),
                ("node --env-file .env n.js", "/w/.env"),
                ("deno run --config deno.json m.ts", "/w/m.ts"),
                ("deno run --config deno.json m.ts", "/w/deno.json"),
                ("php -d k=v p.php", "/w/p.php"),
                ("make -sf x.mk", "/w/x.mk"),
                ("sed -nf x.sed", "/w/x.sed"),
                ("uv run u.py", "/w/u.py"),
                ("npx tsx t.ts", "/w/t.ts"),
                ("go run main.go", "/w/main.go"),
                ("vim -S x.vim", "/w/x.vim"),
                ("less -k lesskey", "/w/lesskey"),
                ("ssh -F ssh_config", "/w/ssh_config"),
                ("ssh -o ProxyCommand=\"bash proxy.sh\" h", "/w/proxy.sh"),
                ("cd -P tools && bash c.sh", "/w/tools/c.sh"),
                ("cd -- tools && bash c2.sh", "/w/tools/c2.sh"),
                ("bash ${T:=tools}/x.sh", "/w/tools/x.sh"),
                ("bash tools/*/run.sh", "/w/tools"),
                ("git -c core.fsmonitor=\"bash gf.sh\" status", "/w/gf.sh"),
                ("git -c core.hooksPath=.githooks commit", "/w/.githooks"),
            ],
        );
        for (args, want) in [
            ("rebase --exec \"bash rb.sh\" HEAD~1", "/w/rb.sh"),
            ("rebase -x ./rx.sh", "/w/rx.sh"),
            ("bisect run ./bt.sh", "/w/bt.sh"),
            ("difftool --extcmd=\"bash dt.sh\"", "/w/dt.sh"),
        ] {
            let got = r.git_arguments(args);
            assert!(has(&got, want), "{args:?}: want {want} in {got:?}");
        }
        // Nothing that is not code, and no placeholder for a missing argument.
        names_not(
            &r,
            &[
                (
                    "git fetch origin && git reset --hard origin/main",
                    "/w/origin/main",
                ),
                ("git diff -- src/", "/w/src"),
                ("git diff -- src/main.c", "/w/src/main.c"),
                ("sed -i s/a/b/ README", "/w/s/a/b"),
                ("bash 2>/dev/null s.sh", "/w/2"),
                ("bash <<EOF\n. h.sh\nEOF", "/w/EOF"),
                ("grep foo < README", "/w/README"),
                (
                    "curl -s https://example.com/x | jq .",
                    "/w/https:/example.com/x",
                ),
                (
                    "git log --date=format:%Y/%m/%d",
                    "/w/--date=format:%Y/%m/%d",
                ),
                ("python3 -m http.server", "/w/http.server"),
                ("bash -c 'echo hi' name", "/w/name"),
                ("make lint", "/w/lint"),
                ("go test ./...", "/w/..."),
                ("bash -x lint.sh arg", "/w/arg"),
            ],
        );
        assert!(r
            .command("git fetch origin && git reset --hard origin/main")
            .is_empty());
    }

    /// Attack pass 57: bypasses of what the reading claims, and values that made
    /// placeholders or read-only directories of what is not code.
    #[test]
    fn attack57_spellings_and_false_positives() {
        let fs = MemFs::new()
            .file("/w/tools/a/run.sh", "")
            .file("/w/tools/x.sh", "")
            .file("/w/src/main.c", "")
            .dir("/w/build");
        let env = path_env();
        let r = reading_of(&fs, &env);
        let has = |got: &[PathBuf], p: &str| got.iter().any(|g| g == Path::new(p));
        names(
            &r,
            &[
                ("true; 2>/dev/null bash r2.sh", "/w/r2.sh"),
                ("git status; </dev/null bash r3.sh", "/w/r3.sh"),
                ("export PATH=\"$PWD/bin:$PATH\"; fsmon", "/w/bin/fsmon"),
                ("PATH=:$PATH fsmon2", "/w/fsmon2"),
                ("bash tools/*/run.sh", "/w/tools/a/run.sh"),
                ("bash tools/*/run.sh", "/w/tools"),
                ("bash t*/x.sh", "/w/tools/x.sh"),
                ("bash */x.sh", "/w/tools/x.sh"),
                ("sudo -Eu nobody bash su2.sh", "/w/su2.sh"),
                ("env --chdir=tools bash ec2.sh", "/w/tools/ec2.sh"),
                ("env -Ctools bash ec3.sh", "/w/tools/ec3.sh"),
                ("env --split-string='bash ss.sh'", "/w/ss.sh"),
                ("eval bash ev2.sh", "/w/ev2.sh"),
                ("sh -c -- 'bash dd.sh'", "/w/dd.sh"),
                (
                    "f() { bash \"${1:-scripts/run.sh}\"; }; f",
                    "/w/scripts/run.sh",
                ),
                ("time -p bash tp.sh", "/w/tp.sh"),
                ("cd tools && cd - && bash back.sh", "/w/back.sh"),
                ("uv run --with requests uw.py", "/w/uw.py"),
                ("npx -p pkg tsx np.ts", "/w/np.ts"),
                ("node -r ./hook.js app.js", "/w/hook.js"),
                ("bun x.ts", "/w/x.ts"),
                ("rbash rb.sh", "/w/rb.sh"),
                ("bundle exec ruby be.rb", "/w/be.rb"),
                ("conda run -n env python cr.py", "/w/cr.py"),
                ("script -qc 'bash sc.sh' /dev/null", "/w/sc.sh"),
                ("GIT_SSH_COMMAND='bash gs.sh' git fetch", "/w/gs.sh"),
                ("git rebase -x./rx2.sh", "/w/rx2.sh"),
                ("git fetch --upload-pack='bash up.sh' .", "/w/up.sh"),
                ("true # c\nbash cm.sh", "/w/cm.sh"),
                ("sh -c 'D=tools; bash \"$D/x2.sh\"'", "/w/tools/x2.sh"),
                ("X=a2.sh; sh -c \"bash $X\"", "/w/a2.sh"),
            ],
        );
        names_not(
            &r,
            &[
                ("bun run build", "/w/build"),
                ("bun test", "/w/test"),
                ("deno fmt", "/w/fmt"),
                ("deno run -A npm:vite", "/w/npm:vite"),
                ("tsx watch src/x.ts", "/w/watch"),
                ("node -r dotenv/config scripts/dev.js", "/w/dotenv/config"),
                ("node --import tsx a.js", "/w/tsx"),
                ("uv run -p 3.12 x.py", "/w/3.12"),
                ("f() { bash \"$1\"; }; f", "/w/$1"),
                ("f() { node \"$@\"; }; f", "/w/$@"),
                ("ssh -o UserKnownHostsFile=known_hosts h", "/w/known_hosts"),
                ("bash */run.sh", "/w/src/run.sh"),
            ],
        );
        let perl = r.command("perl -e 'system(\"./run.sh\")'");
        assert!(
            perl.iter().all(|p| !p.to_string_lossy().contains('"')),
            "{perl:?}"
        );
        // Bounded: each `cd` pair in a line with a subshell once doubled the directories.
        let mut v = String::from("(true); ");
        for _ in 0..40 {
            v.push_str(" cd a; cd ..;");
        }
        v.push_str(" bash x.sh");
        assert!(has(&r.command(&v), "/w/x.sh"));
    }

    /// `${…}` forms as `sh` expands them; `+` forms fail closed (the word).
    #[test]
    fn attack61_descriptor_feeds_loops_and_find() {
        let fs = MemFs::new()
            .file("/w/tools/p.sh", "")
            .file("/w/tools/z1.sh", "")
            .file("/w/README", "")
            .dir("/w/hooks");
        let env = path_env();
        let r = reading_of(&fs, &env);
        names(
            &r,
            &[
                ("exec 3<tools/p.sh; sh -s <&3", "/w/tools/p.sh"),
                ("exec 3< tools/p.sh; bash -s <&3", "/w/tools/p.sh"),
                ("exec 7<>tools/p.sh; sh <&7", "/w/tools/p.sh"),
                ("exec <tools/p.sh; sh", "/w/tools/p.sh"),
                ("for f in tools/z*.sh; do sh $f; done", "/w/tools"),
                ("for f in tools/z*.sh; do sh $f; done", "/w/tools/z1.sh"),
                ("for f in README tools/p.sh; do . $f; done", "/w/tools/p.sh"),
                ("find hooks -name '*.sh' -exec sh {} \\;", "/w/hooks"),
                ("find hooks -type f -execdir bash x.sh {} +", "/w/hooks"),
                ("find . -exec bash tools/p.sh {} +", "/w/tools/p.sh"),
            ],
        );
        names_not(
            &r,
            &[
                ("sh -s <&3", "/w/&3"),
                ("grep foo < README", "/w/README"),
                ("for b in main dev; do git push origin $b; done", "/w/main"),
                ("find hooks -name '*.o' -delete", "/w/hooks"),
                ("find . -exec sh {} \\;", "/w"),
            ],
        );
    }

    /// Attack pass 62: text a substitution reads into the line, `~+`, a script fed on
    /// `/dev/stdin`, and files named by the lines a loop, `read` or `xargs` reads.
    #[test]
    fn attack62_substitutions_stdin_scripts_and_lists() {
        let fs = MemFs::new()
            .file("/w/tools/x.sh", "")
            .file("/w/tools/new.sh", "")
            .file("/w/tools/list", "tools/new.sh\n\nnot-there.sh arg\n")
            .file("/w/list", "run.sh\n")
            .file("/w/run.sh", "")
            .file("/w/README", "");
        let env = path_env();
        let r = reading_of(&fs, &env);
        names(
            &r,
            &[
                ("eval \"$(cat tools/x.sh)\"", "/w/tools/x.sh"),
                ("bash -c \"$(<tools/x.sh)\"", "/w/tools/x.sh"),
                ("bash <<< \"`cat tools/x.sh`\"", "/w/tools/x.sh"),
                ("bash -c \"sh ~+/tools/x.sh\"", "/w/tools/x.sh"),
                ("sh /dev/stdin < tools/new.sh", "/w/tools/new.sh"),
                ("bash - < tools/new.sh", "/w/tools/new.sh"),
                (
                    "while read l; do sh \"$l\"; done < tools/list",
                    "/w/tools/list",
                ),
                (
                    "while read l; do sh \"$l\"; done < tools/list",
                    "/w/tools/new.sh",
                ),
                ("read f < tools/list; sh $f", "/w/tools/new.sh"),
                ("xargs sh < tools/list", "/w/tools/new.sh"),
                ("while read l; do sh \"$l\"; done < list", "/w/list"),
                ("while read l; do sh \"$l\"; done < list", "/w/run.sh"),
            ],
        );
        names_not(
            &r,
            &[
                (
                    "while read l; do echo $l; done < tools/list",
                    "/w/not-there.sh",
                ),
                ("grep foo < README", "/w/README"),
                ("echo \"$(cat \"$F\")\"", "/w/$F"),
            ],
        );
    }

    #[test]
    fn parameter_forms_expand_as_sh_does() {
        let env: BTreeMap<String, String> = [("SET", "/s"), ("EMPTY", "")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for (w, want) in [
            ("${SET:-/d}", "/s"),
            ("${EMPTY:-/d}", "/d"),
            ("${EMPTY-/d}", ""),
            ("${UNSET=/d}", "/d"),
            ("${UNSET:+/alt}", "/alt"),
            ("${SET+/alt}", "/alt"),
            ("${SET:?no}", "/s"),
        ] {
            assert_eq!(shell_expand(w, &env, &[]).as_deref(), Some(want), "{w}");
        }
        assert_eq!(shell_expand("${SET/x/y}", &env, &[]), None);
        assert_eq!(shell_expand("$1", &env, &[]), None);
    }
}
