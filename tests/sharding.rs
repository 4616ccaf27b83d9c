//! Sharded v3 arrays: exact round trips, ranged reads (counted), one write per shard,
//! empty inner chunks and shards, and corrupt indexes.

use crate::common;

use common::counting::Counting;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{Durability, FilesystemStore, MemoryStore, Store};

fn values(n: usize, offset: i32) -> Vec<u8> {
    (0..n as i32)
        .flat_map(|v| (v + offset).to_ne_bytes())
        .collect()
}

fn sharded(store: Arc<dyn Store>) -> Array {
    let mut builder = ArrayBuilder::new(vec![10, 12], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![2, 3])
        .shard_shape(vec![4, 6])
        .fill_value_json(json!(-1))
        .compressor(json!({"id": "zstd", "level": 1}));
    builder.create(store, "s", Mode::Overwrite).unwrap()
}

#[test]
fn sharded_round_trip_and_ranged_reads() {
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let array = sharded(store.clone());
    let doc: serde_json::Value =
        serde_json::from_slice(&store.get("s/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["chunk_grid"]["configuration"]["chunk_shape"],
        json!([4, 6])
    );
    assert_eq!(doc["codecs"][0]["name"], "sharding_indexed");
    assert_eq!(
        doc["codecs"][0]["configuration"]["chunk_shape"],
        json!([2, 3])
    );

    counting.reset();
    let data = values(120, 1000);
    array
        .write(&[0, 0], &[10, 12], ElementType::Int32, Order::C, &data)
        .unwrap();
    assert_eq!(
        counting.counts().2,
        3 * 2,
        "one write per shard (3x2 shards)"
    );
    assert_eq!(
        counting.counts().0,
        0,
        "whole shards are written without reading"
    );
    let mut out = vec![0u8; data.len()];
    array
        .read(&[0, 0], &[10, 12], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, data);

    // A region inside one inner chunk: the shard's index and that chunk's bytes only.
    counting.reset();
    let mut one = vec![0u8; 4];
    array
        .read(&[5, 7], &[1, 1], ElementType::Int32, Order::C, &mut one)
        .unwrap();
    assert_eq!(
        i32::from_ne_bytes(one.try_into().unwrap()),
        1000 + 5 * 12 + 7
    );
    let (gets, ranges, _, bytes) = counting.counts();
    let shard_size = store.size("s/c/1/1").unwrap().unwrap();
    assert_eq!((gets, ranges), (0, 2), "index range + chunk range");
    let index = 4 * 16 + 4;
    assert!(
        bytes - index < (shard_size - index) / 2,
        "read {bytes} of a {shard_size}-byte shard"
    );

    // A partial write rewrites each touched shard once.
    counting.reset();
    array
        .write(
            &[3, 5],
            &[2, 2],
            ElementType::Int32,
            Order::C,
            &values(4, -50),
        )
        .unwrap();
    assert_eq!(counting.counts().2, 4, "the region touches 4 shards");
    array
        .read(&[0, 0], &[10, 12], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    let got: Vec<i32> = out
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got[3 * 12 + 5], -50);
    assert_eq!(got[4 * 12 + 6], -47);
    assert_eq!(got[0], 1000);
    assert_eq!(got[119], 1119);
}

#[test]
fn empty_chunks_and_shards_are_not_stored() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = sharded(store.clone());
    let fill: Vec<u8> = [-1i32; 120].iter().flat_map(|v| v.to_ne_bytes()).collect();
    array
        .write(&[0, 0], &[10, 12], ElementType::Int32, Order::C, &fill)
        .unwrap();
    assert_eq!(
        store.list_prefix("s/c").unwrap(),
        Vec::<String>::new(),
        "all-fill shards are not stored"
    );
    array
        .write(
            &[0, 0],
            &[1, 1],
            ElementType::Int32,
            Order::C,
            &7i32.to_ne_bytes(),
        )
        .unwrap();
    let shard = store.get("s/c/0/0").unwrap().unwrap();
    // 4 inner chunks: one stored, three empty (offset and size 2^64-1), then the crc32c.
    let index = &shard[shard.len() - 4 * 16 - 4..shard.len() - 4];
    let empties = index
        .chunks(16)
        .filter(|e| e.iter().all(|&b| b == 0xff))
        .count();
    assert_eq!(empties, 3);
    array
        .write(
            &[0, 0],
            &[1, 1],
            ElementType::Int32,
            Order::C,
            &(-1i32).to_ne_bytes(),
        )
        .unwrap();
    assert!(
        store.get("s/c/0/0").unwrap().is_none(),
        "a shard left all fill is erased"
    );
}

#[test]
fn corrupt_shard_indexes_are_errors_naming_the_shard() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = sharded(store.clone());
    array
        .write(
            &[0, 0],
            &[10, 12],
            ElementType::Int32,
            Order::C,
            &values(120, 0),
        )
        .unwrap();
    let good = store.get("s/c/0/0").unwrap().unwrap();
    let mut out = vec![0u8; 4];
    let mut bad_crc = good.clone();
    let n = bad_crc.len();
    bad_crc[n - 10] ^= 1;
    store.set("s/c/0/0", &bad_crc).unwrap();
    let err = array
        .read(&[0, 0], &[1, 1], ElementType::Int32, Order::C, &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("s/c/0/0") && err.contains("crc32c"), "{err}");
    array
        .read(&[9, 11], &[1, 1], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    assert_eq!(
        i32::from_ne_bytes(out.clone().try_into().unwrap()),
        119,
        "other shards still read"
    );
    store.set("s/c/0/0", &good[..10]).unwrap();
    let err = array
        .read(&[0, 0], &[1, 1], ElementType::Int32, Order::C, &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("shorter than its index"), "{err}");
    // An index pointing past the data.
    let mut past = good.clone();
    let index_start = past.len() - 4 * 16 - 4;
    past[index_start..index_start + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let crc = crc32c_of(&past[index_start..past.len() - 4]);
    let len = past.len();
    past[len - 4..].copy_from_slice(&crc.to_le_bytes());
    store.set("s/c/0/0", &past).unwrap();
    let err = array
        .read(&[0, 0], &[1, 1], ElementType::Int32, Order::C, &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("outside the data"), "{err}");
}

/// CRC-32C (Castagnoli), bit by bit: an independent check of the codec's checksums.
fn crc32c_of(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn sharded_arrays_copy_with_and_without_re_encoding() {
    let source: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = sharded(source.clone());
    let data = values(120, 7);
    array
        .write(&[0, 0], &[10, 12], ElementType::Int32, Order::C, &data)
        .unwrap();
    for compressor in [
        None,
        Some(json!({"id": "gzip", "level": 1})),
        Some(json!(null)),
    ] {
        let target: Arc<dyn Store> = Arc::new(MemoryStore::new());
        zarr::node::copy(
            &source,
            "s",
            &target,
            "t",
            compressor.as_ref(),
            Mode::CreateNew,
        )
        .unwrap();
        let copied = Array::open(target.clone(), "t", Mode::Read).unwrap();
        assert!(copied.metadata().sharding().is_some());
        let mut out = vec![0u8; data.len()];
        copied
            .read(&[0, 0], &[10, 12], ElementType::Int32, Order::C, &mut out)
            .unwrap();
        assert_eq!(out, data, "copy with {compressor:?}");
    }
}

/// Shards of 8x12 holding inner shards of 4x6 holding chunks of 2x3.
fn nested(store: Arc<dyn Store>, codec: serde_json::Value) -> Array {
    let mut builder = ArrayBuilder::new(vec![10, 12], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![2, 3])
        .shard_shape(vec![8, 12])
        .inner_shard_shape(vec![4, 6])
        .fill_value_json(json!(-1))
        .compressor(codec);
    builder.create(store, "n", Mode::Overwrite).unwrap()
}

fn ints(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// The (offset, size) entries of a little-endian index with crc32c at the end of `shard`.
fn end_index(shard: &[u8], n: usize) -> Vec<(u64, u64)> {
    index_entries(shard, n, false, true)
}

#[test]
fn nested_shards_round_trip_with_ranged_reads() {
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let array = nested(store.clone(), json!({"id": "zstd", "level": 1}));
    let doc: serde_json::Value =
        serde_json::from_slice(&store.get("n/zarr.json").unwrap().unwrap()).unwrap();
    let outer = &doc["codecs"][0]["configuration"];
    assert_eq!(
        doc["chunk_grid"]["configuration"]["chunk_shape"],
        json!([8, 12])
    );
    assert_eq!(outer["chunk_shape"], json!([4, 6]));
    assert_eq!(outer["codecs"][0]["name"], "sharding_indexed");
    assert_eq!(
        outer["codecs"][0]["configuration"]["chunk_shape"],
        json!([2, 3])
    );
    assert_eq!(
        outer["codecs"][0]["configuration"]["codecs"][1]["name"],
        "zstd"
    );

    counting.reset();
    let mut model: Vec<i32> = (0..120).map(|v| v + 1000).collect();
    let data: Vec<u8> = model.iter().flat_map(|v| v.to_ne_bytes()).collect();
    array
        .write(&[0, 0], &[10, 12], ElementType::Int32, Order::C, &data)
        .unwrap();
    assert_eq!(counting.counts().2, 2, "one write per outer shard");
    assert_eq!(counting.counts().0, 0, "whole shards are not read");

    // Reopened from its metadata, one element costs three ranged reads: the outer index,
    // the inner shard's index and the chunk.
    let array = Array::open(store.clone(), "n", Mode::ReadWrite).unwrap();
    assert_eq!(array.metadata().inner_chunks(), [2, 3]);
    counting.reset();
    let mut one = vec![0u8; 4];
    array
        .read(&[5, 7], &[1, 1], ElementType::Int32, Order::C, &mut one)
        .unwrap();
    assert_eq!(ints(&one), vec![1000 + 5 * 12 + 7]);
    let (gets, ranges, _, bytes) = counting.counts();
    assert_eq!((gets, ranges), (0, 3), "outer index, inner index, chunk");
    let shard_size = store.size("n/c/0/0").unwrap().unwrap();
    assert!(bytes < shard_size / 4, "read {bytes} of {shard_size} bytes");

    // Partial writes across inner shards and outer shards, checked against a model.
    for (start, count, base) in [
        ([3u64, 5u64], [2u64, 2u64], -50i32),
        ([7, 0], [3, 12], 500),
        ([0, 0], [1, 1], 7),
    ] {
        let n = (count[0] * count[1]) as usize;
        let vals: Vec<i32> = (0..n as i32).map(|v| v + base).collect();
        for (k, v) in vals.iter().enumerate() {
            let (r, c) = (
                start[0] as usize + k / count[1] as usize,
                start[1] as usize + k % count[1] as usize,
            );
            model[r * 12 + c] = *v;
        }
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_ne_bytes()).collect();
        array
            .write(&start, &count, ElementType::Int32, Order::C, &bytes)
            .unwrap();
        let mut out = vec![0u8; 480];
        array
            .read(&[0, 0], &[10, 12], ElementType::Int32, Order::F, &mut out)
            .unwrap();
        let want: Vec<i32> = (0..120).map(|i| model[(i % 10) * 12 + i / 10]).collect();
        assert_eq!(ints(&out), want);
    }

    // Fill value over one inner shard (rows 0..4, cols 6..12): marked empty in the outer
    // index; over one chunk of another inner shard: marked empty in that inner index.
    array
        .write(
            &[0, 6],
            &[4, 6],
            ElementType::Int32,
            Order::C,
            &values(24, 0).iter().map(|_| 0xffu8).collect::<Vec<_>>(),
        )
        .unwrap();
    array
        .write(
            &[0, 0],
            &[2, 3],
            ElementType::Int32,
            Order::C,
            &[0xffu8; 24],
        )
        .unwrap();
    let shard = store.get("n/c/0/0").unwrap().unwrap();
    let outer = end_index(&shard, 4);
    assert_eq!(
        outer[1],
        (u64::MAX, u64::MAX),
        "all-fill inner shard not stored"
    );
    let (offset, size) = outer[0];
    let inner = end_index(&shard[offset as usize..(offset + size) as usize], 4);
    assert_eq!(inner[0], (u64::MAX, u64::MAX), "all-fill chunk not stored");
    assert!(inner[1..].iter().all(|e| e.0 != u64::MAX));
    // The edge shard (rows 8..10) holds one inner shard row: the second is outside the
    // array and never stored.
    let edge = store.get("n/c/1/0").unwrap().unwrap();
    let entries = end_index(&edge, 4);
    assert!(entries[2..].iter().all(|e| *e == (u64::MAX, u64::MAX)));

    // All fill: nothing stored.
    array
        .write(
            &[0, 0],
            &[10, 12],
            ElementType::Int32,
            Order::C,
            &[0xffu8; 480],
        )
        .unwrap();
    assert_eq!(store.size("n/c/0/0").unwrap(), None);
    assert_eq!(store.size("n/c/1/0").unwrap(), None);
}

#[test]
fn nested_shards_uncompressed_bytes_are_exact() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::default());
    let array = nested(store.clone(), serde_json::Value::Null);
    // Rows 8..10 only: the edge shard holds inner shards 0 and 1, each with chunks 0..2.
    let data = values(24, 0);
    array
        .write(&[8, 0], &[2, 12], ElementType::Int32, Order::C, &data)
        .unwrap();
    let shard = store.get("n/c/1/0").unwrap().unwrap();
    let chunk = |r0: usize, c0: usize| -> Vec<u8> {
        let mut out = Vec::new();
        for r in 0..2 {
            for c in 0..3 {
                let v = if r0 + r < 2 {
                    ((r0 + r) * 12 + c0 + c) as i32
                } else {
                    -1
                };
                out.extend(v.to_le_bytes());
            }
        }
        out
    };
    let crc = |b: &[u8]| crc32c_of(b).to_le_bytes();
    let inner = |c0: usize| -> Vec<u8> {
        let mut body = [chunk(0, c0), chunk(0, c0 + 3)].concat();
        let mut index = Vec::new();
        for (o, s) in [
            (0u64, 24u64),
            (24, 24),
            (u64::MAX, u64::MAX),
            (u64::MAX, u64::MAX),
        ] {
            index.extend(o.to_le_bytes());
            index.extend(s.to_le_bytes());
        }
        let c = crc(&index);
        body.extend(index);
        body.extend(c);
        body
    };
    let (a, b) = (inner(0), inner(6));
    let mut want = [a.clone(), b.clone()].concat();
    let mut index = Vec::new();
    for (o, s) in [
        (0u64, a.len() as u64),
        (a.len() as u64, b.len() as u64),
        (u64::MAX, u64::MAX),
        (u64::MAX, u64::MAX),
    ] {
        index.extend(o.to_le_bytes());
        index.extend(s.to_le_bytes());
    }
    let c = crc(&index);
    want.extend(index);
    want.extend(c);
    if cfg!(target_endian = "little") {
        assert_eq!(shard, want);
    }
}

#[test]
fn sharding_followed_by_codecs_is_unsupported() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::default());
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [1],
                "codecs": [{"name": "bytes"}]}}, {"name": "gzip", "configuration": {"level": 1}}]}}]});
    store
        .set("x/zarr.json", doc.to_string().as_bytes())
        .unwrap();
    let err = Array::open(store, "x", Mode::Read).unwrap_err();
    assert!(
        err.to_string()
            .contains("sharding_indexed with other codecs beside it"),
        "{err}"
    );
}

#[test]
fn a_kept_vlen_read_is_not_read_again_unless_something_changed() {
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let mut b = ArrayBuilder::new(vec![8], ElementType::String);
    b.chunks(vec![2]).zarr_format(3).unwrap();
    let array = b.create(store.clone(), "s", Mode::CreateNew).unwrap();
    let items: Vec<&[u8]> = vec![b"a", b"bb", b"ccc", b"", b"e", b"ff", b"g", b"hh"];
    array.write_vlen(&[0], &[8], Order::C, &items).unwrap();
    counting.reset();
    let (first, _) = array.read_vlen_tracked(&[0], &[8], Order::C).unwrap();
    assert_eq!(counting.counts().0, 4, "one read per chunk");
    // Changes anywhere in the process (other tests run beside this one) make a kept read
    // stale: some attempt finds none between keeping and reading.
    let kept_was_used = (0..50).any(|_| {
        let (items, generation) = array.read_vlen_tracked(&[0], &[8], Order::C).unwrap();
        array.keep_vlen(&[0], &[8], Order::C, generation, items);
        counting.reset();
        let (again, _) = array.read_vlen_tracked(&[0], &[8], Order::C).unwrap();
        assert_eq!(again, first);
        counting.counts().0 == 0
    });
    assert!(kept_was_used, "the kept read is used");
    // Kept once only, and never past a change.
    let (_, generation) = array.read_vlen_tracked(&[0], &[8], Order::C).unwrap();
    array.keep_vlen(&[0], &[8], Order::C, generation, first.clone());
    array.write_vlen(&[1], &[1], Order::C, &[b"XY"]).unwrap();
    let (changed, _) = array.read_vlen_tracked(&[0], &[8], Order::C).unwrap();
    assert_eq!(changed.get(1), b"XY");
}

/// A read through the handle after a write that rewrote the shard sees the new chunks
/// (found by the region fuzz target: the index kept from an earlier read was used).
#[test]
fn reads_after_a_rewrite_through_the_same_handle_see_it() {
    for compressor in [json!(null), json!({"id": "zlib", "level": 1})] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut builder = ArrayBuilder::new(vec![6], ElementType::UInt16);
        builder
            .chunks(vec![2])
            .shard_shape(vec![6])
            .fill_value_json(json!(7))
            .compressor(compressor.clone());
        builder.zarr_format(3).unwrap();
        let array = builder
            .create(store.clone(), "g/a", Mode::CreateNew)
            .unwrap();
        let u16s = |v: &[u16]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        array
            .write(&[2], &[1], ElementType::UInt16, Order::C, &u16s(&[512]))
            .unwrap();
        let mut out = vec![0u8; 6];
        array
            .read(&[1], &[3], ElementType::UInt16, Order::F, &mut out)
            .unwrap();
        assert_eq!(out, u16s(&[7, 512, 7]), "{compressor}");
        array
            .write(
                &[3],
                &[2],
                ElementType::UInt16,
                Order::C,
                &u16s(&[382, 304]),
            )
            .unwrap();
        let mut out = vec![0u8; 12];
        array
            .read(&[0], &[6], ElementType::UInt16, Order::C, &mut out)
            .unwrap();
        let fresh = Array::open(store.clone(), "g/a", Mode::Read).unwrap();
        let mut stored = vec![0u8; 12];
        fresh
            .read(&[0], &[6], ElementType::UInt16, Order::C, &mut stored)
            .unwrap();
        assert_eq!(
            stored,
            u16s(&[7, 7, 512, 382, 304, 7]),
            "stored, {compressor}"
        );
        assert_eq!(out, u16s(&[7, 7, 512, 382, 304, 7]), "{compressor}");
    }
}

// ---- streaming appends --------------------------------------------------------------

/// A (T, 8, 6) int32 array growing along axis 0: shards of (4, 4, 6), inner chunks of
/// (1, 2, 3), zstd; 2 shards per slab of 4 steps.
fn growing(store: Arc<dyn Store>, path: &str) -> Array {
    let mut builder = ArrayBuilder::new(vec![0, 8, 6], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![1, 2, 3])
        .shard_shape(vec![4, 4, 6])
        .fill_value_json(json!(0))
        .compressor(json!({"id": "zstd", "level": 1}));
    builder.create(store, path, Mode::Overwrite).unwrap()
}

/// Step `t` of the growing array: element i is t * 100 + i (no element equals the fill).
fn step(t: usize) -> Vec<u8> {
    values(48, t as i32 * 100 + 1)
}

fn steps(range: std::ops::Range<usize>) -> Vec<u8> {
    range.flat_map(step).collect()
}

fn append_step(array: &Array, t: usize) {
    array
        .append(0, &[1, 8, 6], ElementType::Int32, Order::C, &step(t))
        .unwrap();
}

/// Every key under `prefix` with its bytes.
fn contents(store: &dyn Store, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let mut keys = store.list_prefix(prefix).unwrap();
    // The append lock of a handle still open is no part of the array's data.
    keys.retain(|k| !k.ends_with("/.zarr-append.lock"));
    keys.sort();
    keys.into_iter()
        .map(|k| {
            let v = store.get(&k).unwrap().unwrap();
            (k[prefix.len()..].to_string(), v)
        })
        .collect()
}

/// The stored bytes of the growing array of `t` steps written in one call.
fn reference(t: usize) -> Vec<(String, Vec<u8>)> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = growing(store.clone(), "r");
    array.resize(&[t as u64, 8, 6]).unwrap();
    array
        .write(
            &[0, 0, 0],
            &[t as u64, 8, 6],
            ElementType::Int32,
            Order::C,
            &steps(0..t),
        )
        .unwrap();
    contents(store.as_ref(), "r/")
}

fn read_all(array: &Array) -> Vec<u8> {
    let shape = array.metadata().shape.clone();
    let mut out = vec![0u8; (shape.iter().product::<u64>() * 4) as usize];
    array
        .read(&[0, 0, 0], &shape, ElementType::Int32, Order::C, &mut out)
        .unwrap();
    out
}

#[test]
fn buffered_appends_store_each_shard_once() {
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let array = growing(store.clone(), "g");
    counting.reset();
    for t in 0..3 {
        append_step(&array, t);
    }
    assert_eq!(
        counting.counts().2,
        0,
        "nothing stored before a shard is complete"
    );
    assert!(array.append_buffer_bytes().unwrap() > 0);
    append_step(&array, 3);
    // Two complete shards leave the buffer, stored behind the next appends; the flush
    // collects them and stores the shape document.
    assert_eq!(array.append_buffer_bytes().unwrap(), 0);
    array.flush().unwrap();
    assert_eq!(counting.counts().2, 3);
    for t in 4..8 {
        append_step(&array, t);
    }
    array.flush().unwrap();
    assert_eq!(
        counting.counts().2,
        6,
        "the second slab's shards and the shape"
    );
    for t in 8..10 {
        append_step(&array, t);
    }
    assert_eq!(
        counting.counts().2,
        6,
        "nothing stored before a shard is complete"
    );
    // Another handle sees the shape stored: the 8 steps of the complete shards.
    let other = Array::open(store.clone(), "g", Mode::Read).unwrap();
    assert_eq!(other.metadata().shape, vec![8, 8, 6]);
    assert_eq!(read_all(&other), steps(0..8));
    // This handle reads its own steps (storing them first).
    assert_eq!(array.metadata().shape, vec![10, 8, 6]);
    assert_eq!(read_all(&array), steps(0..10));
    other.refresh().unwrap();
    assert_eq!(read_all(&other), steps(0..10));
    drop(array);
    // Byte for byte what one write of the whole data stores.
    assert_eq!(contents(store.as_ref(), "g/"), reference(10));
}

#[test]
fn buffered_appends_write_about_the_stored_size() {
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let array = growing(store.clone(), "g");
    counting.reset();
    for t in 0..16 {
        append_step(&array, t);
    }
    array.flush().unwrap();
    let stored: u64 = contents(store.as_ref(), "g/c/")
        .iter()
        .map(|(_, v)| v.len() as u64)
        .sum();
    let document = store.size("g/zarr.json").unwrap().unwrap();
    // Each shard once, and the shape document once per completed slab.
    assert_eq!(
        counting.written.load(Ordering::SeqCst),
        // The documents of shapes 4 and 8 are a digit shorter than those of 12 and 16.
        stored + 4 * document - 2
    );

    // Rewriting on every step (buffering off) writes far more: each shard 4 times over.
    let counting_old = Arc::new(Counting::default());
    let store_old: Arc<dyn Store> = counting_old.clone();
    let old = growing(store_old.clone(), "g");
    old.set_append_buffering(false).unwrap();
    counting_old.reset();
    for t in 0..16 {
        append_step(&old, t);
    }
    assert!(counting_old.written.load(Ordering::SeqCst) > 2 * stored);
    assert_eq!(
        contents(store_old.as_ref(), "g/c/"),
        contents(store.as_ref(), "g/c/")
    );
}

#[test]
fn flushed_appends_are_exact_and_visible() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = growing(store.clone(), "g");
    let mut flushed = 0;
    for t in 0..11 {
        append_step(&array, t);
        if [1, 5, 6, 9].contains(&t) {
            array.flush().unwrap();
            flushed = t + 1;
        }
        let other = Array::open(store.clone(), "g", Mode::Read).unwrap();
        let shown = other.metadata().shape[0] as usize;
        // The flushed steps, or the end of complete shards past them (stored behind the
        // appends, so possibly not yet the last).
        assert!(
            shown == flushed || (shown.is_multiple_of(4) && shown > flushed && shown <= t + 1),
            "step {t}: {shown}"
        );
        assert_eq!(read_all(&other), steps(0..shown));
    }
    array.flush().unwrap();
    assert_eq!(contents(store.as_ref(), "g/"), reference(11));
    // A new handle continues a flushed partial shard from the store.
    drop(array);
    let again = Array::open(store.clone(), "g", Mode::ReadWrite).unwrap();
    append_step(&again, 11);
    drop(again);
    assert_eq!(contents(store.as_ref(), "g/"), reference(12));
}

#[test]
fn failed_shard_stores_lose_no_step() {
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let array = growing(store.clone(), "g");
    *counting.refuse.lock().unwrap() = Some("g/c/".into());
    // Step 3 completes two shards; storing them behind the appends fails, and the flush
    // that collects them says so. They stay buffered.
    for t in 0..4 {
        append_step(&array, t);
    }
    let e = array.flush().unwrap_err();
    assert!(e.to_string().contains("refused by the test"), "{e}");
    assert!(array.append_buffer_bytes().unwrap() > 0);
    // Step 7 completes them again with the next two; their store fails again, and the
    // append that collects it (at the latest step 11, which completes shards and so waits)
    // reports it and appends nothing; once the store takes writes, the same step goes in.
    let mut refusals = 0;
    for t in 4..12 {
        while let Err(e) = array.append(0, &[1, 8, 6], ElementType::Int32, Order::C, &step(t)) {
            assert!(e.to_string().contains("refused by the test"), "{e}");
            assert_eq!(
                array.metadata().shape[0],
                t as u64,
                "the step is not appended"
            );
            *counting.refuse.lock().unwrap() = None;
            refusals += 1;
        }
    }
    assert_eq!(refusals, 1);
    array.flush().unwrap();
    drop(array);
    assert_eq!(contents(store.as_ref(), "g/"), reference(12));
}

#[test]
fn writes_wait_for_shards_stored_behind_appends() {
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let array = growing(store.clone(), "g");
    *counting.slow.lock().unwrap() = Some("g/c/".into());
    // Step 3 hands the first slab's shards to the storing thread (slow); a write into them
    // right after must not race it: each step survives.
    for t in 0..4 {
        append_step(&array, t);
    }
    array
        .write(
            &[1, 0, 0],
            &[1, 8, 6],
            ElementType::Int32,
            Order::C,
            &step(40),
        )
        .unwrap();
    let mut expected = step(0);
    expected.extend(step(40));
    expected.extend(steps(2..4));
    assert_eq!(
        read_all(&Array::open(store.clone(), "g", Mode::Read).unwrap()),
        expected
    );
    drop(array);
    assert_eq!(
        read_all(&Array::open(store.clone(), "g", Mode::Read).unwrap()),
        expected
    );
}

#[test]
fn buffered_appends_meet_other_calls() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = growing(store.clone(), "g");
    for t in 0..6 {
        append_step(&array, t);
    }
    // A write into the open shards stores them first, then rewrites as usual.
    array
        .write(
            &[5, 0, 0],
            &[1, 8, 6],
            ElementType::Int32,
            Order::C,
            &step(40),
        )
        .unwrap();
    let mut expected = steps(0..5);
    expected.extend(step(40));
    assert_eq!(
        read_all(&Array::open(store.clone(), "g", Mode::Read).unwrap()),
        expected
    );
    append_step(&array, 6);
    // A shrink drops what lies beyond; appends then continue from the new end.
    array.resize(&[3, 8, 6]).unwrap();
    append_step(&array, 3);
    append_step(&array, 4);
    assert_eq!(read_all(&array), steps(0..5));
    // Appends along another axis store the open shards first.
    let mut wide = vec![0u8; 5 * 8 * 4];
    wide.iter_mut().for_each(|b| *b = 1);
    array
        .append(2, &[5, 8, 1], ElementType::Int32, Order::C, &wide)
        .unwrap();
    assert_eq!(array.metadata().shape, vec![5, 8, 7]);
    drop(array);
    let other = Array::open(store.clone(), "g", Mode::Read).unwrap();
    assert_eq!(other.metadata().shape, vec![5, 8, 7]);
    let all = read_all(&other);
    let got: Vec<i32> = all
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    let first: Vec<i32> = steps(0..5)
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    for (i, v) in got.iter().enumerate() {
        let (row, col) = (i / 7, i % 7);
        let want = if col == 6 {
            0x01010101
        } else {
            first[row * 6 + col]
        };
        assert_eq!(*v, want, "element {i}");
    }
}

#[test]
fn buffered_appends_refuse_bad_use() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = growing(store.clone(), "g");
    append_step(&array, 0);
    let held = array.append_buffer_bytes().unwrap();
    // Wrong extents, buffer size and type: refused, nothing buffered or stored.
    let e = array
        .append(0, &[1, 8, 5], ElementType::Int32, Order::C, &step(1))
        .unwrap_err();
    assert!(e.to_string().contains("extent"), "{e}");
    let e = array
        .append(0, &[1, 8, 6], ElementType::Int32, Order::C, &step(1)[4..])
        .unwrap_err();
    assert!(matches!(e, zarr::Error::BufferSize(_)), "{e}");
    let e = array
        .append(0, &[1, 8, 6], ElementType::Float32, Order::C, &step(1))
        .unwrap_err();
    assert!(matches!(e, zarr::Error::DtypeMismatch(_)), "{e}");
    assert_eq!(array.append_buffer_bytes().unwrap(), held);
    assert_eq!(array.metadata().shape, vec![1, 8, 6]);
    // Flushing a read-only handle is refused.
    let reader = Array::open(store.clone(), "g", Mode::Read).unwrap();
    assert!(matches!(
        reader.flush().unwrap_err(),
        zarr::Error::ReadOnly(_)
    ));
    assert!(reader
        .append(0, &[1, 8, 6], ElementType::Int32, Order::C, &step(1))
        .is_err());
    array.flush().unwrap();
    assert_eq!(
        read_all(&reader),
        Vec::<u8>::new(),
        "opened before the flush"
    );
    reader.refresh().unwrap();
    assert_eq!(read_all(&reader), step(0));
}

#[test]
fn synchronized_appends_are_not_buffered() {
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let array = growing(store.clone(), "g");
    array
        .set_synchronization(&zarr::io::lock::Synchronization::Thread)
        .unwrap();
    counting.reset();
    append_step(&array, 0);
    assert_eq!(array.append_buffer_bytes().unwrap(), 0);
    assert_eq!(counting.counts().2, 3, "the shape and both shards, at once");
    assert_eq!(
        read_all(&Array::open(store.clone(), "g", Mode::Read).unwrap()),
        step(0)
    );
}

/// The index entries of a shard whose index (16 bytes per unit, then a 4-byte checksum when
/// `checksum`) is at its start or its end.
fn index_entries(shard: &[u8], n: usize, at_start: bool, checksum: bool) -> Vec<(u64, u64)> {
    let len = 16 * n;
    let tail = if checksum { 4 } else { 0 };
    let index = if at_start {
        &shard[..len]
    } else {
        &shard[shard.len() - len - tail..shard.len() - tail]
    };
    index
        .chunks(16)
        .map(|e| {
            (
                u64::from_le_bytes(e[..8].try_into().unwrap()),
                u64::from_le_bytes(e[8..].try_into().unwrap()),
            )
        })
        .collect()
}

#[test]
fn shards_built_over_several_windows_are_exact() {
    // 36 inner chunks of 1 MiB in one shard: more than one window of units is built (the
    // windows hold 8 MiB, or two units per thread of up to 16 threads), each appended in
    // Morton order; the index leads or ends the shard. In memory the shard is assembled
    // whole; in a directory it is written into its file window by window (at every
    // durability level), and no temporary file is left.
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<(String, Arc<dyn Store>)> = std::iter::once((
        "memory".to_string(),
        Arc::new(MemoryStore::new()) as Arc<dyn Store>,
    ))
    .chain(
        [Durability::None, Durability::Flush, Durability::EachWrite]
            .into_iter()
            .map(|level| {
                let store = FilesystemStore::open(dir.path(), true, true).unwrap();
                store.set_durability(level).unwrap();
                (format!("{level:?}"), Arc::new(store) as Arc<dyn Store>)
            }),
    )
    .collect();
    let mut round = 0;
    for ((at_start, checksum, codec), (kind, store)) in [
        (false, true, json!({"id": "zstd", "level": 1})),
        (true, true, serde_json::Value::Null),
        (true, false, json!({"id": "zstd", "level": 1})),
        (false, false, serde_json::Value::Null),
    ]
    .into_iter()
    .flat_map(|case| {
        stores
            .iter()
            .map(move |store| (case.clone(), store.clone()))
    }) {
        let codec = &codec;
        round += 1;
        let shape = vec![192, 192, 256];
        let mut builder = ArrayBuilder::new(shape.clone(), ElementType::Int32);
        builder.zarr_format(3).unwrap();
        builder
            .chunks(vec![64, 64, 64])
            .shard_shape(shape.clone())
            .shard_index(at_start, checksum)
            .compressor(codec.clone());
        let array = builder.create(store.clone(), "w", Mode::Overwrite).unwrap();
        // The shard is written twice: the second replaces the first.
        let data = values(192 * 192 * 256, round);
        for data in [values(192 * 192 * 256, -round), data.clone()] {
            array
                .write(&[0; 3], &shape, ElementType::Int32, Order::C, &data)
                .unwrap();
        }
        let mut back = vec![0u8; data.len()];
        array
            .read(&[0; 3], &shape, ElementType::Int32, Order::C, &mut back)
            .unwrap();
        assert!(back == data, "{kind} {at_start} {checksum} {codec}");
        store.flush().unwrap();
        assert_eq!(temporary_files(dir.path()), 0, "{kind}");

        // The units follow one another from the start of the data, without gaps, in
        // Morton order (3 x 3 x 4 units: dimension 0's lowest bit first, zarr-python's).
        let shard = store.get("w/c/0/0/0").unwrap().unwrap();
        let mut entries: Vec<(u64, u64, usize)> = index_entries(&shard, 36, at_start, checksum)
            .into_iter()
            .enumerate()
            .map(|(position, (offset, len))| (offset, len, position))
            .collect();
        entries.sort();
        let index_len = 16 * 36 + if checksum { 4 } else { 0 };
        let mut at = if at_start { index_len as u64 } else { 0 };
        for &(offset, len, position) in &entries {
            assert_eq!(
                offset, at,
                "unit {position} ({at_start} {checksum} {codec})"
            );
            at += len;
        }
        let data_end = if at_start {
            shard.len()
        } else {
            shard.len() - index_len
        };
        assert_eq!(at as usize, data_end);
        let stored: Vec<usize> = entries.iter().map(|e| e.2).take(4).collect();
        assert_eq!(stored, [0, 12, 4, 16], "{at_start} {checksum} {codec}");
        if codec.is_null() {
            // Uncompressed units are the data itself: the first unit's first row.
            let first = entries[0].0 as usize;
            assert_eq!(shard[first..first + 256], data[..256]);
        }
    }
}

/// The temporary files below `dir`.
fn temporary_files(dir: &std::path::Path) -> usize {
    common::files_below(dir)
        .iter()
        .filter(|f| f.to_string_lossy().contains(".zarr-tmp."))
        .count()
}

#[test]
fn shards_of_fill_values_leave_nothing_in_a_directory() {
    // Shards are written into their files as they are laid out; a shard that turns out to
    // hold only the fill value is not stored, and leaves no file or directory behind.
    let dir = tempfile::tempdir().unwrap();
    for level in [Durability::None, Durability::Flush] {
        let store = FilesystemStore::open(dir.path(), true, true).unwrap();
        store.set_durability(level).unwrap();
        let store: Arc<dyn Store> = Arc::new(store);
        let mut builder = ArrayBuilder::new(vec![8, 8], ElementType::Int32);
        builder.zarr_format(3).unwrap();
        builder.chunks(vec![2, 2]).shard_shape(vec![4, 4]);
        let array = builder.create(store.clone(), "f", Mode::Overwrite).unwrap();
        // Rows 0-3 (shards (0, *)) hold values; rows 4-7 (shards (1, *)) the fill value.
        let data: Vec<u8> = (0..64i32)
            .flat_map(|i| if i < 32 { i + 1 } else { 0 }.to_ne_bytes())
            .collect();
        array
            .write(&[0, 0], &[8, 8], ElementType::Int32, Order::C, &data)
            .unwrap();
        store.flush().unwrap();
        assert_eq!(
            store.list_prefix("f/c/").unwrap(),
            vec!["f/c/0/0", "f/c/0/1"],
            "{level:?}"
        );
        assert_eq!(store.list_dir("f/c/").unwrap().prefixes, vec!["0"]);
        assert!(!dir.path().join("f/c/1").exists(), "{level:?}");
        assert_eq!(temporary_files(dir.path()), 0);
        let mut back = vec![0u8; data.len()];
        array
            .read(&[0, 0], &[8, 8], ElementType::Int32, Order::C, &mut back)
            .unwrap();
        assert_eq!(back, data);
    }
}

/// A directory store that counts how its shards are stored: values written piece by piece
/// (and whether each was committed to be synced at once), and values stored whole.
#[derive(Debug)]
struct Streams {
    inner: FilesystemStore,
    /// Commits of values written piece by piece: (synced now, later).
    commits: std::sync::Mutex<(usize, usize)>,
    /// Values stored whole, by `set` or `put_many`, other than documents.
    whole: std::sync::atomic::AtomicUsize,
}

/// A value written piece by piece through [`Streams`].
struct Counted<'s> {
    inner: Box<dyn zarr::store::ValueWriter + 's>,
    commits: &'s std::sync::Mutex<(usize, usize)>,
}

impl zarr::store::ValueWriter for Counted<'_> {
    fn append(&mut self, bytes: &[u8]) -> zarr::Result<()> {
        self.inner.append(bytes)
    }
    fn overwrite(&mut self, offset: u64, bytes: &[u8]) -> zarr::Result<()> {
        self.inner.overwrite(offset, bytes)
    }
    fn commit(self: Box<Self>, sync_now: bool) -> zarr::Result<()> {
        let mut commits = self.commits.lock().unwrap();
        match sync_now {
            true => commits.0 += 1,
            false => commits.1 += 1,
        }
        drop(commits);
        self.inner.commit(sync_now)
    }
}

impl Store for Streams {
    fn get(&self, key: &str) -> zarr::Result<Option<Vec<u8>>> {
        self.inner.get(key)
    }
    fn writes_behind(&self) -> bool {
        self.inner.writes_behind()
    }
    fn put_many(&self, batch: Vec<(String, Option<Vec<u8>>)>) -> zarr::Result<()> {
        let values = batch.iter().filter(|(_, v)| v.is_some()).count();
        self.whole.fetch_add(values, Ordering::SeqCst);
        self.inner.put_many(batch)
    }
    fn write_value(
        &self,
        key: &str,
    ) -> zarr::Result<Option<Box<dyn zarr::store::ValueWriter + '_>>> {
        Ok(self.inner.write_value(key)?.map(|inner| {
            Box::new(Counted {
                inner,
                commits: &self.commits,
            }) as Box<dyn zarr::store::ValueWriter>
        }))
    }
    fn set(&self, key: &str, value: &[u8]) -> zarr::Result<()> {
        if !key.ends_with("zarr.json") {
            self.whole.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.set(key, value)
    }
    fn erase(&self, key: &str) -> zarr::Result<bool> {
        self.inner.erase(key)
    }
    fn erase_prefix(&self, prefix: &str) -> zarr::Result<()> {
        self.inner.erase_prefix(prefix)
    }
    fn list_prefix(&self, prefix: &str) -> zarr::Result<Vec<String>> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &str) -> zarr::Result<zarr::store::DirListing> {
        self.inner.list_dir(prefix)
    }
    fn size(&self, key: &str) -> zarr::Result<Option<u64>> {
        self.inner.size(key)
    }
    fn writable(&self) -> bool {
        true
    }
    fn flush(&self) -> zarr::Result<()> {
        self.inner.flush()
    }
}

#[test]
fn large_shards_are_written_into_their_files_as_they_are_laid_out() {
    // Two shards of 4 MiB (32^3 inner chunks, index at the start and at the end). Synced
    // at the flush or at each write, the write goes by batches: both shards are written
    // piece by piece and committed (synced) by the storing thread. Unsynced, each is
    // committed where it is built. No shard is stored whole, and zarr-python's layout is kept (exact data back).
    for (level, at_start, expected) in [
        (Durability::Flush, false, (2, 0)),
        (Durability::Flush, true, (2, 0)),
        (Durability::None, false, (0, 2)),
        (Durability::EachWrite, true, (2, 0)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let inner = FilesystemStore::open(dir.path(), true, true).unwrap();
        inner.set_durability(level).unwrap();
        let streams = Arc::new(Streams {
            inner,
            commits: Default::default(),
            whole: Default::default(),
        });
        let store: Arc<dyn Store> = streams.clone();
        let shape = vec![256, 128, 64];
        let mut builder = ArrayBuilder::new(shape.clone(), ElementType::Int32);
        builder.zarr_format(3).unwrap();
        builder
            .chunks(vec![32, 32, 32])
            .shard_shape(vec![128, 128, 64])
            .shard_index(at_start, true)
            .compressor(json!({"id": "zstd", "level": 1}));
        let array = builder.create(store.clone(), "s", Mode::Overwrite).unwrap();
        let data = values(256 * 128 * 64, 11);
        array
            .write(&[0; 3], &shape, ElementType::Int32, Order::C, &data)
            .unwrap();
        store.flush().unwrap();
        let commits = *streams.commits.lock().unwrap();
        assert_eq!(commits, expected, "{level:?} {at_start}");
        assert_eq!(streams.whole.load(Ordering::SeqCst), 0, "{level:?}");
        let reopened: Arc<dyn Store> =
            Arc::new(FilesystemStore::open(dir.path(), false, false).unwrap());
        let array = Array::open(reopened, "s", Mode::Read).unwrap();
        let mut back = vec![0u8; data.len()];
        array
            .read(&[0; 3], &shape, ElementType::Int32, Order::C, &mut back)
            .unwrap();
        assert!(back == data, "{level:?} {at_start}");
        assert_eq!(temporary_files(dir.path()), 0);
    }
}
