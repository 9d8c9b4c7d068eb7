//! Files in a home directory that run code at the user's next shell or login: the shells'
//! start-up files and sshd's per-user files.
//!
//! One list for both crates: the exec policy forbids a command line that writes a shell
//! start-up file (`cordon-execpolicy`'s `is_rc_file`), and resolution keeps every one of
//! these read-only when it lies inside a writable root (a grant of the home directory,
//! `-w ~` or an MCP `additional_permissions` entry on `$HOME`: attack pass 224 #2, where a
//! `python3 -c 'open(…"~/.bashrc","a")…'` wrote what `echo x >> ~/.bashrc` could not). A
//! missing one gets no placeholder — an empty `~/.bash_profile` would have bash skip
//! `~/.profile` — but is kept absent: one a command creates is removed after the run and
//! named ([`crate::ResolvedProfile::kept_absent`]).

/// Shell start-up files, relative to a home directory.
pub const SHELL_RC_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    // Sourced by the stock `~/.bashrc` of Debian and Ubuntu (attack pass 229 #3).
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".mkshrc",
    ".config/fish/config.fish",
    // csh/tcsh login and logout, and the start-up files of other shells (attack pass 246
    // #2: written under `-w ~` and left).
    ".login",
    ".logout",
    ".yashrc",
    ".xonshrc",
    ".config/xonsh/rc.xsh",
    ".config/nushell/env.nu",
    ".config/nushell/config.nu",
    ".config/nushell/login.nu",
    ".config/powershell/Microsoft.PowerShell_profile.ps1",
    ".config/powershell/profile.ps1",
    ".config/elvish/rc.elv",
    ".elvish/rc.elv",
    ".config/ion/initrc",
];

/// Directories of shell start-up code, relative to a home directory: fish sources every
/// `*.fish` in `conf.d` at each start, and autoloads `functions/NAME.fish` when the
/// command NAME runs (a `functions/ls.fish` replaces `ls`), as it does `config.fish`.
/// Read-only when present; a missing one a command makes is named after the run (a
/// directory is not removed), as [`SESSION_LOGIN_FILES`]' directories are.
pub const SHELL_RC_DIRS: &[&str] = &[
    ".config/fish/conf.d",
    ".config/fish/functions",
    ".config/fish/completions",
    ".local/share/fish/vendor_conf.d",
    ".local/share/fish/vendor_functions.d",
];

/// sshd's and ssh's per-user files that let someone in or run code at the next ssh login
/// (`authorized_keys` grants logins and can force commands, `rc` runs at every login,
/// `config`'s `ProxyCommand`/`LocalCommand` run at the user's next `ssh`), relative to a
/// home directory.
pub const SSH_LOGIN_FILES: &[&str] = &[
    ".ssh/authorized_keys",
    ".ssh/authorized_keys2",
    ".ssh/rc",
    ".ssh/config",
    // Read by sshd where `PermitUserEnvironment` is on: `LD_PRELOAD=…` for every login.
    ".ssh/environment",
    // Host-based and Kerberos logins: who may log in as this user without a password.
    ".rhosts",
    ".shosts",
    ".k5login",
    ".k5users",
];

/// Files (and directories) the graphical or PAM login reads from a home directory:
/// `pam_env` sets the variables of `~/.pam_environment` (where `user_readenv` is on;
/// `LD_PRELOAD` among them), display managers and `startx` run the X session scripts,
/// systemd and the desktop read the environment, autostart and user-unit directories.
/// Relative to a home.
pub const SESSION_LOGIN_FILES: &[&str] = &[
    ".pam_environment",
    ".xprofile",
    ".xsessionrc",
    ".xsession",
    ".xinitrc",
    // Directories: systemd's user environment (`*.conf` there set variables for the whole
    // session: new-user pass 237 #8), the desktop's autostart entries and systemd user
    // units. A missing one a command makes is named after the run (a directory is not
    // removed).
    ".config/environment.d",
    ".config/autostart",
    ".config/systemd/user",
    // More of the same (attack pass 246 #2): X session clients and input methods, KDE's
    // session scripts, systemd's other user-unit and manager-config directories, D-Bus
    // services started on demand by name, and window managers' autostart files.
    ".xinputrc",
    ".Xclients",
    ".config/plasma-workspace/env",
    ".config/plasma-workspace/shutdown",
    ".config/autostart-scripts",
    ".local/share/systemd/user",
    ".config/systemd/user.conf.d",
    ".local/share/dbus-1/services",
    ".config/xfce4/xinitrc",
    ".config/openbox/autostart",
    ".config/labwc/autostart",
];

/// Who runs a shell start-up file (the "tool" of a kept-absent path).
pub const SHELL: &str = "your shell";
/// Who runs an ssh login file.
pub const SSH: &str = "ssh";
/// Who runs a session login file ([`SESSION_LOGIN_FILES`]).
pub const SESSION: &str = "your login session";

/// Whether `rel` (relative to a home directory, `/`-separated) is a shell start-up file.
pub fn is_shell_rc(rel: &str) -> bool {
    SHELL_RC_FILES.contains(&rel)
}

/// Every login file relative to a home directory, with who runs it ([`SHELL`], [`SSH`],
/// [`SESSION`]).
pub fn all() -> impl Iterator<Item = (&'static str, &'static str)> {
    SHELL_RC_FILES
        .iter()
        .chain(SHELL_RC_DIRS)
        .map(|f| (*f, SHELL))
        .chain(SSH_LOGIN_FILES.iter().map(|f| (*f, SSH)))
        .chain(SESSION_LOGIN_FILES.iter().map(|f| (*f, SESSION)))
}

/// Why such a file is protected ([`crate::EntryOrigin::Protected`]).
pub fn reason(tool: &str) -> String {
    if tool == SSH {
        "remote login file: sshd, ssh or a host-based or Kerberos login reads it at the next \
         login, and whom it lets in or what it sets runs there"
            .to_string()
    } else if tool == SESSION {
        "login session file: PAM, the X or desktop session, systemd or D-Bus reads it at \
         your next graphical or PAM login (or when the service starts), and what it sets or \
         runs runs there"
            .to_string()
    } else {
        "shell start-up file: your shell runs it at your next login or shell".to_string()
    }
}

/// Whether a kept-absent path's tool ([`crate::ResolvedProfile::kept_absent`]) is one of
/// these files' ([`SHELL`], [`SSH`], [`SESSION`]): its warning says when it would run.
pub fn is_login_tool(tool: &str) -> bool {
    tool == SHELL || tool == SSH || tool == SESSION
}
