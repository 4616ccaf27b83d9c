//! Streaming appends into a sharded array: the shards an append along one axis touches
//! stay open on the array handle as their encoded inner chunks, so each step encodes only
//! its own chunks and a shard is stored once, when complete or when flushed, instead of
//! being read, merged and rewritten at every step.
//!
//! Memory: the encoded inner chunks of the open shards (compressed data) and one slot of
//! 24 bytes per inner chunk of each open shard. Past [`APPEND_BUFFER_BYTES`] of encoded
//! chunks after an append, every open shard is stored and dropped from memory; a later
//! append reads a shard it touches back once.

use super::pool;
use super::region::{merged_chunk, Part, Plan, Region};
use super::shard::{self, ChunkWork, EMPTY};
use crate::error::{Error, Result};
use crate::meta::{ArrayMeta, ShardLevel};
use crate::store::Store;
use rayon::prelude::*;
use std::collections::HashMap;

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
        self.shards.is_empty() && !self.shape_changed
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

    /// Stores the open shards that the axis's extent `extent` completes and closes them.
    pub fn store_complete(
        &mut self,
        store: &dyn Store,
        base: &str,
        meta: &ArrayMeta,
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
        complete.sort_unstable();
        // Assembled and stored on the pool, several at once.
        let dirty: Vec<(&Vec<u64>, &OpenShard)> = complete
            .iter()
            .map(|index| (index, &self.shards[index]))
            .filter(|(_, open)| open.dirty)
            .collect();
        pool::map_each(&dirty, |(index, open)| {
            put(store, base, meta, sharding, index, &open.units)
        })?;
        for index in complete {
            if let Some(open) = self.shards.remove(&index) {
                self.bytes -= open.units.iter().flatten().map(Vec::len).sum::<usize>();
            }
        }
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
