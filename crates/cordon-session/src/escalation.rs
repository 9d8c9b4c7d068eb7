//! Escalation after a denial (R-F2): the smallest widening that would have allowed it, or
//! the unsandboxed form when the tool allows that and nothing would be dropped. Either is a
//! NEW request (new run, new approval id, a different cache key): the approval of the first
//! attempt never carries over, and the request warns that the first attempt may have had
//! side effects.

use crate::outcome::{Outcome, OutcomeClass};
use crate::request::{NeededPermissions, RequestKind, ReviewableRequest};
use cordon_execpolicy::ApprovalMode;
use cordon_policy::{Access, AdditionalPermissions, FilesystemPolicy, FsEntry, NetworkPolicy};
use serde::{Deserialize, Serialize};

/// The warning every escalation request carries.
pub const SIDE_EFFECTS_WARNING: &str =
    "the first attempt may have had side effects (files written, requests sent): check them before retrying";

/// What a retry would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Widening {
    /// Retry sandboxed with these additional permissions (R-O1).
    Additional {
        /// The smallest overlay that would have allowed the denied access.
        permissions: AdditionalPermissions,
    },
    /// Retry outside the sandbox.
    Unsandboxed,
}

/// The escalation decision: offered (with the new form) or not (with the reason).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "escalation", rename_all = "kebab-case")]
// Built at most once per attempt and moved, never stored in bulk: boxing buys nothing.
#[allow(clippy::large_enum_variant)]
pub enum Escalation {
    /// A retry may be offered; it needs a new approval.
    Offered {
        /// The change.
        widening: Widening,
        /// What the retry would run with (not serialised: the widening says what changes).
        #[serde(skip)]
        needs: NeededPermissions,
    },
    /// No retry: why.
    NotOffered {
        /// Why.
        reason: String,
    },
}

/// Decides whether to offer a retry after `outcome` (R-F2).
///
/// Offered only after `sandbox-denied` (a path the resolver confirmed, not a deny-read or
/// seccomp denial) or `network-denied`, in an approval mode that asks (`untrusted`,
/// `on-request`, `on-failure`). The widening is the overlay for that one path (write, or
/// read) or the network. Unsandboxed retries only when `allow_unsandboxed` (the tool allows
/// it) and the profile has no network restriction and no deny-read entry that would be
/// dropped.
pub fn escalation(
    outcome: &Outcome,
    needs: &NeededPermissions,
    mode: ApprovalMode,
    allow_unsandboxed: bool,
) -> Escalation {
    let not = |r: &str| Escalation::NotOffered { reason: r.into() };
    if !matches!(
        mode,
        ApprovalMode::Untrusted | ApprovalMode::OnRequest | ApprovalMode::OnFailure
    ) {
        return not(&format!(
            "approval mode {mode} does not ask, so no retry is offered"
        ));
    }
    if !needs.sandboxed {
        return not("the command already ran outside the sandbox");
    }
    let widen = |extra: AdditionalPermissions| {
        let mut n = needs.clone();
        let merged = match &n.additional {
            Some(a) => a.merge(&extra),
            None => extra.clone(),
        };
        n.additional = Some(merged);
        Escalation::Offered {
            widening: Widening::Additional { permissions: extra },
            needs: n,
        }
    };
    match &outcome.class {
        OutcomeClass::SandboxDenied {
            path: Some(p),
            access,
            rule,
            grant,
            also_grant,
            ..
        } => {
            if *access == Some(Access::Read) || rule.starts_with("denied") {
                return unsandboxed_or(
                    needs,
                    allow_unsandboxed,
                    "the path is hidden by a deny-read entry; no per-command opening may undo it",
                );
            }
            if rule.starts_with("pinned") {
                return unsandboxed_or(
                    needs,
                    allow_unsandboxed,
                    "the directory is pinned to keep protected paths protected",
                );
            }
            // No grant: only the program's output names a path outside the cwd and
            // workspace, or the grant would be wider than a project (`/`, the home, a
            // system tree: `outcome::offerable_grant`; the hint says which).
            let Some(grant) = grant else {
                return unsandboxed_or(
                    needs,
                    allow_unsandboxed,
                    &format!(
                        "no per-command widening is offered for {} (see the hint)",
                        p.display()
                    ),
                );
            };
            // With the grants the same fix needs beside it (a submodule's git dir and its
            // config: hints finding 1), so the retry does not fail on the other.
            widen(AdditionalPermissions {
                network: None,
                entries: std::iter::once(grant)
                    .chain(also_grant)
                    .map(|g| {
                        FsEntry::new(g.to_string_lossy(), Access::Write).with_source("escalation")
                    })
                    .collect(),
            })
        }
        OutcomeClass::SandboxDenied { .. } => unsandboxed_or(
            needs,
            allow_unsandboxed,
            "the denial names no path or is a blocked system call: there is no smaller widening",
        ),
        // Under a managed network the proxy refused one host by a rule (or a person's
        // answer): the whole network is not offered in its place (new-user trial: a
        // denied host was followed by "retry with --allow-network?").
        OutcomeClass::NetworkDenied { host, rule }
            if needs.profile.network == NetworkPolicy::Managed =>
        {
            not(&format!(
                "the managed network refused {} ({}); allow that host with network.allow (or \
                 answer its ask with once/session) — the whole network is not offered instead",
                host.as_deref().unwrap_or("the host"),
                rule.as_deref().unwrap_or("its rules")
            ))
        }
        OutcomeClass::NetworkDenied { .. } => widen(AdditionalPermissions {
            network: Some(true),
            entries: vec![],
        }),
        other => not(&format!(
            "{} is not a denial by the sandbox: fix the command instead of widening it",
            other.name()
        )),
    }
}

fn unsandboxed_or(needs: &NeededPermissions, allow: bool, why: &str) -> Escalation {
    if !allow {
        return Escalation::NotOffered {
            reason: format!(
                "{why}; retrying outside the sandbox is not allowed here (the caller did not \
                 allow unsandboxed retries)"
            ),
        };
    }
    if needs.profile.network == NetworkPolicy::Restricted && !needs.network() {
        return Escalation::NotOffered {
            reason: format!(
                "{why}; an unsandboxed retry would drop the network restriction (R-F2)"
            ),
        };
    }
    let has_deny = match needs.profile.effective_filesystem() {
        FilesystemPolicy::Restricted {
            default, entries, ..
        } => default == Access::Deny || entries.iter().any(|e| e.access == Access::Deny),
        FilesystemPolicy::Unrestricted => false,
    };
    if has_deny {
        return Escalation::NotOffered {
            reason: format!("{why}; an unsandboxed retry would drop deny-read entries (R-F2)"),
        };
    }
    let mut n = needs.clone();
    n.sandboxed = false;
    Escalation::Offered {
        widening: Widening::Unsandboxed,
        needs: n,
    }
}

/// The widening as the `cordon run` flags a person would type (`-w /usr`,
/// `--allow-network`): the retry prompt shows these, not JSON.
pub fn as_flags(p: &AdditionalPermissions) -> String {
    let mut out: Vec<String> = p
        .entries
        .iter()
        .map(|e| match e.access {
            Access::Write => format!("-w {}", e.path),
            _ => format!(
                "--with '{}'",
                serde_json::to_string(&AdditionalPermissions {
                    network: None,
                    entries: vec![e.clone()],
                })
                .unwrap_or_default()
            ),
        })
        .collect();
    if p.network == Some(true) {
        out.push("--allow-network".into());
    }
    if out.is_empty() {
        "no change".into()
    } else {
        out.join(" ")
    }
}

impl ReviewableRequest {
    /// The NEW request for a retry in the escalated form: a new approval id (and the caller
    /// gives a new run id), the widened permissions, and the side-effects warning.
    pub fn escalated(
        &self,
        run_id: crate::RunId,
        outcome: &Outcome,
        needs: NeededPermissions,
        widening: &Widening,
    ) -> ReviewableRequest {
        let mut r = self.clone();
        r.run_id = run_id;
        r.approval_id = crate::ApprovalId::new();
        r.kind = RequestKind::Escalation {
            after: outcome.class.name().into(),
        };
        r.needs = needs;
        r.remember = None;
        r.reason = match widening {
            Widening::Additional { permissions } => format!(
                "retry with {} after {}",
                as_flags(permissions),
                outcome.hint.as_deref().unwrap_or(outcome.class.name())
            ),
            Widening::Unsandboxed => format!(
                "retry OUTSIDE the sandbox after {}",
                outcome.hint.as_deref().unwrap_or(outcome.class.name())
            ),
        };
        r.warning = Some(SIDE_EFFECTS_WARNING.into());
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Confidence, Outcome};
    use cordon_policy::PermissionProfile;

    fn needs(profile: &str) -> NeededPermissions {
        NeededPermissions {
            profile: PermissionProfile::builtin(profile).unwrap(),
            additional: None,
            sandboxed: true,
        }
    }
    fn outcome(class: OutcomeClass) -> Outcome {
        Outcome {
            class,
            exit_code: 1,
            signal: None,
            confidence: Confidence::Low,
            evidence: vec![],
            hint: None,
        }
    }
    fn denied(path: &str, rule: &str, access: Access) -> Outcome {
        outcome(OutcomeClass::SandboxDenied {
            path: Some(path.into()),
            syscall: None,
            rule: rule.into(),
            access: Some(access),
            grant: (access == Access::Write).then(|| path.into()),
            also_grant: Vec::new(),
        })
    }

    /// Issue 9 re-test: a path outside the cwd and workspace named only by the program's
    /// output carries no grant; no widening is offered for it (a fake error about $HOME
    /// must not steer cordon into offering `-w ~`).
    #[test]
    fn the_retry_prompt_shows_flags_not_json() {
        let p = AdditionalPermissions {
            network: Some(true),
            entries: vec![FsEntry::new("/usr", Access::Write)],
        };
        assert_eq!(as_flags(&p), "-w /usr --allow-network");
    }

    #[test]
    fn no_grant_no_widening() {
        let o = outcome(OutcomeClass::SandboxDenied {
            path: Some("/home/u/.bashrc".into()),
            syscall: None,
            rule: "read-only: outside every writable root".into(),
            access: Some(Access::Write),
            grant: None,
            also_grant: Vec::new(),
        });
        match escalation(
            &o,
            &needs("workspace-write"),
            ApprovalMode::OnRequest,
            false,
        ) {
            Escalation::NotOffered { reason } => {
                assert!(reason.contains("no per-command widening"), "{reason}")
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn offered_with_the_smallest_widening_for_a_write_denial() {
        let o = denied("/w/.git/config", "protected (R-P3): x", Access::Write);
        match escalation(
            &o,
            &needs("workspace-write"),
            ApprovalMode::OnRequest,
            false,
        ) {
            Escalation::Offered {
                widening: Widening::Additional { permissions },
                needs,
            } => {
                assert_eq!(permissions.entries.len(), 1);
                assert_eq!(permissions.entries[0].path, "/w/.git/config");
                assert_eq!(permissions.entries[0].access, Access::Write);
                assert_eq!(permissions.network, None);
                assert!(needs.sandboxed);
            }
            e => panic!("{e:?}"),
        }
        let net = outcome(OutcomeClass::NetworkDenied {
            host: None,
            rule: None,
        });
        assert!(matches!(
            escalation(&net, &needs("workspace-write"), ApprovalMode::Untrusted, false),
            Escalation::Offered { widening: Widening::Additional { ref permissions }, .. } if permissions.network == Some(true)
        ));
    }

    #[test]
    fn a_missing_file_widens_its_nearest_existing_directory() {
        let o = outcome(OutcomeClass::SandboxDenied {
            path: Some("/data/new/file".into()),
            syscall: None,
            rule: "read-only".into(),
            access: Some(Access::Write),
            grant: Some("/data".into()),
            also_grant: Vec::new(),
        });
        match escalation(
            &o,
            &needs("workspace-write"),
            ApprovalMode::OnRequest,
            false,
        ) {
            Escalation::Offered {
                widening: Widening::Additional { permissions },
                ..
            } => assert_eq!(permissions.entries[0].path, "/data"),
            e => panic!("{e:?}"),
        }
    }

    /// Hints finding 1: a denial whose fix needs two grants (a submodule's git dir and its
    /// protected config) retries with both; a single grant retries with it alone (twin).
    #[test]
    fn a_retry_carries_every_grant_the_fix_needs() {
        let o = outcome(OutcomeClass::SandboxDenied {
            path: Some("/w/.git/modules/s/config.lock".into()),
            syscall: None,
            rule: "protected (R-P3): submodule git dirs have their own hooks and config".into(),
            access: Some(Access::Write),
            grant: Some("/w/.git/modules/s".into()),
            also_grant: vec!["/w/.git/modules/s/config".into()],
        });
        match escalation(
            &o,
            &needs("workspace-write"),
            ApprovalMode::OnRequest,
            false,
        ) {
            Escalation::Offered {
                widening: Widening::Additional { permissions },
                ..
            } => {
                let paths: Vec<&str> = permissions
                    .entries
                    .iter()
                    .map(|e| e.path.as_str())
                    .collect();
                assert_eq!(paths, ["/w/.git/modules/s", "/w/.git/modules/s/config"]);
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn not_offered() {
        let n = needs("workspace-write");
        let w = denied("/usr/x", "read-only", Access::Write);
        // modes that do not ask
        for m in [ApprovalMode::Never, ApprovalMode::Bypass] {
            assert!(matches!(
                escalation(&w, &n, m, true),
                Escalation::NotOffered { .. }
            ));
        }
        // ordinary failures
        for c in [
            OutcomeClass::CommandFailed,
            OutcomeClass::TimedOut,
            OutcomeClass::Success,
        ] {
            assert!(matches!(
                escalation(&outcome(c), &n, ApprovalMode::OnRequest, true),
                Escalation::NotOffered { .. }
            ));
        }
        // deny-read: no widening, and unsandboxed would drop the network restriction /
        // the deny-read entries
        let r = denied("/home/u/.ssh/id", "denied (deny-read)", Access::Read);
        match escalation(&r, &n, ApprovalMode::OnRequest, true) {
            Escalation::NotOffered { reason } => assert!(reason.contains("network"), "{reason}"),
            e => panic!("{e:?}"),
        }
        let mut n_net = n.clone();
        n_net.profile.network = NetworkPolicy::Enabled;
        match escalation(&r, &n_net, ApprovalMode::OnRequest, true) {
            Escalation::NotOffered { reason } => assert!(reason.contains("deny-read"), "{reason}"),
            e => panic!("{e:?}"),
        }
        // seccomp: unsandboxed only if allowed by the tool
        let sc = outcome(OutcomeClass::SandboxDenied {
            path: None,
            syscall: Some("ptrace".into()),
            rule: "seccomp".into(),
            access: None,
            grant: None,
            also_grant: Vec::new(),
        });
        assert!(matches!(
            escalation(&sc, &n, ApprovalMode::OnRequest, false),
            Escalation::NotOffered { .. }
        ));
    }

    #[test]
    fn unsandboxed_offered_only_when_nothing_is_dropped() {
        let mut n = needs("workspace-write");
        n.profile.network = NetworkPolicy::Enabled;
        n.profile.filesystem = FilesystemPolicy::Restricted {
            default: Access::Read,
            entries: vec![FsEntry::new(":workspace", Access::Write)],
            protect_metadata: true,
        };
        let sc = outcome(OutcomeClass::SandboxDenied {
            path: None,
            syscall: None,
            rule: "seccomp".into(),
            access: None,
            grant: None,
            also_grant: Vec::new(),
        });
        match escalation(&sc, &n, ApprovalMode::OnFailure, true) {
            Escalation::Offered {
                widening: Widening::Unsandboxed,
                needs,
            } => assert!(!needs.sandboxed),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn the_retry_is_a_new_request_with_a_new_key_and_the_warning() {
        use cordon_execpolicy::{EvalContext, Policy};
        let rec =
            Policy::empty().evaluate(&["touch".into(), "/usr/x".into()], &EvalContext::default());
        let n = needs("workspace-write");
        let first = ReviewableRequest::tool_call(
            crate::RunId::new(),
            &rec,
            "/w".into(),
            n.clone(),
            "x".into(),
        );
        let o = denied("/usr/x", "read-only", Access::Write);
        let Escalation::Offered { widening, needs } =
            escalation(&o, &n, ApprovalMode::OnRequest, false)
        else {
            panic!()
        };
        let retry = first.escalated(crate::RunId::new(), &o, needs, &widening);
        assert_ne!(retry.approval_id, first.approval_id);
        assert_ne!(retry.run_id, first.run_id);
        assert_eq!(retry.warning.as_deref(), Some(SIDE_EFFECTS_WARNING));
        assert_ne!(
            crate::CacheKey::new(&rec, &retry.cwd, &retry.needs),
            crate::CacheKey::new(&rec, &first.cwd, &first.needs)
        );
        assert!(retry.render_text().contains("side effects"));
        // --yes approved the tool call; it does not approve the retry
        use crate::approver::{Approver, Preapproved};
        assert_eq!(Preapproved.ask(&first).answer, crate::Answer::Once);
        assert_eq!(Preapproved.ask(&retry).answer, crate::Answer::Deny);
        // an escalation never offers "remember as rule"
        assert!(!retry
            .allowed_answers()
            .contains(&crate::Answer::RememberRule));
    }

    /// A host refused under a managed network is not followed by an offer of the whole
    /// network (new-user trial); with the network off it still is (sibling).
    #[test]
    fn managed_refusal_does_not_offer_the_whole_network() {
        let net = outcome(OutcomeClass::NetworkDenied {
            host: Some("example.com".into()),
            rule: Some("denied by the person".into()),
        });
        let mut managed = needs("workspace-write");
        managed.profile.network = NetworkPolicy::Managed;
        match escalation(&net, &managed, ApprovalMode::OnRequest, false) {
            Escalation::NotOffered { reason } => {
                assert!(
                    reason.contains("example.com") && reason.contains("network.allow"),
                    "{reason}"
                )
            }
            e => panic!("{e:?}"),
        }
        assert!(matches!(
            escalation(
                &net,
                &needs("workspace-write"),
                ApprovalMode::OnRequest,
                false
            ),
            Escalation::Offered { .. }
        ));
    }
}
