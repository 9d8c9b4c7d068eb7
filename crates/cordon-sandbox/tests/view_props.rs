//! Issue 8 §1, pure half (no kernel): for random profiles and paths, the verdict of the
//! policy's one view (`ResolvedFilesystem::seen`, what `explain` reports) equals what the
//! Linux mount plan (`linux::layout`, what the helper mounts) shows at that path —
//! simulated by taking the deepest mount step covering it. Runs >= 10k path checks; the
//! kernel half (`linux_view.rs`) probes the same verdicts inside real sandboxes.
#![cfg(target_os = "linux")]

use cordon_policy::{
    resolve, Access, FilesystemPolicy, FsEntry, MemFs, PermissionProfile, ResolveContext, Seen,
};
use cordon_sandbox::linux::{layout, Base, Layout, StepKind};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Write,
    Read,
    Absent,
}

/// What the mount plan shows at the existing host path `p`.
fn simulate(l: &Layout, p: &Path) -> Shown {
    let deepest = l
        .tree()
        .filter(|s| !matches!(s.kind, StepKind::PinLink | StepKind::CopyLink))
        .filter(|s| p.starts_with(&s.path))
        .max_by_key(|s| s.path.components().count());
    match deepest.map(|s| &s.kind) {
        Some(StepKind::Bind { writable: true, .. }) => Shown::Write,
        Some(StepKind::Bind {
            writable: false, ..
        }) => Shown::Read,
        Some(StepKind::Mask { .. } | StepKind::PrivateTmp { .. }) => Shown::Absent,
        Some(_) => unreachable!(),
        None => match l.base {
            Base::HostReadOnly => Shown::Read,
            Base::HostWritable => Shown::Write,
            Base::Empty => Shown::Absent,
        },
    }
}

fn verdict(seen: Seen) -> Shown {
    match seen {
        Seen::PrivateTmp | Seen::Host(Access::Deny) => Shown::Absent,
        Seen::Host(Access::Read) => Shown::Read,
        Seen::Host(Access::Write) => Shown::Write,
    }
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn explain_verdict_equals_the_mount_plan() {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for root in ["/tmp/t", "/srv/ws", "/srv/x", "/h/u", "/tmp/ws"] {
        for d in ["", "/a", "/a/b", "/a/b/c", "/d", "/d/e"] {
            dirs.push(PathBuf::from(format!("{root}{d}")));
        }
    }
    let mut fs = MemFs::new()
        .dir("/srv/ws/.git/hooks")
        .file("/srv/ws/.git/config", "")
        .file("/srv/ws/.git/HEAD", "ref: refs/heads/main\n")
        .dir("/tmp/ws/.git/objects")
        .dir("/usr/bin");
    for d in &dirs {
        fs = fs.file(&format!("{}/f", d.display()), "x");
    }
    let mut probes: Vec<PathBuf> = dirs.iter().map(|d| d.join("f")).collect();
    probes.extend(
        [
            "/srv/ws/.git/hooks/pre-commit",
            "/srv/ws/.git/config",
            "/srv/ws/.git/HEAD",
            "/usr/bin/sh",
        ]
        .map(PathBuf::from),
    );
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let mut checked = 0usize;
    for case in 0..400 {
        let mut entries = vec![FsEntry::new(":workspace", Access::Write)];
        if rng.below(2) == 0 {
            entries.push(FsEntry::new(":tmp", Access::Write));
        }
        for _ in 0..rng.below(6) {
            let d = &dirs[rng.below(dirs.len() as u64) as usize];
            let a = [Access::Read, Access::Write, Access::Deny][rng.below(3) as usize];
            entries.push(FsEntry::new(d.to_str().unwrap(), a));
        }
        let default =
            [Access::Read, Access::Read, Access::Deny, Access::Write][rng.below(4) as usize];
        let mut p = PermissionProfile::builtin("workspace-write").unwrap();
        p.filesystem = FilesystemPolicy::Restricted {
            default,
            entries: entries.clone(),
            protect_metadata: true,
        };
        let cwd = ["/srv/ws", "/tmp/ws"][rng.below(2) as usize];
        let ctx = ResolveContext {
            cwd: cwd.into(),
            home: Some("/h/u".into()),
            ..Default::default()
        };
        let Ok(r) = resolve(&p, &ctx, &fs) else {
            continue;
        };
        let l = layout(&r.filesystem);
        for path in &probes {
            let want = verdict(r.filesystem.seen(&fs, path));
            let got = simulate(&l, path);
            assert_eq!(
                got,
                want,
                "case {case}: {} default {default} cwd {cwd} entries {entries:?}\nplan: {:#?}",
                path.display(),
                l.steps
            );
            checked += 1;
        }
    }
    assert!(checked >= 10_000, "only {checked} checks");
    eprintln!("checked {checked} verdicts against the mount plan");
}
