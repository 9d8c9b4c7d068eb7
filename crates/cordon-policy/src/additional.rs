//! Additional permissions for one command: widening (R-O1), what an approval may record
//! (R-O2) and the empty case (R-O3).
//!
//! A command may carry an extra grant, [`AdditionalPermissions`], on top of the session's base
//! [`PermissionProfile`]. Two operations exist and they are deliberately different:
//!
//! - [`merge`] (R-O1) *widens* a profile for one command: a union. It never narrows
//!   anything the base allows.
//! - [`intersect`] (R-O2) decides what an approval may *record* for the session: only what
//!   was both requested and approved. A mistaken approval can therefore never write a path
//!   into the session that the request did not contain.
//!
//! An empty intersection (R-O3) is [`Recorded::Nothing`]: the extra opening added nothing,
//! the session keeps its base profile. It is a different type from any grant
//! ([`NonEmptyGrant`] cannot be built empty), so "nothing recorded" cannot be mistaken for
//! "deny everything" or "the command is forbidden" — whether the command may still run is
//! decided later by the approval policy and the sandbox, from the base profile.
//!
//! ## The scope of an extra grant
//!
//! An extra grant's entries are read like a profile's (R-P2: most specific path wins, ties
//! deny > write > read), with one difference: a path no entry covers is *not part of the
//! extra grant* (it grants nothing there). A `deny` entry in an extra grant therefore does not
//! hide anything from the base profile; it carves a hole in the extra grant's own grants
//! (`{ path = "/data", access = "write" }` + `{ path = "/data/secret", access = "deny" }`
//! asks for `/data` except `/data/secret`).

use crate::paths::{canonicalize_lenient, depth, FsView};
use crate::profile::{
    Access, FilesystemPolicy, FsEntry, NetworkPolicy, PermissionProfile, ProfileKind,
};
use crate::resolve::{
    expand, honoured_roots, redirected_out_of_roots, resolve, ResolveContext, ResolveError,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Source tag given to merged extra grant entries that carry no source of their own (shown by
/// `cordon explain`).
pub const ADDITIONAL_SOURCE: &str = "additional permissions";

/// Extra permissions requested (or approved) for one command (R-O1, R-O2).
///
/// Shape: `{ "network": true, "entries": [{ "path": "/data", "access": "write" }] }`; both
/// fields optional. `network: Some(true)` asks for the network to be enabled; `Some(false)`
/// and `None` both ask for nothing (an extra grant never narrows). `entries` are [`FsEntry`]
/// spellings (absolute, `~/…`, relative to the cwd, or symbolic like `:workspace/build`),
/// read as described in the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdditionalPermissions {
    /// `Some(true)` = enable the network; `Some(false)` / `None` = no network request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// Filesystem entries, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<FsEntry>,
}

impl AdditionalPermissions {
    /// Whether this extra grant asks for the network.
    pub fn wants_network(&self) -> bool {
        self.network == Some(true)
    }

    /// Whether this extra grant asks for nothing at all: no network and no `read`/`write`
    /// entry (`deny` entries alone only carve holes in grants that do not exist).
    pub fn grants_nothing(&self) -> bool {
        !self.wants_network() && self.entries.iter().all(|e| e.access == Access::Deny)
    }

    /// Combines two extra grants, e.g. two per-command requests (R-O1 applied to extra grants).
    ///
    /// Network: `Some(true)` if either side enables it, else `Some(false)` if either side
    /// says so, else `None`. Entries: `self`'s, then `other`'s, de-duplicated on
    /// (path spelling, access), first occurrence kept (with its source), order kept.
    ///
    /// Note: both sides' `deny` carve-outs are kept, so where one side's hole overlaps the
    /// other side's grant the result grants *less* than the exact union — never more.
    pub fn merge(&self, other: &AdditionalPermissions) -> AdditionalPermissions {
        let network = match (self.network, other.network) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), _) | (_, Some(false)) => Some(false),
            (None, None) => None,
        };
        let mut entries: Vec<FsEntry> = Vec::new();
        for e in self.entries.iter().chain(&other.entries) {
            if !entries
                .iter()
                .any(|x| x.path == e.path && x.access == e.access)
            {
                entries.push(e.clone());
            }
        }
        AdditionalPermissions { network, entries }
    }
}

/// A grant an approval may record for the session: guaranteed to add *something* — the
/// network, or at least one `read`/`write` entry (R-O2, R-O3).
///
/// It cannot be constructed empty: [`NonEmptyGrant::new`] returns `None` for an extra grant
/// that grants nothing, and deserialising such an extra grant fails. Paths in a grant built by
/// [`intersect`] are absolute and canonical, so the grant cannot re-bind to another
/// directory (another cwd, a re-pointed symlink) later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "AdditionalPermissions", into = "AdditionalPermissions")]
pub struct NonEmptyGrant(AdditionalPermissions);

impl NonEmptyGrant {
    /// Wraps `perms` if it grants something (see [`AdditionalPermissions::grants_nothing`]);
    /// `None` otherwise.
    pub fn new(perms: AdditionalPermissions) -> Option<NonEmptyGrant> {
        if perms.grants_nothing() {
            None
        } else {
            Some(NonEmptyGrant(perms))
        }
    }

    /// The granted permissions, as an extra grant for [`effective_profile`].
    pub fn permissions(&self) -> &AdditionalPermissions {
        &self.0
    }

    /// Unwraps the granted permissions.
    pub fn into_permissions(self) -> AdditionalPermissions {
        self.0
    }
}

impl TryFrom<AdditionalPermissions> for NonEmptyGrant {
    type Error = String;
    fn try_from(p: AdditionalPermissions) -> Result<Self, Self::Error> {
        NonEmptyGrant::new(p).ok_or_else(|| {
            "a recorded grant must add the network or at least one read/write entry; \
             record `nothing` instead"
                .to_string()
        })
    }
}

impl From<NonEmptyGrant> for AdditionalPermissions {
    fn from(g: NonEmptyGrant) -> Self {
        g.0
    }
}

/// What an approval records for the session (R-O2, R-O3). Produced by [`intersect`].
///
/// - [`Recorded::Nothing`]: the intersection of request and approval is empty. **This
///   means the extra opening added nothing**: nothing is stored for the session and the
///   base profile stays in force unchanged. It does *not* mean "strictest possible" (the
///   base is not narrowed) and does *not* mean "the command is forbidden" (that is decided
///   by the approval policy and the sandbox, from the base profile).
/// - [`Recorded::Grant`]: a non-empty widening to remember for the session.
///
/// Serialised as `"nothing"` or `{ "grant": { "network": true, "entries": [...] } }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Recorded {
    /// Nothing recorded: the extra opening added nothing; the base profile stays (R-O3).
    Nothing,
    /// A non-empty grant recorded for the session.
    Grant(NonEmptyGrant),
}

impl Recorded {
    /// The extra grant to apply on top of the base profile, if any: `None` for
    /// [`Recorded::Nothing`] (the base profile applies as is).
    pub fn additional(&self) -> Option<&AdditionalPermissions> {
        match self {
            Recorded::Nothing => None,
            Recorded::Grant(g) => Some(g.permissions()),
        }
    }

    /// Whether nothing was recorded.
    pub fn is_nothing(&self) -> bool {
        matches!(self, Recorded::Nothing)
    }
}

/// Narrower of two accesses by [`Access::width`] (deny < read < write).
fn narrower(a: Access, b: Access) -> Access {
    if a.width() <= b.width() {
        a
    } else {
        b
    }
}

/// Wider of two accesses by [`Access::width`].
fn wider(a: Access, b: Access) -> Access {
    if a.width() >= b.width() {
        a
    } else {
        b
    }
}

/// One extra grant entry expansion: canonical path, lexical path, access, entry index.
#[derive(Debug, Clone)]
struct Flat {
    canonical: PathBuf,
    lexical: PathBuf,
    access: Access,
    index: usize,
}

/// The canonical cwd's workspace, as [`resolve`] computes it.
fn workspace_for(ctx: &ResolveContext, fs: &dyn FsView) -> Result<PathBuf, ResolveError> {
    crate::resolve::locate(ctx, fs).map(|l| l.workspace)
}

fn flatten(
    entries: &[FsEntry],
    ctx: &ResolveContext,
    workspace: &Path,
    fs: &dyn FsView,
) -> Result<Vec<Flat>, ResolveError> {
    let mut out = Vec::new();
    for (index, e) in entries.iter().enumerate() {
        for lexical in expand(fs, &e.path, index, ctx, workspace)? {
            out.push(Flat {
                canonical: canonicalize_lenient(fs, &lexical),
                lexical,
                access: e.access,
                index,
            });
        }
    }
    // The same rule as `resolve`: a grant through a symlink planted inside a writable root
    // that leads outside every writable root is not honoured.
    let writable: Vec<(PathBuf, PathBuf)> = out
        .iter()
        .filter(|f| f.access == Access::Write)
        .map(|f| (f.lexical.clone(), f.canonical.clone()))
        .collect();
    let landing = honoured_roots(&writable);
    out.retain(|f| {
        !redirected_out_of_roots(&f.lexical, &f.canonical, f.access, &writable, &landing)
    });
    Ok(out)
}

/// The extra grant's own access at canonical path `q`: most specific entry wins, ties
/// deny > write > read (R-P2); a path no entry covers is outside the extra grant (`Deny`,
/// i.e. width 0: "grants nothing").
fn scope_access<'a>(entries: impl IntoIterator<Item = (&'a Path, Access)>, q: &Path) -> Access {
    let mut best: Option<(usize, Access)> = None;
    for (p, a) in entries {
        if q.starts_with(p) {
            let d = depth(p);
            best = match best {
                Some((bd, ba)) if bd > d || (bd == d && ba >= a) => Some((bd, ba)),
                _ => Some((d, a)),
            };
        }
    }
    best.map(|(_, a)| a).unwrap_or(Access::Deny)
}

fn path_string(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// R-O2 `intersect(requested, approved, ctx, fs)`: what an approval may record.
///
/// Both extra grants are expanded for the command's context exactly as [`resolve`] would
/// (`:workspace` = the cwd's project root, relative paths against `ctx.cwd`, `~`/`:home`,
/// `:tmp`, `:minimal`), then canonicalised through `fs`. The result is the pointwise
/// intersection of the two scopes (see the [module docs](self)):
///
/// - network: enabled only if **both** request and approval enable it;
/// - filesystem: at every path, the narrower (by [`Access::width`]) of what was requested
///   and what was approved. So an approved entry outside every requested entry is dropped;
///   one inside a requested entry is kept, clamped to the requested access (approving
///   `write` where `read` was requested records `read`); a requested `deny` carve-out
///   inside an approved grant is kept as a `deny` entry in the result.
///
/// Result entries are absolute canonical paths (spelled with [`Path::to_string_lossy`]),
/// at most one per path, without redundant entries, in approved-then-requested order,
/// keeping the approved (else requested) entry's `source`. A spelling whose root is
/// unavailable (`:home` with no `$HOME`) contributes nothing.
///
/// Returns [`Recorded::Nothing`] when the intersection grants nothing (R-O3; see
/// [`Recorded`] for what that does and does not mean).
///
/// Errors: relative or missing cwd, unknown symbolic root ([`ResolveError`]).
pub fn intersect(
    requested: &AdditionalPermissions,
    approved: &AdditionalPermissions,
    ctx: &ResolveContext,
    fs: &dyn FsView,
) -> Result<Recorded, ResolveError> {
    let workspace = workspace_for(ctx, fs)?;
    let req = flatten(&requested.entries, ctx, &workspace, fs)?;
    let app = flatten(&approved.entries, ctx, &workspace, fs)?;
    let scope = |list: &[Flat], q: &Path| {
        scope_access(list.iter().map(|f| (f.canonical.as_path(), f.access)), q)
    };

    // Candidate paths: every approved path, then every requested path; first occurrence
    // keeps its source.
    let mut candidates: Vec<(PathBuf, Option<String>)> = Vec::new();
    for (f, src) in app
        .iter()
        .map(|f| (f, &approved.entries[f.index].source))
        .chain(req.iter().map(|f| (f, &requested.entries[f.index].source)))
    {
        if !candidates.iter().any(|(p, _)| *p == f.canonical) {
            candidates.push((f.canonical.clone(), src.clone()));
        }
    }
    // Shallow first, so each decision sees the result for its ancestors.
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&i| depth(&candidates[i].0));
    let mut result: Vec<(usize, Access)> = Vec::new();
    for i in order {
        let p = &candidates[i].0;
        let want = narrower(scope(&app, p), scope(&req, p));
        let current = scope_access(
            result.iter().map(|(j, a)| (candidates[*j].0.as_path(), *a)),
            p,
        );
        if want != current {
            result.push((i, want));
        }
    }
    result.sort_by_key(|(i, _)| *i);
    let entries = result
        .into_iter()
        .map(|(i, access)| FsEntry {
            path: path_string(&candidates[i].0),
            access,
            source: candidates[i].1.clone(),
        })
        .collect();
    let network = if requested.wants_network() && approved.wants_network() {
        Some(true)
    } else {
        None
    };
    Ok(
        match NonEmptyGrant::new(AdditionalPermissions { network, entries }) {
            Some(g) => Recorded::Grant(g),
            None => Recorded::Nothing,
        },
    )
}

/// R-O1 `merge(base, extra, ctx, fs)`: the base profile widened by an extra grant — a union
/// that **never narrows** anything the base allows.
///
/// - Network: enabled if either side enables it.
/// - Filesystem (only when the base's filesystem is restricted; an unrestricted one has
///   nothing to widen): the base entries, unchanged and in order, followed by entries
///   derived from the extra grant's, in the extra grant's order, de-duplicated on
///   (path spelling, access).
///
/// Why the extra grant's entries are not simply appended: with most-specific-wins (R-P2) an
/// appended `{ path = ":workspace/src", access = "read" }` would make a writable `src`
/// read-only, and an extra grant's `deny` carve-out would hide a path the base lets you read.
/// So the base is resolved for `ctx` and each extra grant path `P` (shallow first) gets
/// `access = max(base(P), extra grant(P))` by [`Access::width`], and an entry is added only
/// where that changes the answer. Answers are compared at canonical paths (symlinks
/// resolved), the paths the backends enforce. An entry keeps the extra grant's spelling when
/// all of its expansions got the same access, else it is split into absolute paths.
/// Entries without a `source` are tagged [`ADDITIONAL_SOURCE`].
///
/// Consequences, all on the safe side:
/// - a more specific base entry still wins beneath an extra grant path (an extra grant on `~`
///   does not open the `~/.ssh` the base denies; ask for `~/.ssh/known_hosts` itself);
/// - a base `deny` on exactly the same path is not lifted (ties go to deny, R-P2);
/// - R-P3 protection applies to writable roots an extra grant adds (`.git/hooks` of a newly
///   writable repo stays read-only unless the extra grant names it).
///
/// `merge(merge(b, x), x) == merge(b, x)`. Use [`effective_profile`] to respect the
/// profile kind. Errors: those of [`resolve`] for the base or the extra grant's spellings.
pub fn merge(
    base: &PermissionProfile,
    extra: &AdditionalPermissions,
    ctx: &ResolveContext,
    fs: &dyn FsView,
) -> Result<PermissionProfile, ResolveError> {
    let mut merged = base.clone();
    if extra.wants_network() {
        merged.network = NetworkPolicy::Enabled;
    }
    let restricted = matches!(
        base.effective_filesystem(),
        FilesystemPolicy::Restricted { .. }
    );
    if !restricted || extra.entries.is_empty() {
        return Ok(merged);
    }
    let resolved_base = resolve(base, ctx, fs)?;
    let flat = flatten(&extra.entries, ctx, &resolved_base.workspace, fs)?;
    let extra_at =
        |q: &Path| scope_access(flat.iter().map(|f| (f.canonical.as_path(), f.access)), q);
    // Answers are taken at canonical paths: that is what the backends enforce (they layer
    // `ResolvedEntry::path`), see `ResolvedFilesystem::layered`.
    // A path the private /tmp hides counts as not granted (issue 8 §1): otherwise a `read`
    // of `/tmp/r.git` would look like "already readable" and be dropped, and stay hidden.
    let seen = |f: &crate::resolve::ResolvedFilesystem, p: &Path| match f.seen(fs, p) {
        crate::view::Seen::Host(a) => a,
        crate::view::Seen::PrivateTmp => Access::Deny,
    };
    let base_at = |p: &Path| seen(&resolved_base.filesystem, p);

    let mut order: Vec<usize> = (0..flat.len()).collect();
    order.sort_by_key(|&i| depth(&flat[i].canonical));
    // (flat index, access) of the expansions that changed the answer.
    let mut emitted: Vec<(usize, Access)> = Vec::new();
    let mut work = merged.clone();
    // `work` resolved: kept in step with `work`, so each candidate costs one resolution.
    let mut resolved_work = resolve(&work, ctx, fs)?;
    for i in order {
        let f = &flat[i];
        let want = wider(base_at(&f.canonical), extra_at(&f.canonical));
        if want == seen(&resolved_work.filesystem, &f.canonical) {
            continue;
        }
        work.push_entries([FsEntry::new(path_string(&f.lexical), want)]);
        let tried = resolve(&work, ctx, fs)?;
        if seen(&tried.filesystem, &f.canonical) == want {
            emitted.push((i, want));
            resolved_work = tried;
        } else if let FilesystemPolicy::Restricted { entries, .. } = &mut work.filesystem {
            // Ineffective (e.g. a base deny on the same path wins the tie): leave it out
            // (`work` is back to the state `resolved_work` was made from).
            entries.pop();
        }
    }

    // Rebuild the appended part in the extra grant's order, with spellings and sources.
    let mut appended: Vec<FsEntry> = Vec::new();
    for (index, e) in extra.entries.iter().enumerate() {
        let expansions: Vec<usize> = (0..flat.len())
            .filter(|&i| flat[i].index == index)
            .collect();
        let got: Vec<(usize, Access)> = emitted
            .iter()
            .filter(|(i, _)| flat[*i].index == index)
            .copied()
            .collect();
        if got.is_empty() {
            continue;
        }
        let source = Some(
            e.source
                .clone()
                .unwrap_or_else(|| ADDITIONAL_SOURCE.to_string()),
        );
        let same = got.len() == expansions.len() && got.iter().all(|(_, a)| *a == got[0].1);
        if same {
            appended.push(FsEntry {
                path: e.path.clone(),
                access: got[0].1,
                source,
            });
        } else {
            let mut got = got;
            got.sort_by_key(|(i, _)| *i);
            for (i, a) in got {
                appended.push(FsEntry {
                    path: path_string(&flat[i].lexical),
                    access: a,
                    source: source.clone(),
                });
            }
        }
    }
    if let FilesystemPolicy::Restricted { entries, .. } = &mut merged.filesystem {
        for e in appended {
            if !entries
                .iter()
                .any(|x| x.path == e.path && x.access == e.access)
            {
                entries.push(e);
            }
        }
    }
    keep_base_grants(&resolved_base, &mut merged, ctx, fs)?;
    pin_revived_grants(&resolved_base, base, &mut merged, ctx, fs, |p| {
        wider(base_at(p), extra_at(p))
    })?;
    // The kept and pinned base grants can narrow a path the loop above skipped as already
    // given (a base read kept at `/d/e` under an extra `/w` write, while the extra grant
    // also names `/d/e` write): that extra grant is added now, so merging again adds
    // nothing (idempotence, found by the property test).
    let mut resolved_m = resolve(&merged, ctx, fs)?;
    let mut order: Vec<usize> = (0..flat.len()).collect();
    order.sort_by_key(|&i| depth(&flat[i].canonical));
    for i in order {
        let f = &flat[i];
        let want = wider(base_at(&f.canonical), extra_at(&f.canonical));
        if want == seen(&resolved_m.filesystem, &f.canonical) {
            continue;
        }
        let source = extra.entries[f.index]
            .source
            .clone()
            .unwrap_or_else(|| ADDITIONAL_SOURCE.to_string());
        merged.push_entries([FsEntry::new(path_string(&f.lexical), want).with_source(source)]);
        let tried = resolve(&merged, ctx, fs)?;
        if seen(&tried.filesystem, &f.canonical) == want {
            resolved_m = tried;
        } else if let FilesystemPolicy::Restricted { entries, .. } = &mut merged.filesystem {
            entries.pop();
        }
    }
    Ok(merged)
}

/// The converse of [`keep_base_grants`]: a base grant spelled through a symlink inside a
/// writable root that [`resolve`] dropped for the base (it led outside every writable
/// root) can come back once the extra grant makes its landing place a writable root — a
/// `read` of `ws/link/f` (`link -> /d/e`) revived by an extra `/` write beside an extra
/// `/w/link` deny would read `/d/e/f`, which neither side grants. So that the merge stays a
/// union (R-O1), each revived grant's canonical path is pinned to the union's answer
/// (`union`: the wider of the base's and the extra grant's answers there), repeated until
/// no pin revives anything else (a `write` pin is a new writable root).
fn pin_revived_grants(
    resolved_base: &crate::resolve::ResolvedProfile,
    base: &PermissionProfile,
    merged: &mut PermissionProfile,
    ctx: &ResolveContext,
    fs: &dyn FsView,
    union: impl Fn(&Path) -> Access,
) -> Result<(), ResolveError> {
    use crate::resolve::{EntryOrigin, ResolvedFilesystem};
    let ResolvedFilesystem::Restricted { entries: was, .. } = &resolved_base.filesystem else {
        return Ok(());
    };
    let base_len = match &base.filesystem {
        FilesystemPolicy::Restricted { entries, .. } => entries.len(),
        FilesystemPolicy::Unrestricted => return Ok(()),
    };
    let kept = |i: usize| {
        was.iter()
            .any(|b| matches!(b.origin, EntryOrigin::Profile { index, .. } if index == i))
    };
    // Each round pins at least one more path or stops; the base has `base_len` entries.
    for _ in 0..=base_len {
        let resolved = resolve(merged, ctx, fs)?;
        let ResolvedFilesystem::Restricted { entries: now, .. } = &resolved.filesystem else {
            return Ok(());
        };
        let pins: Vec<FsEntry> = now
            .iter()
            .filter(|n| {
                matches!(n.origin, EntryOrigin::Profile { index, .. }
                    if index < base_len && !kept(index))
                    && n.access != Access::Deny
            })
            .filter_map(|n| {
                let want = union(&n.path);
                let seen = match resolved.filesystem.seen(fs, &n.path) {
                    crate::view::Seen::Host(a) => a,
                    crate::view::Seen::PrivateTmp => Access::Deny,
                };
                (seen != want).then(|| {
                    FsEntry::new(path_string(&n.path), want).with_source(format!(
                        "base entry {} (dropped for the base; pinned to the union at its \
                         resolved path)",
                        n.spelled.display()
                    ))
                })
            })
            .collect();
        let FilesystemPolicy::Restricted { entries, .. } = &merged.filesystem else {
            return Ok(());
        };
        let pins: Vec<FsEntry> = pins
            .into_iter()
            .filter(|p| {
                !entries
                    .iter()
                    .any(|e| e.path == p.path && e.access == p.access)
            })
            .collect();
        if pins.is_empty() {
            return Ok(());
        }
        merged.push_entries(pins);
    }
    Ok(())
}

/// A base grant spelled through a symlink is dropped by [`resolve`] once the extra grant makes
/// the symlink's directory writable (a confined command could re-point it). So that the
/// merge still never narrows (R-O1), such a grant is kept in its canonical spelling, as it
/// was resolved for the base — which no later re-pointing can move.
fn keep_base_grants(
    resolved_base: &crate::resolve::ResolvedProfile,
    merged: &mut PermissionProfile,
    ctx: &ResolveContext,
    fs: &dyn FsView,
) -> Result<(), ResolveError> {
    let crate::resolve::ResolvedFilesystem::Restricted { entries: base, .. } =
        &resolved_base.filesystem
    else {
        return Ok(());
    };
    let resolved = resolve(merged, ctx, fs)?;
    let crate::resolve::ResolvedFilesystem::Restricted { entries: now, .. } = &resolved.filesystem
    else {
        return Ok(());
    };
    let lost: Vec<FsEntry> = base
        .iter()
        .filter(|b| {
            matches!(b.origin, crate::resolve::EntryOrigin::Profile { .. })
                && b.access != Access::Deny
                && !now.iter().any(|n| n.path == b.path && n.access == b.access)
        })
        .map(|b| {
            FsEntry::new(path_string(&b.path), b.access).with_source(format!(
                "base entry {} (kept at its resolved path)",
                b.spelled.display()
            ))
        })
        .collect();
    merged.push_entries(lost);
    Ok(())
}

/// The profile the transform compiles for one command: `base` with the extra grant applied
/// according to the profile kind (R-P1, R-O1). `None` → `base` unchanged.
///
/// - `managed`: filesystem and network are widened by [`merge`] (the filesystem only when
///   it is restricted — an unrestricted one has nothing to widen).
/// - `disabled`: the filesystem is already unrestricted (no outer sandbox), so filesystem
///   entries are ignored — there is nothing to widen. The network part still applies: a
///   disabled profile whose network is `restricted` is still sandboxed for the network by
///   R-S1 step 2, and R-O1 says the network is enabled if either side enables it.
/// - `external`: the caller owns (and confines) the filesystem, so cordon cannot widen it
///   and filesystem entries are ignored; only the network part applies.
///
/// Errors: those of [`merge`].
pub fn effective_profile(
    base: &PermissionProfile,
    extra: Option<&AdditionalPermissions>,
    ctx: &ResolveContext,
    fs: &dyn FsView,
) -> Result<PermissionProfile, ResolveError> {
    let Some(extra) = extra else {
        return Ok(base.clone());
    };
    match base.kind {
        ProfileKind::Managed => merge(base, extra, ctx, fs),
        ProfileKind::Disabled | ProfileKind::External => {
            let network_only = AdditionalPermissions {
                network: extra.network,
                entries: Vec::new(),
            };
            merge(base, &network_only, ctx, fs)
        }
    }
}
