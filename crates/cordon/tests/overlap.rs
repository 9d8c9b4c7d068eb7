//! Issue 7 item 1 through the CLI: several `cordon run` processes in one workspace,
//! started and ended in random order, some SIGKILLed, each trying all the time to write
//! every protected path (`echo ../evil > .git/commondir`, `mkdir .git/modules/x`,
//! `.cordon/x`, `.git/config.worktree`, and `.git` in a workspace without a repository).
//! None may succeed. Fails when a run removes its placeholders at exit (that detaches the
//! read-only binds of the runs still going). Bounded: ~2 s, 30 s hard limit.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CORDON: &str = env!("CARGO_BIN_EXE_cordon");

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

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

fn cordon(dir: &Path, home: &Path, script: &str, iters: u64) -> Child {
    Command::new(CORDON)
        .args(["run", "--yes", "--", "sh", "-c", script, "attack"])
        .arg(iters.to_string())
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("CORDON_DISABLE_LAYERS")
        .env_remove("CORDON_PROFILE")
        .env_remove("CORDON_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn overlapping_cordon_runs_never_expose_protected_paths() {
    let ok = Command::new(CORDON)
        .args(["status", "--json"])
        .output()
        .ok()
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
        .is_some_and(|v| v["status"]["sandbox_enabled"]["value"] == true);
    if !ok {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI host must support the Linux sandbox"
        );
        eprintln!("SKIP: sandbox unavailable");
        return;
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("seed {seed}");
    let mut rng = Rng(seed);
    let root = tempfile::Builder::new()
        .prefix("cordon-overlap-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let base = root.path().canonicalize().unwrap();
    let (repo, plain, home) = (base.join("repo"), base.join("plain"), base.join("home"));
    for d in [&repo, &plain, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    assert!(Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .unwrap()
        .success());
    let config_before = std::fs::read_to_string(repo.join(".git/config")).unwrap();

    let mut runs: Vec<(String, Child, Option<Instant>)> = Vec::new();
    for i in 0..9 {
        std::thread::sleep(Duration::from_millis(rng.below(120)));
        let (dir, script) = if i % 3 < 2 {
            (&repo, REPO_ATTACK)
        } else {
            (&plain, PLAIN_ATTACK)
        };
        let iters = if i < 3 { 2 } else { 8 + rng.below(25) };
        let kill_at = (i >= 3 && rng.below(3) == 0)
            .then(|| Instant::now() + Duration::from_millis(100 + rng.below(600)));
        runs.push((
            format!("run {i} in {} ({iters} rounds)", dir.display()),
            cordon(dir, &home, script, iters),
            kill_at,
        ));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut outputs = Vec::new();
    while !runs.is_empty() {
        assert!(Instant::now() < deadline, "runs did not finish in time");
        let mut i = 0;
        while i < runs.len() {
            if runs[i].2.is_some_and(|t| Instant::now() >= t) {
                let _ = runs[i].1.kill();
                runs[i].2 = None;
            }
            if runs[i].1.try_wait().unwrap().is_some() {
                let (what, child, _) = runs.swap_remove(i);
                outputs.push((what, child.wait_with_output().unwrap()));
            } else {
                i += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut done = 0;
    for (what, o) in &outputs {
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            !out.contains("WROTE"),
            "{what}: a protected path was writable:\n{out}\nstderr: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        done += usize::from(out.contains("DONE"));
    }
    assert!(done >= 3, "too few runs completed: {outputs:?}");
    let g = repo.join(".git");
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
    for ws in [&repo, &plain] {
        assert!(!ws.join(".cordon/x").exists());
    }
    let pg = plain.join(".git");
    assert!(!pg.is_file() && !pg.join("HEAD").exists() && !pg.join("hooks").exists());
}
