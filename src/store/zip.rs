//! A store in a zip file, as zarr-python's `ZipStore`: reads any zip it writes (stored or
//! deflated entries, ZIP64); writes a new zip where each key is written once, and closing
//! writes the central directory. Metadata documents written through a handle read back at
//! once; chunks after closing. Entry names that are not valid keys (`..`, absolute
//! paths) make the zip refused.
//!
//! Sizes an archive declares are claims: reading reserves at most 16 MiB before inflating
//! and grows fallibly (`Error::NoMemory`). A read with a limit (`get_into`) refuses an entry
//! that declares more and inflates at most one byte past the limit; a whole read (`get`)
//! stops one byte past the declared size; a range read inflates only up to the range's end
//! (stored entries are read in place).

use super::{
    listing_of, range_of, too_large, validate_dir_prefix, validate_key, validate_prefix,
    DirListing, Store,
};
use crate::error::{to_usize, try_reserve, Error, Result};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

/// Metadata documents up to this size written through a handle read back before the zip
/// is closed (chunks are not kept, so memory stays bounded however much is written).
const SMALL: usize = 1 << 20;

/// At most this much is reserved for an entry before reading it, whatever size it declares
/// (larger entries grow as they are read).
const RESERVE_CAP: u64 = 1 << 24;

/// Whether a key names a metadata document (kept for reading back).
fn is_document(key: &str) -> bool {
    matches!(
        key.rsplit('/').next(),
        Some(".zarray" | ".zgroup" | ".zattrs" | ".zmetadata" | "zarr.json" | "meta" | "attrs")
    )
}

/// How a zip store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZipMode {
    /// Read an existing zip.
    Read,
    /// Create a new zip (replacing a file at the path when `overwrite` is set).
    Create {
        /// Replace an existing file.
        overwrite: bool,
    },
    /// Add entries to an existing zip (created if missing); existing keys stay read-only.
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
    writer: Option<ZipWriter<File>>,
}

/// A store backed by one zip file.
#[derive(Debug)]
pub struct ZipStore {
    path: PathBuf,
    compression: CompressionMethod,
    state: Mutex<State>,
}

fn zip_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io(format!("zip {}: {e}", path.display()))
}

fn index_entries(path: &Path, archive: &mut ZipArchive<File>) -> Result<BTreeMap<String, Entry>> {
    let mut entries = BTreeMap::new();
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(|e| zip_error(path, e))?;
        let name = entry.name().to_string();
        if entry.is_dir() || name.ends_with('/') {
            continue;
        }
        let key = validate_key(&name).map_err(|_| {
            Error::InvalidKey(format!(
                "zip {} has an entry {name:?} that escapes the store",
                path.display()
            ))
        })?;
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
    /// zarr-python).
    pub fn open(path: impl AsRef<Path>, mode: ZipMode, deflate: bool) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let read_archive = |path: &Path| -> Result<ZipArchive<File>> {
            let file = File::open(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    Error::NotFound(format!("zip {} does not exist", path.display()))
                }
                _ => Error::io(path.display(), e),
            })?;
            ZipArchive::new(file).map_err(|e| zip_error(path, e))
        };
        let mut state = State {
            existing: BTreeMap::new(),
            archive: None,
            written: BTreeMap::new(),
            small: BTreeMap::new(),
            writer: None,
        };
        match mode {
            ZipMode::Read => {
                let mut archive = read_archive(&path)?;
                state.existing = index_entries(&path, &mut archive)?;
                state.archive = Some(archive);
            }
            ZipMode::Create { overwrite } => {
                if !overwrite && path.exists() {
                    return Err(Error::Exists(format!("{} already exists", path.display())));
                }
                let file = File::create(&path).map_err(|e| Error::io(path.display(), e))?;
                state.writer = Some(ZipWriter::new(file));
            }
            ZipMode::Append if !path.exists() => {
                let file = File::create(&path).map_err(|e| Error::io(path.display(), e))?;
                state.writer = Some(ZipWriter::new(file));
            }
            ZipMode::Append => {
                let mut archive = read_archive(&path)?;
                state.existing = index_entries(&path, &mut archive)?;
                state.archive = Some(archive);
                let file = File::options()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .map_err(|e| Error::io(path.display(), e))?;
                state.writer = Some(ZipWriter::new_append(file).map_err(|e| zip_error(&path, e))?);
            }
        }
        Ok(ZipStore {
            path,
            compression: if deflate {
                CompressionMethod::Deflated
            } else {
                CompressionMethod::Stored
            },
            state: Mutex::new(state),
        })
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
        let key = validate_key(key)?;
        let mut state = self.lock()?;
        let Some(&entry) = state.existing.get(&key) else {
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
        let key = validate_key(key)?;
        let mut state = self.lock()?;
        let Some(&entry) = state.existing.get(&key) else {
            let Some(value) = self.unclosed_value(&state, &key)? else {
                return Ok(false);
            };
            if value.len() as u64 > max_len {
                return Err(too_large(&key, value.len() as u64, max_len));
            }
            buf.clear();
            try_reserve(buf, value.len(), &key)?;
            buf.extend_from_slice(value);
            return Ok(true);
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
        let key = validate_key(key)?;
        let mut state = self.lock()?;
        let Some(&entry) = state.existing.get(&key) else {
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
        let key = validate_key(key)?;
        let mut state = self.lock()?;
        if state.existing.contains_key(&key) || state.written.contains_key(&key) {
            return Err(Error::Exists(format!(
                "zip {}: {key:?} is already written and zip entries cannot be rewritten",
                self.path.display()
            )));
        }
        let writer = state.writer.as_mut().ok_or_else(|| {
            Error::ReadOnly(format!("zip {} is open for reading", self.path.display()))
        })?;
        let options = SimpleFileOptions::default()
            .compression_method(self.compression)
            .large_file(value.len() as u64 >= u32::MAX as u64);
        writer
            .start_file(key.as_str(), options)
            .map_err(|e| zip_error(&self.path, e))?;
        writer
            .write_all(value)
            .map_err(|e| zip_error(&self.path, e))?;
        if value.len() <= SMALL && is_document(&key) {
            state.small.insert(key.clone(), value.to_vec());
        }
        state.written.insert(key, value.len() as u64);
        Ok(())
    }

    fn erase(&self, key: &str) -> Result<bool> {
        let key = validate_key(key)?;
        let state = self.lock()?;
        if state.existing.contains_key(&key) || state.written.contains_key(&key) {
            return Err(Error::Unsupported(format!(
                "zip {}: entries cannot be erased ({key:?})",
                self.path.display()
            )));
        }
        if state.writer.is_none() {
            return Err(Error::ReadOnly(format!(
                "zip {} is open for reading",
                self.path.display()
            )));
        }
        Ok(false)
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
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
        let prefix = validate_dir_prefix(prefix)?;
        let keys = self.list_prefix(&prefix)?;
        Ok(listing_of(&prefix, keys.iter().map(String::as_str)))
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        let key = validate_key(key)?;
        let state = self.lock()?;
        Ok(state
            .existing
            .get(&key)
            .map(|e| e.size)
            .or_else(|| state.written.get(&key).copied()))
    }

    fn writable(&self) -> bool {
        self.lock().map(|s| s.writer.is_some()).unwrap_or(false)
    }

    fn location(&self) -> Option<PathBuf> {
        std::fs::canonicalize(&self.path).ok()
    }

    fn close(&self) -> Result<()> {
        let mut state = self.lock()?;
        let Some(writer) = state.writer.take() else {
            return Ok(());
        };
        writer.finish().map_err(|e| zip_error(&self.path, e))?;
        // The handle stays usable for reading what is now in the file.
        let file = File::open(&self.path).map_err(|e| Error::io(self.path.display(), e))?;
        let mut archive = ZipArchive::new(file).map_err(|e| zip_error(&self.path, e))?;
        state.existing = index_entries(&self.path, &mut archive)?;
        state.archive = Some(archive);
        state.written.clear();
        state.small.clear();
        Ok(())
    }
}

impl Drop for ZipStore {
    fn drop(&mut self) {
        // Closing explicitly reports errors; dropping still writes the central directory.
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
}
