//! Outcome classification (R-F1) and the one-line hint a person can act on.
//!
//! Structured signals decide first, each with its evidence and a confidence:
//! 1. never started → `refused` (high);
//! 2. cordon's own timer / cancellation → `timed-out` / `cancelled` (high);
//! 3. a limit cordon set (reported by the runner, or SIGXCPU / SIGXFSZ) → `limit-exceeded`;
//! 4. SIGSYS → `sandbox-denied` by the seccomp filter (high; the syscall when known);
//! 5. the helper's report (a pipe the command never holds) says nothing ran → `refused`
//!    (high); exit 125 without any report and with the helper's `cordon: …` line →
//!    `refused` (medium); after the helper reported the command started, 125 is the
//!    command's own;
//! 6. exit 0 → `success`; any other exit → `command-failed`, unless
//! 7. the helper's **kernel-side denial records** (a seccomp user-notification supervisor
//!    in the sandbox's init judged the command's writing path calls and recorded the ones
//!    the sandbox refused: `{syscall, path, errno, rule, grant}`, on the helper's report
//!    channel, which the command cannot write) name a refused write: `sandbox-denied`
//!    (high when the output names the record's path, medium when it only shows an access
//!    error, else the run stays `command-failed` with the records as evidence: a program
//!    that probes and moves on, like Python's bytecode cache, is not a denial). When
//!    records were kept, the output alone never makes a filesystem denial; otherwise
//! 8. the program's output — the last, labelled, low-confidence signal — names a path that
//!    **cordon's own resolver** ([`ResolvedFilesystem::access_for`]) says is denied,
//!    read-only or protected, next to an access error (`Read-only file system`,
//!    `Permission denied`, `Operation not permitted`, `Device or resource busy`), or reports a
//!    failed name resolution / connection while the network is off for the command.
//!
//! A test runner's `exit 1`, or a program's own "Permission denied" about a path the
//! profile lets it write, stays `command-failed`: cordon did not cause it.
//!
//! A widening offered from program output alone is capped to the command's cwd and
//! workspace (a command must not steer cordon into offering `-w ~` by printing a fake
//! error); a kernel record backs any grant. Relative paths in the output are read against
//! the command's cwd (the resolved profile's), lexically normalised.

use cordon_policy::paths::{FileKind, FsView};
use cordon_policy::{Access, EntryOrigin, ResolvedFilesystem, ResolvedProfile};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Which source of denial evidence this build reads when the host gives no kernel-side
/// records (rung 2, seccomp unavailable, unrestricted filesystem).
pub const DENIAL_EVIDENCE_SOURCE: &str =
    "the helper's report channel (applied / not run), signals and exit status; denials from stderr heuristics only, each path checked against cordon's resolver";

/// Which source of denial evidence this build reads when the supervisor runs (rung 1 with
/// seccomp).
pub const DENIAL_RECORDS_SOURCE: &str =
    "kernel-side denial records: a seccomp user-notification supervisor in the sandbox's init judges every writing path call (open with write flags, mkdir, unlink, rename, link, symlink, truncate, mknod; chmod, chown, utimes and xattr changes of a file with other hard links) and records the refused ones on the helper's report channel; stderr heuristics only as a labelled low-confidence fallback";

/// How sure the classification is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// Inferred from the program's own output.
    Low,
    /// A cordon fact combined with the program's output, or a signal shared with the child.
    Medium,
    /// From a channel or fact the command cannot forge (cordon's timer, a signal, spawn).
    High,
}

/// Where a piece of evidence came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceSource {
    /// The exit status or signal of the process tree.
    ExitStatus,
    /// cordon itself (its timer, its decision not to start, its resolver, the profile).
    Cordon,
    /// The sandbox helper's own report.
    Helper,
    /// The program's own output (labelled, low confidence).
    ProgramOutput,
}

/// One piece of evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Where it came from.
    pub source: EvidenceSource,
    /// What it says.
    pub detail: String,
}

/// The outcome class (R-F1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum OutcomeClass {
    /// Exit 0.
    Success,
    /// An ordinary non-zero exit.
    CommandFailed,
    /// The sandbox denied a filesystem access or a syscall.
    SandboxDenied {
        /// The path, when known (and confirmed by the resolver).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<PathBuf>,
        /// The syscall, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        syscall: Option<String>,
        /// The rule that denied it (`protected (R-P3): …`, `read-only: …`, `seccomp (R-L3)`).
        rule: String,
        /// The access that was denied (`read` or `write`), when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        access: Option<Access>,
        /// The smallest grant that would allow it: the path itself, or — when it does not
        /// exist yet — its nearest existing ancestor (creating a file needs its directory
        /// writable). `None` when no per-command grant can allow it (deny-read, seccomp).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grant: Option<PathBuf>,
        /// Grants the same fix needs together with `grant`, when one alone would only move
        /// the denial: git writes `config.lock` in a submodule's git dir and renames it over
        /// the protected `config`, so both the directory and the file must be granted
        /// (hints finding 1: each grant alone offered the other, in a loop). Empty
        /// otherwise.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        also_grant: Vec<PathBuf>,
    },
    /// A connection or name lookup was denied by the network policy.
    NetworkDenied {
        /// The host, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
        /// The rule.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
    },
    /// cordon's timer ended the run (the whole tree was killed).
    TimedOut,
    /// The run was cancelled: by an interrupt, by the caller, or by cordon itself once it
    /// could no longer keep a guarantee while the command ran (a cover lost: the run's
    /// `cover_lost` says which, and its exit code is 125). The command had started, so
    /// it may have had effects; a run that never started is [`OutcomeClass::Refused`].
    Cancelled,
    /// A resource limit was hit.
    LimitExceeded {
        /// Which limit (`cpu-time`, `file-size`, `memory`, `processes`, `wall-time`, …).
        which: String,
    },
    /// Never started: forbidden, denied approval, no backend, helper setup failure.
    Refused {
        /// Why.
        why: String,
    },
}

impl OutcomeClass {
    /// The class name (`sandbox-denied`).
    pub fn name(&self) -> &'static str {
        match self {
            OutcomeClass::Success => "success",
            OutcomeClass::CommandFailed => "command-failed",
            OutcomeClass::SandboxDenied { .. } => "sandbox-denied",
            OutcomeClass::NetworkDenied { .. } => "network-denied",
            OutcomeClass::TimedOut => "timed-out",
            OutcomeClass::Cancelled => "cancelled",
            OutcomeClass::LimitExceeded { .. } => "limit-exceeded",
            OutcomeClass::Refused { .. } => "refused",
        }
    }
}

/// The advice of a timed-out run's hint, in the command line's terms (`cordon mcp` says
/// `timeout_ms`).
pub const RAISE_TIMEOUT: &str = "raise --timeout if it needs longer";

/// How a write denial's hint offers its grant, in the command line's terms (the path
/// follows); `cordon mcp` says it as the tool argument.
pub const ALLOW_WRITE_ONCE: &str = "allow writing it once with -w ";

/// Where a managed network's rules go, said after the rule to add (new-user pass 155, #9:
/// the hint named `network.allow` but neither the profile nor the file).
const NETWORK_TABLE: &str =
    "in the profile's network table (`[profiles.NAME.network]` in ~/.config/cordon/config.toml; \
     a built-in profile is not edited: define one of your own with `extends = \"BUILT-IN\"`)";

/// How a network denial's hint offers the network, in the command line's terms.
pub const ALLOW_NETWORK_ONCE: &str = "allow it once with --allow-network";

/// How the loopback hint names the flag that forwards a host port (the address follows,
/// then a closing backtick), in the command line's terms.
pub const PASS_LOCAL_PORT: &str = "pass `--local-port ";

/// How a write denial's hint joins a second grant the fix needs together with the first
/// ([`OutcomeClass::SandboxDenied`]'s `also_grant`; the path follows), in the command line's
/// terms.
pub const ALSO_WRITE: &str = ", together with -w ";

/// How a refused write's hint points at a directory of one's own, in the command line's
/// terms.
pub const OWN_DIRECTORY_GRANT: &str = "and pass -w DIR/NAME";

/// A classified outcome (R-F1): class, exit code, evidence, confidence, hint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The class.
    #[serde(flatten)]
    pub class: OutcomeClass,
    /// The exit code cordon returns (the child's, 128+signal, or 125/126/127).
    pub exit_code: i32,
    /// The terminating signal, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// How sure the class is.
    pub confidence: Confidence,
    /// Evidence, strongest first.
    pub evidence: Vec<Evidence>,
    /// One line a person can act on (printed on stderr after a denial); `null` in JSON
    /// when there is none (always present: nu16 N7).
    #[serde(default)]
    pub hint: Option<String>,
}

impl Outcome {
    /// A refusal (never started) with exit code `code`.
    pub fn refused(why: impl Into<String>, code: i32) -> Outcome {
        let why = why.into();
        Outcome {
            evidence: vec![Evidence {
                source: EvidenceSource::Cordon,
                detail: why.clone(),
            }],
            class: OutcomeClass::Refused { why },
            exit_code: code,
            signal: None,
            confidence: Confidence::High,
            hint: None,
        }
    }
}

/// What the runner observed about one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSignals {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// Terminating signal, when killed by one.
    pub signal: Option<i32>,
    /// cordon's timer fired and killed the tree (the duration, in words).
    pub timed_out: Option<String>,
    /// The run was cancelled (the signal or reason, in words).
    pub cancelled: Option<String>,
    /// A limit the runner or helper reported as hit.
    pub limit: Option<String>,
    /// The last part of the command's stderr (program output: low confidence); with
    /// [`RunSignals::stdout_seen`], of its stdout and stderr together.
    pub stderr_tail: String,
    /// [`RunSignals::stderr_tail`] holds stdout too (the library and `cordon mcp` capture
    /// both; the CLI leaves stdout to the caller, so only stderr is read there).
    pub stdout_seen: bool,
    /// The command ran inside cordon's sandbox.
    pub sandboxed: bool,
    /// The sandbox helper reported on its own channel (which the command never holds) that
    /// nothing ran, and why.
    pub helper_not_run: Option<String>,
    /// The sandbox helper reported that every layer was applied and the command started:
    /// an exit 125 after that is the command's own.
    pub helper_applied: bool,
    /// Connections cordon's proxy refused during the run (managed network), from its
    /// decision log on a channel the command never holds, in order.
    pub network_denied: Vec<ProxyDenial>,
    /// Connections cordon's proxy accepted from the command but could not carry through:
    /// a `network.local` forward whose host port nothing listens on, an allowed or
    /// approved host that does not resolve or connect (the command saw an early EOF or a
    /// `502`, not why).
    pub connect_failures: Vec<ConnectFailure>,
    /// The helper reported the namespace rung, whose `/tmp` is a private tmpfs per
    /// command (when the profile does not deny `/tmp`).
    pub rebuilt_tmp: bool,
    /// Kernel-side denial records from the helper's report channel (`None`: no supervisor
    /// ran; `Some` with no records: it ran and nothing was refused).
    pub denials: Option<cordon_sandbox::denials::DenialReport>,
    /// The helper stopped the run because the host replaced a path the sandbox covered (a
    /// hidden, credential-stripped or protected path: the kernel detaches such a cover), on
    /// its report channel; why, naming the path.
    pub cover_lost: Option<String>,
}

/// One connection the proxy accepted from the command but could not carry to its
/// destination (issue 10 §4, §6): a `network.local` forward (inside, the connection was
/// accepted — init listens before the command starts — and then closed, so the program
/// sees an early EOF, not "connection refused"), or an allowed or approved host that did
/// not resolve or connect (the program sees `502 Bad Gateway` or a SOCKS failure).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectFailure {
    /// Where: `127.0.0.1:5432` (a forward) or `example.org:443` (a host, as named).
    pub target: String,
    /// `network.local` or `proxy`.
    pub via: String,
    /// Why (`connecting to 127.0.0.1:5432: Connection refused (os error 111)`, `cannot
    /// resolve example.org`, `… timed out`).
    pub error: String,
}

/// One connection the filtering proxy refused (issue 10 §4).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProxyDenial {
    /// The host as the command named it.
    pub host: String,
    /// The destination port.
    pub port: u16,
    /// The rule (`not in network.allow`, `deny evil.example`, …).
    pub rule: String,
}

/// The network-denied outcome of a failed run whose proxy refused a connection: the last
/// refusal (the one most likely to have ended the run), with a hint naming the change.
fn proxy_denied(d: &[ProxyDenial]) -> Option<(OutcomeClass, Evidence, String)> {
    let last = d.last()?;
    let hint = if last.rule.starts_with("deny ") {
        format!(
            "{}:{} was blocked by cordon's proxy ({}): it is in network.deny, which wins over \
             network.allow",
            last.host, last.port, last.rule
        )
    } else if last.rule.starts_with("internal address") {
        format!(
            "{}:{} was blocked by cordon's proxy ({}); allow it with an address rule, e.g. \
             network.allow = [\"{}\"] {NETWORK_TABLE}",
            last.host,
            last.port,
            last.rule,
            last.rule.split_whitespace().nth(2).unwrap_or(&last.host)
        )
    } else if last.rule.starts_with("port ") {
        format!(
            "{}:{} was blocked by cordon's proxy ({}); add {} to network.ports {NETWORK_TABLE}",
            last.host, last.port, last.rule, last.port
        )
    } else {
        format!(
            "{}:{} was blocked by cordon's proxy ({}); allow it with network.allow = \
             [\"{}\"] {NETWORK_TABLE}, or {ALLOW_NETWORK_ONCE} (the whole network, for one \
             command)",
            last.host, last.port, last.rule, last.host
        )
    };
    let hosts: Vec<String> = d.iter().map(|x| format!("{}:{}", x.host, x.port)).collect();
    Some((
        OutcomeClass::NetworkDenied {
            host: Some(last.host.clone()),
            rule: Some(last.rule.clone()),
        },
        ev(
            EvidenceSource::Helper,
            format!(
                "proxy decision log (a channel the command cannot write): denied {}",
                hosts.join(", ")
            ),
        ),
        hint,
    ))
}

/// What the classifier knows about the profile the command ran with.
pub struct ClassifyContext<'a> {
    /// The resolved profile (absent when unsandboxed).
    pub resolved: Option<&'a ResolvedProfile>,
    /// The filesystem view the resolver uses.
    pub fs: &'a dyn FsView,
    /// The command's cwd (relative paths in output are read against it): the resolved
    /// profile's, not cordon's.
    pub cwd: &'a Path,
    /// Whether the network was enabled for the command.
    pub network_enabled: bool,
    /// The user's home directory, when known: never offered as a grant, nor anything above
    /// it ([`offerable_grant`]).
    pub home: Option<&'a Path>,
    /// The directories of the caller's `PATH` (absolute entries, as spelled): never offered
    /// as a grant, nor a directory holding one or inside one ([`offerable_grant`]; nu23 Q2:
    /// an approved `-w ~/bin` planted the `git` the person's shell ran next).
    pub path_dirs: &'a [std::path::PathBuf],
    /// The paths the command named: the words of its command line and the paths its
    /// output names ([`named_paths`]), relative ones read against `cwd`. A denied write
    /// reached through a symlink one of them passes, planted inside a writable root, is
    /// offered no grant ([`planted_link`]).
    pub words: &'a [String],
}

/// The paths a command named, for [`ClassifyContext::words`]: each word of its command
/// line `argv`, and each path its output `tail` names ([`candidate_paths`]).
pub fn named_paths<'a>(argv: impl IntoIterator<Item = &'a String>, tail: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in argv {
        out.push(w.clone());
        // A shell script's words too (`sh -c 'echo x > out/f'`).
        if w.contains(char::is_whitespace) {
            out.extend(
                w.split(|c: char| c.is_whitespace() || "'\"<>|;&()".contains(c))
                    .filter(|t| t.len() > 1)
                    .map(str::to_string),
            );
        }
    }
    out.extend(tail.lines().flat_map(candidate_paths));
    out.sort();
    out.dedup();
    out
}

/// How the evidence of a limit the helper reported starts (its own channel: the helper
/// has printed the limit's line on stderr already).
pub const LIMIT_HIT: &str = "limit hit: ";

fn ev(source: EvidenceSource, detail: impl Into<String>) -> Evidence {
    Evidence {
        source,
        detail: detail.into(),
    }
}

/// Errors printed by programs when an access is refused; with the access they imply.
const ACCESS_ERRORS: &[(&str, Option<Access>)] = &[
    ("read-only file system", Some(Access::Write)),
    ("erofs", Some(Access::Write)),
    // A tool's own words for a directory it checked before writing (new-user pass 241 #4:
    // pyenv's "cannot rehash: /root/.pyenv/shims isn't writable" after `pip install` was
    // a plain command-failed with no hint).
    ("isn't writable", Some(Access::Write)),
    ("is not writable", Some(Access::Write)),
    ("device or resource busy", Some(Access::Write)),
    ("permission denied", None),
    ("eacces", None),
    ("operation not permitted", None),
    ("eperm", None),
    // git's own words for a repository it cannot write (a push into a local bare
    // repository outside the writable roots: nu18 F12 was a low-confidence
    // command-failed, so no retry was offered).
    (
        "unable to create temporary object directory",
        Some(Access::Write),
    ),
    (
        "insufficient permission for adding an object",
        Some(Access::Write),
    ),
];

/// Words that show an access error was about writing.
const WRITE_WORDS: &[&str] = &[
    "cannot create",
    "cannot touch",
    "cannot remove",
    "cannot move",
    "cannot write",
    "could not write",
    "cannot make directory",
    "cannot open",
    "write",
    "unlink",
    "rename",
    "mkdir",
    "creat",
    "remove",
    "delete",
    "lock",
];

/// Messages of failed name resolution or connections.
const NETWORK_ERRORS: &[&str] = &[
    "temporary failure in name resolution",
    "could not resolve host",
    "name or service not known",
    "getaddrinfo",
    "eai_again",
    "enotfound",
    "network is unreachable",
    "failed to resolve",
    "name resolution",
    "could not resolve",
    "no address associated with hostname",
    "dns lookup",
    "dns resolution",
    "unable to resolve",
    "unknownhostexception",
    "no such host",
    "nodename nor servname",
    "enetunreach",
];

/// Failed connections (curl to an address, nu21 K1: `Failed to connect to 1.1.1.1 port
/// 443 …: Couldn't connect to server`): a network failure only with a recorded attempt
/// beside it (a refused connection alone is as often a server that is down).
const CONNECT_ERRORS: &[&str] = &[
    "failed to connect to",
    "couldn't connect to server",
    "could not connect to",
    "failed to establish a new connection",
];

/// Whether `marker` occurs in `text` as whole words: not inside a longer word (`enotfound`
/// is Node's `ENOTFOUND`, not the end of Python's `FileNotFoundError`: new user, stop 18).
fn contains_word(text: &str, marker: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices(marker).any(|(i, m)| {
        let before = i.checked_sub(1).map(|j| b[j]);
        let after = b.get(i + m.len()).copied();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// Candidate paths in one line of program output: quoted words, and words that look like
/// paths (contain `/`, or start with `.`), trimmed of punctuation.
fn candidate_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('"', '"'), ('`', '\''), ('‘', '’')] {
        let mut rest = line;
        while let Some(i) = rest.find(open) {
            let after = &rest[i + open.len_utf8()..];
            match after.find(close) {
                Some(j) => {
                    let w = &after[..j];
                    if !w.is_empty() && !w.contains(' ') {
                        out.push(w.to_string());
                    }
                    rest = &after[j + close.len_utf8()..];
                }
                None => break,
            }
        }
    }
    for w in line.split_whitespace() {
        let w = w.trim_matches(|c: char| "'\"`‘’,;:()[]{}<>".contains(c));
        if (w.contains('/') || w.starts_with('.')) && w.len() > 1 && !w.contains("://") {
            out.push(w.to_string());
        }
    }
    // The coreutils shape `prog: NAME: error` names a file without `/` or a leading dot
    // (new-user pass nu27, F2: `cat: notes.md: Permission denied` was no denial): a middle
    // field that is one word.
    let fields: Vec<&str> = line.split(": ").collect();
    if fields.len() >= 3 {
        for f in &fields[1..fields.len() - 1] {
            let f = f.trim();
            if !f.is_empty() && !f.contains(char::is_whitespace) && !out.iter().any(|o| o == f) {
                out.push(f.to_string());
            }
        }
    }
    out.dedup();
    out
}

/// The extracted host from a name-resolution message, if any.
fn extract_host(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    for marker in [
        "could not resolve host:",
        "enotfound",
        "eai_again",
        "failed to resolve",
        "could not resolve",
    ] {
        if let Some(i) = lower.find(marker) {
            let rest = &line[i + marker.len()..];
            // Nothing after the marker (`npm error code EAI_AGAIN`): the next marker.
            let Some(word) = rest.split_whitespace().next() else {
                continue;
            };
            let host = word.trim_matches(|c: char| "'\"`,;:()[]".contains(c));
            if !host.is_empty() && host.contains('.') {
                return Some(host.to_string());
            }
        }
    }
    None
}

/// Why the resolver says `path` is not accessible for `want`, if it does: (rule, protected?).
fn resolver_denies(
    fs: &ResolvedFilesystem,
    view: &dyn FsView,
    path: &Path,
    want: Option<Access>,
) -> Option<(String, Access)> {
    let ResolvedFilesystem::Restricted { entries, .. } = fs else {
        return None;
    };
    let pa = fs.access_for(view, path);
    let entry = pa.entry.and_then(|i| entries.get(i));
    let origin = entry.map(|e| &e.origin);
    match pa.access {
        // No entry: the profile's `filesystem.default = "deny"` (new-user pass 241 #3).
        Access::Deny if entry.is_none() => Some((
            "denied (filesystem.default = \"deny\": no entry of the profile grants it)".to_string(),
            Access::Read,
        )),
        Access::Deny => Some((EntryOrigin::deny_rule(origin), Access::Read)),
        Access::Read if want != Some(Access::Read) => Some((
            match origin {
                Some(EntryOrigin::Protected { reason }) => format!("protected (R-P3): {reason}"),
                Some(EntryOrigin::Pinned { protects }) => format!(
                    "pinned (R-P3): cannot be renamed or removed, it keeps {} protected",
                    protects.display()
                ),
                Some(EntryOrigin::Profile { spelling, .. }) => {
                    format!("read-only (entry {spelling})")
                }
                _ => "read-only: outside every writable root".to_string(),
            },
            Access::Write,
        )),
        _ => None,
    }
}

/// Classifies one run (module docs for the order).
pub fn classify(sig: &RunSignals, ctx: &ClassifyContext<'_>) -> Outcome {
    let mut out = classify_signals(sig, ctx);
    // A line quoted from the output is labelled by what was read: stdout and stderr
    // together for the library and `cordon mcp` (new-user pass nu17 N3: a line pytest
    // printed on stdout was quoted as "stderr:").
    if sig.stdout_seen {
        for e in &mut out.evidence {
            if e.source == EvidenceSource::ProgramOutput {
                if let Some(rest) = e.detail.strip_prefix("stderr: ") {
                    e.detail = format!("output: {rest}");
                }
            }
        }
    }
    out
}

/// [`classify`], quoting output lines as `stderr:`.
fn classify_signals(sig: &RunSignals, ctx: &ClassifyContext<'_>) -> Outcome {
    let code = sig
        .code
        .unwrap_or_else(|| sig.signal.map(|s| 128 + s).unwrap_or(125));
    let mut out = Outcome {
        class: OutcomeClass::CommandFailed,
        exit_code: code,
        signal: sig.signal,
        confidence: Confidence::High,
        evidence: Vec::new(),
        hint: None,
    };
    if let Some(why) = &sig.cover_lost {
        // cordon could not keep its guarantee for the rest of the run: it stopped the
        // command (the whole tree), whatever the command had done by then. Cancelled, not
        // refused: the command ran, and what it did until then stays (attack pass 148 F3:
        // `refused` told the agent nothing had happened, R-F1).
        out.class = OutcomeClass::Cancelled;
        out.exit_code = 125;
        out.signal = None;
        out.evidence.push(ev(
            EvidenceSource::Helper,
            format!("helper report (a channel the command cannot write): stopped: {why}"),
        ));
        // A cover that could not be looked at is not said to be replaced (new-user pass
        // 147: the hint contradicted `cover_lost`).
        out.hint = Some(if why.contains(cordon_sandbox::COVER_NOT_CHECKED) {
            "the command ran and was stopped: a directory above a hidden or protected path \
             became unsearchable during the run, so cordon could not tell whether the path \
             was replaced; what the command did until then stays. Restore its permissions \
             (chmod u+x) and run again"
                .into()
        } else {
            "the command ran and was stopped, and what it did until then stays: a hidden or \
             protected path (or a directory on its way) was replaced or created while it \
             ran — by the host (e.g. `git config`, `npm login`, an editor saving it), by \
             another command running in the same workspace, or by the command itself: check \
             what is there now, and run the command again once nothing else is changing it"
                .into()
        });
        return out;
    }
    match (sig.code, sig.signal) {
        (Some(c), _) => out
            .evidence
            .push(ev(EvidenceSource::ExitStatus, format!("exit {c}"))),
        (None, Some(s)) => out.evidence.push(ev(
            EvidenceSource::ExitStatus,
            format!("killed by signal {s}"),
        )),
        _ => {}
    }
    if let Some(t) = &sig.timed_out {
        out.class = OutcomeClass::TimedOut;
        out.evidence.insert(
            0,
            ev(
                EvidenceSource::Cordon,
                format!("timer: {t}; the whole process tree was killed"),
            ),
        );
        out.hint = Some(format!("timed out after {t}: {RAISE_TIMEOUT}"));
        return out;
    }
    // A command that ran on after the signal and exited 0 was not cancelled: it finished
    // (nu23 Q4: a shell deferred the SIGINT, ran to the end, and the report said
    // `cancelled`). The signal stays in the evidence.
    if let Some(c) = sig.cancelled.as_ref().filter(|_| sig.code == Some(0)) {
        out.evidence.push(ev(
            EvidenceSource::Cordon,
            format!("{c}, but the command ran on and exited 0"),
        ));
    } else if let Some(c) = &sig.cancelled {
        out.class = OutcomeClass::Cancelled;
        out.evidence
            .insert(0, ev(EvidenceSource::Cordon, c.clone()));
        // A signal the user sent needs no line; a server that went away does (nu16 N6:
        // the command exited 137 with nothing said).
        if c == LOST_SERVER {
            out.hint = Some(c.clone());
        }
        return out;
    }
    if let Some(l) = &sig.limit {
        out.class = OutcomeClass::LimitExceeded { which: l.clone() };
        out.evidence
            .insert(0, ev(EvidenceSource::Cordon, format!("{LIMIT_HIT}{l}")));
        // The line the helper prints, as the hint too (new-user pass nu20, G4: `hint` was
        // null where stderr said what to do).
        let kind = cordon_policy::limits::LimitKind::parse(l);
        let field = kind.map_or(l.as_str(), |k| k.profile_key());
        let what = match kind {
            Some(cordon_policy::limits::LimitKind::Pids) => "process-count",
            Some(cordon_policy::limits::LimitKind::Timeout) => "wall-clock timeout",
            Some(cordon_policy::limits::LimitKind::CpuTime) => "CPU-time",
            _ => l.as_str(),
        };
        out.hint = Some(format!(
            "the profile's {what} limit ended the command and every process it started: \
             raise limits.{field} in the profile if it needs more"
        ));
        return out;
    }
    match sig.signal {
        // The exit signal alone is no kernel-side evidence: a command can send it to itself
        // (attack pass 41, E3: `kill -SYS $$` was a seccomp denial with high confidence,
        // `kill -XCPU $$` a CPU limit). So: never `sandbox-denied` on a signal's word —
        // cordon's filter kills only foreign-architecture calls (x32, i386) — and a limit
        // told by the signal alone has low confidence.
        Some(s) if s == libc::SIGSYS && sig.sandboxed => {
            out.confidence = Confidence::Low;
            out.evidence.push(ev(
                EvidenceSource::ExitStatus,
                "SIGSYS alone (the command may have sent it itself): not counted as a \
                 sandbox denial",
            ));
            out.hint = Some(
                "killed by SIGSYS: if it made a 32-bit (i386 or x32) system call, cordon's \
                 seccomp filter (R-L3) kills it, and no per-command opening exists for it"
                    .into(),
            );
            return out;
        }
        Some(s) if s == libc::SIGXCPU || s == libc::SIGXFSZ => {
            let (which, rlimit) = if s == libc::SIGXCPU {
                ("cpu-time", "RLIMIT_CPU")
            } else {
                ("file-size", "RLIMIT_FSIZE")
            };
            out.class = OutcomeClass::LimitExceeded {
                which: which.into(),
            };
            out.confidence = Confidence::Low;
            out.evidence.push(ev(
                EvidenceSource::ExitStatus,
                format!(
                    "the exit signal alone ({rlimit} sends it; so may the command itself): \
                     no limit was reported by the helper"
                ),
            ));
            return out;
        }
        _ => {}
    }
    if let Some(why) = &sig.helper_not_run {
        out.class = OutcomeClass::Refused { why: why.clone() };
        out.evidence.insert(
            0,
            ev(
                EvidenceSource::Helper,
                format!("helper report (a channel the command cannot write): not run: {why}"),
            ),
        );
        return out;
    }
    if sig.code != Some(0) {
        if let Some((class, evidence, hint)) = proxy_denied(&sig.network_denied) {
            out.class = class;
            out.evidence.insert(0, evidence);
            out.hint = Some(hint);
            return out;
        }
    }
    if sig.code == Some(125) && sig.sandboxed && !sig.helper_applied {
        // No report at all (the helper died before it could say): its own message, if any.
        if let Some(line) = sig.stderr_tail.lines().find(|l| l.starts_with("cordon: ")) {
            out.class = OutcomeClass::Refused {
                why: line.trim_start_matches("cordon: ").to_string(),
            };
            out.confidence = Confidence::Medium;
            out.evidence.push(ev(
                EvidenceSource::Helper,
                format!("helper setup error: {line}"),
            ));
            return out;
        }
    }
    if sig.code == Some(0) {
        out.class = OutcomeClass::Success;
        // A forward or host the proxy could not reach is worth a line even when the
        // command shrugged it off (nu21 K8).
        out.hint = harmless_git_info_note(sig)
            .or_else(|| connect_failure_hint(sig))
            .or_else(|| refused_but_succeeded_hint(sig, ctx));
        return out;
    }
    let mut unexplained = None;
    // Where the "none named by the output" evidence went, and whether every record was a
    // network refusal.
    let mut unnamed_records: Option<(usize, bool)> = None;
    // A cordon run inside the sandbox that refused to start its command: that is what
    // happened, whatever its own attempts left in the denial records. After the helper
    // said it applied the sandbox, such a line is the command's (before it, the line is
    // this run's own helper refusing: `Refused`).
    if sig.helper_applied && sig.sandboxed {
        let all: Vec<&str> = sig.stderr_tail.lines().collect();
        if let Some(o) = nested_refusal(sig.code, &all) {
            out.class = o.0;
            out.confidence = o.1;
            out.evidence.extend(o.2);
            out.hint = o.3;
            return out;
        }
    }
    if let Some(d) = &sig.denials {
        if let Some(o) = from_records(d, sig, ctx) {
            out.class = o.0;
            out.confidence = o.1;
            out.evidence.extend(o.2);
            out.hint = o.3;
            return out;
        }
        if d.total > 0 {
            unnamed_records = Some((out.evidence.len(), d.records.iter().all(|r| r.is_network())));
            out.evidence.push(ev(
                EvidenceSource::Helper,
                format!(
                    "{} denial record(s) (e.g. {} {}: {}), none named by {}: not counted \
                     as the cause",
                    d.total,
                    d.records[0].syscall,
                    d.records[0].path.display(),
                    d.records[0].errno,
                    seen_output(sig)
                ),
            ));
            // Not the cause for certain, but not ruled out either: the failure is not
            // claimed as the command's own with high confidence, and the refused write is
            // named with its grant (new-user pass nu15 N4: `git push` to a path remote
            // failed on "unpacker error" with the refused `mkdir` recorded, and no hint).
            // Only a refusal a per-command grant can lift (a probe such as Python's
            // bytecode cache under /usr stays unmentioned); the first such one, the
            // likeliest cause (later ones are often clean-up).
            unexplained = liftable_refusal(d, ctx).map(|(r, hint)| {
                format!(
                    "the sandbox refused `{} {}` ({}) during the run, which {} does not \
                     name; if that is why it failed: {hint}",
                    r.syscall,
                    display_path(&r.path, ctx.cwd),
                    r.errno,
                    seen_output(sig),
                )
            });
            if unexplained.is_some() {
                out.confidence = Confidence::Low;
            }
        }
    }
    // The program's output: last, labelled, low-confidence — and only what cordon's own
    // view of the profile confirms.
    if sig.sandboxed {
        if let Some(o) = from_output(sig, ctx) {
            // A network failure read from the output is what those network records were:
            // they are not "not counted as the cause" next to it (new-user pass 243 #3).
            if let (OutcomeClass::NetworkDenied { .. }, Some((i, true))) = (&o.0, unnamed_records) {
                out.evidence.remove(i);
            }
            out.class = o.0;
            out.confidence = o.1;
            out.evidence.extend(o.2);
            out.hint = o.3;
            return out;
        }
    }
    if out.class == OutcomeClass::CommandFailed {
        out.hint = connect_failure_hint(sig)
            .or_else(|| private_tmp_hint(sig, ctx))
            .or_else(|| own_loopback_hint(sig, ctx))
            .or_else(|| cross_device_hint(sig))
            .or_else(|| ptrace_hint(sig))
            .or(unexplained);
    }
    out
}

/// The first refusal in `d` a per-command grant could lift (or a hard-linked file's, whose
/// fix is a rename), with its hint ([`record_hint`]): network refusals and git's object
/// freshening ([`git_object_freshen`]) are never it, nor a probe no grant is offered for
/// (Python's bytecode cache under `/usr`). The first such one is the likeliest cause
/// (later ones are often clean-up).
fn liftable_refusal<'a>(
    d: &'a cordon_sandbox::denials::DenialReport,
    ctx: &ClassifyContext,
) -> Option<(&'a cordon_sandbox::denials::DenialRecord, String)> {
    d.records
        .iter()
        .filter(|r| !r.is_network() && !git_object_freshen(r))
        .find_map(|r| {
            let (hint, grant) = record_hint(r, ctx);
            // A hard link has no grant, and is named all the same: its fix is a rename
            // (new-user pass nu28, F2: vim's silent failure got no hint).
            let linked = r.rule.starts_with(cordon_sandbox::denials::HARD_LINK_RULE)
                || r.rule.starts_with(cordon_sandbox::denials::UNCHECKED_RULE)
                || r.rule
                    .starts_with(cordon_sandbox::denials::HOST_METADATA_RULE)
                // Named even where its directory cannot be offered: the fix is in the
                // hint (write in place), and a rename over it fails in silence otherwise
                // (new-user pass 234 #2: `sed -i` on a `-w /tmp/foo`).
                || r.rule == cordon_sandbox::denials::FILE_GRANT_RULE;
            (grant.is_some() || linked).then_some((r, hint))
        })
}

/// A command that exited 0 although the sandbox refused a write a grant could lift
/// ([`liftable_refusal`]): said, because an agent reads the exit code and would take the
/// write as done (new-user pass 155, #3: `sh -c 'echo x > .git/hooks/pre-push; echo done'`
/// was `success` with no hint, the refusal only in `--json`'s `denials`).
///
/// git's opportunistic index refresh is not such a write: `git status`, `diff` or
/// `describe` take `index.lock` to save a refreshed index and go on without it when they
/// cannot ([`git_index_refresh`]). When the only refused writes of a run that exited 0 are
/// those, nothing is said (hints finding 2: every `git status` in a repository with a
/// submodule got a note offering `-w .git/modules/NAME`); a failed command still gets its
/// hint (`git add` in a submodule needs that lock).
fn refused_but_succeeded_hint(sig: &RunSignals, ctx: &ClassifyContext) -> Option<String> {
    let all = sig.denials.as_ref()?;
    let records: Vec<_> = all
        .records
        .iter()
        .filter(|r| !git_index_refresh(r, ctx))
        .cloned()
        .collect();
    let skipped = (all.records.len() - records.len()) as u64;
    // Every refusal was kept (none beyond the cap) and each was an index refresh.
    if records.is_empty() && all.total == all.records.len() as u64 {
        return None;
    }
    let others = cordon_sandbox::denials::DenialReport {
        records,
        total: all.total - skipped,
    };
    let d = if others.records.is_empty() {
        all
    } else {
        &others
    };
    let (r, hint) = liftable_refusal(d, ctx)?;
    let more = match d.total.saturating_sub(1) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Some(format!(
        "the command exited 0, but the sandbox refused `{} {}` ({}){more}, so that write did \
         not happen; if the command needed it: {hint}",
        r.syscall,
        display_path(&r.path, ctx.cwd),
        r.errno,
    ))
}

/// A refused creation of git's `index.lock` in a git dir (a `.git`, a submodule's git dir
/// under `.git/modules/`, a linked worktree's admin dir, a bare repository: any directory
/// with a `HEAD` file, or below a `*.git` directory): how git takes the index, which
/// `status`, `diff` and `describe` only do to save a refreshed copy, and give up quietly.
fn git_index_refresh(r: &cordon_sandbox::denials::DenialRecord, ctx: &ClassifyContext) -> bool {
    let opens = matches!(r.syscall.as_str(), "open" | "openat" | "openat2" | "creat");
    let Some(dir) = r.path.parent() else {
        return false;
    };
    let in_git_dir = ctx.fs.kind(&dir.join("HEAD")) == Some(FileKind::File)
        || dir.ancestors().any(|a| {
            a.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".git"))
        });
    opens && r.path.file_name() == Some(std::ffi::OsStr::new("index.lock")) && in_git_dir
}

/// A refused time change (`utimensat`, `utime`, …) of a hard-linked file in a git
/// repository's `objects/`: git "freshens" an object it was about to write again by
/// touching the existing one, and when that fails it writes a new copy and goes on
/// (new-user pass nu30, F1: in a local `git clone`, whose objects are hard links, every
/// later unrelated failure got a hint blaming it, with a recipe that rewrote an object).
/// Never the cause of a failure.
fn git_object_freshen(r: &cordon_sandbox::denials::DenialRecord) -> bool {
    let times = matches!(
        r.syscall.as_str(),
        "utimensat" | "utime" | "utimes" | "futimesat"
    );
    let comps: Vec<&std::ffi::OsStr> = r.path.iter().collect();
    let in_objects = comps.iter().enumerate().any(|(i, c)| {
        *c == "objects"
            && comps[..i]
                .iter()
                .any(|a| a.to_str().is_some_and(|a| a.ends_with(".git")))
    });
    times && in_objects && r.rule.starts_with(cordon_sandbox::denials::HARD_LINK_RULE)
}

/// After a command that worked (`git gc`, `git update-server-info`) whose writes of
/// `.git/info/refs` or `info/rev-cache` were refused (protected, R-P3: the whole `info/`
/// is): git printed `error: unable to update …/info/refs`, which is harmless — those files
/// only serve the repository over dumb HTTP (new-user pass nu21, K7). `None` otherwise.
fn harmless_git_info_note(sig: &RunSignals) -> Option<String> {
    let d = sig.denials.as_ref()?;
    // Only when nothing else was refused (attack pass 43, J5: a refused `info/refs-evil`,
    // or a hook write beside it, got the note).
    if d.records.is_empty() || !d.records.iter().all(|r| dumb_http_info_file(&r.path)) {
        return None;
    }
    let dir = d.records.first()?.path.parent()?;
    Some(format!(
        "git could not update {}/refs (protected, R-P3, like all of .git/info): it only \
         serves the repository over dumb HTTP, so the error git printed about it is harmless",
        dir.display()
    ))
}

/// Git's own dumb-HTTP files in a repository's `.git/info`: `refs`, its temporary
/// `refs_XXXXXX`, and `rev-cache` (what `git update-server-info` writes).
fn dumb_http_info_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    path.parent().is_some_and(|p| p.ends_with(".git/info"))
        && (name == "refs" || name.starts_with("refs_") || name == "rev-cache")
}

/// A failed command one of whose connections cordon's proxy accepted but could not carry
/// through (its decision log, a channel the command never holds): the first, as the hint
/// (new-user pass nu20, G4: a `--local-port` forward with nothing listening said so on
/// stderr only, and `hint` was null).
fn connect_failure_hint(sig: &RunSignals) -> Option<String> {
    let f = sig.connect_failures.first()?;
    let (target, error) = (
        cordon_policy::text::printable(&f.target),
        cordon_policy::text::printable(&f.error),
    );
    Some(if f.via == "network.local" {
        format!(
            "network.local {target}: the host side could not be reached ({error}), so the \
             command's connection was closed: is the service running on the host?"
        )
    } else {
        format!(
            "cordon's proxy allowed {target} but could not reach it ({error}): the command \
             got a 502 or a failed tunnel, not a refusal"
        )
    })
}

/// A failed command whose connection to a loopback address was refused, run with the
/// network off (each command then has its own network namespace, `lo` included): the hint
/// says the host's loopback services are not there and how to reach one (new-user pass
/// nu11, M4: a test against the host's database failed with a bare "connection refused").
fn own_loopback_hint(sig: &RunSignals, ctx: &ClassifyContext<'_>) -> Option<String> {
    if ctx.network_enabled || !sig.sandboxed {
        return None;
    }
    const REFUSED: [&str; 4] = [
        "connection refused",
        "econnrefused",
        "couldn't connect to server",
        "could not connect to server",
    ];
    const LOOPBACK: [&str; 4] = ["127.0.0.1", "localhost", "[::1]", "::1"];
    let refused = |l: &str| {
        let low = l.to_ascii_lowercase();
        REFUSED.iter().any(|r| low.contains(r))
    };
    let names_loopback = |l: &str| {
        let low = l.to_ascii_lowercase();
        LOOPBACK.iter().any(|a| low.contains(a))
    };
    if let Some(line) = sig
        .stderr_tail
        .lines()
        .find(|l| refused(l) && names_loopback(l))
    {
        let port = loopback_port(line).map_or("PORT".to_string(), |p| p.to_string());
        return Some(format!(
            "`{}`: each sandboxed command has its own loopback, so servers on the host's \
             127.0.0.1 are not there (a server started inside the same command is); to \
             reach the host's, {PASS_LOCAL_PORT}127.0.0.1:{port}`",
            cordon_policy::text::printable(line.trim())
        ));
    }
    // A refusal that names no address (Python's `urlopen`: "[Errno 111] Connection
    // refused"): with the network off only the command's own loopback answers at all
    // (elsewhere is unreachable), so a refused TCP connection went there — or to a unix
    // socket; the hint says which case it covers, with a port the output names elsewhere
    // (new-user pass 180, #3: curl's got the hint, urllib's got none).
    let line = sig.stderr_tail.lines().find(|l| refused(l))?;
    let port = sig
        .stderr_tail
        .lines()
        .filter(|l| names_loopback(l))
        .find_map(loopback_port)
        .map_or("PORT".to_string(), |p| p.to_string());
    Some(format!(
        "`{}`: if that was a connection to a server on the host's 127.0.0.1, it is not \
         there: each sandboxed command has its own loopback (a server started inside the \
         same command is); to reach the host's, {PASS_LOCAL_PORT}127.0.0.1:{port}`",
        cordon_policy::text::printable(line.trim())
    ))
}

/// The port in `127.0.0.1:5432`, `localhost:8080`, `[::1]:80` or curl's `127.0.0.1 port
/// 8799`, if the line names one.
fn loopback_port(line: &str) -> Option<u16> {
    let digits = |s: &str| -> Option<u16> {
        let d: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
        d.parse().ok().filter(|p| *p > 0)
    };
    for a in ["127.0.0.1:", "localhost:", "[::1]:"] {
        if let Some(i) = line.find(a) {
            if let Some(p) = digits(&line[i + a.len()..]) {
                return Some(p);
            }
        }
    }
    // curl's `127.0.0.1 port 8799`, Python's `port=8799` (requests, urllib3).
    [" port ", "port="]
        .iter()
        .find_map(|a| line.find(a).and_then(|i| digits(&line[i + a.len()..])))
}

/// A failed command that did not find a file under `/tmp`, run where `/tmp` is a private
/// tmpfs per command: the hint says a file an earlier command left there is gone (new-user
/// pass nu9: agents pass files between steps through `/tmp`, and the second step's "No
/// such file or directory" got no word from cordon).
fn private_tmp_hint(sig: &RunSignals, ctx: &ClassifyContext<'_>) -> Option<String> {
    let private = sig.rebuilt_tmp
        && ctx
            .resolved
            .is_some_and(|r| r.filesystem.top_view().private_tmp);
    if !private {
        return None;
    }
    let under_tmp = |p: &str| p.starts_with("/tmp/") && p.len() > "/tmp/".len();
    // A host file there is hidden, not gone (breaker, nu10): said so, with the grant
    // `cordon explain` gives (new-user pass nu14: such a run got no hint at all).
    // Run as a program too: cordon's own "command not found" (new-user pass nu18 F4: a
    // script a harness wrote to the host's /tmp got exit 127 and no word).
    for l in sig.stderr_tail.lines() {
        // dash says "cannot open /tmp/x.sh: No such file" (nu19: `sh /tmp/x.sh` got no
        // word).
        if !l.contains("No such file")
            && !l.ends_with(": command not found")
            && !l.contains("Directory nonexistent")
        {
            continue;
        }
        // A bare name the command's PATH finds on the host in a directory under /tmp
        // (new-user pass nu58: `PATH=/tmp/x/bin:$PATH cordon run -- mytool` said only
        // "command not found", while `cordon check` found it).
        let on_path = l
            .strip_suffix(": command not found")
            .and_then(|n| n.rsplit(": ").next())
            .filter(|n| !n.is_empty() && !n.contains('/'))
            .and_then(|n| {
                ctx.path_dirs
                    .iter()
                    .map(|d| d.join(n))
                    .find(|p| p.starts_with("/tmp/") && ctx.fs.kind(p).is_some())
            })
            .map(|p| p.to_string_lossy().into_owned());
        // The path, or the nearest directory above it under /tmp that the host has: a
        // file written into a host directory there (new-user pass nu58: "cannot create
        // /tmp/d/out.txt: Directory nonexistent" got no word).
        let hidden = candidate_paths(l)
            .into_iter()
            // Where the path leads on the host: a relative one, or one through a link
            // into /tmp (`build -> /tmp/b`, then `echo x > build/f`: new-user pass 245 #5).
            .map(|p| {
                let abs = cordon_policy::paths::lexical_normalize(Path::new(&p), ctx.cwd);
                cordon_policy::paths::canonicalize_lenient(ctx.fs, &abs)
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|p| under_tmp(p))
            .find_map(|p| {
                Path::new(&p)
                    .ancestors()
                    .take_while(|a| a.starts_with("/tmp") && *a != Path::new("/tmp"))
                    .find(|a| ctx.fs.kind(a).is_some())
                    .map(|a| a.to_string_lossy().into_owned())
            })
            .or(on_path);
        if let Some(p) = hidden {
            let abs = Path::new(&p);
            return Some(format!(
                "`{}`: {p} exists on the host, but inside the sandbox /tmp is a private \
                 tmpfs that hides the host's files; copy it into the workspace, or {}",
                cordon_policy::text::printable(l.trim()),
                cordon_policy::explain::private_tmp_grant(abs, &smallest_grant(ctx.fs, abs))
            ));
        }
    }
    let line = sig.stderr_tail.lines().find(|l| {
        l.contains("No such file or directory")
            && candidate_paths(l)
                .iter()
                .any(|p| under_tmp(p) && ctx.fs.kind(Path::new(p)).is_none())
    })?;
    Some(format!(
        "`{}`: inside the sandbox /tmp is private to each command (an empty tmpfs, \
         discarded when the command ends): if an earlier command left it there, it is gone; \
         keep files for later commands in the workspace",
        cordon_policy::text::printable(line.trim())
    ))
}

/// A sandboxed command whose hard link (or rename) failed with `EXDEV` ("Invalid
/// cross-device link"): inside the sandbox each writable root and the read-only rest are
/// separate mounts, and Landlock refuses linking or moving a file between places with
/// other rights, so `ln` or `cp -al` from a read-only tree into the workspace fails even on
/// one host filesystem (new-user pass nu28, F8: no word from cordon). `None` otherwise.
fn cross_device_hint(sig: &RunSignals) -> Option<String> {
    if !sig.sandboxed {
        return None;
    }
    let line = sig
        .stderr_tail
        .lines()
        .find(|l| l.contains("Invalid cross-device link") || l.contains("EXDEV"))?;
    Some(format!(
        "`{}`: inside the sandbox a hard link (or a rename) cannot join a read-only path \
         and a writable root, or two writable roots, even on one host filesystem: each is \
         mounted on its own; copy instead (`cp -a`, not `ln` or `cp -al`), and make a file \
         to rename in the destination's own directory (`mktemp -p DIR`, not in /tmp)",
        cordon_policy::text::printable(line.trim())
    ))
}

/// A sandboxed command whose debugger or tracer (gdb, strace, ltrace, lldb) printed that
/// `ptrace` was not permitted: the sandbox's seccomp filter refuses `ptrace` and
/// `process_vm_*` to every command (a process that can trace another reads and writes its
/// memory, init's and the supervisor's included), so no grant lifts it (new-user pass 215,
/// #1: gdb's "ptrace: Operation not permitted" got no hint). `None` otherwise.
fn ptrace_hint(sig: &RunSignals) -> Option<String> {
    if !sig.sandboxed {
        return None;
    }
    let line = sig.stderr_tail.lines().find(|l| {
        let low = l.to_ascii_lowercase();
        low.contains("ptrace") && (low.contains("not permitted") || low.contains("eperm"))
    })?;
    Some(format!(
        "`{}`: the sandbox's seccomp filter refuses ptrace to every command (a tracer could \
         read and write other processes' memory), so debuggers and tracers (gdb, strace, \
         ltrace) cannot attach or start a program inside it; no grant lifts it: debug outside \
         cordon, or read a core file (`gdb PROGRAM core`, which needs no ptrace)",
        cordon_policy::text::printable(line.trim())
    ))
}

/// The smallest write grant that lets a command write `path`: the path when it exists, else
/// its nearest existing ancestor (a new file needs its directory writable).
pub fn smallest_grant(fs: &dyn FsView, path: &Path) -> PathBuf {
    let mut p = path;
    loop {
        if fs.kind(p).is_some() {
            return p.to_path_buf();
        }
        match p.parent() {
            Some(parent) if parent != p => p = parent,
            _ => return path.to_path_buf(),
        }
    }
}

/// The home (`$HOME`, when absolute) and the directories of `PATH` — `command_path` (the
/// command's, when known) and cordon's own — that [`offerable_grant`] never offers.
pub fn offer_facts(command_path: Option<&str>) -> (Option<PathBuf>, Vec<PathBuf>) {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let own_path = std::env::var("PATH").unwrap_or_default();
    let path_dirs = command_path
        .into_iter()
        .chain([own_path.as_str()])
        .flat_map(|v| v.split(':'))
        .filter(|d| d.starts_with('/'))
        .map(PathBuf::from)
        .collect();
    (home, path_dirs)
}

/// The grant a run of `resolved` started from this process would offer after a denied
/// write to `path` whose smallest grant is `grant`, or why it offers none
/// ([`grant_offer`]; home from `$HOME`, `PATH` the command's — the profile's `env.set`
/// one, else cordon's — and cordon's own, [`offer_facts`]): what `cordon explain` suggests
/// is what the run offers — one judgement (new-user pass 149: explain suggested
/// `--allow-write ~` for `~/.bashrc`; attack pass 151: a hook-named file, a `PATH` the
/// profile sets, a bare repository).
pub fn offerable_here(
    path: &Path,
    grant: &Path,
    resolved: &ResolvedProfile,
    fs: &dyn FsView,
) -> Result<PathBuf, String> {
    let (home, path_dirs) = offer_facts(resolved.profile.env.set.get("PATH").map(String::as_str));
    grant_offer(
        path,
        grant,
        false,
        &ClassifyContext {
            resolved: Some(resolved),
            fs,
            cwd: &resolved.cwd,
            network_enabled: false,
            home: home.as_deref(),
            path_dirs: &path_dirs,
            words: &[],
        },
    )
}

/// Whether `grant` (from [`smallest_grant`]) may be offered as a one-off `-w` after a
/// denial. The command chooses which path it fails on, so it could otherwise steer the
/// person to approve `-w /` for its own retry (breaker, stop 8: `mkdir /newdir` offered
/// `-w /`, `touch ~/x` offered the whole home). Refused, with the reason: `/` and top-level
/// directories, the home directory or above it, a directory above the cwd or workspace,
/// hidden directories of the home but `~/.cache`, and system trees
/// ([`cordon_policy::paths::in_system_tree`]; inside the home excepted).
pub fn offerable_grant(grant: &Path, ctx: &ClassifyContext<'_>) -> Result<(), String> {
    let g = grant.display();
    // Every check below compares spellings: a grant that leads elsewhere through a symlink
    // (the command can plant `ws/link -> /etc` and fail on `link/x`) is never offered.
    let real = cordon_policy::paths::canonicalize_lenient(ctx.fs, grant);
    if real != grant {
        return Err(format!(
            "it would need {g} writable, which leads to {} through a symlink",
            real.display()
        ));
    }
    if grant == Path::new("/") {
        return Err("it would need / writable, the root of the filesystem".to_string());
    }
    if grant.components().count() <= 2 {
        return Err(format!("it would need {g} writable, a top-level directory"));
    }
    if ctx.home.is_some_and(|h| h.starts_with(grant)) {
        return Err(format!(
            "it would need {g} writable: the home directory or above it"
        ));
    }
    // A cwd outside the workspace was reached through a symlink on the typed path, the
    // project holding the link kept as the workspace (`cd proj/pv` with `pv -> /elsewhere`):
    // the link may have been planted by a command, so nothing at or around the cwd is
    // offered, as a grant spelled through the link is refused (attack pass 244 #2: the
    // retry offered `-w` of the link's target).
    if let Some(r) = ctx.resolved {
        if !ctx.cwd.starts_with(&r.workspace)
            && (ctx.cwd.starts_with(grant) || grant.starts_with(ctx.cwd))
        {
            return Err(format!(
                "it would need {g} writable, where the command's cwd {} is: it lies outside \
                 the workspace {} and was reached through a symlink in it, which a command \
                 could have planted (cd to the real path if you mean to work there)",
                ctx.cwd.display(),
                r.workspace.display()
            ));
        }
    }
    let workspace = ctx.resolved.map(|r| r.workspace.as_path());
    if [Some(ctx.cwd), workspace]
        .into_iter()
        .flatten()
        .any(|w| w.starts_with(grant) && w != grant)
    {
        return Err(format!(
            "it would need {g} writable, which holds the whole workspace"
        ));
    }
    // Hidden directories of the home hold tools' configuration, and much of it makes
    // programs run code later (`~/.config/systemd/user`, `~/.config/autostart`,
    // `~/.local/bin`, git's `core.fsmonitor` in `~/.config/git`): the command chooses where
    // it fails, so it could steer the person into such a grant (breaker: a planted
    // `units -> ~/.config/systemd/user` offered `-w ~/.config/systemd/user`). Caches are
    // data, and stay offerable.
    if let Some(rest) = ctx.home.and_then(|h| grant.strip_prefix(h).ok()) {
        let first = rest
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy());
        // A known package cache under a hidden directory (`~/.npm`, `~/.cargo/registry`)
        // is said to be one (new-user pass nu24, F7c: the cache note called `~/.npm` a cache
        // to grant with -w, and this line called it tool configuration). Not offered either:
        // what a run writes there, later builds on the host use.
        // The home's cache root as a whole: every tool's cache at once (Go's build cache,
        // pre-commit's environments: attack pass 45 note, nu25 F2).
        if rest == Path::new(".cache") {
            return Err(format!(
                "it would need {g} writable: every tool's cache in your home at once (build \
                 caches and tool environments later builds run)"
            ));
        }
        // Any one tool's cache: what most of them keep is code the tool later runs or
        // installs on the host (pip's wheels, Deno's modules, Hugging Face's remote code,
        // torch.hub checkouts, Cypress's and Selenium's binaries, Coursier's jars), and no
        // list of the others can be complete (attack pass 47, N2: six were offered). A
        // typed `-w` still grants one. cordon's own cache state holds every project's
        // copy-on-write layers (nu26 F6).
        if rest.starts_with(".cache") {
            let state = cordon_policy::caches::overlay_root(Path::new(""));
            if state.parent().is_some_and(|own| rest.starts_with(own)) {
                return Err(format!(
                    "it would need {g} writable: cordon's own cache state (every project's \
                     cache layers)"
                ));
            }
            return Err(format!(
                "it would need {g} writable: a tool's cache in your home, which may hold \
                 programs or code the tool later runs on the host, so cordon does not offer it after a denial \
                 (pass -w {g} yourself if you trust what the command writes there)"
            ));
        }
        let hidden = first.as_ref().is_some_and(|f| f.starts_with('.'));
        // A hidden directory deeper in the home, outside the project (attack pass 48, N2:
        // `~/snap/code/common/.vscode/extensions` was offered; the editor loads what is
        // written there).
        let in_project = workspace.is_some_and(|w| grant.starts_with(w))
            || own_repository(ctx).is_some_and(|(w, gitdir, common)| {
                grant.starts_with(&w) || grant.starts_with(&gitdir) || grant.starts_with(&common)
            });
        if !in_project {
            if let Some(h) = rest
                .components()
                .skip(1)
                .map(|c| c.as_os_str().to_string_lossy())
                .find(|c| c.starts_with('.'))
            {
                return Err(format!(
                    "it would need {g} writable: inside the hidden directory {h} in your \
                     home, tool configuration or code a later program loads"
                ));
            }
        }
        if let Some(c) = cordon_policy::caches::KNOWN_CACHES
            .iter()
            .find(|c| hidden && rest.starts_with(c.path))
        {
            return Err(format!(
                "it would need {g} writable: {}'s package cache, which later builds on the host \
                 use, so cordon does not offer it after a denial",
                c.tool
            ));
        }
        if hidden {
            return Err(format!(
                "it would need {g} writable: tool configuration in the home, where a later \
                 program may run what is written"
            ));
        }
    }
    // Another version-control system's project (nu29 F3: `.hg/hgrc`'s `[extensions]` run
    // at the host's next `hg status`; a jj repository's config): its metadata, and any
    // place in its work tree.
    if !workspace.is_some_and(|w| grant.starts_with(w)) {
        if let Some((d, vcs)) = grant.ancestors().take(32).find_map(|d| {
            OTHER_VCS_DIRS
                .iter()
                .find(|v| ctx.fs.kind(&d.join(v)).is_some())
                .map(|v| (d, *v))
        }) {
            return Err(format!(
                "it would need {g} writable, inside another project ({vcs} at {}): its tools \
                 run what its metadata and work tree say",
                d.display()
            ));
        }
    }
    // Where the host's programs keep files they later run, and the session's sockets and
    // units (nu29 F4, F5: `-w $TMPDIR` and `-w $XDG_RUNTIME_DIR` were offered; a systemd
    // user unit was planted). Read from cordon's own environment.
    for (var, what) in [
        (
            "TMPDIR",
            "the host's $TMPDIR, where host programs write files they later run",
        ),
        (
            "XDG_RUNTIME_DIR",
            "the session's runtime directory (its sockets and systemd user units)",
        ),
    ] {
        if let Some(d) = std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
            .map(|d| cordon_policy::paths::canonicalize_lenient(ctx.fs, &d))
        {
            if grant.starts_with(&d) || d.starts_with(grant) {
                return Err(format!("it would need {g} writable, {what}"));
            }
        }
    }
    // Node resolves `require()` through every `node_modules` above a project (attack pass
    // 48, N2: `~/node_modules/<pkg>` was offered, and an unrelated project on the host ran
    // what the retry planted there).
    let outside = !workspace.is_some_and(|w| grant.starts_with(w));
    if outside && grant.components().any(|c| c.as_os_str() == "node_modules") {
        return Err(format!(
            "it would need {g} writable, a node_modules outside the project: Node loads code \
             from every node_modules above a project"
        ));
    }
    if let Some(why) = other_repository_code(grant, ctx)
        .or_else(|| home_configuration(grant, ctx))
        .or_else(|| program_location(grant, ctx))
        .or_else(|| cordons_program(grant))
    {
        return Err(format!("it would need {g} writable, {why}"));
    }
    if cordon_policy::paths::in_system_tree(grant, ctx.home) {
        // `/root/…` while `$HOME` is elsewhere is a home, not a system directory (nu17 N2).
        let what = if grant.starts_with("/root") || grant.starts_with("/home") {
            "in a home directory other than $HOME"
        } else {
            "a system directory"
        };
        return Err(format!("it would need {g} writable, {what}"));
    }
    // Another repository's metadata (or cordon directory) is never offered: `.git/hooks`,
    // `.git/config` and friends make git run code later, outside any sandbox, and the
    // command chooses where it fails (breaker, stop 18: a denied hook write in a repository
    // under /var/tmp offered `-w <repo>/.git/hooks`). The workspace's own stays offerable
    // (`git config user.name …` in the project), as a one-off the person approves.
    // cordon's own configuration, rules and session files decide later runs: a grant that
    // would make one writable is never offered (breaker, stop 18: a denied write to
    // `--config cfg.toml` offered `-w cfg.toml`).
    // Whether or not they lie in a writable root (attack pass 45, M4/M5: a `--config`,
    // `--rules` or `--approvals-from` file outside every root had no protected entry, and
    // `-w` on the file itself was offered). A directory grant that holds one keeps it
    // protected inside (nu23 Q1), and stays offerable.
    if let Some(f) = ctx
        .resolved
        .into_iter()
        .flat_map(|r| &r.cordon_files)
        .find(|f| grant.starts_with(f))
    {
        return Err(format!(
            "it would make {} writable, {OWN_FILE}",
            f.display()
        ));
    }
    if let Some(ResolvedFilesystem::Restricted { entries, .. }) =
        ctx.resolved.map(|r| &r.filesystem)
    {
        if let Some(e) = entries.iter().find(|e| {
            e.path.starts_with(grant)
                && matches!(&e.origin, EntryOrigin::Protected { reason }
                    if reason == cordon_policy::resolve::CONFIG_PROTECTION_REASON)
        }) {
            return Err(format!(
                "it would make {} writable, cordon configuration that decides later runs",
                e.path.display()
            ));
        }
    }
    // Judged against the workspace only: the cwd may have been reached through a symlink
    // an earlier run planted (`W/link -> /other/repo`), and then lies in another project
    // (breaker, stop 18).
    // The repository git uses in the workspace is the command's project, an enclosing one
    // (a `.cordon` package in a monorepo) included: its git dir is as offerable as the
    // workspace's own `.git` (new-user pass nu25, F4: every `git commit` there failed, and no
    // grant was offered).
    let in_own_git = own_repository(ctx).is_some_and(|(_, gitdir, common)| {
        grant.starts_with(&gitdir) || grant.starts_with(&common)
    });
    let in_workspace = workspace.is_some_and(|w| grant.starts_with(w)) || in_own_git;
    // A bare repository is a git dir by its layout, not by its name (nu23 Q5:
    // `remote.git/hooks`): looked for among the grant's nearest ancestors, by the
    // resolver's own (wide) rule.
    let bare = || {
        grant
            .ancestors()
            .skip(1)
            .take(4)
            .find(|d| cordon_policy::looks_like_git_dir(ctx.fs, d))
    };
    if let Some(name) = grant
        .components()
        .find_map(|c| {
            let n = c.as_os_str().to_string_lossy();
            (n == ".git" || n == ".cordon" || OTHER_VCS_DIRS.contains(&n.as_ref()))
                .then(|| n.into_owned())
        })
        .or_else(|| (!in_workspace).then(bare).flatten().map(|_| "git".into()))
    {
        // Inside the workspace only its own repository's `.git` is offerable; a nested
        // repository's is another repository's (fresh pass 189 #11: `-w nested/.git` was
        // offered after `git config` failed there).
        let own = if name == ".git" {
            in_own_git || workspace.is_some_and(|w| grant.starts_with(w.join(".git")))
        } else {
            in_workspace
        };
        if !own {
            return Err(format!(
                "it would need {g} writable, inside the {name} directory of another \
                 project (git or cordon would run or trust what is written there)"
            ));
        }
    }
    // A directory that is or holds another project's work tree (attack pass 153: `-w
    // multi` was offered for `multi/new`, and `multi/repoA/Makefile` became writable).
    if !in_workspace {
        if let Some(d) = project_at_or_below(grant, ctx) {
            return Err(format!(
                "it would need {g} writable, which holds another project ({}): its tools run \
                 what its work tree says",
                d.display()
            ));
        }
    }
    Ok(())
}

/// The first project (a directory with a non-empty `.git`, or another version-control
/// system's metadata) that `dir` is, or holds at most two levels down, other than the
/// workspace's own. Each directory is listed once and its listing says whether it is one;
/// at most [`PROJECT_SCAN_DIRS`] directories are listed, 256 entries each (this runs for
/// every denial record a run reports, and for `explain`).
fn project_at_or_below(dir: &Path, ctx: &ClassifyContext<'_>) -> Option<PathBuf> {
    let workspace = ctx.resolved.map(|r| r.workspace.as_path());
    let mut queue = std::collections::VecDeque::from([(dir.to_path_buf(), 0)]);
    let mut listed = 0;
    while let Some((d, depth)) = queue.pop_front() {
        if listed == PROJECT_SCAN_DIRS {
            break;
        }
        listed += 1;
        let entries = ctx.fs.list_dir_typed(&d, 256).unwrap_or_default();
        // An empty `.git` is cordon's own placeholder in a writable root, no project.
        let project = workspace != Some(d.as_path())
            && entries.iter().any(|(name, _)| {
                let n = name.to_string_lossy();
                (n == ".git" && !ctx.fs.is_empty_dir(&d.join(".git")))
                    || OTHER_VCS_DIRS.contains(&n.as_ref())
            });
        if project {
            return Some(d);
        }
        if depth < 2 {
            queue.extend(
                entries
                    .into_iter()
                    .filter(|(_, is_dir)| *is_dir)
                    .map(|(name, _)| (d.join(name), depth + 1)),
            );
        }
    }
    None
}

/// Most directories [`project_at_or_below`] lists for one grant.
const PROJECT_SCAN_DIRS: usize = 64;

/// Why a grant is, holds or lies in what another repository runs — its hooks directory or
/// `core.hooksPath`, a hook manager's config (`lefthook.yml`, `.pre-commit-config.yaml`,
/// husky's `.husky/`), a configuration code key's target — or `None` (attack pass 45, M1:
/// only a literal `.git` component was refused, and `-w other/.githooks/pre-commit` was
/// offered, which the host's next `git commit` there ran). The workspace's own repository
/// is the command's project: a grant there stays offerable, as a one-off the person
/// approves.
fn other_repository_code(grant: &Path, ctx: &ClassifyContext<'_>) -> Option<String> {
    let workspace = ctx.resolved.map(|r| r.workspace.as_path());
    if workspace.is_some_and(|w| grant.starts_with(w)) {
        return None;
    }
    let homes: Vec<PathBuf> = ctx.home.map(Path::to_path_buf).into_iter().collect();
    let (worktree, paths) = cordon_policy::repository_code_paths(ctx.fs, grant, &homes)?;
    if workspace.is_some_and(|w| w == worktree)
        || own_repository(ctx).is_some_and(|(w, _, _)| w == worktree)
    {
        return None;
    }
    paths
        .iter()
        .find(|(p, _)| p.starts_with(grant) || grant.starts_with(p))
        .map(|(p, why)| {
            format!(
                "which reaches {} in the repository at {} ({why}): git runs what is written \
                 there outside any sandbox",
                p.display(),
                worktree.display()
            )
        })
        // Anywhere in another project's work tree: its sources, `package.json`, `Makefile`
        // and scripts run when that project is built, tested or committed (attack pass 48,
        // N2). A bare repository has no work tree (a push's grant stays offerable).
        .or_else(|| {
            (grant.starts_with(&worktree) && !cordon_policy::looks_like_git_dir(ctx.fs, &worktree))
                .then(|| {
                    format!(
                        "inside the work tree of another project (the repository at {}): what \
                         is written there runs when that project is built, tested or committed",
                        worktree.display()
                    )
                })
        })
}

/// Other version-control systems' metadata directories: a project holding one is another
/// project, like a git repository (nu29 F3).
const OTHER_VCS_DIRS: &[&str] = &[
    ".hg",
    ".jj",
    ".svn",
    ".bzr",
    "_darcs",
    ".pijul",
    ".fslckout",
];

/// Why a grant is, holds or lies in the directory of cordon's own program, or `None`
/// (attack pass 48, N4: `-w target/release` was offered after a denial there, the retry
/// renamed a new file over `cordon`, and the host's next run was the command's program,
/// unconfined).
fn cordons_program(grant: &Path) -> Option<String> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    let dir = exe.parent()?;
    (grant.starts_with(dir) || dir.starts_with(grant)).then(|| {
        format!(
            "which reaches the directory of cordon's own program ({}): a replaced cordon \
             would run every later command unconfined",
            exe.display()
        )
    })
}

/// Why a grant outside the workspace is, holds or lies in configuration the person's
/// shell or git reads from wherever it is kept, or `None` (attack pass 46, N1): what the
/// global and system git configuration runs for every repository (its absolute
/// `core.hooksPath`, its includes such as `~/dotfiles/gitconfig`, `core.fsmonitor`), and
/// what a dotfile of the home leads to through a symlink (`~/.bashrc ->
/// ~/dotfiles/bashrc`): the hidden-directory rule sees only the link's own name.
fn home_configuration(grant: &Path, ctx: &ClassifyContext<'_>) -> Option<String> {
    if ctx
        .resolved
        .is_some_and(|r| grant.starts_with(&r.workspace))
    {
        return None;
    }
    let home = ctx.home?;
    let hit = |p: &Path| p.starts_with(grant) || grant.starts_with(p);
    let homes = [home.to_path_buf()];
    // The caller's git configuration variables (`GIT_CONFIG_GLOBAL` moves the global file).
    // `vars_os`: `std::env::vars()` panics on a variable that is not UTF-8 (attack pass
    // 179, F3: `FOO=$'x\xff' cordon explain /etc` aborted); such a git variable is one the
    // run itself refuses (`CommandRequest::unreadable_env`).
    let env: std::collections::BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k.starts_with("GIT_CONFIG") || k == "XDG_CONFIG_HOME")
        .collect();
    if let Some((p, why)) = cordon_policy::global_git_code_paths(ctx.fs, &homes, &env)
        .into_iter()
        .find(|(p, _)| hit(p) || hit(&cordon_policy::paths::canonicalize_lenient(ctx.fs, p)))
    {
        return Some(format!(
            "which reaches {} ({why}): git runs or reads it in every repository",
            p.display()
        ));
    }
    ctx.fs
        .list_dir(home, 512)
        .into_iter()
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .map(|n| home.join(n))
        .filter(|dot| ctx.fs.read_link(dot).is_some())
        .find_map(|dot| {
            let target = cordon_policy::paths::canonicalize_lenient(ctx.fs, &dot);
            hit(&target).then(|| {
                format!(
                    "where {} leads ({}, a dotfile of your home: your shell or a tool reads it)",
                    target.display(),
                    dot.display()
                )
            })
        })
}

/// The repository git uses in the workspace, `(work tree, git dir, common dir)`: its own
/// or an enclosing one ([`cordon_policy::repository_at`]).
fn own_repository(ctx: &ClassifyContext<'_>) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let ws = ctx.resolved.map(|r| r.workspace.as_path())?;
    let homes: Vec<PathBuf> = ctx.home.map(Path::to_path_buf).into_iter().collect();
    cordon_policy::repository_at(ctx.fs, ws, &homes)
}

/// How a refused grant on one of cordon's own files is worded ([`offerable_grant`]).
const OWN_FILE: &str = "cordon's own file that decides later runs";

/// Why a grant outside the workspace would let the command plant a program that runs later
/// outside any sandbox, or `None` (nu23 Q2: an approved `-w ~/bin` planted the `git` the
/// person's shell ran next; `-w ~/.cache/pre-commit/…/bin/black` the hook tool every
/// `git commit` runs). The command chooses where it fails, so it chooses the grant offered:
/// - a directory of the caller's `PATH`, one inside one, or one holding one;
/// - a path through a directory of programs ([`cordon_policy::caches::CODE_DIR_NAMES`]:
///   `~/go/bin`, `/srv/tool/lib`) or through a cache of programs
///   ([`cordon_policy::caches::PROGRAM_CACHE_NAMES`]: `~/.cache/pre-commit`);
/// - a directory holding a `bin`/`sbin`/`libexec` directory (`~/go`, a tool prefix).
///
/// Inside the workspace none of this applies: the project is the command's to write.
fn program_location(grant: &Path, ctx: &ClassifyContext<'_>) -> Option<String> {
    if ctx
        .resolved
        .is_some_and(|r| grant.starts_with(&r.workspace))
    {
        return None;
    }
    for d in ctx.path_dirs {
        let d = cordon_policy::paths::lexical_normalize(d, Path::new("/"));
        let real = cordon_policy::paths::canonicalize_lenient(ctx.fs, &d);
        for d in [d, real] {
            if d == grant {
                return Some("a directory of your PATH, where your shell finds programs".into());
            }
            if d.starts_with(grant) || grant.starts_with(&d) {
                return Some(format!(
                    "where {} of your PATH holds the programs your shell runs",
                    d.display()
                ));
            }
        }
    }
    // A file's own name says nothing (a hook file named `pre-commit`); its directories do.
    let dirs = if ctx.fs.kind(grant) == Some(FileKind::File) {
        grant.parent().unwrap_or(grant)
    } else {
        grant
    };
    if let Some(n) = dirs.components().find_map(|c| {
        let n = c.as_os_str().to_str()?;
        (cordon_policy::caches::CODE_DIR_NAMES.contains(&n)
            || n == "Scripts"
            || cordon_policy::caches::PROGRAM_CACHE_NAMES.contains(&n))
        .then_some(n)
    }) {
        return Some(format!(
            "through `{n}`, a directory of programs that later run outside any sandbox"
        ));
    }
    // A directory holding a cache of programs, directly or one level down (`~/.cache`
    // holds `pre-commit`, `node/corepack`: new-user pass nu25, F2).
    let held = |d: &Path| {
        cordon_policy::caches::PROGRAM_CACHE_NAMES
            .iter()
            .find(|n| ctx.fs.kind(&d.join(n)).is_some())
            .map(|n| d.join(n))
    };
    if let Some(p) = held(grant).or_else(|| {
        ctx.fs
            .list_dir(grant, 256)
            .into_iter()
            .map(|n| grant.join(n))
            .filter(|d| ctx.fs.kind(d) == Some(FileKind::Dir))
            .find_map(|d| held(&d))
    }) {
        return Some(format!(
            "which holds {}, a cache of programs that later run outside any sandbox",
            p.display()
        ));
    }
    ["bin", "sbin", "libexec"]
        .iter()
        .find(|n| ctx.fs.kind(&grant.join(n)).is_some())
        .map(|n| {
            format!("which holds `{n}`, a directory of programs that later run outside any sandbox")
        })
}

/// Why a run through `cordon serve` ended when the server went away (stopped, restarted,
/// killed) while its command ran: the `cancelled` signal the runner reports, and then the
/// outcome's hint (new-user passes nu15 N5, nu16 N6).
pub const LOST_SERVER: &str = "the cordon server ended while the command ran (stopped, \
     restarted or killed), and its commands end with it: run it again (it takes the cold \
     path when no server is running)";

/// What output the classification read, in words: stderr only from the CLI, whose stdout
/// goes to the caller unread (new-user pass nu16 N2: a path pytest printed on stdout was
/// said to be named nowhere).
fn seen_output(sig: &RunSignals) -> &'static str {
    if sig.stdout_seen {
        "the output"
    } else {
        "the command's stderr (cordon does not read its stdout)"
    }
}

type Inferred = (OutcomeClass, Confidence, Vec<Evidence>, Option<String>);

/// A path offered in a hint's command line (`-w PATH`, `mkdir PATH`), as one shell word:
/// a name the command chose (`wt $(touch x)`, `a;b`, a quote) pasted from the hint must be
/// that name, not shell code (attack pass 229 #2: `-w …/wt5 $(touch PWNED5)` ran `touch`
/// on the host when pasted).
fn grant_word(p: &Path, cwd: &Path) -> String {
    crate::request::shell_word(&display_path(p, cwd))
}

fn display_path(p: &Path, cwd: &Path) -> String {
    p.strip_prefix(cwd)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .map(|r| r.display().to_string())
        .unwrap_or_else(|| p.display().to_string())
}

/// The hint line for a write (or read) denial of `shown` by `rule`, with the grant to offer
/// (or why none is offered).
fn denial_hint(shown: &str, rule: &str, access: Access, grant: Result<&str, &str>) -> String {
    let offer = |what: &str| match grant {
        Ok(g) => format!("{what}: {ALLOW_WRITE_ONCE}{g}"),
        // cordon's own files cannot be granted at all (attack pass 45, M5).
        Err(why) if why.contains(OWN_FILE) => {
            format!("{what}; cordon offers no per-command widening: {why}; edit it outside cordon")
        }
        // No grant lifts the rule: `-w` is not offered next to it (new-user pass nu63:
        // "no per-command grant can lift this rule (-w PATH if you are sure …)").
        Err(why) if why.starts_with("no per-command grant") => {
            format!("{what}; cordon offers no per-command widening: {why}")
        }
        // One clause per step (new-user pass 146: the dashes inside parentheses read as the
        // hint arguing with itself), the way `cordon explain` puts it.
        // No path is filled in: this one may come from the program's output alone, which
        // must not steer a widening (issue 9 re-test b).
        // The tool must be pointed there too (new-user pass 155, #5: `make install`, `npm
        // install -g`, `cargo install` were told to grant a new directory, which changes
        // nothing unless the tool writes into it).
        Err(why) => format!(
            "{what}; cordon offers no per-command widening: {why}; to write there anyway, \
             make a directory of your own (`mkdir DIR/NAME`) {OWN_DIRECTORY_GRANT} and point \
             the tool at it (an install prefix or root option such as `make PREFIX=DIR/NAME`, \
             `npm --prefix`, `cargo install --root`), or change the profile"
        ),
    };
    if access == Access::Read || rule.starts_with("denied") {
        // No grant is offered in the hint for a hidden path; how the person can open it
        // depends on where the deny came from (new-user pass nu27, F5: "cannot be opened
        // per command" was false, `--with` does, and a `--deny-read` is dropped, not a
        // profile edit; new-user pass 176, #2: "no per-command widening" contradicted the
        // `--with` that `cordon explain` then offered for a built-in credential store).
        let how = if rule.contains("--deny-read") {
            "drop that --deny-read if it must be readable".to_string()
        } else {
            format!(
                "if it must be readable, `cordon explain {shown}` says which profile entry \
                 hides it and how to open it (a --with read entry for the path opens it \
                 for one command, a built-in credential store or a directory your profile \
                 denies alike; a deny on that very path wins over it)"
            )
        };
        // `denied (deny-read …)` reads "hidden (denied (…))" (new-user pass 168, 7).
        let by = rule
            .strip_prefix("denied (")
            .and_then(|r| r.strip_suffix(')'))
            .map_or_else(|| rule.to_string(), |r| format!("by {r}"));
        format!(
            "{shown} is hidden from this command ({by}); cordon offers no grant for it here: \
             {how}"
        )
    } else if let Some(why) = rule.strip_prefix("protected (R-P3): ") {
        offer(&format!("{shown} is protected (R-P3, {why})"))
    } else if rule.starts_with(cordon_sandbox::denials::HARD_LINK_RULE) {
        // No grant lifts it: the other names may be anywhere (attack pass 47, N1).
        // With the file's own name in the fix (new-user pass nu28, F7).
        let fix = format!("cp {shown} {shown}.new && mv {shown}.new {shown}");
        // Its metadata (chmod, touch, setfattr) or its bytes (attack pass 48, N3).
        let what = if rule.contains(cordon_sandbox::denials::HARD_LINK_METADATA) {
            "changed"
        } else {
            "written"
        };
        format!(
            "{shown} cannot be {what} in place: it is {}",
            rule.replace("cp F F.new && mv F.new F", &fix)
        )
    } else if let Some(why) = rule.strip_prefix(cordon_sandbox::denials::HOST_METADATA_RULE) {
        format!(
            "the sandbox refused to change the mode, owner, times or attributes of {shown}: {}",
            why.trim_start_matches(": ")
        )
    } else if let Some(why) = rule.strip_prefix(cordon_sandbox::denials::UNCHECKED_RULE) {
        // A process init may not inspect (attack pass 49, N2): nothing to grant.
        let why = why.trim_start_matches(": ");
        let why = why.split("; ").next().unwrap_or(why);
        format!(
            "cordon could not check a write to {shown} for other hard links ({why}), and \
             refused it; no grant lifts this: the program must name the file where cordon \
             can follow it (a path in ordinary memory, an existing /proc name)"
        )
    } else if rule.starts_with("pinned") {
        format!(
            "{shown} is pinned by cordon (R-P3) so protected paths below it stay protected; it \
             cannot be renamed or removed inside the sandbox: do that outside cordon (e.g. \
             `git worktree remove` or `git worktree prune` for a linked worktree's admin dir)"
        )
    } else {
        offer(&format!("{shown} is read-only for this command ({rule})"))
    }
}

/// Whether the output names `path`: absolute, relative to the cwd (also as `../x`), or by
/// its file name. A lock file (`X.lock`) is also named by the file it locks, spelled as a
/// path (`could not lock config file .git/modules/libsub/config` is about
/// `.git/modules/libsub/config.lock`: hints finding 1 said the output did not name it).
fn output_names(tail: &str, path: &Path, cwd: &Path) -> bool {
    let spelled = |p: &Path| {
        let abs = p.to_string_lossy();
        let rel = display_path(p, cwd);
        tail.contains(abs.as_ref())
            || (!rel.is_empty() && tail.contains(&rel))
            || tail
                .lines()
                .flat_map(candidate_paths)
                .any(|c| cordon_policy::paths::lexical_normalize(Path::new(&c), cwd) == p)
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let locked = locked_file(path);
    spelled(path)
        || (name.len() >= 2 && tail.contains(&name))
        || locked.is_some_and(|l| spelled(&l))
}

/// The file a lock file `X.lock` locks (`X`), or `None` for any other name.
fn locked_file(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    name.strip_suffix(".lock")
        .filter(|n| !n.is_empty())
        .map(|n| path.with_file_name(n))
}

/// Whether a path the output names (as [`candidate_paths`] finds them, relative ones
/// taken in the cwd) leads to `path` through symlinks: the record names the file the
/// kernel reached, the command the name it used (attack pass 210 #8: `touch out/x`, with
/// `out` a symlink out of the project, was "not named" and classed `command-failed`).
fn output_reaches(tail: &str, path: &Path, ctx: &ClassifyContext<'_>) -> bool {
    tail.lines().flat_map(candidate_paths).any(|c| {
        let abs = cordon_policy::paths::lexical_normalize(Path::new(&c), ctx.cwd);
        abs != path && cordon_policy::paths::canonicalize_lenient(ctx.fs, &abs) == path
    })
}

/// The directory a refused `mkdir` would have made beside the project, as a grant of its
/// own, when its parent (the smallest grant, `parent`) holds the workspace and so cannot be
/// offered: `-w` of a path that does not exist makes that empty directory on the host
/// before the run and grants only it. `git worktree add ../wt` (layouts pass: cordon
/// offered nothing, while `-w ../wt` works). Only there: elsewhere the command could steer
/// the person into creating a directory a later program trusts (`mkdir ~/bin`, which a
/// login shell puts on `PATH`), so the home directory itself never counts as that parent.
/// A parent above the home does (new-user pass nu15 N8: `HOME=/ci/home` with the project
/// in `/ci/proj` was offered nothing for `git worktree add ../wt`); the directory itself
/// must still pass [`offerable_grant`]. `None` unless the call was a `mkdir`, the directory is still absent, is a child
/// of `parent`, and passes [`offerable_grant`] itself.
fn new_directory_grant(
    rec: &cordon_sandbox::denials::DenialRecord,
    parent: &Path,
    ctx: &ClassifyContext<'_>,
) -> Option<PathBuf> {
    let workspace = ctx.resolved.map(|r| r.workspace.as_path());
    let beside_project = [Some(ctx.cwd), workspace]
        .into_iter()
        .flatten()
        .any(|w| w.starts_with(parent) && w != parent);
    (matches!(rec.syscall.as_str(), "mkdir" | "mkdirat")
        && beside_project
        && ctx.home != Some(parent)
        && rec.path.parent() == Some(parent)
        && ctx.fs.kind(&rec.path).is_none()
        && offerable_grant(&rec.path, ctx).is_ok())
    .then(|| rec.path.clone())
}

/// The git dir (a bare repository: `HEAD`, `objects/`, `refs/`) that holds the grant `g`
/// (`g` itself or an ancestor, outside the workspace), when it is offerable as a whole: a
/// push to a local bare repository writes its `objects/`, `refs/` and `HEAD`, and the
/// narrowest grant took three runs, one per directory (new-user pass nu16 N5). Granted as
/// a writable root, its hooks and config stay protected (R-P3).
fn enclosing_git_dir(g: &Path, ctx: &ClassifyContext<'_>) -> Option<PathBuf> {
    let workspace = ctx.resolved.map(|r| r.workspace.as_path());
    g.ancestors()
        .take(4)
        .find(|d| {
            ctx.fs.kind(&d.join("HEAD")) == Some(FileKind::File)
                && ctx.fs.kind(&d.join("objects")) == Some(FileKind::Dir)
                && ctx.fs.kind(&d.join("refs")) == Some(FileKind::Dir)
        })
        .filter(|d| workspace.is_none_or(|w| !w.starts_with(d) && !d.starts_with(w)))
        .filter(|d| offerable_grant(d, ctx).is_ok())
        .map(Path::to_path_buf)
}

/// Why the refused write `path`, outside the command's project, may be a hook another
/// repository runs, or `None`: its name is a git hook's ([`cordon_policy::gitconfig::GIT_HOOK_NAMES`]).
/// Every repository's `core.hooksPath` cannot be found, and one may name any directory
/// (new-user pass nu26, F2: `-w /var/tmp/hd` was offered for `hd/pre-commit`, which a
/// repository elsewhere ran outside any sandbox). The project's own hooks stay offerable.
fn hook_file(path: &Path, ctx: &ClassifyContext<'_>) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    if !cordon_policy::gitconfig::GIT_HOOK_NAMES.contains(&name) {
        return None;
    }
    let in_workspace = ctx.resolved.is_some_and(|r| path.starts_with(&r.workspace))
        || own_repository(ctx).is_some_and(|(_, gitdir, common)| {
            path.starts_with(&gitdir) || path.starts_with(&common)
        });
    (!in_workspace).then(|| {
        format!(
            "where {} would be a git hook (`{name}`): a repository whose core.hooksPath names \
             that directory runs it outside any sandbox",
            path.display()
        )
    })
}

/// The grant offered for a write to `path` whose smallest grant is `grant`
/// ([`smallest_grant`]), or why none is: lifted to the bare repository holding it
/// ([`enclosing_git_dir`], not for a `protected` path), then [`offerable_grant`], and
/// never where `path` would be another repository's hook ([`hook_file`]). What a run
/// offers after a denial and what `cordon explain` suggests ([`offerable_here`]).
fn grant_offer(
    path: &Path,
    grant: &Path,
    protected: bool,
    ctx: &ClassifyContext<'_>,
) -> Result<PathBuf, String> {
    // A file with several names (hard links) is never written in place in the sandbox,
    // whatever is granted: the copy-and-rename that the refusal suggests needs the directory
    // holding it (attack pass 153: `-w FILE` was offered, and the retry denied again).
    let linked_dir = std::fs::symlink_metadata(grant)
        .ok()
        .filter(|m| {
            use std::os::unix::fs::MetadataExt;
            m.is_file() && m.nlink() > 1
        })
        .and_then(|_| grant.parent().map(Path::to_path_buf));
    let grant = linked_dir.as_deref().unwrap_or(grant);
    // git's dumb-HTTP files in `.git/info` (written by `git gc`/`repack`): the README's
    // advice is `git update-server-info` outside cordon, not `-w .git/info`, whose
    // `attributes` select filter drivers that run code (new-user pass 211, #9).
    if dumb_http_info_file(path) {
        return Err(format!(
            "{} stays read-only (its `attributes` select filter drivers that run code); it \
             only serves the repository to dumb-HTTP clones: run `git update-server-info` \
             outside cordon if you serve the repository that way",
            path.parent().unwrap_or(path).display()
        ));
    }
    let repository = (!protected)
        .then(|| enclosing_git_dir(grant, ctx))
        .flatten();
    // A child of the repository that stays protected inside it (R-P3: its config, hooks,
    // info/): granting the repository would not let the write through (new-user pass
    // 152: `-w bare.git` was offered for `bare.git/config`, and the retry was denied).
    if let Some(d) = &repository {
        let first = path
            .strip_prefix(d)
            .ok()
            .and_then(|r| r.components().next());
        if let Some(why) =
            first.and_then(|c| cordon_policy::git_dir_protected(&c.as_os_str().to_string_lossy()))
        {
            return Err(format!(
                "it would need {} writable, and {} stays read-only inside it whatever is \
                 granted ({why}, R-P3)",
                d.display(),
                path.display()
            ));
        }
    }
    let lifted = repository.unwrap_or_else(|| grant.to_path_buf());
    offerable_grant(&lifted, ctx)?;
    if let Some(why) = hook_file(path, ctx) {
        return Err(format!(
            "it would need {} writable, {why}",
            lifted.display()
        ));
    }
    Ok(lifted)
}

/// The grant cordon offers for the denial record `rec` — the `-w` its hint names, after
/// the checks of [`grant_offer`] — or `None` when it offers none: the one value a report
/// shows as the record's `grant` and, for the record named as the cause, as the outcome's.
pub fn offered_grant(
    rec: &cordon_sandbox::denials::DenialRecord,
    ctx: &ClassifyContext<'_>,
) -> Option<PathBuf> {
    record_hint(rec, ctx).1
}

/// Step 7: the kernel-side records (module docs).
/// The denial hint for the refused write `rec`: what was refused and the per-command
/// grant that lifts it, or why none can; with that grant, if any.
fn record_hint(
    rec: &cordon_sandbox::denials::DenialRecord,
    ctx: &ClassifyContext<'_>,
) -> (String, Option<PathBuf>) {
    let (hint, grant, _) = record_hint_with(rec, ctx);
    (hint, grant)
}

/// A git config file written by git's lock protocol — `D/config.lock` created in the git
/// dir `D`, then renamed over `D/config` — where neither is writable as things stand and
/// cordon does not edit that config as a private copy (a submodule's git dir under
/// `.git/modules/`, a `--separate-git-dir`): the directory and the file, both of which the
/// fix needs (hints finding 1: `-w D` then failed with EBUSY on the protected `config` and
/// offered `-w D/config`, which then failed creating the lock and offered `-w D`). `None`
/// for any other path, and for the workspace's own `.git/config` (a private copy merged
/// back: README "Git config edits").
fn lock_protocol_grants(path: &Path, ctx: &ClassifyContext<'_>) -> Option<(PathBuf, PathBuf)> {
    let name = path.file_name()?.to_str()?;
    let target = name.strip_suffix(".lock").unwrap_or(name);
    if !matches!(target, "config" | "config.worktree") {
        return None;
    }
    let dir = path.parent()?;
    if ctx.fs.kind(&dir.join("HEAD")) != Some(FileKind::File) {
        return None;
    }
    let resolved = ctx.resolved?;
    let target = dir.join(target);
    if cordon_policy::gitconfig::brokered_configs(resolved).contains(&target)
        || resolved.filesystem.access_for(ctx.fs, &target).access == Access::Write
    {
        return None;
    }
    Some((dir.to_path_buf(), target))
}

/// The symlink inside a writable root through which the command reached the denied `path`
/// — a path it named ([`ClassifyContext::words`]) leads there through it — with the
/// spelling it used: the rule that refuses `-w out` for `out -> /elsewhere`
/// ([`cordon_policy::ResolvedFilesystem::redirected_write`]). A command that plants
/// `out -> /target` and writes `out/f` would otherwise choose which outside directory the
/// hint, and the retry an asking mode offers, proposes (hints finding 8).
fn planted_link(path: &Path, ctx: &ClassifyContext<'_>) -> Option<(PathBuf, PathBuf)> {
    let r = ctx.resolved?;
    ctx.words.iter().find_map(|w| {
        if w.is_empty() {
            return None;
        }
        let abs = cordon_policy::paths::lexical_normalize(Path::new(w), ctx.cwd);
        let real = cordon_policy::paths::canonicalize_lenient(ctx.fs, &abs);
        if real == abs || !(path == real || path.starts_with(&real)) {
            return None;
        }
        let link = r.filesystem.redirected_write(ctx.fs, &abs)?;
        Some((link, abs))
    })
}

/// [`record_hint`], with the grants the fix needs together with the one offered
/// ([`lock_protocol_grants`]).
fn record_hint_with(
    rec: &cordon_sandbox::denials::DenialRecord,
    ctx: &ClassifyContext<'_>,
) -> (String, Option<PathBuf>, Vec<PathBuf>) {
    let shown = display_path(&rec.path, ctx.cwd);
    if let Some((link, spelled)) = planted_link(&rec.path, ctx) {
        let target = cordon_policy::paths::canonicalize_lenient(ctx.fs, &link);
        return (
            format!(
                "{shown} (named {}) is reached through the symlink {} inside a writable root, \
                 which leads outside the writable roots (to {}); cordon offers no grant \
                 through a link a command could have planted (a -w spelled through it is \
                 refused for the same reason): check where the link points; if you mean it, \
                 name that real path yourself with -w, or write there outside cordon",
                display_path(&spelled, ctx.cwd),
                display_path(&link, ctx.cwd),
                target.display()
            ),
            None,
            Vec::new(),
        );
    }
    // A protected path the command tried to remove (new-user pass 234 #6: a Python
    // `shutil.rmtree(".git")` removed the history and the note then offered `-w
    // .git/modules`, a grant that helps the deletion finish): no grant is offered for it.
    if matches!(rec.syscall.as_str(), "unlink" | "unlinkat" | "rmdir")
        && rec.rule.starts_with("protected")
    {
        return (no_grant_for(&shown, "remove", &rec.rule), None, Vec::new());
    }
    if let Some((dir, target)) = lock_protocol_grants(&rec.path, ctx) {
        let dir_ok = ctx.resolved.is_some_and(|r| {
            r.filesystem
                .access_for(ctx.fs, &dir.join("config.lock"))
                .access
                == Access::Write
        });
        // Each as offerable as any other grant (never the home, a system tree, …). The
        // directory is named even when this run could write it (by a `-w` given for it):
        // a person who replaces that `-w` with the one offered loops back (finding 1).
        let offers = (
            match grant_offer(&dir, &dir, true, ctx) {
                Ok(d) => Ok(Some(d)),
                Err(_) if dir_ok => Ok(None),
                Err(e) => Err(e),
            },
            grant_offer(&target, &target, true, ctx),
        );
        if let (Ok(d), Ok(t)) = offers {
            let name = target
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let (grant, also) = match d {
                Some(d) => (d, vec![t]),
                None => (t, Vec::new()),
            };
            let mut offered = grant_word(&grant, ctx.cwd);
            for a in &also {
                offered.push_str(ALSO_WRITE);
                offered.push_str(&grant_word(a, ctx.cwd));
            }
            let mut hint = denial_hint(&shown, &rec.rule, Access::Write, Ok(&offered));
            hint.push_str(&format!(
                " (git writes {name}.lock in {} and renames it over {name}: the directory \
                 and the file are both needed)",
                display_path(&dir, ctx.cwd)
            ));
            return (hint, Some(grant), also);
        }
    }
    // A rename of the protected entry itself, other than git's own lock protocol above
    // (moved away it is gone; one renamed over it meets its mount, which no grant of it
    // alone lifts): no grant either (attack pass 235 #1: `mv .git/config .git/c2` was
    // offered `-w .git/config`).
    if rec.syscall.starts_with("rename")
        && rec.rule.starts_with("protected")
        && ctx
            .resolved
            .is_some_and(|r| r.filesystem.protected().iter().any(|e| e.path == rec.path))
    {
        return (
            no_grant_for(&shown, "rename or replace", &rec.rule),
            None,
            Vec::new(),
        );
    }
    // A protected path (R-P3: hooks, config) stays protected below any grant, so it is never
    // lifted to its repository: that grant would not lift it, and may be in effect already
    // (nu23 Q5: `-w remote.git` offered again for `remote.git/hooks/post-receive`).
    let protected = rec.rule.starts_with("protected");
    let mut made_here = false;
    let offered: Result<PathBuf, String> = match &rec.grant {
        Some(g) => grant_offer(&rec.path, g, protected, ctx).or_else(|why| {
            let own = new_directory_grant(rec, g, ctx).ok_or(why)?;
            made_here = true;
            Ok(own)
        }),
        None => Err("no per-command grant can lift this rule".into()),
    };
    let shown_grant = offered.as_ref().map(|g| grant_word(g, ctx.cwd));
    if let Some(h) = stripped_copy_hint(&rec.path, &shown, ctx) {
        return (h, None, Vec::new());
    }
    if let Some((h, grant)) = file_grant_hint(rec, &shown, ctx) {
        return (h, grant, Vec::new());
    }
    let mut hint = denial_hint(
        &shown,
        &rec.rule,
        Access::Write,
        shown_grant.as_deref().map_err(|e| e.as_str()),
    );
    // `-w` of a missing path makes it a directory before the run, so the retried `mkdir`
    // finds it there (new-user pass 155, #2: `mkdir ../outside` was offered `-w
    // ../outside`, and the retry failed with "File exists").
    if made_here {
        let word = crate::request::shell_word(&shown);
        hint.push_str(&format!(
            " (cordon makes {shown} before the run, so a plain `mkdir {word}` then fails \
             with \"File exists\": use `mkdir -p`, or let the tool create what goes inside it)"
        ));
    }
    (hint, offered.ok(), Vec::new())
}

/// The hint for a write refused because a file is granted on its own (`-w FILE`, bind-mounted
/// on itself): a rename over it or its removal (the record's rule is
/// [`cordon_sandbox::denials::FILE_GRANT_RULE`]), or a new file made beside it in a
/// directory that is not writable (the temporary file of `sed -i`, an editor's or
/// formatter's new copy). Either way the tool writes a new file and renames it over, which
/// needs the directory: offered when it can be (never a directory holding the workspace,
/// the home, …); otherwise the hint says to write the file in place or outside cordon.
/// New-user pass 234 #2: `sed -i` on a `-w FILE` failed with EBUSY and nothing said, and a
/// rename over it was told "no per-command grant can lift this rule".
fn file_grant_hint(
    rec: &cordon_sandbox::denials::DenialRecord,
    shown: &str,
    ctx: &ClassifyContext<'_>,
) -> Option<(String, Option<PathBuf>)> {
    let r = ctx.resolved?;
    let file = if rec.rule == cordon_sandbox::denials::FILE_GRANT_RULE {
        rec.path.clone()
    } else {
        // A new name beside a file granted on its own, in a directory not writable.
        let dir = rec.path.parent()?;
        if r.filesystem.access_for(ctx.fs, &rec.path).access == Access::Write {
            return None;
        }
        r.filesystem
            .writable_roots()
            .into_iter()
            .map(|e| e.path.clone())
            .find(|p| {
                p.parent() == Some(dir) && *p != rec.path && ctx.fs.kind(p) == Some(FileKind::File)
            })?
    };
    let dir = file.parent()?.to_path_buf();
    let file_shown = display_path(&file, ctx.cwd);
    let what = if file == rec.path {
        format!(
            "{shown} is granted on its own (-w {})",
            grant_word(&file, ctx.cwd)
        )
    } else {
        format!(
            "{shown} is a new file beside {file_shown}, which is granted on its own (-w {})",
            grant_word(&file, ctx.cwd)
        )
    };
    let base = format!(
        "{what}: a file grant lets a command write that file in place only, not replace it; \
         a tool that writes a new file and renames it over (sed -i, many editors and \
         formatters) needs its directory writable"
    );
    match grant_offer(&dir, &dir, false, ctx) {
        Ok(g) => {
            let word = grant_word(&g, ctx.cwd);
            Some((format!("{base}: {ALLOW_WRITE_ONCE}{word} instead"), Some(g)))
        }
        Err(why) => Some((
            format!(
                "{base}, and cordon offers no per-command widening of it: {why}; write the \
                 file in place (e.g. `sed … {f} > /tmp/x && cat /tmp/x > {f}`), or edit it \
                 outside cordon",
                f = grant_word(&file, ctx.cwd)
            ),
            None,
        )),
    }
}

/// The hint for a protected path the command tried to `act` on (remove, rename or
/// replace), which no grant is offered for.
fn no_grant_for(shown: &str, act: &str, rule: &str) -> String {
    format!(
        "the command tried to {act} {shown}, which is {rule}; cordon offers no grant that \
         lets a command {act} it: do it outside cordon if you mean to"
    )
}

/// The hint for a write to a file the command sees as a stripped copy (`~/.gitconfig`
/// without its credentials: [`ResolvedProfile::stripped`]), which no grant makes
/// writable: it is not hidden, so the hidden-path hint would be wrong (new-user pass nu62:
/// `git config --global user.email` was told the readable file was hidden).
fn stripped_copy_hint(path: &Path, shown: &str, ctx: &ClassifyContext<'_>) -> Option<String> {
    let r = ctx.resolved?;
    // Or its lock file (`git config --global` takes `~/.gitconfig.lock` first), which
    // counts as named when the output names the file it locks ([`output_names`]).
    let locked = locked_file(path);
    r.stripped
        .iter()
        .find(|f| f.path == path || locked.as_deref() == Some(f.path.as_path()))?;
    let shown = match &locked {
        Some(l) if r.stripped.iter().any(|f| &f.path == l) => display_path(l, ctx.cwd),
        _ => shown.to_string(),
    };
    Some(format!(
        "{shown} is shown to this command as a read-only copy with its credentials removed; \
         no grant makes it writable: change it outside cordon (for git settings, `git config \
         --global …` in your own shell, or `git config` without --global for this \
         repository)"
    ))
}

fn from_records(
    d: &cordon_sandbox::denials::DenialReport,
    sig: &RunSignals,
    ctx: &ClassifyContext<'_>,
) -> Option<Inferred> {
    // What a cordon run inside the sandbox said about itself names no path the command
    // wrote (a nested run's "cannot record … writable-roots" made its refused
    // `writable-roots.lock` the cause once a lock counted as named by its file's name).
    let own: String = sig
        .stderr_tail
        .lines()
        .filter(|l| !cordon_line(l))
        .map(|l| format!("{l}\n"))
        .collect();
    let tail = &own;
    // Path writes only: network attempts are judged with the network (`from_output`); and
    // not git's own freshening of a hard-linked object, which it shrugs off.
    let mut writes = d
        .records
        .iter()
        .filter(|r| !r.is_network() && !git_object_freshen(r));
    let (rec, confidence) = match writes
        .clone()
        .rev()
        .find(|r| output_names(tail, &r.path, ctx.cwd) || output_reaches(tail, &r.path, ctx))
    {
        Some(r) => (r, Confidence::High),
        // An access error that names no path: the last refused write may be it. One that
        // names another path is about that path, not about a record the output never
        // mentions (new-user pass nu21, K2: `cat ~/.ssh/key` failed, bash then wrote the
        // hidden `~/.bash_history` on exit, and that write was named as the cause).
        None => {
            let last = writes.next_back()?;
            // A refused write in place to a hard-linked file is reached by another name
            // than the record's (a symlink, `/proc/self/fd/N`: attack pass 48, N1): any
            // access error may be about it.
            // So is one the check could not look at (attack pass 49: a non-dumpable
            // process, whose path cordon could not even read).
            let linked = last
                .rule
                .starts_with(cordon_sandbox::denials::HARD_LINK_RULE)
                || last
                    .rule
                    .starts_with(cordon_sandbox::denials::UNCHECKED_RULE)
                || last
                    .rule
                    .starts_with(cordon_sandbox::denials::HOST_METADATA_RULE);
            let related = |l: &str| {
                let named = candidate_paths(l);
                linked
                    || named.is_empty()
                    || named.iter().any(|c| {
                        let abs = cordon_policy::paths::lexical_normalize(Path::new(c), ctx.cwd);
                        abs.starts_with(&last.path) || last.path.starts_with(&abs)
                    })
            };
            if !tail.lines().any(|l| {
                let low = l.to_ascii_lowercase();
                ACCESS_ERRORS.iter().any(|(m, _)| low.contains(m)) && related(l)
            }) {
                return None;
            }
            (last, Confidence::Medium)
        }
    };
    // A refusal in a git dir whose grant alone would fail next on git's config lock there
    // (`index.lock` named by git, with `config.lock` refused earlier in the same
    // `submodule update`): the config lock's record is the cause to name, with both
    // grants (hints finding 1: `-w D` was offered, then `-w D/config`, then `-w D`).
    let first = record_hint_with(rec, ctx);
    let config_lock = match &first.1 {
        Some(g) if lock_protocol_grants(&rec.path, ctx).is_none() => d
            .records
            .iter()
            .filter(|r| !r.is_network())
            .find(|r| lock_protocol_grants(&r.path, ctx).is_some_and(|(d, _)| d == *g)),
        _ => None,
    };
    let (rec, (hint, offered, also_grant)) = match config_lock {
        Some(r) => (r, record_hint_with(r, ctx)),
        None => (rec, first),
    };
    let mut evidence = vec![ev(
        EvidenceSource::Helper,
        format!(
            "denial record (seccomp user notification, on the helper's channel): {} {} -> {} \
             ({}){}",
            rec.syscall,
            rec.path.display(),
            rec.errno,
            rec.rule,
            if d.total > 1 {
                format!("; {} refused call(s) in all", d.total)
            } else {
                String::new()
            }
        ),
    )];
    if let Some(line) = tail
        .lines()
        .find(|l| output_names(l, &rec.path, ctx.cwd) || output_reaches(l, &rec.path, ctx))
    {
        evidence.push(ev(
            EvidenceSource::ProgramOutput,
            format!("stderr: {}", line.trim()),
        ));
    }
    Some((
        OutcomeClass::SandboxDenied {
            path: Some(rec.path.clone()),
            syscall: Some(rec.syscall.clone()),
            rule: rec.rule.clone(),
            access: Some(Access::Write),
            grant: offered,
            also_grant,
        },
        confidence,
        evidence,
        Some(hint),
    ))
}

/// How the lines start that a `cordon run` inside the sandbox prints when it refuses to
/// start its command (exit 125): no sandbox for it (R-S4, `refusing to run unconfined:`),
/// or its own state it cannot keep inside a read-only home (`cannot record this run's
/// writable roots …`). After any indentation.
const NESTED_REFUSALS: [&str; 2] = ["cordon: refusing ", "cordon: cannot "];

/// Whether `line` is one a cordon run inside the sandbox wrote about itself (`cordon: …`,
/// `cordon serve: …`): cordon's words, not the command's, so never evidence of what the
/// command touched (stop 39 review: a nested run's "deny-read of ~/.npmrc needs a
/// mount namespace" made the outer run say the command was denied `~/.npmrc`).
fn cordon_line(line: &str) -> bool {
    let l = line.trim_start();
    l.starts_with("cordon: ") || l.starts_with("cordon serve: ")
}

/// A cordon run inside the sandbox that refused to start its command (exit 125 and its
/// refusal line, [`NESTED_REFUSALS`]): its sandbox needs what this one forbids (new
/// namespaces, refused by the seccomp filter, R-L3), or its records need a home this one
/// keeps read-only. Said as such, with the ways on, instead of reading a path out of its
/// message.
fn nested_refusal(code: Option<i32>, lines: &[&str]) -> Option<Inferred> {
    if code != Some(crate::drive::EXIT_CORDON) {
        return None;
    }
    let line = lines.iter().rev().find(|l| {
        let l = l.trim_start();
        NESTED_REFUSALS.iter().any(|p| l.starts_with(p))
    })?;
    let namespaces = line.contains("namespace");
    let what = if namespaces {
        "its own sandbox needs new namespaces, which this sandbox's seccomp filter refuses"
    } else {
        "it needs what this sandbox does not give (its own records in a home that is \
         read-only here, or its own sandbox)"
    };
    let hint = format!(
        "a cordon run inside this sandbox refused to start its command: {what}. Run that \
         command without the inner `cordon run` (it is confined by this sandbox already), \
         give the inner run `--sandbox forbid` (it then runs unsandboxed by itself, still \
         inside this sandbox), or run the inner cordon outside cordon"
    );
    Some((
        OutcomeClass::SandboxDenied {
            path: None,
            syscall: namespaces.then(|| "unshare".to_string()),
            rule: if namespaces {
                "seccomp (R-L3): a nested cordon cannot make its own sandbox".into()
            } else {
                "read-only: a nested cordon cannot keep its own records here".into()
            },
            access: None,
            grant: None,
            also_grant: Vec::new(),
        },
        Confidence::Medium,
        vec![ev(
            EvidenceSource::ProgramOutput,
            format!("stderr: {}", line.trim()),
        )],
        Some(hint),
    ))
}

fn from_output(sig: &RunSignals, ctx: &ClassifyContext<'_>) -> Option<Inferred> {
    // What a nested cordon said about itself is not the command's output (its refusal to
    // start was judged before the denial records, in [`classify`]).
    let lines: Vec<&str> = sig
        .stderr_tail
        .lines()
        .filter(|l| !cordon_line(l))
        .collect();
    // Filesystem: an access error naming a path the resolver denies. With kernel-side
    // records, step 7 decided every write; reads are never recorded, so a read of a path
    // the profile hides is still named (new-user trial: `cat ~/.ssh/id_rsa` said only
    // "Permission denied"). A hidden path offers no widening, whatever the output says.
    let records_kept = sig.denials.is_some();
    if let Some(resolved) = ctx.resolved {
        for line in &lines {
            let lower = line.to_ascii_lowercase();
            // A path the profile hides reads as absent where the sandbox does not mount it
            // (`filesystem.default = "deny"`: new-user pass 241 #3, `cat /root/.bashrc`
            // was a plain command-failed with no hint). Only a hidden path the host has
            // counts: the program's "not found" of a path that is not there is its own.
            let absent = lower.contains("no such file or directory");
            // A tool that checks a directory before writing it (`access(W_OK)`) leaves no
            // kernel record of a refused write: its own words count with records kept.
            let checked_first =
                lower.contains("isn't writable") || lower.contains("is not writable");
            let found = ACCESS_ERRORS.iter().find(|(m, _)| lower.contains(m));
            let want = match found {
                Some((_, want)) => *want,
                None if absent => Some(Access::Read),
                None => continue,
            };
            // "Permission denied" alone does not say read or write: a read-only path counts
            // only when the line says the program was writing.
            let want = match want {
                Some(w) => Some(w),
                None if WRITE_WORDS.iter().any(|w| lower.contains(w)) => Some(Access::Write),
                None => Some(Access::Read),
            };
            for cand in candidate_paths(line) {
                let p = Path::new(&cand);
                let abs = cordon_policy::paths::lexical_normalize(p, ctx.cwd);
                if found.is_none() && ctx.fs.kind(&abs).is_none() {
                    continue;
                }
                if let Some((rule, access)) =
                    resolver_denies(&resolved.filesystem, ctx.fs, &abs, want)
                        .filter(|(rule, _)| {
                            !records_kept || checked_first || rule.starts_with("denied")
                        })
                        .filter(|(_, access)| found.is_some() || *access == Access::Read)
                {
                    // Without a kernel record, the offered widening stays inside the
                    // command's cwd and workspace: output alone must not steer it to `~`.
                    let g = smallest_grant(ctx.fs, &abs);
                    let grant: Result<PathBuf, String> =
                        if g.starts_with(ctx.cwd) || g.starts_with(&resolved.workspace) {
                            offerable_grant(&g, ctx).map(|()| g)
                        } else {
                            Err(
                                "it is outside the command's cwd and workspace and only the \
                                 program's output names it"
                                    .into(),
                            )
                        };
                    let shown = display_path(&abs, ctx.cwd);
                    let shown_grant = grant.as_ref().map(|g| grant_word(g, ctx.cwd));
                    // A stripped copy is readable: whatever the line says, what failed
                    // is a change to it.
                    let hint = stripped_copy_hint(&abs, &shown, ctx).unwrap_or_else(|| {
                        denial_hint(
                            &shown,
                            &rule,
                            access,
                            shown_grant.as_deref().map_err(|e| e.as_str()),
                        )
                    });
                    let grant = grant.ok();
                    return Some((
                        OutcomeClass::SandboxDenied {
                            path: Some(abs),
                            syscall: None,
                            rule: rule.clone(),
                            access: Some(access),
                            grant: grant
                                .filter(|_| access == Access::Write && !rule.starts_with("pinned")),
                            also_grant: Vec::new(),
                        },
                        Confidence::Low,
                        vec![
                            ev(
                                EvidenceSource::ProgramOutput,
                                format!("stderr: {}", line.trim()),
                            ),
                            ev(
                                EvidenceSource::Cordon,
                                format!("resolver: {shown} is {rule}"),
                            ),
                        ],
                        Some(hint),
                    ));
                }
            }
        }
    }
    // Network: a failed lookup or connection while the network is off for the command.
    if !ctx.network_enabled {
        let managed = ctx
            .resolved
            .is_some_and(|r| r.profile.network == cordon_policy::NetworkPolicy::Managed);
        return network_failure(sig, &lines, managed);
    }
    None
}

/// Step 8b: a network failure while the network is off. With kernel-side records (the
/// supervisor sees every `connect`), a record of an attempt decides (high confidence) and
/// output alone does not: a program that only *prints* "Could not resolve host" is a
/// failed command, so the network is never offered on its word (breaker, stop 8). Without
/// records (no supervisor on this host), the output is read as before (medium).
///
/// With a managed network (`managed`), the command's way out is the proxy: a program that
/// connected (or looked a name up) by itself is told to use it, not that the network is
/// off (new user, stop 19: an allowed host was refused and the advice was
/// `--allow-network`, which lifts all filtering).
fn network_failure(sig: &RunSignals, lines: &[&str], managed: bool) -> Option<Inferred> {
    // A failed connection to the command's own loopback is no network denial: each command
    // has its own `lo` (`own_loopback_hint` says how to reach the host's).
    const LOOPBACK: [&str; 6] = ["127.0.0.1", "localhost", "[::1]", " ::1", "0.0.0.0", "[::]"];
    // A failed connection counts only when the sandbox recorded an attempt to the very
    // address and port the line names (attack pass 43, J4: a silent background connection
    // made an unrelated local failure `network-denied`).
    let recorded = |l: &str| {
        sig.denials.as_ref().is_some_and(|d| {
            d.records.iter().filter(|r| r.is_network()).any(|r| {
                let t = r.path.to_string_lossy();
                t.rsplit_once(':').is_some_and(|(ip, port)| {
                    let ip = ip.trim_start_matches('[').trim_end_matches(']');
                    l.contains(ip)
                        && (l.contains(&format!("port {port}")) || l.contains(&format!(":{port}")))
                })
            })
        })
    };
    let line = lines.iter().find(|l| {
        let lower = l.to_ascii_lowercase();
        (NETWORK_ERRORS.iter().any(|m| contains_word(&lower, m))
            || (CONNECT_ERRORS.iter().any(|m| lower.contains(m)) && recorded(l)))
            && !LOOPBACK.iter().any(|a| lower.contains(a))
    });
    // The host from any line that names one (npm's first line says only `code EAI_AGAIN`;
    // its `getaddrinfo EAI_AGAIN registry.npmjs.org` comes later: nu21 K5).
    let host =
        line.and_then(|l| extract_host(l).or_else(|| lines.iter().find_map(|l| extract_host(l))));
    let hint = |host: &Option<String>| {
        let what = host
            .as_ref()
            .map(|h| format!(" ({h} was not reached)"))
            .unwrap_or_default();
        if managed {
            format!(
                "the network is managed for this command{what}: hosts are reached only \
                 through cordon's proxy (HTTPS_PROXY, HTTP_PROXY and ALL_PROXY point at \
                 it), and this program connected or looked the name up by itself; make it \
                 use the proxy, allow the host with network.allow, or (no filtering at all) \
                 --allow-network"
            )
        } else {
            format!("network is off for this command{what}: {ALLOW_NETWORK_ONCE}")
        }
    };
    let Some(d) = &sig.denials else {
        let line = line?;
        return Some((
            OutcomeClass::NetworkDenied {
                host: host.clone(),
                rule: Some("network restricted by the profile (R-P4)".into()),
            },
            Confidence::Medium,
            vec![
                ev(
                    EvidenceSource::ProgramOutput,
                    format!("stderr: {}", line.trim()),
                ),
                ev(
                    EvidenceSource::Cordon,
                    "the network is off for this command",
                ),
            ],
            Some(hint(&host)),
        ));
    };
    // A wildcard address (`0.0.0.0:PORT`, `[::]:PORT`) is no destination: glibc's address
    // sorting connects a UDP socket to each result of `getaddrinfo(NULL, port, AI_PASSIVE)`,
    // which every Python server start does (new-user pass nu9: a failing local test was
    // reported network-denied, with --allow-network as the fix).
    let destination = |r: &&cordon_sandbox::denials::DenialRecord| {
        r.is_network()
            && r.path
                .to_str()
                .and_then(|t| t.parse::<std::net::SocketAddr>().ok())
                .is_none_or(|a| !a.ip().is_unspecified())
    };
    let Some(rec) = d.records.iter().rev().find(destination) else {
        let line = line?;
        return Some((
            OutcomeClass::CommandFailed,
            Confidence::Low,
            vec![ev(
                EvidenceSource::ProgramOutput,
                format!(
                    "stderr: {} (but no connection attempt was recorded by the sandbox)",
                    line.trim()
                ),
            )],
            Some(
                "the output mentions a network failure, but the sandbox saw no connection \
                 attempt, so no retry with the network is offered; if the command does need \
                 the network, run it with --allow-network"
                    .into(),
            ),
        ));
    };
    // A connection to port 53 is the resolver, not the destination: the host is the name
    // being looked up, which the record does not know (new user, stop 18: Python's failed
    // lookup was reported as "10.255.255.53:53 was not reached").
    let dns = rec.path.to_string_lossy().ends_with(":53");
    let host = host.or_else(|| (!dns).then(|| rec.path.display().to_string()));
    let hint = |host: &Option<String>| match host {
        None if dns && !managed => format!(
            "network is off for this command (a DNS lookup through {} was refused): allow it \
             once with --allow-network",
            rec.path.display()
        ),
        _ => hint(host),
    };
    let record = format!(
        "network record (seccomp user notification): connect {} -> {} ({})",
        rec.path.display(),
        rec.errno,
        rec.rule
    );
    // A refused attempt the output never mentions is not the cause for certain, as for a
    // refused write (new-user pass nu20, G2: npm's background update check, or a program's
    // optional telemetry, made every failure — a missing script, failing tests —
    // `network-denied`, with the network offered for nothing). The failure stays the
    // command's, with low confidence, and the hint says what to do if it was the network.
    let Some(l) = line else {
        let what = if dns {
            format!("a DNS lookup through {}", rec.path.display())
        } else {
            format!("a connection to {}", rec.path.display())
        };
        let fix = if managed {
            "reach hosts through cordon's proxy (HTTPS_PROXY) or allow the host with \
             network.allow"
        } else {
            "allow the network once with --allow-network"
        };
        return Some((
            OutcomeClass::CommandFailed,
            Confidence::Low,
            vec![ev(
                EvidenceSource::Helper,
                format!(
                    "{record}; {} names no network failure: not counted as the cause",
                    seen_output(sig)
                ),
            )],
            Some(format!(
                "the sandbox refused {what} during the run, which {} does not name; if \
                 that is why it failed: {fix}",
                seen_output(sig)
            )),
        ));
    };
    let evidence = vec![
        ev(EvidenceSource::Helper, record),
        ev(
            EvidenceSource::ProgramOutput,
            format!("stderr: {}", l.trim()),
        ),
    ];
    Some((
        OutcomeClass::NetworkDenied {
            host: host.clone(),
            rule: Some(rec.rule.clone()),
        },
        Confidence::High,
        evidence,
        Some(hint(&host)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{ResolvedEntry, PROFILE_FORMAT_VERSION};

    struct NoFs;
    impl FsView for NoFs {
        fn canonicalize(&self, _: &Path) -> Option<PathBuf> {
            None
        }
        fn kind(&self, _: &Path) -> Option<cordon_policy::paths::FileKind> {
            None
        }
        fn read_to_string(&self, _: &Path) -> Option<String> {
            None
        }
    }

    fn entry(p: &str, access: Access, origin: EntryOrigin) -> ResolvedEntry {
        ResolvedEntry {
            path: p.into(),
            spelled: p.into(),
            access,
            exists: true,
            is_dir: true,
            origin,
            links: vec![],
        }
    }

    fn resolved() -> ResolvedProfile {
        let prof = |i| EntryOrigin::Profile {
            index: i,
            spelling: ":workspace".into(),
            source: None,
        };
        ResolvedProfile {
            format_version: PROFILE_FORMAT_VERSION,
            profile: cordon_policy::PermissionProfile::builtin("workspace-write").unwrap(),
            cwd: "/w".into(),
            workspace: "/w".into(),
            filesystem: ResolvedFilesystem::Restricted {
                default: Access::Read,
                entries: vec![
                    entry("/w", Access::Write, prof(0)),
                    entry(
                        "/w/.git/config",
                        Access::Read,
                        EntryOrigin::Protected {
                            reason: "git config can run code".into(),
                        },
                    ),
                    entry(
                        "/home/u/.ssh",
                        Access::Deny,
                        EntryOrigin::Profile {
                            index: 2,
                            spelling: ":home/.ssh".into(),
                            source: Some("built-in".into()),
                        },
                    ),
                ],
            },
            notes: vec![],
            tmpdir_refused: None,
            caches: vec![],
            stripped: vec![],
            cordon_files: vec![],
            kept_absent: vec![],
            unix_sockets: vec![],
        }
    }

    fn run(code: i32, stderr: &str) -> Outcome {
        let r = resolved();
        let sig = RunSignals {
            code: Some(code),
            stderr_tail: stderr.into(),
            sandboxed: true,
            ..Default::default()
        };
        classify(
            &sig,
            &ClassifyContext {
                resolved: Some(&r),
                fs: &NoFs,
                cwd: Path::new("/w"),
                network_enabled: false,
                home: None,
                path_dirs: &[],
                words: &[],
            },
        )
    }

    /// Breaker (stop 18): a cwd reached through a symlink an earlier run planted
    /// (`/w/link -> /other/repo`) lies in another project; its `.git` is never offered,
    /// while the workspace's own `.git/config` still is.
    #[test]
    fn another_projects_git_is_not_offered_from_a_symlinked_cwd() {
        let r = resolved();
        let ctx = ClassifyContext {
            resolved: Some(&r),
            fs: &NoFs,
            cwd: Path::new("/other/repo"),
            network_enabled: false,
            home: None,
            path_dirs: &[],
            words: &[],
        };
        let why = offerable_grant(Path::new("/other/repo/.git/hooks"), &ctx).unwrap_err();
        // Attack pass 244 #2: nothing at or around such a cwd is offered at all.
        assert!(
            why.contains("another project") || why.contains("reached through a symlink"),
            "{why}"
        );
        assert!(offerable_grant(Path::new("/w/.git/config"), &ctx).is_ok());
        // Fresh pass 189 #11: a nested repository's `.git` inside the workspace is another
        // repository's, never offered.
        for nested in ["/w/nested/.git", "/w/a/b/.git/config"] {
            let why = offerable_grant(Path::new(nested), &ctx).unwrap_err();
            assert!(why.contains("another project"), "{nested}: {why}");
        }
    }

    /// New user (stop 18): Python's `ModuleNotFoundError`/`FileNotFoundError` matched
    /// Node's `ENOTFOUND` inside the word, and a refused connection to the sandbox's own
    /// loopback counted as "the network is off": each got an `--allow-network` hint. Real
    /// resolver failures still count (sibling).
    #[test]
    fn ordinary_python_errors_are_not_network_failures() {
        for tail in [
            "ModuleNotFoundError: No module named 'nupkg'",
            "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/x'",
            "ConnectionRefusedError: [Errno 111] Connection refused",
        ] {
            let o = run(1, tail);
            assert_eq!(o.class, OutcomeClass::CommandFailed, "{tail}");
            assert!(
                !o.hint.as_deref().unwrap_or("").contains("network"),
                "{tail}: {:?}",
                o.hint
            );
        }
        let o = run(1, "npm ERR! getaddrinfo ENOTFOUND registry.npmjs.org");
        assert!(
            matches!(o.class, OutcomeClass::NetworkDenied { .. }),
            "{o:?}"
        );
    }

    #[test]
    fn ordinary_failures_stay_command_failed() {
        assert_eq!(run(1, "").class, OutcomeClass::CommandFailed);
        assert_eq!(run(0, "").class, OutcomeClass::Success);
        // a test runner's own "Permission denied" about its own fixture in the workspace
        let o = run(
            1,
            "FAILED tests/test_io.py::test_perm - PermissionError: [Errno 13] Permission denied: '/w/tests/fixture.txt'",
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        // a path the profile lets it write, relative
        assert_eq!(
            run(
                1,
                "cp: cannot create regular file 'out/x': Permission denied"
            )
            .class,
            OutcomeClass::CommandFailed
        );
    }

    #[test]
    fn read_only_and_protected_paths_are_sandbox_denied_when_the_resolver_agrees() {
        let o = run(
            1,
            "touch: cannot touch '/usr/local/x': Read-only file system",
        );
        match &o.class {
            OutcomeClass::SandboxDenied { path, rule, .. } => {
                assert_eq!(path.as_deref(), Some(Path::new("/usr/local/x")));
                assert!(rule.contains("read-only"), "{rule}");
            }
            c => panic!("{c:?}"),
        }
        assert_eq!(o.confidence, Confidence::Low);
        // Outside the cwd and workspace, output alone offers no widening (issue 9 re-test b).
        let hint = o.hint.as_deref().unwrap();
        assert!(
            hint.contains("offers no per-command widening") && !hint.contains("-w /usr"),
            "{hint}"
        );
        // One step per clause (new-user pass 146), no path filled in.
        assert!(
            hint.contains("make a directory of your own (`mkdir DIR/NAME`)"),
            "{hint}"
        );
        assert!(o
            .evidence
            .iter()
            .any(|e| e.source == EvidenceSource::ProgramOutput));
        // protected .git/config, relative spelling, git's EBUSY
        let o = run(
            128,
            "error: could not write config file /w/.git/config: Device or resource busy",
        );
        match &o.class {
            OutcomeClass::SandboxDenied { rule, .. } => assert!(rule.contains("R-P3"), "{rule}"),
            c => panic!("{c:?}"),
        }
        assert_eq!(
            o.hint.as_deref(),
            Some(".git/config is protected (R-P3, git config can run code): allow writing it once with -w .git/config")
        );
        let o = run(2, "sh: 1: cannot create .git/config: Read-only file system");
        assert!(
            matches!(o.class, OutcomeClass::SandboxDenied { .. }),
            "{o:?}"
        );
        // denied read
        // reading a readable path is not a sandbox denial, even with "Permission denied"
        assert_eq!(
            run(
                1,
                "PermissionError: [Errno 13] Permission denied: '/usr/share/fixture.txt'"
            )
            .class,
            OutcomeClass::CommandFailed
        );
        let o = run(1, "cat: /home/u/.ssh/id_rsa: No such file or directory\ncat: /home/u/.ssh/id_rsa: Permission denied");
        match &o.class {
            OutcomeClass::SandboxDenied { access, .. } => assert_eq!(*access, Some(Access::Read)),
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn network_errors_count_only_while_the_network_is_off() {
        let o = run(6, "curl: (6) Could not resolve host: example.com");
        assert_eq!(
            o.class,
            OutcomeClass::NetworkDenied {
                host: Some("example.com".into()),
                rule: Some("network restricted by the profile (R-P4)".into())
            }
        );
        assert_eq!(
            o.hint.as_deref(),
            Some("network is off for this command (example.com was not reached): allow it once with --allow-network")
        );
        let o = run(1, "npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org");
        assert!(
            matches!(o.class, OutcomeClass::NetworkDenied { host: Some(ref h), .. } if h == "registry.npmjs.org"),
            "{o:?}"
        );
        // network on: the program's DNS failure is its own
        let r = resolved();
        let sig = RunSignals {
            code: Some(6),
            stderr_tail: "curl: (6) Could not resolve host: example.com".into(),
            sandboxed: true,
            ..Default::default()
        };
        let o = classify(
            &sig,
            &ClassifyContext {
                resolved: Some(&r),
                fs: &NoFs,
                cwd: Path::new("/w"),
                network_enabled: true,
                home: None,
                path_dirs: &[],
                words: &[],
            },
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed);
    }

    #[test]
    fn structured_signals_win_over_output() {
        let r = resolved();
        let ctx = ClassifyContext {
            resolved: Some(&r),
            fs: &NoFs,
            cwd: Path::new("/w"),
            network_enabled: false,
            home: None,
            path_dirs: &[],
            words: &[],
        };
        let base = RunSignals {
            signal: Some(libc::SIGKILL),
            sandboxed: true,
            stderr_tail: "curl: (6) Could not resolve host: example.com".into(),
            ..Default::default()
        };
        let o = classify(
            &RunSignals {
                timed_out: Some("100ms".into()),
                ..base.clone()
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::TimedOut);
        assert_eq!(o.exit_code, 128 + libc::SIGKILL);
        let o = classify(
            &RunSignals {
                cancelled: Some("SIGINT".into()),
                ..base.clone()
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::Cancelled);
        // nu23 Q4: an interrupt the command ran on after, exiting 0, is not a cancel.
        let o = classify(
            &RunSignals {
                cancelled: Some("cancelled by SIGINT".into()),
                code: Some(0),
                signal: None,
                stderr_tail: String::new(),
                ..base.clone()
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::Success, "{o:?}");
        assert!(
            o.evidence.iter().any(|e| e.detail.contains("ran on")),
            "{o:?}"
        );
        let o = classify(
            &RunSignals {
                signal: Some(libc::SIGSYS),
                ..base.clone()
            },
            &ctx,
        );
        // Attack pass 41, E3: the signal alone (a command can send it to itself) is no
        // sandbox denial, and a limit it suggests has low confidence.
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        assert_eq!(o.confidence, Confidence::Low);
        assert!(o.hint.unwrap().contains("seccomp filter"));
        for s in [libc::SIGXCPU, libc::SIGXFSZ] {
            let o = classify(
                &RunSignals {
                    signal: Some(s),
                    ..base.clone()
                },
                &ctx,
            );
            assert!(matches!(o.class, OutcomeClass::LimitExceeded { .. }));
            assert_eq!(o.confidence, Confidence::Low);
        }
        // helper setup error vs the program's own exit 125
        let o = classify(
            &RunSignals {
                code: Some(125),
                signal: None,
                stderr_tail: "cordon: refusing to run unconfined: landlock missing".into(),
                sandboxed: true,
                ..Default::default()
            },
            &ctx,
        );
        assert!(matches!(o.class, OutcomeClass::Refused { .. }), "{o:?}");
        let o = classify(
            &RunSignals {
                code: Some(125),
                stderr_tail: "my tool failed".into(),
                sandboxed: true,
                ..Default::default()
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed);
        // the helper's own report wins; after it reported "applied", 125 is the command's
        let o = classify(
            &RunSignals {
                code: Some(125),
                stderr_tail: "cordon: looks like a refusal".into(),
                sandboxed: true,
                helper_applied: true,
                ..Default::default()
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed);
        // A cordon run inside the sandbox that refused: said as such, and the path its
        // message names is not taken for one the command was denied (stop 39 review: the
        // outer run said "~/.npmrc is shown as a read-only copy ...").
        let nested = RunSignals {
            code: Some(125),
            stderr_tail:
                "cordon: refusing to run unconfined: deny-read of /home/u/.ssh/id_rsa needs a \
                          mount namespace, but user namespaces are unavailable (unshare: \
                          Operation not permitted)"
                    .into(),
            sandboxed: true,
            helper_applied: true,
            ..Default::default()
        };
        let o = classify(&nested, &ctx);
        match &o.class {
            OutcomeClass::SandboxDenied { path, grant, .. } => {
                assert_eq!(*path, None, "{o:?}");
                assert_eq!(*grant, None, "{o:?}");
            }
            c => panic!("{c:?}"),
        }
        let hint = o.hint.as_deref().unwrap();
        assert!(
            hint.contains("cordon run inside this sandbox") && hint.contains("--sandbox forbid"),
            "{hint}"
        );
        assert!(!hint.contains(".ssh"), "{hint}");
        // The other refusal a nested run gives (its records cannot be kept in the read-only
        // home; found flaking in CI, where concurrent tests changed the shared record).
        let o = classify(
            &RunSignals {
                stderr_tail: "cordon: note: not using the server at /x: running on the cold \
                              path\ncordon: cannot record this run's writable roots in \
                              /home/u/.local/state/cordon/writable-roots (Read-only file \
                              system (os error 30)); later runs would trust what it writes \
                              there"
                    .into(),
                ..nested.clone()
            },
            &ctx,
        );
        assert!(
            matches!(&o.class, OutcomeClass::SandboxDenied { path: None, .. }),
            "{o:?}"
        );
        assert!(
            o.hint.as_deref().unwrap().contains("--sandbox forbid"),
            "{o:?}"
        );
        // Not the program's own exit code with such a line: only 125 is cordon's.
        let o = classify(
            &RunSignals {
                code: Some(1),
                ..nested.clone()
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        // Any other line of a nested cordon is no evidence either: its path is not the
        // command's denial.
        let o = classify(
            &RunSignals {
                stderr_tail: "cordon: note: cannot open /home/u/.ssh/id_rsa: Permission denied"
                    .into(),
                ..nested.clone()
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        // The sibling: the command's own line naming the same path still counts.
        let o = classify(
            &RunSignals {
                stderr_tail: "cat: /home/u/.ssh/id_rsa: Permission denied".into(),
                ..nested.clone()
            },
            &ctx,
        );
        assert!(
            matches!(&o.class, OutcomeClass::SandboxDenied { path: Some(p), .. } if p == Path::new("/home/u/.ssh/id_rsa")),
            "{o:?}"
        );
        let o = classify(
            &RunSignals {
                code: Some(125),
                sandboxed: true,
                helper_not_run: Some("refusing to run unconfined: no landlock".into()),
                ..Default::default()
            },
            &ctx,
        );
        assert!(matches!(o.class, OutcomeClass::Refused { .. }), "{o:?}");
        assert_eq!(o.confidence, Confidence::High);
        // attack25 A5: a run the helper stopped because the host replaced a covered path
        // is cancelled with exit 125, whatever the command printed or how it ended — not
        // refused: it ran (attack pass 148 F3).
        let o = classify(
            &RunSignals {
                code: Some(125),
                sandboxed: true,
                helper_applied: true,
                stderr_tail: "cat: /h/.netrc: Permission denied".into(),
                cover_lost: Some("the host replaced /h/.netrc during the run".into()),
                ..Default::default()
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::Cancelled, "{o:?}");
        assert!(
            o.evidence.iter().any(|e| e.detail.contains("/h/.netrc")),
            "{o:?}"
        );
        assert!(
            o.hint.as_deref().unwrap().contains("ran and was stopped"),
            "{o:?}"
        );
        assert_eq!(o.exit_code, 125);
    }

    /// `sig` classified with the resolved profile `r`, the view `fs` and the cwd `cwd`
    /// (no home, no `PATH`, no command words).
    fn classify_in(r: &ResolvedProfile, fs: &dyn FsView, cwd: &str, sig: RunSignals) -> Outcome {
        classify(
            &sig,
            &ClassifyContext {
                resolved: Some(r),
                fs,
                cwd: Path::new(cwd),
                network_enabled: false,
                home: None,
                path_dirs: &[],
                words: &[],
            },
        )
    }

    fn run_in(cwd: &str, sig: RunSignals) -> Outcome {
        let mut r = resolved();
        r.cwd = cwd.into();
        classify(
            &sig,
            &ClassifyContext {
                resolved: Some(&r),
                fs: &NoFs,
                cwd: Path::new(cwd),
                network_enabled: false,
                home: None,
                path_dirs: &[],
                words: &[],
            },
        )
    }

    /// A failed sandboxed run in `/w` exiting `code` with `tail` on stderr, whose host kept
    /// kernel-side records `recs`.
    fn run_with_records(
        code: i32,
        tail: &str,
        recs: Vec<cordon_sandbox::denials::DenialRecord>,
    ) -> Outcome {
        let mut d = cordon_sandbox::denials::DenialReport::default();
        for r in recs {
            d.push(r);
        }
        run_in(
            "/w",
            RunSignals {
                code: Some(code),
                stderr_tail: tail.into(),
                sandboxed: true,
                denials: Some(d),
                ..Default::default()
            },
        )
    }

    fn record(
        path: &str,
        rule: &str,
        grant: Option<&str>,
    ) -> cordon_sandbox::denials::DenialRecord {
        cordon_sandbox::denials::DenialRecord {
            syscall: "openat".into(),
            path: path.into(),
            errno: "EROFS".into(),
            rule: rule.into(),
            grant: grant.map(PathBuf::from),
        }
    }

    /// Attack pass 244 #2: a cwd outside the workspace (reached through a symlink in the
    /// project) gets no grant at or around it. Twin: the same refusal with the cwd in the
    /// workspace offers its directory.
    #[test]
    fn no_grant_is_offered_at_a_cwd_reached_through_a_link() {
        let with_cwd = |cwd: &str, path: &str| {
            let mut d = cordon_sandbox::denials::DenialReport::default();
            d.push(record(
                path,
                "read-only: outside every writable root",
                Some(cwd),
            ));
            run_in(
                cwd,
                RunSignals {
                    code: Some(1),
                    stderr_tail: format!("touch: cannot touch '{path}': Read-only file system"),
                    sandboxed: true,
                    denials: Some(d),
                    ..Default::default()
                },
            )
        };
        let o = with_cwd("/elsewhere/pv", "/elsewhere/pv/f");
        match &o.class {
            OutcomeClass::SandboxDenied { grant, .. } => assert_eq!(grant, &None, "{o:?}"),
            c => panic!("{c:?}"),
        }
        assert!(
            o.hint
                .as_deref()
                .unwrap_or("")
                .contains("reached through a symlink"),
            "{o:?}"
        );
        let o = with_cwd("/w/sub", "/w/sub/.git/hooks/x");
        assert!(
            !o.hint
                .as_deref()
                .unwrap_or("")
                .contains("reached through a symlink"),
            "{o:?}"
        );
    }

    /// New-user pass 234 #2: a file granted on its own (`-w FILE`) is writable in place
    /// only. `sed -i`'s temporary file beside it (refused: the directory is read-only) and a
    /// rename over it (EBUSY: the file is mounted on itself) are named as that, with the
    /// directory offered instead; where the directory cannot be offered (it holds the
    /// workspace), the hint says to write the file in place. Twin: a refused file beside
    /// no granted file gets the usual hint.
    #[test]
    fn a_file_grants_rename_over_offers_its_directory() {
        let mut r = resolved();
        if let ResolvedFilesystem::Restricted { entries, .. } = &mut r.filesystem {
            for f in ["/data/d/f.json", "/settings.json"] {
                entries.push(entry(
                    f,
                    Access::Write,
                    EntryOrigin::Profile {
                        index: 9,
                        spelling: f.into(),
                        source: Some("-w".into()),
                    },
                ));
            }
        }
        let fs = cordon_policy::MemFs::new()
            .dir("/w")
            .file("/data/d/f.json", "{}")
            .file("/settings.json", "{}");
        let go = |rec: cordon_sandbox::denials::DenialRecord, tail: &str| {
            let mut d = cordon_sandbox::denials::DenialReport::default();
            d.push(rec);
            classify_in(
                &r,
                &fs,
                "/w",
                RunSignals {
                    code: Some(4),
                    stderr_tail: tail.into(),
                    sandboxed: true,
                    denials: Some(d),
                    ..Default::default()
                },
            )
        };
        let mut busy = record(
            "/data/d/f.json",
            cordon_sandbox::denials::FILE_GRANT_RULE,
            Some("/data/d"),
        );
        busy.syscall = "rename".into();
        busy.errno = "EBUSY".into();
        let o = go(
            busy,
            "sed: cannot rename /data/d/sedX: Device or resource busy",
        );
        let h = o.hint.clone().unwrap_or_default();
        assert!(
            h.contains("/data/d/f.json is granted on its own") && h.contains("-w /data/d instead"),
            "{o:?}"
        );
        let beside = record(
            "/data/d/sed1234",
            "read-only: outside every writable root",
            Some("/data/d"),
        );
        let o = go(
            beside,
            "sed: couldn't open temporary file /data/d/sed1234: Read-only file system",
        );
        let h = o.hint.clone().unwrap_or_default();
        assert!(
            h.contains("new file beside /data/d/f.json") && h.contains("-w /data/d instead"),
            "{o:?}"
        );
        // Its directory is `/`: not offered; write in place.
        let top = record("/sedY", "read-only: outside every writable root", Some("/"));
        let o = go(
            top,
            "sed: couldn't open temporary file /sedY: Read-only file system",
        );
        let h = o.hint.clone().unwrap_or_default();
        assert!(
            h.contains("new file beside /settings.json") && h.contains("write the file in place"),
            "{o:?}"
        );
        // Twin: beside no granted file.
        let other = record(
            "/data/e/x",
            "read-only: outside every writable root",
            Some("/data/e"),
        );
        let o = go(
            other,
            "touch: cannot touch '/data/e/x': Read-only file system",
        );
        assert!(
            !o.hint
                .clone()
                .unwrap_or_default()
                .contains("granted on its own"),
            "{o:?}"
        );
    }

    /// New-user pass 234 #6: a command that tried to remove a protected path (a Python
    /// `shutil.rmtree(".git")`) was offered `-w .git/config`-like grants that help the
    /// deletion finish. A removal (`unlink`, `unlinkat`, `rmdir`) of a protected path is
    /// offered none, and the hint says it was a removal. Twin: a write to it is offered
    /// its grant as before.
    #[test]
    fn a_protected_paths_removal_offers_no_grant() {
        let rule = "protected (R-P3): git config can run code";
        let mut rm = record("/w/.git/config", rule, Some("/w/.git/config"));
        rm.syscall = "unlinkat".into();
        let o = run_with_records(
            1,
            "rm: cannot remove '.git/config': Read-only file system",
            vec![rm],
        );
        let h = o.hint.clone().unwrap_or_default();
        assert!(
            h.contains("tried to remove .git/config") && !h.contains("-w "),
            "{o:?}"
        );
        // Renamed away (attack pass 235 #1): the same.
        let mut mv = record("/w/.git/config", rule, Some("/w/.git/config"));
        mv.syscall = "renameat2".into();
        let o = run_with_records(
            1,
            "mv: cannot move '.git/config': Read-only file system",
            vec![mv],
        );
        let h = o.hint.clone().unwrap_or_default();
        assert!(
            h.contains("tried to rename or replace .git/config") && !h.contains("-w "),
            "{o:?}"
        );
        let write = record("/w/.git/config", rule, Some("/w/.git/config"));
        let o = run_with_records(1, "sh: .git/config: Read-only file system", vec![write]);
        assert!(
            o.hint
                .clone()
                .unwrap_or_default()
                .contains("-w .git/config"),
            "{o:?}"
        );
    }

    /// New-user pass 215, #1: gdb under the sandbox printed "ptrace: Operation not
    /// permitted" and the run had no hint. Twin: the same line from an unsandboxed run
    /// says nothing (the filter was not there).
    #[test]
    fn a_refused_ptrace_is_named_in_the_hint() {
        let line = "warning: ptrace: Operation not permitted\nDuring startup program exited with code 127.";
        let o = run_in(
            "/w",
            RunSignals {
                code: Some(1),
                stderr_tail: line.into(),
                sandboxed: true,
                ..Default::default()
            },
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        assert!(
            o.hint
                .as_deref()
                .unwrap_or_default()
                .contains("refuses ptrace"),
            "{o:?}"
        );
        let o = run_in(
            "/w",
            RunSignals {
                code: Some(1),
                stderr_tail: line.into(),
                sandboxed: false,
                ..Default::default()
            },
        );
        assert_eq!(o.hint, None, "{o:?}");
    }

    /// Attack pass 210 #8: `touch out/x`, with `out` a symlink out of the project, was
    /// refused at the symlink's target; stderr names `out/x` (a one-letter name), so the
    /// record was "not named" and the run `command-failed`. A name that leads to the
    /// record's path through symlinks names it. Twin: an unrelated path does not.
    #[test]
    fn a_path_named_through_a_symlink_names_the_record() {
        let r = resolved();
        let fs = cordon_policy::MemFs::new()
            .dir("/w")
            .dir("/data/out")
            .symlink("/w/out", "/data/out");
        let rec = record(
            "/data/out/x",
            "read-only: outside every writable root",
            Some("/data/out"),
        );
        let classify_tail = |tail: &str| {
            let mut d = cordon_sandbox::denials::DenialReport::default();
            d.push(rec.clone());
            classify(
                &RunSignals {
                    code: Some(1),
                    stderr_tail: tail.into(),
                    sandboxed: true,
                    denials: Some(d),
                    ..Default::default()
                },
                &ClassifyContext {
                    resolved: Some(&r),
                    fs: &fs,
                    cwd: Path::new("/w"),
                    network_enabled: false,
                    home: None,
                    path_dirs: &[],
                    words: &[],
                },
            )
        };
        let o = classify_tail("touch: cannot touch 'out/x': Read-only file system");
        assert!(
            matches!(o.class, OutcomeClass::SandboxDenied { .. }),
            "{o:?}"
        );
        assert_eq!(o.confidence, Confidence::High, "{o:?}");
        let o = classify_tail("touch: cannot touch 'other/y': Read-only file system");
        assert!(
            !matches!(o.class, OutcomeClass::SandboxDenied { .. }),
            "{o:?}"
        );
    }

    /// Hints finding 8: `ln -s /data/out out` in one run, then `sh -c 'echo x > out/f2'`
    /// was offered `-w /data/out` — the command chose which outside directory the hint
    /// (and an asking mode's retry) proposed. A denial reached through a symlink inside a
    /// writable root offers no grant and says so, whether the script's words or only the
    /// output name the link (sibling: a new directory under it). Twin: the same outside
    /// path named directly is offered as before.
    #[test]
    fn a_denial_reached_through_a_planted_symlink_offers_no_grant() {
        let r = resolved();
        let fs = cordon_policy::MemFs::new()
            .dir("/w")
            .dir("/data/out")
            .symlink("/w/out", "/data/out");
        let go = |argv: &[&str], tail: &str, path: &str| {
            let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
            let words = named_paths(&argv, tail);
            let mut d = cordon_sandbox::denials::DenialReport::default();
            d.push(record(
                path,
                "read-only: outside every writable root",
                Some("/data/out"),
            ));
            let ctx = ClassifyContext {
                resolved: Some(&r),
                fs: &fs,
                cwd: Path::new("/w"),
                network_enabled: false,
                home: None,
                path_dirs: &[],
                words: &words,
            };
            let o = classify(
                &RunSignals {
                    code: Some(2),
                    stderr_tail: tail.into(),
                    sandboxed: true,
                    denials: Some(d.clone()),
                    ..Default::default()
                },
                &ctx,
            );
            (o, offered_grant(&d.records[0], &ctx))
        };
        let no_grant = |o: &Outcome, offered: Option<PathBuf>| {
            let hint = o.hint.clone().unwrap_or_default();
            assert!(
                matches!(&o.class, OutcomeClass::SandboxDenied { grant: None, .. }),
                "{o:?}"
            );
            assert_eq!(offered, None);
            assert!(
                hint.contains("through the symlink out inside a writable root"),
                "{hint}"
            );
            assert!(!hint.contains(ALLOW_WRITE_ONCE), "{hint}");
        };
        let (o, g) = go(
            &["sh", "-c", "echo x > out/f2"],
            "sh: 1: cannot create out/f2: Read-only file system",
            "/data/out/f2",
        );
        no_grant(&o, g);
        // The words alone (a program that prints no path).
        let (o, g) = go(
            &["sh", "-c", "echo x > out/f2"],
            "Read-only file system",
            "/data/out/f2",
        );
        no_grant(&o, g);
        // Sibling: a new directory below it, named only by the output.
        let (o, g) = go(
            &["make"],
            "mkdir: cannot create directory 'out/sub': Read-only file system",
            "/data/out/sub",
        );
        no_grant(&o, g);
        // Twin: the outside path named as itself.
        let (o, g) = go(
            &["sh", "-c", "echo x > /data/out/f2"],
            "sh: 1: cannot create /data/out/f2: Read-only file system",
            "/data/out/f2",
        );
        assert_eq!(g.as_deref(), Some(Path::new("/data/out")), "{o:?}");
        assert!(
            o.hint
                .unwrap_or_default()
                .contains("allow writing it once with -w /data/out"),
            "{:?}",
            o.class
        );
    }

    /// Issue 9 re-test (a): a relative path printed by a command running in /w/sub is read
    /// against the command's cwd and normalised (it offered `-w ..`).
    #[test]
    fn relative_paths_are_read_against_the_commands_cwd() {
        let sig = |line: &str| RunSignals {
            code: Some(1),
            stderr_tail: line.into(),
            sandboxed: true,
            ..Default::default()
        };
        // ../x from /w/sub is /w/x: writable, so not a denial.
        let o = run_in(
            "/w/sub",
            sig("touch: cannot touch '../x': Read-only file system"),
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        // ../.git/config from /w/sub is the protected /w/.git/config.
        let o = run_in(
            "/w/sub",
            sig("error: could not lock config file ../.git/config: Read-only file system"),
        );
        match &o.class {
            OutcomeClass::SandboxDenied { path, grant, .. } => {
                assert_eq!(path.as_deref(), Some(Path::new("/w/.git/config")));
                assert_eq!(grant.as_deref(), Some(Path::new("/w/.git/config")));
            }
            c => panic!("{c:?}"),
        }
        assert!(!o.hint.unwrap().contains("-w .."));
    }

    /// nu63: where no per-command grant lifts the rule, `-w` is not offered beside it.
    #[test]
    fn no_grant_means_no_w_advice() {
        let h = denial_hint(
            "wt/.git",
            "read-only: outside every writable root",
            Access::Write,
            Err("no per-command grant can lift this rule"),
        );
        assert!(h.contains("no per-command grant"), "{h}");
        assert!(!h.contains("-w PATH"), "{h}");
    }

    /// nu27 F5: a hidden path's hint says how it is opened: `cordon explain` (a profile
    /// entry or `--with`) for the profile's deny, dropping the flag for a `--deny-read`.
    #[test]
    fn a_hidden_paths_hint_says_how_it_is_opened() {
        let h = denial_hint(
            ".env",
            "denied (deny-read /w/.env, --deny-read)",
            Access::Read,
            Err("no per-command grant can lift this rule"),
        );
        assert!(h.contains("drop that --deny-read"), "{h}");
        let h = denial_hint(
            "/home/u/.ssh/id_rsa",
            "denied (deny-read :home/.ssh, built-in workspace-write)",
            Access::Read,
            Err("no per-command grant can lift this rule"),
        );
        assert!(h.contains("cordon explain /home/u/.ssh/id_rsa"), "{h}");
        // New-user pass 241 #2: what explain then offers (a --with read entry, which opens
        // a path under a directory the profile denies too) is not contradicted.
        assert!(
            h.contains("a directory your profile denies alike; a deny on that very path wins"),
            "{h}"
        );
        assert!(!h.contains("cannot be opened per command"), "{h}");
    }

    /// nu27 F2: a file named without `/` or a leading dot in the coreutils shape (`cat:
    /// NAME: Permission denied`) is read against the cwd like any relative path. Twin: the
    /// program's own name in the first field is no candidate.
    #[test]
    fn a_bare_file_name_is_read_against_the_cwd() {
        let sig = |line: &str| RunSignals {
            code: Some(1),
            stderr_tail: line.into(),
            sandboxed: true,
            ..Default::default()
        };
        let o = run_in("/home/u", sig("cat: id_rsa: Permission denied"));
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        let o = run_in("/home/u/.ssh", sig("cat: id_rsa: Permission denied"));
        match &o.class {
            OutcomeClass::SandboxDenied { path, .. } => {
                assert_eq!(path.as_deref(), Some(Path::new("/home/u/.ssh/id_rsa")))
            }
            c => panic!("{c:?}"),
        }
        assert_eq!(
            candidate_paths("cat: notes.md: Permission denied"),
            vec!["notes.md".to_string()]
        );
    }

    /// Issue 9 re-test (b): a fake error about a path outside the cwd and workspace (e.g. in
    /// $HOME) gives no widening without a kernel record.
    #[test]
    fn output_alone_cannot_steer_the_widening_outside_the_workspace() {
        let o = run(
            1,
            "cp: cannot create regular file '/home/u/.bashrc': Read-only file system",
        );
        match &o.class {
            OutcomeClass::SandboxDenied { grant, .. } => assert_eq!(*grant, None, "{o:?}"),
            c => panic!("{c:?}"),
        }
        let hint = o.hint.unwrap();
        assert!(!hint.contains("-w /home"), "{hint}");
        // Inside the workspace the grant stays.
        let o = run(
            1,
            "touch: cannot touch '/w/.git/config': Read-only file system",
        );
        assert!(matches!(
            o.class,
            OutcomeClass::SandboxDenied { grant: Some(_), .. }
        ));
    }

    /// Kernel-side records decide first: named by the output → high; with records kept, a
    /// forged line about a read-only path stays command-failed; records the output does not
    /// mention (a probe such as Python's bytecode cache) do not make a denial.
    #[test]
    fn records_decide_and_forged_output_does_not() {
        let with = |tail: &str, recs| run_with_records(1, tail, recs);
        let o = with(
            "touch: cannot touch '/data/proj/x': Read-only file system",
            vec![record(
                "/data/proj/x",
                "read-only: outside every writable root",
                Some("/data/proj"),
            )],
        );
        assert_eq!(o.confidence, Confidence::High);
        match &o.class {
            OutcomeClass::SandboxDenied {
                path,
                syscall,
                grant,
                ..
            } => {
                assert_eq!(path.as_deref(), Some(Path::new("/data/proj/x")));
                assert_eq!(syscall.as_deref(), Some("openat"));
                assert_eq!(grant.as_deref(), Some(Path::new("/data/proj")));
            }
            c => panic!("{c:?}"),
        }
        assert!(o.hint.unwrap().ends_with("-w /data/proj"));
        // The command picks the path it fails on: a grant wider than a project is never
        // offered, even with a kernel record (breaker, stop 8: `mkdir /newdir` offered
        // `-w /`). `/w` is the workspace here.
        for (path, grant) in [
            ("/newdir", "/"),
            ("/data/x", "/data"),
            ("/usr/local/zz", "/usr/local"),
            ("/etc/cron.d/x", "/etc/cron.d"),
            ("/var/lib/x/y", "/var/lib/x"),
        ] {
            let o = with(
                &format!("mkdir: cannot create directory '{path}': Read-only file system"),
                vec![record(
                    path,
                    "read-only: outside every writable root",
                    Some(grant),
                )],
            );
            match &o.class {
                OutcomeClass::SandboxDenied { grant, .. } => {
                    assert_eq!(grant, &None, "{path}")
                }
                c => panic!("{c:?}"),
            }
            let hint = o.hint.unwrap();
            assert!(
                hint.contains("offers no per-command widening") && !hint.contains("-w /"),
                "{hint}"
            );
        }
        assert!(o
            .evidence
            .iter()
            .any(|e| e.source == EvidenceSource::Helper));
        let forged = with(
            "touch: cannot touch '/etc/x': Read-only file system",
            vec![],
        );
        assert_eq!(forged.class, OutcomeClass::CommandFailed, "{forged:?}");
        let probe = with(
            "FAILED tests/test_x.py::test_y - AssertionError",
            vec![record(
                "/usr/lib/python3/__pycache__/x.pyc",
                "read-only: outside every writable root",
                Some("/usr/lib/python3/__pycache__"),
            )],
        );
        assert_eq!(probe.class, OutcomeClass::CommandFailed, "{probe:?}");
        assert!(probe
            .evidence
            .iter()
            .any(|e| e.detail.contains("none named")));
        assert_eq!(probe.hint, None, "no grant can lift it: not mentioned");
        // nu15 N4: `git push` to a path remote fails on "unpacker error" without naming
        // the refused mkdir; nu18 F12: git's words for an unwritable repository make it
        // sandbox-denied (medium confidence: no path named), so the retry and the MCP
        // suggestion offer the repository.
        let push = with(
            "error: remote unpack failed: unable to create temporary object directory\n \
             ! [remote rejected] main -> main (unpacker error)",
            vec![
                cordon_sandbox::denials::DenialRecord {
                    syscall: "mkdir".into(),
                    ..record(
                        "/w/../bare.git/objects/tmp_objdir-incoming-x",
                        "read-only: outside every writable root",
                        Some("/data/bare.git"),
                    )
                },
                record(
                    "/data/bare.git/objects/maintenance.lock",
                    "read-only: outside every writable root",
                    Some("/data/bare.git"),
                ),
            ],
        );
        assert!(
            matches!(&push.class, OutcomeClass::SandboxDenied { grant: Some(g), .. }
                if g == Path::new("/data/bare.git")),
            "{push:?}"
        );
        assert_eq!(push.confidence, Confidence::Medium, "{push:?}");
        let hint = push.hint.unwrap();
        assert!(hint.contains("-w /data/bare.git"), "{hint}");
    }

    #[test]
    fn json_shape() {
        let o = run(
            1,
            "touch: cannot touch '/usr/local/x': Read-only file system",
        );
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(v["outcome"], "sandbox-denied");
        assert_eq!(v["path"], "/usr/local/x");
        assert_eq!(v["confidence"], "low");
        assert!(v["hint"].is_string());
    }

    #[test]
    fn proxy_denials_make_network_denied_with_host_rule_and_hint() {
        let r = resolved();
        let ctx = ClassifyContext {
            resolved: Some(&r),
            fs: &NoFs,
            cwd: Path::new("/w"),
            network_enabled: false,
            home: None,
            path_dirs: &[],
            words: &[],
        };
        let denial = |host: &str, rule: &str| ProxyDenial {
            host: host.into(),
            port: 443,
            rule: rule.into(),
        };
        let sig = RunSignals {
            code: Some(1),
            // What the program prints does not decide it; the proxy's log does.
            stderr_tail: "error: something else entirely".into(),
            sandboxed: true,
            helper_applied: true,
            network_denied: vec![denial("registry.npmjs.org", "not in network.allow")],
            ..Default::default()
        };
        let o = classify(&sig, &ctx);
        assert_eq!(
            o.class,
            OutcomeClass::NetworkDenied {
                host: Some("registry.npmjs.org".into()),
                rule: Some("not in network.allow".into()),
            }
        );
        assert_eq!(o.confidence, Confidence::High);
        assert!(
            o.hint
                .as_deref()
                .unwrap()
                .contains(r#"network.allow = ["registry.npmjs.org"]"#),
            "{o:?}"
        );
        let o = classify(
            &RunSignals {
                network_denied: vec![denial("evil.example", "deny evil.example")],
                ..sig.clone()
            },
            &ctx,
        );
        assert!(o.hint.unwrap().contains("network.deny"));
        // A run that succeeded anyway stays a success.
        let o = classify(
            &RunSignals {
                code: Some(0),
                ..sig.clone()
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::Success);
        // Without a proxy denial the same failure is an ordinary one.
        let o = classify(
            &RunSignals {
                network_denied: vec![],
                ..sig
            },
            &ctx,
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed);
    }

    /// The context the grant checks read: no resolved profile, the home `/home/u`, the
    /// command in `cwd`, `fs` and the caller's `path_dirs`.
    fn grant_ctx<'a>(
        fs: &'a dyn FsView,
        cwd: &'a str,
        path_dirs: &'a [PathBuf],
    ) -> ClassifyContext<'a> {
        ClassifyContext {
            resolved: None,
            fs,
            cwd: Path::new(cwd),
            network_enabled: false,
            home: Some(Path::new("/home/u")),
            path_dirs,
            words: &[],
        }
    }

    /// Each of `paths` is refused as a one-off grant, and the reason contains `says(path)`.
    fn assert_no_grant(ctx: &ClassifyContext<'_>, paths: &[&str], says: impl Fn(&str) -> String) {
        for no in paths {
            let why = offerable_grant(Path::new(no), ctx).unwrap_err();
            assert!(why.contains(&says(no)), "{no}: {why}");
        }
    }

    /// What may be offered as a one-off grant: a project-sized directory, never the home,
    /// anything above the cwd, a top-level or a system directory.
    #[test]
    fn offerable_grants_stay_project_sized() {
        let ctx = grant_ctx(&NoFs, "/srv2/u/proj/sub", &[]);
        for ok in [
            "/srv2/u/proj/sub",
            "/srv2/u/proj/sub/out",
            "/home/u/other",
            "/var/tmp/x",
        ] {
            assert!(offerable_grant(Path::new(ok), &ctx).is_ok(), "{ok}");
        }
        assert_no_grant(
            &ctx,
            &[
                "/",
                "/home",
                "/home/u",
                "/srv2",
                "/srv2/u",
                "/srv2/u/proj",
                "/usr/local",
                "/etc/x",
                // Tool configuration where later programs run what is written (breaker).
                "/home/u/.config/systemd/user",
                "/home/u/.local/bin",
                "/home/u/.config/git",
                // nu25 F2: every tool's cache at once.
                "/home/u/.cache",
                // nu24 F7c: a known cache under a hidden directory, named as one.
                "/home/u/.npm/_cacache",
                // attack48 N2: a node_modules outside the project, a hidden directory deeper
                // in the home.
                "/home/u/node_modules/leftpad",
                "/srv2/u/node_modules",
                "/home/u/snap/code/common/.vscode/extensions",
                // attack47 N2: any one tool's cache (code the tool later runs).
                "/home/u/.cache/pip",
                "/home/u/.cache/deno/remote/https",
                "/home/u/.cache/huggingface/modules",
                // nu26 F6: cordon's own cache state.
                "/home/u/.cache/cordon",
                "/home/u/.cache/cordon/overlays/k",
                // Another repository's metadata (breaker, stop 18).
                "/var/tmp/r/.git/hooks",
                "/srv2/u/other/.git/config",
                "/home/u/other/.cordon",
            ],
            |no| no.to_string(),
        );
        // nu17 N2: another home is named as one, not as a system directory.
        let why = offerable_grant(Path::new("/root/.cargo/registry"), &ctx).unwrap_err();
        assert!(why.contains("home directory other than $HOME"), "{why}");
        let why = offerable_grant(Path::new("/usr/local/x"), &ctx).unwrap_err();
        assert!(why.contains("a system directory"), "{why}");
    }

    /// Attack pass 48, N2: nothing inside another project's work tree is offered (its
    /// `package.json`, `Makefile`, sources run when it is built or tested). Twins: a plain
    /// directory beside the project is offered; a bare repository's refs stay offerable.
    #[test]
    fn another_projects_work_tree_gets_no_grant() {
        let fs = cordon_policy::MemFs::new()
            .file("/srv2/u/other/.git/HEAD", "ref: refs/heads/main\n")
            .dir("/srv2/u/other/.git/objects")
            .dir("/srv2/u/other/.git/refs")
            .dir("/srv2/u/other/scripts")
            .dir("/srv2/u/plain/out");
        let ctx = grant_ctx(&fs, "/srv2/u/proj", &[]);
        for no in ["/srv2/u/other", "/srv2/u/other/scripts"] {
            let why = offerable_grant(Path::new(no), &ctx).unwrap_err();
            assert!(why.contains("repository at /srv2/u/other"), "{no}: {why}");
        }
        assert!(offerable_grant(Path::new("/srv2/u/plain/out"), &ctx).is_ok());
    }

    /// nu29 F3: another version-control system's project is another project: its metadata
    /// (`.hg/hgrc` runs extensions) and its work tree get no grant. Twin: a plain directory
    /// beside it is offered.
    #[test]
    fn another_vcs_project_gets_no_grant() {
        let fs = cordon_policy::MemFs::new()
            .file("/srv2/u/hgp/.hg/hgrc", "")
            .dir("/srv2/u/hgp/src")
            .file("/srv2/u/jjp/.jj/repo/config.toml", "")
            .dir("/srv2/u/plain");
        let ctx = grant_ctx(&fs, "/srv2/u/proj", &[]);
        assert_no_grant(
            &ctx,
            &[
                "/srv2/u/hgp/.hg",
                "/srv2/u/hgp/.hg/hgrc",
                "/srv2/u/hgp",
                "/srv2/u/hgp/src",
                "/srv2/u/jjp/.jj/repo",
            ],
            |_| "another project".to_string(),
        );
        assert!(offerable_grant(Path::new("/srv2/u/plain"), &ctx).is_ok());
    }

    /// Attack pass 48, N4: no grant on, above or inside the directory of cordon's own
    /// program (here the test binary's). Twin: a sibling directory is offered.
    #[test]
    fn cordons_own_program_directory_gets_no_grant() {
        let exe = std::env::current_exe().unwrap().canonicalize().unwrap();
        let dir = exe.parent().unwrap();
        let ctx = grant_ctx(&NoFs, "/srv2/u/proj", &[]);
        for no in [
            dir.to_path_buf(),
            dir.join("sub"),
            dir.parent().unwrap().to_path_buf(),
        ] {
            let why = offerable_grant(&no, &ctx).unwrap_err();
            assert!(
                why.contains("cordon's own program"),
                "{}: {why}",
                no.display()
            );
        }
        assert!(cordons_program(&dir.with_file_name("cordon-sibling-dir")).is_none());
    }

    /// nu26 F2: a refused write outside the project to a file named as a git hook gets no
    /// grant (some repository's `core.hooksPath` may name its directory). Twins: another
    /// file there is still offered its directory; the project's own hook is offered.
    #[test]
    fn a_file_named_as_a_git_hook_outside_the_project_gets_no_grant() {
        let fs = cordon_policy::MemFs::new()
            .dir("/var/tmp/hd")
            .dir("/srv2/u/proj");
        let ctx = grant_ctx(&fs, "/srv2/u/proj", &[]);
        let rule = "read-only: outside every writable root";
        let rec = record("/var/tmp/hd/pre-commit", rule, Some("/var/tmp/hd"));
        let (hint, offered) = record_hint(&rec, &ctx);
        assert_eq!(offered, None, "{hint}");
        assert!(hint.contains("git hook"), "{hint}");
        let rec = record("/var/tmp/hd/notes.txt", rule, Some("/var/tmp/hd"));
        let (hint, offered) = record_hint(&rec, &ctx);
        assert_eq!(offered.as_deref(), Some(Path::new("/var/tmp/hd")), "{hint}");
        let r = resolved();
        let fs = cordon_policy::MemFs::new().dir("/w/tools");
        let ctx = ClassifyContext {
            resolved: Some(&r),
            fs: &fs,
            cwd: Path::new("/w"),
            network_enabled: false,
            home: Some(Path::new("/home/u")),
            path_dirs: &[],
            words: &[],
        };
        let rec = record("/w/tools/hooks/pre-commit", rule, Some("/w/tools/hooks"));
        let (hint, offered) = record_hint(&rec, &ctx);
        assert_eq!(
            offered.as_deref(),
            Some(Path::new("/w/tools/hooks")),
            "{hint}"
        );
    }

    /// New-user pass 211, #9: a refused write of git's dumb-HTTP file `.git/info/refs_XXX`
    /// offered `-w .git/info`, against the README's advice (`git update-server-info`
    /// outside cordon). Twin: another protected file of the project's `.git` keeps its
    /// one-off grant.
    #[test]
    fn git_info_refs_is_not_offered_a_grant() {
        let r = resolved();
        let fs = cordon_policy::MemFs::new()
            .dir("/w/.git/info")
            .dir("/w/.git/hooks");
        let ctx = ClassifyContext {
            resolved: Some(&r),
            fs: &fs,
            cwd: Path::new("/w"),
            network_enabled: false,
            home: Some(Path::new("/home/u")),
            path_dirs: &[],
            words: &[],
        };
        let rule = "protected (R-P3)";
        for f in ["refs_bMZkSE", "refs", "rev-cache"] {
            let rec = record(&format!("/w/.git/info/{f}"), rule, Some("/w/.git/info"));
            let (hint, offered) = record_hint(&rec, &ctx);
            assert_eq!(offered, None, "{f}: {hint}");
            assert!(hint.contains("git update-server-info"), "{hint}");
        }
        let rec = record("/w/.git/hooks/pre-commit", rule, Some("/w/.git/hooks"));
        let (hint, offered) = record_hint(&rec, &ctx);
        assert_eq!(
            offered.as_deref(),
            Some(Path::new("/w/.git/hooks")),
            "{hint}"
        );
    }

    /// nu23 Q5: a protected path in a bare repository (its hooks, its config) gets no
    /// widening — not the repository, which leaves it protected and may be granted
    /// already, nor the path itself, another repository's metadata. Twin: a plain refused
    /// write in it (a push's `refs/`) is still lifted to the repository.
    #[test]
    fn a_bare_repositorys_protected_paths_get_no_grant() {
        let fs = cordon_policy::MemFs::new()
            .file("/data/remote.git/HEAD", "ref: refs/heads/main\n")
            .dir("/data/remote.git/objects")
            .dir("/data/remote.git/refs/heads")
            .dir("/data/remote.git/hooks");
        let ctx = grant_ctx(&fs, "/srv2/u/proj", &[]);
        for (path, grant) in [
            (
                "/data/remote.git/hooks/post-receive",
                "/data/remote.git/hooks",
            ),
            ("/data/remote.git/config", "/data/remote.git/config"),
        ] {
            let rec = record(path, "protected (R-P3): git hooks run code", Some(grant));
            let (hint, offered) = record_hint(&rec, &ctx);
            assert_eq!(offered, None, "{path}: {hint}");
            assert!(hint.contains("git directory of another project"), "{hint}");
        }
        let rec = record(
            "/data/remote.git/refs/heads/main.lock",
            "read-only: outside every writable root",
            Some("/data/remote.git/refs/heads"),
        );
        let (hint, offered) = record_hint(&rec, &ctx);
        assert_eq!(
            offered.as_deref(),
            Some(Path::new("/data/remote.git")),
            "{hint}"
        );
    }

    /// Attack pass 45, M1: what another repository runs — its `core.hooksPath` hooks, a
    /// hook manager's config, husky's directory — is never offered; since attack pass 48,
    /// N2, nor is any other file of its work tree (named as another project's). Twin: a
    /// grant in the workspace's own repository is offered.
    #[test]
    fn another_repositorys_code_paths_get_no_grant() {
        let fs = cordon_policy::MemFs::new()
            .file("/srv2/o/.git/HEAD", "ref: refs/heads/main\n")
            .dir("/srv2/o/.git/objects")
            .file("/srv2/o/.git/config", "[core]\n\thooksPath = .githooks\n")
            .file(
                "/srv2/o/.githooks/pre-commit",
                "#!/bin/sh\nlefthook run pre-commit\n",
            )
            .file("/srv2/o/lefthook.yml", "")
            .file("/srv2/o/src/data.txt", "");
        let ctx = grant_ctx(&fs, "/srv2/u/proj", &[]);
        assert_no_grant(
            &ctx,
            &[
                "/srv2/o/.githooks/pre-commit",
                "/srv2/o/.githooks",
                "/srv2/o/lefthook.yml",
                "/srv2/o",
            ],
            |_| "repository at /srv2/o".to_string(),
        );
        for no in ["/srv2/o/src/data.txt", "/srv2/o/src"] {
            let why = offerable_grant(Path::new(no), &ctx).unwrap_err();
            assert!(why.contains("another project"), "{no}: {why}");
        }
        let ctx = grant_ctx(&fs, "/srv2/o", &[]);
        let r = ResolvedProfile {
            workspace: "/srv2/o".into(),
            ..resolved()
        };
        let ctx = ClassifyContext {
            resolved: Some(&r),
            ..ctx
        };
        assert!(offerable_grant(Path::new("/srv2/o/src"), &ctx).is_ok());
    }

    /// Attack pass 46, N1: what the global git configuration runs for every repository (an
    /// absolute `core.hooksPath`, an include) and what a home dotfile leads to through a
    /// symlink are never offered. Twin: a neighbour file stays offerable.
    #[test]
    fn global_git_config_targets_and_dotfile_targets_get_no_grant() {
        let fs = cordon_policy::MemFs::new()
            .file(
                "/home/u/.gitconfig",
                "[core]\n\thooksPath = /srv2/g\n[include]\n\tpath = /srv2/i/team.gitconfig\n",
            )
            .file("/srv2/g/pre-commit", "#!/bin/sh\n")
            .file("/srv2/i/team.gitconfig", "")
            .file("/srv2/i/notes.txt", "")
            .file("/home/u/dotfiles/bashrc", "")
            .symlink("/home/u/.bashrc", "dotfiles/bashrc");
        let ctx = grant_ctx(&fs, "/srv2/u/proj", &[]);
        assert_no_grant(
            &ctx,
            &[
                "/srv2/g/pre-commit",
                "/srv2/g",
                "/srv2/i/team.gitconfig",
                "/home/u/dotfiles/bashrc",
            ],
            |no| no.to_string(),
        );
        assert!(offerable_grant(Path::new("/srv2/i/notes.txt"), &ctx).is_ok());
    }

    /// nu23 Q2 (and attack44 L4): a grant where a program the command plants runs later
    /// outside any sandbox is never offered: a directory of the caller's PATH (`~/bin`,
    /// `~/go/bin`), one inside or holding one, a path through `bin/` or a cache of
    /// programs (pre-commit's hook environments), a tool prefix holding `bin/`. Twins: a
    /// data directory in the home stays offerable.
    #[test]
    fn no_grant_where_a_planted_program_runs_later() {
        let fs = cordon_policy::MemFs::new()
            .dir("/home/u/bin")
            .dir("/home/u/go/bin")
            .dir("/home/u/tools/bin")
            .dir("/home/u/other")
            .dir("/home/u/.cache/pip")
            .dir("/home/u/.cache/node/corepack");
        let path_dirs = [
            PathBuf::from("/home/u/bin"),
            PathBuf::from("/home/u/go/bin"),
            PathBuf::from("/usr/bin"),
        ];
        let ctx = grant_ctx(&fs, "/srv2/u/proj", &path_dirs);
        for no in [
            "/home/u/bin",
            "/home/u/bin/git",
            "/home/u/go/bin/gopls",
            "/home/u/go",
            "/home/u/.cache/pre-commit/repoab12",
            "/home/u/.cache/pre-commit/repoab12/py_env-python3/bin/black",
            "/home/u/.cache/node/corepack",
            // nu25 F2: a directory holding one.
            "/home/u/.cache/node",
            "/home/u/tools",
            "/home/u/other/venv/Scripts",
        ] {
            let why = offerable_grant(Path::new(no), &ctx).unwrap_err();
            assert!(
                why.contains(no) && (why.contains("program") || why.contains("PATH")),
                "{no}: {why}"
            );
        }
        for ok in ["/home/u/other", "/var/tmp/x"] {
            // (The home's caches are refused: `offerable_grants_stay_project_sized`.)
            assert!(offerable_grant(Path::new(ok), &ctx).is_ok(), "{ok}");
        }
    }

    /// New-user pass nu21: K2, an access error naming one path is not blamed on a refused
    /// write of another path the output never names (bash's history write on exit); K1, a
    /// failed connection to an address is the network when the sandbox recorded the
    /// attempt (curl: "Failed to connect to 1.1.1.1 port 443"). Twins: an access error
    /// naming no path still takes the last record; a loopback failure is not the network.
    #[test]
    fn the_cause_is_what_the_output_names() {
        let history = record("/w/home/.bash_history", "denied by the profile", None);
        let o = run_with_records(
            3,
            "cat: /w/home/.ssh/id_ed25519: Permission denied",
            vec![history.clone()],
        );
        assert!(
            !matches!(&o.class, OutcomeClass::SandboxDenied { path: Some(p), .. } if p.ends_with(".bash_history")),
            "{o:?}"
        );
        let o = run_with_records(1, "error: Permission denied", vec![history]);
        assert!(
            matches!(&o.class, OutcomeClass::SandboxDenied { path: Some(p), .. } if p.ends_with(".bash_history")),
            "{o:?}"
        );
        let net = cordon_sandbox::denials::DenialRecord {
            syscall: cordon_sandbox::denials::DenialRecord::NETWORK_SYSCALL.into(),
            path: "1.1.1.1:443".into(),
            errno: "ENETUNREACH".into(),
            rule: "network off (R-P4)".into(),
            grant: None,
        };
        let o = run_with_records(
            7,
            "curl: (7) Failed to connect to 1.1.1.1 port 443 after 0 ms: Couldn't connect to server",
            vec![net.clone()],
        );
        assert!(
            matches!(o.class, OutcomeClass::NetworkDenied { .. }),
            "{o:?}"
        );
        // New-user pass 243 #3: a network failure the output gives without the address
        // (Python's "Network is unreachable") is what the record was: no evidence line
        // says the record was "not counted as the cause".
        let o = run_with_records(
            1,
            "OSError: [Errno 101] Network is unreachable",
            vec![net.clone()],
        );
        assert!(
            matches!(o.class, OutcomeClass::NetworkDenied { .. }),
            "{o:?}"
        );
        assert!(
            !o.evidence.iter().any(|e| e.detail.contains("not counted")),
            "{:?}",
            o.evidence
        );
        // Attack pass 43, J4: a record of another address is not what the line names.
        let o = run_with_records(
            7,
            "psql: error: could not connect to 10.9.9.9 port 5432: timed out",
            vec![net.clone()],
        );
        assert!(
            !matches!(o.class, OutcomeClass::NetworkDenied { .. }),
            "{o:?}"
        );
        let o = run_with_records(
            7,
            "curl: (7) Failed to connect to 127.0.0.1 port 8799 after 0 ms: Couldn't connect to server",
            vec![],
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        assert!(o.hint.unwrap_or_default().contains("--local-port"));
        // K5: npm names the host on a later line than its first EAI_AGAIN.
        let dns = cordon_sandbox::denials::DenialRecord {
            path: "10.255.255.53:53".into(),
            ..net
        };
        let o = run_with_records(
            1,
            "npm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/x \
             failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
            vec![dns],
        );
        match &o.class {
            OutcomeClass::NetworkDenied { host, .. } => {
                assert_eq!(host.as_deref(), Some("registry.npmjs.org"), "{o:?}")
            }
            c => panic!("{c:?}"),
        }
    }

    /// New-user pass nu21, K7: `git gc` exits 0 after printing an error about the protected
    /// `.git/info/refs`: a note says it is harmless. Twin: other refused writes of a
    /// command that worked get no such note.
    #[test]
    fn a_refused_info_refs_after_git_gc_is_named_harmless() {
        let rec = |p: &str| record(p, "protected (R-P3)", None);
        let o = run_with_records(0, "", vec![rec("/w/.git/info/refs_abc")]);
        assert_eq!(o.class, OutcomeClass::Success);
        assert!(o.hint.unwrap_or_default().contains("dumb HTTP"));
        let o = run_with_records(0, "", vec![rec("/w/.git/hooks/pre-commit")]);
        assert_eq!(o.hint, None);
        // Attack pass 43, J5: not another file named like it, nor beside another refusal.
        let o = run_with_records(0, "", vec![rec("/w/.git/info/refs-evil")]);
        assert_eq!(o.hint, None);
        let o = run_with_records(
            0,
            "",
            vec![rec("/w/.git/info/refs"), rec("/w/.git/hooks/pre-commit")],
        );
        assert_eq!(o.hint, None);
    }

    /// New-user pass 155, #3: a command that exited 0 after the sandbox refused a write a
    /// grant could lift is `success` with a hint naming the refusal and the grant (an
    /// agent reads the exit code and took the write as done). Twins: a refusal no grant
    /// lifts says nothing, and neither does a clean run.
    #[test]
    fn a_success_with_a_liftable_refusal_says_so() {
        let o = run_with_records(
            0,
            "sh: 1: cannot create /data/src/out.txt: Read-only file system",
            vec![
                record(
                    "/data/src/out.txt",
                    "read-only: outside every writable root",
                    Some("/data/src"),
                ),
                record(
                    "/data/src/more.txt",
                    "read-only: outside every writable root",
                    Some("/data/src"),
                ),
            ],
        );
        assert_eq!(o.class, OutcomeClass::Success, "{o:?}");
        let hint = o.hint.unwrap_or_default();
        assert!(
            hint.starts_with(
                "the command exited 0, but the sandbox refused `openat /data/src/out.txt`"
            ) && hint.contains("and 1 more")
                && hint.contains("-w /data/src"),
            "{hint}"
        );
        let o = run_with_records(
            0,
            "",
            vec![record(
                "/usr/lib/x.pyc",
                "read-only: outside every writable root",
                None,
            )],
        );
        assert_eq!(o.hint, None, "{o:?}");
        assert_eq!(run_with_records(0, "", vec![]).hint, None);
    }

    /// A workspace `/w` whose `.git/modules` is protected, with the submodule git dir
    /// `/w/.git/modules/libsub` on disk; `extra` entries added (a `-w` given).
    fn submodule_case(extra: Vec<ResolvedEntry>) -> (ResolvedProfile, cordon_policy::MemFs) {
        let mut r = resolved();
        if let ResolvedFilesystem::Restricted { entries, .. } = &mut r.filesystem {
            entries[1] = entry(
                "/w/.git/config",
                Access::Read,
                EntryOrigin::Protected {
                    reason: cordon_policy::gitconfig::GIT_CONFIG_REASON.into(),
                },
            );
            entries.push(entry(
                "/w/.git/modules",
                Access::Read,
                EntryOrigin::Protected {
                    reason: "submodule git dirs have their own hooks and config".into(),
                },
            ));
            entries.extend(extra);
        }
        let fs = cordon_policy::MemFs::new()
            .dir("/w")
            .file("/w/.git/HEAD", "ref: refs/heads/main\n")
            .file("/w/.git/config", "")
            .file("/w/.git/modules/libsub/HEAD", "ref: refs/heads/main\n")
            .file("/w/.git/modules/libsub/config", "");
        (r, fs)
    }

    fn classify_with(
        r: &ResolvedProfile,
        fs: &dyn FsView,
        code: i32,
        tail: &str,
        recs: Vec<cordon_sandbox::denials::DenialRecord>,
    ) -> Outcome {
        let mut d = cordon_sandbox::denials::DenialReport::default();
        for rec in recs {
            d.push(rec);
        }
        classify(
            &RunSignals {
                code: Some(code),
                stderr_tail: tail.into(),
                sandboxed: true,
                denials: Some(d),
                ..Default::default()
            },
            &ClassifyContext {
                resolved: Some(r),
                fs,
                cwd: Path::new("/w"),
                network_enabled: false,
                home: None,
                path_dirs: &[],
                words: &[],
            },
        )
    }

    /// Hints finding 1: `git submodule update --init` with the submodule's git dir
    /// protected was offered `-w .git/modules/libsub`; that run then failed (EBUSY) renaming
    /// `config.lock` over the protected `config` and offered `-w …/config`, which failed
    /// creating the lock and offered `-w .git/modules/libsub` again. The offer is both, in
    /// one step (the retry gets both too), and stderr naming the locked file relative to
    /// the cwd names the record. Sibling: the EBUSY rename with the directory granted names
    /// both again. Twin: the workspace's own `.git/config` (a private copy merged back)
    /// keeps its single offer.
    #[test]
    fn a_submodule_config_lock_offers_the_directory_and_the_file_together() {
        let (r, fs) = submodule_case(vec![]);
        let protected = "protected (R-P3): submodule git dirs have their own hooks and config";
        let o = classify_with(
            &r,
            &fs,
            128,
            "error: could not lock config file .git/modules/libsub/config: Read-only file \
             system\nfatal: Unable to create '/w/.git/modules/libsub/index.lock': Read-only \
             file system",
            vec![
                record(
                    "/w/.git/modules/libsub/config.lock",
                    protected,
                    Some("/w/.git/modules/libsub"),
                ),
                record(
                    "/w/.git/modules/libsub/index.lock",
                    protected,
                    Some("/w/.git/modules/libsub"),
                ),
            ],
        );
        let hint = o.hint.clone().unwrap_or_default();
        assert!(
            hint.contains(
                "allow writing it once with -w .git/modules/libsub, together with -w \
                 .git/modules/libsub/config"
            ),
            "{hint}"
        );
        assert_eq!(o.confidence, Confidence::High, "{o:?}");
        match &o.class {
            OutcomeClass::SandboxDenied {
                path,
                grant,
                also_grant,
                ..
            } => {
                assert_eq!(
                    path.as_deref(),
                    Some(Path::new("/w/.git/modules/libsub/config.lock"))
                );
                assert_eq!(grant.as_deref(), Some(Path::new("/w/.git/modules/libsub")));
                assert_eq!(
                    also_grant,
                    &[PathBuf::from("/w/.git/modules/libsub/config")]
                );
            }
            c => panic!("{c:?}"),
        }
        // Only the lock named, by the config's name relative to the cwd: named.
        let o = classify_with(
            &r,
            &fs,
            128,
            "error: could not lock config file .git/modules/libsub/config: Read-only file system",
            vec![record(
                "/w/.git/modules/libsub/config.lock",
                protected,
                Some("/w/.git/modules/libsub"),
            )],
        );
        assert_eq!(o.confidence, Confidence::High, "{o:?}");
        assert!(!o.hint.unwrap_or_default().contains("does not name"));
        // Sibling: with `-w .git/modules/libsub` given, the rename over `config` is refused.
        let (r, fs) = submodule_case(vec![
            entry(
                "/w/.git/modules/libsub",
                Access::Write,
                EntryOrigin::Profile {
                    index: 9,
                    spelling: ".git/modules/libsub".into(),
                    source: Some("--writable".into()),
                },
            ),
            entry(
                "/w/.git/modules/libsub/config",
                Access::Read,
                EntryOrigin::Protected {
                    reason: cordon_policy::gitconfig::GIT_CONFIG_REASON.into(),
                },
            ),
        ]);
        let mut rename = record(
            "/w/.git/modules/libsub/config",
            &format!(
                "protected (R-P3): {}",
                cordon_policy::gitconfig::GIT_CONFIG_REASON
            ),
            Some("/w/.git/modules/libsub/config"),
        );
        rename.syscall = "rename".into();
        rename.errno = "EBUSY".into();
        let o = classify_with(
            &r,
            &fs,
            0,
            "error: could not write config file /w/.git/modules/libsub/config: Device or \
             resource busy",
            vec![rename],
        );
        let hint = o.hint.unwrap_or_default();
        assert!(
            hint.contains("-w .git/modules/libsub, together with -w .git/modules/libsub/config"),
            "{hint}"
        );
        // Twin: the workspace's own config lock keeps its single grant.
        let (r, fs) = submodule_case(vec![]);
        let o = classify_with(
            &r,
            &fs,
            255,
            "error: could not lock config file .git/config: Read-only file system",
            vec![record(
                "/w/.git/config",
                &format!(
                    "protected (R-P3): {}",
                    cordon_policy::gitconfig::GIT_CONFIG_REASON
                ),
                Some("/w/.git/config"),
            )],
        );
        match &o.class {
            OutcomeClass::SandboxDenied {
                grant, also_grant, ..
            } => {
                assert_eq!(grant.as_deref(), Some(Path::new("/w/.git/config")));
                assert!(also_grant.is_empty(), "{also_grant:?}");
            }
            c => panic!("{c:?}"),
        }
        assert!(!o.hint.unwrap_or_default().contains("together with"));
    }

    /// Hints finding 1 follow-up: a lock file counts as named by the file it locks, so
    /// `git config --global`'s refused `~/.gitconfig.lock` (the home's stripped copy, R-C2)
    /// is named by git's "could not lock config file ~/.gitconfig": its hint is the
    /// stripped copy's, with no grant. Twin: a lock of a plain outside file is offered its
    /// directory.
    #[test]
    fn a_lock_of_a_stripped_copy_is_told_the_copy_is_read_only() {
        let mut r = resolved();
        r.stripped = vec![cordon_policy::stripped::StrippedFile {
            path: "/home/u/.gitconfig".into(),
            format: cordon_policy::stripped::ConfigFormat::GitConfig,
        }];
        let fs = cordon_policy::MemFs::new()
            .dir("/w")
            .file("/home/u/.gitconfig", "")
            .file("/data/x/conf", "");
        let o = classify_with(
            &r,
            &fs,
            255,
            "error: could not lock config file /home/u/.gitconfig: Read-only file system",
            vec![record(
                "/home/u/.gitconfig.lock",
                "read-only: outside every writable root",
                Some("/home/u"),
            )],
        );
        let hint = o.hint.clone().unwrap_or_default();
        assert!(
            hint.starts_with("/home/u/.gitconfig is shown to this command as a read-only copy"),
            "{hint}"
        );
        assert!(
            matches!(o.class, OutcomeClass::SandboxDenied { grant: None, .. }),
            "{o:?}"
        );
        let o = classify_with(
            &r,
            &fs,
            255,
            "error: could not lock config file /data/x/conf: Read-only file system",
            vec![record(
                "/data/x/conf.lock",
                "read-only: outside every writable root",
                Some("/data/x"),
            )],
        );
        assert_eq!(o.confidence, Confidence::High, "{o:?}");
        assert!(
            o.hint
                .unwrap_or_default()
                .contains("allow writing it once with -w /data/x"),
            "{:?}",
            o.class
        );
    }

    /// Hints finding 2: `git status` in a repository with a submodule exited 0 and got a
    /// note offering `-w .git/modules/libsub` for the `index.lock` git takes only to save a
    /// refreshed index. Nothing is said when that is all that was refused (sibling: the
    /// workspace's own `.git/index.lock` under a read-only `.git`). Twins: a failed `git
    /// add` keeps its hint, and a success with another refused write beside the lock
    /// names that write.
    #[test]
    fn an_opportunistic_index_lock_is_not_a_note() {
        let (r, fs) = submodule_case(vec![]);
        let protected = "protected (R-P3): submodule git dirs have their own hooks and config";
        let lock = record(
            "/w/.git/modules/libsub/index.lock",
            protected,
            Some("/w/.git/modules/libsub"),
        );
        let o = classify_with(&r, &fs, 0, "", vec![lock.clone()]);
        assert_eq!(o.class, OutcomeClass::Success, "{o:?}");
        assert_eq!(o.hint, None, "{o:?}");
        let own = record(
            "/w/.git/index.lock",
            "read-only: outside every writable root",
            Some("/w/.git"),
        );
        let o = classify_with(&r, &fs, 0, "", vec![own]);
        assert_eq!(o.hint, None, "{o:?}");
        // Twin: a failed command still gets its hint.
        let o = classify_with(
            &r,
            &fs,
            128,
            "fatal: Unable to create '/w/.git/modules/libsub/index.lock': Read-only file system",
            vec![lock.clone()],
        );
        assert!(
            o.hint
                .as_deref()
                .unwrap_or_default()
                .contains("allow writing it once with -w .git/modules/libsub"),
            "{o:?}"
        );
        // Twin: another refused write beside it is said, and only it is named.
        let other = record(
            "/data/src/out.txt",
            "read-only: outside every writable root",
            Some("/data/src"),
        );
        let o = classify_with(&r, &fs, 0, "", vec![lock, other]);
        let hint = o.hint.unwrap_or_default();
        assert!(
            hint.starts_with(
                "the command exited 0, but the sandbox refused `openat /data/src/out.txt`"
            ) && !hint.contains("and 1 more"),
            "{hint}"
        );
    }

    /// New-user pass nu20, G4: a limit the helper reported, and a `network.local` forward
    /// that found nothing listening, have a hint a person can act on (it was null while
    /// stderr said what to do). Twin: a plain failure has none.
    #[test]
    fn limits_and_unreachable_forwards_have_a_hint() {
        let o = run_in(
            "/w",
            RunSignals {
                code: Some(124),
                sandboxed: true,
                limit: Some("timeout".into()),
                ..Default::default()
            },
        );
        assert!(matches!(o.class, OutcomeClass::LimitExceeded { .. }));
        assert!(o.hint.unwrap().contains("limits.timeout"));
        let o = run_in(
            "/w",
            RunSignals {
                code: Some(52),
                sandboxed: true,
                stderr_tail: "curl: (52) Empty reply from server".into(),
                connect_failures: vec![ConnectFailure {
                    target: "127.0.0.1:18081".into(),
                    via: "network.local".into(),
                    error: "Connection refused (os error 111)".into(),
                }],
                ..Default::default()
            },
        );
        assert_eq!(o.class, OutcomeClass::CommandFailed);
        let hint = o.hint.unwrap();
        assert!(
            hint.contains("127.0.0.1:18081") && hint.contains("is the service running"),
            "{hint}"
        );
        // nu21 K8: also when the command exits 0 after the empty reply.
        let o = run_in(
            "/w",
            RunSignals {
                code: Some(0),
                sandboxed: true,
                connect_failures: vec![ConnectFailure {
                    target: "127.0.0.1:18081".into(),
                    via: "network.local".into(),
                    error: "Connection refused (os error 111)".into(),
                }],
                ..Default::default()
            },
        );
        assert_eq!(o.class, OutcomeClass::Success);
        assert!(o.hint.unwrap_or_default().contains("127.0.0.1:18081"));
        let plain = run_in(
            "/w",
            RunSignals {
                code: Some(1),
                sandboxed: true,
                stderr_tail: "1 failed".into(),
                ..Default::default()
            },
        );
        assert_eq!(plain.hint, None);
    }

    /// With kernel-side records, a network failure is judged on them: printed words alone
    /// are a failed command with no network offered (breaker, stop 8: a faked "Could not
    /// resolve host" got the network offered, and the approved retry had it); a recorded
    /// attempt the output names is network-denied with high confidence.
    #[test]
    fn network_failure_needs_a_recorded_attempt_when_records_are_kept() {
        let with = |tail: &str, recs| run_with_records(6, tail, recs);
        let fake = with("curl: (6) Could not resolve host: evil.com", vec![]);
        assert_eq!(fake.class, OutcomeClass::CommandFailed, "{fake:?}");
        assert!(fake.hint.unwrap().contains("saw no connection attempt"));
        let net = cordon_sandbox::denials::DenialRecord {
            syscall: cordon_sandbox::denials::DenialRecord::NETWORK_SYSCALL.into(),
            path: "93.184.216.34:443".into(),
            errno: "ENETUNREACH".into(),
            rule: "network off (R-P4)".into(),
            grant: None,
        };
        let real = with(
            "curl: (6) Could not resolve host: example.com",
            vec![net.clone()],
        );
        assert_eq!(real.confidence, Confidence::High);
        match &real.class {
            OutcomeClass::NetworkDenied { host, rule } => {
                assert_eq!(host.as_deref(), Some("example.com"));
                assert_eq!(rule.as_deref(), Some("network off (R-P4)"));
            }
            c => panic!("{c:?}"),
        }
        // A recorded attempt the output never names is not the cause for certain (nu20
        // G2: npm's background update check made a missing script `network-denied`, with
        // the network offered): the failure stays the command's, low confidence, and the
        // hint says what to do if it was the network.
        for tail in ["", "npm error Missing script: \"deploy\""] {
            let quiet = with(tail, vec![net.clone()]);
            assert_eq!(quiet.class, OutcomeClass::CommandFailed, "{quiet:?}");
            assert_eq!(quiet.confidence, Confidence::Low);
            let hint = quiet.hint.unwrap();
            assert!(
                hint.contains("93.184.216.34:443") && hint.contains("--allow-network"),
                "{hint}"
            );
        }
        // Other spellings of a failed lookup name it (wget, Java, Go/.NET).
        for tail in [
            "wget: unable to resolve host address 'example.com'",
            "java.net.UnknownHostException: example.com",
            "dial tcp: lookup example.com: no such host",
        ] {
            let o = with(tail, vec![net.clone()]);
            assert!(
                matches!(o.class, OutcomeClass::NetworkDenied { .. }),
                "{tail}: {o:?}"
            );
        }
        // A lookup refused at the resolver names no host and says it was DNS (new user,
        // stop 18: the resolver's address was shown as the host).
        let dns_rec = cordon_sandbox::denials::DenialRecord {
            path: "10.255.255.53:53".into(),
            ..net.clone()
        };
        let dns = with(
            "socket.gaierror: [Errno -3] Temporary failure in name resolution",
            vec![dns_rec],
        );
        match &dns.class {
            OutcomeClass::NetworkDenied { host, .. } => assert_eq!(*host, None, "{dns:?}"),
            c => panic!("{c:?}"),
        }
        assert!(dns.hint.unwrap().contains("DNS lookup"));
        // New-user pass nu9: a wildcard address is no destination (glibc connects a UDP
        // socket to each AI_PASSIVE result): a failing local test stays command-failed.
        for wildcard in ["0.0.0.0:5000", "[::]:5000"] {
            let passive = cordon_sandbox::denials::DenialRecord {
                path: wildcard.into(),
                ..net.clone()
            };
            let o = with("1 failed, 3 passed in 0.57s", vec![passive]);
            assert_eq!(o.class, OutcomeClass::CommandFailed, "{wildcard}: {o:?}");
        }
        // A network record never becomes a path denial.
        let mixed = with("Permission denied", vec![net]);
        assert!(
            !matches!(mixed.class, OutcomeClass::SandboxDenied { .. }),
            "{mixed:?}"
        );
        // Without records (no supervisor on this host) the output is read as before.
        let old = run_in(
            "/w",
            RunSignals {
                code: Some(6),
                stderr_tail: "curl: (6) Could not resolve host: example.com".into(),
                sandboxed: true,
                denials: None,
                ..Default::default()
            },
        );
        assert!(matches!(old.class, OutcomeClass::NetworkDenied { .. }));
        assert_eq!(old.confidence, Confidence::Medium);
    }

    /// New user (stop 19): with a managed network, a program that went out by itself (no
    /// proxy) is told to use the proxy or allow the host, not that the network is off
    /// (whose advice, `--allow-network`, lifts all filtering).
    #[test]
    fn managed_network_failures_point_at_the_proxy() {
        let mut r = resolved();
        r.cwd = "/w".into();
        r.profile.network = cordon_policy::NetworkPolicy::Managed;
        let mut d = cordon_sandbox::denials::DenialReport::default();
        d.push(cordon_sandbox::denials::DenialRecord {
            syscall: cordon_sandbox::denials::DenialRecord::NETWORK_SYSCALL.into(),
            path: "10.255.255.53:53".into(),
            errno: "ECONNREFUSED".into(),
            rule: "network managed (R-P4)".into(),
            grant: None,
        });
        let sig = RunSignals {
            code: Some(1),
            stderr_tail: "socket.gaierror: [Errno -3] Temporary failure in name resolution".into(),
            sandboxed: true,
            denials: Some(d),
            ..Default::default()
        };
        let ctx = |r: &ResolvedProfile| {
            classify(
                &sig,
                &ClassifyContext {
                    resolved: Some(r),
                    fs: &NoFs,
                    cwd: Path::new("/w"),
                    network_enabled: false,
                    home: None,
                    path_dirs: &[],
                    words: &[],
                },
            )
        };
        let o = ctx(&r);
        let hint = o.hint.unwrap_or_default();
        assert!(
            hint.contains("managed") && hint.contains("proxy") && hint.contains("network.allow"),
            "{hint}"
        );
        // Restricted (sibling): the network is off, as before.
        r.profile.network = cordon_policy::NetworkPolicy::Restricted;
        let hint = ctx(&r).hint.unwrap_or_default();
        assert!(hint.contains("network is off"), "{hint}");
    }

    /// New-user pass nu9: a later command not finding what an earlier one left in `/tmp`
    /// gets a hint that `/tmp` is private per command. Twins: the host's `/tmp` (rung 2: no
    /// rebuilt tree) and a path elsewhere get none.
    #[test]
    fn a_missing_file_under_private_tmp_gets_a_hint() {
        let sig = |tail: &str, rebuilt_tmp| RunSignals {
            code: Some(1),
            stderr_tail: tail.into(),
            sandboxed: true,
            rebuilt_tmp,
            ..Default::default()
        };
        let gone = "cat: /tmp/notes.txt: No such file or directory";
        let o = run_in("/w", sig(gone, true));
        assert_eq!(o.class, OutcomeClass::CommandFailed);
        assert!(
            o.hint
                .as_deref()
                .unwrap()
                .contains("private to each command"),
            "{o:?}"
        );
        assert_eq!(run_in("/w", sig(gone, false)).hint, None);
        let elsewhere = "cat: /var/tmp/x: No such file or directory";
        assert_eq!(run_in("/w", sig(elsewhere, true)).hint, None);
        // A file the host has there is hidden, not gone (nu10): not the "gone" hint, but
        // (nu14 M5) one saying so, with the grant `cordon explain` gives.
        let fs = cordon_policy::MemFs::new().file("/tmp/notes.txt", "x");
        let r = resolved();
        let ctx = ClassifyContext {
            resolved: Some(&r),
            fs: &fs,
            cwd: Path::new("/w"),
            network_enabled: false,
            home: None,
            path_dirs: &[],
            words: &[],
        };
        let hint = classify(&sig(gone, true), &ctx).hint.unwrap_or_default();
        assert!(
            hint.contains("exists on the host") && !hint.contains("it is gone"),
            "{hint}"
        );
        assert!(
            hint.contains(r#"--with '{"entries":[{"access":"read","path":"/tmp/notes.txt"}]}'"#),
            "{hint}"
        );
        assert_eq!(classify(&sig(gone, false), &ctx).hint, None);
        // New-user pass 245 #5: a relative path through a link into /tmp (`build ->
        // /tmp/b`) is judged where it leads.
        let fs2 = cordon_policy::MemFs::new()
            .dir("/tmp/b")
            .dir("/w")
            .symlink("/w/build", "/tmp/b");
        let ctx2 = ClassifyContext { fs: &fs2, ..ctx };
        let hint = classify(
            &sig("sh: 1: cannot create build/f: Directory nonexistent", true),
            &ctx2,
        )
        .hint
        .unwrap_or_default();
        assert!(hint.contains("/tmp/b exists on the host"), "{hint}");
        // nu18 F4: run as a program (exit 127, cordon's own "command not found").
        let fs = cordon_policy::MemFs::new().file("/tmp/run.sh", "#!/bin/sh\n");
        let ctx = ClassifyContext { fs: &fs, ..ctx };
        let mut s = sig("cordon: /tmp/run.sh: command not found", true);
        s.code = Some(127);
        let hint = classify(&s, &ctx).hint.unwrap_or_default();
        assert!(hint.contains("/tmp/run.sh exists on the host"), "{hint}");
        // nu19: given to dash as a script (its own wording).
        let mut s = sig("sh: 0: cannot open /tmp/run.sh: No such file", true);
        s.code = Some(2);
        let hint = classify(&s, &ctx).hint.unwrap_or_default();
        assert!(hint.contains("/tmp/run.sh exists on the host"), "{hint}");
        // nu58: a bare name the caller's PATH finds under /tmp on the host. Twin: a PATH
        // without that directory gets no such hint.
        let fs = cordon_policy::MemFs::new()
            .file("/tmp/x/bin/mytool", "#!/bin/sh\n")
            .dir("/tmp/d");
        let dirs = [PathBuf::from("/tmp/x/bin"), PathBuf::from("/usr/bin")];
        let ctx = ClassifyContext {
            fs: &fs,
            path_dirs: &dirs,
            words: &[],
            ..ctx
        };
        let mut s = sig("cordon: mytool: command not found", true);
        s.code = Some(127);
        let hint = classify(&s, &ctx).hint.unwrap_or_default();
        assert!(
            hint.contains("/tmp/x/bin/mytool exists on the host"),
            "{hint}"
        );
        // nu58: a file written into a host directory under /tmp names that directory.
        let mut w = sig(
            "sh: 1: cannot create /tmp/d/out.txt: Directory nonexistent",
            true,
        );
        w.code = Some(2);
        let hint = classify(&w, &ctx).hint.unwrap_or_default();
        assert!(hint.contains("/tmp/d exists on the host"), "{hint}");
        let ctx = ClassifyContext {
            path_dirs: &[],
            words: &[],
            ..ctx
        };
        assert!(!classify(&s, &ctx)
            .hint
            .unwrap_or_default()
            .contains("exists on the host"));
    }

    /// New-user pass nu30, F1: git's refused freshening of a hard-linked object (in a
    /// local clone) is never blamed for a later, unrelated failure; the same refusal of a
    /// project file is.
    #[test]
    fn git_object_freshening_is_not_blamed() {
        let record = |syscall: &str, path: &str| cordon_sandbox::denials::DenialRecord {
            syscall: syscall.into(),
            path: path.into(),
            errno: "EACCES".into(),
            rule: format!(
                "{} (2 names): {} in place …",
                cordon_sandbox::denials::HARD_LINK_RULE,
                cordon_sandbox::denials::HARD_LINK_METADATA
            ),
            grant: None,
        };
        let sig = |r| {
            let mut d = cordon_sandbox::denials::DenialReport::default();
            d.push(r);
            RunSignals {
                code: Some(1),
                stderr_tail: "error: permission denied somewhere".into(),
                sandboxed: true,
                denials: Some(d),
                ..Default::default()
            }
        };
        for (syscall, path) in [
            ("utimensat", "/w/.git/objects/ce/0136250"),
            ("utime", "/srv/bare.git/objects/pack/pack-1.pack"),
        ] {
            let o = run_in("/w", sig(record(syscall, path)));
            assert_eq!(o.class, OutcomeClass::CommandFailed, "{path}: {o:?}");
            assert_eq!(o.hint, None, "{path}: {o:?}");
        }
        for (syscall, path) in [
            ("utimensat", "/w/src/objects/x.js"),
            ("fchmodat", "/w/.git/objects/ce/0136250"),
        ] {
            let o = run_in("/w", sig(record(syscall, path)));
            assert!(
                matches!(o.class, OutcomeClass::SandboxDenied { .. }),
                "{path}: {o:?}"
            );
        }
    }

    /// New-user pass nu28, F8: a hard link from a read-only tree fails with EXDEV inside
    /// the sandbox; the hint says why and what to do. Twins: unconfined, and another
    /// failure, get none.
    #[test]
    fn a_cross_device_link_gets_a_hint() {
        let sig = |tail: &str, sandboxed| RunSignals {
            code: Some(1),
            stderr_tail: tail.into(),
            sandboxed,
            ..Default::default()
        };
        let exdev = "cp: cannot create hard link 'snap/keep.txt' to '/data/src/keep.txt': \
                     Invalid cross-device link";
        let o = run_in("/w", sig(exdev, true));
        assert_eq!(o.class, OutcomeClass::CommandFailed);
        let hint = o.hint.unwrap_or_default();
        assert!(hint.contains("cp -a") && hint.contains("cp -al"), "{hint}");
        assert!(hint.starts_with("`cp: cannot create hard link"), "{hint}");
        assert_eq!(run_in("/w", sig(exdev, false)).hint, None);
        assert_eq!(
            run_in("/w", sig("cp: cannot stat 'x': No such file", true)).hint,
            None
        );
    }

    /// New-user pass nu11, M4: a refused connection to the host's loopback with the network
    /// off gets a hint naming `--local-port` with the port; a refusal that names no
    /// loopback address gets it hedged ("if that was …"). Twins: with the network on, or
    /// no refusal, none.
    #[test]
    fn a_refused_loopback_connection_gets_the_local_port_hint() {
        let sig = |tail: &str| RunSignals {
            code: Some(7),
            stderr_tail: tail.into(),
            sandboxed: true,
            ..Default::default()
        };
        let curl = "curl: (7) Failed to connect to 127.0.0.1 port 8799 after 0 ms: Couldn't connect to server";
        let hint = run_in("/w", sig(curl)).hint.unwrap_or_default();
        assert!(hint.contains("--local-port 127.0.0.1:8799"), "{hint}");
        let psql = "psql: error: connection to server at \"localhost\" (::1), port 5432 failed: Connection refused";
        let hint = run_in("/w", sig(psql)).hint.unwrap_or_default();
        assert!(hint.contains("--local-port 127.0.0.1:5432"), "{hint}");
        let fs = cordon_policy::MemFs::new();
        let r = resolved();
        let on = ClassifyContext {
            resolved: Some(&r),
            fs: &fs,
            cwd: Path::new("/w"),
            network_enabled: true,
            home: None,
            path_dirs: &[],
            words: &[],
        };
        assert_eq!(classify(&sig(curl), &on).hint, None);
        let remote = "curl: (7) Failed to connect to 10.0.0.5 port 80: Connection refused";
        assert!(run_in("/w", sig(remote))
            .hint
            .unwrap_or_default()
            .contains("if that was a connection to a server on the host's 127.0.0.1"),);
        // New-user pass 180, #3: Python names no address on the refused line; the port
        // comes from another line when one names it (requests' `port=`).
        let urllib = "urllib.error.URLError: <urlopen error [Errno 111] Connection refused>";
        let hint = run_in("/w", sig(urllib)).hint.unwrap_or_default();
        assert!(hint.contains("--local-port 127.0.0.1:PORT"), "{hint}");
        let requests = "requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=18777): Max retries exceeded\n\
                        NewConnectionError: Failed to establish a new connection: [Errno 111] Connection refused";
        let hint = run_in("/w", sig(requests)).hint.unwrap_or_default();
        assert!(hint.contains("--local-port 127.0.0.1:18777"), "{hint}");
        assert_eq!(classify(&sig(urllib), &on).hint, None);
        assert_eq!(
            run_in("/w", sig("ls: cannot access 'x': No such file")).hint,
            None
        );
    }

    /// Reads are never kernel-recorded: with records kept, a read of a hidden path is
    /// still named from the output (new-user trial: `cat ~/.ssh/id_rsa` got no cordon
    /// line); a read-only write claim in output alone still is not (records decide).
    #[test]
    fn hidden_reads_are_named_even_when_records_are_kept() {
        let with = |tail: &str| run_with_records(1, tail, vec![]);
        let o = with("cat: /home/u/.ssh/id_rsa: Permission denied");
        match &o.class {
            OutcomeClass::SandboxDenied { rule, grant, .. } => {
                assert!(rule.starts_with("denied"), "{rule}");
                assert_eq!(grant, &None);
            }
            c => panic!("{c:?}"),
        }
        assert!(o.hint.unwrap().contains("hidden"));
        // New-user pass 241 #4: a tool's "isn't writable" about a read-only path, without a
        // record (it checked before writing), is named; twin: about a writable one, not.
        let o = with("pyenv: cannot rehash: /root/.pyenv/shims isn't writable");
        assert!(
            matches!(
                &o.class,
                OutcomeClass::SandboxDenied {
                    access: Some(Access::Write),
                    ..
                }
            ),
            "{o:?}"
        );
        let o = with("tool: /w/out is not writable");
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        let w = with("touch: cannot touch '/usr/x': Read-only file system");
        assert_eq!(w.class, OutcomeClass::CommandFailed, "{w:?}");
    }

    /// New-user pass 241 #3: under `filesystem.default = "deny"` a hidden host file reads
    /// as absent ("No such file or directory"): named as hidden by the default, no grant.
    /// Twins: a path the host does not have either stays the command's own failure, and so
    /// does a missing path the profile lets it read.
    #[test]
    fn a_path_hidden_by_a_deny_default_is_named_though_it_reads_as_absent() {
        let fs = cordon_policy::MemFs::new()
            .file("/root/.bashrc", "x")
            .file("/w/there", "x");
        let mut r = resolved();
        if let ResolvedFilesystem::Restricted { default, .. } = &mut r.filesystem {
            *default = Access::Deny;
        }
        let classify_tail = |tail: &str| {
            classify_in(
                &r,
                &fs,
                "/w",
                RunSignals {
                    code: Some(1),
                    stderr_tail: tail.into(),
                    sandboxed: true,
                    denials: Some(cordon_sandbox::denials::DenialReport::default()),
                    ..Default::default()
                },
            )
        };
        let o = classify_tail("cat: /root/.bashrc: No such file or directory");
        match &o.class {
            OutcomeClass::SandboxDenied { rule, grant, .. } => {
                assert!(rule.contains("filesystem.default = \"deny\""), "{rule}");
                assert_eq!(grant, &None);
            }
            c => panic!("{c:?}"),
        }
        let hint = o.hint.unwrap_or_default();
        assert!(
            hint.contains("/root/.bashrc is hidden from this command"),
            "{hint}"
        );
        // Not on the host either: the program's own "not found".
        let o = classify_tail("cat: /root/.nothere: No such file or directory");
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
        // Readable (the workspace) but missing: the program's own too.
        let o = classify_tail("cat: /w/missing: No such file or directory");
        assert_eq!(o.class, OutcomeClass::CommandFailed, "{o:?}");
    }

    /// Layouts pass: `git worktree add ../wt` is refused at `mkdir ../wt`, whose parent
    /// holds the workspace; the directory itself is offered (`-w` of a missing path makes
    /// it empty), not its parent. Siblings: a `mkdir` beside a project in the home gets
    /// nothing (`mkdir ~/bin` would steer the person into a directory on `PATH`); a file
    /// created beside the project gets nothing; a directory that exists by now gets
    /// nothing.
    #[test]
    fn a_directory_made_beside_the_project_is_offered_itself() {
        let fs = cordon_policy::MemFs::new()
            .dir("/data/src/proj")
            .dir("/data/src/there")
            .dir("/home/u/proj2");
        let classify_in =
            |cwd: &str, home: Option<&Path>, rec: cordon_sandbox::denials::DenialRecord| {
                let mut r = resolved();
                r.cwd = cwd.into();
                r.workspace = cwd.into();
                let mut d = cordon_sandbox::denials::DenialReport::default();
                // The output names what was refused (nu21 K2: a record it does not name is not
                // the cause).
                let tail = format!(
                    "fatal: could not create leading directories of '{}/.git': Read-only file \
                 system",
                    rec.path.display()
                );
                d.push(rec);
                classify(
                    &RunSignals {
                        code: Some(128),
                        stderr_tail: tail,
                        sandboxed: true,
                        denials: Some(d),
                        ..Default::default()
                    },
                    &ClassifyContext {
                        resolved: Some(&r),
                        fs: &fs,
                        cwd: Path::new(cwd),
                        network_enabled: false,
                        home,
                        path_dirs: &[],
                        words: &[],
                    },
                )
            };
        let mkdir = |path: &str, parent: &str| {
            let mut r = record(path, "read-only: outside every writable root", Some(parent));
            r.syscall = "mkdir".into();
            r
        };
        let grant_of = |o: &Outcome| match &o.class {
            OutcomeClass::SandboxDenied { grant, .. } => grant.clone(),
            c => panic!("{c:?}"),
        };
        let o = classify_in("/data/src/proj", None, mkdir("/data/src/wt", "/data/src"));
        assert_eq!(grant_of(&o).as_deref(), Some(Path::new("/data/src/wt")));
        // New-user pass 155, #2: the hint says that the directory is made before the
        // run, so a plain `mkdir` of it fails.
        assert!(
            o.hint
                .as_deref()
                .unwrap()
                .contains("-w /data/src/wt (cordon makes")
                && o.hint.as_deref().unwrap().contains("mkdir -p"),
            "{o:?}"
        );
        // Attack pass 229 #2: a name the command chose is one shell word in the hint's
        // command lines (pasted, `$(touch x)` ran on the host).
        let o = classify_in(
            "/data/src/proj",
            None,
            mkdir("/data/src/wt $(touch x)", "/data/src"),
        );
        let h = o.hint.as_deref().unwrap();
        assert!(
            h.contains("-w '/data/src/wt $(touch x)' (cordon makes")
                && h.contains("`mkdir '/data/src/wt $(touch x)'`"),
            "{h}"
        );
        // In the home: the home holds the project; nothing is offered.
        let home = Some(Path::new("/home/u"));
        let o = classify_in("/home/u/proj2", home, mkdir("/home/u/bin", "/home/u"));
        assert_eq!(grant_of(&o), None);
        // nu15 N8: the parent is above the home (a CI layout, `HOME=/data/src/home`): the
        // new directory is not in the home, and is offered.
        let home = Some(Path::new("/data/src/home"));
        let o = classify_in("/data/src/proj", home, mkdir("/data/src/wt", "/data/src"));
        assert_eq!(grant_of(&o).as_deref(), Some(Path::new("/data/src/wt")));
        // A file (openat), and a directory that exists by now.
        let file = record(
            "/data/src/wt",
            "read-only: outside every writable root",
            Some("/data/src"),
        );
        assert_eq!(grant_of(&classify_in("/data/src/proj", None, file)), None);
        let o = classify_in(
            "/data/src/proj",
            None,
            mkdir("/data/src/there", "/data/src"),
        );
        assert_eq!(grant_of(&o), None);
    }

    /// nu16 N5: a refused write inside a bare repository beside the project (a push to a
    /// local remote) offers the repository as a whole, not its `objects/` (then `refs/`,
    /// then the repository: three runs). Twin: a plain directory keeps the narrow grant.
    #[test]
    fn a_refusal_in_a_bare_repository_offers_the_repository() {
        let fs = cordon_policy::MemFs::new()
            .dir("/data/proj")
            .file("/data/bare.git/HEAD", "ref: refs/heads/main\n")
            .dir("/data/bare.git/objects/tmp")
            .dir("/data/bare.git/refs/heads")
            .dir("/data/plain/sub");
        let mut r = resolved();
        r.cwd = "/data/proj".into();
        r.workspace = "/data/proj".into();
        let grant_tail = |path: &str, parent: &str, tail: &str| {
            let mut d = cordon_sandbox::denials::DenialReport::default();
            d.push(record(
                path,
                "read-only: outside every writable root",
                Some(parent),
            ));
            let o = classify(
                &RunSignals {
                    code: Some(1),
                    stderr_tail: tail.to_string(),
                    sandboxed: true,
                    denials: Some(d),
                    ..Default::default()
                },
                &ClassifyContext {
                    resolved: Some(&r),
                    fs: &fs,
                    cwd: Path::new("/data/proj"),
                    network_enabled: false,
                    home: None,
                    path_dirs: &[],
                    words: &[],
                },
            );
            match o.class {
                OutcomeClass::SandboxDenied { grant, .. } => grant,
                c => panic!("{c:?}"),
            }
        };
        let grant_for = |path: &str, parent: &str| {
            grant_tail(
                path,
                parent,
                &format!("error: cannot write {path}: Read-only file system"),
            )
        };
        // nu18 F12: git's own words for the push, which name no path.
        assert_eq!(
            grant_tail(
                "/data/bare.git/objects/tmp/x",
                "/data/bare.git/objects/tmp",
                "error: remote unpack failed: unable to create temporary object directory"
            )
            .as_deref(),
            Some(Path::new("/data/bare.git"))
        );
        assert_eq!(
            grant_for("/data/bare.git/objects/tmp/x", "/data/bare.git/objects/tmp").as_deref(),
            Some(Path::new("/data/bare.git"))
        );
        assert_eq!(
            grant_for("/data/plain/sub/x", "/data/plain/sub").as_deref(),
            Some(Path::new("/data/plain/sub"))
        );
    }

    /// Review finding: the command plants `ws/link -> /etc` and fails on `link/x`; the
    /// grant `ws/link` passed every spelling check and would have made `/etc` writable.
    /// A real directory in the workspace is still offered (sibling).
    #[test]
    fn a_grant_through_a_symlink_is_never_offered() {
        let fs = cordon_policy::MemFs::new()
            .dir("/srv2/u/proj/real")
            .dir("/etc/cron.d")
            .symlink("/srv2/u/proj/link", "/etc");
        let ctx = ClassifyContext {
            resolved: None,
            fs: &fs,
            cwd: Path::new("/srv2/u/proj"),
            network_enabled: false,
            home: None,
            path_dirs: &[],
            words: &[],
        };
        let why = offerable_grant(Path::new("/srv2/u/proj/link"), &ctx).unwrap_err();
        assert!(why.contains("symlink") && why.contains("/etc"), "{why}");
        assert!(offerable_grant(Path::new("/srv2/u/proj/real"), &ctx).is_ok());
    }
}
