//! Standard output with checked writes. Rust's `println!` panics when a write fails; here a
//! failed write is an error. A reader that closed the pipe (`zarrtool dump … | head -1`)
//! ends the command quietly with status 0, as the output was no longer wanted; any other
//! write error (a full disk) is reported and exits with status 1.

use std::io::{BufWriter, ErrorKind, StdoutLock, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use zarr::Error;

/// Set when a write found the reading end of standard output closed.
static PIPE_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a write found standard output's reader gone (then the command ends quietly).
pub fn pipe_closed() -> bool {
    PIPE_CLOSED.load(Ordering::Relaxed)
}

/// The library error for a failed write to standard output (noting a closed pipe).
pub fn write_error(e: std::io::Error) -> Error {
    if e.kind() == ErrorKind::BrokenPipe {
        PIPE_CLOSED.store(true, Ordering::Relaxed);
    }
    Error::io("writing to standard output", e)
}

/// Buffered, locked standard output; call [`Out::finish`] to flush and see the last error.
pub struct Out(BufWriter<StdoutLock<'static>>);

impl Out {
    /// Locks standard output for one command's output.
    pub fn new() -> Self {
        Out(BufWriter::new(std::io::stdout().lock()))
    }

    /// Writes `text` and a line break.
    pub fn line(&mut self, text: impl std::fmt::Display) -> zarr::Result<()> {
        writeln!(self.0, "{text}").map_err(write_error)
    }

    /// Writes bytes as they are.
    pub fn bytes(&mut self, bytes: &[u8]) -> zarr::Result<()> {
        self.0.write_all(bytes).map_err(write_error)
    }

    /// Flushes what is buffered.
    pub fn finish(mut self) -> zarr::Result<()> {
        self.0.flush().map_err(write_error)
    }
}

/// Writes `text` and a line break to standard output, flushed.
pub fn line(text: impl std::fmt::Display) -> zarr::Result<()> {
    let mut out = Out::new();
    out.line(text)?;
    out.finish()
}

/// Prints `value` as indented JSON, one document on standard output.
pub fn print_json(value: &serde_json::Value) -> zarr::Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Internal(format!("rendering JSON: {e}")))?;
    line(text)
}
