//! The gitlinks a repository's index records (`Documentation/gitformat-index.txt`,
//! versions 2–4): the paths at which git keeps another repository's commit (mode
//! `160000`). `git status` at the top of the work tree goes into each one that holds a
//! `.git` and runs that repository's configuration there (`core.fsmonitor`), so a gitlink a
//! sandboxed command added is named after its run wherever it lies (attack pass 190 F10:
//! one under `node_modules/`, which the look for repositories does not enter, ran its
//! config at the host's next `git status`). Pure: bytes in, paths out.

use std::path::PathBuf;

/// Why an index could not be read for its gitlinks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// Not an index (no `DIRC` signature), or a version this reader does not know.
    #[error("not a git index of version 2, 3 or 4")]
    NotAnIndex,
    /// The entries do not parse with either object-name length (SHA-1 or SHA-256).
    #[error("its entries do not parse")]
    Malformed,
}

/// The paths (relative to the work tree, as git stores them: `/`-separated bytes) of the
/// gitlink entries of the index `bytes`.
///
/// Errors: [`IndexError`] when the bytes are not a version 2–4 index whose entries parse
/// with 20-byte (SHA-1) or 32-byte (SHA-256) object names.
pub fn gitlinks(bytes: &[u8]) -> Result<Vec<PathBuf>, IndexError> {
    parse(bytes).map(|p| p.gitlinks)
}

/// What [`parse`] reads of an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedIndex {
    /// The gitlink entries' paths, as [`gitlinks`] gives them.
    pub gitlinks: Vec<PathBuf>,
    /// With a split index (`git update-index --split-index`), the object name (lower-case
    /// hex) of the shared index this one builds on: its entries — gitlinks included — are in
    /// `.git/sharedindex.<name>` (attack pass 205 #1: a gitlink moved there went unnamed).
    pub shared_index: Option<String>,
}

/// The gitlinks of the index `bytes` and the shared index it names, if it is split (its
/// `link` extension).
///
/// Errors: as [`gitlinks`]; also extensions that do not parse.
pub fn parse(bytes: &[u8]) -> Result<ParsedIndex, IndexError> {
    if bytes.len() < 12 || &bytes[..4] != b"DIRC" {
        return Err(IndexError::NotAnIndex);
    }
    let version = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if !(2..=4).contains(&version) {
        return Err(IndexError::NotAnIndex);
    }
    let count = u32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
    [20, 32]
        .into_iter()
        .find_map(|hash| {
            let (gitlinks, end) = entries(bytes, version, count, hash).ok()?;
            let shared_index = link_extension(bytes, end, hash).ok()?;
            Some(ParsedIndex {
                gitlinks,
                shared_index,
            })
        })
        .ok_or(IndexError::Malformed)
}

/// The extensions from `at` to the trailing `hash`-byte checksum: the `link` extension's
/// shared index name (none when absent or all zeros). `Err` when they do not parse.
fn link_extension(bytes: &[u8], mut at: usize, hash: usize) -> Result<Option<String>, ()> {
    let end = bytes.len().checked_sub(hash).ok_or(())?;
    let mut shared = None;
    while at < end {
        let head = bytes.get(at..at + 8).filter(|_| at + 8 <= end).ok_or(())?;
        let size = u32::from_be_bytes([head[4], head[5], head[6], head[7]]) as usize;
        let body = bytes
            .get(at + 8..at + 8 + size)
            .filter(|_| at + 8 + size <= end)
            .ok_or(())?;
        if &head[..4] == b"link" {
            let name = body.get(..hash).ok_or(())?;
            if name.iter().any(|b| *b != 0) {
                shared = Some(name.iter().map(|b| format!("{b:02x}")).collect());
            }
        }
        at += 8 + size;
    }
    Ok(shared)
}

/// The gitlinks of the `count` entries after the header, with `hash`-byte object names, and
/// where the entries end.
fn entries(
    bytes: &[u8],
    version: u32,
    count: usize,
    hash: usize,
) -> Result<(Vec<PathBuf>, usize), ()> {
    use std::os::unix::ffi::OsStrExt;
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    for _ in 0..count {
        let start = at;
        let fixed = 40 + hash + 2;
        let head = bytes.get(at..at + fixed).ok_or(())?;
        let mode = u32::from_be_bytes([head[24], head[25], head[26], head[27]]);
        let flags = u16::from_be_bytes([head[fixed - 2], head[fixed - 1]]);
        at += fixed;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return Err(());
            }
            at += 2; // extended flags
        }
        let name_len = usize::from(flags & 0x0fff);
        let path: &[u8] = if version == 4 {
            // Prefix compression: how many bytes of the previous path to drop (git's
            // offset varint), then the rest, NUL-terminated; no padding.
            let mut drop = 0usize;
            loop {
                let b = *bytes.get(at).ok_or(())?;
                at += 1;
                drop = drop.checked_mul(128).ok_or(())? + usize::from(b & 0x7f);
                if b & 0x80 == 0 {
                    break;
                }
                drop += 1;
            }
            let keep = previous.len().checked_sub(drop).ok_or(())?;
            let end = nul_at(bytes, at)?;
            let mut p = previous[..keep].to_vec();
            p.extend_from_slice(&bytes[at..end]);
            at = end + 1;
            previous = p;
            &previous[..]
        } else {
            let end = nul_at(bytes, at)?;
            // Borrowed: no copy per entry (an index has one per tracked file).
            let p = &bytes[at..end];
            // 1 to 8 NULs, so the entry is a multiple of 8 bytes long.
            let len = end - start;
            let padded = (len + 8) & !7;
            if bytes
                .get(end..start + padded)
                .is_none_or(|pad| pad.iter().any(|b| *b != 0))
            {
                return Err(());
            }
            at = start + padded;
            p
        };
        if (name_len < 0x0fff && name_len != path.len()) || path.is_empty() {
            return Err(());
        }
        if mode & 0o170000 == 0o160000 && verified_path(path) {
            out.push(PathBuf::from(std::ffi::OsStr::from_bytes(path)));
        }
    }
    Ok((out, at))
}

/// Whether git would take `path` as an index entry's path (git's `verify_path`, with its
/// default `core.protectNTFS`): not empty, relative, `/`-separated components none of which
/// is empty, `.`, `..`, or `.git` in any case (nor the names NTFS and HFS+ read as
/// `.git`: `.git` with trailing dots or spaces, `git~1`), no backslash and no NUL. What is
/// not is no path of the work tree: a gitlink entry with such a path is ignored (attack
/// pass 212 #2: a crafted index's `../victim` and `/var/tmp/x/main` were named as
/// repositories the command made, and looked at outside the workspace).
pub fn verified_path(path: &[u8]) -> bool {
    if path.is_empty() || path.contains(&b'\\') || path.contains(&0) {
        return false;
    }
    path.split(|b| *b == b'/').all(|c| {
        let trimmed = {
            let mut t = c;
            while let Some((last, rest)) = t.split_last() {
                if *last == b'.' || *last == b' ' {
                    t = rest;
                } else {
                    break;
                }
            }
            t
        };
        !c.is_empty()
            && c != b"."
            && c != b".."
            && !trimmed.eq_ignore_ascii_case(b".git")
            && !c.eq_ignore_ascii_case(b"git~1")
    })
}

/// Where the NUL that ends the string starting at `at` is.
fn nul_at(bytes: &[u8], at: usize) -> Result<usize, ()> {
    let rest = bytes.get(at..).ok_or(())?;
    Ok(at + memchr::memchr(0, rest).ok_or(())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One version-2/3 entry: `path` with `mode`, `hash`-byte object name, padded.
    fn entry(path: &str, mode: u32, hash: usize) -> Vec<u8> {
        let mut e = vec![0u8; 24];
        e.extend_from_slice(&mode.to_be_bytes());
        e.extend_from_slice(&[0u8; 12]);
        e.extend_from_slice(&vec![0xab; hash]);
        e.extend_from_slice(&(path.len() as u16).to_be_bytes());
        e.extend_from_slice(path.as_bytes());
        let padded = (e.len() + 8) & !7;
        e.resize(padded, 0);
        e
    }

    fn index(version: u32, entries: &[Vec<u8>]) -> Vec<u8> {
        let mut b = b"DIRC".to_vec();
        b.extend_from_slice(&version.to_be_bytes());
        b.extend_from_slice(&(entries.len() as u32).to_be_bytes());
        for e in entries {
            b.extend_from_slice(e);
        }
        b.extend_from_slice(&[0u8; 20]); // checksum
        b
    }

    /// Attack pass 212 #2: gitlink entries whose paths git itself refuses (absolute,
    /// `..`/`.`/empty components, `.git`, a backslash) are not gitlinks of the work tree;
    /// twin: a plain `sub` and a nested `a/b` are.
    #[test]
    fn gitlinks_with_paths_git_refuses_are_ignored() {
        let odd = [
            "../victim",
            "/var/tmp/x/main",
            "a/../../victim",
            "./sub",
            "a//b",
            "a/",
            ".git/x",
            "a/.GIT",
            "a/.git. ",
            "GIT~1/x",
            "a\\..\\b",
            "..",
        ];
        let mut es: Vec<Vec<u8>> = odd.iter().map(|p| entry(p, 0o160000, 20)).collect();
        es.push(entry("sub", 0o160000, 20));
        es.push(entry("a/b", 0o160000, 20));
        let got = gitlinks(&index(2, &es)).unwrap();
        assert_eq!(got, vec![PathBuf::from("sub"), PathBuf::from("a/b")]);
        for p in odd {
            assert!(!verified_path(p.as_bytes()), "{p}");
        }
        assert!(verified_path(b".github/x") && verified_path(b"a/.gitmodules-not"));
    }

    #[test]
    fn gitlinks_are_read_from_sha1_and_sha256_indexes() {
        for hash in [20, 32] {
            let b = index(
                2,
                &[
                    entry("a.txt", 0o100644, hash),
                    entry("node_modules/a/b/evil", 0o160000, hash),
                    entry("src/main.rs", 0o100755, hash),
                ],
            );
            assert_eq!(
                gitlinks(&b).unwrap(),
                [PathBuf::from("node_modules/a/b/evil")],
                "{hash}"
            );
        }
    }

    #[test]
    fn version_4_paths_are_decompressed() {
        // "sub/a" then "sub/evil" (drop 1 byte: "a", keep "sub/", add "evil").
        let mut b = b"DIRC".to_vec();
        b.extend_from_slice(&4u32.to_be_bytes());
        b.extend_from_slice(&2u32.to_be_bytes());
        for (mode, drop, rest) in [(0o100644u32, 0u8, "sub/a"), (0o160000, 1, "evil")] {
            let mut e = vec![0u8; 24];
            e.extend_from_slice(&mode.to_be_bytes());
            e.extend_from_slice(&[0u8; 12]);
            e.extend_from_slice(&[0xcd; 20]);
            let full = if drop == 0 { 5 } else { 8 };
            e.extend_from_slice(&(full as u16).to_be_bytes());
            e.push(drop);
            e.extend_from_slice(rest.as_bytes());
            e.push(0);
            b.extend_from_slice(&e);
        }
        assert_eq!(gitlinks(&b).unwrap(), [PathBuf::from("sub/evil")]);
    }

    #[test]
    fn what_is_not_an_index_is_refused() {
        assert_eq!(gitlinks(b"not an index"), Err(IndexError::NotAnIndex));
        let mut b = index(2, &[entry("a", 0o100644, 20)]);
        b[8..12].copy_from_slice(&5u32.to_be_bytes()); // more entries than there are
        assert_eq!(gitlinks(&b), Err(IndexError::Malformed));
    }

    /// A split index names its shared index in its `link` extension (attack pass 205 #1);
    /// twin: an index without one names none, and a truncated extension does not parse.
    #[test]
    fn a_split_index_names_its_shared_index() {
        let mut b = index(2, &[entry("a.txt", 0o100644, 20)]);
        b.truncate(b.len() - 20);
        let mut ext = b"link".to_vec();
        ext.extend_from_slice(&28u32.to_be_bytes());
        ext.extend_from_slice(&[0xab; 20]);
        ext.extend_from_slice(&[0u8; 8]);
        b.extend_from_slice(&ext);
        b.extend_from_slice(&[0u8; 20]);
        let p = parse(&b).unwrap();
        assert_eq!(p.shared_index.as_deref(), Some("ab".repeat(20).as_str()));
        assert_eq!(
            parse(&index(2, &[entry("a.txt", 0o100644, 20)]))
                .unwrap()
                .shared_index,
            None
        );
        let cut = b.len() - 30;
        let mut bad = b[..cut].to_vec();
        bad.extend_from_slice(&[0u8; 20]);
        assert!(parse(&bad).is_err());
    }
}
