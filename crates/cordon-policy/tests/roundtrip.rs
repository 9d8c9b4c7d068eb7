//! Profile serialisation: TOML and JSON round-trips, payload versioning (R-T3).
use cordon_policy::*;
use std::path::Path;

#[test]
fn builtin_profiles_roundtrip_json_and_toml() {
    for name in ["workspace-write", "read-only", "danger-full-access"] {
        let p = PermissionProfile::builtin(name).unwrap();
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            serde_json::from_str::<PermissionProfile>(&json).unwrap(),
            p,
            "{name}"
        );
        let toml_text = toml::to_string(&p).unwrap();
        assert_eq!(
            toml::from_str::<PermissionProfile>(&toml_text).unwrap(),
            p,
            "{name}"
        );
    }
}

fn resolved() -> ResolvedProfile {
    let fs = MemFs::new().dir("/home/u/proj/.git/objects").dir("/tmp");
    let ctx = ResolveContext {
        cwd: "/home/u/proj".into(),
        home: Some("/home/u".into()),
        tmpdir: None,
        profile_files: vec![],
        ..Default::default()
    };
    resolve(
        &PermissionProfile::builtin("workspace-write").unwrap(),
        &ctx,
        &fs,
    )
    .unwrap()
}

#[test]
fn payload_roundtrip_and_version_check() {
    let p = HelperPayload::new(resolved(), vec![("PATH".into(), "/usr/bin".into())]);
    let s = p.encode().unwrap();
    assert_eq!(HelperPayload::decode(&s).unwrap(), p);

    let mut other = p.clone();
    other.version = PROFILE_FORMAT_VERSION + 1;
    let s = other.encode().unwrap();
    assert_eq!(
        HelperPayload::decode(&s),
        Err(PayloadError::Version {
            found: PROFILE_FORMAT_VERSION + 1,
            expected: PROFILE_FORMAT_VERSION
        })
    );
    assert!(matches!(
        HelperPayload::decode("!!!"),
        Err(PayloadError::Malformed(_))
    ));
}

#[test]
fn resolved_profile_json_roundtrip() {
    let r = resolved();
    let json = serde_json::to_string_pretty(&r).unwrap();
    assert_eq!(serde_json::from_str::<ResolvedProfile>(&json).unwrap(), r);
}

#[test]
fn config_profile_roundtrips_through_json() {
    let c = Config::parse(
        "[profiles.p]\nextends = \"read-only\"\n[profiles.p.filesystem]\nentries = [{path = \"/data\", access = \"write\"}]\n",
        Path::new("/c.toml"),
    )
    .unwrap();
    let p = c.profile("p").unwrap();
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<PermissionProfile>(&json).unwrap(), p);
}
