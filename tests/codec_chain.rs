//! Codec chains the v3 spec allows beyond v2's single compressor: several bytes-to-bytes
//! codecs in any order, and sharding nested three deep with a compressor inside. libzarr
//! reads back exactly what it writes (the interop suite checks the other libraries). And
//! how chains map onto v2 fields: what v2 cannot hold is refused by name, checksum filters
//! and compressors keep their places, and filters after a bytes-level filter still work.

use serde_json::{json, Value};
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, Mode};
use zarr::store::{MemoryStore, Store};

/// Stores at `path` the `zarr.json` of a v3 array of `shape` and `data_type` (fill 0)
/// with `chunk_shape` and `codecs`.
fn put_array(
    store: &dyn Store,
    path: &str,
    shape: &[u64],
    data_type: &str,
    chunk_shape: &[u64],
    codecs: Value,
) {
    let doc = json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk_shape}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs
    });
    store
        .set(
            &format!("{path}/zarr.json"),
            &serde_json::to_vec(&doc).unwrap(),
        )
        .unwrap();
}

/// A 16 x 16 float32 v3 array at `a` with `chunk_shape` and `codecs`.
fn array_with(chunk_shape: [u64; 2], codecs: Value) -> Array {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    put_array(
        store.as_ref(),
        "a",
        &[16, 16],
        "float32",
        &chunk_shape,
        codecs,
    );
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

#[test]
fn transposes_of_any_permutation_read_and_write() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let data: Vec<u8> = (0..4 * 6 * 5)
        .flat_map(|i| (i as i16).to_ne_bytes())
        .collect();
    for (name, transposes) in [
        ("p201", vec![json!([2, 0, 1])]),
        ("p120", vec![json!([1, 2, 0])]),
        ("twice", vec![json!([1, 0, 2]), json!([0, 2, 1])]),
        // The v3 drafts' names for the reversal and the identity.
        ("draft_f", vec![json!("F")]),
        ("draft_c", vec![json!("C")]),
    ] {
        let mut codecs: Vec<Value> = transposes
            .iter()
            .map(|order| json!({"name": "transpose", "configuration": {"order": order}}))
            .collect();
        codecs.push(bytes());
        put_array(
            store.as_ref(),
            name,
            &[4, 6, 5],
            "int16",
            &[2, 3, 5],
            codecs.into(),
        );
        let a = Array::open(store.clone(), name, Mode::ReadWrite).unwrap();
        a.write(&[0, 0, 0], &[4, 6, 5], ElementType::Int16, Order::C, &data)
            .unwrap();
        // The stored chunk (0, 0, 0) holds the 2 x 3 x 5 block permuted.
        let stored = store.get(&format!("{name}/c/0/0/0")).unwrap().unwrap();
        let element = |i: usize, j: usize, k: usize| ((i * 6 + j) * 5 + k) as i16;
        let perm: Vec<usize> = match name {
            "p201" => vec![2, 0, 1],
            "p120" => vec![1, 2, 0],
            "draft_f" => vec![2, 1, 0],
            "draft_c" => vec![0, 1, 2],
            _ => vec![1, 2, 0], // [1, 0, 2] then [0, 2, 1]
        };
        let block = [2usize, 3, 5];
        let dims: Vec<usize> = perm.iter().map(|&d| block[d]).collect();
        let mut expected = Vec::new();
        for x in 0..dims[0] {
            for y in 0..dims[1] {
                for z in 0..dims[2] {
                    let mut index = [0usize; 3];
                    for (k, v) in [x, y, z].into_iter().enumerate() {
                        index[perm[k]] = v;
                    }
                    expected.extend(element(index[0], index[1], index[2]).to_le_bytes());
                }
            }
        }
        assert_eq!(stored, expected, "{name}");
        let reopened = Array::open(store.clone(), name, Mode::Read).unwrap();
        let mut back = vec![0u8; data.len()];
        reopened
            .read(
                &[0, 0, 0],
                &[4, 6, 5],
                ElementType::Int16,
                Order::C,
                &mut back,
            )
            .unwrap();
        assert_eq!(back, data, "{name}");
        let mut part = vec![0u8; 2 * 2 * 2 * 2];
        reopened
            .read(
                &[1, 2, 3],
                &[2, 2, 2],
                ElementType::Int16,
                Order::F,
                &mut part,
            )
            .unwrap();
        let mut want = Vec::new();
        for k in 3..5 {
            for j in 2..4 {
                for i in 1..3 {
                    want.extend(element(i, j, k).to_ne_bytes());
                }
            }
        }
        assert_eq!(part, want, "{name}");
    }
    // Not a permutation: refused when opened.
    let codecs = json!([{"name": "transpose", "configuration": {"order": [0, 0]}}, bytes()]);
    put_array(store.as_ref(), "bad", &[4, 6], "int16", &[2, 3], codecs);
    assert!(matches!(
        Array::open(store, "bad", Mode::Read),
        Err(zarr::Error::Metadata(_))
    ));
}

#[test]
fn sharded_variable_length_arrays_round_trip() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for (name, inner) in [("one", None), ("nested", Some(vec![4]))] {
        let mut b = zarr::node::ArrayBuilder::new(vec![10], ElementType::String);
        b.chunks(vec![2]).shard_shape(vec![8]);
        if let Some(shape) = inner {
            b.inner_shard_shape(shape);
        }
        b.zarr_format(3).unwrap();
        let a = b.create(store.clone(), name, Mode::CreateNew).unwrap();
        let mut expected: Vec<String> = (0..10)
            .map(|i| format!("item {i} {}", "é".repeat(i)))
            .collect();
        let items: Vec<&[u8]> = expected.iter().map(|s| s.as_bytes()).collect();
        a.write_vlen(&[0], &[10], Order::C, &items).unwrap();
        // One object per shard: two shards, no object per inner chunk.
        let keys = store.list_prefix(&format!("{name}/c/")).unwrap();
        assert_eq!(keys, vec![format!("{name}/c/0"), format!("{name}/c/1")]);
        // A partial write rebuilds one shard and keeps the other chunks of it.
        a.write_vlen(&[3], &[2], Order::C, &[b"x".as_slice(), b"yz".as_slice()])
            .unwrap();
        expected[3] = "x".into();
        expected[4] = "yz".into();
        let reopened = Array::open(store.clone(), name, Mode::Read).unwrap();
        let back = reopened.read_vlen(&[0], &[10], Order::C).unwrap();
        let got: Vec<String> = (0..10)
            .map(|i| {
                let range = back.offsets[i] as usize..back.offsets[i + 1] as usize;
                String::from_utf8(back.data[range].to_vec()).unwrap()
            })
            .collect();
        assert_eq!(got, expected, "{name}");
    }
}

/// Renders `meta` in `format`, giving the error message when it cannot.
fn render(format: zarr::meta::Format, a: &Array) -> Result<Value, String> {
    format
        .render_array(&a.metadata(), &serde_json::Map::new())
        .map(|bytes| serde_json::from_slice(&bytes).unwrap())
        .map_err(|e| e.to_string())
}

#[test]
fn chains_v2_cannot_hold_are_refused_by_name_and_the_rest_render_as_v2_fields() {
    use zarr::meta::Format;
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let zstd = json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}});
    let gzip = json!({"name": "gzip", "configuration": {"level": 1}});
    let two = array_with([8, 8], json!([bytes, zstd, gzip]));
    let err = render(Format::V2, &two).unwrap_err();
    assert!(err.contains("one compressor"), "{err}");
    let permuted = {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let transpose = json!({"name": "transpose", "configuration": {"order": [2, 0, 1]}});
        put_array(
            store.as_ref(),
            "p",
            &[4, 4, 4],
            "int16",
            &[2, 2, 2],
            json!([transpose, bytes]),
        );
        Array::open(store, "p", Mode::Read).unwrap()
    };
    assert_eq!(permuted.metadata().order(), Order::C);
    assert_eq!(permuted.metadata().chain().permutation(3), vec![2, 0, 1]);
    let err = render(Format::V2, &permuted).unwrap_err();
    assert!(err.contains("chunk order [2, 0, 1]"), "{err}");
    // A checksum after the compressor is a v2 filter only if it comes first: refused.
    let crc = json!({"name": "crc32c"});
    let checked = array_with([8, 8], json!([bytes, zstd, crc]));
    assert!(render(Format::V2, &checked).is_err());
    // Shuffle then a compressor: the v2 filter and compressor.
    let shuffle = json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}});
    let v2 = render(
        Format::V2,
        &array_with([8, 8], json!([bytes, shuffle, zstd])),
    )
    .unwrap();
    assert_eq!(v2["filters"], json!([{"id": "shuffle", "elementsize": 4}]));
    assert_eq!(v2["compressor"]["id"], "zstd");
    assert_eq!(v2["order"], "C");
}

#[test]
fn v2_checksum_filters_and_compressors_keep_their_places() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for (name, filters, compressor) in [
        ("f", json!([{"id": "crc32"}]), Value::Null),
        ("c", Value::Null, json!({"id": "crc32"})),
        (
            "fc",
            json!([{"id": "shuffle", "elementsize": 4}, {"id": "delta", "dtype": "|u1", "astype": "|u1"}]),
            json!({"id": "zlib", "level": 1}),
        ),
    ] {
        let doc = json!({"zarr_format": 2, "shape": [16, 16], "chunks": [8, 8], "dtype": "<f4",
            "fill_value": 0.0, "order": "F", "filters": filters, "compressor": compressor});
        store
            .set(&format!("{name}/.zarray"), doc.to_string().as_bytes())
            .unwrap();
        let a = Array::open(store.clone(), name, Mode::ReadWrite).unwrap();
        round_trip(&a);
        let again = render(zarr::meta::Format::V2, &a).unwrap();
        assert_eq!(again["filters"], filters, "{name}");
        assert_eq!(
            again["compressor"].get("id"),
            compressor.get("id"),
            "{name}"
        );
        assert_eq!(again["order"], "F", "{name}");
    }
}

#[test]
fn the_builder_takes_compressors_in_zarr_v3_form_for_either_format() {
    use zarr::error::Error;
    use zarr::node::ArrayBuilder;
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let build = |format: i32, compressor: Value| {
        let mut b = ArrayBuilder::new(vec![16, 16], ElementType::Float32);
        b.chunks(vec![8, 8]).compressor(compressor);
        b.zarr_format(format).unwrap();
        b.create(store.clone(), &format!("v{format}"), Mode::Overwrite)
    };
    let blosc = json!({"name": "blosc", "configuration":
        {"cname": "lz4", "clevel": 5, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}});
    let zstd = json!({"name": "zstd", "configuration": {"level": 3, "checksum": true}});
    let v3 = build(3, json!([blosc, zstd, {"name": "crc32c"}])).unwrap();
    round_trip(&v3);
    let doc: Value = serde_json::from_slice(&store.get("v3/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(doc["codecs"][1], blosc);
    assert_eq!(doc["codecs"][2], zstd);
    assert_eq!(doc["codecs"][3], json!({"name": "crc32c"}));

    let v2 = build(2, json!({"name": "gzip", "configuration": {"level": 4}})).unwrap();
    round_trip(&v2);
    let doc: Value = serde_json::from_slice(&store.get("v2/.zarray").unwrap().unwrap()).unwrap();
    assert_eq!(doc["compressor"], json!({"id": "gzip", "level": 4}));

    let bad_shuffle = json!({"name": "blosc", "configuration": {"shuffle": 7}});
    let err = build(3, bad_shuffle).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArg(m) if m.contains("blosc shuffle")),
        "{err}"
    );
    let err = build(3, json!({"name": "snappy-ish"})).unwrap_err();
    assert!(
        matches!(&err, Error::CodecUnsupported(m) if m.contains("snappy-ish")),
        "{err}"
    );
}
