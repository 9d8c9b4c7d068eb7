//! Built-in knowledge (R-A4): the known-safe read-only list and the dangerous-command
//! detector. Both look at what a command *does* (its arguments), not only at its name.

use crate::model::{Context, Decision, RedirectKind, Segment};
use shells::INTERPRETERS;
use variables::runs_arithmetic;

mod disks;
mod languages;
mod run_time_code;
pub(crate) mod shells;
mod toolchains;
pub(crate) mod variables;
pub(crate) mod wrappers;

/// A dangerous-command finding (R-A4): a stable id, the decision it forces at least, and why.
/// Findings are combined strictly with rules: an `allow` rule never overrides one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// What kind of danger (JSON: the snake_case id, e.g. `"rm_recursive_critical"`).
    pub id: FindingId,
    /// The decision this finding forces at least (`forbid` or `ask`).
    pub decision: Decision,
    /// Human-readable reason.
    pub reason: String,
}

/// The kinds of dangerous-command finding (R-A4). Serialises as the snake_case id
/// (`"git_force_push"`); `Display` prints the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingId {
    /// `rm -rf /`, `rm -r ~`, `rm -rf ..`, `--no-preserve-root`: recursive delete of a critical path.
    RmRecursiveCritical,
    /// `rm /etc/passwd`: deletes a system file.
    RmSystemFile,
    /// `rm -rf "$DIR"`, `xargs rm -rf`: recursive delete of a path known only at run time.
    RmDynamicTarget,
    /// `find / -delete`.
    FindDeleteCritical,
    /// `rm -rf .git`, `rm -rf *`, `rm -rf "$(pwd)"`'s static twin `rm -rf /abs/project`,
    /// `cd .. && rm -rf project`, `find . -delete`: deletes the project the command started
    /// in, everything in it, a directory holding it, or a repository's history (attack
    /// pass 62). Asked about: the sandbox lets the command write the project.
    RmProject,
    /// `sudo`, `doas`, `su`, `pkexec`.
    PrivilegeEscalation,
    /// `curl … | sh`, `sh -c "$(curl …)"`.
    DownloadToInterpreter,
    /// `git push --force` and equivalents.
    GitForcePush,
    /// `git push --delete`, `git push origin :branch`.
    GitPushDelete,
    /// `git reset --hard`.
    GitResetHard,
    /// `git clean -f` with `-d`/`-x`/`-X`.
    GitClean,
    /// `git checkout -- .`, `git restore FILE`, `git switch --discard-changes`, `git stash
    /// drop`/`clear`, and a git command whose subcommand or options arrive at run time
    /// (`xargs git`, `git reset $MODE`): discards uncommitted work the sandbox lets the
    /// command write (attack pass 61).
    GitDiscardChanges,
    /// `git -c alias.x=clean x -dfx`: the subcommand is an alias the command line defines
    /// (`-c`, `--config-env`, `GIT_CONFIG_KEY_n`, `GIT_CONFIG_PARAMETERS`), so what git runs
    /// is not what the policy reads (attack pass 44, L5).
    GitAlias,
    /// `x="git reset --hard"; $x`, `"${a[@]}"`, `sh -c '"$@"' _ …`: the whole command —
    /// program and arguments — is known only at run time, so nothing of it can be checked
    /// (attack pass 62).
    DynamicCommand,
    /// `dd of=/dev/sda`: raw device write by dd.
    DdDevice,
    /// `> /dev/sda`, `tee /dev/sda`, `cp img /dev/nvme0n1`: a write to a device.
    DeviceWrite,
    /// `mkfs.*`, `mke2fs`, `mkswap`, `wipefs`, `blkdiscard`: destroys a filesystem.
    Mkfs,
    /// `shred /dev/sda`, `sgdisk --zap-all`, `fdisk`/`parted` writes, `hdparm --security-erase`, …: overwrites a disk.
    DiskOverwrite,
    /// `chmod -R 777 x`, `chmod 777 /etc/x`.
    ChmodWorldWritable,
    /// `chown -R u /usr`, `chmod -R 755 /etc`.
    RecursiveOwnerModeSystem,
    /// `:(){ :|:& };:` and renamed variants.
    ForkBomb,
    /// writes a shell start-up file (`>> ~/.bashrc`).
    ShellRcWrite,
    /// writes a system path (`> /etc/passwd`).
    SystemFileWrite,
    /// `shutdown`, `reboot`, `halt`, `poweroff`.
    PowerState,
}

impl FindingId {
    /// The stable snake_case id used in JSON and in `tests/cases.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingId::RmRecursiveCritical => "rm_recursive_critical",
            FindingId::RmSystemFile => "rm_system_file",
            FindingId::RmDynamicTarget => "rm_dynamic_target",
            FindingId::FindDeleteCritical => "find_delete_critical",
            FindingId::RmProject => "rm_project",
            FindingId::PrivilegeEscalation => "privilege_escalation",
            FindingId::DownloadToInterpreter => "download_to_interpreter",
            FindingId::GitForcePush => "git_force_push",
            FindingId::GitPushDelete => "git_push_delete",
            FindingId::GitResetHard => "git_reset_hard",
            FindingId::GitClean => "git_clean",
            FindingId::GitDiscardChanges => "git_discard_changes",
            FindingId::GitAlias => "git_alias",
            FindingId::DynamicCommand => "dynamic_command",
            FindingId::DdDevice => "dd_device",
            FindingId::DeviceWrite => "device_write",
            FindingId::Mkfs => "mkfs",
            FindingId::DiskOverwrite => "disk_overwrite",
            FindingId::ChmodWorldWritable => "chmod_world_writable",
            FindingId::RecursiveOwnerModeSystem => "recursive_owner_mode_system",
            FindingId::ForkBomb => "fork_bomb",
            FindingId::ShellRcWrite => "shell_rc_write",
            FindingId::SystemFileWrite => "system_file_write",
            FindingId::PowerState => "power_state",
        }
    }

    /// True for the kinds that destroy a disk or a filesystem (one kind, issue 8 §5).
    pub fn destroys_disk(self) -> bool {
        matches!(
            self,
            FindingId::DdDevice
                | FindingId::DeviceWrite
                | FindingId::Mkfs
                | FindingId::DiskOverwrite
        )
    }
}

impl std::fmt::Display for FindingId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn finding(id: FindingId, decision: Decision, reason: impl Into<String>) -> Finding {
    Finding {
        id,
        decision,
        reason: reason.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Unicode look-alikes
// ---------------------------------------------------------------------------------------------

/// Fold common look-alike characters (Cyrillic/Greek homoglyphs, fullwidth forms) to ASCII
/// and drop invisible characters, so that the dangerous-command detector and forbid/ask rules
/// still recognise e.g. `rм -rf /`. Never used to *allow* anything.
pub(crate) fn fold_confusables(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let m = match c {
            '\u{200B}'..='\u{200F}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}' => continue,
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFF01 + 0x21).unwrap_or(c),
            'а' => 'a',
            'в' => 'b',
            'с' => 'c',
            'ԁ' => 'd',
            'е' | 'ё' => 'e',
            'һ' => 'h',
            'і' | 'ı' => 'i',
            'ј' => 'j',
            'к' => 'k',
            'ӏ' => 'l',
            'м' => 'm',
            'п' => 'n',
            'о' | 'ο' | 'σ' => 'o',
            'р' | 'ρ' => 'p',
            'ԛ' => 'q',
            'г' => 'r',
            'ѕ' => 's',
            'т' | 'τ' => 't',
            'υ' | 'ս' => 'u',
            'ѵ' | 'ν' => 'v',
            'ԝ' => 'w',
            'х' | 'χ' => 'x',
            'у' | 'γ' => 'y',
            'α' => 'a',
            'ε' => 'e',
            'κ' => 'k',
            'ι' => 'i',
            'А' | 'Α' => 'A',
            'В' | 'Β' => 'B',
            'С' => 'C',
            'Е' | 'Ε' => 'E',
            'Н' | 'Η' => 'H',
            'І' | 'Ι' => 'I',
            'К' | 'Κ' => 'K',
            'М' | 'Μ' => 'M',
            'О' | 'Ο' => 'O',
            'Р' | 'Ρ' => 'P',
            'Т' | 'Τ' => 'T',
            'Х' | 'Χ' => 'X',
            'Ѕ' => 'S',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            c => c,
        };
        out.push(m);
    }
    out
}

/// The basename used by the dangerous detector: folded, path stripped. `None` if dynamic.
fn danger_name(seg: &Segment) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    if !seg.is_static(0) {
        return None;
    }
    let a = seg.argv[0].as_str();
    if a.is_ascii() {
        let base = a.rsplit('/').next().unwrap_or(a);
        return Some(unversioned(base).map_or(Cow::Borrowed(base), Cow::Borrowed));
    }
    let folded = fold_confusables(a);
    let base = folded.rsplit('/').next().unwrap_or(&folded);
    Some(Cow::Owned(unversioned(base).unwrap_or(base).to_string()))
}

/// An interpreter called by a versioned name (`python3.11`, `perl5.36.0`, `ruby3.1`,
/// `lua5.4`, `tclsh8.6`): the name it is judged as (attack pass 204, S3: `python3.11`
/// reading a pipe ran unasked while `python3` was asked).
fn unversioned(name: &str) -> Option<&'static str> {
    const BASES: &[&str] = &[
        "python3", "python2", "python", "pypy3", "pypy", "perl", "ruby", "lua", "php", "tclsh",
        "node", "bash", "zsh", "ksh",
    ];
    BASES.iter().copied().find(|b| {
        name.strip_prefix(b).is_some_and(|rest| {
            !rest.is_empty()
                && rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')
                && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

/// A working-directory candidate while walking a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cwd {
    /// Absolute path components.
    Abs(Vec<String>),
    /// Relative to the start directory (may begin with `..`).
    Rel(Vec<String>),
    /// Relative to the home directory (home unknown).
    Home(Vec<String>),
    /// Not known.
    Unknown,
}

fn push_components(base: &mut Vec<String>, rel: &str, allow_leading_dotdot: bool) -> bool {
    for c in rel.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if base.last().is_some_and(|l| l != "..") {
                    base.pop();
                } else if allow_leading_dotdot {
                    base.push("..".into());
                } else if base.is_empty() {
                    // `/..` is `/`; above home is unknown.
                    return false;
                }
            }
            c => base.push(c.to_string()),
        }
    }
    true
}

fn split_abs(p: &str) -> Vec<String> {
    let mut v = Vec::new();
    push_components(&mut v, p, false);
    v
}

/// A dynamic word whose only expansion is a leading `$HOME`/`${HOME}`, rewritten with `~`
/// (`$HOME/x` → `~/x`), or `$PWD`/`${PWD}`, rewritten with `.`, so it can be treated as a
/// static path.
pub(crate) fn home_spelled(t: &str) -> Option<String> {
    // `$PWD` is the working directory, as `~+` is (usability pass 200: `rm -rf
    // "$PWD/build"` is `rm -rf ./build`); assigning PWD is a sensitive assignment.
    for (pre, tilde) in [
        ("$HOME", "~"),
        ("${HOME}", "~"),
        ("$PWD", "."),
        ("${PWD}", "."),
    ] {
        if let Some(rest) = t.strip_prefix(pre) {
            if (rest.is_empty() || rest.starts_with('/')) && !rest.contains(['$', '`']) {
                return Some(format!("{tilde}{rest}"));
            }
        }
    }
    None
}

/// Replace `$HOME`, `${HOME}` prefixes by `~`.
fn home_form(p: &str) -> Option<&str> {
    for pre in ["$HOME", "${HOME}", "~"] {
        if let Some(rest) = p.strip_prefix(pre) {
            if rest.is_empty() || rest.starts_with('/') {
                return Some(rest);
            }
        }
    }
    None
}

/// Resolve a static path spelling against a cwd candidate.
pub(crate) fn resolve(cwd: &Cwd, p: &str, home: Option<&str>) -> Cwd {
    if p.starts_with('/') {
        return Cwd::Abs(split_abs(p));
    }
    if let Some(rest) = home_form(p) {
        return match home {
            Some(h) => {
                let mut v = split_abs(h);
                if push_components(&mut v, rest, false) {
                    Cwd::Abs(v)
                } else {
                    Cwd::Abs(Vec::new())
                }
            }
            None => {
                let mut v = Vec::new();
                if push_components(&mut v, rest, false) {
                    Cwd::Home(v)
                } else {
                    Cwd::Unknown
                }
            }
        };
    }
    // `~+` is the working directory (bash: `$PWD`; fresh pass 190 F3: `rm -rf
    // ~+/.git/objects` ran unasked).
    if let Some(rest) = p
        .strip_prefix("~+")
        .filter(|r| r.is_empty() || r.starts_with('/'))
    {
        return resolve(cwd, &format!(".{rest}"), home);
    }
    if p.starts_with('~') {
        return Cwd::Unknown; // ~user, ~-
    }
    match cwd {
        Cwd::Abs(b) => {
            let mut v = b.clone();
            if !push_components(&mut v, p, false) {
                v.clear();
            }
            Cwd::Abs(v)
        }
        Cwd::Rel(b) => {
            let mut v = b.clone();
            push_components(&mut v, p, true);
            Cwd::Rel(v)
        }
        Cwd::Home(b) => {
            let mut v = b.clone();
            if push_components(&mut v, p, false) {
                Cwd::Home(v)
            } else {
                Cwd::Unknown
            }
        }
        Cwd::Unknown => Cwd::Unknown,
    }
}

fn has_glob(c: &str) -> bool {
    c.contains(['*', '?', '['])
}

/// Roots below which every path is a system path.
const SYSTEM_ALL: &[&str] = &[
    "etc", "usr", "bin", "sbin", "boot", "lib", "lib32", "lib64", "libx32", "dev", "proc", "sys",
    "System",
];
/// Roots that are critical themselves and down to the given depth (1 = the root itself).
const SYSTEM_SHALLOW: &[(&str, usize)] = &[
    ("var", 2),
    ("opt", 2),
    ("home", 2),
    ("Users", 2),
    ("root", 2),
    ("srv", 1),
    ("snap", 2),
    ("mnt", 1),
    ("media", 1),
    ("private", 2),
    ("Library", 2),
    ("Applications", 2),
    ("nix", 2),
    ("tmp", 1),
    ("run", 1),
];

/// Why an absolute path (components) is critical to delete or re-permission, if it is.
fn critical_abs(parts: &[String], home: Option<&str>) -> Option<String> {
    if parts.is_empty() {
        return Some("the root directory /".into());
    }
    let home_parts = home.map(split_abs);
    if let Some(g) = parts.iter().position(|c| has_glob(c)) {
        let prefix = &parts[..g];
        if prefix.is_empty() {
            return Some(format!("everything under / (/{})", parts.join("/")));
        }
        if home_parts.as_deref() == Some(prefix) {
            return Some("everything in the home directory".into());
        }
        let mut probe = prefix.to_vec();
        probe.push("x".into());
        return critical_named(&probe, home_parts.as_deref())
            .map(|r| format!("{r} (glob /{})", parts.join("/")));
    }
    critical_named(parts, home_parts.as_deref())
}

fn critical_named(parts: &[String], home: Option<&[String]>) -> Option<String> {
    let path = format!("/{}", parts.join("/"));
    if home == Some(parts) {
        return Some(format!("the home directory {path}"));
    }
    // Below the home directory (`/root/x` when root's home is `/root`) nothing is a
    // system path (new-user pass nu62: `rm -rf ~/x` as root was forbidden as one), unless
    // the home lies in a system tree itself.
    if let Some(h) = home
        .filter(|h| !h.is_empty() && parts.len() > h.len() && !SYSTEM_ALL.contains(&h[0].as_str()))
    {
        if parts.starts_with(h) {
            return None;
        }
    }
    let root = parts[0].as_str();
    if SYSTEM_ALL.contains(&root) {
        return Some(format!("system path {path}"));
    }
    if let Some((_, d)) = SYSTEM_SHALLOW.iter().find(|(r, _)| *r == root) {
        if parts.len() <= *d {
            return Some(format!("system path {path}"));
        }
    }
    None
}

/// The working-directory candidates, or the start directory when none is known (no copy).
fn cwd_candidates(cwds: &[Cwd]) -> &[Cwd] {
    const START: &[Cwd] = &[Cwd::Rel(Vec::new())];
    if cwds.is_empty() {
        START
    } else {
        cwds
    }
}

/// Why deleting `p` (static spelling) under the cwd candidates is critical, if it is.
pub(crate) fn critical_target(p: &str, cwds: &[Cwd], home: Option<&str>) -> Option<String> {
    escapes_cwd(p).or_else(|| critical_resolved(p, cwds, home))
}

/// Why `p` is critical as a lexical `..` escape of the working directory, independent of
/// the cwd (`rm -rf ../x`), if it is.
fn escapes_cwd(p: &str) -> Option<String> {
    if !p.starts_with('/') && home_form(p).is_none() {
        let mut v = Vec::new();
        push_components(&mut v, p, true);
        if v.first().is_some_and(|c| c == "..") {
            return Some(format!("{p} escapes the working directory"));
        }
    }
    None
}

/// [`critical_target`] without the lexical `..` escape: what `p` names under the cwd
/// candidates (another user's home, the home, system paths).
fn critical_resolved(p: &str, cwds: &[Cwd], home: Option<&str>) -> Option<String> {
    if p.starts_with('~') && home_form(p).is_none() {
        let rest = p.split_once('/').map(|(_, r)| r).unwrap_or("");
        if rest.trim_matches('/').is_empty() || has_glob(rest) && !rest.contains('/') {
            return Some(format!("another user's home directory {p}"));
        }
    }
    for c in cwd_candidates(cwds) {
        match resolve(c, p, home) {
            Cwd::Abs(parts) => {
                if let Some(r) = critical_abs(&parts, home) {
                    return Some(r);
                }
            }
            Cwd::Home(parts) => {
                if parts.is_empty() {
                    return Some("the home directory ~".into());
                }
                if parts.len() == 1 && has_glob(&parts[0]) {
                    return Some(format!("everything in the home directory (~/{})", parts[0]));
                }
            }
            Cwd::Rel(parts) => {
                if parts.first().is_some_and(|c| c == "..") {
                    return Some(format!("{p} escapes the working directory"));
                }
            }
            Cwd::Unknown => {}
        }
    }
    None
}

/// Whether glob component `c` matches every name (`*`, `.*`, `.[!.]*`, `.??*`, `**`): its
/// classes and wildcards removed, nothing but a leading dot is left.
fn catch_all(c: &str) -> bool {
    if !has_glob(c) {
        return false;
    }
    let mut rest = String::new();
    let mut in_class = false;
    for ch in c.chars() {
        match ch {
            '[' => in_class = true,
            ']' => in_class = false,
            '*' | '?' => {}
            _ if in_class => {}
            _ => rest.push(ch),
        }
    }
    rest.is_empty() || rest == "."
}

/// Whether path component `c` names `.git`: literally, or as a glob that matches it
/// (`.g*`, `.gi?`: new-user pass nu65 deleted the history with `rm -rf .gi?`).
fn names_git(c: &str) -> bool {
    // A catch-all (`*`, `.*`) names everything, and is judged as that where it matters
    // (at the project's top), not as `.git` everywhere.
    c == ".git" || (!catch_all(c) && names(c, ".git"))
}

/// Whether path component `c` names `name`: literally, or as a glob that matches it
/// (`victi?`, `pro[j]`, `pr*`: attack pass 188 F2, `rm -rf /w/pro?` deleted the project
/// unasked while `rm -rf /w/proj` was asked about).
fn names(c: &str, name: &str) -> bool {
    c == name
        || (has_glob(c)
            && globset::GlobBuilder::new(c)
                .literal_separator(true)
                .build()
                .is_ok_and(|g| g.compile_matcher().is_match(name)))
}

/// The `.git` entries that hold a repository's history (deleting one loses commits);
/// `worktrees/` is bookkeeping (new-user pass nu64).
const GIT_HISTORY: &[&str] = &[
    "objects",
    "refs",
    "logs",
    "packed-refs",
    "HEAD",
    "index",
    "modules",
];

/// File extensions of sources and documents (`git checkout f.txt` names a path; a branch
/// seldom ends in one of these).
const SOURCE_EXTENSIONS: &[&str] = &[
    "rs", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "c", "h", "cc", "cpp", "hpp", "java",
    "kt", "rb", "php", "md", "txt", "json", "yaml", "yml", "toml", "lock", "html", "css", "scss",
    "sh", "sql", "xml", "cfg", "ini", "env", "gradle", "swift", "cs", "vue", "svelte", "lua", "pl",
    "dart", "ex", "exs", "hs", "ml", "scala", "proto", "csv", "rst", "ipynb", "conf", "mk",
    "cmake", "bzl", "tf", "nix",
];

/// `p` with one level of brace expansion made (`{.git,src}` → `.git`, `src`;
/// `.{git,x}` → `.git`, `.x`), at most 32 words; `p` itself without braces.
fn brace_words(p: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (p.find('{'), p.rfind('}')) else {
        return vec![p.to_string()];
    };
    if close < open || !p[open..close].contains(',') {
        return vec![p.to_string()];
    }
    p[open + 1..close]
        .split(',')
        .take(32)
        .map(|alt| format!("{}{alt}{}", &p[..open], &p[close + 1..]))
        .collect()
}

/// Why deleting `p` (static spelling) under the cwd candidates takes the project
/// (`project`: the work tree's top, else where the script started), if it does. With
/// `recursive`: the project itself or a directory holding it, everything in it (a
/// catch-all glob at its top: `*`, `./.[!.]*`), or `.git` or its history
/// ([`GIT_HISTORY`]); without: a file of that history. Brace expansion is made first.
/// Attack passes 62, 63: `rm -rf .git`, `rm -rf *`, `cd .. && rm -rf proj`, `rm -rf
/// {.git,src}`, `rm -f .git/objects/*/*` ran in on-request mode without a question;
/// new-user pass nu63: `rm -rf *.log` and `rm -rf .git/rebase-merge` must not ask.
pub(crate) fn project_target(
    p: &str,
    cwds: &[Cwd],
    home: Option<&str>,
    project: &Cwd,
    links: &[Link],
    recursive: bool,
) -> Option<String> {
    if !matches!(project, Cwd::Abs(_) | Cwd::Rel(_)) {
        return None;
    }
    for w in brace_words(p).iter().flat_map(|w| user_home_forms(w)) {
        for c in cwd_candidates(cwds) {
            let r = resolve(c, &w, home);
            let mut places = vec![r.clone()];
            places.extend(through_links(&r, &w, links));
            for r in &places {
                if let Some(why) = project_place(p, r, cwds, project, recursive) {
                    return Some(why);
                }
            }
        }
    }
    None
}

/// The places `~NAME/REST` may name, as spellings [`resolve`] reads: another account's
/// home is not known here, so where it usually is (`/NAME`, as root's; `/home/NAME`) and the
/// caller's own home (`~/REST`: NAME may be the caller) — `rm -rf ~root/../w/proj/.git`
/// reached the project unasked. Any other spelling as it is.
fn user_home_forms(w: &str) -> Vec<String> {
    let Some(rest) = w.strip_prefix('~') else {
        return vec![w.to_string()];
    };
    let (name, tail) = rest.split_once('/').map_or((rest, ""), |(n, t)| (n, t));
    if name.is_empty() || name == "+" || name == "-" || name.contains(['*', '?', '[']) {
        return vec![w.to_string()];
    }
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!("/{tail}")
    };
    vec![
        format!("/{name}{tail}"),
        format!("/home/{name}{tail}"),
        format!("~{tail}"),
    ]
}

/// [`project_target`] for one resolved place `r` that spelling `p` names.
fn project_place(p: &str, r: &Cwd, cwds: &[Cwd], project: &Cwd, recursive: bool) -> Option<String> {
    let project_parts = match project {
        Cwd::Abs(v) | Cwd::Rel(v) => v,
        _ => return None,
    };
    let (parts, comparable) = match (r, project) {
        (Cwd::Abs(v), Cwd::Abs(_)) | (Cwd::Rel(v), Cwd::Rel(_)) => (v, true),
        (Cwd::Abs(v), _) | (Cwd::Rel(v), _) | (Cwd::Home(v), _) => (v, false),
        (Cwd::Unknown, _) => return None,
    };
    if let Some(g) = parts.iter().position(|c| names_git(c)) {
        let history = match parts.get(g + 1) {
            None => recursive,
            Some(first) => GIT_HISTORY.contains(&first.as_str()) || catch_all(first),
        };
        if history {
            return Some(format!("a repository's history ({p})"));
        }
    }
    if !recursive || !comparable {
        return None;
    }
    // A relative place made only of `..` holds the start directory (the relative project);
    // a glob component holds it when it matches the project's component there.
    let holds = |dir: &[String]| {
        (dir.len() <= project_parts.len()
            && dir.iter().zip(project_parts).all(|(c, p)| names(c, p)))
            || (matches!(r, Cwd::Rel(_)) && !dir.is_empty() && dir.iter().all(|c| c == ".."))
    };
    if holds(parts) {
        return Some(if parts.len() == project_parts.len() {
            format!("the project directory ({p})")
        } else {
            format!("a directory holding the project ({p})")
        });
    }
    if let Some((last, dir)) = parts.split_last() {
        let is_project = dir.len() == project_parts.len() && holds(dir);
        if catch_all(last) && !is_project && holds(dir) {
            // `ln -s .. up && rm -rf up/*`: everything in a directory above the project.
            return Some(format!(
                "everything in a directory holding the project ({p})"
            ));
        }
        if catch_all(last) && is_project {
            // With a `cd` before it, the top is one of the places it may run: a `cd`
            // that fails leaves it there (nu64 asked why `cd build && rm -rf *` asks).
            let maybe = if cwd_candidates(cwds).len() > 1 {
                "; if the `cd` before it does not take it elsewhere"
            } else {
                ""
            };
            return Some(format!("everything in the project directory ({p}{maybe})"));
        }
    }
    None
}

/// A symbolic link made earlier on the command line (`ln -s TARGET NAME`): where it is and
/// where it points, both resolved under one working-directory candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    /// The link itself.
    pub at: Cwd,
    /// What it points to.
    pub to: Cwd,
}

/// `--symbolic` and `--relative` of ln (getopt_long abbreviations count).
const LN_SYMBOLIC: LongOption = LongOption::abbrev("symbolic");
const LN_RELATIVE: LongOption = LongOption::abbrev("relative");

/// The symbolic links `seg` makes if it is `ln -s` with static operands, resolved under
/// each cwd candidate: `ln -s T NAME` (and `NAME/basename(T)`, in case NAME is a
/// directory), `ln -s T` (`./basename(T)`), `ln -s -t DIR T…`. A relative target is read
/// from the link's directory, or from the working directory with `-r`.
pub(crate) fn symlinks_made(seg: &Segment, cwds: &[Cwd], home: Option<&str>) -> Vec<Link> {
    if danger_name(seg).as_deref() != Some("ln") {
        return Vec::new();
    }
    let a = split_args(seg, "tS");
    if !(a.short.contains('s') || a.has_long(&[LN_SYMBOLIC])) {
        return Vec::new();
    }
    let relative = a.short.contains('r') || a.has_long(&[LN_RELATIVE]);
    let target_dir = seg.argv.iter().enumerate().skip(1).find_map(|(i, w)| {
        let next = || seg.argv.get(i + 1).filter(|_| seg.is_static(i + 1));
        if w == "-t" {
            next().map(String::as_str)
        } else if let Some(d) = w.strip_prefix("-t").filter(|d| !d.is_empty()) {
            Some(d)
        } else if TARGET_DIRECTORY.matches(w) {
            w.split_once('=')
                .map(|(_, v)| v)
                .or_else(|| next().map(String::as_str))
        } else {
            None
        }
    });
    if a.operands.iter().any(|(i, _)| !seg.is_static(*i)) {
        return Vec::new();
    }
    let ops: Vec<&str> = a.operands.iter().map(|(_, t)| *t).collect();
    let into = |dir: &str, t: &str| {
        let base = t.trim_end_matches('/').rsplit('/').next().unwrap_or(t);
        format!("{}/{}", dir.trim_end_matches('/'), base)
    };
    // (target, link name) pairs.
    let mut made: Vec<(&str, String)> = Vec::new();
    match (target_dir, ops.as_slice()) {
        (Some(d), ts) => made.extend(ts.iter().map(|t| (*t, into(d, t)))),
        (None, [t]) => made.push((t, into(".", t))),
        (None, [t, name]) => {
            made.push((t, name.to_string()));
            made.push((t, into(name, t)));
        }
        (None, [ts @ .., dir]) => made.extend(ts.iter().map(|t| (*t, into(dir, t)))),
        (None, []) => {}
    }
    let mut out = Vec::new();
    for c in cwd_candidates(cwds) {
        for (t, name) in &made {
            let at = resolve(c, name, home);
            let base = if relative { c.clone() } else { parent_dir(&at) };
            let to = resolve(&base, t, home);
            if !matches!(at, Cwd::Unknown) && !matches!(to, Cwd::Unknown) {
                out.push(Link { at, to });
            }
        }
    }
    out
}

/// The directory holding `p` (`Unknown` when it cannot be named).
fn parent_dir(p: &Cwd) -> Cwd {
    match p {
        Cwd::Abs(v) if !v.is_empty() => Cwd::Abs(v[..v.len() - 1].to_vec()),
        Cwd::Rel(v) if v.last().is_some_and(|l| l != "..") => Cwd::Rel(v[..v.len() - 1].to_vec()),
        Cwd::Home(v) if !v.is_empty() => Cwd::Home(v[..v.len() - 1].to_vec()),
        _ => Cwd::Unknown,
    }
}

/// What place `r` (spelled `spelled`) reaches through the links made earlier: a path
/// below a link (`g/x`, `g/*`) or the link with a trailing slash (`g/`) is read through it
/// (`rm -rf g/` deletes what `g` points to; `rm -rf g` only the link). Links to links are
/// followed a few levels.
fn through_links(r: &Cwd, spelled: &str, links: &[Link]) -> Vec<Cwd> {
    let parts_of = |c: &Cwd| match c {
        Cwd::Abs(v) | Cwd::Rel(v) | Cwd::Home(v) => Some(v.clone()),
        Cwd::Unknown => None,
    };
    let same_kind = |a: &Cwd, b: &Cwd| std::mem::discriminant(a) == std::mem::discriminant(b);
    let slash = spelled.ends_with('/') || spelled.ends_with("/.");
    let mut out: Vec<Cwd> = Vec::new();
    let mut todo = vec![(r.clone(), slash)];
    while let Some((place, slash)) = todo.pop() {
        let Some(parts) = parts_of(&place) else {
            continue;
        };
        for l in links {
            let Some(at) = parts_of(&l.at) else { continue };
            if !same_kind(&place, &l.at) || !parts.starts_with(&at) {
                continue;
            }
            if parts.len() == at.len() && !slash {
                continue;
            }
            let rest = &parts[at.len()..];
            let reached = match &l.to {
                Cwd::Abs(v) => Cwd::Abs([v.as_slice(), rest].concat()),
                Cwd::Rel(v) => Cwd::Rel([v.as_slice(), rest].concat()),
                Cwd::Home(v) => Cwd::Home([v.as_slice(), rest].concat()),
                Cwd::Unknown => continue,
            };
            if out.len() < 16 && !out.contains(&reached) {
                out.push(reached.clone());
                todo.push((reached, slash));
            }
        }
    }
    out
}

/// Whether `p` names the project or a path below it for every cwd candidate, so that a
/// `..` in it escapes the working directory but not the project (new-user pass nu63: `rm
/// -rf ../build` from `proj/tests` was forbidden).
fn within_project(p: &str, cwds: &[Cwd], home: Option<&str>, project: &Cwd) -> bool {
    let Cwd::Abs(pp) = project else {
        return false;
    };
    !pp.is_empty()
        && cwd_candidates(cwds)
            .iter()
            .all(|c| matches!(resolve(c, p, home), Cwd::Abs(parts) if parts.starts_with(pp)))
}

/// Shell start-up files (relative to a home directory): the one list resolution also keeps
/// read-only inside a writable root ([`cordon_policy::login_files::SHELL_RC_FILES`]).
const RC_FILES: &[&str] = cordon_policy::login_files::SHELL_RC_FILES;

/// True when a write to `p` would modify a shell start-up file.
pub(crate) fn is_rc_file(p: &str, cwds: &[Cwd], home: Option<&str>) -> bool {
    let rest_is_rc = |rest: &[String]| RC_FILES.contains(&rest.join("/").as_str());
    let check = |loc: &Cwd| match loc {
        Cwd::Home(parts) => rest_is_rc(parts),
        Cwd::Abs(parts) => {
            if let Some(h) = home {
                let hp = split_abs(h);
                if parts.len() > hp.len()
                    && parts[..hp.len()] == hp[..]
                    && rest_is_rc(&parts[hp.len()..])
                {
                    return true;
                }
            }
            (parts.first().is_some_and(|r| r == "root") && rest_is_rc(&parts[1..]))
                || (parts.len() > 2
                    && (parts[0] == "home" || parts[0] == "Users")
                    && rest_is_rc(&parts[2..]))
        }
        _ => false,
    };
    cwd_candidates(cwds)
        .iter()
        .any(|c| check(&resolve(c, p, home)))
}

/// Why writing to the absolute path `p` is dangerous (system file or device), if it is.
fn dangerous_write_target(p: &str, cwds: &[Cwd], home: Option<&str>) -> Option<Finding> {
    if crate::model::is_harmless_device(p) || p == "/dev/zero" {
        return None;
    }
    // A repository's config written directly (`echo '[core] hooksPath = x' >>
    // .git/config`, `cp x .git/config`): what it sets is used by a later git command of
    // the same run unchecked, as a `git config` of a command key would be (fresh pass
    // 189 #10).
    // As the shell resolves it (`./.git//config`, `.git/./config`, a glob `.git/conf?g`,
    // `cd .git && … > config`: fresh pass 190 F2).
    let names_config = |v: &[String]| {
        v.len() >= 2 && names(&v[v.len() - 2], ".git") && names(&v[v.len() - 1], "config")
    };
    if cwd_candidates(cwds)
        .iter()
        .any(|c| match resolve(c, p, home) {
            Cwd::Abs(v) | Cwd::Rel(v) | Cwd::Home(v) => names_config(&v),
            Cwd::Unknown => false,
        })
    {
        return Some(finding(
            FindingId::GitAlias,
            Decision::Ask,
            format!(
                "writes {p} directly: a later git command of the same run uses what it sets \
                 (hooks, aliases, command keys) unchecked"
            ),
        ));
    }
    // `: > .git/HEAD`, `truncate -s0 .git/HEAD`, `cp /dev/null .git/index`: writing over a
    // file of the history loses it as deleting it would (attack pass 197 B7).
    let names_history = |v: &[String]| {
        v.iter().position(|c| names_git(c)).is_some_and(|g| {
            v.get(g + 1)
                .is_some_and(|f| GIT_HISTORY.contains(&f.as_str()))
        })
    };
    if cwd_candidates(cwds)
        .iter()
        .any(|c| match resolve(c, p, home) {
            Cwd::Abs(v) | Cwd::Rel(v) | Cwd::Home(v) => names_history(&v),
            Cwd::Unknown => false,
        })
    {
        return Some(finding(
            FindingId::RmProject,
            Decision::Ask,
            format!("writes over {p}, a file of a repository's history: it may be lost"),
        ));
    }
    if is_rc_file(p, cwds, home) {
        return Some(finding(
            FindingId::ShellRcWrite,
            Decision::Forbid,
            format!("writes shell start-up file {p}"),
        ));
    }
    if !p.starts_with('/') {
        return None;
    }
    let parts = split_abs(p);
    let root = parts.first().map(String::as_str).unwrap_or("");
    // /dev/shm and /dev/mqueue are file systems (shared memory, message queues), not
    // devices: a file written there is an ordinary temporary file.
    let fs_under_dev =
        matches!(parts.get(1).map(String::as_str), Some("shm" | "mqueue")) && parts.len() > 2;
    if root == "dev" && !fs_under_dev {
        return Some(finding(
            FindingId::DeviceWrite,
            Decision::Forbid,
            format!("writes device {p}"),
        ));
    }
    if SYSTEM_ALL.contains(&root) && !fs_under_dev {
        return Some(finding(
            FindingId::SystemFileWrite,
            Decision::Forbid,
            format!("writes system path {p}"),
        ));
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Option helpers
// ---------------------------------------------------------------------------------------------

/// A long option that makes a command unsafe (it writes a file or runs a program), matched
/// the way the tool itself reads its command line (R-A4).
///
/// getopt_long (GNU coreutils, findutils, sed, `file`, …), Python's optparse (pip) and git's
/// parse-options accept any unambiguous prefix of a long option: `sort --outp=F` is
/// `sort --output=F`, `git grep --op=CMD` is `git grep --open-files-in-pager=CMD`. So a word
/// `--NAME` or `--NAME=VALUE` denotes an abbreviable option when NAME is a non-empty prefix of
/// its full name. A prefix the tool finds ambiguous makes it fail before doing anything, so
/// counting it as the dangerous option is only conservative (the command then needs approval,
/// or a detector finding applies to a command that would not run anyway).
///
/// The one exception is the exact name of *another* option of the same tool that is also a
/// prefix of this one: an exact match wins over an abbreviation (`git diff --text` is
/// `--text`, not `--textconv`). Such names are listed with [`LongOption::except`], each with a
/// comment saying whose option it is.
///
/// Tools whose parsers take exact names only (ripgrep, fd, go's flag package, `find`'s
/// predicates, git's global options, rm's `--no-preserve-root`) use [`LongOption::exact`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LongOption {
    /// The full name, without the leading `--`.
    name: &'static str,
    /// Whether the tool accepts an unambiguous prefix of the name.
    abbreviable: bool,
    /// Exact names of other options of the tool that are prefixes of `name` (see above).
    exact_others: &'static [&'static str],
}

impl LongOption {
    /// An option the tool also accepts abbreviated (getopt_long, optparse, parse-options).
    pub(crate) const fn abbrev(name: &'static str) -> Self {
        LongOption {
            name,
            abbreviable: true,
            exact_others: &[],
        }
    }

    /// An option the tool recognises by its exact name only.
    pub(crate) const fn exact(name: &'static str) -> Self {
        LongOption {
            name,
            abbreviable: false,
            exact_others: &[],
        }
    }

    /// The same option, except that the exact names `others` (real options of the same tool
    /// that are prefixes of this one's name) denote themselves, not this option.
    pub(crate) const fn except(self, others: &'static [&'static str]) -> Self {
        LongOption {
            exact_others: others,
            ..self
        }
    }

    /// The full name, without the leading `--`.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the word `arg` (`--outp=/x`, `--output`, …) denotes this option.
    pub(crate) fn matches(&self, arg: &str) -> bool {
        arg.strip_prefix("--")
            .is_some_and(|body| self.matches_body(body))
    }

    /// Whether a long option written without its leading `--` (`outp=/x`, as [`split_args`]
    /// collects them) denotes this option.
    pub(crate) fn matches_body(&self, body: &str) -> bool {
        let given = body.split_once('=').map_or(body, |(n, _)| n);
        if given.is_empty() {
            return false; // `--` ends the options; `--=x` is no option
        }
        if self.abbreviable {
            self.name.starts_with(given) && !self.exact_others.contains(&given)
        } else {
            given == self.name
        }
    }
}

/// Whether any of the words `args` denotes one of `options` (see [`LongOption`]).
pub(crate) fn any_long_option<S: AsRef<str>>(args: &[S], options: &[LongOption]) -> bool {
    args.iter()
        .any(|a| options.iter().any(|o| o.matches(a.as_ref())))
}

/// Split args into (short flag letters, long flags, operands), honouring `--`.
struct Args<'a> {
    short: String,
    long: Vec<&'a str>,
    operands: Vec<(usize, &'a str)>,
}

impl Args<'_> {
    /// Whether one of the long options given denotes one of `options` (see [`LongOption`]).
    fn has_long(&self, options: &[LongOption]) -> bool {
        self.long
            .iter()
            .any(|l| options.iter().any(|o| o.matches_body(l)))
    }
}

/// [`split_args_with`] for tools without short options taking an optional value.
fn split_args<'a>(seg: &'a Segment, takes_value: &str) -> Args<'a> {
    split_args_with(seg, takes_value, "")
}

/// Split a segment's arguments the way getopt does: the short options in `takes_value` take
/// the rest of their cluster or else the next word; those in `optional_value` take the rest of
/// their cluster only (`date -Iseconds`), never the next word.
fn split_args_with<'a>(seg: &'a Segment, takes_value: &str, optional_value: &str) -> Args<'a> {
    let mut a = Args {
        short: String::new(),
        long: Vec::new(),
        operands: Vec::new(),
    };
    let mut i = 1;
    let mut opts_done = false;
    while i < seg.argv.len() {
        let t = seg.argv[i].as_str();
        if opts_done || !seg.is_static(i) || !t.starts_with('-') || t == "-" {
            a.operands.push((i, t));
        } else if t == "--" {
            opts_done = true;
        } else if let Some(l) = t.strip_prefix("--") {
            a.long.push(l);
        } else {
            let body = &t[1..];
            for (k, c) in body.char_indices() {
                a.short.push(c);
                if optional_value.contains(c) {
                    break; // the rest of the cluster, if any, is its value
                }
                if takes_value.contains(c) {
                    if k + c.len_utf8() == body.len() {
                        i += 1; // value is the next word
                    }
                    break;
                }
            }
        }
        i += 1;
    }
    a
}

// ---------------------------------------------------------------------------------------------
// Known-safe list
// ---------------------------------------------------------------------------------------------

/// Programs that only read, whatever their arguments.
const SAFE_ANY_ARGS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "which",
    "whereis",
    "type",
    "whoami",
    "id",
    "groups",
    "uname",
    "stat",
    "du",
    "df",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "tr",
    "cut",
    "nl",
    "rev",
    "tac",
    "seq",
    "diff",
    "cmp",
    "comm",
    "column",
    "expand",
    "unexpand",
    "fold",
    "fmt",
    "paste",
    "od",
    "hexdump",
    "strings",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "grep",
    "egrep",
    "fgrep",
    "test",
    "[",
    "[[",
    "jq",
    "nproc",
    "arch",
    "uptime",
    "locale",
    "tty",
    "sleep",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "set",
    "shopt",
    "wait",
    "exit",
    "return",
    "printenv",
];

/// If the segment is a known-safe read-only command, the reason.
///
/// The caller separately refuses file-writing redirections and sensitive environment
/// variables; this function looks at the program and its arguments only.
// Longer than most: one short arm per program of the known-safe list, kept in one place so
// the list reads as a table.
pub(crate) fn known_safe(seg: &Segment) -> Option<String> {
    // `npx ls` may run a package named `ls` (attack pass 200 P2).
    if !seg.program.is_trusted_name()
        || seg
            .wrappers
            .iter()
            .any(|w| wrappers::PACKAGE_RUNNERS.contains(&w.name.as_str()))
    {
        return None;
    }
    let name = seg.program.name.as_str();
    let all_static = seg.dynamic_args.is_empty() && !seg.runtime_args;
    let args = &seg.argv[1..];
    let has = |xs: &[&str]| args.iter().any(|a| xs.contains(&a.as_str()));
    if let Some(ok) = toolchains::read_only(name, args) {
        return (ok && all_static).then(|| format!("known-safe read-only command `{name}`"));
    }
    let ok = match name {
        // `-v NAME` / `[[ X -eq Y ]]` can evaluate `a[$(cmd)]` (see `runs_arithmetic`).
        // `printf -v PATH …` assigns a variable: never a sensitive one.
        "test" | "[" | "[[" | "printf" => {
            let sensitive_v = name == "printf"
                && seg
                    .argv
                    .windows(2)
                    .any(|w| w[0] == "-v" && variables::is_sensitive_var(&w[1]));
            !runs_arithmetic(&seg.argv, name == "[[") && !sensitive_v
        }
        // `printenv` may print secrets but has no side effects; still read-only.
        n if SAFE_ANY_ARGS.contains(&n) => true,
        "hostname" => args.is_empty(),
        // `-s`/`--set` (also `-s2020…`, `-us …`, `--se=…`) and an `MMDDhhmm` operand set
        // the clock; `-I` takes only an attached value (`-Iseconds` is no `-s`).
        "date" => {
            let a = split_args_with(seg, "dfrs", "I");
            all_static
                && !a.short.contains('s')
                && !a.has_long(DATE_UNSAFE)
                && !a
                    .operands
                    .iter()
                    .any(|(_, o)| o.bytes().all(|b| b.is_ascii_digit()) && !o.is_empty())
        }
        "file" => {
            let a = split_args(seg, "eFfmP");
            all_static && !a.short.contains('C') && !a.has_long(FILE_UNSAFE)
        }
        "sort" => {
            let a = split_args(seg, "kSTtoy");
            all_static && !a.short.contains('o') && !a.has_long(SORT_UNSAFE)
        }
        "uniq" => {
            let a = split_args(seg, "fsw");
            all_static && a.operands.len() <= 1
        }
        // tree reads every letter of a cluster (`-ao FILE` is `-a -o FILE`) and takes option
        // values from the next word, so any short word with `o` (writes FILE) or `R` (writes
        // `00Tree.html` into every directory with `-H`) is refused.
        "tree" => {
            all_static
                && !args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(['o', 'R']))
                && !any_long_option(args, TREE_UNSAFE)
        }
        "rg" => {
            let a = split_args(seg, "ABCEMTdefgjmrtM");
            all_static && !a.short.contains('z') && !a.has_long(RG_UNSAFE)
        }
        "fd" | "fdfind" => {
            let a = split_args(seg, "deEtScj");
            all_static && !a.short.contains(['x', 'X']) && !a.has_long(FD_UNSAFE)
        }
        "find" => {
            all_static
                && !args.iter().any(|a| {
                    matches!(
                        a.as_str(),
                        "-exec"
                            | "-execdir"
                            | "-ok"
                            | "-okdir"
                            | "-delete"
                            | "-fprint"
                            | "-fprint0"
                            | "-fprintf"
                            | "-fls"
                    )
                })
        }
        "sed" => all_static && sed_safe(seg),
        "git" => all_static && git_safe(seg),
        "command" => has(&["-v", "-V"]),
        _ => false,
    };
    ok.then(|| format!("known-safe read-only command `{name}`"))
}

/// `date` options that set the clock (getopt_long: `--se=…` is `--set=…`).
const DATE_UNSAFE: &[LongOption] = &[LongOption::abbrev("set")];

/// `file --compile` writes `magic.mgc` (getopt_long: `--comp` works, verified with file 5.44).
const FILE_UNSAFE: &[LongOption] = &[LongOption::abbrev("compile")];

/// `sort` options that write a file or run a program (getopt_long: `--outp=F`,
/// `--compress-prog=CMD` work, verified with coreutils 9.1).
const SORT_UNSAFE: &[LongOption] = &[
    LongOption::abbrev("output"),
    LongOption::abbrev("compress-program"),
];

/// `tree`'s own parser compares long options by their exact names.
const TREE_UNSAFE: &[LongOption] = &[LongOption::exact("output")];

/// ripgrep looks long flags up by exact name (its own parser on lexopt, no abbreviations).
/// `--pre CMD` runs CMD per file, `--search-zip` runs decompressors, `--hostname-bin CMD`
/// runs CMD; `--pre-glob` only narrows `--pre` (which a config file may also give) and stays
/// refused as before.
const RG_UNSAFE: &[LongOption] = &[
    LongOption::exact("pre"),
    LongOption::exact("pre-glob"),
    LongOption::exact("search-zip"),
    LongOption::exact("hostname-bin"),
];

/// fd (clap without `infer_long_args`) takes exact names: `--exec`/`--exec-batch` run commands.
const FD_UNSAFE: &[LongOption] = &[LongOption::exact("exec"), LongOption::exact("exec-batch")];

/// GNU sed options that write files or read a script from a file (getopt_long: `--in=.bak`
/// and `--i` edit in place, verified with sed 4.9).
const SED_UNSAFE: &[LongOption] = &[LongOption::abbrev("in-place"), LongOption::abbrev("file")];

fn sed_safe(seg: &Segment) -> bool {
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands = Vec::new();
    let mut i = 1;
    let argv = &seg.argv;
    while i < argv.len() {
        let t = argv[i].as_str();
        if t == "--" {
            operands.extend(argv[i + 1..].iter().map(String::as_str));
            break;
        }
        if t.starts_with("--") {
            // The allow-list below takes exact names only, so an abbreviation of any option
            // is refused too; `SED_UNSAFE` names the ones that must never pass.
            if any_long_option(&[t], SED_UNSAFE) {
                return false;
            }
            if let Some(v) = t.strip_prefix("--expression=") {
                scripts.push(v);
            } else if t == "--expression" {
                match argv.get(i + 1) {
                    Some(v) => scripts.push(v),
                    None => return false,
                }
                i += 1;
            } else if t == "--line-length" {
                i += 1;
            } else if !matches!(
                t,
                "--quiet"
                    | "--silent"
                    | "--regexp-extended"
                    | "--separate"
                    | "--unbuffered"
                    | "--null-data"
                    | "--posix"
                    | "--debug"
                    | "--sandbox"
            ) && !t.starts_with("--line-length=")
            {
                return false;
            }
        } else if t.len() > 1 && t.starts_with('-') {
            let body: Vec<char> = t[1..].chars().collect();
            for (k, c) in body.iter().enumerate() {
                match c {
                    'n' | 'E' | 'r' | 's' | 'u' | 'z' => {}
                    'e' | 'l' => {
                        let rest: String = body[k + 1..].iter().collect();
                        let v = if rest.is_empty() {
                            i += 1;
                            match argv.get(i) {
                                Some(v) => v.as_str(),
                                None => return false,
                            }
                        } else {
                            // attached value
                            let off = t.len() - rest.len();
                            &t[off..]
                        };
                        if *c == 'e' {
                            scripts.push(v);
                        }
                        break;
                    }
                    _ => return false, // -i, -f and unknown options
                }
            }
        } else {
            operands.push(t);
        }
        i += 1;
    }
    if scripts.is_empty() {
        if operands.is_empty() {
            return false;
        }
        scripts.push(operands.remove(0));
    }
    scripts.iter().all(|s| sed_script_safe(s))
}

/// Accept only sed scripts made of print/select/substitute commands without `w`/`e`
/// (and no `r`, `R`, `W`, `e`, `a`, `i`, `c`, branches or labels).
// Longer than most: a small recursive-descent reader of sed's script syntax (addresses,
// commands, delimited arguments); its closures share the cursor, so it stays one function.
pub(crate) fn sed_script_safe(s: &str) -> bool {
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let n = b.len();
    let skip_ws = |i: &mut usize| {
        while *i < n && (b[*i] == ' ' || b[*i] == '\t') {
            *i += 1;
        }
    };
    // Parse a delimited part starting after the delimiter; returns index after closing delim.
    let delimited = |mut i: usize, d: char| -> Option<usize> {
        while i < n {
            if b[i] == '\\' {
                i += 2;
                continue;
            }
            if b[i] == d {
                return Some(i + 1);
            }
            if b[i] == '\n' {
                return None;
            }
            i += 1;
        }
        None
    };
    let addr = |i: &mut usize| -> Option<()> {
        if *i >= n {
            return Some(());
        }
        match b[*i] {
            '0'..='9' => {
                while *i < n && b[*i].is_ascii_digit() {
                    *i += 1;
                }
                if *i < n && b[*i] == '~' {
                    *i += 1;
                    while *i < n && b[*i].is_ascii_digit() {
                        *i += 1;
                    }
                }
            }
            '$' => *i += 1,
            '/' => {
                *i = delimited(*i + 1, '/')?;
                while *i < n && (b[*i] == 'I' || b[*i] == 'M') {
                    *i += 1;
                }
            }
            '\\' => {
                let d = *b.get(*i + 1)?;
                if d == '\n' || d == '\\' {
                    return None;
                }
                *i = delimited(*i + 2, d)?;
            }
            _ => {}
        }
        Some(())
    };
    loop {
        while i < n && matches!(b[i], ' ' | '\t' | '\n' | ';') {
            i += 1;
        }
        if i >= n {
            return true;
        }
        if addr(&mut i).is_none() {
            return false;
        }
        if i < n && b[i] == ',' {
            i += 1;
            if i < n && (b[i] == '+' || b[i] == '~') {
                i += 1;
                while i < n && b[i].is_ascii_digit() {
                    i += 1;
                }
            } else if addr(&mut i).is_none() {
                return false;
            }
        }
        skip_ws(&mut i);
        if i < n && b[i] == '!' {
            i += 1;
            skip_ws(&mut i);
        }
        if i >= n {
            return false;
        }
        let c = b[i];
        i += 1;
        match c {
            '{' => continue, // a block: its first command follows directly
            'p' | 'P' | '=' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'z' | '}' => {}
            'q' | 'Q' | 'l' => {
                skip_ws(&mut i);
                while i < n && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            's' | 'y' => {
                let Some(&d) = b.get(i) else { return false };
                if d == '\\' || d == '\n' || d == ' ' {
                    return false;
                }
                let Some(j) = delimited(i + 1, d) else {
                    return false;
                };
                let Some(k) = delimited(j, d) else {
                    return false;
                };
                i = k;
                if c == 's' {
                    while i < n && matches!(b[i], 'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9') {
                        i += 1;
                    }
                }
            }
            _ => return false,
        }
        skip_ws(&mut i);
        if i < n && !matches!(b[i], ';' | '\n' | '}') {
            return false;
        }
    }
}

/// Git global options that take a value (the next word when not attached). git.c compares
/// global options by their exact names (`git --git-d=x log` and `git --exec-pa=x log` are
/// "unknown option"; verified with git 2.47), so these are matched exactly.
/// `--attr-source TREE` is here so that `git --attr-source diff push --force` is seen as the
/// `push` it runs, not as a `diff`.
const GIT_GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--attr-source",
];

/// Git global options (exact names, see above) that neither take a value nor change what the
/// subcommand reads or runs. Any other word before the subcommand makes it not known-safe.
const GIT_GLOBAL_HARMLESS: &[&str] = &[
    "-P",
    "--no-pager",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-optional-locks",
    "--no-advice",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--bare",
];

/// Long options after a git subcommand that make it write a file or run a program. git's
/// parse-options accepts unambiguous prefixes wherever it parses without keeping unknown
/// options: `git grep --op=CMD` runs CMD (verified with git 2.47), `git cat-file --filt` runs
/// the filters, `git range-diff` abbreviates too. (`git diff`/`log` pass diff options to
/// parse-options keeping unknown ones, which turns abbreviation off: `git diff --outp=F` is
/// refused by git 2.47. Counting abbreviations everywhere is the conservative choice.)
const GIT_UNSAFE_LONG: &[LongOption] = &[
    // diff family (`diff`, `log`, `show`, `range-diff`, …): writes the output to a file.
    // `--output-indicator-new=C` and friends are longer names, not prefixes: they pass.
    LongOption::abbrev("output"),
    // Runs the external diff driver from the configuration.
    LongOption::abbrev("ext-diff"),
    // Runs textconv filters. `--text` (`-a`, diff and grep) is an option of its own: an exact
    // name wins over the abbreviation, so `git diff --text` stays known-safe.
    LongOption::abbrev("textconv").except(&["text"]),
    // grep: opens the matching files in the pager given as its value (runs it).
    LongOption::abbrev("open-files-in-pager"),
    // A global option; meaningless after a subcommand, refused there as it always was.
    LongOption::abbrev("exec-path"),
];

/// `git cat-file --filters` runs the clean/smudge filters. In git 2.47 `--filter` is an
/// abbreviation of it (newer gits have an object `--filter=SPEC` of that exact name, which is
/// refused too: conservative), so no exact-name exception here.
const GIT_CAT_FILE_UNSAFE: &[LongOption] = &[LongOption::abbrev("filters")];

/// For a `git` segment (any spelling), the argv index of its subcommand.
pub(crate) fn git_subcommand_index(seg: &Segment) -> Option<usize> {
    if danger_name(seg).as_deref() != Some("git") {
        return None;
    }
    git_subcommand(seg).0
}

/// Locate the git subcommand: (index, unsafe global option seen).
fn git_subcommand(seg: &Segment) -> (Option<usize>, bool) {
    let mut i = 1;
    let mut risky = false;
    while i < seg.argv.len() {
        let t = seg.argv[i].as_str();
        if !t.starts_with('-') {
            return (Some(i), risky);
        }
        if GIT_GLOBAL_WITH_VALUE.contains(&t) {
            risky = true;
            i += 2;
            continue;
        }
        // `--exec-path[=DIR]`, `--git-dir=…`, `-p`/`--paginate`, attached `-cX`/`-CX`, and
        // anything git.c would not take as a harmless flag.
        if !GIT_GLOBAL_HARMLESS.contains(&t) {
            risky = true;
        }
        i += 1;
    }
    (None, risky)
}

fn git_safe(seg: &Segment) -> bool {
    let (Some(sub), risky) = git_subcommand(seg) else {
        // `git --version` (and nothing else) is the only subcommand-less read.
        return matches!(&seg.argv[1..], [v] if v == "--version");
    };
    if risky {
        return false;
    }
    let args: Vec<&str> = seg.argv[sub + 1..].iter().map(String::as_str).collect();
    if any_long_option(&args, GIT_UNSAFE_LONG) {
        return false;
    }
    match seg.argv[sub].as_str() {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "ls-tree" | "blame"
        | "describe" | "merge-base" | "show-ref" | "shortlog" | "whatchanged" | "for-each-ref"
        | "name-rev" | "rev-list" | "count-objects" | "var" | "check-ignore" | "check-attr"
        | "diff-tree" | "diff-files" | "diff-index" | "cherry" | "range-diff" | "version" => true,
        "cat-file" => !any_long_option(&args, GIT_CAT_FILE_UNSAFE),
        // A dry run only lists what it would remove (nu21 K8); not the interactive menu.
        "clean" => {
            git_clean_dry_run(&args)
                && !args.iter().any(|a| {
                    a.starts_with("--i")
                        || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('i'))
                })
        }
        // `git stash` alone stashes; `list`/`show` only read.
        "stash" => matches!(args.first(), Some(&("list" | "show"))),
        "reflog" => args.is_empty() || args.first() == Some(&"show"),
        "worktree" => args.first() == Some(&"list"),
        "notes" => args.is_empty() || matches!(args.first(), Some(&("list" | "show"))),
        "config" => git_config_reads(&args),
        "tag" => git_tag_lists(&args),
        "grep" => !args.iter().any(|a| {
            a.starts_with("-O") || (a.starts_with('-') && !a.starts_with("--") && a.contains('O'))
        }),
        "branch" => git_branch_lists(&args),
        "remote" => {
            args.is_empty()
                || args.iter().all(|a| *a == "-v" || *a == "--verbose")
                || (args.first() == Some(&"get-url") && args.len() == 2)
        }
        _ => false,
    }
}

/// `git tag` listing (no arguments, or `-l`/`--list` with patterns and listing options).
fn git_tag_lists(args: &[&str]) -> bool {
    let listing = args.is_empty() || args.iter().any(|a| *a == "-l" || *a == "--list");
    listing
        && args.iter().all(|a| {
            matches!(*a, "-l" | "--list" | "--column" | "--no-column" | "-i")
                || a.starts_with("-n")
                || a.starts_with("--sort=")
                || a.starts_with("--format=")
                || a.starts_with("--contains")
                || a.starts_with("--no-contains")
                || a.starts_with("--merged")
                || a.starts_with("--no-merged")
                || a.starts_with("--points-at")
                || a.starts_with("--color")
                || !a.starts_with('-')
        })
}

/// `git branch` listing (no names to create, delete, move or copy).
fn git_branch_lists(args: &[&str]) -> bool {
    const OK: &[&str] = &[
        "-a",
        "--all",
        "-r",
        "--remotes",
        "-v",
        "-vv",
        "--verbose",
        "--list",
        "-l",
        "--show-current",
        "--color",
        "--no-color",
        "--column",
        "--no-column",
        "-q",
        "--quiet",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
    ];
    let listing = args.iter().any(|a| *a == "--list" || *a == "-l");
    args.iter().all(|a| {
        OK.contains(a)
            || a.starts_with("--sort=")
            || a.starts_with("--format=")
            || a.starts_with("--color=")
            || a.starts_with("--contains=")
            || a.starts_with("--merged=")
            || (listing && !a.starts_with('-'))
    })
}

/// `git config` reading a value or listing: the `get`/`list` subcommands (first word, git
/// 2.46+) or a `--get*`/`--list` action, and otherwise only the reading options below.
///
/// Options are compared by exact name: git's parse-options would also take abbreviations
/// (`--replace-a` is `--replace-all`), so any option outside these lists is refused. Without
/// an action, `git config NAME VALUE` sets NAME even when VALUE is the word `list` or `get`,
/// so an action (or the subcommand) is required.
fn git_config_reads(args: &[&str]) -> bool {
    const ACTIONS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "-l",
    ];
    const FLAGS: &[&str] = &[
        "--global",
        "--system",
        "--local",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "-z",
        "--null",
        "--includes",
        "--no-includes",
        "--bool",
        "--int",
        "--bool-or-int",
        "--path",
        "--expiry-date",
        "--all",
        "--regexp",
        "--fixed-value",
    ];
    const WITH_VALUE: &[&str] = &[
        "--file",
        "-f",
        "--blob",
        "--type",
        "--default",
        "--value",
        "--url",
    ];
    let subcommand = matches!(args.first(), Some(&("get" | "list")));
    let mut action = false;
    let mut i = usize::from(subcommand);
    while i < args.len() {
        let a = args[i];
        if ACTIONS.contains(&a) {
            action = true;
        } else if WITH_VALUE.contains(&a) {
            i += 1; // its value is the next word
        } else if a.starts_with('-')
            && !FLAGS.contains(&a)
            && !a
                .split_once('=')
                .is_some_and(|(n, _)| WITH_VALUE.contains(&n) && n.starts_with("--"))
        {
            return false;
        }
        i += 1;
    }
    subcommand || action
}

// ---------------------------------------------------------------------------------------------
// Dangerous-command detector
// ---------------------------------------------------------------------------------------------

const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "aria2c", "http", "https", "xh"];

fn is_downloader(seg: &Segment) -> bool {
    danger_name(seg).is_some_and(|n| DOWNLOADERS.contains(&n.as_ref()))
}

fn world_writable_mode(m: &str) -> bool {
    if !m.is_empty() && m.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        let last = m.as_bytes()[m.len() - 1] - b'0';
        return last & 0o2 != 0;
    }
    // Symbolic: any clause giving w to o or a (or no who = all).
    m.split(',').any(|clause| {
        let who_end = clause.find(['+', '=']).unwrap_or(clause.len());
        let (who, rest) = clause.split_at(who_end);
        let grants_w = rest.starts_with(['+', '=']) && rest.contains('w');
        grants_w && (who.is_empty() || who.contains('o') || who.contains('a'))
    })
}

/// Everything the detector needs beyond the segment itself.
pub(crate) struct DangerCtx<'a> {
    pub segments: &'a [Segment],
    pub cwds: &'a [Cwd],
    pub home: Option<&'a str>,
    /// The user's git aliases ([`crate::EvalContext::git_aliases`]).
    pub git_aliases: &'a std::collections::BTreeMap<String, String>,
    /// Expansions of git aliases left for this evaluation ([`GIT_ALIAS_BUDGET`]).
    pub alias_budget: &'a std::cell::Cell<u32>,
    /// Whether this segment may run in another directory than the one `git_aliases` were
    /// read for (`cd DIR &&`, `env -C DIR`): another repository's aliases are unknown.
    pub moved: bool,
    /// Where the script starts: the project a delete must not take ([`project_target`]).
    pub start: &'a Cwd,
    /// Symbolic links made by earlier segments ([`symlinks_made`]).
    pub links: &'a [Link],
    /// The script's stand-alone assignments of what git reads from the environment
    /// ([`git_environment`]: `export GIT_CONFIG_PARAMETERS=…; git gc`), anywhere in it.
    pub git_env: &'a [crate::model::EnvAssignment],
}

impl DangerCtx<'_> {
    /// [`project_target`] of `p` in this segment's context (its cwds, home, start and the
    /// links made before it).
    fn project_target(&self, p: &str, recursive: bool) -> Option<String> {
        project_target(p, self.cwds, self.home, self.start, self.links, recursive)
    }

    /// The `rm_project` ask for the first of `targets` that is the project, a directory
    /// holding it or its history ([`project_target`], recursive), worded by `what` from
    /// what it names; `None` when none is.
    fn first_project_target<'t>(
        &self,
        targets: impl IntoIterator<Item = &'t str>,
        what: impl Fn(&str) -> String,
    ) -> Option<Finding> {
        targets
            .into_iter()
            .find_map(|t| self.project_target(t, true))
            .map(|why| finding(FindingId::RmProject, Decision::Ask, what(&why)))
    }
}

/// Most git alias expansions one command's evaluation makes: beyond, the alias is asked
/// about unchecked (attack pass 59: a chain of 5000 aliases overflowed the stack, and
/// `b0 = !git b1; git b1; git b1` twenty deep never finished).
pub(crate) const GIT_ALIAS_BUDGET: u32 = 64;

/// Run the dangerous-command detector on segment `idx`: writes by redirection, privilege
/// wrappers, disk-destroying tools, then the program's own checks, fork bombs and
/// downloads fed to an interpreter.
pub(crate) fn dangerous(idx: usize, cx: &DangerCtx<'_>) -> Vec<Finding> {
    let seg = &cx.segments[idx];
    let mut out = Vec::new();
    redirect_writes(seg, cx, &mut out);
    for w in &seg.wrappers {
        // `setpriv` only when it changes the user or group (`--no-new-privs` drops
        // privileges: fresh pass 190, a false positive).
        let changes_ids = w.name != "setpriv"
            || w.argv.iter().any(|a| {
                [
                    "--reuid",
                    "--regid",
                    "--ruid",
                    "--rgid",
                    "--euid",
                    "--egid",
                    "--init-groups",
                    "--groups",
                ]
                .iter()
                .any(|o| a.starts_with(o))
            });
        if changes_ids
            && matches!(
                w.name.as_str(),
                "sudo" | "doas" | "runuser" | "setpriv" | "sg"
            )
        {
            out.push(finding(
                FindingId::PrivilegeEscalation,
                Decision::Ask,
                format!("runs with elevated privileges via {}", w.name),
            ));
        }
    }
    run_time_code::check(danger_name(seg).as_deref(), idx, cx.segments, &mut out);
    let Some(name) = danger_name(seg) else {
        dynamic_program_checks(seg, cx, &mut out);
        return out;
    };
    if disks::is_disk_tool(&name) {
        let disk_args: Vec<&str> = static_args(seg).collect();
        out.extend(disks::disk_overwrite(&name, &disk_args));
    }
    program_checks(&name, seg, cx, &mut out);
    if let Some(e) = brace_expanded(seg) {
        let mut more = Vec::new();
        program_checks(&name, &e, cx, &mut more);
        for f in more {
            if !out.iter().any(|o| o.id == f.id) {
                out.push(finding(
                    f.id,
                    f.decision,
                    format!("with its braces expanded: {}", f.reason),
                ));
            }
        }
    }
    code_from_run_time(&name, idx, cx, &mut out);
    fork_bomb(&name, seg, &mut out);
    download_to_interpreter(&name, idx, cx, &mut out);
    if !out.iter().any(|f| f.id == FindingId::DownloadToInterpreter) {
        piped_script(&name, idx, cx, &mut out);
    }
    out
}

/// Programs whose danger lies in arguments that the sandbox lets them act on (the
/// workspace's uncommitted work, its files): when a command's program name is known only at
/// run time (`g=git; $g reset --hard`, `$(echo rm) -rf src`), its arguments are checked as
/// each of these would read them.
const HIDDEN_NAME_CANDIDATES: &[&str] = &["git", "rm", "find"];

/// The checks of [`program_checks`] for a program named dynamically (attack pass 61): the
/// arguments are read as each of [`HIDDEN_NAME_CANDIDATES`] would read them, and what any of
/// them finds is asked about (never forbidden: the name may be anything).
fn dynamic_program_checks(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    if (1..seg.argv.len()).all(|i| !seg.is_static(i)) {
        out.push(finding(
            FindingId::DynamicCommand,
            Decision::Ask,
            format!(
                "the whole command is known only at run time ({}): what it runs is not checked",
                seg.argv.join(" ")
            ),
        ));
        return;
    }
    for name in HIDDEN_NAME_CANDIDATES {
        let mut found = Vec::new();
        program_checks(name, seg, cx, &mut found);
        for f in found {
            if out.iter().any(|o| o.id == f.id) {
                continue;
            }
            out.push(finding(
                f.id,
                Decision::Ask,
                format!(
                    "the program is named only at run time ({}); if it is {name}: {}",
                    seg.argv[0], f.reason
                ),
            ));
        }
    }
}

/// Whether a dynamic word's spelling expands a variable (`$x`, `"${x}"`, `$1`), not only
/// a command substitution (`"$(ssh-agent -s)"`, whose commands are segments of their own).
fn expands_variable(w: &str) -> bool {
    w.match_indices('$')
        .any(|(i, _)| !w[i + 1..].starts_with('(') && w.len() > i + 1)
}

/// Whether `s` writes text known only at run time: `echo "$x"`, `printf '%s' "$x"`.
fn echoes_run_time_text(s: &Segment) -> bool {
    s.program.is_trusted_name()
        && matches!(s.program.name.as_str(), "echo" | "printf")
        && !s.dynamic_args.is_empty()
}

/// Whether `word` (an `eval` argument as spelled) is only the substitution of a well-known
/// tool printing its shell set-up: `"$(ssh-agent -s)"`, `"$(pyenv init -)"`, `"$(direnv hook
/// bash)"`, … — text the tool writes, not the command line's.
fn prints_shell_setup(word: &str) -> bool {
    const SETUP: &[&str] = &[
        "ssh-agent -s",
        "ssh-agent",
        "pyenv init -",
        "pyenv init --path",
        "pyenv virtualenv-init -",
        "rbenv init -",
        "nodenv init -",
        "goenv init -",
        "direnv hook bash",
        "direnv hook zsh",
        "conda shell.bash hook",
        "mise activate bash",
        "zoxide init bash",
        "starship init bash",
        "fnm env",
        "brew shellenv",
        "/opt/homebrew/bin/brew shellenv",
        "opam env",
        "luarocks path",
        "dircolors",
        "dircolors -b",
        "keychain --eval",
    ];
    let inner = word.trim_matches('"');
    let Some(cmd) = inner
        .strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| inner.strip_prefix('`').and_then(|r| r.strip_suffix('`')))
    else {
        return false;
    };
    SETUP.contains(&cmd.trim())
}

/// Code a shell, `eval` or `source` runs that is known only at run time, as `$x` alone
/// is (`dynamic_command`): `eval "$x"`, `eval $x`; a shell or `source /dev/stdin` whose
/// input is a herestring or heredoc that expands something (`sh <<< "$x"`) or the output
/// of `echo "$x"` (on a pipe, or as the script `bash <(echo "$x")`). Static text is
/// parsed and checked instead; `eval "$(…)"` runs what visible commands print.
fn code_from_run_time(name: &str, idx: usize, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let seg = &cx.segments[idx];
    let shell = INTERPRETERS.contains(&name);
    let source = matches!(name, "source" | ".");
    let what = if name == "eval" {
        let hidden = seg
            .dynamic_args
            .iter()
            .any(|&i| i > 0 && seg.argv.get(i).is_some_and(|w| expands_variable(w)));
        // `eval "$(cat)"`: what the substitution prints is known only at run time (attack
        // pass 204, S1: it ran unasked while `eval "$x"` was asked), except the shell
        // set-up of a few well-known tools (`eval "$(pyenv init -)"`).
        let printed = seg.dynamic_args.iter().any(|&i| {
            i > 0
                && seg.argv.get(i).is_some_and(|w| {
                    (w.contains("$(") || w.contains('`')) && !prints_shell_setup(w)
                })
        });
        if hidden {
            Some("eval runs text held in a variable".to_string())
        } else if printed {
            Some("eval runs what a command prints, known only at run time".to_string())
        } else {
            None
        }
    } else if shell || source {
        let operands: Vec<(usize, &String)> = seg
            .argv
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, a)| !a.starts_with('-') && !a.starts_with('+'))
            .collect();
        let stdin_script = |a: &str| matches!(a, "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0");
        // What an interpreter runs is its input: no script operand (an option's argument,
        // `bash -o errexit`, is none), `-s`, `-` or `/dev/stdin`; what `source` runs, its
        // operand.
        let program = shell.then(|| shells::program_source(name, &seg.argv[1..]));
        let reads_input = match program {
            Some(p) => p == shells::ProgramSource::Stdin,
            None => operands.first().is_some_and(|(_, a)| stdin_script(a)),
        };
        let fed_dynamic = seg.redirections.iter().any(|r| {
            matches!(r.kind, RedirectKind::Heredoc | RedirectKind::Herestring) && r.text.is_none()
        });
        let piped_dynamic = fed_by(seg, cx).is_some_and(echoes_run_time_text);
        // `tee >(bash)`, `cmd > >(sh)`: a shell in an output process substitution runs what
        // the command around it writes, known only at run time.
        let output_substituted = seg.context.last() == Some(&Context::ProcessSubstitution)
            && seg
                .parent
                .and_then(|p| cx.segments.get(p))
                .is_some_and(|p| {
                    p.argv.iter().any(|a| a.starts_with(">("))
                        || p.redirections.iter().any(|r| r.target.starts_with(">("))
                });
        // `bash <(echo "$x")`: the script is a process substitution's output.
        let script_at = match program {
            Some(shells::ProgramSource::Operand(i)) => Some(i + 1),
            Some(_) => None,
            None => operands.first().map(|(i, _)| *i),
        };
        let substituted = script_at.is_some_and(|i| {
            seg.argv[i].starts_with("<(")
                && cx.segments.iter().any(|s| {
                    s.parent == Some(idx)
                        && s.context.last() == Some(&Context::ProcessSubstitution)
                        && echoes_run_time_text(s)
                })
        });
        // `CMD <<< "$CORDON_STDIN"`: the caller's stand-in for the command's own stdin.
        let own_stdin = seg.redirections.iter().any(crate::is_run_time_stdin);
        if reads_input && fed_dynamic && own_stdin {
            Some(format!(
                "{name} runs what it reads on its standard input (a pipe or a file), which \
                 is known only at run time"
            ))
        } else if reads_input && (fed_dynamic || piped_dynamic || output_substituted) {
            Some(format!(
                "{name} runs its input, which is known only at run time"
            ))
        } else if substituted {
            Some(format!(
                "{name} runs the output of `echo` of text known only at run time"
            ))
        } else {
            None
        }
    } else {
        None
    };
    if let Some(why) = what {
        if !out.iter().any(|f| f.id == FindingId::DynamicCommand) {
            out.push(finding(
                FindingId::DynamicCommand,
                Decision::Ask,
                format!("{why}: what it runs is not checked"),
            ));
        }
    }
}

/// The static arguments of a segment (dynamic words skipped).
fn static_args(seg: &Segment) -> impl Iterator<Item = &str> {
    seg.argv
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(i, _)| seg.is_static(*i))
        .map(|(_, a)| a.as_str())
}

/// The arguments of a segment whose path is known before it runs: the static ones, and a
/// dynamic one whose only expansion is a leading `$HOME` ([`home_spelled`], as `~/…`) —
/// `> $HOME/.bashrc` writes the same file as `> ~/.bashrc` (new-user pass 187 #4: the
/// `$HOME` spelling of every write check was skipped as dynamic).
fn known_args(seg: &Segment) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
    seg.argv
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, a)| known_path(seg.is_static(i), a))
}

/// `t` as a path known before the command runs: itself when static, its `~/…` form when its
/// only expansion is a leading `$HOME` ([`home_spelled`]), else `None`.
fn known_path(is_static: bool, t: &str) -> Option<std::borrow::Cow<'_, str>> {
    if is_static {
        Some(std::borrow::Cow::Borrowed(t))
    } else {
        home_spelled(t).map(std::borrow::Cow::Owned)
    }
}

/// Writes via redirection (any program) to system paths, devices or shell rc files.
fn redirect_writes(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    for r in &seg.redirections {
        if matches!(
            r.kind,
            RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite
        ) {
            let Some(t) = known_path(!r.dynamic, &r.target) else {
                continue;
            };
            if let Some(f) = dangerous_write_target(&t, cx.cwds, cx.home) {
                out.push(f);
            }
        }
    }
}

/// `echo .git | xargs mv -t /tmp`, `… | xargs rm`, `… | xargs shred -u`: a tool that
/// deletes, moves or overwrites the paths xargs appends — known only at run time, and
/// possibly the history — is asked about (attack pass 204, S2: only a recursive `rm` was).
/// `find -exec … {}` is judged by its tests instead ([`find_spares_history`]).
fn appended_paths_check(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    const DESTRUCTIVE: &[&str] = &[
        "rm",
        "mv",
        "unlink",
        "shred",
        "wipe",
        "srm",
        "trash-put",
        "trash",
        "gtrash",
        "rmtrash",
        "gio",
        "rename",
        "truncate",
        "cp",
        "install",
        "ln",
        "rsync",
    ];
    if !seg.runtime_args
        || !DESTRUCTIVE.contains(&name)
        || !seg.wrappers.iter().any(|w| w.name == "xargs")
        || out.iter().any(|f| f.id == FindingId::RmDynamicTarget)
    {
        return;
    }
    // `find . -name '*.o' | xargs rm -f`: the paths are what a find selects whose tests
    // spare the history.
    // `git ls-files … | xargs rm`: git lists work-tree files, never the history
    // ([`rm_of_listed_files`] judges what it deletes).
    let narrowed = fed_by(seg, cx).is_some_and(|f| {
        (f.program.name == "find"
            && f.dynamic_args.is_empty()
            && find_spares_history(&f.argv[1..], cx, true))
            || git_sub_args(f).is_some_and(|(sub, _)| sub == "ls-files")
    });
    // `ls *.txt | xargs -I{} cp {} backup/`: a copying tool whose destination is written
    // on the line, with xargs putting the paths in place of `{}` only: it reads them.
    let replaces = seg.wrappers.iter().filter(|w| w.name == "xargs").any(|w| {
        w.argv
            .iter()
            .any(|a| a.starts_with("-I") || a.starts_with("-i") || a.starts_with("--replace"))
    });
    let last = seg.argv.len() - 1;
    let copies_to_static = matches!(name, "cp" | "install" | "ln" | "rsync")
        && replaces
        && last > 0
        && seg.is_static(last)
        && !seg.argv[last].contains("{}");
    if narrowed || copies_to_static {
        return;
    }
    out.push(finding(
        FindingId::RmDynamicTarget,
        Decision::Ask,
        format!(
            "{name} acts on paths xargs supplies at run time (they may name the repository's \
             .git, its history)"
        ),
    ));
}

/// The checks that depend on what the program is.
fn program_checks(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let args = &seg.argv[1..];
    languages::checks(name, seg, cx, out);
    appended_paths_check(name, seg, cx, out);
    match name {
        "sudo" | "doas" | "su" | "pkexec" | "run0" => out.push(finding(
            FindingId::PrivilegeEscalation,
            Decision::Ask,
            format!("privilege escalation via {name}"),
        )),
        "rm" => {
            rm_check(seg, cx, out);
            rm_of_listed_files(seg, cx, out);
        }
        "find" if args.iter().any(|a| a == "-delete") => find_delete_check(seg, cx, out),
        // `git-reset --hard`, `/usr/lib/git-core/git-reset --hard`: git's dashed programs
        // are its subcommands (attack pass 193 F6).
        n if n.len() > 4 && n.starts_with("git-") => {
            let mut argv = vec!["git".to_string(), n[4..].to_string()];
            argv.extend(args.iter().cloned());
            let shift = |v: &[usize]| v.iter().filter(|&&i| i > 0).map(|i| i + 1).collect();
            let as_git = Segment {
                argv,
                dynamic_args: shift(&seg.dynamic_args),
                glob_args: shift(&seg.glob_args),
                ..seg.clone()
            };
            program_checks("git", &as_git, cx, out);
        }
        "git" => {
            git_option_globs(seg, out);
            git_check(seg, cx, out);
            if git_subcommand_index(seg).is_some_and(|s| seg.argv[s] == "apply") {
                reverse_diff_applied(seg, cx, out);
            }
        }
        "dd" => dd_check(seg, cx, out),
        "chmod" | "chown" | "chgrp" => mode_check(name, seg, cx, out),
        "shutdown" | "reboot" | "halt" | "poweroff" => out.push(finding(
            FindingId::PowerState,
            Decision::Forbid,
            format!("{name} changes the machine's power state"),
        )),
        // `bash -c "$CMD"`, `xargs -I{} sh -c {}`: the command line is known only at run
        // time (attack pass 63), as `$x` alone is.
        s if shells::SHELLS.contains(&s) => {
            let c_at = seg.argv.iter().enumerate().skip(1).find_map(|(i, a)| {
                (seg.is_static(i)
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..].contains('c'))
                .then_some(i)
            });
            // The line is a run-time word, find's or xargs' `{}`, or what xargs appends.
            if let Some(i) = c_at.filter(|&i| match seg.argv.get(i + 1) {
                Some(line) => !seg.is_static(i + 1) || line == "{}",
                None => seg.runtime_args,
            }) {
                out.push(finding(
                    FindingId::DynamicCommand,
                    Decision::Ask,
                    format!(
                        "{name} -c runs a command line known only at run time ({}): what it \
                         runs is not checked",
                        seg.argv.get(i + 1).map_or("its input", String::as_str)
                    ),
                ));
            }
        }
        // `tar -cf /dev/null . --remove-files` deletes what it archived (nu65).
        // getopt_long abbreviations count (`--remove-f`: attack pass 197 B7).
        "tar" if any_long_option(args, &[LongOption::abbrev("remove-files")]) => {
            out.extend(
                cx.first_project_target(static_args(seg).filter(|a| !a.starts_with('-')), |why| {
                    format!("tar --remove-files deletes {why}")
                }),
            );
        }
        "tar" => git_archive_extracted(seg, cx, out),
        "tee" => tee_check(seg, cx, out),
        // `git diff | patch -R -p1` reverts uncommitted changes (attack pass 63).
        "patch"
            if args.iter().any(|a| {
                LongOption::abbrev("reverse").matches(a)
                    || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('R'))
            }) =>
        {
            out.push(finding(
                FindingId::GitDiscardChanges,
                Decision::Ask,
                "patch -R undoes changes in the work tree",
            ))
        }
        "patch" => reverse_diff_applied(seg, cx, out),
        "sed" => sed_in_place_check(seg, cx, out),
        // `find . -name .git -exec mv {} /tmp \;` moves the history away (attack pass 193).
        "mv" | "trash-put" | "trash" | "gtrash" | "rmtrash" | "gio"
            if args.iter().any(|a| a == "{}") =>
        {
            let find = seg
                .wrappers
                .iter()
                .find(|w| w.name == "find -exec")
                .map(|w| &w.argv[1..w.argv.len().saturating_sub(1)]);
            if let Some(fargs) = find.filter(|f| !find_spares_history(f, cx, true)) {
                out.extend(cx.first_project_target(find_starts(fargs), |why| {
                    format!("find whose tests do not provably spare the history feeds {name} {why}")
                }));
            }
            if name == "mv" {
                copy_target_check(name, seg, cx, out);
            }
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "truncate" => {
            copy_target_check(name, seg, cx, out);
            if name == "rsync" {
                rsync_delete_check(seg, cx, out);
            }
        }
        // The other tools that delete, destroy or move away a file by name (attack pass
        // 188 F3: `unlink .git/HEAD`, `shred -u .git/index` and `rename .git .git2 .git`
        // lost the history unasked, while `rm .git/HEAD` and `mv .git x` were asked about).
        "unlink" | "shred" | "wipe" | "srm" => {
            // `find .git -exec unlink {} \;`: what `{}` names is what the find selects
            // (fresh pass 189 #7), as for rm.
            let find = seg
                .wrappers
                .iter()
                .find(|w| w.name == "find -exec")
                .map(|w| &w.argv[1..w.argv.len().saturating_sub(1)])
                .filter(|_| args.iter().any(|a| a == "{}"));
            if let Some(fargs) = find.filter(|f| !find_spares_history(f, cx, true)) {
                out.extend(cx.first_project_target(find_starts(fargs), |why| {
                    format!("find without a name test feeds {name} everything in {why}")
                }));
            }
            out.extend(
                static_args(seg)
                    .filter(|a| !a.starts_with('-'))
                    .find_map(|t| cx.project_target(t, false))
                    .map(|why| {
                        finding(
                            FindingId::RmProject,
                            Decision::Ask,
                            format!("{name} destroys {why}"),
                        )
                    }),
            );
        }
        // Archivers that delete what they archived, and the trash (fresh pass 189 #9).
        "zip"
            if args.iter().any(|a| {
                a == "--move" || (a.starts_with('-') && !a.starts_with("--") && a.contains('m'))
            }) =>
        {
            let ops: Vec<&str> = static_args(seg).filter(|a| !a.starts_with('-')).collect();
            out.extend(cx.first_project_target(ops.into_iter().skip(1), |why| {
                format!("zip -m deletes {why} once archived")
            }));
        }
        "7z" | "7za" | "7zr" | "7zz" if args.iter().any(|a| a == "-sdel") => {
            let ops: Vec<&str> = static_args(seg).filter(|a| !a.starts_with('-')).collect();
            out.extend(cx.first_project_target(ops.into_iter().skip(2), |why| {
                format!("{name} -sdel deletes {why} once archived")
            }));
        }
        "gio"
            if args
                .first()
                .is_some_and(|a| matches!(a.as_str(), "trash" | "remove" | "move" | "rename")) =>
        {
            out.extend(cx.first_project_target(
                static_args(seg).skip(1).filter(|a| !a.starts_with('-')),
                |why| format!("gio {} moves away {why}", args[0]),
            ));
        }
        "trash-put" | "trash" | "rmtrash" | "gtrash" | "kioclient" => {
            out.extend(
                cx.first_project_target(static_args(seg).filter(|a| !a.starts_with('-')), |why| {
                    format!("{name} moves away {why}")
                }),
            );
        }
        // Tools whose command line is built at run time or written in their own command
        // language: asked about, as a command known only at run time (fresh pass 190 F6,
        // F7: `parallel git ::: reset ::: --hard`, `gdb -batch -ex 'shell …'`, `expect -c
        // 'spawn …'`, `tmux send-keys …`, `screen -X stuff …`).
        "parallel"
            if args.iter().filter(|a| a.starts_with(":::")).count() > 1
                || args.iter().any(|a| {
                    a == "::::"
                        || a == "-a"
                        || a.starts_with("--arg")
                        || a.starts_with("--col")
                        || a.starts_with("--link")
                        || a == "-C"
                }) =>
        {
            out.push(finding(
                FindingId::DynamicCommand,
                Decision::Ask,
                "parallel builds the command lines it runs at run time: what it runs is not \
                 checked",
            ))
        }
        "gdb" | "lldb" | "expect" | "tmux" | "screen" => {
            let runs = match name {
                "gdb" => gdb_runs_code(args),
                "lldb" => lldb_runs_code(args),
                "expect" => args
                    .iter()
                    .any(|a| !a.starts_with('-') || a == "-c" || a == "-f"),
                "tmux" => args.iter().any(|a| {
                    matches!(
                        a.as_str(),
                        "send-keys"
                            | "send"
                            | "display-popup"
                            | "popup"
                            | "if-shell"
                            | "if"
                            | "pipe-pane"
                            | "pipep"
                            | "set-hook"
                            | "source-file"
                            | "source"
                    )
                }),
                _ => args.iter().any(|a| a == "-X"),
            };
            if runs {
                out.push(finding(
                    FindingId::DynamicCommand,
                    Decision::Ask,
                    format!(
                        "{name} runs commands written in its own command language: what it \
                         runs is not checked"
                    ),
                ));
            }
        }
        n if compiler_driver(n) => {
            if let Some(why) = compiler_runs_program(args) {
                out.push(finding(
                    FindingId::DynamicCommand,
                    Decision::Ask,
                    format!("{name} {why}: what it runs is not checked"),
                ));
            }
        }
        "rename" | "prename" | "file-rename" | "perl-rename" => {
            out.extend(
                cx.first_project_target(static_args(seg).filter(|a| !a.starts_with('-')), |why| {
                    format!("{name} moves away {why}")
                }),
            );
        }
        _ => {}
    }
}

/// Whether gdb's arguments run code of gdb's command language that reaches the host: a
/// command file (`-x`, `-ix`, `--command`, `--init-command`), or an `-ex`/`-iex`
/// (`--eval-command`, `--init-eval-command`, `=` attached, their abbreviations) whose text
/// has a word that abbreviates `shell`, `python`, `python-interactive`, `pipe`, `guile`,
/// `guile-repl`, `source`, `eval`, `alias` or `define`, or starts with `!` or `|`. Any
/// word, not only the first: `thread apply all shell …`, `with … -- python …` run the
/// command after them (attack pass C-A: `gdb -batch -ex 'python import os; …'`).
fn gdb_runs_code(args: &[String]) -> bool {
    const CODE: &[&str] = &[
        "shell",
        "python",
        "python-interactive",
        "pipe",
        "guile",
        "guile-repl",
        "source",
        "eval",
        "alias",
        "define",
    ];
    let code_word = |word: &str| {
        if word.starts_with(['!', '|']) {
            return true;
        }
        let head: String = word
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        matches!(head.as_str(), "pi" | "py" | "gr" | "gu" | "so" | "sh")
            || (head.len() >= 3 && CODE.iter().any(|c| c.starts_with(&head)))
    };
    // A gdb command line is judged by its command word: `info source` and `list pipe.c:10`
    // run nothing (review of attack pass C-A: any word asked). A command that runs another
    // command given after it (`thread apply all …`, `frame apply …`, `taas`, `faas`,
    // `tfaas`, `with SETTING -- …`, and their abbreviations `t`, `f`, `w`) has every word
    // judged; so has a line that calls gdb's `$_shell(…)` convenience function (gdb 13).
    let code = |text: &str| {
        let mut words = text.split_whitespace();
        let Some(first) = words.next() else {
            return false;
        };
        let runs_another = ["thread", "frame", "with", "taas", "faas", "tfaas"]
            .iter()
            .any(|p| p.starts_with(first))
            || matches!(first, "t" | "f" | "w");
        text.contains("$_shell")
            || code_word(first)
            || (runs_another && text.split_whitespace().any(code_word))
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let Some(body) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')) else {
            i += 1;
            continue;
        };
        let (opt, attached) = match body.split_once('=') {
            Some((o, v)) => (o, Some(v)),
            None => (body, None),
        };
        let abbrev = |full: &str, min: usize| opt.len() >= min && full.starts_with(opt);
        // `-P FILE`, `--python FILE` (gdb 13): runs a Python script.
        if matches!(opt, "x" | "ix" | "P")
            || abbrev("command", 3)
            || abbrev("init-command", 6)
            || abbrev("python", 2)
        {
            return true;
        }
        if matches!(opt, "ex" | "iex")
            || abbrev("eval-command", 2)
            || abbrev("init-eval-command", 6)
        {
            let text = attached.or_else(|| args.get(i + 1).map(String::as_str));
            if text.is_some_and(code) {
                return true;
            }
            i += usize::from(attached.is_none());
        }
        i += 1;
    }
    false
}

/// Whether lldb's arguments run code of its command language that reaches the host: a
/// command file (`-s`, `-S`, `-K`, `--source…`), or a one-line command (`-o`, `-O`, `-k`,
/// `--one-line…`, `=` attached) with a word that is `platform` (`platform shell`),
/// `script` (Python), `command` (`command script`, `command source`, `command alias`) or an
/// abbreviation of `shell`, or that starts with `!`.
fn lldb_runs_code(args: &[String]) -> bool {
    let code = |text: &str| {
        text.split_whitespace().any(|w| {
            w.starts_with('!')
                || matches!(w, "platform" | "script" | "command" | "sc" | "co" | "com")
                || (w.len() >= 2 && "shell".starts_with(w))
        })
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (opt, attached) = match a.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v)),
            _ => (a, None),
        };
        if matches!(opt, "-s" | "-S" | "-K") || opt.starts_with("--source") {
            return true;
        }
        if matches!(opt, "-o" | "-O" | "-k") || opt.starts_with("--one-line") {
            let text = attached.or_else(|| args.get(i + 1).map(String::as_str));
            if text.is_some_and(code) {
                return true;
            }
            i += usize::from(attached.is_none());
        }
        i += 1;
    }
    false
}

/// Whether `name` is a C compiler driver (`cc`, `gcc`, `g++`, `clang`, `clang++`,
/// `gfortran`, a target's `x86_64-linux-gnu-gcc`, a version's `gcc-12`, `clang-17`).
fn compiler_driver(name: &str) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let base = base.strip_suffix('-').unwrap_or(base);
    matches!(base, "cc" | "c++")
        || ["gcc", "g++", "gfortran", "clang", "clang++", "-cc", "-c++"]
            .iter()
            .any(|d| base.ends_with(d))
}

/// Why a compiler driver given `args` runs a program or loads code other than its own
/// (attack pass C-A: `gcc -wrapper sh,-c,'git reset --hard' …`): `-wrapper PROG,ARGS`
/// runs its subprocesses through PROG; `-B PREFIX` takes them (cc1, as, ld) from PREFIX;
/// `-specs=FILE` may name any program to run; `-fplugin=`, `-fpass-plugin=` and `-Xclang
/// -load` load a plugin; `-fuse-ld=PATH` runs PATH as the linker.
fn compiler_runs_program(args: &[String]) -> Option<&'static str> {
    args.iter().enumerate().find_map(|(i, a)| {
        let a = a.as_str();
        if a == "-wrapper" || a.starts_with("-wrapper=") {
            Some("-wrapper runs the compiler's programs through the program it names")
        } else if a.starts_with("-B") || a == "--prefix" || a.starts_with("--prefix=") {
            Some("-B takes the programs it runs (cc1, as, ld) from the directory given")
        } else if a.starts_with("-specs") || a.starts_with("--specs") {
            Some("-specs reads a spec file, which may run any program")
        } else if a.starts_with("-fplugin")
            || a.starts_with("-fpass-plugin")
            || (a == "-Xclang"
                && args
                    .get(i + 1)
                    .is_some_and(|n| matches!(n.as_str(), "-load" | "-plugin")))
        {
            Some("loads a compiler plugin")
        } else if a.strip_prefix("-fuse-ld=").is_some_and(|l| l.contains('/'))
            || a.starts_with("--ld-path")
        {
            Some("runs the linker program it names")
        } else {
            None
        }
    })
}

/// A glob in git's subcommand or option position (`git reset --har?`, `git rese? --hard`):
/// bash replaces it by the names of files that match, and a file named `--hard` may be
/// planted, so it may be any option (attack pass 193 F6).
fn git_option_globs(seg: &Segment, out: &mut Vec<Finding>) {
    let Some(sub) = git_subcommand_index(seg) else {
        return;
    };
    let glob = seg.glob_args.iter().find(|&&i| {
        let a = &seg.argv[i];
        i >= sub && (i == sub || a.starts_with('-')) && a.contains(['*', '?', '['])
    });
    if let Some(&i) = glob {
        out.push(finding(
            FindingId::GitDiscardChanges,
            Decision::Ask,
            format!(
                "git's {} is a glob ({}): the names of matching files take its place, so it \
                 may be any option",
                if i == sub { "subcommand" } else { "option" },
                seg.argv[i]
            ),
        ));
    }
}

/// `seg` with bash's brace expansion made in its unquoted words (`--hard{,}` → `--hard
/// --hard`, `--{hard,}` → `--hard --`), one level, as [`brace_words`] makes it for rm's
/// targets; `None` when no word has one (attack pass 193 F6: `git reset --hard{,}` was read
/// as the unknown option `--hard{,}`).
fn brace_expanded(seg: &Segment) -> Option<Segment> {
    if !seg
        .glob_args
        .iter()
        .any(|&i| i > 0 && brace_words(&seg.argv[i]).len() > 1)
    {
        return None;
    }
    let mut e = Segment {
        argv: Vec::new(),
        dynamic_args: Vec::new(),
        glob_args: Vec::new(),
        ..seg.clone()
    };
    for (i, a) in seg.argv.iter().enumerate() {
        let words = if i > 0 && seg.glob_args.contains(&i) {
            brace_words(a)
        } else {
            vec![a.clone()]
        };
        for w in words {
            if seg.dynamic_args.contains(&i) {
                e.dynamic_args.push(e.argv.len());
            }
            if seg.glob_args.contains(&i) && w.contains(['*', '?', '[']) {
                e.glob_args.push(e.argv.len());
            }
            e.argv.push(w);
        }
    }
    Some(e)
}

/// `rsync --delete SRC/ DEST` deletes what DEST holds that SRC lacks (an empty SRC: all
/// of it), `--remove-source-files` the files it sent: asked about when that is the
/// project, a directory holding it or its history (attack pass 188 F3: `rsync -a
/// --delete /tmp/empty/ ./` emptied the project unasked).
fn rsync_delete_check(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let args: Vec<&str> = static_args(seg).collect();
    let deletes = args
        .iter()
        .any(|a| *a == "--del" || a.starts_with("--delete"));
    // `--remove-sent-files` is its older name, still accepted.
    let removes_sources =
        args.contains(&"--remove-source-files") || args.contains(&"--remove-sent-files");
    let operands: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-') && !a.contains("::") && !a.contains(':'))
        .collect();
    let Some((dest, sources)) = operands.split_last() else {
        return;
    };
    if deletes {
        out.extend(cx.first_project_target([*dest], |why| {
            format!("rsync --delete deletes what is not in its source from {why}")
        }));
    }
    if removes_sources {
        out.extend(cx.first_project_target(sources.iter().copied(), |why| {
            format!("rsync --remove-source-files deletes the files it sends from {why}")
        }));
    }
}

/// Whether a `find` expression (`args`, after `find`) selects by a test that narrows what
/// it acts on: a name or path that is not a catch-all (`-name '*'` and `-regex '.*'` are
/// not), age, size, emptiness, owner; `-type f` alone does not, and neither does a
/// negation or an `-o` right before the action (new-user pass nu63: `find . -name '*.pyc'
/// -o -name '*.pyo' -delete` is narrowed; attack pass 63: `find . -name '*' -delete` is
/// not).
fn find_narrowed(args: &[String]) -> bool {
    if args.iter().any(|a| a == "-not" || a == "!") {
        return false;
    }
    // A name test that selects `.git` narrows nothing that matters: it is the history
    // (nu65: `find . -name .git -exec rm -rf {} +`).
    if args.windows(2).any(|w| {
        matches!(
            w[0].as_str(),
            "-name" | "-iname" | "-path" | "-ipath" | "-wholename"
        ) && names_git(w[1].rsplit('/').next().unwrap_or(&w[1]))
    }) {
        return false;
    }
    let mut narrowed = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let value = args.get(i + 1).map(String::as_str).unwrap_or("");
        match a {
            "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename" | "-lname"
            | "-ilname" => {
                let last = value.rsplit('/').next().unwrap_or(value);
                if !value.is_empty() && !catch_all(last) {
                    narrowed = true;
                }
                i += 1;
            }
            "-regex" | "-iregex" => {
                if !matches!(value, ".*" | ".+" | "./.*" | ".*.*" | "") {
                    narrowed = true;
                }
                i += 1;
            }
            "-empty" | "-newer" | "-mtime" | "-mmin" | "-atime" | "-amin" | "-ctime" | "-cmin"
            | "-size" | "-inum" | "-samefile" | "-user" | "-group" | "-links" => narrowed = true,
            "-delete" | "-exec" | "-execdir" | "-ok" | "-okdir"
                if i > 0 && matches!(args[i - 1].as_str(), "-o" | "-or" | ",") =>
            {
                return false;
            }
            _ => {}
        }
        i += 1;
    }
    narrowed
}

/// Whether a `find` expression (`args`, after `find`) provably selects nothing of a
/// repository's history, nor a directory holding the project, for the action it feeds:
/// `-delete` (each `-o` branch holding one), or, with `at_end`, the `-exec` that follows
/// `args` (the last branch). Such a branch must hold, before the action and not negated,
/// a `-name`/`-iname` glob that matches neither `.git`, the names in it that hold the
/// history ([`GIT_HISTORY`], packs, objects) nor the project's own name, or a
/// `-path`/`-ipath`/`-wholename` glob that matches no such path under the starts.
/// Parentheses and `,` are not read (they ask). Age, size, owner or regex tests alone, or a
/// pattern known only at run time, may select the history (attack pass 193 F7: `find .
/// -iname .GIT -exec rm -rf {} +`, `find . -mtime -99999 -delete`, `find . -name zzz -or
/// -true -delete`); `find . -name '*.pyc' -o -name '*.pyo' -delete` deletes only `*.pyo`
/// (new-user pass nu63).
fn find_spares_history(args: &[String], cx: &DangerCtx<'_>, at_end: bool) -> bool {
    let n_starts = args
        .iter()
        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
        .count();
    let starts = find_starts(args);
    let expr = &args[n_starts..];
    let project = match cx.start {
        Cwd::Abs(v) | Cwd::Rel(v) => v.last().cloned(),
        _ => None,
    };
    let mut names: Vec<String> = [
        ".git",
        "pack-0123456789abcdef.pack",
        "pack-0123456789abcdef.idx",
        "ab",
        "0123456789abcdef0123456789abcdef01234567",
    ]
    .iter()
    .chain(GIT_HISTORY)
    .map(|s| s.to_string())
    .collect();
    names.extend(project.clone());
    let mut paths = Vec::new();
    for s in &starts {
        let s = s.trim_end_matches('/');
        let s = if s.is_empty() { "/" } else { s };
        paths.push(s.to_string());
        paths.push(format!("{s}/.git"));
        for n in &names {
            paths.push(format!("{s}/.git/{n}"));
        }
        if let Some(p) = &project {
            paths.push(format!("{s}/{p}"));
            paths.push(format!("{s}/{p}/.git"));
        }
    }
    let selects = |pat: &str, ci: bool, candidates: &[String]| {
        pat.contains(['$', '`'])
            || globset::GlobBuilder::new(pat)
                .literal_separator(false)
                .case_insensitive(ci)
                .backslash_escape(true)
                .build()
                .map_or(true, |g| {
                    let m = g.compile_matcher();
                    candidates.iter().any(|c| m.is_match(c))
                })
    };
    let Some(expr) = find_collapse_name_groups(expr, |test, pat| {
        let candidates = if test.ends_with("name") && !test.ends_with("wholename") {
            &names
        } else {
            &paths
        };
        !selects(pat, test.starts_with("-i"), candidates)
    }) else {
        return false;
    };
    // Per `-o` branch: (guarded before its first action, holds `-delete`).
    let mut branches = vec![(false, false, false)]; // (guarded, acted, deletes)
    let mut negated = false;
    let mut i = 0;
    while i < expr.len() {
        let a = expr[i];
        let value = expr.get(i + 1).copied();
        let b = branches.last_mut().expect("one branch at least");
        let mut step = 1;
        match a {
            "-o" | "-or" => branches.push((false, false, false)),
            SPARING_GROUP if !negated && !b.1 => b.0 = true,
            "!" | "-not" => {
                negated = true;
                i += 1;
                continue;
            }
            "-delete" => {
                b.1 = true;
                b.2 = true;
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => b.1 = true,
            "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename" => {
                let candidates = if a.ends_with("name") && !a.ends_with("wholename") {
                    &names
                } else {
                    &paths
                };
                let ci = a.starts_with("-i");
                if !negated && !b.1 && value.is_some_and(|p| !selects(p, ci, candidates)) {
                    b.0 = true;
                }
                step = 2;
            }
            _ if FIND_VALUED.contains(&a) || a.starts_with("-newer") => step = 2,
            _ => {}
        }
        negated = false;
        i += step;
    }
    if at_end {
        branches.last().is_some_and(|b| b.0)
    } else {
        branches.iter().filter(|b| b.2).all(|b| b.0)
    }
}

/// Stands for a parenthesised group of name tests that spares the history
/// ([`find_collapse_name_groups`]); not a word find reads.
const SPARING_GROUP: &str = "\0(sparing name tests)";

/// `expr` (a find expression after its starts) with each parenthesised group that is only
/// an `-o` of plain name tests (`\( -name '*.pyc' -o -name '*.pyo' \)`: `-name`,
/// `-iname`, `-path`, `-ipath`, `-wholename`, `-iwholename`, each with a pattern `spares`
/// accepts) replaced by [`SPARING_GROUP`], which guards its branch as one such test does
/// (usability pass 200). `None` when any other parenthesis or a `,` is left: those are not
/// read (`\( -name x -o -true \)` asks).
fn find_collapse_name_groups(
    expr: &[String],
    spares: impl Fn(&str, &str) -> bool,
) -> Option<Vec<&str>> {
    let mut out = Vec::with_capacity(expr.len());
    let mut i = 0;
    while i < expr.len() {
        let a = expr[i].as_str();
        match a {
            "," | ")" => return None,
            "(" => {
                let close = expr[i + 1..].iter().position(|w| w == ")")? + i + 1;
                let inner = &expr[i + 1..close];
                let plain = !inner.is_empty()
                    && inner.chunks(3).all(|c| {
                        matches!(
                            c[0].as_str(),
                            "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename"
                        ) && c.get(1).is_some_and(|p| spares(&c[0], p))
                            && c.get(2).is_none_or(|o| matches!(o.as_str(), "-o" | "-or"))
                    })
                    && inner.len() % 3 == 2;
                if !plain {
                    return None;
                }
                out.push(SPARING_GROUP);
                i = close + 1;
            }
            _ => {
                out.push(a);
                i += 1;
            }
        }
    }
    Some(out)
}

/// find's primaries that take one value (the next word).
const FIND_VALUED: &[&str] = &[
    "-lname",
    "-ilname",
    "-regex",
    "-iregex",
    "-regextype",
    "-type",
    "-xtype",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-inum",
    "-samefile",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-perm",
    "-maxdepth",
    "-mindepth",
    "-fstype",
    "-used",
    "-context",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fls",
    "-files0-from",
    "-D",
    "-O",
];

/// The start directories of a `find` expression (`args`, after `find`): the words before
/// the first test, option or parenthesis; `.` when there are none (as find reads it).
fn find_starts(args: &[String]) -> Vec<&str> {
    let starts: Vec<&str> = args
        .iter()
        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
        .map(String::as_str)
        .collect();
    if starts.is_empty() {
        vec!["."]
    } else {
        starts
    }
}

/// `find / -delete`.
fn find_delete_check(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let args = &seg.argv[1..];
    let narrowed = find_narrowed(args);
    for (k, a) in find_starts(args).into_iter().enumerate() {
        // An implicit `.` is static (argument 1 is then a test or an action).
        if a != "." && !seg.is_static(k + 1) {
            if !narrowed {
                out.push(finding(
                    FindingId::RmProject,
                    Decision::Ask,
                    format!(
                        "find -delete without a name test in a directory known only at run \
                         time ({a})"
                    ),
                ));
            }
            continue;
        }
        if let Some(r) = critical_target(a, cx.cwds, cx.home) {
            // A name test narrows it to chosen files (`find /tmp -name '*.log' -delete`,
            // new-user pass nu64): asked about, not forbidden.
            out.push(finding(
                FindingId::FindDeleteCritical,
                if narrowed {
                    Decision::Ask
                } else {
                    Decision::Forbid
                },
                format!("find -delete on {r}"),
            ));
        } else if !find_spares_history(args, cx, false) {
            if let Some(r) = cx.project_target(a, true) {
                out.push(finding(
                    FindingId::RmProject,
                    Decision::Ask,
                    format!(
                        "find -delete whose tests do not provably spare the history deletes {r}"
                    ),
                ));
            }
        }
    }
}

/// `dd of=/dev/sda` and `dd of=/etc/x`.
/// The pipeline stage that feeds `seg` its standard input, if `seg` is a later stage.
fn fed_by<'a>(seg: &Segment, cx: &DangerCtx<'a>) -> Option<&'a Segment> {
    let p = seg.pipeline.filter(|p| p.index > 0)?;
    cx.segments.iter().rev().find(|s| {
        s.pipeline
            .is_some_and(|q| q.id == p.id && q.index + 1 == p.index)
    })
}

/// The git subcommand `seg` runs and its arguments, if it is git.
fn git_sub_args(seg: &Segment) -> Option<(&str, &[String])> {
    let sub = git_subcommand_index(seg).filter(|&s| seg.is_static(s))?;
    Some((seg.argv[sub].as_str(), &seg.argv[sub + 1..]))
}

/// `git diff -R | git apply`, `git diff -R | patch -p1`: a reversed diff of the work
/// tree's changes, applied, undoes them as `git apply -R` does. A report (`git apply
/// --check`, `patch --dry-run`) changes nothing.
fn reverse_diff_applied(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let args: Vec<&str> = static_args(seg).collect();
    let reports = if danger_name(seg).as_deref() == Some("patch") {
        args.iter()
            .any(|a| *a == "-C" || LongOption::abbrev("dry-run").matches(a))
    } else {
        !any_long_option(&args, &[LongOption::exact("apply")])
            && any_long_option(
                &args,
                &[
                    LongOption::exact("check"),
                    LongOption::exact("stat"),
                    LongOption::exact("numstat"),
                    LongOption::exact("summary"),
                ],
            )
    };
    let reversed = fed_by(seg, cx)
        .and_then(git_sub_args)
        .is_some_and(|(sub, a)| {
            matches!(sub, "diff" | "stash") && a.iter().any(|x| x == "-R" || x == "--reverse")
        });
    if reversed && !reports && !out.iter().any(|f| f.id == FindingId::GitDiscardChanges) {
        out.push(finding(
            FindingId::GitDiscardChanges,
            Decision::Ask,
            "applies a reversed diff of the work tree's changes: it undoes them",
        ));
    }
}

/// `git archive HEAD | tar -x` at the project's top: the committed files overwrite the
/// work tree's uncommitted changes (GNU tar replaces existing files unless told to keep
/// them). Extracting elsewhere (`-C /tmp/export`) or with `--prefix` is ordinary.
fn git_archive_extracted(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let Some(first) = seg.argv.get(1).filter(|_| seg.is_static(1)) else {
        return;
    };
    let args: Vec<&str> = static_args(seg).collect();
    let short = |c: char| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
            || (!first.starts_with('-') && first.contains(c))
    };
    let extracts = short('x')
        || any_long_option(
            &args,
            &[LongOption::abbrev("extract"), LongOption::abbrev("get")],
        );
    let keeps = short('k')
        || any_long_option(
            &args,
            &[
                LongOption::abbrev("keep-old-files"),
                LongOption::abbrev("skip-old-files"),
                LongOption::abbrev("keep-newer-files"),
            ],
        );
    if !extracts || keeps {
        return;
    }
    // The archive: `-f FILE` (also attached or in a cluster ending in `f`), `--file`.
    let mut file = None;
    let mut dir = None;
    for (i, a) in seg.argv.iter().enumerate().skip(1) {
        let next = || seg.argv.get(i + 1).map(String::as_str);
        if let Some(v) = a.strip_prefix("--file=").or(a.strip_prefix("--directory=")) {
            if a.starts_with("--file") {
                file = Some(v);
            } else {
                dir = Some(v);
            }
        } else if a == "--file" {
            file = next();
        } else if a == "--directory" {
            dir = next();
        } else if a.starts_with('-') && !a.starts_with("--") {
            if a.ends_with('f') {
                file = next();
            } else if a.ends_with('C') {
                dir = next();
            } else if let Some(d) = a.strip_prefix("-C").filter(|d| !d.is_empty()) {
                dir = Some(d);
            }
        }
    }
    if file.is_some_and(|f| f != "-" && f != "/dev/stdin") {
        return;
    }
    let from_archive = fed_by(seg, cx)
        .and_then(git_sub_args)
        .is_some_and(|(sub, a)| {
            sub == "archive"
                && !a
                    .iter()
                    .any(|x| x.starts_with("--prefix=") && x != "--prefix=" && x != "--prefix=./")
        });
    let dir = dir.unwrap_or(".");
    let at_top = cwd_candidates(cx.cwds)
        .iter()
        .any(|c| resolve(c, dir, cx.home) == *cx.start);
    if from_archive && at_top {
        out.push(finding(
            FindingId::GitDiscardChanges,
            Decision::Ask,
            "extracts a git archive over the work tree: committed files overwrite uncommitted \
             changes",
        ));
    }
}

/// `git ls-files | xargs rm`: rm given the files git lists deletes every tracked file
/// (or, with `-m`/`-o`, the modified or untracked ones: work git cannot restore); a
/// pathspec that narrows the list (`'*.orig'`) is ordinary clean-up.
fn rm_of_listed_files(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    if !seg.runtime_args {
        return;
    }
    let Some((sub, args)) = fed_by(seg, cx).and_then(git_sub_args) else {
        return;
    };
    if sub != "ls-files" {
        return;
    }
    let mut pathspecs = Vec::new();
    let mut unsaved = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if matches!(
            a,
            "-x" | "-X" | "--exclude" | "--exclude-from" | "--format" | "--with-tree"
        ) {
            i += 1;
        } else if a.starts_with("--") {
            unsaved |= ["--modified", "--others"].contains(&a);
        } else if a.starts_with('-') && a.len() > 1 {
            unsaved |= a[1..].contains(['m', 'o']);
        } else {
            pathspecs.push(a);
        }
        i += 1;
    }
    let narrowed = pathspecs
        .iter()
        .any(|p| !matches!(*p, "." | "./" | ":/" | "*" | "--"));
    if !narrowed || unsaved {
        out.push(finding(
            FindingId::RmProject,
            Decision::Ask,
            "rm deletes the files git ls-files lists: every tracked file, or work git cannot \
             restore",
        ));
    }
}

fn dd_check(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    for (i, a) in seg.argv.iter().enumerate().skip(1) {
        // `of=$HOME/x` is known but for its `$HOME` ([`known_path`]).
        let Some(t) = a
            .strip_prefix("of=")
            .and_then(|t| known_path(seg.is_static(i), t))
        else {
            continue;
        };
        if let Some(mut f) = dangerous_write_target(&t, cx.cwds, cx.home) {
            if f.id == FindingId::DeviceWrite {
                f.id = FindingId::DdDevice;
                f.reason = format!("dd writes raw device {t}");
            }
            out.push(f);
        }
    }
}

/// `tee /dev/sda`, `tee -a ~/.bashrc`.
fn tee_check(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let a = split_args(seg, "");
    for (i, t) in a.operands {
        if let Some(t) = known_path(seg.is_static(i), t) {
            if let Some(f) = dangerous_write_target(&t, cx.cwds, cx.home) {
                out.push(f);
            }
        }
    }
}

/// sed's `--in-place` (getopt_long: `--in` and `--i` are it too).
const SED_IN_PLACE: LongOption = LongOption::abbrev("in-place");

/// `sed -i … ~/.profile`.
fn sed_in_place_check(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let args = &seg.argv[1..];
    let in_place = args.iter().any(|a| {
        SED_IN_PLACE.matches(a) || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
    });
    if in_place {
        for t in known_args(seg).filter(|a| !a.starts_with('-')) {
            if let Some(f) = dangerous_write_target(&t, cx.cwds, cx.home) {
                out.push(f);
            }
        }
    }
}

/// `--target-directory` of cp, mv, install and ln.
const TARGET_DIRECTORY: LongOption = LongOption::abbrev("target-directory");

/// `cp x /usr/bin/y`, `install x ~/.bashrc`, `truncate -s0 /etc/x`: the files written.
fn copy_target_check(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let a = split_args(seg, "tSmogbT");
    // `-t DIR`, `--target-directory=DIR`, `--target-directory DIR` and its abbreviations
    // (getopt_long: `cp --target=DIR` works, verified with coreutils 9.1).
    let target_dir = seg.argv.iter().enumerate().skip(1).find_map(|(i, w)| {
        let next = || seg.argv.get(i + 1).map(String::as_str);
        if w == "-t" {
            next()
        } else if TARGET_DIRECTORY.matches(w) {
            w.split_once('=').map(|(_, v)| v).or_else(next)
        } else {
            None
        }
    });
    // `SRC` copied into directory `dir` lands at `dir/basename(SRC)`.
    let into = |dir: &str, src: &str| {
        let base = src.trim_end_matches('/').rsplit('/').next().unwrap_or(src);
        format!("{}/{}", dir.trim_end_matches('/'), base)
    };
    let mut targets: Vec<String> = Vec::new();
    if name == "truncate" {
        targets.extend(a.operands.iter().map(|(_, t)| t.to_string()));
    } else if let Some(d) = target_dir {
        targets.extend(a.operands.iter().map(|(_, s)| into(d, s)));
        targets.push(d.to_string());
    } else if let [sources @ .., (_, dest)] = a.operands.as_slice() {
        if !sources.is_empty() {
            targets.push(dest.to_string());
            targets.extend(sources.iter().map(|(_, s)| into(dest, s)));
        }
    }
    for t in targets {
        if let Some(f) = dangerous_write_target(&t, cx.cwds, cx.home) {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    // `mv .git/objects /tmp/`, `mv * /tmp/`: moving the project or its history away loses
    // it as a delete would (attack pass 63: the sandbox's /tmp is gone after the run).
    if name == "mv" {
        let sources: Vec<&str> = match (target_dir, a.operands.as_slice()) {
            (Some(_), ops) => ops.iter().map(|(_, s)| *s).collect(),
            (None, [sources @ .., _]) => sources.iter().map(|(_, s)| *s).collect(),
            _ => Vec::new(),
        };
        out.extend(cx.first_project_target(sources, |why| format!("moves away {why}")));
    }
}

/// A function that calls itself in a pipeline or in the background.
fn fork_bomb(name: &str, seg: &Segment, out: &mut Vec<Finding>) {
    for c in &seg.context {
        if let Context::Function(f) = c {
            if *f == name && (seg.pipeline.is_some() || seg.background) {
                out.push(finding(
                    FindingId::ForkBomb,
                    Decision::Forbid,
                    format!("function {f} calls itself in a pipeline/background (fork bomb)"),
                ));
                break;
            }
        }
    }
}

/// A download piped or substituted into an interpreter (`curl … | sh`, `sh -c "$(curl …)"`).
fn download_to_interpreter(name: &str, idx: usize, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    if !(INTERPRETERS.contains(&name) || matches!(name, "eval" | "source" | ".")) {
        return;
    }
    let seg = &cx.segments[idx];
    // `curl … | python3 --version`: it prints its version and runs nothing it is fed.
    if INTERPRETERS.contains(&name)
        && shells::program_source(name, &seg.argv[1..]) == shells::ProgramSource::Nothing
    {
        return;
    }
    let mut hit = None;
    if let Some(p) = seg.pipeline {
        hit = cx.segments.iter().find(|s| {
            s.pipeline
                .is_some_and(|q| q.id == p.id && q.index < p.index)
                && is_downloader(s)
        });
    }
    if hit.is_none() {
        hit = cx
            .segments
            .iter()
            .enumerate()
            .find(|(_, s)| descends_from(cx.segments, s, idx) && is_downloader(s))
            .map(|(_, s)| s);
    }
    if let Some(d) = hit {
        out.push(finding(
            FindingId::DownloadToInterpreter,
            Decision::Forbid,
            format!(
                "runs downloaded code: `{}` feeds `{}`",
                d.argv.join(" "),
                name
            ),
        ));
    }
}

/// A shell (or `source`/`.` of `/dev/stdin`) that runs the script it reads from a pipe
/// whose text is not known before the command runs — any producer but a static `echo`,
/// `printf` or `cat <<<`, whose text is parsed and checked as commands instead: asked
/// about, as a command known only at run time as a whole is (`sh <<< "$x"`) (fresh pass
/// 189 #5: `… | tee /dev/null | sh`, `base64 -d | sh`, `yes 'rm -rf .git' | head -1 |
/// sh` ran unasked).
fn piped_script(name: &str, idx: usize, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let seg = &cx.segments[idx];
    let Some(p) = seg.pipeline.filter(|p| p.index > 0) else {
        return;
    };
    // A wrapper given no command starts a shell, which reads the pipe (`echo … | unshare
    // -r`, `… | script -q /dev/null`: fresh pass 190 F4).
    let shell_starter = matches!(
        name,
        "script" | "unshare" | "fakeroot" | "chroot" | "runuser" | "sg" | "su" | "newgrp"
    );
    // Every interpreter, not only the shells: `cat f | python3.11` ran unasked (attack
    // pass 204, S3); a static text piped in is judged as the shells' is, or, for the other
    // languages, is code on the command line (README: Known limits).
    let reads_pipe = if shell_starter {
        true
    } else if shells::INTERPRETERS.contains(&name) {
        shells::program_source(name, &seg.argv[1..]) == shells::ProgramSource::Stdin
    } else {
        matches!(name, "source" | ".")
            && seg.argv.get(1).is_some_and(|a| {
                matches!(a.as_str(), "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
            })
    };
    if !reads_pipe {
        return;
    }
    let before = cx.segments.iter().find(|s| {
        s.pipeline
            .is_some_and(|q| q.id == p.id && q.index + 1 == p.index)
    });
    // A shell's static input is parsed and checked as the commands it holds; `source`'s
    // is not.
    if shells::INTERPRETERS.contains(&name)
        && before.is_some_and(|b| crate::parse::static_output(b).is_some())
    {
        return;
    }
    out.push(finding(
        FindingId::DynamicCommand,
        Decision::Ask,
        format!(
            "{name} runs the script it reads from a pipe, known only at run time: what it \
             runs is not checked"
        ),
    ));
}

fn descends_from(segs: &[Segment], s: &Segment, ancestor: usize) -> bool {
    let mut p = s.parent;
    let mut steps = 0;
    while let Some(i) = p {
        if i == ancestor {
            return true;
        }
        steps += 1;
        if steps > 64 || i >= segs.len() {
            return false;
        }
        p = segs[i].parent;
    }
    false
}

/// `--recursive` of rm, chmod, chown and chgrp (getopt_long: `rm --r`, `chmod --rec` work,
/// verified with coreutils 9.1).
const RECURSIVE: LongOption = LongOption::abbrev("recursive");

/// rm refuses an abbreviated `--no-preserve-root` ("you may not abbreviate the
/// --no-preserve-root option", coreutils 9.1), so only the exact name counts.
const NO_PRESERVE_ROOT: LongOption = LongOption::exact("no-preserve-root");

fn rm_check(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let a = split_args(seg, "");
    let recursive = a.short.contains(['r', 'R']) || a.has_long(&[RECURSIVE]);
    if a.has_long(&[NO_PRESERVE_ROOT]) {
        out.push(finding(
            FindingId::RmRecursiveCritical,
            Decision::Forbid,
            "rm --no-preserve-root",
        ));
        return;
    }
    // `find … -exec rm {} +`: what `{}` names is what the find selects (attack pass 63,
    // new-user pass nu63).
    let find = seg
        .wrappers
        .iter()
        .find(|w| w.name == "find -exec")
        .map(|w| &w.argv[1..w.argv.len().saturating_sub(1)]);
    let find = find.filter(|_| a.operands.iter().any(|(_, t)| *t == "{}"));
    let braces_selected = find.is_some_and(|f| find_spares_history(f, cx, true));
    if let Some(fargs) = find.filter(|_| !braces_selected) {
        out.extend(cx.first_project_target(find_starts(fargs), |why| {
            format!("find whose tests do not provably spare the history feeds rm {why}")
        }));
    }
    for (i, t) in &a.operands {
        if braces_selected && *t == "{}" {
            continue;
        }
        if !seg.is_static(*i) {
            if let Some(p) = home_spelled(t) {
                // Only `$HOME` is dynamic: judge the path like a static one.
                if let Some(why) = critical_target(&p, cx.cwds, cx.home) {
                    out.push(finding(
                        FindingId::RmRecursiveCritical,
                        if recursive {
                            Decision::Forbid
                        } else {
                            Decision::Ask
                        },
                        format!("deletes {why} ({t})"),
                    ));
                } else if let Some(why) = cx.project_target(&p, recursive) {
                    // `$HOME/../proj` is `~/../proj` (fresh pass 189 #6).
                    out.push(finding(
                        FindingId::RmProject,
                        Decision::Ask,
                        format!("deletes {why} ({t})"),
                    ));
                }
            } else if recursive {
                out.push(finding(
                    FindingId::RmDynamicTarget,
                    Decision::Ask,
                    format!("recursive delete of a path known only at run time ({t})"),
                ));
            }
            continue;
        }
        // A `..` that leaves the working directory but not the project is no escape
        // (nu63); anything else critical stays critical (the home as the project too).
        let inside = within_project(t, cx.cwds, cx.home, cx.start)
            && critical_resolved(t, cx.cwds, cx.home).is_none();
        if inside || critical_target(t, cx.cwds, cx.home).is_none() {
            if let Some(why) = cx.project_target(t, recursive) {
                out.push(finding(
                    FindingId::RmProject,
                    Decision::Ask,
                    format!(
                        "{} of {why}",
                        if recursive {
                            "recursive delete"
                        } else {
                            "delete"
                        }
                    ),
                ));
                continue;
            }
            if inside {
                continue;
            }
        }
        if let Some(why) = critical_target(t, cx.cwds, cx.home) {
            if recursive {
                out.push(finding(
                    FindingId::RmRecursiveCritical,
                    Decision::Forbid,
                    format!("recursive delete of {why}"),
                ));
            } else if why.starts_with("system path") {
                out.push(finding(
                    FindingId::RmSystemFile,
                    Decision::Forbid,
                    format!("deletes {why}"),
                ));
            }
        } else if t.starts_with('/')
            && split_abs(t)
                .first()
                .is_some_and(|r| SYSTEM_ALL.contains(&r.as_str()))
        {
            out.push(finding(
                if recursive {
                    FindingId::RmRecursiveCritical
                } else {
                    FindingId::RmSystemFile
                },
                Decision::Forbid,
                format!("deletes system path {t}"),
            ));
        }
    }
    if recursive
        && seg.runtime_args
        && !braces_selected
        && !out.iter().any(|f| f.id == FindingId::RmDynamicTarget)
    {
        out.push(finding(
            FindingId::RmDynamicTarget,
            Decision::Ask,
            "recursive delete of paths supplied at run time",
        ));
    }
}

/// The `key=value` of each `-c` / `--config-env` among git's global options `globals`
/// (separate or attached).
fn git_config_options(globals: &[String]) -> impl Iterator<Item = &str> {
    git_config_options_from(globals).map(|(kv, _)| kv)
}

/// [`git_config_options`], each with whether it is a `--config-env` (`key=VARIABLE`: the
/// value is that environment variable's).
fn git_config_options_from(globals: &[String]) -> impl Iterator<Item = (&str, bool)> {
    let mut words = globals.iter().map(String::as_str).peekable();
    std::iter::from_fn(move || {
        while let Some(w) = words.next() {
            let value = match w {
                "-c" => words.peek().map(|v| (*v, false)),
                "--config-env" => words.peek().map(|v| (*v, true)),
                _ => w
                    .strip_prefix("--config-env=")
                    .map(|v| (v, true))
                    .or_else(|| {
                        w.strip_prefix("-c")
                            .filter(|v| !v.is_empty())
                            .map(|v| (v, false))
                    }),
            };
            if value.is_some() {
                return value;
            }
        }
        None
    })
}

/// Whether the git subcommand `name` is an alias the command line itself defines: by
/// `-c alias.NAME=…` (separate or attached), `--config-env[=]alias.NAME=VAR`, or the
/// environment's `GIT_CONFIG_KEY_n=alias.NAME` or `GIT_CONFIG_PARAMETERS` (git's config
/// keys are case-insensitive). `globals` are the words before the subcommand.
fn git_alias_defined(seg: &Segment, globals: &[String], name: &str) -> bool {
    let key = format!("alias.{}", name.to_ascii_lowercase());
    let defines = |kv: &str| {
        let k = kv.split('=').next().unwrap_or("").to_ascii_lowercase();
        k == key
    };
    if git_config_options(globals).any(defines) {
        return true;
    }
    seg.env.iter().any(|e| {
        (e.name.starts_with("GIT_CONFIG_KEY_")
            && (e.dynamic || e.value.to_ascii_lowercase() == key))
            || (e.name == "GIT_CONFIG_PARAMETERS"
                && (e.dynamic || e.value.to_ascii_lowercase().contains(&key)))
    })
}

/// Whether git configuration key `key` (lower-case) holds a command line git runs (its
/// `alias.*` keys are checked apart, [`git_config_alias`]).
fn git_code_key(key: &str) -> bool {
    const EXACT: &[&str] = &[
        "core.fsmonitor",
        "core.alternaterefscommand",
        "core.sshcommand",
        "core.pager",
        "core.editor",
        "core.askpass",
        "core.gitproxy",
        "diff.external",
        "sequence.editor",
        "gpg.program",
        "credential.helper",
        "interactive.difffilter",
        "uploadpack.packobjectshook",
        "web.browser",
        "imap.tunnel",
        "sendemail.tocmd",
        "sendemail.cccmd",
        "sendemail.sendmailcmd",
    ];
    if EXACT.contains(&key) || cordon_policy::gitconfig::runs_code(key) {
        return true;
    }
    // Keys that let a transport run a command (`protocol.ext.allow` with an `ext::` URL),
    // send pushes elsewhere, or move the work tree (fresh pass 190 F9).
    if matches!(key, "protocol.allow" | "core.worktree")
        || (key.starts_with("protocol.") && key.ends_with(".allow"))
        || (key.starts_with("remote.") && key.ends_with(".pushurl"))
        || (key.starts_with("branch.") && key.ends_with(".pushremote"))
    {
        return true;
    }
    let mut parts = key.splitn(2, '.');
    let (Some(section), Some(rest)) = (parts.next(), parts.next()) else {
        return false;
    };
    let last = rest.rsplit('.').next().unwrap_or(rest);
    let sub = rest.contains('.');
    match section {
        "pager" => true,
        "diff" => sub && matches!(last, "command" | "textconv"),
        "merge" => sub && last == "driver",
        "filter" => sub && matches!(last, "clean" | "smudge" | "process"),
        "gpg" => sub && last == "program",
        "credential" => sub && last == "helper",
        "mergetool" | "difftool" | "browser" | "man" | "guitool" => sub && last == "cmd",
        "tar" => sub && last == "command",
        "trailer" => sub && matches!(last, "command" | "cmd"),
        // `mirror` and a forced (`+`) `push` refspec make every later `git push` a forced
        // one (fresh pass 189 #10).
        "remote" => {
            sub && matches!(
                last,
                "uploadpack" | "receivepack" | "proxy" | "mirror" | "push"
            )
        }
        "submodule" => sub && last == "update",
        _ => false,
    }
}

/// The alias or command key a `git config` invocation (`args` after `config`) sets, if
/// any: `git config alias.x 'reset --hard'`, `git config -f .git/config core.fsmonitor
/// …` (new-user pass nu65: an alias set and used in one run ran unasked). Reading
/// (`--get`, one operand) sets nothing.
fn git_config_sets_code(args: &[String]) -> Option<String> {
    const VALUED: &[&str] = &["-f", "--file", "--blob", "--type", "--default", "--comment"];
    // git takes any unambiguous prefix of a long option (`--fil`, `--ren`, `--ed`: fresh
    // pass 190 F1), and git 2.46 spells the modes as subcommands (`git config edit`).
    let long = |a: &str, name: &'static str| LongOption::abbrev(name).matches(a);
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if operands.is_empty() && matches!(a, "edit" | "rename-section") {
            return Some(a.to_string());
        }
        if VALUED.contains(&a)
            || ["file", "blob", "type", "default", "comment"]
                .iter()
                .any(|n| a.len() > 3 && !a.contains('=') && long(a, n))
        {
            i += 1;
        } else if a == "-e" || long(a, "rename-section") || long(a, "edit") {
            // A section renamed into `include`/`core`/`alias`, or the file edited by
            // hand, sets keys without naming them (fresh pass 189 #10).
            return Some(a.to_string());
        } else if a.starts_with("--get") || matches!(a, "-l" | "--list" | "--unset" | "--unset-all")
        {
            return None;
        } else if !a.starts_with('-') {
            operands.push(a);
        }
        i += 1;
    }
    // `git config set KEY VALUE` (git 2.46).
    if operands.first() == Some(&"set") {
        operands.remove(0);
    }
    let key = operands.first()?.to_ascii_lowercase();
    (operands.len() >= 2 && (key.starts_with("alias.") || git_code_key(&key)))
        .then(|| operands[0].to_string())
}

/// Environment variables whose value is a command line git (or what it starts) runs.
const GIT_CODE_VARIABLES: &[&str] = &[
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH_COMMAND",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "EDITOR",
    "VISUAL",
    "PAGER",
];

/// The findings of the command lines a git command line hands git to run (attack pass
/// 62: `git -c diff.external="rm -rf src #" diff` and `git submodule foreach "git reset
/// --hard"` ran unchecked): the value of a command key given with `-c` or in
/// `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, a command variable (`GIT_EXTERNAL_DIFF`, …),
/// and a subcommand's command argument (`submodule foreach`, `bisect run`, `rebase
/// --exec`, `difftool --extcmd`, `filter-branch --*-filter`), each checked as a shell
/// command line and named in the reasons. A value given by `GIT_CONFIG_PARAMETERS` or
/// known only at run time is asked about unchecked.
fn git_command_values(seg: &Segment, sub: usize, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut unchecked = None;
    for (kv, from_env) in git_config_options_from(&seg.argv[1..sub]) {
        if let Some((k, v)) = kv.split_once('=') {
            if !git_code_key(&k.to_ascii_lowercase()) {
                continue;
            }
            if !from_env {
                lines.push((format!("git -c {k}"), v.to_string()));
                continue;
            }
            // `--config-env=core.pager=P`: the command is P's value, checked when the
            // command line sets it, else known only at run time (fix-git: it was checked
            // as a program named P).
            match seg.env.iter().rev().find(|e| e.name == v) {
                Some(e) if !e.dynamic => {
                    lines.push((format!("git --config-env {k}={v}"), e.value.clone()))
                }
                _ => unchecked = Some(format!("--config-env {kv}")),
            }
        }
    }
    for e in &seg.env {
        if GIT_CODE_VARIABLES.contains(&e.name.as_str()) {
            if e.dynamic {
                unchecked = Some(e.name.clone());
            } else {
                lines.push((e.name.clone(), e.value.clone()));
            }
        } else if let Some(n) = e.name.strip_prefix("GIT_CONFIG_KEY_") {
            if e.dynamic || git_code_key(&e.value.to_ascii_lowercase()) {
                let value_name = format!("GIT_CONFIG_VALUE_{n}");
                match seg.env.iter().find(|v| v.name == value_name) {
                    Some(v) if !v.dynamic && !e.dynamic => {
                        lines.push((format!("{}={}", e.name, e.value), v.value.clone()))
                    }
                    Some(_) => unchecked = Some(e.name.clone()),
                    None => {}
                }
            }
        } else if e.name == "GIT_CONFIG_PARAMETERS" {
            let v = e.value.to_ascii_lowercase();
            if e.dynamic || v.split(['\'', ' ', '=']).any(git_code_key) {
                unchecked = Some(e.name.clone());
            }
        }
    }
    // A subcommand's own command argument.
    let args = &seg.argv[sub + 1..];
    let name = seg.argv[sub].as_str();
    match name {
        "submodule" => {
            if let Some(at) = args.iter().position(|a| a == "foreach") {
                let rest: Vec<&String> = args[at + 1..]
                    .iter()
                    .skip_while(|a| a.starts_with('-'))
                    .collect();
                if !rest.is_empty() {
                    let text = rest
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    lines.push(("git submodule foreach".into(), text));
                }
            }
        }
        "bisect" if args.first().is_some_and(|a| a == "run") => {
            let words: Vec<String> = args[1..].iter().map(|a| sh_quote(a)).collect();
            if !words.is_empty() {
                lines.push(("git bisect run".into(), words.join(" ")));
            }
        }
        _ => {}
    }
    let valued: &[&str] = match name {
        "rebase" => &["-x", "--exec"],
        "difftool" | "mergetool" => &["-x", "--extcmd"],
        "filter-branch" => &[
            "--tree-filter",
            "--index-filter",
            "--msg-filter",
            "--env-filter",
            "--commit-filter",
            "--parent-filter",
            "--tag-name-filter",
        ],
        // Attack pass 63: the program run on the other side of a local transport, and
        // grep's pager.
        "ls-remote" | "fetch" | "pull" | "clone" => &["-u", "--upload-pack"],
        "fetch-pack" => &["--upload-pack", "--exec"],
        "push" | "send-pack" => &["--receive-pack", "--exec"],
        "archive" => &["--exec"],
        "grep" => &["-O", "--open-files-in-pager"],
        _ => &[],
    };
    // `ext::CMD` runs CMD (git allows it with `protocol.ext.allow`).
    // Only where git connects to it (`git config remote.x.url ext::…` only writes config,
    // which the broker refuses anyway).
    let connects = matches!(
        name,
        "clone" | "fetch" | "pull" | "push" | "ls-remote" | "archive" | "submodule"
    );
    if connects
        && args
            .iter()
            .any(|a| a.starts_with("ext::") || a.contains("=ext::"))
    {
        unchecked = Some("an ext:: URL".into());
    }
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        // An attached short value (`-xCMD`, `-uCMD`, `-OCMD`).
        // In a cluster of short flags too (`-kx'CMD'`, `-qx CMD`: attack pass 193 F6); an
        // empty rest takes the next word.
        let attached = valued.iter().filter(|o| o.len() == 2).find_map(|o| {
            let at = a
                .strip_prefix('-')
                .filter(|c| !c.starts_with('-'))
                .and_then(|c| c.find(&o[1..]))?;
            Some((o, &a[at + 2..]))
        });
        if valued.contains(&a) {
            if let Some(v) = args.get(i + 1) {
                lines.push((format!("git {name} {a}"), v.clone()));
            }
            i += 1;
        } else if let Some((o, v)) = a
            .split_once('=')
            .filter(|(o, _)| valued.contains(o) && o.starts_with("--"))
        {
            lines.push((format!("git {name} {o}"), v.to_string()));
        } else if let Some((o, v)) = attached {
            if v.is_empty() {
                if let Some(next) = args.get(i + 1) {
                    lines.push((format!("git {name} {o}"), next.clone()));
                }
                i += 1;
            } else {
                lines.push((format!("git {name} {o}"), v.to_string()));
            }
        }
        i += 1;
    }
    if let Some(n) = unchecked {
        out.push(finding(
            FindingId::GitAlias,
            Decision::Ask,
            format!("{n} gives git a command this policy cannot read: what it runs is not checked"),
        ));
    }
    if let Some((what, value)) = todo_editor(name, args, &lines) {
        out.push(finding(
            FindingId::GitDiscardChanges,
            Decision::Ask,
            format!(
                "{what} edits git rebase's todo list without a person (`{value}`): it may \
                 drop commits"
            ),
        ));
    }
    for (what, value) in lines {
        let left = cx.alias_budget.get();
        if left == 0 {
            break;
        }
        cx.alias_budget.set(left - 1);
        let text = value.trim_start().trim_start_matches('!');
        let parsed = crate::parse::parse_script(text);
        let inner = DangerCtx {
            segments: &parsed.segments,
            ..*cx
        };
        let before = out.len();
        for i in 0..parsed.segments.len() {
            out.extend(dangerous(i, &inner));
        }
        for f in &mut out[before..] {
            f.reason = format!("{what} runs `{value}`: {}", f.reason);
        }
    }
}

/// The editor an interactive `git rebase` (`-i`, `--interactive`, `--edit-todo`) gets its
/// todo list edited by, when this command line names one that is not inert (`true`, `:`,
/// `cat`, cordon's own advice): `GIT_SEQUENCE_EDITOR='sed -i 1d'` drops a commit with no
/// person looking. Git's order decides which one counts (`GIT_SEQUENCE_EDITOR`,
/// `sequence.editor`, `GIT_EDITOR`, `core.editor`, `VISUAL`, `EDITOR`); `lines` are the
/// command values of [`git_command_values`] (label, value).
fn todo_editor<'l>(
    sub: &str,
    args: &[String],
    lines: &'l [(String, String)],
) -> Option<(&'l str, &'l str)> {
    if sub != "rebase" {
        return None;
    }
    let options: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-'))
        .collect();
    // In a short cluster, `-x`, `-X`, `-s`, `-S` and `-C` take the rest as their value.
    let interactive = options.iter().any(|a| {
        !a.starts_with("--")
            && a[1..]
                .chars()
                .take_while(|c| !"xXsSC".contains(*c))
                .any(|c| c == 'i')
    }) || any_long_option(
        &options,
        &[
            LongOption::abbrev("interactive"),
            LongOption::exact("edit-todo"),
        ],
    );
    if !interactive {
        return None;
    }
    let is = |label: &str, name: &str| {
        let l = label.to_ascii_lowercase();
        l == name.to_ascii_lowercase()
            || l.ends_with(&format!(" {name}"))
            || l.ends_with(&format!("={name}"))
    };
    let (what, value) = [
        "GIT_SEQUENCE_EDITOR",
        "sequence.editor",
        "GIT_EDITOR",
        "core.editor",
        "VISUAL",
        "EDITOR",
    ]
    .iter()
    .find_map(|name| lines.iter().rev().find(|(l, _)| is(l, name)))?;
    let inert = matches!(value.trim(), "true" | ":" | "cat" | "false" | "");
    (!inert).then_some((what.as_str(), value.as_str()))
}

/// Git's own commands: an alias of the same name is ignored by git.
const GIT_BUILTINS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "checkout",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "commit",
    "config",
    "describe",
    "diff",
    "difftool",
    "fetch",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "help",
    "init",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "merge",
    "mergetool",
    "mv",
    "notes",
    "prune",
    "pull",
    "push",
    "range-diff",
    "rebase",
    "reflog",
    "remote",
    "repack",
    "replace",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "submodule",
    "switch",
    "tag",
    "update-index",
    "update-ref",
    "version",
    "worktree",
    "stage",
    "whatchanged",
    "citool",
    "gui",
    "instaweb",
    "request-pull",
    "send-email",
    "svn",
    "p4",
    "fast-export",
    "fast-import",
    "filter-branch",
    "for-each-ref",
    "count-objects",
    "verify-commit",
    "verify-tag",
    "name-rev",
    "merge-base",
    "mktag",
    "mktree",
    "read-tree",
    "write-tree",
    "commit-tree",
    "cat-file",
    "hash-object",
    "maintenance",
    "multi-pack-index",
    "pack-refs",
    "prune-packed",
    "rerere",
    "show-branch",
    "var",
    "check-ignore",
    "check-attr",
    "check-mailmap",
    "column",
    "credential",
    "diff-files",
    "diff-index",
    "diff-tree",
    "fmt-merge-msg",
    "init-db",
    "interpret-trailers",
    "mailinfo",
    "mailsplit",
    "merge-file",
    "merge-tree",
    "patch-id",
    "symbolic-ref",
    "unpack-objects",
    "update-server-info",
    "upload-pack",
    "receive-pack",
    "bugreport",
    "scalar",
    "replay",
    "backfill",
    "grep",
    "init",
];

/// `arg` as one single-quoted shell word.
fn sh_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// Whether the command line points git at configuration of its own making before running
/// subcommand `name` that is not git's own: `-c include.path=…`, `-c includeIf.…`, or the
/// segment's `GIT_CONFIG_GLOBAL`/`GIT_CONFIG_SYSTEM`/`GIT_CONFIG`/`HOME`/`XDG_CONFIG_HOME`/
/// `GIT_DIR` (attack pass 59: `env GIT_CONFIG_GLOBAL=.a.cfg git x` with `x = reset --hard`
/// in a file the command wrote ran unasked); or git runs for another repository than the
/// aliases were read for: `-C DIR`, `--git-dir`, or `moved` (a `cd DIR &&` before it).
fn git_config_moved(seg: &Segment, globals: &[String], moved: bool) -> Option<String> {
    if moved {
        return Some(
            "it runs in another directory, whose repository's aliases are not read".into(),
        );
    }
    // `git -C DIR` / `--git-dir`: another repository's configuration.
    if let Some(g) = globals.iter().find(|g| {
        g.as_str() == "-C" || (g.starts_with("-C") && g.len() > 2) || g.starts_with("--git-dir")
    }) {
        return Some(format!("{g}: another repository's aliases are not read"));
    }
    for v in git_config_options(globals) {
        let k = v.split('=').next().unwrap_or("").to_ascii_lowercase();
        if k == "include.path" || k.starts_with("includeif.") {
            return Some(format!("-c {k}"));
        }
    }
    seg.env
        .iter()
        .find(|e| {
            matches!(
                e.name.as_str(),
                "GIT_CONFIG_GLOBAL"
                    | "GIT_CONFIG_SYSTEM"
                    | "GIT_CONFIG"
                    | "HOME"
                    | "XDG_CONFIG_HOME"
                    | "GIT_DIR"
            )
        })
        .map(|e| e.name.clone())
}

/// `git NAME …` where NAME is an alias of the user's git configuration: the findings of
/// what it runs — `git VALUE …` for a plain alias, each command of VALUE for a `!` shell
/// alias — each reason naming the alias (new-user pass nu58: `git undo` with `undo = reset
/// --hard` ran without approval). `false` when NAME is no such alias.
fn git_config_alias(seg: &Segment, sub: usize, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) -> bool {
    // git's own commands are looked up as typed (`git Reset` is no built-in), aliases
    // whatever the case (attack pass 59, L3).
    if GIT_BUILTINS.contains(&seg.argv[sub].as_str()) {
        return false;
    }
    let name = seg.argv[sub].to_ascii_lowercase();
    let Some(value) = cx.git_aliases.get(&name) else {
        return false;
    };
    let left = cx.alias_budget.get();
    if left == 0 {
        out.push(finding(
            FindingId::GitAlias,
            Decision::Ask,
            format!(
                "git {} is an alias in your git configuration whose expansion is too deep \
                 or too long to check",
                seg.argv[sub]
            ),
        ));
        return true;
    }
    cx.alias_budget.set(left - 1);
    // Each alias is expanded once on the way (git refuses a loop).
    let mut rest = cx.git_aliases.clone();
    rest.remove(&name);
    let before = out.len();
    match value.trim_start().strip_prefix('!') {
        Some(script) => {
            // git runs `sh -c 'VALUE "$@"' VALUE ARGS…`: the arguments typed after the
            // alias are read where the script uses them (attack pass 59: `rsb = !git
            // reset` with `git rsb --hard`, `fgit = !f() { git "$@"; }; f`).
            let args = &seg.argv[sub + 1..];
            let all = args
                .iter()
                .map(|a| sh_quote(a))
                .collect::<Vec<_>>()
                .join(" ");
            let mut text = format!("{script} \"$@\"")
                .replace("\"$@\"", &all)
                .replace("$@", &all)
                .replace("\"$*\"", &sh_quote(&args.join(" ")))
                .replace("$*", &all);
            for (i, a) in args.iter().enumerate().take(9).rev() {
                let q = sh_quote(a);
                text = text
                    .replace(&format!("\"${{{}}}\"", i + 1), &q)
                    .replace(&format!("${{{}}}", i + 1), &q)
                    .replace(&format!("\"${}\"", i + 1), &q)
                    .replace(&format!("${}", i + 1), &q);
            }
            let parsed = crate::parse::parse_script(&text);
            let inner = DangerCtx {
                segments: &parsed.segments,
                cwds: cx.cwds,
                home: cx.home,
                git_aliases: &rest,
                alias_budget: cx.alias_budget,
                moved: cx.moved,
                start: cx.start,
                links: cx.links,
                git_env: cx.git_env,
            };
            for i in 0..parsed.segments.len() {
                out.extend(dangerous(i, &inner));
            }
        }
        None => {
            if let Some(expanded) = plain_alias_expansion(seg, sub, value) {
                let inner = DangerCtx {
                    segments: cx.segments,
                    cwds: cx.cwds,
                    home: cx.home,
                    git_aliases: &rest,
                    alias_budget: cx.alias_budget,
                    moved: cx.moved,
                    start: cx.start,
                    links: cx.links,
                    git_env: cx.git_env,
                };
                git_check(&expanded, &inner, out);
            }
        }
    }
    for f in &mut out[before..] {
        f.reason = format!(
            "git {} is an alias in your git configuration for `{value}`: {}",
            seg.argv[sub], f.reason
        );
    }
    true
}

/// `seg` with its git subcommand (at `sub`) replaced by the plain (not `!`) alias `value`,
/// as git runs it: `git GLOBALS VALUE… ARGS…`. `None` when the value parses to no command.
fn plain_alias_expansion(seg: &Segment, sub: usize, value: &str) -> Option<Segment> {
    let parsed = crate::parse::parse_script(&format!("git {value}"));
    let first = parsed.segments.first()?;
    let mut expanded = seg.clone();
    expanded.argv = seg.argv[..sub]
        .iter()
        .chain(first.argv.iter().skip(1))
        .chain(seg.argv[sub + 1..].iter())
        .cloned()
        .collect();
    expanded.dynamic_args.clear();
    Some(expanded)
}

/// Why `git NAME ARGS` is known-safe when NAME is a plain alias of the user's git
/// configuration (`lg = log --graph --oneline`) whose expansion is (new-user pass nu60:
/// `git lg` was an unknown command, refused in `untrusted` mode). Aliases of aliases are
/// followed up to 8 deep; a `!` alias is never known-safe.
pub(crate) fn known_safe_git_alias(
    seg: &Segment,
    aliases: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    if danger_name(seg).as_deref() != Some("git") || seg.runtime_args {
        return None;
    }
    let mut seg = seg.clone();
    let mut chain = Vec::new();
    for _ in 0..8 {
        let (Some(sub), _) = git_subcommand(&seg) else {
            return None;
        };
        if !seg.is_static(sub) || GIT_BUILTINS.contains(&seg.argv[sub].as_str()) {
            return None;
        }
        let name = seg.argv[sub].to_ascii_lowercase();
        let value = aliases.get(&name)?;
        if value.trim_start().starts_with('!') || git_alias_defined(&seg, &seg.argv[1..sub], &name)
        {
            return None;
        }
        chain.push(format!("git {name} is an alias for `{value}`"));
        seg = plain_alias_expansion(&seg, sub, value)?;
        if let Some(why) = known_safe(&seg) {
            return Some(format!("{}: {why}", chain.join("; ")));
        }
    }
    None
}

/// Whether the variable `name` changes what git reads or runs: its `GIT_*` variables
/// (`GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_KEY_n`, …), the `HOME` and
/// `XDG_CONFIG_HOME` its global configuration is found under, and the editor and pager
/// variables it runs ([`GIT_CODE_VARIABLES`]).
pub(crate) fn git_environment(name: &str) -> bool {
    name.starts_with("GIT_")
        || matches!(name, "HOME" | "XDG_CONFIG_HOME")
        || GIT_CODE_VARIABLES.contains(&name)
}

/// Where the git command of `seg` reads configuration this policy does not read, and which
/// the command line may have written (fresh pass fix-git: `GIT_CONFIG_GLOBAL=./evil git
/// gc`, `HOME=$PWD git gc` with `[gc] reflogExpire = now` in a file of its own ran
/// unasked, while `git -c gc.reflogExpire=now gc` asked): `GIT_CONFIG_GLOBAL`,
/// `GIT_CONFIG_SYSTEM` or `GIT_CONFIG` naming a file other than `/dev/null`; `HOME` or
/// `XDG_CONFIG_HOME` other than the user's own (`$HOME`, `~`, `~/.config`); an
/// `include.path`/`includeIf.*` key given with `-c`, `--config-env`, `GIT_CONFIG_KEY_n` or
/// `GIT_CONFIG_PARAMETERS`. Such a file may set a gc expiry (asked about for a git command
/// that is not a known-safe read) or an alias ([`git_config_moved`]).
fn git_config_elsewhere(seg: &Segment, sub: usize, home: Option<&str>) -> Option<String> {
    let include = |k: &str| {
        let k = k.to_ascii_lowercase();
        k.starts_with("include.") || k.starts_with("includeif.")
    };
    if let Some(kv) = git_config_options(&seg.argv[1..sub]).find(|kv| include(kv)) {
        return Some(format!("-c {kv}"));
    }
    let own_home = |v: &str, rest: &str| {
        [
            format!("$HOME{rest}"),
            format!("${{HOME}}{rest}"),
            format!("~{rest}"),
        ]
        .iter()
        .any(|h| h == v)
            || home.is_some_and(|h| format!("{}{rest}", h.trim_end_matches('/')) == v)
    };
    seg.env
        .iter()
        .find(|e| {
            let v = e.value.trim_end_matches('/');
            match e.name.as_str() {
                "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM" | "GIT_CONFIG" => {
                    e.dynamic || e.value != "/dev/null"
                }
                "HOME" => !own_home(v, ""),
                "XDG_CONFIG_HOME" => !own_home(v, "/.config"),
                n if n.starts_with("GIT_CONFIG_KEY_") => e.dynamic || include(&e.value),
                "GIT_CONFIG_PARAMETERS" => {
                    e.dynamic
                        || e.value
                            .split(['\'', '"', ' ', '='])
                            .any(|w| !w.is_empty() && include(w))
                }
                _ => false,
            }
        })
        .map(|e| format!("{}={}", e.name, e.value))
}

fn git_check(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    // `git reset --hard --help` shows a manual page and changes nothing (nu65).
    if seg.argv.iter().skip(1).any(|a| a == "--help") {
        return;
    }
    // What the script assigns before (or around) it reaches git as its own prefix
    // assignments would (`export GIT_CONFIG_PARAMETERS=…; git gc`, `HOME=$PWD; git gc`).
    let with_script_env;
    let seg = if cx.git_env.is_empty() {
        seg
    } else {
        let mut s = seg.clone();
        s.env = cx.git_env.iter().chain(&seg.env).cloned().collect();
        with_script_env = s;
        &with_script_env
    };
    let (Some(sub), _) = git_subcommand(seg) else {
        if seg.runtime_args {
            // `echo reset --hard | xargs git` (attack pass 61).
            out.push(finding(
                FindingId::GitDiscardChanges,
                Decision::Ask,
                "git's subcommand arrives at run time: it may discard uncommitted work",
            ));
        }
        return;
    };
    if git_alias_defined(seg, &seg.argv[1..sub], &seg.argv[sub]) {
        out.push(finding(
            FindingId::GitAlias,
            Decision::Ask,
            format!(
                "git {} is an alias this command line defines: what it runs is not checked",
                seg.argv[sub]
            ),
        ));
        return;
    }
    if git_config_alias(seg, sub, cx, out) {
        return;
    }
    git_command_values(seg, sub, cx, out);
    if let Some(key) = (seg.argv[sub] == "config")
        .then(|| git_config_sets_code(&seg.argv[sub + 1..]))
        .flatten()
    {
        // `--global`/`--system`/`--file`: not the repository's config, whose private copy
        // the sandbox gives the command (new-user pass 234 #4: the approval spoke of that
        // copy, and the approved `git config --global core.editor vim` then failed on the
        // read-only `~/.gitconfig`).
        let other_file = seg.argv[sub + 1..]
            .iter()
            .take_while(|a| *a != "--")
            .find(|a| {
                matches!(a.as_str(), "--global" | "--system" | "-f") || a.starts_with("--file")
            });
        let why = match other_file {
            Some(o) => format!(
                "git config {o} sets {key} in a config file every later git command reads, \
                 on the host too, which would run it unchecked; in the sandbox that file stays \
                 read-only (~/.gitconfig, /etc/gitconfig) unless the profile grants it, so \
                 the command fails there: to set it, run it outside cordon"
            ),
            None => format!(
                "git config sets {key}, which a later git command of this run would run \
                 unchecked (the sandbox's copy of the config takes it at once); the edit is \
                 not kept after the run (cordon merges back branch, remote and user keys \
                 only): to keep it, run it outside cordon"
            ),
        };
        out.push(finding(FindingId::GitAlias, Decision::Ask, why));
    }
    if !GIT_BUILTINS.contains(&seg.argv[sub].as_str()) {
        if let Some(how) = git_config_moved(seg, &seg.argv[1..sub], cx.moved) {
            out.push(finding(
                FindingId::GitAlias,
                Decision::Ask,
                format!(
                    "git {} is no git command and its configuration is not the one read \
                     ({how}): an alias there is not checked",
                    seg.argv[sub]
                ),
            ));
            return;
        }
    }
    // A read-only command (`git status`, `git log`) runs no gc: left to the sandbox, as
    // before (attack pass 59's twin).
    if !git_safe(seg) {
        if let Some(how) = git_config_elsewhere(seg, sub, cx.home) {
            out.push(finding(
                FindingId::GitDiscardChanges,
                Decision::Ask,
                format!(
                    "git reads configuration this policy does not read ({how}), which the \
                     command line may have written: a gc expiry there lets its garbage \
                     collection (a `git gc`, or the automatic one after a commit or fetch) \
                     delete unreachable commits and the reflog entries that recover them"
                ),
            ));
        }
    }
    let args: Vec<&str> = seg.argv[sub + 1..].iter().map(String::as_str).collect();
    let short = |c: char| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
    };
    if let Some(why) = git_discards(seg, sub, &args) {
        out.push(finding(FindingId::GitDiscardChanges, Decision::Ask, why));
        return;
    }
    match seg.argv[sub].as_str() {
        // `send-pack` is push's plumbing: the same options rewrite and delete remote refs
        // (attack pass 188 F5: `git send-pack --force . main` ran unasked); `--prune`
        // deletes the remote refs that have no local counterpart, as `--delete` does.
        // `http-push` is the dumb-HTTP pusher, with the same `--force` (attack pass 214).
        "push" | "send-pack" | "http-push" => {
            // Options that rewrite remote history (parse-options: `--force-w`, `--mirr`
            // work, verified with git 2.47; `--forc` is ambiguous there and fails, so
            // counting it costs nothing).
            // `--force-with-lease` alone overwrites only what the pusher last saw: asked
            // about, not forbidden (new-user pass nu62: the everyday push after a rebase
            // was refused outright); `--force`, `-f`, `--mirror` and `+ref` are forbidden.
            let lease = any_long_option(
                &args,
                &[LongOption::abbrev("force-with-lease").except(&["force"])],
            );
            let hard = short('f')
                || any_long_option(
                    &args,
                    &[LongOption::abbrev("force"), LongOption::abbrev("mirror")],
                )
                || args.iter().any(|a| {
                    (a.starts_with('+') && a.len() > 1) || (!a.starts_with('-') && a.contains(":+"))
                });
            let configured = git_push_configured(seg, sub);
            if hard || matches!(configured, Some((Decision::Forbid, _))) {
                out.push(finding(
                    FindingId::GitForcePush,
                    Decision::Forbid,
                    configured.filter(|_| !hard).map_or(
                        "git push --force rewrites remote history".into(),
                        |(_, why)| why,
                    ),
                ));
            } else if let Some((_, why)) = configured {
                out.push(finding(FindingId::GitForcePush, Decision::Ask, why));
            } else if lease {
                out.push(finding(
                    FindingId::GitForcePush,
                    Decision::Ask,
                    "git push --force-with-lease rewrites remote history (if the remote is \
                     still what was last fetched)",
                ));
            } else if short('d')
                || any_long_option(
                    &args,
                    &[LongOption::abbrev("delete"), LongOption::abbrev("prune")],
                )
                || args.iter().any(|a| a.starts_with(':') && a.len() > 1)
            {
                out.push(finding(
                    FindingId::GitPushDelete,
                    Decision::Ask,
                    "git push deletes a remote ref",
                ));
            }
        }
        // A remote whose pushes mirror (delete and force-update every remote ref), or a
        // push refspec set in the configuration: a later plain `git push` is forced
        // (attack pass 197 B6: `git remote add --mirror=push m …; git push m`).
        "remote"
            if args.first() == Some(&"add")
                && any_long_option(&args, &[LongOption::abbrev("mirror")]) =>
        {
            out.push(finding(
                FindingId::GitForcePush,
                Decision::Ask,
                "git remote add --mirror makes a later push to it rewrite and delete remote refs",
            ))
        }
        "config" => {
            if let Some(key) = args.iter().find(|a| git_push_config_key(a)) {
                out.push(finding(
                    FindingId::GitForcePush,
                    Decision::Ask,
                    format!(
                        "git config sets {key}: a later push may rewrite or delete remote refs"
                    ),
                ));
            }
        }
        "reset" if any_long_option(&args, &[LongOption::abbrev("hard")]) => out.push(finding(
            FindingId::GitResetHard,
            Decision::Ask,
            "git reset --hard discards uncommitted changes",
        )),
        "clean" => {
            // Without `-f` too: `clean.requireForce=false` — set by `-c`, by
            // `GIT_CONFIG_COUNT`/`GIT_CONFIG_PARAMETERS`, or in a config file the policy does
            // not read — makes it delete all the same (nu21 K8, attack pass 43 J1). Asking
            // about one that git would refuse costs an approval, nothing more.
            let dx = short('d') || short('x') || short('X');
            if dx && !git_clean_dry_run(&args) {
                out.push(finding(
                    FindingId::GitClean,
                    Decision::Ask,
                    "git clean with -d/-x deletes untracked files irrecoverably",
                ));
            }
        }
        _ => {}
    }
}

/// Whether git configuration key `key` (any case, `=VALUE` allowed) is a remote's push
/// refspec or mirror setting.
fn git_push_config_key(key: &str) -> bool {
    let k = key.split('=').next().unwrap_or("").to_ascii_lowercase();
    k.starts_with("remote.") && (k.ends_with(".push") || k.ends_with(".mirror"))
}

/// Whether the `git … push` of `seg` (subcommand at `sub`) is forced by configuration or
/// may be, with why (attack pass 197 B6): `-c remote.X.push=+…` or `-c remote.X.mirror=…`
/// force it (forbidden, as `--force`/`--mirror`); such a key with a value known only at
/// run time (`--config-env`, a dynamic word), configuration from the environment
/// (`GIT_CONFIG_COUNT`/`_KEY_n`/`_VALUE_n`, `GIT_CONFIG_PARAMETERS`, another config file)
/// or a refspec known only at run time (`"$(echo +HEAD:main)"`) may force it (asked).
fn git_push_configured(seg: &Segment, sub: usize) -> Option<(Decision, String)> {
    let globals = &seg.argv[1..sub];
    for kv in git_config_options(globals) {
        if !git_push_config_key(kv) {
            continue;
        }
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let forced = if k.to_ascii_lowercase().ends_with(".mirror") {
            !matches!(
                v.to_ascii_lowercase().as_str(),
                "false" | "no" | "off" | "0" | ""
            )
        } else {
            v.starts_with('+') || v.contains(":+")
        };
        let env = globals.iter().any(|g| g.starts_with("--config-env"));
        if forced && !env {
            return Some((
                Decision::Forbid,
                format!("git -c {kv} push rewrites remote history"),
            ));
        }
        if env {
            return Some((
                Decision::Ask,
                format!("git --config-env {kv} push may rewrite remote history"),
            ));
        }
    }
    if (1..sub).any(|i| !seg.is_static(i)) {
        return Some((
            Decision::Ask,
            "git's options before push are known only at run time: it may be forced".into(),
        ));
    }
    if let Some(e) = seg.env.iter().find(|e| {
        e.name.starts_with("GIT_CONFIG_")
            || matches!(e.name.as_str(), "GIT_CONFIG" | "GIT_CONFIG_PARAMETERS")
    }) {
        return Some((
            Decision::Ask,
            format!(
                "{} gives git configuration this policy does not read: the push may be forced",
                e.name
            ),
        ));
    }
    if let Some(i) = (sub + 1..seg.argv.len()).find(|&i| !seg.is_static(i)) {
        return Some((
            Decision::Ask,
            format!(
                "git push is given {} known only at run time: it may be a forced refspec",
                seg.argv[i]
            ),
        ));
    }
    None
}

/// Why git subcommand `seg.argv[sub]` with arguments `args` may discard uncommitted work,
/// if it may (attack pass 61): `git checkout` of paths (`--`, `.`, a glob or `:` pathspec,
/// `--pathspec-from-file`) or with `-f`/`--merge`/`--ours`/`--theirs`; `git restore` unless
/// it only unstages (`--staged` without `--worktree`); `git switch -f`/`--discard-changes`;
/// `git stash drop`/`clear`; and any subcommand or option git would read that is known only
/// at run time: a dynamic subcommand, `xargs git …` (arguments appended from input), or a
/// dynamic word among the arguments of `reset`, `clean`, `checkout`, `restore` or `stash`
/// (`git reset $MODE` may be `--hard`). `git reset --hard` and `git clean -fdx` themselves
/// have their own findings.
fn git_discards(seg: &Segment, sub: usize, args: &[&str]) -> Option<String> {
    let name = seg.argv[sub].as_str();
    if !seg.is_static(sub) {
        return Some(format!(
            "git's subcommand is known only at run time ({name}): it may discard uncommitted work"
        ));
    }
    // A dynamic word that is the value of an option naming a branch or a message
    // (`git checkout -b "$B"`, `git stash push -m "$M"`) cannot become a path or an option.
    let dynamic_arg = (sub + 1..seg.argv.len()).any(|i| {
        let names_value = i > sub + 1
            && matches!(
                seg.argv[i - 1].as_str(),
                "-b" | "-B" | "--orphan" | "-m" | "--message"
            );
        !seg.is_static(i) && !names_value
    });
    let hidden = |reads_dynamic: bool| {
        if seg.runtime_args {
            Some(format!(
                "git {name} gets more arguments at run time: it may discard uncommitted work"
            ))
        } else if reads_dynamic && dynamic_arg {
            Some(format!(
                "git {name} has an argument known only at run time: it may discard uncommitted work"
            ))
        } else {
            None
        }
    };
    // Attack pass 214 #3: `git -c gc.pruneExpire=now -c gc.reflogExpireUnreachable=now gc`
    // (or any command whose automatic gc runs) deleted an unreachable commit for good,
    // while `git gc --prune=now` asked. Given in `-c`, `GIT_CONFIG_KEY_n` or
    // `GIT_CONFIG_PARAMETERS` (a key there known only at run time may be one).
    let prune_key = |k: &str| {
        let k = k.to_ascii_lowercase();
        k.starts_with("gc.")
            && (k.ends_with("pruneexpire")
                || k.ends_with(".reflogexpire")
                || k.ends_with(".reflogexpireunreachable"))
    };
    let prune_setting = git_config_options(&seg.argv[1..sub])
        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k.to_string()))
        .find(|k| prune_key(k))
        .or_else(|| {
            seg.env.iter().find_map(|e| {
                let named = (e.name.starts_with("GIT_CONFIG_KEY_")
                    && (e.dynamic || prune_key(&e.value)))
                    || (e.name == "GIT_CONFIG_PARAMETERS"
                        && (e.dynamic || e.value.to_ascii_lowercase().contains("gc.")));
                named.then(|| e.name.clone())
            })
        });
    if let Some(k) = prune_setting {
        return Some(format!(
            "git with {k} set on the command line: its garbage collection (a `git gc`, or the \
             automatic one after a commit or fetch) may delete unreachable commits and the \
             reflog entries that recover them"
        ));
    }
    let options: Vec<&str> = args
        .iter()
        .copied()
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-') && *a != "-")
        .collect();
    let long = |names: &[LongOption]| any_long_option(&options, names);
    let short = |c: char| {
        options
            .iter()
            .any(|a| !a.starts_with("--") && a[1..].contains(c))
    };
    // `-f`/`--force` (or an abbreviation), which every subcommand below spells alike.
    let force = || short('f') || long(&[LongOption::abbrev("force")]);
    let pathspec = |a: &&str| {
        *a == "." || a.ends_with("/.") || a.starts_with(':') || a.contains(['*', '?', '['])
    };
    match name {
        "checkout" => {
            let paths_after_dashdash = args
                .iter()
                .position(|a| *a == "--")
                .is_some_and(|i| i + 1 < args.len());
            // Operands that are not an option's value: a second one is a path (`git
            // checkout HEAD f.txt`), and so is one that looks like a file (`f.txt`: a
            // branch or tag seldom ends in a dot and letters). Attack pass 62.
            let mut operands = Vec::new();
            let mut k = 0;
            while k < args.len() && args[k] != "--" {
                let a = args[k];
                if matches!(
                    a,
                    "-b" | "-B" | "--orphan" | "--conflict" | "--pathspec-from-file"
                ) {
                    k += 1;
                } else if !a.starts_with('-') {
                    operands.push(a);
                }
                k += 1;
            }
            // A source file's extension, not a dotted branch name (new-user pass nu64:
            // `git checkout 2.x`, `fix.typo`, `renovate/react-18.x` were asked about).
            let file_like = |a: &str| {
                a.rsplit_once('.').is_some_and(|(stem, ext)| {
                    !stem.is_empty()
                        && !stem.ends_with('.')
                        && SOURCE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
                })
            };
            // `-B NAME [START]` resets NAME to START (HEAD) when it exists: the commits only
            // it reached are left unreachable, as after `git branch -f` (`-b` refuses an
            // existing branch).
            if short('B') {
                return Some(
                    "git checkout -B resets the branch to the start point if it exists: \
                     commits only it reached are left unreachable"
                        .to_string(),
                );
            }
            if paths_after_dashdash
                || operands.len() >= 2
                || operands.iter().any(|a| file_like(a))
                || args.iter().any(|a| !a.starts_with('-') && pathspec(a))
                || short('f')
                || long(&[
                    LongOption::abbrev("force"),
                    LongOption::abbrev("ours"),
                    LongOption::abbrev("theirs"),
                    LongOption::abbrev("pathspec-from-file"),
                ])
            {
                return Some(
                    "git checkout of paths (or forced) overwrites their uncommitted changes"
                        .to_string(),
                );
            }
            hidden(true)
        }
        "restore" => {
            let staged = short('S') || long(&[LongOption::abbrev("staged")]);
            let worktree = short('W') || long(&[LongOption::abbrev("worktree")]);
            if !staged || worktree {
                return Some(
                    "git restore overwrites the uncommitted changes of the files it restores"
                        .to_string(),
                );
            }
            hidden(true)
        }
        "switch" => {
            if short('f')
                || long(&[
                    LongOption::abbrev("force"),
                    LongOption::abbrev("discard-changes"),
                ])
            {
                return Some("git switch --discard-changes throws away uncommitted changes".into());
            }
            // `-C`/`--force-create` resets an existing branch, as `git checkout -B` does
            // (`-c` refuses an existing one).
            if short('C') || long(&[LongOption::abbrev("force-create")]) {
                return Some(
                    "git switch -C resets the branch to the start point if it exists: commits \
                     only it reached are left unreachable"
                        .into(),
                );
            }
            hidden(false)
        }
        "stash" => match args.first() {
            Some(&("drop" | "clear")) => Some(format!(
                "git stash {} deletes stashed work irrecoverably",
                args[0]
            )),
            _ => hidden(true),
        },
        "reset" if long(&[LongOption::abbrev("merge")]) => {
            Some("git reset --merge throws away staged changes and the files they add".into())
        }
        // Any clean that is not a dry run deletes untracked files (`-f` alone too: attack
        // pass 62); `-d`/`-x` have their own finding below.
        "clean" if !(git_clean_dry_run(args) || short('d') || short('x') || short('X')) => {
            Some("git clean deletes untracked files irrecoverably".into())
        }
        "reset" | "clean" => hidden(true),
        "checkout-index" if force() => {
            Some("git checkout-index --force overwrites uncommitted changes".into())
        }
        "read-tree" if short('u') => Some(
            "git read-tree -u overwrites the work tree (and --reset the staged changes)".into(),
        ),
        // `--check`, `--stat`, `--numstat`, `--summary` only report, unless `--apply`
        // (nu65: `git apply --check -R x.patch` was asked about).
        "apply"
            if (short('R') || long(&[LongOption::abbrev("reverse")]))
                && (long(&[LongOption::exact("apply")])
                    || !long(&[
                        LongOption::exact("check"),
                        LongOption::exact("stat"),
                        LongOption::exact("numstat"),
                        LongOption::exact("summary"),
                    ])) =>
        {
            Some("git apply --reverse undoes changes in the work tree".into())
        }
        // Drops the entries from the index whether or not the files are still there: what
        // was staged for them goes too (`--force-untracked-cache` is another option).
        "update-index" if long(&[LongOption::abbrev("force-remove")]) => Some(
            "git update-index --force-remove drops files from the index, their staged \
             changes with them"
                .into(),
        ),
        "rm" if force() => Some("git rm --force deletes files with uncommitted changes".into()),
        "worktree" if args.first() == Some(&"remove") && force() => {
            Some("git worktree remove --force deletes a work tree with uncommitted changes".into())
        }
        "update-ref" if short('d') || options.contains(&"--stdin") => {
            Some("git update-ref -d deletes a ref (a stash, a branch) without the reflog".into())
        }
        // The all-zero object id as the new value deletes the ref as `-d` does (attack pass
        // 200 P4: `git update-ref HEAD 0000…` deleted the branch); a value known only at
        // run time may be it.
        "update-ref"
            if args
                .iter()
                .any(|a| a.len() >= 40 && a.bytes().all(|b| b == b'0')) =>
        {
            Some("git update-ref to the all-zero object id deletes the ref".into())
        }
        // `git update-ref REF NEWVALUE`: the ref moves wherever it was, as with `git branch
        // -f` (`--no-deref` only picks the ref moved).
        "update-ref"
            if args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .count()
                .saturating_sub(usize::from(short('m') || options.contains(&"--message")))
                >= 2 =>
        {
            Some("git update-ref moves a ref: commits only it reached are left unreachable".into())
        }
        "update-ref" => hidden(true),
        "symbolic-ref" if short('d') || long(&[LongOption::abbrev("delete")]) => {
            Some("git symbolic-ref --delete deletes a symbolic ref (HEAD)".into())
        }
        // `git symbolic-ref NAME REF` with NAME a branch or tag replaces it with a link to
        // REF: the commits only it reached are left unreachable (attack pass 246 #1).
        // `HEAD` itself is what `git checkout` moves, and keeps a reflog.
        "symbolic-ref"
            if {
                let ops: Vec<&&str> = args.iter().filter(|a| !a.starts_with('-')).collect();
                ops.len() >= 2 && *ops[0] != "HEAD"
            } =>
        {
            Some(
                "git symbolic-ref NAME REF replaces the ref NAME with a link to REF: commits \
                 only NAME reached are left unreachable"
                    .into(),
            )
        }
        // `--force` lets a stream reset branches and tags that are not fast-forwards.
        "fast-import" if long(&[LongOption::abbrev("force")]) => Some(
            "git fast-import --force moves branches and tags wherever the stream says: \
             commits only they reached are left unreachable"
                .into(),
        ),
        "replace" if force() => Some(
            "git replace --force overwrites an existing replacement ref: the object it \
             replaced with is left unreachable"
                .into(),
        ),
        // Unreachable objects younger than the default two weeks are what recovers a
        // dropped stash or a reset branch (attack pass 200 P4).
        // Without `--expire`, `git prune` deletes every unreachable loose object (attack pass
        // 219 #2: a staged blob and a dropped stash were gone for good, while `--expire=now`
        // asked); `-n` only lists them.
        "prune" if !(short('n') || long(&[LongOption::abbrev("dry-run")])) => {
            Some("git prune deletes unreachable objects that may be recent work".into())
        }
        // `repack -a -d` drops unreachable objects that were packed, at once, unless they
        // are kept loose (`-A`), kept packed (`--keep-unreachable`) or kept in a cruft pack
        // (`--cruft`); `--unpack-unreachable` and `--cruft-expiration` with a date drop
        // those older than it (attack pass 219 #2).
        "repack"
            if options.iter().any(|a| {
                a.contains('=')
                    && (LongOption::abbrev("unpack-unreachable").matches(a)
                        || LongOption::abbrev("cruft-expiration").matches(a))
            }) || ((short('a') || long(&[LongOption::abbrev("all")]))
                && short('d')
                && !short('A')
                && !long(&[
                    LongOption::abbrev("keep-unreachable"),
                    LongOption::abbrev("cruft"),
                ])) =>
        {
            Some(
                "git repack -a -d deletes unreachable packed objects that may be recent work"
                    .into(),
            )
        }
        // Set in the run's copy of the config, a gc expiry key takes effect for every later
        // git command of the run, its automatic gc included (re-probe 217 #5: `git config
        // gc.pruneExpire now && git gc` deleted an unreachable commit).
        "config"
            if args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .any(|a| prune_key(a))
                && args.iter().filter(|a| !a.starts_with('-')).count() >= 2 =>
        {
            Some(
                "git config sets a gc expiry key: a later gc in this run (also the automatic \
                 one) may delete unreachable commits and the reflog entries that recover them"
                    .into(),
            )
        }
        "gc" if options
            .iter()
            .any(|a| a.contains('=') && LongOption::abbrev("prune").matches(a)) =>
        {
            Some("git gc --prune=DATE deletes unreachable objects that may be recent work".into())
        }
        "submodule" if args.first() == Some(&"deinit") && force() => {
            Some("git submodule deinit --force discards the submodules' work trees".into())
        }
        "reflog" if matches!(args.first(), Some(&("delete" | "expire"))) => Some(format!(
            "git reflog {} removes what recovers lost commits and stashes",
            args[0]
        )),
        // Attack pass C-A: each goes back to before the operation, as `git reset --merge`
        // does: the resolutions and edits made since it stopped go with it. `--quit` keeps
        // the index and work tree.
        "merge" | "rebase" | "cherry-pick" | "revert" | "am"
            if long(&[LongOption::abbrev("abort")]) =>
        {
            Some(format!(
                "git {name} --abort resets the index and work tree to before the {name}: the \
                 conflict resolutions and changes made since it stopped are thrown away"
            ))
        }
        "rebase" | "cherry-pick" | "revert" | "am" if long(&[LongOption::abbrev("skip")]) => {
            Some(format!(
                "git {name} --skip resets the index and work tree past the current commit: its \
                 conflict resolution and changes are thrown away"
            ))
        }
        // `-D` (`-d --force`) deletes a branch not merged anywhere, with its reflog: its
        // commits are left unreachable, as after `git update-ref -d`. `-d` alone refuses a
        // branch not merged into its upstream or HEAD, so nothing is lost.
        "branch"
            if (short('D')
                || ((short('d') || long(&[LongOption::abbrev("delete")])) && force())) =>
        {
            Some(
                "git branch -D deletes a branch whether or not it is merged, and its reflog: its \
                 unmerged commits are lost"
                    .into(),
            )
        }
        // `-M [OLD] NEW` / `-C [OLD] NEW` (`-m`/`-c` with `--force`) rename or copy onto
        // a branch that may exist: NEW's commits and reflog are replaced (attack pass 213
        // #4: `git branch -M foo master` lost master's unmerged commit). With one operand
        // the current branch is renamed or copied onto NEW, which is as destructive when
        // NEW exists (attack pass 238 #1: `git branch -M feature` lost feature's work);
        // whether it exists is not known from the command line, so both forms ask.
        "branch"
            if (short('M')
                || short('C')
                || ((short('m')
                    || short('c')
                    || long(&[LongOption::abbrev("move"), LongOption::abbrev("copy")]))
                    && force()))
                && args.iter().any(|a| !a.starts_with('-')) =>
        {
            Some(
                "git branch -M/-C [OLD] NEW overwrites the branch NEW if it exists, with its \
                 reflog: its unmerged commits are lost"
                    .into(),
            )
        }
        // `-f NAME [START]` moves an existing branch to START (HEAD without one); `-f`
        // with `-m`/`-c` and one operand renames or copies the current branch onto NAME.
        // `git branch NAME` alone refuses an existing branch.
        "branch" if force() && args.iter().any(|a| !a.starts_with('-')) => Some(
            "git branch --force overwrites the branch it names if it exists (set to the \
                 start point or HEAD, or renamed or copied onto): commits only it reached are \
                 left unreachable"
                .into(),
        ),
        // The same refspec given as configuration on the command line (`git -c
        // remote.o.fetch=+refs/heads/main:refs/heads/feat fetch o`: attack pass 246 #1).
        "fetch" | "pull"
            if seg.argv[1..sub]
                .iter()
                .enumerate()
                .filter_map(|(i, w)| {
                    if w == "-c" {
                        seg.argv.get(i + 2).map(String::as_str)
                    } else {
                        w.strip_prefix("-c").filter(|v| !v.is_empty())
                    }
                })
                .filter_map(|kv| kv.split_once('='))
                .any(|(k, v)| {
                    let k = k.to_ascii_lowercase();
                    k.starts_with("remote.")
                        && k.ends_with(".fetch")
                        && cordon_policy::gitconfig::forces_a_local_ref(v, false)
                }) =>
        {
            Some(format!(
                "git {name} with a forced refspec in remote.*.fetch moves the local ref it \
                 names: commits only it reached are left unreachable"
            ))
        }
        // A forced refspec (`+SRC:DST`, or any `SRC:DST` with `--force`) moves the local
        // ref DST wherever it was, as `git branch -f DST SRC` does (`git fetch . +HEAD~3:
        // main`); remote-tracking refs (`refs/remotes/…`) hold no work of their own.
        "fetch" | "pull"
            if args
                .iter()
                .take_while(|a| **a != "--")
                .filter(|a| !a.starts_with('-'))
                .skip(1)
                .any(|r| cordon_policy::gitconfig::forces_a_local_ref(r, force())) =>
        {
            Some(format!(
                "git {name} with a forced refspec moves the local ref it names: commits only it \
                 reached are left unreachable"
            ))
        }
        // A tag keeps no reflog: deleting it (`-d`) or moving it (`-f NAME [COMMIT]`)
        // leaves the commits only it reached unreachable, as `git branch -D`/`-f` do.
        // Listing (`git tag`, `-l`, `-n`) and making a new tag (refused if it exists) stay
        // as they are.
        "tag"
            if short('d')
                || long(&[LongOption::abbrev("delete")])
                || (force() && args.iter().any(|a| !a.starts_with('-'))) =>
        {
            Some(
                "git tag -d/--force deletes or moves an existing tag, which keeps no reflog: \
                 commits only it reached are left unreachable"
                    .into(),
            )
        }
        // Fetched tags overwrite local tags of the same name with `--force` (git ≥ 2.20
        // refuses otherwise); `--prune-tags` deletes local tags the remote does not have.
        "fetch" | "pull"
            if (force() && (short('t') || long(&[LongOption::abbrev("tags")])))
                || short('P')
                || long(&[LongOption::abbrev("prune-tags").except(&["prune"])]) =>
        {
            Some(format!(
                "git {name} --force --tags / --prune-tags overwrites or deletes local tags, which \
                 keep no reflog: commits only they reached are left unreachable"
            ))
        }
        "worktree" if args.first() == Some(&"add") && short('B') => Some(
            "git worktree add -B resets the branch to the start point if it exists: commits \
             only it reached are left unreachable"
                .into(),
        ),
        "push" => hidden(false),
        _ => None,
    }
}

/// Whether `git clean` with these arguments only shows what it would remove (`-n`,
/// `--dry-run` or an unambiguous abbreviation, the last of it and `--no-dry-run` winning),
/// read as git's parse-options reads them: options before `--` only, anywhere among the
/// paths; in a short cluster `e` takes the rest (or the next argument) as its pattern, so
/// the `n` of `-en` is a pattern, not a dry run; `--exclude` without `=` takes the next
/// argument. New-user pass nu20, G5: `git clean -fdn` was asked about as deleting files.
fn git_clean_dry_run(args: &[&str]) -> bool {
    let mut dry = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        // Git stops reading options at either (attack pass 43, J1: a `-n` after
        // `--end-of-options` is a path).
        if *a == "--" || *a == "--end-of-options" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            if name.is_empty() {
                continue;
            }
            if "dry-run".starts_with(name) {
                dry = true;
            } else if name
                .strip_prefix("no-")
                .is_some_and(|n| !n.is_empty() && "dry-run".starts_with(n))
            {
                dry = false;
            } else if "exclude".starts_with(name) && !inline {
                // `--e` too: an unambiguous abbreviation (J1: `--e -n` is a pattern).
                it.next();
            }
        } else if let Some(cluster) = a.strip_prefix('-') {
            for (i, c) in cluster.char_indices() {
                match c {
                    'n' => dry = true,
                    'e' => {
                        if i + 1 == cluster.len() {
                            it.next();
                        }
                        break;
                    }
                    _ => {}
                }
            }
        }
    }
    dry
}

fn mode_check(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let a = split_args(seg, "");
    let recursive = a.short.contains('R') || a.has_long(&[RECURSIVE]);
    let has_reference = a.has_long(&[LongOption::abbrev("reference")]);
    let mut ops = a.operands.iter();
    // The first operand is chmod's mode or chown/chgrp's owner spec, unless `--reference`.
    let mode = if has_reference {
        None
    } else {
        ops.next().map(|(_, m)| *m)
    };
    // `chmod -R a+rwx`: a symbolic mode starting with '-' lands in the flags.
    let mode_ww = name == "chmod"
        && (mode.is_some_and(world_writable_mode)
            || a.short.contains("w") && a.short.contains('o'));
    let targets: Vec<(usize, &str)> = ops.copied().collect();
    let critical: Vec<String> = targets
        .iter()
        .filter(|(i, _)| seg.is_static(*i))
        .filter_map(|(_, t)| {
            critical_target(t, cx.cwds, cx.home).or_else(|| {
                (t.starts_with('/')
                    && split_abs(t)
                        .first()
                        .is_some_and(|r| SYSTEM_ALL.contains(&r.as_str())))
                .then(|| format!("system path {t}"))
            })
        })
        .collect();
    if recursive && !critical.is_empty() {
        out.push(finding(
            FindingId::RecursiveOwnerModeSystem,
            Decision::Forbid,
            format!("recursive {name} on {}", critical.join(", ")),
        ));
    } else if mode_ww && recursive {
        out.push(finding(
            FindingId::ChmodWorldWritable,
            Decision::Forbid,
            format!("recursive world-writable chmod {}", mode.unwrap_or("")),
        ));
    } else if mode_ww && !critical.is_empty() {
        out.push(finding(
            FindingId::ChmodWorldWritable,
            Decision::Forbid,
            format!("world-writable chmod on {}", critical.join(", ")),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts() {
        for ok in [
            "1,5p",
            "p",
            "/foo/p",
            "s/a/b/g",
            "$p",
            "10q",
            "1~2p;3,+4d",
            "/a/,/b/{p}",
            "y/ab/cd/",
        ] {
            assert!(sed_script_safe(ok), "{ok}");
        }
        for bad in [
            "w out",
            "s/a/b/w out",
            "s/a/b/e",
            "e ls",
            "1r /etc/passwd",
            "a\\x",
            ":a;ba",
            "s/a/b",
        ] {
            assert!(!sed_script_safe(bad), "{bad}");
        }
    }

    #[test]
    fn modes() {
        assert!(world_writable_mode("777"));
        assert!(world_writable_mode("0777"));
        assert!(world_writable_mode("a+rwx"));
        assert!(world_writable_mode("o+w"));
        assert!(!world_writable_mode("755"));
        assert!(!world_writable_mode("u+x"));
    }

    #[test]
    fn critical_paths() {
        let c = [Cwd::Rel(vec![])];
        for p in [
            "/", "/*", "//", "/.", "~", "~/", "~/*", "$HOME", "..", "../x", "/etc", "/usr/lib",
            "/home/x", "/var",
        ] {
            assert!(critical_target(p, &c, None).is_some(), "{p}");
        }
        for p in [
            "build",
            "./target",
            "/tmp/x",
            "/var/tmp/build",
            "~/proj/target",
            "x/../y",
        ] {
            assert!(critical_target(p, &c, None).is_none(), "{p}");
        }
        let root = [Cwd::Abs(vec![])];
        assert!(critical_target(".", &root, None).is_some());
        assert!(critical_target("*", &root, None).is_some());
    }

    /// R-A4: an abbreviable option is denoted by each non-empty prefix of its name (with or
    /// without `=VALUE`) except the listed exact names of other options; an exact one only by
    /// its name.
    #[test]
    fn long_option_prefixes() {
        let t = LongOption::abbrev("textconv").except(&["text"]);
        for len in 1..=t.name().len() {
            let p = &t.name()[..len];
            assert_eq!(t.matches(&format!("--{p}")), p != "text", "{p}");
            assert_eq!(t.matches(&format!("--{p}=x")), p != "text", "{p}");
        }
        for no in [
            "--",
            "--=x",
            "-t",
            "textconv",
            "--textconvx",
            "--no-textconv",
            "--output",
        ] {
            assert!(!t.matches(no), "{no}");
        }
        let e = LongOption::exact("pre");
        assert!(e.matches("--pre") && e.matches("--pre=cat"));
        assert!(!e.matches("--pr") && !e.matches("--pre-glob") && !e.matches("--pretty"));
    }

    #[test]
    fn confusables() {
        assert_eq!(fold_confusables("rм"), "rm");
        assert_eq!(fold_confusables("ｒｍ"), "rm");
        assert_eq!(fold_confusables("r\u{200B}m"), "rm");
    }
}
