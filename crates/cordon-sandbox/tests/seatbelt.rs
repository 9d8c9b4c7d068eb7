//! The macOS Seatbelt policy, checked on any host (issue 14): an SBPL evaluator
//! (`tests/sbpl`) runs the generated policy against cordon's own answer
//! ([`ResolvedFilesystem::access_for`]) for random profiles, paths and operations, on a
//! filesystem with the real macOS layout (`/tmp`, `/var`, `/etc` are symlinks into
//! `/private`, `TMPDIR` under `/var/folders`); a lint checks the text itself.

mod sbpl;

use cordon_policy::paths::{canonicalize_lenient, lexical_normalize};
use cordon_policy::{
    resolve, Access, FilesystemPolicy, FsEntry, FsView, MemFs, NetworkPolicy, PermissionProfile,
    ResolveContext, ResolvedFilesystem, ResolvedProfile,
};
use cordon_sandbox::seatbelt::{self, SeatbeltPolicy};
use proptest::prelude::*;
use sbpl::{FileOp, Policy, Query};
use std::path::{Path, PathBuf};

/// The macOS layout: system symlinks into `/private`, a per-user `TMPDIR` under
/// `/var/folders`, a home with credentials, a git project, and a project under `/tmp`.
fn mac_fs() -> MemFs {
    static FS: std::sync::OnceLock<MemFs> = std::sync::OnceLock::new();
    FS.get_or_init(mac_layout).clone()
}

fn mac_layout() -> MemFs {
    MemFs::new()
        .dir("/private/tmp/a/b")
        .dir("/private/tmp/w/proj/.git/hooks")
        .file("/private/tmp/w/proj/.git/HEAD", "ref: refs/heads/main\n")
        .symlink("/tmp", "private/tmp")
        .dir("/private/var/folders/zz/abc/T/x")
        .symlink("/var", "private/var")
        .file("/private/etc/hosts", "")
        .symlink("/etc", "private/etc")
        .dir("/System/Library/Frameworks")
        .file("/usr/lib/libSystem.B.dylib", "")
        .file("/bin/sh", "")
        .dir("/Users/u/proj/.git/hooks")
        .dir("/Users/u/proj/.git/objects")
        .dir("/Users/u/proj/.git/refs")
        .file("/Users/u/proj/.git/config", "")
        .file("/Users/u/proj/.git/HEAD", "ref: refs/heads/main\n")
        .file("/Users/u/proj/.git/index", "")
        .dir("/Users/u/proj/src/deep")
        .file("/Users/u/proj/src/main.rs", "")
        .dir("/Users/u/proj/secret")
        .file("/Users/u/.ssh/id_rsa", "")
        .dir("/Users/u/other")
}

const CWDS: &[&str] = &["/Users/u/proj", "/private/tmp/w/proj"];

fn ctx(cwd: &str) -> ResolveContext {
    ResolveContext {
        cwd: cwd.into(),
        home: Some("/Users/u".into()),
        tmpdir: Some("/var/folders/zz/abc/T".into()),
        profile_files: vec![],
        ..Default::default()
    }
}

fn profile(default: Access, entries: Vec<FsEntry>, protect: bool, net: bool) -> PermissionProfile {
    let mut p = PermissionProfile::builtin("workspace-write").unwrap();
    p.filesystem = FilesystemPolicy::Restricted {
        default,
        entries,
        protect_metadata: protect,
    };
    p.network = if net {
        NetworkPolicy::Enabled
    } else {
        NetworkPolicy::Restricted
    };
    p
}

fn compiled(p: &SeatbeltPolicy) -> Policy {
    sbpl::load(&p.text, &p.params).unwrap_or_else(|e| panic!("{e}\n{}", p.text))
}

fn setup(p: &PermissionProfile, cwd: &str) -> (MemFs, ResolvedProfile, SeatbeltPolicy, Policy) {
    let fs = mac_fs();
    let r = resolve(p, &ctx(cwd), &fs).unwrap();
    let sb = seatbelt::policy(&r);
    let c = compiled(&sb);
    (fs, r, sb, c)
}

/// Seatbelt sees resolved paths.
fn canon(fs: &MemFs, p: &str) -> String {
    canonicalize_lenient(fs, &lexical_normalize(Path::new(p), Path::new("/")))
        .to_string_lossy()
        .into_owned()
}

// ---------------------------------------------------------------------------------------
// cordon's own answer, from the resolved profile (the reference the policy must equal).
// ---------------------------------------------------------------------------------------

/// The access `access_for` gives `p`.
fn access(r: &ResolvedFilesystem, fs: &MemFs, p: &str) -> Access {
    r.access_for(fs, Path::new(p)).access
}

/// Pinned (R-P3): an existing path that is an existing entry or an ancestor of one. Renaming
/// or removing it would move an entry's rules away from the files they govern (on Linux
/// those entries are mount points and carry their rules with them).
fn pinned(r: &ResolvedFilesystem, fs: &MemFs, p: &str) -> bool {
    let p = Path::new(p);
    fs.kind(p).is_some()
        && r.layered()
            .iter()
            .any(|e| e.exists && e.path.starts_with(p))
}

/// cordon's verdict for `op` (paths already resolved): read needs read access; write and
/// create need write access; removing or renaming X (source, or an existing destination)
/// needs write access at X and, when X exists, at its parent, and X not pinned. Hard links are refused on macOS (a narrowing,
/// see docs/macos.md); the general rule (write on both names) must never be exceeded.
fn cordon_verdict(r: &ResolvedFilesystem, fs: &MemFs, op: &FileOp) -> bool {
    let w = |p: &str| access(r, fs, p) == Access::Write;
    // An existing entry's name lives in its parent directory: removing or replacing it
    // also needs write access there (POSIX; on Linux the parent is a mount's directory).
    let parent_w = |p: &str| {
        fs.kind(Path::new(p)).is_none()
            || Path::new(p)
                .parent()
                .is_some_and(|d| w(&d.to_string_lossy()))
    };
    let movable = |p: &str| w(p) && parent_w(p) && !pinned(r, fs, p);
    match op {
        FileOp::Read(p) => access(r, fs, p).can_read(),
        FileOp::Write(p) => w(p),
        FileOp::Create(p) | FileOp::Unlink(p) => movable(p),
        FileOp::Rename(s, d) => movable(s) && movable(d),
        FileOp::Link(..) => matches!(r, ResolvedFilesystem::Unrestricted),
    }
}

// ---------------------------------------------------------------------------------------
// Property: the evaluator's verdict equals cordon's, for random profiles, paths and ops.
// ---------------------------------------------------------------------------------------

const ENTRY_POOL: &[&str] = &[
    ":workspace",
    ":tmp",
    ":workspace/src",
    ":workspace/.git",
    ":workspace/src/deep",
    ":workspace/secret",
    ":home/.ssh",
    ":home",
    "/Users/u/other",
    "/tmp/a",
    "/private/tmp/a/b",
    "/var/folders/zz/abc/T/x",
    "/tmp/w",
];

const PATH_POOL: &[&str] = &[
    "/Users/u/proj",
    "/Users/u/proj/.git",
    "/Users/u/proj/.git/hooks",
    "/Users/u/proj/.git/hooks/pre-commit",
    "/Users/u/proj/.git/config",
    "/Users/u/proj/.git/index",
    "/Users/u/proj/.git/objects",
    "/Users/u/proj/x",
    "/Users/u/proj/src",
    "/Users/u/proj/src/main.rs",
    "/Users/u/proj/src/deep",
    "/Users/u/proj/src/deep/f",
    "/Users/u/proj/.cordon",
    "/Users/u/proj/secret",
    "/Users/u/proj/secret/k",
    "/Users/u/.ssh",
    "/Users/u/.ssh/id_rsa",
    "/Users/u/other",
    "/Users/u/other/f",
    "/Users/u",
    "/Users/u/proj2",
    "/tmp/a",
    "/tmp/a/b",
    "/tmp/a/b/c",
    "/tmp/x",
    "/tmp/w",
    "/tmp/w/proj",
    "/tmp/w/proj/.git",
    "/tmp/w/proj/.git/hooks/post-checkout",
    "/private/tmp/w/proj/f",
    "/var/folders/zz/abc/T",
    "/var/folders/zz/abc/T/x",
    "/private/var/folders/zz/abc/T/y",
];

fn access_of(n: u8) -> Access {
    match n % 3 {
        0 => Access::Read,
        1 => Access::Write,
        _ => Access::Deny,
    }
}

fn op_of(fs: &MemFs, kind: u8, a: usize, b: usize) -> FileOp {
    let a = canon(fs, PATH_POOL[a]);
    let b = canon(fs, PATH_POOL[b]);
    match kind % 6 {
        0 => FileOp::Read(a),
        1 => FileOp::Write(a),
        2 => FileOp::Create(a),
        3 => FileOp::Unlink(a),
        4 => FileOp::Rename(a, b),
        _ => FileOp::Link(a, b),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn evaluator_equals_access_for(
        default in 0u8..3,
        entries in prop::collection::vec((0..ENTRY_POOL.len(), 0u8..3), 0..6),
        protect in any::<bool>(),
        net in any::<bool>(),
        cwd in 0..CWDS.len(),
        ops in prop::collection::vec((0u8..6, 0..PATH_POOL.len(), 0..PATH_POOL.len()), 1..10),
    ) {
        let p = profile(
            access_of(default),
            entries.iter().map(|(i, a)| FsEntry::new(ENTRY_POOL[*i], access_of(*a))).collect(),
            protect,
            net,
        );
        static FS: std::sync::OnceLock<MemFs> = std::sync::OnceLock::new();
        let fs = FS.get_or_init(mac_layout);
        let Ok(r) = resolve(&p, &ctx(CWDS[cwd]), fs) else { return Ok(()) };
        let sb = seatbelt::policy(&r);
        let c = compiled(&sb);
        for (k, a, b) in ops {
            let op = op_of(fs, k, a, b);
            let got = c.file_op(&op);
            let want = cordon_verdict(&r.filesystem, fs, &op);
            prop_assert_eq!(got, want, "{:?}\nprofile: {:?}\nresolved: {:#?}", op, p.filesystem, r.filesystem.layered());
            if let FileOp::Link(s, d) = &op {
                let general = access(&r.filesystem, fs, s) == Access::Write
                    && access(&r.filesystem, fs, d) == Access::Write;
                prop_assert!(!got || general, "a hard link wider than write on both names");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Defect 1: protected paths cannot be moved aside (each a fixed case of the property).
// ---------------------------------------------------------------------------------------

fn ws() -> PermissionProfile {
    PermissionProfile::builtin("workspace-write").unwrap()
}

#[test]
fn dot_git_cannot_be_moved_aside_or_replaced() {
    let (_, _, _, c) = setup(&ws(), "/Users/u/proj");
    let git = "/Users/u/proj/.git".to_string();
    // `mv .git x; echo … > x/hooks/pre-commit; mv x .git`
    assert!(!c.file_op(&FileOp::Rename(git.clone(), "/Users/u/proj/x".into())));
    // replacing `.git` with a `gitdir:` file starts by removing it
    assert!(!c.file_op(&FileOp::Unlink(git.clone())));
    // the protected children themselves
    for p in ["hooks", "config"] {
        let p = format!("{git}/{p}");
        assert!(
            !c.file_op(&FileOp::Rename(p.clone(), "/Users/u/proj/y".into())),
            "{p}"
        );
        assert!(!c.file_op(&FileOp::Write(format!("{p}/pre-commit"))));
    }
    // a new directory cannot be renamed onto `.git` either
    assert!(!c.file_op(&FileOp::Rename("/Users/u/proj/x".into(), git.clone())));
    // the workspace root itself cannot be moved to another writable root
    assert!(!c.file_op(&FileOp::Rename(
        "/Users/u/proj".into(),
        "/private/tmp/proj".into()
    )));
    // Still works: git's own writes, and ordinary moves in the workspace.
    for op in [
        FileOp::Create(format!("{git}/index.lock")),
        FileOp::Rename(format!("{git}/index.lock"), format!("{git}/index")),
        FileOp::Create(format!("{git}/objects/ab")),
        FileOp::Rename(
            "/Users/u/proj/src/main.rs".into(),
            "/Users/u/proj/src/lib.rs".into(),
        ),
        FileOp::Rename("/Users/u/proj/src".into(), "/Users/u/proj/src2".into()),
        FileOp::Create("/private/var/folders/zz/abc/T/tmp.1".into()),
        FileOp::Unlink("/private/tmp/a/b".into()),
    ] {
        assert!(c.file_op(&op), "{op:?}");
    }
}

/// The same trick one level up: a workspace inside another writable root cannot be moved
/// away by renaming its parent (nor can the root's protected children).
#[test]
fn ancestors_of_a_workspace_in_a_writable_root_are_pinned() {
    let p = profile(
        Access::Read,
        vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/tmp/w", Access::Write),
        ],
        true,
        false,
    );
    let (_, _, _, c) = setup(&p, "/private/tmp/w/proj");
    for p in [
        "/private/tmp/w",
        "/private/tmp/w/proj",
        "/private/tmp/w/proj/.git",
    ] {
        assert!(
            !c.file_op(&FileOp::Rename(p.into(), "/private/tmp/w/moved".into())),
            "{p}"
        );
        assert!(!c.file_op(&FileOp::Unlink(p.into())), "{p}");
    }
    // Still works: new files and directories beside it come and go.
    assert!(c.file_op(&FileOp::Create("/private/tmp/w/new".into())));
    assert!(c.file_op(&FileOp::Rename(
        "/private/tmp/w/new".into(),
        "/private/tmp/w/new2".into()
    )));
}

/// A denied path whose ancestor is writable: the ancestor cannot be moved aside to reveal it.
#[test]
fn ancestors_of_a_denied_path_in_a_writable_region_are_pinned() {
    let p = profile(
        Access::Read,
        vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":workspace/src/deep", Access::Deny),
        ],
        true,
        false,
    );
    let (_, _, _, c) = setup(&p, "/Users/u/proj");
    assert!(!c.file_op(&FileOp::Read("/Users/u/proj/src/deep/f".into())));
    assert!(!c.file_op(&FileOp::Rename(
        "/Users/u/proj/src".into(),
        "/Users/u/proj/moved".into()
    )));
    assert!(!c.file_op(&FileOp::Rename(
        "/Users/u/proj/src/deep".into(),
        "/Users/u/proj/moved".into()
    )));
    // Hard link out of the denied region: refused.
    assert!(!c.file_op(&FileOp::Link(
        "/Users/u/proj/src/deep/f".into(),
        "/Users/u/proj/f".into()
    )));
    // And out of a read-only (protected) file into the workspace.
    assert!(!c.file_op(&FileOp::Link(
        "/Users/u/proj/.git/config".into(),
        "/Users/u/proj/cfg".into()
    )));
}

// ---------------------------------------------------------------------------------------
// Defects 4–6: platform defaults, base allowances, narrowed allowances.
// ---------------------------------------------------------------------------------------

fn sysctl(c: &Policy, name: &str) -> bool {
    c.allows(&Query {
        op: "sysctl-read",
        name: Some(("sysctl-name", name)),
        ..Default::default()
    })
}

fn named(c: &Policy, op: &str, kind: &str, name: &str) -> bool {
    c.allows(&Query {
        op,
        name: Some((kind, name)),
        ..Default::default()
    })
}

#[test]
fn default_deny_profile_can_start_a_process() {
    let p = profile(
        Access::Deny,
        vec![
            FsEntry::new(":minimal", Access::Read),
            FsEntry::new(":workspace", Access::Write),
        ],
        true,
        false,
    );
    let (_, _, _, c) = setup(&p, "/Users/u/proj");
    for path in [
        "/usr/lib/libSystem.B.dylib",
        "/System/Library/Frameworks/Foundation.framework/Foundation",
        "/private/var/db/dyld/dyld_shared_cache_arm64e",
        "/Library/Apple/usr/lib/x.dylib",
    ] {
        assert!(c.file("file-read-data", path), "{path}");
        assert!(c.file("file-map-executable", path), "{path}");
    }
    assert!(c.file("file-read-data", "/bin/sh"));
    assert!(c.file("file-read-data", "/private/etc/hosts"));
    assert!(c.file("file-read-metadata", "/tmp"), "symlink spelling");
    assert!(
        c.file("file-read-metadata", "/Users/u"),
        "ancestor of an entry"
    );
    assert!(!c.file("file-read-data", "/Users/u/.ssh/id_rsa"));
    assert!(!c.file("file-read-data", "/Users/u/other/f"));
    // A workspace-local dylib (a venv's extension module) can be mapped.
    assert!(c.file("file-map-executable", "/Users/u/proj/.venv/lib/x.so"));
}

#[test]
fn base_allowances_for_ordinary_tools() {
    let (_, _, _, c) = setup(&ws(), "/Users/u/proj");
    // Terminals: REPLs, prompts, stty.
    assert!(c.allows(&Query {
        op: "pseudo-tty",
        ..Default::default()
    }));
    for tty in ["/dev/tty", "/dev/ttys003", "/dev/ptmx"] {
        assert!(c.file("file-read-data", tty), "{tty}");
        assert!(c.file("file-write-data", tty), "{tty}");
        assert!(c.allows(&Query {
            op: "file-ioctl",
            path: Some(tty),
            ioctl: Some(0x4008_7468), // TIOCGWINSZ
            ..Default::default()
        }));
    }
    // TIOCSTI is refused.
    assert!(!c.allows(&Query {
        op: "file-ioctl",
        path: Some("/dev/ttys003"),
        ioctl: Some(0x8001_7472),
        ..Default::default()
    }));
    // Also when the filesystem is unrestricted (its `file*` comes after the base section).
    let mut full = PermissionProfile::builtin("danger-full-access").unwrap();
    full.network = NetworkPolicy::Restricted;
    let (_, _, _, f) = setup(&full, "/Users/u/proj");
    assert!(!f.allows(&Query {
        op: "file-ioctl",
        path: Some("/dev/ttys003"),
        ioctl: Some(0x8001_7472),
        ..Default::default()
    }));
    assert!(c.allows(&Query {
        op: "ipc-posix-sem",
        ..Default::default()
    }));
    assert!(c.allows(&Query {
        op: "mach-host-port",
        ..Default::default()
    }));
    assert!(sysctl(&c, "hw.ncpu") && sysctl(&c, "hw.perflevel0.logicalcpu"));
    assert!(sysctl(&c, "kern.proc.pid.123"));
    assert!(c.allows(&Query {
        op: "process-info-listpids",
        ..Default::default()
    }));
    assert!(c.allows(&Query {
        op: "user-preference-read",
        ..Default::default()
    }));
    for p in [
        "/dev/stdout",
        "/dev/stderr",
        "/dev/fd/1",
        "/dev/fd/2",
        "/dev/null",
    ] {
        assert!(c.file("file-write-data", p), "{p}");
    }
}

#[test]
fn overbroad_allowances_are_narrowed() {
    let (_, _, _, c) = setup(&ws(), "/Users/u/proj");
    // kern.procargs2 shows other processes' arguments and environment.
    assert!(!sysctl(&c, "kern.procargs2"));
    assert!(!sysctl(&c, "kern.procargs"));
    assert!(!sysctl(&c, "security.mac.amfi.whatever"));
    // POSIX shared memory: only the platform's names, never writable.
    assert!(named(
        &c,
        "ipc-posix-shm-read-data",
        "ipc-posix-name",
        "apple.shm.notification_center"
    ));
    assert!(!named(
        &c,
        "ipc-posix-shm-read-data",
        "ipc-posix-name",
        "/pg_shm"
    ));
    assert!(!named(
        &c,
        "ipc-posix-shm-write-data",
        "ipc-posix-name",
        "apple.shm.notification_center"
    ));
    // Network restricted: nothing, not even DNS.
    assert!(!c.file("network-outbound", "/private/var/run/mDNSResponder"));
    // Network enabled: IP and the DNS responder; container engines never implicitly.
    let mut p = ws();
    p.network = NetworkPolicy::Enabled;
    let (_, _, _, c) = setup(&p, "/Users/u/proj");
    assert!(c.file("network-outbound", "/private/var/run/mDNSResponder"));
    for sock in [
        "/private/var/run/docker.sock",
        "/Users/u/.docker/run/docker.sock",
        "/Users/u/.colima/default/docker.sock",
        "/private/var/folders/zz/abc/T/podman/podman-machine-default-api.sock",
        "/private/var/run/syslog",
    ] {
        assert!(!c.file("network-outbound", sock), "{sock}");
    }
    assert!(named(
        &c,
        "mach-lookup",
        "global-name",
        "com.apple.trustd.agent"
    ));
    assert!(named(
        &c,
        "mach-lookup",
        "global-name",
        "com.apple.SystemConfiguration.DNSConfiguration"
    ));
}

/// TMPDIR under /var/folders and /tmp are granted in their resolved spelling.
#[test]
fn macos_layout_uses_resolved_spellings() {
    let (_, _, sb, c) = setup(&ws(), "/Users/u/proj");
    let values: Vec<&str> = sb.params.iter().map(|(_, v)| v.as_str()).collect();
    assert!(
        values.contains(&"/private/var/folders/zz/abc/T"),
        "{values:?}"
    );
    assert!(values.contains(&"/private/tmp"), "{values:?}");
    assert!(c.file("file-write-create", "/private/var/folders/zz/abc/T/f"));
    assert!(c.file("file-write-create", "/private/tmp/f"));
    assert!(!c.file("file-write-create", "/private/etc/f"));
    assert!(!c.file("file-write-create", "/private/var/folders/zz/abc/C/f"));
    // The spellings a shell shows are stat-able (getcwd, realpath).
    assert!(c.file("file-read-metadata", "/var/folders/zz/abc/T"));
}

// ---------------------------------------------------------------------------------------
// Lint: the text parses; every (param …) is bound and every -D used; operation and filter
// names come from an allow list; no literal user path.
// ---------------------------------------------------------------------------------------

const OPS: &[&str] = &[
    "default",
    "process-exec",
    "process-fork",
    "signal",
    "process-info*",
    "process-info-listpids",
    "process-info-pidinfo",
    "sysctl-read",
    "mach-host*",
    "mach-lookup",
    "user-preference-read",
    "ipc-posix-sem",
    "ipc-posix-shm-read-data",
    "ipc-posix-shm-read-metadata",
    "pseudo-tty",
    "file*",
    "file-read*",
    "file-read-data",
    "file-read-metadata",
    "file-write*",
    "file-write-data",
    "file-write-create",
    "file-write-unlink",
    "file-ioctl",
    "file-map-executable",
    "file-link",
    "system-mac-syscall",
    "system-socket",
    "network-outbound",
    "network-inbound",
    "network-bind",
];

const FILTERS: &[&str] = &[
    "literal",
    "subpath",
    "regex",
    "param",
    "require-all",
    "require-not",
    "sysctl-name",
    "sysctl-name-prefix",
    "global-name",
    "ipc-posix-name",
    "ioctl-command",
    "target",
    "remote",
    "local",
    "ip",
    "mac-policy-name",
];

/// System locations a policy may name literally; everything else comes in a parameter.
const SYSTEM_PATHS: &[&str] = &[
    "/",
    "/System",
    "/Library/Apple",
    "/Library/Developer/CommandLineTools",
    "/Library/Preferences",
    "/Library",
    "/Library/Developer",
    "/usr",
    "/bin",
    "/sbin",
    "/dev",
    "/tmp",
    "/var",
    "/etc",
    "/private",
    "/private/var",
    "/private/var/folders",
    "/private/etc",
    "/private/var/db",
    "/private/var/select",
    "/private/var/run/mDNSResponder",
];

fn lint(sb: &SeatbeltPolicy) {
    let forms = sbpl::parse(&sb.text).expect("parses");
    let c = compiled(sb);
    for op in &c.ops_used {
        assert!(
            OPS.contains(&op.as_str()),
            "operation {op} not in the allow list"
        );
    }
    for f in &c.filters_used {
        assert!(
            FILTERS.contains(&f.as_str()),
            "filter {f} not in the allow list"
        );
    }
    for (k, _) in &sb.params {
        assert!(c.params_used.contains(k), "-D {k} is never used");
    }
    for lit in &c.literals {
        if !lit.starts_with('/') {
            continue;
        }
        let ok = SYSTEM_PATHS
            .iter()
            .any(|s| lit == s || (s.len() > 1 && lit.starts_with(&format!("{s}/"))));
        let user = [
            "/Users",
            "/home",
            "/Volumes",
            "/private/tmp",
            "/private/var/folders/",
        ]
        .iter()
        .any(|u| lit.starts_with(u));
        assert!(ok && !user, "literal path {lit:?} in the policy text");
    }
    assert!(!forms.is_empty());
    assert!(!sb.text.contains("/Users/"), "a user path in the text");
    // Network address filters accept only `*` or `localhost` as the host.
    let addr = regex::Regex::new(r#"\((remote|local) (ip|tcp|udp)[46]? "([^"]*)"\)"#).unwrap();
    for cap in addr.captures_iter(&sb.text) {
        let host = cap[3].split(':').next().unwrap_or("");
        assert!(
            host == "*" || host == "localhost",
            "address filter {:?}",
            &cap[0]
        );
    }
}

#[test]
fn lint_every_builtin_and_shape() {
    for name in ["workspace-write", "read-only", "danger-full-access"] {
        for cwd in CWDS {
            let mut p = PermissionProfile::builtin(name).unwrap();
            for net in [false, true] {
                p.network = if net {
                    NetworkPolicy::Enabled
                } else {
                    NetworkPolicy::Restricted
                };
                let (_, _, sb, _) = setup(&p, cwd);
                lint(&sb);
            }
        }
    }
    let p = profile(
        Access::Deny,
        vec![
            FsEntry::new(":minimal", Access::Read),
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new(":home/.ssh", Access::Deny),
        ],
        true,
        true,
    );
    let (_, _, sb, _) = setup(&p, "/Users/u/proj");
    lint(&sb);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The lint holds for random profiles too, including hostile path spellings.
    #[test]
    fn lint_random_profiles(
        default in 0u8..3,
        entries in prop::collection::vec((0..ENTRY_POOL.len(), 0u8..3), 0..6),
        net in any::<bool>(),
    ) {
        let p = profile(
            access_of(default),
            entries.iter().map(|(i, a)| FsEntry::new(ENTRY_POOL[*i], access_of(*a))).collect(),
            true,
            net,
        );
        if let Ok(r) = resolve(&p, &ctx("/Users/u/proj"), &mac_fs()) {
            lint(&seatbelt::policy(&r));
        }
    }
}

/// A lint must catch what it is for: a spliced path, an unbound parameter, an unknown
/// operation.
#[test]
fn lint_catches_bad_policies() {
    let (_, _, sb, _) = setup(&ws(), "/Users/u/proj");
    let spliced = SeatbeltPolicy {
        text: format!("{}(allow file-read* (subpath \"/Users/u/x\"))\n", sb.text),
        params: sb.params.clone(),
    };
    assert!(std::panic::catch_unwind(|| lint(&spliced)).is_err());
    let unbound = SeatbeltPolicy {
        text: format!("{}(allow file-read* (subpath (param \"NOPE\")))\n", sb.text),
        params: sb.params.clone(),
    };
    assert!(sbpl::load(&unbound.text, &unbound.params).is_err());
    let host = SeatbeltPolicy {
        text: format!(
            "{}(allow network-outbound (remote ip \"10.0.0.1:443\"))\n",
            sb.text
        ),
        params: sb.params.clone(),
    };
    assert!(std::panic::catch_unwind(|| lint(&host)).is_err());
    let unknown_op = SeatbeltPolicy {
        text: format!("{}(allow file-write-everything)\n", sb.text),
        params: sb.params.clone(),
    };
    assert!(std::panic::catch_unwind(|| lint(&unknown_op)).is_err());
}

#[test]
fn pinned_paths_are_exactly_the_writable_existing_entries_and_ancestors() {
    let p = profile(
        Access::Read,
        vec![
            FsEntry::new(":workspace", Access::Write),
            FsEntry::new("/tmp/w", Access::Write),
        ],
        true,
        false,
    );
    let (fs, r, _, _) = setup(&p, "/private/tmp/w/proj");
    let pins = seatbelt::pinned_paths(&r.filesystem);
    for p in &pins {
        assert_eq!(
            access(&r.filesystem, &fs, &p.to_string_lossy()),
            Access::Write,
            "{p:?}"
        );
    }
    for want in [
        "/private/tmp/w",
        "/private/tmp/w/proj",
        "/private/tmp/w/proj/.git",
    ] {
        assert!(pins.contains(&PathBuf::from(want)), "{want} in {pins:?}");
    }
}
