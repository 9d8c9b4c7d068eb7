//! R-M1: `environment_context` is rendered from the same resolved object that is enforced,
//! escaped, stable, and tells the same story whatever the host can do.
mod common;
use cordon_policy::*;
use std::path::{Path, PathBuf};

fn fs() -> MemFs {
    MemFs::new()
        .dir("/home/u/proj/.git/hooks")
        .file("/home/u/proj/.git/config", "")
        .dir("/home/u/proj/src")
        .dir("/home/u/.ssh")
        .dir("/data/real")
        .symlink("/home/u/proj/data", "/data/real")
        .symlink("/home/u/data-link", "/data/real")
        .dir("/tmp")
        .dir("/usr")
}

fn ctx() -> ResolveContext {
    common::ctx_at("/home/u/proj", "/home/u")
}

fn builtin(name: &str) -> PermissionProfile {
    select_profile(None, Some(name)).unwrap()
}

/// The Linux, `auto`-preference selection for `p`, with a working sandbox.
fn linux_auto(p: &PermissionProfile) -> (Selection, SandboxStatus) {
    let sel = select_initial(
        p,
        SandboxPreference::Auto,
        false,
        Os::Linux,
        PlatformOptions::default(),
    );
    let status = SandboxStatus::new(&sel, Ok(()), true);
    (sel, status)
}

/// Resolves, selects and renders, the way the transform will.
fn render(p: &PermissionProfile, pref: SandboxPreference, os: Os) -> (ResolvedProfile, String) {
    let fs = fs();
    let r = resolve(p, &ctx(), &fs).unwrap();
    let sel = select_initial(p, pref, false, os, PlatformOptions::default());
    let status = SandboxStatus::new(&sel, Ok(()), true);
    let xml = environment_context(&r, &status, sel.backend, DEFAULT_APPROVAL_MODE);
    (r, xml)
}

#[test]
fn workspace_write_on_linux() {
    let (_, xml) = render(
        &builtin("workspace-write"),
        SandboxPreference::Auto,
        Os::Linux,
    );
    insta::assert_snapshot!("workspace_write_linux", xml);
    // nu12 M9: the namespace backend's /tmp is said to be private (not the host's).
    assert!(xml.contains(r#"<writable_root path="/tmp" private="a fresh tmpfs"#));
}

#[test]
fn read_only_on_macos() {
    let (_, xml) = render(&builtin("read-only"), SandboxPreference::Auto, Os::Macos);
    insta::assert_snapshot!("read_only_macos", xml);
}

#[test]
fn danger_full_access() {
    let (_, xml) = render(
        &builtin("danger-full-access"),
        SandboxPreference::Auto,
        Os::Linux,
    );
    insta::assert_snapshot!("danger_full_access_linux", xml);
    assert!(xml.contains(r#"<sandbox type="disabled""#));
    assert!(xml.contains(r#"<filesystem mode="unrestricted"/>"#));
}

#[test]
fn external_profile() {
    let mut p = builtin("workspace-write");
    p.name = "ci-container".into();
    p.kind = ProfileKind::External;
    let (_, xml) = render(&p, SandboxPreference::Auto, Os::Linux);
    insta::assert_snapshot!("external_linux", xml);
    assert!(xml.contains(r#"enforced_by="caller""#));
    // Twin of nu12 M9: no backend of cordon's, so /tmp is the host's (not "private").
    assert!(!xml.contains("private="));
}

#[test]
fn symlinked_writable_root_keeps_both_spellings() {
    let mut p = builtin("workspace-write");
    p.push_entries([FsEntry::new("/home/u/data-link", Access::Write)]);
    let (_, xml) = render(&p, SandboxPreference::Auto, Os::Linux);
    assert!(
        xml.contains(r#"<writable_root path="/data/real" spelled="/home/u/data-link""#),
        "{xml}"
    );
}

/// A grant spelled inside the workspace that a symlink leads outside every writable root
/// is dropped (a confined command could have planted the symlink), and the model is told.
#[test]
fn redirected_grant_is_dropped_and_noted() {
    let mut p = builtin("workspace-write");
    p.push_entries([FsEntry::new("/home/u/proj/data", Access::Write)]);
    let (_, xml) = render(&p, SandboxPreference::Auto, Os::Linux);
    assert!(
        !xml.contains(r#"<writable_root path="/data/real""#),
        "{xml}"
    );
    assert!(
        xml.contains("<note>write entry /home/u/proj/data dropped"),
        "{xml}"
    );
}

/// The seed's "advanced question": a disabled profile, tool preference `require`, on a
/// Windows host whose sandbox option is off. The backend folds to none, the XML still says
/// `type="disabled"` with an unrestricted filesystem (the text does not change its story)
/// and the status triple records requested=true, available=false, enabled=false.
#[test]
fn disabled_require_on_windows_without_backend() {
    let p = builtin("danger-full-access");
    let sel = select_initial(
        &p,
        SandboxPreference::Require,
        false,
        Os::Windows,
        PlatformOptions::default(),
    );
    assert_eq!(sel.backend, Backend::None);
    assert_eq!(sel.rule, ShouldSandboxRule::PreferenceRequire);
    let status = SandboxStatus::new(&sel, Ok(()), true);
    assert!(status.sandbox_requested.value);
    assert!(!status.sandbox_available.value);
    assert!(!status.sandbox_enabled.value);

    let r = resolve(&p, &ctx(), &fs()).unwrap();
    let xml = environment_context(&r, &status, sel.backend, DEFAULT_APPROVAL_MODE);
    insta::assert_snapshot!("disabled_require_windows", xml);
    assert!(
        xml.contains(r#"<sandbox type="disabled" profile="danger-full-access" backend="none">"#)
    );
    assert!(xml.contains(r#"<filesystem mode="unrestricted"/>"#));
    assert!(xml.contains(r#"<sandbox_status requested="true" available="false" enabled="false">"#));

    // Same profile on Linux: the sandbox part of the text is identical; only the backend
    // and the status triple differ.
    let (_, linux) = render(&p, SandboxPreference::Require, Os::Linux);
    let fs_part = |x: &str| {
        let start = x.find("<filesystem").unwrap();
        let end = x.find("</sandbox>").unwrap();
        x[start..end].to_string()
    };
    assert_eq!(fs_part(&xml), fs_part(&linux));
    assert!(linux.contains(r#"backend="linux-helper""#));
}

/// Changing the profile changes both the enforced object and the XML; the XML is rendered
/// only from the resolved object, never from a second copy.
#[test]
fn xml_follows_the_enforced_object() {
    let fs = fs();
    let mut p = builtin("workspace-write");
    let (sel, status) = linux_auto(&p);

    let before = resolve(&p, &ctx(), &fs).unwrap();
    let xml_before = environment_context(&before, &status, sel.backend, DEFAULT_APPROVAL_MODE);
    assert!(!xml_before.contains("/data/cache"));

    p.push_entries([FsEntry::new("/data/cache", Access::Write)]);
    let after = resolve(&p, &ctx(), &fs).unwrap();
    assert!(after
        .filesystem
        .writable_roots()
        .iter()
        .any(|e| e.path == Path::new("/data/cache")));
    let xml_after = environment_context(&after, &status, sel.backend, DEFAULT_APPROVAL_MODE);
    assert!(
        xml_after.contains(r#"<writable_root path="/data/cache""#),
        "{xml_after}"
    );

    // Editing the intent copy inside the resolved object does not change the text …
    let mut tampered = after.clone();
    tampered
        .profile
        .push_entries([FsEntry::new("/only/in/intent", Access::Write)]);
    assert_eq!(
        environment_context(&tampered, &status, sel.backend, DEFAULT_APPROVAL_MODE),
        xml_after
    );
    // … editing the compiled filesystem (what is enforced) does.
    let mut enforced = after.clone();
    if let ResolvedFilesystem::Restricted { entries, .. } = &mut enforced.filesystem {
        let mut e = entries[0].clone();
        e.path = PathBuf::from("/only/in/enforced");
        e.spelled = e.path.clone();
        entries.push(e);
    }
    let xml_enforced = environment_context(&enforced, &status, sel.backend, DEFAULT_APPROVAL_MODE);
    assert!(xml_enforced.contains("/only/in/enforced"), "{xml_enforced}");
}

#[test]
fn paths_and_names_are_escaped() {
    let weird = r#"/home/u/we<ird>&"q'"#;
    let fs = MemFs::new()
        .dir(&format!("{weird}/.git/objects"))
        .dir("/tmp");
    let mut p = builtin("workspace-write");
    p.name = r#"<profile & "co">"#.into();
    p.push_entries([FsEntry::new("/x/ctl\u{1}char", Access::Deny)]);
    let c = ResolveContext {
        cwd: weird.into(),
        ..ctx()
    };
    let r = resolve(&p, &c, &fs).unwrap();
    let sel = select_initial(
        &p,
        SandboxPreference::Auto,
        false,
        Os::Linux,
        Default::default(),
    );
    let status = SandboxStatus::new(&sel, Err("needs <landlock> & \"seccomp\"".into()), true);
    let xml = environment_context(&r, &status, sel.backend, "on-request");
    insta::assert_snapshot!("escaped", xml);
    assert!(!xml.contains(weird), "raw path leaked: {xml}");
    assert!(
        xml.contains("<cwd>/home/u/we&lt;ird&gt;&amp;&quot;q&apos;</cwd>"),
        "{xml}"
    );
    assert!(
        xml.contains(r#"path="/home/u/we&lt;ird&gt;&amp;&quot;q&apos;""#),
        "{xml}"
    );
    assert!(xml.contains(r"/x/ctl\u{1}char"), "{xml}");

    // Well-formed, and a parser gives the original strings back.
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut root_path = None;
    loop {
        match reader.read_event().expect("well-formed XML") {
            quick_xml::events::Event::Eof => break,
            quick_xml::events::Event::Start(e)
                if e.name().as_ref() == "writable_root" && root_path.is_none() =>
            {
                let a = e.try_get_attribute("path").unwrap().unwrap();
                let v = a.normalized_value(quick_xml::XmlVersion::Implicit1_0);
                root_path = Some(v.unwrap().into_owned());
            }
            _ => {}
        }
    }
    let raw = &xml[xml.find("<cwd>").unwrap() + 5..xml.find("</cwd>").unwrap()];
    let cwd_text = quick_xml::escape::unescape(raw).unwrap().into_owned();
    assert_eq!(cwd_text, weird);
    assert_eq!(root_path.as_deref(), Some(weird));
}

#[test]
fn rendering_is_stable_under_entry_order() {
    let fs = fs();
    let mut a = builtin("workspace-write");
    let mut b = builtin("workspace-write");
    if let (
        FilesystemPolicy::Restricted { entries: ea, .. },
        FilesystemPolicy::Restricted { entries: eb, .. },
    ) = (&mut a.filesystem, &mut b.filesystem)
    {
        ea.push(FsEntry::new("/data/a", Access::Write));
        ea.push(FsEntry::new("/data/b", Access::Write));
        eb.reverse();
        eb.push(FsEntry::new("/data/b", Access::Write));
        eb.push(FsEntry::new("/data/a", Access::Write));
    }
    let (sel, status) = linux_auto(&a);
    let ra = resolve(&a, &ctx(), &fs).unwrap();
    let rb = resolve(&b, &ctx(), &fs).unwrap();
    assert_eq!(
        environment_context(&ra, &status, sel.backend, DEFAULT_APPROVAL_MODE),
        environment_context(&rb, &status, sel.backend, DEFAULT_APPROVAL_MODE)
    );
}

/// Issue 8 §6: the compact form folds the built-in credential entries into one element
/// with a count and a name `cordon explain` answers; user deny entries stay listed; the
/// full form lists them all. Both come from the same resolved object.
#[test]
fn compact_and_full_forms() {
    let mut p = builtin("workspace-write");
    p.push_entries([FsEntry::new(":workspace/secrets", Access::Deny)]);
    let fs = fs();
    let r = resolve(&p, &ctx(), &fs).unwrap();
    let (sel, status) = linux_auto(&p);
    let compact = environment_context(&r, &status, sel.backend, DEFAULT_APPROVAL_MODE);
    let full = environment_context_with(
        &r,
        &status,
        sel.backend,
        DEFAULT_APPROVAL_MODE,
        Detail::Full,
    );
    let grouped = r
        .filesystem
        .denied()
        .into_iter()
        .filter(|e| cordon_policy::context::in_credential_group(e))
        .count();
    assert!(grouped >= 29, "{grouped}");
    assert!(compact.contains(&format!(
        "<deny_read_group name=\"credential-stores\" count=\"{grouped}\" ask=\"cordon explain credential-stores\"/>"
    )), "{compact}");
    assert!(
        compact.contains("<deny_read path=\"/home/u/proj/secrets\"/>"),
        "{compact}"
    );
    assert!(!compact.contains("/home/u/.ssh"), "{compact}");
    assert_eq!(compact.matches("<deny_read ").count(), 1, "{compact}");
    assert!(
        full.contains("<deny_read path=\"/home/u/.ssh\"/>"),
        "{full}"
    );
    assert!(full.contains("<deny_read path=\"/etc/shadow\"/>"), "{full}");
    assert_eq!(full.matches("<deny_read ").count(), grouped + 1);
    // `cordon explain` counts the same denied paths (the earlier note: its "8 denied
    // path(s)" beside the context's count="172" read as a disagreement).
    let e = cordon_policy::explain(&r, &fs, &[], &sel, &status, None);
    let summary = e.filesystem.clone().expect("a restricted filesystem");
    assert_eq!(summary.denied_paths, grouped + 1);
    assert!(summary.denied <= summary.denied_paths);
    assert!(e
        .to_string()
        .contains(&format!("{} denied paths are hidden", grouped + 1)));
    assert!(!full.contains("deny_read_group"));
    assert!(
        compact.len() * 2 < full.len(),
        "{} vs {}",
        compact.len(),
        full.len()
    );
    insta::assert_snapshot!("workspace_write_linux_full", full);
}

/// Issue 10: the model is told the managed network's rules — the same ones the proxy
/// applies — and the forwarded host ports as the relay binds them (normalised).
#[test]
fn managed_network_lists_its_rules() {
    let mut p = builtin("workspace-write");
    p.network = NetworkPolicy::Managed;
    p.network_rules.allow = vec!["pypi.org".into(), "**.npmjs.org".into()];
    p.network_rules.deny = vec!["evil.npmjs.org".into()];
    p.network_rules.ports = vec![443];
    p.network_rules.local = vec!["[0:0::1]:6379".into(), "127.0.0.1:5432".into()];
    let (_, xml) = render(&p, SandboxPreference::Auto, Os::Linux);
    for want in [
        "<allowed_host>pypi.org</allowed_host>",
        "<allowed_host>**.npmjs.org</allowed_host>",
        "<denied_host>evil.npmjs.org</denied_host>",
        "<allowed_port>443</allowed_port>",
        "<local_port>[::1]:6379</local_port>",
        "<local_port>127.0.0.1:5432</local_port>",
    ] {
        assert!(xml.contains(want), "{want} missing:\n{xml}");
    }
    assert!(!xml.contains("[0:0::1]"), "{xml}");
    // A restricted network lists no proxy rules (there is no proxy), only the ports.
    p.network = NetworkPolicy::Restricted;
    let (_, xml) = render(&p, SandboxPreference::Auto, Os::Linux);
    assert!(!xml.contains("allowed_host"), "{xml}");
    assert!(xml.contains("<local_port>[::1]:6379</local_port>"), "{xml}");
}
