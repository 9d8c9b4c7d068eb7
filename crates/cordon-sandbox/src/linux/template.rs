//! Prepared sandbox templates for `cordon serve` (issue 12 item 2).
//!
//! A template is a process that did the expensive, command-independent part of rung 1
//! once: a user namespace with the identity mapped, a mount namespace with the whole mount
//! plan built and pivoted into. Each command is forked from it and then gets, exactly as on
//! the cold path, its own pid, ipc and (restricted network) net namespaces, a fresh `/tmp`,
//! `/proc`, `/dev/shm` and `/dev/pts` ([`mounts::refresh_per_command`]), rlimits,
//! `no_new_privs`, dropped capabilities, Landlock, seccomp, the unix-socket guard and
//! denial records, and its report on the same descriptor with the same parser.
//!
//! ```text
//! cordon serve ─ T0 (host namespaces: placeholders; dies with the server)
//!   │             └─ T (user+mount+pid+ipc ns: mount plan built; pid 1; one per key)
//!   │                  └─ P (per command, forked ahead of it with the spares: the
//!   │                       │  handler protocol of `server.rs`, then the helper itself,
//!   │                       │  `helper::main_prepared`; its last act sends the status)
//!   │                       └─ I (new pid+mount+ipc(+net) ns: per-command mounts,
//!   │                              confinement) ─ the command
//!   └─ H (per connection, forked ahead of it; host namespaces: relays the request to P
//!          and the status back; the pid the client signals; signals reach P through a
//!          pidfd)
//! ```
//!
//! Keyed by the mount plan itself (the serialized [`Layout`], which the profile, the
//! workspace and the tmpfs limits decide); checked per request against the host: every
//! path the plan mounts is `lstat`ed and must still be the entry the template saw (device,
//! inode, type, or still absent), else the template is replaced. Templates end when idle
//! ([`IDLE`]), when the server's binary changes, and with the server.
//!
//! What routing computes from a profile (plan, mount plan, eligibility, limits: [`Routing`])
//! is a function of the profile's text, so the server keeps it per text and a template
//! keeps the one it was made for: a command whose profile text is one seen before is not
//! parsed, planned or checked again, neither by the server nor by the template's handler
//! (issue 12). The host identity check above still runs per command, and a template is
//! only ever made from a routing computed for the request in hand.
//!
//! Once the commands forked since the last spares have ended (or have run for
//! `SPARES_AFTER`, 50 ms), T makes the next command's cover watch and network namespace
//! ([`make_spares`]) and forks the next command's handler P with them ([`SpareHandler`]):
//! each is handed to exactly one handler P (T closes its copy right after the fork), so a
//! command never shares one with another; a watch that queued a
//! cover's loss is set aside for a fresh one, and without a spare the command makes its
//! own as before.
//!
//! A template whose plan has copy-on-write cache overlays holds a slot of the workspace's
//! layers for its whole life: one of the template slots
//! ([`super::caches::claim_template_slot`]), claimed by the server before it makes the
//! template, never one of the slots runs use. With none free no template is made: the
//! command takes the per-command helper (which claims a run's slot, as the cold path
//! does), and the workspace's least recently used template is ended so that a later
//! command gets one. The template's built plan names its slot; the plan it is keyed and
//! checked by does not ([`Prepared::planned`]), so routing and the check agree.
//!
//! Whatever the server decided, the template's per-command handler P checks the request
//! again before anything starts ([`Prepared::accept`]): a request that does not fit is
//! answered `unfit`, and the server's handler runs it on the per-command helper instead —
//! never refused for the template's sake (breaker: the fifth template of a workspace got
//! no cache slot, its plan differed from the one routed by, and its commands exited 125).
//!
//! Only commands whose per-run state can be recreated per fork use a template; the rest
//! are sent back to the client's cold path (with `--no-templates`, every command takes the
//! server's per-command helper) ([`eligible`] says why): a `.git/config` copy,
//! a managed network or `network.local` (the proxy), `network.unix_sockets`, a terminal
//! on stdio, rung 2, and any mount beneath the per-command places. The run's cgroup (pids
//! and memory limits) is per command: created on the host by H, joined through
//! descriptors H opened ([`super::limits::Cgroup::join_files`]: init moves itself in on
//! cgroup v1, P — the helper — moves init in on v2), removed by H after the run.

use super::caches::{Unclaimed, TEMPLATE_SLOTS};
use super::features::{probe_fast, LinuxFeatures};
use super::mounts::{self, Layout, StepKind};
use super::plan::{plan, LinuxPlan, Rung};
use super::{process, sys};
use cordon_policy::limits::ResolvedLimits;
use cordon_policy::{HelperPayload, PayloadText, ResolvedProfile};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A template unused this long is ended (its running commands finish first).
pub const IDLE: Duration = Duration::from_secs(300);
/// Most templates kept at once (the least recently used is ended first).
const MAX_TEMPLATES: usize = 16;
/// How long the server waits for a new template's root to be built.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest payload read from a request's memfd.
const PAYLOAD_LIMIT: u64 = 64 * 1024 * 1024;

/// What a template holds for the commands forked from it (inherited by the fork).
pub(crate) struct Prepared {
    /// The host's features, probed by the server when the template was made.
    pub(crate) features: LinuxFeatures,
    /// The mount plan the template built: [`Prepared::planned`] with its cache overlays'
    /// state in the template's slot.
    pub(crate) layout: Layout,
    /// The mount plan a command must have to be forked from this template: the one the
    /// server keyed it by ([`layout_of`] the payload, no slot claimed).
    planned: Layout,
    notes: Vec<String>,
    warnings: Vec<String>,
    read_only_caches: Vec<(PathBuf, String)>,
    /// In P: the run's cgroup and its join descriptors (opened on the host by H,
    /// [`super::limits::Cgroup::join_files`]), through which init gets in
    /// ([`Prepared::set_cgroup`]).
    cgroup: std::cell::RefCell<Option<(super::limits::Cgroup, Vec<OwnedFd>)>>,
    /// In P: the command's payload as P read and checked it ([`Prepared::accept`]),
    /// with the plan it was checked by: the helper runs exactly this one, without planning
    /// or checking it again ([`Prepared::take_payload`]).
    accepted: std::cell::RefCell<Option<(HelperPayload, LinuxPlan)>>,
    /// The covers ([`Layout::covers`]) that were mount points once the template's root was
    /// built: each must still be one when a command is forked from it.
    covered: Vec<super::cover_watch::Covered>,
    /// In P: the watch of the covers P set up before checking them
    /// ([`Prepared::accept`]); the helper waits on it ([`Prepared::take_cover_watch`]).
    cover: std::cell::RefCell<Option<super::cover_watch::CoverWatch>>,
    /// In P: a duplicate of the taken cover watch's descriptor, open until P exits
    /// ([`Prepared::take_cover_watch`]).
    cover_copy: std::cell::RefCell<Option<OwnedFd>>,
    /// In P: the connection to the server's handler H on which the status goes
    /// ([`Prepared::set_handler_conn`]); its hang-up (H killed: the client gone, its
    /// `--timeout`) ends the command.
    handler_conn: std::cell::Cell<Option<RawFd>>,
    /// What each command's cover watch watches ([`Prepared::layout`]'s), computed once.
    watch_plan: super::cover_watch::WatchPlan,
    /// In T: the next command's cover watch, made ahead of it ([`make_spares`]); taken by
    /// that command's handler P ([`Prepared::accept`]).
    spare_watch: std::cell::RefCell<Option<super::cover_watch::CoverWatch>>,
    /// In T: the next command's network namespace, made ahead of it ([`make_spares`]); in
    /// P, taken for init ([`Prepared::take_spare_net`]).
    spare_net: std::cell::RefCell<Option<OwnedFd>>,
    /// In T: the next command's mount namespace, a copy of the template's built root made
    /// ahead of it ([`make_spares`]); in P, taken for init ([`Prepared::take_spare_mnt`]).
    spare_mnt: std::cell::RefCell<Option<OwnedFd>>,
    /// In P: a socket pair made before it became the helper ([`Prepared::hold_for_run`]);
    /// the helper sends init's mount namespace into it ([`Prepared::hold_mount_namespace`]), and
    /// the descriptor stays in flight, referenced, until P exits.
    ns_hold: std::cell::RefCell<Option<(OwnedFd, OwnedFd)>>,
    /// The routing of the command the template was made for ([`Routing`]): a command
    /// whose profile text is the same is accepted without parsing or checking its
    /// profile again ([`Prepared::accept`]).
    seed: std::rc::Rc<Routing>,
}

impl Prepared {
    /// In P (a fork of the template, single-threaded): the cgroup H made for this command
    /// and one join descriptor per directory of it ([`super::limits::Cgroup::join_files`]).
    pub(crate) fn set_cgroup(&self, cg: super::limits::Cgroup, procs: Vec<OwnedFd>) {
        *self.cgroup.borrow_mut() = Some((cg, procs));
    }

    /// The cgroup H made for this command, if the host gave one, with its join
    /// descriptors: init gets in through them as on the cold path, and the helper runs the
    /// watchdog on it; never created inside the template.
    pub(crate) fn take_cgroup(&self) -> Option<(super::limits::Cgroup, Vec<OwnedFd>)> {
        self.cgroup.borrow_mut().take()
    }

    /// In P (a fork of the template, before it answers the server's handler): whether the
    /// command whose payload is on `payload` (a memfd, read without moving its offset) can
    /// be forked from this template ([`check_fits`], with the template's features and the
    /// caller's disabled layers, as the helper will compute them). `Ok`: the payload is
    /// kept for the helper ([`Prepared::take_payload`]), so what runs is what was checked.
    /// `Err`: why not; nothing has started, and the server's handler runs the command on
    /// the per-command helper.
    pub(crate) fn accept(&self, payload: &OwnedFd) -> Result<(), String> {
        let text = read_payload_text(payload)?;
        let (payload, plan) = if self.seed.reusable_for(&text) {
            // The profile the server routed and made this template for, byte for byte:
            // its plan and fit were computed from it then (same features, no layer
            // disabled), so they are taken, not computed again.
            let plan = self.seed.plan.clone();
            (text.with_profile(self.seed.profile.clone()), plan)
        } else {
            let payload = text.finish().map_err(|e| e.to_string())?;
            let mut features = self.features.clone();
            features.disable_by(
                &payload.disabled_layers,
                "the caller (payload disabled_layers)",
            );
            let plan = plan(&payload.profile, &features).map_err(|e| e.to_string())?;
            check_fits(&payload, &plan, self)?;
            (payload, plan)
        };
        // The template's covers were built once; the server's identity check of the host
        // ran before any watch existed. So: watch first (the paths resolve here to the
        // same host directories), then check every cover is still mounted — a host
        // replacement before the watch shows as a missing mount point, one after it as
        // an event. Either way this command takes the per-command helper.
        //
        // The watch the template made ahead for this command ([`make_spares`]) serves as
        // one made now when nothing it queued since took a cover away (it watches the same
        // directories, from earlier); otherwise a fresh one is made here, as without it.
        // A spare that saw a cover go is not set aside for a fresh watch, which would not
        // see what already happened (attack pass 143 F2: a covered directory swapped with
        // a protected one passed the fresh watch's check): the command takes the
        // per-command helper (and the server's identity check, seeing the host changed,
        // replaces the template for the next one).
        let spare = match self.spare_watch.borrow_mut().take() {
            Some(mut w) => match w.poll().map(str::to_string) {
                None => Some(w),
                Some(lost) => {
                    // Left open until this process exits: closing the last descriptor of
                    // an inotify instance waits for the kernel (`CoverWatch::release`).
                    std::mem::forget(w);
                    return Err(lost);
                }
            },
            None => None,
        };
        // A spare's absent paths were checked after its watch was made ([`make_spares`]),
        // and its poll above saw nothing since: they are still absent.
        let mut watch = match spare {
            Some(w) => Some(w),
            None => super::cover_watch::CoverWatch::start_planned(&self.watch_plan)?,
        };
        if let Some(w) = watch.as_mut() {
            // Above every number the helper puts a client's descriptor on (a spare is
            // already).
            w.move_above(super::server::MAX_TARGET_FD)
                .map_err(|e| format!("moving the cover watch's descriptor: {e}"))?;
            w.check_still_mounted(&self.covered)?;
        }
        *self.cover.borrow_mut() = watch;
        *self.accepted.borrow_mut() = Some((payload, plan));
        Ok(())
    }

    /// In P, before it closes what it does not keep: the connection to the server's
    /// handler ([`Prepared::set_handler_conn`]), the cover watch's descriptor, the
    /// pair that holds init's mount namespace ([`Prepared::hold_for_run`]) and the
    /// network and mount namespaces made ahead for the command
    /// ([`Prepared::take_spare_net`], [`Prepared::take_spare_mnt`]).
    pub(crate) fn kept_fds(&self) -> Vec<RawFd> {
        let mut v: Vec<RawFd> = self
            .cover
            .borrow()
            .as_ref()
            .map(|w| w.raw_fd())
            .into_iter()
            .collect();
        v.extend(self.spare_net.borrow().as_ref().map(|f| f.as_raw_fd()));
        v.extend(self.spare_mnt.borrow().as_ref().map(|f| f.as_raw_fd()));
        if let Some((a, b)) = self.ns_hold.borrow().as_ref() {
            v.extend([a.as_raw_fd(), b.as_raw_fd()]);
        }
        v.extend(self.handler_conn.get());
        v
    }

    /// The covers the template checks for each command (in init: looked at again after
    /// the command, [`super::cover_watch::record_covers`]).
    pub(crate) fn covered_paths(&self) -> Vec<PathBuf> {
        self.covered.iter().map(|c| c.path.clone()).collect()
    }

    /// In P, before it becomes the helper: a socket pair above every number a client's
    /// descriptor is put on, both ends kept ([`Prepared::kept_fds`]) until P exits. The
    /// helper sends init's mount namespace into it ([`Prepared::hold_mount_namespace`]), so
    /// the last reference to the command's mount tree is dropped when P exits — after the
    /// status went out — instead of when init exits (tearing down a mount namespace waits
    /// for an RCU grace period: ~0.2-0.3 ms of each command's end, issue 12). Without a
    /// pair (no descriptor left), init's exit does it, as before.
    pub(crate) fn hold_for_run(&self) {
        let above =
            |fd: OwnedFd| sys::dup_cloexec_above(fd.as_raw_fd(), super::server::MAX_TARGET_FD);
        let pair = seqpacket_pair().and_then(|(a, b)| Ok((above(a)?, above(b)?)));
        *self.ns_hold.borrow_mut() = pair.ok();
    }

    /// In P (the helper), right after init was cloned as `pid`: sends init's mount
    /// namespace (from its pidfd, `PIDFD_GET_MNT_NAMESPACE`, Linux 6.11) into the pair
    /// ([`Prepared::hold_for_run`]), whose ends stay open until P exits. Best effort: on an
    /// older kernel, or when init already ended, nothing is held and init's exit tears the
    /// namespace down, as before. Holding it changes no guarantee: init's exit still waits
    /// for every process of the command's pid namespace, and nothing enters a namespace
    /// through a descriptor in flight.
    pub(crate) fn hold_mount_namespace(&self, pid: libc::pid_t) {
        let hold = self.ns_hold.borrow();
        let Some((held, _)) = hold.as_ref() else {
            return;
        };
        if let Ok(ns) = sys::pidfd_open(pid).and_then(|p| sys::pidfd_mount_namespace(&p)) {
            let _ = send_fd(held, ns.as_raw_fd());
        }
    }

    /// In P: the network namespace the template made for this command ahead of time
    /// ([`make_spares`]), once: a new, empty namespace no process has been in, which init
    /// enters with `setns` instead of cloning one (issue 12: a new network namespace is
    /// ~0.4 ms of the launch). `None`: none was ready; init clones its own.
    pub(crate) fn take_spare_net(&self) -> Option<OwnedFd> {
        self.spare_net.borrow_mut().take()
    }

    /// In P: the mount namespace the template made for this command ahead of time
    /// ([`spare_mount_namespace`]), once: a copy of the template's built root with the
    /// command's own mounts but `/proc` already made, that no process has been in, which
    /// init enters with `setns` instead of cloning one (issue 12: copying the template's
    /// ~100 mounts was ~0.6 ms of the handler's clone, measured with perf). `None`: none
    /// was ready; init clones its own and makes every mount of its own.
    pub(crate) fn take_spare_mnt(&self) -> Option<OwnedFd> {
        self.spare_mnt.borrow_mut().take()
    }

    /// In P, before it becomes the helper: the descriptor (above every target, kept open
    /// by P) of its connection to the server's handler H. The helper ends the command when
    /// H hangs up ([`Prepared::handler_conn`]): H is killed when its client is gone or its
    /// `--timeout` passed, and the command must not outlive that.
    pub(crate) fn set_handler_conn(&self, fd: RawFd) {
        self.handler_conn.set(Some(fd));
    }

    /// In P (the helper): the connection to H whose hang-up ends the command
    /// ([`Prepared::set_handler_conn`]).
    pub(crate) fn handler_conn(&self) -> Option<RawFd> {
        self.handler_conn.get()
    }

    /// In P (the helper): the cover watch P set up and checked ([`Prepared::accept`]),
    /// once. A duplicate of its descriptor stays open until P exits, after it has sent the
    /// run's status, so the helper's close of the watch is never the last one (that close
    /// waits for the kernel: [`super::cover_watch::CoverWatch::release`]). Without a
    /// duplicate (no descriptor left) the watch is released as on the cold path.
    pub(crate) fn take_cover_watch(&self) -> Option<super::cover_watch::CoverWatch> {
        let mut w = self.cover.borrow_mut().take()?;
        if let Ok(copy) = sys::dup_cloexec_above(w.raw_fd(), super::server::MAX_TARGET_FD) {
            *self.cover_copy.borrow_mut() = Some(copy);
            w.held_by_parent();
        }
        Some(w)
    }

    /// In P: the payload it checked ([`Prepared::accept`]) and the plan it was checked
    /// with, once: the helper runs exactly what was checked, without planning or checking
    /// it again (issue 12: the payload's plan and mount plan were computed three times per
    /// command).
    pub(crate) fn take_payload(&self) -> Option<(HelperPayload, LinuxPlan)> {
        self.accepted.borrow_mut().take()
    }

    /// What [`mounts::build`] returned for the template, for one command's report (no
    /// host terminal: a terminal on stdio is not forked from a template; no `.git/config`
    /// copies: neither).
    pub(crate) fn built(&self) -> mounts::Built {
        mounts::Built {
            host_devpts: None,
            notes: self.notes.clone(),
            read_only_caches: self.read_only_caches.clone(),
            warnings: self.warnings.clone(),
            git_configs: Vec::new(),
            skipped: Vec::new(),
        }
    }
}

/// The mount plan the cold helper would build for `payload` (tmpfs sizes included).
fn layout_of(payload: &HelperPayload) -> Result<Layout, String> {
    let limits = super::limits::resolve(&payload.profile)?;
    let mut layout = mounts::layout_for(&payload.profile);
    super::limits::size_tmpfs(&mut layout, limits.tmpfs_bytes);
    Ok(layout)
}

/// Why a command with a writable `.git/config` copy (`path`) takes the per-command helper.
fn git_config_is_per_command(path: &Path) -> String {
    format!(
        "{}: the writable .git/config copy is per command",
        path.display()
    )
}

/// What [`Templates::route`] computes for a payload whose profile text is `text`, with the
/// server's `features` (no layer disabled by the payload, else [`eligible`] refuses):
/// `Err` says why the command takes the per-command helper. A function of the profile and
/// the features alone (no host state is read), so it is kept per text.
fn routing(
    payload: HelperPayload,
    text: Vec<u8>,
    features: &LinuxFeatures,
) -> Result<Routing, String> {
    // A repository's `.git/config` copy is per command ([`eligible`]): said before the
    // plan and mount plan are computed for nothing.
    if let Some(p) = cordon_policy::gitconfig::brokered_configs(&payload.profile).first() {
        return Err(git_config_is_per_command(p));
    }
    let mut features = features.clone();
    features.disable_by(
        &payload.disabled_layers,
        "the caller (payload disabled_layers)",
    );
    let plan = plan(&payload.profile, &features).map_err(|e| e.to_string())?;
    let layout = layout_of(&payload)?;
    eligible(&payload, &plan, &layout)?;
    let limits = super::limits::resolve(&payload.profile)?;
    let key = serde_json::to_vec(&layout).map_err(|e| e.to_string())?;
    Ok(Routing {
        text,
        profile: payload.profile,
        plan,
        layout,
        key,
        limits,
    })
}

/// Whether a command with this payload, plan and mount plan may be forked from a
/// template; `Err` says why not (it then takes the server's per-command helper).
pub(crate) fn eligible(
    payload: &HelperPayload,
    plan: &LinuxPlan,
    layout: &Layout,
) -> Result<(), String> {
    if plan.rung != Rung::Namespaces {
        return Err("not rung 1".into());
    }
    if !payload.disabled_layers.is_empty() {
        // The template was built with every layer; what the caller disabled must be what
        // the report says was applied (breaker: planned had no Landlock, applied had it).
        return Err("the caller disabled layers (CORDON_DISABLE_LAYERS)".into());
    }
    if plan.proxy_relay || !plan.local_forwards.is_empty() {
        return Err("a managed network or network.local needs a per-command proxy".into());
    }
    if !plan.denial_records
        && layout.steps.iter().any(|s| {
            matches!(
                s.kind,
                StepKind::Bind {
                    protected: true,
                    ..
                }
            )
        })
    {
        // A template checks its covered files' hard links as one whose commands have
        // init's hard-link check (`mounts::check_hard_links`).
        return Err("no denial records: covered hard links are checked per command".into());
    }
    if !payload.profile.unix_sockets.is_empty() {
        return Err("network.unix_sockets are pinned in the host's view per command".into());
    }
    let places = mounts::per_command_places(layout);
    for s in &layout.steps {
        if s.kind == StepKind::GitConfig {
            return Err(git_config_is_per_command(&s.path));
        }
        // (A tool home missing on the host, [`StepKind::CacheDir`], is a fresh tmpfs per
        // command with the template's cache binds in it: `mounts::refresh_per_command`.)
        if let StepKind::Overlay { name, .. } = &s.kind {
            if cordon_policy::caches::kept_in_layer(name).is_some() {
                // A whole tool home's layer is cleared of everything but its caches before
                // each mount (A4): a template would keep one command's `bin/cargo` or
                // `config.toml` mounted for the next.
                return Err(format!(
                    "{}: a whole tool home's layer is cleared per command",
                    s.path.display()
                ));
            }
        }
        let own = matches!(
            s.kind,
            StepKind::PrivateTmp { .. } | StepKind::Dev { .. } | StepKind::Proc
        );
        if !own
            && s.kind.is_tree()
            && places
                .iter()
                .any(|p| s.path.starts_with(p) || p.starts_with(&s.path))
        {
            return Err(format!(
                "{} meets a place mounted afresh per command",
                s.path.display()
            ));
        }
    }
    Ok(())
}

/// Whether the command's payload may be forked from `prepared`: eligible, and with
/// exactly the mount plan the template was keyed by ([`Prepared::planned`]: what
/// [`Templates::route`] computed for it, before the template's cache slot renamed its
/// overlays' state) — the same function of the same payload, so what the server routed by
/// is what is checked here. Used by P before anything starts ([`Prepared::accept`]) and
/// by the helper where the plan is used.
pub(crate) fn check_fits(
    payload: &HelperPayload,
    plan: &LinuxPlan,
    prepared: &Prepared,
) -> Result<(), String> {
    let layout = layout_of(payload)?;
    eligible(payload, plan, &layout)?;
    if layout != prepared.planned {
        return Err("its mount plan is not the template's".into());
    }
    Ok(())
}

/// When the file at `m` was made: its birth time (`statx` `btime`), which content changes
/// never move — unlike the change time, which a directory gets for every entry added, so
/// a template keyed on it would be rebuilt after each command that writes its workspace.
/// Without a birth time: a file's change time, nothing for a directory.
fn born(m: &std::fs::Metadata) -> (i64, i64) {
    use std::os::unix::fs::MetadataExt;
    match m
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
    {
        Some(d) => (d.as_secs() as i64, d.subsec_nanos() as i64),
        None if !m.is_dir() => (m.ctime(), m.ctime_nsec()),
        None => (0, 0),
    }
}

/// What the host shows at every path a mount plan mounts: (device, inode, file type,
/// birth time) or absent, and for the files copied with credentials removed also (size,
/// mtime). A template is used only while this is unchanged. The birth time is what tells
/// a *new* file from the old one when the filesystem reuses the deleted file's inode
/// number (breaker: a credential file rewritten — deleted and created, or renamed over —
/// got the old inode number back, and the template's mask stayed on the deleted file, so
/// the new secret was readable).
#[derive(Debug, PartialEq, Eq)]
struct Identity(Vec<Option<PathFacts>>);

/// What [`Identity`] keeps per path: (device or size, inode or mtime seconds, file type or
/// mtime nanoseconds, birth seconds, birth nanoseconds).
type PathFacts = (u64, u64, u32, i64, i64);

impl Identity {
    fn of(layout: &Layout) -> Identity {
        use std::os::unix::fs::MetadataExt;
        let stat = |p: &Path| {
            std::fs::symlink_metadata(p).ok().map(|m| {
                let (a, b) = born(&m);
                (m.dev(), m.ino(), m.mode() & libc::S_IFMT, a, b)
            })
        };
        let mut v = Vec::new();
        for s in &layout.steps {
            if s.kind.is_tree() || s.kind == StepKind::CreateDir {
                v.push(stat(&s.path));
            }
            if let StepKind::Overlay { state, .. } = &s.kind {
                v.push(stat(state));
            }
            if let StepKind::Stripped { .. } = &s.kind {
                // The copy is made from the file's content: an edit in place counts.
                v.push(std::fs::symlink_metadata(&s.path).ok().map(|m| {
                    let (a, b) = born(&m);
                    (m.size(), m.mtime() as u64, m.mtime_nsec() as u32, a, b)
                }));
            }
        }
        Identity(v)
    }
}

/// The identity of a file: device, inode, size, modification time (s, ns).
type FileId = (u64, u64, u64, i64, i64);

/// The [`FileId`] of `p`, following symlinks.
fn file_id(p: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).ok()?;
    Some((m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
}

/// One template, seen from the server.
struct Entry {
    /// The server's end of the template's control socket (`SOCK_SEQPACKET`): one
    /// connection descriptor per message. Dropping it ends the template once its
    /// commands are done.
    ctl: OwnedFd,
    identity: Identity,
    used: Instant,
    /// The workspace key directory whose template slot it holds
    /// ([`super::caches::overlay_key`]).
    workspace: Option<PathBuf>,
    /// With cache overlays (`workspace`): the read end of a pipe per command routed here,
    /// whose write end that command's handler holds ([`Templates::route`]): hung up once
    /// the command is done.
    running: Vec<OwnedFd>,
}

impl Entry {
    /// Routes a command with routing `r` (of this template's key) here: claims it
    /// ([`Entry::claim`]) and duplicates the control socket.
    fn routed(&mut self, r: &Routing) -> Result<Routed, String> {
        let token = self.claim()?;
        self.used = Instant::now();
        let ctl = sys::dup_cloexec(self.ctl.as_raw_fd()).map_err(|e| e.to_string())?;
        Ok(Routed {
            ctl,
            limits: r.limits,
            running: token,
        })
    }

    /// The token of a command routed to this template ([`Templates::route`]). A template
    /// with copy-on-write cache layers has them mounted live, shared by every command
    /// forked from it: while one of its commands runs, the next takes the per-command
    /// helper, which claims a slot of its own as on the cold path (attack pass 41, E4: a
    /// concurrent run saw another's cache writes at once). `Err`: one is running.
    fn claim(&mut self) -> Result<Option<OwnedFd>, String> {
        if self.workspace.is_none() {
            return Ok(None);
        }
        self.running.retain(|r| !hung_up(r));
        if !self.running.is_empty() {
            return Err(
                "another command of this template is running, and its copy-on-write cache \
                 layers are mounted live: this one takes a slot of its own"
                    .into(),
            );
        }
        let (read, write) = sys::pipe().map_err(|e| e.to_string())?;
        self.running.push(read);
        Ok(Some(write))
    }
}

/// A command routed to a template ([`Templates::route`]).
pub(crate) struct Routed {
    /// A duplicate of the template's control socket.
    pub(crate) ctl: OwnedFd,
    /// The command's limits (its handler creates the cgroup).
    pub(crate) limits: ResolvedLimits,
    /// With cache overlays, the command's running token ([`Entry::claim`]): held by its
    /// handler until the command is done.
    pub(crate) running: Option<OwnedFd>,
}

/// What routing computed for one profile (a pure function of the profile's text and the
/// server's features): kept by the server per profile text ([`Templates::route`]) and by
/// each template for the profile it was made for ([`Prepared::accept`]).
pub(crate) struct Routing {
    /// The profile's JSON text in the payload ([`PayloadText::profile_text`]).
    text: Vec<u8>,
    profile: ResolvedProfile,
    plan: LinuxPlan,
    /// [`layout_of`] the profile: the template key's plan.
    layout: Layout,
    /// The serialized `layout`: the key of [`Templates`]'s map.
    key: Vec<u8>,
    limits: ResolvedLimits,
}

impl Routing {
    /// Whether a command with this payload has exactly this routing: the same profile
    /// text and no layer disabled (a disabled layer changes the plan and is never forked
    /// from a template: [`eligible`]).
    fn reusable_for(&self, text: &PayloadText) -> bool {
        text.disabled_layers().is_empty() && text.profile_text() == self.text.as_slice()
    }
}

/// Most profile texts whose routing the server keeps (all are forgotten past it).
const ROUTINGS_KEPT: usize = 64;

/// The server's templates, keyed by mount plan.
pub(crate) struct Templates {
    map: HashMap<Vec<u8>, Entry>,
    /// Per profile text, the routing computed for it, or why it takes the per-command
    /// helper (issue 12: parsing and planning the profile was ~1.3 ms of every command).
    /// Used only while a live template of its key passes the host identity check; a
    /// template is never made from a kept routing.
    routings: HashMap<Vec<u8>, Result<std::rc::Rc<Routing>, String>>,
    features: Option<LinuxFeatures>,
    /// The server's binary as it was at start.
    binary: Option<(PathBuf, Option<FileId>)>,
}

impl Templates {
    pub(crate) fn new() -> Templates {
        let binary = std::env::current_exe().ok().map(|p| {
            let id = file_id(&p);
            (p, id)
        });
        Templates {
            map: HashMap::new(),
            routings: HashMap::new(),
            features: None,
            binary,
        }
    }

    /// Ends the templates idle for longer than [`IDLE`].
    pub(crate) fn expire(&mut self) {
        self.map.retain(|_, e| e.used.elapsed() < IDLE);
    }

    /// The template for the request whose payload is on `payload` (a memfd, read without
    /// moving its offset), made when missing, replaced when the host changed beneath it:
    /// a duplicate of its control socket. `stdio` are the command's descriptors 0–2.
    ///
    /// Also returns the command's limits (H creates its cgroup) and, for a template with
    /// cache overlays, the command's running token ([`Entry::claim`]): the handler holds
    /// it until the command is done.
    ///
    /// Errors: why this command takes the server's per-command helper instead.
    pub(crate) fn route(&mut self, payload: &OwnedFd, stdio: &[RawFd]) -> Result<Routed, String> {
        if let Some((p, id)) = &self.binary {
            if file_id(p) != *id {
                self.map.clear();
                return Err(format!(
                    "{} changed since cordon serve started (restart it)",
                    p.display()
                ));
            }
        }
        for fd in stdio {
            // SAFETY: isatty only inspects the descriptor.
            if unsafe { libc::isatty(*fd) } == 1 {
                return Err("a terminal on stdio is bound per command".into());
            }
        }
        let text = read_payload_text(payload)?;
        let keep = text.disabled_layers().is_empty();
        // The profile seen before: its routing is taken — a template only while a live one
        // of its key still passes the host identity check (else computed afresh below).
        match self.routings.get(text.profile_text()).filter(|_| keep) {
            Some(Err(why)) => return Err(why.clone()),
            Some(Ok(r)) => {
                let r = r.clone();
                if let Some(e) = self.map.get_mut(&r.key) {
                    if e.identity == Identity::of(&r.layout) && !hung_up(&e.ctl) {
                        return e.routed(&r);
                    }
                }
            }
            None => {}
        }
        let base = match &self.features {
            Some(f) => f.clone(),
            None => {
                let f = probe_fast();
                self.features = Some(f.clone());
                f
            }
        };
        let profile_text = text.profile_text().to_vec();
        let payload = text.finish().map_err(|e| e.to_string())?;
        let computed = routing(payload, profile_text.clone(), &base).map(std::rc::Rc::new);
        if keep {
            if self.routings.len() >= ROUTINGS_KEPT {
                self.routings.clear();
            }
            self.routings.insert(profile_text, computed.clone());
        }
        let r = computed?;
        let (layout, key, limits) = (r.layout.clone(), r.key.clone(), r.limits);
        let identity = Identity::of(&layout);
        if let Some(e) = self.map.get_mut(&key) {
            if e.identity == identity && !hung_up(&e.ctl) {
                return e.routed(&r);
            }
            self.map.remove(&key); // the host changed beneath it: a new one
        }
        // The template's slot of the workspace's cache layers, claimed here so that a
        // template is made only with one (its commands get the copy-on-write caches their
        // plan names); none free: the per-command helper.
        let mut built = layout.clone();
        let workspace = super::caches::overlay_key(&layout);
        let slot = match super::caches::claim_template_slot(&mut built) {
            Ok(s) => s,
            Err(Unclaimed::Failed(why)) => return Err(why),
            Err(Unclaimed::Busy) => {
                // When this server's live templates of the workspace hold every template
                // slot, the least recently used one ends (once its running commands
                // have), so that a later command of this plan gets one. Fewer: the others
                // are held by templates already ending (replaced or idle), which free
                // them soon, or by another server's.
                let ours = || {
                    self.map
                        .iter()
                        .filter(|(_, e)| e.workspace.is_some() && e.workspace == workspace)
                };
                let lru = if ours().count() >= TEMPLATE_SLOTS as usize {
                    ours().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone())
                } else {
                    None
                };
                let ended = lru.and_then(|k| self.map.remove(&k)).is_some();
                return Err(format!(
                    "the {TEMPLATE_SLOTS} template slots of this workspace's copy-on-write \
                     cache layers are held{}",
                    if ended {
                        " (the least recently used template ends to free one)"
                    } else {
                        " (by templates still ending, or another server's)"
                    }
                ));
            }
        };
        if self.map.len() >= MAX_TEMPLATES {
            if let Some(oldest) = self
                .map
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            {
                self.map.remove(&oldest);
            }
        }
        let ctl = spawn(layout, built, slot, base, r.clone())
            .map_err(|e| format!("making a template: {e}"))?;
        let dup = sys::dup_cloexec(ctl.as_raw_fd()).map_err(|e| e.to_string())?;
        let mut e = Entry {
            ctl,
            identity,
            used: Instant::now(),
            workspace,
            running: Vec::new(),
        };
        let token = e.claim()?;
        self.map.insert(key, e);
        Ok(Routed {
            ctl: dup,
            limits,
            running: token,
        })
    }
}

/// Whether the template behind `ctl` is gone.
fn hung_up(ctl: &OwnedFd) -> bool {
    let mut pfd = [libc::pollfd {
        fd: ctl.as_raw_fd(),
        events: libc::POLLRDHUP,
        revents: 0,
    }];
    // SAFETY: `pfd` is a valid array of one pollfd; timeout 0 does not block.
    let r = unsafe { libc::poll(pfd.as_mut_ptr(), 1, 0) };
    r != 0
}

/// The payload on a request's memfd, read with `pread` (the helper reads it again from
/// its own offset), its profile still text ([`PayloadText`]).
fn read_payload_text(fd: &OwnedFd) -> Result<PayloadText, String> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::from(sys::dup_cloexec(fd.as_raw_fd()).map_err(|e| e.to_string())?);
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f
            .read_at(&mut buf, bytes.len() as u64)
            .map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&buf[..n]);
        if bytes.len() as u64 > PAYLOAD_LIMIT {
            return Err("payload too large".into());
        }
    }
    let text = std::str::from_utf8(&bytes).map_err(|_| "payload is not UTF-8".to_string())?;
    PayloadText::parse(text).map_err(|e| e.to_string())
}

/// A `SOCK_SEQPACKET` pair (close-on-exec).
pub(crate) fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints for the new descriptors.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair returned two new descriptors, owned from here on.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Sends `fd` on a control socket (one message, one descriptor).
pub(crate) fn send_fd(ctl: &OwnedFd, fd: RawFd) -> io::Result<()> {
    send_fd_with(ctl, fd, nix::sys::socket::MsgFlags::empty())
}

/// [`send_fd`] with `flags` besides `MSG_NOSIGNAL` (`MSG_DONTWAIT`: the server, which never
/// blocks on a template).
pub(crate) fn send_fd_with(
    ctl: &OwnedFd,
    fd: RawFd,
    flags: nix::sys::socket::MsgFlags,
) -> io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    let raw = [fd];
    let cmsg = [ControlMessage::ScmRights(&raw)];
    let iov = [io::IoSlice::new(b"c")];
    sendmsg::<()>(
        ctl.as_raw_fd(),
        &iov,
        &cmsg,
        MsgFlags::MSG_NOSIGNAL | flags,
        None,
    )
    .map(|_| ())
    .map_err(io::Error::from)
}

/// Receives one message of a control socket: its bytes and the descriptor sent with it.
/// `Ok((0, None))`: the other end closed.
pub(crate) fn recv_fd(ctl: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<OwnedFd>)> {
    let (n, fds) = super::sys::recv_with_fds::<1>(ctl, buf)?;
    Ok((n, fds.into_iter().next()))
}

/// Makes a template for `planned`, built as `built` (`planned` with its cache overlays in
/// the template's slot, held by `slot`; see the module docs): forks T0, which prepares the
/// host side and clones T into new user, mount, pid and ipc namespaces; T maps the
/// identity, builds the root and says `ready`. T0 and T keep `slot` for their whole life
/// (the server's copy is closed on return). Returns the server's end of T's control
/// socket.
///
/// Errors: the fork, the host preparation or the build failed (T's message).
fn spawn(
    planned: Layout,
    built: Layout,
    slot: Option<OwnedFd>,
    features: LinuxFeatures,
    seed: std::rc::Rc<Routing>,
) -> io::Result<OwnedFd> {
    let (srv, tpl) = seqpacket_pair()?;
    // SAFETY: the server is single-threaded.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        drop(srv);
        let code = t0_main(tpl, planned, built, slot, features, seed);
        process::exit_now(code);
    }
    drop(tpl);
    drop(slot);
    let tv = libc::timeval {
        tv_sec: READY_TIMEOUT.as_secs() as libc::time_t,
        tv_usec: 0,
    };
    // SAFETY: `tv` is a valid timeval of the size passed.
    unsafe {
        libc::setsockopt(
            srv.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &tv as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    let mut buf = [0u8; 4096];
    let (n, _) = recv_fd(srv.as_raw_fd(), &mut buf)?;
    match &buf[..n] {
        b"ready" => {
            let no = libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            };
            // SAFETY: as above.
            unsafe {
                libc::setsockopt(
                    srv.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_RCVTIMEO,
                    &no as *const _ as *const libc::c_void,
                    std::mem::size_of::<libc::timeval>() as libc::socklen_t,
                )
            };
            Ok(srv)
        }
        [] => Err(io::Error::other("the template exited")),
        why => Err(io::Error::other(String::from_utf8_lossy(why).into_owned())),
    }
}

/// T0: host side, then T; exits with T. `slot` (the template's cache slot, if its plan
/// has overlays) stays open in T0 and T.
fn t0_main(
    tpl: OwnedFd,
    planned: Layout,
    layout: Layout,
    slot: Option<OwnedFd>,
    features: LinuxFeatures,
    seed: std::rc::Rc<Routing>,
) -> i32 {
    let say = |m: &str| {
        let _ = nix::sys::socket::send(
            tpl.as_raw_fd(),
            m.as_bytes(),
            nix::sys::socket::MsgFlags::MSG_NOSIGNAL,
        );
    };
    // SAFETY: getppid has no preconditions.
    let server = unsafe { libc::getppid() };
    if sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong).is_err()
        // SAFETY: as above.
        || unsafe { libc::getppid() } != server
    {
        return process::EXIT_SETUP;
    }
    // Nothing of the server's (listener, other templates' sockets, connections).
    let mut keep = vec![0, 1, 2, tpl.as_raw_fd()];
    keep.extend(slot.as_ref().map(|s| s.as_raw_fd()));
    super::server::close_all_but(&keep);
    // SAFETY: restoring the default disposition is always valid.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    // The template keeps its cache overlays mounted for its whole life: it holds its slot
    // of the workspace's layers as long (T0 and T keep the descriptor), so no run and no
    // other template shares its upper/work dirs.
    let _cache_slot = slot;
    // Every command forked from a template has init's hard-link check ([`eligible`]).
    if let Err(e) = mounts::prepare_host(&layout, true) {
        say(&format!("preparing the host: {e}"));
        return process::EXIT_SETUP;
    }
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    // SAFETY: T0 is single-threaded (forked from the single-threaded server).
    let t = match unsafe { sys::clone_fork(flags as libc::c_ulong) } {
        Ok(p) => p,
        Err(e) => {
            say(&format!("clone: {e}"));
            return process::EXIT_SETUP;
        }
    };
    if t == 0 {
        let code = template_main(tpl, (planned, layout), features, seed, (uid, gid));
        process::exit_now(code);
    }
    drop(tpl);
    let mut st = 0;
    // SAFETY: `st` is a valid int; `t` is our child.
    unsafe { libc::waitpid(t, &mut st, 0) };
    0
}

/// T: pid 1 of the template's namespaces. Maps the identity, builds the root, then forks
/// one handler per connection it is sent, until the server closes the control socket;
/// then waits for its commands and exits.
fn template_main(
    tpl: OwnedFd,
    (planned, layout): (Layout, Layout),
    features: LinuxFeatures,
    seed: std::rc::Rc<Routing>,
    (uid, gid): (libc::uid_t, libc::gid_t),
) -> i32 {
    let say = |m: &str| {
        let _ = nix::sys::socket::send(
            tpl.as_raw_fd(),
            m.as_bytes(),
            nix::sys::socket::MsgFlags::MSG_NOSIGNAL,
        );
    };
    if sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong).is_err() {
        return process::EXIT_SETUP;
    }
    let maps: [(&std::ffi::CStr, String); 3] = [
        (c"/proc/self/setgroups", "deny".to_string()),
        (c"/proc/self/uid_map", format!("{uid} {uid} 1\n")),
        (c"/proc/self/gid_map", format!("{gid} {gid} 1\n")),
    ];
    for (file, data) in &maps {
        if let Err(e) = sys::write_file(file, data.as_bytes()) {
            say(&format!("writing {}: {e}", file.to_string_lossy()));
            return process::EXIT_SETUP;
        }
    }
    // Watched from before the root is built until the first spare watch exists: a cover
    // the host takes away meanwhile (a file renamed over while its mask was being mounted)
    // ends the template, as it stops a run on the cold path (attack pass 143 F1).
    let watch_plan = super::cover_watch::WatchPlan::of(&layout);
    let mut build_watch = match super::cover_watch::CoverWatch::watch_planned(&watch_plan) {
        Ok(w) => w,
        Err(e) => {
            say(&format!("watching the covers: {e}"));
            return process::EXIT_SETUP;
        }
    };
    let built = match mounts::build(&layout) {
        Ok(b) => b,
        Err(e) => {
            say(&format!("building the root: {e}"));
            return process::EXIT_SETUP;
        }
    };
    let covered = match super::cover_watch::mounted_covers(&layout, &built.skipped) {
        Ok(c) => c,
        Err(e) => {
            say(&format!("checking the covers: {e}"));
            return process::EXIT_SETUP;
        }
    };
    let prepared = Prepared {
        watch_plan,
        features,
        layout,
        planned,
        notes: built.notes,
        warnings: built.warnings,
        read_only_caches: built.read_only_caches,
        cgroup: std::cell::RefCell::new(None),
        accepted: std::cell::RefCell::new(None),
        covered,
        cover: std::cell::RefCell::new(None),
        cover_copy: std::cell::RefCell::new(None),
        handler_conn: std::cell::Cell::new(None),
        spare_watch: std::cell::RefCell::new(None),
        spare_net: std::cell::RefCell::new(None),
        spare_mnt: std::cell::RefCell::new(None),
        ns_hold: std::cell::RefCell::new(None),
        seed,
    };
    // Handlers (and the spares' short-lived children) are reaped by the kernel; set before
    // the first spares, whose child could otherwise stay a zombie for the template's life
    // (attack pass 53 F2).
    // SAFETY: setting a disposition to SIG_IGN is always valid.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    make_spares(&prepared);
    // The first spare watch exists now (or the first command makes its own, and checks
    // every cover's mount): what the build watch saw until here decides.
    if let Some(mut w) = build_watch.take() {
        if let Some(lost) = w.poll() {
            say(&format!(
                "a cover changed while the template was built: {lost}"
            ));
            return process::EXIT_SETUP;
        }
        w.release();
    }
    drop(built.host_devpts);
    say("ready");
    let mut buf = [0u8; 16];
    let mut spares_due = false;
    // The handlers forked since the spares were last made, as pidfds (readable once the
    // handler has exited).
    let mut live: Vec<OwnedFd> = Vec::new();
    // The next command's handler P, forked ahead with the spares ([`SpareHandler`]).
    let mut spare_p: Option<SpareHandler> = None;
    loop {
        // The spares are made once the commands forked since the last ones have ended, or
        // have run for SPARES_AFTER (made at once, they took the CPU the handler needed:
        // ~2 ms, measured; made after a fixed 5 ms, they landed in the teardown of a short
        // command, ~0.8 ms on its path, measured), unless the next command comes first
        // (it then makes its own).
        if spares_due && quiet_within(&tpl, &mut live, SPARES_AFTER) {
            make_spares(&prepared);
            spares_due = false;
            live.clear();
        }
        if spare_p.is_none() && !spares_due {
            spare_p = SpareHandler::fork(&tpl, &prepared);
        }
        let conn = match recv_fd(tpl.as_raw_fd(), &mut buf) {
            Ok((0, _)) => break, // the server ended this template
            Ok((_, Some(fd))) => fd,
            Ok((_, None)) => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if let Some(p) = spare_p.take() {
            if send_fd(&p.sock, conn.as_raw_fd()).is_ok() {
                drop(conn);
                live.extend(p.pidfd);
                spares_due = true;
                continue;
            }
            // The spare is gone (it holds the spares: this command makes its own).
        }
        // P becomes the helper: it checks its parent against T, not against whoever it
        // has when it looks.
        super::helper::forking_a_helper();
        // SAFETY: T is single-threaded.
        match unsafe { libc::fork() } {
            0 => {
                drop(tpl);
                drop(std::mem::take(&mut live));
                let conn = std::os::unix::net::UnixStream::from(conn);
                let code = match super::server::handle_prepared(conn, &prepared) {
                    Ok(()) => 0,
                    Err(e) => {
                        eprintln!("cordon serve: template: {e}");
                        1
                    }
                };
                process::exit_now(code);
            }
            -1 => eprintln!(
                "cordon serve: template: fork: {}",
                io::Error::last_os_error()
            ),
            pid => {
                drop(conn);
                // Without a pidfd (pre-5.3 kernels), the handler counts as running until
                // SPARES_AFTER passes.
                if let Ok(fd) = sys::pidfd_open(pid) {
                    live.push(fd);
                }
                // The handler has its copies; T's go (neither is ever used twice), and the
                // next command's are made once this one has started (at the top of the loop).
                drop(prepared.spare_watch.borrow_mut().take());
                drop(prepared.spare_net.borrow_mut().take());
                drop(prepared.spare_mnt.borrow_mut().take());
                spares_due = true;
            }
        }
    }
    drop(tpl);
    // A spare handler that got no command sees its socket's end and exits.
    drop(spare_p);
    // With SIGCHLD ignored, wait returns (ECHILD) once every handler has exited.
    // SAFETY: a null status pointer is allowed.
    while unsafe { libc::wait(std::ptr::null_mut()) } > 0 {}
    0
}

/// The next command's handler P, forked by T ahead of the command, once the spares are
/// made ([`make_spares`]), so that neither T's fork of P (~0.5 ms of each launch, measured
/// with bpftrace) nor its first scheduling is on the launch path (issue 12). It holds
/// the spares from the fork on (T closes its copies then, as after forking a command's
/// handler), and waits for one connection on its own socket: T sends it the next
/// connection the server sends T, and P then runs exactly what a handler forked for that
/// connection would ([`super::server::handle_prepared`]). Its socket's end (T gone, or
/// the template ending) ends it with nothing run. Without one (its fork failed, or a
/// second command came before the next spares), T forks a handler per connection as
/// before.
struct SpareHandler {
    /// T's end of the socket the connection is sent on.
    sock: OwnedFd,
    /// P's pidfd (none before Linux 5.3): counted among the running handlers once P has
    /// a command ([`quiet_within`]).
    pidfd: Option<OwnedFd>,
}

impl SpareHandler {
    /// In T (single-threaded): forks the spare handler; `None` when that failed.
    fn fork(tpl: &OwnedFd, prepared: &Prepared) -> Option<SpareHandler> {
        let (ours, theirs) = seqpacket_pair().ok()?;
        // P becomes the helper: it checks its parent against T, not against whoever it
        // has when it looks.
        super::helper::forking_a_helper();
        // SAFETY: T is single-threaded.
        match unsafe { libc::fork() } {
            0 => {
                drop(ours);
                let code = spare_handler_main(tpl, theirs, prepared);
                process::exit_now(code);
            }
            -1 => None,
            pid => {
                drop(theirs);
                // P has its copies of the spares; T's go, as after any handler's fork.
                drop(prepared.spare_watch.borrow_mut().take());
                drop(prepared.spare_net.borrow_mut().take());
                drop(prepared.spare_mnt.borrow_mut().take());
                Some(SpareHandler {
                    sock: ours,
                    pidfd: sys::pidfd_open(pid).ok(),
                })
            }
        }
    }
}

/// The spare handler P ([`SpareHandler`]): dies with T, waits for its one connection and
/// handles it as a handler forked for it would. Returns the exit code.
fn spare_handler_main(tpl: &OwnedFd, sock: OwnedFd, prepared: &Prepared) -> i32 {
    // T's control socket is T's alone (a handler forked for a connection closes it too).
    sys::close_in_child(tpl.as_raw_fd());
    // (T is pid 1 of P's pid namespace: should T die first, P is killed with it.)
    if sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong).is_err() {
        return 0;
    }
    let mut buf = [0u8; 16];
    let conn = loop {
        match recv_fd(sock.as_raw_fd(), &mut buf) {
            Ok((_, Some(fd))) => break fd,
            Ok((0, None)) => return 0, // T closed it: no command
            Ok((_, None)) => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return 0,
        }
    };
    drop(sock);
    let conn = std::os::unix::net::UnixStream::from(conn);
    match super::server::handle_prepared(conn, prepared) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("cordon serve: template: {e}");
            1
        }
    }
}

/// How long T lets a running command be before it makes the next command's spares
/// ([`make_spares`]) anyway: a command still running then is past its start.
const SPARES_AFTER: Duration = Duration::from_millis(50);

/// Whether it is time to make the spares: every handler in `live` (pidfds) has exited, or
/// `wait` has passed, with nothing to read on `tpl` (a request first, or a poll error:
/// false). Exited handlers are removed from `live`.
fn quiet_within(tpl: &OwnedFd, live: &mut Vec<OwnedFd>, wait: Duration) -> bool {
    let deadline = std::time::Instant::now() + wait;
    loop {
        let mut pfds: Vec<libc::pollfd> = std::iter::once(tpl)
            .chain(live.iter())
            .map(|fd| libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        // SAFETY: `pfds` is a valid array of `pfds.len()` pollfds.
        let n = unsafe {
            libc::poll(
                pfds.as_mut_ptr(),
                pfds.len() as libc::nfds_t,
                left.as_millis() as libc::c_int,
            )
        };
        match n {
            0 => return true,
            n if n < 0 => {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return false;
            }
            _ => {}
        }
        // Exited handlers leave `live` also when a request is waiting (attack pass 53 F3:
        // under unbroken load the list only grew).
        let exited: Vec<bool> = pfds[1..].iter().map(|p| p.revents != 0).collect();
        let mut i = 0;
        live.retain(|_| {
            i += 1;
            !exited[i - 1]
        });
        if pfds[0].revents != 0 {
            return false;
        }
        if live.is_empty() {
            return true;
        }
    }
}

/// In T: makes what the next command would otherwise make on its launch path, while no
/// command is starting — its cover watch ([`super::cover_watch::CoverWatch::watch_planned`])
/// and, when the template's commands have a network namespace, a new one
/// ([`spare_net_namespace`]) — both on descriptors above every number a client's
/// descriptor is put on. Failing to make one is not an error: the command makes its own.
fn make_spares(prepared: &Prepared) {
    if prepared.spare_watch.borrow().is_none() {
        if let Ok(Some(mut w)) = super::cover_watch::CoverWatch::watch_planned(&prepared.watch_plan)
        {
            // The hidden paths that were absent are looked for once here, after the watch
            // exists: from now on a creation is an event the command's handler reads
            // (`CoverWatch::poll` in `Prepared::accept`), so that handler need not look
            // again (issue 12: ~165 `lstat` per command, off the command's path now). A
            // spare whose check fails is set aside: the handler then makes and checks a
            // fresh watch, which refuses the template as before.
            if w.check_absent().is_ok()
                && w.check_links().is_ok()
                && w.move_above(super::server::MAX_TARGET_FD).is_ok()
            {
                *prepared.spare_watch.borrow_mut() = Some(w);
            } else {
                // Closing the last descriptor of an inotify instance waits for the kernel.
                std::mem::forget(w);
            }
        }
    }
    if prepared.spare_net.borrow().is_none() && prepared.seed.plan.net_namespace {
        *prepared.spare_net.borrow_mut() = spare_net_namespace().ok();
    }
    if prepared.spare_mnt.borrow().is_none() {
        *prepared.spare_mnt.borrow_mut() = spare_mount_namespace(&prepared.layout).ok();
    }
}

/// A copy of the template's mount namespace (its built root, as `clone(CLONE_NEWNS)` from
/// the template's handler would make it) with the next command's own mounts of `layout`
/// made in it but `/proc` ([`mounts::refresh_per_command`] with
/// [`mounts::PerCommand::AheadOfCommand`]: a fresh `/tmp`, `/dev/shm`, `/dev/pts` and tool
/// homes), as a descriptor above every client target number ([`spare_namespace`]). The
/// template's namespace does not change once built, so the copy is the one a command
/// would get at its start; nobody but T and the command's handler ever holds it.
///
/// Errors: the clone, a mount, the open or the transfer failed.
fn spare_mount_namespace(layout: &Layout) -> io::Result<OwnedFd> {
    spare_namespace(libc::CLONE_NEWNS, "/proc/thread-self/ns/mnt", || {
        mounts::refresh_per_command(layout, mounts::PerCommand::AheadOfCommand)
    })
}

/// A new network namespace (owned by the template's user namespace, like one init would
/// clone), its `lo` up (off the command's path: init checks it again, and a namespace
/// whose `lo` is down is brought up there as before), as a descriptor above every client
/// target number ([`spare_namespace`]).
///
/// Errors: the clone, `lo`, the open or the transfer failed.
fn spare_net_namespace() -> io::Result<OwnedFd> {
    spare_namespace(
        libc::CLONE_NEWNET,
        "/proc/thread-self/ns/net",
        super::loopback::bring_up_lo,
    )
}

/// A new namespace of the kind `flag` (one `CLONE_NEW*`), as a descriptor of `ns` (its
/// `/proc/thread-self/ns/…` file) above every client target number: a child is cloned
/// into it, runs `prepare` there, sends the descriptor and exits, so no process is left
/// in it.
///
/// Errors: the clone, `prepare`, the open or the transfer failed.
fn spare_namespace(
    flag: libc::c_int,
    ns: &str,
    prepare: impl FnOnce() -> io::Result<()>,
) -> io::Result<OwnedFd> {
    let (ours, theirs) = seqpacket_pair()?;
    // SAFETY: T is single-threaded.
    let pid = unsafe { sys::clone_fork(flag as libc::c_ulong) }?;
    if pid == 0 {
        drop(ours);
        let sent = prepare()
            .and_then(|()| std::fs::File::open(ns))
            .and_then(|f| send_fd(&theirs, f.as_raw_fd()));
        process::exit_now(i32::from(sent.is_err()));
    }
    drop(theirs);
    // The child is reaped by the kernel (T ignores SIGCHLD); its end closes when it exits.
    let mut buf = [0u8; 1];
    let (_, fd) = recv_fd(ours.as_raw_fd(), &mut buf)?;
    let fd = fd.ok_or_else(|| io::Error::other("no namespace descriptor came"))?;
    sys::dup_cloexec_above(fd.as_raw_fd(), super::server::MAX_TARGET_FD)
}

/// `pidfd_open(getpid())`: a descriptor that signals this process from any pid namespace
/// above it.
pub(crate) fn own_pidfd() -> io::Result<OwnedFd> {
    // SAFETY: getpid has no preconditions.
    sys::pidfd_open(unsafe { libc::getpid() })
}

/// `pidfd_send_signal(pidfd, sig)`.
pub(crate) fn pidfd_signal(pidfd: &OwnedFd, sig: libc::c_int) {
    const SYS_PIDFD_SEND_SIGNAL: libc::c_long = 424;
    // SAFETY: no memory is passed (null siginfo); a stale pidfd only fails (ESRCH).
    unsafe {
        libc::syscall(
            SYS_PIDFD_SEND_SIGNAL,
            pidfd.as_raw_fd(),
            sig,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
}
