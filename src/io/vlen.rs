//! Variable-length arrays (strings, bytes, numeric arrays): chunks in numcodecs' vlen
//! format — the item count, then each item as a 32-bit length and its bytes, all little
//! endian — read and written by region, item by item.

use super::lock::{Retry, WriteGuard};
use super::pool;
use super::region::{check_bounds, Region};
use super::shard;
use crate::codec::chain::{ArrayToBytes, Scratch};
use crate::dtype::{swap_bytes, DType, DataKind};
use crate::error::{count_of, Error, Result};
use crate::meta::{ArrayMeta, Order, ShardLevel};
use crate::store::{get_bounded, join_key, Store};
use std::borrow::Cow;
use std::collections::HashMap;

pub use crate::meta::MAX_VLEN_CHUNK_BYTES;

/// Items of a region, in the order asked for: item `i` is `data[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlenItems {
    /// `len() + 1` offsets into `data`, starting at 0.
    pub offsets: Vec<u64>,
    /// The items' bytes, back to back.
    pub data: Vec<u8>,
}

impl Default for VlenItems {
    fn default() -> Self {
        VlenItems {
            offsets: vec![0],
            data: Vec::new(),
        }
    }
}

impl VlenItems {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Every item, in order.
    pub fn slices(&self) -> Vec<&[u8]> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// Appends an item.
    pub fn push(&mut self, item: &[u8]) {
        self.data.extend_from_slice(item);
        self.offsets.push(self.data.len() as u64);
    }
}

/// Encodes items in the vlen format.
pub fn encode_items<'a>(items: impl ExactSizeIterator<Item = &'a [u8]>) -> Result<Vec<u8>> {
    let too_big = || Error::Codec("a vlen item or item count exceeds 32 bits".into());
    let mut out = Vec::new();
    out.extend_from_slice(
        &u32::try_from(items.len())
            .map_err(|_| too_big())?
            .to_le_bytes(),
    );
    for item in items {
        out.extend_from_slice(
            &u32::try_from(item.len())
                .map_err(|_| too_big())?
                .to_le_bytes(),
        );
        out.extend_from_slice(item);
    }
    Ok(out)
}

/// Decodes a vlen buffer holding `expected` items into the byte range of each item, checking
/// that every length stays inside the buffer and that nothing follows the last item.
pub fn decode_items(data: &[u8], expected: usize) -> Result<Vec<std::ops::Range<usize>>> {
    let word = |at: usize| -> Result<usize> {
        data.get(at..at + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize)
            .ok_or_else(|| {
                Error::Codec(format!(
                    "vlen data ends at byte {} inside a length field",
                    data.len()
                ))
            })
    };
    let count = word(0)?;
    if count != expected {
        return Err(Error::Codec(format!(
            "vlen data holds {count} items, the chunk has {expected}"
        )));
    }
    // Every item takes at least its 4-byte length: a count the data cannot hold reserves
    // no more than the data allows (and fails below when the lengths run out).
    let mut ranges = Vec::with_capacity(count.min(data.len() / 4));
    let mut at = 4;
    for i in 0..count {
        let len = word(at)?;
        let start = at + 4;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| {
                Error::Codec(format!(
                    "vlen item {i} of {len} bytes runs past the end of the data ({} bytes)",
                    data.len()
                ))
            })?;
        ranges.push(start..end);
        at = end;
    }
    if at != data.len() {
        return Err(Error::Codec(format!(
            "vlen data has {} bytes after its last item",
            data.len() - at
        )));
    }
    Ok(ranges)
}

/// A decoded variable-length chunk: its vlen bytes and where each item lies in them.
struct Decoded {
    data: Vec<u8>,
    ranges: Vec<std::ops::Range<usize>>,
}

impl Decoded {
    /// Item `i` (in stored form).
    fn get(&self, i: usize) -> &[u8] {
        &self.data[self.ranges[i].clone()]
    }
}

/// Decodes a stored variable-length chunk of `shape`, checking every item.
fn decode_chunk(
    meta: &ArrayMeta,
    key: &dyn std::fmt::Display,
    raw: Vec<u8>,
    shape: &[u64],
) -> Result<Decoded> {
    let result = (|| {
        let data =
            meta.chain()
                .decode_bytes_owned(raw, MAX_VLEN_CHUNK_BYTES, &mut Scratch::default())?;
        let (data, ranges) = match meta.chain().array_to_bytes {
            ArrayToBytes::JsonItems(_) => super::json_items::decode(&data, shape)?,
            _ => {
                let elements = shape.iter().product::<u64>() as usize;
                let ranges = decode_items(&data, elements)?;
                (data, ranges)
            }
        };
        for (i, range) in ranges.iter().enumerate() {
            check_item(&meta.dtype, &data[range.clone()])
                .map_err(|m| Error::Codec(format!("item {i}: {m}")))?;
        }
        Ok(Decoded { data, ranges })
    })();
    result.map_err(|e| match e {
        Error::Codec(m) => Error::Codec(format!("chunk \"{key}\": {m}")),
        other => other,
    })
}

/// Checks items given for an array of `dtype` before anything is stored: strings must be
/// UTF-8, arrays a whole number of elements.
pub fn check_items(dtype: &DType, items: &[&[u8]]) -> Result<()> {
    for (i, item) in items.iter().enumerate() {
        check_item(dtype, item).map_err(|m| Error::InvalidArg(format!("item {i}: {m}")))?;
    }
    Ok(())
}

/// Checks one item against the array's type: strings must be UTF-8, arrays a whole number
/// of elements.
fn check_item(dtype: &DType, item: &[u8]) -> std::result::Result<(), String> {
    match &dtype.kind {
        DataKind::String => std::str::from_utf8(item)
            .map(|_| ())
            .map_err(|e| format!("not valid UTF-8 ({e})")),
        DataKind::VlenArray(inner) if !item.len().is_multiple_of(inner.item_size()) => {
            Err(format!(
                "{} bytes are not a whole number of {} elements",
                item.len(),
                inner.to_v2()
            ))
        }
        _ => Ok(()),
    }
}

/// An item in stored form from memory form or back: numeric array items are byte-swapped
/// when the stored order is not this machine's; other items are borrowed as they are.
fn to_or_from_stored<'a>(dtype: &DType, item: &'a [u8]) -> Cow<'a, [u8]> {
    match &dtype.kind {
        DataKind::VlenArray(inner) if inner.needs_swap() => {
            let mut out = item.to_vec();
            swap_bytes(&mut out, inner.swap_unit());
            Cow::Owned(out)
        }
        _ => Cow::Borrowed(item),
    }
}

/// The chunks a region touches and, for each element of the region in the order asked for,
/// its chunk (by position in the list) and index inside that chunk.
struct ItemMap {
    chunks: Vec<Vec<u64>>,
    items: Vec<(usize, usize)>,
}

fn map_items(meta: &ArrayMeta, region: Region, order: Order) -> Result<ItemMap> {
    check_bounds(meta, region)?;
    let rank = meta.rank();
    let count = count_of(region.count, "region element count")?;
    let chunk_strides = meta.chunk_strides();
    let chunks = meta.inner_chunks();
    let rectilinear = meta.chunks_vary();
    // The chunk holding index `at` of dimension `d`, and the index inside it.
    let locate = |d: usize, at: u64| match rectilinear {
        true => {
            let c = meta.chunk_of(d, at);
            (c, at - meta.chunk_span(d, c).0)
        }
        false => (at / chunks[d], at % chunks[d]),
    };
    let dims: Vec<usize> = match order {
        Order::C => (0..rank).rev().collect(),
        Order::F => (0..rank).collect(),
    };
    // The chunks the region touches form a box: each gets a slot by its C-order place in
    // it (at most one slot per element, so the table fits), filled when first met.
    let first: Vec<u64> = (0..rank).map(|d| locate(d, region.start[d]).0).collect();
    let extent: Vec<u64> = (0..rank)
        .map(|d| match region.count[d] {
            0 => 0,
            n => locate(d, region.start[d] + n - 1).0 - first[d] + 1,
        })
        .collect();
    // A rectilinear grid's chunks each have their own strides, by slot.
    let mut slot_chunk_strides: Vec<Vec<usize>> = Vec::new();
    let mut at_chunk = vec![(0u64, 0u64); rank];
    let slot_strides = Order::C.strides(&extent);
    let mut slots: Vec<usize> = vec![
        usize::MAX;
        if count == 0 {
            0
        } else {
            count_of(&extent, "chunk count")?
        }
    ];
    let mut touched = Vec::new();
    let mut items = Vec::with_capacity(count);
    let mut index = vec![0u64; rank];
    for _ in 0..count {
        let mut slot = 0usize;
        for d in 0..rank {
            at_chunk[d] = locate(d, region.start[d] + index[d]);
            slot += (at_chunk[d].0 - first[d]) as usize * slot_strides[d];
        }
        if slots[slot] == usize::MAX {
            slots[slot] = touched.len();
            let chunk: Vec<u64> = at_chunk.iter().map(|&(c, _)| c).collect();
            if rectilinear {
                slot_chunk_strides.push(meta.chain().chunk_strides(&meta.chunk_shape_at(&chunk)));
            }
            touched.push(chunk);
        }
        let strides = match rectilinear {
            true => &slot_chunk_strides[slots[slot]],
            false => &chunk_strides,
        };
        let inner = (0..rank).map(|d| at_chunk[d].1 as usize * strides[d]).sum();
        items.push((slots[slot], inner));
        // Advance the region index in the order asked for.
        for &d in &dims {
            index[d] += 1;
            if index[d] < region.count[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(ItemMap {
        chunks: touched,
        items,
    })
}

/// The fill item (the fill value's bytes; empty when it is null), in stored form.
fn fill_item(meta: &ArrayMeta) -> Vec<u8> {
    to_or_from_stored(&meta.dtype, meta.fill_value.as_deref().unwrap_or(&[])).into_owned()
}

/// The key of the stored object holding the chunk at `index`: its own, or its shard's.
fn object_key(path: &str, meta: &ArrayMeta, index: &[u64]) -> String {
    match meta.sharding() {
        None => join_key(path, &meta.chunk_key(index)),
        Some(_) => join_key(path, &meta.chunk_key(&meta.shard_of_chunk(index))),
    }
}

/// Reads the chunks of `map` in parallel (from their shards when sharded): `None` for a
/// missing chunk.
fn read_chunks(
    store: &dyn Store,
    path: &str,
    meta: &ArrayMeta,
    chunks: &[Vec<u64>],
) -> Result<Vec<Option<Decoded>>> {
    let indexes = shard::IndexCache::default();
    let read_one = |index: &Vec<u64>| -> Result<Option<Decoded>> {
        let key = object_key(path, meta, index);
        let raw = match meta.sharding() {
            None => get_bounded(store, &key, meta.max_encoded_chunk_len())?,
            Some(sharding) => {
                let mut raw = Vec::new();
                shard::read_inner(store, &key, meta, sharding, index, &indexes, &mut raw)?
                    .then_some(raw)
            }
        };
        match raw {
            Some(raw) => decode_chunk(meta, &key, raw, &meta.chunk_shape_at(index)).map(Some),
            None => Ok(None),
        }
    };
    pool::map_each(chunks, read_one)
}

/// Reads the items of `region` of the variable-length array at `path`, in `order`.
pub fn read(
    store: &dyn Store,
    path: &str,
    meta: &ArrayMeta,
    region: Region,
    order: Order,
) -> Result<VlenItems> {
    let map = map_items(meta, region, order)?;
    let chunks = read_chunks(store, path, meta, &map.chunks)?;
    let fill = fill_item(meta);
    let mut out = VlenItems::default();
    out.offsets.reserve(map.items.len());
    for &(chunk, inner) in &map.items {
        let stored = chunks[chunk].as_ref().map_or(&fill[..], |c| c.get(inner));
        match &meta.dtype.kind {
            DataKind::VlenArray(_) => out.push(&to_or_from_stored(&meta.dtype, stored)),
            _ => out.push(stored),
        }
    }
    Ok(out)
}

/// Writes `items` (one per element of `region`, in `order`) into the variable-length array
/// at `path`. Every item is checked before anything is stored; chunks the region covers
/// only partly are read, merged and rewritten, each under its lock.
pub fn write(
    store: &dyn Store,
    path: &str,
    meta: &ArrayMeta,
    region: Region,
    order: Order,
    items: &[&[u8]],
    guard: &WriteGuard,
) -> Result<()> {
    let map = map_items(meta, region, order)?;
    if items.len() != map.items.len() {
        return Err(Error::BufferSize(format!(
            "the region has {} elements but {} items were given",
            map.items.len(),
            items.len()
        )));
    }
    check_items(&meta.dtype, items)?;
    let mut per_chunk: Vec<Vec<(usize, usize)>> = vec![Vec::new(); map.chunks.len()];
    for (i, &(chunk, inner)) in map.items.iter().enumerate() {
        per_chunk[chunk].push((inner, i));
    }
    let fill = fill_item(meta);
    // The chunk of `shape` with `updates` applied over `old` (its stored bytes), encoded.
    let merge = |label: &dyn std::fmt::Display,
                 old: Option<&[u8]>,
                 updates: &[(usize, usize)],
                 shape: &[u64]|
     -> Result<Vec<u8>> {
        let total = shape.iter().product::<u64>() as usize;
        let existing = match old {
            Some(raw) if updates.len() < total => {
                Some(decode_chunk(meta, label, raw.to_vec(), shape)?)
            }
            _ => None,
        };
        let mut chunk: Vec<Cow<[u8]>> = (0..total)
            .map(|j| Cow::Borrowed(existing.as_ref().map_or(&fill[..], |c| c.get(j))))
            .collect();
        for &(inner, i) in updates {
            chunk[inner] = to_or_from_stored(&meta.dtype, items[i]);
        }
        let items = chunk.iter().map(|item| &item[..]);
        let encoded = match meta.chain().array_to_bytes {
            ArrayToBytes::JsonItems(_) => super::json_items::encode(items, shape)?,
            _ => encode_items(items)?,
        };
        let mut scratch = Scratch::default();
        meta.chain()
            .encode_bytes(&encoded, &mut scratch)
            .map(<[u8]>::to_vec)
            .map_err(|e| Error::Codec(format!("encoding chunk \"{label}\": {e}")))
    };
    let Some(sharding) = meta.sharding() else {
        let write_one = |&(index, updates): &(&Vec<u64>, &Vec<(usize, usize)>)| -> Result<()> {
            let key = join_key(path, &meta.chunk_key(index));
            let _lock = guard.lock(&key)?;
            let shape = meta.chunk_shape_at(index);
            let total = shape.iter().product::<u64>() as usize;
            let (mut old, mut retry) = (Vec::new(), Retry::default());
            loop {
                let partial = updates.len() < total;
                let max = meta.max_encoded_chunk_len();
                let snapshot = guard.read(store, &key, partial, &mut old, max)?;
                let merged = merge(&key, snapshot.found.then_some(&old[..]), updates, &shape)?;
                if guard.store(store, &key, Some(&merged), &snapshot)? {
                    return Ok(());
                }
                retry.again(&key)?;
            }
        };
        let work: Vec<_> = map.chunks.iter().zip(&per_chunk).collect();
        return pool::map_each(&work, write_one).map(drop);
    };
    // Sharded: each shard the region touches is rebuilt once, its other chunks kept.
    let updates_of: HashMap<&[u64], &[(usize, usize)]> = map
        .chunks
        .iter()
        .map(Vec::as_slice)
        .zip(per_chunk.iter().map(Vec::as_slice))
        .collect();
    // The touched chunks of each shard, so a shard's units are matched against its own.
    let mut by_shard: std::collections::BTreeMap<Vec<u64>, Vec<&[u64]>> = Default::default();
    for index in &map.chunks {
        by_shard
            .entry(meta.shard_of_chunk(index))
            .or_default()
            .push(index);
    }
    let shards: Vec<_> = by_shard.into_iter().collect();
    let max_shard = meta.max_stored_len();
    let encode = |at: &[u64],
                  old: Option<&[u8]>,
                  label: &dyn std::fmt::Display,
                  _: &mut shard::ChunkWork|
     -> Result<Option<Vec<u8>>> {
        match updates_of.get(at) {
            Some(updates) => merge(label, old, updates, meta.inner_chunks()).map(Some),
            None => Ok(old.map(<[u8]>::to_vec)),
        }
    };
    let inner = meta.inner_chunks();
    let write_shard = |(shard_index, touched): &(Vec<u64>, Vec<&[u64]>)| -> Result<()> {
        let touches = |at: &[u64], unit: &[u64]| {
            touched.iter().any(|index| {
                (0..index.len()).all(|d| index[d] >= at[d] && index[d] < at[d] + unit[d] / inner[d])
            })
        };
        let key = join_key(path, &meta.chunk_key(shard_index));
        let _lock = guard.lock(&key)?;
        // This shard's first inner chunk and shape (shards of a rectilinear grid differ).
        let (origin, shape) = meta.shard_bounds(shard_index);
        let sharding = ShardLevel {
            shape: &shape,
            codec: sharding.codec,
        };
        let (mut old, mut retry) = (Vec::new(), Retry::default());
        loop {
            let snapshot = guard.read(store, &key, true, &mut old, max_shard)?;
            let existing = snapshot.found.then_some(&old[..]);
            let rebuild = || {
                shard::rebuild(
                    meta,
                    sharding,
                    &origin,
                    existing,
                    &key,
                    &touches,
                    &encode,
                    Vec::new(),
                )
            };
            let mut bytes = pool::pool()?.install(rebuild)?;
            if bytes.is_none() && guard.keeps_empty() {
                bytes = Some(shard::empty(sharding, &sharding.units_per_shard())?);
            }
            if guard.store(store, &key, bytes.as_deref(), &snapshot)? {
                return Ok(());
            }
            retry.again(&key)?;
        }
    };
    if let WriteGuard::Locks(_) = guard {
        // Shard by shard from the calling thread (see `region::write`: a lock held on a pool
        // thread waiting for nested work can deadlock).
        return shards.iter().try_for_each(write_shard);
    }
    pool::map_each(&shards, write_shard).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlen_format_round_trips_and_rejects_bad_lengths() {
        let items: [&[u8]; 3] = [b"", b"ab", "\u{1F600}".as_bytes()];
        let encoded = encode_items(items.iter().copied()).unwrap();
        assert_eq!(&encoded[..8], &[3, 0, 0, 0, 0, 0, 0, 0]);
        let ranges = decode_items(&encoded, 3).unwrap();
        let back: Vec<&[u8]> = ranges.into_iter().map(|r| &encoded[r]).collect();
        assert_eq!(back, items);
        assert!(decode_items(&encoded, 2).is_err());
        assert!(decode_items(&encoded[..encoded.len() - 1], 3).is_err());
        let mut long = encoded.clone();
        long.push(0);
        assert!(decode_items(&long, 3).is_err());
        // A length running past the end.
        assert!(decode_items(&[1, 0, 0, 0, 255, 255, 255, 255, 1], 1).is_err());
        assert!(decode_items(&[1, 0], 1).is_err());
    }
}
