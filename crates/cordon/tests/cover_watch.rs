//! attack25 A5: a covered path (hidden, credential-stripped, protected) is a mount on the
//! host's dentry, which the kernel detaches when the *host* replaces the path by rename
//! while a command runs. cordon watches the directories of its covers and stops the run
//! (exit 125, `cancelled`, the path named in `--json` `cover_lost`) — on every launch path:
//! cold, the server's per-command helper, and a command forked from a template. And the
//! twins: host writes to other names in the same directories, and the `.git/config`
//! broker's own merge-back, do not stop anything. A credential store that did not exist at
//! launch and is created on the host during the run stops it the same way (attack28 F2).
//! One sandbox per child process.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::{last_json, sandbox_available, text, CORDON};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Launch {
    Cold,
    /// Through the server, in the git project (per-command helper: the `.git/config` copy).
    Server,
    /// Through the server, outside any repository: forked from a prepared template.
    Template,
}

impl Launch {
    fn name(self) -> &'static str {
        match self {
            Launch::Cold => "cold",
            Launch::Server => "server",
            Launch::Template => "template",
        }
    }
}

const ALL: [Launch; 3] = [Launch::Cold, Launch::Server, Launch::Template];

struct Fixture {
    p: support::Project,
    plain: PathBuf,
    /// `cordon serve` (templates on), and `cordon serve --no-templates` for
    /// [`Launch::Server`] (a server with templates sends the git project's commands, whose
    /// `.git/config` copy is per command, back to the cold path).
    servers: [Child; 2],
}

impl Drop for Fixture {
    fn drop(&mut self) {
        for s in &mut self.servers {
            let _ = s.kill();
            let _ = s.wait();
        }
    }
}

/// `cordon serve --socket SOCK EXTRA` with `home`, once it listens.
fn serve(sock: &Path, home: &Path, extra: &[&str]) -> Child {
    let server = Command::new(CORDON)
        .arg("serve")
        .arg("--socket")
        .arg(sock)
        .args(extra)
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(sock).is_err() {
        assert!(start.elapsed() < Duration::from_secs(10), "no server");
        std::thread::sleep(Duration::from_millis(20));
    }
    server
}

fn fixture() -> Fixture {
    let p = support::Project::new("cordon-cover-");
    let plain = p.root.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let servers = [
        serve(&p.root.path().join("run").join("serve.sock"), &p.home, &[]),
        serve(
            &p.root.path().join("run2").join("serve.sock"),
            &p.home,
            &["--no-templates"],
        ),
    ];
    Fixture {
        plain: plain.canonicalize().unwrap(),
        p,
        servers,
    }
}

impl Fixture {
    fn dir(&self, l: Launch) -> &Path {
        match l {
            Launch::Template => &self.plain,
            _ => &self.p.dir,
        }
    }

    /// `cordon run --json [--no-server] ARGS -- sh -c SCRIPT`, started (not waited for).
    fn start(&self, l: Launch, args: &[&str], script: &str) -> Child {
        let mut all = vec!["run", "--json"];
        if l == Launch::Cold {
            all.push("--no-server");
        }
        all.extend_from_slice(args);
        all.extend_from_slice(&["--", "sh", "-c", script]);
        let mut c = self.p.cordon_in(self.dir(l), &all);
        let run = if l == Launch::Server { "run2" } else { "run" };
        c.env(
            "CORDON_SERVE_SOCKET",
            self.p.root.path().join(run).join("serve.sock"),
        );
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        c.spawn().unwrap()
    }

    /// A warm-up run, so the template of `l`'s plan exists before the run under test.
    fn warm(&self, l: Launch, args: &[&str]) {
        let o = self.start(l, args, "true").wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
    }
}

/// Waits (bounded) until `p` exists.
fn wait_for(p: &Path, child: &mut Child) {
    let start = Instant::now();
    while !p.exists() {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("the run ended before it was ready: {st}");
        }
        assert!(start.elapsed() < Duration::from_secs(30), "not ready");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Replaces `path` on the host by rename, as `npm login`, `git config` or an editor do.
fn replace(path: &Path, content: &str) {
    let tmp = path.with_extension("cordon-test-tmp");
    std::fs::write(&tmp, content).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The script the sandboxed command runs: says it is ready (a file in `ready_in`), waits
/// until the host says it replaced something (`go`), then runs `then`.
fn waiting(ready_in: &Path, then: &str) -> String {
    format!(
        "touch {r}/ready; i=0; while [ ! -e {r}/go ] && [ $i -lt 300 ]; do sleep 0.05; \
         i=$((i+1)); done; {then}",
        r = ready_in.display()
    )
}

fn assert_stopped(o: &Output, l: Launch, path: &Path) {
    let report = last_json(&o.stderr);
    assert_eq!(
        report["launch"].as_str(),
        Some(l.name()),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(125), "{l:?}: {}", text(&o.stderr));
    // Cancelled, not refused: the command ran until it was stopped (attack pass 148 F3).
    assert_eq!(report["outcome"], "cancelled", "{l:?}: {report}");
    let why = report["cover_lost"].as_str().unwrap_or_default();
    assert!(
        why.contains(&path.display().to_string()) && why.contains("stopped"),
        "{l:?}: the reason names the path: {why}"
    );
    assert_eq!(report["reason"].as_str(), Some(why), "{l:?}");
}

/// The escape of A5(b): a denied file the host replaces by rename during the run is never
/// read — the command is stopped first, and the run says why. (Without the watch the
/// command reads the new content.)
#[test]
fn denied_file_replaced_on_the_host_stops_the_run() {
    if !sandbox_available() {
        return;
    }
    let f = fixture();
    let token = f.p.home.join("token.txt");
    std::fs::write(&token, "OLD-SECRET\n").unwrap();
    let deny = token.display().to_string();
    for l in ALL {
        let sync = f.dir(l).join(format!("sync-{}", l.name()));
        std::fs::create_dir_all(&sync).unwrap();
        let args = ["--deny-read", deny.as_str()];
        f.warm(l, &args);
        let mut c = f.start(l, &args, &waiting(&sync, &format!("cat {deny}; echo DONE")));
        wait_for(&sync.join("ready"), &mut c);
        replace(&token, &format!("NEW-SECRET-{}\n", l.name()));
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(sync.join("go"), "").unwrap();
        let o = c.wait_with_output().unwrap();
        let so = text(&o.stdout);
        assert!(
            !so.contains("NEW-SECRET"),
            "{l:?}: the replaced secret was read: {so}"
        );
        assert!(!so.contains("DONE"), "{l:?}: the command went on: {so}");
        assert_stopped(&o, l, &token);
    }
}

/// An ancestor renamed on the host (`mv ~/.config ~/.config.old`, then a new `~/.config`)
/// uncovers everything beneath it the same way: stopped too.
#[test]
fn ancestor_of_a_denied_file_renamed_on_the_host_stops_the_run() {
    if !sandbox_available() {
        return;
    }
    let f = fixture();
    for l in ALL {
        let conf = f.p.home.join(format!("conf-{}", l.name()));
        std::fs::create_dir_all(conf.join("tool")).unwrap();
        let token = conf.join("tool/token");
        std::fs::write(&token, "OLD-SECRET\n").unwrap();
        let deny = token.display().to_string();
        let sync = f.dir(l).join(format!("sync-a-{}", l.name()));
        std::fs::create_dir_all(&sync).unwrap();
        let args = ["--deny-read", deny.as_str()];
        f.warm(l, &args);
        let mut c = f.start(l, &args, &waiting(&sync, &format!("cat {deny}; echo DONE")));
        wait_for(&sync.join("ready"), &mut c);
        std::fs::rename(&conf, conf.with_extension("old")).unwrap();
        std::fs::create_dir_all(conf.join("tool")).unwrap();
        std::fs::write(&token, "NEW-SECRET\n").unwrap();
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(sync.join("go"), "").unwrap();
        let o = c.wait_with_output().unwrap();
        let so = text(&o.stdout);
        assert!(
            !so.contains("NEW-SECRET"),
            "{l:?}: read through the new ancestor: {so}"
        );
        assert_stopped(&o, l, &conf);
    }
}

/// A5(a): the user's own `git config user.name x` on the host replaces `.git/config` by
/// rename; the running command must not get to write the real file (a `core.fsmonitor`
/// there runs at the host's next `git status`). Stopped, and the host file is clean.
#[test]
fn host_git_config_during_the_run_stops_the_run() {
    if !sandbox_available() {
        return;
    }
    let f = fixture();
    for l in [Launch::Cold, Launch::Server] {
        let sync = f.p.dir.join(format!("sync-g-{}", l.name()));
        std::fs::create_dir_all(&sync).unwrap();
        // Approved: the exec policy asks about a direct `.git/config` write.
        let mut c = f.start(
            l,
            &["--yes"],
            &waiting(
                &sync,
                "printf '[core]\\n\\tfsmonitor = \"echo PWNED\"\\n' >> .git/config; echo DONE",
            ),
        );
        wait_for(&sync.join("ready"), &mut c);
        let st = Command::new("git")
            .args(["config", "user.name", "hostedit"])
            .current_dir(&f.p.dir)
            .status()
            .unwrap();
        assert!(st.success());
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(sync.join("go"), "").unwrap();
        let o = c.wait_with_output().unwrap();
        let cfg = std::fs::read_to_string(f.p.dir.join(".git/config")).unwrap();
        assert!(
            !cfg.contains("fsmonitor"),
            "{l:?}: the host config was written: {cfg}"
        );
        assert!(cfg.contains("hostedit"), "{cfg}");
        assert!(!text(&o.stdout).contains("DONE"), "{l:?}");
        assert_stopped(&o, l, &f.p.dir.join(".git/config"));
    }
}

/// The twins: the host writing *other* names in the watched directories (a file in the
/// home by rename, `git add` rewriting `.git/index`) does not stop a run; git, python and
/// a temp file work inside; a `git config user.name` made inside is merged back by the
/// broker after the run, which stops nothing either.
#[test]
fn host_writes_beside_covers_and_the_broker_merge_stop_nothing() {
    if !sandbox_available() {
        return;
    }
    let f = fixture();
    std::fs::write(f.p.home.join("token.txt"), "SECRET\n").unwrap();
    let deny = f.p.home.join("token.txt").display().to_string();
    std::fs::write(f.p.dir.join("a.txt"), "a\n").unwrap();
    for l in ALL {
        let sync = f.dir(l).join(format!("sync-t-{}", l.name()));
        std::fs::create_dir_all(&sync).unwrap();
        let inside_git = if l == Launch::Template {
            String::new()
        } else {
            format!(
                "git config user.name inside-{n} && git add a.txt && \
                 git commit -qm inside-{n} && ",
                n = l.name()
            )
        };
        let script = waiting(
            &sync,
            &format!(
                "{inside_git}python3 -c 'import tempfile; f = tempfile.NamedTemporaryFile(); \
                 f.write(b\"x\"); f.flush(); print(\"PY-OK\")' && t=$(mktemp) && echo x > $t \
                 && echo TMP-OK"
            ),
        );
        let args = ["--deny-read", deny.as_str()];
        f.warm(l, &args);
        let mut c = f.start(l, &args, &script);
        wait_for(&sync.join("ready"), &mut c);
        replace(&f.p.home.join("notes.txt"), "host writes here\n");
        std::fs::write(f.p.home.join("other.txt"), "x").unwrap();
        std::fs::remove_file(f.p.home.join("other.txt")).unwrap();
        std::fs::write(f.p.dir.join(format!("b-{}.txt", l.name())), "b\n").unwrap();
        let st = Command::new("git")
            .args(["add", &format!("b-{}.txt", l.name())])
            .current_dir(&f.p.dir)
            .status()
            .unwrap();
        assert!(st.success());
        std::thread::sleep(Duration::from_millis(200));
        std::fs::write(sync.join("go"), "").unwrap();
        let o = c.wait_with_output().unwrap();
        let report = last_json(&o.stderr);
        assert_eq!(
            report["launch"].as_str(),
            Some(l.name()),
            "{}",
            text(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        assert!(report["cover_lost"].is_null(), "{l:?}: {report}");
        let so = text(&o.stdout);
        assert!(so.contains("PY-OK") && so.contains("TMP-OK"), "{l:?}: {so}");
        if l != Launch::Template {
            let cfg = std::fs::read_to_string(f.p.dir.join(".git/config")).unwrap();
            assert!(
                cfg.contains(&format!("inside-{}", l.name())),
                "{l:?}: the broker merged the inside edit back: {cfg}"
            );
        }
    }
}

/// attack28 F2: a credential store that does not exist at launch is not mounted over
/// ("N deny entries are not present"); the host creating it during the run (`gh auth
/// login` making `~/.config/gh/hosts.yml`, an editor writing `~/.netrc`) must not hand it
/// to the command. The run is stopped, naming the hidden path, on every launch path.
/// (Without the watch of absent entries the command prints the token.)
#[test]
fn credential_store_created_on_the_host_during_the_run_stops_the_run() {
    if !sandbox_available() {
        return;
    }
    let f = fixture();
    let gh = f.p.home.join(".config/gh");
    let netrc = f.p.home.join(".netrc");
    let stores = [
        // A directory store missing with its parent (`mkdir -p`), and a file store.
        (gh.join("hosts.yml"), gh.clone()),
        (netrc.clone(), netrc.clone()),
    ];
    for l in ALL {
        for (i, (file, hidden)) in stores.iter().enumerate() {
            assert!(!hidden.exists(), "{l:?}: {} left over", hidden.display());
            let sync = f.dir(l).join(format!("sync-c{i}-{}", l.name()));
            std::fs::create_dir_all(&sync).unwrap();
            f.warm(l, &[]);
            let script = waiting(
                &sync,
                &format!(
                    "i=0; while [ $i -lt 40 ]; do cat {} 2>/dev/null && break; sleep 0.05; \
                     i=$((i+1)); done; echo DONE",
                    file.display()
                ),
            );
            let mut c = f.start(l, &[], &script);
            wait_for(&sync.join("ready"), &mut c);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, format!("oauth_token: FAKE-TOKEN-{}\n", l.name())).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            std::fs::write(sync.join("go"), "").unwrap();
            let o = c.wait_with_output().unwrap();
            let so = text(&o.stdout);
            assert!(
                !so.contains("FAKE-TOKEN"),
                "{l:?}: the store created on the host was read: {so}"
            );
            assert!(!so.contains("DONE"), "{l:?}: the command went on: {so}");
            assert_stopped(&o, l, hidden);
            // Gone again, so the next launch path plans (and hides) the same as its
            // template.
            if hidden.is_dir() {
                std::fs::remove_dir_all(hidden).unwrap();
            } else {
                std::fs::remove_file(hidden).unwrap();
            }
        }
    }
}

/// The twin of the F2 escape: the host creating *other* names beside the missing stores
/// (`$HOME/unrelated`, a directory on the way to one, `~/.config/other`) stops nothing,
/// on every launch path.
#[test]
fn host_creating_other_names_beside_missing_stores_stops_nothing() {
    if !sandbox_available() {
        return;
    }
    let f = fixture();
    for l in ALL {
        let sync = f.dir(l).join(format!("sync-u-{}", l.name()));
        std::fs::create_dir_all(&sync).unwrap();
        f.warm(l, &[]);
        let unrelated = f.p.home.join(format!("unrelated-{}", l.name()));
        let script = waiting(&sync, &format!("cat {}; echo DONE", unrelated.display()));
        let mut c = f.start(l, &[], &script);
        wait_for(&sync.join("ready"), &mut c);
        std::fs::write(&unrelated, "NOT-A-SECRET\n").unwrap();
        // On the way to ~/.config/gh and ~/.gradle/gradle.properties: followed, not fatal.
        std::fs::create_dir_all(f.p.home.join(".config/other")).unwrap();
        std::fs::create_dir_all(f.p.home.join(".gradle/caches")).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(sync.join("go"), "").unwrap();
        let o = c.wait_with_output().unwrap();
        let report = last_json(&o.stderr);
        assert_eq!(
            report["launch"].as_str(),
            Some(l.name()),
            "{}",
            text(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(0), "{l:?}: {}", text(&o.stderr));
        assert!(report["cover_lost"].is_null(), "{l:?}: {report}");
        let so = text(&o.stdout);
        assert!(
            so.contains("NOT-A-SECRET") && so.contains("DONE"),
            "{l:?}: {so}"
        );
        std::fs::remove_dir_all(f.p.home.join(".config")).unwrap();
        std::fs::remove_dir_all(f.p.home.join(".gradle")).unwrap();
    }
}

/// How long a command keeps running after the host replaced one of its covers: the
/// sandboxed loop appends a CLOCK_MONOTONIC time stamp (the same clock in every pid
/// namespace) to a file in the workspace as fast as it can; the host notes the time right
/// after its rename. Printed (README: residual window), and bounded loosely.
#[test]
fn cover_loss_kill_latency() {
    if !sandbox_available() {
        return;
    }
    let f = fixture();
    let token = f.p.home.join("token.txt");
    std::fs::write(&token, "OLD\n").unwrap();
    let deny = token.display().to_string();
    let sync = f.p.dir.join("sync-lat");
    std::fs::create_dir_all(&sync).unwrap();
    let stamps = sync.join("stamps");
    let script = format!(
        "exec python3 -c '\nimport time, os\nf = os.open(\"{s}\", os.O_WRONLY | os.O_CREAT | \
         os.O_APPEND)\nopen(\"{r}/ready\", \"w\").close()\nend = time.monotonic() + 20\nwhile time.monotonic() < end:\n    \
         os.write(f, b\"%d\\n\" % time.monotonic_ns())\n    try:\n        \
         open(\"{deny}\").read()\n        os.write(f, b\"READ\\n\")\n    except OSError:\n        \
         pass\n'",
        s = stamps.display(),
        r = sync.display(),
    );
    let args = ["--deny-read", deny.as_str()];
    let mut c = f.start(Launch::Cold, &args, &script);
    wait_for(&sync.join("ready"), &mut c);
    std::thread::sleep(Duration::from_millis(200));
    let before = monotonic_ns();
    replace(&token, "NEW\n");
    let renamed = monotonic_ns();
    let o = c.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    let log = std::fs::read_to_string(&stamps).unwrap();
    let last: i128 = log
        .lines()
        .rev()
        .find_map(|l| l.parse().ok())
        .expect("time stamps");
    let reads = log
        .lines()
        .skip_while(|l| l.parse::<i128>().is_ok_and(|t| t < renamed))
        .filter(|l| *l == "READ")
        .count();
    let ms = (last - renamed) as f64 / 1e6;
    let from_start = (last - before) as f64 / 1e6;
    eprintln!(
        "cover loss: the command's last sign of life was {ms:.3} ms after the host's rename \
         returned, {from_start:.3} ms after it was called ({reads} successful read(s) of the \
         replaced file by a busy loop)"
    );
    assert!(ms < 2000.0, "stopped {ms} ms after the rename");
}

/// `CLOCK_MONOTONIC` in nanoseconds (Python's `time.monotonic_ns` inside reads the same).
fn monotonic_ns() -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128
}
