//! Git configuration that points code-running paths into writable places (issue 7 item 3,
//! R-P3).
//!
//! `git config core.hooksPath .githooks` (husky and similar tools) makes git run hooks from a
//! directory of the worktree: a confined command that writes `.githooks/pre-commit` runs
//! code on the host's next commit. At launch, resolution reads the repository's effective
//! configuration — system (`/etc/gitconfig`), global (`~/.gitconfig`), XDG
//! (`~/.config/git/config`), local (`<common dir>/config`), `config.worktree`, and every
//! `include.path` / `includeIf.*.path` target (all conditions followed: over-protecting is
//! safe), and what the invoking environment adds (breaker4 HIGH-3: `$GIT_CONFIG_SYSTEM`,
//! `$GIT_CONFIG_GLOBAL`, `$XDG_CONFIG_HOME/git/config`, `GIT_CONFIG_PARAMETERS`, the
//! `GIT_CONFIG_COUNT` pairs) — with `gix-config`, reading each file through [`FsView::read_small`] (no-follow,
//! non-blocking, regular files only, capped at [`CONFIG_FILE_CAP`]). Every path through
//! which git would run code or load more configuration, wherever it points inside a
//! writable root, becomes a protected (read-only) entry whose reason names the key and the
//! file that set it. [`CODE_KEYS`] is the table of keys and why.

use crate::paths::{canonicalize_lenient, lexical_normalize, FsView, ReadRefusal, CONFIG_FILE_CAP};

mod command_line;
pub mod merge;

/// Whether the fetch refspec `refspec` (`[+]SRC:DST`) force-moves a local ref — a branch
/// or tag wherever it was, as `git branch -f` does — when fetched: forced by its `+` or by
/// `forced` (`git fetch --force`), with a destination outside `refs/remotes/`
/// (remote-tracking refs hold no work of their own). The exec policy asks about such a
/// fetch (given on the command line or as `-c remote.NAME.fetch=…`) and the config merge
/// keeps such a `remote.NAME.fetch` out of the host's file (attack pass 246 #1).
pub fn forces_a_local_ref(refspec: &str, forced: bool) -> bool {
    refspec.split_once(':').is_some_and(|(src, dst)| {
        let dst = dst.trim();
        (src.trim_start().starts_with('+') || forced)
            && !dst.is_empty()
            && !dst.starts_with("refs/remotes/")
    })
}

/// The names git runs as hooks from a hooks directory (githooks(5), git 2.4x, with
/// `.sample` copies excluded): a file of one of these names outside every repository may
/// be what another repository's `core.hooksPath` runs.
pub const GIT_HOOK_NAMES: &[&str] = &[
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// The reason of the protected `<git dir>/config` entry (R-P3); also how the backend finds
/// the files it gives the sandbox as a writable private copy ([`brokered_configs`]).
pub const GIT_CONFIG_REASON: &str = "git config can run code (core.fsmonitor, aliases, filters)";

/// How a [`brokered_configs`] file is seen inside a sandbox of the Linux namespace backend
/// (issue 11 §3): `cordon explain` shows this for it (its access stays read-only: the
/// host file is never written by the command).
pub const BROKERED_COPY: &str = "a writable private copy inside the sandbox: git config \
    edits work there; when the command ends only branch.<name>.{remote,merge,rebase}, \
    remote.<name>.{url,pushurl,fetch}, submodule.<name>.{url,active}, user.{name,email} and \
    init.defaultBranch are merged back into this file (any other changed key is refused \
    with a note)";

/// The keys cordon merges back from a command's private copy of a repository config
/// ([`BROKERED_COPY`]; the merge's allow list: README "Git config edits"), as `cordon
/// explain` lists them.
pub const MERGED_BACK_KEYS: &[&str] = &[
    "branch.<name>.remote",
    "branch.<name>.merge",
    "branch.<name>.rebase",
    "remote.<name>.url",
    "remote.<name>.pushurl",
    "remote.<name>.fetch",
    "submodule.<name>.url",
    "submodule.<name>.active",
    "user.name",
    "user.email",
    "init.defaultBranch",
];

/// [`BROKERED_COPY`] in a few words, for the `environment_context` (`edits` attribute of
/// the protected entry).
pub const BROKERED_COPY_SHORT: &str =
    "private copy; only branch, remote, submodule url/active, user and init.defaultBranch \
     edits are kept";

/// The reason of the protected `.git` of a writable root without a repository (R-P3).
pub const MISSING_GIT_REASON: &str =
    "a new .git would let a later unsandboxed git run planted hooks";

/// Issue 11 §3: `git init` in a workspace without a repository is refused (its `.git` is
/// protected as a whole: a `.git/hooks` made inside would run later on the host). When the
/// command `argv` is `git [-C dir | -c k=v]… init …` and `profile` protects a missing
/// `.git`, the hint that says what to do; `None` otherwise.
pub fn git_init_hint(profile: &crate::ResolvedProfile, argv: &[String]) -> Option<String> {
    let (sub, words) = git_subcommand(argv)?;
    // `git clone URL .` (or into the workspace by its path): the placeholder makes the
    // directory "not empty" (new-user pass nu15 N3).
    let clone_here = sub == "clone" && {
        let args: Vec<&String> = words.filter(|w| !w.starts_with('-')).collect();
        args.len() >= 2 && {
            let dir = Path::new(args[args.len() - 1].as_str());
            dir == Path::new(".") || dir == Path::new("./") || dir == profile.workspace
        }
    };
    if sub == "init" {
        return git_init_target_hint(profile, argv);
    }
    if !clone_here {
        return needs_a_repository_hint(profile, sub);
    }
    // The workspace's own placeholder (the clone's target is the workspace).
    let dotgit = profile.workspace.join(".git");
    missing_git_placeholder(profile)?;
    // The placeholders stay on the host between runs, so a clone outside cordon finds
    // them too (new-user pass nu17 N4): they are named, to remove first.
    let dotcordon = profile.workspace.join(".cordon");
    let mut placeholders = vec![dotgit.to_path_buf()];
    if profile
        .filesystem
        .protected()
        .iter()
        .any(|e| e.path == dotcordon)
    {
        placeholders.push(dotcordon);
    }
    let names: Vec<String> = placeholders
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    Some(format!(
        "`git clone` into the workspace itself finds cordon's protected {} there (the \
             workspace has no repository, and a new .git is protected: its hooks would later \
             run outside the sandbox), so git says the directory is not empty. Clone outside \
             cordon after removing cordon's empty placeholders (`rmdir {}`), or into a \
             subdirectory (`git clone URL NAME`)",
        dotgit.display(),
        names.join(" ")
    ))
}

/// The directory `git [-C dir]… init [options] [dir]` makes its repository in, read
/// against the profile's cwd (`None` for a `--separate-git-dir`, whose `.git` is a file
/// elsewhere, or a `--bare` init, which makes no `.git`).
fn git_init_target(profile: &crate::ResolvedProfile, argv: &[String]) -> Option<PathBuf> {
    let mut dir = profile.cwd.clone();
    let mut words = argv.iter().skip(1);
    loop {
        match words.next()?.as_str() {
            "-C" => dir = crate::paths::lexical_normalize(Path::new(words.next()?), &dir),
            "-c" | "--git-dir" | "--work-tree" | "--namespace" => {
                words.next()?;
            }
            w if w.starts_with('-') => {}
            "init" => break,
            _ => return None,
        }
    }
    let mut target = None;
    while let Some(w) = words.next() {
        match w.as_str() {
            "--bare" => return None,
            w if w.starts_with("--separate-git-dir") => return None,
            "--template" | "-b" | "--initial-branch" | "--object-format" | "--ref-format" => {
                words.next()?;
            }
            "--" => {
                target = words.next().cloned();
                break;
            }
            w if w.starts_with('-') => {}
            w => {
                target = Some(w.to_string());
                break;
            }
        }
    }
    Some(match target {
        Some(t) => crate::paths::lexical_normalize(Path::new(&t), &dir),
        None => dir,
    })
}

/// The git subcommands that work on a repository: failing in a workspace without one,
/// they are told why (new-user pass 176, #5).
const REPOSITORY_SUBCOMMANDS: [&str; 22] = [
    "add",
    "am",
    "blame",
    "branch",
    "checkout",
    "cherry-pick",
    "commit",
    "diff",
    "fetch",
    "log",
    "merge",
    "mv",
    "pull",
    "push",
    "rebase",
    "remote",
    "reset",
    "restore",
    "rm",
    "show",
    "stash",
    "status",
];

/// After a failed repository command (`git status`, `git add`, …; [`REPOSITORY_SUBCOMMANDS`])
/// in a workspace whose `.git` is only cordon's empty placeholder: git's own "not a git
/// repository" does not say that the directory it found is cordon's, nor how to make the
/// repository (new-user pass 176, #5: after a refused `git init`, `git add` failed with no
/// hint). `None` otherwise.
fn needs_a_repository_hint(profile: &crate::ResolvedProfile, sub: &str) -> Option<String> {
    if !REPOSITORY_SUBCOMMANDS.contains(&sub) {
        return None;
    }
    let dotgit = missing_git_placeholder(profile)?;
    Some(format!(
        "the workspace has no git repository: {} is cordon's empty placeholder, which keeps a \
         repository from being created inside the sandbox (its hooks would later run outside \
         it). Run `git init` once outside cordon, or allow it for one run with `cordon run -w \
         {} -- git init`",
        dotgit.display(),
        dotgit.display()
    ))
}

/// The `git init` half of [`git_init_hint`]: said when the `.git` the init would make is
/// one cordon protects as missing (R-P3), naming that one — the workspace's, or a writable
/// grant's (nu23 Q9: a grant's init was told "the workspace has no repository").
fn git_init_target_hint(profile: &crate::ResolvedProfile, argv: &[String]) -> Option<String> {
    let target = git_init_target(profile, argv)?;
    let dotgit = target.join(".git");
    let crate::ResolvedFilesystem::Restricted { entries, .. } = &profile.filesystem else {
        return None;
    };
    entries.iter().find(|e| {
        e.path == dotgit
            && matches!(&e.origin, crate::EntryOrigin::Protected { reason } if reason == MISSING_GIT_REASON)
    })?;
    let whose = if target == profile.workspace {
        "the workspace has no repository".to_string()
    } else {
        format!("{} has no repository", target.display())
    };
    Some(format!(
        "`git init` cannot create {} inside the sandbox: {whose} and a new .git is protected \
         (its hooks would later run outside the sandbox). Run `git init` once outside cordon \
         — afterwards cordon keeps its hooks and config protected and `git config`, `git \
         branch -M`, `git remote add` work inside — or allow it for this run with -w {}",
        dotgit.display(),
        dotgit.display()
    ))
}

/// `git [-C dir | -c k=v | --opt]… SUB REST…` → `(SUB, REST)`; `None` for another program
/// or a git without a subcommand.
fn git_subcommand(argv: &[String]) -> Option<(&str, std::slice::Iter<'_, String>)> {
    let (first, rest) = argv.split_first()?;
    if Path::new(first).file_name()? != "git" {
        return None;
    }
    let mut words = rest.iter();
    let sub = loop {
        match words.next()?.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => {
                words.next()?;
            }
            w if w.starts_with('-') => {}
            w => break w,
        }
    };
    Some((sub, words))
}

/// nu14 HIGH 3: `git worktree remove` (or `move`) cannot finish inside the sandbox: the
/// linked worktree's admin dir (`.git/worktrees/NAME`) holds what cordon protects (R-P3:
/// its `commondir`, `gitdir`, `config.worktree`, and the pinned directory itself), and its
/// `.git` file is read-only. git deletes (or moves) the worktree's files first and fails
/// on those, leaving the worktree registered and half gone. When `argv` (one command of
/// the parsed script) is one of those, the action (`remove` or `move`); `None` otherwise.
///
/// An alias given on the command line (`git -c alias.wr='worktree remove' wr`, or
/// `'!git worktree remove'`) is expanded first (attack pass 36, W1: it ran past the check).
pub fn worktree_remove_action(argv: &[String]) -> Option<&'static str> {
    let expanded = expand_cli_alias(argv);
    let argv = expanded.as_deref().unwrap_or(argv);
    let (sub, mut words) = git_subcommand(argv)?;
    if sub != "worktree" {
        return None;
    }
    match words.find(|w| !w.starts_with('-'))?.as_str() {
        "remove" => Some("remove"),
        "move" => Some("move"),
        _ => None,
    }
}

/// nu17 N1: `git submodule update` (or `add`, `absorbgitdirs`) in a linked worktree whose
/// admin dir has no `modules/` yet. Nothing protects that place (a placeholder there
/// would break `git worktree remove`, nu16 N1), so git clones the submodules' git dirs
/// into it and succeeds — and after the run cordon sets them aside (their hooks and config
/// would run on the host: attack pass 32 C1), leaving the worktree's submodules without a
/// git dir. In the main checkout `.git/modules` is protected and the command fails
/// inside; here it is refused before it runs, with what to do. `None` when `argv` is not
/// such a command or the profile grants no such worktree.
pub fn submodule_update_refusal(
    profile: &crate::ResolvedProfile,
    argv: &[String],
) -> Option<String> {
    let expanded = expand_cli_alias(argv);
    let argv = expanded.as_deref().unwrap_or(argv);
    let (sub, mut words) = git_subcommand(argv)?;
    if sub != "submodule" {
        return None;
    }
    let action = words.find(|w| !w.starts_with('-'))?;
    if !matches!(action.as_str(), "update" | "add" | "absorbgitdirs") {
        return None;
    }
    let protected = profile.filesystem.protected();
    let admin = profile.filesystem.writable_roots().into_iter().find(|e| {
        matches!(e.origin, crate::EntryOrigin::GitWorktree { .. })
            && e.path.parent().and_then(Path::file_name) == Some("worktrees".as_ref())
            && !protected.iter().any(|p| p.path == e.path.join("modules"))
    })?;
    Some(format!(
        "`git submodule {action}` cannot be kept from inside cordon in this linked worktree: \
         git would clone the submodules' git dirs into {}, and cordon sets aside every git \
         dir a command makes there after the run (their hooks and config would run on the \
         host, R-P3), which leaves the submodules without one. Run `git submodule {action}` \
         outside cordon",
        admin.path.join("modules").display()
    ))
}

/// `argv` (a git command) with its subcommand replaced by the alias a `-c alias.NAME=VALUE`
/// on the same command line defines for it: `VALUE`'s words, or for a shell alias
/// (`!git …`) the git command it runs. `None` when the subcommand is no such alias (or the
/// shell alias does not start with git). Words split on whitespace, as git splits an alias
/// without quotes.
fn expand_cli_alias(argv: &[String]) -> Option<Vec<String>> {
    let (first, rest) = argv.split_first()?;
    if Path::new(first).file_name()? != "git" {
        return None;
    }
    let mut aliases: Vec<(&str, &str)> = Vec::new();
    let mut i = 0;
    let sub = loop {
        let w = rest.get(i)?.as_str();
        match w {
            "-c" => {
                let kv = rest.get(i + 1)?;
                if let Some((k, v)) = kv.split_once('=') {
                    if let Some(name) = k.strip_prefix("alias.") {
                        aliases.push((name, v));
                    }
                }
                i += 2;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            w if w.starts_with('-') => i += 1,
            _ => break i,
        }
    };
    let name = rest[sub].as_str();
    let (_, value) = aliases.iter().rev().find(|(n, _)| *n == name)?;
    let tail = rest[sub + 1..].iter().cloned();
    match value.strip_prefix('!') {
        Some(shell) => {
            let words: Vec<String> = shell.split_whitespace().map(String::from).collect();
            (Path::new(words.first()?).file_name()? == "git")
                .then(|| words.into_iter().chain(tail).collect())
        }
        None => Some(
            std::iter::once(first.clone())
                .chain(rest[..sub].iter().cloned())
                .chain(value.split_whitespace().map(String::from))
                .chain(tail)
                .collect(),
        ),
    }
}

/// nu18 F2: the branch a `git worktree add … -b NAME` (or `-B NAME`) creates before it
/// fails to make the worktree (the path is read-only inside the sandbox): the retry the
/// denial's hint suggests then fails with "a branch named NAME already exists" unless it
/// names the branch without `-b`. `None` for another command.
pub fn worktree_add_new_branch(argv: &[String]) -> Option<String> {
    let (sub, words) = git_subcommand(argv)?;
    if sub != "worktree" {
        return None;
    }
    let words: Vec<&String> = words.collect();
    let add = words.iter().position(|w| !w.starts_with('-'))?;
    if words[add] != "add" {
        return None;
    }
    let rest = &words[add + 1..];
    rest.iter().enumerate().find_map(|(i, w)| match w.as_str() {
        "-b" | "-B" => rest.get(i + 1).map(|n| n.to_string()),
        w => w
            .strip_prefix("-b")
            .or_else(|| w.strip_prefix("-B"))
            .filter(|n| !n.is_empty())
            .map(str::to_string),
    })
}

/// Whether `argv` (one command of the parsed script) is `git worktree prune` (a
/// command-line alias expanded), whose removals of stale admin dirs fail inside cordon
/// (they are pinned) while git exits 0 (new-user pass nu17 N6).
pub fn is_worktree_prune(argv: &[String]) -> bool {
    let expanded = expand_cli_alias(argv);
    let argv = expanded.as_deref().unwrap_or(argv);
    git_subcommand(argv).is_some_and(|(sub, mut words)| {
        sub == "worktree"
            && words
                .find(|w| !w.starts_with('-'))
                .is_some_and(|a| a == "prune")
    })
}

/// What to do about [`worktree_remove_action`] `action`: run it outside cordon. The text
/// of the refusal before a sandboxed run and of the hint after a failed one.
pub fn worktree_remove_advice(action: &str) -> String {
    format!(
        "`git worktree {action}` cannot finish inside cordon: the linked worktree's admin dir \
         (.git/worktrees/NAME) and its .git file are protected (R-P3), so git would {} the \
         worktree's files and then fail on them, leaving it registered and half gone. Run \
         `git worktree {action}` outside cordon",
        if action == "move" { "move" } else { "delete" }
    )
}

/// The hint after a failed command `argv` that is `git worktree remove`/`move`
/// ([`worktree_remove_action`], [`worktree_remove_advice`]); `None` otherwise.
pub fn worktree_remove_hint(argv: &[String]) -> Option<String> {
    worktree_remove_action(argv).map(worktree_remove_advice)
}

/// The protected `.git` of a workspace without a repository, if `profile` has one.
fn missing_git_placeholder(profile: &crate::ResolvedProfile) -> Option<&Path> {
    let crate::ResolvedFilesystem::Restricted { entries, .. } = &profile.filesystem else {
        return None;
    };
    let dotgit = profile.workspace.join(".git");
    entries
        .iter()
        .find(|e| {
            e.path == dotgit
                && matches!(&e.origin, crate::EntryOrigin::Protected { reason } if reason == MISSING_GIT_REASON)
        })
        .map(|e| e.path.as_path())
}

/// After `cargo init` (or `cargo new` naming the workspace, `--vcs` other than `none`) in a
/// workspace without a repository — whatever its exit code: cargo finds cordon's protected
/// `.git` placeholder, takes the directory for a repository and makes none (new-user pass
/// nu15 N3: it exited 0 and the user believed the crate was in git). `None` otherwise.
pub fn cargo_init_note(profile: &crate::ResolvedProfile, argv: &[String]) -> Option<String> {
    let (first, rest) = argv.split_first()?;
    if Path::new(first).file_name()? != "cargo" {
        return None;
    }
    let words: Vec<&str> = rest.iter().map(String::as_str).collect();
    let sub = words
        .iter()
        .find(|w| !w.starts_with('-') && !w.starts_with('+'))?;
    if *sub != "init" {
        return None;
    }
    if words.windows(2).any(|w| w == ["--vcs", "none"]) || words.contains(&"--vcs=none") {
        return None;
    }
    let dotgit = missing_git_placeholder(profile)?;
    Some(format!(
        "cargo took cordon's protected placeholder {} for a repository and did not run `git \
         init` (the workspace has none, and a new .git is protected: its hooks would later \
         run outside the sandbox). Run `git init` once outside cordon to make the project a \
         repository",
        dotgit.display()
    ))
}

/// The work-tree directories of the submodules of the repository at `root`, kept only when
/// they lie inside `root`: protected beyond the nested-repository scan's bounds (breaker,
/// stop 19). Two sources: `root/.gitmodules` (`submodule.<name>.path`, relative to `root`,
/// lexically normalised), and — since `.gitmodules` is a work-tree file a command can
/// empty (attack pass 26, F2) — the submodules git itself keeps in `root/.git/modules/`,
/// each named by its own `core.worktree` (a protected directory no command writes).
/// Missing, unreadable or unparsable files name none.
pub fn submodule_paths(fs: &dyn FsView, root: &Path) -> Vec<PathBuf> {
    let mut out = registered_submodules(fs, root);
    for p in listed_submodules(fs, root) {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The submodules the repository's git dir keeps in `modules/` (a bounded walk: 65536
/// directories, names with `/` and nested `modules/` followed 6 deep), each by its git
/// dir's `core.worktree` resolved as git does (relative to the git dir).
fn registered_submodules(fs: &dyn FsView, root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // The git dir: `.git` itself, or the one a `.git` file names (a linked worktree keeps
    // its submodules' git dirs in `<common>/worktrees/<id>/modules`; attack pass 27, G8).
    // The `.git` file is protected in every writable root, so what it names is git's word.
    let dotgit = root.join(".git");
    let gitdir = match fs.kind(&dotgit) {
        Some(crate::paths::FileKind::Dir) => dotgit,
        Some(crate::paths::FileKind::File) => match crate::resolve::read_gitdir_file(fs, &dotgit) {
            Ok(g) => g,
            Err(_) => return out,
        },
        _ => return out,
    };
    let mut stack = vec![(gitdir.join("modules"), 0usize)];
    // Bounded, generously (attack pass 27, G15: 512 directories left submodules of a large
    // superproject to the writable `.gitmodules`).
    let mut budget = 65536usize;
    while let Some((d, depth)) = stack.pop() {
        let Some(names) = fs.list_dir_typed(&d, 65536) else {
            continue;
        };
        for (name, is_dir) in names {
            if !is_dir || budget == 0 {
                continue;
            }
            budget -= 1;
            let c = d.join(name);
            if crate::git::looks_like_git_dir(fs, &c) {
                if let Ok(wt) = core_worktree(fs, &c) {
                    if wt.starts_with(root) && wt != root && !out.contains(&wt) {
                        out.push(wt);
                    }
                }
                if depth < 6 {
                    stack.push((c.join("modules"), depth + 1));
                }
            } else if depth < 6 {
                stack.push((c, depth + 1));
            }
        }
    }
    out
}

/// `core.worktree` of the git dir `gitdir` (its `config`, no includes), resolved against
/// it as git does, canonical. Errors: unreadable, unparsable, unset or not UTF-8, in words.
pub(crate) fn core_worktree(fs: &dyn FsView, gitdir: &Path) -> Result<PathBuf, String> {
    let config = gitdir.join("config");
    let text = fs
        .read_small_lossy(&config, CONFIG_FILE_CAP)
        .map_err(|r| format!("{}: {r}", config.display()))?;
    let file = gix_config::File::from_bytes_no_includes(
        text.as_bytes(),
        gix_config::file::Metadata::default(),
        Default::default(),
    )
    .map_err(|e| format!("{}: {e}", config.display()))?;
    let wt = file
        .string("core.worktree")
        .ok_or_else(|| format!("{} sets no core.worktree", config.display()))?;
    let wt = String::from_utf8(wt.to_vec())
        .ok()
        .filter(|w| !w.contains('\u{FFFD}'))
        .ok_or_else(|| "core.worktree is not UTF-8".to_string())?;
    // `..` as git (the kernel) resolves it, past a symlink's target.
    Ok(canonicalize_lenient(
        fs,
        &crate::paths::physical_normalize(fs, Path::new(wt.trim()), gitdir),
    ))
}

/// The submodule paths `root/.gitmodules` names.
fn listed_submodules(fs: &dyn FsView, root: &Path) -> Vec<PathBuf> {
    let Ok(text) = fs.read_small_lossy(&root.join(".gitmodules"), CONFIG_FILE_CAP) else {
        return Vec::new();
    };
    let Ok(file) = gix_config::File::from_bytes_owned(
        &mut text.into_bytes(),
        gix_config::file::Metadata::default(),
        gix_config::file::init::Options::default(),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in file.sections() {
        if !s.header().name().eq_ignore_ascii_case(b"submodule") {
            continue;
        }
        for v in s.values("path") {
            let rel = String::from_utf8_lossy(&v).to_string();
            let p = lexical_normalize(Path::new(&rel), root);
            if p.starts_with(root) && p != root && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The repository configuration files a sandbox edits as a private copy merged back by
/// [`merge::merge`] (issue 11 §3): the protected `config` of every `.git` *directory* of a
/// writable root (not a linked worktree's common dir, nor a `.git` symlink's target: those
/// stay read-only), whose `.git` directory is itself writable — git writes `config.lock`
/// beside `config`, so a copy of a read-only repository's config could not be written and
/// must not make a run look per-command (attack pass 186 F5: a `.git` file planted in the
/// project, pointing at another repository's worktree, put that repository's config on
/// the list). Pure: reads the resolved entries only.
pub fn brokered_configs(profile: &crate::ResolvedProfile) -> Vec<PathBuf> {
    let crate::ResolvedFilesystem::Restricted { entries, default } = &profile.filesystem else {
        return Vec::new();
    };
    // The access of the most specific entry at or above `dir` (entries are canonical).
    let access_at = |dir: &Path| {
        entries
            .iter()
            .filter(|w| dir.starts_with(&w.path))
            .max_by_key(|w| w.path.components().count())
            .map_or(*default, |w| w.access)
    };
    entries
        .iter()
        .filter(|e| {
            matches!(&e.origin, crate::EntryOrigin::Protected { reason } if reason == GIT_CONFIG_REASON)
                && e.path == e.spelled
                && e.links.is_empty()
                && e.path.file_name().is_some_and(|n| n == "config")
                && e.path
                    .parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == ".git")
                && e.path
                    .parent()
                    .is_some_and(|git| access_at(git) == crate::Access::Write)
        })
        .map(|e| e.path.clone())
        .collect()
}
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How a configuration value leads git to run code or read more configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// A path to a configuration file git reads next (relative to the including file).
    Include,
    /// A path (file or directory) whose contents git executes or that selects code;
    /// relative to the worktree root.
    Path,
    /// A command line git runs (through the shell when it has shell syntax); every word
    /// that is a path is protected (relative to the worktree root).
    Command,
    /// `alias.*`, `submodule.<name>.update`: a command only when it starts with `!`.
    Alias,
    /// `credential.helper`: a command when it starts with `!` or is a path; a bare name is
    /// `git credential-<name>` found on `PATH`.
    Credential,
    /// `core.fsmonitor`: a boolean, or else the path of a hook command.
    Fsmonitor,
}

/// One row of the table: section, subsection pattern (`None` = no subsection, `Some("*")`
/// = any), key (lowercase), kind, why.
pub type CodeKey = (
    &'static str,
    Option<&'static str>,
    &'static str,
    ValueKind,
    &'static str,
);

/// Every configuration key through which git runs code or loads more configuration, with
/// the reason. Section and key names are matched case-insensitively. Documented in the
/// README ("Git configuration").
pub const CODE_KEYS: &[CodeKey] = &[
    (
        "include",
        None,
        "path",
        ValueKind::Include,
        "git reads more configuration from this file",
    ),
    (
        "includeif",
        Some("*"),
        "path",
        ValueKind::Include,
        "git reads more configuration from this file",
    ),
    (
        "core",
        None,
        "hookspath",
        ValueKind::Path,
        "git runs hooks from this directory",
    ),
    (
        "core",
        None,
        "attributesfile",
        ValueKind::Path,
        "git attributes select filter and diff drivers that run code",
    ),
    (
        "init",
        None,
        "templatedir",
        ValueKind::Path,
        "git init/clone copy hooks from this template directory",
    ),
    (
        "core",
        None,
        "fsmonitor",
        ValueKind::Fsmonitor,
        "git runs this fsmonitor hook on status",
    ),
    (
        "core",
        None,
        "sshcommand",
        ValueKind::Command,
        "git runs this command for ssh transports",
    ),
    (
        "core",
        None,
        "editor",
        ValueKind::Command,
        "git runs this editor",
    ),
    (
        "core",
        None,
        "pager",
        ValueKind::Command,
        "git runs this pager",
    ),
    (
        "core",
        None,
        "askpass",
        ValueKind::Command,
        "git runs this password prompt",
    ),
    (
        "core",
        None,
        "gitproxy",
        ValueKind::Command,
        "git runs this proxy command for git:// transports",
    ),
    (
        "sequence",
        None,
        "editor",
        ValueKind::Command,
        "git rebase runs this editor",
    ),
    (
        "gpg",
        None,
        "program",
        ValueKind::Command,
        "git runs this signing program",
    ),
    (
        "gpg",
        Some("*"),
        "program",
        ValueKind::Command,
        "git runs this signing program",
    ),
    (
        "credential",
        None,
        "helper",
        ValueKind::Credential,
        "git runs this credential helper",
    ),
    (
        "credential",
        Some("*"),
        "helper",
        ValueKind::Credential,
        "git runs this credential helper",
    ),
    (
        "diff",
        None,
        "external",
        ValueKind::Command,
        "git diff runs this external diff program",
    ),
    (
        "diff",
        Some("*"),
        "textconv",
        ValueKind::Command,
        "git runs this textconv filter",
    ),
    (
        "diff",
        Some("*"),
        "command",
        ValueKind::Command,
        "git runs this diff driver",
    ),
    (
        "merge",
        Some("*"),
        "driver",
        ValueKind::Command,
        "git runs this merge driver",
    ),
    (
        "filter",
        Some("*"),
        "clean",
        ValueKind::Command,
        "git runs this clean filter",
    ),
    (
        "filter",
        Some("*"),
        "smudge",
        ValueKind::Command,
        "git runs this smudge filter",
    ),
    (
        "filter",
        Some("*"),
        "process",
        ValueKind::Command,
        "git runs this filter process",
    ),
    (
        "alias",
        None,
        "*",
        ValueKind::Alias,
        "an alias runs a shell command (`!…`) or any git command under its name (`reset --hard` as `git save`)",
    ),
    (
        "pager",
        None,
        "*",
        ValueKind::Command,
        "git runs this per-command pager",
    ),
    (
        "interactive",
        None,
        "difffilter",
        ValueKind::Command,
        "git add -p runs this diff filter",
    ),
    (
        "difftool",
        Some("*"),
        "cmd",
        ValueKind::Command,
        "git difftool runs this command",
    ),
    (
        "difftool",
        Some("*"),
        "path",
        ValueKind::Command,
        "git difftool runs this program",
    ),
    (
        "mergetool",
        Some("*"),
        "cmd",
        ValueKind::Command,
        "git mergetool runs this command",
    ),
    (
        "mergetool",
        Some("*"),
        "path",
        ValueKind::Command,
        "git mergetool runs this program",
    ),
    (
        "remote",
        Some("*"),
        "uploadpack",
        ValueKind::Command,
        "git fetch runs this program for local remotes",
    ),
    (
        "remote",
        Some("*"),
        "receivepack",
        ValueKind::Command,
        "git push runs this program for local remotes",
    ),
    (
        "uploadpack",
        None,
        "packobjectshook",
        ValueKind::Command,
        "git upload-pack runs this hook",
    ),
    (
        "web",
        None,
        "browser",
        ValueKind::Command,
        "git web--browse runs this browser",
    ),
    (
        "browser",
        Some("*"),
        "cmd",
        ValueKind::Command,
        "git web--browse runs this command",
    ),
    (
        "browser",
        Some("*"),
        "path",
        ValueKind::Command,
        "git web--browse runs this program",
    ),
    (
        "sendemail",
        None,
        "smtpserver",
        ValueKind::Command,
        "git send-email runs this program when it is a path",
    ),
    (
        "sendemail",
        None,
        "sendmailcmd",
        ValueKind::Command,
        "git send-email runs this command",
    ), // breaker5 LOW-3: command-valued keys that were missing.
    // Attack pass 56: `git archive --format=tgz`, `imap-send` and `git svn` commands.
    (
        "tar",
        Some("*"),
        "command",
        ValueKind::Command,
        "git archive pipes its output through this command",
    ),
    (
        "imap",
        None,
        "tunnel",
        ValueKind::Command,
        "git imap-send runs this command",
    ),
    (
        "svn",
        None,
        "authorsprog",
        ValueKind::Command,
        "git svn runs this program",
    ),
    (
        "gpg",
        Some("ssh"),
        "defaultkeycommand",
        ValueKind::Command,
        "git runs this command to find the ssh signing key",
    ),
    (
        "core",
        None,
        "alternaterefscommand",
        ValueKind::Command,
        "git runs this command to list an alternate's refs",
    ),
    (
        "trailer",
        Some("*"),
        "cmd",
        ValueKind::Command,
        "git interpret-trailers runs this command",
    ),
    (
        "trailer",
        Some("*"),
        "command",
        ValueKind::Command,
        "git interpret-trailers runs this command",
    ),
    (
        "submodule",
        Some("*"),
        "update",
        ValueKind::Alias,
        "git submodule update runs this `!` command through the shell",
    ),
    (
        "hook",
        Some("*"),
        "command",
        ValueKind::Command,
        "git runs this configured hook command",
    ),
    (
        "sendemail",
        Some("*"),
        "smtpserver",
        ValueKind::Command,
        "git send-email runs this program when it is a path",
    ),
    (
        "sendemail",
        Some("*"),
        "sendmailcmd",
        ValueKind::Command,
        "git send-email runs this command",
    ),
    (
        "sendemail",
        None,
        "tocmd",
        ValueKind::Command,
        "git send-email runs this command for recipients",
    ),
    (
        "sendemail",
        Some("*"),
        "tocmd",
        ValueKind::Command,
        "git send-email runs this command for recipients",
    ),
    (
        "sendemail",
        None,
        "cccmd",
        ValueKind::Command,
        "git send-email runs this command for recipients",
    ),
    (
        "sendemail",
        Some("*"),
        "cccmd",
        ValueKind::Command,
        "git send-email runs this command for recipients",
    ),
    (
        "sendemail",
        None,
        "headercmd",
        ValueKind::Command,
        "git send-email runs this command for headers",
    ),
    (
        "sendemail",
        Some("*"),
        "headercmd",
        ValueKind::Command,
        "git send-email runs this command for headers",
    ),
    (
        "help",
        None,
        "browser",
        ValueKind::Command,
        "git help runs this browser",
    ),
    (
        "man",
        Some("*"),
        "cmd",
        ValueKind::Command,
        "git help runs this man viewer command",
    ),
    (
        "man",
        Some("*"),
        "path",
        ValueKind::Command,
        "git help runs this man viewer program",
    ),
    (
        "instaweb",
        None,
        "httpd",
        ValueKind::Command,
        "git instaweb runs this HTTP daemon command",
    ),
    (
        "instaweb",
        None,
        "browser",
        ValueKind::Command,
        "git instaweb runs this browser",
    ),
    (
        "guitool",
        Some("*"),
        "cmd",
        ValueKind::Command,
        "git gui runs this command through the shell",
    ),
];

/// Nested includes followed at most this deep (git's own limit is 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// One path git would execute or read configuration from, and what made it so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigTarget {
    /// The path (absolute, lexically normal; not yet canonical).
    pub path: PathBuf,
    /// The key, e.g. `core.hooksPath` or `filter.lfs.smudge` (as spelled in the file).
    pub key: String,
    /// The configuration file that set it.
    pub file: PathBuf,
    /// Why git runs code through it.
    pub why: &'static str,
    /// Whether git expects a directory there (`core.hooksPath`, `init.templateDir`).
    pub dir: bool,
}

impl ConfigTarget {
    /// The protected entry's reason: key, file and why.
    pub fn reason(&self) -> String {
        format!("{} in {}: {}", self.key, self.file.display(), self.why)
    }
}

/// Where one repository's configuration lives.
#[derive(Debug, Clone)]
pub struct RepoDirs<'a> {
    /// The worktree root (relative hook and command paths are taken from here).
    pub worktree: &'a Path,
    /// The worktree's git dir (holds `config.worktree`).
    pub gitdir: &'a Path,
    /// The common dir (holds `config`).
    pub common: &'a Path,
}

/// A path-valued variable of the invoking environment as git takes it: non-empty,
/// relative to `base` when relative (git uses it as given, from its own cwd), `None` for a
/// device such as `/dev/null` (no file).
fn env_path(env: &BTreeMap<String, String>, var: &str, base: &Path) -> Option<PathBuf> {
    let v = env.get(var).filter(|v| !v.is_empty())?;
    let p = lexical_normalize(Path::new(v), base);
    (!crate::locations::names_no_store(&p)).then_some(p)
}

/// The configuration files named by the invoking environment (breaker4 HIGH-3):
/// `$GIT_CONFIG_SYSTEM`, `$XDG_CONFIG_HOME/git/config`, `$GIT_CONFIG_GLOBAL`; relative
/// values are taken from `base`. git reads some of them *instead of* the fixed files; the
/// host's next git may run without these variables, so cordon reads both.
pub fn env_config_files(env: &BTreeMap<String, String>, base: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    v.extend(env_path(env, "GIT_CONFIG_SYSTEM", base));
    v.extend(env_path(env, "XDG_CONFIG_HOME", base).map(|x| x.join("git/config")));
    v.extend(env_path(env, "GIT_CONFIG_GLOBAL", base));
    v
}

/// Files git reads that the invoking environment places (breaker4 HIGH-3, MEDIUM-3b):
/// [`env_config_files`], `$XDG_CONFIG_HOME/git/attributes` (the default
/// `core.attributesFile`, which selects filter and diff drivers), and in each of `homes`
/// git's default `~/.config/git/{config,attributes}` and `~/.gitconfig`. Resolution keeps
/// those that lie inside a writable root read-only, like `.git/config`.
pub fn env_git_files(
    env: &BTreeMap<String, String>,
    base: &Path,
    homes: &[PathBuf],
) -> Vec<(PathBuf, String)> {
    let mut v = Vec::new();
    for var in ["GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL"] {
        if let Some(p) = env_path(env, var, base) {
            v.push((p, format!("${var}")));
        }
    }
    if let Some(x) = env_path(env, "XDG_CONFIG_HOME", base) {
        for f in ["config", "attributes"] {
            v.push((x.join("git").join(f), format!("$XDG_CONFIG_HOME/git/{f}")));
        }
    }
    // git's own default places in each home (attack pass 26, F9: with `$XDG_CONFIG_HOME`
    // unset, the usual case, a missing `~/.config/git/config` inside a writable root — a
    // dotfiles repository at `~/.config` — was created by a command, and the host's next
    // git ran its alias), and `~/.gitconfig` (a `-w` of the home itself).
    for h in homes {
        for f in ["config", "attributes"] {
            v.push((h.join(".config/git").join(f), format!("~/.config/git/{f}")));
        }
        v.push((h.join(".gitconfig"), "~/.gitconfig".into()));
    }
    v
}

/// The reason of a protected git configuration file placed by the invoking environment
/// (breaker4 HIGH-3, MEDIUM-3b) or git's default global places (attack pass 26, F9);
/// `spelling` is how it was named (`$GIT_CONFIG_GLOBAL`, `~/.config/git/config`).
pub fn env_git_file_reason(spelling: &str) -> String {
    format!(
        "git reads this file ({spelling}): core.fsmonitor, hooks and filters set in it run \
         on the host's next git command"
    )
}

/// Git configuration given through the environment (breaker4 HIGH-3), in git's order:
/// `GIT_CONFIG_PARAMETERS` (what `git -c` hands to child processes), then the
/// `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` pairs. Each item:
/// `(variable that set it, key, value)`. A malformed `GIT_CONFIG_PARAMETERS` is read as far
/// as it parses.
pub fn env_config_pairs(env: &BTreeMap<String, String>) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    if let Some(p) = env.get("GIT_CONFIG_PARAMETERS") {
        for (k, v) in parse_config_parameters(p) {
            out.push(("GIT_CONFIG_PARAMETERS".to_string(), k, v));
        }
    }
    let count: usize = env
        .get("GIT_CONFIG_COUNT")
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or(0);
    // git accepts any count; the pairs present are what it reads.
    for i in 0..count.min(10_000) {
        let key_var = format!("GIT_CONFIG_KEY_{i}");
        let Some(k) = env.get(&key_var) else {
            break;
        };
        let v = env
            .get(&format!("GIT_CONFIG_VALUE_{i}"))
            .cloned()
            .unwrap_or_default();
        out.push((key_var, k.clone(), v));
    }
    out
}

/// Parses git's `GIT_CONFIG_PARAMETERS`: space-separated single-quoted entries, either
/// `'key=value'` (old form) or `'key'='value'`, with `'` written as `'\''`; a key alone
/// is a boolean `true` (value empty here).
fn parse_config_parameters(s: &str) -> Vec<(String, String)> {
    fn quoted(b: &[char], i: &mut usize) -> Option<String> {
        let mut out = String::new();
        loop {
            if b.get(*i) != Some(&'\'') {
                return None;
            }
            *i += 1;
            while *i < b.len() && b[*i] != '\'' {
                out.push(b[*i]);
                *i += 1;
            }
            if *i >= b.len() {
                return None;
            }
            *i += 1;
            // `'\''`: an escaped quote between two quoted parts.
            if b.get(*i) == Some(&'\\') && b.get(*i + 2) == Some(&'\'') {
                out.push(b[*i + 1]);
                *i += 2;
                continue;
            }
            return Some(out);
        }
    }
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < b.len() && b[i].is_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let Some(k) = quoted(&b, &mut i) else {
            break;
        };
        if b.get(i) == Some(&'=') {
            i += 1;
            let Some(v) = quoted(&b, &mut i) else {
                break;
            };
            out.push((k, v));
        } else {
            match k.split_once('=') {
                Some((k, v)) => out.push((k.to_string(), v.to_string())),
                None => out.push((k, String::new())),
            }
        }
    }
    out
}

/// The configuration files git reads for `repo`, in git's order: system (`/etc/gitconfig`
/// and `$GIT_CONFIG_SYSTEM`), global (each home's `~/.gitconfig` and
/// `~/.config/git/config`, `$XDG_CONFIG_HOME/git/config`, `$GIT_CONFIG_GLOBAL`), local,
/// worktree. The environment's files come from `env` ([`env_config_files`], breaker4
/// HIGH-3); git would read some of them instead of the fixed ones, cordon reads both.
pub fn config_files(
    repo: &RepoDirs,
    homes: &[PathBuf],
    env: &BTreeMap<String, String>,
) -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from("/etc/gitconfig")];
    let from_env = env_config_files(env, repo.worktree);
    let system = env_path(env, "GIT_CONFIG_SYSTEM", repo.worktree);
    v.extend(system.clone());
    for h in homes {
        v.push(h.join(".gitconfig"));
        v.push(h.join(".config/git/config"));
    }
    v.extend(from_env.into_iter().filter(|f| Some(f) != system.as_ref()));
    v.push(repo.common.join("config"));
    v.push(repo.gitdir.join("config.worktree"));
    v
}

/// The `[alias]` entries git would see for a command run at `cwd` (name lowercased →
/// value): the files [`config_files`] lists — system, global, then the repository's
/// `config` and `config.worktree` for the nearest enclosing worktree — a later file winning,
/// each include read in place, then the environment's `GIT_CONFIG_*` pairs; read through
/// `fs` (capped, lossy; an unreadable file skipped).
/// For the exec policy's dangerous-command check (new-user pass nu58: `git undo` with
/// `undo = reset --hard` in `~/.gitconfig` ran without approval).
pub fn git_aliases(
    fs: &dyn FsView,
    cwd: &Path,
    homes: &[PathBuf],
    env: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let found = cwd.ancestors().find_map(|a| {
        let dotgit = a.join(".git");
        match fs.kind(&dotgit)? {
            crate::paths::FileKind::Dir => Some((a.to_path_buf(), dotgit.clone(), dotgit)),
            _ => {
                let text = fs.read_small(&dotgit, crate::paths::SMALL_FILE_CAP).ok()?;
                let gitdir =
                    lexical_normalize(Path::new(text.trim().strip_prefix("gitdir:")?.trim()), a);
                let common = fs
                    .read_small(&gitdir.join("commondir"), crate::paths::SMALL_FILE_CAP)
                    .ok()
                    .map(|c| lexical_normalize(Path::new(c.trim()), &gitdir))
                    .unwrap_or_else(|| gitdir.clone());
                Some((a.to_path_buf(), gitdir, common))
            }
        }
    });
    let (worktree, gitdir, common) =
        found.unwrap_or_else(|| (cwd.to_path_buf(), cwd.join(".git"), cwd.join(".git")));
    let repo = RepoDirs {
        worktree: &worktree,
        gitdir: &gitdir,
        common: &common,
    };
    // git's order: system, `$XDG_CONFIG_HOME/git/config` (or `~/.config/git/config`)
    // before `~/.gitconfig`, then the repository's (attack pass 59: the XDG file was read
    // last and won).
    let mut files = config_files(&repo, homes, env);
    for h in homes {
        let (dot, xdg) = (h.join(".gitconfig"), h.join(".config/git/config"));
        if let (Some(i), Some(j)) = (
            files.iter().position(|f| *f == dot),
            files.iter().position(|f| *f == xdg),
        ) {
            if i < j {
                files.swap(i, j);
            }
        }
    }
    let users = |u: &str| passwd_home(fs, u);
    let mut out = BTreeMap::new();
    // Each file with its includes in place (`include.path`, `includeIf.*.path`, every
    // condition taken as met), at most MAX_INCLUDE_DEPTH deep.
    let mut queue: Vec<(PathBuf, usize)> = files.into_iter().rev().map(|f| (f, 0)).collect();
    let mut read = 0;
    while let Some((file, depth)) = queue.pop() {
        read += 1;
        if depth > MAX_INCLUDE_DEPTH || read > 64 {
            continue;
        }
        let Some(parsed) = parsed_config(fs, &file) else {
            continue;
        };
        let base = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut includes = Vec::new();
        for section in parsed.sections() {
            let header = section.header();
            let name = header.name().to_string().to_ascii_lowercase();
            if name == "include" || name == "includeif" {
                for v in section.values("path") {
                    includes.extend(expand_path(&v.to_string(), &base, homes, &users));
                }
                continue;
            }
            if name != "alias" {
                continue;
            }
            // `[alias "un"] do = …` is the alias `un.do` to git.
            let sub = header.subsection_name().map(|s| format!("{s}."));
            for key in section.value_names() {
                if let Some(v) = section.values(key.as_ref()).last() {
                    let k = format!("{}{}", sub.as_deref().unwrap_or(""), key);
                    out.insert(k.to_ascii_lowercase(), v.to_string());
                }
            }
        }
        // Read next, before the files after this one: what they set wins.
        for inc in includes.into_iter().rev() {
            queue.push((inc, depth + 1));
        }
    }
    // `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` and `GIT_CONFIG_PARAMETERS` of the run's
    // environment come last, as in git.
    for (_, key, value) in env_config_pairs(env) {
        if let Some(name) = key
            .split_once('.')
            .filter(|(s, _)| s.eq_ignore_ascii_case("alias"))
            .map(|(_, n)| n.to_ascii_lowercase())
        {
            out.insert(name, value);
        }
    }
    out
}

/// One git configuration file, read through `fs` (capped, lossy: [`FsView::read_small_lossy`])
/// and parsed without its includes; `None` when it is missing, unreadable or not valid.
fn parsed_config(fs: &dyn FsView, file: &Path) -> Option<gix_config::File> {
    let text = fs.read_small_lossy(file, CONFIG_FILE_CAP).ok()?;
    gix_config::File::from_bytes_owned(
        &mut text.into_bytes(),
        gix_config::file::Metadata::default(),
        gix_config::file::init::Options::default(),
    )
    .ok()
}

/// The user's effective `safe.bareRepository` from `files` (system, then global, in git's
/// order; the last value wins), read through [`FsView::read_small`] (capped, no FIFO).
/// Includes are not followed. `None` when no file sets it. A confined command can create
/// `HEAD`, `objects/`, `refs/` and a `config` with `core.fsmonitor` in any writable
/// directory; host git then takes it for an implicit bare repository and runs that code,
/// unless `safe.bareRepository = explicit` (git >= 2.38) — `cordon status` warns.
pub fn safe_bare_repository(fs: &dyn FsView, files: &[PathBuf]) -> Option<String> {
    let mut value = None;
    for file in files {
        let Some(parsed) = parsed_config(fs, file) else {
            continue;
        };
        if let Some(v) = parsed.string("safe.bareRepository") {
            value = Some(v.to_string());
        }
    }
    value
}

/// Every path through which git would run code or load more configuration for `repo`,
/// following includes. Files that cannot be read (a FIFO, a device, too large, not UTF-8)
/// or parsed add a note naming them; missing files are skipped.
pub fn code_paths(
    fs: &dyn FsView,
    repo: &RepoDirs,
    homes: &[PathBuf],
    env: &BTreeMap<String, String>,
    notes: &mut Vec<String>,
) -> Vec<ConfigTarget> {
    let users = |u: &str| passwd_home(fs, u);
    let mut out = Vec::new();
    let mut queue: Vec<(PathBuf, usize)> = config_files(repo, homes, env)
        .into_iter()
        .map(|f| (f, 0))
        .collect();
    queue.reverse();
    // Configuration given through the environment (breaker4 HIGH-3): `core.hooksPath`
    // from `GIT_CONFIG_KEY_0` is as much code as one in `.git/config`.
    for (var, key, value) in env_config_pairs(env) {
        let mut parts = key.splitn(2, '.');
        let (Some(section), Some(rest)) = (parts.next(), parts.next()) else {
            continue;
        };
        let (sub, name) = match rest.rsplit_once('.') {
            Some((sub, name)) => (Some(sub), name),
            None => (None, rest),
        };
        let Some((kind, why)) = classify(&section.to_ascii_lowercase(), sub, name) else {
            continue;
        };
        for p in value_paths(
            fs,
            kind,
            &value,
            repo.worktree,
            repo.worktree,
            homes,
            env,
            &users,
        ) {
            if kind == ValueKind::Include {
                queue.insert(0, (p.clone(), 1));
            }
            out.push(ConfigTarget {
                path: p,
                key: key.clone(),
                file: PathBuf::from(format!("${var}")),
                why,
                dir: matches!(
                    name.to_ascii_lowercase().as_str(),
                    "hookspath" | "templatedir"
                ),
            });
        }
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    while let Some((file, depth)) = queue.pop() {
        if seen.contains(&file) || depth > MAX_INCLUDE_DEPTH {
            continue;
        }
        seen.push(file.clone());
        let text = match fs.read_small_lossy(&file, CONFIG_FILE_CAP) {
            Ok(t) => t,
            Err(ReadRefusal::Missing) => continue,
            Err(r) => {
                notes.push(format!(
                    "git configuration {}: {r}; paths it names are not known to cordon",
                    file.display()
                ));
                continue;
            }
        };
        let parsed = match gix_config::File::from_bytes_no_includes(
            text.as_bytes(),
            gix_config::file::Metadata::default(),
            Default::default(),
        ) {
            Ok(p) => p,
            Err(e) => {
                notes.push(format!(
                    "git configuration {} could not be parsed ({e}); git will refuse it too",
                    file.display()
                ));
                continue;
            }
        };
        let base = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        for section in parsed.sections() {
            let header = section.header();
            let name = header.name().to_string().to_ascii_lowercase();
            let sub = header.subsection_name().map(|s| s.to_string());
            let mut keys: Vec<String> = section.value_names().collect();
            keys.dedup();
            for key in keys {
                let Some((kind, why)) = classify(&name, sub.as_deref(), &key) else {
                    continue;
                };
                let spelled_key = match &sub {
                    Some(s) => format!("{}.{s}.{key}", header.name()),
                    None => format!("{}.{key}", header.name()),
                };
                for value in section.values(&key) {
                    let value = value.to_string();
                    let paths =
                        value_paths(fs, kind, &value, &base, repo.worktree, homes, env, &users);
                    for p in paths {
                        if kind == ValueKind::Include {
                            queue.push((p.clone(), depth + 1));
                        }
                        out.push(ConfigTarget {
                            path: p,
                            key: spelled_key.clone(),
                            file: file.clone(),
                            why,
                            dir: matches!(
                                key.to_ascii_lowercase().as_str(),
                                "hookspath" | "templatedir"
                            ),
                        });
                    }
                }
            }
        }
    }
    out
}

/// Whether setting the git configuration key `key` (`section.key` or
/// `section.subsection.key`, as `git config` names it; case as typed) can make git run code
/// or read more configuration: a row of [`CODE_KEYS`] (`core.hooksPath`, `include.path`,
/// `includeIf.<cond>.path`, `hook.<name>.command`, `alias.*`, …). The exec policy asks
/// about a `git config` that sets one by this table (attack pass 188 F4: it had a list of
/// its own without `core.hooksPath` and the include keys).
pub fn runs_code(key: &str) -> bool {
    let Some((section, rest)) = key.split_once('.') else {
        return false;
    };
    let section = section.to_ascii_lowercase();
    let (sub, name) = match rest.rsplit_once('.') {
        Some((sub, name)) => (Some(sub), name),
        None => (None, rest),
    };
    classify(&section, sub, name).is_some()
}

/// The table row for `section[.sub].key`, if any.
fn classify(section: &str, sub: Option<&str>, key: &str) -> Option<(ValueKind, &'static str)> {
    let key = key.to_ascii_lowercase();
    CODE_KEYS
        .iter()
        .find(|(s, sp, k, _, _)| {
            *s == section && sp.is_some() == sub.is_some() && (*k == "*" || *k == key)
        })
        .map(|(_, _, _, kind, why)| (*kind, *why))
}

/// The paths a value names: expanded `~/`, relative ones against `base` (includes) or the
/// worktree root (everything else).
#[allow(clippy::too_many_arguments)]
fn value_paths(
    fs: &dyn FsView,
    kind: ValueKind,
    value: &str,
    include_base: &Path,
    worktree: &Path,
    homes: &[PathBuf],
    env: &BTreeMap<String, String>,
    users: &UserHomes,
) -> Vec<PathBuf> {
    let command_paths = |cmd: &str, worktree: &Path, homes: &[PathBuf]| {
        command_paths(fs, cmd, worktree, homes, env, users)
    };
    let value = value.trim();
    match kind {
        ValueKind::Include => expand_path(value, include_base, homes, users),
        ValueKind::Path => expand_path(value, worktree, homes, users),
        ValueKind::Fsmonitor => {
            let v = value.to_ascii_lowercase();
            if matches!(
                v.as_str(),
                "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0" | ""
            ) {
                Vec::new()
            } else {
                command_paths(value, worktree, homes)
            }
        }
        ValueKind::Alias => match value.strip_prefix('!') {
            Some(cmd) => command_paths(cmd, worktree, homes),
            // `rebase --exec CMD`, `-c core.hooksPath=…`, `bisect run ./t.sh` (attack pass 56).
            None => {
                command_line::Reading::new(fs, worktree, homes, env, users).git_arguments(value)
            }
        },
        ValueKind::Credential => {
            if let Some(cmd) = value.strip_prefix('!') {
                command_paths(cmd, worktree, homes)
            } else if value.contains('/') || value.starts_with('~') {
                command_paths(value, worktree, homes)
            } else {
                Vec::new()
            }
        }
        ValueKind::Command => command_paths(value, worktree, homes),
    }
}

/// An account's home directory by name (`~user`), from the user database.
pub(crate) type UserHomes<'a> = dyn Fn(&str) -> Option<PathBuf> + 'a;

/// The home of account `user` in `/etc/passwd` (read through `fs`, capped): the sixth
/// field of its line, when absolute.
pub(crate) fn passwd_home(fs: &dyn FsView, user: &str) -> Option<PathBuf> {
    let text = fs
        .read_small(Path::new("/etc/passwd"), CONFIG_FILE_CAP)
        .ok()?;
    text.lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 7 && f[0] == user && !user.is_empty())
        .map(|f| PathBuf::from(f[5]))
        .filter(|h| h.is_absolute())
}

/// A pathname value as git expands it: `~/` (each home), `:(optional)` dropped,
/// relative to `base`.
fn expand_path(value: &str, base: &Path, homes: &[PathBuf], users: &UserHomes) -> Vec<PathBuf> {
    let value = value.strip_prefix(":(optional)").unwrap_or(value);
    if value.is_empty() {
        return Vec::new();
    }
    if let Some(rest) = value.strip_prefix("~/") {
        // `~//x` is `$HOME//x` to git (attack pass 53 F1: it was taken as `/x`).
        let rest = rest.trim_start_matches('/');
        return homes
            .iter()
            .map(|h| lexical_normalize(Path::new(rest), h))
            .collect();
    }
    if let Some(named) = value.strip_prefix('~') {
        // `~user/…`: that account's home, as git expands it (attack pass 54 F3: it was
        // skipped, and `~root/../work/p/hooks` named a writable directory). An account
        // git cannot find makes git fail, not run anything.
        let (user, rest) = named.split_once('/').unwrap_or((named, ""));
        return users(user)
            .map(|h| lexical_normalize(Path::new(rest.trim_start_matches('/')), &h))
            .into_iter()
            .collect();
    }
    vec![lexical_normalize(Path::new(value), base)]
}

/// Every file the command line `cmd` (run by `sh -c` at the worktree) runs or reads as code
/// ([`command_line`]).
fn command_paths(
    fs: &dyn FsView,
    cmd: &str,
    worktree: &Path,
    homes: &[PathBuf],
    env: &BTreeMap<String, String>,
    users: &UserHomes,
) -> Vec<PathBuf> {
    command_line::Reading::new(fs, worktree, homes, env, users).command(cmd)
}

/// The paths one word names: the word, and the part after an `=` (`VAR=/x/y prog`,
/// `--opt=/x/y`), when it contains `/` or starts with `~/`.
pub(super) fn word_paths(
    w: &str,
    worktree: &Path,
    homes: &[PathBuf],
    users: &UserHomes,
) -> Vec<PathBuf> {
    std::iter::once(w)
        .chain(w.split_once('=').map(|(_, v)| v))
        .filter(|c| c.contains('/') || c.starts_with("~/"))
        .flat_map(|c| expand_path(c, worktree, homes, users))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::command_line::shell_expand;
    use super::*;
    use crate::paths::MemFs;

    /// Attack pass 54 F2: a command value's variables are expanded as `sh` expands them,
    /// so the program they name is protected; what cannot be known is left as spelled.
    #[test]
    fn command_values_name_the_paths_their_variables_expand_to() {
        let homes = [PathBuf::from("/home/u")];
        let env: BTreeMap<String, String> =
            [("HOME", "/home/u"), ("TOOLS", "/opt/tools"), ("EMPTY", "")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        // An argument counts when it is an existing file.
        let fs = MemFs::new().file("/opt/tools/c.toml", "");
        let paths = |cmd: &str| command_paths(&fs, cmd, Path::new("/w"), &homes, &env, &|_| None);
        for (cmd, want) in [
            ("\"$HOME/proj/bin/fsmon\"", "/home/u/proj/bin/fsmon"),
            ("${HOME}/bin/ssh-wrap -v", "/home/u/bin/ssh-wrap"),
            ("$TOOLS/lint --fix", "/opt/tools/lint"),
            ("${EMPTY:-/srv}/x", "/srv/x"),
            ("${UNSET-/srv}/y", "/srv/y"),
            ("$UNSET/z", "/z"),
            ("sh -c x --config=$TOOLS/c.toml", "/opt/tools/c.toml"),
            // Attack pass 55 F1: operators, nested `sh -c`, the worktree as `$PWD`.
            ("true&&tools/x.sh", "/w/tools/x.sh"),
            ("(tools/y.sh)", "/w/tools/y.sh"),
            ("sh -c \"cd a && ./tools/z.sh\"", "/w/a/tools/z.sh"),
            ("sh -c \"cd tools && ./fsmon.sh\"", "/w/tools/fsmon.sh"),
            ("/bin/bash -c 'sh -c \"tools/n.sh\"'", "/w/tools/n.sh"),
            ("$PWD/fsmon.sh", "/w/fsmon.sh"),
            ("\"$(pwd)\"/p.sh", "/w/p.sh"),
            ("`pwd`/q.sh", "/w/q.sh"),
        ] {
            assert!(
                paths(cmd).contains(&PathBuf::from(want)),
                "{cmd}: {:?}",
                paths(cmd)
            );
        }
        // New-user pass nu32: no placeholder-making spelling of an expanded word, nor a
        // piece of a quoted `-c` string with its blanks.
        let all = paths("\"$HOME/bin/fsmon\" && sh -c \"cd tools && ./ssh.sh\"");
        assert!(
            all.iter().all(|p| {
                let s = p.to_string_lossy();
                !s.contains('$') && !s.contains(' ')
            }),
            "{all:?}"
        );
        assert!(all.contains(&PathBuf::from("/w/tools/ssh.sh")), "{all:?}");
        assert!(!all.contains(&PathBuf::from("/w/ssh.sh")), "{all:?}");
        // A subshell's `cd` may not last: both directories.
        let sub = paths("(cd tools; ./a.sh); ./b.sh");
        assert!(sub.contains(&PathBuf::from("/w/tools/a.sh")), "{sub:?}");
        assert!(sub.contains(&PathBuf::from("/w/b.sh")), "{sub:?}");
        // A positional parameter cannot be known: no placeholder named `$1` (attack pass
        // 57); a missing argument is not code (attack pass 56: no `origin/main`).
        assert_eq!(paths("\"$1/x\" y"), Vec::<PathBuf>::new());
        assert_eq!(paths("f \"$1/x\""), Vec::<PathBuf>::new());
        assert_eq!(shell_expand("$(id)/x", &env, &homes), None);
    }

    /// Attack pass 55 finding (HIGH): the script an interpreter runs counts although it
    /// has no `/` (`core.fsmonitor = bash fsmon.sh`), so do `.`/`source` files, `make -f`
    /// files, what `<` feeds, a glob's matches and its directory, and `${X:+path}`; the
    /// interpreter's own options, `-c` code, `-m` modules and plain arguments do not.
    #[test]
    fn an_interpreters_script_counts_without_a_slash() {
        let homes = [PathBuf::from("/home/u")];
        let env = BTreeMap::new();
        let fs = MemFs::new()
            .file("/w/tools/a.sh", "")
            .file("/w/tools/b.sh", "")
            .file("/w/tools/notes.txt", "")
            .file("/w/top.py", "");
        let paths = |cmd: &str| {
            command_paths(&fs, cmd, Path::new("/w"), &homes, &env, &|_| None)
                .into_iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        for (cmd, want) in [
            ("bash fsmon.sh", "/w/fsmon.sh"),
            ("bash lint.sh --fix", "/w/lint.sh"),
            ("python3.11 -u -W ignore hook.py", "/w/hook.py"),
            ("/usr/bin/env node run.js", "/w/run.js"),
            ("env FOO=1 timeout 5 perl x.pl", "/w/x.pl"),
            ("deno run --allow-all m.ts", "/w/m.ts"),
            ("bash --rcfile rc.sh s.sh", "/w/rc.sh"),
            ("bash --rcfile rc.sh s.sh", "/w/s.sh"),
            ("true && . env.sh", "/w/env.sh"),
            ("source env2.sh; git status", "/w/env2.sh"),
            ("make -f hooks.mk lint", "/w/hooks.mk"),
            ("make --file=other.mk", "/w/other.mk"),
            ("awk -fprog.awk", "/w/prog.awk"),
            ("sh < feed.sh", "/w/feed.sh"),
            ("sh -c 'cd tools && bash inner.sh'", "/w/tools/inner.sh"),
            ("bash tools/*.sh", "/w/tools/a.sh"),
            ("bash tools/*.sh", "/w/tools/b.sh"),
            ("bash tools/*.sh", "/w/tools"),
            ("bash *.py", "/w/top.py"),
            ("${HOOKS:+tools/run.sh}", "/w/tools/run.sh"),
        ] {
            let got = paths(cmd);
            assert!(
                got.iter().any(|p| p == want),
                "{cmd}: want {want} in {got:?}"
            );
        }
        for (cmd, not) in [
            ("bash -c 'echo hi' name", "/w/name"),
            ("python3 -m http.server", "/w/http.server"),
            ("git log --oneline", "/w/log"),
            ("bash -x lint.sh arg", "/w/arg"),
            ("bash tools/*.sh", "/w/tools/notes.txt"),
            ("bash tools/*.sh", "/w/tools/*.sh"),
            ("make lint", "/w/lint"),
        ] {
            let got = paths(cmd);
            assert!(!got.iter().any(|p| p == not), "{cmd}: {not} in {got:?}");
        }
    }

    /// Attack pass 59: the aliases git sees — `~/.gitconfig` over the XDG file, includes
    /// read in place, `[alias "un"] do` as `un.do`, the environment's `GIT_CONFIG_*` last.
    #[test]
    fn git_aliases_follow_gits_order_includes_and_environment() {
        let fs = MemFs::new()
            .file(
                "/home/u/.gitconfig",
                "[alias]\n\tprec = reset --hard\n[include]\n\tpath = ~/.gitaliases\n",
            )
            .file("/home/u/.config/git/config", "[alias]\n\tprec = status\n")
            .file("/home/u/.gitaliases", "[alias]\n\tinc = clean -fdx\n")
            .file(
                "/w/.git/config",
                "[alias \"un\"]\n\tdo = reset --hard\n[include]\n\tpath = extra.cfg\n",
            )
            .file("/w/.git/extra.cfg", "[alias]\n\tli = reset --hard\n")
            .dir("/w/.git");
        let env: BTreeMap<String, String> = [
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "alias.envc"),
            ("GIT_CONFIG_VALUE_0", "reset --hard"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let a = git_aliases(&fs, Path::new("/w/sub"), &[PathBuf::from("/home/u")], &env);
        for (name, value) in [
            ("prec", "reset --hard"),
            ("inc", "clean -fdx"),
            ("un.do", "reset --hard"),
            ("li", "reset --hard"),
            ("envc", "reset --hard"),
        ] {
            assert_eq!(
                a.get(name).map(String::as_str),
                Some(value),
                "{name}: {a:?}"
            );
        }
    }

    /// Attack pass 54 F3: `~user/…` is that account's home, as git expands it.
    #[test]
    fn a_named_home_is_that_accounts() {
        let fs = MemFs::new().file(
            "/etc/passwd",
            "root:x:0:0:root:/root:/bin/sh\nbob:x:1000:1000::/home/bob:/bin/sh\n",
        );
        let users = |u: &str| passwd_home(&fs, u);
        let homes = [PathBuf::from("/home/u")];
        let got = |v: &str| expand_path(v, Path::new("/w"), &homes, &users);
        assert_eq!(got("~root/../w/hooks2"), vec![PathBuf::from("/w/hooks2")]);
        assert_eq!(got("~bob/hooks"), vec![PathBuf::from("/home/bob/hooks")]);
        assert_eq!(got("~bob"), vec![PathBuf::from("/home/bob")]);
        assert!(got("~nobody/x").is_empty());
    }

    /// Attack pass 53 F1: git reads `~//x` as `$HOME//x`, so does cordon.
    #[test]
    fn a_doubled_slash_after_tilde_stays_in_the_home() {
        let homes = [PathBuf::from("/home/u")];
        for v in ["~//hooks", "~/hooks", "~///hooks"] {
            assert_eq!(
                expand_path(v, Path::new("/w"), &homes, &|_| None),
                vec![PathBuf::from("/home/u/hooks")],
                "{v}"
            );
        }
    }

    fn repo() -> RepoDirs<'static> {
        RepoDirs {
            worktree: Path::new("/w"),
            gitdir: Path::new("/w/.git"),
            common: Path::new("/w/.git"),
        }
    }

    /// nu14 HIGH 3: `git worktree remove`/`move` get the hint that says to run them
    /// outside cordon, through git's global options; other worktree commands and other
    /// programs do not.
    #[test]
    fn a_worktree_add_names_the_branch_it_creates() {
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        for (cmd, b) in [
            ("git worktree add ../wt -b feature", Some("feature")),
            ("git worktree add -B fix ../wt", Some("fix")),
            ("git -C x worktree add -bnew ../wt", Some("new")),
            ("git worktree add ../wt main", None),
            ("git worktree list -b x", None),
            ("git branch -b x", None),
        ] {
            assert_eq!(worktree_add_new_branch(&argv(cmd)).as_deref(), b, "{cmd}");
        }
    }

    #[test]
    fn worktree_remove_and_move_are_told_to_run_outside() {
        // `%` stands for a space inside one word.
        let argv = |s: &str| {
            s.split(' ')
                .map(|w| w.replace('%', " "))
                .collect::<Vec<_>>()
        };
        for cmd in [
            "git worktree remove .worktrees/w1",
            "/usr/bin/git -C /w worktree remove --force ../w2",
            "git -c core.x=y worktree move w1 w3",
            // attack36 W1: an alias given on the command line.
            "git -c alias.wr=worktree%remove wr w1",
            "git -c alias.wm=!git%worktree%move wm w1 w3",
        ] {
            let h = worktree_remove_hint(&argv(cmd)).unwrap_or_else(|| panic!("{cmd}"));
            assert!(h.contains("outside cordon") && h.contains("R-P3"), "{h}");
        }
        for cmd in [
            "git worktree add ../w2",
            "git worktree list",
            "git remove x",
            "gitx worktree remove w",
            "git",
            "git -c alias.wr=worktree%list wr",
            "git -c alias.x=worktree%remove wr w1",
            "git -c alias.wr=!rm%-rf%w1 wr",
        ] {
            assert_eq!(worktree_remove_hint(&argv(cmd)), None, "{cmd}");
        }
    }

    #[test]
    fn hooks_path_includes_and_commands_are_found() {
        let fs = MemFs::new()
            .file(
                "/w/.git/config",
                "[core]\n\thooksPath = .githooks\n\tfsmonitor = true\n\
                 [include]\n\tpath = ../shared.gitconfig\n\
                 [alias]\n\tx = !./scripts/x.sh --flag\n\ty = log\n\
                 [filter \"lfs\"]\n\tsmudge = git-lfs smudge -- %f\n\tclean = tools/clean %f\n",
            )
            .file(
                "/w/shared.gitconfig",
                "[includeIf \"onbranch:main\"]\n\tpath = /w/more.cfg\n[core]\n\tpager = less\n",
            )
            .file("/w/more.cfg", "[diff \"x\"]\n\ttextconv = ~/bin/conv\n");
        let mut notes = vec![];
        let got = code_paths(
            &fs,
            &repo(),
            &[PathBuf::from("/h")],
            &BTreeMap::new(),
            &mut notes,
        );
        let paths: Vec<(String, String)> = got
            .iter()
            .map(|t| (t.key.clone(), t.path.display().to_string()))
            .collect();
        for want in [
            ("core.hooksPath", "/w/.githooks"),
            ("include.path", "/w/shared.gitconfig"),
            ("alias.x", "/w/scripts/x.sh"),
            ("filter.lfs.clean", "/w/tools/clean"),
            ("includeIf.onbranch:main.path", "/w/more.cfg"),
            ("diff.x.textconv", "/h/bin/conv"),
        ] {
            assert!(
                paths.contains(&(want.0.to_string(), want.1.to_string())),
                "{want:?} not in {paths:?}"
            );
        }
        // Not code: a plain alias, the builtin fsmonitor, a PATH program.
        assert!(!paths
            .iter()
            .any(|(k, _)| k == "alias.y" || k == "core.fsmonitor"));
        assert!(!paths.iter().any(|(k, _)| k == "core.pager"));
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn breaker5_command_keys_are_found() {
        // breaker5 LOW-3: keys whose value git runs, missing from the table before.
        let fs = MemFs::new().file(
            "/w/.git/config",
            "[gpg \"ssh\"]\n\tdefaultKeyCommand = tools/key.sh\n\
             [core]\n\talternateRefsCommand = ./bin/refs\n\
             [trailer \"sign\"]\n\tcmd = scripts/sign.sh\n\tcommand = scripts/old.sh\n\
             [submodule \"m\"]\n\tupdate = !./upd.sh\n\
             [submodule \"n\"]\n\tupdate = rebase\n\
             [sendemail]\n\ttoCmd = ./to.sh\n\
             [sendemail \"work\"]\n\tsendmailCmd = ./sm.sh\n\
             [man \"v\"]\n\tcmd = ./man.sh\n\
             [guitool \"t\"]\n\tcmd = ./gt.sh\n\
             [instaweb]\n\thttpd = ./httpd\n",
        );
        let mut notes = vec![];
        let got = code_paths(&fs, &repo(), &[], &BTreeMap::new(), &mut notes);
        let paths: Vec<(String, String)> = got
            .iter()
            .map(|t| (t.key.clone(), t.path.display().to_string()))
            .collect();
        for want in [
            ("gpg.ssh.defaultKeyCommand", "/w/tools/key.sh"),
            ("core.alternateRefsCommand", "/w/bin/refs"),
            ("trailer.sign.cmd", "/w/scripts/sign.sh"),
            ("trailer.sign.command", "/w/scripts/old.sh"),
            ("submodule.m.update", "/w/upd.sh"),
            ("sendemail.toCmd", "/w/to.sh"),
            ("sendemail.work.sendmailCmd", "/w/sm.sh"),
            ("man.v.cmd", "/w/man.sh"),
            ("guitool.t.cmd", "/w/gt.sh"),
            ("instaweb.httpd", "/w/httpd"),
        ] {
            assert!(
                paths.contains(&(want.0.to_string(), want.1.to_string())),
                "{want:?} not in {paths:?}"
            );
        }
        // `update = rebase` is a mode, not a command.
        assert!(
            !paths.iter().any(|(k, _)| k == "submodule.n.update"),
            "{paths:?}"
        );
        // The merge-back names why.
        let k = |s: &str, sub: &str, n: &str| merge::Key {
            section: s.into(),
            subsection: Some(sub.into()),
            name: n.into(),
        };
        let why = merge::refusal(&k("gpg", "ssh", "defaultkeycommand"), &[b"x".to_vec()]);
        assert!(why.is_some_and(|w| w.contains("ssh signing key")));
        let why = merge::refusal(&k("trailer", "sign", "cmd"), &[b"x".to_vec()]);
        assert!(why.is_some_and(|w| w.contains("interpret-trailers")));
    }

    #[test]
    fn unreadable_and_malformed_config_is_noted() {
        let fs = MemFs::new()
            .special("/w/.git/config", "fifo")
            .file("/w/.git/config.worktree", "[core\nbroken");
        let mut notes = vec![];
        let got = code_paths(&fs, &repo(), &[], &BTreeMap::new(), &mut notes);
        assert!(got.is_empty());
        assert!(
            notes
                .iter()
                .any(|n| n.contains("/w/.git/config:") && n.contains("fifo")),
            "{notes:?}"
        );
        assert!(
            notes.iter().any(|n| n.contains("/w/.git/config.worktree")),
            "{notes:?}"
        );
    }

    #[test]
    fn include_cycles_end() {
        let fs = MemFs::new()
            .file("/w/.git/config", "[include]\n\tpath = ../a\n")
            .file("/w/a", "[include]\n\tpath = /w/.git/config\n");
        let mut notes = vec![];
        let got = code_paths(&fs, &repo(), &[], &BTreeMap::new(), &mut notes);
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn safe_bare_repository_last_file_wins() {
        let fs = MemFs::new()
            .file("/etc/gitconfig", "[safe]\n\tbareRepository = explicit\n")
            .file("/h/.gitconfig", "[safe]\nbareRepository = all\n");
        let sys = PathBuf::from("/etc/gitconfig");
        let user = PathBuf::from("/h/.gitconfig");
        assert_eq!(
            safe_bare_repository(&fs, std::slice::from_ref(&sys)).as_deref(),
            Some("explicit")
        );
        assert_eq!(
            safe_bare_repository(&fs, &[sys, user]).as_deref(),
            Some("all")
        );
        assert_eq!(safe_bare_repository(&fs, &[PathBuf::from("/none")]), None);
    }
}
