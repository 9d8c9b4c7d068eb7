//! The model behind `cordon explain` (R-P6 "every effective value can say where it came
//! from"): for each asked path the effective access, the entry that decided it and how to
//! change it; the network decision; the R-S1 rule that fired; the backend; what the host
//! lacks. Pure: questions about the disk go through [`FsView`].
//!
//! [`Explanation`] serialises (serde) for `--json` and renders a one-screen text answer to
//! "why can't this command write X" through [`std::fmt::Display`].

use crate::paths::{canonicalize_lenient, FsView};
use crate::profile::{Access, NetworkPolicy, ProfileKind, CREDENTIAL_STORES};
use crate::resolve::{EntryOrigin, ResolvedFilesystem, ResolvedProfile};
use crate::selection::{Backend, Fact, SandboxStatus, Selection, ShouldSandboxRule};
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// What decided a path's access.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Decider {
    /// A profile entry (R-P2).
    Entry {
        /// The entry as spelled in the profile, e.g. `:home/.ssh`.
        spelling: String,
        /// Where it was written: `/x/config.toml:12`, `built-in workspace-write`, a flag,
        /// `additional permissions`; `None` when unknown.
        source: Option<String>,
        /// The entry's resolved (canonical) path.
        path: PathBuf,
    },
    /// No entry covers the path: the profile's default access.
    Default {
        /// The default access.
        access: Access,
    },
    /// A protected path inside a writable root (R-P3).
    Protected {
        /// Why it is protected.
        reason: String,
        /// The protected path.
        path: PathBuf,
    },
    /// A linked worktree's git dir, made writable so `git commit` works (R-P3).
    GitWorktree {
        /// The worktree whose `.git` file points here.
        worktree: PathBuf,
        /// The git dir.
        path: PathBuf,
    },
    /// A directory above a protected path, kept in place (its access is that of the
    /// writable root around it) so the protected path cannot be moved aside (R-P3).
    Pinned {
        /// The protected path it leads to.
        protects: PathBuf,
        /// The pinned directory.
        path: PathBuf,
    },
    /// The filesystem is unrestricted (a `disabled` profile, or mode `unrestricted`).
    Unrestricted,
    /// The working directory, bound through the private `/tmp` with the access the
    /// profile gives it, so the command can start there.
    Cwd {
        /// The cwd.
        path: PathBuf,
    },
    /// Under `/tmp`, which the sandbox replaces with a private, empty, writable tmpfs
    /// (discarded at exit), and no entry below `/tmp` grants it: the host's object is not
    /// visible to the command (it reads as absent; a file created there is private).
    PrivateTmp,
    /// The path lies under a tree the Linux sandbox builds afresh for every command
    /// ([`crate::paths::REBUILT_TREES`]): a minimal `/dev` with a private, empty, writable
    /// `/dev/shm`, and the sandbox's own `/proc`; no profile entry applies there.
    RebuiltTree {
        /// `/dev` or `/proc`.
        tree: String,
    },
    /// The private directory of a package cache missing on the host (R-C1,
    /// [`crate::caches::ResolvedCache::private_dir`]): bound writable at its own path on the
    /// Linux namespace backend, with the tool's variable pointed at it (attack pass 25, A6:
    /// it was reported hidden and read-only while every run wrote it).
    PrivateCache {
        /// The cache's name (`npm`).
        name: String,
        /// The variable pointed at it (`npm_config_cache`).
        var: String,
        /// The private directory.
        path: PathBuf,
    },
}

impl Decider {
    /// One phrase naming the decider, e.g.
    /// ``entry `:home/.ssh` (built-in workspace-write)``.
    pub fn describe(&self) -> String {
        match self {
            Decider::Entry {
                spelling,
                source,
                path,
            } => {
                let src = source.as_deref().unwrap_or("source unknown");
                if Path::new(spelling) == path.as_path() {
                    format!("entry `{spelling}` ({src})")
                } else {
                    format!("entry `{spelling}` ({src}) = {}", path.display())
                }
            }
            Decider::Default { access } => {
                format!("default: paths no entry covers are `{access}`")
            }
            Decider::Protected { reason, path } => {
                format!("protected ({reason}): {} [R-P3]", path.display())
            }
            Decider::GitWorktree { worktree, path } => format!(
                "git worktree: {} is the git dir of the linked worktree {}",
                path.display(),
                worktree.display()
            ),
            Decider::Pinned { protects, path } => format!(
                "writable root, with {} pinned in place (it cannot be renamed or removed) so {} stays protected [R-P3]",
                path.display(),
                protects.display()
            ),
            Decider::Unrestricted => "unrestricted filesystem".to_string(),
            Decider::Cwd { path } => format!(
                "the working directory {} is bound through the private /tmp so the command \
                 can start there",
                path.display()
            ),
            Decider::PrivateTmp => "hidden by the sandbox's private /tmp: the command sees \
                an empty, writable /tmp discarded at exit, not the host's files"
                .to_string(),
            Decider::RebuiltTree { tree } => format!(
                "{tree} is rebuilt inside the sandbox for every command (a minimal /dev with \
                 a private, empty, writable /dev/shm discarded at exit; the sandbox's own \
                 /proc): no profile entry applies there"
            ),
            Decider::PrivateCache { name, var, path } => format!(
                "package cache `{name}` is missing on the host: the command's {var} points at \
                 this workspace's private directory {}, bound writable (nothing is created in \
                 your home; the next run here sees what this one downloaded) [R-C1]",
                path.display()
            ),
        }
    }
}

/// The answer for one asked path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathExplanation {
    /// The path as asked.
    pub path: PathBuf,
    /// Absolute and lexically normal (relative paths are taken against the cwd).
    pub absolute: PathBuf,
    /// Where symlinks lead, when that differs from `absolute` (R-P2: both spellings are
    /// compared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical: Option<PathBuf>,
    /// The effective access.
    pub access: Access,
    /// What decided it.
    pub decided_by: Decider,
    /// For `read`/`deny` answers: one line saying how to change it. `None` when writable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// How the command sees it when that is more than the access says: a copy-on-write
    /// package cache (R-C1), a copy with credentials removed (R-C2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shown_as: Option<String>,
    /// The number of names of a regular file with more than one (hard links), set by the
    /// caller that looked at the host (this crate makes no OS calls): on the
    /// `linux-helper` backend such a file is not written in place, whatever `access` says
    /// (the denial-records supervisor's hard-link rule; attack pass 210 #6: `explain` said
    /// "writable" alone). `None` for a single-named file or when nobody looked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hard_links: Option<u64>,
    /// How the command's writes to the path are carried when `access` (the host file's) is
    /// not `write` and writes still succeed inside the sandbox: a repository's `.git/config`
    /// is a private writable copy whose allowed keys are merged back when the command ends
    /// (hints finding 7: `access: read` alone, while `echo x >> .git/config` succeeded).
    /// `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_writes: Option<CommandWrites>,
}

/// [`PathExplanation::command_writes`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandWrites {
    /// `private-copy`: the command writes a copy of the file private to its run, never the
    /// host file itself.
    pub kind: &'static str,
    /// The keys merged back into the host file when the command ends
    /// ([`crate::gitconfig::MERGED_BACK_KEYS`]).
    pub merged_back: Vec<&'static str>,
    /// What happens to any other key the command changed.
    pub other_keys: &'static str,
}

/// The [`CommandWrites`] of a repository config cordon edits as a private copy
/// ([`crate::gitconfig::brokered_configs`]).
fn brokered_writes() -> CommandWrites {
    CommandWrites {
        kind: "private-copy",
        merged_back: crate::gitconfig::MERGED_BACK_KEYS.to_vec(),
        other_keys: "not merged back: refused with a note naming the `git config` command to \
                     run outside cordon",
    }
}

/// The network decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetworkExplanation {
    /// The profile's network policy.
    pub mode: NetworkPolicy,
    /// How to change it when restricted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Unix sockets: what is reachable and why (R-N2), one line each — the
    /// `network.unix_sockets` entries (a container-engine one says it is host root), then
    /// the rule for every other host socket.
    pub unix_sockets: Vec<String>,
    /// `network.local`: host loopback ports forwarded into the sandbox (issue 10 §6), one
    /// line each (`127.0.0.1:5432: forwarded …`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub local: Vec<String>,
    /// With a managed network: the hosts the proxy lets through (`network.allow`) and
    /// refuses (`network.deny`), as fields a program reads (nu21 K8: only in `hint`'s
    /// prose before).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// See [`NetworkExplanation::allow`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// With a managed network: the hosts remembered at an approval prompt (`host:port`),
    /// filled in by the caller that reads the user's file.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remembered: Vec<String>,
}

/// `list` when the network is managed (the proxy applies it), else nothing.
fn managed_list(profile: &crate::PermissionProfile, list: &[String]) -> Vec<String> {
    if profile.network == NetworkPolicy::Managed {
        list.to_vec()
    } else {
        Vec::new()
    }
}

/// The lines of [`NetworkExplanation::local`].
fn local_lines(profile: &crate::PermissionProfile) -> Vec<String> {
    profile
        .network_rules
        .local
        .iter()
        .map(|l| match profile.network {
            NetworkPolicy::Enabled => format!(
                "{l}: listed in network.local, but the network is enabled: the host's whole \
                 loopback is reachable anyway"
            ),
            _ => format!(
                "{l}: host loopback port forwarded into the sandbox at the same address \
                 (network.local); no other host port is reachable"
            ),
        })
        .collect()
}

/// The sandbox decision: R-S1 rule, R-S3 backend, R-S5 status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxExplanation {
    /// Whether the profile needs a sandbox (R-S1).
    pub needed: bool,
    /// The R-S1 branch that fired.
    pub rule: ShouldSandboxRule,
    /// [`ShouldSandboxRule::describe`] of it.
    pub rule_text: String,
    /// The backend chosen (R-S3); `none` when not needed or not available.
    pub backend: Backend,
    /// The status triple (R-S5).
    pub status: SandboxStatus,
}

/// `cordon explain`'s whole answer. Serialisable for `--json`; `Display` gives the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// Profile name.
    pub profile: String,
    /// Profile kind.
    pub kind: ProfileKind,
    /// The command's cwd.
    pub cwd: PathBuf,
    /// The project root `:workspace` stands for.
    pub workspace: PathBuf,
    /// Who enforces the filesystem answers below, in one phrase (e.g. `cordon
    /// (linux-helper backend applied)`, `not enforced: unavailable: …`, `the caller
    /// (external profile)`).
    pub enforcement: String,
    /// The filesystem at a glance (what `explain` without a path shows); `None` when the
    /// filesystem is unrestricted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<FilesystemSummary>,
    /// One answer per asked path, in the order asked.
    pub paths: Vec<PathExplanation>,
    /// The network decision.
    pub network: NetworkExplanation,
    /// The sandbox decision.
    pub sandbox: SandboxExplanation,
    /// What the host lacks (e.g. `landlock not available (kernel 5.10)`), if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_missing: Option<String>,
    /// Things resolution skipped (e.g. `:home` without `$HOME`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The resolved filesystem at a glance: the default, the writable roots, and how many
/// paths are protected (R-P3) or denied; each path's reason is one `cordon explain PATH`
/// away (and in `cordon context`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilesystemSummary {
    /// Access everywhere no entry covers.
    pub default: Access,
    /// The writable roots, canonical.
    pub writable_roots: Vec<PathBuf>,
    /// Protected paths inside the writable roots (read-only, R-P3).
    pub protected: usize,
    /// Denied paths that exist (hidden).
    pub denied: usize,
    /// Denied paths in all, present or not (one that appears later is hidden too): the
    /// resolved paths `cordon context` counts, e.g. in its `deny_read_group` (an approval
    /// request's `deny_entries` counts the profile's deny entries as spelled, each of
    /// which may name several paths).
    pub denied_paths: usize,
    /// `/tmp` is a private tmpfs (the host's `/tmp` is hidden), see [`crate::view`].
    pub private_tmp: bool,
}

/// A path as a one-line TOML basic string (quoted and escaped by `toml_writer`).
/// How to make the host's `abs` under `/tmp`, hidden by the sandbox's private `/tmp`,
/// visible to a command: a read grant (`--with`, or a profile entry) or `--allow-write
/// grant`. One text for `cordon explain` and the hint after a run that did not find it.
pub fn private_tmp_grant(abs: &Path, grant: &Path) -> String {
    // `/tmp` itself cannot be granted (it stays private; `-w /tmp` is refused), and a
    // missing path given to `-w` is made a directory (new-user pass 155, #1: `-w
    // /tmp/foo.txt` was offered for a new file, and the write then failed on a directory
    // of that name): a directory of one's own is (new-user pass nu15 N2: an existing path
    // is granted itself).
    let write = if grant == Path::new("/tmp") && abs != grant {
        format!(
            "; {} does not exist, and -w makes a missing path a directory: to \
             write a new file in the host's /tmp, make a directory of your own there (`mkdir \
             /tmp/NAME`), pass `-w /tmp/NAME` and write in it",
            abs.display()
        )
    } else {
        format!(", `-w {}` to write it", shell_word(grant))
    };
    let perms = serde_json::json!({
        "entries": [{ "path": abs.to_string_lossy(), "access": "read" }]
    });
    format!(
        "grant it to make the host's path visible: `--with {}` (or `{{ path = {}, access = \
         \"read\" }}` in your profile) to read it{write}",
        shell_word(Path::new(&perms.to_string())),
        toml_str(abs),
    )
}

fn toml_str(p: &Path) -> String {
    use toml_writer::ToTomlValue;
    toml_writer::TomlStringBuilder::new(&p.to_string_lossy())
        .as_basic()
        .to_toml_value()
}

/// A string as one shell word (quoted by `shlex` when needed).
fn shell_word(p: &Path) -> String {
    let s = p.to_string_lossy();
    shlex::try_quote(&s)
        .map(|c| c.into_owned())
        .unwrap_or_else(|_| format!("{s:?}"))
}

fn is_credential_store(spelling: &str) -> bool {
    let rest = spelling
        .strip_prefix(":home/")
        .or_else(|| spelling.strip_prefix("~/"));
    rest.is_some_and(|r| CREDENTIAL_STORES.contains(&r))
        || crate::profile::SYSTEM_CREDENTIAL_FILES.contains(&spelling)
        || crate::locations::split_spelling(spelling)
            .is_some_and(|(v, r)| crate::locations::STORE_LOCATIONS.contains(&(v, r)))
}

/// What a write grant for `abs` should name: `abs` when it exists, else its nearest
/// existing ancestor (nu7: a missing path given to `--allow-write` is created as a
/// directory, so the advice to grant a file that does not exist yet made a directory of
/// its name and the command could not create the file) — as the real path it leads to: a
/// grant spelled through a symlink is not granted (new-user pass nu9: a symlinked `.venv`
/// got the advice `--allow-write …/.venv`, which the run then dropped).
///
/// When the directory holding it is missing too, the first missing directory on its way
/// (which `--allow-write` creates): not the nearest existing ancestor, which may hold the
/// whole workspace (new-user pass nu17 N9: `…/q/new.txt` offered the workspace's parent).
fn grant_path(fs: &dyn FsView, abs: &Path) -> PathBuf {
    let mut first_missing = None;
    for a in abs.ancestors() {
        if fs.kind(a).is_some() {
            let grant = match first_missing {
                Some(m) if m != abs => m,
                _ => a,
            };
            return crate::paths::canonicalize_lenient(fs, grant);
        }
        first_missing = Some(a);
    }
    crate::paths::canonicalize_lenient(fs, abs)
}

/// The caller's judgement of a write grant ([`explain_judged`]): given the path asked
/// about and its smallest grant (the path, or the directory that would hold it), the grant
/// to suggest — that one, or a wider one the caller would offer instead — or why none may
/// be suggested. `cordon explain` passes the one a run uses before it offers a grant after
/// a denial, so explain never suggests a grant the run refuses, nor another one.
pub type GrantJudge<'a> = &'a dyn Fn(&Path, &Path) -> Result<PathBuf, String>;

/// What [`hint_for`] needs of the profile beyond the path.
struct HintContext<'a> {
    kind: ProfileKind,
    workspace: &'a Path,
    judge: GrantJudge<'a>,
}

fn hint_for(
    fs: &dyn FsView,
    abs: &Path,
    canonical: &Path,
    access: Access,
    decider: &Decider,
    ctx: &HintContext<'_>,
) -> Option<String> {
    let (kind, workspace) = (ctx.kind, ctx.workspace);
    if access == Access::Write || matches!(decider, Decider::Unrestricted) {
        return None;
    }
    if kind == ProfileKind::External {
        return Some(
            "the profile is external: the caller confines the filesystem, so change it there"
                .to_string(),
        );
    }
    let smallest = &grant_path(fs, abs);
    // For a write, the grant to suggest as the caller judges it (possibly wider: a bare
    // repository as a whole), or why none may be; a read (`--with`) is not judged.
    let judged = (access != Access::Deny).then(|| (ctx.judge)(abs, smallest));
    let grant: &Path = match &judged {
        Some(Ok(g)) => g,
        _ => smallest,
    };
    // A read grant names the real path too: one spelled through a symlink is refused by
    // the run (new-user pass 192, #1: `keylink -> ~/.ssh/id_rsa` was offered as itself).
    let readable = crate::paths::canonicalize_lenient(fs, abs);
    let (want, flag) = match access {
        Access::Deny => {
            let perms = serde_json::json!({
                "entries": [{ "path": readable.to_string_lossy(), "access": "read" }]
            });
            (
                "read",
                format!("--with {}", shell_word(Path::new(&perms.to_string()))),
            )
        }
        _ => ("write", format!("-w {}", shell_word(grant))),
    };
    let target = if want == "write" { grant } else { &readable };
    let mut add = format!(
        "add `{{ path = {}, access = \"{want}\" }}` to your profile or pass `{flag}`",
        toml_str(target),
    );
    // A shared or top-level directory (`/var/tmp`, `/tmp`, `/opt`) is never offered whole:
    // it would open every project and temp file in it (new user, stop 21).
    let too_wide = crate::paths::depth(grant) <= 1 || grant == Path::new("/var/tmp");
    // Nor is what the run would refuse to offer (new-user pass 149: explain suggested
    // `--allow-write ~` for `~/.bashrc`, which the run refuses as the home directory).
    let refused = match &judged {
        Some(Err(why)) => Some(why),
        _ => None,
    };
    if let Some(why) = refused {
        // A directory of one's own there, when that is not refused too (inside a `PATH`
        // directory or a system tree it would be).
        let own = grant.join("NAME");
        add = if (ctx.judge)(&own, &own).is_ok() {
            format!(
                "{why}, which cordon does not suggest; to write there anyway, make a \
                 directory of your own (`mkdir {}`) and pass `-w {}`, or change \
                 the profile",
                shell_word(&own),
                shell_word(&own)
            )
        } else {
            format!("{why}, which cordon does not suggest; change the profile if you mean it")
        };
    } else if want == "write" && too_wide {
        add = format!(
            "{} is shared or top-level: granting it would make everything in it writable; \
             make a directory of your own there (`mkdir {}`) and pass `-w {}`",
            grant.display(),
            shell_word(&grant.join("NAME")),
            shell_word(&grant.join("NAME"))
        );
    } else if want == "write" && workspace.starts_with(grant) && workspace != grant {
        // Never a directory holding the workspace (the run does not offer it either:
        // new-user pass nu19 N3): a directory of its own beside the project.
        add = format!(
            "{} holds the whole workspace: granting it would make the project and everything \
             beside it writable; make a directory of your own there (`mkdir {}`) and pass \
             `-w {}`",
            grant.display(),
            shell_word(&grant.join("NAME")),
            shell_word(&grant.join("NAME"))
        );
    } else if want == "write" && grant != smallest {
        // Widened by the caller's judgement: the bare repository holding the path (a push
        // writes its objects/, refs/ and HEAD), or the directory of a file with several
        // names (which is replaced, never written in place).
        add.push_str(&format!(
            " ({} as a whole, as a run offers it for this path)",
            grant.display()
        ));
    } else if want == "write" && grant == canonical && grant != abs {
        add.push_str(&format!(
            " ({} leads through a symlink to {}: a grant spelled through a symlink is not \
             given, so it names the real path)",
            abs.display(),
            grant.display()
        ));
    } else if want == "write"
        && grant != abs
        && abs.parent() != Some(grant)
        && canonical.parent() != Some(grant)
    {
        add.push_str(&format!(
            " ({} does not exist yet, nor does the directory holding it: the grant names \
             {}, the first missing directory on its way, which -w creates)",
            abs.display(),
            grant.display()
        ));
    } else if want == "write" && grant != abs {
        add.push_str(&format!(
            " ({} does not exist yet, so the grant names the directory holding it{}, {}: a \
             missing path given to -w is created as a directory)",
            abs.display(),
            if canonical.starts_with(grant) && !abs.starts_with(grant) {
                " (its real path)"
            } else {
                ""
            },
            grant.display()
        ));
    }
    Some(match decider {
        // Nothing a profile can change (its grants there are dropped).
        Decider::RebuiltTree { .. } | Decider::PrivateCache { .. } => return None,
        // The real path: a read grant spelled through a symlink is refused like a write
        // (new-user pass 245 #4: `build -> /tmp/x` was offered `--with` of `build`).
        Decider::PrivateTmp => private_tmp_grant(canonical, grant),
        Decider::Protected { reason, path } => format!(
            "kept read-only inside a writable root because {reason} (R-P3); only if you \
             trust every command, name it explicitly: `{{ path = {}, access = \"write\" }}`",
            toml_str(path)
        ),
        Decider::Entry {
            spelling,
            source,
            path,
        } if access == Access::Deny && canonical == path.as_path() => {
            let from = match source.as_deref() {
                Some(src) if looks_like_file_line(src) => format!("remove it at {src}"),
                Some(src) => format!("it comes from {src}: use a profile without it"),
                None => "remove it from the profile".to_string(),
            };
            // Only a directory has paths beneath it (new-user pass 150: offered for
            // `~/.npmrc` and `/etc/shadow`).
            let beneath = if fs.kind(canonical) == Some(crate::paths::FileKind::Dir) {
                ", or allow a path beneath it instead"
            } else {
                ""
            };
            format!(
                "`{spelling}` denies this exact path, and a deny beats any read/write entry \
                 for the same path (R-P2); {from}{beneath}"
            )
        }
        Decider::Entry {
            spelling, source, ..
        } => {
            let mut h = String::new();
            if access == Access::Deny && is_credential_store(spelling) {
                h.push_str("a well-known credential store, hidden on purpose (R-P5); ");
            }
            match source.as_deref() {
                Some(src) if looks_like_file_line(src) => {
                    h.push_str(&format!("edit the entry at {src}, or {add}"))
                }
                _ => h.push_str(&add),
            }
            h
        }
        Decider::GitWorktree { .. }
        | Decider::Pinned { .. }
        | Decider::Default { .. }
        | Decider::Unrestricted
        | Decider::Cwd { .. } => add,
    })
}

/// `/x/config.toml:12`-style sources (a file and a line) can be edited; built-ins and flags
/// cannot.
fn looks_like_file_line(src: &str) -> bool {
    src.rsplit_once(':').is_some_and(|(file, line)| {
        !file.is_empty() && !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())
    })
}

fn explain_path(
    resolved: &ResolvedProfile,
    fs: &dyn FsView,
    asked: &Path,
    private_tmp: bool,
    judge: GrantJudge<'_>,
) -> PathExplanation {
    let hints = HintContext {
        kind: resolved.profile.kind,
        workspace: &resolved.workspace,
        judge,
    };
    let absolute = crate::paths::physical_normalize(fs, asked, &resolved.cwd);
    let canonical = canonicalize_lenient(fs, &absolute);
    // `/tmp` itself where the sandbox mounts its private one although no entry grants the
    // host's (a workspace under /tmp, whose `:tmp` grant would hold it): writable, as the
    // run finds it (new-user pass nu18 F5: explain said read-only).
    if private_tmp
        && canonical == Path::new("/tmp")
        && resolved.filesystem.top_view().private_tmp
        && resolved.filesystem.access_for(fs, &absolute).access != Access::Write
    {
        return PathExplanation {
            path: asked.to_path_buf(),
            canonical: (canonical != absolute).then_some(canonical),
            absolute,
            access: Access::Write,
            decided_by: Decider::PrivateTmp,
            hint: None,
            shown_as: Some(
                "the sandbox's private /tmp: empty at start (what is granted beneath it bound \
                 in), writable, discarded at exit; the host's files there are not visible"
                    .to_string(),
            ),
            hard_links: None,
            command_writes: None,
        };
    }
    if private_tmp && resolved.filesystem.seen(fs, &absolute) == crate::view::Seen::PrivateTmp {
        let decided_by = Decider::PrivateTmp;
        let hint = hint_for(fs, &absolute, &canonical, Access::Deny, &decided_by, &hints);
        return PathExplanation {
            path: asked.to_path_buf(),
            canonical: (canonical != absolute).then_some(canonical),
            absolute,
            access: Access::Deny,
            decided_by,
            hint,
            shown_as: None,
            hard_links: None,
            command_writes: None,
        };
    }
    if private_tmp {
        if let Some(tree) = crate::paths::REBUILT_TREES
            .iter()
            .find(|t| absolute.starts_with(t))
        {
            let shm = absolute.starts_with("/dev/shm");
            return PathExplanation {
                path: asked.to_path_buf(),
                canonical: (canonical != absolute).then_some(canonical),
                access: if shm { Access::Write } else { Access::Read },
                shown_as: shm.then(|| {
                    "the sandbox's private /dev/shm: empty at start, discarded at exit; the \
                     host's files there are not visible"
                        .to_string()
                }),
                absolute,
                decided_by: Decider::RebuiltTree {
                    tree: tree.to_string(),
                },
                hint: None,
                hard_links: None,
                command_writes: None,
            };
        }
    }
    if private_tmp {
        let private = resolved.caches.iter().find_map(|c| {
            let var = c.env.as_ref()?;
            let dir = c.private_dir();
            canonical.starts_with(&dir).then(|| Decider::PrivateCache {
                name: c.name.clone(),
                var: var.clone(),
                path: dir,
            })
        });
        if let Some(decided_by) = private {
            return PathExplanation {
                path: asked.to_path_buf(),
                canonical: (canonical != absolute).then_some(canonical),
                absolute,
                access: Access::Write,
                decided_by,
                hint: None,
                shown_as: None,
                hard_links: None,
                command_writes: None,
            };
        }
    }
    let answer = resolved.filesystem.access_for(fs, &absolute);
    let decided_by = match (&resolved.filesystem, answer.entry) {
        (ResolvedFilesystem::Unrestricted, _) => Decider::Unrestricted,
        (ResolvedFilesystem::Restricted { default, .. }, None) => {
            Decider::Default { access: *default }
        }
        (ResolvedFilesystem::Restricted { entries, .. }, Some(i)) => {
            let e = &entries[i];
            match &e.origin {
                EntryOrigin::Profile {
                    spelling, source, ..
                } => Decider::Entry {
                    spelling: spelling.clone(),
                    source: source.clone(),
                    path: e.path.clone(),
                },
                EntryOrigin::Protected { reason } => Decider::Protected {
                    reason: reason.clone(),
                    path: e.path.clone(),
                },
                EntryOrigin::GitWorktree { worktree } => Decider::GitWorktree {
                    worktree: worktree.clone(),
                    path: e.path.clone(),
                },
                EntryOrigin::Pinned { protects } => Decider::Pinned {
                    protects: protects.clone(),
                    path: e.path.clone(),
                },
                EntryOrigin::Cwd => Decider::Cwd {
                    path: e.path.clone(),
                },
            }
        }
    };
    // On the Linux namespace backend (`private_tmp` stands for it) a config file that mixes
    // settings and secrets is shown as a read-only copy with the credentials removed
    // (R-C2): that is the answer, not "denied" (new user, stop 18: `explain ~/.gitconfig`
    // said it could not be read while git read it).
    if private_tmp && answer.access == Access::Deny {
        if let Some(f) = resolved.stripped.iter().find(|f| f.path == canonical) {
            return PathExplanation {
                path: asked.to_path_buf(),
                canonical: (canonical != absolute).then_some(canonical),
                absolute,
                access: Access::Read,
                decided_by,
                hint: None,
                shown_as: Some(format!(
                    "a read-only copy with the credentials removed (tokens, passwords; {:?} \
                     format); hidden whole if it does not parse",
                    f.format
                )),
                hard_links: None,
                command_writes: None,
            };
        }
    }
    let hint = hint_for(
        fs,
        &absolute,
        &canonical,
        answer.access,
        &decided_by,
        &hints,
    );
    // A repository config on the namespace backend is edited as a private copy whose
    // allowed keys are merged back (the same list the mount plan takes).
    let brokered = private_tmp
        && answer.access == Access::Read
        && crate::gitconfig::brokered_configs(resolved).contains(&canonical);
    let shown_as = match answer.access {
        Access::Read if brokered => Some(crate::gitconfig::BROKERED_COPY.to_string()),
        Access::Read => shown_as(resolved, &canonical),
        Access::Deny => resolved
            .stripped
            .iter()
            .find(|f| f.path == canonical)
            .map(|f| {
                format!(
                    "visible, credentials removed: a read-only copy without tokens or \
                     passwords ({:?} format) on the Linux namespace backend; hidden whole \
                     elsewhere or if it does not parse",
                    f.format
                )
            })
            .or_else(|| missing_deny(&resolved.filesystem, answer.entry, &canonical)),
        // The profile's grant, on a filesystem the host mounts read-only: every write
        // there fails (EROFS) in the sandbox too (attack pass 154, F5: explain said
        // "writable" for a read-only bind mount inside the workspace).
        Access::Write if fs.read_only_mount(&canonical) == Some(true) => {
            Some(HOST_READ_ONLY_MOUNT.to_string())
        }
        // A missing login file in a granted home: no placeholder, removed after the run if
        // a command makes it (attack pass 224 #2).
        Access::Write => resolved
            .kept_absent
            .iter()
            .find(|(p, _)| *p == canonical)
            .map(|(_, tool)| kept_absent_words(tool))
            .or_else(|| settled_admin_modules(resolved, fs, &canonical)),
    };
    // A cache missing on the host whose tool is pointed at a private directory works as it
    // is: no grant to offer (new-user pass nu14: `explain ~/.cache/pip` advised making the
    // real `~/.cache` writable).
    let redirected = resolved
        .caches
        .iter()
        .any(|c| c.env.is_some() && canonical.starts_with(&c.path));
    // The honest "to change" for a brokered config: the command already edits it (a
    // private copy); what changes the host file is the merge's allow list or git outside.
    let hint = if brokered {
        Some(format!(
            "the command's git config edits go to a private copy, and only {} are merged back \
             into this file; for any other key run `git config …` outside cordon (cordon's \
             note after the run names the command), or, only if you trust every command, let \
             it write the file itself: `{{ path = \"{}\", access = \"write\" }}`",
            crate::gitconfig::MERGED_BACK_KEYS.join(", "),
            canonical.display()
        ))
    } else {
        hint
    };
    PathExplanation {
        path: asked.to_path_buf(),
        canonical: (canonical != absolute).then_some(canonical),
        absolute,
        access: answer.access,
        decided_by,
        hint: if redirected { None } else { hint },
        shown_as,
        hard_links: None,
        command_writes: brokered.then(brokered_writes),
    }
}

/// [`PathExplanation::shown_as`] for a writable path in a linked worktree's `modules/`
/// of a writable git dir (`<git dir>/worktrees/<name>/modules[/…]`), which the resolution
/// leaves writable when it is missing (no placeholder: git would refuse `git worktree
/// remove`) and the sweep settles after the run — what a command made there is moved
/// aside (attack pass 233 #2: explain said plain "writable" where the README says
/// protected).
fn settled_admin_modules(
    resolved: &ResolvedProfile,
    fs: &dyn FsView,
    canonical: &Path,
) -> Option<String> {
    resolved
        .filesystem
        .writable_git_dirs(fs)
        .iter()
        .find_map(|g| {
            let rel = canonical.strip_prefix(g.join("worktrees")).ok()?;
            let mut parts = rel.components();
            let name = parts.next()?;
            (parts.next()?.as_os_str() == "modules").then(|| {
                format!(
                    "{SETTLED}: what a command makes in this \
                     linked worktree's modules/ (its submodules' git dirs, whose hooks git \
                     runs) is moved aside to {}/modules.cordon-replaced, with a warning",
                    g.join("worktrees").join(name).display()
                )
            })
        })
}

/// How [`PathExplanation::shown_as`] begins for a path [`settled_admin_modules`] speaks of.
const SETTLED: &str = "settled after the run";

/// How [`PathExplanation::shown_as`] begins for a path of [`ResolvedProfile::kept_absent`].
const KEPT_ABSENT: &str = "kept absent";

/// [`PathExplanation::shown_as`] for a missing path of [`ResolvedProfile::kept_absent`].
fn kept_absent_words(tool: &str) -> String {
    let what = if crate::login_files::is_login_tool(tool) {
        format!(
            "{KEPT_ABSENT} (protected: {})",
            crate::login_files::reason(tool)
        )
    } else {
        format!("{KEPT_ABSENT} ({tool} runs commands from it)")
    };
    format!(
        "{what}: missing, and it gets no placeholder (an empty one would change what runs); \
         one a command creates is removed after the run, with a warning"
    )
}

/// [`PathExplanation::shown_as`] for a writable path on a filesystem the host mounts
/// read-only.
pub const HOST_READ_ONLY_MOUNT: &str = "on a filesystem the host mounts read-only: writes \
     fail (EROFS) whatever the profile grants; remount it read-write on the host to write it";

/// A deny entry whose path did not exist at launch hides nothing: there is no mount point
/// to mask. A file created there while a command runs (by you, or by another program)
/// stops that command in the namespace sandbox (the cover watch), which may have read it
/// once just before; without that sandbox it is readable. Said plainly instead of
/// "denied" alone (R-H4).
fn missing_deny(fs: &ResolvedFilesystem, entry: Option<usize>, canonical: &Path) -> Option<String> {
    let ResolvedFilesystem::Restricted { entries, .. } = fs else {
        return None;
    };
    let e = &entries[entry?];
    (!e.exists && e.path == canonical).then(|| MISSING_DENY.to_string())
}

/// [`PathExplanation::shown_as`] for a deny entry whose path is not there
/// ([`missing_deny`]).
pub const MISSING_DENY: &str = "not present now, so nothing is hidden: a file created here \
     while a command runs stops that command in the namespace sandbox (it may have read the \
     file once just before), and is readable by it without one (the deny takes effect from \
     the next run after it exists)";

/// How a readable path is shown when it is more than read-only: inside a copy-on-write
/// cache (R-C1).
fn shown_as(resolved: &ResolvedProfile, canonical: &Path) -> Option<String> {
    let layers = resolved
        .caches
        .iter()
        .filter(|c| c.mode == crate::caches::CacheMode::Overlay)
        .find_map(|c| c.state.parent().and_then(Path::parent));
    if layers.is_some_and(|l| canonical.starts_with(l)) {
        return Some(
            "hidden by the namespace backend: private copy-on-write cache layers of every \
             workspace (caches = \"overlay\")"
                .into(),
        );
    }
    let c = resolved
        .caches
        .iter()
        .find(|c| canonical.starts_with(&c.path))?;
    if let Some(var) = &c.env {
        return Some(format!(
            "package cache `{}` ({}), missing on the host: the command's {var} points at this \
             workspace's private directory {} instead (nothing is created in your home; the \
             next run here sees what this one downloaded)",
            c.name,
            c.tool,
            c.private_dir().display()
        ));
    }
    match c.mode {
        crate::caches::CacheMode::Overlay => Some(format!(
            "visible, copy-on-write: package cache `{}` ({}); writes go to this workspace's \
             private layer {}, the host cache is never written (caches = \"overlay\")",
            c.name,
            c.tool,
            c.state.display()
        )),
        crate::caches::CacheMode::ReadOnly => Some(format!(
            "package cache `{}` ({}), read-only (caches = \"read-only\")",
            c.name, c.tool
        )),
        crate::caches::CacheMode::Shared => None,
    }
}

fn enforcement(kind: ProfileKind, selection: &Selection, status: &SandboxStatus) -> String {
    match kind {
        ProfileKind::Disabled => "nothing to enforce on the filesystem (disabled profile)".into(),
        ProfileKind::External => "the caller (external profile)".into(),
        ProfileKind::Managed if status.sandbox_enabled.value => {
            format!("cordon ({} backend)", selection.backend)
        }
        ProfileKind::Managed => format!(
            "NOT enforced: sandbox not enabled ({})",
            status.sandbox_enabled.reason
        ),
    }
}

/// Builds the explanation for `paths` (absolute, or relative to the cwd) under `resolved`
/// — the same object the transform enforces — with the initial `selection` (R-S3), the
/// `status` triple (R-S5) and, if known, what the host lacks (`host_missing`, e.g. the
/// backend's preparation error). Pure; never fails. Suggests any write grant that is not
/// shared, top-level or holding the workspace; [`explain_judged`] takes the caller's
/// judgement too.
pub fn explain(
    resolved: &ResolvedProfile,
    fs: &dyn FsView,
    paths: &[PathBuf],
    selection: &Selection,
    status: &SandboxStatus,
    host_missing: Option<&str>,
) -> Explanation {
    explain_judged(
        resolved,
        fs,
        paths,
        selection,
        status,
        host_missing,
        &|_, g| Ok(g.to_path_buf()),
    )
}

/// [`explain`], suggesting for a write the grant `judge` gives, and none where it gives a
/// reason against: the hint then says that reason and what to do instead (a directory of
/// one's own, or the profile).
pub fn explain_judged(
    resolved: &ResolvedProfile,
    fs: &dyn FsView,
    paths: &[PathBuf],
    selection: &Selection,
    status: &SandboxStatus,
    host_missing: Option<&str>,
    judge: GrantJudge<'_>,
) -> Explanation {
    let profile = &resolved.profile;
    // The namespace backend replaces /tmp with a private tmpfs (see `crate::view`).
    let private_tmp = selection.backend == Backend::LinuxHelper
        && status.sandbox_enabled.value
        && resolved.filesystem.top_view().private_tmp;
    let network_hint = match profile.network {
        NetworkPolicy::Enabled => None,
        NetworkPolicy::Managed => Some(format!(
            "profile `{}` lets the network out only through cordon's proxy; hosts: \
             network.allow = {:?}, network.deny = {:?}",
            profile.name, profile.network_rules.allow, profile.network_rules.deny
        )),
        // A built-in cannot be edited (nu7): the advice names a profile extending it.
        NetworkPolicy::Restricted if crate::PermissionProfile::builtin(&profile.name).is_some() => {
            Some(format!(
                "profile `{0}` restricts the network; pass `--allow-network` for one command, \
                 or use a profile of your own in ~/.config/cordon/config.toml: \
                 `[profiles.net]` with `extends = \"{0}\"` and `network = \"enabled\"`",
                profile.name
            ))
        }
        NetworkPolicy::Restricted => Some(format!(
            "profile `{}` restricts the network; set `network = \"enabled\"` in it, or \
             pass `--allow-network` for one command",
            profile.name
        )),
    };
    Explanation {
        profile: profile.name.clone(),
        kind: profile.kind,
        cwd: resolved.cwd.clone(),
        workspace: resolved.workspace.clone(),
        enforcement: enforcement(profile.kind, selection, status),
        filesystem: match &resolved.filesystem {
            ResolvedFilesystem::Unrestricted => None,
            fs @ ResolvedFilesystem::Restricted { default, .. } => Some(FilesystemSummary {
                default: *default,
                writable_roots: fs.writable_roots().iter().map(|e| e.path.clone()).collect(),
                protected: fs.protected().len(),
                denied: fs.denied().iter().filter(|e| e.exists).count(),
                denied_paths: fs.denied().len(),
                private_tmp,
            }),
        },
        paths: paths
            .iter()
            .map(|p| explain_path(resolved, fs, p, private_tmp, judge))
            .collect(),
        network: NetworkExplanation {
            mode: profile.network,
            hint: network_hint,
            unix_sockets: unix_socket_lines(resolved),
            local: local_lines(profile),
            allow: managed_list(profile, &profile.network_rules.allow),
            deny: managed_list(profile, &profile.network_rules.deny),
            remembered: Vec::new(),
        },
        sandbox: SandboxExplanation {
            needed: selection.rule.needed(),
            rule: selection.rule,
            rule_text: selection.rule.describe().to_string(),
            backend: selection.backend,
            status: status.clone(),
        },
        host_missing: host_missing.map(str::to_string),
        notes: resolved.notes.clone(),
    }
}

fn access_words(a: Access) -> &'static str {
    match a {
        Access::Write => "writable",
        Access::Read => "read-only",
        Access::Deny => "denied (cannot be read or written)",
    }
}

fn fact(f: &Fact) -> String {
    format!("{} ({})", if f.value { "yes" } else { "no" }, f.reason)
}

impl Explanation {
    /// The one-screen human answer (same as `Display`).
    pub fn render_text(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "profile {} ({}), cwd {}, workspace {}",
            self.profile,
            self.kind,
            self.cwd.display(),
            self.workspace.display()
        )?;
        writeln!(f, "filesystem enforced by: {}", self.enforcement)?;
        if let Some(fs) = &self.filesystem {
            writeln!(f, "  default: {}", access_words(fs.default))?;
            let roots: Vec<String> = fs
                .writable_roots
                .iter()
                .map(|p| {
                    if fs.private_tmp && p == Path::new("/tmp") {
                        "/tmp (a private tmpfs: the host's /tmp is hidden)".to_string()
                    } else {
                        p.display().to_string()
                    }
                })
                .collect();
            writeln!(
                f,
                "  writable: {}",
                if roots.is_empty() {
                    "nothing".to_string()
                } else {
                    roots.join(", ")
                }
            )?;
            if self.kind == ProfileKind::External {
                // Nothing of it is applied by cordon (R-P1): said as the caller's to enforce,
                // not as fact (new-user pass 192, #4: "stay read-only", "are hidden").
                writeln!(
                    f,
                    "  external profile: cordon applies none of these entries; the caller \
                     confines the filesystem ({} protected path(s), {} denied paths are its to \
                     enforce)",
                    fs.protected, fs.denied_paths
                )?;
            } else {
                writeln!(
                f,
                "  {} protected path(s) inside them stay read-only; {} denied paths are hidden \
                 ({} present here, the others hidden if they appear){}",
                fs.protected,
                fs.denied_paths,
                fs.denied,
                if self.paths.is_empty() {
                    "; ask about one: cordon explain PATH"
                } else {
                    ""
                }
            )?;
            }
        } else {
            writeln!(f, "  unrestricted: every path as the host allows")?;
        }
        for p in &self.paths {
            write!(f, "\n{}", p.absolute.display())?;
            if let Some(c) = &p.canonical {
                write!(f, " (-> {})", c.display())?;
            }
            if p.decided_by == Decider::PrivateTmp && p.access == Access::Write {
                writeln!(f, ": writable (the sandbox's private /tmp)")?;
            } else if p.decided_by == Decider::PrivateTmp {
                writeln!(f, ": hidden (private /tmp)")?;
            } else if p.shown_as.as_deref() == Some(HOST_READ_ONLY_MOUNT) {
                writeln!(
                    f,
                    ": writable by the profile, but read-only on the host (below)"
                )?;
            } else if p
                .shown_as
                .as_deref()
                .is_some_and(|v| v.starts_with(KEPT_ABSENT))
            {
                // Missing and no stand-in: what a command makes there does not stay.
                writeln!(
                    f,
                    ": {}, but kept absent: not there now, and removed after the run if a \
                     command makes it (below)",
                    access_words(p.access)
                )?;
            } else if p
                .shown_as
                .as_deref()
                .is_some_and(|v| v.starts_with(SETTLED))
            {
                writeln!(
                    f,
                    ": {} during the run, then settled (below)",
                    access_words(p.access)
                )?;
            } else if p.shown_as.as_deref() == Some(MISSING_DENY) {
                // Nothing there, so no stand-in either (new-user pass 187 #3: "sees a
                // stand-in (below)" above "not present now").
                writeln!(f, ": {}; not there now (below)", access_words(p.access))?;
            } else if p.command_writes.is_some() {
                // Hints finding 7: "read-only" alone while the command's writes succeed.
                writeln!(
                    f,
                    ": {} on the host; the command writes a private copy, merged back (below)",
                    access_words(p.access)
                )?;
            } else if p.shown_as.is_some() {
                // The host file's access, and that the command sees something else in its
                // place (new-user pass nu62: "read-only" then "writable copy" read as a
                // contradiction).
                writeln!(
                    f,
                    ": {} on the host; the command sees a stand-in (below)",
                    access_words(p.access)
                )?;
            } else if self.kind == ProfileKind::External {
                writeln!(
                    f,
                    ": {} by the profile, for the caller to enforce (external: cordon applies \
                     nothing)",
                    access_words(p.access)
                )?;
            } else if let (Some(n), Access::Write) = (p.hard_links, p.access) {
                writeln!(
                    f,
                    ": writable by name, but not in place: the file has {n} names (hard \
                     links; note below)"
                )?;
            } else {
                writeln!(f, ": {}", access_words(p.access))?;
            }
            if let Some(w) = &p.command_writes {
                writeln!(
                    f,
                    "  command writes: a {} of this file; merged back when it ends: {}; other \
                     keys: {}",
                    w.kind.replace('-', " "),
                    w.merged_back.join(", "),
                    w.other_keys
                )?;
            } else if let Some(v) = &p.shown_as {
                writeln!(f, "  shown as: {v}")?;
            }
            writeln!(f, "  decided by: {}", p.decided_by.describe())?;
            if let Some(h) = &p.hint {
                writeln!(f, "  to change: {h}")?;
            }
        }
        writeln!(f, "\nnetwork: {}", self.network.mode)?;
        for l in &self.network.unix_sockets {
            writeln!(f, "  unix socket: {l}")?;
        }
        for l in &self.network.local {
            writeln!(f, "  local port: {l}")?;
        }
        if let Some(h) = &self.network.hint {
            writeln!(f, "  to change: {h}")?;
        }
        writeln!(
            f,
            "sandbox: {} — {}",
            if self.sandbox.needed {
                "needed"
            } else {
                "not needed"
            },
            self.sandbox.rule_text
        )?;
        writeln!(f, "backend: {}", self.sandbox.backend)?;
        let s = &self.sandbox.status;
        writeln!(f, "  requested: {}", fact(&s.sandbox_requested))?;
        writeln!(f, "  available: {}", fact(&s.sandbox_available))?;
        writeln!(f, "  enabled:   {}", fact(&s.sandbox_enabled))?;
        if let Some(m) = &self.host_missing {
            writeln!(f, "host lacks: {m}")?;
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

/// The lines of [`NetworkExplanation::unix_sockets`].
fn unix_socket_lines(resolved: &ResolvedProfile) -> Vec<String> {
    let mut out: Vec<String> = resolved
        .unix_sockets
        .iter()
        .map(|p| {
            let s = p.to_string_lossy();
            match crate::network::container_engine_socket(&s) {
                Some(engine) => format!(
                    "{s}: reachable in every network mode (network.unix_sockets); a {engine} \
                     socket is host root, allowed because i_understand_host_root = true"
                ),
                None => format!("{s}: reachable in every network mode (network.unix_sockets)"),
            }
        })
        .collect();
    // No sandbox at all (a disabled profile with the network on): nothing is refused
    // (nu7: `danger-full-access` was said to refuse host sockets).
    let unconfined = resolved.profile.kind == crate::ProfileKind::Disabled
        && resolved.profile.network == NetworkPolicy::Enabled;
    out.push(if unconfined {
        format!(
            "every host socket: reachable (profile `{}` runs the command without a sandbox)",
            resolved.profile.name
        )
    } else {
        "any other host socket outside the writable roots: refused in every network mode \
         (add it to network.unix_sockets; docker.sock, podman.sock and containerd.sock also \
         need i_understand_host_root = true, since reaching one is root on the host)"
            .into()
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// New-user pass 155, #1: a missing path in the host's `/tmp` (its smallest grant is
    /// `/tmp`, which is never granted) is not offered to `--allow-write`, which would make
    /// it a directory; a directory of one's own is. Twins: an existing path is offered
    /// itself, and reading it is offered either way.
    #[test]
    fn a_missing_file_in_the_hosts_tmp_is_not_offered_to_allow_write() {
        let t = private_tmp_grant(Path::new("/tmp/foo.txt"), Path::new("/tmp"));
        assert!(!t.contains("-w /tmp/foo.txt"), "{t}");
        assert!(
            t.contains("mkdir /tmp/NAME") && t.contains("does not exist"),
            "{t}"
        );
        assert!(t.contains(r#""path":"/tmp/foo.txt""#), "{t}");
        let t = private_tmp_grant(Path::new("/tmp/d/f"), Path::new("/tmp/d"));
        assert!(t.contains("`-w /tmp/d` to write it"), "{t}");
        let t = private_tmp_grant(Path::new("/tmp/f"), Path::new("/tmp/f"));
        assert!(t.contains("`-w /tmp/f` to write it"), "{t}");
    }
}
