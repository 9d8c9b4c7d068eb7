//! Fixtures shared by the integration tests.
use cordon_policy::ResolveContext;

/// A context at `cwd` with `$HOME` = `home`, no `$TMPDIR` and no profile files.
pub fn ctx_at(cwd: &str, home: &str) -> ResolveContext {
    ResolveContext {
        cwd: cwd.into(),
        home: Some(home.into()),
        tmpdir: None,
        profile_files: vec![],
        ..Default::default()
    }
}
