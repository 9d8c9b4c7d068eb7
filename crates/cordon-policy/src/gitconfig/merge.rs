//! Merging a sandbox's edits of `.git/config` back into the host file (issue 11 §3, R-P3).
//!
//! Inside the sandbox `.git/config` is a writable private copy of the host file. When the
//! command ends, the edits it made (the difference between the copy as it started,
//! `original`, and as it ended, `edited`) are applied to the host file as it is *now*
//! (`current`, re-read under git's lock by the caller), but only for keys in [`ALLOWED`]
//! whose values pass [`value_allowed`]. Every other changed key is refused and named, so a
//! confined command cannot make the host's next `git` run code (`core.fsmonitor`,
//! `core.hooksPath`, `alias.x = !…`, `filter.*`, `include*`, `*.uploadpack`,
//! `core.sshCommand`, `credential.*`) or send git elsewhere (`url.*.insteadOf`, a
//! `file://` or `ext::` remote).
//!
//! Keys are compared as git does: section and key names case-insensitively, subsection names
//! exactly. A key's value list is replaced as a whole (multi-valued keys such as
//! `remote.*.fetch` keep their order); an emptied section is removed, so
//! `git branch -M main` (which renames `[branch "master"]`) lands as "`branch.master.*`
//! removed, `branch.main.*` added". Edits to keys the run did not touch are never made, so a
//! concurrent run's edits survive.

use std::collections::BTreeMap;

/// The keys a sandbox may change: `(section, subsection required, key)`, names lowercase.
/// `subsection required` = the key lives in a named subsection (`[branch "main"]`); any
/// name is accepted there.
pub const ALLOWED: &[(&str, bool, &str)] = &[
    ("branch", true, "remote"),
    ("branch", true, "merge"),
    ("branch", true, "rebase"),
    ("remote", true, "url"),
    ("remote", true, "pushurl"),
    ("remote", true, "fetch"),
    // `git submodule init`/`update --init` (new-user pass nu12 M6): the URL passes the
    // remote URL checks, `active` is a boolean; `submodule.*.update` (which may be `!cmd`)
    // is never merged.
    ("submodule", true, "url"),
    ("submodule", true, "active"),
    ("user", false, "name"),
    ("user", false, "email"),
    ("init", false, "defaultbranch"),
];

/// A key as git identifies it: section (lowercase), subsection (exact), key (lowercase).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    /// Section name, lowercase (`branch`).
    pub section: String,
    /// Subsection, exactly as written (`main`).
    pub subsection: Option<String>,
    /// Key name, lowercase (`merge`).
    pub name: String,
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.subsection {
            Some(s) => write!(f, "{}.{}.{}", self.section, s, self.name),
            None => write!(f, "{}.{}", self.section, self.name),
        }
    }
}

/// What a merge did: the new host text (`None` = nothing to write), the keys merged and the
/// keys refused with why.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The host file's new content, when an allowed key changed.
    pub text: Option<Vec<u8>>,
    /// Keys whose new values were merged (`user.email`).
    pub merged: Vec<String>,
    /// Keys left out, each with the reason (`core.hookspath`, "not on the allow list …").
    pub refused: Vec<(String, String)>,
    /// For each refused key (in `refused` order), the git command that makes the same change
    /// to the host file, for the user to run outside cordon if they mean it
    /// (`git config set core.fsmonitor 'x'`-style, shell-quoted).
    pub commands: Vec<String>,
}

impl MergeOutcome {
    /// The `cordon: note:` line for the refused keys (`None` when nothing was refused).
    pub fn refusal_note(&self, file: &std::path::Path) -> Option<String> {
        if self.refused.is_empty() {
            return None;
        }
        let keys: Vec<String> = self
            .refused
            .iter()
            .map(|(k, why)| format!("{k} ({why})"))
            .collect();
        Some(format!(
            "{}: edits not merged back to the host: {}; only branch.*.{{remote,merge,rebase}}, \
             remote.*.{{url,pushurl,fetch}}, submodule.*.{{url,active}}, user.{{name,email}} \
             and init.defaultBranch are merged (README \"Git config edits\"). If you mean it, \
             run outside cordon: {}",
            file.display(),
            keys.join(", "),
            self.commands.join("; ")
        ))
    }
}

type Values = BTreeMap<Key, Vec<Vec<u8>>>;

/// The keys a linked worktree's `config.worktree` may hold when a sandboxed command made
/// it: what `git worktree add` writes into a new worktree's file in a sparse-checkout
/// repository. Lowercase (section, key).
pub const WORKTREE_CONFIG_ALLOWED: &[(&str, &str)] =
    &[("core", "sparsecheckout"), ("core", "sparsecheckoutcone")];

/// Why a `config.worktree` a sandboxed command made in a new linked worktree's admin dir
/// must not be kept, or `None` when every key in it is in [`WORKTREE_CONFIG_ALLOWED`].
/// With `extensions.worktreeConfig` git reads that file in the worktree as part of its
/// configuration, so a `core.fsmonitor` there runs at the host's `git status` (attack
/// pass 34, E5). A file that does not parse is refused.
pub fn worktree_config_refusal(bytes: &[u8]) -> Option<String> {
    let file = match parse(bytes, "new worktree's config.worktree") {
        Ok(f) => f,
        Err(e) => return Some(e),
    };
    values_of(&file).keys().find_map(|k| {
        let allowed = k.subsection.is_none()
            && WORKTREE_CONFIG_ALLOWED
                .iter()
                .any(|(s, n)| *s == k.section && *n == k.name);
        (!allowed).then(|| format!("it sets {k}, which only the user may set"))
    })
}

fn parse(bytes: &[u8], what: &str) -> Result<gix_config::File, String> {
    gix_config::File::from_bytes_owned(
        &mut bytes.to_vec(),
        gix_config::file::Metadata::default(),
        gix_config::file::init::Options::default(),
    )
    .map_err(|e| format!("the {what} .git/config does not parse: {e}"))
}

fn values_of(file: &gix_config::File) -> Values {
    let mut out = Values::new();
    for s in file.sections() {
        let section = s.header().name().to_string().to_ascii_lowercase();
        let subsection = s.header().subsection_name().map(|b| b.to_string());
        let mut seen: Vec<String> = Vec::new();
        for name in s.value_names() {
            let lower = name.to_ascii_lowercase();
            if seen.contains(&lower) {
                continue; // `value_names` yields a name once per occurrence
            }
            seen.push(lower.clone());
            let key = Key {
                section: section.clone(),
                subsection: subsection.clone(),
                name: lower,
            };
            // A key repeated in two sections of the same name appends (git's multi-value
            // semantics).
            let vals = s.values(&name).into_iter().map(|v| v.to_vec());
            out.entry(key).or_default().extend(vals);
        }
    }
    out
}

/// Why `key` may not change to `values`, or `None` when it may.
pub fn refusal(key: &Key, values: &[Vec<u8>]) -> Option<String> {
    refusal_with(key, values, &MergeOptions::default())
}

/// [`refusal`] knowing this machine's names (breaker, stop 19).
pub fn refusal_with(key: &Key, values: &[Vec<u8>], opts: &MergeOptions) -> Option<String> {
    let listed = ALLOWED
        .iter()
        .any(|(s, sub, k)| *s == key.section && *sub == key.subsection.is_some() && *k == key.name);
    if !listed {
        let why = crate::gitconfig::CODE_KEYS
            .iter()
            .find(|(s, _, k, _, _)| *s == key.section && (*k == key.name || *k == "*"))
            .map(|(_, _, _, _, why)| why.to_string());
        return Some(why.unwrap_or_else(|| "not on the allow list".into()));
    }
    if (key.section == "remote" && key.name != "fetch")
        || (key.section == "submodule" && key.name == "url")
    {
        for v in values {
            if let Err(why) = value_allowed_with(v, opts) {
                return Some(why);
            }
        }
    }
    // A fetch refspec that force-moves a local ref (`+refs/heads/main:refs/heads/feat`,
    // a tag): every later `git fetch` of that remote, on the host too, overwrites it, as
    // `git branch -f` would (attack pass 246 #1). Remote-tracking refs hold no work.
    if key.section == "remote" && key.name == "fetch" {
        if let Some(v) = values
            .iter()
            .find(|v| super::forces_a_local_ref(&String::from_utf8_lossy(v), false))
        {
            return Some(format!(
                "remote.*.fetch = {:?} force-moves a local branch or tag at every fetch (only \
                 refspecs into refs/remotes/ are kept)",
                String::from_utf8_lossy(v)
            ));
        }
    }
    if key.section == "submodule" && key.name == "active" {
        if let Some(v) = values
            .iter()
            .find(|v| !matches!(v.as_slice(), b"true" | b"false"))
        {
            return Some(format!(
                "submodule.*.active = {:?} (only true or false)",
                String::from_utf8_lossy(v)
            ));
        }
    }
    if key.section == "branch" {
        for v in values {
            let ok = match key.name.as_str() {
                // `branch.X.remote` may also be a URL or a path, which git uses like
                // `remote.*.url` (a local path runs the hooks of a repository the sandbox
                // wrote on the host's next `git push`): only a remote's name, or `.`.
                "remote" => remote_name_allowed(v),
                // `interactive` opens an editor on the host's next `git pull`.
                "rebase" => matches!(v.as_slice(), b"true" | b"false" | b"merges"),
                _ => true,
            };
            if !ok {
                return Some(format!(
                    "branch.*.{} = {:?} (only a remote's name or `.` for remote; \
                     true/false/merges for rebase)",
                    key.name,
                    String::from_utf8_lossy(v)
                ));
            }
        }
    }
    if values.iter().any(|v| v.iter().any(|b| *b < 0x20)) {
        return Some("a value with control characters".into());
    }
    None
}

/// A remote's name as `branch.*.remote` may name it: `.` (this repository), or letters,
/// digits, `-`, `_` and `.` not starting with `-` or `.` (never a URL or a path).
pub fn remote_name_allowed(v: &[u8]) -> bool {
    v == b"."
        || (!v.is_empty()
            && v.len() <= 100
            && !matches!(v[0], b'-' | b'.')
            && v.iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')))
}

/// Checks a remote URL a sandbox may set: `https://`, `http://`, `ssh://`, `git://`,
/// `git+ssh://`, `ssh+git://`, or scp-like `[user@]host:path`. Refused: `ext::` and every
/// other `<helper>::` transport (runs `git-remote-<helper>`), `file://` and local paths (a
/// host fetch would run `git upload-pack` on a repository the sandbox may have written),
/// `fd::`, and anything starting with `-` (option injection into `ssh`).
///
/// Errors: the reason, for the refusal note.
pub fn value_allowed(url: &[u8]) -> Result<(), String> {
    value_allowed_with(url, &MergeOptions::default())
}

/// What the caller knows about the host that pure code cannot (breaker, stop 19): this
/// machine's own names (`gethostname()`), refused as ssh hosts like `localhost`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MergeOptions {
    /// This machine's host names (`vm`, `vm.example.com`); compared case-insensitively,
    /// a trailing dot ignored, and a name's first label (`vm` of `vm.example.com`) too.
    pub this_machine: Vec<String>,
}

/// [`value_allowed`] with this machine's names (breaker, stop 19: `$(hostname):/w/e.git`
/// was merged back).
///
/// Errors: the reason, for the refusal note.
pub fn value_allowed_with(url: &[u8], opts: &MergeOptions) -> Result<(), String> {
    let s = std::str::from_utf8(url).map_err(|_| "a URL that is not UTF-8".to_string())?;
    if s.starts_with('-') {
        return Err("a URL starting with '-'".into());
    }
    // `<transport>::<address>` (git's remote-helper syntax: the transport is a word); an
    // scp-like `[::1]:path` is not one.
    if let Some((transport, _)) = s.split_once("::") {
        if !transport.is_empty()
            && transport
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        {
            return Err("a remote-helper URL (<transport>::…) runs a program".into());
        }
    }
    if let Some((scheme, rest)) = s.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if !matches!(
            scheme.as_str(),
            "https" | "http" | "ssh" | "git" | "git+ssh" | "ssh+git"
        ) {
            return Err(format!(
                "a {scheme}:// URL (only https, http, ssh, git are merged)"
            ));
        }
        if rest.starts_with('-') || rest.is_empty() {
            return Err("a URL whose host starts with '-' or is empty".into());
        }
        if scheme.contains("ssh") {
            // git percent-decodes a URL before it splits off the host (connect.c
            // `url_decode`): `ssh://%31%32%37.1/x` is `127.1`.
            let decoded = percent_decode(rest);
            if decoded.starts_with('-') {
                return Err("a URL whose host starts with '-' or is empty".into());
            }
            let authority = decoded.split('/').next().unwrap_or("");
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            let host = match host.strip_prefix('[') {
                Some(h) => h.split(']').next().unwrap_or(""),
                None => host.split(':').next().unwrap_or(""),
            };
            this_machine(host, opts)?;
        }
        return Ok(());
    }
    // scp-like syntax: a colon before any slash (git's own rule), host not empty; a
    // bracketed host (`[::1]:path`, `[host:22]:path`) may hold colons.
    let (host, colon) = match s.strip_prefix('[') {
        Some(r) => match r.find("]:") {
            Some(end) => (&r[..end], Some(end + 2)),
            None => ("", None),
        },
        None => match s.find(':') {
            Some(c) => (&s[..c], Some(c)),
            None => ("", None),
        },
    };
    match (colon, s.find('/')) {
        (Some(c), slash) if c > 0 && !host.is_empty() && slash.is_none_or(|sl| c < sl) => {
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            // `[host:port]` form.
            let host = if s.starts_with('[') && !host.contains("::") {
                host.split(':').next().unwrap_or(host)
            } else {
                host
            };
            this_machine(host, opts)
        }
        _ => Err("a local path (a host fetch would run git on it)".into()),
    }
}

/// `%XX` decoded (invalid escapes kept as written), as git's `url_decode` does.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `host` read as glibc's `inet_aton` (and so `getaddrinfo`, and so ssh) reads a number:
/// one to four parts, each decimal, octal (`0` prefix) or hex (`0x` prefix), the last part
/// filling the remaining bytes (`127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`).
/// Trailing whitespace and what follows are ignored, as inet_aton does. `None`: not an
/// address in that syntax (breaker, stop 19).
pub fn inet_aton(host: &str) -> Option<std::net::Ipv4Addr> {
    let host = host.split(|c: char| c.is_ascii_whitespace()).next()?;
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut vals = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or(p.strip_prefix("0X")) {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (*p, 10)
        };
        // glibc accepts an empty hex part (`0x`) as 0 except in the last part; an empty
        // decimal part is refused.
        let v: u64 = if digits.is_empty() {
            if radix == 16 && i + 1 < parts.len() {
                0
            } else {
                return None;
            }
        } else {
            if !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            u64::from_str_radix(digits, radix).ok()?
        };
        vals.push(v);
    }
    let last = *vals.last()?;
    let head = &vals[..vals.len() - 1];
    if head.iter().any(|v| *v > 0xff) {
        return None;
    }
    let room = 32 - 8 * head.len() as u32;
    if last >= 1u64 << room {
        return None;
    }
    let mut n: u64 = 0;
    for (i, v) in head.iter().enumerate() {
        n |= v << (24 - 8 * i as u32);
    }
    Some(std::net::Ipv4Addr::from((n | last) as u32))
}

/// Refuses an ssh host that is this machine (breaker, stop 19): `git push localhost:/ws/x`
/// runs `git-receive-pack` — and the hooks of a repository the sandbox may have written —
/// as you, wherever ssh to yourself works, as a local path would. Judged as the resolver
/// reads the name, not by spelling: every `inet_aton` form landing in 127/8 or 0/8,
/// IPv6 loopback/unspecified and their IPv4-mapped/compatible forms, `localhost`,
/// `*.localhost`, `*.localdomain`, `localhost6`, `ip6-localhost`/`ip6-loopback`, and the
/// names in `opts.this_machine`. What a lexical check cannot know (an `~/.ssh/config`
/// alias, a DNS name pointing here, a LAN address of this machine) is not caught.
fn this_machine(host: &str, opts: &MergeOptions) -> Result<(), String> {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    let h = h.trim();
    let first_label = |n: &str| n.split('.').next().unwrap_or("").to_string();
    let named = h == "localhost"
        || h.ends_with(".localhost")
        || h.ends_with(".localdomain")
        || h.ends_with(".localdomain6")
        || matches!(
            h,
            "localhost6" | "localdomain" | "ip6-localhost" | "ip6-loopback"
        );
    let v4_here = |ip: std::net::Ipv4Addr| ip.octets()[0] == 127 || ip.octets()[0] == 0;
    let v4 = inet_aton(h).is_some_and(v4_here);
    // A zone (`::1%lo`) does not change the address.
    let v6 = h
        .split('%')
        .next()
        .and_then(|a| a.parse::<std::net::Ipv6Addr>().ok())
        .is_some_and(|ip| {
            ip.is_loopback() || ip.is_unspecified() || ip.to_ipv4().is_some_and(v4_here)
        });
    let own = !h.is_empty()
        && opts.this_machine.iter().any(|n| {
            let n = n.trim_end_matches('.').to_ascii_lowercase();
            !n.is_empty() && (n == h || first_label(&n) == h)
        });
    if named || v4 || v6 || own {
        return Err(format!(
            "an ssh URL to this machine ({host}) runs git on a repository the sandbox may \
             have written, as a local path would"
        ));
    }
    Ok(())
}

/// Applies the sandbox's allowed edits (`original` → `edited`) to `current` (the host file
/// re-read under its lock). Pure.
///
/// Errors: one of the three does not parse (nothing is merged then; the caller says so).
pub fn merge(original: &[u8], edited: &[u8], current: &[u8]) -> Result<MergeOutcome, String> {
    merge_with(original, edited, current, &MergeOptions::default())
}

/// [`merge`] with what the caller knows about this machine (its host names: breaker,
/// stop 19, `$(hostname):/w/e.git` was merged back). Pure.
///
/// Errors: as [`merge`].
pub fn merge_with(
    original: &[u8],
    edited: &[u8],
    current: &[u8],
    opts: &MergeOptions,
) -> Result<MergeOutcome, String> {
    let before = values_of(&parse(original, "starting")?);
    let after = values_of(&parse(edited, "sandbox's")?);
    // A copy that lost every `core.*` key git wrote (or every key) was emptied or replaced
    // wholesale — `: > .git/config`, a tool writing a fresh file — not edited: merging it
    // would delete the host's remotes, branches and identity (nu23 Q9). Nothing is merged.
    let core = |v: &Values| v.keys().filter(|k| k.section == "core").count();
    if (core(&before) > 0 && core(&after) == 0) || (!before.is_empty() && after.is_empty()) {
        return Err(
            "the sandbox's copy lost its [core] section (the file was emptied or \
                    replaced, more likely an accident than an edit); nothing was merged back \
                    and the host's .git/config is unchanged"
                .into(),
        );
    }
    let mut host = parse(current, "host's")?;
    let mut out = MergeOutcome::default();
    let keys: std::collections::BTreeSet<&Key> = before.keys().chain(after.keys()).collect();
    let empty = Vec::new();
    let mut changed = false;
    // A remote (or submodule) whose URL is refused gets none of its keys merged (breaker,
    // stop 19: its `fetch` refspec landed alone, a remote without a URL on the host).
    let refused_remotes: Vec<(&str, &Option<String>)> = keys
        .iter()
        .filter(|k| {
            (k.section == "remote" && k.name != "fetch")
                || (k.section == "submodule" && k.name == "url")
        })
        .filter(|k| {
            let new = after.get(**k).unwrap_or(&empty);
            before.get(**k).unwrap_or(&empty) != new && refusal_with(k, new, opts).is_some()
        })
        .map(|k| (k.section.as_str(), &k.subsection))
        .collect();
    // `branch.*.remote` last, judged against the host file as merged so far: it must name
    // `.` or a remote the host has a URL for. A name git finds no remote for is taken as a
    // path (breaker, stop 21: `branch.master.remote = evil`, a bare repository the sandbox
    // made, and the host's plain `git push` ran its hook).
    let is_branch_remote = |k: &Key| k.section == "branch" && k.name == "remote";
    let (tracking, rest): (Vec<&Key>, Vec<&Key>) =
        keys.into_iter().partition(|k| is_branch_remote(k));
    for key in rest.into_iter().chain(tracking) {
        let old = before.get(key).unwrap_or(&empty);
        let new = after.get(key).unwrap_or(&empty);
        if old == new {
            continue;
        }
        let remote_refused = ((key.section == "remote" && key.name == "fetch")
            || (key.section == "submodule" && key.name == "active"))
            && refused_remotes.contains(&(key.section.as_str(), &key.subsection));
        let unknown_remote = || {
            if !is_branch_remote(key) {
                return None;
            }
            let host_values = values_of(&host);
            new.iter()
                .find(|v| {
                    v.as_slice() != b"."
                        && !host_values.contains_key(&Key {
                            section: "remote".into(),
                            subsection: Some(String::from_utf8_lossy(v).into_owned()),
                            name: "url".into(),
                        })
                })
                .map(|v| {
                    format!(
                        "branch.*.remote = {:?} names no remote with a URL in the host's \
                         config (git would take it as a path to a repository)",
                        String::from_utf8_lossy(v)
                    )
                })
        };
        if let Some(why) = refusal_with(key, new, opts)
            .or_else(|| remote_refused.then(|| format!("its {}'s URL was refused", key.section)))
            .or_else(unknown_remote)
        {
            out.refused.push((key.to_string(), why));
            out.commands.push(host_command(key, new));
            continue;
        }
        set_values(&mut host, key, new)?;
        out.merged.push(key.to_string());
        changed = true;
    }
    if changed {
        out.text = Some(host.to_bstring().to_vec());
    }
    Ok(out)
}

/// The `git config` command(s) that give `key` the `values` in the host file: unset when
/// empty, one `--add` per further value of a multi-valued key. Shell-quoted.
fn host_command(key: &Key, values: &[Vec<u8>]) -> String {
    let q = |s: &str| shlex::try_quote(s).map_or_else(|_| "'?'".into(), |c| c.into_owned());
    let k = q(&key.to_string());
    let mut cmds = vec![format!("git config --unset-all {k}")];
    cmds.extend(
        values
            .iter()
            .map(|v| format!("git config --add {k} {}", q(&String::from_utf8_lossy(v)))),
    );
    if values.len() == 1 {
        cmds = vec![format!(
            "git config {k} {}",
            q(&String::from_utf8_lossy(&values[0]))
        )];
    }
    format!("`{}`", cmds.join(" && "))
}

/// Replaces every value of `key` in `file` with `values` (in order); removes sections the
/// removal left empty.
fn set_values(file: &mut gix_config::File, key: &Key, values: &[Vec<u8>]) -> Result<(), String> {
    let sub = key.subsection.as_deref();
    let ids: Vec<_> = file
        .sections_and_ids()
        .filter(|(s, _)| {
            s.header()
                .name()
                .to_string()
                .eq_ignore_ascii_case(&key.section)
                && s.header()
                    .subsection_name()
                    .map(|b| b.to_string())
                    .as_deref()
                    == sub
        })
        .map(|(_, id)| id)
        .collect();
    for id in &ids {
        if let Some(mut s) = file.section_mut_by_id(*id) {
            let names: Vec<String> = s
                .value_names()
                .filter(|n| n.eq_ignore_ascii_case(&key.name))
                .collect();
            for n in names {
                while s.remove(&n).is_some() {}
            }
        }
    }
    if !values.is_empty() {
        let mut s = file
            .section_mut_or_create_new(&key.section, sub.map(gix_config::AsBStr::as_bstr))
            .map_err(|e| format!("cannot write {key}: {e}"))?;
        for v in values {
            s.push(
                key.name.as_str(),
                Some(gix_config::AsBStr::as_bstr(v.as_slice())),
            )
            .map_err(|e| format!("cannot write {key}: {e}"))?;
        }
    }
    for id in ids {
        let void = file
            .section_mut_by_id(id)
            .is_some_and(|s| s.num_values() == 0);
        if void {
            file.remove_section_by_id(id);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// attack34 E5: a new worktree's `config.worktree` with a code key is refused; the
    /// sparse-checkout keys `git worktree add` copies are kept.
    /// nu23 Q9: an emptied (or wholesale replaced) copy merges nothing: the host keeps its
    /// remote, branch and identity keys. Twin: removing one allowed key is still merged.
    #[test]
    fn an_emptied_copy_merges_nothing() {
        let original = b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/r.git\n[user]\n\tname = U\n";
        for edited in [&b""[..], b"[user]\n\tname = V\n"] {
            let e = merge(original, edited, original).unwrap_err();
            assert!(e.contains("nothing was merged back"), "{e}");
        }
        let edited = b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/r.git\n";
        let o = merge(original, edited, original).unwrap();
        assert_eq!(o.merged, vec!["user.name".to_string()], "{o:?}");
    }

    #[test]
    fn worktree_config_keeps_sparse_keys_only() {
        assert_eq!(
            worktree_config_refusal(
                b"[core]\n\tsparseCheckout = true\n\tsparseCheckoutCone = true\n"
            ),
            None
        );
        assert_eq!(worktree_config_refusal(b""), None);
        let r = worktree_config_refusal(b"[core]\n\tsparseCheckout = true\n\tfsmonitor = ./x.sh\n");
        assert!(r.is_some_and(|r| r.contains("core.fsmonitor")));
        assert!(worktree_config_refusal(b"[alias]\n\tst = !sh\n").is_some());
        assert!(worktree_config_refusal(b"[core \"x\"]\n\tsparseCheckout = true\n").is_some());
        assert!(worktree_config_refusal(b"[core\n").is_some());
    }

    use super::*;

    const HOST: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\
                        [branch \"master\"]\n\tremote = origin\n\tmerge = refs/heads/master\n";

    fn text(o: &MergeOutcome) -> String {
        String::from_utf8(o.text.clone().unwrap()).unwrap()
    }

    fn reparse(s: &str) -> Values {
        values_of(&parse(s.as_bytes(), "test").unwrap())
    }

    fn key(s: &str, sub: Option<&str>, n: &str) -> Key {
        Key {
            section: s.into(),
            subsection: sub.map(Into::into),
            name: n.into(),
        }
    }

    /// nu12 M6: what `git submodule init` writes is merged back — `submodule.*.url` when it
    /// passes the remote URL checks, `active` when a boolean; a refused URL takes its
    /// `active` with it, and `update` (`!cmd` runs at the host's `git submodule update`)
    /// is never merged.
    #[test]
    fn submodule_url_and_active_are_merged_when_safe() {
        let edited = format!(
            "{HOST}[submodule \"libs/node\"]\n\tactive = true\n\turl = https://example.com/n.git\n"
        );
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        assert!(o.refused.is_empty(), "{o:?}");
        let v = reparse(&text(&o));
        assert_eq!(
            v.get(&key("submodule", Some("libs/node"), "url")),
            Some(&vec![b"https://example.com/n.git".to_vec()])
        );
        assert!(v.contains_key(&key("submodule", Some("libs/node"), "active")));
        for (bad, refused) in [
            ("url = ext::sh -c id", vec!["url", "active"]),
            ("url = /var/tmp/evil.git", vec!["url", "active"]),
            ("url = file:///tmp/x", vec!["url", "active"]),
            ("update = !sh -c id", vec!["update"]),
        ] {
            let edited = format!("{HOST}[submodule \"s\"]\n\tactive = true\n\t{bad}\n");
            let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
            for k in refused {
                assert!(
                    o.refused
                        .iter()
                        .any(|(r, _)| r == &format!("submodule.s.{k}")),
                    "{bad}: {k}: {o:?}"
                );
            }
            assert!(
                o.text
                    .as_ref()
                    .is_none_or(|t| !String::from_utf8_lossy(t)
                        .contains(&bad[bad.find('=').unwrap() + 2..])),
                "{bad}: {o:?}"
            );
        }
        let edited = format!("{HOST}[submodule \"s\"]\n\tactive = $(id)\n");
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        assert_eq!(o.refused.len(), 1, "{o:?}");
    }

    /// Breaker finding: `branch.X.remote` set to a local path made the host's next
    /// `git push` run the pre-receive hook of a repository the sandbox wrote. Only a
    /// remote's name (or `.`) is merged; `rebase = interactive` is refused too.
    #[test]
    fn branch_remote_must_be_a_name_and_rebase_not_interactive() {
        for bad in [
            "/var/tmp/evil.git",
            "./evil.git",
            "../x",
            "file:///tmp/x",
            "ext::sh -c id",
            "foo::bar",
            "-oProxyCommand=x",
            "https://example.com/x.git",
            "..",
        ] {
            let edited = format!("{HOST}[branch \"main\"]\n\tremote = {bad}\n");
            let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
            assert!(
                o.refused.iter().any(|(k, _)| k.ends_with(".remote")),
                "{bad}: {o:?}"
            );
            assert!(o.text.is_none() || !text(&o).contains(bad), "{bad}");
        }
        let remotes: String = ["origin", "upstream-2", "my_fork.x"]
            .iter()
            .map(|r| format!("[remote \"{r}\"]\n\turl = https://example.com/{r}.git\n"))
            .collect();
        let host = format!("{HOST}{remotes}");
        for good in ["origin", "upstream-2", "my_fork.x", "."] {
            let edited = format!("{host}[branch \"main\"]\n\tremote = {good}\n");
            let o = merge(host.as_bytes(), edited.as_bytes(), host.as_bytes()).unwrap();
            assert!(o.refused.is_empty(), "{good}: {o:?}");
        }
        // A remote's name the host has no URL for is a path to git (breaker, stop 21:
        // `branch.master.remote = evil`, a bare repository the sandbox made): refused,
        // also when the run added that remote with a refused (local) URL; a remote the
        // run added with an accepted URL may be tracked (twin).
        for edit in [
            "[branch \"master\"]\n\tremote = evil\n".to_string(),
            "[remote \"evil\"]\n\turl = ./evil\n[branch \"main\"]\n\tremote = evil\n".into(),
        ] {
            let edited = format!("{host}{edit}");
            let o = merge(host.as_bytes(), edited.as_bytes(), host.as_bytes()).unwrap();
            assert!(
                o.refused
                    .iter()
                    .any(|(k, why)| k.ends_with(".remote") && why.contains("no remote")),
                "{edit}: {o:?}"
            );
        }
        let edited = format!(
            "{host}[remote \"fork\"]\n\turl = https://example.com/f.git\n\
             [branch \"main\"]\n\tremote = fork\n"
        );
        let o = merge(host.as_bytes(), edited.as_bytes(), host.as_bytes()).unwrap();
        assert!(o.refused.is_empty(), "{o:?}");
        let edited = format!("{HOST}[branch \"main\"]\n\trebase = interactive\n");
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        assert!(!o.refused.is_empty(), "{o:?}");
    }

    #[test]
    fn branch_rename_lands_as_remove_and_add() {
        let origin = "[remote \"origin\"]\n\turl = https://example.com/r.git\n";
        let host = format!("{HOST}{origin}");
        let edited = format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\
             [branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/master\n{origin}"
        );
        let o = merge(host.as_bytes(), edited.as_bytes(), host.as_bytes()).unwrap();
        assert!(o.refused.is_empty(), "{o:?}");
        let v = reparse(&text(&o));
        assert!(!v.contains_key(&key("branch", Some("master"), "remote")));
        assert_eq!(
            v[&key("branch", Some("main"), "remote")],
            vec![b"origin".to_vec()]
        );
        assert!(!text(&o).contains("master\"]"), "{}", text(&o));
    }

    #[test]
    fn user_email_and_remote_add_merge() {
        let edited = format!(
            "{HOST}[user]\n\temail = a@example.com\n[remote \"origin\"]\n\t\
             url = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
        );
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        assert!(o.refused.is_empty(), "{o:?}");
        let v = reparse(&text(&o));
        assert_eq!(
            v[&key("user", None, "email")],
            vec![b"a@example.com".to_vec()]
        );
        assert_eq!(
            v[&key("remote", Some("origin"), "url")],
            vec![b"https://example.com/r.git".to_vec()]
        );
    }

    #[test]
    fn code_running_keys_are_refused_and_named() {
        let edited = format!(
            "{HOST}[core]\n\tfsmonitor = ./x.sh\n\thooksPath = .githooks\n\tsshCommand = evil\n\
             [alias]\n\tx = !sh -c id\n[filter \"lfs\"]\n\tclean = evil\n\
             [include]\n\tpath = ../x\n[remote \"o\"]\n\tuploadpack = evil\n\
             [credential]\n\thelper = !evil\n[url \"https://evil/\"]\n\tinsteadOf = https://good/\n\
             [user]\n\temail = ok@example.com\n"
        );
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        let refused: Vec<&str> = o.refused.iter().map(|(k, _)| k.as_str()).collect();
        for k in [
            "core.fsmonitor",
            "core.hookspath",
            "core.sshcommand",
            "alias.x",
            "filter.lfs.clean",
            "include.path",
            "remote.o.uploadpack",
            "credential.helper",
            "url.https://evil/.insteadof",
        ] {
            assert!(refused.contains(&k), "{k} not refused: {refused:?}");
        }
        let t = text(&o);
        assert!(t.contains("ok@example.com"));
        for bad in ["fsmonitor", "hooksPath", "evil", "alias", "include"] {
            assert!(!t.contains(bad), "{bad} landed: {t}");
        }
        let note = o
            .refusal_note(std::path::Path::new("/w/.git/config"))
            .unwrap();
        assert!(
            note.contains("core.fsmonitor") && note.contains("alias.x"),
            "{note}"
        );
        // Each refused key comes with the command that makes the change on the host.
        assert_eq!(o.commands.len(), o.refused.len());
        assert!(note.contains("run outside cordon: `git config "), "{note}");
    }

    #[test]
    fn refused_keys_come_with_the_host_command() {
        let edited = format!("{HOST}[core]\n\tfsmonitor = echo hi\n");
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        assert_eq!(o.commands, ["`git config core.fsmonitor 'echo hi'`"]);
        let host = format!("{HOST}[core]\n\tsshCommand = ssh -i key\n");
        let o = merge(host.as_bytes(), HOST.as_bytes(), host.as_bytes()).unwrap();
        assert_eq!(o.commands, ["`git config --unset-all core.sshcommand`"]);
    }

    #[test]
    fn only_refused_edits_write_nothing() {
        let edited = format!("{HOST}[core]\n\thooksPath = .githooks\n");
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        assert_eq!(o.text, None);
        assert_eq!(o.refused.len(), 1);
    }

    #[test]
    fn removing_a_code_key_is_refused_too() {
        let host = format!("{HOST}[core]\n\tsshCommand = ssh -i key\n");
        let o = merge(host.as_bytes(), HOST.as_bytes(), host.as_bytes()).unwrap();
        assert_eq!(o.text, None);
        assert_eq!(o.refused[0].0, "core.sshcommand");
    }

    #[test]
    fn remote_urls_are_checked() {
        for ok in [
            "https://github.com/a/b.git",
            "ssh://git@host/x",
            "git@github.com:a/b.git",
            "git://host/x",
        ] {
            assert!(value_allowed(ok.as_bytes()).is_ok(), "{ok}");
        }
        for bad in [
            "ext::sh -c id",
            "fd::3",
            "file:///home/u/repo",
            "/home/u/repo",
            "../other",
            "-oProxyCommand=id",
            "ssh://-oProxyCommand=id/x",
            "foo::bar",
        ] {
            assert!(value_allowed(bad.as_bytes()).is_err(), "{bad}");
        }
        // Breaker (stop 19): ssh to this machine runs the planted repository's hooks as
        // a local path would; an scp-like IPv6 host is not a remote helper.
        for bad in [
            "localhost:/w/evil.git",
            "u@localhost:/w/evil.git",
            "ssh://127.0.0.1/w/evil.git",
            "ssh://git@127.0.0.2:22/w/evil.git",
            "ssh://[::1]/w/evil.git",
            "[::1]:/w/evil.git",
            "git+ssh://LOCALHOST./w/e.git",
            "x.localhost:/w/e.git",
            "[localhost:22]:/w/e.git",
            "0.0.0.0:/w/e.git",
        ] {
            let why = value_allowed(bad.as_bytes()).expect_err(bad);
            assert!(why.contains("this machine"), "{bad}: {why}");
        }
        for ok in [
            "[2001:db8::1]:a/b.git",
            "ssh://[2001:db8::1]/x",
            "[gh.com:22]:a/b",
        ] {
            assert!(value_allowed(ok.as_bytes()).is_ok(), "{ok}");
        }
        let edited = format!("{HOST}[remote \"o\"]\n\turl = ext::sh -c id\n");
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        assert_eq!(o.text, None);
        assert!(o.refused[0].1.contains("remote-helper"), "{o:?}");
        // Attack pass 246 #1: a forced refspec onto a local branch or tag is not merged
        // back (every later fetch would move it); twin: one into refs/remotes/ is.
        let edited = format!(
            "{HOST}[remote \"o\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/master:refs/heads/feat\n"
        );
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        assert!(
            o.refused
                .iter()
                .any(|(k, why)| k == "remote.o.fetch" && why.contains("force-moves")),
            "{o:?}"
        );
        let edited = format!(
            "{HOST}[remote \"o\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/o/*\n"
        );
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        assert!(text(&o).contains("refs/remotes/o/*"), "{o:?}");
        // The refused remote's fetch refspec is not merged alone; another remote's is.
        let edited = format!(
            "{HOST}[remote \"lh\"]\n\turl = [::1]:/w/x.git\n\tfetch = +refs/heads/*:refs/remotes/lh/*\n\
             [remote \"gh\"]\n\turl = https://github.com/a/b\n\tfetch = +refs/heads/*:refs/remotes/gh/*\n"
        );
        let o = merge(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes()).unwrap();
        let t = text(&o);
        assert!(!t.contains("refs/remotes/lh"), "{t}");
        assert!(t.contains("refs/remotes/gh"), "{t}");
        assert!(
            o.refused.iter().any(|(k, _)| k == "remote.lh.fetch"),
            "{o:?}"
        );
    }

    #[test]
    fn inet_aton_reads_every_spelling() {
        let lo = Some(std::net::Ipv4Addr::new(127, 0, 0, 1));
        for s in [
            "127.0.0.1",
            "127.1",
            "127.0.1",
            "2130706433",
            "0x7f000001",
            "0X7F000001",
            "0177.0.0.1",
            "0x7f.1",
            "0x7f.0x0.0.01",
            "127.1 trailing",
        ] {
            assert_eq!(inet_aton(s), lo, "{s}");
        }
        assert_eq!(inet_aton("0"), Some(std::net::Ipv4Addr::UNSPECIFIED));
        assert_eq!(
            inet_aton("10.0.0.1"),
            Some(std::net::Ipv4Addr::new(10, 0, 0, 1))
        );
        for s in [
            "",
            "256.1",
            "1.2.3.4.5",
            "08.1",
            "0x",
            "1.0x",
            "127.",
            "github.com",
            "1.2.3.256",
            "1.65536.1",
            "4294967296",
            "a1",
        ] {
            assert_eq!(inet_aton(s), None, "{s}");
        }
    }

    #[test]
    fn ssh_to_this_machine_is_refused_in_every_spelling() {
        // Breaker 5 (MEDIUM-2): these resolved to 127.0.0.1 and were merged back.
        let opts = MergeOptions {
            this_machine: vec!["vm.example.org".into()],
        };
        for bad in [
            "127.1:/w/e.git",
            "2130706433:/w/e.git",
            "0x7f000001:/w/e.git",
            "ssh://0177.0.0.1/w/e.git",
            "ssh://0x7f.1/w/e.git",
            "ssh://%31%32%37.1/w/e.git",
            "localhost.localdomain:/w/e.git",
            "x.localdomain:/w/e.git",
            "ip6-localhost:/w/e.git",
            "ip6-loopback:/w/e.git",
            "localhost6:/w/e.git",
            "[::ffff:127.0.0.1]:/w/e.git",
            "[::127.0.0.1]:/w/e.git",
            "ssh://[::ffff:7f00:1]/w/e.git",
            "ssh://[::1%25lo]/w/e.git",
            "[::]:/w/e.git",
            "0:/w/e.git",
            "vm:/w/e.git",
            "git@VM.example.org.:/w/e.git",
            "ssh://vm.example.org:22/w/e.git",
        ] {
            let why = value_allowed_with(bad.as_bytes(), &opts).expect_err(bad);
            assert!(why.contains("this machine"), "{bad}: {why}");
        }
        for ok in [
            "github.com:a/b.git",
            "git@github.com:a/b.git",
            "[2001:db8::1]:a/b.git",
            "ssh://[2001:db8::1]/x",
            "10.0.0.1:/srv/x.git",
            "ssh://10.0.0.1/x",
            "ssh://vm2.example.org/x",
            "example.org:/x",
        ] {
            assert!(value_allowed_with(ok.as_bytes(), &opts).is_ok(), "{ok}");
        }
        // Without the names, this machine's host name is not known (pure code).
        assert!(value_allowed(b"vm:/w/e.git").is_ok());
        // Through merge: the url and the pushurl are both refused.
        let edited = format!(
            "{HOST}[remote \"p\"]\n\turl = https://github.com/a/b\n\tpushurl = 127.1:/w/e.git\n\
             [remote \"h\"]\n\turl = vm:/w/e.git\n"
        );
        let o = merge_with(HOST.as_bytes(), edited.as_bytes(), HOST.as_bytes(), &opts).unwrap();
        let refused: Vec<&str> = o.refused.iter().map(|(k, _)| k.as_str()).collect();
        assert!(refused.contains(&"remote.p.pushurl"), "{o:?}");
        assert!(refused.contains(&"remote.h.url"), "{o:?}");
        assert!(!o.merged.iter().any(|k| k == "remote.h.url"), "{o:?}");
    }

    #[test]
    fn a_concurrent_edit_of_the_host_file_survives() {
        let current = format!("{HOST}[user]\n\tname = Other Run\n");
        let edited = format!("{HOST}[user]\n\temail = me@example.com\n");
        let o = merge(HOST.as_bytes(), edited.as_bytes(), current.as_bytes()).unwrap();
        let v = reparse(&text(&o));
        assert_eq!(v[&key("user", None, "name")], vec![b"Other Run".to_vec()]);
        assert_eq!(
            v[&key("user", None, "email")],
            vec![b"me@example.com".to_vec()]
        );
        // Keys the run did not touch keep the host's value even if the copy differs.
        let current = HOST.replace("bare = false", "bare = false\n\tlogallrefupdates = true");
        let o = merge(HOST.as_bytes(), edited.as_bytes(), current.as_bytes()).unwrap();
        assert!(text(&o).contains("logallrefupdates"));
    }

    #[test]
    fn section_and_key_names_are_case_insensitive() {
        let edited = format!("{HOST}[User]\n\tEMAIL = x@example.com\n");
        let current = format!("{HOST}[user]\n\temail = old@example.com\n");
        let o = merge(
            current.as_bytes(),
            edited.replace("[User]", "[user]").as_bytes(),
            current.as_bytes(),
        )
        .unwrap();
        assert_eq!(
            reparse(&text(&o))[&key("user", None, "email")],
            vec![b"x@example.com".to_vec()]
        );
    }

    #[test]
    fn an_unparsable_file_merges_nothing() {
        assert!(merge(HOST.as_bytes(), b"[unterminated", HOST.as_bytes()).is_err());
    }
}
