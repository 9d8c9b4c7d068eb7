//! The versioned payload handed to the Linux helper (R-T3): the whole resolved profile plus
//! the run's options, as base64-encoded JSON in one argument (`--permission-profile`).

use crate::profile::PROFILE_FORMAT_VERSION;
use crate::resolve::ResolvedProfile;
use base64::Engine;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Everything the helper needs to confine one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelperPayload {
    /// Must equal [`PROFILE_FORMAT_VERSION`]; the helper refuses anything else.
    pub version: u32,
    /// The profile compiled for this cwd.
    pub profile: ResolvedProfile,
    /// Environment for the child, already scrubbed (R-L4).
    pub env: Vec<(String, String)>,
    /// Layers the caller disabled for this run (`userns`, `landlock`, `seccomp`), e.g. to
    /// exercise a lower rung. Removing a layer never bypasses R-S4: the helper still refuses
    /// when a guarantee is left unmet.
    #[serde(default)]
    pub disabled_layers: Vec<String>,
}

/// Errors decoding a payload.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PayloadError {
    /// Not base64 or not JSON of the expected shape.
    #[error("malformed sandbox payload: {0}")]
    Malformed(String),
    /// A path of the profile is not valid UTF-8: JSON cannot carry it (L2). The path is
    /// named with its bad bytes escaped.
    #[error("the path {0} is not valid UTF-8, and cordon cannot hand it to the sandbox helper; rename it or run from another directory")]
    NotUtf8(String),
    /// Produced by another cordon version.
    #[error("sandbox payload version {found} does not match this helper's version {expected}; use the cordon binary that produced it")]
    Version {
        /// Version in the payload.
        found: u32,
        /// This build's version.
        expected: u32,
    },
}

impl HelperPayload {
    /// Builds a payload of the current version.
    pub fn new(profile: ResolvedProfile, env: Vec<(String, String)>) -> HelperPayload {
        HelperPayload {
            version: PROFILE_FORMAT_VERSION,
            profile,
            env,
            disabled_layers: Vec::new(),
        }
    }

    /// Encodes as URL-safe base64 (no padding) of the JSON.
    ///
    /// Errors: [`PayloadError::NotUtf8`] naming a path of the profile that JSON cannot
    /// carry (a non-UTF-8 project path, a nested repository with such a name), never a
    /// panic.
    pub fn encode(&self) -> Result<String, PayloadError> {
        Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.encode_json()?))
    }

    /// The JSON itself, for a descriptor (a sealed memfd), where nothing needs the
    /// base64 that an argument or a variable does (issue 12: the encoding and each
    /// decoding of ~60 KB on the launch path). [`PayloadText::parse`] takes either form.
    ///
    /// Errors: as [`HelperPayload::encode`].
    pub fn encode_json(&self) -> Result<String, PayloadError> {
        serde_json::to_string(self).map_err(|e| match self.profile.non_utf8_path() {
            Some(p) => {
                PayloadError::NotUtf8(crate::paths::escaped(p.as_os_str().as_encoded_bytes()))
            }
            None => PayloadError::Malformed(format!("cannot encode the payload: {e}")),
        })
    }

    /// Decodes and checks the version (checked before the rest of the shape, so a payload
    /// of another version is reported as such).
    pub fn decode(s: &str) -> Result<HelperPayload, PayloadError> {
        PayloadText::parse(s)?.finish()
    }
}

/// A decoded payload whose profile is still its JSON text: what a process that sees the
/// same profile again and again (`cordon serve`) compares before it parses one (issue 12:
/// the profile is nearly all of a payload, ~60 KB, and parsing it cost ~0.4 ms per command
/// in the server and again in the template's handler).
///
/// The text is a function of the profile alone (every map in a [`ResolvedProfile`] is
/// ordered), so equal texts are equal profiles: [`PayloadText::with_profile`] takes a
/// profile already parsed from the same text.
#[derive(Debug)]
pub struct PayloadText {
    profile: Box<serde_json::value::RawValue>,
    env: Vec<(String, String)>,
    disabled_layers: Vec<String>,
}

impl PayloadText {
    /// Decodes the base64 ([`HelperPayload::encode`]; text that is JSON as it stands,
    /// starting with `{`, is taken as it is: [`HelperPayload::encode_json`] — the base64
    /// alphabet has no `{`) and the JSON around the profile, and checks the version
    /// (before the rest of the shape, so a payload of another version is reported as
    /// such); the profile's text is checked to be JSON, not yet a profile.
    ///
    /// Errors: [`PayloadError::Malformed`], [`PayloadError::Version`].
    pub fn parse(s: &str) -> Result<PayloadText, PayloadError> {
        let s = s.trim();
        let decoded;
        let bytes: &[u8] = if s.starts_with('{') {
            s.as_bytes()
        } else {
            decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .map_err(|e| PayloadError::Malformed(e.to_string()))?;
            &decoded
        };
        // One pass over the text, every field kept as text, so that the version is
        // checked before the shape of the rest (issue 12: a `serde_json::Value` was most
        // of the decode time, and a second pass for the version alone ~0.1 ms).
        use serde_json::value::RawValue;
        #[derive(serde::Deserialize)]
        struct Parts {
            version: Option<u64>,
            profile: Option<Box<RawValue>>,
            env: Option<Box<RawValue>>,
            disabled_layers: Option<Box<RawValue>>,
        }
        let malformed = |e: serde_json::Error| PayloadError::Malformed(e.to_string());
        let p: Parts = serde_json::from_slice(bytes).map_err(malformed)?;
        let found = p
            .version
            .ok_or_else(|| PayloadError::Malformed("missing version".into()))?;
        // Read as a u64 so that any version number is reported as one; a number no
        // version has (attack pass 52, N1: 2^32 + 1 was cut to 1 and accepted).
        let found = u32::try_from(found)
            .map_err(|_| PayloadError::Malformed(format!("no payload version is {found}")))?;
        if found != PROFILE_FORMAT_VERSION {
            return Err(PayloadError::Version {
                found,
                expected: PROFILE_FORMAT_VERSION,
            });
        }
        let missing = |f: &str| PayloadError::Malformed(format!("missing field `{f}`"));
        let env =
            serde_json::from_str(p.env.ok_or_else(|| missing("env"))?.get()).map_err(malformed)?;
        let disabled_layers = match p.disabled_layers {
            Some(t) => serde_json::from_str(t.get()).map_err(malformed)?,
            None => Vec::new(),
        };
        Ok(PayloadText {
            profile: p.profile.ok_or_else(|| missing("profile"))?,
            env,
            disabled_layers,
        })
    }

    /// The profile's JSON text, byte for byte as the payload carries it.
    pub fn profile_text(&self) -> &[u8] {
        self.profile.get().as_bytes()
    }

    /// The layers the caller disabled (the payload's `disabled_layers`).
    pub fn disabled_layers(&self) -> &[String] {
        &self.disabled_layers
    }

    /// Parses the profile: the payload [`HelperPayload::decode`] returns.
    ///
    /// Errors: [`PayloadError::Malformed`] when the text is not a profile.
    pub fn finish(self) -> Result<HelperPayload, PayloadError> {
        let profile = serde_json::from_str(self.profile.get())
            .map_err(|e| PayloadError::Malformed(e.to_string()))?;
        Ok(self.with_profile(profile))
    }

    /// The payload with `profile` as its profile, which the caller parsed earlier from a
    /// text equal to [`PayloadText::profile_text`] (not checked here).
    pub fn with_profile(self, profile: ResolvedProfile) -> HelperPayload {
        HelperPayload {
            version: PROFILE_FORMAT_VERSION,
            profile,
            env: self.env,
            disabled_layers: self.disabled_layers,
        }
    }
}
