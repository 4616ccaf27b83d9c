//! Chunk locks for concurrent writers, as zarr-python 2's synchronizers: per-chunk locks
//! inside the process (striped mutexes), or per-chunk lock files in a directory on a shared
//! filesystem for many processes and MPI ranks. Reads never lock.

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Number of striped mutexes: chunks whose keys hash alike share one, which only costs
/// some concurrency.
const STRIPES: usize = 1024;

/// How writers to one array are kept from losing each other's updates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Synchronization {
    /// No locking: the caller promises that no two writers touch one chunk.
    None,
    /// Per-chunk locks inside this process.
    Thread,
    /// Per-chunk lock files in this directory (shared by every process), plus the
    /// in-process locks.
    Process(PathBuf),
}

/// The locks of one array.
#[derive(Debug)]
pub struct ChunkLocks {
    stripes: Vec<Mutex<()>>,
    dir: Option<PathBuf>,
}

/// A held chunk lock; released when dropped.
#[derive(Debug)]
pub struct ChunkGuard<'a> {
    _file: Option<File>,
    _stripe: MutexGuard<'a, ()>,
}

impl ChunkLocks {
    /// Locks for `sync`, or `None` when it asks for no locking. A process lock directory is
    /// created if missing.
    pub fn new(sync: &Synchronization) -> Result<Option<Self>> {
        let dir = match sync {
            Synchronization::None => return Ok(None),
            Synchronization::Thread => None,
            Synchronization::Process(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| {
                    Error::io(format!("creating lock directory {}", dir.display()), e)
                })?;
                Some(dir.clone())
            }
        };
        Ok(Some(ChunkLocks {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            dir,
        }))
    }

    /// Takes the lock of the chunk stored at `key`, blocking until it is free.
    pub fn lock(&self, key: &str) -> Result<ChunkGuard<'_>> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut hasher);
        let stripe = self.stripes[hasher.finish() as usize % STRIPES]
            .lock()
            .map_err(|_| Error::Internal("chunk lock poisoned".into()))?;
        let file = match &self.dir {
            None => None,
            Some(dir) => Some(lock_file(dir, key)?),
        };
        Ok(ChunkGuard {
            _file: file,
            _stripe: stripe,
        })
    }
}

/// Opens and exclusively locks (flock) the lock file of `key`.
fn lock_file(dir: &Path, key: &str) -> Result<File> {
    let name: String = key
        .chars()
        .map(|c| match c {
            '%' => "%25".to_string(),
            '/' => "%2F".to_string(),
            c => c.to_string(),
        })
        .collect();
    let path = dir.join(format!("{name}.lock"));
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(format!("opening lock file {}", path.display()), e))?;
    file.lock()
        .map_err(|e| Error::io(format!("locking {}", path.display()), e))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_locks_exclude_each_other_and_release_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let locks = ChunkLocks::new(&Synchronization::Process(dir.path().join("locks")))
            .unwrap()
            .unwrap();
        let guard = locks.lock("a/0.1").unwrap();
        let other = File::open(dir.path().join("locks/a%2F0.1.lock")).unwrap();
        assert!(other.try_lock().is_err(), "the lock file is held");
        drop(guard);
        assert!(other.try_lock().is_ok(), "released on drop");
        assert!(ChunkLocks::new(&Synchronization::None).unwrap().is_none());
    }
}
