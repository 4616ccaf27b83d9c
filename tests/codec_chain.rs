//! Codec chains the v3 spec allows beyond v2's single compressor: several bytes-to-bytes
//! codecs in any order, and sharding nested three deep with a compressor inside. libzarr
//! reads back exactly what it writes (the interop suite checks the other libraries).

use serde_json::{json, Value};
use std::sync::Arc;
use zarr::meta::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, Mode};
use zarr::store::{MemoryStore, Store};

/// A 16 x 16 float32 v3 array at `a` with `chunk_shape` and `codecs`.
fn array_with(chunk_shape: [u64; 2], codecs: Value) -> Array {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let doc = json!({
        "zarr_format": 3, "node_type": "array", "shape": [16, 16], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk_shape}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0.0, "codecs": codecs
    });
    store
        .set("a/zarr.json", &serde_json::to_vec(&doc).unwrap())
        .unwrap();
    Array::open(store, "a", Mode::ReadWrite).unwrap()
}

fn data() -> Vec<u8> {
    (0..256)
        .flat_map(|i| (i as f32 * 0.5 - 7.0).to_ne_bytes())
        .collect()
}

/// Writes the whole array, then part of it, and reads both back exactly.
fn round_trip(a: &Array) {
    let mut expected = data();
    a.write(
        &[0, 0],
        &[16, 16],
        ElementType::Float32,
        Order::C,
        &expected,
    )
    .unwrap();
    let patch: Vec<u8> = (0..15)
        .flat_map(|i| (100.0 + i as f32).to_ne_bytes())
        .collect();
    a.write(&[3, 5], &[3, 5], ElementType::Float32, Order::C, &patch)
        .unwrap();
    for r in 0..3 {
        for c in 0..5 {
            let at = ((3 + r) * 16 + 5 + c) * 4;
            expected[at..at + 4].copy_from_slice(&patch[(r * 5 + c) * 4..][..4]);
        }
    }
    let mut back = vec![0u8; 1024];
    a.read(
        &[0, 0],
        &[16, 16],
        ElementType::Float32,
        Order::C,
        &mut back,
    )
    .unwrap();
    assert_eq!(back, expected);
    let mut part = vec![0u8; 4 * 4 * 4];
    a.read(&[2, 4], &[4, 4], ElementType::Float32, Order::C, &mut part)
        .unwrap();
    for r in 0..4 {
        assert_eq!(
            part[r * 16..][..16],
            expected[((2 + r) * 16 + 4) * 4..][..16]
        );
    }
}

fn bytes() -> Value {
    json!({"name": "bytes", "configuration": {"endian": "little"}})
}

#[test]
fn several_bytes_to_bytes_codecs_in_any_order() {
    let gzip = json!({"name": "gzip", "configuration": {"level": 1}});
    let zstd = json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}});
    let crc = json!({"name": "crc32c"});
    for chain in [
        vec![gzip.clone(), zstd.clone()],
        vec![zstd.clone(), gzip.clone()],
        vec![zstd.clone(), crc.clone(), gzip.clone(), crc.clone()],
    ] {
        let mut codecs = vec![bytes()];
        codecs.extend(chain);
        round_trip(&array_with([4, 4], Value::Array(codecs)));
    }
}

#[test]
fn sharding_nested_three_deep_with_zstd_inside() {
    let index =
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]);
    let level = |chunk_shape: [u64; 2], codecs: Value| {
        json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": chunk_shape, "codecs": codecs, "index_codecs": index,
            "index_location": "end"}}])
    };
    let inner =
        json!([bytes(), {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]);
    let codecs = level([8, 8], level([4, 4], level([2, 2], inner)));
    round_trip(&array_with([16, 16], codecs));
}
