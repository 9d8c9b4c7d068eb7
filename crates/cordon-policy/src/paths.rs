//! Path normalisation (R-P2) behind a read-only filesystem view, so the policy stays pure.
//!
//! The policy crate never touches the disk itself: every question about the filesystem
//! (does this exist, where does this symlink lead, what does this `.git` file say) goes
//! through [`FsView`]. `cordon-sandbox` provides the host implementation; tests provide
//! [`MemFs`].

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// What kind of object a path names (after following symlinks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A directory.
    Dir,
    /// Anything else (regular file, socket, device, …).
    File,
}

/// Device, inode, birth time (seconds, nanoseconds): [`FsView::identity`].
pub type FileIdentity = (u64, u64, i64, u32);

/// A read-only view of a filesystem, used to normalise paths.
pub trait FsView {
    /// The canonical form of an *existing* path (absolute, every symlink resolved), or
    /// `None` when it does not exist. `p` is absolute and lexically normal.
    fn canonicalize(&self, p: &Path) -> Option<PathBuf>;
    /// The kind of object at `p` (following symlinks), or `None` when it does not exist.
    fn kind(&self, p: &Path) -> Option<FileKind>;
    /// The contents of a small text file (e.g. a `.git` file in a linked worktree).
    fn read_to_string(&self, p: &Path) -> Option<String>;
    /// The contents of a small regular text file of at most `cap` bytes, or why it was not
    /// read. A host implementation opens without following a final symlink, without
    /// blocking, and only regular files (issue 7 item 7): a previous confined run may have
    /// left a FIFO or a link to `/dev/zero` where a `.git` file or git config is expected.
    /// The default forwards to [`FsView::read_to_string`].
    fn read_small(&self, p: &Path, cap: u64) -> Result<String, ReadRefusal> {
        let _ = cap;
        self.read_to_string(p).ok_or(ReadRefusal::Missing)
    }
    /// [`FsView::read_small`] for text in which a byte that is not UTF-8 must not cost the
    /// rest (git configuration: a Latin-1 `user.name`, which a command can even have merged
    /// back, made cordon skip the whole file and every command value in it — attack pass
    /// 57): each such byte reads as U+FFFD. The default is [`FsView::read_small`].
    fn read_small_lossy(&self, p: &Path, cap: u64) -> Result<String, ReadRefusal> {
        self.read_small(p, cap)
    }
    /// The target of the symlink at `p` (not followed; `p`'s parent has no symlink in it),
    /// or `None` when `p` is not a symlink. The default knows no symlinks: an FsView
    /// without it reports no [`crate::ResolvedEntry::links`].
    fn read_link(&self, _p: &Path) -> Option<PathBuf> {
        None
    }
    /// Whether the filesystem holding `p` (symlinks followed; the nearest existing
    /// ancestor when `p` is missing) is mounted read-only on the host (`statvfs`
    /// `ST_RDONLY`), where no profile grant makes a write succeed. `None` when the view
    /// cannot tell (the default).
    fn read_only_mount(&self, _p: &Path) -> Option<bool> {
        None
    }
    /// Whether `p` (symlinks followed) is a directory with no entries. Cordon's
    /// placeholder for a missing `.git`/`.cordon` is such a directory, which git ignores
    /// (so it never shows in `git status`) and which is not a workspace marker. The default
    /// says `false` (every directory counts as non-empty, i.e. as a marker).
    fn is_empty_dir(&self, _p: &Path) -> bool {
        false
    }
    /// What names the directory or file `p` (symlinks followed) over its life: device,
    /// inode and birth time (seconds and nanoseconds since the epoch; `(0, 0)` where the
    /// filesystem keeps none), or `None` when it does not exist or the view cannot tell
    /// (the default). A path removed and made again gets another one.
    fn identity(&self, _p: &Path) -> Option<FileIdentity> {
        None
    }
    /// The names of at most `cap` entries of the directory `p` (symlinks followed), in no
    /// particular order; empty when it is not a directory. The default lists nothing.
    fn list_dir(&self, _p: &Path, _cap: usize) -> Vec<std::ffi::OsString> {
        Vec::new()
    }
    /// What `p` itself is, a final symlink not followed (`p`'s parent has no symlink in
    /// it), or `None` when nothing is there: one question where [`FsView::read_link`]
    /// and [`FsView::kind`] are two (a host answers it with one `lstat`, plus a
    /// `readlink` for a link). The default asks those two.
    fn entry(&self, p: &Path) -> Option<Entry> {
        match self.read_link(p) {
            Some(t) => Some(Entry::Link(t)),
            None => self.kind(p).map(Entry::Kind),
        }
    }
    /// At most `cap` entries of the directory `p` (symlinks followed), each with whether it
    /// is itself a directory (not a symlink to one): a bounded tree walk's step. `None`
    /// when `p` cannot be listed or searched (permissions: a directory may be enterable
    /// but not readable, or readable but not enterable). A host answers from the listing's entry types, without a `stat` per
    /// entry. The default asks [`FsView::entry`] for each name of [`FsView::list_dir`].
    fn list_dir_typed(&self, p: &Path, cap: usize) -> Option<Vec<(std::ffi::OsString, bool)>> {
        Some(
            self.list_dir(p, cap)
                .into_iter()
                .map(|name| {
                    let dir = self.entry(&p.join(&name)) == Some(Entry::Kind(FileKind::Dir));
                    (name, dir)
                })
                .collect(),
        )
    }
}

/// What a path itself is ([`FsView::entry`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A symlink, with its target as written.
    Link(PathBuf),
    /// A directory or anything else that is not a symlink.
    Kind(FileKind),
}

/// The size cap, in bytes, for the small git files resolution reads (`.git` files,
/// `gitdir`, `commondir`).
pub const SMALL_FILE_CAP: u64 = 64 * 1024;

/// The size cap, in bytes, for one git configuration file read at launch.
pub const CONFIG_FILE_CAP: u64 = 1024 * 1024;

/// Why [`FsView::read_small`] returned no text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadRefusal {
    /// Nothing at that path (or a dangling symlink).
    Missing,
    /// Not a regular file (`fifo`, `character device`, `directory`, …): never read.
    NotRegular(String),
    /// Larger than the cap (the cap in bytes).
    TooLarge(u64),
    /// Any other failure (permission, I/O, not UTF-8), in plain words.
    Unreadable(String),
}

impl std::fmt::Display for ReadRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadRefusal::Missing => write!(f, "it does not exist"),
            ReadRefusal::NotRegular(k) => write!(f, "it is a {k}, not a regular file; not read"),
            ReadRefusal::TooLarge(cap) => write!(f, "it is larger than {cap} bytes; not read"),
            ReadRefusal::Unreadable(why) => write!(f, "it cannot be read: {why}"),
        }
    }
}

/// Lexical normalisation: make `p` absolute against `cwd`, drop `.`, resolve `..` without
/// touching the disk (`/..` stays `/`). `cwd` must be absolute.
pub fn lexical_normalize(p: &Path, cwd: &Path) -> PathBuf {
    // Already in that form (the common case: canonical paths, `$HOME`): a copy, without
    // the component walk (issue 12; `lexical_normalize_keeps_clean_paths` pins it).
    let b = p.as_os_str().as_encoded_bytes();
    if is_clean(b) && !has_dot_dot(b) {
        return p.to_path_buf();
    }
    lexical_walk(p, cwd)
}

/// [`lexical_normalize`] one component at a time (every spelling).
fn lexical_walk(p: &Path, cwd: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
        }
    }
    out
}

/// `p` made absolute against `cwd` with `.` and `..` resolved as the kernel resolves them:
/// a `..` after a symlink goes up from where the link leads, not from the link's own
/// directory (`realpath` for the part that exists; lexical past it). Other symlinks are
/// kept as spelled. Breaker (stop 21): `--deny-read /opt/link/../key` was taken as
/// `/opt/key` while the command's `cat /opt/link/../key` read the real file, and `-w
/// /opt/link/../dir` created a stray `/opt/dir`.
pub fn physical_normalize(fs: &dyn FsView, p: &Path, cwd: &Path) -> PathBuf {
    physical_normalize_traced(fs, p, cwd).0
}

/// Where a cordon file (config, rules, state: `ResolveContext::profile_files`) spelled `f`
/// (absolute, or relative to `cwd`) is on the disk, as the kernel would find it when it is
/// read or created: component by component, every symlink followed — one whose target is
/// missing too (the file would be created there) — and each `..` taken from where the
/// links before it lead. Past the first missing component the rest is appended as
/// spelled; after 40 links (the kernel's limit) none is followed. Canonical where the path
/// exists. Attack pass 36: P1, a lexical `a/../b.toml` protected `./b.toml` while the config
/// read was `target(a)/../b.toml`; P2, `~/.config/cordon` linked to a missing directory
/// protected only the link, and the command made the config at the link's target.
pub fn profile_file_path(fs: &dyn FsView, f: &Path, cwd: &Path) -> PathBuf {
    use std::collections::VecDeque;
    let names = |p: &Path| -> Vec<std::ffi::OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect()
    };
    let mut rest: VecDeque<std::ffi::OsString> = names(&cwd.join(f)).into();
    let mut cur = PathBuf::from("/");
    let mut hops = 0;
    while let Some(c) = rest.pop_front() {
        if c == ".." {
            cur.pop();
            continue;
        }
        let at = cur.join(&c);
        match fs.read_link(&at) {
            Some(target) if hops < 40 => {
                hops += 1;
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                for n in names(&target).into_iter().rev() {
                    rest.push_front(n);
                }
            }
            _ => cur = at,
        }
    }
    // A view that reports no symlinks may still resolve paths.
    fs.canonicalize(&cur).unwrap_or(cur)
}

/// [`physical_normalize`], and the first path a `..` left through a symlink (the `..`
/// then went up from where the link leads, so the result does not show the link): a grant
/// spelled that way cannot be checked for a link a confined command planted (breaker,
/// stop 21: `-w link/..` was granted at the link target's parent).
pub fn physical_normalize_traced(
    fs: &dyn FsView,
    p: &Path,
    cwd: &Path,
) -> (PathBuf, Option<PathBuf>) {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    // Clean and without `..`: what the lexical normalisation below returns for it.
    let jb = joined.as_os_str().as_encoded_bytes();
    if is_clean(jb) && !has_dot_dot(jb) {
        return (joined, None);
    }
    if !joined.components().any(|c| c == Component::ParentDir) {
        return (lexical_normalize(&joined, Path::new("/")), None);
    }
    let mut out = PathBuf::from("/");
    let mut crossed = None;
    for c in joined.components() {
        match c {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                if let Some(real) = fs.canonicalize(&out) {
                    if real != out && crossed.is_none() {
                        crossed = Some(out.clone());
                    }
                    out = real;
                }
                out.pop();
            }
            Component::Normal(s) => out.push(s),
        }
    }
    (out, crossed)
}

/// Whether the last component of `p` is a symlink (its canonical form is not its canonical
/// parent joined with its name); used wherever a scan must not follow links (the nested
/// repository scan, the `$TMPDIR` project scan).
pub(crate) fn is_link(fs: &dyn FsView, p: &Path) -> bool {
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => {
            canonicalize_lenient(fs, parent).join(name) != canonicalize_lenient(fs, p)
        }
        _ => false,
    }
}

/// Canonicalise a lexically normal absolute path even when its tail does not exist yet:
/// the longest existing ancestor is canonicalised and the missing components appended.
pub fn canonicalize_lenient(fs: &dyn FsView, p: &Path) -> PathBuf {
    canonicalize_lenient_hops(fs, p, 0)
}

/// [`canonicalize_lenient`] after `hops` dangling symlinks followed. The first missing
/// name below the deepest existing ancestor may be a symlink whose target is missing: a
/// file made at the path lands at that target, so the path continues there (attack pass
/// 38, B3: `~/.config` linked to a missing directory left git's global config, a
/// stripped-config deny resolved through the link, apart from the placeholder protecting
/// the target, and the command made it). At most 40 links, as the kernel.
fn canonicalize_lenient_hops(fs: &dyn FsView, p: &Path, hops: usize) -> PathBuf {
    if let Some(c) = fs.canonicalize(p) {
        return c;
    }
    let b = p.as_os_str().as_encoded_bytes();
    if is_clean(b) && !has_dot_dot(b) {
        return lenient_clean(fs, p, hops);
    }
    lenient_walk(fs, p, hops)
}

/// [`canonicalize_lenient_hops`]'s walk up from a missing `p` (any spelling) to its
/// deepest existing ancestor, one popped component at a time.
fn lenient_walk(fs: &dyn FsView, p: &Path, hops: usize) -> PathBuf {
    let mut missing = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        match cur.file_name() {
            Some(name) => missing.push(name.to_os_string()),
            None => return p.to_path_buf(),
        }
        if !cur.pop() {
            return p.to_path_buf();
        }
        if let Some(mut c) = fs.canonicalize(&cur) {
            if let Some(first) = missing.last() {
                if hops < 40 {
                    if let Some(target) = fs.read_link(&c.join(first)) {
                        let mut next = c.join(target);
                        for m in missing.iter().rev().skip(1) {
                            next.push(m);
                        }
                        let next = physical_normalize(fs, &next, Path::new("/"));
                        return canonicalize_lenient_hops(fs, &next, hops + 1);
                    }
                }
            }
            for m in missing.iter().rev() {
                c.push(m);
            }
            return c;
        }
    }
}

/// [`canonicalize_lenient_hops`]'s walk up for a clean `p` without `..`, whose ancestors
/// are prefixes of its bytes and whose names are the pieces between its `/`s: the same
/// questions in the same order, asked of slices of `p` instead of a popped copy and a list
/// of the missing names (each an allocation, each pop a component parse).
fn lenient_clean(fs: &dyn FsView, p: &Path, hops: usize) -> PathBuf {
    let b = p.as_os_str().as_encoded_bytes();
    // The ancestor asked about next is `b[..end]`; the names below it are missing.
    let mut end = b.len();
    loop {
        // `/` has no name (and no parent): `p` as spelled, as the walk does.
        let Some(slash) = b[..end]
            .iter()
            .rposition(|&c| c == b'/')
            .filter(|_| end > 1)
        else {
            return p.to_path_buf();
        };
        // `first`: the missing name just below the ancestor; `rest`: the names after it.
        let (first, rest) = (&b[slash + 1..end], b.get(end + 1..).unwrap_or_default());
        let missing = &b[slash + 1..];
        end = if slash == 0 { 1 } else { slash };
        if let Some(mut c) = fs.canonicalize(os_path(&b[..end])) {
            // `c` joined with `first`, grown once to hold all of `missing`.
            let at = c.as_os_str().len();
            c.reserve_exact(1 + missing.len());
            c.push(os_path(first));
            if hops < 40 {
                if let Some(target) = fs.read_link(&c) {
                    let mut next = os_path(&c.as_os_str().as_encoded_bytes()[..at]).join(target);
                    if !rest.is_empty() {
                        next.push(os_path(rest));
                    }
                    let next = physical_normalize(fs, &next, Path::new("/"));
                    return canonicalize_lenient_hops(fs, &next, hops + 1);
                }
            }
            if !rest.is_empty() {
                c.push(os_path(rest));
            }
            return c;
        }
    }
}

/// A hash of `p` that agrees with `Path`'s `==` (equal paths hash alike, however spelled):
/// of its bytes when it is clean (then its bytes are its pieces), else of its pieces joined
/// by `/` as a clean path's are. Cheaper than `Path`'s own `Hash`, which walks components.
pub fn path_hash(p: &Path) -> u64 {
    use std::hash::BuildHasher;
    let state = foldhash::fast::FixedState::with_seed(0x636f_7264_6f6e);
    let b = p.as_os_str().as_encoded_bytes();
    if is_clean(b) {
        return state.hash_one(b);
    }
    let mut pieces: Vec<u8> = Vec::with_capacity(b.len());
    for c in p.components() {
        if !pieces.is_empty() && pieces != b"/" {
            pieces.push(b'/');
        }
        pieces.extend_from_slice(c.as_os_str().as_encoded_bytes());
    }
    state.hash_one(&pieces[..])
}

/// The [`path_hash`]es of a list of paths, each with the index of the first path that has
/// it: "may this path be in the list, and where" without comparing it with each. A miss is
/// certain; a hit may be another path with the same hash, so the caller confirms it with
/// the comparison it would have made anyway.
#[derive(Default)]
pub struct PathHashes(foldhash::HashMap<u64, usize>);

impl PathHashes {
    /// Adds `p`, found at index `at` of the list.
    pub fn insert(&mut self, p: &Path, at: usize) {
        self.0.entry(path_hash(p)).or_insert(at);
    }

    /// Whether `p` may be in the list (certainly not when `false`).
    pub fn may_hold(&self, p: &Path) -> bool {
        self.0.contains_key(&path_hash(p))
    }

    /// The index of the first path in the list with `p`'s hash (`p` itself, or another
    /// path with the same hash); `None`: `p` is certainly not in the list.
    pub fn first(&self, p: &Path) -> Option<usize> {
        self.0.get(&path_hash(p)).copied()
    }
}

impl<'a> FromIterator<&'a Path> for PathHashes {
    fn from_iter<I: IntoIterator<Item = &'a Path>>(iter: I) -> Self {
        let mut h = PathHashes::default();
        for (i, p) in iter.into_iter().enumerate() {
            h.insert(p, i);
        }
        h
    }
}

/// `p.starts_with(base)` (component-wise, as [`Path::starts_with`]) for the absolute,
/// normalized paths resolution works with, compared as bytes: `/a/b` is within `/a` and
/// `/a/b`, not within `/a/bc`; `/` contains every absolute path. A path that is not in
/// that form (relative, `//`, a `.` component, a trailing `/`) takes [`Path::starts_with`],
/// so the answer is the same for every input.
///
/// Why: the launch profile of `cordon run` was dominated by `Path` component parsing in
/// the quadratic "is this entry under that one" loops (issue 12); this check is a byte
/// prefix test plus one byte.
pub fn within(p: &Path, base: &Path) -> bool {
    Within::new(p).of(base)
}

/// [`within`] for one path against many bases (the entry loops of resolution): the
/// path's form is checked once, not once per base.
pub struct Within<'a> {
    p: &'a Path,
    clean: bool,
}

impl<'a> Within<'a> {
    /// Prepares `p` (any spelling).
    pub fn new(p: &'a Path) -> Within<'a> {
        Within {
            p,
            clean: is_clean(p.as_os_str().as_encoded_bytes()),
        }
    }

    /// `within(p, base)`.
    pub fn of(&self, base: &Path) -> bool {
        if !self.clean {
            return self.p.starts_with(base);
        }
        let (pb, bb) = (
            self.p.as_os_str().as_encoded_bytes(),
            base.as_os_str().as_encoded_bytes(),
        );
        let i = common_prefix(pb, bb);
        // A byte prefix ending at a separator is a component prefix whatever the
        // spelling of `base` (its pieces are the first pieces of `p`'s).
        if i == bb.len() && (pb.len() == i || pb[i] == b'/') {
            return true;
        }
        // Where both go on and differ, a byte of `base` other than `/` and `.` lies in a
        // name (not an empty or `.` piece) that both spell alike up to there, and `p`'s
        // (clean: every piece a name) differs from it at that byte or ends before it: not
        // within, whatever else `base` spells. Answered without scanning `base`.
        if i < pb.len() && i < bb.len() && bb[i] != b'/' && bb[i] != b'.' {
            return false;
        }
        if !is_clean(bb) {
            return self.p.starts_with(base);
        }
        // Both clean and no byte prefix: only `/` still contains `p`.
        bb == b"/"
    }
}

/// Whether `p` is absolute with no empty or `.` component and no trailing `/` (except `/`
/// itself): the form in which byte prefixes and component prefixes agree, so sorted byte
/// strings can stand for a path tree (issue 12).
pub fn is_clean_path(p: &Path) -> bool {
    is_clean(p.as_os_str().as_encoded_bytes())
}

/// The length of the longest common prefix of `a` and `b`: eight bytes at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = word(a, i) ^ word(b, i);
        if x != 0 {
            // Little-endian words: the lowest set bit is in the first differing byte.
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// The eight bytes of `b` from `i`, as a little-endian word (`i + 8 <= b.len()`).
fn word(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// `0x80` in each byte of `w` that equals `c`, `0` in every other byte (exact: no carry
/// crosses bytes, unlike the usual "has a zero byte" test).
fn bytes_equal(w: u64, c: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = w ^ (0x0101_0101_0101_0101 * u64::from(c));
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// Absolute, no empty or `.` component, no trailing `/` (except `/` itself): the form in
/// which byte prefixes and component prefixes agree.
fn is_clean(b: &[u8]) -> bool {
    if b.first() != Some(&b'/') {
        return false;
    }
    if b.len() == 1 {
        return true;
    }
    if b.ends_with(b"/") {
        return false;
    }
    // After each `/`, neither another `/` nor a lone `.`: eight positions at a time while
    // the two bytes after each are in `b` (a `.` that ends `b` is left to the loop below),
    // then one at a time (issue 12: this scan, byte by byte, was a tenth of a `cordon run`).
    let mut i = 0;
    while i + 10 <= b.len() {
        let slash = bytes_equal(word(b, i), b'/');
        if slash != 0 {
            let (next, after) = (word(b, i + 1), word(b, i + 2));
            let bad =
                bytes_equal(next, b'/') | (bytes_equal(next, b'.') & bytes_equal(after, b'/'));
            if slash & bad != 0 {
                return false;
            }
        }
        i += 8;
    }
    while i + 1 < b.len() {
        if b[i] == b'/' {
            match b[i + 1] {
                b'/' => return false,
                b'.' if b.get(i + 2).is_none_or(|&c| c == b'/') => return false,
                _ => {}
            }
        }
        i += 1;
    }
    true
}

/// The index of the last `/` in `b`, when `b` has a name after it.
fn memchr_last_slash(b: &[u8]) -> Option<usize> {
    b.iter()
        .rposition(|&c| c == b'/')
        .filter(|&i| i + 1 < b.len())
}

/// The path spelled by the bytes `b` (Unix paths are bytes).
fn os_path(b: &[u8]) -> &Path {
    Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b))
}

/// Whether the path bytes `b` hold a `..` component. Most paths have no two dots in a
/// row at all: that is looked for eight positions at a time first.
fn has_dot_dot(b: &[u8]) -> bool {
    let mut i = 0;
    let mut pair = false;
    while i + 9 <= b.len() {
        let dot = bytes_equal(word(b, i), b'.');
        if dot != 0 && dot & bytes_equal(word(b, i + 1), b'.') != 0 {
            pair = true;
            break;
        }
        i += 8;
    }
    pair = pair || b[i..].windows(2).any(|w| w == b"..");
    pair && b.split(|&c| c == b'/').any(|c| c == b"..")
}

/// Number of normal components of an absolute path (`/` → 0, `/a/b` → 2): the
/// "specificity" used by most-specific-wins.
pub fn depth(p: &Path) -> usize {
    p.components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count()
}

/// One resolution's memory of the filesystem: wraps an [`FsView`] and answers each
/// `canonicalize`, `kind` and `read_link` question about one path once, so a resolution
/// that asks about the same ancestors again and again (every missing deny entry under
/// `~`, every protected path under a root) costs one host lookup per distinct path (the
/// host's `canonicalize` is `realpath`: one `readlink` per component). File contents
/// (`read_small`, `read_to_string`) and `is_empty_dir` are passed through.
///
/// Lives for one call (e.g. [`crate::resolve::resolve`]) and is then dropped: a long-lived
/// process must not keep answers about a filesystem a command can change. Within the call
/// the view is consistent (one answer per path), and nothing here is trusted for
/// enforcement: the helper opens every path again without following links.
pub struct MemoFs<'a> {
    inner: &'a dyn FsView,
    canonical: Memo<Option<PathBuf>>,
    kinds: Memo<Option<FileKind>>,
    links: Memo<Option<PathBuf>>,
    entries: Memo<Option<Entry>>,
}

/// One memo of [`MemoFs`], keyed by the path's bytes: `Path`'s own `Hash` walks its
/// components (it must agree with component-wise `Eq`) and cost more than the question
/// it saved (issue 12: ~1.2M instructions per `cordon run`). Two spellings of one path
/// (`/a//b`, `/a/b`) are two keys, so the second is asked of the view again: the memo only
/// saves work, it is never trusted.
type Memo<T> = std::cell::RefCell<foldhash::HashMap<Vec<u8>, T>>;

/// The memo key of `p`.
fn key(p: &Path) -> &[u8] {
    p.as_os_str().as_encoded_bytes()
}

impl<'a> MemoFs<'a> {
    /// A memo in front of `inner`, empty.
    pub fn new(inner: &'a dyn FsView) -> MemoFs<'a> {
        // Sized for one `cordon run` (a few hundred paths: the deny list and every
        // ancestor of each), so resolution does not pay for growing the tables.
        fn memo<T>(n: usize) -> Memo<T> {
            std::cell::RefCell::new(foldhash::HashMap::with_capacity_and_hasher(
                n,
                Default::default(),
            ))
        }
        MemoFs {
            inner,
            canonical: memo(512),
            kinds: memo(64),
            links: memo(64),
            entries: memo(512),
        }
    }
}

fn memo<T: Clone>(map: &Memo<T>, p: &Path, ask: impl FnOnce() -> T) -> T {
    if let Some(v) = map.borrow().get(key(p)) {
        return v.clone();
    }
    let v = ask();
    map.borrow_mut().insert(key(p).to_vec(), v.clone());
    v
}

impl FsView for MemoFs<'_> {
    /// Walks `p` one component at a time on top of the memoised canonical parent: each
    /// component costs one memoised [`FsView::entry`] (shared by every path below it); one
    /// that is a symlink is handed to the view's own `canonicalize` (which follows chains
    /// and `..` physically). A host
    /// `canonicalize` is `realpath`, one `readlink` per component of every path asked,
    /// so a resolution asking about 100 paths under `~` paid for `~` 100 times.
    fn canonicalize(&self, p: &Path) -> Option<PathBuf> {
        if let Some(v) = self.canonical.borrow().get(key(p)) {
            return v.clone();
        }
        // Absolute with only normal components: walked on top of the parent. A clean
        // spelling without `..` is split at its last `/` from the bytes, without `Path`'s
        // component parser; another spelling of that shape (`//a`, `/a/./b`, `/a/`) by
        // `Path` (attack pass 53 F4: the same answer as before the byte split); any
        // other is asked of the view.
        let b = key(p);
        let split = if is_clean(b) && !has_dot_dot(b) {
            memchr_last_slash(b).map(|i| {
                let parent = if i == 0 { &b[..1] } else { &b[..i] };
                (os_path(parent), os_path(&b[i + 1..]))
            })
        } else if p.is_absolute()
            && p.components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        {
            p.parent().zip(p.file_name().map(Path::new))
        } else {
            None
        };
        let v = match split {
            Some((parent, name)) => self.canonicalize(parent).and_then(|mut q| {
                // The parent's answer (a copy of the memo's) joined with `name` in place.
                q.reserve_exact(1 + name.as_os_str().len());
                q.push(name);
                match self.entry(&q) {
                    Some(Entry::Link(_)) => self.inner.canonicalize(&q),
                    Some(Entry::Kind(_)) => Some(q),
                    None => None,
                }
            }),
            _ => self.inner.canonicalize(p),
        };
        self.canonical
            .borrow_mut()
            .insert(key(p).to_vec(), v.clone());
        v
    }
    /// Answered from the memoised [`FsView::entry`] when `p` was already asked about and
    /// is not a symlink: nothing there is nothing to follow, and a non-link's kind is its
    /// own (the `stat` a host makes here would repeat the `lstat` behind `entry`; every
    /// absent deny path paid both, plus a `readlink`). A symlink is asked of the view.
    fn kind(&self, p: &Path) -> Option<FileKind> {
        match self.entries.borrow().get(key(p)) {
            Some(None) => return None,
            Some(Some(Entry::Kind(k))) => return Some(*k),
            Some(Some(Entry::Link(_))) | None => {}
        }
        memo(&self.kinds, p, || self.inner.kind(p))
    }
    fn read_to_string(&self, p: &Path) -> Option<String> {
        self.inner.read_to_string(p)
    }
    fn read_small(&self, p: &Path, cap: u64) -> Result<String, ReadRefusal> {
        self.inner.read_small(p, cap)
    }
    fn read_small_lossy(&self, p: &Path, cap: u64) -> Result<String, ReadRefusal> {
        self.inner.read_small_lossy(p, cap)
    }
    /// Answered from the memoised [`FsView::entry`] when `p` was already asked about (the
    /// same question: [`FsView::entry`] is a link's target or what is not a link); else
    /// asked of the view.
    fn read_link(&self, p: &Path) -> Option<PathBuf> {
        if let Some(e) = self.entries.borrow().get(key(p)) {
            return match e {
                Some(Entry::Link(t)) => Some(t.clone()),
                Some(Entry::Kind(_)) | None => None,
            };
        }
        memo(&self.links, p, || self.inner.read_link(p))
    }
    fn is_empty_dir(&self, p: &Path) -> bool {
        self.inner.is_empty_dir(p)
    }
    fn list_dir(&self, p: &Path, cap: usize) -> Vec<std::ffi::OsString> {
        self.inner.list_dir(p, cap)
    }
    fn entry(&self, p: &Path) -> Option<Entry> {
        memo(&self.entries, p, || self.inner.entry(p))
    }
    fn list_dir_typed(&self, p: &Path, cap: usize) -> Option<Vec<(std::ffi::OsString, bool)>> {
        self.inner.list_dir_typed(p, cap)
    }
    fn identity(&self, p: &Path) -> Option<FileIdentity> {
        self.inner.identity(p)
    }
    fn read_only_mount(&self, p: &Path) -> Option<bool> {
        self.inner.read_only_mount(p)
    }
}

/// An in-memory [`FsView`] for tests and for hosts without a disk view. Paths are
/// absolute; symlinks are followed (max 40 hops, like the kernel).
#[derive(Debug, Default, Clone)]
pub struct MemFs {
    dirs: BTreeMap<PathBuf, ()>,
    files: BTreeMap<PathBuf, String>,
    links: BTreeMap<PathBuf, PathBuf>,
    special: BTreeMap<PathBuf, String>,
}

impl MemFs {
    /// An empty filesystem containing only `/`.
    pub fn new() -> Self {
        let mut m = MemFs::default();
        m.dirs.insert(PathBuf::from("/"), ());
        m
    }
    /// Adds a directory (and its ancestors).
    pub fn dir(mut self, p: &str) -> Self {
        let mut cur = PathBuf::from("/");
        for c in Path::new(p).components().skip(1) {
            cur.push(c);
            self.dirs.insert(cur.clone(), ());
        }
        self
    }
    /// Adds a file with contents (and its parent directories).
    pub fn file(mut self, p: &str, contents: &str) -> Self {
        if let Some(parent) = Path::new(p).parent() {
            self = self.dir(parent.to_str().unwrap_or("/"));
        }
        self.files.insert(PathBuf::from(p), contents.to_string());
        self
    }
    /// Adds a non-regular file (`kind` e.g. `fifo`, `character device`) that
    /// [`FsView::read_small`] refuses, as a host view does.
    pub fn special(mut self, p: &str, kind: &str) -> Self {
        self = self.file(p, "");
        self.special.insert(PathBuf::from(p), kind.to_string());
        self
    }
    /// Adds a symlink `p -> target` (target absolute or relative to `p`'s parent).
    pub fn symlink(mut self, p: &str, target: &str) -> Self {
        if let Some(parent) = Path::new(p).parent() {
            self = self.dir(parent.to_str().unwrap_or("/"));
        }
        self.links.insert(PathBuf::from(p), PathBuf::from(target));
        self
    }

    fn resolve(&self, p: &Path, hops: &mut u32) -> Option<PathBuf> {
        let mut out = PathBuf::from("/");
        let comps: Vec<_> = p.components().collect();
        for (i, c) in comps.iter().enumerate() {
            match c {
                Component::Normal(s) => {
                    let cand = out.join(s);
                    if let Some(t) = self.links.get(&cand) {
                        *hops += 1;
                        if *hops > 40 {
                            return None;
                        }
                        let target = lexical_normalize(t, &out);
                        let mut rest = target;
                        for r in &comps[i + 1..] {
                            rest.push(r);
                        }
                        return self.resolve(&lexical_normalize(&rest, Path::new("/")), hops);
                    }
                    if !self.dirs.contains_key(&cand) && !self.files.contains_key(&cand) {
                        return None;
                    }
                    out = cand;
                }
                Component::ParentDir => {
                    out.pop();
                }
                _ => {}
            }
        }
        Some(out)
    }
}

impl FsView for MemFs {
    fn canonicalize(&self, p: &Path) -> Option<PathBuf> {
        self.resolve(p, &mut 0)
    }
    fn kind(&self, p: &Path) -> Option<FileKind> {
        let c = self.canonicalize(p)?;
        if self.dirs.contains_key(&c) {
            Some(FileKind::Dir)
        } else {
            Some(FileKind::File)
        }
    }
    fn read_to_string(&self, p: &Path) -> Option<String> {
        self.read_small(p, SMALL_FILE_CAP).ok()
    }
    fn read_small(&self, p: &Path, cap: u64) -> Result<String, ReadRefusal> {
        let c = self.canonicalize(p).ok_or(ReadRefusal::Missing)?;
        if let Some(k) = self.special.get(&c) {
            return Err(ReadRefusal::NotRegular(k.clone()));
        }
        if self.dirs.contains_key(&c) {
            return Err(ReadRefusal::NotRegular("directory".into()));
        }
        let text = self.files.get(&c).cloned().ok_or(ReadRefusal::Missing)?;
        if text.len() as u64 > cap {
            return Err(ReadRefusal::TooLarge(cap));
        }
        Ok(text)
    }
    fn read_link(&self, p: &Path) -> Option<PathBuf> {
        self.links.get(p).cloned()
    }
    fn is_empty_dir(&self, p: &Path) -> bool {
        let Some(c) = self.canonicalize(p) else {
            return false;
        };
        self.dirs.contains_key(&c)
            && !self
                .dirs
                .keys()
                .chain(self.files.keys())
                .chain(self.links.keys())
                .any(|k| k.parent() == Some(c.as_path()))
    }
    fn list_dir(&self, p: &Path, cap: usize) -> Vec<std::ffi::OsString> {
        let Some(c) = self.canonicalize(p) else {
            return Vec::new();
        };
        let mut out: Vec<std::ffi::OsString> = self
            .dirs
            .keys()
            .chain(self.files.keys())
            .chain(self.links.keys())
            .filter(|k| k.parent() == Some(c.as_path()))
            .filter_map(|k| k.file_name().map(|n| n.to_os_string()))
            .collect();
        out.dedup();
        out.truncate(cap);
        out
    }
}

/// Trees that belong to the system, not to a project (Linux and macOS spellings): never a
/// workspace found by falling back to the cwd, never where a `$TMPDIR` is made writable,
/// never offered as a one-off write grant after a denial. See [`in_system_tree`] for the
/// exceptions.
pub const SYSTEM_TREES: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/opt",
    "/srv",
    "/root",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/snap",
    "/nix",
    "/var",
    "/System",
    "/Library",
    "/Applications",
    "/private",
];

/// Directories that hold other people's or other disks' trees (home directories, mount
/// points): never a workspace without a project marker of its own.
pub const SHARED_TOP_DIRS: &[&str] = &[
    "/home",
    "/mnt",
    "/media",
    "/run/media",
    "/Users",
    "/Volumes",
];

/// Temp trees: inside a [`SYSTEM_TREES`] entry, but places any program may make its own
/// directories in. Not `/dev/shm`: the Linux sandbox rebuilds `/dev` with a private, empty
/// `/dev/shm` per command ([`REBUILT_TREES`]), so a host directory there would be named in
/// the report but absent inside (breaker MEDIUM-3).
pub const TEMP_TREES: &[&str] = &[
    "/tmp",
    "/var/tmp",
    "/private/tmp",
    "/private/var/folders",
    "/var/folders",
];

/// Trees the Linux sandbox builds afresh for every command (a minimal `/dev` with a private
/// `/dev/shm` tmpfs, a new `/proc` for its pid namespace): a read or write grant beneath
/// them names a host path the command would not see, so resolution drops it with a note
/// (on Linux) rather than report it as given.
pub const REBUILT_TREES: &[&str] = &["/dev", "/proc"];

/// Whether the (canonical, absolute) path `p` lies in a system tree ([`SYSTEM_TREES`]):
/// not when it lies in a temp tree ([`TEMP_TREES`]), nor inside `home` (a home directory
/// under `/root` or `/var/lib/…` is the user's own; whether the home itself or above it may
/// be touched is each caller's separate rule).
pub fn in_system_tree(p: &Path, home: Option<&Path>) -> bool {
    if TEMP_TREES.iter().any(|t| p.starts_with(t)) {
        return false;
    }
    if home.is_some_and(|h| p.starts_with(h) && p != h) {
        return false;
    }
    SYSTEM_TREES.iter().any(|t| p.starts_with(t))
}

/// The kernel's limit on a path given to a system call, terminating NUL included
/// (`PATH_MAX` on Linux).
pub const PATH_MAX: usize = 4096;

/// Why `path` (what it is: `what`, e.g. "working directory") cannot be used by name: it is
/// longer than [`PATH_MAX`] allows, so every call naming it fails with `ENAMETOOLONG`.
/// The path is shortened in the message. `None` when it fits.
pub fn too_long(what: &str, path: &Path) -> Option<String> {
    let bytes = path.as_os_str().as_encoded_bytes();
    (bytes.len() >= PATH_MAX).then(|| {
        let text = escaped(bytes);
        let chars: Vec<char> = text.chars().collect();
        let short = if chars.len() > 96 {
            let head: String = chars[..56].iter().collect();
            let tail: String = chars[chars.len() - 32..].iter().collect();
            format!("{head}…{tail}")
        } else {
            text
        };
        format!(
            "the {what} {short} is {} bytes long, longer than the kernel accepts for a path \
             (PATH_MAX, {PATH_MAX} bytes with the final NUL): no system call can name it; \
             run from a shorter path",
            bytes.len()
        )
    })
}

/// `bytes` as text, every byte that is not part of valid UTF-8 shown as `\\xNN`: how a
/// path or variable name cordon cannot encode is named in a message (L2).
pub fn escaped(bytes: &[u8]) -> String {
    bytes.utf8_chunks().fold(String::new(), |mut s, c| {
        s.push_str(c.valid());
        for b in c.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
        s
    })
}

#[cfg(test)]
mod tests {
    /// Bytes that are not UTF-8 are named `\xNN`; valid text, multi-byte included, is kept.
    #[test]
    fn escaped_names_bad_bytes() {
        assert_eq!(super::escaped(b"a\xffb"), "a\\xffb");
        assert_eq!(
            super::escaped("d\u{e9}j\u{e0}".as_bytes()),
            "d\u{e9}j\u{e0}"
        );
        assert_eq!(super::escaped(b"/p/\xe9\x80"), "/p/\\xe9\\x80");
    }

    /// One list of system trees for the workspace fallback, `$TMPDIR` and one-off grants:
    /// temp trees and the inside of the home are the exceptions.
    #[test]
    fn system_trees_with_their_exceptions() {
        let sys = |p: &str, h: Option<&str>| in_system_tree(Path::new(p), h.map(Path::new));
        assert!(sys("/usr/local/lib", None));
        assert!(sys("/srv/www", None));
        assert!(sys("/var/lib/x", None));
        assert!(sys("/root/x", Some("/home/u")));
        assert!(!sys("/root/proj", Some("/root")), "inside the home");
        assert!(
            sys("/root", Some("/root")),
            "the home itself is the caller's rule"
        );
        assert!(!sys("/var/tmp/ws", None));
        assert!(
            sys("/dev/shm/x", None),
            "/dev/shm is private inside the sandbox: not a temp tree"
        );
        assert!(sys("/dev/sda", None));
        assert!(!sys("/home/u/proj", None));
        assert!(!sys("/usrlocal", None), "whole components only");
    }

    use super::*;

    /// attack38 B3: a missing path below a dangling symlink is where a file made there
    /// lands — the link's target — through relative and chained links; an existing path
    /// and a path without links stay as they were.
    #[test]
    fn a_dangling_link_on_a_missing_path_is_followed() {
        let fs = MemFs::new()
            .dir("/h")
            .dir("/d")
            .symlink("/h/.config", "../d/cfg")
            .symlink("/h/chain", "/h/.config")
            .file("/h/f", "");
        let c = |p: &str| canonicalize_lenient(&fs, Path::new(p));
        assert_eq!(c("/h/.config/git/config"), Path::new("/d/cfg/git/config"));
        assert_eq!(c("/h/chain/x"), Path::new("/d/cfg/x"));
        assert_eq!(c("/h/f"), Path::new("/h/f"));
        assert_eq!(c("/h/missing/y"), Path::new("/h/missing/y"));
    }

    /// Counts the questions that reach the wrapped view.
    struct Counting<'a>(&'a MemFs, std::cell::Cell<usize>);
    impl FsView for Counting<'_> {
        /// Costs what a host `realpath` costs: one lookup per component.
        fn canonicalize(&self, p: &Path) -> Option<PathBuf> {
            self.1.set(self.1.get() + p.components().count().max(1));
            self.0.canonicalize(p)
        }
        fn kind(&self, p: &Path) -> Option<FileKind> {
            self.1.set(self.1.get() + 1);
            self.0.kind(p)
        }
        fn read_to_string(&self, p: &Path) -> Option<String> {
            self.0.read_to_string(p)
        }
        fn read_link(&self, p: &Path) -> Option<PathBuf> {
            self.1.set(self.1.get() + 1);
            self.0.read_link(p)
        }
    }

    /// One host lookup per distinct path and question (the same ancestors come up for
    /// every missing deny entry), with the same answers as the view itself, missing paths
    /// and symlinks included.
    #[test]
    fn memo_asks_each_path_once_and_answers_the_same() {
        let m = MemFs::new()
            .dir("/home/u")
            .symlink("/home/u/link", "/etc")
            .file("/etc/hosts", "x");
        let counting = Counting(&m, std::cell::Cell::new(0));
        let memo = MemoFs::new(&counting);
        let paths = [
            "/home/u/.ssh",
            "/home/u/.aws",
            "/home/u/link/hosts",
            "/home/u",
        ];
        for _ in 0..3 {
            for p in paths {
                let p = Path::new(p);
                assert_eq!(canonicalize_lenient(&memo, p), canonicalize_lenient(&m, p));
                assert_eq!(memo.kind(p), m.kind(p));
                assert_eq!(memo.read_link(p), m.read_link(p));
            }
        }
        let first_round = {
            let c = Counting(&m, std::cell::Cell::new(0));
            let memo = MemoFs::new(&c);
            for p in paths {
                let p = Path::new(p);
                canonicalize_lenient(&memo, p);
                memo.kind(p);
                memo.read_link(p);
            }
            c.1.get()
        };
        assert_eq!(
            counting.1.get(),
            first_round,
            "repeats must not reach the view"
        );
        let unmemoised = {
            let c = Counting(&m, std::cell::Cell::new(0));
            for p in paths {
                let p = Path::new(p);
                canonicalize_lenient(&c, p);
                c.kind(p);
                c.read_link(p);
            }
            c.1.get()
        };
        assert!(first_round < unmemoised, "{first_round} vs {unmemoised}");
    }

    proptest::proptest! {
        /// The memo's component walk answers `canonicalize` exactly as the view's own
        /// (symlink chains, `..` in targets, loops, dangling links, files used as dirs).
        #[test]
        fn memo_canonicalize_matches_the_view(
            dirs in proptest::collection::vec(0usize..6, 0..8),
            files in proptest::collection::vec(0usize..6, 0..4),
            links in proptest::collection::vec((0usize..6, 0usize..9), 0..6),
            asks in proptest::collection::vec((0usize..6, 0usize..6), 1..12),
        ) {
            const NAMES: [&str; 6] = ["/a", "/a/b", "/a/b/c", "/d", "/d/e", "/a/f"];
            const TARGETS: [&str; 9] =
                ["/a", "b", "../d", "/d/e", "..", "c/../b", "/nope", "../../a/b", "."];
            let mut m = MemFs::new();
            for i in dirs { m = m.dir(NAMES[i]); }
            for i in files { m = m.file(NAMES[i], "x"); }
            for (i, t) in links { m = m.symlink(NAMES[i], TARGETS[t]); }
            let memo = MemoFs::new(&m);
            for (i, tail) in asks {
                let p = PathBuf::from(NAMES[i]).join(["b", "c", "e", "x", "f", "a"][tail]);
                proptest::prop_assert_eq!(memo.canonicalize(&p), m.canonicalize(&p), "{:?}", p);
                let p = Path::new(NAMES[i]);
                proptest::prop_assert_eq!(memo.canonicalize(p), m.canonicalize(p), "{:?}", p);
            }
        }
    }

    proptest::proptest! {
        /// The walk up from a missing clean path over slices of its bytes answers as the
        /// component walk does (dangling links on the way, chains, `..` in targets).
        #[test]
        fn lenient_clean_is_the_walk(
            dirs in proptest::collection::vec(0usize..6, 0..8),
            files in proptest::collection::vec(0usize..6, 0..4),
            links in proptest::collection::vec((0usize..6, 0usize..10), 0..6),
            asks in proptest::collection::vec((0usize..6, 0usize..7), 1..12),
        ) {
            const NAMES: [&str; 6] = ["/a", "/a/b", "/a/b/c", "/d", "/d/e", "/a/f"];
            const TARGETS: [&str; 10] = [
                "/a", "b", "../d", "/d/e", "..", "c/../b", "/nope", "../../a/b", ".", "/n/o/p",
            ];
            let mut m = MemFs::new();
            for i in dirs { m = m.dir(NAMES[i]); }
            for i in files { m = m.file(NAMES[i], "x"); }
            for (i, t) in links { m = m.symlink(NAMES[i], TARGETS[t]); }
            let memo = MemoFs::new(&m);
            for (i, tail) in asks {
                let p = PathBuf::from(NAMES[i]).join(["b", "c", "e", "x", "f", "a", "x/y/z"][tail]);
                for fs in [&m as &dyn FsView, &memo] {
                    for hops in [0, 39, 40] {
                        proptest::prop_assert_eq!(
                            lenient_clean(fs, &p, hops), lenient_walk(fs, &p, hops), "{:?}", p
                        );
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// `within` is `Path::starts_with` for every spelling (issue 12: the byte check
        /// must never answer differently from the component check it replaces).
        #[test]
        fn within_is_path_starts_with(
            a in proptest::collection::vec(0usize..8, 0..6),
            b in proptest::collection::vec(0usize..8, 0..6),
            lead in 0usize..3,
            trail in proptest::bool::ANY,
        ) {
            const PARTS: [&str; 8] = ["a", "ab", "b", "", ".", "..", "a.b", "\u{e9}"];
            let spell = |v: &[usize], lead: usize, trail: bool| {
                let mut s = ["", "/", "//"][lead].to_string();
                s.push_str(&v.iter().map(|&i| PARTS[i]).collect::<Vec<_>>().join("/"));
                if trail { s.push('/'); }
                PathBuf::from(s)
            };
            for (p, q) in [
                (spell(&a, lead, trail), spell(&b, 1, false)),
                (spell(&a, 1, false), spell(&b, lead, trail)),
                (spell(&a, 1, false), spell(&a[..a.len() / 2], 1, false)),
                (spell(&a, 1, false), spell(&a[..a.len() / 2], lead, trail)),
                (spell(&a, lead, trail), spell(&a[..a.len() / 2], lead, !trail)),
            ] {
                proptest::prop_assert_eq!(within(&p, &q), p.starts_with(&q), "{:?} in {:?}", p, q);
            }
        }

        /// The word-at-a-time `is_clean` and `common_prefix` answer as a byte-by-byte
        /// scan does, for spellings long enough to take the word loops.
        #[test]
        fn word_scans_are_the_byte_scans(
            a in proptest::collection::vec(0usize..9, 0..12),
            b in proptest::collection::vec(0usize..9, 0..12),
            lead in 0usize..3,
            trail in 0usize..3,
        ) {
            const PARTS: [&str; 9] =
                ["a", "abc..fgh", "b.", "", ".", "..", ".a", "\u{e9}x", "abcdefghijklmnopq"];
            let spell = |v: &[usize]| {
                let mut s = ["", "/", "//"][lead].to_string();
                s.push_str(&v.iter().map(|&i| PARTS[i]).collect::<Vec<_>>().join("/"));
                s.push_str(["", "/", "/."][trail]);
                s
            };
            let (p, q) = (spell(&a), spell(&b));
            let (pp, qp) = (Path::new(&p), Path::new(&q));
            // Equal paths hash alike, however spelled.
            let unslashed = p.replace("//", "/");
            let trimmed = p.trim_end_matches(['/', '.']).to_string();
            for (x, y) in [(pp, qp), (pp, Path::new(&unslashed)), (pp, Path::new(&trimmed))] {
                if x == y {
                    proptest::prop_assert_eq!(path_hash(x), path_hash(y), "{:?} {:?}", x, y);
                }
            }
            let clean_bytewise = |b: &[u8]| {
                b.first() == Some(&b'/')
                    && (b.len() == 1
                        || (!b.ends_with(b"/")
                            && !(0..b.len() - 1).any(|i| {
                                b[i] == b'/'
                                    && (b[i + 1] == b'/'
                                        || (b[i + 1] == b'.' && b.get(i + 2).is_none_or(|&c| c == b'/')))
                            })))
            };
            proptest::prop_assert_eq!(is_clean(p.as_bytes()), clean_bytewise(p.as_bytes()), "{:?}", p);
            proptest::prop_assert_eq!(
                has_dot_dot(p.as_bytes()),
                p.as_bytes().split(|&c| c == b'/').any(|c| c == b".."),
                "{:?}", p
            );
            let common = p.bytes().zip(q.bytes()).take_while(|(x, y)| x == y).count();
            proptest::prop_assert_eq!(common_prefix(p.as_bytes(), q.as_bytes()), common);
            proptest::prop_assert_eq!(within(pp, qp), pp.starts_with(qp), "{:?} in {:?}", p, q);
            let half = spell(&a[..a.len() / 2]);
            proptest::prop_assert_eq!(
                within(pp, Path::new(&half)),
                pp.starts_with(&half),
                "{:?} in {:?}", p, half
            );
        }

        /// `lexical_normalize`'s shortcut for clean paths never answers differently from
        /// the component walk.
        #[test]
        fn lexical_normalize_is_the_walk(
            a in proptest::collection::vec(0usize..8, 0..6),
            lead in 0usize..3,
            trail in proptest::bool::ANY,
        ) {
            const PARTS: [&str; 8] = ["a", "..b", "b..", "", ".", "..", "a.b", "\u{e9}"];
            let mut s = ["", "/", "//"][lead].to_string();
            s.push_str(&a.iter().map(|&i| PARTS[i]).collect::<Vec<_>>().join("/"));
            if trail { s.push('/'); }
            let p = PathBuf::from(s);
            let cwd = Path::new("/c/d");
            proptest::prop_assert_eq!(lexical_normalize(&p, cwd), lexical_walk(&p, cwd), "{:?}", p);
        }
    }

    #[test]
    fn lexical_normalize_keeps_clean_paths() {
        // The fast path (already clean, no `..`) and the walk agree.
        for (p, want) in [
            ("/home/u/.ssh", "/home/u/.ssh"),
            ("/", "/"),
            ("/a/..b/c", "/a/..b/c"),
            ("/a/b../c", "/a/b../c"),
            ("/a/../b", "/b"),
            ("/a/..", "/"),
            ("/a//b/./c/", "/a/b/c"),
            ("rel/x", "/cwd/rel/x"),
        ] {
            assert_eq!(
                lexical_normalize(Path::new(p), Path::new("/cwd")),
                PathBuf::from(want),
                "{p}"
            );
        }
    }

    #[test]
    fn within_examples() {
        let w = |p: &str, b: &str| within(Path::new(p), Path::new(b));
        assert!(w("/a/b", "/a"));
        assert!(w("/a/b", "/a/b"));
        assert!(w("/a/b", "/"));
        assert!(!w("/a/bc", "/a/b"));
        assert!(!w("/a", "/a/b"));
        assert!(w("/a//b/", "/a/b"));
        assert!(w("/a/./b", "/a/b"));
    }

    /// Breaker (stop 21): `..` after a symlink goes up from the link's target, as the
    /// kernel resolves it; past what exists, and without `..`, spelling is kept.
    #[test]
    fn physical_normalize_resolves_dotdot_after_a_symlink() {
        let fs = MemFs::new()
            .file("/var/sec/key", "s")
            .dir("/var/sec/sub")
            .symlink("/opt/lnk2", "/var/sec/sub")
            .dir("/opt");
        let cwd = Path::new("/home/u");
        let n = |p: &str| physical_normalize(&fs, Path::new(p), cwd);
        assert_eq!(n("/opt/lnk2/../key"), PathBuf::from("/var/sec/key"));
        assert_eq!(n("/opt/lnk2/x/../y"), PathBuf::from("/opt/lnk2/y"));
        assert_eq!(n("/opt/lnk2/y"), PathBuf::from("/opt/lnk2/y"));
        assert_eq!(n("/nope/a/../b"), PathBuf::from("/nope/b"));
        assert_eq!(n("../x"), PathBuf::from("/home/x"));
        assert_eq!(
            lexical_normalize(Path::new("/opt/lnk2/../key"), cwd),
            PathBuf::from("/opt/key")
        );
    }

    #[test]
    fn lexical_handles_dotdot_and_relative() {
        let cwd = Path::new("/home/u/proj");
        assert_eq!(
            lexical_normalize(Path::new("../x/./y"), cwd),
            PathBuf::from("/home/u/x/y")
        );
        assert_eq!(
            lexical_normalize(Path::new("/../../etc"), cwd),
            PathBuf::from("/etc")
        );
        assert_eq!(lexical_normalize(Path::new("."), cwd), cwd.to_path_buf());
        assert_eq!(
            lexical_normalize(Path::new("a//b/"), cwd),
            PathBuf::from("/home/u/proj/a/b")
        );
    }

    #[test]
    fn memfs_follows_symlinks_and_lenient_appends_missing() {
        let fs = MemFs::new()
            .dir("/data/real")
            .symlink("/home/u/link", "/data/real")
            .symlink("/home/u/rel", "../../data");
        assert_eq!(
            fs.canonicalize(Path::new("/home/u/link")),
            Some(PathBuf::from("/data/real"))
        );
        assert_eq!(
            fs.canonicalize(Path::new("/home/u/rel/real")),
            Some(PathBuf::from("/data/real"))
        );
        assert_eq!(
            canonicalize_lenient(&fs, Path::new("/home/u/link/new/file")),
            PathBuf::from("/data/real/new/file")
        );
    }

    #[test]
    fn memfs_symlink_loop_is_missing() {
        let fs = MemFs::new().symlink("/a", "/b").symlink("/b", "/a");
        assert_eq!(fs.canonicalize(Path::new("/a")), None);
    }
}
