//! A memory store that counts requests and bytes, for tests that check what a call reads
//! and writes.

use std::sync::atomic::{AtomicU64, Ordering};
use zarr::store::{DirListing, MemoryStore, Store};
use zarr::Result;

/// A memory store that counts requests and bytes read.
#[derive(Debug, Default)]
pub struct Counting {
    /// The store counted.
    pub inner: MemoryStore,
    /// Whole-value reads.
    pub gets: AtomicU64,
    /// Range reads.
    pub ranges: AtomicU64,
    /// Writes.
    pub sets: AtomicU64,
    /// Bytes read.
    pub bytes: AtomicU64,
    /// Bytes stored by `set`.
    pub written: AtomicU64,
    /// Writes of keys under this prefix fail (a full disk, a lost server).
    pub refuse: std::sync::Mutex<Option<String>>,
    /// Writes of keys under this prefix take 100 ms (a slow server).
    pub slow: std::sync::Mutex<Option<String>>,
    /// Writes running now.
    pub setting: AtomicU64,
    /// The most writes that ran at once.
    pub most_setting: AtomicU64,
}

impl Counting {
    /// Sets every count to zero.
    pub fn reset(&self) {
        for c in [
            &self.gets,
            &self.ranges,
            &self.sets,
            &self.bytes,
            &self.written,
        ] {
            c.store(0, Ordering::SeqCst);
        }
    }
    /// (whole-value reads, range reads, writes, bytes read).
    pub fn counts(&self) -> (u64, u64, u64, u64) {
        let l = |c: &AtomicU64| c.load(Ordering::SeqCst);
        (
            l(&self.gets),
            l(&self.ranges),
            l(&self.sets),
            l(&self.bytes),
        )
    }
}

impl Store for Counting {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        let v = self.inner.get(key)?;
        self.bytes
            .fetch_add(v.as_ref().map_or(0, |v| v.len() as u64), Ordering::SeqCst);
        Ok(v)
    }
    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        self.ranges.fetch_add(1, Ordering::SeqCst);
        self.bytes.fetch_add(len, Ordering::SeqCst);
        self.inner.get_range(key, offset, len)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        if let Some(prefix) = self.refuse.lock().unwrap().as_deref() {
            if key.starts_with(prefix) {
                return Err(zarr::Error::Io(format!(
                    "writing {key:?}: refused by the test"
                )));
            }
        }
        let now = self.setting.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_setting.fetch_max(now, Ordering::SeqCst);
        let slow = self.slow.lock().unwrap().clone();
        if slow.is_some_and(|prefix| key.starts_with(&prefix)) {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        self.sets.fetch_add(1, Ordering::SeqCst);
        self.written.fetch_add(value.len() as u64, Ordering::SeqCst);
        let result = self.inner.set(key, value);
        self.setting.fetch_sub(1, Ordering::SeqCst);
        result
    }
    fn erase(&self, key: &str) -> Result<bool> {
        self.inner.erase(key)
    }
    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        self.inner.erase_prefix(prefix)
    }
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        self.inner.list_dir(prefix)
    }
    fn size(&self, key: &str) -> Result<Option<u64>> {
        self.inner.size(key)
    }
    fn writable(&self) -> bool {
        true
    }
}
