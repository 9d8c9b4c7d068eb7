//! Additional permissions: merge (R-O1), intersect (R-O2), the empty case (R-O3), and the
//! overlay per profile kind.
mod common;
use cordon_policy::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn fs() -> MemFs {
    MemFs::new()
        .dir("/w/.git/hooks")
        .dir("/w/a/b")
        .dir("/w/c")
        .dir("/d/e/f")
        .dir("/h/.ssh")
        .dir("/tmp")
        .symlink("/w/l", "/d/e")
}

fn ctx() -> ResolveContext {
    common::ctx_at("/w", "/h")
}

fn ws() -> PermissionProfile {
    PermissionProfile::builtin("workspace-write").unwrap()
}

fn perms(network: Option<bool>, entries: &[(&str, Access)]) -> AdditionalPermissions {
    AdditionalPermissions {
        network,
        entries: entries.iter().map(|(p, a)| FsEntry::new(*p, *a)).collect(),
    }
}

fn entries(p: &PermissionProfile) -> &[FsEntry] {
    match &p.filesystem {
        FilesystemPolicy::Restricted { entries, .. } => entries,
        FilesystemPolicy::Unrestricted => &[],
    }
}

fn access(p: &PermissionProfile, q: &str) -> Access {
    let fs = fs();
    resolve(p, &ctx(), &fs)
        .unwrap()
        .filesystem
        .access_for(&fs, Path::new(q))
        .access
}

fn merged(base: &PermissionProfile, x: &AdditionalPermissions) -> PermissionProfile {
    merge(base, x, &ctx(), &fs()).unwrap()
}

fn recorded(req: &AdditionalPermissions, app: &AdditionalPermissions) -> Recorded {
    intersect(req, app, &ctx(), &fs()).unwrap()
}

fn grant(r: &Recorded) -> &AdditionalPermissions {
    r.additional().expect("expected a grant")
}

// ---------------------------------------------------------------- merge (R-O1)

#[test]
fn merge_network_is_a_union() {
    let base = ws();
    assert_eq!(
        merged(&base, &perms(Some(true), &[])).network,
        NetworkPolicy::Enabled
    );
    assert_eq!(
        merged(&base, &perms(Some(false), &[])).network,
        NetworkPolicy::Restricted
    );
    assert_eq!(
        merged(&base, &perms(None, &[])).network,
        NetworkPolicy::Restricted
    );
    let mut open = ws();
    open.network = NetworkPolicy::Enabled;
    assert_eq!(
        merged(&open, &perms(Some(false), &[])).network,
        NetworkPolicy::Enabled
    );
}

#[test]
fn merge_appends_after_base_in_order_deduplicated() {
    let base = ws();
    let x = AdditionalPermissions {
        network: None,
        entries: vec![
            FsEntry::new("/d/e", Access::Write).with_source("--allow-write"),
            FsEntry::new("/d/e", Access::Write),
            FsEntry::new("~/.ssh/known_hosts", Access::Read),
        ],
    };
    let m = merged(&base, &x);
    let n = entries(&base).len();
    assert_eq!(
        &entries(&m)[..n],
        entries(&base),
        "base entries first, unchanged"
    );
    assert_eq!(
        &entries(&m)[n..],
        &[
            FsEntry::new("/d/e", Access::Write).with_source("--allow-write"),
            FsEntry::new("~/.ssh/known_hosts", Access::Read).with_source("additional permissions"),
        ]
    );
    assert_eq!(access(&m, "/d/e/f/x"), Access::Write);
    assert_eq!(access(&m, "/h/.ssh/known_hosts"), Access::Read);
    assert_eq!(
        access(&m, "/h/.ssh/id_rsa"),
        Access::Deny,
        "the rest of ~/.ssh stays hidden"
    );
    assert_eq!(merged(&m, &x), m, "idempotent");
}

/// Appending `{ :workspace/a, read }` would make a writable directory read-only; merge
/// never narrows, so it adds nothing.
#[test]
fn merge_never_narrows_read_inside_write() {
    let base = ws();
    let m = merged(
        &base,
        &perms(
            None,
            &[(":workspace/a", Access::Read), ("/w/c", Access::Deny)],
        ),
    );
    assert_eq!(m, base);
    assert_eq!(access(&m, "/w/a/b/x"), Access::Write);
    assert_eq!(access(&m, "/w/c/x"), Access::Write);
}

/// An overlay's deny carves a hole in the overlay's own grant; the base answer stays there.
#[test]
fn merge_overlay_carve_out_keeps_base_answer() {
    let base = ws();
    let m = merged(
        &base,
        &perms(None, &[("/d", Access::Write), ("/d/e", Access::Deny)]),
    );
    assert_eq!(access(&m, "/d/x"), Access::Write);
    assert_eq!(
        access(&m, "/d/e/x"),
        Access::Read,
        "base default read, not deny"
    );
}

/// A more specific base entry still wins beneath an overlay path: an overlay on `~` does
/// not open the `~/.ssh` the base denies.
#[test]
fn merge_does_not_lift_deeper_base_deny() {
    let mut base = ws();
    if let FilesystemPolicy::Restricted { default, .. } = &mut base.filesystem {
        *default = Access::Deny;
    }
    let m = merged(&base, &perms(None, &[("~", Access::Read)]));
    assert_eq!(access(&base, "/h/x"), Access::Deny);
    assert_eq!(access(&m, "/h/x"), Access::Read);
    assert_eq!(access(&m, "/h/.ssh/id_rsa"), Access::Deny);
}

#[test]
fn merge_on_unrestricted_only_touches_network() {
    let mut base = ws();
    base.filesystem = FilesystemPolicy::Unrestricted;
    let m = merged(&base, &perms(Some(true), &[("/d", Access::Deny)]));
    assert_eq!(m.filesystem, FilesystemPolicy::Unrestricted);
    assert_eq!(m.network, NetworkPolicy::Enabled);
}

#[test]
fn merge_of_two_overlays() {
    let a = perms(None, &[("/d", Access::Write), ("/w/c", Access::Read)]);
    let b = perms(Some(true), &[("/d", Access::Write), ("/d/e", Access::Deny)]);
    let m = a.merge(&b);
    assert_eq!(m.network, Some(true));
    assert_eq!(
        m.entries,
        perms(
            None,
            &[
                ("/d", Access::Write),
                ("/w/c", Access::Read),
                ("/d/e", Access::Deny)
            ]
        )
        .entries
    );
    assert_eq!(m.merge(&m), m);
    assert_eq!(
        perms(None, &[]).merge(&perms(Some(false), &[])).network,
        Some(false)
    );
}

// ---------------------------------------------------------------- effective_profile

#[test]
fn effective_profile_per_kind() {
    let x = perms(Some(true), &[("/d", Access::Write)]);
    let fs = fs();
    let eff = |p: &PermissionProfile, o: Option<&AdditionalPermissions>| {
        effective_profile(p, o, &ctx(), &fs).unwrap()
    };
    // No overlay: the base, unchanged.
    assert_eq!(eff(&ws(), None), ws());
    // managed: filesystem and network.
    let m = eff(&ws(), Some(&x));
    assert_eq!(m.network, NetworkPolicy::Enabled);
    assert_eq!(access(&m, "/d/x"), Access::Write);
    // disabled: already unrestricted, nothing to widen on the filesystem; network applies.
    let mut disabled = ws();
    disabled.kind = ProfileKind::Disabled;
    let d = eff(&disabled, Some(&x));
    assert_eq!(d.filesystem, disabled.filesystem);
    assert_eq!(d.network, NetworkPolicy::Enabled);
    assert!(d.filesystem_unrestricted());
    // external: the caller owns the filesystem; only the network part applies.
    let mut external = ws();
    external.kind = ProfileKind::External;
    let e = eff(&external, Some(&x));
    assert_eq!(e.filesystem, external.filesystem);
    assert_eq!(e.network, NetworkPolicy::Enabled);
    let e = eff(&external, Some(&perms(None, &[("/d", Access::Write)])));
    assert_eq!(e, external);
}

// ---------------------------------------------------------------- intersect (R-O2, R-O3)

#[test]
fn intersect_network_needs_both() {
    let yes = perms(Some(true), &[]);
    let no = perms(None, &[]);
    assert_eq!(grant(&recorded(&yes, &yes)).network, Some(true));
    assert!(recorded(&yes, &no).is_nothing());
    assert!(
        recorded(&no, &yes).is_nothing(),
        "approving the network nobody asked for records nothing"
    );
}

#[test]
fn intersect_keeps_approved_inside_requested_only() {
    let req = perms(None, &[("/d", Access::Write)]);
    // Inside: kept. Outside (/w/c): dropped, although approved.
    let app = perms(None, &[("/d/e/f", Access::Write), ("/w/c", Access::Write)]);
    assert_eq!(
        grant(&recorded(&req, &app)).entries,
        perms(None, &[("/d/e/f", Access::Write)]).entries
    );
    // Wider than requested: clamped to what was requested.
    let req = perms(None, &[("/d", Access::Read)]);
    let app = perms(None, &[("/d", Access::Write)]);
    assert_eq!(
        grant(&recorded(&req, &app)).entries,
        perms(None, &[("/d", Access::Read)]).entries
    );
    // An approval broader than the request records only the request.
    let req = perms(None, &[("/d/e", Access::Write)]);
    let app = perms(None, &[("/", Access::Write)]);
    assert_eq!(grant(&recorded(&req, &app)).entries, req.entries);
}

#[test]
fn intersect_requested_deny_still_wins() {
    let req = perms(None, &[("/d", Access::Write), ("/d/e", Access::Deny)]);
    // Approving the hole itself records nothing.
    assert!(recorded(&req, &perms(None, &[("/d/e/f", Access::Write)])).is_nothing());
    // Approving the whole of /d records /d minus the hole.
    let r = recorded(&req, &perms(None, &[("/d", Access::Write)]));
    assert_eq!(grant(&r).entries, req.entries);
}

/// Relative, `:workspace` and symlinked grants are recorded as absolute canonical paths,
/// so they cannot re-bind to another directory later.
#[test]
fn intersect_records_absolute_canonical_paths() {
    let req = perms(None, &[(":workspace", Access::Write)]);
    let app = perms(None, &[("a", Access::Write), ("l/f", Access::Write)]);
    let r = recorded(&req, &app);
    let paths: Vec<&str> = grant(&r).entries.iter().map(|e| e.path.as_str()).collect();
    // `l` -> /d/e lies outside :workspace once resolved, so it is not recorded.
    assert_eq!(paths, vec!["/w/a"]);
    let req = perms(None, &[("/d", Access::Write)]);
    let r = recorded(&req, &perms(None, &[("l/f", Access::Write)]));
    assert_eq!(
        grant(&r).entries,
        perms(None, &[("/d/e/f", Access::Write)]).entries
    );
    // The recorded grant means the same from any other cwd.
    let other = ResolveContext {
        cwd: "/d".into(),
        ..ctx()
    };
    let m = merge(&ws(), grant(&r), &other, &fs()).unwrap();
    let fs = fs();
    let rm = resolve(&m, &other, &fs).unwrap();
    assert_eq!(
        rm.filesystem.access_for(&fs, Path::new("/d/e/f/x")).access,
        Access::Write
    );
}

#[test]
fn intersect_keeps_sources() {
    let req = perms(None, &[("/d", Access::Write)]);
    let app = AdditionalPermissions {
        network: None,
        entries: vec![FsEntry::new("/d/e", Access::Write).with_source("approval 7")],
    };
    let r = recorded(&req, &app);
    assert_eq!(grant(&r).entries[0].source.as_deref(), Some("approval 7"));
}

/// R-O3: empty is "nothing recorded" — the base profile stays in force; it is neither the
/// strictest profile nor a refusal.
#[test]
fn empty_intersection_records_nothing_and_keeps_the_base() {
    let req = perms(Some(true), &[("/d", Access::Write)]);
    let app = perms(None, &[("/w/c", Access::Write)]);
    let r = recorded(&req, &app);
    assert_eq!(r, Recorded::Nothing);
    assert_eq!(r.additional(), None);
    let base = ws();
    let eff = effective_profile(&base, r.additional(), &ctx(), &fs()).unwrap();
    assert_eq!(eff, base, "the base profile, not a narrowed one");
    assert_eq!(
        access(&eff, "/w/a/x"),
        Access::Write,
        "the workspace is still writable"
    );
    // A deny-only result grants nothing either.
    assert!(recorded(
        &perms(None, &[("/d", Access::Deny)]),
        &perms(None, &[("/d", Access::Deny)])
    )
    .is_nothing());
}

#[test]
fn non_empty_grant_cannot_be_empty() {
    assert!(NonEmptyGrant::new(AdditionalPermissions::default()).is_none());
    assert!(NonEmptyGrant::new(perms(Some(false), &[("/d", Access::Deny)])).is_none());
    assert!(NonEmptyGrant::new(perms(Some(true), &[])).is_some());
    assert!(NonEmptyGrant::new(perms(None, &[("/d", Access::Read)])).is_some());
    // Serde keeps the invariant.
    assert!(serde_json::from_str::<NonEmptyGrant>(r#"{"entries":[]}"#).is_err());
    assert_eq!(
        serde_json::to_string(&Recorded::Nothing).unwrap(),
        r#""nothing""#
    );
    let g = Recorded::Grant(NonEmptyGrant::new(perms(Some(true), &[])).unwrap());
    let json = serde_json::to_string(&g).unwrap();
    assert_eq!(json, r#"{"grant":{"network":true}}"#);
    assert_eq!(serde_json::from_str::<Recorded>(&json).unwrap(), g);
    assert!(serde_json::from_str::<Recorded>(r#"{"grant":{}}"#).is_err());
}

#[test]
fn unknown_root_is_an_error() {
    let bad = perms(None, &[(":wrkspace", Access::Write)]);
    assert!(intersect(&bad, &bad, &ctx(), &fs()).is_err());
    assert!(merge(&ws(), &bad, &ctx(), &fs()).is_err());
}

// ---------------------------------------------------------------- properties

const POOL: &[&str] = &[
    "/",
    "/w",
    "/w/a",
    "/w/a/b",
    "/w/c",
    "/w/.git",
    "/w/.git/hooks",
    "/d",
    "/d/e",
    "/d/e/f",
    "/h",
    "/h/.ssh",
    "/w/l",
    "/w/l/f",
    ":workspace",
    ":workspace/a",
    "a/b",
    "~/.ssh",
    ":tmp",
];
/// Canonical (symlink-free) pool paths, for structural intersect properties.
const CANONICAL: &[&str] = &[
    "/", "/w", "/w/a", "/w/a/b", "/w/c", "/d", "/d/e", "/d/e/f", "/h", "/h/.ssh", "/tmp",
];

fn probes() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for p in [
        "/",
        "/w",
        "/w/a",
        "/w/a/b",
        "/w/c",
        "/w/.git",
        "/w/.git/hooks",
        "/w/.cordon",
        "/d",
        "/d/e",
        "/d/e/f",
        "/h",
        "/h/.ssh",
        "/w/l",
        "/w/l/f",
        "/tmp",
        "/etc",
    ] {
        v.push(PathBuf::from(p));
        v.push(Path::new(p).join("x"));
    }
    v
}

fn canonical_probes() -> Vec<PathBuf> {
    let fs = fs();
    let mut v: Vec<PathBuf> = probes()
        .into_iter()
        .map(|p| cordon_policy::paths::canonicalize_lenient(&fs, &p))
        .collect();
    v.sort();
    v.dedup();
    v
}

fn access_strategy() -> impl Strategy<Value = Access> {
    prop_oneof![Just(Access::Read), Just(Access::Write), Just(Access::Deny)]
}

fn entry_strategy(pool: &'static [&'static str]) -> impl Strategy<Value = FsEntry> {
    (prop::sample::select(pool), access_strategy()).prop_map(|(p, a)| FsEntry::new(p, a))
}

fn overlay_strategy(pool: &'static [&'static str]) -> impl Strategy<Value = AdditionalPermissions> {
    (
        prop::option::of(any::<bool>()),
        prop::collection::vec(entry_strategy(pool), 0..6),
    )
        .prop_map(|(network, entries)| AdditionalPermissions { network, entries })
}

fn base_strategy() -> impl Strategy<Value = PermissionProfile> {
    (
        access_strategy(),
        prop::collection::vec(entry_strategy(POOL), 0..6),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(default, entries, protect_metadata, net)| PermissionProfile {
                name: "prop".into(),
                kind: ProfileKind::Managed,
                filesystem: FilesystemPolicy::Restricted {
                    default,
                    entries,
                    protect_metadata,
                },
                network: if net {
                    NetworkPolicy::Enabled
                } else {
                    NetworkPolicy::Restricted
                },
                network_rules: Default::default(),
                env: EnvPolicy::default(),
                on_unavailable: OnUnavailable::Refuse,
                limits: Default::default(),
                caches: Default::default(),
                extra_caches: Vec::new(),
            },
        )
}

/// The scope of an overlay, independently of the overlay module: resolve it as a profile
/// whose uncovered paths are denied ("not part of the overlay").
fn scope(x: Option<&AdditionalPermissions>, q: &Path) -> Access {
    let Some(x) = x else { return Access::Deny };
    let p = PermissionProfile {
        name: "scope".into(),
        kind: ProfileKind::Managed,
        filesystem: FilesystemPolicy::Restricted {
            default: Access::Deny,
            entries: x.entries.clone(),
            protect_metadata: false,
        },
        network: NetworkPolicy::Restricted,
        network_rules: Default::default(),
        env: EnvPolicy::default(),
        on_unavailable: OnUnavailable::Refuse,
        limits: Default::default(),
        caches: Default::default(),
        extra_caches: Vec::new(),
    };
    let fs = fs();
    resolve(&p, &ctx(), &fs)
        .unwrap()
        .filesystem
        .access_for(&fs, q)
        .access
}

fn w(a: Access) -> u8 {
    a.width()
}

/// The normal form of a symlink-free absolute overlay: one entry per path, none redundant
/// (each differs from what its ancestors already say), original order.
fn normal(x: &AdditionalPermissions) -> AdditionalPermissions {
    let mut seen: Vec<&FsEntry> = Vec::new();
    for e in &x.entries {
        if !seen.iter().any(|s| s.path == e.path) {
            seen.push(e);
        }
    }
    let mut order: Vec<usize> = (0..seen.len()).collect();
    order.sort_by_key(|&i| Path::new(&seen[i].path).components().count());
    let mut kept: Vec<usize> = Vec::new();
    for i in order {
        let p = Path::new(&seen[i].path);
        let inherited = kept
            .iter()
            .filter(|&&k| p.starts_with(&seen[k].path))
            .max_by_key(|&&k| Path::new(&seen[k].path).components().count())
            .map(|&k| seen[k].access)
            .unwrap_or(Access::Deny);
        if seen[i].access != inherited {
            kept.push(i);
        }
    }
    kept.sort();
    AdditionalPermissions {
        network: if x.network == Some(true) {
            Some(true)
        } else {
            None
        },
        entries: kept.into_iter().map(|i| seen[i].clone()).collect(),
    }
}

/// Cases per property: 96 by default (fast under CI), `PROPTEST_CASES=5000` for a hunt.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(96)
}

fn decided_by_protection(r: &ResolvedProfile, a: &cordon_policy::resolve::PathAccess) -> bool {
    let ResolvedFilesystem::Restricted { entries, .. } = &r.filesystem else {
        return false;
    };
    a.entry
        .is_some_and(|i| matches!(entries[i].origin, EntryOrigin::Protected { .. }))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// R-O1: every path readable/writable under the base stays so under the merge (R-P3
    /// protection of a writable root the overlay adds is the one documented exception),
    /// the network never closes, and the merge is idempotent. Paths are probed canonical
    /// (symlinks resolved): that is what the backends enforce.
    #[test]
    fn merge_never_narrows_and_is_idempotent(
        base in base_strategy(),
        x in overlay_strategy(POOL),
    ) {
        let fs = fs();
        let m = merged(&base, &x);
        let rb = resolve(&base, &ctx(), &fs).unwrap();
        let rm = resolve(&m, &ctx(), &fs).unwrap();
        for q in canonical_probes() {
            let b = rb.filesystem.access_for(&fs, &q);
            let a = rm.filesystem.access_for(&fs, &q);
            prop_assert!(
                !b.access.can_read() || a.access.can_read(),
                "{q:?}: {b:?} -> {a:?}\n{m:#?}"
            );
            // … and it is a union: nothing wider than what the base or the overlay says
            // (resolve's protected entries are `read` even in a denied area — reported —
            // so a protected decider is excused here too).
            let protected = decided_by_protection(&rm, &a);
            prop_assert!(
                protected || w(a.access) <= w(b.access).max(w(scope(Some(&x), &q))),
                "{q:?}: {b:?} -> {a:?} exceeds the union\n{m:#?}"
            );
            prop_assert!(
                !b.access.can_write() || a.access.can_write() || protected,
                "{q:?} lost write: {b:?} -> {a:?}\n{m:#?}"
            );
        }
        prop_assert_eq!(
            x.network == Some(true) || base.network == NetworkPolicy::Enabled,
            m.network == NetworkPolicy::Enabled
        );
        prop_assert_eq!(&entries(&m)[..entries(&base).len()], entries(&base));
        prop_assert_eq!(merged(&m, &x), m);
    }

    /// R-O2: the record is inside both the request and the approval, pointwise; the network
    /// only when both enable it; empty exactly when nothing is in both (R-O3).
    #[test]
    fn intersect_is_inside_both(req in overlay_strategy(POOL), app in overlay_strategy(POOL)) {
        let r = recorded(&req, &app);
        let g = r.additional();
        let mut something = false;
        for q in canonical_probes() {
            let (rq, ap, rec) = (scope(Some(&req), &q), scope(Some(&app), &q), scope(g, &q));
            prop_assert!(w(rec) <= w(rq), "{q:?}: recorded {rec:?} > requested {rq:?}\n{r:#?}");
            prop_assert!(w(rec) <= w(ap), "{q:?}: recorded {rec:?} > approved {ap:?}\n{r:#?}");
            prop_assert_eq!(w(rec), w(rq).min(w(ap)), "{:?}: not exactly both\n{:#?}", q, r);
            something |= w(rec) > 0;
        }
        let both_net = req.network == Some(true) && app.network == Some(true);
        prop_assert_eq!(g.is_some_and(|g| g.network == Some(true)), both_net);
        prop_assert_eq!(r.is_nothing(), !something && !both_net);
        // Recorded paths are absolute.
        if let Some(g) = g {
            prop_assert!(g.entries.iter().all(|e| Path::new(&e.path).is_absolute()));
        }
    }

    /// intersect(x, x) == x for absolute, canonical x in normal form; and for any x, the
    /// record has exactly x's scope.
    #[test]
    fn intersect_with_itself(x in overlay_strategy(CANONICAL), any_x in overlay_strategy(POOL)) {
        let n = normal(&x);
        let r = recorded(&n, &n);
        match NonEmptyGrant::new(n.clone()) {
            Some(g) => prop_assert_eq!(r, Recorded::Grant(g)),
            None => prop_assert!(r.is_nothing()),
        }
        let r = recorded(&any_x, &any_x);
        for q in canonical_probes() {
            prop_assert_eq!(w(scope(r.additional(), &q)), w(scope(Some(&any_x), &q)));
        }
    }

    /// Approving more never records less.
    #[test]
    fn intersect_is_monotone_in_the_approval(
        req in overlay_strategy(POOL),
        app in overlay_strategy(POOL),
        upgrade in prop::collection::vec(any::<bool>(), 6),
        more in prop::collection::vec(prop::sample::select(POOL), 0..3),
        net in any::<bool>(),
    ) {
        let mut wider = app.clone();
        for (e, up) in wider.entries.iter_mut().zip(&upgrade) {
            if *up && e.access == Access::Read {
                e.access = Access::Write;
            }
        }
        wider.entries.extend(more.iter().map(|p| FsEntry::new(*p, Access::Write)));
        if net {
            wider.network = Some(true);
        }
        // `wider` approves at least as much as `app` everywhere.
        for q in canonical_probes() {
            prop_assume!(w(scope(Some(&wider), &q)) >= w(scope(Some(&app), &q)));
        }
        let small = recorded(&req, &app);
        let big = recorded(&req, &wider);
        for q in canonical_probes() {
            prop_assert!(w(scope(big.additional(), &q)) >= w(scope(small.additional(), &q)), "{q:?}");
        }
        prop_assert!(small.is_nothing() || !big.is_nothing());
        if small.additional().is_some_and(|g| g.network == Some(true)) {
            prop_assert_eq!(big.additional().and_then(|g| g.network), Some(true));
        }
    }
}

/// A base whose `read` of `/w/l/f` (`/w/l -> /d/e`, a symlink inside the writable `/w`)
/// was dropped by resolve, merged with an extra grant that makes the landing place writable.
fn deny_default_base_with_redirected_read() -> PermissionProfile {
    let mut base = ws();
    base.filesystem = FilesystemPolicy::Restricted {
        default: Access::Deny,
        entries: vec![
            FsEntry::new("/w/l/f", Access::Read),
            FsEntry::new("/w", Access::Write),
        ],
        protect_metadata: false,
    };
    base
}

/// R-O1, found by `merge_never_narrows_and_is_idempotent`: the extra `/` write made the
/// base's dropped read grant count again, so `/d/e/f` became readable although the base
/// drops it and the extra grant denies it (`/w/l`). The merge is a union: deny there.
#[test]
fn merge_does_not_revive_a_dropped_base_grant() {
    let base = deny_default_base_with_redirected_read();
    assert_eq!(
        access(&base, "/d/e/f/x"),
        Access::Deny,
        "dropped for the base"
    );
    let x = perms(None, &[("/", Access::Write), ("/w/l", Access::Deny)]);
    let m = merged(&base, &x);
    assert_eq!(access(&m, "/d/e/f/x"), Access::Deny);
    assert_eq!(access(&m, "/d/e/x"), Access::Deny);
    assert_eq!(access(&m, "/d/x"), Access::Write);
    assert_eq!(access(&m, "/w/a/x"), Access::Write);
    assert_eq!(merged(&m, &x), m, "idempotent");
}

/// The sibling: an extra write over the landing place without a carve-out. The revived
/// read must not narrow the extra grant's write there.
#[test]
fn revived_base_grant_does_not_narrow_the_extra_grant() {
    let base = deny_default_base_with_redirected_read();
    let x = perms(None, &[("/d", Access::Write)]);
    let m = merged(&base, &x);
    assert_eq!(access(&m, "/d/e/f/x"), Access::Write);
    assert_eq!(access(&m, "/d/x"), Access::Write);
    assert_eq!(merged(&m, &x), m, "idempotent");
}
