//! Where a store key really lives: the store's location (its canonical directory or zip
//! file) joined with the key, with links in the part that exists resolved. Handles opened
//! through differently rooted stores (`X/s` with key `a`, `X` with key `s/a`), through links
//! or on the same zip file agree on it, so a copy can tell that its target overlaps its
//! source and every handle on one array can share its chunk locks. A store without a
//! location (a memory store) is told apart by its identity: only handles sharing that
//! store object agree.

use crate::store::Store;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The real location of a key, or of a node's keys, in a store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Location {
    /// A canonical path on the filesystem; inside a zip file, the zip file's path joined
    /// with the key.
    Path(PathBuf),
    /// A key of a store without a location, with the address of the store object.
    Store {
        /// The address of the store object.
        address: usize,
        /// The key (`""` for the whole store).
        key: String,
    },
}

impl Location {
    /// The location of `key` (a key or a node path; `""` is the whole store) in `store`.
    pub fn of(store: &Arc<dyn Store>, key: &str) -> Location {
        match store.location() {
            Some(root) => Location::Path(resolve(&join(root, key))),
            None => Location::Store {
                address: Arc::as_ptr(store) as *const () as usize,
                key: key.to_string(),
            },
        }
    }

    /// The location of `key` in a local store (a directory or a zip file) at `root`, which
    /// need not exist yet: what [`Location::of`] gives for a store opened there.
    pub fn at(root: &Path, key: &str) -> Location {
        Location::Path(resolve(&join(root.to_path_buf(), key)))
    }

    /// Whether `other` is this location or lies inside it.
    pub fn contains(&self, other: &Location) -> bool {
        match (self, other) {
            (Location::Path(outer), Location::Path(inner)) => inner.starts_with(outer),
            (
                Location::Store { address, key },
                Location::Store {
                    address: other_address,
                    key: other_key,
                },
            ) => {
                address == other_address
                    && (key.is_empty()
                        || other_key == key
                        || other_key
                            .strip_prefix(key.as_str())
                            .is_some_and(|rest| rest.starts_with('/')))
            }
            _ => false,
        }
    }

    /// Whether one of the two locations contains the other.
    pub fn overlaps(&self, other: &Location) -> bool {
        self.contains(other) || other.contains(self)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Path(path) => write!(f, "{}", path.display()),
            Location::Store { address, key } => {
                write!(f, "key {key:?} of the store object at {address:#x}")
            }
        }
    }
}

/// `root` joined with the segments of the `/`-separated `key`.
fn join(mut root: PathBuf, key: &str) -> PathBuf {
    root.extend(key.split('/').filter(|s| !s.is_empty()));
    root
}

/// `path` with its longest existing ancestor canonicalised (links resolved) and the rest
/// appended as it is; `path` itself when no ancestor resolves.
fn resolve(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(mut canonical) = std::fs::canonicalize(existing) {
            canonical.extend(missing.iter().rev());
            return canonical;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{FilesystemStore, MemoryStore};

    #[test]
    fn differently_rooted_stores_and_links_agree() {
        let dir = tempfile::tempdir().unwrap();
        let top: Arc<dyn Store> =
            Arc::new(FilesystemStore::open(dir.path().join("x"), true, true).unwrap());
        top.set("s/a/.zarray", b"{}").unwrap();
        let sub: Arc<dyn Store> =
            Arc::new(FilesystemStore::open(dir.path().join("x/s"), true, false).unwrap());
        assert_eq!(Location::of(&top, "s/a"), Location::of(&sub, "a"));
        assert_eq!(Location::of(&top, "s/new/b"), Location::of(&sub, "new/b"));
        assert!(Location::of(&top, "s").contains(&Location::of(&sub, "a/0.0")));
        assert!(!Location::of(&top, "s/a").contains(&Location::of(&sub, "ab")));
        // Located without a store, as a store opened there would be; also where nothing is.
        assert_eq!(
            Location::at(&dir.path().join("x"), "s/a"),
            Location::of(&sub, "a")
        );
        let missing = Location::at(&dir.path().join("x/s/new.zip"), "k");
        assert!(Location::of(&sub, "").contains(&missing));
        assert_eq!(missing, Location::of(&sub, "new.zip/k"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("x/s"), dir.path().join("x/l")).unwrap();
            assert_eq!(Location::of(&top, "l/a"), Location::of(&sub, "a"));
        }
    }

    #[test]
    fn stores_without_a_location_compare_by_identity() {
        let one: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let other: Arc<dyn Store> = Arc::new(MemoryStore::new());
        assert_eq!(Location::of(&one, "a"), Location::of(&one.clone(), "a"));
        assert!(!Location::of(&one, "a").overlaps(&Location::of(&other, "a")));
        assert!(Location::of(&one, "").contains(&Location::of(&one, "a/b")));
        assert!(Location::of(&one, "a").overlaps(&Location::of(&one, "a/b")));
        assert!(!Location::of(&one, "a").overlaps(&Location::of(&one, "ab")));
    }
}
