//! Unknown hosts of a managed network, asked while the command runs (issue 10 §4, R-P4
//! `ask`): the proxy in the helper asks ([`crate::runner::run_asking`]), the loop's thread
//! answers with [`Session::ask_host`]:
//!
//! 1. the session cache: a host approved "for this session" (key: `network-host:` and
//!    `host:port`, the cwd and the run's permissions — the same key parts as a command);
//! 2. the remembered hosts ([`remembered_hosts_path`], `hosts = ["host:port", …]`), written
//!    by the "remember" answer;
//! 3. the approver, with a [`RequestKind::NetworkHost`] request. "once" holds for the rest
//!    of this run (the proxy keeps every answer for the run), "session" also for later runs
//!    of the session, "remember" for every later run; "deny" is a 403 naming the answer.
//!
//! The approver is asked only when someone can answer ([`Session::asks_hosts`]): not with
//! `--yes`, not non-interactive, not in the `never` or `bypass` approval modes — there an
//! unknown host that neither the session cache nor the remembered hosts approve is denied
//! at once, rule `not in network.allow`.

use crate::cache::{CacheEntry, CacheKey};
use crate::ids::{ApprovalId, RunId};
use crate::request::{Answer, NeededPermissions, RequestKind, ReviewableRequest};
use crate::scope::DecisionKind;
use crate::session::Session;
use cordon_execpolicy::ApprovalMode;
use cordon_proxy::ask::{HostAsk, HostReply};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What the command being run is, for the request shown with each host question.
#[derive(Debug, Clone)]
pub struct HostAskContext {
    /// The run the questions belong to (R-A9).
    pub run_id: RunId,
    /// The command's argv.
    pub argv: Vec<String>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// The permissions it runs with.
    pub needs: NeededPermissions,
}

/// `hosts = […]`: the remembered hosts file.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RememberedHosts {
    #[serde(default)]
    hosts: Vec<String>,
}

/// `$XDG_CONFIG_HOME/cordon/network-hosts.toml` (or `~/.config/cordon/…`): hosts approved
/// with "remember" at a prompt, as `host:port`.
pub fn remembered_hosts_path() -> Option<PathBuf> {
    crate::trust::user_rules_path().map(|p| p.with_file_name("network-hosts.toml"))
}

/// The remembered `host:port` entries of `path` (none when it is missing, a symbolic
/// link, over 1 MiB or not valid: a broken file never approves anything).
pub fn remembered_hosts(path: &Path) -> Vec<String> {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Vec::new();
    };
    if !m.is_file() || m.len() > 1024 * 1024 {
        return Vec::new();
    }
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| toml::from_str::<RememberedHosts>(&t).ok())
        .map(|r| r.hosts)
        .unwrap_or_default()
}

/// The remembered `host:port` entries of this user's file ([`remembered_hosts_path`]), for
/// `explain` and the environment_context (none without a home).
pub fn remembered_hosts_of_user() -> Vec<String> {
    remembered_hosts_path()
        .map(|p| remembered_hosts(&p))
        .unwrap_or_default()
}

/// Adds `entry` (`host:port`) to the remembered hosts file `path` (atomic, 0600, never
/// through a symbolic link).
///
/// Errors: the existing file is not valid, or the write fails.
pub fn remember_host(path: &Path, entry: &str) -> Result<(), String> {
    let mut r = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(format!("{} is a symbolic link", path.display()))
        }
        Ok(_) => {
            let t =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            toml::from_str::<RememberedHosts>(&t).map_err(|e| format!("{}: {e}", path.display()))?
        }
        Err(_) => RememberedHosts::default(),
    };
    if !r.hosts.iter().any(|h| h == entry) {
        r.hosts.push(entry.to_string());
    }
    let body = format!(
        "# Hosts approved with \"remember\" at cordon's prompt (managed network).\n{}",
        toml::to_string(&r).map_err(|e| e.to_string())?
    );
    crate::session::write_private(path, body.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn host_key(q: &HostAsk, ctx: &HostAskContext) -> CacheKey {
    CacheKey {
        command: vec![
            "network-host:".to_string(),
            format!("{}:{}", q.host, q.port),
        ],
        cwd: ctx.cwd.clone(),
        needs: ctx.needs.clone(),
    }
}

impl Session {
    /// Whether a running command's unknown hosts are put to this session's approver (see
    /// the module docs); otherwise they are denied at once.
    pub fn asks_hosts(&self) -> bool {
        matches!(
            self.mode,
            ApprovalMode::Untrusted | ApprovalMode::OnRequest | ApprovalMode::OnFailure
        ) && self.approver.answers_hosts()
    }

    /// Answers the proxy's question `q` about an unknown host for the run `ctx` (module
    /// docs). The decision is recorded in the scope's decision log; the proxy logs it and
    /// names it as the rule.
    pub fn ask_host(&mut self, ctx: &HostAskContext, q: &HostAsk) -> HostReply {
        let entry = format!("{}:{}", q.host, q.port);
        let reply = |allow: bool, rule: String| HostReply {
            id: q.id,
            allow,
            rule,
        };
        let key = host_key(q, ctx);
        if let Some(hit) = self.cache.lookup(&key) {
            let rule = format!("approved for this session ({})", hit.approval_id);
            self.scope.record(
                DecisionKind::NetworkHost,
                Some(&ctx.run_id),
                None,
                format!("{entry}: session cache hit: {rule}"),
            );
            return reply(true, rule);
        }
        let remembered_file = remembered_hosts_path();
        if let Some(f) = &remembered_file {
            if remembered_hosts(f).contains(&entry) {
                let rule = format!("remembered in {}", f.display());
                self.scope.record(
                    DecisionKind::NetworkHost,
                    Some(&ctx.run_id),
                    None,
                    format!("{entry}: {rule}"),
                );
                return reply(true, rule);
            }
        }
        if !self.asks_hosts() {
            // The proxy's own rule, so the hint still says how to allow it.
            return reply(false, "not in network.allow".into());
        }
        let req = ReviewableRequest {
            run_id: ctx.run_id.clone(),
            approval_id: ApprovalId::new(),
            kind: RequestKind::NetworkHost {
                host: q.host.clone(),
                port: q.port,
                proto: q.proto.clone(),
            },
            argv: ctx.argv.clone(),
            segments: Vec::new(),
            opaque: Vec::new(),
            cwd: ctx.cwd.clone(),
            hosts: vec![entry.clone()],
            needs: ctx.needs.clone(),
            matched: vec!["not in network.allow (no rule names it)".into()],
            reason: format!(
                "the running command connects to {entry} ({}); no network.allow or \
                 network.deny rule names it",
                q.proto
            ),
            remember: None,
            warning: None,
            justification: None,
            session_answer_kept: true,
            cwd_elsewhere: false,
        };
        self.scope.issue(&ctx.run_id, &req.approval_id);
        self.prompts += 1;
        let r = self.approver.ask(&req);
        let by = r.by.clone();
        let who = crate::approver::by_phrase(&by);
        let answer = match self.scope.accept(&ctx.run_id, &r) {
            Ok(a) if req.allowed_answers().contains(&a) => a,
            Ok(_) => Answer::Deny,
            Err(late) => {
                return reply(false, format!("{late}"));
            }
        };
        let rule = match answer {
            Answer::Once => format!("approved once by {who}"),
            Answer::Session => {
                let mut rule = format!("approved for this session by {who}");
                if let Err(e) = self.cache.insert(CacheEntry {
                    key,
                    approval_id: req.approval_id.to_string(),
                    by: by.clone(),
                }) {
                    rule.push_str(&format!(" (not saved: {e})"));
                }
                rule
            }
            Answer::RememberRule => match &remembered_file {
                Some(f) => match remember_host(f, &entry) {
                    Ok(()) => format!("approved by {who}; remembered in {}", f.display()),
                    Err(e) => format!("approved once by {who}; not remembered: {e}"),
                },
                None => format!("approved once by {who} (no config directory to remember it in)"),
            },
            // A note that already says it was denied is the whole reason (nu21 K4: "denied
            // by mcp client: denied through the MCP client …").
            Answer::Deny | Answer::Abort => match r.note {
                Some(n) if n.starts_with("denied") => n,
                Some(n) => format!("denied by {who}: {n}"),
                None => format!("denied by {who}"),
            },
        };
        self.scope.record(
            DecisionKind::NetworkHost,
            Some(&ctx.run_id),
            Some(&req.approval_id),
            format!("{entry}: {rule}"),
        );
        reply(answer.approves(), rule)
    }
}
