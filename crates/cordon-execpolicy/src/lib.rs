//! # cordon-execpolicy — the approval dimension (SPEC §6, R-A1..R-A4)
//!
//! A pure crate (no OS calls): parse a command with a real bash parser (tree-sitter-bash),
//! match it against prefix rules, apply built-in knowledge, and return a serialisable
//! [`DecisionRecord`] saying `allow`, `ask` or `forbid`, and whether the sandbox may be
//! bypassed. Filesystem and network are decided elsewhere (R-A1): an `allow` here means
//! "no approval needed", never "no limits".
//!
//! ```
//! use cordon_execpolicy::{Decision, EvalContext, Policy};
//! let policy = Policy::from_toml_str(r#"
//!     [[rules]]
//!     pattern = ["cargo", "test"]
//!     decision = "allow"
//!     examples = ["cargo test -p foo"]
//! "#, "example.toml").unwrap();
//! let argv = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
//! let ctx = EvalContext::default();
//! assert_eq!(policy.evaluate(&argv(&["bash", "-lc", "cargo test"]), &ctx).decision, Decision::Allow);
//! assert_eq!(policy.evaluate(&argv(&["bash", "-lc", "cargo test && rm -rf build"]), &ctx).decision, Decision::Ask);
//! assert_eq!(policy.evaluate(&argv(&["bash", "-lc", "cargo test && rm -rf /"]), &ctx).decision, Decision::Forbid);
//! ```
//!
//! ## How a decision is made
//!
//! 1. **Parse** ([`parse_command`]): the argv is split into segments (simple commands).
//!    Wrappers (`env`, `timeout`, `nice`, `nohup`, `sudo`, `doas`, `exec`, `command`,
//!    `builtin`, `time`, `stdbuf`, `setsid`, `xargs`) are looked through and recorded; shells
//!    (`bash|sh|zsh|dash|ksh|mksh|ash`, also by trusted absolute path) with `-c` have their
//!    script parsed; `find -exec`, `eval 'static text'`, `alias x='…'` and `trap '…'` bodies
//!    are parsed too. Constructs whose effect is not statically known make the command
//!    *opaque* (listed with a short kind name).
//! 2. **Per segment**: all matching rules are collected. The segment's base decision is the
//!    strictest matching rule (`forbid > ask > allow`); with no rule it is `allow` if the
//!    segment is on the known-safe list, else `ask` (the default). The dangerous-command
//!    detector's findings are then combined strictly (`max`) — **an allow rule never
//!    overrides a finding**. Finally an `allow` is capped to `ask` if the segment writes a
//!    file by redirection (not `/dev/null`), sets a sensitive environment variable (`PATH`,
//!    `LD_*`, `GIT_*`, …), or its program name is non-ASCII/dynamic.
//! 3. **Overall**: the strictest segment decision. `allow` only if every segment is allowed
//!    and the command is not opaque (opaque + all visible segments allowed → `ask`). No
//!    segment at all → `ask`. Substitutions, loops, conditionals and function definitions
//!    ([`OpaqueKind::body_is_visible`]) are walked completely; when nothing else is opaque
//!    and every segment is known-safe they are listed as `visible` instead of `opaque`
//!    (`for f in *.rs; do wc -l $f; done` is allowed). A call to a function defined earlier
//!    whose body is known-safe is known-safe.
//! 4. **Sandbox bypass**: only when the overall decision is `allow`, nothing is opaque,
//!    every segment's matched rules all say `sandbox = "bypass"` (known-safe never
//!    bypasses), and [`EvalContext::profile_has_deny_read`] is false.
//!
//! ## Default-decision table (nothing approval-mode specific)
//!
//! | situation | decision |
//! |---|---|
//! | a matching `forbid` rule | forbid |
//! | a `forbid` finding (table below) | forbid |
//! | a matching `ask` rule, or an `ask` finding | ask (at least) |
//! | a matching `allow` rule, or known-safe, no caps | allow |
//! | allowed but capped (file redirect, sensitive env, non-ASCII name) | ask |
//! | no rule, not known-safe | ask |
//! | opaque script, all visible segments allowed | ask |
//! | script that does not parse cleanly, `${x@P}`, substitution text read again as code, `BASH_ENV=<(…)` ([`OpaqueKind::asks_in_every_mode`]) | ask, in every approval mode |
//! | empty command / no segments | ask |
//!
//! ## Dangerous-command findings (R-A4)
//!
//! | finding id | example | decision |
//! |---|---|---|
//! | `rm_recursive_critical` | `rm -rf /`, `rm -r -f ~`, `rm -fr $HOME`, `rm -rf ../x`, `rm -rf /etc`, `rm -rf /*`, `rm -rf .` with cwd `/`, `--no-preserve-root` | forbid |
//! | `rm_system_file` | `rm /etc/passwd` | forbid |
//! | `rm_dynamic_target` | `rm -rf "$DIR"`, `xargs rm -rf` | ask |
//! | `find_delete_critical` | `find / -delete` | forbid |
//! | `rm_project` | `rm -rf .git`, `rm -rf *`, `rm -rf /abs/project`, `cd .. && rm -rf project`, `find . -delete`, `ln -s .git g; rm -rf g/`, `git ls-files \| xargs rm` | ask |
//! | `privilege_escalation` | `sudo …`, `doas …`, `su`, `pkexec` | ask |
//! | `download_to_interpreter` | `curl … \| sh`, `sh -c "$(curl …)"`, `bash <(wget …)` | forbid |
//! | `git_force_push` | `git push --force`/`-f`/`+ref`/`--mirror` (forbid); `--force-with-lease` alone (ask) | forbid / ask |
//! | `git_push_delete` | `git push --delete`, `git push origin :branch` | ask |
//! | `git_reset_hard` | `git reset --hard` | ask |
//! | `git_discard_changes` | `git checkout -- .`, `git restore f`, `git stash drop`, `xargs git`, `git reset $MODE`, `git diff -R \| git apply`, `git archive HEAD \| tar -x`, `GIT_SEQUENCE_EDITOR='sed -i 1d' git rebase -i` | ask |
//! | `git_clean` | `git clean -fdx` (any `-f` with `-d`/`-x`/`-X`) | ask |
//! | `dynamic_command` | `x="git reset --hard"; $x`, `"${a[@]}"`, `sh -c '"$@"' _ git …`, `eval "$x"`, `sh <<< "$x"`, `python3 <<< "$x"` | ask |
//! | `dd_device` / `device_write` | `dd of=/dev/sda`, `> /dev/sda`, `tee /dev/sda`, `cp img /dev/nvme0n1` | forbid |
//! | `mkfs` | `mkfs.ext4`, `mke2fs`, `mkswap`, `mkdosfs`, `wipefs`, `blkdiscard` | forbid |
//! | `disk_overwrite` | `shred /dev/sda`, `sgdisk --zap-all`, `fdisk /dev/sda`, `sfdisk`, `parted … mklabel`, `hdparm --security-erase`, `nvme format`, `badblocks -w`, `cryptsetup luksFormat`, `zpool labelclear`, `ddrescue x /dev/…`, `dcfldd of=/dev/…` | forbid |
//! | `chmod_world_writable` | `chmod -R 777 x`, `chmod -R a+rwx x`, `chmod 777 /etc/x` | forbid |
//! | `recursive_owner_mode_system` | `chown -R u /usr`, `chmod -R 755 /etc` | forbid |
//! | `fork_bomb` | `:(){ :\|:& };:` and renamed variants | forbid |
//! | `shell_rc_write` | `>> ~/.bashrc`, `tee -a ~/.zshrc`, `sed -i … ~/.profile`, `cp x ~/.bashrc` | forbid |
//! | `system_file_write` | `> /etc/passwd`, `cp x /usr/bin/y` | forbid |
//! | `power_state` | `shutdown`, `reboot`, `halt`, `poweroff` | forbid |
//!
//! Critical delete targets: `/` and anything spelled to reach it, `/*`-style globs at the
//! root or home, the home directory (`~`, `~/`, `$HOME`, `${HOME}`, `EvalContext::home`),
//! relative paths that escape the working directory (`..`), `.`/`*` when the working
//! directory (from the context or a preceding `cd`) is critical, everything under `/etc`,
//! `/usr`, `/bin`, `/sbin`, `/boot`, `/lib*`, `/dev`, `/proc`, `/sys`, `/System`, and the
//! top one or two levels of `/var`, `/opt`, `/home`, `/Users`, `/root`, `/srv`, `/tmp`, ….
//! The detector works on the folded program basename, so `/tmp/rm`, `./rm` and look-alikes
//! such as `rм` (Cyrillic `м`) are checked like `rm`.
//!
//! ## Known-safe list (R-A4)
//!
//! Read-only regardless of arguments: `ls cat head tail wc pwd echo printf true false :
//! which whereis type whoami id groups uname stat du df basename dirname realpath readlink tr
//! cut nl rev tac seq diff cmp comm column expand unexpand fold fmt paste od hexdump strings
//! md5sum sha*sum b2sum cksum grep egrep fgrep test [ [[ jq nproc arch uptime locale tty
//! sleep cd pushd popd dirs set shopt wait exit return printenv`. With argument checks:
//! `hostname` (no args), `date` (no `-s`), `file` (no `-C`), `sort` (no `-o`,
//! `--compress-program`), `uniq` (≤ 1 operand), `tree` (no `-o`), `rg` (no `--pre`,
//! `--pre-glob`, `-z`), `fd` (no `-x`/`-X`), `find` (no `-exec -execdir -ok -okdir -delete
//! -fprint* -fls`), `sed` (no `-i`/`-f`; scripts only of print/delete/substitute commands
//! without `w`/`e` flags), `git status|log|diff|show|rev-parse|ls-files|ls-tree|blame|
//! describe|merge-base|show-ref|cat-file|grep|shortlog|for-each-ref|rev-list|reflog (show)|
//! stash list|stash show|tag (listing)|config --get/--list|worktree list|branch (listing)|
//! remote (-v, get-url)|--version` without
//! global `-c`/`-C`/`--git-dir`/`--work-tree`/`--exec-path`/`-p` and without `--output`,
//! `--ext-diff`, `--textconv`, `-O`. `command -v`/`-V`. Toolchains (`knowledge/toolchains.rs`):
//! `--version` of node/python/ruby/perl/deno/bun, `npm ls|view|outdated|why|config get`,
//! `pip list|show|freeze|check` (also `python3 -I -m pip` / `-P`: a plain `-m` imports from
//! the cwd), `awk` programs without `system`, `|`, `>` or `@` and without `-f`, `yq` without
//! `-i`/`-s`. Never known-safe, whatever the arguments: launchers that run what a file in the
//! cwd names (cargo/rustc/rustup via `rust-toolchain.toml`, go via a `go.mod` `toolchain`
//! line, pnpm/yarn/corepack via `packageManager`/`yarnPath`, uv via the cwd's `.venv`); the
//! policy does not read the cwd. Only for bare names or trusted paths, and (for commands that
//! inspect arguments) only when every argument is static. A segment that assigns a variable
//! changing what runs (one table: `PATH`, `LD_*`, `GIT_*`, `PAGER`, and the option-equivalent
//! variables of these tools such as `PIP_*`, `npm_config_*`, `RIPGREP_CONFIG_PATH`,
//! `PYTHONPATH`) is capped at `ask`.
//!
//! ## Trusted program locations
//!
//! A bare name (`git`) is resolved through `PATH` and trusted as written (assigning `PATH`
//! caps the segment / makes a script opaque). An absolute path is treated as its basename
//! only when its directory is in [`ParseOptions::trusted_program_dirs`] (default `/usr/bin`,
//! `/bin`, `/usr/sbin`, `/sbin`, `/usr/local/bin`) or listed for that program in
//! [`ParseOptions::trusted_program_paths`]. `/tmp/git` never matches a `git` rule, is never
//! known-safe, and is not looked through as a wrapper or shell. A pattern whose first element
//! contains `/` matches exactly that spelling.
//!
//! ## Suggested rules ("approve and remember")
//!
//! Only for an overall `ask` that is not opaque. The first segment (in record order) whose
//! decision is `ask` is used; if that segment's `ask` came from anything other than the
//! default (a rule, a finding, a cap, `sudo`), there is no suggestion. Otherwise the pattern
//! is the program name followed by up to two leading words that look like subcommands
//! (static, ≤ 32 chars, `[A-Za-z0-9_:-]`, not starting with `-`): `cargo test -p foo` →
//! `["cargo", "test"]`, `npm run build` → `["npm", "run", "build"]`. Never suggested:
//! shells and interpreters (`bash`, `sh`, `node`, `perl`, `ruby`, …), `python`/`python3`
//! except `python3 -m module`, `find`, `xargs`, and a bare program name for multi-purpose
//! tools (`git`, `env`, `sudo`, `cargo`, `npm`, `rm`, `make`, …).
//!
//! ## Robustness
//!
//! Parsing never panics. Total parsed bytes are capped at [`parse::MAX_INPUT_BYTES`],
//! nesting at [`parse::MAX_DEPTH`], segments at [`parse::MAX_SEGMENTS`], nested shells at
//! [`ParseOptions::max_shell_depth`]; exceeding a bound records an opaque construct.

#![warn(missing_docs)]

pub mod approval;
mod decision;
mod error;
mod grammar;
mod knowledge;
mod model;
pub mod parse;
mod rules;

pub use approval::{gate, run_would, ApprovalMode, Gate, RunWould};
pub use decision::{
    Basis, DecisionRecord, EvalContext, MatchedRule, SandboxVerdict, SegmentRecord, SuggestedRule,
};
pub use error::{LoadError, RuleLocation};
pub use knowledge::{Finding, FindingId};
/// `w` as one shell word (single-quoted unless every character is plain): what a hint's
/// or a prompt's command line shows, so that pasting it gives back `w`.
pub use model::{shell_word, shell_word_bytes};
pub use model::{
    Context, Decision, EnvAssignment, OpaqueConstruct, OpaqueKind, ParsedCommand, PipelinePosition,
    Program, ProgramKind, RedirectKind, Redirection, Segment, Wrapper,
};
pub use parse::{parse_command, parse_command_with, parse_script, parse_script_with, ParseOptions};
pub use rules::{Example, Pattern, Rule, RuleSource, SandboxMode};

/// The variable whose herestring a caller feeds a command with to stand for the command's
/// own standard input when that text is known only at run time (a pipe or a file given to
/// `cordon run`): `CMD <<< "$CORDON_STDIN"`. An interpreter reading its program from it is
/// said to read its standard input (`stdin_script`), not a heredoc.
pub const RUN_TIME_STDIN_VAR: &str = "CORDON_STDIN";

/// Whether redirection `r` is the herestring of [`RUN_TIME_STDIN_VAR`].
pub(crate) fn is_run_time_stdin(r: &model::Redirection) -> bool {
    r.kind == model::RedirectKind::Herestring
        && r.target.strip_prefix('$') == Some(RUN_TIME_STDIN_VAR)
}

/// A set of command rules, possibly merged from several layers (R-A3, R-P6).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    rules: Vec<Rule>,
}

impl Policy {
    /// A policy without rules: decisions come from built-in knowledge only.
    pub fn empty() -> Policy {
        Policy::default()
    }

    /// Load rules from TOML text (R-A3). Reads the top-level `[[rules]]` array; other
    /// top-level keys (the rest of a profile file) are ignored. `source_label` (usually the
    /// file path) is recorded in every rule and in errors.
    ///
    /// Errors: [`LoadError::Toml`] for invalid TOML; [`LoadError::InvalidRule`] for a
    /// malformed rule or unknown key; [`LoadError::ExampleDoesNotMatch`] /
    /// [`LoadError::CounterexampleMatches`] when the load-time example check fails. Rule
    /// errors name the source, line, rule index and pattern.
    pub fn from_toml_str(src: &str, source_label: &str) -> Result<Policy, LoadError> {
        Ok(Policy {
            rules: rules::rules_from_str(src, source_label)?,
        })
    }

    /// Load rules from an already-parsed TOML value: a table containing `rules`, or the
    /// array of rule tables itself. Same checks and errors as [`Policy::from_toml_str`]
    /// (without line numbers).
    pub fn from_toml_value(value: &toml::Value, source_label: &str) -> Result<Policy, LoadError> {
        Ok(Policy {
            rules: rules::rules_from_value(value, source_label)?,
        })
    }

    /// Merge layers (R-P6 order: built-in < user < project < local < command line). Rules are
    /// concatenated in layer order; since the strictest matching rule wins, order only
    /// affects how the record lists them.
    pub fn merge_layers(layers: impl IntoIterator<Item = Policy>) -> Policy {
        Policy {
            rules: layers.into_iter().flat_map(|p| p.rules).collect(),
        }
    }

    /// Keep only rules that narrow (`ask`, `forbid`): what an untrusted project layer may
    /// contribute (R-P6).
    pub fn narrowing_only(self) -> Policy {
        Policy {
            rules: self
                .rules
                .into_iter()
                .filter(|r| r.decision != Decision::Allow)
                .collect(),
        }
    }

    /// The rules, in layer order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// One line for each `allow` rule that cannot make a command it names run without a
    /// question: its pattern (each position's first alternative) or one of its examples
    /// has a dangerous-command finding (R-A4), which asks or forbids in every mode and
    /// which no allow rule lifts (new-user pass 241: an allow rule for `git reset --hard`
    /// loaded in silence, and only `cordon check` said "an allow rule does not cover
    /// it"). Each line names the rule's source, the command and the finding. Empty when
    /// every allow rule can take effect.
    pub fn moot_allow_rules(&self) -> Vec<String> {
        let ctx = EvalContext::default();
        let mut out = Vec::new();
        for r in self.rules.iter().filter(|r| r.decision == Decision::Allow) {
            let from_pattern: Vec<String> = r
                .pattern
                .positions()
                .iter()
                .filter_map(|alts| alts.first().cloned())
                .collect();
            let mut records = vec![self.evaluate(&from_pattern, &ctx)];
            records.extend(r.examples.iter().map(|e| match e {
                rules::Example::Script(s) => self.evaluate_script(s, &ctx),
                rules::Example::Argv(a) => self.evaluate(a, &ctx),
            }));
            let moot = records.iter().find_map(|rec| {
                rec.segments
                    .iter()
                    .find(|seg| seg.decision != Decision::Allow && !seg.findings.is_empty())
                    .map(|seg| (seg.segment.display(), seg.findings[0].reason.clone()))
            });
            if let Some((cmd, why)) = moot {
                out.push(format!(
                    "{}: this allow rule does not cover `{cmd}`: {why}; a dangerous-command \
                     finding asks (or forbids) in every approval mode and no allow rule lifts \
                     it (approve it per run with --yes, or run it outside cordon)",
                    r.source
                ));
            }
        }
        out
    }

    /// Decide an argv (R-A2..R-A4). Never panics; see the crate docs for the combination.
    pub fn evaluate(&self, argv: &[String], ctx: &EvalContext) -> DecisionRecord {
        let parsed = parse_command_with(argv, &ctx.parse);
        decision::evaluate(&self.rules, parsed, argv.to_vec(), ctx)
    }

    /// Decide a shell script string (as `bash -c SCRIPT` would run it, but without recording
    /// a `bash` wrapper). The record's `command` is `[script]`.
    pub fn evaluate_script(&self, script: &str, ctx: &EvalContext) -> DecisionRecord {
        let parsed = parse_script_with(script, &ctx.parse);
        decision::evaluate(&self.rules, parsed, vec![script.to_string()], ctx)
    }
}
