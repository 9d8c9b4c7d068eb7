//! `cordon cache list|clear [--workspace]`: the private copy-on-write layers of package
//! caches (R-C1), kept per workspace under `~/.cache/cordon/overlays/<workspace-key>/`.
//! The host caches themselves are never touched.

use crate::cli::{CacheArgs, CacheCommand};
use anyhow::{bail, Result};
use cordon_policy::caches::{overlay_root, workspace_key_of, KNOWN_CACHES};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Runs `cordon cache …`; returns the exit code.
pub fn cache(c: CacheCommand) -> Result<i32> {
    match c {
        CacheCommand::List(a) => list(&a),
        CacheCommand::Clear(a) => clear(&a),
    }
}

/// `$HOME` resolved as runs resolve it (`cordon_policy::caches`: the layers live under
/// the canonical home), so a home spelled through a symlink finds the same layers (the
/// no-follow removal refused the link: breaker, stop 18).
fn home() -> Result<PathBuf> {
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() => Ok(cordon_policy::paths::canonicalize_lenient(
            &cordon_sandbox::HostFs,
            Path::new(&h),
        )),
        _ => bail!("$HOME is not set: the cache layers live under ~/.cache/cordon/overlays"),
    }
}

/// The key of the workspace of the current directory.
fn current_key() -> Result<String> {
    let cwd = crate::profile_args::current_dir()?;
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let ws = cordon_policy::resolve::find_workspace(&cordon_sandbox::HostFs, &cwd);
    Ok(workspace_key_of(&cordon_sandbox::HostFs, &ws))
}

/// Total size in bytes of the regular files under `p` (symlinks not followed).
fn size_of(p: &Path) -> u64 {
    let Ok(md) = std::fs::symlink_metadata(p) else {
        return 0;
    };
    if md.is_dir() {
        std::fs::read_dir(p)
            .map(|r| r.flatten().map(|e| size_of(&e.path())).sum())
            .unwrap_or(0)
    } else {
        md.len()
    }
}

/// `(workspace key, [(cache name, bytes in upper)])`, sorted.
fn layers(root: &Path, only: Option<&str>) -> Vec<(String, Vec<(String, u64)>)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(root) else {
        return out;
    };
    for e in rd.flatten() {
        let key = e.file_name().to_string_lossy().into_owned();
        if key.starts_with('.') || only.is_some_and(|o| o != key) {
            continue;
        }
        if !e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        // `<key>/<name>/{upper,data}`; a concurrent run's slot: `<key>/.slot-N/<name>/`
        // (counted under the same name).
        let mut sizes = std::collections::BTreeMap::<String, u64>::new();
        let mut dirs = vec![e.path()];
        while let Some(d) = dirs.pop() {
            for c in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                if !c.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                    continue;
                }
                let name = c.file_name().to_string_lossy().into_owned();
                if name.starts_with(".slot-") && d == e.path() {
                    dirs.push(c.path());
                    continue;
                }
                *sizes.entry(name).or_default() +=
                    size_of(&c.path().join("upper")) + size_of(&c.path().join("data"));
            }
        }
        let mut caches: Vec<(String, u64)> = sizes.into_iter().collect();
        caches.sort();
        out.push((key, caches));
    }
    out.sort();
    out
}

fn list(a: &CacheArgs) -> Result<i32> {
    let root = overlay_root(&home()?);
    let current = current_key()?;
    let only = a.workspace.then_some(current.as_str());
    let found = layers(&root, only);
    if a.json {
        let ws: Vec<_> = found
            .iter()
            .map(|(k, c)| {
                json!({
                    "workspace": k,
                    "current": *k == current,
                    "caches": c.iter().map(|(n, b)| json!({"name": n, "bytes": b})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let known: Vec<_> = KNOWN_CACHES
            .iter()
            .map(|k| json!({"name": k.name, "path": format!("~/{}", k.path), "tool": k.tool}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                // Escaped: `json!` of a path that is not UTF-8 ($HOME) panics (L2).
                "root": cordon_policy::paths::escaped(root.as_os_str().as_encoded_bytes()),
                "known": known, "workspaces": ws
            }))?
        );
        return Ok(0);
    }
    print!("{}", list_text(&root, &found, &current));
    Ok(0)
}

/// `cordon cache list`'s text: the known caches, then each workspace's private layers —
/// every column as wide as its longest entry (new-user pass 150: a layer name longer than
/// 16 characters pushed its size out of line).
fn list_text(root: &Path, found: &[(String, Vec<(String, u64)>)], current: &str) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "known caches (copy-on-write inside the sandbox with caches = \"overlay\"):"
    );
    let name_w = KNOWN_CACHES.iter().map(|k| k.name.len()).max().unwrap_or(0);
    let path_w = KNOWN_CACHES.iter().map(|k| k.path.len()).max().unwrap_or(0);
    for k in KNOWN_CACHES {
        let _ = writeln!(t, "  {:<name_w$} ~/{:<path_w$} {}", k.name, k.path, k.tool);
    }
    let _ = writeln!(t, "private layers in {}:", root.display());
    if found.is_empty() {
        let _ = writeln!(t, "  (none)");
    }
    let layers = || found.iter().flat_map(|(_, c)| c.iter());
    let name_w = layers().map(|(n, _)| n.chars().count()).max().unwrap_or(0);
    let bytes_w = layers()
        .map(|(_, b)| b.to_string().len())
        .max()
        .unwrap_or(0);
    for (k, caches) in found {
        let here = if k == current {
            "  (this workspace)"
        } else {
            ""
        };
        let _ = writeln!(t, "  {k}{here}");
        for (n, b) in caches {
            let _ = writeln!(t, "    {n:<name_w$} {b:>bytes_w$} bytes");
        }
    }
    t
}

#[cfg(not(target_os = "linux"))]
fn clear(_: &CacheArgs) -> Result<i32> {
    bail!("cordon cache clear: copy-on-write cache layers exist only on Linux")
}

/// Removes the layers of every workspace (or the current one), skipping a workspace a run
/// is using (it holds one of its slot locks): such a workspace is reported as busy
/// (`"busy"` in `--json`), which is not a failure (exit 0). A removal that fails is
/// reported (`"failed"`) and makes the exit code 1, after the other workspaces were
/// cleared.
#[cfg(target_os = "linux")]
fn clear(a: &CacheArgs) -> Result<i32> {
    use cordon_sandbox::linux::{clear_layers, Cleared};
    let root = overlay_root(&home()?);
    let only = if a.workspace {
        Some(current_key()?)
    } else {
        None
    };
    let found = layers(&root, only.as_deref());
    let (mut removed, mut busy, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for (k, _) in &found {
        match clear_layers(&root, k) {
            Ok(Cleared::Removed) => removed.push(k.clone()),
            Ok(Cleared::Busy) => busy.push(k.clone()),
            Ok(Cleared::Missing) => {}
            Err(e) => failed.push((k.clone(), e.to_string())),
        }
    }
    if a.json {
        let failed: Vec<_> = failed
            .iter()
            .map(|(k, e)| json!({"workspace": k, "error": e}))
            .collect();
        println!(
            "{}",
            json!({ "removed": removed, "busy": busy, "failed": failed })
        );
    } else {
        if removed.is_empty() && busy.is_empty() && failed.is_empty() {
            println!("nothing to clear in {}", root.display());
        }
        for k in &removed {
            println!("removed {}", root.join(k).display());
        }
        for k in &busy {
            println!(
                "skipped {}: a run in that workspace, or an idle `cordon serve` template of it, \
                 is using its layers (clear again after the run ends; a template ends after 5 idle \
                 minutes or when `cordon serve` stops)",
                root.join(k).display()
            );
        }
        for (k, e) in &failed {
            eprintln!("cordon: cannot remove {}: {e}", root.join(k).display());
        }
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// New-user pass 150, item 10: a long layer name (`cargo-home-at-de6ffc14`) pushed its
    /// size out of the column; every size now starts at the same column (and the byte counts
    /// end at one), in every workspace.
    #[test]
    fn cache_list_columns_fit_the_longest_name() {
        let found = vec![
            (
                "a1".to_string(),
                vec![
                    ("npm".to_string(), 12),
                    ("cargo-home-at-de6ffc14".to_string(), 109467),
                ],
            ),
            ("b2".to_string(), vec![("pip".to_string(), 5)]),
        ];
        let t = list_text(Path::new("/h/.cache/cordon/overlays"), &found, "a1");
        let ends: Vec<usize> = t
            .lines()
            .filter(|l| l.ends_with(" bytes"))
            .map(|l| l.len())
            .collect();
        assert_eq!(ends.len(), 3, "{t}");
        assert!(ends.iter().all(|e| *e == ends[0]), "{t}");
        assert!(t.contains("  a1  (this workspace)\n"), "{t}");
        // The known caches' tools start at one column too.
        let known: Vec<&str> = t.lines().skip(1).take(KNOWN_CACHES.len()).collect();
        let at: Vec<usize> = KNOWN_CACHES
            .iter()
            .zip(&known)
            .map(|(k, l)| l.rfind(k.tool).unwrap())
            .collect();
        assert!(at.iter().all(|a| *a == at[0]), "{t}");
    }
}
