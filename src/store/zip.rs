//! A store in a zip file, as zarr-python's `ZipStore`: reads any zip it writes (stored or
//! deflated entries, ZIP64); writes a new zip where each key is written once, and closing
//! writes the central directory. Metadata documents written through a handle read back at
//! once; chunks after closing. Entry names that are not valid keys (`..`, absolute
//! paths) make the zip refused.

use super::{listing_of, validate_dir_prefix, validate_key, validate_prefix, DirListing, Store};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

/// Metadata documents up to this size written through a handle read back before the zip
/// is closed (chunks are not kept, so memory stays bounded however much is written).
const SMALL: usize = 1 << 20;

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

#[derive(Debug)]
struct State {
    /// Entries readable from the file: key → (entry index, size).
    existing: BTreeMap<String, (usize, u64)>,
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

fn index_entries(
    path: &Path,
    archive: &mut ZipArchive<File>,
) -> Result<BTreeMap<String, (usize, u64)>> {
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
        entries.insert(key, (i, entry.size()));
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
        if let Some(&(index, size)) = state.existing.get(&key) {
            let archive = state
                .archive
                .as_mut()
                .ok_or_else(|| Error::Internal("zip archive missing".into()))?;
            let mut entry = archive
                .by_index(index)
                .map_err(|e| zip_error(&self.path, e))?;
            // The declared size is the archive's claim: reserve at most 16 MiB up front and
            // let larger entries grow as they are read (a deflated entry expands at most
            // about 1032-fold, so what is read stays bounded by the archive's size).
            let mut data = Vec::with_capacity(size.min(1 << 24) as usize);
            entry
                .read_to_end(&mut data)
                .map_err(|e| zip_error(&self.path, format!("entry {key:?}: {e}")))?;
            return Ok(Some(data));
        }
        if let Some(value) = state.small.get(&key) {
            return Ok(Some(value.clone()));
        }
        if state.written.contains_key(&key) {
            return Err(Error::Unsupported(format!(
                "zip {}: {key:?} was written by this handle and reads back only after closing",
                self.path.display()
            )));
        }
        Ok(None)
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
            .map(|e| e.1)
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
