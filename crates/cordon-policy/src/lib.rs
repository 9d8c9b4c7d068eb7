//! # cordon-policy
//!
//! The permission profile and every decision over it that needs no OS call:
//!
//! - [`profile`]: the intent — [`PermissionProfile`] (R-P1, R-P2, R-P4, R-P5).
//! - [`config`]: named profiles from TOML, errors with file and line.
//! - [`paths`] + [`resolve`]: symbolic roots, normalisation (`..`, symlinks, both spellings),
//!   most-specific-wins, protected paths (R-P2, R-P3) → [`ResolvedProfile`].
//! - [`selection`]: `should_sandbox` (R-S1), `platform_sandbox` (R-S2), `select_initial`
//!   (R-S3) and the status triple (R-S5).
//! - [`env`]: secret scrubbing (R-L4).
//! - [`payload`]: the versioned helper payload (R-T3).
//!
//! Questions about the disk go through the [`paths::FsView`] trait, implemented for the host
//! by `cordon-sandbox` and in memory by [`paths::MemFs`].
#![deny(missing_docs)]

pub mod caches;
pub mod config;
mod deny;
pub mod env;
mod git;
pub use git::looks_like_git_dir;
pub mod git_index;
pub mod git_state;
pub mod gitconfig;
pub mod hosts;
pub mod limits;
pub mod locations;
pub mod login_files;
pub mod network;
pub mod paths;
pub mod payload;
pub mod profile;
pub mod resolve;
pub mod selection;
pub mod stripped;
pub mod text;
mod tmpdir;
pub mod view;

pub use caches::{CacheMode, CacheSpec, ResolvedCache, KNOWN_CACHES};
pub use config::{select_profile, Config, ConfigError};
pub use network::{container_engine_socket, NetworkRules};
pub use paths::{FileKind, FsView, MemFs};
pub use payload::{HelperPayload, PayloadError, PayloadText};
pub use profile::{
    Access, EnvPolicy, FilesystemPolicy, FsEntry, NetworkPolicy, OnUnavailable, PermissionProfile,
    ProfileKind, PROFILE_FORMAT_VERSION,
};
pub use resolve::{
    find_workspace, git_dir_protected, global_git_code_paths, has_marker, nested_git_entries,
    nested_git_entries_within, repository_at, repository_code_paths, resolve, resolve_for_command,
    EntryOrigin, NestedScan, ResolveContext, ResolveError, ResolvedEntry, ResolvedFilesystem,
    ResolvedProfile, CD_INTO_PROJECT, CREATED_SCAN_DEPTH, NESTED_GIT_REASON, NESTED_SCAN_CAP,
    NESTED_SCAN_DEPTH, NESTED_SKIP, PLACEHOLDER_NOTE, PLACEHOLDER_NOTE_TEXT,
    READ_ONLY_CODE_DIR_ADVICE, READ_ONLY_WORKSPACE_ADVICE, UNCONFINED_PROFILE_ADVICE,
};
pub use selection::{
    platform_sandbox, select_initial, should_sandbox, should_sandbox_rule, Backend, Fact, Os,
    PlatformOptions, SandboxPreference, SandboxStatus, Selection, ShouldSandboxRule,
};
pub use view::{Seen, TopView};
pub mod additional;
pub mod context;
pub mod explain;
pub use additional::{
    effective_profile, intersect, merge, AdditionalPermissions, NonEmptyGrant, Recorded,
};
pub use context::{
    environment_context, environment_context_remembering, environment_context_with, Detail,
    DEFAULT_APPROVAL_MODE,
};
pub use explain::{
    explain, explain_judged, Decider, Explanation, FilesystemSummary, NetworkExplanation,
    PathExplanation, SandboxExplanation, HOST_READ_ONLY_MOUNT,
};
