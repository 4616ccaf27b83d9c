//! Shards (v3 `sharding_indexed`): one stored object per shard holding encoded inner chunks
//! and an index of (offset, size) pairs, little- or big-endian 64-bit, run through the
//! index codecs (`crc32c`), at the start or the end. Reads fetch the index and then only
//! the byte range of each inner chunk they need.

use crate::error::{Error, Result};
use crate::meta::dtype::ByteOrder;
use crate::meta::{ArrayMeta, Sharding};
use crate::store::Store;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Offset and size of an inner chunk that is not stored.
pub(crate) const EMPTY: u64 = u64::MAX;

/// A decoded shard index: (offset, size) of each inner chunk in C order.
type Index = Arc<Vec<(u64, u64)>>;

/// Shard indexes already read during one region read, by shard key (`None`: no shard).
#[derive(Debug, Default)]
pub struct IndexCache(Mutex<HashMap<String, Option<Index>>>);

fn encode_u64s(values: impl Iterator<Item = u64>, endian: ByteOrder) -> Vec<u8> {
    values
        .flat_map(|v| match endian {
            ByteOrder::Big => v.to_be_bytes(),
            _ => v.to_le_bytes(),
        })
        .collect()
}

/// The encoded size of an index of `n` entries: 16 bytes each, plus 4 per `crc32c`
/// (the only index codec the metadata layer accepts, so the size is fixed).
fn index_len(sharding: &Sharding, n: usize) -> usize {
    16 * n + 4 * sharding.index_codecs.len()
}

fn encode_index(sharding: &Sharding, entries: &[(u64, u64)]) -> Result<Vec<u8>> {
    let raw = encode_u64s(
        entries.iter().flat_map(|&(o, s)| [o, s]),
        sharding.index_endian,
    );
    sharding
        .index_codecs
        .iter()
        .try_fold(raw, |data, codec| codec.encode(&data))
}

/// Decodes and checks the index of the shard `bytes` (stored at `key`): every stored
/// chunk lies inside the shard, outside the index, and no two overlap.
pub fn decode_index(
    sharding: &Sharding,
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
    let index_bytes = if sharding.index_at_start {
        &bytes[..len]
    } else {
        &bytes[bytes.len() - len..]
    };
    let entries = parse_index(sharding, index_bytes, n, key)?;
    let (lo, hi) = if sharding.index_at_start {
        (len as u64, bytes.len() as u64)
    } else {
        (0, (bytes.len() - len) as u64)
    };
    check_entries(&entries, lo, hi, key)?;
    Ok(entries)
}

fn parse_index(
    sharding: &Sharding,
    encoded: &[u8],
    n: usize,
    key: &str,
) -> Result<Vec<(u64, u64)>> {
    let mut data = std::borrow::Cow::Borrowed(encoded);
    for codec in sharding.index_codecs.iter().rev() {
        data = std::borrow::Cow::Owned(codec.decode_outer(&data).map_err(|e| match e {
            Error::Codec(m) => Error::Codec(format!("shard {key:?} index: {m}")),
            other => other,
        })?);
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
        match sharding.index_endian {
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

/// Reads the encoded bytes of the inner chunk at `index` (inner chunk grid) from its shard
/// at `key`: the index once per shard and call, then only that chunk's byte range.
pub fn read_inner(
    store: &dyn Store,
    key: &str,
    meta: &ArrayMeta,
    sharding: &Sharding,
    index: &[u64],
    cache: &IndexCache,
) -> Result<Option<Vec<u8>>> {
    let per_shard = sharding.chunks_per_shard(&meta.chunks);
    let n: usize = per_shard.iter().product::<u64>() as usize;
    let position = index
        .iter()
        .zip(&per_shard)
        .fold(0u64, |acc, (i, p)| acc * p + i % p) as usize;
    let cached = cache
        .0
        .lock()
        .map_err(|_| Error::Internal("shard cache poisoned".into()))?
        .get(key)
        .cloned();
    let entries = match cached {
        Some(entries) => entries,
        None => {
            let entries = match store.size(key)? {
                None => None,
                Some(size) => {
                    let len = index_len(sharding, n) as u64;
                    if size < len {
                        return Err(Error::Codec(format!(
                            "shard {key:?} is shorter than its index ({size} < {len} bytes)"
                        )));
                    }
                    let at = if sharding.index_at_start {
                        0
                    } else {
                        size - len
                    };
                    let bytes = store.get_range(key, at, len)?.ok_or_else(|| {
                        Error::Io(format!("shard {key:?} vanished while reading"))
                    })?;
                    let entries = parse_index(sharding, &bytes, n, key)?;
                    let (lo, hi) = if sharding.index_at_start {
                        (len, size)
                    } else {
                        (0, size - len)
                    };
                    check_entries(&entries, lo, hi, key)?;
                    Some(Arc::new(entries))
                }
            };
            cache
                .0
                .lock()
                .map_err(|_| Error::Internal("shard cache poisoned".into()))?
                .insert(key.to_string(), entries.clone());
            entries
        }
    };
    let Some(entries) = entries else {
        return Ok(None);
    };
    let (offset, size) = entries[position];
    if offset == EMPTY {
        return Ok(None);
    }
    store.get_range(key, offset, size)
}

/// Lays out a shard from its encoded inner chunks (`None`: not stored), with the index at
/// the start or the end; `None` when no chunk is stored (the shard is then not stored).
pub fn assemble(sharding: &Sharding, chunks: &[Option<Vec<u8>>]) -> Result<Option<Vec<u8>>> {
    if chunks.iter().all(Option::is_none) {
        return Ok(None);
    }
    let base = if sharding.index_at_start {
        index_len(sharding, chunks.len()) as u64
    } else {
        0
    };
    let mut entries = Vec::with_capacity(chunks.len());
    let mut data = Vec::with_capacity(chunks.iter().flatten().map(Vec::len).sum());
    for chunk in chunks {
        match chunk {
            None => entries.push((EMPTY, EMPTY)),
            Some(bytes) => {
                entries.push((base + data.len() as u64, bytes.len() as u64));
                data.extend_from_slice(bytes);
            }
        }
    }
    let index = encode_index(sharding, &entries)?;
    Ok(Some(if sharding.index_at_start {
        [index, data].concat()
    } else {
        [data, index].concat()
    }))
}
