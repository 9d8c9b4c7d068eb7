//! The whole loop for one tool call: rules → approval → sandbox → run → classify →
//! hint / escalate (SPEC §6–§7). `cordon run` calls [`drive`]; a server would too.

use crate::escalation::{escalation, Escalation, Widening};
use crate::ids::RunId;
use crate::outcome::{classify, ClassifyContext, Outcome, OutcomeClass};
use crate::request::{NeededPermissions, ReviewableRequest};
use crate::runner::{self, RunOptions};
use crate::scope::DecisionKind;
use crate::session::{Session, Verdict};
use crate::trust::TrustProfile;
use cordon_execpolicy::DecisionRecord;
use cordon_policy::{should_sandbox, SandboxPreference};
use cordon_sandbox::{ExecRequest, HelperReport, HostFs, SandboxManager};
use serde::Serialize;
use std::time::Duration;

/// Exit code when cordon fails or refuses.
pub const EXIT_CORDON: i32 = 125;
/// Exit code when the command cannot be executed.
pub const EXIT_CANNOT_EXECUTE: i32 = 126;
/// Exit code when the command is not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// What to run and how.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The command.
    pub argv: Vec<String>,
    /// Sandbox preference (R-S1).
    pub preference: SandboxPreference,
    /// `--sandbox` was left at `auto` (an exec-policy bypass rule may apply).
    pub preference_is_default: bool,
    /// Run unconfined if the sandbox cannot be prepared (R-S4 opt-in).
    pub allow_unconfined: bool,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// The tool allows offering a retry outside the sandbox (R-F2).
    pub allow_unsandboxed_retry: bool,
    /// Capture stderr for classification ([`RunOptions::capture_stderr`]).
    pub capture_stderr: bool,
    /// Ask the Linux helper to print what it applied on stderr (`-v`).
    pub helper_verbose: bool,
    /// The command gets a terminal whose input the caller (an agent) writes: its exec-policy
    /// record is capped at `ask` ([`cordon_execpolicy::DecisionRecord::cap_interactive`]).
    pub interactive: bool,
    /// What the command reads on stdin, for judging a shell or interpreter that runs it
    /// ([`TrustProfile::evaluate_with_stdin`]).
    pub stdin: StdinSource,
    /// The command's stdin is a terminal. Without one, and without a `GIT_EDITOR` of the
    /// caller's, the command gets `GIT_EDITOR=false`: an editor git starts cannot be used
    /// and fails at once, as git's "supply the message using -m" (new-user pass nu24, F4:
    /// vim, unable to write `~/.viminfo` in the read-only home, waited at "Press ENTER"
    /// until the 2-hour limit, where outside the sandbox it gave up in 2 s).
    pub terminal: bool,
}

/// What a command reads on its standard input, as far as the caller knows before the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdinSource {
    /// A terminal: what is typed there is the person's (or, for an agent's terminal,
    /// [`RunSpec::interactive`] caps the run).
    Terminal,
    /// This text, then end of file (an MCP `stdin`; `/dev/null` is the empty text).
    Known(String),
    /// Text known only at run time (a pipe, a file, a session's later `write_stdin`).
    Unknown,
}

/// Whether the caller's environment `env` already chose how git edits without a terminal:
/// a `GIT_EDITOR`, or a `VISUAL`/`EDITOR` that is not an editor needing a terminal
/// (`EDITOR=true`, a script). Then [`no_terminal_git_editor`] is not set (attack pass 46,
/// N2: `EDITOR=true git commit --amend` failed).
fn caller_chose_a_batch_editor(env: &[(String, String)]) -> bool {
    let get = |k: &str| {
        env.iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    };
    if get("GIT_EDITOR").is_some() {
        return true;
    }
    ["VISUAL", "EDITOR"].iter().filter_map(|k| get(k)).any(|v| {
        let prog = v.split_whitespace().next().unwrap_or("");
        let name = std::path::Path::new(prog)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        !name.is_empty() && !TERMINAL_EDITORS.contains(&name)
    })
}

/// Editors that need a terminal (by program name): without one they wait for input that
/// never comes ([`no_terminal_git_editor`], [`caller_chose_a_batch_editor`]).
const TERMINAL_EDITORS: &[&str] = &[
    "vi",
    "vim",
    "nvim",
    "view",
    "vim.basic",
    "vim.tiny",
    "nano",
    "pico",
    "emacs",
    "mg",
    "micro",
    "hx",
    "kak",
    "joe",
    "jed",
    "ne",
    "mcedit",
    "ed",
    "ex",
    // Debian's alternatives, which name one of the above (nu26 F1: they hung in vim).
    "editor",
    "sensible-editor",
];

/// The `GIT_EDITOR` a command without a terminal gets ([`RunSpec::terminal`]): git's own
/// choice — `core.editor` (a `git -c core.editor=…` included: git passes it on), else
/// `VISUAL`, else `EDITOR`, else `vi` — run as git would, unless it is one of
/// [`TERMINAL_EDITORS`] (by name or path), which fails at once with a line that says what
/// to do (new-user pass nu25, F1: a plain `false` broke `git -c core.editor=true commit
/// --amend`). A function, because git appends `"$@"` (the file) to an editor with shell
/// syntax in it. Its body travels in [`GIT_EDITOR_BODY_ENV`]: git quotes the whole
/// `GIT_EDITOR` in its error after the editor failed (new-user pass nu27, F6: 640
/// characters of shell).
pub fn no_terminal_git_editor() -> [(String, String); 2] {
    let names: Vec<String> = TERMINAL_EDITORS
        .iter()
        .map(|n| format!("{n}|*/{n}"))
        .collect();
    let body = format!(
        "ed=$(git config core.editor || printf %s \"${{VISUAL:-${{EDITOR:-vi}}}}\"); \
         case \"${{ed%% *}}\" in {}) echo \"cordon: no terminal for the editor '$ed': give the \
         message with -m (or -F) to git commit; for a command that only needs its prepared text \
         accepted (git rebase -i, git merge, git commit --amend), set GIT_EDITOR=true\" >&2; \
         return 1;; esac; eval \"$ed \\\"\\$@\\\"\"",
        names.join("|")
    );
    [
        (
            "GIT_EDITOR".into(),
            format!("cordon_editor() {{ eval \"${GIT_EDITOR_BODY_ENV}\"; }}; cordon_editor"),
        ),
        (GIT_EDITOR_BODY_ENV.into(), body),
    ]
}

/// The variable holding the body of [`no_terminal_git_editor`]'s function.
pub const GIT_EDITOR_BODY_ENV: &str = "CORDON_GIT_EDITOR";

/// What happened, for the report and `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The run.
    pub run_id: RunId,
    /// The classified outcome (R-F1).
    pub outcome: Outcome,
    /// The exec-policy record.
    pub exec_policy: DecisionRecord,
    /// The approval verdict.
    pub approval: Verdict,
    /// What was spawned (absent when refused before the sandbox was prepared). Its payload
    /// descriptor is closed once the run ended.
    #[serde(skip)]
    pub exec: Option<ExecRequest>,
    /// What the sandbox helper reported on its own channel: what it applied, or why nothing
    /// ran (`None`: no helper, or it said nothing).
    #[serde(skip)]
    pub helper: Option<HelperReport>,
    /// The escalation decision after a denial, if one was considered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
    /// Why the offered retry did not run (its request was denied), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_refused: Option<String>,
    /// The person chose "abort" at the retry's request.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub retry_aborted: bool,
    /// The retry, when an escalation was approved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<Box<Report>>,
    /// Every connection cordon's filtering proxy refused during this attempt (managed
    /// network), from its decision log on a channel the command never holds, whatever the
    /// outcome: a command that exits 0 after a 403 still shows what it was refused
    /// (breaker LOW-1). Each is also a `network-host` entry of the decision log.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub network_denied: Vec<crate::outcome::ProxyDenial>,
    /// Connections cordon's proxy accepted from the command but could not carry through
    /// during this attempt (a `network.local` port nothing listens on, a host that did not
    /// resolve or connect): the command saw only an EOF or a `502`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connect_failures: Vec<crate::outcome::ConnectFailure>,
    /// What the run left in the writable git dirs for the host's git, per git dir where
    /// there is something to say ([`cordon_sandbox::git_dir_sweep`]): entries that lead
    /// out of it (removed), in-progress state that runs code at `--continue`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub git_dirs: Vec<cordon_sandbox::git_dir_sweep::Swept>,
}

impl Report {
    /// One line per thing [`Report::git_dirs`] says, for a person (stderr, an MCP result's
    /// text): what was removed and why, what was not, what runs at `--continue`.
    pub fn git_dir_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.git_dirs {
            // A run finishing a killed run's sweep sees what any sandboxed command made
            // since, one running now included (attack pass 213 #2: a live run's symlink
            // was blamed on the killed one).
            let who = if s.earlier_run {
                "a sandboxed command (an earlier one whose cordon process ended before it \
                 could check, or one running now)"
            } else {
                "the command"
            };
            // First: what could not be checked (the lines below may be many).
            if let Some(e) = &s.error {
                out.push(format!(
                    "cordon: warning: cordon could not look at {} after the run ({e}): check \
                     it for symlinks before using git there",
                    s.git_dir.display()
                ));
            } else if let Some(why) = &s.incomplete {
                out.push(format!(
                    "cordon: warning: cordon could not check all of {} after the run: {why}; \
                     until then do not use git there (an entry it did not see may lead out \
                     of it); the next cordon run finishes the check once it can read it",
                    s.git_dir.display()
                ));
            }
            if let Some((_, note)) = &s.config_lock {
                out.push(format!("cordon: note: {note}"));
            }
            let left_locks = &s.left_locks;
            if !left_locks.is_empty() {
                let names: Vec<String> =
                    left_locks.iter().map(|l| l.display().to_string()).collect();
                let words: Vec<String> = left_locks
                    .iter()
                    .map(|l| {
                        use std::os::unix::ffi::OsStrExt as _;
                        cordon_execpolicy::shell_word_bytes(l.as_os_str().as_bytes())
                    })
                    .collect();
                let (s_, is, they, them) = if names.len() == 1 {
                    ("", "is", "it is", "it")
                } else {
                    ("s", "are", "they are", "them")
                };
                out.push(format!(
                    "cordon: warning: git's lock file{s_} {} {is} there after the run (a git \
                     command of the run did not finish, or another git command is running \
                     now); until {they} removed, git commands that need {them} fail with \
                     \"File exists\": if no git command is running, remove {them}: rm -f {}",
                    names.join(", "),
                    words.join(" ")
                ));
            }
            // `<path> a symlink to <target>`.
            let what = |f: &cordon_sandbox::git_dir_sweep::Foreign| {
                format!(
                    "{} a {}{}",
                    f.path.display(),
                    f.kind.name(),
                    f.target
                        .as_ref()
                        .map(|t| format!(" to {}", t.display()))
                        .unwrap_or_default()
                )
            };
            // At most 20 lines of these (attack pass 32, C3: a million planted links made
            // a million lines, and the one saying the walk was cut short came last).
            const SHOWN: usize = 20;
            if s.removed_total > SHOWN {
                out.push(format!(
                    "cordon: warning: {who} made {} entries inside the git dir {} that lead \
                     out of it (symlinks, FIFOs, sockets or devices); cordon removed them — the \
                     first {SHOWN}:",
                    s.removed_total,
                    s.git_dir.display()
                ));
            }
            for f in s.removed.iter().take(SHOWN) {
                out.push(if f.relinked {
                    format!(
                        "cordon: warning: {who} re-linked {}, which was there before the run \
                         (its link count or change time changed, as when a hard link is made \
                         to it); cordon cannot tell it from a planted one, so it removed it: \
                         restore it if it was yours",
                        what(f)
                    )
                } else {
                    format!(
                        "cordon: warning: {who} made {} inside the git dir; the host's git \
                         writes through such entries, wherever they lead, so cordon removed it",
                        what(f)
                    )
                });
            }
            for (f, why) in &s.not_removed {
                out.push(format!(
                    "cordon: warning: {who} made {} a {} inside the git dir and cordon \
                     could not remove it ({why}): remove it before using git in this \
                     repository",
                    f.path.display(),
                    f.kind.name()
                ));
            }
            for (path, tool) in &s.removed_configs {
                out.push(format!(
                    "cordon: warning: {who} created {}, which {tool} runs commands from at \
                     {}; cordon removed it",
                    path.display(),
                    when_run(tool)
                ));
            }
            for (path, aside, tool) in &s.replaced_configs {
                out.push(format!(
                    "cordon: warning: {} was replaced or changed while the command ran \
                     (another run or the host removed, re-linked or rewrote it); {tool} runs \
                     commands from it at the host's next `git commit` and cordon cannot tell \
                     who wrote it, so it {}",
                    path.display(),
                    match aside {
                        Some(a) => format!(
                            "moved it to {}: review it, and move it back if the change is yours",
                            a.display()
                        ),
                        None => "removed it (no free name to move it to)".to_string(),
                    }
                ));
            }
            for (path, tool) in &s.left_configs {
                out.push(format!(
                    "cordon: warning: {who} created {}, which {tool} reads commands from at \
                     {}, and cordon could not remove it: review and remove it before {}",
                    path.display(),
                    when_run(tool),
                    if cordon_policy::login_files::is_login_tool(tool) {
                        "your next login"
                    } else {
                        "committing"
                    }
                ));
            }
            for cordon_sandbox::git_dir_sweep::DisarmedAdmin { admin, why, .. } in
                &s.disarmed_worktrees
            {
                out.push(format!(
                    "cordon: warning: {who} made the linked-worktree admin dir {} ({why}): \
                     the host's `git worktree repair` would write a .git file at the path it \
                     names, so cordon removed its gitdir; remove the directory (`git worktree \
                     prune`) unless you made it",
                    admin.display()
                ));
            }
            for (file, moved, why) in &s.quarantined {
                out.push(match moved {
                    Some(to) => format!(
                        "cordon: warning: {who} made {} ({why}); git would run code from it \
                         on the host, so cordon moved it to {}: review it, and move it back only \
                         if you made it",
                        file.display(),
                        to.display()
                    ),
                    None => format!(
                        "cordon: warning: {who} made {} ({why}); git would run code from it \
                         on the host, and cordon could not move it aside: remove it before \
                         using git there",
                        file.display()
                    ),
                });
            }
            for (file, what) in &s.pending_code {
                out.push(format!(
                    "cordon: warning: {who} left in-progress git state in {} that \
                     runs code at the host's `--continue`: {what}; review it (or `--abort`) \
                     before continuing the operation outside the sandbox",
                    file.display()
                ));
            }
        }
        out
    }
}

impl Report {
    /// The report of an attempt that never started: its outcome (a refusal), the
    /// exec-policy record and the approval verdict; nothing was executed.
    pub(crate) fn not_run(
        run_id: RunId,
        exec_policy: DecisionRecord,
        outcome: Outcome,
        approval: Verdict,
    ) -> Report {
        Report {
            run_id,
            outcome,
            exec_policy,
            approval,
            exec: None,
            helper: None,
            escalation: None,
            retry_refused: None,
            retry_aborted: false,
            retry: None,
            network_denied: Vec::new(),
            connect_failures: Vec::new(),
            git_dirs: Vec::new(),
        }
    }

    /// The report of the last attempt (the retry if there was one).
    pub fn last(&self) -> &Report {
        match &self.retry {
            Some(r) => r.last(),
            None => self,
        }
    }

    /// What the sandbox applied in this attempt, in words: the layers the Linux helper
    /// reported it applied (R-H4) plus the environment scrubbing; for backend none the
    /// plan (cordon itself applied the scrubbing); empty when nothing ran.
    pub fn applied(&self) -> Vec<String> {
        let Some(e) = self.exec.as_ref() else {
            return Vec::new();
        };
        if e.backend == cordon_policy::Backend::None {
            return e.planned.clone();
        }
        #[cfg(target_os = "linux")]
        if let Some(cordon_sandbox::linux::HelperOutcome::Applied(a)) = &self.helper {
            let mut v = a.applied();
            v.push(cordon_sandbox::scrubbed_note(e.env_dropped.len()));
            return v;
        }
        Vec::new()
    }

    /// Whether the person chose "abort".
    pub fn aborted(&self) -> bool {
        matches!(self.approval, Verdict::Refuse { abort: true, .. })
            || self.retry_aborted
            || self.retry.as_ref().is_some_and(|r| r.aborted())
    }
}

fn needs_for(trust: &TrustProfile, preference: SandboxPreference) -> NeededPermissions {
    NeededPermissions {
        profile: trust.profile.clone(),
        additional: trust.additional.clone(),
        sandboxed: preference != SandboxPreference::Forbid
            && should_sandbox(&trust.profile, preference, false),
    }
}

/// Runs one tool call through the loop. Warnings (running unconfined) and the hint line go
/// to stderr; everything else is in the [`Report`].
pub fn drive(
    session: &mut Session,
    manager: &SandboxManager,
    trust: &TrustProfile,
    spec: &RunSpec,
) -> Report {
    attempt(session, manager, trust, spec, None)
}

/// A tool call that passed steps 1–3 of an attempt (exec policy, approval, sandbox
/// preparation) and may now be started: by [`runner::run`] here, or by the library's
/// process sessions ([`crate::harness`]) with their own streams.
#[derive(Debug)]
pub struct Prepared {
    /// The run (open in the session's scope until [`Session`]'s `scope.finish`).
    pub run_id: RunId,
    /// The exec-policy record.
    pub record: DecisionRecord,
    /// The approval verdict (always [`Verdict::Run`]).
    pub verdict: Verdict,
    /// What to spawn.
    pub exec: ExecRequest,
    /// The permissions it runs with.
    pub needs: NeededPermissions,
    /// The writable git dirs as the run found them, swept after it ([`conclude`],
    /// attack pass 28 F1/F4); empty when nothing runs sandboxed.
    pub git_dirs: Vec<cordon_sandbox::git_dir_sweep::Census>,
    /// Where the census is recorded until the sweep is made ([`crate::pending_sweeps`]);
    /// removed when the attempt is dropped before it ran.
    pub(crate) sweep_record: Option<crate::pending_sweeps::SweepRecord>,
    /// Sweeps of earlier runs whose cordon process ended before making them, finished
    /// before this run's census (reported with this run's).
    pub earlier_sweeps: Vec<cordon_sandbox::git_dir_sweep::Swept>,
    /// The run is read-only by plan mode (`--plan`, or the session's plan mode: R-A10):
    /// its outcome's advice never offers a widening ([`conclude`]).
    pub plan: bool,
}

/// Why a retry under `trust` (the wider profile) could not be prepared, or `None`: the
/// same transform and refusals [`prepare`] applies, checked before the retry is offered.
fn retry_unpreparable(
    manager: &SandboxManager,
    trust: &TrustProfile,
    spec: &RunSpec,
    record: &DecisionRecord,
) -> Option<String> {
    let mut req = trust.command(spec.argv.clone());
    req.preference = spec.preference;
    req.allow_unconfined = spec.allow_unconfined;
    unpreparable(&manager.transform(&req), record)
}

/// Why a transformed request cannot run whatever anyone answers: the transform's error, or
/// [`sandbox_refusal`]. One verdict for a first attempt ([`prepare`]) and a retry's offer.
fn unpreparable(
    transformed: &Result<ExecRequest, cordon_sandbox::TransformError>,
    record: &DecisionRecord,
) -> Option<String> {
    match transformed {
        Err(e) => Some(e.to_string()),
        Ok(exec) => sandbox_refusal(exec, record),
    }
}

/// Why a run of `record`'s command, transformed into `transformed`, is refused whatever
/// anyone answers, or `None`: the transform's error, [`sandbox_refusal`] (`git worktree
/// remove`/`move`, `git submodule update` in a linked worktree) or plan mode's (`plan`,
/// R-A10). One verdict for [`prepare`], `cordon check` and `cordon run --dry-run` (attack
/// pass 238 #2: both said "would run" where the run exited 125).
pub fn refusal_before_run(
    transformed: &Result<ExecRequest, cordon_sandbox::TransformError>,
    record: &DecisionRecord,
    plan: bool,
) -> Option<String> {
    unpreparable(transformed, record).or_else(|| plan_refusal(plan, transformed))
}

/// `hint` with each `` `cordon explain `` it suggests given the profile selection of
/// `layers` (`--config FILE`, `--profile NAME`, as given to the run; shell words), so the
/// suggestion explains the profile the command ran with, not the default one.
pub fn explain_with_selection(hint: &str, layers: &crate::trust::Layers) -> String {
    hint.replace(
        "`cordon explain ",
        &format!("`{} ", layers.explain_command()),
    )
}

/// Why a plan-mode run cannot start, or `None`: plan mode (R-A10) is read-only until left,
/// and only the sandbox keeps it so — a run that would be unconfined (`--sandbox forbid`,
/// or `--allow-unconfined` where the host has no sandbox) would write as it pleased
/// (attack pass 151 F3: `--plan --sandbox forbid` wrote to the project).
fn plan_refusal(
    plan: bool,
    transformed: &Result<ExecRequest, cordon_sandbox::TransformError>,
) -> Option<String> {
    match transformed {
        Ok(exec) if plan && exec.backend == cordon_policy::Backend::None => Some(
            "plan mode (--plan) is read-only until left, and only the sandbox keeps it so: \
             this run would be unconfined (--sandbox forbid, or --allow-unconfined where the \
             host has no sandbox); drop that, or leave plan mode"
                .to_string(),
        ),
        _ => None,
    }
}

/// Why the sandbox refuses `record`'s command whatever anyone answers, or `None`: a linked
/// worktree cannot be removed or moved from inside a sandbox, and git would delete its
/// files before failing (nu14 HIGH 3); nor can `git submodule update` run in a linked
/// worktree (nu17 N1). Said before anyone is asked ([`prepare`]).
fn sandbox_refusal(exec: &ExecRequest, record: &DecisionRecord) -> Option<String> {
    if exec.backend == cordon_policy::Backend::None {
        return None;
    }
    let profile = exec.resolved.as_ref();
    record.segments.iter().find_map(|s| {
        let argv = &s.segment.argv;
        cordon_policy::gitconfig::worktree_remove_action(argv)
            .map(cordon_policy::gitconfig::worktree_remove_advice)
            .or_else(|| {
                profile.and_then(|p| cordon_policy::gitconfig::submodule_update_refusal(p, argv))
            })
    })
}

/// Whether `argv` starts a POSIX-family shell that reads its commands from its input
/// ([`interactive_start`] of `sh`, `bash`, `dash`, `zsh`, `ksh`, `mksh`, `ash`, `rbash`):
/// the lines an agent writes into such a session are shell commands, judged by the exec
/// policy as they are written (the harness's `ShellInput`).
///
/// Also a session whose command line names such a shell in any word (`env sh`, `script
/// -qc sh /dev/null`, `busybox sh`: re-probe 217 #4): what it writes may reach that shell.
/// Not a program that starts one of its own accord (`python3 -c 'os.execvp("sh", …)'`).
pub fn shell_start(argv: &[String]) -> bool {
    const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash"];
    let is_shell = |w: &str| {
        let name = std::path::Path::new(w)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        SHELLS.contains(&name)
    };
    let first = argv.first().map(String::as_str).unwrap_or("");
    // A shell given its own input as the script (`bash /dev/stdin`: pass 218 #5).
    let script_is_stdin = argv.iter().skip(1).any(|a| {
        matches!(
            a.as_str(),
            "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0"
        )
    });
    (is_shell(first) && (interactive_start(argv) || script_is_stdin))
        || argv
            .iter()
            .skip(1)
            .flat_map(|a| a.split_whitespace())
            .any(is_shell)
}

/// Whether `argv` starts an interactive program (at a terminal, or over a session's kept-open
/// stdin): any program given no arguments, or a shell or REPL given options only — no script, no `-c` / `-e` / `-m`
/// code (new-user pass nu18 F13: `bash --norc` and `bash -l` lost the terminal on stderr:
/// no prompt, and ^C ended the shell).
pub fn interactive_start(argv: &[String]) -> bool {
    const SHELLS_AND_REPLS: &[&str] = &[
        "bash", "sh", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh", "python", "python3",
        "ipython", "ipython3", "node", "irb", "lua", "R", "ghci", "psql", "sqlite3",
    ];
    let Some((prog, rest)) = argv.split_first() else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let name = std::path::Path::new(prog)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let known = SHELLS_AND_REPLS.contains(&name)
        || name
            .strip_prefix("python3.")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit()));
    // Options only; a short cluster with `c`, `e` or `m` runs code given on the line.
    known
        && rest.iter().all(|a| {
            a.starts_with('-')
                && (a.starts_with("--") || !a[1..].contains(['c', 'e', 'm']))
                && !["--command", "--eval", "--print"]
                    .iter()
                    .any(|o| a.starts_with(o))
                && a != "-"
        })
}

/// The `-w` grants and config-file writable entries (canonical) that do not exist and that
/// the sandbox lets the command write: they lie in a writable root, so the profile's merge dropped them as already
/// given (R-O1) and no mount step makes them. Made on the host like any missing grant
/// (new-user pass, stop 40: `-w WS/build` was neither made nor said). Empty without a
/// sandbox, and when the grant is read-only there (a protected path: nothing is made).
/// Split in two: those to make, and those whose missing part holds a `.git` or `.cordon`
/// (the first such directory with each) — never a project marker or a git dir made by
/// cordon itself: `-w sub/.cordon/x` made `sub` a project, `-w .git/hooks` from a
/// subdirectory made a repository that the sweep then blamed on the command (attack pass
/// 181 F6, new-user pass 182 #4). The command may make them, and what it makes there is
/// judged as its own.
#[cfg(target_os = "linux")]
fn missing_grants_in_writable_roots(
    trust: &TrustProfile,
    exec: &ExecRequest,
) -> (
    Vec<std::path::PathBuf>,
    Vec<(std::path::PathBuf, std::path::PathBuf)>,
) {
    let Some(r) = exec.resolved.as_ref() else {
        return Default::default();
    };
    if exec.backend == cordon_policy::Backend::None {
        return Default::default();
    }
    let mut make = Vec::new();
    let mut markers = Vec::new();
    // A config file's writable entry for a missing path is a grant the user spelled as
    // much as `-w` is (README: "`-w`, `--with`, a config entry"); the merge keeps it, but
    // inside a writable root no mount step makes it (new-user pass 211, #5: `sub/dir`
    // said "writable" in `explain`, and the command found nothing there).
    let config_entries = match &r.filesystem {
        cordon_policy::ResolvedFilesystem::Restricted { entries, .. } => entries
            .iter()
            .filter(|e| e.access == cordon_policy::Access::Write && !e.exists)
            .filter(|e| {
                matches!(&e.origin, cordon_policy::EntryOrigin::Profile { spelling, source: Some(source), .. }
                    if !spelling.starts_with(":tmp") && !source.starts_with("built-in"))
            })
            .map(|e| e.path.clone())
            .collect(),
        cordon_policy::ResolvedFilesystem::Unrestricted => Vec::new(),
    };
    let mut wanted = trust.writable_flag_paths();
    wanted.extend(config_entries);
    wanted.dedup();
    for p in wanted
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_err())
        .map(|p| cordon_policy::paths::canonicalize_lenient(&HostFs, &p))
        .filter(|p| std::fs::symlink_metadata(p).is_err())
        // The host's own view: a path the sandbox's private `/tmp` shows (`-w :tmp/x`) is
        // the sandbox's, nothing to make on the host.
        .filter(|p| {
            r.filesystem.seen(&HostFs, p)
                == cordon_policy::view::Seen::Host(cordon_policy::Access::Write)
        })
    {
        let marker = p
            .ancestors()
            .take_while(|a| std::fs::symlink_metadata(a).is_err())
            .find(|a| a.file_name().is_some_and(|n| n == ".git" || n == ".cordon"))
            .map(std::path::Path::to_path_buf);
        match marker {
            Some(m) => markers.push((p, m)),
            None => make.push(p),
        }
    }
    (make, markers)
}

/// The directories cordon creates for writable grants of this run (missing at resolution,
/// granted by the profile or `-w`), to be settled after it
/// ([`cordon_sandbox::git_dir_sweep::settle_fresh_roots`], attack pass 40 D1) — by the next
/// run when this one's cordon process dies first ([`crate::pending_sweeps`]). Empty when
/// nothing runs sandboxed.
fn fresh_grant_roots(exec: &ExecRequest) -> Vec<std::path::PathBuf> {
    sandboxed_writes(exec, |e| {
        !e.exists && e.is_dir && matches!(e.origin, cordon_policy::EntryOrigin::Profile { .. })
    })
}

/// The host paths a sandboxed command may write ([`crate::writable_history`]): the
/// profile's write entries as resolved (canonical). None for a run without a sandbox, or
/// with an unrestricted filesystem (every place is writable to it, by the user's choice).
fn writable_roots(exec: &ExecRequest) -> Vec<std::path::PathBuf> {
    let mut roots = sandboxed_writes(exec, |_| true);
    // A profile whose default is `write` may write every place no entry narrows: not
    // recorded (a `/` record would refuse every run with another home for good); such a
    // profile is, for cordon's own files, as unconfined as `danger-full-access` (attack
    // pass 159, M1, left as the user's choice).
    // The copy-on-write layers and private directories of its caches, which it writes too
    // (attack pass 158, M1).
    if !roots.is_empty() {
        if let Some(r) = &exec.resolved {
            let before = roots.len();
            roots.extend(
                r.caches
                    .iter()
                    .filter(|c| c.mode == cordon_policy::CacheMode::Overlay)
                    // The directory of every workspace's layers (`~/.cache/cordon/overlays`,
                    // above `<key>/<name>`): one record for all of them, not one per
                    // workspace (issue 12: a record of hundreds of per-workspace roots was
                    // read by every run), no narrower than before.
                    .filter_map(|c| {
                        c.state
                            .parent()
                            .and_then(std::path::Path::parent)
                            .map(std::path::Path::to_path_buf)
                    }),
            );
            // Once each (every cache names the same directory).
            let mut seen = std::collections::HashSet::new();
            let mut i = 0;
            roots.retain(|r| {
                i += 1;
                i <= before || seen.insert(r.clone())
            });
        }
    }
    roots
}

/// The paths of the resolved profile's write entries that pass `also`, for a sandboxed run
/// with a restricted filesystem; none otherwise.
fn sandboxed_writes(
    exec: &ExecRequest,
    also: impl Fn(&cordon_policy::ResolvedEntry) -> bool,
) -> Vec<std::path::PathBuf> {
    if exec.backend == cordon_policy::Backend::None {
        return Vec::new();
    }
    let Some(cordon_policy::ResolvedFilesystem::Restricted { entries, .. }) =
        exec.resolved.as_ref().map(|r| &r.filesystem)
    else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|e| e.access == cordon_policy::Access::Write && also(e))
        .map(|e| e.path.clone())
        .collect()
}

/// The request [`prepare`] evaluates and transforms for `argv`: the trusted profile's
/// command, with the git editor that fails fast ([`no_terminal_git_editor`]) when stdin is
/// not a `terminal` and the caller chose none. `cordon run --dry-run` builds the same (one
/// truth: its environment listed fewer variables than the command got).
pub fn command_request(
    trust: &TrustProfile,
    argv: Vec<String>,
    terminal: bool,
) -> cordon_sandbox::CommandRequest {
    let mut req = trust.command(argv);
    if !terminal && !caller_chose_a_batch_editor(&req.env) {
        req.env.extend(no_terminal_git_editor());
    }
    req
}

/// Steps 1–3 of one attempt: exec policy → approval (skipped for an approved retry,
/// `approved`) → sandbox preparation, with the warnings about running unconfined on
/// stderr. A refusal is the finished [`Report`] (`Err`), its run already finished.
pub fn prepare(
    session: &mut Session,
    manager: &SandboxManager,
    trust: &TrustProfile,
    spec: &RunSpec,
    approved: Option<(RunId, Verdict)>,
) -> Result<Prepared, Box<Report>> {
    let mut req = command_request(trust, spec.argv.clone(), spec.terminal);
    let mut record = trust.evaluate_with_stdin(&req, &spec.stdin);
    if spec.interactive {
        record.cap_interactive();
    }
    req.preference = spec.preference;
    req.allow_unconfined = spec.allow_unconfined;
    // Plan mode (R-A10) is kept by the sandbox: a bypass rule does not take the command
    // out of it, and a run that would be unconfined anyway is refused below.
    let plan = trust.layers.plan || session.scope.in_plan_mode();
    let bypass = record.sandbox.bypass && req.preference == SandboxPreference::Auto && !plan;
    if bypass {
        tracing::info!(reason = %record.sandbox.reason, "sandbox bypassed by exec-policy rule");
        req.preference = SandboxPreference::Forbid;
    }
    let needs = needs_for(trust, req.preference);
    let is_retry = approved.is_some();
    // Names only, as for secrets: what the command will not get, and why (L2: such a
    // variable made every subcommand panic).
    if !is_retry && !req.env_not_utf8.is_empty() {
        let n = &req.env_not_utf8;
        eprintln!(
            "cordon: note: the environment variable{} {} {} not valid UTF-8: left out of the \
             command's environment",
            if n.len() > 1 { "s" } else { "" },
            n.join(", "),
            if n.len() > 1 { "are" } else { "is" }
        );
    }
    // Prepared before anyone is asked: a request the sandbox cannot take (a grant on
    // cordon's own config, an entry that cannot be resolved) is refused without a question
    // the person would answer for nothing (attack pass 45, M5: the MCP form asked to
    // approve `+write <cordon's config>`, then the run was refused).
    let transformed = manager.transform(&req);
    let unpreparable = refusal_before_run(&transformed, &record, plan);
    let (run_id, verdict) = match approved {
        Some(a) => a,
        None => {
            let run = session.scope.start_run();
            // Refused before anyone is asked: the approval request (JSON) could not carry
            // the cwd either (L2).
            let v = match cordon_sandbox::cwd_not_utf8(&trust.cwd).or(unpreparable) {
                Some(reason) => Verdict::Refuse {
                    reason,
                    abort: false,
                },
                None => session.decide(&run, &record, &trust.cwd, &needs),
            };
            (run, v)
        }
    };
    let refused = |outcome: Outcome, verdict: Verdict| {
        Box::new(Report::not_run(
            run_id.clone(),
            record.clone(),
            outcome,
            verdict,
        ))
    };
    // The sandbox could not be prepared for this command: logged, the run closed, and the
    // refusal reported (exit 125).
    let not_prepared = |session: &mut Session, why: String, verdict: Verdict| {
        session.scope.record(
            DecisionKind::SandboxPreparation,
            Some(&run_id),
            None,
            format!("not prepared: {why}"),
        );
        session.scope.finish(&run_id);
        refused(Outcome::refused(why, EXIT_CORDON), verdict)
    };
    if let Verdict::Refuse { reason, .. } = &verdict {
        session.scope.finish(&run_id);
        let mut outcome = Outcome::refused(reason.clone(), EXIT_CORDON);
        // How to approve, as the line a person acts on (new-user pass 146: `hint` was null
        // while the reason held it).
        outcome.hint = approval_hint(reason);
        return Err(refused(outcome, verdict.clone()));
    }
    let exec = match transformed {
        Ok(e) => e,
        Err(e) => return Err(not_prepared(session, e.to_string(), verdict)),
    };
    if let Some(why) = sandbox_refusal(&exec, &record) {
        return Err(not_prepared(session, why, verdict));
    }
    session.scope.record(
        DecisionKind::SandboxPreparation,
        Some(&run_id),
        None,
        format!("{} backend: {}", exec.backend, exec.planned.join("; ")),
    );
    tracing::debug!(backend = %exec.backend, planned = ?exec.planned, "running");
    // Names only, never values (R-L4): the user learns what vanished and how to keep it.
    if !is_retry {
        if let Some(note) = cordon_policy::env::dropped_note(&exec.env_dropped, &req.env) {
            eprintln!("{note}");
        }
        // A home hidden by the private /tmp changes everything the command reads from it:
        // said before the command runs, so it is read before the command's own errors
        // (new-user passes nu58, nu60).
        for n in exec.resolved.iter().flat_map(|r| &r.notes) {
            if cordon_policy::resolve::is_said_before_run(n) {
                eprintln!("cordon: note: {}", cordon_policy::text::printable(n));
            }
        }
    }
    if !exec.status.sandbox_requested.value
        && req.preference == SandboxPreference::Forbid
        && should_sandbox(&req.profile, SandboxPreference::Auto, false)
        && !is_retry
    {
        eprintln!(
            "cordon: warning: running UNCONFINED: {} although profile {:?} asks for a sandbox",
            if bypass && spec.preference_is_default {
                format!(
                    "an exec-policy rule bypasses the sandbox ({})",
                    record.sandbox.reason
                )
            } else {
                "--sandbox forbid".to_string()
            },
            req.profile.name
        );
    }
    if let Some(reason) = &exec.unconfined_reason {
        eprintln!("cordon: warning: running UNCONFINED (explicit opt-in): {reason}");
    }
    // An external profile (R-P1) has the caller confine the filesystem: cordon applies
    // none of its entries, which a profile extending a managed one still lists (new-user
    // pass 192, #4: a deny entry read as enforced, and the run said nothing).
    if req.profile.kind == cordon_policy::ProfileKind::External
        && exec.backend == cordon_policy::Backend::None
        && !is_retry
    {
        eprintln!(
            "cordon: note: profile {:?} is external (kind = \"external\"): the caller confines \
             the filesystem; cordon applies none of its filesystem entries",
            req.profile.name
        );
    }
    // An earlier run killed before its sweep: finished first, so that this census does
    // not take what it planted for "there before" (attack29 F5).
    // The writable git dirs, once: the census takes them, and an earlier run's record
    // whose git dir moved is looked for among them.
    let (writable_git_dirs, earlier_sweeps) = match exec.resolved.as_ref() {
        Some(r) if exec.backend != cordon_policy::Backend::None => {
            let dirs = r.filesystem.writable_git_dirs(&HostFs);
            let swept = crate::pending_sweeps::finish_orphans(&dirs);
            (dirs, swept)
        }
        _ => (Vec::new(), Vec::new()),
    };
    let git_dirs = match git_census(&exec, writable_git_dirs) {
        Ok(c) => c,
        Err(why) => return Err(not_prepared(session, why, verdict)),
    };
    // The writable roots this run creates are made now, so that they are recorded below
    // with their identities before any command writes in them (attack pass 177, F1: a
    // cold run killed before its end left a created root recorded by path only, and once
    // renamed it was trusted).
    #[cfg(target_os = "linux")]
    if let (false, Some(r)) = (fresh_grant_roots(&exec).is_empty(), exec.resolved.as_ref()) {
        if let Err(e) = cordon_sandbox::linux::create_missing_grants(r) {
            return Err(not_prepared(session, e.to_string(), verdict));
        }
    }
    #[cfg(target_os = "linux")]
    {
        let (make, markers) = missing_grants_in_writable_roots(trust, &exec);
        for dir in make {
            if let Err(e) = cordon_sandbox::linux::create_grant_dir(&dir) {
                return Err(not_prepared(session, e.to_string(), verdict));
            }
        }
        // Said, so the grant is not dropped in silence (attack pass 183, F3).
        for (p, m) in markers {
            eprintln!(
                "cordon: note: writable grant {}: not made — cordon does not make {} (a repository or \
                 project marker) for a grant; the path is writable, so the command can make \
                 it (`mkdir -p`)",
                p.display(),
                m.display()
            );
        }
    }
    // Where this command may write and what it keeps read-only there, for later runs that
    // read cordon's files from another place (attack pass 156, H1); before anything else
    // is left for later runs.
    if let Err(why) = crate::writable_history::record(&writable_roots(&exec), &req.profile_files) {
        return Err(not_prepared(session, why, verdict));
    }
    let sweep_record =
        crate::pending_sweeps::record(run_id.as_str(), &git_dirs, &fresh_grant_roots(&exec));
    Ok(Prepared {
        run_id,
        record,
        verdict,
        exec,
        needs,
        git_dirs,
        sweep_record,
        earlier_sweeps,
        plan,
    })
}

/// The part of an approval refusal's reason that says how to approve (after
/// [`cordon_execpolicy::approval::NO_ONE_CAN_BE_ASKED`]), capitalised as a hint; `None` for
/// another refusal.
fn approval_hint(reason: &str) -> Option<String> {
    let marker = format!("{}: ", cordon_execpolicy::approval::NO_ONE_CAN_BE_ASKED);
    let how = reason.split_once(marker.as_str())?.1.trim();
    (!how.is_empty()).then(|| format!("{APPROVAL_HINT}{how}"))
}

/// How the hint of a refused approval starts ([`approval_hint`]); what follows is the
/// refusal reason's own advice, so a summary that shows the reason leaves the hint out.
pub const APPROVAL_HINT: &str = "no one could approve it here: ";

/// After a failed read-only run (`--plan`, the `read-only` profile): the package caches
/// were the host's, read-only, and this project's copy-on-write layers — which hold what
/// its earlier runs downloaded — were not mounted (a read-only run must not write them,
/// attack pass 26 F1). When such layers exist, the hint says so (new-user pass nu16 N3:
/// `cargo metadata --offline` found no package under `--plan` that a normal run had).
fn unseen_layers_hint(profile: &cordon_policy::ResolvedProfile) -> Option<String> {
    if profile.profile.caches != cordon_policy::CacheMode::Overlay {
        return None;
    }
    let read_only: Vec<&cordon_policy::ResolvedCache> = profile
        .caches
        .iter()
        .filter(|c| c.mode == cordon_policy::CacheMode::ReadOnly)
        .collect();
    // The project's layers: any under its overlay directory (the parent of every cache's
    // state) holding something — a whole tool home's layer (`cargo-home`) holds the
    // registry a read-only run lists as `cargo-registry`.
    let layers_used = read_only
        .first()
        .and_then(|c| c.state.parent())
        .and_then(|root| std::fs::read_dir(root).ok())
        .is_some_and(|d| {
            d.flatten().any(|l| {
                std::fs::read_dir(l.path().join("upper")).is_ok_and(|mut u| u.next().is_some())
            })
        });
    let unseen: Vec<String> = read_only
        .iter()
        .map(|c| c.path.display().to_string())
        .collect();
    (layers_used && !unseen.is_empty()).then(|| {
        format!(
            "nothing is writable in this run, so its package caches are the host's \
             ({}), not this project's copy-on-write layers: what earlier runs of the project \
             downloaded there is not visible here; run it without --plan (or with a \
             writable profile) if it needs them",
            unseen.join(", ")
        )
    })
}

/// What a command of the run (each segment of the parsed script) met in cordon's
/// placeholders, as the outcome's hint (printed, and in `--json`: new-user pass nu16 N7):
/// after a failure, `git init` or `git clone URL .` in a workspace without a repository,
/// or `git worktree remove`/`move` the parser did not see before the run; after `cargo
/// init` whatever its exit code (cargo takes the `.git` placeholder for a repository and
/// exits 0). `None` when none applies or the run never started.
fn placeholder_hint(
    profile: &cordon_policy::ResolvedProfile,
    record: &DecisionRecord,
    outcome: &Outcome,
) -> Option<String> {
    use cordon_policy::gitconfig;
    let failed = match outcome.class {
        crate::OutcomeClass::Success => false,
        crate::OutcomeClass::CommandFailed | crate::OutcomeClass::SandboxDenied { .. } => true,
        _ => return None,
    };
    record.segments.iter().find_map(|s| {
        let argv = &s.segment.argv;
        gitconfig::cargo_init_note(profile, argv).or_else(|| {
            failed
                .then(|| {
                    gitconfig::git_init_hint(profile, argv)
                        .or_else(|| gitconfig::worktree_remove_hint(argv))
                })
                .flatten()
        })
    })
}

/// The helper's notes on `.git/config` edits it did not merge back (`git_config[].refused`
/// of its report, with the command to run outside cordon), joined; `None` when every edit
/// was kept or there is no report.
fn refused_git_config_hint(helper: Option<&HelperReport>) -> Option<String> {
    // Read from the helper's own report, typed (not a JSON copy of all of it per run).
    #[cfg(target_os = "linux")]
    let refused: Vec<String> = match helper? {
        cordon_sandbox::linux::HelperOutcome::Applied(a) => a
            .git_config
            .iter()
            .flat_map(|r| &r.refused)
            .map(|k| {
                format!(
                    "{} (if you mean it, run `{}` outside cordon)",
                    k.key, k.host_command
                )
            })
            .collect(),
        cordon_sandbox::linux::HelperOutcome::NotRun { .. } => return None,
    };
    #[cfg(not(target_os = "linux"))]
    let refused: Vec<String> = {
        let _ = helper;
        Vec::new()
    };
    (!refused.is_empty()).then(|| {
        format!(
            "{GIT_CONFIG_NOT_KEPT}{}",
            cordon_policy::text::printable(&refused.join("; "))
        )
    })
}

/// After `cargo install` (one command of the parsed script) where the cargo home is a
/// whole-home copy-on-write layer, which keeps only its caches (`registry/`, `git/`) from
/// one run to the next: the installed binary is gone after the run, while cargo said
/// "Installed" (new-user pass nu18 F9). `None` otherwise.
fn discarded_install_hint(
    profile: &cordon_policy::ResolvedProfile,
    record: &DecisionRecord,
) -> Option<String> {
    let installs = record.segments.iter().any(|s| {
        let a = &s.segment.argv;
        a.first()
            .and_then(|p| std::path::Path::new(p).file_name())
            .is_some_and(|n| n == "cargo")
            && a.iter()
                .skip(1)
                .find(|w| !w.starts_with('-') && !w.starts_with('+'))
                .is_some_and(|w| w == "install")
    });
    if !installs {
        return None;
    }
    let layer = profile.caches.iter().find(|c| {
        c.tool == "cargo"
            && c.env.is_none()
            && c.mode == cordon_policy::CacheMode::Overlay
            && cordon_policy::caches::kept_in_layer(&c.name).is_some()
    })?;
    let kept = cordon_policy::caches::kept_in_layer(&layer.name)?;
    Some(format!(
        "cargo installed into {}/bin inside this project's copy-on-write layer of {}, which \
         keeps only {} from one run to the next: the installed program is gone after this \
         run; run `cargo install` outside cordon to keep it",
        layer.path.display(),
        layer.path.display(),
        kept.iter()
            .map(|k| format!("{k}/"))
            .collect::<Vec<_>>()
            .join(" and ")
    ))
}

/// What this run's command made beside a project under `/tmp` — outside every writable
/// root but `/tmp` itself, so in the command's private `/tmp`, discarded when it ended —
/// named with the `-w` that makes it on the host. A linked worktree (the sweep's disarmed
/// admin dirs, whose `.git` is missing on the host: new-user pass nu19 N2, `git worktree
/// add ../wt` ended `success` with the worktree gone), or any `../NAME` the command's
/// words or redirections name that is not on the host after it (nu21 K6: `git clone .
/// ../x`, `mkdir ../build`; only after a command that `succeeded`). `None` otherwise.
fn discarded_tmp_hint(
    profile: &cordon_policy::ResolvedProfile,
    swept: &[cordon_sandbox::git_dir_sweep::Swept],
    record: &DecisionRecord,
    succeeded: bool,
) -> Option<String> {
    use std::path::Path;
    let cordon_policy::ResolvedFilesystem::Restricted { entries, .. } = &profile.filesystem else {
        return None;
    };
    if !profile.filesystem.top_view().private_tmp {
        return None;
    }
    // A path in a command line to paste, as one shell word (attack pass 229 #2).
    let word = |p: &Path| crate::request::shell_word(&p.to_string_lossy());
    let lost = |p: &Path| {
        p.starts_with("/tmp")
            && p != Path::new("/tmp")
            && !entries.iter().any(|e| {
                e.access == cordon_policy::Access::Write
                    && e.path != Path::new("/tmp")
                    && p.starts_with(&e.path)
            })
            && std::fs::symlink_metadata(p).is_err()
    };
    if let Some(wt) = swept
        .iter()
        .filter(|s| !s.earlier_run)
        .flat_map(|s| s.disarmed_worktrees.iter())
        .filter_map(|d| d.named.parent())
        .find(|wt| lost(wt))
    {
        return Some(format!(
            "the linked worktree {} was written into this command's private /tmp, which is \
             discarded when it ends (its branch and admin dir are left in the repository): \
             run `git worktree prune` outside cordon, then add it again with -w {} so that \
             it is made on the host",
            wt.display(),
            word(wt)
        ));
    }
    // Only after a command that worked: a failed read of a missing `../x` made nothing.
    if !succeeded {
        return None;
    }
    let (beside, file) = record
        .segments
        .iter()
        .flat_map(|s| {
            let dirs = program_and_operands(&s.segment.argv).0 == "mkdir";
            written_words(&s.segment.argv)
                .into_iter()
                .map(move |w| (w, dirs))
                .chain(s.segment.file_writes().map(|r| (r.target.as_str(), false)))
                .collect::<Vec<_>>()
        })
        .filter(|(w, _)| w.starts_with("../"))
        .map(|(w, dir)| {
            // The first component beside the workspace: what `-w` must name.
            let abs = cordon_policy::paths::lexical_normalize(Path::new(w), &profile.cwd);
            let mut top = abs.clone();
            while let Some(parent) = top.parent() {
                if profile.workspace.starts_with(parent) {
                    break;
                }
                top = parent.to_path_buf();
            }
            // A file written right beside the project (`echo > ../x.txt`): `-w` makes a
            // missing path a directory, so the file must exist first (new-user pass nu58:
            // following the hint made a directory and the write then failed).
            let file = !dir && top == abs;
            (top, file)
        })
        .find(|(p, _)| lost(p))?;
    // A repository is moved aside from a grant after the run (nu22 P1): `-w` would not
    // give it.
    if makes_repository(record, &beside, &profile.cwd) {
        return Some(format!(
            "{} (beside the project) was written into this command's private /tmp, which is \
             discarded when it ends; {REPOSITORY_BESIDE}: run it outside cordon",
            beside.display()
        ));
    }
    if file {
        return Some(format!(
            "{} (beside the project) was written into this command's private /tmp, which is \
             discarded when it ends; create the file on the host first (`touch {}`), then \
             run it with -w {} (-w makes a missing path a directory)",
            beside.display(),
            word(&beside),
            word(&beside)
        ));
    }
    Some(format!(
        "{} (beside the project) was written into this command's private /tmp, which is \
         discarded when it ends; run it with -w {} so that it is made on the host",
        beside.display(),
        word(&beside)
    ))
}

/// The words of `argv` (one command) that name what it creates: every operand of `mkdir`,
/// `touch` and `tee`; the destination (last operand) of `cp`, `mv`, `ln`, `rsync`,
/// `install` and `git clone`. Never what a command only reads (attack pass 43, J2: `test !
/// -e ../x` was said to have written `../x`).
fn written_words(argv: &[String]) -> Vec<&str> {
    let (prog, operands) = program_and_operands(argv);
    match prog {
        "mkdir" | "touch" | "tee" => operands,
        "cp" | "mv" | "ln" | "rsync" | "install" => operands.last().copied().into_iter().collect(),
        "git" if operands.first() == Some(&"clone") => {
            operands.last().copied().into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// The program's file name (`""` when there is none) and the words of `argv` after it that
/// are not options.
fn program_and_operands(argv: &[String]) -> (&str, Vec<&str>) {
    let prog = argv
        .first()
        .and_then(|p| std::path::Path::new(p).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let operands = argv
        .iter()
        .skip(1)
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    (prog, operands)
}

/// Why a repository made beside the project is offered no grant (new-user pass nu22, P1).
const REPOSITORY_BESIDE: &str = "a repository a sandboxed command makes beside the project \
     (git clone, git init DIR, cargo new) is moved aside, or named as one to review, after the \
     run (its config and hooks would run on the host)";

/// Where `argv` (one command) makes a git repository, as it names it: the destination of
/// `git clone SRC DEST`, the `DIR` of `git init DIR` and `cargo new DIR` (attack pass 44,
/// L2: any such command anywhere in a script took the grant from an unrelated denial).
fn repository_made(argv: &[String]) -> Option<&str> {
    let (prog, operands) = program_and_operands(argv);
    match (prog, operands.as_slice()) {
        ("git", ["clone", _, dest, ..]) => Some(dest),
        ("git", ["init", dir, ..]) | ("cargo", ["new", dir, ..]) => Some(dir),
        _ => None,
    }
}

/// Whether a command of `record` makes a repository at, above or below `path` (read
/// against `cwd`).
fn makes_repository(
    record: &DecisionRecord,
    path: &std::path::Path,
    cwd: &std::path::Path,
) -> bool {
    record.segments.iter().any(|s| {
        repository_made(&s.segment.argv).is_some_and(|d| {
            let d = cordon_policy::paths::lexical_normalize(std::path::Path::new(d), cwd);
            d.starts_with(path) || path.starts_with(&d)
        })
    })
}

/// How the hint of [`refused_git_config_hint`] starts. The helper has printed the full
/// notes on stderr already; the CLI does not print this summary again.
pub const GIT_CONFIG_NOT_KEPT: &str = ".git/config edits not kept on the host: ";

/// `hint` as said in plan mode: unchanged unless it offers a widening (`-w`, `--with`,
/// `--allow-network`, `--local-port`, a directory of one's own), which a `--plan` run
/// ignores; then [`PLAN_HINT`], after the exit 0 when the command `succeeded`.
fn plan_advice(hint: String, succeeded: bool) -> String {
    use crate::outcome::{
        ALLOW_NETWORK_ONCE, ALLOW_WRITE_ONCE, OWN_DIRECTORY_GRANT, PASS_LOCAL_PORT,
    };
    let widens = [
        ALLOW_WRITE_ONCE,
        ALLOW_NETWORK_ONCE,
        OWN_DIRECTORY_GRANT,
        PASS_LOCAL_PORT,
        "-w ",
        "--with ",
        "--allow-network",
        "--writable",
    ]
    .iter()
    .any(|w| hint.contains(w));
    if hint == PLAN_HINT || !widens {
        hint
    } else if succeeded {
        format!(
            "the command exited 0, but the sandbox refused a write it tried, so that write \
             did not happen: {PLAN_HINT}"
        )
    } else {
        PLAN_HINT.to_string()
    }
}

/// The hint after a denial in plan mode (`--plan`, R-A10).
pub const PLAN_HINT: &str = "this is a --plan run: nothing may be written and the network is \
     off, whatever -w or --allow-network say; run it without --plan to make the change";

/// After `git worktree prune` (one command of the parsed script), whatever its exit
/// code: the stale linked worktrees' admin dirs it could not remove inside the sandbox
/// (each is pinned, R-P3, so that what is protected in it stays protected), named with
/// what to do — git says nothing without `-v` and exits 0 (new-user pass nu17 N6). Stale:
/// its `gitdir` names a `.git` that is gone. `None` when the command was not a prune or
/// none is left.
fn prune_left_hint(
    profile: &cordon_policy::ResolvedProfile,
    record: &DecisionRecord,
) -> Option<String> {
    if !record
        .segments
        .iter()
        .any(|s| cordon_policy::gitconfig::is_worktree_prune(&s.segment.argv))
    {
        return None;
    }
    let mut left = Vec::new();
    for d in profile.filesystem.writable_git_dirs(&HostFs) {
        let Ok(admins) = std::fs::read_dir(d.join("worktrees")) else {
            continue;
        };
        for a in admins.flatten() {
            let Some(named) = read_small_regular(&a.path().join("gitdir")) else {
                continue;
            };
            let dotgit = std::path::PathBuf::from(named.trim());
            if dotgit.is_absolute()
                && std::fs::symlink_metadata(&dotgit)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            {
                left.push(a.path().display().to_string());
            }
        }
    }
    (!left.is_empty()).then(|| {
        format!(
            "`git worktree prune` cannot remove a linked worktree's admin dir inside cordon \
             (each is pinned, R-P3, so what cordon protects in it stays protected); left: {}. \
             Run `git worktree prune` outside cordon",
            left.join(", ")
        )
    })
}

/// The text of `path` when it is a regular file of at most 4 KiB, opened without
/// following a symlink at its name and without blocking (a command can leave a FIFO where
/// a `gitdir` file was: reading it must not hang cordon after the run).
fn read_small_regular(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(4096).read_to_string(&mut text).ok()?;
    Some(text)
}

/// When what `tool` reads runs: a hook manager's config at the host's next commit, a login
/// file ([`cordon_policy::login_files`]) at the next shell, ssh, graphical or PAM login.
fn when_run(tool: &str) -> &'static str {
    if tool == cordon_policy::login_files::SSH {
        "the next ssh login"
    } else if tool == cordon_policy::login_files::SHELL {
        "your next login or shell"
    } else if tool == cordon_policy::login_files::SESSION {
        "your next graphical or PAM login"
    } else {
        "the host's next `git commit`"
    }
}

/// The census of every git dir a sandboxed run may write ([`cordon_sandbox::git_dir_sweep`]):
/// what it holds that leads out of it before the command starts. A git dir that cannot be
/// opened without following a symlink is left out (nothing is done through it).
///
/// Errors (the run is refused, failing closed): a git dir that cannot be looked at whole
/// (too large or deep, or a directory in it unreadable), with why and what to do — what a
/// command left there could not be found after it (attack pass 29, F4).
fn git_census(
    exec: &ExecRequest,
    writable_git_dirs: Vec<std::path::PathBuf>,
) -> Result<Vec<cordon_sandbox::git_dir_sweep::Census>, String> {
    let Some(r) = exec.resolved.as_ref() else {
        return Ok(Vec::new());
    };
    if exec.backend == cordon_policy::Backend::None {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for d in writable_git_dirs {
        let Ok(mut c) = cordon_sandbox::git_dir_sweep::census(&d) else {
            continue;
        };
        // What was there before is what the resolution saw and protected, not a second
        // look (attack pass 36, M2).
        c.adopt_protected_admins(r.filesystem.worktree_admins_protected(&d));
        // The work tree of a `.git` directory: hook managers' configs that must stay
        // absent (attack29 F1).
        if d.file_name() == Some(".git".as_ref()) {
            if let Some(root) = d.parent() {
                c.absent = kept_absent(root, &d);
                c.keep_same(present_configs(root));
            }
        }
        if let Some(why) = &c.incomplete {
            return Err(format!(
                "refusing to run: cordon cannot check the git dir {} for entries that lead \
                 out of it (it would not know afterwards what a command left there for the \
                 host's git): {why}",
                d.display()
            ));
        }
        out.push(c);
    }
    // Nested repositories below a writable root: their git dirs are protected whole (not
    // walked: nothing can appear there), their work trees may be writable — the hook
    // managers' configs in use there must stay absent too (attack pass 30, A4b).
    for root in cordon_policy::resolve::nested_repository_roots(r.filesystem.protected()) {
        let dotgit = root.join(".git");
        let absent = kept_absent(&root, &dotgit);
        let present = present_configs(&root);
        if !absent.is_empty() || !present.is_empty() {
            let mut c = cordon_sandbox::git_dir_sweep::Census::kept_absent_only(dotgit, absent);
            c.keep_same(present);
            out.push(c);
        }
    }
    // A workspace whose `.git` is not the directory swept above (a linked worktree: its
    // git dir is `<common>/worktrees/<name>`): its own hook managers' configs must stay
    // absent too (attack pass 30, A4), checked with the first git dir's sweep.
    let ws = &r.workspace;
    if !out.iter().any(|c| c.git_dir == ws.join(".git")) {
        if let Some(first) = out.first_mut() {
            first.absent.extend(kept_absent(ws, &ws.join(".git")));
            first.keep_same(present_configs(ws));
        }
    }
    // A home's missing shell start-up and ssh login files inside a writable root, which
    // the resolution gives no placeholder (an empty `~/.bash_profile` would have bash skip
    // `~/.profile`): one a command creates is removed after the run (attack pass 224 #2).
    // Nothing is walked: the census is named by the directory holding them all.
    if !r.kept_absent.is_empty() {
        let mut top = r.kept_absent[0]
            .0
            .parent()
            .map(std::path::Path::to_path_buf);
        for (p, _) in &r.kept_absent[1..] {
            while let Some(t) = top.as_ref().filter(|t| !p.starts_with(t)) {
                top = t.parent().map(std::path::Path::to_path_buf);
            }
        }
        let top = top.unwrap_or_else(|| std::path::PathBuf::from("/"));
        out.push(cordon_sandbox::git_dir_sweep::Census::kept_absent_only(
            top,
            r.kept_absent.clone(),
        ));
    }
    // Never both cover a missing name with cordon's placeholder and remove it after the
    // run as the command's (attack pass 214 #4): a kept-absent name the resolution still
    // protects (it could not tell this sweep would run there) is left to its placeholder,
    // which stays for every other run using it.
    let covered: Vec<&std::path::Path> = r
        .filesystem
        .protected()
        .into_iter()
        .flat_map(|e| [e.path.as_path(), e.spelled.as_path()])
        .collect();
    for c in &mut out {
        c.absent.retain(|(p, _)| !covered.contains(&p.as_path()));
        c.note_absent_parents();
    }
    Ok(out)
}

/// The hook managers' configs present in the work tree `root`, to be the same files after
/// the run (attack pass 31, B2).
fn present_configs(root: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    owned(cordon_policy::resolve::hook_configs_present(&HostFs, root))
}

/// The hook managers' configs that must still be absent after the run in the work tree
/// `root` whose git dir is `gitdir` (attack pass 29, F1).
fn kept_absent(
    root: &std::path::Path,
    gitdir: &std::path::Path,
) -> Vec<(std::path::PathBuf, String)> {
    owned(cordon_policy::resolve::hook_configs_kept_absent(
        &HostFs, root, gitdir,
    ))
}

fn owned(v: Vec<(std::path::PathBuf, &'static str)>) -> Vec<(std::path::PathBuf, String)> {
    v.into_iter().map(|(p, t)| (p, t.to_string())).collect()
}

/// Sets the `grant` of each path record in the helper's denial records to `grant(record)`.
fn record_grants(
    helper: &mut Option<HelperReport>,
    grant: impl Fn(&cordon_sandbox::denials::DenialRecord) -> Option<std::path::PathBuf>,
) {
    #[cfg(target_os = "linux")]
    if let Some(cordon_sandbox::linux::HelperOutcome::Applied(a)) = helper {
        for r in a.denials.iter_mut().flat_map(|d| d.records.iter_mut()) {
            if !r.is_network() {
                r.grant = grant(r);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (helper, grant);
}

/// Step 5 of one attempt: classifies what the runner returned for `prepared` (R-F1) into
/// the attempt's [`Report`] (no escalation yet). The caller finishes the run in its scope
/// (and cancels it first when the outcome is `timed-out` or `cancelled`).
pub fn conclude(
    prepared: Prepared,
    trust: &TrustProfile,
    ran: std::io::Result<(crate::outcome::RunSignals, Option<HelperReport>)>,
) -> Report {
    let Prepared {
        run_id,
        record,
        verdict,
        exec,
        needs,
        git_dirs,
        sweep_record,
        earlier_sweeps,
        plan,
    } = prepared;
    let plan = plan || trust.layers.plan;
    // After the run, whatever its outcome: what it left in the git dirs for the host's git.
    let own_record = sweep_record.as_ref().and_then(|r| r.path());
    let swept: Vec<_> = git_dirs
        .iter()
        .flat_map(|c| {
            cordon_sandbox::git_dir_sweep::sweep_all(c)
                .into_iter()
                .map(move |r| match r {
                    Ok(s) => s,
                    Err(e) => cordon_sandbox::git_dir_sweep::Swept::failed(c, e.to_string()),
                })
        })
        .map(|mut s| {
            crate::pending_sweeps::keep_unheld_locks(&mut s, own_record);
            s
        })
        .collect();
    // The directories cordon created for writable grants (no `.git`/`.cordon` placeholders
    // in them): a repository or project marker the command made there is moved aside
    // (attack pass 40, D1).
    let mut swept = swept;
    let fresh = fresh_grant_roots(&exec);
    // Where the roots this run created were recorded before they existed (not on Linux,
    // where [`prepare`] makes them first), without the identity that finds them again
    // once renamed or moved: recorded again now that they exist, whatever the outcome
    // (attack pass 175, F1: a created `-w` directory, renamed after the run, was no longer
    // known as written, and a forged sweep record in it was acted on by the next run).
    #[cfg(not(target_os = "linux"))]
    if !fresh.is_empty() {
        if let Err(why) = crate::writable_history::record(&writable_roots(&exec), &trust.files) {
            tracing::warn!(%why, "the created writable roots' identities were not recorded");
        }
    }
    if !fresh.is_empty() {
        let known: Vec<std::path::PathBuf> = git_dirs.iter().map(|c| c.git_dir.clone()).collect();
        swept.extend(cordon_sandbox::git_dir_sweep::settle_fresh_roots(
            &fresh, &known, false,
        ));
    }
    // The census record goes only once every git dir was swept whole; otherwise the next
    // run finishes the sweep (new-user pass nu13: a sweep cut short by `chmod 000`).
    if let Some(r) = sweep_record.map(crate::pending_sweeps::SweepRecord::into_path) {
        if swept.iter().all(crate::pending_sweeps::swept_whole) {
            crate::pending_sweeps::done(&r);
        }
    }
    let git_dirs: Vec<_> = earlier_sweeps
        .into_iter()
        .chain(swept)
        .filter(|s| !s.is_empty())
        .collect();
    let mut helper = None;
    let mut network_denied = Vec::new();
    let mut connect_failures = Vec::new();
    // The user's home, the directories of the command's PATH (the caller's, kept) and of
    // cordon's own: never offered as a one-off grant after a denial (nu23 Q2).
    let (home, path_dirs) = crate::outcome::offer_facts(
        exec.env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str()),
    );
    let outcome = match ran {
        Err(e) => match unexecutable_request(&e, &exec) {
            // The request itself cannot be executed, whatever runs it (attack pass 186 F3:
            // an argument with a NUL byte, or arguments past the kernel's limit, were
            // blamed on cordon's install).
            Some(why) => Outcome::refused(why, EXIT_CANNOT_EXECUTE),
            // The program is cordon's own helper (or sandbox-exec) for a sandboxed run: its
            // absence is cordon's failure, never "command not found".
            None if exec.backend != cordon_policy::Backend::None => Outcome::refused(
                format!(
                    "cannot start the sandbox helper {}: {e} (reinstall cordon)",
                    exec.program
                ),
                EXIT_CORDON,
            ),
            None => {
                let code = match e.kind() {
                    std::io::ErrorKind::NotFound => EXIT_NOT_FOUND,
                    std::io::ErrorKind::PermissionDenied => EXIT_CANNOT_EXECUTE,
                    _ => EXIT_CORDON,
                };
                Outcome::refused(format!("{}: {e}", exec.program), code)
            }
        },
        Ok((sig, report)) => {
            helper = report;
            network_denied = sig.network_denied.clone();
            connect_failures = sig.connect_failures.clone();
            let words = crate::outcome::named_paths(
                record.segments.iter().flat_map(|s| &s.segment.argv),
                &sig.stderr_tail,
            );
            let ctx = ClassifyContext {
                resolved: exec.resolved.as_ref(),
                fs: &HostFs,
                // The command's cwd (the resolved profile's), not cordon's.
                cwd: exec
                    .resolved
                    .as_ref()
                    .map_or(trust.cwd.as_path(), |r| r.cwd.as_path()),
                network_enabled: needs.network(),
                home: home.as_deref(),
                path_dirs: &path_dirs,
                words: &words,
            };
            // Each record's `grant` is the one cordon offers for it, as the outcome's is
            // (new-user pass 150: a write under a home's parent showed the raw grant
            // `/var/tmp/x` in the record and `null` at the top level).
            record_grants(&mut helper, |r| crate::outcome::offered_grant(r, &ctx));
            classify(&sig, &ctx)
        }
    };
    let mut outcome = outcome;
    // A `cordon explain PATH` the hint suggests explains the profile this command ran with
    // (new-user pass 239 #1: after `run --profile read-only` in the home directory, the
    // suggested `cordon explain .ssh/id_rsa` resolved the default profile and was refused).
    if let Some(h) = &mut outcome.hint {
        *h = explain_with_selection(h, &trust.layers);
    }
    // Plan mode (R-A10) is read-only by design: the usual advice after a denial (`-w`,
    // `--allow-network`, the grant offered) does nothing under `--plan` — in the report as
    // on stderr (new user, stop 19: an agent following it looped; nu17 N5: `--json` still
    // said "-w").
    if plan {
        if let crate::OutcomeClass::SandboxDenied {
            grant, also_grant, ..
        } = &mut outcome.class
        {
            *grant = None;
            also_grant.clear();
        }
        record_grants(&mut helper, |_| None);
        if matches!(
            outcome.class,
            crate::OutcomeClass::SandboxDenied { .. } | crate::OutcomeClass::NetworkDenied { .. }
        ) {
            outcome.hint = Some(PLAN_HINT.to_string());
        }
    }
    // A denied `git worktree add … -b NAME` made the branch before it failed: the same
    // command cannot succeed again, so no retry is offered (new-user pass 234 #1: the
    // approved retry failed with "a branch named … already exists"); the hint says to
    // name the branch without `-b` (new-user pass nu18 F2).
    if let crate::OutcomeClass::SandboxDenied {
        grant, also_grant, ..
    } = &mut outcome.class
    {
        if let Some(b) = record
            .segments
            .iter()
            .find_map(|s| cordon_policy::gitconfig::worktree_add_new_branch(&s.segment.argv))
        {
            *grant = None;
            also_grant.clear();
            if let Some(h) = outcome.hint.as_mut() {
                h.push_str(&format!(
                    "; git created the branch {b} before it failed, so this command cannot \
                     succeed again and cordon offers no retry of it: run it again with that \
                     grant, naming the branch without -b (`git worktree add PATH {b}`)"
                ));
            }
        }
    }
    // A repository made beside the project (`git clone . ../x`, `cargo new ../x`): a
    // grant for it would not give it — what a sandboxed command makes there is moved aside
    // after the run, as its config and hooks would run on the host — so none is offered,
    // and the hint says what works (new-user pass nu22, P1: following `-w ../x` left a
    // directory that was no repository).
    if let (
        crate::OutcomeClass::SandboxDenied {
            grant,
            also_grant,
            path: Some(p),
            ..
        },
        Some(r),
    ) = (&mut outcome.class, exec.resolved.as_ref())
    {
        if !p.starts_with(&r.workspace) && makes_repository(&record, p, &r.cwd) {
            *grant = None;
            also_grant.clear();
            outcome.hint = Some(format!(
                "{} is outside the project, and {REPOSITORY_BESIDE}: run it outside cordon, \
                 or make it inside the project (e.g. `git clone . sub/NAME`) and move it",
                p.display()
            ));
        }
    }
    if let Some(r) = exec.resolved.as_ref() {
        if let Some(h) =
            placeholder_hint(r, &record, &outcome).or_else(|| prune_left_hint(r, &record))
        {
            outcome.hint = Some(h);
        } else if outcome.hint.is_none() && outcome.class == crate::OutcomeClass::CommandFailed {
            outcome.hint = unseen_layers_hint(r);
        }
    }
    // A command that worked but whose `.git/config` edits were not all kept: said in the
    // outcome, where a harness reads it, not only in the report's `git_config` (new-user
    // pass nu18 F11: `git remote add origin ../remote.git` was a plain success, and the
    // agent's next `git push origin` failed).
    if outcome.hint.is_none() && outcome.class == crate::OutcomeClass::Success {
        outcome.hint = refused_git_config_hint(helper.as_ref());
    }
    if outcome.hint.is_none() && outcome.class == crate::OutcomeClass::Success {
        outcome.hint = exec
            .resolved
            .as_ref()
            .and_then(|r| discarded_install_hint(r, &record));
    }
    if outcome.hint.is_none() {
        outcome.hint = exec.resolved.as_ref().and_then(|r| {
            discarded_tmp_hint(
                r,
                &git_dirs,
                &record,
                outcome.class == crate::OutcomeClass::Success,
            )
        });
    }
    // Whatever advice came after: none offers a widening in plan mode (hints finding 3:
    // the note after an exit 0 said "allow writing it once with -w .git" right after the
    // line saying -w does not apply to a --plan run).
    if plan {
        outcome.hint = outcome
            .hint
            .take()
            .map(|h| plan_advice(h, outcome.class == crate::OutcomeClass::Success));
    }
    let mut exec = exec;
    exec.payload_fd = None;
    Report {
        run_id,
        outcome,
        exec_policy: record,
        approval: verdict,
        exec: Some(exec),
        helper,
        escalation: None,
        retry_refused: None,
        retry_aborted: false,
        retry: None,
        network_denied,
        connect_failures,
        git_dirs,
    }
}

/// Records in the session's decision log each connection the proxy refused during the
/// attempt of `report` that no answer already recorded (a host a person denied is logged
/// when answered; one denied by a rule, or without anyone to ask, was not: breaker LOW-1).
/// Kind `network-host`, detail `host:port: denied by cordon's proxy (rule)`.
pub fn record_network_denials(session: &mut Session, report: &Report) {
    for d in &report.network_denied {
        let entry = format!("{}:{}", d.host, d.port);
        let known = session.scope.log().iter().any(|e| {
            e.kind == DecisionKind::NetworkHost
                && e.run_id.as_ref() == Some(&report.run_id)
                && e.detail.starts_with(&format!("{entry}: "))
        });
        if !known {
            session.scope.record(
                DecisionKind::NetworkHost,
                Some(&report.run_id),
                None,
                format!("{entry}: denied by cordon's proxy ({})", d.rule),
            );
        }
    }
}

/// Ends `run` in the session's scope: cancelled first when the outcome says the run was
/// ended early (a late answer for it is then rejected, R-A9).
pub fn finish_run(session: &mut Session, run: &RunId, outcome: &Outcome) {
    if matches!(
        outcome.class,
        OutcomeClass::TimedOut | OutcomeClass::Cancelled
    ) {
        session.scope.cancel(run);
    }
    session.scope.finish(run);
}

/// One attempt: [`prepare`] → [`runner::run`] → [`conclude`]; then [`offer_retry`].
fn attempt(
    session: &mut Session,
    manager: &SandboxManager,
    trust: &TrustProfile,
    spec: &RunSpec,
    approved: Option<(RunId, Verdict)>,
) -> Report {
    let is_retry = approved.is_some();
    let prepared = match prepare(session, manager, trust, spec, approved) {
        Ok(p) => p,
        Err(report) => return *report,
    };
    let needs = prepared.needs.clone();
    // Unknown hosts of a managed network are asked on this thread while it runs.
    let ctx = crate::hosts::HostAskContext {
        run_id: prepared.run_id.clone(),
        argv: spec.argv.clone(),
        cwd: trust.cwd.clone(),
        needs: needs.clone(),
    };
    let asks = trust.profile.network == cordon_policy::NetworkPolicy::Managed;
    let mut asker = |q: &runner::HostAsk| session.ask_host(&ctx, q);
    let ran = runner::run_asking(
        &prepared.exec,
        &RunOptions {
            timeout: spec.timeout,
            capture_stderr: spec.capture_stderr,
            helper_verbose: spec.helper_verbose,
        },
        runner::RunIo::default(),
        asks.then_some(&mut asker as &mut runner::HostAsker<'_>),
    );
    let report = conclude(prepared, trust, ran);
    record_network_denials(session, &report);
    finish_run(session, &report.run_id, &report.outcome);
    if is_retry
        || !matches!(
            report.outcome.class,
            OutcomeClass::SandboxDenied { .. } | OutcomeClass::NetworkDenied { .. }
        )
    {
        return report;
    }
    offer_retry(session, manager, trust, spec, report, &needs)
}

/// Step 6 (R-F2): after a denial, offer the smallest widening (or the unsandboxed form) as
/// a NEW request; run the retry only if that request is approved. Plan mode stays
/// read-only until it is left (R-A10): no widening inside it.
fn offer_retry(
    session: &mut Session,
    manager: &SandboxManager,
    trust: &TrustProfile,
    spec: &RunSpec,
    mut report: Report,
    needs: &NeededPermissions,
) -> Report {
    let record = report.exec_policy.clone();
    let run_id = report.run_id.clone();
    let esc = if trust.layers.plan {
        Escalation::NotOffered {
            reason: "plan mode is read-only until it is left (R-A10)".into(),
        }
    } else {
        escalation(
            &report.outcome,
            needs,
            session.mode,
            spec.allow_unsandboxed_retry,
        )
    };
    report.escalation = Some(esc.clone());
    let Escalation::Offered {
        widening,
        needs: wider,
    } = esc
    else {
        return report;
    };
    // The wider profile is built, and the retry prepared, before anyone is asked: a
    // widening the sandbox would then refuse (the project's own `core.hooksPath` outside
    // the workspace; an entry on cordon's files) is not offered, and the person is not
    // asked a question answered for nothing (new-user pass nu26, F3: the retry was
    // approved, then refused with 125 instead of the command's own failure).
    let mut layers = trust.layers.clone();
    let mut retry_spec = spec.clone();
    match &widening {
        Widening::Additional { permissions } => {
            if permissions.wants_network() {
                layers.allow_network = true;
            }
            layers
                .writable
                .extend(permissions.entries.iter().map(|e| e.path.clone().into()));
        }
        Widening::Unsandboxed => {
            retry_spec.preference = SandboxPreference::Forbid;
            retry_spec.preference_is_default = false;
        }
    }
    let retry_trust = match TrustProfile::build(trust.entry.clone(), &trust.cwd, &layers)
        .map_err(|e| e.to_string())
        .and_then(
            |t| match retry_unpreparable(manager, &t, &retry_spec, &record) {
                Some(why) => Err(why),
                None => Ok(t),
            },
        ) {
        Ok(t) => t,
        Err(e) => {
            report.escalation = Some(Escalation::NotOffered {
                reason: format!("the wider profile cannot be used: {e}"),
            });
            return report;
        }
    };
    let new_run = session.scope.start_run();
    let first = ReviewableRequest::tool_call(
        run_id,
        &record,
        trust.cwd.clone(),
        needs.clone(),
        record.reason.clone(),
    );
    let retry_req = first.escalated(new_run.clone(), &report.outcome, wider, &widening);
    let verdict = session.ask(retry_req, &record);
    if let Verdict::Refuse { reason, abort } = &verdict {
        // (the first attempt's report stays as it was)
        session.scope.finish(&new_run);
        report.retry_refused = Some(reason.clone());
        report.retry_aborted = *abort;
        return report;
    }
    eprintln!(
        "cordon: retrying with {} (approved by {})",
        match &widening {
            Widening::Additional { permissions } =>
                serde_json::to_string(permissions).unwrap_or_default(),
            Widening::Unsandboxed => "no sandbox".into(),
        },
        match &verdict {
            Verdict::Run { by, .. } => crate::approver::by_phrase(by),
            _ => "?",
        }
    );
    report.retry = Some(Box::new(attempt(
        session,
        manager,
        &retry_trust,
        &retry_spec,
        Some((new_run, verdict)),
    )));
    report
}

/// Why a command cannot be started as given, when the fault is the request's, not the
/// program's or cordon's: an argument or variable with a NUL byte (no `execve` can carry
/// one) or arguments and environment past the kernel's limit (`E2BIG`). `None` for any
/// other spawn error.
fn unexecutable_request(e: &std::io::Error, exec: &ExecRequest) -> Option<String> {
    if e.raw_os_error() == Some(libc::E2BIG) {
        return Some(
            "cannot start the command: its arguments and environment are too long for the \
             kernel (E2BIG: at most 128 KiB per argument or variable, and about a quarter of \
             the stack limit in all); pass large data through a file or stdin"
                .into(),
        );
    }
    // Read from the request itself, not from the error's wording.
    let nul = exec
        .args
        .iter()
        .chain(exec.env.iter().flat_map(|(k, v)| [k, v]))
        .any(|s| s.contains('\0'));
    (e.kind() == std::io::ErrorKind::InvalidInput && nul).then(|| {
        "cannot start the command: an argument or environment variable holds a NUL byte, \
             which no command line can carry"
            .into()
    })
}

#[cfg(test)]
mod tests {
    /// New-user pass 239 #1: the suggested `cordon explain` carries the run's `--config`
    /// and `--profile`. Twin: without them the hint is unchanged.
    #[test]
    fn a_suggested_explain_names_the_runs_profile() {
        let hint = "x is hidden; `cordon explain /h/.ssh/id_rsa` says which entry hides it";
        let layers = crate::trust::Layers {
            profile: Some("read-only".into()),
            config: Some("/h/my conf.toml".into()),
            ..Default::default()
        };
        assert_eq!(
            explain_with_selection(hint, &layers),
            "x is hidden; `cordon explain --config '/h/my conf.toml' --profile read-only \
             /h/.ssh/id_rsa` says which entry hides it"
        );
        assert_eq!(
            explain_with_selection(hint, &crate::trust::Layers::default()),
            hint
        );
    }

    use super::*;

    /// Hints finding 3: in plan mode no advice offers `-w` (a note after an exit 0 said
    /// "allow writing it once with -w .git" after the line saying -w does not apply to a
    /// --plan run); sibling: a failed run's unexplained-refusal hint and a network hint.
    /// Twin: advice that offers no widening is kept as it is.
    #[test]
    fn plan_mode_advice_never_offers_a_widening() {
        let note = format!(
            "the command exited 0, but the sandbox refused `openat .git/x` (EROFS), so that \
             write did not happen; if the command needed it: .git/x is read-only: {}.git",
            crate::outcome::ALLOW_WRITE_ONCE
        );
        let said = plan_advice(note, true);
        assert!(
            said.starts_with("the command exited 0") && said.ends_with(PLAN_HINT),
            "{said}"
        );
        assert!(!said.contains(crate::outcome::ALLOW_WRITE_ONCE), "{said}");
        for h in [
            format!(
                "the sandbox refused `mkdir /data/x` (EROFS) during the run, which the \
                 command's stderr does not name; if that is why it failed: {}/data",
                crate::outcome::ALLOW_WRITE_ONCE
            ),
            format!("curl failed: {}", crate::outcome::ALLOW_NETWORK_ONCE),
        ] {
            assert_eq!(plan_advice(h, false), PLAN_HINT);
        }
        let plain = "timed out after 1s: raise --timeout if it needs longer".to_string();
        assert_eq!(plan_advice(plain.clone(), false), plain);
        assert_eq!(plan_advice(PLAN_HINT.into(), false), PLAN_HINT);
    }

    /// nu18 F9: `cargo install` into a whole-home copy-on-write layer of the cargo home
    /// (which keeps only `registry/` and `git/`) is told that the program is gone after the
    /// run. Twins: another cargo command, or a cargo home with all its caches (each its
    /// own layer, nothing else discarded), gets no such note.
    #[test]
    fn cargo_install_into_a_whole_home_layer_is_told_it_is_discarded() {
        let resolved = |fs: &cordon_policy::MemFs| {
            let mut p = cordon_policy::PermissionProfile::builtin("workspace-write").unwrap();
            p.caches = cordon_policy::CacheMode::Overlay;
            let ctx = cordon_policy::ResolveContext {
                cwd: "/home/u/proj".into(),
                home: Some("/home/u".into()),
                ..Default::default()
            };
            cordon_policy::resolve(&p, &ctx, fs).unwrap()
        };
        let rec = |argv: &[&str]| {
            let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
            cordon_execpolicy::Policy::empty()
                .evaluate(&argv, &cordon_execpolicy::EvalContext::default())
        };
        let fs = cordon_policy::MemFs::new()
            .dir("/home/u/proj/.git/objects")
            .dir("/home/u/.cargo/registry");
        let r = resolved(&fs);
        let hint = discarded_install_hint(&r, &rec(&["cargo", "install", "ripgrep"]));
        assert!(
            hint.as_deref()
                .is_some_and(|h| h.contains("/home/u/.cargo/bin") && h.contains("gone after")),
            "{hint:?}"
        );
        assert_eq!(discarded_install_hint(&r, &rec(&["cargo", "build"])), None);
        let fs = fs.dir("/home/u/.cargo/git");
        assert_eq!(
            discarded_install_hint(&resolved(&fs), &rec(&["cargo", "install", "x"])),
            None
        );
    }
}
