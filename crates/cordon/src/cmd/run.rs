//! `cordon run`: build the trust profile, then hand the tool call to the decision loop
//! (`cordon_session::drive`: rules → approval → sandbox → run → classify → hint/escalate)
//! and report its outcome.

use crate::cli::{RunArgs, SandboxArg};
use crate::profile_args::preference;
use crate::EXIT_CORDON;
use anyhow::{Context, Result};
use cordon_execpolicy::{gate, ApprovalMode, Gate};
use cordon_policy::text::printable;
use cordon_policy::SandboxPreference;
use cordon_sandbox::SandboxManager;
use cordon_session::{drive, Report, RunSpec, Session, TrustProfile};
use serde_json::json;
use std::io::Write;

/// Where the JSON report goes (issue 8 §2). Only the file and descriptor sinks are out of
/// the command's reach; `--json` alone shares stderr with the command (documented).
enum Sink {
    None,
    Stderr,
    /// A `--json-fd` descriptor: written at its offset, as the caller opened it (`3>>log`
    /// appends).
    Writer(std::fs::File),
    /// The `--report` file cordon created: the report is the whole file, written from
    /// offset 0 and cut there (attack pass 45, M4: bytes written after it by anyone that
    /// could reach the file would have stayed as a forged last line). `true`: `--json` was
    /// given too, and the same line also ends stderr (it was dropped: the earlier note's
    /// "`--report FILE --json` drops the JSON on stderr").
    Report(std::fs::File, bool),
}

/// What a `--report` path is checked against when the sink is opened ([`Sink::open`]).
enum Roots<'a> {
    /// The profile is known: a symlink on the path is refused when it lies inside a
    /// writable root (a command may have planted it); one elsewhere is followed.
    Resolved(&'a TrustProfile),
    /// Nothing was resolved (a refusal before the profile was known): the writable roots
    /// are unknown, so no symlink anywhere on the path is followed.
    Unknown,
}

/// The report sink through one `cordon run`: opened (a `--json-fd` descriptor at once,
/// anything else once the profile is known), refused, or not opened yet.
enum SinkState {
    Pending,
    Open(Sink),
    /// Refused; `Some` holds a reason not said yet (the refusal had another cause).
    Refused(Option<String>),
}

impl SinkState {
    /// Opens the sink with `roots` unless that was done (or refused) already.
    fn open(&mut self, args: &RunArgs, roots: Roots<'_>) -> Result<()> {
        if !matches!(self, SinkState::Pending) {
            return Ok(());
        }
        match Sink::open(args, roots) {
            Ok(s) => {
                *self = SinkState::Open(s);
                Ok(())
            }
            Err(e) => {
                *self = SinkState::Refused(None);
                Err(e)
            }
        }
    }

    fn active(&self) -> bool {
        matches!(self, SinkState::Open(s) if !matches!(s, Sink::None))
    }
}

impl Sink {
    /// The sink `args` ask for: the one function both a run and a refusal open their sink
    /// with, so their checks cannot differ (F3, F4).
    ///
    /// `--json-fd N`: refused unless N is 3 or above, open, and open for writing; taken
    /// close-on-exec. `--report FILE`: checked against `roots` ([`open_report`]) and
    /// created without following a symlink; a refused one is never created. `--json`: the
    /// last line of stderr.
    fn open(args: &RunArgs, roots: Roots<'_>) -> Result<Sink> {
        if let Some(path) = &args.report {
            return open_report(args, path, roots).map(|f| Sink::Report(f, args.profile.json));
        }
        if let Some(n) = args.json_fd {
            #[cfg(target_os = "linux")]
            {
                use cordon_sandbox::linux::WriterRefusal;
                return cordon_sandbox::linux::take_inherited_writer(n)
                    .map(Sink::Writer)
                    .map_err(|r| match r {
                        WriterRefusal::Standard => anyhow::anyhow!(
                            "--json-fd {n}: descriptors 0-2 are the command's stdin, stdout \
                             and stderr; use 3 or above, e.g. {JSON_FD_EXAMPLE}"
                        ),
                        WriterRefusal::NotOpen => anyhow::anyhow!(
                            "--json-fd {n}: not an open descriptor (open it for cordon, e.g. \
                             `{n}>&1 >/dev/null`, a pipe, or `{n}>FILE` outside every project)"
                        ),
                        WriterRefusal::NotWritable => anyhow::anyhow!(
                            "--json-fd {n}: the descriptor is not open for writing (e.g. \
                             `{n}<file` opens it read-only); open it with `{n}>&1 >/dev/null`, \
                             a pipe, or `{n}>FILE` outside every project"
                        ),
                        WriterRefusal::Other(e) => {
                            anyhow::anyhow!("--json-fd {n}: cannot use the descriptor: {e}")
                        }
                    });
            }
            #[cfg(not(target_os = "linux"))]
            anyhow::bail!("--json-fd {n}: only supported on Linux; use --report FILE");
        }
        Ok(if args.profile.json {
            Sink::Stderr
        } else {
            Sink::None
        })
    }

    /// Writes `v` as one line. `--json` starts it on a line of its own: the runner ends a
    /// line the command left open (cordon tees the command's stderr whenever `--json` is
    /// given), and cordon's own lines end with a newline.
    ///
    /// Errors: the report could not be delivered (the sink's write error).
    fn emit(&mut self, v: &serde_json::Value) -> std::io::Result<()> {
        match self {
            Sink::None => Ok(()),
            Sink::Stderr => {
                let mut err = std::io::stderr().lock();
                writeln!(err, "{v}").and_then(|_| err.flush())
            }
            Sink::Writer(f) => writeln!(f, "{v}").and_then(|_| f.flush()),
            Sink::Report(f, also_stderr) => {
                use std::io::Seek;
                let line = format!("{v}\n");
                f.set_len(0)?;
                f.seek(std::io::SeekFrom::Start(0))?;
                f.write_all(line.as_bytes())?;
                f.set_len(line.len() as u64)?;
                f.flush()?;
                if *also_stderr {
                    let mut err = std::io::stderr().lock();
                    err.write_all(line.as_bytes()).and_then(|_| err.flush())?;
                }
                Ok(())
            }
        }
    }
}

pub fn run(args: RunArgs) -> Result<i32> {
    let mut sink = SinkState::Pending;
    // A descriptor is checked (open, 3 or above, writable) and taken before anything else:
    // the same check for a run and for a refusal, and nothing started later inherits it.
    if args.json_fd.is_some() {
        sink.open(&args, Roots::Unknown)?;
    }
    match run_reported(&args, &mut sink) {
        Ok(code) => Ok(code),
        Err(e) => Ok(refusal_report(&args, sink, &e)),
    }
}

/// A run that ended before a report could be made — a bad config or rules file, an unknown
/// profile, a refused `--config`/`--rules`/`--approvals-from` file — still leaves a JSON
/// report where one was asked for (nu7: a harness reading `--json-fd` got nothing for
/// these while `--deny-read .` gave `outcome: refused`): `{"outcome": "refused",
/// "exit_code": 125, "reason": …}`. The error line comes first, so a `--json` object is
/// the last line of stderr. A sink not opened yet is opened by [`Sink::open`] with the
/// roots unknown (no symlink followed); one that cannot be opened or written is said on
/// stderr. Returns the exit code, 125.
fn refusal_report(args: &RunArgs, state: SinkState, e: &anyhow::Error) -> i32 {
    let et = crate::cmd::error_text(e);
    eprintln!("cordon: {et}");
    // `--dry-run --json` prints its plan on stdout: its failure goes there too, as every
    // other subcommand's (new-user pass 201 #2; `super::json_error_report`).
    if args.dry_run && args.profile.json {
        println!(
            "{}",
            serde_json::json!({ "error": et, "exit_code": EXIT_CORDON })
        );
    }
    let v = refusal_value(&et);
    let sink = match state {
        SinkState::Open(s) => Ok(s),
        // Said already: the refusal is the sink's own, or its reason follows.
        SinkState::Refused(None) => return EXIT_CORDON as i32,
        SinkState::Refused(Some(why)) => Err(why),
        SinkState::Pending => {
            Sink::open(args, Roots::Unknown).map_err(|e| crate::cmd::error_text(&e))
        }
    };
    match sink {
        Ok(mut s) => {
            if let Err(w) = s.emit(&v) {
                eprintln!("cordon: the refusal report was not written: {w}");
            }
        }
        Err(why) => eprintln!("cordon: the refusal report was not written: {why}"),
    }
    EXIT_CORDON as i32
}

/// A command line `cordon run` could not parse (clap's `error`, one line) still leaves
/// the refusal report ([`refusal_report`]'s fields, `reason` the error) where the raw
/// arguments `raw` (without the program name) ask for one: on stderr for `--json`, on
/// descriptor N for `--json-fd N` (checked as for a run). Only arguments before `--` are
/// read, and only when the subcommand is `run`; `--report PATH` is not written (its
/// checks need the parsed profile). New-user pass 172: a harness reading `--json-fd` got
/// nothing for a misspelled flag.
pub fn usage_refusal_report(raw: &[std::ffi::OsString], error: &str) {
    let flags: Vec<&std::ffi::OsStr> = raw
        .iter()
        .map(std::ffi::OsString::as_os_str)
        .take_while(|a| *a != "--")
        .collect();
    let is_run = flags
        .iter()
        .find(|a| !a.as_encoded_bytes().starts_with(b"-"))
        .is_some_and(|a| *a == "run");
    if !is_run {
        return;
    }
    let v = refusal_value(error);
    if flags.iter().any(|a| *a == "--json") {
        eprintln!("{v}");
    }
    let fd = flags.iter().enumerate().find_map(|(i, a)| {
        let a = a.to_str()?;
        match a.strip_prefix("--json-fd") {
            Some("") => flags.get(i + 1)?.to_str()?.parse::<i32>().ok(),
            Some(rest) => rest.strip_prefix('=')?.parse::<i32>().ok(),
            None => None,
        }
    });
    #[cfg(target_os = "linux")]
    if let Some(n) = fd {
        match cordon_sandbox::linux::take_inherited_writer(n) {
            Ok(mut f) => {
                if let Err(e) = writeln!(f, "{v}").and_then(|_| f.flush()) {
                    eprintln!("cordon: the refusal report was not written: {e}");
                }
            }
            Err(_) => eprintln!(
                "cordon: the refusal report was not written: --json-fd {n} is not an open \
                 descriptor (3 or above) opened for writing"
            ),
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// The report of a run refused before it started, for `reason`: the fields a run's report
/// has, empty or null as for any run that never started (new-user pass 157, #8: a harness
/// reading a fixed schema found them missing).
fn refusal_value(reason: &str) -> serde_json::Value {
    serde_json::json!({
        "outcome": "refused",
        "exit_code": 125,
        "reason": reason,
        "launch": null,
        "server_sent_back": null,
        "run_id": null,
        "backend": null,
        "rung": null,
        "fell_back": null,
        "signal": null,
        "limit": null,
        "hint": null,
        "unconfined_reason": null,
        "applied": [],
        "planned": [],
        "layers": [],
        "notes": [],
        "denials": null,
    })
}

/// Opens a `--report PATH` for writing, after checking it against `roots` (R-H2, issue 8
/// §2); nothing is created when it is refused. With the profile known
/// ([`Roots::Resolved`]) it is refused when the profile lets the command write the file's
/// directory (it could replace the report afterwards), or when the path passes through a
/// symlink inside a writable root (an earlier run may have planted it to aim the report
/// at another file: breaker, stop 8). With nothing resolved ([`Roots::Unknown`]) every
/// symlink on the way is refused (F3: a refusal wrote through a planted directory link).
/// Either way the directory is opened with no symlink followed (`RESOLVE_NO_SYMLINKS`, so
/// a link swapped in since the check is an error) and the file with `O_NOFOLLOW`.
fn open_report(args: &RunArgs, path: &std::path::Path, roots: Roots<'_>) -> Result<std::fs::File> {
    // Protected for the run as a path of its profile, which JSON cannot carry: refused by
    // name, never created (attack pass 179, F4: "malformed sandbox payload", and the
    // refusal report written to it all the same).
    if path.to_str().is_none() {
        anyhow::bail!(
            "--report {}: the path is not UTF-8, which cordon cannot carry to the sandbox; \
             name a file whose path is UTF-8, or use --json-fd N",
            cordon_policy::paths::escaped(path.as_os_str().as_encoded_bytes())
        );
    }
    // Absolute but not normalised: a `..` after a symlink goes where the kernel takes it,
    // and the symlink itself is among the ancestors checked below.
    let abs = std::path::absolute(path)
        .with_context(|| format!("--report {}: not a usable path", path.display()))?;
    let (Some(parent), Some(name)) = (abs.parent(), abs.file_name()) else {
        anyhow::bail!("--report {}: not a file path", path.display());
    };
    let is_link = |a: &std::path::Path| std::fs::symlink_metadata(a).is_ok_and(|m| m.is_symlink());
    let dir = match roots {
        Roots::Resolved(trust) => {
            use cordon_policy::Access;
            let req = trust.command(args.command.clone());
            let resolved = cordon_policy::resolve(
                &req.profile,
                &req.resolve_context(),
                &cordon_sandbox::HostFs,
            )
            .map_err(|e| anyhow::anyhow!("--report {}: {e}", path.display()))?;
            let writable = |d: &std::path::Path| {
                resolved
                    .filesystem
                    .access_for(&cordon_sandbox::HostFs, d)
                    .access
                    == Access::Write
            };
            // Every symlink on the way whose own directory the command may write could
            // have been planted; one outside every writable root (e.g. a system link) is
            // followed.
            if let Some(a) = parent
                .ancestors()
                .find(|a| is_link(a) && a.parent().is_some_and(&writable))
            {
                anyhow::bail!(
                    "--report {}: the path passes through the symlink {}, which lies inside \
                     a writable root (an earlier command may have planted it); give the real \
                     path",
                    path.display(),
                    a.display()
                );
            }
            let dir = std::fs::canonicalize(parent).with_context(|| {
                format!(
                    "--report {}: its directory {} does not exist",
                    path.display(),
                    parent.display()
                )
            })?;
            if writable(&dir) {
                // The host's temp directory: the command sees a private one on the namespace
                // backend, but a run on Landlock alone, and other runs, write the host's
                // (new-user pass nu25, F3: "the command may write in that directory" was
                // wrong for `mktemp -d`, which explain shows hidden).
                // `/tmp` itself too (new-user pass nu31, F3: the report straight in `/tmp`
                // got the other reason).
                let private_tmp =
                    resolved.filesystem.top_view().private_tmp && dir.starts_with("/tmp");
                let why = if private_tmp
                    || resolved.filesystem.seen(&cordon_sandbox::HostFs, &dir)
                        == cordon_policy::Seen::PrivateTmp
                {
                    "it is in the host's temp directory, which sandboxed commands may write (this \
                     one sees a private /tmp, but a run on Landlock alone, or another run, writes \
                     the host's)"
                } else {
                    "the command may write in that directory"
                };
                anyhow::bail!(
                    "--report {}: {why}, so it could replace the report; put it outside every \
                     writable root (e.g. under your home or /var/tmp), or use --json-fd N with a \
                     pipe",
                    path.display()
                );
            }
            // Another run may write it too: inside any project, as for `--approvals-from`
            // (nu23 Q3: a concurrent run in that project replaced the report).
            if let Some(project) =
                crate::profile_args::project_holding(&dir.join(name), &resolved.workspace)
            {
                anyhow::bail!(
                    "--report {}: it lies in {}, where sandboxed runs may write it, so a \
                     command could replace the report; put it outside every project (e.g. in \
                     your home), or use --json-fd N with a pipe",
                    path.display(),
                    cordon_session::trust::place_phrase(&project, &resolved.workspace)
                );
            }
            dir
        }
        Roots::Unknown => {
            if let Some(a) = parent.ancestors().find(|a| is_link(a)) {
                anyhow::bail!(
                    "--report {}: the path passes through the symlink {}; the run was \
                     refused before its profile was resolved, so cordon cannot tell whether \
                     a command planted that link and follows none; give the real path",
                    path.display(),
                    a.display()
                );
            }
            parent.to_path_buf()
        }
    };
    #[cfg(target_os = "linux")]
    let f = cordon_sandbox::linux::create_report_file(&dir, name);
    #[cfg(not(target_os = "linux"))]
    let f = std::fs::File::create(dir.join(name));
    f.with_context(|| {
        format!(
            "--report {}: cannot create the file (no symlink is followed on its path)",
            path.display()
        )
    })
}

fn run_reported(args: &RunArgs, sink: &mut SinkState) -> Result<i32> {
    // A cwd no system call can name (longer than PATH_MAX) cannot be entered or resolved:
    // said first, naming the limit (L3b: "File name too long (os error 36)").
    let cwd = crate::profile_args::current_dir()?;
    if let Some(why) = cordon_policy::paths::too_long("working directory", &cwd) {
        anyhow::bail!(why);
    }
    // cordon's own report and answers files stay out of every widening (nu23 Q1) — a
    // regular file behind a descriptor (`--approvals-from fd:3 3<answers`, `--json-fd 3
    // 3>report.json`) too, by the path the kernel names for it (attack pass 45, M4).
    let fd_file = |n: i32| {
        let path = std::path::PathBuf::from(format!("/proc/self/fd/{n}"));
        std::fs::metadata(&path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|_| std::fs::read_link(&path).ok())
            .filter(|p| p.is_absolute())
    };
    let approvals_fd = args
        .approvals_from
        .as_deref()
        .and_then(|s| s.strip_prefix("fd:"))
        .and_then(|n| n.parse::<i32>().ok());
    let json_fd = match &*sink {
        SinkState::Open(Sink::Writer(f)) => {
            Some(std::os::fd::AsRawFd::as_raw_fd(f)).filter(|_| args.json_fd.is_some())
        }
        _ => None,
    };
    let sinks: Vec<std::path::PathBuf> = args
        .report
        .iter()
        .cloned()
        .chain(
            args.approvals_from
                .as_deref()
                .filter(|s| !s.starts_with("fd:") && *s != "-")
                .map(std::path::PathBuf::from),
        )
        .chain(approvals_fd.into_iter().chain(json_fd).filter_map(fd_file))
        .collect();
    let trust = crate::profile_args::trust_with_sinks(
        "run",
        &args.profile,
        &args.rules.rules,
        args.plan,
        sinks,
    )?;
    if let (Some(n), SinkState::Open(Sink::Writer(f))) = (args.json_fd, &*sink) {
        if let Some(w) = json_fd_file_warning(n, f, args, &trust) {
            eprintln!("cordon: warning: {w}");
        }
    }
    let r = run_trusted(args, &trust, sink);
    // A refusal after the profile was known opens the sink as a run would (a link outside
    // every writable root is followed); one it refuses is said after the refusal itself.
    if r.is_err() && matches!(sink, SinkState::Pending) {
        if let Err(e) = sink.open(args, Roots::Resolved(&trust)) {
            *sink = SinkState::Refused(Some(crate::cmd::error_text(&e)));
        }
    }
    r
}

/// The example `--json-fd`'s refusals and its warning give: a pipe (the report on stdout,
/// the command's own stdout dropped), which no command can replace. A file in the project
/// (`3>report.json`, the example before) drew the warning about a file the command may
/// write (hints finding 6).
pub const JSON_FD_EXAMPLE: &str = "`--json-fd 3 3>&1 >/dev/null | jq .`";

/// Why the `--json-fd N` descriptor `f`, when it is a regular file, is a report the command
/// (or a concurrent run) could replace under its name — in a directory the command may
/// write, or inside a project — or `None` (nu23 Q3: `--json-fd 3 -- make 3>report.json` in
/// the project). cordon writes to the file it was given either way; the name is what a
/// reader may find replaced. A pipe, a socket or a terminal is never warned about.
fn json_fd_file_warning(
    n: i32,
    f: &std::fs::File,
    args: &RunArgs,
    trust: &TrustProfile,
) -> Option<String> {
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    #[cfg(unix)]
    let fd = std::os::fd::AsRawFd::as_raw_fd(f);
    #[cfg(not(unix))]
    let fd = n;
    let path = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let dir = path.parent()?;
    let req = trust.command(args.command.clone());
    let resolved = cordon_policy::resolve(
        &req.profile,
        &req.resolve_context(),
        &cordon_sandbox::HostFs,
    )
    .ok()?;
    let writable = resolved
        .filesystem
        .access_for(&cordon_sandbox::HostFs, dir)
        .access
        == cordon_policy::Access::Write;
    let place = if writable && resolved.filesystem.top_view().private_tmp && dir.starts_with("/tmp")
    {
        // nu31 F3: this command sees a private /tmp; others may write the host's.
        "in the host's temp directory, which other sandboxed runs (and one on Landlock \
         alone) may write"
            .to_string()
    } else if writable {
        "in a directory the command may write".to_string()
    } else {
        let project = crate::profile_args::project_holding(&path, &resolved.workspace)?;
        format!(
            "inside the project {} where sandboxed runs may write",
            project.display()
        )
    };
    Some(format!(
        "--json-fd {n} is the file {}, {place}: the report goes to that file, but a command \
         can replace what the name holds; read the report from a pipe (e.g. \
         {JSON_FD_EXAMPLE}) or open a file outside every project",
        path.display()
    ))
}

fn run_trusted(args: &RunArgs, trust: &TrustProfile, sink: &mut SinkState) -> Result<i32> {
    let mode = ApprovalMode::from(args.approval_mode);
    if args.backend == Some(crate::cli::BackendArg::Seatbelt) {
        return print_seatbelt(&trust.command(args.command.clone()), args.profile.json);
    }
    // Before `--dry-run` too: it exits as the run would (attack pass 169, finding 3: a
    // refused `--rules` file was "would run", exit 0).
    crate::profile_args::profile_files_refusal(&args.profile, &args.rules.rules, Some(trust))?;
    // A grant spelled through a symlink is refused, not dropped (new-user pass 239 #2), by
    // the dry run as by the run; the other extras that do not hold are noted (one
    // resolution for both).
    let notes = trust
        .ungranted_extras_checked()
        .map_err(|why| anyhow::anyhow!("{why}"))?;
    for n in &notes {
        eprintln!("cordon: note: {n}");
    }
    if args.dry_run {
        return dry_run(args, trust, mode, &notes);
    }
    #[cfg(target_os = "linux")]
    cordon_sandbox::linux::server::set_use_server(!args.no_server);
    if args.plan
        && (!args.profile.writable.is_empty()
            || args.profile.allow_network
            || args.profile.with.is_some()
            || args
                .profile
                .network
                .is_some_and(|n| n.policy() != cordon_policy::NetworkPolicy::Restricted)
            || !args.profile.local_port.is_empty())
    {
        eprintln!(
            "cordon: note: --plan keeps the run read-only with the network off: -w, --with, \
             --allow-network, --network and --local-port do not apply to it"
        );
    }
    if let Some(spec) = &args.approvals_from {
        approvals_file_refusal(args, trust, spec)?;
    }
    let mut session = Session::for_cli(
        mode,
        args.approvals_from.as_deref(),
        args.yes,
        args.non_interactive,
        args.session.as_deref(),
    )
    .map_err(anyhow::Error::msg)?;
    // Opened last: a refusal before this point opens it in `run_reported`.
    sink.open(args, Roots::Resolved(trust))?;
    let spec = RunSpec {
        argv: args.command.clone(),
        preference: preference(args.sandbox),
        preference_is_default: args.sandbox == SandboxArg::Auto,
        allow_unconfined: args.allow_unconfined,
        timeout: args.timeout,
        allow_unsandboxed_retry: false,
        // stderr is captured for classification, except for a program started without
        // arguments at a terminal (`cordon run -- bash`, a REPL): it keeps the terminal, so
        // an interactive shell stays interactive.
        capture_stderr: sink.active()
            || !cordon_session::has_tty()
            || !cordon_session::interactive_start(&args.command),
        // With -v the helper prints what it really applied before the command starts.
        helper_verbose: tracing::enabled!(tracing::Level::DEBUG),
        // The person at the terminal types into it, not an agent.
        interactive: false,
        terminal: std::io::IsTerminal::is_terminal(&std::io::stdin()),
        stdin: cli_stdin(),
    };
    // The gitlinks the project's index records before the run, and when it started: a
    // gitlink the run added, or one whose repository it changed, is named after it
    // ([`workspace_gitlinks`]).
    let gitlinks_before = workspace_gitlinks(&trust.workspace, None).unwrap_or_default();
    let present_before = gitlinks_before.present();
    let started = std::time::SystemTime::now();
    let report = drive(&mut session, &SandboxManager::for_host(), trust, &spec);
    // The command's own output may have left the terminal concealing text (SGR 8, or the
    // foreground set to the background): cordon's lines after the run are shown in the
    // terminal's normal attributes (attack pass 39, C2).
    // With `--json` on stderr the reset is a line of its own, so the object's line holds
    // the object alone (nu23 Q7, nu22 P5: a program reading the terminal got escape bytes
    // before the `{`).
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let end = if matches!(sink, SinkState::Open(Sink::Stderr)) {
            "\n"
        } else {
            ""
        };
        eprint!("{}{end}", cordon_session::approver::TERMINAL_RESET);
    }
    print_tmpdir_note(&report);
    print_workspace_placeholders_note(&report);
    print_owner_note(&report);
    print_hints(&report);
    // What each attempt left in the writable git dirs for the host's git (attack28 F1/F4).
    let mut attempt = Some(&report);
    while let Some(a) = attempt {
        for w in a.git_dir_warnings() {
            eprintln!("{}", printable(&w));
        }
        attempt = a.retry.as_deref();
    }
    let created = created_repositories(&report, (&gitlinks_before, &present_before), started);
    for r in &created {
        eprintln!(
            "cordon: note: {}",
            created_repository_note(
                &printable(&cordon_policy::paths::escaped(
                    r.as_os_str().as_encoded_bytes()
                )),
                r
            )
        );
    }
    let code = report.last().outcome.exit_code;
    if let SinkState::Open(sink @ (Sink::Stderr | Sink::Writer(_) | Sink::Report(..))) = sink {
        // After the command ran a report that cannot be built is not a refusal (which the
        // error path would report): said, and 125 as for one that cannot be written.
        let mut v = match report_json(&report, &session) {
            Ok(v) => v,
            Err(e) => {
                let et = crate::cmd::error_text(&e);
                eprintln!(
                    "cordon: cannot build the report: {et}; exiting 125 (the command's own \
                     exit code was {code})"
                );
                return Ok(EXIT_CORDON as i32);
            }
        };
        // Paths the command chose: a name that is not UTF-8 is escaped (`json!` of the
        // path itself panicked: L2).
        v["created_repositories"] = serde_json::json!(created
            .iter()
            .map(|p| cordon_policy::paths::escaped(p.as_os_str().as_encoded_bytes()))
            .collect::<Vec<_>>());
        // What the list covers: the launch scan's bounds, said (new user, stop 19: an empty
        // list read as complete while a repository six levels down was not looked for).
        v["created_repositories_scope"] = serde_json::json!(format!(
            "{} levels, {} entries, not inside {}",
            cordon_policy::CREATED_SCAN_DEPTH,
            cordon_policy::NESTED_SCAN_CAP,
            cordon_policy::NESTED_SKIP.join(", ")
        ));
        // The command ran: a report that cannot be delivered is cordon failing at what it
        // was asked (125), not the command's exit code (F4: `7</etc/hostname` or
        // /dev/full exited 0) — a pipe whose reader went away included (`EPIPE`, not
        // death by `SIGPIPE`: nu18 F1).
        #[cfg(unix)]
        cordon_sandbox::ignore_sigpipe();
        if let Err(e) = sink.emit(&v) {
            eprintln!(
                "cordon: cannot write the report: {e}; exiting 125 (the command's own exit \
                 code was {code})"
            );
            return Ok(EXIT_CORDON as i32);
        }
    }
    Ok(code)
}

/// What the note about a `.git` the command made says, by what it is now (`lstat`: nothing
/// followed, nothing opened): a directory had its config and hooks written in the sandbox;
/// a `.git` file points git at a git directory elsewhere; anything else (a FIFO, a socket,
/// a symlink) is named as what it is (attack pass 186 F4: a `.git` file pointing at a
/// read-only repository and a FIFO were both said to hold written config and hooks).
fn created_repository_note(shown: &str, path: &std::path::Path) -> String {
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::symlink_metadata(path).map(|m| m.file_type());
    match kind {
        Ok(t) if t.is_dir() => format!(
            "the command made a git repository at {shown} (its config and hooks were written \
             inside the sandbox; git run there — or `git status` at the project root, if it \
             is added as a submodule — runs them on the host): review it before using git \
             there"
        ),
        Ok(t) if t.is_file() => format!(
            "the command made a .git file at {shown}: git run there (or `git status` at the \
             project root, if it is added as a submodule) uses the git directory it names, \
             with that directory's config and hooks: review it before using git there"
        ),
        Ok(t) if t.is_symlink() => format!(
            "the command made {shown}, a symlink: git run there takes what it leads to for \
             the repository, with its config and hooks: review it before using git there"
        ),
        Ok(t) => {
            let what = if t.is_fifo() {
                "a FIFO"
            } else if t.is_socket() {
                "a socket"
            } else {
                "a device"
            };
            format!(
                "the command made {shown}, {what}: git run there does not use it as a \
                 repository and may stop or fail on it; remove it before using git there"
            )
        }
        Err(_) => format!(
            "the command made a git repository at {shown} (gone again now): nothing to review"
        ),
    }
}

/// What the command will read on stdin — this process's: a terminal (the person types), the
/// empty text (`/dev/null`), or text known only at run time (a pipe, a file), which a shell
/// or interpreter reading its program there runs ([`TrustProfile::evaluate_with_stdin`]).
pub(crate) fn cli_stdin() -> cordon_session::StdinSource {
    use cordon_session::StdinSource;
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return StdinSource::Terminal;
    }
    // What descriptor 0 is (`/proc/self/fd/0` leads to it): `/dev/null` is char 1:3.
    let null = std::fs::metadata("/proc/self/fd/0").is_ok_and(|m| {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        m.file_type().is_char_device() && m.rdev() == libc::makedev(1, 3)
    });
    if null {
        StdinSource::Known(String::new())
    } else {
        StdinSource::Unknown
    }
}

/// The gitlinks the index of a workspace's `.git` directory records, as read at one moment
/// ([`cordon_policy::git_index::gitlinks`]).
#[derive(Debug, Default)]
struct IndexGitlinks {
    /// The workspace whose index was read.
    workspace: std::path::PathBuf,
    /// `WORKSPACE/PATH/.git` for each gitlink entry, whether or not anything is there.
    links: Vec<std::path::PathBuf>,
    /// The index file they were read from, when it held still while it was read and had
    /// not changed for [`INDEX_SETTLED`] before: the after-run look reuses `links` while
    /// the index is still this file ([`IndexStamp::still`]). None without an index, or when
    /// it may have been changing.
    stamp: Option<IndexStamp>,
}

/// Which file an index was and what state it was in: device, inode, size, and change time
/// (seconds, nanoseconds). A command cannot write, truncate, replace or rename over a file
/// without changing one of them (the change time is the kernel's to set, not the
/// caller's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IndexStamp {
    dev: u64,
    ino: u64,
    size: u64,
    ctime: (i64, i64),
}

/// Which entry a path named: device and inode, read without following it.
type EntryId = (u64, u64);

/// How long an index must have been unchanged before it is read for its stamp to be kept:
/// file change times advance in clock ticks (up to 10 ms apart), so a write in the tick of
/// the read would not show in them.
const INDEX_SETTLED: std::time::Duration = std::time::Duration::from_millis(50);

impl IndexStamp {
    fn of(m: &std::fs::Metadata) -> IndexStamp {
        use std::os::unix::fs::MetadataExt;
        IndexStamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// Whether the index at `index` is still this file, unchanged (read without following
    /// a symlink).
    fn still(&self, index: &std::path::Path) -> bool {
        std::fs::symlink_metadata(index).is_ok_and(|m| m.is_file() && IndexStamp::of(&m) == *self)
    }
}

impl IndexGitlinks {
    /// The links whose `.git` (any kind of entry) is there now, with which entry it is
    /// (device, inode; not followed).
    fn present(&self) -> Vec<(std::path::PathBuf, EntryId)> {
        use std::os::unix::fs::MetadataExt;
        self.links
            .iter()
            .filter_map(|d| {
                let m = beneath(&self.workspace, d)?;
                Some((d.clone(), (m.dev(), m.ino())))
            })
            .collect()
    }
}

/// `lstat` of `path`, a path below the workspace `ws` that a file the command could write
/// named (a gitlink of the index): reached from `ws` with no symlink followed and never
/// leaving it; `None` for a path not below `ws` (attack pass 212 #2: nothing outside the
/// workspace is looked at because an index said so).
fn beneath(ws: &std::path::Path, path: &std::path::Path) -> Option<std::fs::Metadata> {
    let rel = path.strip_prefix(ws).ok()?;
    cordon_sandbox::hostfs::symlink_metadata_beneath(ws, rel)
}

/// The gitlinks the index of the workspace's `.git` directory records; none without a
/// `.git` directory or an index. Host side, inside a writable root: the index is read only
/// as a regular file, not through a symlink, never blocking, at most 64 MiB.
///
/// `earlier`, a read of the same workspace before the run: its links are reused, not read
/// again, while the index is still the file they were read from, unchanged (issue 12: a
/// 80,000-file project's 6.4 MB index was read and parsed twice per run, 28% of it).
///
/// Errors: the index is there but is not a regular file, is too large, or does not parse.
fn workspace_gitlinks(
    ws: &std::path::Path,
    earlier: Option<&IndexGitlinks>,
) -> Result<IndexGitlinks, ()> {
    let git = ws.join(".git");
    if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
        return Ok(IndexGitlinks::default());
    }
    let index = git.join("index");
    if let Some(e) = earlier.filter(|e| e.workspace == ws) {
        if e.stamp.is_some_and(|s| s.still(&index)) {
            return Ok(IndexGitlinks {
                workspace: ws.to_path_buf(),
                links: e.links.clone(),
                stamp: e.stamp,
            });
        }
    }
    let reading = std::time::SystemTime::now();
    // Opened without following a link, and stamped by the descriptor the bytes came from
    // (not a path looked at before or after the read: another run may swap it meanwhile).
    let (bytes, read) = match cordon_sandbox::hostfs::read_small_pinned(&index, 64 << 20) {
        Ok(r) => r,
        Err(cordon_policy::paths::ReadRefusal::Missing) => return Ok(IndexGitlinks::default()),
        Err(_) => return Err(()),
    };
    let parsed = cordon_policy::git_index::parse(&bytes).map_err(|_| ())?;
    let mut links = parsed.gitlinks;
    // A split index keeps most entries in `.git/sharedindex.<name>`: its gitlinks count
    // too, and the index alone no longer stands for them (no stamp, so no reuse).
    let split = parsed.shared_index.is_some();
    if let Some(name) = parsed.shared_index {
        if !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(());
        }
        let shared = git.join(format!("sharedindex.{name}"));
        let (bytes, _) =
            cordon_sandbox::hostfs::read_small_pinned(&shared, 64 << 20).map_err(|_| ())?;
        let more = cordon_policy::git_index::parse(&bytes).map_err(|_| ())?;
        links.extend(more.gitlinks);
        links.sort();
        links.dedup();
    }
    let stamp = IndexStamp::of(&read);
    let settled = read
        .modified()
        .ok()
        .zip(std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(
            stamp.ctime.0.max(0) as u64,
            stamp.ctime.1.clamp(0, 999_999_999) as u32,
        )))
        .is_some_and(|(modified, changed)| modified.max(changed) + INDEX_SETTLED <= reading);
    Ok(IndexGitlinks {
        workspace: ws.to_path_buf(),
        links: links.into_iter().map(|p| ws.join(p).join(".git")).collect(),
        stamp: (settled && !split && stamp.still(&index)).then_some(stamp),
    })
}

/// The nested `.git` entries of the workspace that were not there when the run started
/// (breaker, stop 19): cordon protects the ones found at launch, but cannot stop a command
/// from making one (`git init x`, a `gitdir:` file, `git add x` as a gitlink), whose
/// configuration the host's next git then runs. Said after the run, from the same bounded
/// scan ([`cordon_policy::nested_git_entries`]); nothing when the workspace was not
/// writable or nothing ran sandboxed.
fn created_repositories(
    report: &Report,
    (gitlinks_before, present_before): (&IndexGitlinks, &[(std::path::PathBuf, EntryId)]),
    started: std::time::SystemTime,
) -> Vec<std::path::PathBuf> {
    let Some(r) = last_resolved(report) else {
        return Vec::new();
    };
    let cordon_policy::ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
        return Vec::new();
    };
    let ws = &r.workspace;
    let writable =
        r.filesystem.access_for(&cordon_sandbox::HostFs, ws).access == cordon_policy::Access::Write;
    if !writable {
        return Vec::new();
    }
    let before: Vec<&std::path::Path> = entries
        .iter()
        .filter(|e| {
            matches!(&e.origin, cordon_policy::EntryOrigin::Protected { reason }
                if reason == cordon_policy::NESTED_GIT_REASON)
        })
        .flat_map(|e| [e.path.as_path(), e.spelled.as_path()])
        .collect();
    let roots: Vec<std::path::PathBuf> = r
        .filesystem
        .writable_roots()
        .into_iter()
        .map(|e| e.path.clone())
        .collect();
    // Where this run's sweeps moved what they set aside.
    let moved_aside: Vec<&std::path::Path> =
        std::iter::successors(Some(report), |a| a.retry.as_deref())
            .flat_map(|a| &a.git_dirs)
            .flat_map(|s| &s.quarantined)
            .filter_map(|(_, to, _)| to.as_deref())
            .collect();
    // One memo for this scan only (taken after the run: what is there now).
    let fs = cordon_policy::paths::MemoFs::new(&cordon_sandbox::HostFs);
    let depth = cordon_policy::CREATED_SCAN_DEPTH;
    let mut scan = cordon_policy::nested_git_entries_within(&fs, ws, &roots, depth);
    // Below every other writable grant too (attack pass 44, L1: `-w ../fresh` and `git
    // init ../fresh/sub` made a repository nobody named); the private `/tmp` is discarded.
    let private_tmp = r.filesystem.top_view().private_tmp;
    for g in entries.iter().filter(|e| {
        e.access == cordon_policy::Access::Write
            && e.is_dir
            && matches!(e.origin, cordon_policy::EntryOrigin::Profile { .. })
            && e.path != *ws
            && !(private_tmp && e.path == std::path::Path::new("/tmp"))
    }) {
        let more = cordon_policy::nested_git_entries_within(&fs, &g.path, &roots, depth);
        scan.complete &= more.complete;
        scan.found.extend(more.found);
        scan.bare.extend(more.bare);
        scan.unlisted.extend(more.unlisted);
    }
    // A directory the look could not list (`chmod 000` by the command, a path past
    // PATH_MAX) hides what is below it: the look stopped short there too.
    scan.complete &= scan.unlisted.is_empty() && !scan.root_unlisted;
    // Every gitlink of the project's index whose directory holds a `.git`, wherever it
    // lies — the look does not enter package trees (attack pass 190 F10: a repository made
    // under `node_modules/` and added as a gitlink ran its config at the host's next `git
    // status`, unnamed). An index that cannot be read counts as the look stopping short.
    // Only those the run added, or whose repository it changed (a gitlink that was there
    // before, to an untouched repository, is not said again every run).
    // Changed: another entry than before at the path (made, replaced, moved in), its
    // config written, or — a `.git` file — the pointer itself rewritten. Not the `.git`
    // directory's own times: git run there (`git status` in the submodule) changes them
    // (attack pass 205 #3: every `git status` named each gitlink again).
    let changed = |d: &std::path::Path, id: EntryId| {
        let before = present_before.iter().find(|(p, _)| p == d).map(|(_, i)| *i);
        let since_start = |p: &std::path::Path| {
            beneath(ws, p).is_some_and(|m| {
                use std::os::unix::fs::MetadataExt;
                let ctime = std::time::UNIX_EPOCH
                    + std::time::Duration::new(m.ctime().max(0) as u64, m.ctime_nsec() as u32);
                ctime >= started
            })
        };
        before != Some(id)
            || since_start(&d.join("config"))
            || (beneath(ws, d).is_some_and(|m| m.is_file()) && since_start(d))
    };
    let mut index_unread = false;
    match workspace_gitlinks(ws, Some(gitlinks_before)) {
        Ok(links) => {
            for (dotgit, id) in links.present() {
                if changed(&dotgit, id) && !scan.found.contains(&dotgit) {
                    scan.found.push(dotgit);
                }
            }
        }
        Err(()) => {
            scan.complete = false;
            index_unread = true;
        }
    }
    // Said whatever the launch said: the index is the one place a gitlink outside the
    // look's reach is found (attack pass 205 #2: a replaced or corrupt index was silent).
    if index_unread {
        eprintln!(
            "cordon: note: after the run cordon could not read the index of {} (not a regular \
             file, too large, or not a git index): a repository the command added as a gitlink \
             is not named here; before using git there, look with `git status \
             --ignore-submodules=all`",
            ws.display()
        );
    }
    // Said when the run pushed the tree past the bounds (at launch it was within them;
    // otherwise the launch's own note, in `--json` and `cordon context`, says so already).
    let launch_incomplete = r
        .notes
        .iter()
        .any(|n| n.starts_with(&format!("{}: looked for nested repositories", ws.display())));
    if !scan.complete && !launch_incomplete {
        // Nothing may read as "no repository was made" when the look stopped short
        // (breaker, stop 21: 4,200 files hid a new repository and its gitlink).
        eprintln!(
            "cordon: note: after the run cordon looked for new git repositories in the first \
             {} entries and {} levels of {} only; one made beyond them is not named here: \
             before using git there, look with `git status --ignore-submodules=all` (a plain \
             `git status` recurses into a repository added as a gitlink and runs its \
             config)",
            cordon_policy::NESTED_SCAN_CAP,
            depth,
            ws.display()
        );
    }
    // A bare repository protected at launch has a protected `config` entry.
    let bare = scan.bare.into_iter().filter(|b| {
        let config = b.join("config");
        !entries
            .iter()
            .any(|e| e.path == config || e.spelled == config)
    });
    scan.found
        .into_iter()
        .chain(bare)
        .filter(|p| {
            // A linked worktree of the project's own repository (`git worktree add wt`)
            // made no config or hooks of its own (nu14: it was named as a repository).
            !cordon_policy::resolve::is_linked_worktree_of(&fs, &ws.join(".git"), p)
                && !before.contains(&p.as_path())
                // What cordon itself moved aside after the run (`.git.cordon-replaced`),
                // with its own warning: not said again as a repository the command made
                // (new-user pass 184 #1). By the places the sweep moved things to, not by
                // name: a command naming its repository `x.cordon-replaced` is still said.
                && !moved_aside.contains(&p.as_path())
                && !r
                    .notes
                    .iter()
                    .any(|n| n.starts_with(&format!("{}: ", p.display())))
        })
        .collect()
}

/// Checks a path given to `--approvals-from` (not an inherited `fd:N`): refused — exit 125,
/// nothing run — when the command may write the file or its directory, where it could
/// write its own answers (breaker: a FIFO in the workspace approved the command's host).
fn approvals_file_refusal(args: &RunArgs, trust: &TrustProfile, spec: &str) -> Result<()> {
    let is_fd = spec
        .strip_prefix("fd:")
        .unwrap_or(spec)
        .parse::<i32>()
        .is_ok()
        && !spec.contains('/');
    if is_fd {
        return Ok(());
    }
    let path = std::path::Path::new(spec);
    let req = trust.command(args.command.clone());
    let resolved = cordon_policy::resolve(
        &req.profile,
        &req.resolve_context(),
        &cordon_sandbox::HostFs,
    )
    .map_err(|e| anyhow::anyhow!("--approvals-from {spec}: {e}"))?;
    let real = std::fs::canonicalize(path)
        .with_context(|| format!("--approvals-from {spec}: cannot be opened"))?;
    let writable = |p: &std::path::Path| {
        resolved
            .filesystem
            .access_for(&cordon_sandbox::HostFs, p)
            .access
            == cordon_policy::Access::Write
    };
    // Another run may write it too: inside any project (breaker, stop 19: only this run's
    // view was checked).
    if let Some(project) = crate::profile_args::project_holding(&real, &resolved.workspace) {
        anyhow::bail!(
            "--approvals-from {spec}: it lies in {}, where sandboxed runs may write it, so a \
             command could answer its own questions; put the answers outside every project \
             (e.g. in your home), or pass a descriptor (--approvals-from fd:N)",
            cordon_session::trust::place_phrase(&project, &resolved.workspace)
        );
    }
    if writable(&real) || real.parent().is_some_and(writable) {
        // The host's /tmp: this command sees a private one on the namespace backend, but the
        // Landlock-only fallback (no user namespaces) and other runs write the host's.
        let why = if resolved.filesystem.seen(&cordon_sandbox::HostFs, &real)
            == cordon_policy::Seen::PrivateTmp
        {
            "it is in the host's temp directory, which sandboxed commands may write (a run \
             that falls back to Landlock alone has the host's /tmp writable)"
        } else {
            "the command may write it"
        };
        anyhow::bail!(
            "--approvals-from {spec}: {why} ({}), so a command could answer its own \
             questions; put the answers outside every writable root (e.g. in your home), or \
             pass a descriptor (--approvals-from fd:N)",
            real.display()
        );
    }
    // The file is opened again by name when the questions come: a symlink on the way that
    // a command may replace (it lies in a writable directory) would let a concurrent run
    // answer (breaker, stop 18; `--report` refuses the same).
    let cwd = crate::profile_args::current_dir()?;
    let lexical = cordon_policy::paths::lexical_normalize(path, &cwd);
    for a in lexical.ancestors() {
        let is_link = std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_symlink());
        if is_link && a.parent().is_some_and(writable) {
            anyhow::bail!(
                "--approvals-from {spec}: it passes through the symlink {}, which lies in a \
                 directory the command may write (a run could replace it and answer its own \
                 questions); name the file by its real path {}, or pass a descriptor \
                 (--approvals-from fd:N)",
                a.display(),
                real.display()
            );
        }
    }
    Ok(())
}

/// The exec's status triple with `sandbox_enabled` taken from what the Linux helper
/// reported: `NotRun` → false with its reason; no report at all → false (nothing confirmed
/// it). Other backends keep the planned value.
fn enforced_status(
    exec: &cordon_sandbox::ExecRequest,
    helper: Option<&cordon_sandbox::HelperReport>,
) -> cordon_policy::SandboxStatus {
    let mut s = exec.status.clone();
    if !s.sandbox_enabled.value || exec.backend != cordon_policy::Backend::LinuxHelper {
        return s;
    }
    match helper {
        Some(cordon_sandbox::linux::HelperOutcome::Applied(_)) => {}
        Some(cordon_sandbox::linux::HelperOutcome::NotRun { reason }) => {
            s.sandbox_enabled =
                cordon_policy::Fact::new(false, format!("the helper did not run it: {reason}"));
        }
        None => {
            s.sandbox_enabled = cordon_policy::Fact::new(
                false,
                "the helper reported nothing (it ended before it could)",
            );
        }
    }
    s
}

/// The first run in a directory with no project marker makes its `.git` and `.cordon`
/// placeholders there: said once, when they were missing before the run (the resolved
/// entries' `exists`) and are there now (new-user pass 187 #1: `.git` and `.cordon`
/// appeared in a plain directory without a word, while a `-w` grant's were said).
fn print_workspace_placeholders_note(report: &Report) {
    let Some(r) = last_resolved(report) else {
        return;
    };
    let cordon_policy::ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
        return;
    };
    let made: Vec<&str> = [".git", ".cordon"]
        .into_iter()
        .filter(|name| {
            let path = r.workspace.join(name);
            entries.iter().any(|e| {
                e.path == path
                    && !e.exists
                    && matches!(e.origin, cordon_policy::EntryOrigin::Protected { .. })
            }) && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
        })
        .collect();
    if !made.is_empty() {
        eprintln!(
            "cordon: note: made empty {} in {} (no project marker here): read-only \
             placeholders that keep a command from making a repository or cordon project \
             there; they stay, and git ignores them (README: placeholders)",
            made.join(" and "),
            printable(&r.workspace.display().to_string())
        );
    }
}

/// The profile the last attempt was resolved to (none when it was refused before).
fn last_resolved(report: &Report) -> Option<&cordon_policy::ResolvedProfile> {
    report.last().exec.as_ref()?.resolved.as_ref()
}

/// A failed run as root in a workspace another user owns: said with what to do
/// ([`super::owner_note`]).
fn print_owner_note(report: &Report) {
    if report.last().outcome.exit_code == 0 {
        return;
    }
    let Some(r) = last_resolved(report) else {
        return;
    };
    if let Some(note) = super::owner_note(&r.workspace) {
        eprintln!("cordon: note: {}", printable(&note));
    }
}

/// A `$TMPDIR` the guard did not make writable changes what the command saw (its `TMPDIR`
/// became `/tmp`): said on stderr, not only in `--json` (breaker LOW-2: a user whose
/// `TMPDIR=/dev/shm/x` was silently replaced had no way to know).
fn print_tmpdir_note(report: &Report) {
    let resolved = last_resolved(report);
    if let Some(r) = resolved.filter(|r| r.tmpdir_refused.is_some()) {
        for n in r.notes.iter().filter(|n| n.starts_with("$TMPDIR")) {
            eprintln!("cordon: note: {}", printable(n));
        }
    }
    // A nested-repository scan stopped by its bound leaves repositories beyond it writable:
    // said on every run, not only in `context` (breaker, stop 19).
    for n in resolved
        .iter()
        .flat_map(|r| &r.notes)
        .filter(|n| n.contains("looked for nested repositories"))
    {
        eprintln!("cordon: warning: {}", printable(n));
    }
    // A write entry dropped because it goes through a link an earlier run could have
    // planted, whatever named it (a config file's entry too: attack pass 169, finding 4, it
    // was said by `explain` only).
    for n in resolved
        .iter()
        .flat_map(|r| &r.notes)
        .filter(|n| n.contains(cordon_policy::resolve::PLANTED_LINK_PLACE))
    {
        eprintln!("cordon: note: {}", printable(n));
    }
    // A deny spelled through a link inside a writable root hides whatever the link names
    // now (attack pass 181, F5: a run could re-point it, and only `explain` said so).
    for n in resolved
        .iter()
        .flat_map(|r| &r.notes)
        .filter(|n| n.starts_with("deny-read entry") && n.contains("goes through a symlink"))
    {
        eprintln!("cordon: warning: {}", printable(n));
    }
    // A home hidden by the private /tmp is said before the command runs (drive).
}

/// The refusal reason of each attempt, and the hint after the last attempt's denial (in
/// plan mode the report's hint already says the run is read-only by design:
/// `cordon_session::drive::PLAN_HINT`).
fn print_hints(report: &Report) {
    let mut r = Some(report);
    while let Some(a) = r {
        let o = &a.outcome;
        if let cordon_session::OutcomeClass::Refused { why } = &o.class {
            // A refusal the helper reported has already been printed by the helper itself
            // on the same stderr: once is enough.
            let from_helper = o
                .evidence
                .iter()
                .any(|e| e.source == cordon_session::EvidenceSource::Helper);
            if !from_helper {
                eprintln!("cordon: {}", printable(why));
            }
        } else if let (Some(h), None) = (&o.hint, &a.retry) {
            // Only the last attempt's hint: after a retry that worked, the first attempt's
            // denial is history (it stays in --json), not advice.
            let helper_limit =
                matches!(o.class, cordon_session::OutcomeClass::LimitExceeded { .. })
                    && o.evidence
                        .iter()
                        .any(|e| e.detail.starts_with(cordon_session::outcome::LIMIT_HIT));
            if (o.class == cordon_session::OutcomeClass::Success
                && h.starts_with(cordon_session::drive::GIT_CONFIG_NOT_KEPT))
                || helper_limit
            {
                // The helper printed these notes (or the limit's line) in full already.
            } else if o.class == cordon_session::OutcomeClass::Success {
                // Advice after a command that worked (`cargo init` met the placeholder).
                eprintln!("cordon: note: {}", printable(h));
            } else {
                eprintln!("cordon: {}: {}", o.class.name(), printable(h));
            }
        }
        r = a.retry.as_deref();
    }
    print_proxy_blocks(report.last());
    print_connect_failures(report.last());
}

/// Each connection cordon's proxy could not carry through in the last attempt, once per
/// target, on stderr: a `network.local` port nothing listens on (inside, the connection
/// was accepted and then closed, so the program saw an EOF — new-user pass: `--local-port
/// 127.0.0.1:5999` with no server said nothing), or an allowed or approved host that did
/// not resolve or connect (the program saw a bare `502` — nu9: "did cordon block it?").
fn print_connect_failures(a: &Report) {
    let mut seen: Vec<&str> = Vec::new();
    // The first is the outcome's hint when the command failed (printed already).
    let hinted = a.outcome.hint.as_deref().unwrap_or("");
    for f in &a.connect_failures {
        if seen.contains(&f.target.as_str()) || hinted.contains(&*printable(&f.target)) {
            continue;
        }
        seen.push(&f.target);
        let what = if f.via == "network.local" {
            format!(
                "network.local {}: the host side could not be reached ({}); the command's \
                 connection was closed — is the service running on the host?",
                f.target,
                printable(&f.error)
            )
        } else {
            format!(
                "cordon's proxy allowed {} but could not reach it ({}): the command got a \
                 502 or a failed tunnel, not a refusal",
                printable(&f.target),
                printable(&f.error)
            )
        };
        eprintln!("cordon: note: {what} (--json: connect_failures)");
    }
}

/// Every connection cordon's proxy refused in the last attempt, on stderr, when the
/// outcome's own hint does not already name it (nu7: a command that shrugs off a 403 —
/// `curl` without `-f`, pip falling back — ended `success` with nothing said, and of
/// several refusals only the last was named). At most 5, then how many more.
fn print_proxy_blocks(a: &Report) {
    let named = match &a.outcome.class {
        cordon_session::OutcomeClass::NetworkDenied { host, .. } => host.clone(),
        _ => None,
    };
    let mut seen: Vec<String> = Vec::new();
    for d in &a.network_denied {
        let one = format!("{}:{} ({})", d.host, d.port, d.rule);
        if Some(&d.host) != named.as_ref() && !seen.contains(&one) {
            seen.push(one);
        }
    }
    if seen.is_empty() {
        return;
    }
    let more = seen.len().saturating_sub(5);
    seen.truncate(5);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    eprintln!(
        "cordon: note: cordon's proxy {}blocked {}{tail} (--json: network_denied)",
        if named.is_some() { "also " } else { "" },
        printable(&seen.join(", "))
    );
}

/// The JSON report: the loop's report (approval, outcome of every attempt, escalation,
/// recorded decisions) with the last attempt's outcome and what its helper really applied
/// at the top level.
fn report_json(report: &Report, session: &Session) -> Result<serde_json::Value> {
    let last = report.last();
    let mut v = serde_json::to_value(report)?;
    let exec = last.exec.as_ref();
    let facts = HelperFacts::of(last.helper.as_ref())?;
    // What was applied is what the helper reports it did (R-S5); the plan is only the
    // prediction. Without a helper (backend none) cordon itself applied the scrubbing.
    let applied = json!(last.applied());
    let r = facts.report.as_ref();
    v["exit_code"] = json!(last.outcome.exit_code);
    // How the sandbox helper was started: "server" (forked by `cordon serve`) or "cold"
    // (executed here); null when no helper ran. (Not "path": that key is the denied path
    // of a sandbox-denied outcome.)
    #[cfg(target_os = "linux")]
    {
        // The process-wide record is this attempt's only when this attempt ran the helper
        // (review: an unsandboxed retry still showed the first attempt's path).
        let helper_ran = exec.is_some_and(|e| e.backend == cordon_policy::Backend::LinuxHelper);
        v["launch"] = json!(cordon_sandbox::linux::server::last_path().filter(|_| helper_ran));
        // A running server that sent the command back to the cold path, and why (a
        // template cannot run it): null otherwise.
        v["server_sent_back"] = json!(cordon_sandbox::linux::server::last_sent_back()
            .filter(|_| helper_ran && v["launch"] == "cold"));
    }
    // What the run left in the writable git dirs (removed entries that lead out of them,
    // in-progress state that runs code): always present, empty when nothing was found.
    v["git_dirs"] = json!(last.git_dirs);
    v["signal"] = json!(last.outcome.signal);
    v["backend"] = json!(exec.map(|e| e.backend));
    v["applied"] = applied;
    v["rung"] = json!(r.map(|h| h["rung"].clone()));
    v["layers"] = json!(r.map(|h| h["layers"].clone()));
    v["notes"] = json!(r.map(|h| h["notes"].clone()));
    v["fell_back"] = json!(r.and_then(|h| h.get("fell_back").cloned()));
    // Kernel-side denial records (issue 9 §5): null when this run had no supervisor.
    v["denials"] = json!(r.and_then(|h| h.get("denials").cloned()));
    // What happened to `.git/config` after the run (issue 11 §3): keys merged, keys
    // refused with the command to run outside cordon, a left `config.lock` removed; every
    // `cordon: note:` line about it. [] when no copy was edited.
    v["git_config"] = r
        .and_then(|h| h.get("git_config").cloned())
        .unwrap_or_else(|| json!([]));
    // attack25 A5: why the helper stopped the run — the host replaced a path the sandbox
    // covered (hidden, credential-stripped or protected); null when it did not.
    v["cover_lost"] = json!(r.and_then(|h| h.get("cover_lost").cloned()));
    // The helper's own peak resident set (KiB, getrusage): what cordon's supervising
    // process held, not the command's memory; null when the helper did not say.
    v["helper_peak_rss_kib"] = json!(r.and_then(|h| h.get("helper_peak_rss_kib").cloned()));
    // What resolution could not honour (a missing deny path, a refused $TMPDIR, a
    // planted special file it did not read): the notes explain and context show.
    v["resolution_notes"] = json!(exec.and_then(|e| e.resolved.as_ref()).map(|r| &r.notes));
    v["planned"] = json!(exec.map(|e| &e.planned));
    v["env_dropped"] = json!(exec.map(|e| &e.env_dropped));
    // The status triple as enforced: `enabled` is the helper's answer when it gave one (a
    // helper that did not run the command, or never reported, did not enable anything).
    v["status"] = json!(exec.map(|e| enforced_status(e, last.helper.as_ref())));
    v["unconfined_reason"] = json!(exec.and_then(|e| e.unconfined_reason.as_ref()));
    v["outcome_detail"] = serde_json::to_value(&report.outcome)?;
    v["decisions"] = serde_json::to_value(session.scope.log())?;
    // The outcome fields (`outcome`, `path`, `hint`, …) of the last attempt at the top
    // level; every attempt's own outcome stays under `outcome_detail` / `retry`.
    if let serde_json::Value::Object(m) = serde_json::to_value(&last.outcome)? {
        for (k, x) in m {
            v[k] = x;
        }
    }
    // R-H5: which limit ended the run (told by the helper on its own pipe).
    v["limit"] = match &last.outcome.class {
        cordon_session::OutcomeClass::LimitExceeded { which } => json!(which),
        _ => serde_json::Value::Null,
    };
    // Why the run did not run, or was stopped by cordon (a cover lost: `cancelled`).
    v["reason"] = match &last.outcome.class {
        cordon_session::OutcomeClass::Refused { why } => json!(why),
        _ if !v["cover_lost"].is_null() => v["cover_lost"].clone(),
        _ => json!(facts.not_run),
    };
    // Every field the README lists is there, null when it does not apply (new-user pass
    // 146: `escalation` and `retry` were missing from a run that needed neither).
    for key in ["escalation", "retry"] {
        if v.get(key).is_none() {
            v[key] = serde_json::Value::Null;
        }
    }
    Ok(v)
}

/// `--dry-run`: what would run, nothing executed, nobody asked (`--yes` counts as the
/// answer). It probes as `cordon status` does, so its verdict matches the run's.
/// `notes`: the extras that do not hold ([`TrustProfile::ungranted_extras_checked`], said
/// on stderr already).
fn dry_run(
    args: &RunArgs,
    trust: &TrustProfile,
    mode: ApprovalMode,
    notes: &[String],
) -> Result<i32> {
    let json = args.profile.json;
    // The request the run would build (`cordon_session::drive::prepare`), its git editor
    // for a command without a terminal included.
    let mut req = cordon_session::drive::command_request(
        trust,
        args.command.clone(),
        std::io::IsTerminal::is_terminal(&std::io::stdin()),
    );
    let record = trust.evaluate_with_stdin(&req, &cli_stdin());
    // As the run would choose its approver (`cordon_session::choose_approver`): scripted
    // answers first, then `--yes`, then a person at the terminal; an ask is refused only
    // where none of them is there (new-user pass 150: at a terminal the dry run said "no
    // one can be asked" while the run asked).
    let gate = gate(&record, mode, args.yes && args.approvals_from.is_none());
    let asker = match &args.approvals_from {
        Some(spec) => Some(format!("the answers in {spec}")),
        None if !args.non_interactive && cordon_session::has_tty() => {
            Some("at this terminal".to_string())
        }
        None => None,
    };
    let gate = match gate {
        Gate::Ask { reason } if asker.is_some() => Gate::Ask { reason },
        g => g.nobody_to_ask(&record),
    };
    req.preference = preference(args.sandbox);
    if record.sandbox.bypass && req.preference == SandboxPreference::Auto {
        req.preference = SandboxPreference::Forbid;
    }
    req.allow_unconfined = args.allow_unconfined;
    let transformed = SandboxManager::for_host_thorough().transform(&req);
    // What the run refuses whatever anyone answers (`git worktree remove`, plan mode
    // unconfined), as the run decides it (attack pass 238 #2: "would run", then 125).
    let gate =
        match cordon_session::drive::refusal_before_run(&transformed, &record, trust.layers.plan) {
            Some(reason) if transformed.is_ok() => Gate::Refuse { reason },
            _ => gate,
        };
    let exec = match transformed {
        Ok(e) => e,
        Err(e) => {
            eprintln!("cordon: {e}");
            return Ok(EXIT_CORDON as i32);
        }
    };
    print_dry_run(
        &exec,
        trust.additional.as_ref(),
        notes,
        &gate,
        asker.as_deref(),
        json,
    )?;
    // A program that is not there would end the run with 127: said now (new user, stop 18:
    // "would run" for a typo).
    if let Some(p) = args.command.first() {
        if let Some(problem) = program_problem(p, &trust.cwd) {
            eprintln!("{}", problem.note(p));
        }
    }
    // The exit status says whether the command would run (0), be asked about (1, as
    // `cordon check`'s "needs approval") or be refused (125).
    Ok(match gate {
        Gate::Run { .. } => 0,
        Gate::Ask { .. } => 1,
        Gate::Refuse { .. } => EXIT_CORDON as i32,
    })
}

/// Why `program` cannot be started, as `cordon run` would look for it (as a path relative
/// to `cwd` when it holds a `/`, else in each directory of `$PATH`): `None` when it names
/// an executable file. The exit status the run would end with is the note's: 127 when
/// nothing is there, 126 when what is there is a directory or not executable (new-user
/// pass nu62: `check` predicted 127 where the run gave 126).
pub(crate) fn program_problem(program: &str, cwd: &std::path::Path) -> Option<ProgramProblem> {
    use std::os::unix::fs::PermissionsExt;
    let look = |p: &std::path::Path| match std::fs::metadata(p) {
        Err(_) => None,
        Ok(m) if m.is_dir() => Some(Err("is a directory")),
        Ok(m) if !m.is_file() || m.permissions().mode() & 0o111 == 0 => {
            Some(Err("is not executable"))
        }
        Ok(_) => Some(Ok(())),
    };
    let found: Vec<Result<(), &'static str>> = if program.contains('/') {
        look(&cwd.join(program)).into_iter().collect()
    } else {
        std::env::var_os("PATH")
            .map(|path| {
                std::env::split_paths(&path)
                    .filter_map(|d| look(&cwd.join(d).join(program)))
                    .collect()
            })
            .unwrap_or_default()
    };
    if found.iter().any(Result::is_ok) {
        return None;
    }
    Some(match found.into_iter().find_map(Result::err) {
        Some(why) => ProgramProblem {
            why: why.to_string(),
            exit_code: 126,
        },
        None => ProgramProblem {
            why: format!(
                "is not found{}",
                if program.contains('/') {
                    ""
                } else {
                    " on PATH"
                }
            ),
            exit_code: 127,
        },
    })
}

/// Why a program cannot be started ([`program_problem`]) and the exit status that gives.
pub(crate) struct ProgramProblem {
    /// `is not found on PATH`, `is a directory`, `is not executable`.
    pub(crate) why: String,
    /// 126 (cannot execute) or 127 (not found).
    pub(crate) exit_code: i32,
}

impl ProgramProblem {
    /// The note `run --dry-run` and `check` print on stderr.
    pub(crate) fn note(&self, program: &str) -> String {
        format!(
            "cordon: note: {program} {}: the run would exit {}",
            self.why, self.exit_code
        )
    }
}

/// What the helper said on its report descriptor, in the shapes the JSON report needs.
struct HelperFacts {
    /// The typed report (`rung`, `layers`, `notes`, `fell_back`).
    report: Option<serde_json::Value>,
    /// Why nothing ran, as the helper printed it.
    not_run: Option<String>,
}

impl HelperFacts {
    fn of(r: Option<&cordon_sandbox::HelperReport>) -> Result<HelperFacts> {
        #[cfg(target_os = "linux")]
        {
            use cordon_sandbox::linux::HelperOutcome;
            Ok(match r {
                Some(HelperOutcome::Applied(a)) => HelperFacts {
                    report: Some(serde_json::to_value(a)?),
                    not_run: None,
                },
                Some(HelperOutcome::NotRun { reason }) => HelperFacts {
                    report: None,
                    not_run: Some(reason.clone()),
                },
                None => HelperFacts {
                    report: None,
                    not_run: None,
                },
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = r;
            Ok(HelperFacts {
                report: None,
                not_run: None,
            })
        }
    }
}

/// The dry-run view of a resolved profile: profile name, cwd, workspace, network, notes, and
/// per filesystem entry its path, access, whether it exists and who set it.
fn compact_resolved(r: &serde_json::Value) -> serde_json::Value {
    let fs = &r["filesystem"];
    let filesystem = match fs.get("entries").and_then(|e| e.as_array()) {
        Some(entries) => json!({
            "default": fs["default"],
            "entries": entries.iter().map(|e| json!({
                "path": e["path"],
                "access": e["access"],
                "exists": e["exists"],
                "source": e["origin"].get("source").or(e["origin"].get("reason"))
                    .cloned().unwrap_or_else(|| e["origin"]["kind"].clone()),
            })).collect::<Vec<_>>(),
        }),
        None => fs.clone(),
    };
    json!({
        "profile": r["profile"]["name"],
        "cwd": r["cwd"],
        "workspace": r["workspace"],
        "network": r["profile"]["network"],
        "filesystem": filesystem,
        "notes": r["notes"],
    })
}

/// `--dry-run`: the ExecRequest as text or JSON, nothing executed (R-T5).
///
/// `overlay` is what the command line asked for (R-O1); `not_granted` says which of it the
/// resolution left out ([`TrustProfile::ungranted_extras`]): in `--json` as
/// `additional_permissions_not_granted`, so a harness does not read a dropped grant as
/// given (new-user pass 185, #2: a `-w` through a planted link was listed as "merged").
fn print_dry_run(
    exec: &cordon_sandbox::ExecRequest,
    overlay: Option<&cordon_policy::AdditionalPermissions>,
    not_granted: &[String],
    gate: &Gate,
    asker: Option<&str>,
    json: bool,
) -> Result<()> {
    // What the command gets: the helper's environment for its payload (the variables it
    // adds: TMPDIR, private caches, offline knobs, the proxy's), else the request's own.
    #[cfg(target_os = "linux")]
    let env = exec
        .payload
        .as_deref()
        .and_then(cordon_sandbox::linux::command_env)
        .unwrap_or_else(|| exec.env.clone());
    #[cfg(not(target_os = "linux"))]
    let env = exec.env.clone();
    if json {
        let mut v = serde_json::to_value(exec)?;
        v["additional_permissions"] = serde_json::to_value(overlay)?;
        v["additional_permissions_not_granted"] = json!(not_granted);
        v["approval"] = serde_json::to_value(gate)?;
        // Values of the environment stay out of the report; names are enough to review.
        v["env"] = json!(env.iter().map(|(k, _)| k).collect::<Vec<_>>());
        // The payload itself (a memfd handed to the helper) is not shown: it is the
        // resolved profile plus the environment values, which stay out of reports. The
        // resolved profile is shown compactly (one small object per entry), so the
        // output stays a few KiB however many built-in entries there are.
        if let Some(r) = v.get_mut("resolved").filter(|r| r.is_object()) {
            *r = compact_resolved(r);
        }
        v["mount_plan"] = serde_json::to_value(mount_plan(exec))?;
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    match gate {
        Gate::Run { reason } => println!("approval: would run ({reason})"),
        Gate::Ask { reason } => println!(
            "approval: would ask ({}): {reason}",
            asker.unwrap_or("someone")
        ),
        Gate::Refuse { reason } => println!("approval: would REFUSE: {reason}"),
    }
    println!("backend:  {}", exec.backend);
    println!("program:  {}", exec.program);
    let shown: Vec<String> = exec
        .args
        .iter()
        .map(|a| {
            if a.len() > 80 {
                format!("<{} bytes>", a.len())
            } else {
                a.clone()
            }
        })
        .collect();
    println!("args:     {}", shown.join(" "));
    println!("cwd:      {}", exec.cwd.display());
    println!(
        "env:      {} variables passed, dropped as secrets: {}",
        env.len(),
        if exec.env_dropped.is_empty() {
            "none".to_string()
        } else {
            exec.env_dropped.join(", ")
        }
    );
    for (name, f) in [
        ("requested", &exec.status.sandbox_requested),
        ("available", &exec.status.sandbox_available),
        ("enabled", &exec.status.sandbox_enabled),
    ] {
        println!("sandbox_{name:<10} {:<5} {}", f.value, f.reason);
    }
    if let Some(r) = &exec.unconfined_reason {
        println!("UNCONFINED: {r}");
    }
    if let Some(o) = overlay {
        println!(
            "additional permissions (asked for, R-O1): {}",
            serde_json::to_string(o)?
        );
        for n in not_granted {
            println!("  not granted: {}", printable(n));
        }
    }
    println!("would apply:");
    for a in &exec.planned {
        println!("  - {a}");
    }
    #[cfg(target_os = "linux")]
    if let Some(plan) = mount_plan(exec) {
        println!("mount plan:");
        for (i, s) in plan.steps.iter().enumerate() {
            println!("  {:>2}. {s}", i + 1);
        }
        for n in &plan.notes {
            println!("  note: {n}");
        }
    }
    if let Some(r) = &exec.resolved {
        if let cordon_policy::ResolvedFilesystem::Restricted { .. } = &r.filesystem {
            println!("writable roots:");
            for e in r.filesystem.writable_roots() {
                // The helper replaces /tmp with its own tmpfs: say so, or a reader expects
                // the host's /tmp (and its files) to be there.
                if e.path == std::path::Path::new("/tmp")
                    && exec.backend == cordon_policy::Backend::LinuxHelper
                {
                    println!(
                        "  /tmp (private: an empty tmpfs for this run, discarded afterwards; \
                         the host's /tmp is not visible)"
                    );
                } else {
                    println!("  {}", e.path.display());
                }
            }
        }
    }
    Ok(())
}

/// `--dry-run --backend seatbelt`: the SBPL policy and its `-D` parameters for this
/// command, on any host (for review, the lint and bug reports). The text output is itself
/// SBPL (the header is comments), so it can be saved and run with `sandbox-exec -f`.
fn print_seatbelt(req: &cordon_sandbox::CommandRequest, json: bool) -> Result<i32> {
    use cordon_sandbox::seatbelt;
    let resolved = cordon_policy::resolve(
        &req.profile,
        &req.resolve_context(),
        &cordon_sandbox::HostFs,
    )?;
    let policy = seatbelt::policy(&resolved);
    let (program, args) = seatbelt::wrap(&resolved, &req.argv);
    if json {
        let params: serde_json::Map<String, serde_json::Value> = policy
            .params
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "backend": "seatbelt", "program": program, "args": args,
                "policy": policy.text, "params": params,
            }))?
        );
        return Ok(0);
    }
    println!("; cordon seatbelt policy for: {}", req.argv.join(" "));
    println!("; run as: {program} -p <this policy> -D KEY=VALUE… -- <command>");
    println!("; parameters (-D):");
    for (k, v) in &policy.params {
        println!(";   {k}={v}");
    }
    print!("{}", policy.text);
    Ok(0)
}

/// The mount plan the Linux helper applies on rung 1 (namespaces), computed from the same
/// resolved profile it receives (issue 13 §1); `None` for other backends and rungs.
#[cfg(target_os = "linux")]
fn mount_plan(exec: &cordon_sandbox::ExecRequest) -> Option<cordon_sandbox::linux::Layout> {
    let r = exec.resolved.as_ref()?;
    let rung1 = exec.backend == cordon_policy::Backend::LinuxHelper
        && exec
            .planned
            .iter()
            .any(|a| !a.starts_with("note: ") && a.contains("namespaces"));
    rung1.then(|| {
        let mut l = cordon_sandbox::linux::layout_for(r);
        // The same tmpfs size= the helper sets (R-H5).
        if let Ok(lim) = cordon_sandbox::linux::limits::resolve(r) {
            cordon_sandbox::linux::limits::size_tmpfs(&mut l, lim.tmpfs_bytes);
        }
        l
    })
}

#[cfg(not(target_os = "linux"))]
fn mount_plan(_exec: &cordon_sandbox::ExecRequest) -> Option<()> {
    None
}

#[cfg(test)]
mod tests {
    use cordon_session::interactive_start;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    /// New-user pass nu18 F13: a shell or REPL given options only keeps the terminal on
    /// stderr (so it stays interactive); code on the command line, a script, or any other
    /// program with arguments has its stderr read for classification.
    #[test]
    fn shells_and_repls_with_options_only_are_interactive() {
        for yes in [
            "bash",
            "bash --norc",
            "bash -l",
            "/bin/zsh -i",
            "python3 -q",
            "python3.12 -i",
            "node --no-warnings",
            "cargo",
        ] {
            assert!(interactive_start(&argv(yes)), "{yes}");
        }
        for no in [
            "bash -c true",
            "bash -lc true",
            "bash script.sh",
            "python3 -m pytest",
            "python3 -c 1",
            "node -e 1",
            "node --eval=1",
            "bash -",
            "ls -la",
            "make -j4",
        ] {
            assert!(!interactive_start(&argv(no)), "{no}");
        }
    }
}
