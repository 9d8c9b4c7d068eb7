//! Standalone Linux sandbox helper: the same code the `cordon` binary runs for
//! `cordon __sandbox-helper …`, as its own small executable (used by the integration
//! tests and usable as a lean helper). Arguments: `[__sandbox-helper]
//! --permission-profile <payload> [--report] -- <argv…>`.

#[cfg(target_os = "linux")]
fn main() {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().and_then(|a| a.to_str()) == Some(cordon_sandbox::linux::HELPER_SUBCOMMAND) {
        args.remove(0);
    }
    std::process::exit(cordon_sandbox::linux::helper_main(args));
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("cordon: the sandbox helper exists on Linux only");
    std::process::exit(125);
}
