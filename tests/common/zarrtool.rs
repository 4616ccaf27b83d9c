//! Running the `zarrtool` binary under test, for the tests of the command line.

use std::path::{Path, PathBuf};
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

/// Writes the int32 values 0..20 (little-endian) to `dir/a.bin` and imports them into the
/// store `dir/s.zarr` at `node` as an array of shape 4x5 and chunks 2x3, with the further
/// options `extra`; returns the raw file's and the store's paths.
pub fn import_sample(dir: &Path, node: &str, extra: &[&str]) -> (String, String) {
    let raw = dir.join("a.bin");
    let bytes: Vec<u8> = (0..20i32).flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&raw, bytes).expect("write the raw file");
    let store = dir.join("s.zarr");
    let args = [
        "import",
        s(&raw),
        s(&store),
        node,
        "--dtype",
        "<i4",
        "--shape",
        "4,5",
        "--chunks",
        "2,3",
    ];
    ok(&[&args[..], extra].concat());
    (s(&raw).to_string(), s(&store).to_string())
}

/// Makes the netCDF file `name`.nc of `kind` (`ncgen -k`: classic, 64-bit-offset, cdf5,
/// nc4) in `dir` from CDL; needs Debian's netcdf-bin.
pub fn ncgen(dir: &Path, name: &str, kind: &str, cdl: &str) -> PathBuf {
    let src = dir.join(format!("{name}.cdl"));
    std::fs::write(&src, cdl).unwrap();
    let nc = dir.join(format!("{name}.nc"));
    let status = Command::new("ncgen")
        .args(["-k", kind, "-o"])
        .arg(&nc)
        .arg(&src)
        .status()
        .expect("ncgen (Debian's netcdf-bin) runs");
    assert!(status.success(), "ncgen -k {kind} {name}.cdl");
    nc
}
