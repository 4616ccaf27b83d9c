//! Chunks encoded where the data is and objects stored whole from them elsewhere: what a
//! parallel writer uses so that every process encodes its own chunks and one process
//! stores each object (the MPI layer's aggregators), as HDF5's collective writes of
//! filtered datasets compress on every rank and write from a few.

use super::copy::all_equal;
use super::lock::{Retry, WriteGuard};
use super::region::{coded_shape, encode_chunk, encoding_failed, fill_pattern, with_kept_work};
use super::shard;
use super::shard::ChunkWork;
use crate::error::{Error, Result};
use crate::meta::ArrayMeta;
use crate::store::Store;

/// The inner chunk grid's extent along each dimension: the grid whose chunks the codecs
/// encode (inside the shards when sharded).
fn inner_grid(meta: &ArrayMeta) -> Result<Vec<u64>> {
    match meta.sharding() {
        None => Ok(meta.chunk_grid()),
        Some(_) if meta.is_rectilinear() => Err(Error::Unsupported(
            "encoded chunks of a sharded array with a rectilinear grid".into(),
        )),
        Some(_) => Ok(meta
            .shape
            .iter()
            .zip(meta.inner_chunks())
            .map(|(&s, &c)| s.div_ceil(c))
            .collect()),
    }
}

/// Checks that `index` (`what` grid) lies in `grid`.
fn check_index(index: &[u64], grid: &[u64], what: &str) -> Result<()> {
    if index.len() != grid.len() {
        return Err(Error::RankMismatch(format!(
            "a {what} index of {} dimensions for an array of {}",
            index.len(),
            grid.len()
        )));
    }
    if let Some(d) = (0..grid.len()).find(|&d| index[d] >= grid[d]) {
        return Err(Error::OutOfBounds(format!(
            "{what} index {index:?}: dimension {d} has {} {what}s",
            grid[d]
        )));
    }
    Ok(())
}

/// Bytes of the decoded chunk at `index` (inner chunk grid): the whole chunk, past the
/// array's edge too.
fn chunk_bytes(meta: &ArrayMeta, index: &[u64]) -> usize {
    coded_shape(meta, index).iter().product::<u64>() as usize * meta.item_size()
}

/// The chunk at `index` (inner chunk grid) holding the fill value everywhere.
fn fill_chunk(meta: &ArrayMeta, index: &[u64]) -> Result<Vec<u8>> {
    let mut chunk = Vec::new();
    crate::error::try_resize(
        &mut chunk,
        chunk_bytes(meta, index),
        "a chunk of fill values",
    )?;
    super::copy::fill(&mut chunk, &fill_pattern(meta)?);
    Ok(chunk)
}

/// Encodes the whole chunk at `index` (inner chunk grid) from `data`: its elements in the
/// array's type, native byte order, C order, past the array's edge too; `use_encoding`
/// gets the encoding, or `None` when the chunk equals the fill value and such chunks are
/// not stored (`keep_fill` false). The encoding is made from `data` where the codecs
/// allow, in work buffers kept from call to call.
pub fn encode_unit<R>(
    meta: &ArrayMeta,
    index: &[u64],
    data: &[u8],
    keep_fill: bool,
    use_encoding: impl FnOnce(Option<&[u8]>) -> R,
) -> Result<R> {
    if meta.dtype.is_variable() {
        return Err(Error::Unsupported(
            "encoded chunks of variable-length items".into(),
        ));
    }
    check_index(index, &inner_grid(meta)?, "chunk")?;
    let bytes = chunk_bytes(meta, index);
    if data.len() != bytes {
        return Err(Error::BufferSize(format!(
            "chunk {index:?} holds {bytes} bytes; the buffer has {}",
            data.len()
        )));
    }
    if !keep_fill && meta.fill_value.is_some() && all_equal(data, &fill_pattern(meta)?) {
        return Ok(use_encoding(None));
    }
    let label = format!("{index:?}");
    with_kept_work(|ChunkWork { chunk, scratch }| {
        let chain = meta.chain();
        let encoded = if chain.encodes_without_change(&meta.dtype) && !meta.dtype.needs_swap() {
            chain
                .encode_shared(&meta.dtype, &coded_shape(meta, index), data, scratch)
                .map_err(|e| encoding_failed(&label, e))?
        } else {
            crate::error::try_resize(chunk, bytes, "a chunk to encode")?;
            chunk.copy_from_slice(data);
            if meta.dtype.needs_swap() {
                crate::dtype::swap_bytes(chunk, meta.dtype.swap_unit());
            }
            encode_chunk(meta, &label, index, chunk, scratch)?
        };
        Ok(use_encoding(Some(encoded)))
    })
}

/// How many encoded chunks [`write_object`] takes for the object at `index`: the inner
/// chunks of its shard, or one.
pub fn units_of(meta: &ArrayMeta, index: &[u64]) -> Result<usize> {
    check_index(index, &meta.chunk_grid(), "object")?;
    let Some(sharding) = meta.sharding() else {
        return Ok(1);
    };
    if sharding.inner().is_some() {
        return Err(Error::Unsupported(
            "encoded chunks of an array with nested shards".into(),
        ));
    }
    inner_grid(meta)?;
    crate::error::count_of(&sharding.units_per_shard(), "inner chunks per shard")
}

/// Checks that no unit of the shard at `index` (`per_shard` units) is given for an inner
/// chunk wholly past the array's edge (readers never look there).
fn check_inside(
    meta: &ArrayMeta,
    per_shard: Vec<u64>,
    index: &[u64],
    units: &[Option<&[u8]>],
) -> Result<()> {
    let grid = inner_grid(meta)?;
    for (position, _) in units.iter().enumerate().filter(|(_, u)| u.is_some()) {
        let mut rest = position as u64;
        for d in (0..per_shard.len()).rev() {
            let inner = index[d] * per_shard[d] + rest % per_shard[d];
            rest /= per_shard[d];
            if inner >= grid[d] {
                return Err(Error::InvalidArg(format!(
                    "encoded chunk {position} of shard {index:?} lies past the array's edge \
                     (dimension {d}): give none for it"
                )));
            }
        }
    }
    Ok(())
}

/// Stores the object (chunk, or shard) at `index` of the array whose keys are joined to
/// `base`, whole, from `units`: encodings made by [`encode_unit`] of its chunks (its inner
/// chunks in C order when sharded; `None`: not stored, read as the fill value). An object
/// of no stored unit is erased (or, where the guard keeps empty objects, stored empty).
pub fn write_object(
    store: &dyn Store,
    base: &str,
    meta: &ArrayMeta,
    guard: &WriteGuard,
    index: &[u64],
    units: &[Option<&[u8]>],
) -> Result<()> {
    let expected = units_of(meta, index)?;
    if units.len() != expected {
        return Err(Error::InvalidArg(format!(
            "object {index:?} takes {expected} encoded chunks; {} were given",
            units.len()
        )));
    }
    let max = meta.max_encoded_chunk_len();
    if let Some(i) = units
        .iter()
        .position(|u| u.is_some_and(|u| u.len() as u64 > max))
    {
        return Err(Error::InvalidArg(format!(
            "encoded chunk {i} of object {index:?} is longer than any encoding of a chunk \
             of this array ({max} bytes)"
        )));
    }
    if let Some(sharding) = meta.sharding() {
        check_inside(meta, sharding.units_per_shard(), index, units)?;
    }
    let mut key = String::new();
    meta.chunk_key_into(base, index, &mut key);
    let mut bytes = match meta.sharding() {
        None => units[0].map(<[u8]>::to_vec),
        Some(level) => shard::assemble(level, &level.units_per_shard(), units)?,
    };
    if bytes.is_none() && guard.keeps_empty() {
        // Versioned rewrites never erase: the object is stored as the fill value.
        bytes = match meta.sharding() {
            Some(level) => Some(shard::empty(level, &level.units_per_shard())?),
            None => encode_unit(meta, index, &fill_chunk(meta, index)?, true, |e| {
                e.map(<[u8]>::to_vec)
            })?,
        };
    }
    let _lock = guard.lock(&key)?;
    let mut retry = Retry::default();
    let mut old = Vec::new();
    loop {
        let snapshot = guard.read(store, &key, false, &mut old, meta.max_stored_len())?;
        if guard.store(store, &key, bytes.as_deref(), &snapshot)? {
            return Ok(());
        }
        retry.again(&key)?;
    }
}
