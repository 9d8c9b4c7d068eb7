//! Issue 8 §1: one view of the filesystem — what the policy says is visible is what the
//! command finds: a writable grant for a missing path is honoured (created on the host),
//! a cwd under the private /tmp is visible, and `explain`'s verdict (through
//! `ResolvedFilesystem::seen`, the object the mount plan is computed from) equals what a
//! probe inside the sandbox observes.
#![cfg(target_os = "linux")]

mod support;
use cordon_policy::{Access, FsEntry, Seen};
use cordon_sandbox::HostFs;
use std::path::Path;
use support::*;

/// `-w /tmp/w/new` with `/tmp/w/new` missing: created on the host, bound writable; the
/// command's file appears on the host. Fails when the missing grant is skipped (the
/// write lands in the private /tmp and is lost). Sibling: a grant two levels deep.
#[test]
fn missing_writable_grant_is_created_and_honoured() {
    if !require_full() {
        return;
    }
    let base = tempdir_in("/tmp");
    let w = base.path().canonicalize().unwrap();
    let new = w.join("new");
    let deep = w.join("a/b");
    let s = Sandbox::in_base(OUTSIDE_BASE)
        .filesystem(
            Access::Read,
            vec![
                entry(":workspace", Access::Write),
                entry(":tmp", Access::Write),
                entry(new.to_str().unwrap(), Access::Write),
                entry(deep.to_str().unwrap(), Access::Write),
            ],
            true,
        )
        .keep(base);
    let o = s.sh(&format!(
        "echo hi > {n}/f && echo ho > {d}/g && cat {n}/f",
        n = q(&new),
        d = q(&deep)
    ));
    assert_ok(&o);
    assert_eq!(std::fs::read_to_string(new.join("f")).unwrap(), "hi\n");
    assert_eq!(std::fs::read_to_string(deep.join("g")).unwrap(), "ho\n");
}

/// A symlink planted where the missing grant would be created is not followed: the run is
/// refused and nothing is created at the symlink's target.
#[test]
fn missing_grant_creation_does_not_follow_symlinks() {
    if !require_full() {
        return;
    }
    let base = tempdir_in("/tmp");
    let w = base.path().canonicalize().unwrap();
    let target = outside_dir();
    let grant = w.join("link/new");
    let s = Sandbox::in_base(OUTSIDE_BASE)
        .filesystem(
            Access::Read,
            vec![
                entry(":workspace", Access::Write),
                entry(grant.to_str().unwrap(), Access::Write),
            ],
            true,
        )
        .keep(base);
    // Resolved while `link` is missing, then planted before the helper runs.
    let mut cmd = s.command(&["true"]);
    std::os::unix::fs::symlink(target.path(), w.join("link")).unwrap();
    let o = cmd.output().unwrap();
    assert_fails(&o);
    assert!(stderr(&o).contains("cannot create"), "{}", stderr(&o));
    assert!(!target.path().join("new").exists());
}

/// `cd /tmp/proj && cordon run --profile read-only -- ls`: the cwd under the private
/// /tmp is visible (read-only). Fails without `EntryOrigin::Cwd` (125 "entering the
/// working directory").
#[test]
fn cwd_under_tmp_is_visible_read_only() {
    if !require_full() {
        return;
    }
    let s = Sandbox::new().builtin("read-only");
    write(&s.ws.join("a.txt"), "a\n");
    let o = s.sh("cat a.txt && ls && (echo x > b.txt) 2>/dev/null || echo RO");
    assert_ok(&o);
    assert!(stdout(&o).contains("a\n"), "{}", stdout(&o));
    assert!(stdout(&o).contains("RO"), "{}", stdout(&o));
    assert!(!s.ws.join("b.txt").exists());
}

/// What a probe observes at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Observed {
    /// Readable and writable (a new file can be created in it / it can be appended to).
    Write,
    /// Readable, not writable.
    Read,
    /// Not there or not readable.
    Absent,
}

/// The verdict the policy gives, in the probe's terms.
fn predicted(seen: Seen, exists_on_host: bool) -> Observed {
    match seen {
        Seen::PrivateTmp => Observed::Absent,
        Seen::Host(Access::Deny) => Observed::Absent,
        Seen::Host(_) if !exists_on_host => Observed::Absent,
        Seen::Host(Access::Read) => Observed::Read,
        Seen::Host(Access::Write) => Observed::Write,
    }
}

/// Tiny deterministic generator.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Property (issue 8 §1): for random profiles over a small tree (under the host /tmp and
/// elsewhere) and every directory of the tree, the policy's verdict equals what a probe
/// inside the sandbox observes. One sandbox per profile probes all paths (bounded:
/// `CASES` profiles × the tree's directories).
#[test]
fn explain_verdict_matches_a_probe_inside() {
    if !require_full() {
        return;
    }
    const CASES: u64 = 20;
    let seed = std::env::var("CORDON_VIEW_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9e3779b97f4a7c15);
    let mut rng = Rng(seed);
    let mut checked = 0;
    for case in 0..CASES {
        let tmp_root = tempdir_in("/tmp");
        let out_root = outside_dir();
        let mut dirs = Vec::new();
        for r in [tmp_root.path(), out_root.path()] {
            let r = r.canonicalize().unwrap();
            for d in ["a", "a/b", "a/b/c", "d", "d/e", "g"] {
                std::fs::create_dir_all(r.join(d)).unwrap();
                std::fs::write(r.join(d).join("f"), "x").unwrap();
                dirs.push(r.join(d));
            }
        }
        let mut entries = vec![entry(":workspace", Access::Write)];
        if rng.below(2) == 0 {
            entries.push(entry(":tmp", Access::Write));
        }
        for _ in 0..rng.below(5) {
            let d = &dirs[rng.below(dirs.len() as u64) as usize];
            let a = [Access::Read, Access::Write, Access::Deny][rng.below(3) as usize];
            entries.push(FsEntry::new(d.to_str().unwrap(), a));
        }
        let default = if rng.below(4) == 0 {
            // The shell and its libraries stay readable.
            for sys_dir in ["/usr", "/bin", "/lib", "/lib64", "/etc"] {
                if Path::new(sys_dir).exists() {
                    entries.push(entry(sys_dir, Access::Read));
                }
            }
            Access::Deny
        } else {
            Access::Read
        };
        let s = Sandbox::in_base(OUTSIDE_BASE).filesystem(default, entries.clone(), true);
        let r = s.resolved();
        let mut script = String::new();
        for d in &dirs {
            // read: the file; write: create a new file in the directory.
            script.push_str(&format!(
                "if cat {f} >/dev/null 2>&1; then if (echo y > {n}) 2>/dev/null; then echo W; \
                 else echo R; fi; else echo A; fi\n",
                f = q(&d.join("f")),
                n = q(&d.join(format!("probe{case}")))
            ));
        }
        let o = s.sh(&script);
        assert_ok(&o);
        let got: Vec<String> = stdout(&o).lines().map(|l| l.trim().to_string()).collect();
        assert_eq!(got.len(), dirs.len(), "{}", stderr(&o));
        for (d, g) in dirs.iter().zip(&got) {
            let seen = r.filesystem.seen(&HostFs, &d.join("f"));
            let want = predicted(seen, true);
            let obs = match g.as_str() {
                "W" => Observed::Write,
                "R" => Observed::Read,
                _ => Observed::Absent,
            };
            assert_eq!(
                obs, want,
                "case {case} (seed {seed}): {} seen {seen:?}, default {default}, entries {entries:?}",
                d.display()
            );
            checked += 1;
        }
        drop(tmp_root);
        drop(out_root);
    }
    eprintln!("checked {checked} path verdicts against probes");
}

/// The same on rung 2 (no user namespaces, Landlock only): the missing writable grant is
/// created before the Landlock rules are made, so it is writable there too.
#[test]
fn missing_writable_grant_is_honoured_on_the_landlock_rung() {
    if !require(&[Need::Landlock(1), Need::Seccomp]) {
        return;
    }
    let base = outside_dir();
    let new = base.path().canonicalize().unwrap().join("n/e/w");
    let mut s = Sandbox::in_base(OUTSIDE_BASE)
        .filesystem(
            Access::Read,
            vec![entry(new.to_str().unwrap(), Access::Write)],
            false,
        )
        .keep(base);
    s.disabled_layers = vec!["userns".into()];
    let o = s.sh(&format!("echo hi > {}/f", q(&new)));
    assert_ok(&o);
    assert_eq!(std::fs::read_to_string(new.join("f")).unwrap(), "hi\n");
}
