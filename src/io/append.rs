//! Streaming appends into a sharded array: the shards an append along one axis touches
//! stay open on the array handle as their encoded inner chunks, so each step encodes only
//! its own chunks and a shard is stored once, when complete or when flushed, instead of
//! being read, merged and rewritten at every step.
//!
//! Memory: the encoded inner chunks of the open shards (compressed data) and one slot of
//! 24 bytes per inner chunk of each open shard, plus the shards an append completed while a
//! thread of their own stores them (the next appends encode meanwhile). Past
//! [`APPEND_BUFFER_BYTES`] of encoded chunks after an append, every open shard is stored
//! and dropped from memory; a later append reads a shard it touches back once.

use super::pool;
use super::region::{merged_chunk, Part, Plan, Region};
use super::shard::{self, ChunkWork, EMPTY};
use crate::error::{Error, Result};
use crate::meta::{ArrayMeta, ShardLevel};
use crate::store::Store;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// Completed shards (by shard index, their inner chunks) handed to a storing thread.
type Completed = Vec<(Vec<u64>, Vec<Option<Vec<u8>>>)>;

/// The most bytes of encoded inner chunks an array handle keeps buffered between appends.
pub const APPEND_BUFFER_BYTES: usize = crate::ffi::ZARR_APPEND_BUFFER_BYTES as usize;

/// The open shards of one growing axis.
#[derive(Debug, Default)]
pub struct Open {
    /// The axis the appends grow.
    pub axis: usize,
    /// By shard index: its inner chunks (encoded, C order within the shard; `None`: not
    /// stored) and whether they changed since the shard was last stored.
    shards: HashMap<Vec<u64>, OpenShard>,
    /// Encoded bytes held over all open shards.
    bytes: usize,
    /// The shape grew since the metadata document was last stored.
    pub shape_changed: bool,
    /// The shards the last completing append handed to a thread of their own.
    storing: Option<Storing>,
}

/// Completed shards being stored by a thread of their own.
#[derive(Debug)]
struct Storing {
    /// On failure the thread gives the shards back, to be kept open and stored again.
    thread: std::thread::JoinHandle<std::result::Result<(), (Error, Completed)>>,
    /// When they were the last open shards: the axis's extent they complete, which the
    /// metadata document may show once they are stored.
    extent: Option<u64>,
    /// The process that started the thread (a `fork()` child has no such thread).
    pid: u32,
}

#[derive(Debug)]
struct OpenShard {
    units: Vec<Option<Vec<u8>>>,
    dirty: bool,
}

/// The single sharding level an append can buffer (`None`: not sharded, or nested shards).
pub fn buffered_level(meta: &ArrayMeta) -> Option<ShardLevel<'_>> {
    meta.sharding().filter(|s| s.inner().is_none())
}

impl Open {
    /// A buffer for appends along `axis`.
    pub fn new(axis: usize) -> Self {
        Open {
            axis,
            ..Open::default()
        }
    }

    /// Whether nothing is held or waiting to be stored.
    pub fn is_idle(&self) -> bool {
        self.shards.is_empty() && !self.shape_changed && self.storing.is_none()
    }

    /// Collects the shards being stored by a thread of their own: waits for them with
    /// `wait`, else only when they are already stored. Returns the axis's extent the
    /// metadata document may now show (when those were the last open shards). On the
    /// thread's error the shards are open (and changed) again, and the error is returned.
    pub fn finish_storing(&mut self, wait: bool) -> Result<Option<u64>> {
        let Some(storing) = &self.storing else {
            return Ok(None);
        };
        let ours = storing.pid == std::process::id();
        if ours && !wait && !storing.thread.is_finished() {
            return Ok(None);
        }
        let Some(storing) = self.storing.take() else {
            return Ok(None);
        };
        if !ours {
            // A fork() child: the thread, and the shards it stores, are the parent's.
            std::mem::forget(storing.thread);
            return Ok(None);
        }
        let outcome = storing
            .thread
            .join()
            .map_err(|_| Error::Internal("a shard-storing thread panicked".into()))?;
        match outcome {
            Ok(()) => Ok(storing.extent),
            Err((error, completed)) => {
                for (index, units) in completed {
                    self.bytes += units.iter().flatten().map(Vec::len).sum::<usize>();
                    self.shards.insert(index, OpenShard { units, dirty: true });
                }
                self.shape_changed = true;
                Err(error)
            }
        }
    }

    /// Whether growing the axis from `old` to `new` completes a shard (so the shards
    /// stored behind the last appends must be collected first).
    pub fn completes_shard(meta: &ArrayMeta, axis: usize, old: u64, new: u64) -> bool {
        buffered_level(meta).is_some_and(|sharding| {
            let depth = sharding.shape[axis].max(1);
            new / depth > old / depth
        })
    }

    /// Encoded bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The element range along the axis of the open shards (`None`: no shard is open).
    pub fn axis_range(&self, meta: &ArrayMeta) -> Option<(u64, u64)> {
        let depth = buffered_level(meta)?.shape[self.axis];
        let lo = self.shards.keys().map(|k| k[self.axis]).min()?;
        let hi = self.shards.keys().map(|k| k[self.axis]).max()?;
        Some((lo * depth, (hi + 1) * depth))
    }

    /// Merges `buf` (elements at `buf_strides`) into the open shards as `region` of the
    /// array `meta` (already grown to hold it), whose chunk keys are joined to `base`.
    /// `old_extent` is the axis's extent before the append: a shard read back from the
    /// store drops inner chunks starting at or beyond it (left from an earlier, larger
    /// shape). Nothing in the buffer changes when encoding fails.
    #[allow(clippy::too_many_arguments)]
    pub fn stage(
        &mut self,
        store: &dyn Store,
        base: &str,
        meta: &ArrayMeta,
        old_extent: u64,
        region: Region,
        buf_strides: Vec<usize>,
        buf: &[u8],
    ) -> Result<()> {
        let sharding = buffered_level(meta)
            .ok_or_else(|| Error::Internal("a buffered append needs one level of shards".into()))?;
        let plan = Plan::new(meta, base, region, buf_strides)?;
        let per_shard = sharding.chunks_per_shard(plan.chunks);
        let rank = meta.rank();
        // Open the shards the region touches (the plan's chunk range, divided per shard).
        let first: Vec<u64> = (0..rank).map(|d| plan.first[d] / per_shard[d]).collect();
        let counts: Vec<u64> = (0..rank)
            .map(|d| match plan.counts[d] {
                0 => 0,
                n => (plan.first[d] + n - 1) / per_shard[d] - first[d] + 1,
            })
            .collect();
        let total_shards = if counts.contains(&0) {
            0
        } else {
            crate::error::count_of(&counts, "shards in the region")?
        };
        let mut index = first.clone();
        for _ in 0..total_shards {
            if !self.shards.contains_key(&index) {
                let shard = load(store, base, meta, sharding, &index, self.axis, old_extent)?;
                self.bytes += shard.units.iter().flatten().map(Vec::len).sum::<usize>();
                self.shards.insert(index.clone(), shard);
            }
            for d in (0..rank).rev() {
                index[d] += 1;
                if index[d] < first[d] + counts[d] {
                    break;
                }
                index[d] = first[d];
            }
        }
        // Encode the region's inner chunks, merged over what the buffer holds of them.
        let locate = |chunk: &[u64]| -> (Vec<u64>, usize) {
            let mut position = 0usize;
            for d in 0..rank {
                position = position * per_shard[d] as usize + (chunk[d] % per_shard[d]) as usize;
            }
            let shard: Vec<u64> = (0..rank).map(|d| chunk[d] / per_shard[d]).collect();
            (shard, position)
        };
        let shards = &self.shards;
        let reuse = pool::Reuse::<(Part, ChunkWork)>::default();
        let encoded: Vec<Option<Vec<u8>>> = pool::pool()?.install(|| {
            (0..plan.total)
                .into_par_iter()
                .map_init(
                    || reuse.lease(),
                    |lease, i| -> Result<Option<Vec<u8>>> {
                        let (part, work) = &mut **lease;
                        plan.part(i, part);
                        let (shard, position) = locate(&part.index);
                        let existing = shards
                            .get(&shard)
                            .and_then(|s| s.units[position].as_deref());
                        let label = format_args!("buffered shard {shard:?}[{position}]");
                        Ok(
                            merged_chunk(&plan, part, existing, &label, buf, work, false)?
                                .map(<[u8]>::to_vec),
                        )
                    },
                )
                .collect::<Result<_>>()
        })?;
        let mut part = Part::default();
        for (i, chunk) in encoded.into_iter().enumerate() {
            plan.part(i, &mut part);
            let (shard, position) = locate(&part.index);
            let open = self
                .shards
                .get_mut(&shard)
                .ok_or_else(|| Error::Internal("an appended chunk's shard is not open".into()))?;
            let slot = &mut open.units[position];
            self.bytes -= slot.as_ref().map_or(0, Vec::len);
            self.bytes += chunk.as_ref().map_or(0, Vec::len);
            *slot = chunk;
            open.dirty = true;
        }
        self.shape_changed = true;
        Ok(())
    }

    /// Stores the open shards that the axis's extent `extent` completes and closes them:
    /// a thread of their own assembles and stores them while the caller goes on (collect
    /// them with [`Open::finish_storing`] before the next call that completes shards).
    pub fn store_complete(
        &mut self,
        store: &Arc<dyn Store>,
        base: &str,
        meta: &Arc<ArrayMeta>,
        extent: u64,
    ) -> Result<()> {
        let Some(sharding) = buffered_level(meta) else {
            return Ok(());
        };
        let depth = sharding.shape[self.axis];
        let mut complete: Vec<Vec<u64>> = self
            .shards
            .keys()
            .filter(|k| (k[self.axis] + 1) * depth <= extent)
            .cloned()
            .collect();
        if complete.is_empty() {
            return Ok(());
        }
        self.finish_storing(true)?;
        // The thread is started before any shard leaves the buffer: failing to start it
        // loses nothing.
        let (hand_over, receive) = std::sync::mpsc::channel::<Completed>();
        let (store, meta, base) = (store.clone(), meta.clone(), base.to_string());
        // A fork waits for the thread as for a call: it holds the store's locks.
        let held = super::gate::hold();
        let thread = std::thread::Builder::new()
            .name("zarr-append".into())
            .spawn(move || {
                let outcome = match receive.recv() {
                    Ok(completed) => store_shards(store.as_ref(), &base, &meta, &completed)
                        .map_err(|e| (e, completed)),
                    Err(_) => Ok(()),
                };
                // What the thread owns is freed before it leaves the gate.
                drop((receive, store, meta, base));
                drop(held);
                outcome
            })
            .map_err(|e| Error::Internal(format!("cannot start a shard-storing thread: {e}")))?;
        complete.sort_unstable();
        let last = complete.len() == self.shards.len();
        let mut completed: Completed = Vec::new();
        for index in complete {
            if let Some(open) = self.shards.remove(&index) {
                self.bytes -= open.units.iter().flatten().map(Vec::len).sum::<usize>();
                if open.dirty {
                    completed.push((index, open.units));
                }
            }
        }
        // The thread waits for them: the channel is open while it runs.
        let _ = hand_over.send(completed);
        self.storing = Some(Storing {
            thread,
            extent: last.then_some(extent),
            pid: std::process::id(),
        });
        Ok(())
    }

    /// Stores every open shard that changed since it was last stored (several at once);
    /// with `close`, drops them all from memory afterwards. On an error every changed
    /// shard stays open and changed, to be stored again.
    pub fn store_open(
        &mut self,
        store: &dyn Store,
        base: &str,
        meta: &ArrayMeta,
        close: bool,
    ) -> Result<()> {
        self.finish_storing(true)?;
        if let Some(sharding) = buffered_level(meta) {
            let mut dirty: Vec<(&Vec<u64>, &mut OpenShard)> = self
                .shards
                .iter_mut()
                .filter(|(_, open)| open.dirty)
                .collect();
            dirty.sort_unstable_by(|a, b| a.0.cmp(b.0));
            // Stored on the pool, several at once; clean again once all are stored.
            pool::map_each(&dirty, |(index, open)| {
                put(store, base, meta, sharding, index, &open.units)
            })?;
            for (_, open) in dirty {
                open.dirty = false;
            }
        }
        if close {
            self.shards.clear();
            self.bytes = 0;
        }
        Ok(())
    }
}

/// Reads the stored shard at `index` into an open shard: its inner chunks, less those
/// starting at or beyond `extent` along `axis`.
fn load(
    store: &dyn Store,
    base: &str,
    meta: &ArrayMeta,
    sharding: ShardLevel<'_>,
    index: &[u64],
    axis: usize,
    extent: u64,
) -> Result<OpenShard> {
    let per_shard = sharding.units_per_shard();
    let n = crate::error::count_of(&per_shard, "inner chunks per shard")?;
    let mut units: Vec<Option<Vec<u8>>> = Vec::new();
    units
        .try_reserve_exact(n)
        .map_err(|_| crate::error::no_memory(n * 24, "a shard's inner chunk table"))?;
    units.resize_with(n, || None);
    let mut key = String::new();
    meta.chunk_key_into(base, index, &mut key);
    let mut bytes = Vec::new();
    if store.get_into(&key, &mut bytes, meta.max_stored_len())? {
        let entries = shard::decode_index(sharding, &bytes, n, &key)?;
        let inner = meta.inner_chunks();
        let per_axis = per_shard[axis] as usize;
        let stride: usize = per_shard[axis + 1..].iter().product::<u64>() as usize;
        for (position, &(offset, size)) in entries.iter().enumerate() {
            let along = (position / stride) % per_axis;
            let origin = index[axis] * sharding.shape[axis] + along as u64 * inner[axis];
            if offset != EMPTY && origin < extent {
                units[position] = Some(bytes[offset as usize..(offset + size) as usize].to_vec());
            }
        }
    }
    Ok(OpenShard {
        units,
        dirty: false,
    })
}

/// Assembles completed shards and stores them with one [`Store::put_many`] (several at
/// once; local files synced on the writing threads when the store syncs).
fn store_shards(
    store: &dyn Store,
    base: &str,
    meta: &ArrayMeta,
    completed: &Completed,
) -> Result<()> {
    let sharding = buffered_level(meta)
        .ok_or_else(|| Error::Internal("completed shards of an array without them".into()))?;
    let per_shard = sharding.units_per_shard();
    let mut uploads = Vec::with_capacity(completed.len());
    for (index, units) in completed {
        let mut key = String::new();
        meta.chunk_key_into(base, index, &mut key);
        uploads.push((key, shard::assemble(sharding, &per_shard, units)?));
    }
    store.put_many(uploads)
}

/// Stores the shard at `index` laid out from `units` (erases it when none is stored).
fn put(
    store: &dyn Store,
    base: &str,
    meta: &ArrayMeta,
    sharding: ShardLevel<'_>,
    index: &[u64],
    units: &[Option<Vec<u8>>],
) -> Result<()> {
    let mut key = String::new();
    meta.chunk_key_into(base, index, &mut key);
    match shard::assemble(sharding, &sharding.units_per_shard(), units)? {
        Some(bytes) => store.set(&key, &bytes),
        None => store.erase(&key).map(drop),
    }
}
