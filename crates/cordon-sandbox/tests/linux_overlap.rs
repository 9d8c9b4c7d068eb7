//! R-P3 across runs (issue 7 item 1): several sandboxes in one workspace, started and
//! ended in random order, some SIGKILLed, each trying all the time to write every protected
//! path — including the ones that did not exist before the first run (`.git/commondir`,
//! `.git/modules`, `.git/worktrees`, `.git/config.worktree`, `.cordon`, and `.git` in a
//! repository-less workspace). None of the writes may land on the host.
//!
//! Fails when a run removes its placeholders at exit: on Linux >= 3.18 removing the host
//! entry detaches the read-only bind of every other run still using it.
#![cfg(target_os = "linux")]

mod support;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};
use support::*;

/// A small deterministic generator (xorshift); the seed is printed so a failure can be
/// replayed with `CORDON_STRESS_SEED`.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}");
}

/// Every protected path of a repository workspace, written in every way a planted file
/// or directory could be made; prints `WROTE <what>` for each write that succeeded.
const REPO_ATTACK: &str = r#"
i=0
while [ $i -lt "$1" ]; do
  i=$((i+1))
  echo ../evil > .git/commondir 2>/dev/null && echo "WROTE commondir"
  mkdir .git/modules/x 2>/dev/null && echo "WROTE modules"
  mkdir -p .git/modules 2>/dev/null && mkdir .git/modules/y 2>/dev/null && echo "WROTE modules2"
  mkdir .git/worktrees/x 2>/dev/null && echo "WROTE worktrees"
  echo '[core]' > .git/config.worktree 2>/dev/null && echo "WROTE config.worktree"
  mkdir .cordon/x 2>/dev/null && echo "WROTE cordon dir"
  echo x > .cordon/x 2>/dev/null && echo "WROTE cordon file"
  echo x > .git/hooks/pre-commit 2>/dev/null && echo "WROTE hook"
  # .git/config is a writable private copy (issue 11 §3): the write lands in the copy,
  # and the check after the runs is that the host file is unchanged (not merged back).
  printf '[alias]\n\tx = !id\n' >> .git/config 2>/dev/null
  sleep 0.03
done
echo DONE
"#;

/// The same for a workspace without a repository: `.git` and `.cordon` must stay as
/// they are (placeholders), so a later host `git` finds no planted repository.
const PLAIN_ATTACK: &str = r#"
i=0
while [ $i -lt "$1" ]; do
  i=$((i+1))
  mkdir -p .git/hooks 2>/dev/null && echo x > .git/hooks/pre-commit 2>/dev/null && echo "WROTE hook"
  echo 'ref: refs/heads/x' > .git/HEAD 2>/dev/null && echo "WROTE HEAD"
  echo 'gitdir: /elsewhere' > .git 2>/dev/null && echo "WROTE gitfile"
  mkdir -p .cordon/x 2>/dev/null && echo "WROTE cordon"
  sleep 0.03
done
echo DONE
"#;

struct Run {
    child: Child,
    kill_at: Option<Instant>,
    what: String,
}

#[test]
fn overlapping_runs_never_expose_protected_paths() {
    if !require_full() {
        return;
    }
    let seed = std::env::var("CORDON_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("CORDON_STRESS_SEED={seed}");
    let mut rng = Rng(seed);

    let repo_sb = Sandbox::new();
    git(&repo_sb.ws, &["init", "-q"]);
    let plain_sb = Sandbox::new();
    let config_before = std::fs::read_to_string(repo_sb.ws.join(".git/config")).unwrap();

    let start = Instant::now();
    let mut runs: Vec<Run> = Vec::new();
    // 6 runs in the repository and 4 in the plain workspace, interleaved: random start
    // gaps, random lengths (iterations of ~30 ms), about one in three SIGKILLed at a random
    // moment. Run 0 of each workspace is the shortest, so at least one run always ends
    // (and would clean up) while others are still writing.
    for i in 0..10 {
        std::thread::sleep(Duration::from_millis(rng.below(120)));
        let (sb, script, name) = if i % 5 < 3 {
            (&repo_sb, REPO_ATTACK, "repo")
        } else {
            (&plain_sb, PLAIN_ATTACK, "plain")
        };
        let iters = if i < 2 { 2 } else { 8 + rng.below(25) };
        let child = sb
            .command(&["sh", "-c", script, "attack", &iters.to_string()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("helper starts");
        let kill_at = (i >= 2 && rng.below(3) == 0)
            .then(|| Instant::now() + Duration::from_millis(100 + rng.below(600)));
        runs.push(Run {
            child,
            kill_at,
            what: format!(
                "{name} run {i} ({iters} rounds, killed: {})",
                kill_at.is_some()
            ),
        });
    }

    let deadline = start + Duration::from_secs(30);
    let mut outputs = Vec::new();
    while !runs.is_empty() {
        assert!(Instant::now() < deadline, "runs did not finish in time");
        let mut i = 0;
        while i < runs.len() {
            let r = &mut runs[i];
            if r.kill_at.is_some_and(|t| Instant::now() >= t) {
                let _ = r.child.kill();
                r.kill_at = None;
            }
            if r.child.try_wait().unwrap().is_some() {
                let r = runs.swap_remove(i);
                let o = r.child.wait_with_output().unwrap();
                outputs.push((r.what, o));
            } else {
                i += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }

    let mut finished = 0;
    for (what, o) in &outputs {
        let out = stdout(o);
        assert!(
            !out.contains("WROTE"),
            "{what}: a protected path was writable:\n{out}\nstderr: {}",
            stderr(o)
        );
        if out.contains("DONE") {
            finished += 1;
        }
    }
    assert!(finished >= 2, "too few runs completed: {outputs:?}");

    // Host state: nothing planted.
    let g = repo_sb.ws.join(".git");
    if let Ok(c) = std::fs::read_to_string(g.join("commondir")) {
        assert_eq!(c, ".\n", "commondir planted");
    }
    for d in ["modules", "worktrees"] {
        if let Ok(rd) = std::fs::read_dir(g.join(d)) {
            assert_eq!(rd.count(), 0, ".git/{d} has entries");
        }
    }
    if let Ok(c) = std::fs::read_to_string(g.join("config.worktree")) {
        assert_eq!(c, "", "config.worktree planted");
    }
    assert!(!g.join("hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(g.join("config")).unwrap(),
        config_before
    );
    for ws in [&repo_sb.ws, &plain_sb.ws] {
        assert!(!ws.join(".cordon/x").exists(), "{}/.cordon/x", ws.display());
    }
    let pg = plain_sb.ws.join(".git");
    assert!(!pg.is_file(), "a .git file was planted");
    assert!(!pg.join("HEAD").exists(), "a repository was planted");
    assert!(!pg.join("hooks").exists(), "hooks were planted");
}
