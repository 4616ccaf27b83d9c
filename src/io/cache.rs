//! The decoded-chunk cache of an array handle (off until given a size in bytes): repeated
//! reads of the same chunks skip the store and the codecs. Entries hold decoded chunks in
//! native byte order, least recently used dropped first. Every write through any store of
//! this process at the array's location ([`crate::store::writes`]: its directory or file,
//! or for stores without one, any such store) makes all entries stale, so a read never
//! returns older data than this process wrote; writes by other processes are not seen
//! until the handle is refreshed or the cache emptied.

use crate::store::writes;
use smallvec::SmallVec;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Which chunk an entry holds: the key of the stored object (the chunk, or its shard) and
/// the chunk's index in the array's chunk grid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Slot {
    object: String,
    index: SmallVec<[u64; 8]>,
}

#[derive(Debug)]
struct Entry {
    data: Arc<[u8]>,
    /// When it was last used (a counter), its position in `State::by_use`.
    used: u64,
}

#[derive(Debug, Default)]
struct State {
    capacity: usize,
    held: usize,
    /// The write generation the entries belong to.
    generation: u64,
    clock: u64,
    entries: HashMap<Slot, Entry>,
    /// Entries by last use, oldest first.
    by_use: BTreeMap<u64, Slot>,
}

impl State {
    fn clear(&mut self) {
        self.entries.clear();
        self.by_use.clear();
        self.held = 0;
    }

    /// Drops every entry when a write happened since they were made (`now`, the current
    /// write generation, `None` while a write is in progress).
    fn check(&mut self, now: Option<u64>) -> bool {
        match now {
            Some(generation) if generation == self.generation => true,
            Some(generation) => {
                self.clear();
                self.generation = generation;
                true
            }
            None => false,
        }
    }

    fn touch(&mut self, slot: &Slot) -> Option<Arc<[u8]>> {
        self.clock += 1;
        let clock = self.clock;
        let entry = self.entries.get_mut(slot)?;
        self.by_use.remove(&entry.used);
        entry.used = clock;
        self.by_use.insert(clock, slot.clone());
        Some(entry.data.clone())
    }
}

/// A thread-safe, byte-bounded cache of decoded chunks.
#[derive(Debug, Default)]
pub struct ChunkCache {
    state: Mutex<State>,
}

impl ChunkCache {
    /// Sets the most bytes of decoded chunks held (0 turns the cache off and empties it);
    /// entries beyond a smaller size are dropped, least recently used first.
    pub fn set_capacity(&self, bytes: usize) {
        let mut state = self.lock();
        state.capacity = bytes;
        evict(&mut state, 0);
    }

    /// The most bytes of decoded chunks held (0: off).
    pub fn capacity(&self) -> usize {
        self.lock().capacity
    }

    /// Drops every entry (the size stays).
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Bytes of decoded chunks held now.
    pub fn held(&self) -> usize {
        self.lock().held
    }

    /// The write generation a read of the array at `location` (its store's location)
    /// starts at, when the cache is on and no write is in progress there: what the read
    /// decodes may then be kept ([`ChunkCache::insert`]).
    pub fn begin(&self, location: Option<&Path>) -> Option<u64> {
        if self.capacity() == 0 {
            return None;
        }
        self.begin_at(writes::generation(location))
    }

    /// The decoded chunk at `index` of the object `object`, if held and current.
    pub fn get(&self, location: Option<&Path>, object: &str, index: &[u64]) -> Option<Arc<[u8]>> {
        self.get_at(writes::generation(location), object, index)
    }

    /// Keeps a copy of `data`, the decoded chunk at `index` of `object`, read by a read
    /// that began at generation `started`: only if nothing was written since.
    pub fn insert(
        &self,
        location: Option<&Path>,
        object: &str,
        index: &[u64],
        data: &[u8],
        started: u64,
    ) {
        self.insert_at(writes::generation(location), object, index, data, started)
    }

    /// [`ChunkCache::begin`] when the write generation is `now`.
    fn begin_at(&self, now: Option<u64>) -> Option<u64> {
        let mut state = self.lock();
        if state.capacity == 0 {
            return None;
        }
        state.check(now);
        now
    }

    /// [`ChunkCache::get`] when the write generation is `now`.
    fn get_at(&self, now: Option<u64>, object: &str, index: &[u64]) -> Option<Arc<[u8]>> {
        let mut state = self.lock();
        if state.capacity == 0 || !state.check(now) {
            return None;
        }
        state.touch(&Slot {
            object: object.to_string(),
            index: SmallVec::from_slice(index),
        })
    }

    /// [`ChunkCache::insert`] when the write generation is `now`.
    fn insert_at(&self, now: Option<u64>, object: &str, index: &[u64], data: &[u8], started: u64) {
        let mut state = self.lock();
        if data.len() > state.capacity || now != Some(started) || !state.check(now) {
            return;
        }
        let slot = Slot {
            object: object.to_string(),
            index: SmallVec::from_slice(index),
        };
        if state.touch(&slot).is_some() {
            return;
        }
        evict(&mut state, data.len());
        let used = state.clock;
        state.by_use.insert(used, slot.clone());
        state.held += data.len();
        state.entries.insert(
            slot,
            Entry {
                data: Arc::from(data),
                used,
            },
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is consistent between statements: a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Drops the least recently used entries until `room` more bytes fit.
fn evict(state: &mut State, room: usize) {
    while state.held + room > state.capacity {
        let Some((_, slot)) = state.by_use.pop_first() else {
            break;
        };
        if let Some(entry) = state.entries.remove(&slot) {
            state.held -= entry.data.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_entries_go_first_and_writes_empty_it() {
        // The write generation is given explicitly: other tests write meanwhile.
        let cache = ChunkCache::default();
        assert!(cache.begin_at(Some(1)).is_none(), "off until given a size");
        cache.set_capacity(30);
        let now = Some(1);
        let started = cache.begin_at(now).expect("no write in progress");
        cache.insert_at(now, "c/0", &[0], &[1; 10], started);
        cache.insert_at(now, "c/1", &[1], &[2; 10], started);
        cache.insert_at(now, "c/2", &[2], &[3; 10], started);
        assert_eq!(cache.held(), 30);
        assert_eq!(&*cache.get_at(now, "c/0", &[0]).unwrap(), &[1; 10]);
        // c/1 is now the least recently used.
        cache.insert_at(now, "c/3", &[3], &[4; 10], started);
        assert!(cache.get_at(now, "c/1", &[1]).is_none());
        assert!(cache.get_at(now, "c/0", &[0]).is_some());
        assert!(cache.get_at(now, "c/3", &[3]).is_some());
        // Too big for the cache: not kept, nothing dropped.
        cache.insert_at(now, "big", &[9], &[0; 31], started);
        assert_eq!(cache.held(), 30);
        // While a write is in progress nothing is served or kept.
        assert!(cache.get_at(None, "c/0", &[0]).is_none());
        cache.insert_at(None, "c/5", &[5], &[1; 10], started);
        // After a write every entry is stale, and a read that began before keeps nothing.
        let later = Some(3);
        assert!(cache.get_at(later, "c/0", &[0]).is_none());
        assert_eq!(cache.held(), 0);
        cache.insert_at(later, "c/0", &[0], &[1; 10], started);
        assert!(cache.get_at(later, "c/0", &[0]).is_none());
        let started = cache.begin_at(later).unwrap();
        cache.insert_at(later, "c/0", &[0], &[1; 10], started);
        assert!(cache.get_at(later, "c/0", &[0]).is_some());
        cache.set_capacity(5);
        assert_eq!(cache.held(), 0);
        cache.set_capacity(0);
        assert!(cache.get_at(later, "c/0", &[0]).is_none());
    }

    #[test]
    fn writes_move_their_location_s_generation_on_at_start_and_end() {
        // Locations of this test's own: other tests write elsewhere meanwhile.
        let dir = std::path::PathBuf::from("/cache-test/data");
        let nested = dir.join("group/array");
        let other = std::path::PathBuf::from("/cache-test/other");
        let before = writes::generation(Some(&dir)).unwrap();
        let writing = writes::Write::begin(Some(nested.clone()));
        assert_eq!(
            writes::generation(Some(&dir)),
            None,
            "a write below is in progress"
        );
        assert_eq!(writes::generation(Some(&nested)), None);
        let unrelated = writes::generation(Some(&other));
        assert!(unrelated.is_some());
        drop(writing);
        assert_eq!(writes::generation(Some(&dir)), Some(before + 2));
        assert_eq!(
            writes::generation(Some(&other)),
            unrelated,
            "other places unchanged"
        );
    }
}
