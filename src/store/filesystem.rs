//! A store in a filesystem directory: each key is a file below the root, `/` in a key makes
//! directories, and values are written to a temporary file in the same directory and then
//! renamed into place, so a crash leaves the old value or the new one, never half.
//!
//! Symbolic links inside the directory are followed only while they lead to a place inside
//! the root (checked against the canonical root whenever a path component is a link); a key
//! that would reach outside through a link is refused as an invalid key, for reads, writes,
//! erasures and listings alike. Directories found to be plain directories are remembered
//! (until this handle removes a directory), so a key costs one `lstat` (of its last
//! component) once its directories are known.

use super::{
    check_writable, validate_dir_prefix, validate_key, validate_prefix, DirListing, Store,
};
use crate::error::{Error, Result};
use std::collections::HashSet;
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

/// Temporary files start with this; listings skip them.
const TEMP_PREFIX: &str = ".zarr-tmp.";

/// A store rooted at a directory.
#[derive(Debug)]
pub struct FilesystemStore {
    root: PathBuf,
    /// `root` with every link resolved: where keys must stay.
    canonical_root: PathBuf,
    writable: bool,
    /// Directories below the root (relative paths) already found not to be links.
    plain_dirs: RwLock<HashSet<String>>,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl FilesystemStore {
    /// Opens the directory `root`. With `create`, a missing directory is created; with
    /// `writable` false every write is refused.
    pub fn open(root: impl AsRef<Path>, writable: bool, create: bool) -> Result<Self> {
        let root = root.as_ref().to_path_buf();
        match fs::metadata(&root) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::Io(format!(
                    "{} exists and is not a directory",
                    root.display()
                )))
            }
            Err(e) if e.kind() == ErrorKind::NotFound && create && writable => {
                fs::create_dir_all(&root)
                    .map_err(|e| Error::io(format!("creating {}", root.display()), e))?;
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::NotFound(format!(
                    "directory {} does not exist",
                    root.display()
                )))
            }
            Err(e) => return Err(Error::io(root.display(), e)),
        }
        let canonical_root = fs::canonicalize(&root).map_err(|e| Error::io(root.display(), e))?;
        Ok(Self {
            root,
            canonical_root,
            writable,
            plain_dirs: RwLock::default(),
        })
    }

    /// The directory this store is rooted at.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path_of(&self, key: &str) -> Result<PathBuf> {
        let key = validate_key(key)?;
        if key
            .split('/')
            .any(|segment| segment.starts_with(TEMP_PREFIX))
        {
            return Err(Error::InvalidKey(format!(
                "key {key:?}: names starting with {TEMP_PREFIX:?} are reserved for temporary files"
            )));
        }
        self.check_links(&key, &key)?;
        Ok(self.root.join(key))
    }

    /// Refuses `relative` (a normalised path below the root, named `key` in errors) when a
    /// symbolic link among its components leads outside the root. Costs one `lstat` per
    /// component not yet known as a plain directory; links are resolved only when there are
    /// any.
    fn check_links(&self, relative: &str, key: &str) -> Result<()> {
        // Normalised paths have no empty segments; a directory prefix ends with '/'.
        let relative = relative.trim_end_matches('/');
        if relative.is_empty() {
            return Ok(());
        }
        let mut path = self.root.clone();
        let mut start = 0;
        while start <= relative.len() {
            let end = relative[start..]
                .find('/')
                .map_or(relative.len(), |i| start + i);
            let (prefix, last) = (&relative[..end], end == relative.len());
            path.push(&relative[start..end]);
            start = end + 1;
            if !last && self.is_known_plain(prefix) {
                continue;
            }
            match fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_symlink() => {
                    // Every existing prefix from the link on must resolve inside the root.
                    self.check_inside(&path, key)?;
                    for rest in relative.get(start..).unwrap_or("").split('/') {
                        if rest.is_empty() {
                            break;
                        }
                        path.push(rest);
                        if fs::symlink_metadata(&path).is_err() {
                            break;
                        }
                        self.check_inside(&path, key)?;
                    }
                    return Ok(());
                }
                Ok(m) if m.is_dir() => {
                    if let Ok(mut known) = self.plain_dirs.write() {
                        known.insert(prefix.to_string());
                    }
                }
                Ok(_) => {}
                // Nothing exists below a missing component, so no link either.
                Err(_) => return Ok(()),
            }
        }
        Ok(())
    }

    /// Whether the directory `prefix` was already found not to be a link.
    fn is_known_plain(&self, prefix: &str) -> bool {
        self.plain_dirs
            .read()
            .map(|known| known.contains(prefix))
            .unwrap_or(false)
    }

    /// Forgets the known plain directories: called whenever this handle removes one (a
    /// link could then take its place).
    fn forget_plain_dirs(&self) {
        if let Ok(mut known) = self.plain_dirs.write() {
            known.clear();
        }
    }

    /// Refuses `path` (which exists, possibly as a link) unless it resolves inside the root.
    fn check_inside(&self, path: &Path, key: &str) -> Result<()> {
        match fs::canonicalize(path) {
            Ok(resolved) if resolved.starts_with(&self.canonical_root) => Ok(()),
            Ok(resolved) => Err(Error::InvalidKey(format!(
                "key {key:?}: the symbolic link {} leads outside the store to {}",
                path.display(),
                resolved.display()
            ))),
            Err(e) => Err(Error::InvalidKey(format!(
                "key {key:?}: the symbolic link {} cannot be resolved ({e})",
                path.display()
            ))),
        }
    }

    /// Removes the directories above `path` that have become empty, up to the root, so
    /// listings never show prefixes without keys.
    fn prune_empty_parents(&self, path: &Path) {
        self.forget_plain_dirs();
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d == self.root || !d.starts_with(&self.root) || fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }

    fn prefix_dir(&self, prefix: &str) -> PathBuf {
        self.root.join(prefix.trim_end_matches('/'))
    }

    /// Appends the keys below `dir` (whose key prefix is `key_prefix` and whose resolved
    /// path is `canonical`) to `out`. Links are followed when they stay inside the root; a
    /// link to a directory that contains it (a cycle) is skipped.
    fn collect_files(
        &self,
        dir: &Path,
        canonical: &Path,
        key_prefix: &str,
        out: &mut Vec<String>,
    ) -> Result<()> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound || e.kind() == ErrorKind::NotADirectory => {
                return Ok(())
            }
            Err(e) => return Err(Error::io(format!("listing {}", dir.display()), e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if name.starts_with(TEMP_PREFIX) {
                continue;
            }
            let file_type = entry
                .file_type()
                .map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
            let key = format!("{key_prefix}{name}");
            let path = entry.path();
            let (is_dir, target) = if file_type.is_symlink() {
                self.check_inside(&path, &key)?;
                let target = fs::canonicalize(&path)
                    .map_err(|e| Error::io(format!("listing {key:?}"), e))?;
                if canonical.starts_with(&target) {
                    continue;
                }
                (target.is_dir(), target)
            } else {
                (file_type.is_dir(), canonical.join(&name))
            };
            if is_dir {
                self.collect_files(&path, &target, &format!("{key}/"), out)?;
            } else {
                out.push(key);
            }
        }
        Ok(())
    }
}

impl Store for FilesystemStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let path = self.path_of(key)?;
        match fs::read(&path) {
            Ok(data) => Ok(Some(data)),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::NotFound | ErrorKind::IsADirectory | ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(Error::io(format!("reading {key:?}"), e)),
        }
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        use std::io::Read;
        let path = self.path_of(key)?;
        let file = match fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                return Ok(false)
            }
            Err(e) => return Err(Error::io(format!("reading {key:?}"), e)),
        };
        let size = file
            .metadata()
            .map_err(|e| Error::io(format!("reading {key:?}"), e))?
            .len();
        if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
            return Ok(false);
        }
        if size > max_len {
            return Err(super::too_large(key, size, max_len));
        }
        buf.clear();
        crate::error::try_reserve(buf, crate::error::to_usize(size, "value size")?, key)?;
        file.take(max_len.saturating_add(1))
            .read_to_end(buf)
            .map_err(|e| Error::io(format!("reading {key:?}"), e))?;
        if buf.len() as u64 > max_len {
            return Err(super::too_large(key, buf.len() as u64, max_len));
        }
        Ok(true)
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        use std::io::{Read, Seek, SeekFrom};
        let path = self.path_of(key)?;
        let mut file = match fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                return Ok(None)
            }
            Err(e) => return Err(Error::io(format!("reading {key:?}"), e)),
        };
        let size = file
            .metadata()
            .map_err(|e| Error::io(format!("reading {key:?}"), e))?
            .len();
        if offset.checked_add(len).is_none_or(|end| end > size) {
            return Err(Error::Io(format!(
                "range {offset}+{len} of {key:?} is past its end ({size} bytes)"
            )));
        }
        let mut data = vec![0u8; crate::error::to_usize(len, "range length")?];
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_exact(&mut data))
            .map_err(|e| Error::io(format!("reading {key:?}"), e))?;
        Ok(Some(data))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        check_writable(self, &format!("write {key:?}"))?;
        let path = self.path_of(key)?;
        let dir = path
            .parent()
            .ok_or_else(|| Error::Internal(format!("key {key:?} has no parent directory")))?;
        fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating the directory of {key:?}"), e))?;
        let temp = dir.join(format!(
            "{TEMP_PREFIX}{}.{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::File::create(&temp).and_then(|mut f| f.write_all(value));
        let renamed = written.and_then(|()| fs::rename(&temp, &path));
        if let Err(e) = renamed {
            let _ = fs::remove_file(&temp);
            return Err(Error::io(format!("writing {key:?}"), e));
        }
        Ok(())
    }

    fn erase(&self, key: &str) -> Result<bool> {
        check_writable(self, &format!("erase {key:?}"))?;
        let path = self.path_of(key)?;
        match fs::remove_file(&path) {
            Ok(()) => {
                self.prune_empty_parents(&path);
                Ok(true)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::NotFound | ErrorKind::IsADirectory | ErrorKind::NotADirectory
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(Error::io(format!("erasing {key:?}"), e)),
        }
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        check_writable(self, &format!("erase {prefix:?}"))?;
        let prefix = validate_prefix(prefix)?;
        if prefix.is_empty() || prefix.ends_with('/') {
            self.check_links(&prefix, &prefix)?;
            self.forget_plain_dirs();
            let dir = self.prefix_dir(&prefix);
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(Error::io(format!("erasing {prefix:?}"), e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(format!("erasing {prefix:?}"), e))?;
                let path = entry.path();
                let result = if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                    fs::remove_dir_all(&path)
                } else {
                    fs::remove_file(&path)
                };
                result.map_err(|e| Error::io(format!("erasing {}", path.display()), e))?;
            }
            if !prefix.is_empty() {
                let _ = fs::remove_dir(&dir);
            }
            return Ok(());
        }
        for key in self.list_prefix(&prefix)? {
            self.erase(&key)?;
        }
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = validate_prefix(prefix)?;
        // Walk from the deepest directory the prefix names, then filter by the full prefix.
        let dir_part = match prefix.rfind('/') {
            Some(i) => &prefix[..=i],
            None => "",
        };
        let mut keys = Vec::new();
        self.check_links(dir_part, &prefix)?;
        let canonical = self.canonical_root.join(dir_part.trim_end_matches('/'));
        let canonical = match fs::canonicalize(&canonical) {
            Ok(resolved) => resolved,
            Err(_) => canonical,
        };
        self.collect_files(&self.prefix_dir(dir_part), &canonical, dir_part, &mut keys)?;
        keys.retain(|k| k.starts_with(&prefix));
        keys.sort();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let prefix = validate_dir_prefix(prefix)?;
        self.check_links(&prefix, &prefix)?;
        let dir = self.prefix_dir(&prefix);
        let mut listing = DirListing::default();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound || e.kind() == ErrorKind::NotADirectory => {
                return Ok(listing)
            }
            Err(e) => return Err(Error::io(format!("listing {prefix:?}"), e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(format!("listing {prefix:?}"), e))?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if name.starts_with(TEMP_PREFIX) {
                continue;
            }
            let file_type = entry
                .file_type()
                .map_err(|e| Error::io(format!("listing {prefix:?}"), e))?;
            let is_dir = if file_type.is_symlink() {
                let path = entry.path();
                self.check_inside(&path, &format!("{prefix}{name}"))?;
                path.is_dir()
            } else {
                file_type.is_dir()
            };
            if is_dir {
                listing.prefixes.push(name);
            } else {
                listing.keys.push(name);
            }
        }
        listing.keys.sort();
        listing.prefixes.sort();
        Ok(listing)
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        let path = self.path_of(key)?;
        match fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(Some(m.len())),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == ErrorKind::NotFound || e.kind() == ErrorKind::NotADirectory => {
                Ok(None)
            }
            Err(e) => Err(Error::io(format!("inspecting {key:?}"), e)),
        }
    }

    fn writable(&self) -> bool {
        self.writable
    }

    fn location(&self) -> Option<PathBuf> {
        Some(self.canonical_root.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_keys_make_directories_and_list() {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::open(dir.path().join("s"), true, true).unwrap();
        store.set("a/b/0.0", b"x").unwrap();
        store.set("a/.zarray", b"{}").unwrap();
        store.set("top", b"t").unwrap();
        assert!(dir.path().join("s/a/b/0.0").is_file());
        assert_eq!(store.get("a/b/0.0").unwrap().unwrap(), b"x");
        assert_eq!(store.get("a/b").unwrap(), None);
        assert_eq!(store.list().unwrap(), vec!["a/.zarray", "a/b/0.0", "top"]);
        assert_eq!(store.list_prefix("a/b").unwrap(), vec!["a/b/0.0"]);
        let l = store.list_dir("a/").unwrap();
        assert_eq!(l.keys, vec![".zarray"]);
        assert_eq!(l.prefixes, vec!["b"]);
        store.erase_prefix("a/").unwrap();
        assert_eq!(store.list().unwrap(), vec!["top"]);
        assert!(store.erase("top").unwrap());
        assert!(!store.erase("top").unwrap());
    }

    #[test]
    fn read_only_refuses_writes_and_keys_cannot_escape() {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::open(dir.path(), false, false).unwrap();
        assert!(matches!(store.set("k", b"v"), Err(Error::ReadOnly(_))));
        let rw = FilesystemStore::open(dir.path(), true, false).unwrap();
        assert!(matches!(
            rw.set("../escape", b"v"),
            Err(Error::InvalidKey(_))
        ));
        assert!(matches!(rw.set("/abs", b"v"), Err(Error::InvalidKey(_))));
        assert!(!dir.path().parent().unwrap().join("escape").exists());
    }

    /// A store at `dir/store` holding `a/x`, next to `dir/outside/secret`, with links
    /// `file_out` (to the secret file), `dir_out` (to `outside/`), `file_in` (to `a/x`),
    /// `dir_in` (to `a/`) and `a/loop` (to `a/`, a cycle).
    fn linked_store(dir: &Path) -> FilesystemStore {
        use std::os::unix::fs::symlink;
        let root = dir.join("store");
        fs::create_dir_all(dir.join("outside")).unwrap();
        fs::write(dir.join("outside/secret"), b"s").unwrap();
        let store = FilesystemStore::open(&root, true, true).unwrap();
        store.set("a/x", b"inside").unwrap();
        symlink(dir.join("outside/secret"), root.join("file_out")).unwrap();
        symlink(dir.join("outside"), root.join("dir_out")).unwrap();
        symlink("a/x", root.join("file_in")).unwrap();
        symlink("a", root.join("dir_in")).unwrap();
        symlink("..", root.join("a/loop")).unwrap();
        store
    }

    #[test]
    fn symlinks_leading_outside_the_root_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = linked_store(dir.path());
        let refused = |r: Result<()>, key: &str| match r {
            Err(Error::InvalidKey(m)) => assert!(m.contains(key) && m.contains("outside"), "{m}"),
            other => panic!("{key}: expected InvalidKey, got {other:?}"),
        };
        for key in ["file_out", "dir_out/secret", "dir_out/new"] {
            refused(store.get(key).map(drop), key);
            refused(store.get_range(key, 0, 1).map(drop), key);
            refused(store.size(key).map(drop), key);
            refused(store.set(key, b"x"), key);
            refused(store.erase(key).map(drop), key);
            refused(store.list_prefix(&format!("{key}/")).map(drop), key);
        }
        refused(store.list_dir("dir_out/").map(drop), "dir_out");
        refused(store.erase_prefix("dir_out/"), "dir_out");
        // Whole-store listings meet the links and refuse too.
        refused(store.list().map(drop), "_out");
        refused(store.list_dir("").map(drop), "_out");
        // Nothing outside was read, written or removed.
        assert_eq!(fs::read(dir.path().join("outside/secret")).unwrap(), b"s");
        assert!(!dir.path().join("outside/new").exists());
    }

    #[test]
    fn a_directory_removed_and_replaced_by_a_link_is_checked_again() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(dir.path().join("outside")).unwrap();
        fs::write(dir.path().join("outside/x"), b"s").unwrap();
        let store = FilesystemStore::open(&root, true, true).unwrap();
        store.set("a/b/x", b"inside").unwrap();
        assert_eq!(store.get("a/b/x").unwrap().unwrap(), b"inside");
        // The handle knows a and a/b as plain directories; erasing forgets them.
        store.erase_prefix("a/").unwrap();
        symlink(dir.path().join("outside"), root.join("a")).unwrap();
        assert!(matches!(store.get("a/x"), Err(Error::InvalidKey(_))));
    }

    #[test]
    fn symlinks_inside_the_root_are_followed_and_cycles_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = linked_store(dir.path());
        use std::os::unix::fs::symlink;
        let root = dir.path().join("store");
        fs::remove_file(root.join("file_out")).unwrap();
        fs::remove_file(root.join("dir_out")).unwrap();
        assert_eq!(store.get("file_in").unwrap().unwrap(), b"inside");
        assert_eq!(store.get("dir_in/x").unwrap().unwrap(), b"inside");
        store.set("dir_in/y", b"via link").unwrap();
        assert_eq!(store.get("a/y").unwrap().unwrap(), b"via link");
        assert_eq!(
            store.list().unwrap(),
            vec!["a/x", "a/y", "dir_in/x", "dir_in/y", "file_in"]
        );
        let l = store.list_dir("").unwrap();
        assert_eq!(l.keys, vec!["file_in"]);
        assert_eq!(l.prefixes, vec!["a", "dir_in"]);
        // A dangling link is refused: it cannot be shown to stay inside.
        symlink("missing", root.join("dangling")).unwrap();
        assert!(matches!(store.get("dangling"), Err(Error::InvalidKey(_))));
    }

    #[test]
    fn leftover_temporary_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::open(dir.path(), true, false).unwrap();
        store.set("a/0.0", b"new").unwrap();
        // What a writer killed between writing and renaming leaves behind.
        fs::write(dir.path().join("a/.zarr-tmp.123.4"), b"half").unwrap();
        fs::write(dir.path().join(".zarr-tmp.123.5"), b"half").unwrap();
        assert_eq!(store.list().unwrap(), vec!["a/0.0"]);
        let l = store.list_dir("a/").unwrap();
        assert_eq!((l.keys, l.prefixes), (vec!["0.0".to_string()], vec![]));
        assert!(matches!(
            store.get("a/.zarr-tmp.123.4"),
            Err(Error::InvalidKey(_))
        ));
        store.erase_prefix("a/").unwrap();
        assert_eq!(store.list().unwrap(), Vec::<String>::new());
    }
}
