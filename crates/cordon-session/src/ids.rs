//! Run ids and approval ids (R-A9): opaque, unique per process tree and time, never reused.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// 64 random bits from the kernel, mixed with time, pid and a counter so two ids made by one
/// process never collide even if `/dev/urandom` is unreadable.
fn fresh(prefix: &str) -> String {
    let mut buf = [0u8; 8];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map(|_| u64::from_le_bytes(buf))
        .unwrap_or(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mixed = random ^ nanos.rotate_left(17) ^ (u64::from(std::process::id()) << 32) ^ n;
    format!("{prefix}-{mixed:016x}-{n}")
}

macro_rules! id_type {
    ($name:ident, $prefix:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// A new, unique id.
            pub fn new() -> Self {
                $name(fresh($prefix))
            }
            /// An id from its text (e.g. read back from a scripted answer).
            pub fn from_string(s: impl Into<String>) -> Self {
                $name(s.into())
            }
            /// The id's text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_type!(
    RunId,
    "run",
    "One attempt to run a command (R-A9): every approval is bound to it. A retry after an \
     escalation is a new run with a new id."
);
id_type!(
    ApprovalId,
    "appr",
    "One approval request (R-A9): an answer must name it, and is accepted only while its run \
     is live and the request is the current one of that run."
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_prefixed() {
        let a = RunId::new();
        let b = RunId::new();
        assert_ne!(a, b);
        assert!(a.as_str().starts_with("run-"));
        assert!(ApprovalId::new().as_str().starts_with("appr-"));
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<RunId>(&json).unwrap(), a);
    }
}
