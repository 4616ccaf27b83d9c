//! Region I/O: checks a region against an array, splits it into per-chunk parts, and runs
//! them on the thread pool — decoding straight into the caller's buffer when a chunk maps
//! onto one contiguous run of it, otherwise through one scratch buffer per worker.

use super::arrivals::Arrivals;
use super::cache::ChunkCache;
use super::copy::{self, all_equal, is_single_run, Layout, SharedBuf};
use super::lock::{Retry, WriteGuard};
use super::pool;
use super::shard::{self, ChunkWork, Prefetched, ShardSink};
use crate::codec::chain::Scratch;
use crate::dtype::{swap_bytes, ElementType};
use crate::error::{checked_product, count_of, try_resize, Error, Result};
use crate::meta::{ArrayMeta, Order, ShardLevel};
use crate::store::{Fetch, Fetched, Spares, Store, ValueWriter};
use rayon::prelude::*;

/// A hyperrectangle of an array: first index and extent per dimension.
#[derive(Debug, Clone, Copy)]
pub struct Region<'a> {
    /// First index of each dimension.
    pub start: &'a [u64],
    /// Number of elements along each dimension.
    pub count: &'a [u64],
}

/// How the caller's buffer holds the region's elements.
#[derive(Debug, Clone, Copy)]
pub enum MemLayout<'a> {
    /// Dense, in C or F order.
    Dense(Order),
    /// Element strides per dimension (non-negative, not overlapping), as netCDF's `imap`:
    /// the element at region index `i` is at `Σ i[d] * strides[d]`.
    Strided(&'a [i64]),
}

impl From<Order> for MemLayout<'_> {
    fn from(order: Order) -> Self {
        MemLayout::Dense(order)
    }
}

impl MemLayout<'_> {
    /// Element strides for a region of `count`, after checking them (rank, sign, overlap)
    /// and that a buffer of `buf_len` bytes holds every element.
    fn strides(&self, count: &[u64], elem: usize, buf_len: usize) -> Result<Vec<usize>> {
        let strides = match self {
            MemLayout::Dense(order) => {
                let elements = if count.contains(&0) {
                    0
                } else {
                    checked_product(count.iter().copied(), "region element count")?
                };
                let bytes = elements
                    .checked_mul(elem as u64)
                    .ok_or_else(|| Error::Overflow("region byte size overflows 64 bits".into()))?;
                if bytes != buf_len as u64 {
                    return Err(Error::BufferSize(format!(
                        "the region needs {bytes} bytes but the buffer has {buf_len}"
                    )));
                }
                return Ok(order.strides(count));
            }
            MemLayout::Strided(strides) => strides,
        };
        if strides.len() != count.len() {
            return Err(Error::RankMismatch(format!(
                "{} memory strides for a region of rank {}",
                strides.len(),
                count.len()
            )));
        }
        let strides: Vec<usize> = strides
            .iter()
            .map(|&s| {
                usize::try_from(s)
                    .map_err(|_| Error::InvalidArg(format!("memory stride {s} is negative")))
            })
            .collect::<Result<_>>()?;
        if count.contains(&0) {
            return Ok(strides);
        }
        // Elements must not overlap: sorted by stride, each dimension must step over the
        // whole extent of the previous ones.
        let mut dims: Vec<usize> = (0..count.len()).filter(|&d| count[d] > 1).collect();
        dims.sort_by_key(|&d| strides[d]);
        let mut span: u64 = 1;
        for &d in &dims {
            if (strides[d] as u64) < span {
                return Err(Error::InvalidArg(format!(
                    "memory strides {strides:?} make elements overlap"
                )));
            }
            span = (strides[d] as u64)
                .checked_mul(count[d])
                .ok_or_else(|| Error::Overflow("memory strides overflow 64 bits".into()))?;
        }
        let last = count
            .iter()
            .zip(&strides)
            .try_fold(0u64, |acc, (&n, &s)| {
                acc.checked_add((n - 1).checked_mul(s as u64)?)
            })
            .and_then(|l| l.checked_add(1)?.checked_mul(elem as u64))
            .ok_or_else(|| Error::Overflow("memory strides overflow 64 bits".into()))?;
        if last > buf_len as u64 {
            return Err(Error::BufferSize(format!(
                "the strided region reaches byte {last} but the buffer has {buf_len}"
            )));
        }
        Ok(strides)
    }
}

/// Checks a region, the caller's element type and buffer before any I/O, and returns the
/// buffer's element strides.
pub fn check(
    meta: &ArrayMeta,
    region: Region,
    elem: ElementType,
    layout: MemLayout,
    buf_len: usize,
) -> Result<Vec<usize>> {
    if meta.dtype.is_variable() {
        return Err(Error::DtypeMismatch(format!(
            "the array holds variable-length items ({}): use the vlen read and write calls",
            meta.dtype.element_type().name()
        )));
    }
    let stored = meta.dtype.element_type();
    if elem != stored && !converts(stored, elem) {
        return Err(Error::DtypeMismatch(format!(
            "memory type {} does not match the array's {} ({})",
            elem.name(),
            stored.name(),
            meta.dtype.to_v2()
        )));
    }
    check_bounds(meta, region)?;
    let size = if elem == stored {
        meta.item_size()
    } else {
        elem.size()
    };
    layout.strides(region.count, size, buf_len)
}

/// Whether items stored as `stored` are read and written as `memory` by conversion
/// (`bfloat16` as `float32`).
pub fn converts(stored: ElementType, memory: ElementType) -> bool {
    stored == ElementType::BFloat16 && memory == ElementType::Float32
}

/// Checks that a region has the array's rank and lies inside its shape.
pub fn check_bounds(meta: &ArrayMeta, region: Region) -> Result<()> {
    let rank = meta.rank();
    if region.start.len() != rank || region.count.len() != rank {
        return Err(Error::RankMismatch(format!(
            "the region has {} dimensions but the array has {rank}",
            region.count.len()
        )));
    }
    for d in 0..rank {
        let end = region.start[d].checked_add(region.count[d]);
        if end.is_none_or(|e| e > meta.shape[d]) {
            return Err(Error::OutOfBounds(format!(
                "dimension {d}: start {} + count {} exceeds the extent {}",
                region.start[d], region.count[d], meta.shape[d]
            )));
        }
    }
    Ok(())
}

/// Where one chunk meets the region.
#[derive(Debug, Default)]
pub(super) struct Part {
    /// Chunk index.
    pub(super) index: smallvec::SmallVec<[u64; 8]>,
    /// Extent of the overlap.
    extent: smallvec::SmallVec<[usize; 8]>,
    /// Offset of the overlap inside the chunk, in elements.
    chunk_offset: usize,
    /// Element strides of the decoded chunk.
    chunk_strides: smallvec::SmallVec<[usize; 8]>,
    /// Bytes of the decoded chunk.
    chunk_bytes: usize,
    /// Offset of the overlap inside the caller's buffer, in elements.
    buf_offset: usize,
    /// The overlap is the whole chunk.
    whole_chunk: bool,
    /// The overlap is every element of the chunk inside the array (whole, or a clipped edge).
    all_in_bounds: bool,
}

/// A worker's reusable state for one call: the part it works on, the chunk's key, its
/// stored bytes as read (unless they lie in an answer other chunks share), one decoded
/// chunk and the codec stages' buffers.
#[derive(Debug, Default)]
struct Buffers {
    part: Part,
    key: String,
    raw: Vec<u8>,
    work: ChunkWork,
}

impl Buffers {
    /// Bytes the buffers hold on to.
    fn capacity(&self) -> usize {
        self.raw.capacity() + self.work.chunk.capacity() + self.work.scratch.capacity()
    }
}

/// The most bytes of buffers one worker of a multi-chunk call keeps between calls: a
/// 32 MiB chunk's stored bytes, decoded chunk and encoded output fit.
const MAX_KEPT_BYTES: usize = 128 << 20;

/// The most bytes of buffers a single-chunk call keeps (a 32 MiB chunk and its encoded
/// output fit): less, since such calls may also be a few reads or writes of huge items,
/// whose buffers should not stay held.
const MAX_KEPT_SINGLE_BYTES: usize = 96 << 20;

/// The buffers kept from one call to the next (at most [`MAX_KEPT_BYTES`] each, and as
/// many as the pool has workers), so that a loop of calls over one or a few large chunks
/// each (a chunk or a row of chunks at a time, from any thread: the caller's, or the
/// thread of non-blocking requests, which ends when its queue is empty) does not allocate
/// and fault in its chunks' memory in every call.
static KEPT: std::sync::Mutex<Vec<Buffers>> = std::sync::Mutex::new(Vec::new());

/// Buffers kept by an earlier call, or new ones.
fn kept_or_new() -> Buffers {
    KEPT.lock()
        .ok()
        .and_then(|mut kept| kept.pop())
        .unwrap_or_default()
}

/// Runs `f` with work buffers an earlier call kept (kept again after it, within the
/// bounds of [`KEPT`]).
pub(crate) fn with_kept_work<R>(f: impl FnOnce(&mut ChunkWork) -> R) -> R {
    let mut buffers = kept_or_new();
    let result = f(&mut buffers.work);
    keep(vec![buffers]);
    result
}

/// Keeps `buffers` for later calls, within the bounds of [`KEPT`].
fn keep(buffers: Vec<Buffers>) {
    let Ok(mut kept) = KEPT.lock() else { return };
    let room = pool::num_threads();
    for b in buffers {
        if kept.len() < room && b.capacity() <= MAX_KEPT_BYTES {
            kept.push(b);
        }
    }
}

/// The per-chunk plan of a region.
pub(super) struct Plan<'a> {
    meta: &'a ArrayMeta,
    /// The shape of the chunks the codecs encode (the innermost when sharded).
    pub(super) chunks: &'a [u64],
    /// Where chunk keys are joined to.
    base: &'a str,
    region: Region<'a>,
    pub(super) first: Vec<u64>,
    pub(super) counts: Vec<u64>,
    pub(super) total: usize,
    chunk_strides: Vec<usize>,
    /// Bytes of one decoded chunk of the regular grid.
    chunk_bytes: usize,
    buf_strides: Vec<usize>,
    /// One element of the fill value (zeros when it is null).
    pattern: std::borrow::Cow<'a, [u8]>,
    /// The workers' buffers, kept from one run of the plan to the next (a read or write in
    /// batches runs the plan once per batch), so that a chunk's memory is allocated and
    /// faulted in once per worker and call, not once per batch.
    reuse: pool::Reuse<Buffers>,
}

impl<'a> Plan<'a> {
    pub(super) fn new(
        meta: &'a ArrayMeta,
        base: &'a str,
        region: Region<'a>,
        buf_strides: Vec<usize>,
    ) -> Result<Self> {
        let chunks = meta.inner_chunks();
        let rectilinear = meta.chunks_vary();
        let mut first = Vec::with_capacity(meta.rank());
        let mut counts = Vec::with_capacity(meta.rank());
        for (d, &c) in chunks.iter().enumerate() {
            let (s, n) = (region.start[d], region.count[d]);
            if n == 0 {
                first.push(0);
                counts.push(0);
            } else if rectilinear {
                let lo = meta.chunk_of(d, s);
                first.push(lo);
                counts.push(meta.chunk_of(d, s + n - 1) - lo + 1);
            } else {
                first.push(s / c);
                counts.push((s + n - 1) / c - s / c + 1);
            }
        }
        let total = count_of(&counts, "chunk count")?;
        Ok(Plan {
            meta,
            chunks,
            base,
            region,
            first,
            counts,
            total,
            chunk_strides: meta.chunk_strides(),
            chunk_bytes: meta.chunk_bytes(),
            buf_strides,
            pattern: fill_pattern(meta)?,
            reuse: pool::Reuse::default(),
        })
    }

    /// Fills `part` with the `flat`-th chunk of the plan (C order).
    pub(super) fn part(&self, flat: usize, part: &mut Part) {
        let rank = self.meta.rank();
        part.index.resize(rank, 0);
        let mut rest = flat as u64;
        for d in (0..rank).rev() {
            part.index[d] = self.first[d] + rest % self.counts[d];
            rest /= self.counts[d];
        }
        self.locate(part);
    }

    /// Fills in where the chunk at `part.index` meets the region (a zero extent when it
    /// does not).
    fn locate(&self, part: &mut Part) {
        let rank = self.meta.rank();
        part.extent.resize(rank, 0);
        part.chunk_offset = 0;
        part.buf_offset = 0;
        part.whole_chunk = true;
        part.all_in_bounds = true;
        let rectilinear = self.meta.chunks_vary();
        part.chunk_strides.clear();
        if rectilinear {
            // Each chunk has its own shape, hence its own strides and size.
            let shape: smallvec::SmallVec<[u64; 8]> = (0..rank)
                .map(|d| self.meta.chunk_span(d, part.index[d]).1)
                .collect();
            part.chunk_strides
                .extend(self.meta.chain().chunk_strides(&shape));
            part.chunk_bytes = shape.iter().product::<u64>() as usize * self.meta.item_size();
        } else {
            part.chunk_strides.extend_from_slice(&self.chunk_strides);
            part.chunk_bytes = self.chunk_bytes;
        }
        for d in 0..rank {
            let (origin, c) = match rectilinear {
                true => self.meta.chunk_span(d, part.index[d]),
                false => (part.index[d] * self.chunks[d], self.chunks[d]),
            };
            // The last chunk of a shape near 2^64 may end past it (`None`): past the shape.
            let end = origin.checked_add(c);
            let lo = origin.max(self.region.start[d]);
            let hi = end
                .unwrap_or(u64::MAX)
                .min(self.region.start[d] + self.region.count[d])
                .max(lo);
            let in_bounds_end = end.unwrap_or(u64::MAX).min(self.meta.shape[d]);
            part.extent[d] = (hi - lo) as usize;
            part.chunk_offset += (lo - origin) as usize * part.chunk_strides[d];
            part.buf_offset += (lo - self.region.start[d]) as usize * self.buf_strides[d];
            part.whole_chunk &= lo == origin && Some(hi) == end;
            part.all_in_bounds &= lo == origin && hi == in_bounds_end;
        }
    }

    /// Writes into `key` the store key of the object holding the chunk at `index` (its
    /// shard when sharded).
    fn key_of(&self, index: &[u64], key: &mut String) {
        match self.meta.sharding() {
            None => self.meta.chunk_key_into(self.base, index, key),
            Some(_) if self.meta.is_rectilinear() => {
                let shard_index = self.meta.shard_of_chunk(index);
                self.meta.chunk_key_into(self.base, &shard_index, key)
            }
            Some(shard) => {
                let shard_index: smallvec::SmallVec<[u64; 8]> = index
                    .iter()
                    .zip(shard.shape.iter().zip(self.chunks))
                    .map(|(i, (s, c))| i / (s / c))
                    .collect();
                self.meta.chunk_key_into(self.base, &shard_index, key)
            }
        }
    }

    /// [`Plan::batches`] for a pipeline that hands the parts to workers one at a time in
    /// batch order, [`Plan::spread`] over all parts (unsharded) or within each batch
    /// (sharded: a batch reads a run of one shard).
    fn spread_batches(&self, parts: &[usize], per_batch: usize) -> Vec<Vec<usize>> {
        if self.meta.sharding().is_none() {
            let mut parts = parts.to_vec();
            self.spread(&mut parts);
            return self.batches(&parts, per_batch);
        }
        let mut batches = self.batches(parts, per_batch);
        for batch in &mut batches {
            self.spread(batch);
        }
        batches
    }

    /// Orders `parts` so that parts taken one after the other write apart in the caller's
    /// buffer: the grid dimension of the buffer's smallest stride (of those the region
    /// spans more than one chunk of) varies slowest. Parts next to each other along it
    /// share the buffer's pages; workers that take them at the same time fault the same
    /// fresh pages in twice, contending for their locks.
    fn spread(&self, parts: &mut [usize]) {
        let spanned = (0..self.counts.len()).filter(|&d| self.counts[d] > 1);
        let Some(d) = spanned.min_by_key(|&d| self.buf_strides[d]) else {
            return;
        };
        let inner: u64 = self.counts[d + 1..].iter().product();
        let along = |flat: usize| (flat as u64 / inner) % self.counts[d];
        parts.sort_by_key(|&flat| (along(flat), flat));
    }

    /// The part numbers `parts` in batches of about `per_batch` parts for a pipelined read:
    /// in their order, or when sharded each shard's parts together (shards of fewer parts
    /// share a batch, a shard of more is split), so that each shard is read with as few
    /// requests as it allows and a batch holds about `per_batch` parts.
    fn batches(&self, parts: &[usize], per_batch: usize) -> Vec<Vec<usize>> {
        if self.meta.sharding().is_none() {
            return parts.chunks(per_batch).map(<[usize]>::to_vec).collect();
        }
        let mut by_shard: Vec<Vec<usize>> = Vec::new();
        let mut position: std::collections::HashMap<String, usize> = Default::default();
        let mut part = Part::default();
        let mut key = String::new();
        for &i in parts {
            self.part(i, &mut part);
            self.key_of(&part.index, &mut key);
            match position.get(&key) {
                Some(&s) => by_shard[s].push(i),
                None => {
                    position.insert(key.clone(), by_shard.len());
                    by_shard.push(vec![i]);
                }
            }
        }
        // A shard of more parts than a batch is split in the order its chunks are stored
        // (Morton order), so that each batch reads one run of it with ranged requests: one
        // level of shards of a regular grid with the index at the end, which batches read in
        // parts; other shards stay whole in one batch.
        let splits = self
            .meta
            .sharding()
            .filter(|&level| shard::reads_ranges(self.meta, level));
        let per_shard = splits
            .map(|level| level.units_per_shard())
            .unwrap_or_default();
        let mut ranks: Option<Vec<usize>> = None;
        let mut part = Part::default();
        let mut batches: Vec<Vec<usize>> = Vec::new();
        for mut parts in by_shard {
            match (batches.last_mut(), splits) {
                (Some(last), _) if last.len() + parts.len() <= per_batch => last.extend(parts),
                (_, Some(level)) if parts.len() > per_batch => {
                    let ranks = ranks.get_or_insert_with(|| shard::morton_ranks(&per_shard));
                    let inner = self.meta.inner_chunks();
                    parts.sort_by_cached_key(|&i| {
                        self.part(i, &mut part);
                        ranks[shard::position_in_shard(level, inner, &part.index)]
                    });
                    batches.extend(parts.chunks(per_batch.max(1)).map(<[usize]>::to_vec));
                }
                _ => batches.push(parts),
            }
        }
        batches
    }

    /// Runs `work` for every part, in parallel on the pool when there is more than one.
    /// Each worker keeps its own [`Buffers`] for the call, so no chunk-sized allocation
    /// (and page faulting) happens per chunk.
    fn run<F>(&self, work: F) -> Result<()>
    where
        F: Fn(&mut Buffers) -> Result<()> + Sync,
    {
        self.run_parts(0..self.total, |buffers, _| work(buffers))
    }

    /// Runs `work` for the parts numbered in `parts` (given the part's number too), as
    /// [`Plan::run`] does.
    fn run_parts<F>(&self, parts: std::ops::Range<usize>, work: F) -> Result<()>
    where
        F: Fn(&mut Buffers, usize) -> Result<()> + Sync,
    {
        let first = parts.start;
        self.run_numbered(
            parts.len(),
            |n| first + n,
            |buffers, n| work(buffers, first + n),
        )
    }

    /// Runs `work` for the parts whose numbers `parts` lists (given its position in the
    /// list), as [`Plan::run`] does.
    fn run_list<F>(&self, parts: &[usize], work: F) -> Result<()>
    where
        F: Fn(&mut Buffers, usize) -> Result<()> + Sync,
    {
        self.run_numbered(parts.len(), |n| parts[n], work)
    }

    /// Runs `work` for `count` parts, the `n`-th being part number `number(n)` (`work` gets
    /// `n`).
    fn run_numbered<F, N>(&self, count: usize, number: N, work: F) -> Result<()>
    where
        F: Fn(&mut Buffers, usize) -> Result<()> + Sync,
        N: Fn(usize) -> usize + Sync,
    {
        self.run_count(count, |buffers, n| {
            let mut part = std::mem::take(&mut buffers.part);
            self.part(number(n), &mut part);
            buffers.part = part;
            work(buffers, n)
        })
    }

    /// Runs `work` `count` times (given the run's number), as [`Plan::run`] does; `work`
    /// chooses its part.
    fn run_count<F>(&self, count: usize, one: F) -> Result<()>
    where
        F: Fn(&mut Buffers, usize) -> Result<()> + Sync,
    {
        let reuse = &self.reuse;
        match count {
            0 => Ok(()),
            1 => {
                // One chunk runs in the calling thread, with buffers an earlier call kept.
                let mut buffers = kept_or_new();
                let result = one(&mut buffers, 0);
                if buffers.capacity() <= MAX_KEPT_SINGLE_BYTES {
                    keep(vec![buffers]);
                }
                result
            }
            _ => pool::pool()?.install(|| {
                (0..count)
                    .into_par_iter()
                    .try_for_each_init(|| reuse.lease_or(kept_or_new), |buffers, n| one(buffers, n))
            }),
        }
    }
}

impl Drop for Plan<'_> {
    /// Keeps the workers' buffers for the next call (see [`KEPT`]).
    fn drop(&mut self) {
        keep(self.reuse.take_all());
    }
}

/// The most bytes of chunks one batch of a pipelined write holds (at least one chunk or
/// shard; two on local files).
const WRITE_BATCH_BYTES: u64 = 16 << 20;

/// The most bytes of batches of a pipelined write being stored while the next is encoded
/// (at least one batch).
const WRITES_IN_FLIGHT_BYTES: u64 = 48 << 20;

/// Shards that may be this long or longer are written into the store as they are laid
/// out, where it can ([`Store::write_value`]); smaller ones are assembled in memory (a
/// value written so stays open until committed, and a batch holds many small ones).
const STREAMED_SHARD_BYTES: u64 = 4 << 20;

/// The most bytes of chunks one batch of a region read from an object store asks for at
/// once (at least one chunk, or a whole shard read whole).
const READ_BATCH_BYTES: u64 = 8 << 20;

/// Threads fetching batches of a region read from an object store at once, each waiting
/// for room in [`READS_IN_FLIGHT_BYTES`] before it starts a batch: more than the bytes
/// allow batches of at their largest, so that batches start while others' last requests
/// finish, and chunks of known lengths fill the bytes.
const READ_FETCHERS: usize = 8;

/// The most bytes of chunks of a region read from an object store in batches started and
/// not yet decoded (more when three of the largest batches take more, so that fetching and
/// decoding overlap). A chunk counts, until it arrives, at its length where a cached shard
/// index tells it, else at its largest encoded size; once arrived, at its stored length
/// (when left to be read one by one, at what it reserved). An answer several chunks share
/// (at most 2 MiB, or a shard read whole) is kept until its last chunk is decoded, and
/// holds at most twice what they count ([`crate::store::pieces`]).
const READS_IN_FLIGHT_BYTES: u64 = 40 << 20;

/// How far ahead of the decoding a read of local files asks the kernel to read them in.
const READ_AHEAD_BYTES: u64 = 64 << 20;

/// Reads the stored bytes of the parts numbered in `parts` from an object store in one batch
/// of concurrent requests: a whole value per chunk, or (sharded) indexes and then merged
/// ranges. The batch first reserves room in `arrivals` for what its parts may hold (false:
/// the read stopped before it started): a chunk's length where a cached shard index tells
/// it, else the largest a chunk may take. What was found for each part is handed to
/// `arrivals` as soon as its request answers, once per part: parts for which `held` is true
/// (their decoded chunk is cached) are not read and go at once, as [`Prefetched::Later`],
/// and parts the store's answer left out go so once the batch has answered. A chunk request
/// that fails ends the read at once ([`Arrivals::fail`]); a sharded batch's error is
/// returned when the batch has answered.
fn prefetch(
    store: &dyn Store,
    plan: &Plan,
    parts: &[usize],
    shards: &shard::IndexCache,
    held: &(dyn Fn(&str, &[u64]) -> bool + Sync),
    spares: &Spares,
    arrivals: &Arrivals,
) -> Result<bool> {
    let meta = plan.meta;
    let max_stored = meta.max_encoded_chunk_len();
    let sharding = meta.sharding();
    let mut part = Part::default();
    let count = parts.len();
    let mut keys = Vec::with_capacity(count);
    let mut indices = Vec::with_capacity(count);
    let mut wanted = Vec::with_capacity(count);
    let mut cached = Vec::new();
    let mut reserved = vec![0; count];
    for (n, &i) in parts.iter().enumerate() {
        plan.part(i, &mut part);
        let mut key = String::new();
        plan.key_of(&part.index, &mut key);
        if held(&key, &part.index) {
            cached.push(n);
            continue;
        }
        reserved[n] = sharding
            .and_then(|sharding| shard::cached_chunk_len(meta, sharding, shards, &key, &part.index))
            .map_or(max_stored, |len| len.min(max_stored));
        wanted.push(n);
        keys.push(key);
        indices.push(part.index.clone());
    }
    if !arrivals.reserve(reserved.iter().fold(0, |sum, &n| sum.saturating_add(n))) {
        return Ok(false);
    }
    let mut handed = vec![false; count];
    let mut hand = |n: usize, found: Prefetched| {
        if !std::mem::replace(&mut handed[n], true) {
            arrivals.arrive(parts[n], found, reserved[n]);
        }
    };
    for n in cached {
        hand(n, Prefetched::Later);
    }
    match sharding {
        Some(sharding) => {
            let chunks: Vec<(&str, &[u64])> = keys
                .iter()
                .map(String::as_str)
                .zip(indices.iter().map(|i| i.as_slice()))
                .collect();
            shard::read_inner_batch(
                store,
                meta,
                sharding,
                &chunks,
                shards,
                spares,
                &mut |w, found| hand(wanted[w], found),
            )?;
        }
        None => {
            let batch: Vec<Fetch> = keys
                .into_iter()
                .map(|k| Fetch::Whole(k, max_stored))
                .collect();
            store.fetch_each(&batch, spares, &mut |w, fetched| match fetched {
                Ok(Fetched::Whole(Some(bytes))) => hand(wanted[w], Prefetched::Bytes(bytes)),
                Ok(Fetched::Whole(None)) => hand(wanted[w], Prefetched::Missing),
                Ok(_) => hand(wanted[w], Prefetched::Later),
                Err(e) => arrivals.fail(e),
            });
        }
    }
    // Parts the store's answer left out.
    for n in 0..count {
        hand(n, Prefetched::Later);
    }
    Ok(true)
}

/// How far the pool has come in a read of local files in batches, for the thread asking
/// for the batches' files ahead of it: batch `b` is asked for once the pool has started on
/// batch `b - 1`.
#[derive(Default)]
struct ReadAhead {
    /// The batches started (the highest batch a worker took a part of, plus one), and
    /// whether the read ended (the asking thread then returns).
    state: std::sync::Mutex<(usize, bool)>,
    changed: std::sync::Condvar,
}

impl ReadAhead {
    /// Notes that batches up to `started - 1` are started.
    fn start(&self, started: usize) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if started > state.0 {
            state.0 = started;
            self.changed.notify_all();
        }
    }

    /// Waits until batch `b` may be asked for (true), or the read ended (false).
    fn wait_started(&self, b: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.0 < b && !state.1 {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        !state.1
    }

    /// Ends the read when dropped, however it ends (an error or a panic included).
    fn stop_on_drop(&self) -> impl Drop + '_ {
        struct Stop<'a>(&'a ReadAhead);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
                state.1 = true;
                self.0.changed.notify_all();
            }
        }
        Stop(self)
    }
}

/// Asks `store` to read ahead the objects holding the parts numbered `parts` that are
/// `wanted` (given the part and its object's key), each object once in a row.
fn read_ahead(
    store: &dyn Store,
    plan: &Plan,
    parts: impl IntoIterator<Item = usize>,
    wanted: impl Fn(&Part, &str) -> bool,
) {
    let (mut part, mut key, mut last) = (Part::default(), String::new(), String::new());
    for i in parts {
        plan.part(i, &mut part);
        plan.key_of(&part.index, &mut key);
        if key != last && wanted(&part, &key) {
            store.will_read(&key);
            std::mem::swap(&mut key, &mut last);
        }
    }
}

/// The shape the codecs encode the chunk at `index` (inner chunk grid) in: its own edges
/// on an unsharded rectilinear grid, else the inner chunk shape.
pub(crate) fn coded_shape<'m>(meta: &'m ArrayMeta, index: &[u64]) -> std::borrow::Cow<'m, [u64]> {
    if meta.chunks_vary() {
        meta.chunk_shape_at(index).into()
    } else {
        meta.inner_chunks().into()
    }
}

/// Decodes the stored chunk at `index` (inner chunk grid) into `out` (its exact decoded
/// size), still in stored byte order; errors name the chunk's `key`.
pub(crate) fn decode_chunk(
    meta: &ArrayMeta,
    key: &dyn std::fmt::Display,
    index: &[u64],
    raw: &[u8],
    out: &mut [u8],
    scratch: &mut Scratch,
) -> Result<()> {
    meta.chain()
        .decode_into(&meta.dtype, &coded_shape(meta, index), raw, out, scratch)
        .map_err(|e| match e {
            Error::Codec(m) => Error::Codec(format!("chunk \"{key}\": {m}")),
            other => other,
        })
}

/// Encodes the chunk at `index` (inner chunk grid) held in stored byte order (swapped in
/// place when the `bytes` codec writes the other order); errors name the chunk's `key`.
pub(crate) fn encode_chunk<'a>(
    meta: &ArrayMeta,
    key: &dyn std::fmt::Display,
    index: &[u64],
    data: &'a mut [u8],
    scratch: &'a mut Scratch,
) -> Result<&'a [u8]> {
    meta.chain()
        .encode(&meta.dtype, &coded_shape(meta, index), data, scratch)
        .map_err(|e| encoding_failed(key, e))
}

/// The error of a chunk whose encoding failed with `e`.
pub(crate) fn encoding_failed(key: &dyn std::fmt::Display, e: Error) -> Error {
    Error::Codec(format!("encoding chunk \"{key}\": {e}"))
}

/// One element's bytes of the fill value (zeros when it is null, allocated fallibly: an
/// item may be hundreds of MiB).
pub(crate) fn fill_pattern(meta: &ArrayMeta) -> Result<std::borrow::Cow<'_, [u8]>> {
    Ok(match &meta.fill_value {
        Some(bytes) => bytes.into(),
        None => crate::error::try_zeroed(meta.item_size(), "the fill value")?.into(),
    })
}

/// Reads `region` of the array whose chunk keys are joined to `base` into `buf` (native
/// byte order, elements at `buf_strides` as [`check`] returned them); shard indexes come
/// from and go to `shards` (the handle's), decoded chunks from and to `cache` when it is on.
#[allow(clippy::too_many_arguments)]
pub fn read(
    store: &dyn Store,
    base: &str,
    meta: &ArrayMeta,
    region: Region,
    buf_strides: Vec<usize>,
    buf: &mut [u8],
    shards: &shard::IndexCache,
    cache: &ChunkCache,
) -> Result<()> {
    let plan = Plan::new(meta, base, region, buf_strides)?;
    shards.begin_call()?;
    // The write generation this read starts at, when decoded chunks may be kept.
    let location = store.location();
    let location = location.as_deref();
    let started = cache.begin(location);
    let held =
        |key: &str, index: &[u64]| started.is_some() && cache.get(location, key, index).is_some();
    let out = SharedBuf::new(buf);
    let elem = meta.item_size();
    let swap = meta.dtype.needs_swap();
    let pattern = &plan.pattern;
    let buf_strides = &plan.buf_strides;
    let plain = meta.chain().is_plain(&meta.dtype);
    let max_stored = meta.max_encoded_chunk_len();
    // Reads a part's stored bytes into the worker's buffer: false when not stored.
    let fetch = |buffers: &mut Buffers| -> Result<bool> {
        let Buffers { part, key, raw, .. } = buffers;
        match meta.sharding() {
            None => store.get_into(key, raw, max_stored),
            Some(sharding) => {
                shard::read_inner(store, key, meta, sharding, &part.index, shards, raw)
            }
        }
    };
    // Copies a part's elements from its decoded chunk into the caller's buffer.
    let scatter = |part: &Part, decoded: &[u8]| -> Result<()> {
        let src = Layout {
            offset: part.chunk_offset,
            strides: &part.chunk_strides,
        };
        let dst = Layout {
            offset: part.buf_offset,
            strides: buf_strides,
        };
        // SAFETY: parts cover disjoint elements of the caller's buffer.
        unsafe {
            copy::copy_raw(
                elem,
                &part.extent,
                decoded,
                &src,
                out.as_mut_ptr(),
                out.len(),
                &dst,
            )
        }
    };
    // Places a part from the cache: false when its chunk is not held.
    let from_cache = |buffers: &Buffers| -> Result<bool> {
        let Some(hit) =
            started.and_then(|_| cache.get(location, &buffers.key, &buffers.part.index))
        else {
            return Ok(false);
        };
        scatter(&buffers.part, &hit).map(|()| true)
    };
    // Decodes a part's stored bytes (the fill value when not stored) into the caller's
    // buffer (and the cache), with `work` as the work buffers.
    let place = |part: &Part, key: &str, work: &mut ChunkWork, stored: Option<&[u8]>| {
        let dst = Layout {
            offset: part.buf_offset,
            strides: buf_strides,
        };
        let Some(raw) = stored else {
            // SAFETY: parts cover disjoint elements of the caller's buffer.
            return unsafe {
                copy::fill_raw(&part.extent, pattern, out.as_mut_ptr(), out.len(), &dst)
            };
        };
        let chunk_bytes = part.chunk_bytes;
        if started.is_none()
            && part.whole_chunk
            && is_single_run(&part.extent, &part.chunk_strides, buf_strides)
        {
            // SAFETY: this part's elements are one run that no other part touches.
            let target = unsafe { out.slice_mut(part.buf_offset * elem, chunk_bytes)? };
            decode_chunk(meta, &key, &part.index, raw, target, &mut work.scratch)?;
            if swap {
                swap_bytes(target, meta.dtype.swap_unit());
            }
            return Ok(());
        }
        // Uncompressed chunks in this machine's byte order scatter straight from the bytes
        // read; others are decoded into the worker's chunk buffer first.
        let decoded: &[u8] = if started.is_none() && plain && !swap && raw.len() == chunk_bytes {
            raw
        } else {
            try_resize(&mut work.chunk, chunk_bytes, "a decoded chunk")?;
            decode_chunk(
                meta,
                &key,
                &part.index,
                raw,
                &mut work.chunk,
                &mut work.scratch,
            )?;
            if swap {
                swap_bytes(&mut work.chunk, meta.dtype.swap_unit());
            }
            if let Some(generation) = started {
                cache.insert(location, key, &part.index, &work.chunk, generation);
            }
            &work.chunk
        };
        scatter(part, decoded)
    };
    // Reads an uncompressed chunk that is one run of the caller's buffer straight into it,
    // where the store can (files): false when it cannot, and the part is read as usual.
    let read_direct = |buffers: &mut Buffers| -> Result<bool> {
        let part = &buffers.part;
        if started.is_some()
            || !plain
            || swap
            || meta.sharding().is_some()
            || !part.whole_chunk
            || !is_single_run(&part.extent, &part.chunk_strides, buf_strides)
        {
            return Ok(false);
        }
        // SAFETY: this part's elements are one run that no other part touches.
        let target = unsafe { out.slice_mut(part.buf_offset * elem, part.chunk_bytes)? };
        match store.read_exact_into(&buffers.key, target)? {
            Some(true) => Ok(true),
            Some(false) => place(part, &buffers.key, &mut buffers.work, None).map(|()| true),
            None => Ok(false),
        }
    };
    // Places a part from the stored bytes read into the worker's buffer (if `found`).
    let place_read = |buffers: &mut Buffers, found: bool| {
        place(
            &buffers.part,
            &buffers.key,
            &mut buffers.work,
            found.then_some(&buffers.raw),
        )
    };
    // With the cache on, the parts it holds are copied out first, in the calling thread (a
    // read the cache serves whole needs no worker); the others are read below.
    let parts: Vec<usize> = match started {
        None => (0..plan.total).collect(),
        Some(_) => {
            let mut buffers = Buffers::default();
            let mut misses = Vec::new();
            for i in 0..plan.total {
                plan.part(i, &mut buffers.part);
                plan.key_of(&buffers.part.index, &mut buffers.key);
                if !from_cache(&buffers)? {
                    misses.push(i);
                }
            }
            misses
        }
    };
    // Local files are read ahead only for reads of more than one batch of them.
    let hints = store.concurrency() <= 1
        && store.reads_ahead()
        && (parts.len() as u64).saturating_mul(max_stored) > READ_AHEAD_BYTES;
    if (store.concurrency() <= 1 && !hints) || parts.len() <= 1 {
        if store.reads_ahead() && parts.len() > 1 {
            // A few chunks of local files: all asked for at once, so that the disk reads
            // them together rather than as the workers come to them.
            read_ahead(store, &plan, parts.iter().copied(), |_, _| true);
        }
        return plan.run_list(&parts, |buffers, _| {
            plan.key_of(&buffers.part.index, &mut buffers.key);
            if read_direct(buffers)? {
                return Ok(());
            }
            let found = fetch(buffers)?;
            place_read(buffers, found)
        });
    }
    // The buffers of decoded chunks are filled again by the chunks fetched after them (a
    // batch's worth kept, and as much again for the batches' differing sizes).
    let spares = &Spares::holding(2 * READ_BATCH_BYTES as usize);
    // Places a part from what was fetched for it.
    let use_fetched = |buffers: &mut Buffers, fetched: Prefetched| -> Result<()> {
        plan.key_of(&buffers.part.index, &mut buffers.key);
        if from_cache(buffers)? {
            return Ok(());
        }
        match fetched {
            Prefetched::Bytes(bytes) => {
                spares.give(std::mem::replace(&mut buffers.raw, bytes));
                place_read(buffers, true)
            }
            // Decoded from the shared buffer where it lies; the last of its chunks to be
            // placed gives the buffer back.
            Prefetched::Within(shared, range) => {
                let placed = place(
                    &buffers.part,
                    &buffers.key,
                    &mut buffers.work,
                    Some(&shared[range]),
                );
                if let Some(bytes) = std::sync::Arc::into_inner(shared) {
                    spares.give(bytes);
                }
                placed
            }
            Prefetched::Missing => place_read(buffers, false),
            Prefetched::Later => {
                let found = fetch(buffers)?;
                place_read(buffers, found)
            }
        }
    };
    if store.concurrency() <= 1 {
        // Local files in batches (a shard's together, unless it is larger than a batch):
        // the kernel is asked to read each batch's files in once the pool has started on
        // the batch before it. The pool takes the parts in batch order without waiting at
        // the end of a batch, so a worker done early goes on to the next one.
        let batches = plan.spread_batches(&parts, read_ahead_len(max_stored));
        let order: Vec<usize> = batches.concat();
        let mut batch_of = Vec::with_capacity(order.len());
        for (b, batch) in batches.iter().enumerate() {
            batch_of.extend(std::iter::repeat_n(b, batch.len()));
        }
        let ahead = ReadAhead::default();
        let next = std::sync::atomic::AtomicUsize::new(0);
        return std::thread::scope(|scope| {
            // Opening files and asking may wait on the device: a thread of its own asks.
            scope.spawn(|| {
                for (b, batch) in batches.iter().enumerate() {
                    if !ahead.wait_started(b) {
                        return;
                    }
                    read_ahead(store, &plan, batch.iter().copied(), |part, key| {
                        !held(key, &part.index)
                    });
                }
            });
            let _stop = ahead.stop_on_drop();
            plan.run_count(order.len(), |buffers, _| {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n == 0 || batch_of[n] != batch_of[n - 1] {
                    ahead.start(batch_of[n] + 1);
                }
                plan.part(order[n], &mut buffers.part);
                use_fetched(buffers, Prefetched::Later)
            })
        });
    }
    // Object stores: the parts in batches (a shard's together, unless it is larger than a
    // batch), each fetched by concurrent requests; several batches are in flight, within
    // READS_IN_FLIGHT_BYTES, and the pool decodes each part as its request answers.
    let per_batch =
        (READ_BATCH_BYTES / max_stored.max(1)).clamp(1, 4 * store.concurrency() as u64) as usize;
    let batches = plan.spread_batches(&parts, per_batch);
    let plan = &plan;
    let largest =
        (batches.iter().map(Vec::len).max().unwrap_or(1) as u64).saturating_mul(max_stored);
    let arrivals = Arrivals::new(READS_IN_FLIGHT_BYTES.max(largest.saturating_mul(3)));
    let next_batch = std::sync::atomic::AtomicUsize::new(0);
    let fetch_batches = || loop {
        let b = next_batch.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(batch) = batches.get(b) else {
            return;
        };
        let fetched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            prefetch(store, plan, batch, shards, &held, spares, &arrivals)
        }));
        match fetched {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => return,
            Ok(Err(e)) => return arrivals.fail(e),
            Err(panic) => {
                return arrivals.fail(Error::Internal(format!(
                    "fetching chunks panicked: {}",
                    crate::error::panic_text(panic.as_ref())
                )))
            }
        }
    };
    let decoded = std::thread::scope(|scope| {
        // However the read ends, fetchers still waiting for room return.
        let _stop = arrivals.stop_on_drop();
        for _ in 0..READ_FETCHERS.min(batches.len()) {
            scope.spawn(fetch_batches);
        }
        // One arrival per part, unless the read stops early. Every part taken gives its
        // bytes back, even when placing it fails or panics (a panic stops the read before
        // it unwinds, since the other workers wait for parts until then).
        plan.run_count(parts.len(), |buffers, _| {
            let Some((i, fetched, reserved)) = arrivals.take() else {
                return Ok(());
            };
            plan.part(i, &mut buffers.part);
            let placed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                use_fetched(buffers, fetched)
            }));
            arrivals.release(reserved);
            match placed {
                Ok(Ok(())) => {}
                Ok(Err(e)) => arrivals.fail(e),
                Err(panic) => {
                    arrivals.stop();
                    std::panic::resume_unwind(panic)
                }
            }
            Ok(())
        })
    });
    // Read once every fetcher has ended, so that no error recorded late is missed.
    let read = decoded.and(arrivals.failure());
    debug_assert!(
        read.is_err() || arrivals.reserved() == 0,
        "a read that decoded every part gave back every byte it reserved"
    );
    read
}

/// Builds the new content of the chunk of `part`: the caller's elements merged over
/// `existing` (its stored bytes; the fill value when `None` or when the part covers every
/// element in bounds), then encoded, with `work` as the work buffers. `None`: the chunk
/// equals the fill value and is not stored (unless `keep_fill`).
pub(super) fn merged_chunk<'w>(
    plan: &Plan,
    part: &Part,
    existing: Option<&[u8]>,
    label: &dyn std::fmt::Display,
    buf: &'w [u8],
    work: &'w mut ChunkWork,
    keep_fill: bool,
) -> Result<Option<&'w [u8]>> {
    let meta = plan.meta;
    let pattern = &plan.pattern;
    let ChunkWork { chunk, scratch } = work;
    // A whole chunk that is one run of the caller's buffer, in the stored byte order, is
    // encoded from there when the codecs leave their input as it is: no copy.
    if part.whole_chunk
        && !meta.dtype.needs_swap()
        && meta.chain().encodes_without_change(&meta.dtype)
        && is_single_run(&part.extent, &part.chunk_strides, &plan.buf_strides)
    {
        let at = part.buf_offset * meta.item_size();
        if let Some(run) = buf.get(at..at.saturating_add(part.chunk_bytes)) {
            if !keep_fill && meta.fill_value.is_some() && all_equal(run, pattern) {
                return Ok(None);
            }
            let shape = coded_shape(meta, &part.index);
            return meta
                .chain()
                .encode_shared(&meta.dtype, &shape, run, scratch)
                .map(Some)
                .map_err(|e| encoding_failed(label, e));
        }
    }
    try_resize(chunk, part.chunk_bytes, "a chunk")?;
    match existing {
        Some(raw) if !part.all_in_bounds => {
            decode_chunk(meta, label, &part.index, raw, chunk, scratch)?;
            if meta.dtype.needs_swap() {
                swap_bytes(chunk, meta.dtype.swap_unit());
            }
        }
        // A whole chunk needs no initial content.
        _ if part.whole_chunk => {}
        _ => copy::fill(chunk, pattern),
    }
    let src = Layout {
        offset: part.buf_offset,
        strides: &plan.buf_strides,
    };
    let dst = Layout {
        offset: part.chunk_offset,
        strides: &part.chunk_strides,
    };
    copy::copy(meta.item_size(), &part.extent, buf, &src, chunk, &dst)?;
    if !keep_fill && meta.fill_value.is_some() && all_equal(chunk, pattern) {
        return Ok(None);
    }
    if meta.dtype.needs_swap() {
        swap_bytes(chunk, meta.dtype.swap_unit());
    }
    encode_chunk(meta, label, &part.index, chunk, scratch).map(Some)
}

/// Writes `buf` (native byte order, elements at `buf_strides`) into `region` of the array
/// whose chunk keys are joined to `base`. Chunks the region covers are written without
/// being read; others are read, merged and rewritten. A chunk equal to the fill value is
/// erased instead of stored. Sharded arrays write each touched shard once.
pub fn write(
    store: &dyn Store,
    base: &str,
    meta: &ArrayMeta,
    region: Region,
    buf_strides: Vec<usize>,
    buf: &[u8],
    guard: &WriteGuard,
) -> Result<()> {
    let plan = Plan::new(meta, base, region, buf_strides)?;
    if let Some(sharding) = meta.sharding() {
        return write_shards(store, &plan, sharding, buf, guard);
    }
    let max_stored = meta.max_encoded_chunk_len();
    let keep_fill = guard.keeps_empty();
    // Writes the worker's part; with `defer`, a chunk that needs no read is returned to be
    // stored with others instead.
    let write_one = |buffers: &mut Buffers, defer: bool| -> Result<Option<Upload>> {
        let Buffers {
            part,
            key,
            raw,
            work,
        } = buffers;
        plan.key_of(&part.index, key);
        // Held until the chunk is stored, so read-modify-writes never interleave.
        let _lock = guard.lock(key)?;
        let mut retry = Retry::default();
        loop {
            let snapshot = guard.read(store, key, !part.all_in_bounds, raw, max_stored)?;
            let existing = snapshot.found.then_some(raw.as_slice());
            let label = key.as_str();
            let merged = merged_chunk(&plan, part, existing, &label, buf, work, keep_fill)?;
            if defer {
                let merged = merged.map(<[u8]>::to_vec);
                return Ok(Some(Upload::Whole(key.clone(), merged)));
            }
            if guard.store(store, key, merged, &snapshot)? {
                return Ok(None);
            }
            retry.again(key)?;
        }
    };
    // A chunk the region covers in part is read first: its edge chunks (the first and the
    // last part) tell whether any is.
    let reads = plan.total > 1
        && [0, plan.total - 1].iter().any(|&flat| {
            let mut part = Part::default();
            plan.part(flat, &mut part);
            !part.all_in_bounds
        });
    if !pipelines(store, guard, plan.total, reads) {
        return plan.run(|buffers| write_one(buffers, false).map(drop));
    }
    let per_batch = write_batch_len(store, max_stored);
    // Local files: the chunks of the next batch that must be read (covered in part) are
    // read ahead while this batch is merged and encoded.
    let to_merge = |part: &Part, _: &str| !part.all_in_bounds;
    pipelined(store, plan.total, per_batch, max_stored, |parts| {
        if store.reads_ahead() {
            if parts.start == 0 {
                read_ahead(store, &plan, parts.clone(), to_merge);
            }
            let next = parts.end..(parts.end + per_batch).min(plan.total);
            read_ahead(store, &plan, next, to_merge);
        }
        let uploads = std::sync::Mutex::new(Vec::new());
        plan.run_parts(parts, |buffers, _| {
            if let Some(upload) = write_one(buffers, true)? {
                uploads
                    .lock()
                    .map_err(|_| Error::Internal("upload list poisoned".into()))?
                    .push(upload);
            }
            Ok(())
        })?;
        uploads
            .into_inner()
            .map_err(|_| Error::Internal("upload list poisoned".into()))
    })
}

/// What a pipelined write hands to the thread storing a batch.
enum Upload<'s> {
    /// A value to store at a key (`None`: erase the key), with [`Store::put_many`].
    Whole(String, Option<Vec<u8>>),
    /// A value written already ([`Store::write_value`]), to commit.
    Written(Box<dyn ValueWriter + 's>),
}

/// Stores a batch of uploads: the whole values with one [`Store::put_many`], then the
/// written ones committed (synced now, each on a thread of its own); every upload is tried
/// and the first error returned.
fn store_batch<'s>(store: &'s dyn Store, uploads: Vec<Upload<'s>>) -> Result<()> {
    let (mut whole, mut written) = (Vec::new(), Vec::new());
    for upload in uploads {
        match upload {
            Upload::Whole(key, value) => whole.push((key, value)),
            Upload::Written(value) => written.push(value),
        }
    }
    let first = match whole.is_empty() {
        true => Ok(()),
        false => store.put_many(whole),
    };
    let committed = std::thread::scope(|scope| {
        let committing: Vec<_> = written
            .into_iter()
            .map(|value| scope.spawn(move || value.commit(true)))
            .collect();
        committing
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err(Error::Internal("a committing thread panicked".into())))
            })
            .fold(Ok(()), Result::and)
    });
    first.and(committed)
}

/// Whether a write of `units` chunks or shards goes by pipelined batches, the pool encoding
/// one batch while the store writes the one before: on stores whose requests wait on the
/// network or that write better behind the encoding (synced local files), or that read
/// ahead when the write `reads` chunks (local files: the next batch's are read in while
/// this one is merged), without locks or conditional writes (which store each chunk as
/// they rewrite it).
fn pipelines(store: &dyn Store, guard: &WriteGuard, units: usize, reads: bool) -> bool {
    (store.concurrency() > 1 || store.writes_behind() || (reads && store.reads_ahead()))
        && units > 1
        && matches!(guard, WriteGuard::None)
}

/// Chunks (or shards) of at most `max_len` stored bytes per batch of a read of local files:
/// [`READ_AHEAD_BYTES`] of them, at least two.
fn read_ahead_len(max_len: u64) -> usize {
    (READ_AHEAD_BYTES / max_len.max(1)).clamp(2, 1024) as usize
}

/// Chunks (or shards) of at most `max_len` stored bytes per batch of a pipelined write:
/// [`WRITE_BATCH_BYTES`] of them, up to 4 per request in flight (at least two on local
/// files, which the pool encodes in parallel).
fn write_batch_len(store: &dyn Store, max_len: u64) -> usize {
    let fit = WRITE_BATCH_BYTES / max_len.max(1);
    match store.concurrency() {
        0 | 1 => fit.clamp(2, 1024) as usize,
        requests => fit.clamp(1, 4 * requests as u64) as usize,
    }
}

/// Writes `total` units of at most `max_len` stored bytes by batches of `per_batch`:
/// `encode` makes a batch's uploads (on the pool), and they are stored ([`store_batch`]:
/// one [`Store::put_many`], every request in flight at once) on a thread of their own
/// while the next batch is encoded; batches are stored at once up to [`WRITES_IN_FLIGHT_BYTES`]
/// (at least one), so that requests stay in flight while a batch's last ones finish.
fn pipelined<'s, F>(
    store: &'s dyn Store,
    total: usize,
    per_batch: usize,
    max_len: u64,
    encode: F,
) -> Result<()>
where
    F: Fn(std::ops::Range<usize>) -> Result<Vec<Upload<'s>>> + Sync,
{
    let in_flight =
        (WRITES_IN_FLIGHT_BYTES / (per_batch as u64).saturating_mul(max_len).max(1)).max(1);
    let finish = |sending: std::thread::ScopedJoinHandle<'_, Result<()>>| {
        sending
            .join()
            .map_err(|_| Error::Internal("an uploading thread panicked".into()))?
    };
    std::thread::scope(|scope| -> Result<()> {
        let mut sending = std::collections::VecDeque::new();
        for lo in (0..total).step_by(per_batch) {
            let uploads = encode(lo..(lo + per_batch).min(total))?;
            while sending.len() as u64 >= in_flight {
                finish(sending.pop_front().expect("a batch being stored"))?;
            }
            sending.push_back(scope.spawn(move || store_batch(store, uploads)));
        }
        sending.into_iter().try_for_each(finish)
    })
}

/// Writes the shards a region touches, each once: inner chunks the region touches are
/// merged and re-encoded (in parallel), the others keep their stored bytes; nested shards
/// are rebuilt the same way, level by level.
fn write_shards(
    store: &dyn Store,
    plan: &Plan,
    sharding: ShardLevel<'_>,
    buf: &[u8],
    guard: &WriteGuard,
) -> Result<()> {
    let meta = plan.meta;
    // The shards touched: those holding the first and last inner chunks of the plan.
    let first = meta.shard_of_chunk(&plan.first);
    let last: Vec<u64> = (0..meta.rank())
        .map(|d| (plan.first[d] + plan.counts[d]).saturating_sub(1))
        .collect();
    let last = meta.shard_of_chunk(&last);
    let counts: Vec<u64> = (0..meta.rank())
        .map(|d| match plan.counts[d] {
            0 => 0,
            _ => last[d] - first[d] + 1,
        })
        .collect();
    let total = if counts.contains(&0) {
        0
    } else {
        counts.iter().product::<u64>() as usize
    };
    let max_shard = meta.max_stored_len();
    // Rewrites the shard numbered `flat`; with `defer`, a shard that needs no read is
    // returned to be stored with others instead.
    let write_one = |flat: usize, defer: bool| -> Result<Option<Upload>> {
        let mut shard_index = vec![0u64; meta.rank()];
        let mut rest = flat as u64;
        for d in (0..meta.rank()).rev() {
            shard_index[d] = first[d] + rest % counts[d];
            rest /= counts[d];
        }
        let mut key = String::new();
        meta.chunk_key_into(plan.base, &shard_index, &mut key);
        let _lock = guard.lock(&key)?;
        // This shard's first inner chunk and shape (shards of a rectilinear grid differ).
        let (origin, shape) = meta.shard_bounds(&shard_index);
        let sharding = ShardLevel {
            shape: &shape,
            codec: sharding.codec,
        };
        let partial = !covers(plan, &origin, sharding.shape);
        let deferred = defer && !partial;
        let mut old = Vec::new();
        let mut retry = Retry::default();
        loop {
            let snapshot = guard.read(store, &key, partial, &mut old, max_shard)?;
            let existing = snapshot.found.then_some(old.as_slice());
            let pool = pool::pool()?;
            // Stored whatever it holds, a shard that may be large goes into the store as it
            // is laid out where the store takes values so: it is never held whole.
            let writer = match snapshot.unconditional() && max_shard >= STREAMED_SHARD_BYTES {
                true => store.write_value(&key)?,
                false => None,
            };
            let mut bytes = match writer {
                Some(writer) => {
                    let build =
                        || build_shard(plan, sharding, &origin, existing, &key, buf, writer);
                    match pool.install(build)? {
                        Some(written) if deferred => return Ok(Some(Upload::Written(written))),
                        Some(written) => return written.commit(false).map(|()| None),
                        None => None,
                    }
                }
                None => {
                    let build =
                        || build_shard(plan, sharding, &origin, existing, &key, buf, Vec::new());
                    pool.install(build)?
                }
            };
            if bytes.is_none() && guard.keeps_empty() {
                bytes = Some(shard::empty(sharding, &sharding.units_per_shard())?);
            }
            if deferred {
                return Ok(Some(Upload::Whole(key, bytes)));
            }
            if guard.store(store, &key, bytes.as_deref(), &snapshot)? {
                return Ok(None);
            }
            retry.again(&key)?;
        }
    };
    if let WriteGuard::Locks(_) = guard {
        // One shard after another, each locked by the calling thread: a pool thread that
        // held a lock while waiting for the shard's chunks would run other jobs meanwhile,
        // and one needing the same lock would deadlock.
        return (0..total).try_for_each(|flat| write_one(flat, false).map(drop));
    }
    let pool = pool::pool()?;
    if !pipelines(store, guard, total, false) {
        return pool.install(|| {
            (0..total)
                .into_par_iter()
                .try_for_each(|flat| write_one(flat, false).map(drop))
        });
    }
    pipelined(
        store,
        total,
        write_batch_len(store, max_shard),
        max_shard,
        |shards| {
            let uploads: Vec<Option<Upload>> = pool.install(|| {
                shards
                    .into_par_iter()
                    .map(|flat| write_one(flat, true))
                    .collect::<Result<_>>()
            })?;
            Ok(uploads.into_iter().flatten().collect())
        },
    )
}

/// The element box of `shape` whose first chunk is `origin` (chunk grid), clipped to the
/// array: `(lo, hi)` per dimension.
fn unit_box(plan: &Plan, origin: &[u64], shape: &[u64]) -> Vec<(u64, u64)> {
    (0..plan.meta.rank())
        .map(|d| {
            let lo = origin[d] * plan.chunks[d];
            (lo, (lo + shape[d]).min(plan.meta.shape[d]))
        })
        .collect()
}

/// The region covers every element of the array inside the unit of `shape` at `origin`.
fn covers(plan: &Plan, origin: &[u64], shape: &[u64]) -> bool {
    let region = plan.region;
    unit_box(plan, origin, shape)
        .iter()
        .enumerate()
        .all(|(d, &(lo, hi))| region.start[d] <= lo && region.start[d] + region.count[d] >= hi)
}

/// The region meets the unit of `shape` at `origin`.
fn meets(plan: &Plan, origin: &[u64], shape: &[u64]) -> bool {
    let region = plan.region;
    unit_box(plan, origin, shape)
        .iter()
        .enumerate()
        .all(|(d, &(lo, hi))| region.start[d] < hi && region.start[d] + region.count[d] > lo)
}

/// Encodes the shard of layout `sharding` whose first chunk is `origin` (chunk grid) into
/// `out`: `old` holds its stored bytes (if any); chunks the region meets are merged and
/// re-encoded, the other units keep their bytes. `None` when no unit is stored.
fn build_shard<S: ShardSink>(
    plan: &Plan,
    sharding: ShardLevel<'_>,
    origin: &[u64],
    old: Option<&[u8]>,
    label: &str,
    buf: &[u8],
    out: S,
) -> Result<Option<S>> {
    let touches = |at: &[u64], unit: &[u64]| meets(plan, at, unit);
    let encode = |at: &[u64],
                  old: Option<&[u8]>,
                  label: &dyn std::fmt::Display,
                  work: &mut ChunkWork|
     -> Result<Option<Vec<u8>>> {
        let mut part = Part {
            index: at.into(),
            ..Part::default()
        };
        plan.locate(&mut part);
        Ok(merged_chunk(plan, &part, old, label, buf, work, false)?.map(<[u8]>::to_vec))
    };
    let meta = plan.meta;
    shard::rebuild(meta, sharding, origin, old, label, &touches, &encode, out)
}

#[cfg(test)]
mod tests {
    use super::{Plan, ReadAhead, Region};

    /// The asking thread waits until the pool has started the batch before the one it asks
    /// for, and returns (false) once the read ends, even while it waits: a read that fails
    /// or panics never leaves it waiting.
    #[test]
    fn read_ahead_waits_for_the_pool_and_ends_with_the_read() {
        let ahead = ReadAhead::default();
        assert!(
            ahead.wait_started(0),
            "the first batch is asked for at once"
        );
        ahead.start(2);
        assert!(
            ahead.wait_started(2),
            "batch 1 is started: batch 2 may be asked for"
        );
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| ahead.wait_started(5));
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(
                !waiting.is_finished(),
                "batch 5 was asked for before batch 4 started"
            );
            drop(ahead.stop_on_drop());
            assert!(
                !waiting.join().unwrap(),
                "the asking thread went on after the read"
            );
        });
        assert!(
            !ahead.wait_started(0),
            "a read that ended asks for nothing more"
        );
    }

    /// Parts handed out one after another lie apart in the caller's buffer: the grid
    /// dimension of the smallest buffer stride (that the region spans more than one chunk
    /// of) varies slowest.
    #[test]
    fn spread_puts_the_dimension_of_the_smallest_stride_outermost() {
        let meta = crate::meta::v2::parse_array(
            br#"{"zarr_format": 2, "shape": [4, 4, 4], "chunks": [2, 2, 2], "dtype": "<u2",
                "compressor": null, "fill_value": 0, "order": "C", "filters": null}"#,
        )
        .unwrap();
        let order = |start: &[u64], count: &[u64], buf_strides: Vec<usize>| {
            let region = Region { start, count };
            let plan = Plan::new(&meta, "a", region, buf_strides).unwrap();
            let mut parts: Vec<usize> = (0..plan.total).collect();
            plan.spread(&mut parts);
            parts
        };
        let whole = ([0, 0, 0], [4, 4, 4]);
        assert_eq!(
            order(&whole.0, &whole.1, vec![16, 4, 1]),
            [0, 2, 4, 6, 1, 3, 5, 7],
            "C order: the last dimension outermost"
        );
        assert_eq!(
            order(&whole.0, &whole.1, vec![1, 4, 16]),
            [0, 1, 2, 3, 4, 5, 6, 7],
            "Fortran order: the first dimension outermost, which is C order's first"
        );
        assert_eq!(
            order(&[0, 0, 0], &[4, 4, 2], vec![8, 2, 1]),
            [0, 2, 1, 3],
            "one chunk along the last dimension: the middle one is outermost"
        );
    }
}
