//! The one error type of the core. Each variant is a category that maps to one C status code;
//! the message names the key, field, chunk or argument at fault.

/// An error from any layer of libzarr.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An argument is out of its allowed range or malformed.
    #[error("invalid argument: {0}")]
    InvalidArg(String),
    /// The number of dimensions given does not match the array's rank.
    #[error("rank mismatch: {0}")]
    RankMismatch(String),
    /// A region or index lies outside the array.
    #[error("out of bounds: {0}")]
    OutOfBounds(String),
    /// The memory data type does not match the array's data type.
    #[error("data type mismatch: {0}")]
    DtypeMismatch(String),
    /// A caller buffer has the wrong size.
    #[error("buffer size: {0}")]
    BufferSize(String),
    /// A node or key does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The node at a path is of the other kind (an array where a group was expected, or
    /// the reverse).
    #[error("wrong node type: {0}")]
    NodeType(String),
    /// A node exists where the operation needs none.
    #[error("already exists: {0}")]
    Exists(String),
    /// A metadata document is malformed or inconsistent.
    #[error("metadata error: {0}")]
    Metadata(String),
    /// A codec id is not known to this build.
    #[error("unsupported codec: {0}")]
    CodecUnsupported(String),
    /// Encoding or decoding a chunk failed.
    #[error("codec error: {0}")]
    Codec(String),
    /// The storage backend failed.
    #[error("storage error: {0}")]
    Io(String),
    /// A write was attempted through a read-only handle or store.
    #[error("read-only: {0}")]
    ReadOnly(String),
    /// A valid feature that this build does not implement.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A store key or node path is malformed or would escape the store.
    #[error("invalid key: {0}")]
    InvalidKey(String),
    /// Shape or size arithmetic overflowed 64 bits.
    #[error("overflow: {0}")]
    Overflow(String),
    /// Values do not fit the element type they are converted to (netCDF's `NC_ERANGE`).
    #[error("out of range: {0}")]
    Range(String),
    /// Another writer was first: a commit or rebase of a repository met another writer's
    /// commit on the branch, or another writer holds an array's append lock (the message
    /// says what to do).
    #[error("conflict: {0}")]
    Conflict(String),
    /// A buffer could not be allocated (the message says how large and what for).
    #[error("out of memory: {0}")]
    NoMemory(String),
    /// A broken internal invariant (a bug in libzarr).
    #[error("internal error: {0}")]
    Internal(String),
}

/// Result with the library's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A storage error for `what`, with the operating system's message.
    pub fn io(what: impl std::fmt::Display, err: std::io::Error) -> Self {
        Error::Io(format!("{what}: {err}"))
    }

    /// The same kind of error with its message passed through `f` (to add what a caller
    /// knows).
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> Self {
        macro_rules! each {
            ($($kind:ident),*) => {
                match self {
                    $(Error::$kind(message) => Error::$kind(f(message)),)*
                }
            };
        }
        each!(
            InvalidArg,
            RankMismatch,
            OutOfBounds,
            DtypeMismatch,
            BufferSize,
            NotFound,
            NodeType,
            Exists,
            Metadata,
            CodecUnsupported,
            Codec,
            Io,
            ReadOnly,
            Unsupported,
            InvalidKey,
            Overflow,
            Range,
            Conflict,
            NoMemory,
            Internal
        )
    }
}

/// Checked product of sizes, reporting `what` on overflow.
pub fn checked_product(values: impl IntoIterator<Item = u64>, what: &str) -> Result<u64> {
    values.into_iter().try_fold(1u64, |acc, v| {
        acc.checked_mul(v)
            .ok_or_else(|| Error::Overflow(format!("{what} overflows 64 bits")))
    })
}

/// The number of items in a box of `extents` (elements of a region, chunks of a plan): 0
/// when any extent is 0 (so zero extents never overflow), else their product, which must
/// fit in 64 bits and in `usize`.
pub fn count_of(extents: &[u64], what: &str) -> Result<usize> {
    if extents.contains(&0) {
        return Ok(0);
    }
    to_usize(checked_product(extents.iter().copied(), what)?, what)
}

/// Converts a 64-bit size to `usize`, reporting `what` when it does not fit.
pub fn to_usize(value: u64, what: &str) -> Result<usize> {
    usize::try_from(value)
        .map_err(|_| Error::Overflow(format!("{what} ({value}) exceeds the address space")))
}

/// Grows `buf` so it can hold `additional` more bytes without aborting when memory is
/// short: an allocation failure becomes [`Error::NoMemory`] naming `what`.
pub fn try_reserve(buf: &mut Vec<u8>, additional: usize, what: &str) -> Result<()> {
    buf.try_reserve(additional)
        .map_err(|_| no_memory(additional, what))
}

/// Resizes `buf` to `len` bytes (new bytes zero), or returns [`Error::NoMemory`] naming
/// `what` when the memory cannot be had.
pub fn try_resize(buf: &mut Vec<u8>, len: usize, what: &str) -> Result<()> {
    try_reserve(buf, len.saturating_sub(buf.len()), what)?;
    buf.resize(len, 0);
    Ok(())
}

/// A zero-filled buffer of `len` bytes, or [`Error::NoMemory`] naming `what` when it cannot
/// be allocated.
pub fn try_zeroed(len: usize, what: &str) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    try_reserve(&mut buf, len, what)?;
    buf.resize(len, 0);
    Ok(buf)
}

/// The error for a failed allocation of `len` bytes for `what`.
pub fn no_memory(len: usize, what: &str) -> Error {
    Error::NoMemory(format!("cannot allocate {len} bytes for {what}"))
}

/// The text a panic was raised with (`panic!`'s message), for an error that reports it.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Tells the user something no call can return: a notice on standard error, prefixed
/// `libzarr:` (an append lock taken over from a dead process, a buffer that could not be
/// stored at exit). Setting `ZARR_QUIET` to a non-empty value silences it.
pub fn notice(message: &str) {
    if std::env::var_os("ZARR_QUIET").is_some_and(|v| !v.is_empty()) {
        return;
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "libzarr: {message}");
}
