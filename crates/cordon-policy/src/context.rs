//! `environment_context` (R-M1): the XML fragment that tells the model its own limits.
//!
//! It is rendered from the **same** [`ResolvedProfile`] object the transform enforces —
//! its compiled [`ResolvedFilesystem`], never the intent copy in
//! [`ResolvedProfile::profile`]'s `filesystem` field — plus the status triple (R-S5) and the
//! backend actually selected (R-S3). It reduces futile attempts; it is never enforcement.
//!
//! Shape (stable: every list is sorted by path; attributes in a fixed order):
//!
//! ```xml
//! <environment_context>
//!   <cwd>/home/u/proj</cwd>
//!   <approval_policy>on-request</approval_policy>
//!   <sandbox type="managed" profile="workspace-write" backend="linux-helper">
//!     <filesystem mode="restricted" default="read" enforced_by="cordon">
//!       <writable_root path="/home/u/proj">
//!         <protected path="/home/u/proj/.git/hooks" reason="git hooks run code"/>
//!       </writable_root>
//!       <readable path="/usr"/>
//!       <deny_read_group name="credential-stores" count="45" ask="cordon explain credential-stores"/>
//!       <deny_read path="/home/u/proj/secrets"/>
//!     </filesystem>
//!     <network mode="restricted" enforced_by="cordon"/>
//!   </sandbox>
//!   <sandbox_status requested="true" available="true" enabled="true"/>
//! </environment_context>
//! ```
//!
//! - `type` is the profile kind (`managed|disabled|external`). A `disabled` profile renders
//!   `<filesystem mode="unrestricted"/>`, whatever the host can do: the text describes the
//!   intent that is compiled; whether a sandbox is really applied is the status triple's
//!   job, so the story never changes with the host.
//! - `enforced_by` on `<filesystem>` is `cordon` for `managed`, `caller` for `external`
//!   profiles; on `<network>` it is `cordon` (managed), `caller` (external: R-S1 leaves a
//!   restricted network to the caller) or `none` (disabled).
//! - `<network>` lists what the backends apply beside the mode: with `mode="managed"` the
//!   proxy's `<allowed_host>`, `<denied_host>` and `<allowed_port>` rules (and the hosts
//!   remembered at a prompt, `<remembered_host>`); in every mode the
//!   reachable host `<unix_socket>`s and forwarded `<local_port>`s (normalised addresses).
//!   `loopback="per-command"` when each command runs in its own network namespace
//!   (`linux-helper` with the network not fully on): a server one command starts is reachable
//!   only from within that command.
//! - Writable roots carry their protected sub-paths (R-P3) and read-only sub-paths; `spelled`
//!   is added when a path was reached through a symlink (R-P2, both spellings kept). On the
//!   `linux-helper` backend a repository's protected `.git/config` carries `edits` (it is a
//!   writable private copy whose branch/remote/user keys are merged back:
//!   [`crate::gitconfig::brokered_configs`], the list the mount plan takes).
//! - [`Detail::Compact`] (the default) folds the built-in credential stores and system
//!   credential files ([`CREDENTIAL_GROUP`]) into one `<deny_read_group>` with their count and
//!   the `cordon explain` question that lists them; the user's own deny entries are listed.
//!   [`Detail::Full`] (`cordon context --full`) lists every `<deny_read>`. Both are rendered
//!   by the same code from the same object.
//! - `<sandbox_status>` carries `requested/available/enabled`; when the three values are
//!   not all equal each gets a child element with its reason.
//! - Everything is XML-escaped (`<&"'>` in paths included); characters XML 1.0 cannot
//!   carry at all (control characters) are written as `\u{..}`.

use crate::profile::{is_builtin_credential_spelling, Access, ProfileKind};
use crate::resolve::{EntryOrigin, ResolvedEntry, ResolvedFilesystem, ResolvedProfile};
use crate::selection::{Backend, Fact, SandboxStatus};
use quick_xml::events::BytesText;
use quick_xml::Writer;
use std::borrow::Cow;
use std::io;
use std::path::Path;

/// The approval mode shown until approvals land (R-A5 names the modes: `untrusted`,
/// `on-request`, `on-failure`, `never`, `bypass`).
pub const DEFAULT_APPROVAL_MODE: &str = "on-request";

/// Replaces characters XML 1.0 cannot carry even escaped (C0 controls other than tab,
/// newline, carriage return; U+FFFE, U+FFFF) by a visible `\u{..}` spelling.
fn xml_safe(s: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}'
    };
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| {
                if bad(c) {
                    format!("\\u{{{:x}}}", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

fn path_text(p: &Path) -> String {
    xml_safe(&p.to_string_lossy()).into_owned()
}

type W = Writer<Vec<u8>>;

/// Writes `<name path=".." [spelled=".."] [reason=".."]/>` for an entry.
fn entry_element(w: &mut W, name: &str, e: &ResolvedEntry) -> io::Result<()> {
    entry_element_with(w, name, e, None)
}

/// [`entry_element`] with an `edits` attribute (how the command's edits are taken).
fn entry_element_with(
    w: &mut W,
    name: &str,
    e: &ResolvedEntry,
    edits: Option<&str>,
) -> io::Result<()> {
    let path = path_text(&e.path);
    let spelled = (e.spelled != e.path).then(|| path_text(&e.spelled));
    let reason = match &e.origin {
        EntryOrigin::Protected { reason } => Some(xml_safe(reason).into_owned()),
        _ => None,
    };
    let mut el = w
        .create_element(name)
        .with_attribute(("path", path.as_str()));
    if let Some(s) = &spelled {
        el = el.with_attribute(("spelled", s.as_str()));
    }
    if let Some(r) = &reason {
        el = el.with_attribute(("reason", r.as_str()));
    }
    if let Some(x) = edits {
        el = el.with_attribute(("edits", x));
    }
    el.write_empty()?;
    Ok(())
}

fn by_path(mut v: Vec<&ResolvedEntry>) -> Vec<&ResolvedEntry> {
    v.sort_by(|a, b| a.path.cmp(&b.path).then(a.spelled.cmp(&b.spelled)));
    v
}

/// The name of the group of built-in credential deny entries (home credential stores and
/// system credential files), as shown in the compact context and accepted by
/// `cordon explain`.
pub const CREDENTIAL_GROUP: &str = "credential-stores";

/// How much of the deny list [`environment_context_with`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// Built-in credential entries as one `<deny_read_group>` (the model pays for every
    /// line in every turn); user entries listed.
    #[default]
    Compact,
    /// Every deny entry listed.
    Full,
}

/// Whether a resolved entry belongs to [`CREDENTIAL_GROUP`]: a deny entry the profile
/// spelled as a built-in credential store or system credential file.
pub fn in_credential_group(e: &ResolvedEntry) -> bool {
    e.access == Access::Deny
        && matches!(&e.origin, EntryOrigin::Profile { spelling, .. } if is_builtin_credential_spelling(spelling))
}

/// The `private` attribute of the `/tmp` writable root where the namespace backend mounts
/// a private tmpfs there (the rule `cordon explain` uses: the Linux helper, enabled, and a
/// profile whose `/tmp` is not denied — [`crate::TopView::private_tmp`]); new-user pass
/// nu12 M9: the context listed `/tmp` as writable without saying it is not the host's.
pub const PRIVATE_TMP_NOTE: &str =
    "a fresh tmpfs for each command, discarded after it: the host's /tmp is not visible";

/// What the `hard_links` attribute of `<filesystem>` says (namespace backend): init
/// refuses writing a file with several names in place (attack pass 47, N1).
pub const HARD_LINKS_NOTE: &str =
    "a file with several names (hard links) is not written in place, nor its mode, owner, \
     times or attributes changed: write a new file and rename it over";

/// How the note begins that says the hard-link check is off for this host's runs (the
/// denial-records supervisor switched off): the `hard_links` attribute is then left out,
/// and the note is said instead (attack pass 49, N3: the context claimed a refusal no
/// longer made).
pub const HARD_LINKS_UNCHECKED: &str = "nothing checks hard links";

fn write_filesystem(
    w: &mut W,
    resolved: &ResolvedProfile,
    detail: Detail,
    backend: Backend,
    private_tmp: bool,
) -> io::Result<()> {
    let enforced_by = match resolved.profile.kind {
        ProfileKind::External => "caller",
        _ => "cordon",
    };
    let fs = &resolved.filesystem;
    let ResolvedFilesystem::Restricted { default, .. } = fs else {
        w.create_element("filesystem")
            .with_attribute(("mode", "unrestricted"))
            .write_empty()?;
        return Ok(());
    };
    let default = default.to_string();
    let roots = by_path(fs.writable_roots());
    let layered = fs.layered();
    // Read-only entries (protected or explicit) nest under the deepest writable root
    // containing them; the rest are listed on their own.
    let root_of = |e: &ResolvedEntry| {
        roots
            .iter()
            .filter(|r| e.path.starts_with(&r.path) && e.path != r.path)
            .max_by_key(|r| r.path.components().count())
            .map(|r| r.path.clone())
    };
    let read_only: Vec<&ResolvedEntry> = by_path(
        layered
            .iter()
            .copied()
            .filter(|e| e.access == Access::Read)
            .collect(),
    );
    let denied = by_path(fs.denied());
    // Repository configs the namespace backend gives as a private copy (issue 11 §3).
    let brokered = if backend == Backend::LinuxHelper {
        crate::gitconfig::brokered_configs(resolved)
    } else {
        Vec::new()
    };
    let mut el = w
        .create_element("filesystem")
        .with_attribute(("mode", "restricted"))
        .with_attribute(("default", default.as_str()))
        .with_attribute(("enforced_by", enforced_by));
    // The namespace sandbox's init refuses writing a file with several hard links in place
    // (new-user pass nu28, F3: the model was not told).
    let unchecked = resolved
        .notes
        .iter()
        .any(|n| n.contains(HARD_LINKS_UNCHECKED));
    if private_tmp && !unchecked {
        el = el.with_attribute(("hard_links", HARD_LINKS_NOTE));
    }
    el.write_inner_content(|w| {
        for root in &roots {
            let inner: Vec<&&ResolvedEntry> = read_only
                .iter()
                .filter(|e| root_of(e).as_deref() == Some(root.path.as_path()))
                .collect();
            if private_tmp && root.path == Path::new("/tmp") && inner.is_empty() {
                let path = path_text(&root.path);
                w.create_element("writable_root")
                    .with_attribute(("path", path.as_str()))
                    .with_attribute(("private", PRIVATE_TMP_NOTE))
                    .write_empty()?;
                continue;
            }
            if inner.is_empty() {
                entry_element(w, "writable_root", root)?;
                continue;
            }
            let path = path_text(&root.path);
            let spelled = (root.spelled != root.path).then(|| path_text(&root.spelled));
            let mut el = w
                .create_element("writable_root")
                .with_attribute(("path", path.as_str()));
            if let Some(s) = &spelled {
                el = el.with_attribute(("spelled", s.as_str()));
            }
            el.write_inner_content(|w| {
                for e in &inner {
                    let name = match e.origin {
                        EntryOrigin::Protected { .. } => "protected",
                        _ => "read_only",
                    };
                    let edits = brokered
                        .contains(&e.path)
                        .then_some(crate::gitconfig::BROKERED_COPY_SHORT);
                    entry_element_with(w, name, e, edits)?;
                }
                Ok(())
            })?;
        }
        for e in read_only.iter().filter(|e| root_of(e).is_none()) {
            let name = match e.origin {
                EntryOrigin::Protected { .. } => "protected",
                _ => "readable",
            };
            entry_element(w, name, e)?;
        }
        let grouped = denied
            .iter()
            .filter(|e| detail == Detail::Compact && in_credential_group(e))
            .count();
        if grouped > 0 {
            let count = grouped.to_string();
            let ask = format!("cordon explain {CREDENTIAL_GROUP}");
            w.create_element("deny_read_group")
                .with_attribute(("name", CREDENTIAL_GROUP))
                .with_attribute(("count", count.as_str()))
                .with_attribute(("ask", ask.as_str()))
                .write_empty()?;
        }
        for e in &denied {
            if detail == Detail::Compact && in_credential_group(e) {
                continue;
            }
            entry_element(w, "deny_read", e)?;
        }
        for n in &resolved.notes {
            w.create_element("note")
                .write_text_content(BytesText::new(&xml_safe(n)))?;
        }
        Ok(())
    })?;
    Ok(())
}

fn write_status(w: &mut W, status: &SandboxStatus) -> io::Result<()> {
    let legs: [(&str, &Fact); 3] = [
        ("requested", &status.sandbox_requested),
        ("available", &status.sandbox_available),
        ("enabled", &status.sandbox_enabled),
    ];
    let el = legs
        .iter()
        .fold(w.create_element("sandbox_status"), |el, (k, f)| {
            el.with_attribute((*k, if f.value { "true" } else { "false" }))
        });
    let all_equal = legs.iter().all(|(_, f)| f.value == legs[0].1.value);
    if all_equal {
        el.write_empty()?;
        return Ok(());
    }
    el.write_inner_content(|w| {
        for (k, f) in &legs {
            let reason = xml_safe(&f.reason).into_owned();
            w.create_element(*k)
                .with_attribute(("value", if f.value { "true" } else { "false" }))
                .with_attribute(("reason", reason.as_str()))
                .write_empty()?;
        }
        Ok(())
    })?;
    Ok(())
}

/// R-M1: renders the `environment_context` XML fragment (shape in the
/// [module docs](self)) from `resolved` — the very object the transform compiles — plus
/// the status triple (R-S5), the selected `backend` (R-S3) and the approval mode
/// (`approval_mode`, e.g. [`DEFAULT_APPROVAL_MODE`]; free text until approvals land).
///
/// Pure and deterministic: the same inputs give byte-identical output (lists sorted by
/// path). The filesystem part is read only from [`ResolvedProfile::filesystem`]; the
/// kind, profile name and network mode from [`ResolvedProfile::profile`]. Never fails.
pub fn environment_context(
    resolved: &ResolvedProfile,
    status: &SandboxStatus,
    backend: Backend,
    approval_mode: &str,
) -> String {
    environment_context_with(resolved, status, backend, approval_mode, Detail::Compact)
}

/// [`environment_context`] with the chosen [`Detail`] (`cordon context --full` passes
/// [`Detail::Full`]).
pub fn environment_context_with(
    resolved: &ResolvedProfile,
    status: &SandboxStatus,
    backend: Backend,
    approval_mode: &str,
    detail: Detail,
) -> String {
    environment_context_remembering(resolved, status, backend, approval_mode, detail, &[])
}

/// [`environment_context_with`] plus the hosts remembered at an approval prompt
/// (`remembered`, `host:port` as in `network-hosts.toml`): with a managed network each is
/// a `<remembered_host>`, since the proxy lets it through without asking (new-user pass
/// nu20, G3: the model was told only the profile's allow list).
pub fn environment_context_remembering(
    resolved: &ResolvedProfile,
    status: &SandboxStatus,
    backend: Backend,
    approval_mode: &str,
    detail: Detail,
    remembered: &[String],
) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    let cwd = path_text(&resolved.cwd);
    let approval = xml_safe(approval_mode).into_owned();
    let kind = resolved.profile.kind.to_string();
    let name = xml_safe(&resolved.profile.name).into_owned();
    let backend_kind = backend;
    let backend = backend.to_string();
    let network = resolved.profile.network.to_string();
    let result: io::Result<()> = (|| {
        w.create_element("environment_context")
            .write_inner_content(|w| {
                w.create_element("cwd")
                    .write_text_content(BytesText::new(&cwd))?;
                w.create_element("approval_policy")
                    .write_text_content(BytesText::new(&approval))?;
                w.create_element("sandbox")
                    .with_attribute(("type", kind.as_str()))
                    .with_attribute(("profile", name.as_str()))
                    .with_attribute(("backend", backend.as_str()))
                    .write_inner_content(|w| {
                        let private_tmp = backend_kind == Backend::LinuxHelper
                            && status.sandbox_enabled.value
                            && resolved.filesystem.top_view().private_tmp;
                        write_filesystem(w, resolved, detail, backend_kind, private_tmp)?;
                        // Who is meant to enforce the network, from the profile kind alone
                        // (whether it is applied on this host is the status triple's job, so
                        // the story does not change with the host).
                        let net_by = match resolved.profile.kind {
                            ProfileKind::Managed => "cordon",
                            ProfileKind::External => "caller",
                            ProfileKind::Disabled => "none",
                        };
                        let mut net = w
                            .create_element("network")
                            .with_attribute(("mode", network.as_str()))
                            .with_attribute(("enforced_by", net_by));
                        // Each command's own network namespace: a server one command
                        // starts is not reachable from the next (new-user pass nu24, F1).
                        if backend_kind == Backend::LinuxHelper
                            && status.sandbox_enabled.value
                            && network != "enabled"
                        {
                            net = net.with_attribute(("loopback", "per-command"));
                        }
                        let mut items = network_items(resolved, network == "managed");
                        if network == "managed" {
                            items.extend(
                                remembered
                                    .iter()
                                    .map(|h| ("remembered_host", xml_safe(h).into_owned())),
                            );
                        }
                        if items.is_empty() {
                            net.write_empty()?;
                        } else {
                            net.write_inner_content(|w| {
                                for (tag, value) in &items {
                                    w.create_element(*tag)
                                        .write_text_content(BytesText::new(value))?;
                                }
                                Ok(())
                            })?;
                        }
                        Ok(())
                    })?;
                write_status(w, status)?;
                Ok(())
            })?;
        Ok(())
    })();
    result.expect("writing XML into a Vec<u8> cannot fail");
    String::from_utf8(w.into_inner()).expect("quick-xml writes the UTF-8 it is given")
}

/// The children of `<network>`, from the same resolved object the backends apply (issue 10):
/// with a managed network the proxy's `network.allow` (`<allowed_host>`), `network.deny`
/// (`<denied_host>`) and `network.ports` (`<allowed_port>`); in every mode the host unix
/// sockets the guard lets through (`<unix_socket>`, symlinks resolved) and the forwarded
/// host loopback ports (`<local_port>`, normalised like the relay binds them, e.g.
/// `[0::1]:6379` → `[::1]:6379`).
fn network_items(resolved: &ResolvedProfile, managed: bool) -> Vec<(&'static str, String)> {
    let rules = &resolved.profile.network_rules;
    let mut v: Vec<(&'static str, String)> = Vec::new();
    if managed {
        v.extend(rules.allow.iter().map(|h| ("allowed_host", h.clone())));
        v.extend(rules.deny.iter().map(|h| ("denied_host", h.clone())));
        v.extend(rules.ports.iter().map(|p| ("allowed_port", p.to_string())));
    }
    v.extend(
        resolved
            .unix_sockets
            .iter()
            .map(|p| ("unix_socket", p.display().to_string())),
    );
    match rules.local_addrs() {
        Ok(addrs) => v.extend(addrs.iter().map(|a| ("local_port", a.to_string()))),
        // Resolution already refused such a profile; say it as written rather than hide it.
        Err(_) => v.extend(rules.local.iter().map(|l| ("local_port", l.clone()))),
    }
    v
}
