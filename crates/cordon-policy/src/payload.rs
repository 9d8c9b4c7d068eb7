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
        let json = serde_json::to_vec(self).map_err(|e| match self.profile.non_utf8_path() {
            Some(p) => {
                PayloadError::NotUtf8(crate::paths::escaped(p.as_os_str().as_encoded_bytes()))
            }
            None => PayloadError::Malformed(format!("cannot encode the payload: {e}")),
        })?;
        Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json))
    }

    /// Decodes and checks the version (checked before the rest of the shape, so a payload
    /// of another version is reported as such).
    pub fn decode(s: &str) -> Result<HelperPayload, PayloadError> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s.trim())
            .map_err(|e| PayloadError::Malformed(e.to_string()))?;
        // The version alone first (the rest skipped, not built: issue 12 measured the
        // payload going through a `serde_json::Value` as most of its decode time).
        #[derive(serde::Deserialize)]
        struct Version {
            version: Option<u64>,
        }
        let found = serde_json::from_slice::<Version>(&bytes)
            .map_err(|e| PayloadError::Malformed(e.to_string()))?
            .version
            .ok_or_else(|| PayloadError::Malformed("missing version".into()))?
            as u32;
        if found != PROFILE_FORMAT_VERSION {
            return Err(PayloadError::Version {
                found,
                expected: PROFILE_FORMAT_VERSION,
            });
        }
        serde_json::from_slice(&bytes).map_err(|e| PayloadError::Malformed(e.to_string()))
    }
}
