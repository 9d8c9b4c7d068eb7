//! The seccomp filter (R-L5, R-L2, R-L3): a classic-BPF program built by hand, so the
//! architecture check, the x32 check, argument checks and per-syscall return values are
//! exactly what is written here (and unit-tested with a small BPF interpreter).
//!
//! Decisions, in order:
//! 1. `seccomp_data.arch` is not this build's architecture → kill the process (a 32-bit
//!    or foreign-ABI syscall would be numbered differently and slip past the checks).
//! 2. x86_64 only: a syscall number with the x32 bit (`0x4000_0000`) → kill.
//! 3. Denied syscalls → `EPERM`: ptrace, process_vm_readv/writev, io_uring_*, unshare,
//!    setns, mount and the new mount API, pivot_root, chroot, keyring, bpf,
//!    perf_event_open, userfaultfd, kexec, modules, open_by_handle_at, …
//! 4. `clone3` → `ENOSYS`, so libc falls back to `clone`, whose flags a filter can read.
//! 5. `clone` with any `CLONE_NEW*` flag → `EPERM`.
//! 6. `ioctl(fd, TIOCSTI | TIOCLINUX, …)` → `EPERM` (typing into the host terminal).
//! 7. Network restricted on rung 2 (no network namespace): `socket(2)` → `EPERM` for every
//!    family (`AF_UNIX` too: a unix socket bound on the host filesystem would otherwise be
//!    reachable). `socketpair(2)` and I/O on existing sockets stay allowed.
//!    Network restricted on rung 1 (a private network namespace with only `lo`):
//!    `socket(2)` is allowed for `AF_UNIX`, `AF_INET` and `AF_INET6` only (`EPERM` for
//!    `AF_NETLINK`, `AF_PACKET`, …): the namespace reaches nothing, and pathname unix
//!    sockets are judged by the unix-socket guard (see [`build_unix_guard`]).
//! 8. No setuid/setgid bits (R-H3): `chmod`, `fchmod`, `fchmodat`, `fchmodat2`, `mkdir`,
//!    `mkdirat`, `mknod`, `mknodat` with `S_ISUID` or `S_ISGID` in the mode → `EPERM`;
//!    `open`, `openat` and `creat` that create a file (`O_CREAT` or `O_TMPFILE`) with such a
//!    mode → `EPERM`. `openat2` → `ENOSYS` (its mode sits in a struct seccomp cannot read;
//!    libc falls back to `openat`). Otherwise a root-started command could leave a
//!    root-owned setuid program on the host. File capabilities need `CAP_SETFCAP`, which
//!    is dropped before the filter is installed.
//! 9. Everything else is allowed.
//!
//! A second, smaller program ([`build_unix_guard`]) is stacked on the command alone when
//! the unix-socket guard runs (`super::unix_guard`): `connect(2)` goes to the guard as a
//! user notification, datagram unix sockets (whose `sendto` carries an address the guard
//! cannot see) are refused, and `pidfd_getfd(2)` is denied to the command. With denial
//! records ([`build_unix_guard_with`]) the same program also sends the writing path calls
//! to init (the open family only when its flags may write), and the calls that change a
//! file's metadata (`chmod`, `chown`, `utimensat`, `setxattr` families, path and
//! descriptor forms; the `ioctl` commands of `chattr`), which init judges by its hard-link
//! rule.

use super::sys::SockFilter;

// <linux/filter.h> / <linux/bpf_common.h>
const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20)
const BPF_JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JGE_K: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
const BPF_JSET_K: u16 = 0x05 | 0x40; // BPF_JMP | BPF_JSET | BPF_K
const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K
const BPF_ALU_AND_K: u16 = 0x04 | 0x50; // BPF_ALU | BPF_AND | BPF_K

// <linux/seccomp.h>
/// `SECCOMP_RET_KILL_PROCESS`.
pub const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// `SECCOMP_RET_ALLOW`.
pub const RET_ALLOW: u32 = 0x7fff_0000;
/// `SECCOMP_RET_ERRNO` (the errno goes in the low 16 bits).
pub const RET_ERRNO: u32 = 0x0005_0000;
/// `SECCOMP_RET_USER_NOTIF`: the syscall waits for the listener's answer.
pub const RET_USER_NOTIF: u32 = 0x7fc0_0000;

// struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// Low 32 bits of `args[i]` (little-endian: x86_64 and aarch64).
const fn off_arg_lo(i: u32) -> u32 {
    16 + 8 * i
}

/// `AUDIT_ARCH_*` of this build (`None`: no filter is built for this architecture, and
/// [`super::probe`] reports seccomp unavailable).
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH: Option<u32> = Some(0xC000_003E);
/// `AUDIT_ARCH_*` of this build.
#[cfg(target_arch = "aarch64")]
pub const AUDIT_ARCH: Option<u32> = Some(0xC000_00B7);
/// `AUDIT_ARCH_*` of this build.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const AUDIT_ARCH: Option<u32> = None;

/// `__X32_SYSCALL_BIT`.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Every `CLONE_NEW*` flag that `clone(2)` accepts (CLONE_NEWTIME shares its bit with
/// the exit signal in `clone` and is only reachable through `clone3`/`unshare`, both
/// blocked).
const CLONE_NEW_MASK: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

/// `TIOCSTI`: push a byte into a terminal's input queue.
const TIOCSTI: u32 = 0x5412;
/// `TIOCLINUX`: virtual console tricks (incl. selection paste).
const TIOCLINUX: u32 = 0x541C;

// Syscall numbers from the unified table (the same on x86_64 and aarch64).
const NR_OPEN_TREE: i64 = 428;
const NR_MOVE_MOUNT: i64 = 429;
const NR_FSOPEN: i64 = 430;
const NR_FSCONFIG: i64 = 431;
const NR_FSMOUNT: i64 = 432;
const NR_FSPICK: i64 = 433;
const NR_CLONE3: i64 = 435;
const NR_PIDFD_GETFD: i64 = 438;
const NR_MOUNT_SETATTR: i64 = 442;
const NR_QUOTACTL_FD: i64 = 443;
const NR_OPEN_TREE_ATTR: i64 = 467;
const NR_OPENAT2: i64 = 437;
const NR_FCHMODAT2: i64 = 452;

/// Mode bits a command may never set on a file it creates or changes (R-H3).
const SET_ID_BITS: u32 = libc::S_ISUID | libc::S_ISGID;
/// `open` flags that make the call create a file, so its mode argument is used.
const CREATING_OPEN_FLAGS: u32 = (libc::O_CREAT | (libc::O_TMPFILE & !libc::O_DIRECTORY)) as u32;

/// Where a syscall that sets a file mode keeps it (R-H3), for the set-id check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeArg {
    /// The mode is `args[i]`, always used (`chmod`, `mkdir`, `mknod`, …).
    Always(u32),
    /// The mode is `args[mode]`, used only when `args[flags]` has `O_CREAT` or `O_TMPFILE`.
    WhenCreating {
        /// Index of the open flags.
        flags: u32,
        /// Index of the mode.
        mode: u32,
    },
}

/// The syscalls that set a file mode, with where the mode is (step 8 of the module docs).
pub fn mode_setting_syscalls() -> Vec<(&'static str, i64, ModeArg)> {
    use ModeArg::*;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return Vec::new();
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    let mut v: Vec<(&'static str, i64, ModeArg)> = vec![
        ("fchmod", libc::SYS_fchmod, Always(1)),
        ("fchmodat", libc::SYS_fchmodat, Always(2)),
        ("fchmodat2", NR_FCHMODAT2, Always(2)),
        ("mkdirat", libc::SYS_mkdirat, Always(2)),
        ("mknodat", libc::SYS_mknodat, Always(2)),
        (
            "openat",
            libc::SYS_openat,
            WhenCreating { flags: 2, mode: 3 },
        ),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        v.push(("chmod", libc::SYS_chmod, Always(1)));
        v.push(("mkdir", libc::SYS_mkdir, Always(1)));
        v.push(("mknod", libc::SYS_mknod, Always(1)));
        v.push(("creat", libc::SYS_creat, Always(1)));
        v.push(("open", libc::SYS_open, WhenCreating { flags: 1, mode: 2 }));
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    v
}

/// The syscalls answered with `EPERM` (step 3 of the module docs), with names for
/// reports and tests.
pub fn denied_syscalls() -> Vec<(&'static str, i64)> {
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return Vec::new();
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    let mut v: Vec<(&'static str, i64)> = vec![
        ("ptrace", libc::SYS_ptrace),
        ("process_vm_readv", libc::SYS_process_vm_readv),
        ("process_vm_writev", libc::SYS_process_vm_writev),
        ("pidfd_getfd", NR_PIDFD_GETFD),
        ("io_uring_setup", libc::SYS_io_uring_setup),
        ("io_uring_enter", libc::SYS_io_uring_enter),
        ("io_uring_register", libc::SYS_io_uring_register),
        ("unshare", libc::SYS_unshare),
        ("setns", libc::SYS_setns),
        ("mount", libc::SYS_mount),
        ("umount2", libc::SYS_umount2),
        ("pivot_root", libc::SYS_pivot_root),
        ("chroot", libc::SYS_chroot),
        ("open_tree", NR_OPEN_TREE),
        ("open_tree_attr", NR_OPEN_TREE_ATTR),
        ("move_mount", NR_MOVE_MOUNT),
        ("fsopen", NR_FSOPEN),
        ("fsconfig", NR_FSCONFIG),
        ("fsmount", NR_FSMOUNT),
        ("fspick", NR_FSPICK),
        ("mount_setattr", NR_MOUNT_SETATTR),
        ("keyctl", libc::SYS_keyctl),
        ("add_key", libc::SYS_add_key),
        ("request_key", libc::SYS_request_key),
        ("bpf", libc::SYS_bpf),
        ("perf_event_open", libc::SYS_perf_event_open),
        ("userfaultfd", libc::SYS_userfaultfd),
        ("kexec_load", libc::SYS_kexec_load),
        ("kexec_file_load", libc::SYS_kexec_file_load),
        ("init_module", libc::SYS_init_module),
        ("finit_module", libc::SYS_finit_module),
        ("delete_module", libc::SYS_delete_module),
        ("open_by_handle_at", libc::SYS_open_by_handle_at),
        ("name_to_handle_at", libc::SYS_name_to_handle_at),
        ("swapon", libc::SYS_swapon),
        ("swapoff", libc::SYS_swapoff),
        ("reboot", libc::SYS_reboot),
        ("acct", libc::SYS_acct),
        ("quotactl", libc::SYS_quotactl),
        ("quotactl_fd", NR_QUOTACTL_FD),
        ("syslog", libc::SYS_syslog),
        ("vhangup", libc::SYS_vhangup),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        v.push(("uselib", libc::SYS_uselib));
        v.push(("_sysctl", libc::SYS__sysctl));
        v.push(("iopl", libc::SYS_iopl));
        v.push(("ioperm", libc::SYS_ioperm));
        v.push(("lookup_dcookie", libc::SYS_lookup_dcookie));
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    v
}

/// Options of the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FilterOptions {
    /// Deny `socket(2)` for every family (network restricted on rung 2).
    pub deny_sockets: bool,
    /// Allow `socket(2)` for `AF_UNIX`, `AF_INET` and `AF_INET6` only (network restricted
    /// on rung 1: a private network namespace).
    pub local_families_only: bool,
    /// Leave `pidfd_getfd(2)` allowed: the filter of init, which uses it to judge the
    /// command's `connect(2)` calls (the command's own [`build_unix_guard`] denies it).
    pub allow_pidfd_getfd: bool,
}

#[derive(Clone, Copy)]
enum Target {
    Next,
    Allow,
    Eperm,
    Enosys,
    Kill,
    CloneCheck,
    IoctlCheck,
    SocketCheck,
    UnixTypeCheck,
    Notify,
    /// `open`: flags in args[1], mode in args[2].
    OpenFlags1,
    /// `openat`: flags in args[2], mode in args[3].
    OpenFlags2,
    /// Set-id bits in args[i].
    Mode1,
    Mode2,
    Mode3,
    /// Denial records: an open family call whose flags (args[i]) may write → notify.
    WriteFlags0,
    WriteFlags1,
    WriteFlags2,
    /// Denial records: an `ioctl` whose command (args[1]) changes inode flags → notify.
    MetaIoctl,
}

const TARGETS: usize = 19;

fn mode_target(i: u32) -> Target {
    match i {
        1 => Target::Mode1,
        2 => Target::Mode2,
        _ => Target::Mode3,
    }
}

enum Ins {
    Ld(u32),
    Jeq(u32, Target, Target),
    Jge(u32, Target, Target),
    Jset(u32, Target, Target),
    And(u32),
    Ret(u32),
    Label(Target),
}

/// Builds the BPF program (see the module docs). On an architecture without
/// [`AUDIT_ARCH`] the program kills every syscall (it is never installed there: the probe
/// reports seccomp unavailable).
pub fn build(opts: FilterOptions) -> Vec<SockFilter> {
    use Target::*;
    let mut p: Vec<Ins> = vec![
        Ins::Ld(OFF_ARCH),
        Ins::Jeq(AUDIT_ARCH.unwrap_or(u32::MAX), Next, Kill),
        Ins::Ld(OFF_NR),
    ];
    #[cfg(target_arch = "x86_64")]
    p.push(Ins::Jge(X32_SYSCALL_BIT, Kill, Next));
    for (_, nr) in denied_syscalls() {
        if opts.allow_pidfd_getfd && nr == NR_PIDFD_GETFD {
            continue;
        }
        p.push(Ins::Jeq(nr as u32, Eperm, Next));
    }
    p.push(Ins::Jeq(NR_CLONE3 as u32, Enosys, Next));
    p.push(Ins::Jeq(NR_OPENAT2 as u32, Enosys, Next));
    for (_, nr, arg) in mode_setting_syscalls() {
        let to = match arg {
            ModeArg::Always(i) => mode_target(i),
            ModeArg::WhenCreating { flags: 1, .. } => OpenFlags1,
            ModeArg::WhenCreating { .. } => OpenFlags2,
        };
        p.push(Ins::Jeq(nr as u32, to, Next));
    }
    p.push(Ins::Jeq(libc::SYS_clone as u32, CloneCheck, Next));
    p.push(Ins::Jeq(libc::SYS_ioctl as u32, IoctlCheck, Next));
    if opts.deny_sockets {
        p.push(Ins::Jeq(libc::SYS_socket as u32, Eperm, Next));
    } else if opts.local_families_only {
        p.push(Ins::Jeq(libc::SYS_socket as u32, SocketCheck, Next));
    }
    p.push(Ins::Ret(RET_ALLOW));
    if !opts.deny_sockets && opts.local_families_only {
        p.push(Ins::Label(SocketCheck));
        // socket(domain, type, protocol): the domain is args[0].
        p.push(Ins::Ld(off_arg_lo(0)));
        p.push(Ins::Jeq(libc::AF_UNIX as u32, Allow, Next));
        p.push(Ins::Jeq(libc::AF_INET as u32, Allow, Next));
        p.push(Ins::Jeq(libc::AF_INET6 as u32, Allow, Eperm));
    }
    // open(path, flags, mode) / openat(dfd, path, flags, mode): the mode only counts when
    // the call creates a file (otherwise it is whatever was left in the register).
    p.push(Ins::Label(OpenFlags1));
    p.push(Ins::Ld(off_arg_lo(1)));
    p.push(Ins::Jset(CREATING_OPEN_FLAGS, Mode2, Allow));
    p.push(Ins::Label(OpenFlags2));
    p.push(Ins::Ld(off_arg_lo(2)));
    p.push(Ins::Jset(CREATING_OPEN_FLAGS, Mode3, Allow));
    // The kernel reads the mode as `umode_t` (16 bits): the low word holds every bit it uses.
    p.push(Ins::Label(Mode1));
    p.push(Ins::Ld(off_arg_lo(1)));
    p.push(Ins::Jset(SET_ID_BITS, Eperm, Allow));
    p.push(Ins::Label(Mode2));
    p.push(Ins::Ld(off_arg_lo(2)));
    p.push(Ins::Jset(SET_ID_BITS, Eperm, Allow));
    p.push(Ins::Label(Mode3));
    p.push(Ins::Ld(off_arg_lo(3)));
    p.push(Ins::Jset(SET_ID_BITS, Eperm, Allow));
    p.push(Ins::Label(CloneCheck));
    // clone(flags, …): flags is args[0] on x86_64 and aarch64.
    p.push(Ins::Ld(off_arg_lo(0)));
    p.push(Ins::Jset(CLONE_NEW_MASK, Eperm, Allow));
    p.push(Ins::Label(IoctlCheck));
    // The kernel truncates the ioctl command to 32 bits, so the low word is exact.
    p.push(Ins::Ld(off_arg_lo(1)));
    p.push(Ins::Jeq(TIOCSTI, Eperm, Next));
    p.push(Ins::Jeq(TIOCLINUX, Eperm, Allow));
    p.push(Ins::Label(Allow));
    p.push(Ins::Ret(RET_ALLOW));
    p.push(Ins::Label(Eperm));
    p.push(Ins::Ret(RET_ERRNO | libc::EPERM as u32));
    p.push(Ins::Label(Enosys));
    p.push(Ins::Ret(RET_ERRNO | libc::ENOSYS as u32));
    p.push(Ins::Label(Kill));
    p.push(Ins::Ret(RET_KILL_PROCESS));
    assemble(&p)
}

/// The program stacked on the command when the unix-socket guard runs (see the module
/// docs and `super::unix_guard`):
/// - `connect(2)` → `SECCOMP_RET_USER_NOTIF` (every family: the guard cannot trust the
///   address in the caller's memory, so it performs every connect itself);
/// - `socket(2)`/`socketpair(2)` of `AF_UNIX` with a type other than `SOCK_STREAM` or
///   `SOCK_SEQPACKET` → `EPERM` (a datagram's `sendto` names its peer in user memory;
///   `SOCK_RAW` is a datagram socket for `AF_UNIX`);
/// - `pidfd_getfd(2)` → `EPERM` (only init may take the command's descriptors).
///
/// Foreign architectures and x32 are killed as in [`build`].
#[cfg(test)]
pub fn build_unix_guard() -> Vec<SockFilter> {
    build_unix_guard_with(false, &[])
}

/// [`build_unix_guard`], plus, with `denial_records`, the path syscalls that write and the
/// metadata calls (`super::denial_records::calls`) → `SECCOMP_RET_USER_NOTIF` on the same
/// listener; the open family only when its flags hold one of
/// [`super::denial_records::WRITING_OPEN_FLAGS`] (read-only opens never leave the kernel);
/// and a user notification for each syscall in `also_notify` (the `.git/config` broker's
/// renames, [`super::git_config_broker::rename_syscalls`]).
pub fn build_unix_guard_with(denial_records: bool, also_notify: &[u32]) -> Vec<SockFilter> {
    use Target::*;
    let mut p: Vec<Ins> = vec![
        Ins::Ld(OFF_ARCH),
        Ins::Jeq(AUDIT_ARCH.unwrap_or(u32::MAX), Next, Kill),
        Ins::Ld(OFF_NR),
    ];
    #[cfg(target_arch = "x86_64")]
    p.push(Ins::Jge(X32_SYSCALL_BIT, Kill, Next));
    p.push(Ins::Jeq(libc::SYS_connect as u32, Notify, Next));
    for nr in also_notify {
        p.push(Ins::Jeq(*nr, Notify, Next));
    }
    p.push(Ins::Jeq(NR_PIDFD_GETFD as u32, Eperm, Next));
    p.push(Ins::Jeq(libc::SYS_socket as u32, SocketCheck, Next));
    p.push(Ins::Jeq(libc::SYS_socketpair as u32, SocketCheck, Next));
    if denial_records {
        for (_, nr, call) in super::denial_records::calls() {
            let to = match call {
                super::denial_records::PathCall::Open { flags: Some(i), .. } => match i {
                    0 => WriteFlags0,
                    1 => WriteFlags1,
                    _ => WriteFlags2,
                },
                _ if nr == libc::SYS_ioctl => MetaIoctl,
                _ => Notify,
            };
            p.push(Ins::Jeq(nr as u32, to, Next));
        }
    }
    p.push(Ins::Ret(RET_ALLOW));
    if denial_records {
        for (t, i) in [(WriteFlags0, 0), (WriteFlags1, 1), (WriteFlags2, 2)] {
            p.push(Ins::Label(t));
            p.push(Ins::Ld(off_arg_lo(i)));
            p.push(Ins::Jset(
                super::denial_records::WRITING_OPEN_FLAGS,
                Notify,
                Allow,
            ));
        }
        p.push(Ins::Label(MetaIoctl));
        // The kernel truncates the ioctl command to 32 bits, so the low word is exact.
        p.push(Ins::Ld(off_arg_lo(1)));
        for cmd in super::denial_records::METADATA_IOCTLS {
            p.push(Ins::Jeq(cmd, Notify, Next));
        }
        p.push(Ins::Ret(RET_ALLOW));
    }
    p.push(Ins::Label(SocketCheck));
    p.push(Ins::Ld(off_arg_lo(0)));
    p.push(Ins::Jeq(libc::AF_UNIX as u32, UnixTypeCheck, Allow));
    p.push(Ins::Label(UnixTypeCheck));
    // The type is args[1] with SOCK_NONBLOCK/SOCK_CLOEXEC in the high bits.
    p.push(Ins::Ld(off_arg_lo(1)));
    p.push(Ins::And(0xf));
    p.push(Ins::Jeq(libc::SOCK_STREAM as u32, Allow, Next));
    p.push(Ins::Jeq(libc::SOCK_SEQPACKET as u32, Allow, Eperm));
    p.push(Ins::Label(Allow));
    p.push(Ins::Ret(RET_ALLOW));
    p.push(Ins::Label(Notify));
    p.push(Ins::Ret(RET_USER_NOTIF));
    p.push(Ins::Label(Eperm));
    p.push(Ins::Ret(RET_ERRNO | libc::EPERM as u32));
    p.push(Ins::Label(Kill));
    p.push(Ins::Ret(RET_KILL_PROCESS));
    assemble(&p)
}

fn label_index(t: Target) -> usize {
    t as usize
}

fn assemble(p: &[Ins]) -> Vec<SockFilter> {
    // First pass: the index of each label (labels take no slot).
    let mut labels = [usize::MAX; TARGETS];
    let mut n = 0;
    for i in p {
        match i {
            Ins::Label(t) => labels[label_index(*t)] = n,
            _ => n += 1,
        }
    }
    let mut out = Vec::with_capacity(n);
    let off = |pc: usize, t: Target| -> u8 {
        match t {
            Target::Next => 0,
            t => {
                let to = labels[label_index(t)];
                assert!(to != usize::MAX && to > pc, "BPF jumps go forward");
                let d = to - pc - 1;
                assert!(d <= 255, "BPF jump too far");
                d as u8
            }
        }
    };
    for i in p {
        let pc = out.len();
        let ins = match *i {
            Ins::Label(_) => continue,
            Ins::Ld(k) => SockFilter {
                code: BPF_LD_W_ABS,
                jt: 0,
                jf: 0,
                k,
            },
            Ins::And(k) => SockFilter {
                code: BPF_ALU_AND_K,
                jt: 0,
                jf: 0,
                k,
            },
            Ins::Ret(k) => SockFilter {
                code: BPF_RET_K,
                jt: 0,
                jf: 0,
                k,
            },
            Ins::Jeq(k, t, f) => SockFilter {
                code: BPF_JEQ_K,
                jt: off(pc, t),
                jf: off(pc, f),
                k,
            },
            Ins::Jge(k, t, f) => SockFilter {
                code: BPF_JGE_K,
                jt: off(pc, t),
                jf: off(pc, f),
                k,
            },
            Ins::Jset(k, t, f) => SockFilter {
                code: BPF_JSET_K,
                jt: off(pc, t),
                jf: off(pc, f),
                k,
            },
        };
        out.push(ins);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the program on a `seccomp_data`, like the kernel would.
    fn run(prog: &[SockFilter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let mut a: u32 = 0;
        let mut pc = 0usize;
        loop {
            let i = prog[pc];
            pc += 1;
            match i.code {
                BPF_LD_W_ABS => {
                    let k = i.k as usize;
                    a = u32::from_le_bytes(data[k..k + 4].try_into().unwrap());
                }
                BPF_RET_K => return i.k,
                BPF_ALU_AND_K => a &= i.k,
                BPF_JEQ_K | BPF_JGE_K | BPF_JSET_K => {
                    let c = match i.code {
                        BPF_JEQ_K => a == i.k,
                        BPF_JGE_K => a >= i.k,
                        _ => a & i.k != 0,
                    };
                    pc += if c { i.jt as usize } else { i.jf as usize };
                }
                c => panic!("unknown opcode {c:#x}"),
            }
        }
    }

    fn sys(prog: &[SockFilter], nr: i64, args: [u64; 6]) -> u32 {
        run(prog, AUDIT_ARCH.unwrap(), nr as u32, args)
    }

    const EPERM: u32 = RET_ERRNO | libc::EPERM as u32;

    #[test]
    fn denies_the_listed_syscalls_and_allows_the_rest() {
        let p = build(FilterOptions::default());
        for (name, nr) in denied_syscalls() {
            assert_eq!(sys(&p, nr, [0; 6]), EPERM, "{name}");
        }
        for nr in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_openat,
            libc::SYS_execve,
            libc::SYS_socketpair,
            libc::SYS_connect,
            libc::SYS_kill,
            libc::SYS_wait4,
        ] {
            assert_eq!(sys(&p, nr, [0; 6]), RET_ALLOW, "{nr}");
        }
        // Sockets are allowed unless the network is restricted.
        assert_eq!(sys(&p, libc::SYS_socket, [2, 1, 0, 0, 0, 0]), RET_ALLOW);
    }

    #[test]
    fn restricted_network_denies_every_socket_family_but_not_socketpair() {
        let p = build(FilterOptions {
            deny_sockets: true,
            ..Default::default()
        });
        for family in [
            libc::AF_UNIX,
            libc::AF_INET,
            libc::AF_INET6,
            libc::AF_NETLINK,
        ] {
            assert_eq!(
                sys(&p, libc::SYS_socket, [family as u64, 1, 0, 0, 0, 0]),
                EPERM
            );
        }
        assert_eq!(
            sys(
                &p,
                libc::SYS_socketpair,
                [libc::AF_UNIX as u64, 1, 0, 0, 0, 0]
            ),
            RET_ALLOW
        );
    }

    #[test]
    fn clone_with_namespace_flags_is_denied_and_clone3_is_enosys() {
        let p = build(FilterOptions {
            deny_sockets: true,
            ..Default::default()
        });
        let fork_flags =
            (libc::CLONE_CHILD_SETTID | libc::CLONE_CHILD_CLEARTID | libc::SIGCHLD) as u64;
        let thread_flags = (libc::CLONE_VM
            | libc::CLONE_FS
            | libc::CLONE_FILES
            | libc::CLONE_SIGHAND
            | libc::CLONE_THREAD
            | libc::CLONE_SYSVSEM
            | libc::CLONE_SETTLS
            | libc::CLONE_PARENT_SETTID
            | libc::CLONE_CHILD_CLEARTID) as u64;
        assert_eq!(
            sys(&p, libc::SYS_clone, [fork_flags, 0, 0, 0, 0, 0]),
            RET_ALLOW
        );
        assert_eq!(
            sys(&p, libc::SYS_clone, [thread_flags, 0, 0, 0, 0, 0]),
            RET_ALLOW
        );
        for f in [
            libc::CLONE_NEWUSER,
            libc::CLONE_NEWNS,
            libc::CLONE_NEWPID,
            libc::CLONE_NEWNET,
            libc::CLONE_NEWIPC,
            libc::CLONE_NEWUTS,
            libc::CLONE_NEWCGROUP,
        ] {
            assert_eq!(
                sys(&p, libc::SYS_clone, [fork_flags | f as u64, 0, 0, 0, 0, 0]),
                EPERM
            );
        }
        assert_eq!(sys(&p, NR_CLONE3, [0; 6]), RET_ERRNO | libc::ENOSYS as u32);
    }

    #[test]
    fn tiocsti_is_denied_other_ioctls_allowed() {
        let p = build(FilterOptions::default());
        assert_eq!(
            sys(&p, libc::SYS_ioctl, [0, TIOCSTI as u64, 0, 0, 0, 0]),
            EPERM
        );
        // High bits of the command are ignored by the kernel, and by the filter.
        assert_eq!(
            sys(
                &p,
                libc::SYS_ioctl,
                [0, (1u64 << 32) | TIOCSTI as u64, 0, 0, 0, 0]
            ),
            EPERM
        );
        assert_eq!(
            sys(&p, libc::SYS_ioctl, [0, TIOCLINUX as u64, 0, 0, 0, 0]),
            EPERM
        );
        assert_eq!(
            sys(&p, libc::SYS_ioctl, [0, 0x5401 /* TCGETS */, 0, 0, 0, 0]),
            RET_ALLOW
        );
    }

    /// R-H3: no setuid/setgid bit through any mode-setting call; ordinary modes pass.
    #[test]
    fn set_id_modes_are_denied_and_plain_modes_allowed() {
        let p = build(FilterOptions::default());
        let calls = mode_setting_syscalls();
        assert!(calls.len() >= 6);
        for (name, nr, arg) in calls {
            for (mode, want) in [
                (0o4755u64, EPERM),
                (0o2755, EPERM),
                (0o6777, EPERM),
                // The kernel uses only the low 16 bits; a set-id bit stays a set-id bit.
                ((1u64 << 32) | 0o4755, EPERM),
                (0o755, RET_ALLOW),
                (0o1777, RET_ALLOW),
                (0o644, RET_ALLOW),
            ] {
                let mut args = [0u64; 6];
                match arg {
                    ModeArg::Always(i) => args[i as usize] = mode,
                    ModeArg::WhenCreating { flags, mode: m } => {
                        args[flags as usize] = (libc::O_CREAT | libc::O_WRONLY) as u64;
                        args[m as usize] = mode;
                    }
                }
                assert_eq!(sys(&p, nr, args), want, "{name} {mode:o}");
                if let ModeArg::WhenCreating { flags, mode: m } = arg {
                    // O_TMPFILE creates too.
                    args[flags as usize] = (libc::O_TMPFILE | libc::O_RDWR) as u64;
                    assert_eq!(sys(&p, nr, args), want, "{name} O_TMPFILE {mode:o}");
                    // Without O_CREAT/O_TMPFILE the mode argument is ignored by the kernel.
                    args[flags as usize] = libc::O_RDONLY as u64;
                    args[m as usize] = 0o4755;
                    assert_eq!(sys(&p, nr, args), RET_ALLOW, "{name} no O_CREAT");
                }
            }
        }
        assert_eq!(
            sys(&p, NR_OPENAT2, [0; 6]),
            RET_ERRNO | libc::ENOSYS as u32,
            "openat2's mode cannot be read: ENOSYS so libc falls back to openat"
        );
    }

    #[test]
    fn foreign_arch_and_x32_are_killed() {
        let p = build(FilterOptions::default());
        // i386 (AUDIT_ARCH_I386) and arm (AUDIT_ARCH_ARM).
        assert_eq!(run(&p, 0x4000_0003, 1, [0; 6]), RET_KILL_PROCESS);
        assert_eq!(run(&p, 0x4000_0028, 1, [0; 6]), RET_KILL_PROCESS);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            run(
                &p,
                AUDIT_ARCH.unwrap(),
                X32_SYSCALL_BIT | libc::SYS_ptrace as u32,
                [0; 6]
            ),
            RET_KILL_PROCESS
        );
    }

    #[test]
    fn program_fits_the_kernel_limit() {
        let p = build(FilterOptions {
            deny_sockets: true,
            ..Default::default()
        });
        assert!(p.len() < 4096);
        assert_eq!(p.last().unwrap().k, RET_KILL_PROCESS);
    }

    #[test]
    fn private_netns_allows_local_families_only() {
        let p = build(FilterOptions {
            local_families_only: true,
            ..Default::default()
        });
        for family in [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6] {
            assert_eq!(
                sys(&p, libc::SYS_socket, [family as u64, 1, 0, 0, 0, 0]),
                RET_ALLOW,
                "{family}"
            );
        }
        for family in [libc::AF_NETLINK, libc::AF_PACKET, libc::AF_VSOCK, 0] {
            assert_eq!(
                sys(&p, libc::SYS_socket, [family as u64, 3, 0, 0, 0, 0]),
                EPERM,
                "{family}"
            );
        }
        // pidfd_getfd is only left to init when asked.
        assert_eq!(sys(&p, NR_PIDFD_GETFD, [0; 6]), EPERM);
        let init = build(FilterOptions {
            local_families_only: true,
            allow_pidfd_getfd: true,
            ..Default::default()
        });
        assert_eq!(sys(&init, NR_PIDFD_GETFD, [0; 6]), RET_ALLOW);
    }

    #[test]
    fn denial_records_trap_writing_path_calls_only() {
        let p = build_unix_guard_with(true, &[]);
        let at = libc::AT_FDCWD as u32 as u64;
        for f in [libc::O_WRONLY, libc::O_RDWR, libc::O_CREAT, libc::O_TRUNC] {
            let f = (f | libc::O_CLOEXEC) as u64;
            assert_eq!(
                sys(&p, libc::SYS_openat, [at, 0, f, 0, 0, 0]),
                RET_USER_NOTIF
            );
        }
        let ro = (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_DIRECTORY) as u64;
        assert_eq!(sys(&p, libc::SYS_openat, [at, 0, ro, 0, 0, 0]), RET_ALLOW);
        for nr in [
            libc::SYS_mkdirat,
            libc::SYS_unlinkat,
            libc::SYS_renameat2,
            libc::SYS_linkat,
            libc::SYS_symlinkat,
            libc::SYS_truncate,
        ] {
            assert_eq!(sys(&p, nr, [0; 6]), RET_USER_NOTIF);
        }
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(sys(&p, libc::SYS_open, [0, ro, 0, 0, 0, 0]), RET_ALLOW);
            let w = libc::O_WRONLY as u64;
            assert_eq!(sys(&p, libc::SYS_open, [0, w, 0, 0, 0, 0]), RET_USER_NOTIF);
            assert_eq!(sys(&p, libc::SYS_creat, [0; 6]), RET_USER_NOTIF);
            assert_eq!(sys(&p, libc::SYS_rename, [0; 6]), RET_USER_NOTIF);
        }
        // Metadata changes, by path and by descriptor (attack pass 48, N3).
        for nr in [
            libc::SYS_fchmodat,
            NR_FCHMODAT2,
            libc::SYS_fchmod,
            libc::SYS_fchownat,
            libc::SYS_fchown,
            libc::SYS_utimensat,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            libc::SYS_removexattr,
            libc::SYS_fremovexattr,
            463, // setxattrat
            466, // removexattrat
        ] {
            assert_eq!(sys(&p, nr, [0; 6]), RET_USER_NOTIF, "{nr}");
        }
        #[cfg(target_arch = "x86_64")]
        for nr in [
            libc::SYS_chmod,
            libc::SYS_chown,
            libc::SYS_lchown,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_futimesat,
        ] {
            assert_eq!(sys(&p, nr, [0; 6]), RET_USER_NOTIF, "{nr}");
        }
        // chattr's ioctls notify; every other ioctl stays in the kernel.
        for cmd in super::super::denial_records::METADATA_IOCTLS {
            let args = [3, (1u64 << 32) | cmd as u64, 0, 0, 0, 0];
            assert_eq!(sys(&p, libc::SYS_ioctl, args), RET_USER_NOTIF, "{cmd:#x}");
        }
        for cmd in [
            0x5401,      /* TCGETS */
            0x8008_6601, /* FS_IOC_GETFLAGS */
            0x5421,
        ] {
            let args = [3, cmd, 0, 0, 0, 0];
            assert_eq!(sys(&p, libc::SYS_ioctl, args), RET_ALLOW, "{cmd:#x}");
        }
        // Reading metadata stays in the kernel, and so do calls on a descriptor open for
        // writing (the open was judged).
        for nr in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_ftruncate,
            libc::SYS_fallocate,
            libc::SYS_newfstatat,
            libc::SYS_getxattr,
            libc::SYS_fgetxattr,
            464, // getxattrat
        ] {
            assert_eq!(sys(&p, nr, [0; 6]), RET_ALLOW, "{nr}");
        }
        assert_eq!(
            sys(&p, libc::SYS_connect, [3, 0, 0, 0, 0, 0]),
            RET_USER_NOTIF
        );
        // Without records the guard program lets every path call through.
        let g = build_unix_guard();
        assert_eq!(sys(&g, libc::SYS_mkdirat, [0; 6]), RET_ALLOW);
        assert!(p.len() < 200, "{}", p.len());
    }

    #[test]
    fn unix_guard_notifies_connect_and_refuses_unix_datagrams() {
        let p = build_unix_guard();
        assert_eq!(
            sys(&p, libc::SYS_connect, [3, 0, 0, 0, 0, 0]),
            RET_USER_NOTIF
        );
        assert_eq!(sys(&p, NR_PIDFD_GETFD, [0; 6]), EPERM);
        let unix = libc::AF_UNIX as u64;
        let flags = (libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64;
        for nr in [libc::SYS_socket, libc::SYS_socketpair] {
            for ok in [libc::SOCK_STREAM, libc::SOCK_SEQPACKET] {
                assert_eq!(
                    sys(&p, nr, [unix, ok as u64 | flags, 0, 0, 0, 0]),
                    RET_ALLOW
                );
            }
            for bad in [libc::SOCK_DGRAM, libc::SOCK_RAW, libc::SOCK_RDM] {
                assert_eq!(sys(&p, nr, [unix, bad as u64 | flags, 0, 0, 0, 0]), EPERM);
            }
            // Other families' datagrams are not this program's business.
            let inet = libc::AF_INET as u64;
            assert_eq!(
                sys(&p, nr, [inet, libc::SOCK_DGRAM as u64, 0, 0, 0, 0]),
                RET_ALLOW
            );
        }
        for nr in [libc::SYS_sendto, libc::SYS_sendmsg, libc::SYS_read] {
            assert_eq!(sys(&p, nr, [0; 6]), RET_ALLOW);
        }
        assert_eq!(run(&p, 0x4000_0003, 1, [0; 6]), RET_KILL_PROCESS);
    }
}
