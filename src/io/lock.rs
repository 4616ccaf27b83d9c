//! Chunk locks for concurrent writers, as zarr-python 2's synchronizers: per-chunk locks
//! inside the process (striped mutexes), or per-chunk lock files in a directory on a shared
//! filesystem for many processes and MPI ranks. Reads never lock.
//!
//! Locks belong to the array, not to a handle: every handle on one array in the process
//! shares its mutexes, found in a process-wide registry by the array's real [`Location`]
//! (the canonical directory of its chunks, or for a store without a location the store
//! object and the path), however the store was rooted. The registry holds them weakly, so
//! an array's mutexes go when its last synchronised handle does.
//!
//! Lock files are named by a stable hash (FNV-1a, 64 bits: the same in every process and
//! build) of the chunk's real location, so handles opened through differently rooted stores
//! take the same file. Processes therefore agree when they see the store at the same
//! canonical path: MPI ranks on different nodes do when the shared filesystem is mounted at
//! the same path on every node (and the lock directory is on a filesystem whose `flock`
//! works across nodes). Two chunks whose names collide share a lock, which only costs
//! concurrency.

use super::location::Location;
use crate::error::{Error, Result};
use crate::store::{Expect, Store, Version};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Number of striped mutexes per array: chunks whose keys hash alike share one, which only
/// costs some concurrency.
const STRIPES: usize = 1024;

/// How writers to one array are kept from losing each other's updates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Synchronization {
    /// No locking: the caller promises that no two writers touch one chunk.
    None,
    /// Per-chunk locks inside this process, shared by every handle on the array.
    Thread,
    /// Per-chunk lock files in this directory (shared by every process), plus the
    /// in-process locks.
    Process(PathBuf),
    /// No locks: a chunk or shard that a write covers only in part is replaced only if it
    /// still has the version read (an object's ETag), else read, merged and written again.
    /// Needs a store that keeps versions ([`Store::versioned`]): object stores, memory.
    Versioned,
}

/// How one handle keeps concurrent writers of a chunk from losing each other's updates,
/// as its [`Synchronization`] says.
#[derive(Debug, Default)]
pub enum WriteGuard {
    /// Nothing: the caller promises that no two writers touch one chunk.
    #[default]
    None,
    /// Each chunk's lock is held while it is rewritten.
    Locks(ChunkLocks),
    /// Partial rewrites are conditional on the version read, and retried.
    Versions,
}

/// What a rewrite started from: whether the value existed and, under
/// [`WriteGuard::Versions`], its version.
#[derive(Debug)]
pub struct Snapshot {
    /// The value was read (it exists).
    pub found: bool,
    /// `None` when the value was not read (it is replaced whatever it holds).
    expect: Option<Option<Version>>,
}

impl Snapshot {
    /// Whether the rewrite replaces the value whatever it holds (no version to check).
    pub fn unconditional(&self) -> bool {
        self.expect.is_none()
    }
}

/// Most attempts at a conditional rewrite before giving up.
const MAX_ATTEMPTS: u32 = 64;

impl WriteGuard {
    /// The guard for `sync` of the array whose chunk keys start with `base` and live at
    /// `home` in `store`; a versioned guard needs a store that keeps versions.
    pub fn new(
        sync: &Synchronization,
        store: &dyn Store,
        home: &Location,
        base: &str,
    ) -> Result<Self> {
        if *sync == Synchronization::Versioned {
            if !store.versioned() {
                return Err(Error::Unsupported(
                    "this store keeps no versions of its values (object stores and memory \
                     do): synchronise writers with lock files instead"
                        .into(),
                ));
            }
            return Ok(WriteGuard::Versions);
        }
        Ok(ChunkLocks::new(sync, home, base)?.map_or(WriteGuard::None, WriteGuard::Locks))
    }

    /// Takes the lock of the chunk stored at `key` when the guard locks.
    pub fn lock(&self, key: &str) -> Result<Option<ChunkGuard<'_>>> {
        match self {
            WriteGuard::Locks(locks) => locks.lock(key).map(Some),
            _ => Ok(None),
        }
    }

    /// Whether a rewrite must store something: a conditional write cannot erase, so a
    /// chunk that became all fill value is stored rather than erased.
    pub fn keeps_empty(&self) -> bool {
        matches!(self, WriteGuard::Versions)
    }

    /// Reads the value at `key` into `buf` when `read` (bounded by `max_len`), with its
    /// version under [`WriteGuard::Versions`]: what [`WriteGuard::store`] checks.
    pub fn read(
        &self,
        store: &dyn Store,
        key: &str,
        read: bool,
        buf: &mut Vec<u8>,
        max_len: u64,
    ) -> Result<Snapshot> {
        if !read {
            return Ok(Snapshot {
                found: false,
                expect: None,
            });
        }
        if let WriteGuard::Versions = self {
            let version = store.get_versioned(key, buf, max_len)?;
            return Ok(Snapshot {
                found: version.is_some(),
                expect: Some(version),
            });
        }
        Ok(Snapshot {
            found: store.get_into(key, buf, max_len)?,
            expect: None,
        })
    }

    /// Stores `value` at `key` (`None`: erases it) after a rewrite that started from
    /// `snapshot`: `false` when, under [`WriteGuard::Versions`], the value changed since it
    /// was read and nothing was written (read again, merge again, retry).
    pub fn store(
        &self,
        store: &dyn Store,
        key: &str,
        value: Option<&[u8]>,
        snapshot: &Snapshot,
    ) -> Result<bool> {
        match (&snapshot.expect, value) {
            (None, Some(value)) => store.set(key, value).map(|()| true),
            (None, None) => store.erase(key).map(|_| true),
            (Some(version), Some(value)) => {
                let expect = version.as_ref().map_or(Expect::Absent, Expect::Version);
                store.set_if(key, value, expect)
            }
            (Some(_), None) => Err(Error::Internal(format!(
                "a conditional rewrite of {key:?} cannot erase it"
            ))),
        }
    }
}

/// Counts the attempts at a conditional rewrite and waits between them.
#[derive(Debug, Default)]
pub struct Retry(u32);

impl Retry {
    /// Waits before the next attempt at rewriting `key` (a short, growing, jittered
    /// pause), or fails once too many writers kept changing it.
    pub fn again(&mut self, key: &str) -> Result<()> {
        self.0 += 1;
        if self.0 >= MAX_ATTEMPTS {
            return Err(Error::Io(format!(
                "{key:?} was changed by other writers {MAX_ATTEMPTS} times while this write \
                 tried to update it: gave up"
            )));
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let ceiling = 1u64 << self.0.min(7);
        let millis = u64::from(nanos) % ceiling + 1;
        std::thread::sleep(std::time::Duration::from_millis(millis));
        Ok(())
    }
}

/// The striped mutexes of one array, shared by its handles in the process.
#[derive(Debug)]
struct Stripes(Vec<Mutex<()>>);

/// The stripes of every array some handle synchronises, by the array's real location.
static REGISTRY: Mutex<BTreeMap<Location, Weak<Stripes>>> = Mutex::new(BTreeMap::new());

/// The locks of one array, as one handle takes them.
#[derive(Debug)]
pub struct ChunkLocks {
    stripes: Arc<Stripes>,
    /// The store key prefix of this handle's chunk keys (`"s/a/"`), replaced by `home` in
    /// lock names.
    base: String,
    /// The FNV-1a state after the real location of the chunks and a `/`: a lock file name
    /// continues it with the chunk key.
    home_hash: u64,
    dir: Option<PathBuf>,
}

/// A held chunk lock; released when dropped.
#[derive(Debug)]
pub struct ChunkGuard<'a> {
    _file: Option<File>,
    _stripe: MutexGuard<'a, ()>,
}

impl ChunkLocks {
    /// Locks for `sync` of the array whose chunk keys start with `base` (a prefix ending in
    /// `/`, or `""`) and live at `home`, or `None` when `sync` asks for no locking. A
    /// process lock directory is created if missing.
    pub fn new(sync: &Synchronization, home: &Location, base: &str) -> Result<Option<Self>> {
        let dir = match sync {
            Synchronization::None | Synchronization::Versioned => return Ok(None),
            Synchronization::Thread => None,
            Synchronization::Process(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| {
                    Error::io(format!("creating lock directory {}", dir.display()), e)
                })?;
                Some(dir.clone())
            }
        };
        Ok(Some(ChunkLocks {
            stripes: shared_stripes(home)?,
            base: base.to_string(),
            home_hash: fnv1a(FNV_OFFSET, &[home.to_string().as_bytes(), b"/"]),
            dir,
        }))
    }

    /// Takes the lock of the chunk stored at `key`, blocking until it is free.
    pub fn lock(&self, key: &str) -> Result<ChunkGuard<'_>> {
        let chunk = key.strip_prefix(self.base.as_str()).unwrap_or(key);
        let stripe = self.stripes.0[fnv1a(FNV_OFFSET, &[chunk.as_bytes()]) as usize % STRIPES]
            .lock()
            .map_err(|_| Error::Internal("chunk lock poisoned".into()))?;
        let file = match &self.dir {
            None => None,
            Some(dir) => Some(lock_file(&dir.join(self.file_name(chunk)))?),
        };
        Ok(ChunkGuard {
            _file: file,
            _stripe: stripe,
        })
    }

    /// The lock file name of `chunk` (a key relative to the array's chunks): the hash of
    /// its real location.
    fn file_name(&self, chunk: &str) -> String {
        let hash = fnv1a(self.home_hash, &[chunk.as_bytes()]);
        format!("{hash:016x}.lock")
    }
}

/// The stripes of the array at `home`, shared with every other live handle on it; dead
/// entries are dropped whenever one is added.
fn shared_stripes(home: &Location) -> Result<Arc<Stripes>> {
    let mut registry = REGISTRY
        .lock()
        .map_err(|_| Error::Internal("chunk lock registry poisoned".into()))?;
    if let Some(stripes) = registry.get(home).and_then(Weak::upgrade) {
        return Ok(stripes);
    }
    registry.retain(|_, stripes| stripes.strong_count() > 0);
    let stripes = Arc::new(Stripes((0..STRIPES).map(|_| Mutex::new(())).collect()));
    registry.insert(home.clone(), Arc::downgrade(&stripes));
    Ok(stripes)
}

/// The FNV-1a (64 bits) state before any byte.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a (64 bits) continued from `state` over the concatenated `parts` (from
/// [`FNV_OFFSET`]: the hash of `parts`): stable across processes and builds.
fn fnv1a(state: u64, parts: &[&[u8]]) -> u64 {
    parts
        .iter()
        .flat_map(|part| part.iter())
        .fold(state, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Opens and exclusively locks (flock) the lock file at `path`.
fn lock_file(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(format!("opening lock file {}", path.display()), e))?;
    file.lock()
        .map_err(|e| Error::io(format!("locking {}", path.display()), e))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{FilesystemStore, Store};

    fn fs_store(root: &Path) -> Arc<dyn Store> {
        Arc::new(FilesystemStore::open(root, true, true).unwrap())
    }

    /// The locks of the array at `path` of a filesystem store rooted at `root`.
    fn locks_of(root: &Path, path: &str, sync: &Synchronization) -> ChunkLocks {
        let home = Location::of(&fs_store(root), path);
        ChunkLocks::new(sync, &home, &format!("{path}/"))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn fnv1a_is_the_published_function() {
        assert_eq!(fnv1a(FNV_OFFSET, &[]), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(FNV_OFFSET, &[b"a"]), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(
            fnv1a(FNV_OFFSET, &[b"foo", b"bar"]),
            fnv1a(FNV_OFFSET, &[b"foobar"])
        );
        assert_eq!(
            fnv1a(fnv1a(FNV_OFFSET, &[b"foo"]), &[b"bar"]),
            0x8594_4171_f739_67e8
        );
    }

    #[test]
    fn process_locks_exclude_each_other_and_release_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let sync = Synchronization::Process(dir.path().join("locks"));
        let locks = locks_of(&dir.path().join("x"), "a", &sync);
        let guard = locks.lock("a/0.1").unwrap();
        let path = dir.path().join("locks").join(locks.file_name("0.1"));
        let other = File::open(path).unwrap();
        assert!(other.try_lock().is_err(), "the lock file is held");
        drop(guard);
        assert!(other.try_lock().is_ok(), "released on drop");
        let home = Location::of(&fs_store(&dir.path().join("x")), "a");
        assert!(ChunkLocks::new(&Synchronization::None, &home, "a/")
            .unwrap()
            .is_none());
    }

    #[test]
    fn handles_through_different_roots_share_stripes_and_lock_files() {
        let dir = tempfile::tempdir().unwrap();
        let sync = Synchronization::Process(dir.path().join("locks"));
        let top = locks_of(&dir.path().join("x"), "s/a", &sync);
        let sub = locks_of(&dir.path().join("x/s"), "a", &sync);
        assert!(Arc::ptr_eq(&top.stripes, &sub.stripes));
        assert_eq!(top.file_name("0.1"), sub.file_name("0.1"));
        assert_ne!(top.file_name("0.1"), top.file_name("0.2"));
        let elsewhere = locks_of(&dir.path().join("x"), "s/b", &sync);
        assert!(!Arc::ptr_eq(&top.stripes, &elsewhere.stripes));
        assert_ne!(top.file_name("0.1"), elsewhere.file_name("0.1"));
    }

    #[test]
    fn the_registry_forgets_arrays_without_handles() {
        let dir = tempfile::tempdir().unwrap();
        let store = fs_store(dir.path());
        let home = Location::of(&store, "gone");
        let locks = ChunkLocks::new(&Synchronization::Thread, &home, "gone/").unwrap();
        let weak = Arc::downgrade(&locks.unwrap().stripes);
        assert!(weak.upgrade().is_none(), "dropped with its last handle");
        let other = Location::of(&store, "other");
        let _kept = ChunkLocks::new(&Synchronization::Thread, &other, "other/").unwrap();
        assert!(!REGISTRY.lock().unwrap().contains_key(&home), "pruned");
    }
}
