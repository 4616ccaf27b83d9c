//! Running the `zarrtool` binary under test, for the tests of the command line.

use std::path::Path;
use std::process::{Command, Output};

/// The binary under test: $ZARRTOOL_BIN (an installed one), else the one cargo built.
pub fn exe() -> String {
    std::env::var("ZARRTOOL_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_zarrtool").into())
}

/// Runs zarrtool with `args`.
pub fn tool(args: &[&str]) -> Output {
    Command::new(exe())
        .args(args)
        .output()
        .expect("run zarrtool")
}

/// Runs zarrtool with `args` in the directory `dir`.
pub fn tool_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(exe())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run zarrtool")
}

/// Checks that the run of zarrtool with `args` that gave `out` succeeded.
fn succeeded(out: Output, args: &[&str]) -> Output {
    assert!(
        out.status.success(),
        "zarrtool {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs zarrtool expecting success.
pub fn succeeds(args: &[&str]) -> Output {
    succeeded(tool(args), args)
}

/// Runs zarrtool expecting success; returns its stdout.
pub fn ok(args: &[&str]) -> String {
    String::from_utf8(succeeds(args).stdout).expect("UTF-8 output")
}

/// Runs zarrtool in `dir` expecting success; returns its stdout.
pub fn ok_in(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(succeeded(tool_in(dir, args), args).stdout).expect("UTF-8 output")
}

/// Runs zarrtool expecting failure with `code` and nothing on stdout; returns its stderr.
pub fn fails(args: &[&str], code: i32) -> String {
    let out = tool(args);
    assert_eq!(out.status.code(), Some(code), "zarrtool {args:?}");
    assert_eq!(out.stdout, b"", "zarrtool {args:?}");
    String::from_utf8(out.stderr).expect("UTF-8 messages")
}

/// `p` as text.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}
