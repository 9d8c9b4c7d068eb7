//! Loading the exec policy (R-A3) from the config file's `[[rules]]` and `--rules` files,
//! and evaluating a command against it.

use crate::cli::RulesArgs;
use anyhow::{Context, Result};
use cordon_execpolicy::{DecisionRecord, EvalContext, Policy};
use cordon_policy::{Access, Config, FilesystemPolicy};
use cordon_sandbox::CommandRequest;

/// The merged policy: config rules first, then each `--rules` file. Rule examples are
/// checked while loading; a failing example is an error naming the rule and file.
pub fn load(config: Option<&Config>, args: &RulesArgs) -> Result<Policy> {
    let mut layers = Vec::new();
    if let Some(c) = config {
        if let Some(rules) = &c.rules {
            layers.push(Policy::from_toml_value(
                rules,
                &c.path.display().to_string(),
            )?);
        }
    }
    for f in &args.rules {
        let text = std::fs::read_to_string(f)
            .with_context(|| format!("cannot read rules file {}", f.display()))?;
        layers.push(Policy::from_toml_str(&text, &f.display().to_string())?);
    }
    Ok(Policy::merge_layers(layers))
}

/// Evaluates the command of `req` (its argv, cwd, home and profile).
pub fn evaluate(policy: &Policy, req: &CommandRequest) -> DecisionRecord {
    // Deny-read entries are only enforced by the sandbox: they block a rule's bypass. The
    // profile's own entries say whether there are any (resolution only adds protected
    // paths, which are read-only, never denied).
    let has_deny_read = match req.profile.effective_filesystem() {
        FilesystemPolicy::Restricted {
            default, entries, ..
        } => default == Access::Deny || entries.iter().any(|e| e.access == Access::Deny),
        FilesystemPolicy::Unrestricted => false,
    };
    let mut eval = EvalContext::default()
        .with_deny_read(has_deny_read)
        .with_cwd(req.cwd.to_string_lossy());
    if let Some((_, h)) = req.env.iter().find(|(k, _)| k == "HOME") {
        eval = eval.with_home(h.as_str());
    }
    policy.evaluate(&req.argv, &eval)
}
