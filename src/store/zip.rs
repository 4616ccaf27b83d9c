//! A store in a zip file, as zarr-python's `ZipStore`: reads any zip it writes (stored or
//! deflated entries, ZIP64); writes zips where each key is written once. Metadata documents
//! written through a handle read back at once; chunks after closing. Entry names that are
//! not valid keys (`..`, absolute paths), not normal keys (`a//0`, `a\0`, `./a/0`: they
//! would stand in for `a/0`, which zarr-python, reading names verbatim, never sees there)
//! make the zip refused; directory entries (ending in `/`) are skipped. A name repeated in
//! the central directory (zarr-python's `ZipStore` writes a changed document again) reads
//! as its last entry, as Python's `zipfile` reads it.
//!
//! Writing never touches the zip at its path until closing, so a process killed at any
//! moment leaves the previous archive whole (or no file, for a new one). A writing handle
//! builds the new archive in a temporary file beside the zip (`.<name>.zarr-tmp.<pid>.<n>`;
//! through a symbolic link, beside the file it leads to, which closing replaces):
//! empty when creating; when appending, a byte-for-byte copy of the archive made at the first
//! write (entries are not recompressed; opening and closing without writing costs nothing),
//! to which the new entries and then a new central directory are added. Closing syncs the
//! temporary file to disk and renames it over the zip (a new archive is linked in place
//! instead, failing with `Error::Exists` if a file appeared there since opening), then syncs
//! the directory. A handle that will replace an existing zip holds an advisory lock on it
//! until closing, so a second writing handle fails at opening instead of one silently losing
//! the other's entries; readers are not locked out and keep reading the archive they opened.
//! Each temporary file is locked by its writer; opening for writing removes unlocked ones,
//! left by killed writers. The cost: appending rewrites the whole archive once per handle.
//!
//! Sizes an archive declares are claims: reading reserves at most 16 MiB before inflating
//! and grows fallibly (`Error::NoMemory`). A read with a limit (`get_into`) refuses an entry
//! that declares more and inflates at most one byte past the limit; a whole read (`get`)
//! stops one byte past the declared size; a range read inflates only up to the range's end
//! (stored entries are read in place).

use super::{
    copy_bounded, exact_key, is_document, list_dir_of_keys, range_of, too_large, validate_key,
    validate_prefix, DirListing, Expect, Store,
};
use crate::error::{to_usize, try_reserve, Error, Result};
use std::collections::BTreeMap;
use std::fs::{self, File, TryLockError};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

/// Metadata documents up to this size written through a handle read back before the zip
/// is closed (chunks are not kept, so memory stays bounded however much is written).
const SMALL: usize = 1 << 20;

/// At most this much is reserved for an entry before reading it, whatever size it declares
/// (larger entries grow as they are read).
const RESERVE_CAP: u64 = 1 << 24;

/// Whether a key names a metadata document of any format, v1's included (kept for reading
/// back).
fn is_any_document(key: &str) -> bool {
    is_document(key) || matches!(key.rsplit('/').next(), Some("meta" | "attrs"))
}

/// How a zip store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZipMode {
    /// Read an existing zip.
    Read,
    /// Create a new zip, in place at closing (replacing a file at the path when `overwrite`
    /// is set).
    Create {
        /// Replace an existing file.
        overwrite: bool,
    },
    /// Add entries to an existing zip (created if missing), in place at closing; existing
    /// keys stay read-only.
    Append,
}

/// An entry of the archive as its central directory describes it.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Its index in the archive.
    index: usize,
    /// Its declared (uncompressed) size, a claim of the archive.
    size: u64,
    /// Whether it is stored uncompressed (so a range of it can be read in place).
    stored: bool,
}

#[derive(Debug)]
struct State {
    /// Entries readable from the file, by key.
    existing: BTreeMap<String, Entry>,
    archive: Option<ZipArchive<File>>,
    /// Keys written through this handle, with their sizes.
    written: BTreeMap<String, u64>,
    /// Copies of the metadata documents written through this handle, so they read back
    /// before the zip is closed.
    small: BTreeMap<String, Vec<u8>>,
    /// Whether writes are allowed (until closing).
    writable: bool,
    /// The file at the path, when this handle will replace it: locked until closing, so
    /// that no other handle writes over it meanwhile.
    locked: Option<File>,
    /// The new archive, once started.
    pending: Option<Pending>,
}

/// A new archive being written to a temporary file beside the zip; closing moves it over
/// the zip's path.
#[derive(Debug)]
struct Pending {
    temp: PathBuf,
    writer: ZipWriter<File>,
}

/// A store backed by one zip file.
#[derive(Debug)]
pub struct ZipStore {
    path: PathBuf,
    compression: CompressionMethod,
    /// Whether closing replaces the file at the path (overwriting or appending) rather than
    /// creating it (a new archive: closing fails if a file appeared there meanwhile).
    replace: bool,
    state: Mutex<State>,
}

fn zip_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io(format!("zip {}: {e}", path.display()))
}

/// The error for opening the zip at `path` for reading failing with `err`.
fn open_error(path: &Path, err: std::io::Error) -> Error {
    match err.kind() {
        ErrorKind::NotFound => Error::NotFound(format!("zip {} does not exist", path.display())),
        _ => Error::io(path.display(), err),
    }
}

/// The archive in `file` (the zip at `path`) and its entries by key.
fn load(path: &Path, file: File) -> Result<(ZipArchive<File>, BTreeMap<String, Entry>)> {
    let mut archive = ZipArchive::new(file).map_err(|e| zip_error(path, e))?;
    let existing = index_entries(path, &mut archive)?;
    Ok((archive, existing))
}

impl Pending {
    /// An empty archive in a new temporary file beside `path`.
    fn new(path: &Path) -> Result<Self> {
        let (temp, file) = create_temp(path)?;
        Ok(Pending {
            temp,
            writer: ZipWriter::new(file),
        })
    }

    /// A copy of `original` (the zip at `path`, its bytes copied as they are, entries
    /// included) in a new temporary file beside it, ready for more entries.
    fn copy_of(path: &Path, original: &File) -> Result<Self> {
        let (temp, mut file) = create_temp(path)?;
        let copied = (|| {
            let mut source = original;
            source.seek(SeekFrom::Start(0))?;
            std::io::copy(&mut source, &mut file)?;
            file.set_permissions(original.metadata()?.permissions())
        })();
        let writer = copied
            .map_err(|e| Error::io(format!("copying zip {}", path.display()), e))
            .and_then(|()| ZipWriter::new_append(file).map_err(|e| zip_error(path, e)));
        match writer {
            Ok(writer) => Ok(Pending { temp, writer }),
            Err(e) => {
                let _ = fs::remove_file(&temp);
                Err(e)
            }
        }
    }

    /// Writes the central directory, makes the file durable and moves it to `path`
    /// (replacing a file there when `replace`); on failure the temporary file is removed
    /// and `path` is as before.
    fn commit(self, path: &Path, replace: bool) -> Result<()> {
        let Pending { temp, writer } = self;
        let result = writer
            .finish()
            .map_err(|e| zip_error(path, e))
            .and_then(|mut file| {
                // Nothing of an appended archive's old end may remain after the new one.
                file.stream_position()
                    .and_then(|end| file.set_len(end))
                    .and_then(|()| file.sync_all())
                    .map_err(|e| Error::io(format!("writing zip {}", path.display()), e))?;
                publish(&temp, path, replace)
            });
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result
    }
}

/// How long opening for writing waits for another handle's lock before failing.
const LOCK_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// Opens and locks the file at `path` for a handle that will replace it, so that a second
/// such handle (of this process or another) fails instead of one of them losing the
/// other's entries; `None` when there is no file. Where the filesystem has no locks, the
/// file is returned unlocked. A lock held is tried again for [`LOCK_GRACE`]: a process
/// that starts a program (fork, then exec) lends the program its open files until the
/// exec, so a lock released just before can stay held a moment longer.
fn lock_target(path: &Path) -> Result<Option<File>> {
    let since = std::time::Instant::now();
    loop {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path.display(), e)),
        };
        match file.try_lock() {
            Ok(()) | Err(TryLockError::Error(_)) => {}
            Err(TryLockError::WouldBlock) if since.elapsed() < LOCK_GRACE => {
                std::thread::sleep(std::time::Duration::from_millis(5));
                continue;
            }
            Err(TryLockError::WouldBlock) => {
                return Err(Error::Io(format!(
                    "zip {} is open for writing by another handle",
                    path.display()
                )))
            }
        }
        // Locked after another handle replaced the file (closing): lock the new one.
        if is_at(&file, path) {
            return Ok(Some(file));
        }
    }
}

/// Whether `file` is the file now at `path` (always, where files have no identity).
fn is_at(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// The start of the names of temporary files of the zip at `path` (hidden, beside it).
fn temp_prefix(path: &Path) -> String {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    format!(".{name}.zarr-tmp.")
}

/// The directory holding the zip at `path`.
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Symbolic links followed at most in a chain, as systems limit it (`ELOOP`).
const MAX_LINKS: usize = 40;

/// The file a writing handle of the zip at `path` replaces: `path` with the symbolic links
/// it is followed (a chain too; a dangling link leads to the file it would name), so that
/// closing publishes the new archive where the link points, beside it, and the link stays
/// a link to the updated archive.
fn follow_links(path: &Path) -> Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path).map_err(|e| Error::io(path.display(), e))?;
                // An absolute target replaces the directory it is joined to.
                path = dir_of(&path).join(target);
            }
            _ => return Ok(path),
        }
    }
    Err(Error::Io(format!(
        "zip {}: more than {MAX_LINKS} symbolic links in a chain",
        path.display()
    )))
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates a temporary file beside `path` and locks it, so that other handles' sweeps
/// ([`remove_stale_temps`]) leave it alone while this handle lives.
fn create_temp(path: &Path) -> Result<(PathBuf, File)> {
    for _ in 0..16 {
        let temp = dir_of(path).join(format!(
            "{}{}.{}",
            temp_prefix(path),
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let file = match File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&temp)
        {
            Ok(file) => file,
            // Left by a killed process of the same id.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(format!("creating {}", temp.display()), e)),
        };
        // A sweep may have taken the new file for a stale one (between its creation and the
        // lock) and removed it: then try another name.
        let locked = !matches!(file.try_lock(), Err(TryLockError::WouldBlock));
        if locked && is_at(&file, &temp) {
            return Ok((temp, file));
        }
    }
    Err(Error::Io(format!(
        "no temporary file could be created beside zip {}",
        path.display()
    )))
}

/// Removes the temporary files of writers of the zip at `path` that ended without closing
/// (killed): those no handle holds a lock on. Best effort: what cannot be removed stays,
/// and is never read.
fn remove_stale_temps(path: &Path) {
    let prefix = temp_prefix(path);
    let Ok(entries) = fs::read_dir(dir_of(path)) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        if let Ok(file) = File::open(entry.path()) {
            if file.try_lock().is_ok() {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// Moves the finished temporary file to `path`, replacing what is there when `replace`,
/// else failing with [`Error::Exists`] when a file appeared there since opening; then makes
/// the move durable.
fn publish(temp: &Path, path: &Path, replace: bool) -> Result<()> {
    let moved = if replace {
        fs::rename(temp, path)
    } else {
        match fs::hard_link(temp, path) {
            Ok(()) => {
                // The zip is in place; a temporary name left behind is swept later.
                let _ = fs::remove_file(temp);
                Ok(())
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                return Err(Error::Exists(format!(
                    "{} was created by someone else while this zip was written",
                    path.display()
                )))
            }
            // A filesystem without hard links: the check at opening has to do.
            Err(_) => fs::rename(temp, path),
        }
    };
    moved.map_err(|e| Error::io(format!("moving the new zip to {}", path.display()), e))?;
    // Where the system cannot sync a directory, the move is done but may not survive a
    // power loss.
    if let Ok(dir) = File::open(dir_of(path)) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn index_entries(path: &Path, archive: &mut ZipArchive<File>) -> Result<BTreeMap<String, Entry>> {
    let mut entries = BTreeMap::new();
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(|e| zip_error(path, e))?;
        let name = entry.name().to_string();
        if entry.is_dir() || name.ends_with('/') {
            continue;
        }
        if validate_key(&name).is_err() {
            return Err(Error::InvalidKey(format!(
                "zip {} has an entry {name:?} that escapes the store",
                path.display()
            )));
        }
        let key = exact_key(&name, &format_args!("zip {}", path.display()))?.to_string();
        let stored = entry.compression() == CompressionMethod::Stored;
        entries.insert(
            key,
            Entry {
                index: i,
                size: entry.size(),
                stored,
            },
        );
    }
    Ok(entries)
}

impl ZipStore {
    /// Opens the zip at `path`. `deflate` compresses new entries (default: stored, as
    /// zarr-python). Writing modes first remove temporary files that killed writers of this
    /// zip left behind. A writing handle opened through a symbolic link (or a chain of
    /// them) writes the file the link leads to, so the link keeps pointing at the updated
    /// archive.
    pub fn open(path: impl AsRef<Path>, mode: ZipMode, deflate: bool) -> Result<Self> {
        let path = match mode {
            ZipMode::Read => path.as_ref().to_path_buf(),
            _ => follow_links(path.as_ref())?,
        };
        let mut state = State {
            existing: BTreeMap::new(),
            archive: None,
            written: BTreeMap::new(),
            small: BTreeMap::new(),
            writable: mode != ZipMode::Read,
            locked: None,
            pending: None,
        };
        if state.writable {
            remove_stale_temps(&path);
        }
        let mut replace = true;
        match mode {
            ZipMode::Read => {
                let file = File::open(&path).map_err(|e| open_error(&path, e))?;
                (state.archive, state.existing) = load(&path, file).map(|(a, e)| (Some(a), e))?;
            }
            ZipMode::Create { overwrite } => {
                if !overwrite && path.exists() {
                    return Err(Error::Exists(format!("{} already exists", path.display())));
                }
                state.locked = lock_target(&path)?;
                replace = overwrite;
                state.pending = Some(Pending::new(&path)?);
            }
            ZipMode::Append => match lock_target(&path)? {
                Some(file) => {
                    let copy = file.try_clone().map_err(|e| Error::io(path.display(), e))?;
                    (state.archive, state.existing) =
                        load(&path, copy).map(|(a, e)| (Some(a), e))?;
                    state.locked = Some(file);
                }
                None => {
                    replace = false;
                    state.pending = Some(Pending::new(&path)?);
                }
            },
        }
        Ok(ZipStore {
            path,
            compression: if deflate {
                CompressionMethod::Deflated
            } else {
                CompressionMethod::Stored
            },
            replace,
            state: Mutex::new(state),
        })
    }

    /// The writer of the new archive, started on the first write when appending (a copy of
    /// the archive, to which the entries are added).
    fn writer<'a>(&self, state: &'a mut State) -> Result<&'a mut ZipWriter<File>> {
        if !state.writable {
            return Err(Error::ReadOnly(format!(
                "zip {} is open for reading",
                self.path.display()
            )));
        }
        let pending = match state.pending.take() {
            Some(pending) => pending,
            None => {
                let original = state
                    .locked
                    .as_ref()
                    .ok_or_else(|| Error::Internal("zip to append to missing".into()))?;
                Pending::copy_of(&self.path, original)?
            }
        };
        Ok(&mut state.pending.insert(pending).writer)
    }

    /// Moves the new archive (if one was started) over the path and reads it; the lock on
    /// the replaced file is released whatever happens.
    fn commit(&self, state: &mut State) -> Result<()> {
        let committed = match state.pending.take() {
            Some(pending) => pending.commit(&self.path, self.replace).map(|()| true),
            None => Ok(false),
        };
        if let Some(file) = state.locked.take() {
            // The archive being read may share this lock (appending): release it explicitly.
            let _ = file.unlock();
        }
        if committed? {
            let file = File::open(&self.path).map_err(|e| Error::io(self.path.display(), e))?;
            (state.archive, state.existing) = load(&self.path, file).map(|(a, e)| (Some(a), e))?;
        }
        Ok(())
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, State>> {
        self.state
            .lock()
            .map_err(|_| Error::Internal("zip store lock poisoned".into()))
    }

    /// The value of `key` when it is not in the archive: a metadata document written through
    /// this handle, an error for another value written through it (it reads back after
    /// closing), or `None`.
    fn unclosed_value<'a>(&self, state: &'a State, key: &str) -> Result<Option<&'a [u8]>> {
        if let Some(value) = state.small.get(key) {
            return Ok(Some(value));
        }
        if state.written.contains_key(key) {
            return Err(Error::Unsupported(format!(
                "zip {}: {key:?} was written by this handle and reads back only after closing",
                self.path.display()
            )));
        }
        Ok(None)
    }

    /// Inflates `entry` (of `key`) into `buf`, reading at most `limit + 1` bytes of it (one
    /// more than `limit` shows that it is longer). At most 16 MiB is reserved up front and
    /// growing is fallible, so a size the archive merely claims costs no memory.
    fn inflate(
        &self,
        state: &mut State,
        entry: Entry,
        key: &str,
        limit: u64,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        try_reserve(buf, entry.size.min(limit).min(RESERVE_CAP) as usize, key)?;
        self.archive(state)?
            .by_index(entry.index)
            .map_err(|e| zip_error(&self.path, e))?
            .take(limit.saturating_add(1))
            .read_to_end(buf)
            .map_err(|e| self.read_error(key, e))?;
        Ok(())
    }

    /// `len` bytes of `entry` (of `key`) from byte `offset`, within its declared size: a
    /// stored entry is read in place, a deflated one inflated up to the end of the range.
    fn read_range(
        &self,
        state: &mut State,
        entry: Entry,
        key: &str,
        offset: u64,
        len: u64,
    ) -> Result<Vec<u8>> {
        let mut data = Vec::new();
        try_reserve(
            &mut data,
            to_usize(len.min(RESERVE_CAP), "range length")?,
            key,
        )?;
        let archive = self.archive(state)?;
        let read = if entry.stored {
            let mut file = archive
                .by_index_seek(entry.index)
                .map_err(|e| zip_error(&self.path, e))?;
            file.seek(SeekFrom::Start(offset))
                .and_then(|_| file.take(len).read_to_end(&mut data))
        } else {
            let mut file = archive
                .by_index(entry.index)
                .map_err(|e| zip_error(&self.path, e))?;
            std::io::copy(&mut (&mut file).take(offset), &mut std::io::sink())
                .and_then(|_| file.take(len).read_to_end(&mut data))
        };
        read.map_err(|e| self.read_error(key, e))?;
        if (data.len() as u64) < len {
            return Err(Error::Io(format!(
                "zip {}: entry {key:?} ends before its declared size ({} bytes)",
                self.path.display(),
                entry.size
            )));
        }
        Ok(data)
    }

    /// The archive being read.
    fn archive<'a>(&self, state: &'a mut State) -> Result<&'a mut ZipArchive<File>> {
        state
            .archive
            .as_mut()
            .ok_or_else(|| Error::Internal("zip archive missing".into()))
    }

    /// The error for reading `key` failing with `err`: out of memory, or what the zip says.
    fn read_error(&self, key: &str, err: std::io::Error) -> Error {
        if err.kind() == ErrorKind::OutOfMemory {
            Error::NoMemory(format!(
                "zip {}: entry {key:?} does not fit in memory",
                self.path.display()
            ))
        } else {
            zip_error(&self.path, format!("entry {key:?}: {err}"))
        }
    }

    fn keys(state: &State) -> Vec<String> {
        let mut keys: Vec<String> = state
            .existing
            .keys()
            .chain(state.written.keys())
            .cloned()
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }
}

impl Store for ZipStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let key = validate_key(key)?.into_owned();
        let mut state = self.lock()?;
        let Some(&entry) = state.existing.get(&*key) else {
            return Ok(self.unclosed_value(&state, &key)?.map(<[u8]>::to_vec));
        };
        let size = entry.size;
        // No caller limit: the declared size is the limit, so what is read stays bounded by
        // what the archive claims (and by the archive's size times deflate's ratio, 1032).
        let mut data = Vec::new();
        self.inflate(&mut state, entry, &key, size, &mut data)?;
        if data.len() as u64 > size {
            return Err(Error::Io(format!(
                "zip {}: entry {key:?} inflates past its declared size ({size} bytes)",
                self.path.display()
            )));
        }
        Ok(Some(data))
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        let key = validate_key(key)?.into_owned();
        let mut state = self.lock()?;
        let Some(&entry) = state.existing.get(&*key) else {
            return match self.unclosed_value(&state, &key)? {
                Some(value) => copy_bounded(&key, value, buf, max_len).map(|()| true),
                None => Ok(false),
            };
        };
        if entry.size > max_len {
            return Err(too_large(&key, entry.size, max_len));
        }
        buf.clear();
        // Declared sizes lie: the limit, not the size, bounds what is inflated.
        self.inflate(&mut state, entry, &key, max_len, buf)?;
        if buf.len() as u64 > max_len {
            return Err(too_large(&key, buf.len() as u64, max_len));
        }
        Ok(true)
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        let key = validate_key(key)?.into_owned();
        let mut state = self.lock()?;
        let Some(&entry) = state.existing.get(&*key) else {
            return match self.unclosed_value(&state, &key)? {
                Some(value) => Ok(Some(range_of(value, &key, offset, len)?.to_vec())),
                None => Ok(None),
            };
        };
        if offset.checked_add(len).is_none_or(|end| end > entry.size) {
            return Err(Error::Io(format!(
                "range {offset}+{len} of {key:?} is past its end ({} bytes)",
                entry.size
            )));
        }
        self.read_range(&mut state, entry, &key, offset, len)
            .map(Some)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        let key = validate_key(key)?.into_owned();
        let mut state = self.lock()?;
        if state.existing.contains_key(&*key) || state.written.contains_key(&*key) {
            return Err(Error::Exists(format!(
                "zip {}: {key:?} is already written and zip entries cannot be rewritten",
                self.path.display()
            )));
        }
        let writer = self.writer(&mut state)?;
        let options = SimpleFileOptions::default()
            .compression_method(self.compression)
            .large_file(value.len() as u64 >= u32::MAX as u64);
        writer
            .start_file(key.as_str(), options)
            .map_err(|e| zip_error(&self.path, e))?;
        writer
            .write_all(value)
            .map_err(|e| zip_error(&self.path, e))?;
        if value.len() <= SMALL && is_any_document(&key) {
            state.small.insert(key.clone(), value.to_vec());
        }
        state.written.insert(key, value.len() as u64);
        Ok(())
    }

    /// Creates keys (entries are written once, under the handle's lock); never replaces.
    fn set_if(&self, key: &str, value: &[u8], expect: Expect<'_>) -> Result<bool> {
        let _write = super::writes::Write::begin(self.location());
        match expect {
            Expect::Absent => match self.set(key, value) {
                Err(Error::Exists(_)) => Ok(false),
                other => other.map(|()| true),
            },
            Expect::Version(_) => Err(Error::Unsupported(format!(
                "zip {}: entries cannot be rewritten",
                self.path.display()
            ))),
        }
    }

    fn erase(&self, key: &str) -> Result<bool> {
        let _write = super::writes::Write::begin(self.location());
        let key = validate_key(key)?.into_owned();
        let state = self.lock()?;
        if state.existing.contains_key(&*key) || state.written.contains_key(&*key) {
            return Err(Error::Unsupported(format!(
                "zip {}: entries cannot be erased ({key:?})",
                self.path.display()
            )));
        }
        if !state.writable {
            return Err(Error::ReadOnly(format!(
                "zip {} is open for reading",
                self.path.display()
            )));
        }
        Ok(false)
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        let prefix = validate_prefix(prefix)?;
        let state = self.lock()?;
        if let Some(key) = Self::keys(&state)
            .into_iter()
            .find(|k| k.starts_with(&prefix))
        {
            return Err(Error::Unsupported(format!(
                "zip {}: entries cannot be erased ({key:?})",
                self.path.display()
            )));
        }
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = validate_prefix(prefix)?;
        let state = self.lock()?;
        Ok(Self::keys(&state)
            .into_iter()
            .filter(|k| k.starts_with(&prefix))
            .collect())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        list_dir_of_keys(self, prefix)
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        let key = validate_key(key)?.into_owned();
        let state = self.lock()?;
        Ok(state
            .existing
            .get(&*key)
            .map(|e| e.size)
            .or_else(|| state.written.get(&*key).copied()))
    }

    fn writable(&self) -> bool {
        self.lock().map(|s| s.writable).unwrap_or(false)
    }

    fn location(&self) -> Option<PathBuf> {
        std::fs::canonicalize(&self.path).ok()
    }

    fn close(&self) -> Result<()> {
        let mut state = self.lock()?;
        if !state.writable {
            return Ok(());
        }
        // Whether or not the new archive makes it, the handle now only reads: what it
        // wrote is in the file, or the file is as before.
        state.writable = false;
        state.written.clear();
        state.small.clear();
        self.commit(&mut state)
    }
}

impl Drop for ZipStore {
    fn drop(&mut self) {
        // Closing explicitly reports errors; dropping still moves the new archive in place.
        let _ = self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_close_read_and_refuse_rewrites() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.zip");
        let store = ZipStore::open(&path, ZipMode::Create { overwrite: false }, false).unwrap();
        store.set(".zgroup", b"{}").unwrap();
        store.set("x/0.0", &vec![7u8; 1000]).unwrap();
        assert!(matches!(
            store.set("x/0.0", b"again"),
            Err(Error::Exists(_))
        ));
        assert_eq!(store.size("x/0.0").unwrap(), Some(1000));
        store.close().unwrap();
        assert_eq!(store.get("x/0.0").unwrap().unwrap(), vec![7u8; 1000]);
        assert!(!store.writable());
        let again = ZipStore::open(&path, ZipMode::Read, false).unwrap();
        assert_eq!(again.list().unwrap(), vec![".zgroup", "x/0.0"]);
        assert_eq!(again.list_dir("").unwrap().prefixes, vec!["x"]);
        assert!(matches!(
            ZipStore::open(&path, ZipMode::Create { overwrite: false }, false),
            Err(Error::Exists(_))
        ));
        let appended = ZipStore::open(&path, ZipMode::Append, true).unwrap();
        appended.set("y", b"new").unwrap();
        appended.close().unwrap();
        assert_eq!(appended.get(".zgroup").unwrap().unwrap(), b"{}");
        assert_eq!(appended.get("y").unwrap().unwrap(), b"new");
    }

    #[test]
    fn ranges_and_limited_reads_of_stored_and_deflated_entries() {
        let dir = tempfile::tempdir().unwrap();
        let value: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for deflate in [false, true] {
            let path = dir.path().join(format!("r{deflate}.zip"));
            let store =
                ZipStore::open(&path, ZipMode::Create { overwrite: false }, deflate).unwrap();
            store.set("v", &value).unwrap();
            store.close().unwrap();
            assert_eq!(
                store.get_range("v", 99_000, 1000).unwrap().unwrap(),
                &value[99_000..]
            );
            assert_eq!(store.get_range("v", 5, 0).unwrap().unwrap(), b"");
            assert!(store.get_range("v", 99_999, 2).is_err());
            assert_eq!(store.get_range("w", 0, 1).unwrap(), None);
            let mut buf = vec![1, 2, 3];
            assert!(store.get_into("v", &mut buf, 100_000).unwrap());
            assert_eq!(buf, value);
            let err = store.get_into("v", &mut buf, 99_999).unwrap_err();
            assert!(err.to_string().contains("\"v\""), "{err}");
            assert!(!store.get_into("w", &mut buf, 10).unwrap());
        }
    }

    /// Entries `k0`..`k{n-1}` of 10 000 bytes each, byte `i` of entry `k` being `k + i`.
    fn entries(first: usize, n: usize) -> Vec<(String, Vec<u8>)> {
        (first..first + n)
            .map(|k| {
                (
                    format!("k{k}"),
                    (0..10_000).map(|i| (k + i) as u8).collect(),
                )
            })
            .collect()
    }

    /// A closed zip at `path` holding `entries(0, 5)`.
    fn archive_of_five(path: &Path) {
        let store = ZipStore::open(path, ZipMode::Create { overwrite: false }, true).unwrap();
        for (key, value) in entries(0, 5) {
            store.set(&key, &value).unwrap();
        }
        store.close().unwrap();
    }

    /// The temporary files beside `path`.
    fn temps_beside(path: &Path) -> Vec<PathBuf> {
        fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .contains(".zarr-tmp.")
            })
            .collect()
    }

    /// Run by `a_killed_writer_leaves_the_old_archive_whole` as a separate process (else it
    /// does nothing): opens the zip named by `ZARR_ZIP_CHILD` in the mode `ZARR_ZIP_MODE`,
    /// writes entries, says so and waits to be killed.
    #[test]
    fn child_writing_until_killed() {
        let Ok(path) = std::env::var("ZARR_ZIP_CHILD") else {
            return;
        };
        let mode = match std::env::var("ZARR_ZIP_MODE").unwrap().as_str() {
            "append" => ZipMode::Append,
            _ => ZipMode::Create { overwrite: true },
        };
        let store = ZipStore::open(&path, mode, false).unwrap();
        for (key, value) in entries(5, 20) {
            store.set(&key, &value).unwrap();
        }
        println!("zip child ready");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }

    #[test]
    fn a_killed_writer_leaves_the_old_archive_whole() {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        for mode in ["append", "overwrite"] {
            let path = dir.path().join(format!("{mode}.zip"));
            archive_of_five(&path);
            let mut child = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "store::zip::tests::child_writing_until_killed"])
                .args(["--nocapture", "--test-threads=1"])
                .env("ZARR_ZIP_CHILD", &path)
                .env("ZARR_ZIP_MODE", mode)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
            assert!(
                stdout
                    .lines()
                    .any(|l| l.unwrap().ends_with("zip child ready")),
                "{mode}: the child did not write"
            );
            child.kill().unwrap();
            child.wait().unwrap();
            assert_eq!(
                temps_beside(&path).len(),
                1,
                "{mode}: the writer's temporary file"
            );

            let store = ZipStore::open(&path, ZipMode::Read, false).unwrap();
            assert_eq!(store.list().unwrap().len(), 5, "{mode}");
            for (key, value) in entries(0, 5) {
                assert_eq!(store.get(&key).unwrap().unwrap(), value, "{mode}: {key}");
            }
            // The next writer sweeps the killed one's temporary file.
            let again = ZipStore::open(&path, ZipMode::Append, false).unwrap();
            assert!(temps_beside(&path).is_empty(), "{mode}");
            again.set("more", b"m").unwrap();
            again.close().unwrap();
            assert_eq!(again.list().unwrap().len(), 6, "{mode}");
            assert!(temps_beside(&path).is_empty(), "{mode}");
        }
    }

    #[test]
    fn stale_temporary_files_are_swept_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.zip");
        archive_of_five(&path);
        let stale = dir.path().join(".a.zip.zarr-tmp.1.1");
        let live = dir.path().join(".a.zip.zarr-tmp.2.2");
        let other = dir.path().join(".b.zip.zarr-tmp.3.3");
        for p in [&stale, &live, &other] {
            fs::write(p, b"partial").unwrap();
        }
        let holder = File::open(&live).unwrap();
        holder.lock().unwrap();
        let store = ZipStore::open(&path, ZipMode::Append, false).unwrap();
        assert!(!stale.exists() && live.exists() && other.exists());
        store.set("x", b"1").unwrap();
        store.close().unwrap();
        assert_eq!(store.get("x").unwrap().unwrap(), b"1");
        assert_eq!(fs::read(&live).unwrap(), b"partial");
    }

    #[test]
    fn one_handle_writes_an_archive_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.zip");
        archive_of_five(&path);
        let first = ZipStore::open(&path, ZipMode::Append, false).unwrap();
        for mode in [ZipMode::Append, ZipMode::Create { overwrite: true }] {
            let err = ZipStore::open(&path, mode, false).unwrap_err();
            assert!(err.to_string().contains("another handle"), "{err}");
        }
        let reader = ZipStore::open(&path, ZipMode::Read, false).unwrap();
        first.set("first", b"1").unwrap();
        first.close().unwrap();
        // Closed, the handle reads what it wrote and holds no lock.
        let second = ZipStore::open(&path, ZipMode::Append, false).unwrap();
        assert_eq!(second.get("first").unwrap().unwrap(), b"1");
        second.close().unwrap();
        // A reader opened before keeps reading the archive it opened.
        assert_eq!(reader.list().unwrap().len(), 5);
        assert_eq!(reader.get("k4").unwrap().unwrap(), entries(4, 1)[0].1);
    }

    #[test]
    fn new_archives_appear_whole_at_closing_and_never_replace_a_newer_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.zip");
        let store = ZipStore::open(&path, ZipMode::Create { overwrite: false }, false).unwrap();
        store.set("a", b"1").unwrap();
        assert!(!path.exists(), "written under its name before closing");
        fs::write(&path, b"someone else's").unwrap();
        assert!(matches!(store.close(), Err(Error::Exists(_))));
        assert_eq!(fs::read(&path).unwrap(), b"someone else's");
        assert!(temps_beside(&path).is_empty());
        assert!(!store.writable());
    }

    #[test]
    fn escaping_entries_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evil.zip");
        let mut writer = ZipWriter::new(File::create(&path).unwrap());
        writer
            .start_file("../evil", SimpleFileOptions::default())
            .unwrap();
        writer.write_all(b"x").unwrap();
        writer.finish().unwrap();
        let err = ZipStore::open(&path, ZipMode::Read, false).unwrap_err();
        assert!(
            matches!(err, Error::InvalidKey(ref m) if m.contains("../evil")),
            "{err}"
        );
    }

    /// A zip holding `a/0` (`real`) and an entry `name` (`other`), written verbatim.
    fn zip_with(path: &Path, name: &str) {
        let mut writer = ZipWriter::new(File::create(path).unwrap());
        for (name, value) in [("a/0", b"real"), (name, b"fake")] {
            writer
                .start_file(name, SimpleFileOptions::default())
                .unwrap();
            writer.write_all(value).unwrap();
        }
        writer.finish().unwrap();
    }

    #[test]
    fn entries_that_only_normalise_onto_a_key_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two.zip");
        for name in ["a//0", "a\\0", "./a/0", "a/./0", "//a/0", "a/0//x", "b\\c"] {
            zip_with(&path, name);
            let err = ZipStore::open(&path, ZipMode::Read, false).unwrap_err();
            let shown = format!("{name:?}");
            assert!(
                matches!(err, Error::InvalidKey(ref m) if m.contains(&shown)),
                "{name}: {err}"
            );
            assert!(ZipStore::open(&path, ZipMode::Append, false).is_err());
        }
        // A directory entry is no key: skipped.
        zip_with(&path, "a/0/");
        let store = ZipStore::open(&path, ZipMode::Read, false).unwrap();
        assert_eq!(store.list().unwrap(), vec!["a/0"]);
        assert_eq!(store.get("a/0").unwrap().unwrap(), b"real");
    }

    #[test]
    fn a_name_twice_in_the_central_directory_reads_as_its_last_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("twice.zip");
        zip_with(&path, "a/1");
        // Rename the second entry, in its local header and the central directory.
        let bytes = fs::read(&path).unwrap();
        let mut renamed = Vec::new();
        let mut rest = &bytes[..];
        while let Some(at) = rest.windows(3).position(|w| w == b"a/1") {
            renamed.extend_from_slice(&rest[..at]);
            renamed.extend_from_slice(b"a/0");
            rest = &rest[at + 3..];
        }
        renamed.extend_from_slice(rest);
        fs::write(&path, renamed).unwrap();
        // As zarr-python reads it (zipfile: the last entry of a name wins).
        let store = ZipStore::open(&path, ZipMode::Read, false).unwrap();
        assert_eq!(store.list().unwrap(), vec!["a/0"]);
        assert_eq!(store.get("a/0").unwrap().unwrap(), b"fake");
    }

    #[cfg(unix)]
    #[test]
    fn writes_through_a_link_update_the_archive_it_leads_to() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("run42.zip");
        let store = ZipStore::open(&real, ZipMode::Create { overwrite: false }, false).unwrap();
        store.set("a", b"1").unwrap();
        store.close().unwrap();
        // A link, and a chain of two (relative and absolute) to it.
        let link = dir.path().join("current.zip");
        symlink("run42.zip", &link).unwrap();
        let chain = dir.path().join("chain.zip");
        symlink(&link, &chain).unwrap();
        for (through, key, mode) in [
            (&link, "b", ZipMode::Append),
            (&chain, "c", ZipMode::Append),
            (&link, "d", ZipMode::Create { overwrite: true }),
        ] {
            let store = ZipStore::open(through, mode, false).unwrap();
            store.set(key, b"new").unwrap();
            store.close().unwrap();
            assert!(fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            assert!(fs::symlink_metadata(&chain)
                .unwrap()
                .file_type()
                .is_symlink());
            for path in [&real, &link, &chain] {
                let read = ZipStore::open(path, ZipMode::Read, false).unwrap();
                assert_eq!(
                    read.get(key).unwrap().unwrap(),
                    b"new",
                    "{}",
                    path.display()
                );
            }
        }
        let keys = ZipStore::open(&real, ZipMode::Read, false)
            .unwrap()
            .list()
            .unwrap();
        assert_eq!(keys, vec!["d"]);
        // No temporary file is left, beside the link or the archive.
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, vec!["chain.zip", "current.zip", "run42.zip"]);
        // A dangling link: the new archive is created where it leads, the link kept.
        let dangling = dir.path().join("next.zip");
        symlink("run43.zip", &dangling).unwrap();
        let store = ZipStore::open(&dangling, ZipMode::Append, false).unwrap();
        store.set("e", b"new").unwrap();
        store.close().unwrap();
        assert!(fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        let read = ZipStore::open(dir.path().join("run43.zip"), ZipMode::Read, false).unwrap();
        assert_eq!(read.get("e").unwrap().unwrap(), b"new");
        // A link to itself is an error, not a loop.
        let looping = dir.path().join("loop.zip");
        symlink("loop.zip", &looping).unwrap();
        let err = ZipStore::open(&looping, ZipMode::Append, false).unwrap_err();
        assert!(err.to_string().contains("symbolic links"), "{err}");
    }
}
