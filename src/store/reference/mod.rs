//! A read-only store over a kerchunk reference file (`reference:///abs/path/refs.json`):
//! each key resolves to bytes held in the file itself or to a byte range of another file,
//! so that netCDF-4, HDF5 and netCDF-3 archives read as Zarr without being copied.
//!
//! The references are read once, when the store opens (`parse` says how, and its `MAX_*`
//! constants bound what a file may ask for). Where a reference may point is decided by
//! `location::Locations` alone: by default beneath the reference file's directory. A read of a
//! range of a target reads only that range (a positioned read); open targets are kept in a
//! small cache of [`MAX_OPEN_TARGETS`] handles.

mod gen;
pub(crate) mod location;
mod parse;
mod raw;
mod shown;
mod template;

pub use gen::MAX_RENDERED_BYTES;
pub use location::MAX_ALLOWED_TARGETS;
pub use parse::{
    MAX_FILE_BYTES, MAX_GEN_DIMENSIONS, MAX_GEN_ENTRIES, MAX_HELD_BYTES, MAX_NAME_BYTES,
    MAX_REFERENCES, MAX_TEMPLATES,
};

use super::{
    get_bounded, list_dir_of_keys, range_of, too_large, validate_key, validate_prefix, DirListing,
    Store,
};
use crate::error::{to_usize, try_reserve, try_resize, Error, Result};
use location::{read_reference_file, Locations, OpenTarget};
use parse::{parse, Reference, References};
use shown::{shown, shown_url};
use std::collections::VecDeque;
use std::fs::File;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// The most target files a store keeps open.
pub const MAX_OPEN_TARGETS: usize = 32;

/// A read-only store whose keys are the references of a kerchunk reference file.
#[derive(Debug)]
pub struct ReferenceStore {
    /// The reference file, as opened.
    path: PathBuf,
    references: References,
    locations: Locations,
    /// Recently read targets (index, file, size), the most recent first.
    open_targets: Mutex<VecDeque<(u32, Arc<File>, u64)>>,
}

/// Splits a `reference://` URL into the reference file's path: `reference:///abs/path` or
/// `reference://localhost/abs/path`; a relative path (`reference:refs.json`) is refused.
pub fn parse_url(url: &str) -> Result<&str> {
    let path = url
        .split_once("://")
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("reference"))
        .map(|(_, rest)| rest.strip_prefix("localhost").unwrap_or(rest));
    match path {
        Some(path) if path.starts_with('/') => Ok(path),
        _ => Err(Error::InvalidArg(format!(
            "{url:?}: the reference file's path must be absolute (reference:///abs/path/refs.json)"
        ))),
    }
}

impl ReferenceStore {
    /// Opens the kerchunk reference file (JSON, version 0 or 1) at `path`, an absolute
    /// path. Its references may point beneath its own directory and beneath the directories
    /// listed in `allowed_targets` (absolute paths or `file://` URLs).
    pub fn open(path: impl AsRef<Path>, allowed_targets: &[String]) -> Result<Self> {
        let path = path.as_ref();
        if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
            return Err(Error::InvalidArg(format!(
                "reference file {}: the path must be absolute, without '..'",
                path.display()
            )));
        }
        let (text, own) = read_reference_file(path)?;
        let in_file = |e: Error| e.map_message(|m| format!("{}: {m}", path.display()));
        let references = parse(&text).map_err(in_file)?;
        drop(text);
        Ok(ReferenceStore {
            path: path.to_path_buf(),
            references,
            locations: Locations::new(own, allowed_targets).map_err(in_file)?,
            open_targets: Mutex::new(VecDeque::new()),
        })
    }

    /// The reference at `key`, `None` when the file has none.
    fn reference(&self, key: &str) -> Result<Option<(String, &Reference)>> {
        let key = validate_key(key)?.into_owned();
        Ok(self
            .references
            .entries
            .get(&key)
            .map(|reference| (key, reference)))
    }

    /// The file of target `target` (for the reference at `key`) and its size, from the
    /// cache or opened now.
    fn target(&self, key: &str, target: u32) -> Result<(Arc<File>, u64)> {
        let mut open = self
            .open_targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = open.iter().position(|(t, ..)| *t == target) {
            let entry = open.remove(at).expect("the position found");
            let found = (entry.1.clone(), entry.2);
            open.push_front(entry);
            return Ok(found);
        }
        drop(open);
        let url = &self.references.targets[target as usize];
        let (file, size): OpenTarget = self.locations.open(key, url)?;
        let mut open = self
            .open_targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Another thread may have opened it meanwhile: keep one handle.
        if let Some(entry) = open.iter().find(|(t, ..)| *t == target) {
            return Ok((entry.1.clone(), entry.2));
        }
        let file = Arc::new(file);
        open.truncate(MAX_OPEN_TARGETS - 1);
        open.push_front((target, file.clone(), size));
        Ok((file, size))
    }

    /// The file of target `target` (for the reference at `key`), and the offset and length
    /// of the bytes the reference stands for: `range`, checked to lie within the file, or
    /// the whole file.
    fn span(
        &self,
        key: &str,
        target: u32,
        range: Option<(u64, u64)>,
    ) -> Result<(Arc<File>, u64, u64)> {
        let (file, size) = self.target(key, target)?;
        let Some((offset, length)) = range else {
            return Ok((file, 0, size));
        };
        if offset.checked_add(length).is_none_or(|end| end > size) {
            return Err(Error::Io(format!(
                "reference {} reads {length} bytes from offset {offset} of {}, past \
                 its end ({size} bytes)",
                shown(key),
                shown_url(&self.references.targets[target as usize])
            )));
        }
        Ok((file, offset, length))
    }

    /// Reads `len` bytes at `offset` of the bytes that `reference` (at `key`) stands for
    /// into `buf`, whose contents are replaced; a range past their end is an error.
    fn read(
        &self,
        key: &str,
        reference: &Reference,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let (target, range) = match *reference {
            Reference::Inline(ref bytes) => {
                let part = range_of(bytes, key, offset, len)?;
                buf.clear();
                try_reserve(buf, part.len(), key)?;
                buf.extend_from_slice(part);
                return Ok(());
            }
            Reference::Target { target, range } => (target, range),
        };
        let (file, start, length) = self.span(key, target, range)?;
        if offset.checked_add(len).is_none_or(|end| end > length) {
            return Err(Error::Io(format!(
                "range {offset}+{len} of {} is past its end ({length} bytes)",
                shown(key)
            )));
        }
        buf.clear();
        try_resize(buf, to_usize(len, "range length")?, key)?;
        read_at(&file, buf, start + offset).map_err(|e| read_error(key, e))
    }

    /// The length of the bytes that `reference` (at `key`) stands for: for a target, once
    /// it is found where references may point and the range is found within it.
    fn length(&self, key: &str, reference: &Reference) -> Result<u64> {
        Ok(match *reference {
            Reference::Inline(ref bytes) => bytes.len() as u64,
            Reference::Target { target, range } => self.span(key, target, range)?.2,
        })
    }

    fn read_only(&self, what: &str) -> Error {
        Error::ReadOnly(format!(
            "cannot {what}: the reference store {} is read-only",
            self.path.display()
        ))
    }
}

/// The error of a failed read of the target of the reference at `key`.
fn read_error(key: &str, err: std::io::Error) -> Error {
    Error::io(
        format_args!("reference {}: reading its target", shown(key)),
        err,
    )
}

/// Fills `buf` from `offset` of `file`, without moving a shared position.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut offset) = (buf, offset);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, buf, offset)? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }
}

impl Store for ReferenceStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        get_bounded(self, key, u64::MAX)
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        let Some((key, reference)) = self.reference(key)? else {
            return Ok(false);
        };
        let length = self.length(&key, reference)?;
        if length > max_len {
            return Err(too_large(&key, length, max_len));
        }
        self.read(&key, reference, 0, length, buf)?;
        Ok(true)
    }

    fn read_exact_into(&self, key: &str, out: &mut [u8]) -> Result<Option<bool>> {
        let Some((key, reference)) = self.reference(key)? else {
            return Ok(Some(false));
        };
        if self.length(&key, reference)? != out.len() as u64 {
            return Ok(None);
        }
        let (target, range) = match *reference {
            Reference::Inline(ref bytes) => {
                out.copy_from_slice(bytes);
                return Ok(Some(true));
            }
            Reference::Target { target, range } => (target, range),
        };
        let (file, start, _) = self.span(&key, target, range)?;
        read_at(&file, out, start).map_err(|e| read_error(&key, e))?;
        Ok(Some(true))
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        let mut value = Vec::new();
        Ok(self
            .get_range_into(key, offset, len, &mut value)?
            .then_some(value))
    }

    fn get_range_into(&self, key: &str, offset: u64, len: u64, buf: &mut Vec<u8>) -> Result<bool> {
        let Some((key, reference)) = self.reference(key)? else {
            return Ok(false);
        };
        self.read(&key, reference, offset, len, buf)?;
        Ok(true)
    }

    fn set(&self, key: &str, _value: &[u8]) -> Result<()> {
        Err(self.read_only(&format!("write {}", shown(key))))
    }

    fn erase(&self, key: &str) -> Result<bool> {
        Err(self.read_only(&format!("erase {}", shown(key))))
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        Err(self.read_only(&format!("erase {}", shown(prefix))))
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = validate_prefix(prefix)?;
        Ok(self
            .references
            .entries
            .range(prefix.clone()..)
            .map(|(key, _)| key)
            .take_while(|key| key.starts_with(&prefix))
            .cloned()
            .collect())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        list_dir_of_keys(self, prefix)
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        match self.reference(key)? {
            Some((key, reference)) => self.length(&key, reference).map(Some),
            None => Ok(None),
        }
    }

    fn writable(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(refs: &str, files: &[(&str, &[u8])]) -> (tempfile::TempDir, ReferenceStore) {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
        let refs = refs.replace("$DIR", dir.path().to_str().unwrap());
        let path = dir.path().join("refs.json");
        std::fs::write(&path, refs).unwrap();
        let store = ReferenceStore::open(&path, &[]).unwrap();
        (dir, store)
    }

    #[test]
    fn urls_name_absolute_paths() {
        assert_eq!(
            parse_url("reference:///a/refs.json").unwrap(),
            "/a/refs.json"
        );
        assert_eq!(
            parse_url("reference://localhost/a/r.json").unwrap(),
            "/a/r.json"
        );
        for bad in [
            "reference:refs.json",
            "reference://refs.json",
            "reference://",
            "file:///a",
        ] {
            let err = parse_url(bad).unwrap_err().to_string();
            assert!(err.contains("must be absolute"), "{bad}: {err}");
        }
    }

    #[test]
    fn reads_inline_whole_and_ranged_values() {
        let (_dir, store) = store_with(
            r#"{"version": 1, "templates": {"d": "$DIR"},
                "refs": {".zgroup": "{\"zarr_format\":2}", "a/0": ["{{d}}/data.bin", 2, 5],
                         "a/1": ["file://{{d}}/data.bin"], "b/c/2": "base64:AP8="}}"#,
            &[("data.bin", b"0123456789")],
        );
        assert_eq!(store.get("a/0").unwrap().unwrap(), b"23456");
        assert_eq!(store.get("a/1").unwrap().unwrap(), b"0123456789");
        assert_eq!(store.get("b/c/2").unwrap().unwrap(), [0, 255]);
        assert_eq!(store.get("missing").unwrap(), None);
        assert_eq!(store.get_range("a/0", 1, 3).unwrap().unwrap(), b"345");
        assert_eq!(store.get_range("a/1", 9, 1).unwrap().unwrap(), b"9");
        assert_eq!(store.get_range("b/c/2", 1, 1).unwrap().unwrap(), [255]);
        assert!(store.get_range("a/0", 4, 2).is_err());
        assert_eq!(store.size("a/0").unwrap(), Some(5));
        assert_eq!(store.size("a/1").unwrap(), Some(10));
        let mut out = [0u8; 5];
        assert_eq!(store.read_exact_into("a/0", &mut out).unwrap(), Some(true));
        assert_eq!(&out, b"23456");
        assert_eq!(store.read_exact_into("a/1", &mut out).unwrap(), None);
        let mut buf = Vec::new();
        assert!(matches!(
            store.get_into("a/1", &mut buf, 9),
            Err(Error::Codec(_))
        ));
        assert_eq!(store.list().unwrap(), [".zgroup", "a/0", "a/1", "b/c/2"]);
        assert_eq!(store.list_prefix("a/").unwrap(), ["a/0", "a/1"]);
        let root = store.list_dir("").unwrap();
        assert_eq!(
            (root.keys, root.prefixes),
            (
                vec![".zgroup".to_string()],
                vec!["a".to_string(), "b".to_string()]
            )
        );
        assert_eq!(store.list_dir("b/").unwrap().prefixes, ["c"]);
        assert!(matches!(store.set("x", b"1"), Err(Error::ReadOnly(_))));
        assert!(matches!(store.erase("a/0"), Err(Error::ReadOnly(_))));
        assert!(matches!(store.erase_prefix(""), Err(Error::ReadOnly(_))));
        assert!(!store.writable());
        let long = "k".repeat(1 << 20);
        let err = store.set(&long, b"1").unwrap_err().to_string();
        assert!(err.len() < 500, "{}", err.len());
    }

    #[test]
    fn a_range_past_the_target_is_an_error_naming_the_key() {
        let (_dir, store) = store_with(
            r#"{"a/0": ["$DIR/data.bin", 8, 5], "a/1": ["$DIR/data.bin", 9223372036854775807, 9223372036854775807]}"#,
            &[("data.bin", b"0123456789")],
        );
        for key in ["a/0", "a/1"] {
            let err = store.get(key).unwrap_err();
            assert!(
                matches!(&err, Error::Io(m) if m.contains(&format!("{key:?}")) && m.contains("past")),
                "{err}"
            );
        }
    }

    #[test]
    fn open_targets_are_bounded() {
        let files: Vec<(String, Vec<u8>)> = (0..MAX_OPEN_TARGETS + 5)
            .map(|i| (format!("f{i}"), vec![i as u8; 3]))
            .collect();
        let refs: Vec<String> = (0..files.len())
            .map(|i| format!("\"k/{i}\": [\"$DIR/f{i}\", 1, 1]"))
            .collect();
        let borrowed: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let (_dir, store) = store_with(&format!("{{{}}}", refs.join(",")), &borrowed);
        for round in 0..2 {
            for i in 0..files.len() {
                assert_eq!(
                    store.get(&format!("k/{i}")).unwrap().unwrap(),
                    [i as u8],
                    "{round}"
                );
            }
        }
        assert_eq!(store.open_targets.lock().unwrap().len(), MAX_OPEN_TARGETS);
    }

    #[test]
    fn threads_opening_one_target_keep_one_handle() {
        for _ in 0..20 {
            let (_dir, store) = store_with(
                r#"{"a": ["$DIR/data.bin", 1, 2]}"#,
                &[("data.bin", b"0123")],
            );
            let barrier = std::sync::Barrier::new(8);
            std::thread::scope(|scope| {
                for _ in 0..8 {
                    scope.spawn(|| {
                        barrier.wait();
                        assert_eq!(store.get("a").unwrap().unwrap(), b"12");
                    });
                }
            });
            assert_eq!(store.open_targets.lock().unwrap().len(), 1);
        }
    }
}
