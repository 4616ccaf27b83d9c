//! Shards (v3 `sharding_indexed`): one stored object per shard holding encoded inner chunks
//! and an index of (offset, size) pairs, little- or big-endian 64-bit, run through the
//! index codecs (`crc32c`), at the start or the end. Reads fetch the index and then only
//! the byte range of each inner chunk they need. Shards may nest: a shard's units are then
//! shards themselves, and reads go through each level's index by byte ranges.

use crate::dtype::ByteOrder;
use crate::error::{Error, Result};
use crate::meta::{ArrayMeta, ShardLevel};
use crate::store::{
    merge_ranges, pieces, Fetch, Fetched, Ranged, Spares, Store, ValueWriter, Version, MERGED_MAX,
    MERGE_GAP,
};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex};

/// Offset and size of an inner chunk that is not stored.
pub(crate) const EMPTY: u64 = u64::MAX;

/// A decoded shard index: (offset, size) of each inner chunk in C order.
type Index = Arc<Vec<(u64, u64)>>;

/// Shard indexes already read, by shard key. An array handle keeps them across calls: an
/// index read with the shard's version (stores that keep versions: files, memory, object
/// stores' ETags) serves later reads, each of which reads its chunk only from that version
/// of the shard and reads the index again when the shard has changed; an index read
/// without a version, or a shard found missing, serves only the call that read it. That a
/// chunk is not stored is believed only from an index read in the same call: no chunk read
/// would notice a shard rewritten since.
#[derive(Debug, Default)]
pub struct IndexCache {
    state: Mutex<CacheState>,
    /// Signalled when a thread ends reading the indexes it claimed.
    read: Condvar,
}

#[derive(Debug, Default)]
struct CacheState {
    shards: HashMap<String, Shard>,
    /// Index entries held, over all shards and views.
    entries: usize,
    /// Shards whose index a thread is reading ([`IndexCache::claim`]): the others wait for
    /// it rather than read it too.
    reading: HashSet<String>,
}

/// The shards whose index one thread reads; they are free again when it is dropped.
struct Claim<'a> {
    cache: &'a IndexCache,
    keys: Vec<String>,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if let Ok(mut state) = self.cache.state.lock() {
            for key in &self.keys {
                state.reading.remove(key);
            }
        }
        self.cache.read.notify_all();
    }
}

/// What is known of one stored shard.
#[derive(Debug, Clone)]
struct Shard {
    /// The version its indexes were read from (`None`: kept for one call only).
    version: Option<Version>,
    /// Its indexes by the byte range they were read from (`WHOLE` for the stored shard
    /// itself, else a nested shard's range); `None`: no shard is stored.
    views: HashMap<(u64, u64), Option<Index>>,
    /// Whether its version was read or confirmed current in this call: only then do its
    /// indexes tell that a chunk is not stored.
    fresh: bool,
}

/// The view of [`IndexCache`] that stands for a whole stored shard.
const WHOLE: (u64, u64) = (u64::MAX, u64::MAX);

/// Most index entries a cache holds (16 bytes each): beyond, it starts again empty.
const MAX_CACHED_ENTRIES: usize = 4 << 20;

/// Reads of one inner chunk that found its shard rewritten in between, before giving up.
const MAX_SHARD_ATTEMPTS: usize = 64;

impl IndexCache {
    fn state(&self) -> Result<std::sync::MutexGuard<'_, CacheState>> {
        self.state
            .lock()
            .map_err(|_| Error::Internal("shard cache poisoned".into()))
    }

    /// Claims the reading of the whole-shard indexes of `keys`: the positions in `keys` of
    /// those this thread is to read (no other thread reads them and none is cached), and
    /// the claim, which frees them when dropped. The others are being read or were just
    /// read: [`IndexCache::wait_read`] waits for them.
    fn claim(&self, keys: &[&str]) -> Result<(Vec<usize>, Claim<'_>)> {
        // Made before the lock is taken, so that it is dropped after the lock is released
        // (its drop takes the lock) should anything below unwind.
        let mut claim = Claim {
            cache: self,
            keys: Vec::new(),
        };
        let mut state = self.state()?;
        let mut mine = Vec::new();
        for (n, &key) in keys.iter().enumerate() {
            let cached = state
                .shards
                .get(key)
                .is_some_and(|shard| shard.views.contains_key(&WHOLE));
            if !cached && state.reading.insert(key.to_string()) {
                mine.push(n);
                claim.keys.push(key.to_string());
            }
        }
        Ok((mine, claim))
    }

    /// Waits until no thread is reading the index of the shard at `key`.
    fn wait_read(&self, key: &str) -> Result<()> {
        let mut state = self.state()?;
        while state.reading.contains(key) {
            state = self
                .read
                .wait(state)
                .map_err(|_| Error::Internal("shard cache poisoned".into()))?;
        }
        Ok(())
    }

    /// Starts a call: what only the last call could trust is forgotten.
    pub fn begin_call(&self) -> Result<()> {
        let mut state = self.state()?;
        state.shards.retain(|_, shard| shard.version.is_some());
        for shard in state.shards.values_mut() {
            shard.fresh = false;
        }
        state.entries = state
            .shards
            .values()
            .flat_map(|s| s.views.values().flatten())
            .map(|index| index.len())
            .sum();
        Ok(())
    }

    /// The shard at `key` as cached.
    fn get(&self, key: &str) -> Result<Option<Shard>> {
        Ok(self.state()?.shards.get(key).cloned())
    }

    /// Remembers the index of `view` of the shard at `key` (of `version`).
    fn put(
        &self,
        key: &str,
        version: Option<&Version>,
        view: (u64, u64),
        index: Option<Index>,
    ) -> Result<()> {
        let mut state = self.state()?;
        let added = index.as_ref().map_or(0, |i| i.len());
        if state.entries + added > MAX_CACHED_ENTRIES {
            state.shards.clear();
            state.entries = 0;
        }
        state.entries += added;
        let shard = state
            .shards
            .entry(key.to_string())
            .or_insert_with(|| Shard {
                version: version.cloned(),
                views: HashMap::new(),
                fresh: true,
            });
        if shard.version.as_ref() != version {
            // Read from another version than what is cached: the cache starts again.
            shard.version = version.cloned();
            shard.views.clear();
        }
        shard.fresh = true;
        shard.views.insert(view, index);
        Ok(())
    }

    /// The stored length of the chunk at `position` (C order) of the shard at `key` by its
    /// cached whole-shard index, whatever version that is (0: not stored); `None` when no
    /// such index is cached.
    fn chunk_len(&self, key: &str, position: usize) -> Option<u64> {
        let state = self.state().ok()?;
        match state.shards.get(key)?.views.get(&WHOLE)? {
            None => Some(0),
            Some(index) => {
                let &(offset, len) = index.get(position)?;
                Some(if offset == EMPTY { 0 } else { len })
            }
        }
    }

    /// Notes that a read of the cached version of the shard at `key` succeeded in this call.
    fn confirm(&self, key: &str) -> Result<()> {
        if let Some(shard) = self.state()?.shards.get_mut(key) {
            shard.fresh = true;
        }
        Ok(())
    }

    /// Forgets the shard at `key` (it changed since its index was read).
    fn forget(&self, key: &str) -> Result<()> {
        let mut state = self.state()?;
        if let Some(shard) = state.shards.remove(key) {
            let held: usize = shard.views.values().flatten().map(|i| i.len()).sum();
            state.entries = state.entries.saturating_sub(held);
        }
        Ok(())
    }
}

/// The encoded size of an index of `n` entries: 16 bytes each, plus 4 per `crc32c`
/// (the only index codec the metadata layer accepts, so the size is fixed).
fn index_len(sharding: ShardLevel<'_>, n: usize) -> usize {
    16 * n + 4 * sharding.codec.index_codecs.len()
}

/// Appends the encoded index of `entries` to `out`.
fn encode_index(sharding: ShardLevel<'_>, entries: &[(u64, u64)], out: &mut Vec<u8>) -> Result<()> {
    let mut raw = Vec::with_capacity(16 * entries.len());
    for v in entries.iter().flat_map(|&(o, s)| [o, s]) {
        raw.extend_from_slice(&match sharding.codec.index_endian {
            ByteOrder::Big => v.to_be_bytes(),
            _ => v.to_le_bytes(),
        });
    }
    let mut encoded = Vec::new();
    for codec in &sharding.codec.index_codecs {
        codec.encode_into(&raw, &mut encoded)?;
        std::mem::swap(&mut raw, &mut encoded);
    }
    out.extend_from_slice(&raw);
    Ok(())
}

/// Decodes and checks the index of the shard `bytes` (stored at `key`): every stored
/// chunk lies inside the shard, outside the index, and no two overlap.
pub fn decode_index(
    sharding: ShardLevel<'_>,
    bytes: &[u8],
    n: usize,
    key: &str,
) -> Result<Vec<(u64, u64)>> {
    let len = index_len(sharding, n);
    if bytes.len() < len {
        return Err(Error::Codec(format!(
            "shard {key:?} is shorter than its index ({} < {len} bytes)",
            bytes.len()
        )));
    }
    let index_bytes = if sharding.codec.index_at_start {
        &bytes[..len]
    } else {
        &bytes[bytes.len() - len..]
    };
    let entries = parse_index(sharding, index_bytes, n, key)?;
    let (lo, hi) = if sharding.codec.index_at_start {
        (len as u64, bytes.len() as u64)
    } else {
        (0, (bytes.len() - len) as u64)
    };
    check_entries(&entries, lo, hi, key)?;
    Ok(entries)
}

fn parse_index(
    sharding: ShardLevel<'_>,
    encoded: &[u8],
    n: usize,
    key: &str,
) -> Result<Vec<(u64, u64)>> {
    let mut data = std::borrow::Cow::Borrowed(encoded);
    for codec in sharding.codec.index_codecs.iter().rev() {
        let mut decoded = Vec::new();
        codec
            .decode_bounded(&data, encoded.len(), &mut decoded)
            .map_err(|e| match e {
                Error::Codec(m) => Error::Codec(format!("shard {key:?} index: {m}")),
                other => other,
            })?;
        data = std::borrow::Cow::Owned(decoded);
    }
    if data.len() != 16 * n {
        return Err(Error::Codec(format!(
            "shard {key:?} index has {} bytes, expected {}",
            data.len(),
            16 * n
        )));
    }
    let word = |i: usize| {
        let b: [u8; 8] = data[8 * i..8 * i + 8].try_into().expect("8 bytes");
        match sharding.codec.index_endian {
            ByteOrder::Big => u64::from_be_bytes(b),
            _ => u64::from_le_bytes(b),
        }
    };
    Ok((0..n).map(|i| (word(2 * i), word(2 * i + 1))).collect())
}

fn check_entries(entries: &[(u64, u64)], lo: u64, hi: u64, key: &str) -> Result<()> {
    let mut ranges = Vec::with_capacity(entries.len());
    for (i, &(offset, size)) in entries.iter().enumerate() {
        if (offset, size) == (EMPTY, EMPTY) {
            continue;
        }
        let end = offset.checked_add(size);
        if offset < lo || end.is_none_or(|e| e > hi) {
            return Err(Error::Codec(format!(
                "shard {key:?}: chunk {i} at {offset}+{size} lies outside the data ({lo}..{hi})"
            )));
        }
        ranges.push((offset, offset + size, i));
    }
    ranges.sort_unstable();
    for pair in ranges.windows(2) {
        if pair[1].0 < pair[0].1 {
            return Err(Error::Codec(format!(
                "shard {key:?}: chunks {} and {} overlap",
                pair[0].2, pair[1].2
            )));
        }
    }
    Ok(())
}

/// Reads from `version` of the shard at `key` (any version when `None`) `len` bytes at
/// `offset` into `buf`; `false` when the shard changed or vanished since that version.
fn read_from(
    store: &dyn Store,
    key: &str,
    version: Option<&Version>,
    offset: u64,
    len: u64,
    buf: &mut Vec<u8>,
) -> Result<bool> {
    match version {
        Some(version) => Ok(store.get_range_if(key, offset, len, buf, version)? == Ranged::Read),
        None => store.get_range_into(key, offset, len, buf),
    }
}

/// Reads the index of the stored shard at `key`: one request when the index is at the
/// end (a suffix range that also gives the shard's size and version). `None`: no shard.
fn read_top_index(
    store: &dyn Store,
    key: &str,
    sharding: ShardLevel<'_>,
    n: usize,
) -> Result<Option<(Index, Option<Version>)>> {
    let len = index_len(sharding, n) as u64;
    let short = |size: u64| {
        Error::Codec(format!(
            "shard {key:?} is shorter than its index ({size} < {len} bytes)"
        ))
    };
    let (bytes, size, version) = if sharding.codec.index_at_start {
        let Some(size) = store.size(key)? else {
            return Ok(None);
        };
        if size < len {
            return Err(short(size));
        }
        let Some(bytes) = store.get_range(key, 0, len)? else {
            return Ok(None);
        };
        (bytes, size, None)
    } else {
        match store.get_tail(key, len) {
            Ok(Some(tail)) => (tail.bytes, tail.size, tail.version),
            Ok(None) => return Ok(None),
            // Shorter than the index: reported with the size.
            Err(e) => match store.size(key) {
                Ok(Some(size)) if size < len => return Err(short(size)),
                _ => return Err(e),
            },
        }
    };
    top_index(sharding, key, &bytes, size, n).map(|index| Some((index, version)))
}

/// Decodes and checks the index `bytes` of the stored shard at `key` of `size` bytes.
fn top_index(
    sharding: ShardLevel<'_>,
    key: &str,
    bytes: &[u8],
    size: u64,
    n: usize,
) -> Result<Index> {
    let len = index_len(sharding, n) as u64;
    let entries = parse_index(sharding, bytes, n, key)?;
    let (lo, hi) = if sharding.codec.index_at_start {
        (len, size)
    } else {
        (0, size - len)
    };
    check_entries(&entries, lo, hi, key)?;
    Ok(Arc::new(entries))
}

/// What a batched read of one inner chunk found.
#[derive(Debug)]
pub enum Prefetched {
    /// The chunk's encoded bytes.
    Bytes(Vec<u8>),
    /// The chunk's encoded bytes, a range of a buffer other chunks share: a whole shard
    /// read once for all its chunks, or one request's answer to several merged ranges
    /// (each chunk decoded from where it lies).
    Within(Arc<Vec<u8>>, std::ops::Range<usize>),
    /// The chunk is not stored.
    Missing,
    /// Not read here: [`read_inner`] reads it.
    Later,
}

impl Prefetched {
    /// The stored bytes it holds for its chunk until the chunk is decoded; `None` for
    /// [`Prefetched::Later`], whose bytes are read when it is decoded.
    pub(crate) fn held_len(&self) -> Option<u64> {
        match self {
            Prefetched::Bytes(bytes) => Some(bytes.len() as u64),
            Prefetched::Within(_, range) => Some(range.len() as u64),
            Prefetched::Missing => Some(0),
            Prefetched::Later => None,
        }
    }
}

/// Whether [`read_inner_batch`] reads some chunks of `meta`'s shards by their byte ranges:
/// one level of shards of a regular grid with the index at the end. Other shards are read
/// whole when a batch wants every chunk of one, and their other chunks one by one.
pub(crate) fn reads_ranges(meta: &ArrayMeta, sharding: ShardLevel<'_>) -> bool {
    sharding.inner().is_none() && !sharding.codec.index_at_start && !meta.is_rectilinear()
}

/// The stored length of the inner chunk at `at` (inner chunk grid) of the shard at `key`
/// by the shard's index in `cache` (0: not stored), known before the chunk is read; `None`
/// when no index of the shard is cached, or when [`read_inner_batch`] does not read chunks
/// of these shards by ranges ([`reads_ranges`]). The shard may have changed since: an
/// estimate of what a read of it holds, not a bound.
pub(crate) fn cached_chunk_len(
    meta: &ArrayMeta,
    sharding: ShardLevel<'_>,
    cache: &IndexCache,
    key: &str,
    at: &[u64],
) -> Option<u64> {
    if !reads_ranges(meta, sharding) {
        return None;
    }
    cache.chunk_len(key, position_in_shard(sharding, meta.inner_chunks(), at))
}

/// Reads the encoded bytes of many inner chunks (each its shard's key and its index in the
/// inner chunk grid) with concurrent requests ([`Store::fetch_each`]): the indexes not in
/// `cache` (suffix ranges, in one batch), then the chunks' ranges, every shard's ranges from
/// the version of its index and those lying close together merged into one request. A
/// shard whose every chunk is wanted is read whole instead (one request, its index taken
/// from its bytes). Chunks of nested shards, of shards with the index at the start (unless
/// read whole) and of shards rewritten in between are left [`Prefetched::Later`]. Bytes
/// read may fill buffers from `spares`; an index being read by another thread is waited
/// for rather than read again.
///
/// What was found for each chunk (by position in `chunks`) goes to `each` as soon as it is
/// known: the chunks of a request as it answers. Every chunk is handed on once, unless an
/// error is returned. The chunks of one shard may come from two versions of it when it is
/// rewritten during the call (each request reads one version, and the chunks whose request
/// found the shard changed are left to [`read_inner`]), as chunks read by separate calls
/// may.
pub(crate) fn read_inner_batch(
    store: &dyn Store,
    meta: &ArrayMeta,
    sharding: ShardLevel<'_>,
    chunks: &[(&str, &[u64])],
    cache: &IndexCache,
    spares: &Spares,
    each: &mut dyn FnMut(usize, Prefetched),
) -> Result<()> {
    let mut handed = vec![false; chunks.len()];
    let mut hand = |i: usize, found: Prefetched| {
        if !std::mem::replace(&mut handed[i], true) {
            each(i, found);
        }
    };
    let (batch, reads) = found_or_ranged(store, meta, sharding, chunks, cache, spares, &mut hand)?;
    // The chunks no request reads are read one by one.
    let mut ranged = vec![false; chunks.len()];
    for (_, reading) in &reads {
        for &i in reading {
            ranged[i] = true;
        }
    }
    for i in (0..chunks.len()).filter(|&i| !ranged[i]) {
        hand(i, Prefetched::Later);
    }
    let mut failed = Ok(());
    store.fetch_each(&batch, spares, &mut |r, fetched| {
        let (shard, chunks) = &reads[r];
        let answer = fetched.and_then(|fetched| match fetched {
            Fetched::Ranges(Ok(parts)) => {
                cache.confirm(shard)?;
                for (&i, (bytes, range)) in chunks.iter().zip(parts) {
                    hand(i, Prefetched::Within(bytes, range));
                }
                Ok(())
            }
            // Rewritten or erased since its index was read: read_inner starts again.
            _ => cache.forget(shard),
        });
        failed = std::mem::replace(&mut failed, Ok(())).and(answer);
    });
    failed?;
    // Chunks of a request whose shard changed, or that a short answer left out.
    for i in 0..chunks.len() {
        hand(i, Prefetched::Later);
    }
    Ok(())
}

/// The ranged reads of a batch, one per request, and for each its shard's key and the
/// chunks (by position) whose ranges it reads, in order.
type RangedReads<'k> = (Vec<Fetch>, Vec<(&'k str, Vec<usize>)>);

/// The first steps of [`read_inner_batch`]: hands on to `each` what is found for chunks
/// without a ranged read (whole shards read, chunks not stored), and returns the ranged
/// reads that remain.
fn found_or_ranged<'k>(
    store: &dyn Store,
    meta: &ArrayMeta,
    sharding: ShardLevel<'_>,
    chunks: &[(&'k str, &[u64])],
    cache: &IndexCache,
    spares: &Spares,
    each: &mut dyn FnMut(usize, Prefetched),
) -> Result<RangedReads<'k>> {
    // Shards of a rectilinear grid differ in size: their chunks are read one by one.
    if sharding.inner().is_some() || meta.is_rectilinear() {
        return Ok((Vec::new(), Vec::new()));
    }
    let inner = meta.inner_chunks();
    let n: usize = sharding.units_per_shard().iter().product::<u64>() as usize;
    let len = index_len(sharding, n) as u64;
    // The shards, in first-seen order, and each one's chunks.
    let mut shards: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, (key, _)) in chunks.iter().enumerate() {
        match seen.get(key) {
            Some(&s) => shards[s].1.push(i),
            None => {
                seen.insert(key, shards.len());
                shards.push((key, vec![i]));
            }
        }
    }
    let position = |at: &[u64]| position_in_shard(sharding, inner, at);
    // Shards read whole: every chunk of theirs inside the array is wanted.
    let whole: Vec<usize> = (0..shards.len())
        .filter(|&s| shards[s].1.len() == chunks_inside(meta, sharding, chunks[shards[s].1[0]].1))
        .collect();
    let max_shard = meta.max_stored_len();
    let batch: Vec<Fetch> = whole
        .iter()
        .map(|&s| Fetch::Whole(shards[s].0.to_string(), max_shard))
        .collect();
    let mut done = vec![false; shards.len()];
    let mut failed = Ok(());
    store.fetch_each(&batch, spares, &mut |w, fetched| {
        let s = whole[w];
        let (key, members) = &shards[s];
        let answer = fetched.and_then(|fetched| {
            let bytes = match fetched {
                Fetched::Whole(Some(bytes)) => bytes,
                Fetched::Whole(None) => {
                    for &i in members {
                        each(i, Prefetched::Missing);
                    }
                    done[s] = true;
                    return Ok(());
                }
                _ => return Ok(()),
            };
            let size = bytes.len() as u64;
            if size < len {
                return Err(Error::Codec(format!(
                    "shard {key:?} is shorter than its index ({size} < {len} bytes)"
                )));
            }
            let at = if sharding.codec.index_at_start {
                0
            } else {
                size - len
            };
            let index = top_index(
                sharding,
                key,
                &bytes[at as usize..(at + len) as usize],
                size,
                n,
            )?;
            // The chunks stored share the shard's buffer, or are copied out of it when they
            // fill less than half of it (bytes no index entry points to).
            let mut stored = Vec::with_capacity(members.len());
            let mut ranges = Vec::with_capacity(members.len());
            for &i in members {
                match index[position(chunks[i].1)] {
                    (EMPTY, _) => each(i, Prefetched::Missing),
                    (offset, chunk_len) => {
                        stored.push(i);
                        ranges.push(offset as usize..(offset + chunk_len) as usize);
                    }
                }
            }
            for (i, (buffer, range)) in stored.into_iter().zip(pieces(bytes, &ranges, spares)) {
                each(i, Prefetched::Within(buffer, range));
            }
            // The index serves the rest of this call (no version came with the whole read).
            cache.put(key, None, WHOLE, Some(index))?;
            done[s] = true;
            Ok(())
        });
        failed = std::mem::replace(&mut failed, Ok(())).and(answer);
    });
    failed?;
    if sharding.codec.index_at_start {
        return Ok((Vec::new(), Vec::new()));
    }
    // Indexes: cached, or read in one batch.
    // Each shard's index and version, and whether that version is known current.
    type Known = (Option<Index>, Option<Version>, bool);
    let cached = |key: &str| -> Result<Option<Known>> {
        Ok(cache.get(key)?.and_then(|shard| {
            let index = shard.views.get(&WHOLE).cloned()?;
            Some((index, shard.version, shard.fresh))
        }))
    };
    let mut indexes: Vec<Option<Known>> = Vec::new();
    let mut missing = Vec::new();
    for (s, (key, _)) in shards.iter().enumerate() {
        if done[s] {
            indexes.push(None);
            continue;
        }
        let cached = cached(key)?;
        if cached.is_none() {
            missing.push(s);
        }
        indexes.push(cached);
    }
    // Each index is read by one thread: those another thread is reading are waited for.
    let keys: Vec<&str> = missing.iter().map(|&s| shards[s].0).collect();
    let (mine, claim) = cache.claim(&keys)?;
    let batch: Vec<Fetch> = mine
        .iter()
        .map(|&m| Fetch::Tail(keys[m].to_string(), len))
        .collect();
    for (&m, fetched) in mine.iter().zip(store.fetch_many(&batch, spares)) {
        let s = missing[m];
        let key = shards[s].0;
        let (index, version) = match fetched {
            Ok(Fetched::Tail(Some(tail))) => {
                let index = top_index(sharding, key, &tail.bytes, tail.size, n)?;
                (Some(index), tail.version)
            }
            Ok(Fetched::Tail(None)) => (None, None),
            // Read again one by one (which reports a shard shorter than its index).
            _ => continue,
        };
        cache.put(key, version.as_ref(), WHOLE, index.clone())?;
        indexes[s] = Some((index, version, true));
    }
    drop(claim);
    for (m, &s) in missing.iter().enumerate() {
        if indexes[s].is_none() {
            // Read by another thread (if it failed, or the cache was emptied since, the
            // chunks are read one by one later).
            cache.wait_read(keys[m])?;
            indexes[s] = cached(keys[m])?;
        }
    }
    // The chunks' ranges, shard by shard; those lying close together are read by one
    // request, and each request is a read of its own, so that its chunks can be used as
    // soon as it answers.
    let max = meta.max_encoded_chunk_len();
    let (mut fetches, mut reads) = (Vec::new(), Vec::new());
    for (s, (key, members)) in shards.iter().enumerate() {
        let Some((index, version, fresh)) = &indexes[s] else {
            continue;
        };
        let Some(index) = index else {
            for &i in members {
                each(i, Prefetched::Missing);
            }
            continue;
        };
        let mut ranges = Vec::new();
        let mut reading = Vec::new();
        for &i in members {
            let (offset, size) = index[position(chunks[i].1)];
            if offset == EMPTY {
                // Not stored, if the index is known current; else left to read_inner.
                if *fresh {
                    each(i, Prefetched::Missing);
                }
            } else if size <= max {
                ranges.push((offset, size));
                reading.push(i);
            }
            // Longer than any valid encoding: left to read_inner, which says so.
        }
        for (_, _, group) in merge_ranges(&ranges, MERGE_GAP, MERGED_MAX) {
            fetches.push(Fetch::Ranges(
                key.to_string(),
                group.iter().map(|&m| ranges[m]).collect(),
                version.clone(),
            ));
            reads.push((*key, group.iter().map(|&m| reading[m]).collect()));
        }
    }
    Ok((fetches, reads))
}

/// The number of chunks of the (top-level) shard holding the chunk at `at` (inner chunk
/// grid) that lie inside the array: all of them but at the array's far edges.
fn chunks_inside(meta: &ArrayMeta, sharding: ShardLevel<'_>, at: &[u64]) -> usize {
    let inner = meta.inner_chunks();
    (0..at.len())
        .map(|d| {
            let origin = at[d] * inner[d] / sharding.shape[d] * sharding.shape[d];
            let extent = sharding.shape[d].min(meta.shape[d].saturating_sub(origin));
            extent.div_ceil(inner[d]) as usize
        })
        .product()
}

/// Reads the index of the shard nested at `base..base + size` of the stored shard at `key`
/// (of `version`); `None` when the stored shard changed since that version.
fn read_view_index(
    store: &dyn Store,
    key: &str,
    version: Option<&Version>,
    sharding: ShardLevel<'_>,
    (base, size): (u64, u64),
    n: usize,
) -> Result<Option<Index>> {
    let label = format!("{key}@{base}");
    let len = index_len(sharding, n) as u64;
    if size < len {
        return Err(Error::Codec(format!(
            "shard {label:?} is shorter than its index ({size} < {len} bytes)"
        )));
    }
    let at = if sharding.codec.index_at_start {
        0
    } else {
        size - len
    };
    let mut bytes = Vec::new();
    if !read_from(store, key, version, base + at, len, &mut bytes)? {
        return Ok(None);
    }
    let entries = parse_index(sharding, &bytes, n, &label)?;
    let (lo, hi) = if sharding.codec.index_at_start {
        (len, size)
    } else {
        (0, size - len)
    };
    check_entries(&entries, lo, hi, &label)?;
    Ok(Some(Arc::new(entries)))
}

/// Reads the encoded bytes of the inner chunk at `index` (inner chunk grid) from its shard
/// at `key` into `buf`: each index on the way (the shard's, then a nested shard's, relative
/// to it) once through `cache`, then only that chunk's byte range, from the same version
/// of the shard as the indexes (read again when the shard was rewritten in between).
/// `false`: the chunk is not stored.
pub fn read_inner(
    store: &dyn Store,
    key: &str,
    meta: &ArrayMeta,
    sharding: ShardLevel<'_>,
    index: &[u64],
    cache: &IndexCache,
    buf: &mut Vec<u8>,
) -> Result<bool> {
    // The shard's own shape and first inner chunk (shards of a rectilinear grid differ).
    let (origin, shape) = meta.shard_bounds(&meta.shard_of_chunk(index));
    let sharding = ShardLevel {
        shape: &shape,
        codec: sharding.codec,
    };
    for attempt in 0..MAX_SHARD_ATTEMPTS {
        match try_read_inner(store, key, meta, sharding, &origin, index, cache, buf)? {
            Some(found) => return Ok(found),
            None => cache.forget(key)?,
        }
        // Writers rewriting the shard without pause: back off (1 µs, doubling, at most
        // 2 ms) so that a read between two rewrites comes before the attempts run out.
        if attempt >= 2 {
            let micros = 1u64 << (attempt - 2).min(11);
            std::thread::sleep(std::time::Duration::from_micros(micros));
        }
    }
    Err(Error::Io(format!(
        "shard {key:?} was rewritten {MAX_SHARD_ATTEMPTS} times while a chunk was read from it"
    )))
}

/// One attempt of [`read_inner`] (`origin`: the shard's first inner chunk): `None` when the
/// shard changed under it.
#[allow(clippy::too_many_arguments)]
fn try_read_inner(
    store: &dyn Store,
    key: &str,
    meta: &ArrayMeta,
    sharding: ShardLevel<'_>,
    origin: &[u64],
    index: &[u64],
    cache: &IndexCache,
    buf: &mut Vec<u8>,
) -> Result<Option<bool>> {
    let chunks = meta.inner_chunks();
    let shard = cache.get(key)?;
    // The version every read of this attempt insists on: the cached indexes', or that of
    // the index read below.
    let mut version = shard.as_ref().and_then(|s| s.version.clone());
    // Whether that version is known current in this call.
    let mut confirmed = shard.as_ref().is_some_and(|s| s.fresh);
    let mut level = sharding;
    let mut view = None;
    loop {
        // Units per shard, and the unit holding the chunk counted in C order within it:
        // within the stored shard from its first chunk; nested shards tile it evenly.
        let n = level.units_per_shard().iter().product::<u64>() as usize;
        let position = match view {
            None => {
                let at: smallvec::SmallVec<[u64; 8]> =
                    index.iter().zip(origin).map(|(i, o)| i - o).collect();
                position_in_shard(level, chunks, &at)
            }
            Some(_) => position_in_shard(level, chunks, index),
        };
        let cached = shard
            .as_ref()
            .and_then(|s| s.views.get(&view.unwrap_or(WHOLE)).cloned());
        let entries = match (cached, view) {
            (Some(entries), _) => entries,
            (None, None) => {
                let (entries, read_version) = match read_top_index(store, key, level, n)? {
                    Some((entries, version)) => (Some(entries), version),
                    None => (None, None),
                };
                version = read_version;
                confirmed = true;
                cache.put(key, version.as_ref(), WHOLE, entries.clone())?;
                entries
            }
            (None, Some(range)) => {
                let Some(entries) = read_view_index(store, key, version.as_ref(), level, range, n)?
                else {
                    return Ok(None);
                };
                confirmed = true;
                cache.put(key, version.as_ref(), range, Some(entries.clone()))?;
                Some(entries)
            }
        };
        let Some(entries) = entries else {
            return Ok(Some(false));
        };
        let (offset, size) = entries[position];
        if offset == EMPTY {
            // Not stored, if the index is of this call; else the index is read again.
            return Ok(confirmed.then_some(false));
        }
        let base = view.map_or(0, |(b, _)| b) + offset;
        match level.inner() {
            None => {
                let max = meta.max_encoded_chunk_len();
                if size > max {
                    return Err(Error::Codec(format!(
                        "shard {key:?}: inner chunk {index:?} is {size} bytes, more than any \
                         valid encoding of it can take ({max} bytes)"
                    )));
                }
                let read = read_from(store, key, version.as_ref(), base, size, buf)?;
                if read && !confirmed && version.is_some() {
                    cache.confirm(key)?;
                }
                return Ok(read.then_some(true));
            }
            Some(inner) => {
                view = Some((base, size));
                level = inner;
            }
        }
    }
}

/// Gives the new encoded bytes of the chunk at a chunk index from its old ones and a label
/// for errors (`None`: the chunk is not stored).
pub type EncodeChunk<'a> = dyn Fn(&[u64], Option<&[u8]>, &dyn std::fmt::Display, &mut ChunkWork) -> Result<Option<Vec<u8>>>
    + Sync
    + 'a;

/// A worker's buffers for encoding or decoding chunks: one decoded chunk and the codec
/// stages' scratch, reused from chunk to chunk.
#[derive(Debug, Default)]
pub struct ChunkWork {
    /// One decoded chunk.
    pub chunk: Vec<u8>,
    /// The codec stages' buffers.
    pub scratch: crate::codec::chain::Scratch,
}

/// Rebuilds the shard of layout `sharding` whose first chunk is `origin` (chunk grid) of an
/// array of `meta` into `out` (a buffer, or a value being written): `old` holds its stored
/// bytes (if any). Units for which `touches(first chunk, unit shape in elements)` holds
/// are rebuilt — nested shards recursively, chunks by `encode(chunk index, old encoded
/// bytes, label, worker buffers)` (`None`: not stored) — in parallel; the others keep
/// their bytes. `out` back with the shard, or `None` when no unit is stored.
#[allow(clippy::too_many_arguments)]
pub fn rebuild<S: ShardSink>(
    meta: &ArrayMeta,
    sharding: ShardLevel<'_>,
    origin: &[u64],
    old: Option<&[u8]>,
    label: &str,
    touches: &(dyn Fn(&[u64], &[u64]) -> bool + Sync),
    encode: &EncodeChunk<'_>,
    out: S,
) -> Result<Option<S>> {
    let rank = meta.rank();
    let per_shard = sharding.units_per_shard();
    let unit = sharding.unit_shape();
    let chunks = meta.inner_chunks();
    let unit_chunks: Vec<u64> = unit.iter().zip(chunks).map(|(u, c)| u / c).collect();
    let n: usize = per_shard.iter().product::<u64>() as usize;
    let old_index = match old {
        Some(bytes) => Some(decode_index(sharding, bytes, n, label)?),
        None => None,
    };
    let old_unit = |j: usize| -> Option<&[u8]> {
        let (offset, size) = old_index.as_ref()?[j];
        (offset != EMPTY)
            .then(|| &old.expect("index implies shard")[offset as usize..(offset + size) as usize])
    };
    let build = |work: &mut ChunkWork, j: usize| -> Result<Option<Cow<[u8]>>> {
        // The unit's first chunk, from its C-order position in the shard.
        let mut at: smallvec::SmallVec<[u64; 8]> = smallvec::smallvec![0; rank];
        let mut rest = j as u64;
        for d in (0..rank).rev() {
            at[d] = origin[d] + (rest % per_shard[d]) * unit_chunks[d];
            rest /= per_shard[d];
        }
        if (0..rank).any(|d| at[d] * chunks[d] >= meta.shape[d]) {
            return Ok(None);
        }
        if !touches(&at, unit) {
            return Ok(old_unit(j).map(Cow::Borrowed));
        }
        let unit = match sharding.inner() {
            Some(inner) => {
                let label = format!("{label}[{j}]");
                let out = Vec::new();
                rebuild(meta, inner, &at, old_unit(j), &label, touches, encode, out)?
            }
            None => encode(&at, old_unit(j), &format_args!("{label}[{j}]"), work)?,
        };
        Ok(unit.map(Cow::Owned))
    };
    // Units are built a window at a time in Morton order (in parallel within a window) and
    // appended to the shard as each window ends, so that they are not all held twice (as
    // units, then assembled).
    let unit_bytes = unit_chunks
        .iter()
        .fold(meta.max_encoded_chunk_len(), |acc, &c| {
            acc.saturating_mul(c)
        });
    let window = ((WINDOW_BYTES / unit_bytes.max(1)) as usize)
        .max(2 * rayon::current_num_threads())
        .min(n.max(1));
    let reuse = super::pool::Reuse::<ChunkWork>::default();
    // The shard's old length is the guess at its new one.
    let mut shard = Assembly::new(sharding, n, old.map_or(0, <[u8]>::len), out)?;
    for positions in morton_order(&per_shard).chunks(window) {
        let units: Vec<Option<Cow<[u8]>>> = positions
            .par_iter()
            .map_init(|| reuse.lease(), |work, &j| build(work, j))
            .collect::<Result<_>>()?;
        for (&j, unit) in positions.iter().zip(&units) {
            shard.push(j, unit.as_deref())?;
        }
    }
    shard.finish()
}

/// Encoded units of a shard built at a time by [`rebuild`] (a few per thread, at least).
const WINDOW_BYTES: u64 = 8 << 20;

/// Where the bytes of a shard go as [`rebuild`] lays it out: a buffer, or a value
/// being written into a store (so that a large shard is never held whole).
pub trait ShardSink {
    /// Makes room for `len` more bytes, where the sink holds them.
    fn reserve(&mut self, len: usize) -> Result<()>;
    /// Appends `bytes`.
    fn append(&mut self, bytes: &[u8]) -> Result<()>;
    /// Replaces the first bytes (appended already) with `bytes`.
    fn overwrite_start(&mut self, bytes: &[u8]) -> Result<()>;
}

impl ShardSink for Vec<u8> {
    fn reserve(&mut self, len: usize) -> Result<()> {
        crate::error::try_reserve(self, len, "a shard")
    }

    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        ShardSink::reserve(self, bytes.len())?;
        self.extend_from_slice(bytes);
        Ok(())
    }

    fn overwrite_start(&mut self, bytes: &[u8]) -> Result<()> {
        match self.get_mut(..bytes.len()) {
            Some(start) => {
                start.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(Error::Internal("a shard shorter than its index".into())),
        }
    }
}

impl ShardSink for Box<dyn ValueWriter + '_> {
    fn reserve(&mut self, _: usize) -> Result<()> {
        Ok(())
    }

    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        ValueWriter::append(self.as_mut(), bytes)
    }

    fn overwrite_start(&mut self, bytes: &[u8]) -> Result<()> {
        self.overwrite(0, bytes)
    }
}

/// A shard laid out unit by unit in Morton order (as zarr-python writes them): each unit's
/// bytes appended to `out` as it comes, the index written when the last has come (into the
/// room left for it when it leads the shard).
struct Assembly<'s, S> {
    sharding: ShardLevel<'s>,
    out: S,
    /// The bytes appended to `out`.
    len: u64,
    /// Each unit's (offset, length), by C-order position; `EMPTY` when not stored.
    entries: Vec<(u64, u64)>,
    /// Whether any unit is stored.
    stored: bool,
}

impl<'s, S: ShardSink> Assembly<'s, S> {
    /// An empty shard of `n` units into `out`, with room for `expected` bytes in all.
    fn new(sharding: ShardLevel<'s>, n: usize, expected: usize, mut out: S) -> Result<Self> {
        out.reserve(expected)?;
        let mut len = 0;
        if sharding.codec.index_at_start {
            let room = index_len(sharding, n);
            out.append(&vec![0; room])?;
            len = room as u64;
        }
        Ok(Self {
            sharding,
            out,
            len,
            entries: vec![(EMPTY, EMPTY); n],
            stored: false,
        })
    }

    /// Appends the unit at C-order `position` (`None`: not stored).
    fn push(&mut self, position: usize, unit: Option<&[u8]>) -> Result<()> {
        let Some(bytes) = unit else {
            return Ok(());
        };
        self.entries[position] = (self.len, bytes.len() as u64);
        self.out.append(bytes)?;
        self.len += bytes.len() as u64;
        self.stored = true;
        Ok(())
    }

    /// The shard with its index; `None` when no unit is stored.
    fn finish(mut self) -> Result<Option<S>> {
        if !self.stored {
            return Ok(None);
        }
        let mut index = Vec::new();
        encode_index(self.sharding, &self.entries, &mut index)?;
        if self.sharding.codec.index_at_start {
            let room = index_len(self.sharding, self.entries.len());
            if index.len() != room {
                return Err(Error::Internal("a shard index of another length".into()));
            }
            self.out.overwrite_start(&index)?;
        } else {
            self.out.append(&index)?;
        }
        Ok(Some(self.out))
    }
}

/// The C-order position, in the index of a shard of layout `sharding`, of the unit holding
/// the inner chunk at `at` (`inner`: the inner chunk shape): `at` counts inner chunks from
/// the shard's first one, or from any multiple of the shard shape (a regular grid's origin).
pub(crate) fn position_in_shard(sharding: ShardLevel<'_>, inner: &[u64], at: &[u64]) -> usize {
    let unit = sharding.unit_shape();
    let mut position = 0usize;
    for d in 0..at.len() {
        let per = (sharding.shape[d] / unit[d]) as usize;
        position = position * per + ((at[d] * inner[d] / unit[d]) as usize) % per;
    }
    position
}

/// Each unit's place in the Morton order of a shard of `per_shard` units, by its C-order
/// position: the order its bytes follow one another in the shards zarr-python and libzarr
/// write.
pub(crate) fn morton_ranks(per_shard: &[u64]) -> Vec<usize> {
    let order = morton_order(per_shard);
    let mut ranks = vec![0; order.len()];
    for (rank, &position) in order.iter().enumerate() {
        ranks[position] = rank;
    }
    ranks
}

/// The C-order positions of the units of a shard of `per_shard` units, in Morton order
/// as zarr-python writes them: each coordinate's bits interleaved, lowest bit first,
/// dimension 0 first, dimensions whose extent needs fewer bits dropping out.
fn morton_order(per_shard: &[u64]) -> Vec<usize> {
    let bits: Vec<u32> = per_shard
        .iter()
        .map(|&c| u64::BITS - c.saturating_sub(1).leading_zeros())
        .collect();
    let max_bits = bits.iter().copied().max().unwrap_or(0);
    let n: usize = per_shard.iter().product::<u64>() as usize;
    let mut coded: Vec<(u128, usize)> = (0..n)
        .map(|flat| {
            let mut coords: smallvec::SmallVec<[u64; 8]> = smallvec::smallvec![0; per_shard.len()];
            let mut rest = flat as u64;
            for d in (0..per_shard.len()).rev() {
                coords[d] = rest % per_shard[d];
                rest /= per_shard[d];
            }
            let mut code = 0u128;
            let mut out_bit = 0;
            for bit in 0..max_bits {
                for d in 0..per_shard.len() {
                    if bit < bits[d] {
                        code |= u128::from((coords[d] >> bit) & 1) << out_bit;
                        out_bit += 1;
                    }
                }
            }
            (code, flat)
        })
        .collect();
    coded.sort_unstable();
    coded.into_iter().map(|(_, flat)| flat).collect()
}

/// A shard of `per_shard` units none of which is stored: its index alone (what a
/// conditional rewrite stores where a shard would be erased).
pub fn empty(sharding: ShardLevel<'_>, per_shard: &[u64]) -> Result<Vec<u8>> {
    let n: usize = per_shard.iter().product::<u64>() as usize;
    let mut out = Vec::new();
    encode_index(sharding, &vec![(EMPTY, EMPTY); n], &mut out)?;
    Ok(out)
}

/// Lays out a shard of `per_shard` units from their encoded bytes in C order (`None`: not
/// stored): the units in Morton order (as zarr-python writes them), the index at the start
/// or the end; `None` when no unit is stored (the shard is then not stored).
pub fn assemble<T: AsRef<[u8]>>(
    sharding: ShardLevel<'_>,
    per_shard: &[u64],
    chunks: &[Option<T>],
) -> Result<Option<Vec<u8>>> {
    let stored: usize = chunks.iter().flatten().map(|c| c.as_ref().len()).sum();
    let expected = stored + index_len(sharding, chunks.len());
    let mut shard = Assembly::new(sharding, chunks.len(), expected, Vec::new())?;
    for position in morton_order(per_shard) {
        shard.push(position, chunks[position].as_ref().map(AsRef::as_ref))?;
    }
    shard.finish()
}

#[cfg(test)]
mod tests {
    use super::{morton_order, IndexCache, EMPTY, WHOLE};
    use std::sync::Arc;

    #[test]
    fn cached_indexes_tell_chunk_lengths_before_a_read() {
        let cache = IndexCache::default();
        let index = Arc::new(vec![(0, 10), (EMPTY, EMPTY), (10, 5)]);
        cache.put("s", None, WHOLE, Some(index.clone())).unwrap();
        cache.put("gone", None, WHOLE, None).unwrap();
        cache.put("nested", None, (0, 15), Some(index)).unwrap();
        assert_eq!(cache.chunk_len("s", 0), Some(10));
        assert_eq!(cache.chunk_len("s", 1), Some(0), "a chunk not stored");
        assert_eq!(cache.chunk_len("s", 2), Some(5));
        assert_eq!(cache.chunk_len("s", 3), None, "beyond the index");
        assert_eq!(cache.chunk_len("gone", 0), Some(0), "a shard not stored");
        assert_eq!(
            cache.chunk_len("nested", 0),
            None,
            "only a nested shard's index"
        );
        assert_eq!(cache.chunk_len("other", 0), None, "nothing cached");
    }

    #[test]
    fn morton_order_matches_zarr_python() {
        // Values from zarr-python 3.1's morton_order_iter.
        assert_eq!(morton_order(&[2, 2]), vec![0, 2, 1, 3]);
        assert_eq!(morton_order(&[2, 3]), vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(morton_order(&[3, 1]), vec![0, 1, 2]);
        assert_eq!(morton_order(&[2, 2, 2]), vec![0, 4, 2, 6, 1, 5, 3, 7]);
        assert_eq!(
            morton_order(&[3, 5]),
            vec![0, 5, 1, 6, 10, 11, 2, 7, 3, 8, 12, 13, 4, 9, 14]
        );
        assert_eq!(morton_order(&[]), vec![0]);
    }
}
