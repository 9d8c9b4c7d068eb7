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
    // The JSON form (a memfd's, issue 12) decodes to the same payload.
    let j = p.encode_json().unwrap();
    assert!(j.starts_with('{'));
    assert_eq!(HelperPayload::decode(&j).unwrap(), p);

    let mut other = p.clone();
    other.version = PROFILE_FORMAT_VERSION + 1;
    for s in [other.encode().unwrap(), other.encode_json().unwrap()] {
        assert_eq!(
            HelperPayload::decode(&s),
            Err(PayloadError::Version {
                found: PROFILE_FORMAT_VERSION + 1,
                expected: PROFILE_FORMAT_VERSION
            })
        );
    }
    assert!(matches!(
        HelperPayload::decode("{not json"),
        Err(PayloadError::Malformed(_))
    ));
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

/// Issue 12: `cordon serve` compares a payload's profile text before it parses the
/// profile, so the text must be a function of the profile (two resolutions of the same
/// profile give the same bytes), and a profile taken for an equal text must be the payload
/// `decode` gives.
#[test]
fn payload_text_is_the_profile_and_compares_by_bytes() {
    let env = vec![("PATH".to_string(), "/usr/bin".to_string())];
    let a = HelperPayload::new(resolved(), env.clone())
        .encode()
        .unwrap();
    let b = HelperPayload::new(resolved(), vec![("X".into(), "1".into())])
        .encode()
        .unwrap();
    let (ta, tb) = (
        PayloadText::parse(&a).unwrap(),
        PayloadText::parse(&b).unwrap(),
    );
    assert_eq!(
        ta.profile_text(),
        tb.profile_text(),
        "env is not the profile"
    );
    assert_eq!(
        serde_json::from_slice::<ResolvedProfile>(ta.profile_text()).unwrap(),
        resolved()
    );
    // Taking an earlier parse for an equal text is the payload decode gives.
    assert_eq!(
        tb.with_profile(resolved()),
        HelperPayload::decode(&b).unwrap()
    );
    assert!(ta.disabled_layers().is_empty());
    // Another profile, another text.
    let mut other = resolved();
    other.unix_sockets.push("/run/x.sock".into());
    let c = HelperPayload::new(other, env).encode().unwrap();
    assert_ne!(
        PayloadText::parse(&c).unwrap().profile_text(),
        ta.profile_text()
    );
}

/// The version is read before the shape of anything else: a payload of another version
/// whose fields are not this version's is reported as a version mismatch, not as
/// malformed.
#[test]
fn payload_of_another_shape_reports_its_version() {
    use base64::Engine;
    let enc = |j: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(j);
    let next = PROFILE_FORMAT_VERSION + 1;
    assert_eq!(
        HelperPayload::decode(&enc(&format!(r#"{{"version":{next},"policy":[1,2]}}"#))),
        Err(PayloadError::Version {
            found: next,
            expected: PROFILE_FORMAT_VERSION
        })
    );
    // A number no version has is not cut down to one (attack pass 52, N1).
    let payload = HelperPayload::new(resolved(), vec![]).encode().unwrap();
    let json = String::from_utf8(
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&payload)
            .unwrap(),
    )
    .unwrap();
    let wrapped = u64::from(PROFILE_FORMAT_VERSION) + (1u64 << 32);
    let json = json.replacen(
        &format!("\"version\":{PROFILE_FORMAT_VERSION}"),
        &format!("\"version\":{wrapped}"),
        1,
    );
    assert!(json.contains(&wrapped.to_string()));
    assert!(matches!(
        HelperPayload::decode(&enc(&json)),
        Err(PayloadError::Malformed(m)) if m.contains(&wrapped.to_string())
    ));
    let this = PROFILE_FORMAT_VERSION;
    assert!(matches!(
        HelperPayload::decode(&enc(&format!(r#"{{"version":{this},"env":[]}}"#))),
        Err(PayloadError::Malformed(m)) if m.contains("profile")
    ));
    assert!(matches!(
        HelperPayload::decode(&enc(&format!(
            r#"{{"version":{this},"profile":{{}},"env":[]}}"#
        ))),
        Err(PayloadError::Malformed(_))
    ));
}
