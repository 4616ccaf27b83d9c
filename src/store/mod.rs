//! Key-value stores holding a Zarr hierarchy: the [`Store`] trait, key rules and the
//! memory and filesystem implementations.

#[cfg(feature = "cloud")]
mod cloud;
mod filesystem;
#[cfg(feature = "icechunk")]
mod icechunk;
#[cfg(feature = "icechunk")]
mod icechunk_disk;
mod memo;
mod memory;
pub mod reference;
pub mod repository;
mod spares;
mod url;
pub mod writes;
mod zip;

pub use filesystem::{is_temp_name, temp_file_writer, FilesystemStore};
#[cfg(feature = "icechunk")]
pub use icechunk::{At, IcechunkStore};
pub(crate) use memo::Memo;
pub use memory::MemoryStore;
pub use reference::ReferenceStore;
pub use repository::{repository_of, Repository, Snapshot};
pub use spares::Spares;
pub use url::{local_path, open_url};
pub use zip::{ZipMode, ZipStore};

#[cfg(feature = "cloud")]
pub use cloud::{parse_ini, CloudStore, Provider, Settings};

/// How a node is opened or created, as zarr-python's modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Mode {
    /// `r`: read only; the node must exist.
    Read = 0,
    /// `r+`: read and write; the node must exist.
    ReadWrite = 1,
    /// `a`: read and write; created if missing.
    Append = 2,
    /// `w`: created, replacing whatever is at the path.
    Overwrite = 3,
    /// `w-`: created; fails if anything is at the path.
    CreateNew = 4,
}

impl Mode {
    /// The mode with integer value `code`, if any.
    pub fn from_code(code: i32) -> Option<Self> {
        [
            Mode::Read,
            Mode::ReadWrite,
            Mode::Append,
            Mode::Overwrite,
            Mode::CreateNew,
        ]
        .into_iter()
        .find(|m| *m as i32 == code)
    }

    /// zarr-python's spelling (`"r+"`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Read => "r",
            Mode::ReadWrite => "r+",
            Mode::Append => "a",
            Mode::Overwrite => "w",
            Mode::CreateNew => "w-",
        }
    }
}

/// `message` with the user information and query values of every URL in it masked: for
/// messages that quote a URL as the user wrote it (a password or a signed URL's signature
/// never reaches a log). The values of `branch`, `tag` and `snapshot` in Icechunk URLs
/// are names, not secrets, and stay.
pub fn mask_urls(message: &str) -> String {
    #[cfg(feature = "cloud")]
    return cloud::mask_urls(message);
    #[cfg(not(feature = "cloud"))]
    message.to_string()
}

use crate::error::{Error, Result};
use std::borrow::Cow;

/// One level of a store listing: the keys directly under a prefix and the sub-prefixes
/// (names only, without the trailing `/`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DirListing {
    /// Names of the values directly under the prefix.
    pub keys: Vec<String>,
    /// Names of the child prefixes ("directories").
    pub prefixes: Vec<String>,
}

/// How much of what a store wrote survives a crash. At every level a killed process leaves
/// each key with its old or its new value, never a mix (values are written to a temporary
/// file and renamed into place); the levels differ after a power loss or operating-system
/// crash, and in what they cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Nothing is synced: after a power loss, writes of the last seconds may be lost (a key
    /// holds its old value, or is missing if it was new), and on some filesystems a value
    /// renamed into place shortly before may be empty.
    None,
    /// What the handle wrote (files, the directories holding them and those above) is synced by
    /// [`Store::flush`] and [`Store::close`], and when the store is dropped: once one of
    /// them returns, everything written before it survives a power loss. Writes after it
    /// are as under `None` until the next.
    #[default]
    Flush,
    /// Each value is synced before it is renamed into place, and its directory after: when
    /// a write (or erasure) returns, it survives a power loss.
    EachWrite,
}

/// An opaque version of a stored value: an object's ETag (and version id) on object
/// stores, a digest of the value in memory. Two reads of an unchanged value give equal
/// versions; a rewritten value gets another.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version(pub String);

/// What a conditional write ([`Store::set_if`]) expects to find at its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect<'a> {
    /// No value: the write creates the key.
    Absent,
    /// The value of this version: the write replaces it.
    Version(&'a Version),
}

/// The end of a value as [`Store::get_tail`] reads it.
#[derive(Debug)]
pub struct Tail {
    /// The last bytes asked for.
    pub bytes: Vec<u8>,
    /// The size of the whole value.
    pub size: u64,
    /// The value's version, when the store keeps versions: later reads of other parts of
    /// the same value can insist on it ([`Store::get_range_if`]).
    pub version: Option<Version>,
}

/// What a read of part of one version of a value ([`Store::get_range_if`]) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranged {
    /// The range was read.
    Read,
    /// The key does not exist (any more).
    Missing,
    /// The key holds another version now: nothing was read.
    Changed,
}

/// One read of a batch ([`Store::fetch_many`]).
#[derive(Debug, Clone)]
pub enum Fetch {
    /// The whole value at the key, refused unread when longer than the bound.
    Whole(String, u64),
    /// The last bytes of the value at the key ([`Store::get_tail`]).
    Tail(String, u64),
    /// Ranges (offset, length) of the value at the key, from one version when given
    /// ([`Store::get_range_if`]); ranges lying close together are read by one request.
    Ranges(String, Vec<(u64, u64)>, Option<Version>),
}

/// What one [`Fetch`] found.
#[derive(Debug)]
pub enum Fetched {
    /// The whole value, or `None` when the key does not exist.
    Whole(Option<Vec<u8>>),
    /// The tail, or `None` when the key does not exist.
    Tail(Option<Tail>),
    /// The bytes of each range, in the order asked, or what kept them from being read.
    Ranges(std::result::Result<Vec<Piece>, Ranged>),
}

/// The bytes of one range read: a part of a buffer that the ranges read by one request
/// share (no copy of each).
pub type Piece = (std::sync::Arc<Vec<u8>>, std::ops::Range<usize>);

/// The pieces of `bytes` at `ranges` (within it, not overlapping): sharing its buffer when
/// they fill at least half of it, else each copied out and the buffer given back to
/// `spares`, so that no piece keeps alive more than as many bytes again that nobody asked
/// for.
pub(crate) fn pieces(
    bytes: Vec<u8>,
    ranges: &[std::ops::Range<usize>],
    spares: &Spares,
) -> Vec<Piece> {
    let wanted: usize = ranges.iter().map(|r| r.len()).sum();
    if wanted.saturating_mul(2) >= bytes.len() {
        let bytes = std::sync::Arc::new(bytes);
        return ranges.iter().map(|r| (bytes.clone(), r.clone())).collect();
    }
    let copied = ranges
        .iter()
        .map(|r| (std::sync::Arc::new(bytes[r.clone()].to_vec()), 0..r.len()))
        .collect();
    spares.give(bytes);
    copied
}

/// Ranges of one value closer than this are read by one request (the bytes between are
/// read and dropped): on object stores one more request costs more than a MiB.
pub(crate) const MERGE_GAP: u64 = 1 << 20;

/// The longest request merged ranges make: longer runs are read by several requests in
/// flight at once, which object stores serve faster than one stream.
pub(crate) const MERGED_MAX: u64 = 2 << 20;

/// Groups `ranges` (offset, length) into requests: each `(start, end, members)` covers the
/// ranges listed (by position) with gaps of at most `gap` bytes between them, and spans at
/// most `max_len` bytes unless one range alone is longer.
pub(crate) fn merge_ranges(
    ranges: &[(u64, u64)],
    gap: u64,
    max_len: u64,
) -> Vec<(u64, u64, Vec<usize>)> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| ranges[i].0);
    let mut merged: Vec<(u64, u64, Vec<usize>)> = Vec::new();
    for i in order {
        let (offset, len) = ranges[i];
        let end = offset.saturating_add(len);
        match merged.last_mut() {
            Some(last)
                if offset <= last.1.saturating_add(gap) && end.max(last.1) - last.0 <= max_len =>
            {
                last.1 = last.1.max(end);
                last.2.push(i);
            }
            _ => merged.push((offset, end, vec![i])),
        }
    }
    merged
}

/// A value being written piece by piece ([`Store::write_value`]).
pub trait ValueWriter: Send {
    /// Appends `bytes` to the value.
    fn append(&mut self, bytes: &[u8]) -> Result<()>;
    /// Replaces bytes already appended, from `offset` on (a header filled in last).
    fn overwrite(&mut self, offset: u64, bytes: &[u8]) -> Result<()>;
    /// Puts the value in place at its key, replacing what was there; readers see the old
    /// or the new value, never a mix. It is made durable as the store's durability level
    /// says; with `sync_now`, a value the level syncs at the flush is synced now instead
    /// (by a thread that stores behind the encoding, so that the device works meanwhile).
    fn commit(self: Box<Self>, sync_now: bool) -> Result<()>;
}

/// A key-value store. Keys are normalised, `/`-separated strings (see [`validate_key`]).
/// Implementations are safe to share between threads.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The value at `key`, or `None` when it does not exist.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// Reads the value at `key` into `buf` (replacing its content, reusing its capacity);
    /// returns whether the key exists. A value longer than `max_len` bytes is refused with
    /// a codec error naming the key; stores that can tell the size first (files, zip
    /// entries) read none of it, and none reads more than `max_len + 1` bytes of it.
    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        match self.get(key)? {
            Some(value) => copy_bounded(key, &value, buf, max_len).map(|()| true),
            None => Ok(false),
        }
    }
    /// Reads the value at `key` straight into `out` when it is exactly `out.len()` bytes:
    /// `Some(true)` read, `Some(false)` no such key, `None` when its length differs or the
    /// store cannot read into a caller's slice (the caller then reads it as usual). Files
    /// do, so that an uncompressed chunk lands in the caller's buffer with one copy.
    fn read_exact_into(&self, key: &str, out: &mut [u8]) -> Result<Option<bool>> {
        let _ = (key, out);
        Ok(None)
    }
    /// `len` bytes of the value at `key` from byte `offset`, or `None` when the key does not
    /// exist; a range past the end is an error. Stores that can read part of a value
    /// (files) do so without reading the rest.
    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        let Some(value) = self.get(key)? else {
            return Ok(None);
        };
        Ok(Some(range_of(&value, key, offset, len)?.to_vec()))
    }
    /// Reads `len` bytes of the value at `key` from byte `offset` into `buf` (its contents
    /// replaced, its capacity reused); `false` when the key does not exist. A range past the
    /// end is an error.
    fn get_range_into(&self, key: &str, offset: u64, len: u64, buf: &mut Vec<u8>) -> Result<bool> {
        match self.get_range(key, offset, len)? {
            // Stores that read into a new buffer anyway hand it over rather than copy it.
            Some(bytes) => {
                *buf = bytes;
                Ok(true)
            }
            None => Ok(false),
        }
    }
    /// The last `len` bytes of the value at `key`, the value's size and version, or `None`
    /// when the key does not exist; a value shorter than `len` is an error. Object stores
    /// read it with one suffix-range request (a shard index needs no size query first).
    fn get_tail(&self, key: &str, len: u64) -> Result<Option<Tail>> {
        let Some(size) = self.size(key)? else {
            return Ok(None);
        };
        if size < len {
            return Err(Error::Io(format!(
                "the last {len} bytes of {key:?} were asked, but it holds {size}"
            )));
        }
        Ok(self.get_range(key, size - len, len)?.map(|bytes| Tail {
            bytes,
            size,
            version: None,
        }))
    }
    /// Reads `len` bytes from `offset` of the value at `key` into `buf`, but only from the
    /// value of `version` (as [`Store::get_tail`] gave it): [`Ranged::Changed`] when the key
    /// holds another value now. Stores without versions read what is there.
    fn get_range_if(
        &self,
        key: &str,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
        version: &Version,
    ) -> Result<Ranged> {
        let _ = version;
        Ok(match self.get_range_into(key, offset, len, buf)? {
            true => Ranged::Read,
            false => Ranged::Missing,
        })
    }
    /// How many reads this store serves best at once: 1 for local stores (the worker pool
    /// reads them), more for object stores, whose requests wait on the network: region
    /// reads then fetch many chunks with [`Store::fetch_each`] while the pool decodes.
    fn concurrency(&self) -> usize {
        1
    }
    /// Whether [`Store::will_read`] starts reads ahead of time (local files: the kernel
    /// reads them in while the caller decodes others).
    fn reads_ahead(&self) -> bool {
        false
    }
    /// Tells the store that `key` will be read soon, so that it may start reading it now.
    fn will_read(&self, _key: &str) {}
    /// Whether writes of many values go better through [`Store::put_many`] from a thread
    /// of their own while the caller encodes the next ones (local files that are synced:
    /// the sync waits on the device, not the processor).
    fn writes_behind(&self) -> bool {
        false
    }
    /// Runs a batch of reads, concurrently where the store can ([`Store::concurrency`]);
    /// each has its own outcome, in the order given. Values read may fill buffers taken
    /// from `spares`. Stores read them one by one unless they do better.
    fn fetch_many(&self, batch: &[Fetch], _spares: &Spares) -> Vec<Result<Fetched>> {
        fetch_one_by_one(self, batch)
    }
    /// Runs a batch of reads as [`Store::fetch_many`] does, handing each outcome (with its
    /// position in the batch) to `each` as soon as it is known, so that the caller can use
    /// the first reads while the last are in flight; each read is handed on once. Stores
    /// hand them on in order once all are read unless they do better (a store whose
    /// `fetch_many` calls `fetch_each` must implement `fetch_each`).
    fn fetch_each(
        &self,
        batch: &[Fetch],
        spares: &Spares,
        each: &mut dyn FnMut(usize, Result<Fetched>),
    ) {
        for (i, fetched) in self.fetch_many(batch, spares).into_iter().enumerate() {
            each(i, fetched);
        }
    }
    /// Stores each value of the batch at its key (`None`: erases the key), concurrently
    /// where the store can ([`Store::concurrency`]); the first error is returned, after
    /// every other write of the batch has been tried.
    fn put_many(&self, batch: Vec<(String, Option<Vec<u8>>)>) -> Result<()> {
        let mut first = Ok(());
        for (key, value) in batch {
            let done = match value {
                Some(value) => self.set(&key, &value),
                None => self.erase(&key).map(drop),
            };
            if first.is_ok() {
                first = done;
            }
        }
        first
    }
    /// Starts a value at `key` written piece by piece, so that a large value is never held
    /// whole: it replaces what was there when committed, and nothing is stored if it is
    /// dropped before. `None` when the store takes values whole only ([`Store::set`]).
    fn write_value(&self, key: &str) -> Result<Option<Box<dyn ValueWriter + '_>>> {
        let _ = key;
        Ok(None)
    }
    /// Stores `value` at `key`, replacing what was there; readers see the old or the new
    /// value, never a mix.
    fn set(&self, key: &str, value: &[u8]) -> Result<()>;
    /// Stores `value` at `key` only when the key holds what `expect` says, in one atomic
    /// step: `false` (nothing written) when it holds something else. Stores that cannot do
    /// this atomically (for the expectation given) refuse with [`Error::Unsupported`].
    fn set_if(&self, key: &str, value: &[u8], expect: Expect<'_>) -> Result<bool> {
        let _ = (key, value);
        Err(Error::Unsupported(format!(
            "this store cannot write conditionally ({expect:?})"
        )))
    }
    /// Whether [`Store::get_versioned`] and [`Store::set_if`] with a version work: the
    /// store can replace a value only if nobody changed it since it was read.
    fn versioned(&self) -> bool {
        false
    }
    /// Reads the value at `key` into `buf` as [`Store::get_into`] does and returns its
    /// version (`None` when the key does not exist). Stores without versions
    /// ([`Store::versioned`] is false) refuse with [`Error::Unsupported`].
    fn get_versioned(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<Option<Version>> {
        let _ = (key, buf, max_len);
        Err(Error::Unsupported(
            "this store keeps no versions of its values".into(),
        ))
    }
    /// Removes `key`; returns whether it existed.
    fn erase(&self, key: &str) -> Result<bool>;
    /// Removes every key that starts with `prefix` (all keys when it is empty).
    fn erase_prefix(&self, prefix: &str) -> Result<()>;
    /// Every key that starts with `prefix`, sorted.
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>>;
    /// The keys and sub-prefixes one level below `prefix` (`""` or ending in `/`), sorted.
    fn list_dir(&self, prefix: &str) -> Result<DirListing>;
    /// The size in bytes of the value at `key`, or `None` when it does not exist.
    fn size(&self, key: &str) -> Result<Option<u64>>;
    /// Whether writes are allowed.
    fn writable(&self) -> bool;

    /// Where the store keeps its data (a canonical directory or file path), when it has
    /// such a place: two stores with the same location share their keys.
    fn location(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// The Zarr format (1, 2 or 3) the caller said this store holds, if any: opening a
    /// node then looks for that format's documents first, so that on an object store an
    /// array or a consolidated hierarchy of that format opens with one request.
    fn zarr_format_hint(&self) -> Option<u8> {
        None
    }

    /// The store's commits, branches and tags, when it keeps a history (an Icechunk
    /// repository); see [`repository_of`].
    fn repository(&self) -> Option<&dyn Repository> {
        None
    }

    /// Finishes pending work (a zip's central directory, a filesystem store's flush) and
    /// reports its errors; the store stays usable for reading.
    fn close(&self) -> Result<()> {
        Ok(())
    }

    /// Makes what this handle wrote survive a power loss, as its [`Durability`] says;
    /// stores that keep nothing to sync do nothing.
    fn flush(&self) -> Result<()> {
        Ok(())
    }

    /// Sets how much of what this handle writes survives a crash. Stores that cannot sync
    /// what they write accept only [`Durability::None`].
    fn set_durability(&self, level: Durability) -> Result<()> {
        match level {
            Durability::None => Ok(()),
            other => Err(Error::Unsupported(format!(
                "this store cannot sync what it writes (durability {other:?})"
            ))),
        }
    }

    /// Whether `key` exists.
    fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.size(key)?.is_some())
    }
    /// Every key in the store, sorted.
    fn list(&self) -> Result<Vec<String>> {
        self.list_prefix("")
    }
}

/// Runs a batch of reads one after another with the single-read methods (what
/// [`Store::fetch_many`] does unless a store does better).
pub fn fetch_one_by_one<S: Store + ?Sized>(store: &S, batch: &[Fetch]) -> Vec<Result<Fetched>> {
    batch
        .iter()
        .map(|fetch| match fetch {
            Fetch::Whole(key, max_len) => {
                let mut value = Vec::new();
                let found = store.get_into(key, &mut value, *max_len)?;
                Ok(Fetched::Whole(found.then_some(value)))
            }
            Fetch::Tail(key, len) => store.get_tail(key, *len).map(Fetched::Tail),
            Fetch::Ranges(key, ranges, version) => {
                let mut parts = Vec::with_capacity(ranges.len());
                for &(offset, len) in ranges {
                    let mut part = Vec::new();
                    let read = match version {
                        Some(version) => {
                            store.get_range_if(key, offset, len, &mut part, version)?
                        }
                        None => match store.get_range_into(key, offset, len, &mut part)? {
                            true => Ranged::Read,
                            false => Ranged::Missing,
                        },
                    };
                    if read != Ranged::Read {
                        return Ok(Fetched::Ranges(Err(read)));
                    }
                    let len = part.len();
                    parts.push((std::sync::Arc::new(part), 0..len));
                }
                Ok(Fetched::Ranges(Ok(parts)))
            }
        })
        .collect()
}

/// The `offset`/`len` range of `value` (stored at `key`), or an error naming the key when
/// it reaches past the end.
pub(crate) fn range_of<'a>(value: &'a [u8], key: &str, offset: u64, len: u64) -> Result<&'a [u8]> {
    offset
        .checked_add(len)
        .filter(|&end| end <= value.len() as u64)
        .map(|end| &value[offset as usize..end as usize])
        .ok_or_else(|| {
            Error::Io(format!(
                "range {offset}+{len} of {key:?} is past its end ({} bytes)",
                value.len()
            ))
        })
}

/// The error for a value at `key` of `size` bytes (or more) read with a limit of `max_len`:
/// no valid encoding of what the caller reads is that long, so it is a codec error.
pub(crate) fn too_large(key: &str, size: u64, max_len: u64) -> Error {
    Error::Codec(format!(
        "{key:?} holds {size} bytes or more, more than any valid encoding of it can \
         take ({max_len} bytes): refused without reading it"
    ))
}

/// Copies `value` (the value at `key`, held in memory) into `buf` as
/// [`Store::get_into`] does: refused when longer than `max_len`.
pub(crate) fn copy_bounded(key: &str, value: &[u8], buf: &mut Vec<u8>, max_len: u64) -> Result<()> {
    if value.len() as u64 > max_len {
        return Err(too_large(key, value.len() as u64, max_len));
    }
    buf.clear();
    crate::error::try_reserve(buf, value.len(), key)?;
    buf.extend_from_slice(value);
    Ok(())
}

/// The value at `key` in a new buffer (`None` when missing), refused unread when longer
/// than `max_len` ([`Store::get_into`]).
pub fn get_bounded(store: &dyn Store, key: &str, max_len: u64) -> Result<Option<Vec<u8>>> {
    let mut value = Vec::new();
    Ok(store.get_into(key, &mut value, max_len)?.then_some(value))
}

/// Largest metadata document read (1 GiB): a longer one is refused unread.
pub const MAX_DOCUMENT_BYTES: u64 = 1 << 30;

/// The metadata document at `key` (`None` when missing), refused with a metadata error
/// without being read when it holds more than [`MAX_DOCUMENT_BYTES`].
pub fn get_document(store: &dyn Store, key: &str) -> Result<Option<Vec<u8>>> {
    match get_bounded(store, key, MAX_DOCUMENT_BYTES) {
        Err(Error::Codec(_)) => Err(Error::Metadata(format!(
            "{key:?} holds more than {MAX_DOCUMENT_BYTES} bytes, more than any metadata \
             document libzarr reads"
        ))),
        other => other,
    }
}

/// Whether `key` names a metadata document (its last segment is a reserved name).
pub(crate) fn is_document(key: &str) -> bool {
    RESERVED_NAMES.contains(&key.rsplit('/').next().unwrap_or(key))
}

/// Refuses writes on a read-only store.
pub(crate) fn check_writable(store: &dyn Store, what: &str) -> Result<()> {
    if store.writable() {
        Ok(())
    } else {
        Err(Error::ReadOnly(format!(
            "cannot {what}: the store is read-only"
        )))
    }
}

/// Normalises a node path as the v2 spec says: backslashes become `/`, repeated slashes
/// collapse, leading and trailing slashes are dropped (so `""` and `"/"` name the root).
/// `.` and `..` segments, NUL bytes and drive prefixes are refused.
pub fn normalize_path(path: &str) -> Result<Cow<'_, str>> {
    // Already normal (the common case: keys the library builds): checked, not copied.
    if !path.contains('\\')
        && !path.starts_with('/')
        && !path.ends_with('/')
        && !path.contains("//")
    {
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            check_segment(segment, path)?;
        }
        return Ok(Cow::Borrowed(path));
    }
    let replaced = path.replace('\\', "/");
    let mut segments = Vec::new();
    for segment in replaced.split('/') {
        if segment.is_empty() {
            continue;
        }
        check_segment(segment, path)?;
        segments.push(segment);
    }
    Ok(Cow::Owned(segments.join("/")))
}

/// Validates and normalises a store key: like [`normalize_path`], but an absolute key
/// (leading `/` or `\`) and the empty key are refused, since a key names one value
/// relative to the store's root.
pub fn validate_key(key: &str) -> Result<Cow<'_, str>> {
    if key.starts_with('/') || key.starts_with('\\') {
        return Err(Error::InvalidKey(format!("key {key:?} is absolute")));
    }
    let normalized = normalize_path(key)?;
    if normalized.is_empty() {
        return Err(Error::InvalidKey(format!("key {key:?} is empty")));
    }
    Ok(normalized)
}

/// `name` (an entry of an archive or of consolidated metadata, described by `what`) as a
/// key, refused with [`Error::InvalidKey`] unless it already is one as [`validate_key`]
/// leaves it: a name that only normalises onto a key (`a//0`, `a\0`, `./a`, `a/`) would
/// stand in for that key, which readers taking names verbatim never see under it.
pub fn exact_key<'a>(name: &'a str, what: &dyn std::fmt::Display) -> Result<&'a str> {
    match validate_key(name) {
        Ok(key) if key == name => Ok(name),
        Ok(key) => Err(Error::InvalidKey(format!(
            "{what} has an entry {name:?} that is not a normal key (it would stand in for {key:?})"
        ))),
        Err(e) => Err(Error::InvalidKey(format!(
            "{what} has an entry {name:?} that is not a valid key: {e}"
        ))),
    }
}

/// Validates a listing prefix: `""` or a normalised path followed by `/`.
pub fn validate_prefix(prefix: &str) -> Result<String> {
    if prefix.is_empty() {
        return Ok(String::new());
    }
    let normalized = validate_key(prefix)?;
    Ok(if prefix.ends_with('/') || prefix.ends_with('\\') {
        format!("{normalized}/")
    } else {
        normalized.into_owned()
    })
}

/// Validates a one-level listing prefix: `""` or a normalised path ending in `/`.
pub fn validate_dir_prefix(prefix: &str) -> Result<String> {
    let prefix = validate_prefix(prefix)?;
    if !prefix.is_empty() && !prefix.ends_with('/') {
        return Err(Error::InvalidKey(format!(
            "listing prefix {prefix:?} must be empty or end with '/'"
        )));
    }
    Ok(prefix)
}

/// The one-level listing of `prefix` (as [`validate_dir_prefix`] returns it) among `keys`
/// that start with it: names sorted, child prefixes sorted and unique.
pub(crate) fn listing_of<'a>(prefix: &str, keys: impl IntoIterator<Item = &'a str>) -> DirListing {
    let mut listing = DirListing::default();
    for key in keys {
        let Some(rest) = key.strip_prefix(prefix) else {
            continue;
        };
        match rest.split_once('/') {
            None => listing.keys.push(rest.to_string()),
            Some((dir, _)) => listing.prefixes.push(dir.to_string()),
        }
    }
    for list in [&mut listing.keys, &mut listing.prefixes] {
        list.sort();
        list.dedup();
    }
    listing
}

/// The one-level listing of `prefix` made from `store`'s [`Store::list_prefix`], for stores
/// that list every key below a prefix at little cost (memory, zip, reference files).
pub(crate) fn list_dir_of_keys<S: Store + ?Sized>(store: &S, prefix: &str) -> Result<DirListing> {
    let prefix = validate_dir_prefix(prefix)?;
    let keys = store.list_prefix(&prefix)?;
    Ok(listing_of(&prefix, keys.iter().map(String::as_str)))
}

/// Names a node path may not use as a segment: they are metadata documents.
const RESERVED_NAMES: [&str; 5] = [".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json"];

/// Normalises a node path ([`normalize_path`]) and refuses segments that name metadata
/// documents (`"a/.zarray"` is a key, not a node).
pub fn node_path(path: &str) -> Result<String> {
    let path = normalize_path(path)?;
    if let Some(segment) = path.split('/').find(|s| RESERVED_NAMES.contains(s)) {
        return Err(Error::InvalidKey(format!(
            "node path {path:?} has the reserved name {segment:?} as a segment"
        )));
    }
    Ok(path.into_owned())
}

fn check_segment(segment: &str, whole: &str) -> Result<()> {
    if segment == "." || segment == ".." {
        return Err(Error::InvalidKey(format!(
            "{whole:?} has a {segment:?} segment"
        )));
    }
    if segment.contains('\0') {
        return Err(Error::InvalidKey(format!("{whole:?} contains a NUL byte")));
    }
    if segment.len() == 2 && segment.ends_with(':') && segment.as_bytes()[0].is_ascii_alphabetic() {
        return Err(Error::InvalidKey(format!(
            "{whole:?} starts with a drive prefix"
        )));
    }
    Ok(())
}

/// Joins a node path and a name into a key (`"" + ".zarray"` → `".zarray"`).
pub fn join_key(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}/{name}")
    }
}

/// The listing prefix of a node path (`""` for the root, else `"path/"`).
pub fn node_prefix(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_share_a_buffer_they_fill_at_least_half_of() {
        let spares = Spares::holding(1 << 20);
        let bytes: Vec<u8> = (0..100).collect();
        // 50 of 100 bytes wanted: shared, and nothing is given back.
        let shared = pieces(bytes.clone(), &[10..40, 60..80], &spares);
        assert!(std::sync::Arc::ptr_eq(&shared[0].0, &shared[1].0));
        assert_eq!(shared[0].0[shared[0].1.clone()], bytes[10..40]);
        assert_eq!(shared[1].0[shared[1].1.clone()], bytes[60..80]);
        assert!(spares.take(1).is_none());
        // 49 of 100: each copied out, and the buffer given back.
        let copied = pieces(bytes.clone(), &[10..40, 60..79], &spares);
        assert_eq!((copied[0].0.len(), copied[0].1.clone()), (30, 0..30));
        assert_eq!(copied[0].0[..], bytes[10..40]);
        assert_eq!((copied[1].0.len(), copied[1].1.clone()), (19, 0..19));
        assert_eq!(copied[1].0[..], bytes[60..79]);
        assert!(spares.take(100).is_some_and(|b| b.capacity() >= 100));
    }

    #[test]
    fn paths_normalise_as_the_spec_says() {
        assert_eq!(normalize_path("/a//b\\c/").unwrap(), "a/b/c");
        assert_eq!(normalize_path("").unwrap(), "");
        assert_eq!(normalize_path("/").unwrap(), "");
        for bad in ["a/../b", "./a", "..", "a/.", "a\0b", "C:/x"] {
            assert!(
                matches!(normalize_path(bad), Err(Error::InvalidKey(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn close_ranges_merge_into_one_request() {
        // Out of order, one overlapping, one far away, one empty.
        let ranges = [(100, 10), (0, 50), (2_000_000, 5), (60, 45), (50, 0)];
        assert_eq!(
            merge_ranges(&ranges, 16, u64::MAX),
            vec![(0, 110, vec![1, 4, 3, 0]), (2_000_000, 2_000_005, vec![2])]
        );
        // Without a gap only touching and overlapping ranges merge.
        assert_eq!(merge_ranges(&ranges, 0, u64::MAX).len(), 3);
        assert!(merge_ranges(&[], 16, u64::MAX).is_empty());
        // A request spans at most the longest length, unless one range alone is longer.
        assert_eq!(
            merge_ranges(&ranges, 16, 100),
            vec![
                (0, 50, vec![1, 4]),
                (60, 110, vec![3, 0]),
                (2_000_000, 2_000_005, vec![2])
            ]
        );
        assert_eq!(merge_ranges(&[(0, 500)], 16, 100), vec![(0, 500, vec![0])]);
    }

    #[test]
    fn keys_refuse_absolute_and_empty() {
        assert_eq!(validate_key("a//b/").unwrap(), "a/b");
        assert!(validate_key("/etc/passwd").is_err());
        assert!(validate_key("\\x").is_err());
        assert!(validate_key("").is_err());
        assert!(validate_key("//").is_err());
        assert_eq!(validate_prefix("a/b/").unwrap(), "a/b/");
        assert_eq!(validate_prefix("").unwrap(), "");
    }
}
