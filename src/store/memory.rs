//! An in-memory store: a sorted map from keys to values behind a read-write lock. Each
//! value carries the number of the write that stored it, its version.

use super::{
    list_dir_of_keys, validate_key, validate_prefix, DirListing, Expect, Ranged, Store, Tail,
    Version,
};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A store that keeps every value in memory.
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: RwLock<Values>,
}

/// A value and the write that stored it: its version.
#[derive(Debug, Clone)]
struct Stored {
    bytes: Arc<Vec<u8>>,
    generation: u64,
}

impl Stored {
    /// A copy of `value`, allocated fallibly (a chunk may be hundreds of MiB).
    fn new(value: &[u8]) -> Result<Self> {
        /// Numbers every write of every memory store: a value's generation is unique.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let mut bytes = Vec::new();
        crate::error::try_reserve(&mut bytes, value.len(), "a value of the memory store")?;
        bytes.extend_from_slice(value);
        Ok(Stored {
            bytes: Arc::new(bytes),
            generation: WRITES.fetch_add(1, Ordering::Relaxed),
        })
    }

    fn version(&self) -> Version {
        Version(self.generation.to_string())
    }
}

type Values = BTreeMap<String, Stored>;

impl MemoryStore {
    /// An empty memory store.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> Result<RwLockReadGuard<'_, Values>> {
        self.map
            .read()
            .map_err(|_| Error::Internal("memory store lock poisoned".into()))
    }

    fn write(&self) -> Result<RwLockWriteGuard<'_, Values>> {
        self.map
            .write()
            .map_err(|_| Error::Internal("memory store lock poisoned".into()))
    }

    /// The value at `key` (validated), shared.
    fn value(&self, key: &str) -> Result<Option<Stored>> {
        Ok(self.read()?.get(key).cloned())
    }
}

/// Copies the `offset`/`len` range of `value` (at `key`) into `buf`.
fn copy_range(value: &[u8], key: &str, offset: u64, len: u64, buf: &mut Vec<u8>) -> Result<()> {
    let range = super::range_of(value, key, offset, len)?;
    buf.clear();
    crate::error::try_reserve(buf, range.len(), key)?;
    buf.extend_from_slice(range);
    Ok(())
}

impl Store for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let key = validate_key(key)?;
        Ok(self.value(&key)?.map(|v| v.bytes.to_vec()))
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        let key = validate_key(key)?;
        match self.value(&key)? {
            Some(v) => super::copy_bounded(&key, &v.bytes, buf, max_len).map(|()| true),
            None => Ok(false),
        }
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        let key = validate_key(key)?;
        match self.value(&key)? {
            Some(v) => Ok(Some(super::range_of(&v.bytes, &key, offset, len)?.to_vec())),
            None => Ok(None),
        }
    }

    fn get_range_into(&self, key: &str, offset: u64, len: u64, buf: &mut Vec<u8>) -> Result<bool> {
        let key = validate_key(key)?;
        match self.value(&key)? {
            Some(v) => copy_range(&v.bytes, &key, offset, len, buf).map(|()| true),
            None => Ok(false),
        }
    }

    fn get_tail(&self, key: &str, len: u64) -> Result<Option<Tail>> {
        let key = validate_key(key)?;
        let Some(v) = self.value(&key)? else {
            return Ok(None);
        };
        let size = v.bytes.len() as u64;
        if size < len {
            return Err(Error::Io(format!(
                "the last {len} bytes of {key:?} were asked, but it holds {size}"
            )));
        }
        Ok(Some(Tail {
            bytes: v.bytes[(size - len) as usize..].to_vec(),
            size,
            version: Some(v.version()),
        }))
    }

    fn get_range_if(
        &self,
        key: &str,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
        version: &Version,
    ) -> Result<Ranged> {
        let key = validate_key(key)?;
        match self.value(&key)? {
            None => Ok(Ranged::Missing),
            Some(v) if v.version() != *version => Ok(Ranged::Changed),
            Some(v) => copy_range(&v.bytes, &key, offset, len, buf).map(|()| Ranged::Read),
        }
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        let key = validate_key(key)?;
        let stored = Stored::new(value)?;
        self.write()?.insert(key.into_owned(), stored);
        Ok(())
    }

    fn set_if(&self, key: &str, value: &[u8], expect: Expect<'_>) -> Result<bool> {
        let _write = super::writes::Write::begin(self.location());
        let key = validate_key(key)?;
        let mut map = self.write()?;
        let current = map.get(&*key).map(Stored::version);
        let holds = match expect {
            Expect::Absent => current.is_none(),
            Expect::Version(version) => current.as_ref() == Some(version),
        };
        if holds {
            map.insert(key.into_owned(), Stored::new(value)?);
        }
        Ok(holds)
    }

    fn versioned(&self) -> bool {
        true
    }

    fn get_versioned(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<Option<Version>> {
        let key = validate_key(key)?;
        match self.value(&key)? {
            Some(v) => {
                super::copy_bounded(&key, &v.bytes, buf, max_len)?;
                Ok(Some(v.version()))
            }
            None => Ok(None),
        }
    }

    fn erase(&self, key: &str) -> Result<bool> {
        let _write = super::writes::Write::begin(self.location());
        let key = validate_key(key)?;
        Ok(self.write()?.remove(&*key).is_some())
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        let _write = super::writes::Write::begin(self.location());
        let prefix = validate_prefix(prefix)?;
        self.write()?.retain(|k, _| !k.starts_with(&prefix));
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = validate_prefix(prefix)?;
        Ok(self
            .read()?
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.clone())
            .collect())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        list_dir_of_keys(self, prefix)
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        let key = validate_key(key)?;
        Ok(self.read()?.get(&*key).map(|v| v.bytes.len() as u64))
    }

    fn writable(&self) -> bool {
        true
    }
}
