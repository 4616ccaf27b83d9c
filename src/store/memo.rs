//! A store in front of another for the span of one call that probes many metadata
//! documents (creating a node: the parents, the draft's entry point, what is in the way):
//! each key is read from the store at most once, a size or presence question is answered
//! by reading the (small) document rather than by a separate request, and the call's own
//! writes update what it knows. On object stores that turns a dozen requests into a few.

use super::{DirListing, Expect, Store};
use crate::error::Result;
use std::collections::HashMap;
use std::sync::Mutex;

/// What one call knows of the documents of a store.
#[derive(Debug)]
pub struct Memo<'a> {
    inner: &'a dyn Store,
    /// Values read or written by this call (`None`: not there).
    known: Mutex<HashMap<String, Option<Vec<u8>>>>,
}

impl<'a> Memo<'a> {
    /// A memo in front of `inner`, knowing nothing yet.
    pub fn new(inner: &'a dyn Store) -> Self {
        Memo {
            inner,
            known: Mutex::new(HashMap::new()),
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, Option<Vec<u8>>>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn remember(&self, key: &str, value: Option<Vec<u8>>) {
        self.known().insert(key.to_string(), value);
    }
}

impl Store for Memo<'_> {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut value = Vec::new();
        Ok(self.get_into(key, &mut value, u64::MAX)?.then_some(value))
    }

    /// Bounded as the store bounds it: a value longer than `max_len` is refused unread
    /// (and not remembered).
    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        if let Some(value) = self.known().get(key) {
            return match value {
                Some(value) => super::copy_bounded(key, value, buf, max_len).map(|()| true),
                None => Ok(false),
            };
        }
        let found = self.inner.get_into(key, buf, max_len)?;
        self.remember(key, found.then(|| buf.clone()));
        Ok(found)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.inner.set(key, value)?;
        self.remember(key, Some(value.to_vec()));
        Ok(())
    }

    fn set_if(&self, key: &str, value: &[u8], expect: Expect<'_>) -> Result<bool> {
        let done = self.inner.set_if(key, value, expect)?;
        match done {
            true => self.remember(key, Some(value.to_vec())),
            false => {
                self.known().remove(key);
            }
        }
        Ok(done)
    }

    fn erase(&self, key: &str) -> Result<bool> {
        let erased = self.inner.erase(key)?;
        self.remember(key, None);
        Ok(erased)
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        self.inner.erase_prefix(prefix)?;
        for (key, value) in self.known().iter_mut() {
            if key.starts_with(prefix) {
                *value = None;
            }
        }
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        self.inner.list_dir(prefix)
    }

    /// Read and remembered when it is a document (no longer than any document read), else
    /// asked of the store.
    fn size(&self, key: &str) -> Result<Option<u64>> {
        let mut value = Vec::new();
        match self.get_into(key, &mut value, super::MAX_DOCUMENT_BYTES) {
            Ok(found) => Ok(found.then_some(value.len() as u64)),
            Err(crate::Error::Codec(_)) => self.inner.size(key),
            Err(e) => Err(e),
        }
    }

    fn writable(&self) -> bool {
        self.inner.writable()
    }

    fn location(&self) -> Option<std::path::PathBuf> {
        self.inner.location()
    }

    fn versioned(&self) -> bool {
        self.inner.versioned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    #[test]
    fn each_key_is_read_once_and_writes_update_it() {
        let inner = MemoryStore::new();
        inner.set("a/zarr.json", b"{}").unwrap();
        let memo = Memo::new(&inner);
        assert_eq!(memo.get("a/zarr.json").unwrap().unwrap(), b"{}");
        // Changed behind the memo's back: the call keeps what it read.
        inner.set("a/zarr.json", b"[]").unwrap();
        assert_eq!(memo.get("a/zarr.json").unwrap().unwrap(), b"{}");
        assert_eq!(memo.size("a/zarr.json").unwrap(), Some(2));
        assert!(!memo.contains("b").unwrap());
        memo.set("b", b"xyz").unwrap();
        assert_eq!(memo.size("b").unwrap(), Some(3));
        assert_eq!(inner.get("b").unwrap().unwrap(), b"xyz");
        memo.erase_prefix("a/").unwrap();
        assert!(memo.get("a/zarr.json").unwrap().is_none());
        assert!(inner.get("a/zarr.json").unwrap().is_none());
        assert!(memo.set_if("c", b"1", Expect::Absent).unwrap());
        assert!(!memo.set_if("c", b"2", Expect::Absent).unwrap());
        assert_eq!(memo.get("c").unwrap().unwrap(), b"1");
    }
}
