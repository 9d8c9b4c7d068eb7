//! Checks on deny-read entries at resolution (issue 7 item 4, issue 8 §6): a deny entry
//! that hides the working directory is refused; one whose path does not exist at launch
//! is reported, never silently skipped.

use crate::paths::FsView;
use crate::profile::Access;
use crate::resolve::EntryOrigin;
use crate::resolve::{ResolveError, ResolvedEntry, ResolvedFilesystem, ResolvedProfile};

/// Refuses a resolved profile whose deny-read entry decides the access of the cwd
/// ([`ResolveError::DenyCoversCwd`]): the sandbox could not enter it.
pub(crate) fn check_cwd_not_denied(
    r: &ResolvedProfile,
    fs: &dyn FsView,
) -> Result<(), ResolveError> {
    let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
        return Ok(());
    };
    let a = r.filesystem.access_for(fs, &r.cwd);
    match a.entry.map(|i| &entries[i]) {
        Some(e) if a.access == Access::Deny => Err(ResolveError::DenyCoversCwd {
            path: e.path.clone(),
            cwd: r.cwd.clone(),
        }),
        _ => Ok(()),
    }
}

/// Adds a note for every configured deny entry whose path does not exist now: nothing is
/// hidden there; one created at that path during the run stops the run in the namespace
/// sandbox (its cover watch), and is readable without one.
pub(crate) fn note_missing_denies(entries: &[ResolvedEntry], notes: &mut Vec<String>) {
    for e in entries
        .iter()
        .filter(|e| e.access == Access::Deny && !e.exists && !is_builtin(e))
    {
        let note = format!(
            "deny-read entry {} does not exist now: nothing is hidden there this run (created \
             there during the run, it stops the command in the namespace sandbox; it is \
             readable without one); if it was moved, look for it under its new name",
            e.spelled.display()
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    // A deny spelled through a symlink that lies inside a writable root follows whatever
    // that symlink says at launch: a confined command can re-point it before the next run.
    let roots: Vec<&ResolvedEntry> = entries
        .iter()
        .filter(|e| e.access == Access::Write && e.is_dir)
        .collect();
    for e in entries.iter().filter(|e| {
        e.access == Access::Deny
            && e.spelled != e.path
            && !is_builtin(e)
            && roots.iter().any(|r| {
                (e.spelled.starts_with(&r.path) && e.spelled != r.path)
                    || (e.spelled.starts_with(&r.spelled) && e.spelled != r.spelled)
            })
    }) {
        let note = format!(
            "deny-read entry {} goes through a symlink inside a writable root (to {}); a \
             confined command could re-point it before the next run: spell the target path",
            e.spelled.display(),
            e.path.display()
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
}

/// Whether `e` is one of the built-in credential-store entries (most of which do not exist
/// on a given host; a note for each would only be noise).
fn is_builtin(e: &ResolvedEntry) -> bool {
    match &e.origin {
        EntryOrigin::Profile {
            spelling, source, ..
        } => {
            source.as_deref().is_some_and(|s| s.starts_with("built-in"))
                || crate::profile::is_builtin_credential_spelling(spelling)
        }
        _ => false,
    }
}
