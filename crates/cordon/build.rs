//! Link step for the `cordon` binary (issue 12, launch speed).
//!
//! A cold `cordon run` loads this binary twice (the CLI, then the re-executed
//! `__sandbox-helper`). As a position-independent executable every load makes the dynamic
//! loader apply tens of thousands of `R_X86_64_RELATIVE` relocations (vtables, string
//! tables), each write faulting a private copy of a data page: measured 2.2-2.5 ms per
//! `cordon --version` against 1.2 ms linked `-no-pie` (hyperfine, this machine). The code
//! is still compiled position-independent; only the final link resolves addresses, so the
//! executable's own image loses address randomisation (shared libraries, heap and stack
//! keep it). Only the `cordon` binary is affected: test binaries and proc-macros link as
//! before.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
