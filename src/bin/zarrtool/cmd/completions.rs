//! `zarrtool completions`: a shell completion script.

use crate::out::Out;
use zarr::Result;

/// Prints the completion script of the command line `cmd` for `shell`.
pub fn run(cmd: &mut clap::Command, shell: clap_complete::Shell) -> Result<u8> {
    // Generated into memory: clap_complete panics on a failed write.
    let mut text = Vec::new();
    clap_complete::generate(shell, cmd, "zarrtool", &mut text);
    let mut out = Out::new();
    out.bytes(&text)?;
    out.finish()?;
    Ok(0)
}
