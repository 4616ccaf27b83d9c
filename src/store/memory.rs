//! An in-memory store: a sorted map from keys to values behind a read-write lock.

use super::{listing_of, validate_dir_prefix, validate_key, validate_prefix, DirListing, Store};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A store that keeps every value in memory.
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: RwLock<BTreeMap<String, Arc<[u8]>>>,
}

impl MemoryStore {
    /// An empty memory store.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> Result<RwLockReadGuard<'_, BTreeMap<String, Arc<[u8]>>>> {
        self.map
            .read()
            .map_err(|_| Error::Internal("memory store lock poisoned".into()))
    }

    fn write(&self) -> Result<RwLockWriteGuard<'_, BTreeMap<String, Arc<[u8]>>>> {
        self.map
            .write()
            .map_err(|_| Error::Internal("memory store lock poisoned".into()))
    }
}

impl Store for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let key = validate_key(key)?;
        Ok(self.read()?.get(&*key).map(|v| v.to_vec()))
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        let key = validate_key(key)?;
        let map = self.read()?;
        match map.get(&*key) {
            Some(value) => super::copy_bounded(&key, value, buf, max_len).map(|()| true),
            None => Ok(false),
        }
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        let key = validate_key(key)?;
        match self.read()?.get(&*key) {
            Some(value) => Ok(Some(super::range_of(value, &key, offset, len)?.to_vec())),
            None => Ok(None),
        }
    }

    fn get_range_into(&self, key: &str, offset: u64, len: u64, buf: &mut Vec<u8>) -> Result<bool> {
        let key = validate_key(key)?;
        match self.read()?.get(&*key) {
            Some(value) => {
                let range = super::range_of(value, &key, offset, len)?;
                buf.clear();
                crate::error::try_reserve(buf, range.len(), &key)?;
                buf.extend_from_slice(range);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        let key = validate_key(key)?;
        self.write()?.insert(key.into_owned(), Arc::from(value));
        Ok(())
    }

    fn erase(&self, key: &str) -> Result<bool> {
        let key = validate_key(key)?;
        Ok(self.write()?.remove(&*key).is_some())
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
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
        let prefix = validate_dir_prefix(prefix)?;
        let keys = self.list_prefix(&prefix)?;
        Ok(listing_of(&prefix, keys.iter().map(String::as_str)))
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        let key = validate_key(key)?;
        Ok(self.read()?.get(&*key).map(|v| v.len() as u64))
    }

    fn writable(&self) -> bool {
        true
    }
}
