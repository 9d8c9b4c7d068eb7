//! Defect 2 of issue 14: on the macOS exec path (`sandbox-exec` run directly by the CLI),
//! descriptors above 2 that cordon inherited must not reach the command: Seatbelt checks
//! paths only at open time. Checked on any Unix host through the same spawn path (one
//! process per test file, since marking descriptors affects the whole process).
#![cfg(unix)]

use cordon_policy::{Backend, PermissionProfile};
use cordon_sandbox::{run, CommandRequest, SandboxManager};
use std::os::fd::AsRawFd;

#[test]
fn inherited_descriptor_does_not_reach_a_seatbelt_command() {
    // A descriptor without close-on-exec, as a parent shell or harness may leave one.
    let secret = tempfile::tempfile().unwrap();
    let leaked = nix::fcntl::fcntl(&secret, nix::fcntl::FcntlArg::F_DUPFD(57)).unwrap();
    assert!(leaked >= 57 && leaked != secret.as_raw_fd());
    let mut req = CommandRequest::new(
        vec!["/bin/sh".into()],
        std::env::temp_dir(),
        PermissionProfile::builtin("danger-full-access").unwrap(),
    );
    req.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    let mut exec = SandboxManager::for_host().transform(&req).unwrap();
    // The seatbelt spawn path, with a probe in place of sandbox-exec.
    exec.backend = Backend::Seatbelt;
    exec.program = "/bin/sh".into();
    exec.args = vec![
        "-c".into(),
        format!(
            "[ -e /dev/fd/{leaked} ] && exit 3; [ -e /dev/fd/2 ] || exit 4; echo ok >/dev/null"
        ),
    ];
    let st = run(&exec).unwrap();
    assert_eq!(st.code, Some(0), "descriptor {leaked} reached the command");
    // Still works: a non-seatbelt spawn is untouched (the Linux helper closes its own).
}
