//! Arrays with numcodecs filters through the Rust API: every filter alone and in chains,
//! with and without a compressor, v2 and v3 metadata, missing chunks, corrupt checksums
//! and rejected settings that write nothing.

use serde_json::{json, Value};
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};
use zarr::Error;

/// Chunks of a 10x7 array in 4x3 chunks; the top-left chunk stays unwritten (fill).
fn make(
    elem: ElementType,
    dtype: &str,
    filters: Value,
    compressor: Value,
    format: u8,
) -> (Arc<dyn Store>, zarr::Result<Array>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![10, 7], elem);
    b.chunks(vec![4, 3])
        .filters(filters)
        .compressor(compressor)
        .fill_value_json(json!(0));
    b.dtype_name(dtype).unwrap();
    b.zarr_format(format.into()).unwrap();
    let array = b.create(store.clone(), "a", Mode::CreateNew);
    (store, array)
}

/// Element `i` of the test data, as f64 (bools: odd/even).
fn value(i: usize) -> f64 {
    ((i * 37) % 101) as f64 - 50.0
}

fn native(elem: ElementType, v: f64) -> Vec<u8> {
    match elem {
        ElementType::Bool => vec![(v as i64 % 2 != 0) as u8],
        ElementType::Int8 => (v as i8).to_ne_bytes().to_vec(),
        ElementType::Int16 => (v as i16).to_ne_bytes().to_vec(),
        ElementType::Int32 => (v as i32).to_ne_bytes().to_vec(),
        ElementType::Int64 => (v as i64).to_ne_bytes().to_vec(),
        ElementType::UInt8 => ((v + 50.0) as u8).to_ne_bytes().to_vec(),
        ElementType::UInt16 => ((v + 50.0) as u16).to_ne_bytes().to_vec(),
        ElementType::Float32 => ((v / 4.0) as f32).to_ne_bytes().to_vec(),
        ElementType::Float64 => (v / 4.0).to_ne_bytes().to_vec(),
        other => panic!("no test data for {other:?}"),
    }
}

/// Writes the data (but not the first chunk) and checks it reads back exactly, also
/// after reopening.
fn round_trip(store: &Arc<dyn Store>, a: &Array, elem: ElementType, exact: bool) {
    let mut expected = Vec::new();
    for i in 0..70 {
        let (r, c) = (i / 7, i % 7);
        if r < 4 && c < 3 {
            expected.extend(vec![0u8; elem.size()]);
        } else {
            expected.extend(native(elem, value(i)));
        }
    }
    let n = elem.size();
    // Writes rows 0-9 except the first chunk: columns 3.. of rows 0-3, then rows 4-9.
    let right: Vec<u8> = (0..4)
        .flat_map(|r| expected[(r * 7 + 3) * n..(r * 7 + 7) * n].to_vec())
        .collect();
    a.write(&[0, 3], &[4, 4], elem, Order::C, &right).unwrap();
    a.write(&[4, 0], &[6, 7], elem, Order::C, &expected[28 * n..])
        .unwrap();
    let again = Array::open(store.clone(), "a", Mode::Read).unwrap();
    let mut out = vec![0u8; 70 * n];
    again
        .read(&[0, 0], &[10, 7], elem, Order::C, &mut out)
        .unwrap();
    if exact {
        assert_eq!(out, expected);
    } else {
        // Lossy filters: the values agree to the filter's precision.
        let as_f64 = |b: &[u8]| match elem {
            ElementType::Float32 => f32::from_ne_bytes(b.try_into().unwrap()) as f64,
            _ => f64::from_ne_bytes(b.try_into().unwrap()),
        };
        for (x, y) in out.chunks(n).zip(expected.chunks(n)) {
            assert!((as_f64(x) - as_f64(y)).abs() < 0.01, "{x:?} vs {y:?}");
        }
    }
    assert!(store.get("a/0.0").unwrap().is_none() && store.get("a/c/0/0").unwrap().is_none());
}

#[test]
fn every_filter_alone_and_in_chains_round_trips() {
    let blosc = json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0});
    let cases: Vec<(ElementType, &str, Value, bool)> = vec![
        (
            ElementType::Int32,
            "<i4",
            json!([{"id": "delta", "dtype": "<i4"}]),
            true,
        ),
        (
            ElementType::Int32,
            ">i4",
            json!([{"id": "delta", "dtype": ">i4", "astype": "<i2"}]),
            true,
        ),
        (
            ElementType::Int16,
            "<i2",
            json!([{"id": "delta", "dtype": "<i2", "astype": "<i8"}, {"id": "shuffle", "elementsize": 8}]),
            true,
        ),
        (
            ElementType::Float64,
            "<f8",
            json!([{"id": "fixedscaleoffset", "offset": 0, "scale": 1000, "dtype": "<f8", "astype": "<i4"}]),
            false,
        ),
        (
            ElementType::Float32,
            "<f4",
            json!([{"id": "quantize", "digits": 3, "dtype": "<f4"}]),
            false,
        ),
        (
            ElementType::Float64,
            "<f8",
            json!([{"id": "bitround", "keepbits": 20}]),
            false,
        ),
        (ElementType::Bool, "|b1", json!([{"id": "packbits"}]), true),
        (
            ElementType::Int64,
            "<i8",
            json!([{"id": "astype", "encode_dtype": "<i2", "decode_dtype": "<i8"}]),
            true,
        ),
        (
            ElementType::UInt16,
            "<u2",
            json!([{"id": "shuffle", "elementsize": 0}]),
            true,
        ),
        (ElementType::Int8, "|i1", json!([{"id": "crc32"}]), true),
        (
            ElementType::Int32,
            "<i4",
            json!([{"id": "adler32"}, {"id": "fletcher32"}]),
            true,
        ),
        (
            ElementType::Float64,
            "<f8",
            json!([{"id": "jenkins_lookup3"}]),
            true,
        ),
        (
            ElementType::Float64,
            "<f8",
            json!([{"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}, {"id": "delta", "dtype": "<f4"}, {"id": "crc32", "location": "end"}]),
            true,
        ),
        (
            ElementType::UInt8,
            "|u1",
            json!([{"id": "delta", "dtype": "|u1"}, {"id": "shuffle"}, {"id": "crc32"}]),
            true,
        ),
    ];
    for (elem, dtype, filters, exact) in cases {
        for compressor in [
            Value::Null,
            blosc.clone(),
            json!({"id": "zlib", "level": 1}),
        ] {
            for format in [2u8, 3] {
                let (store, array) = make(elem, dtype, filters.clone(), compressor.clone(), format);
                let array = array.unwrap_or_else(|e| panic!("{filters} v{format}: {e}"));
                round_trip(&store, &array, elem, exact);
                let meta = array.metadata();
                // Checksums and shuffle are bytes-to-bytes codecs of the chain.
                let chain = meta.chain();
                let sized = chain
                    .bytes_to_bytes
                    .iter()
                    .filter(|c| c.encoded_len(0).is_some());
                let stated = chain.filters().count() + sized.count();
                assert_eq!(stated, filters.as_array().unwrap().len());
            }
        }
    }
}

#[test]
fn v2_metadata_holds_filter_configs_with_defaults() {
    let (store, a) = make(
        ElementType::Int32,
        "<i4",
        json!([{"id": "delta", "dtype": "<i4"}, {"id": "shuffle", "elementsize": 0}, {"id": "jenkins_lookup3"}]),
        json!({"id": "crc32"}),
        2,
    );
    a.unwrap();
    let doc: Value = serde_json::from_slice(&store.get("a/.zarray").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["filters"],
        json!([{"id": "delta", "dtype": "<i4", "astype": "<i4"}, {"id": "shuffle", "elementsize": 4}, {"id": "jenkins_lookup3", "initval": 0, "prefix": null}])
    );
    assert_eq!(doc["compressor"], json!({"id": "crc32"}));
}

#[test]
fn v3_metadata_places_numcodecs_filters() {
    let (store, a) = make(
        ElementType::Float64,
        "<f8",
        json!([{"id": "fixedscaleoffset", "offset": 1.5, "scale": 10, "dtype": "<f8", "astype": ">i4"}, {"id": "shuffle", "elementsize": 0}]),
        json!({"id": "crc32", "location": "end"}),
        3,
    );
    a.unwrap();
    let doc: Value = serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["codecs"],
        json!([
            {"name": "numcodecs.fixedscaleoffset", "configuration": {"scale": 10, "offset": 1.5, "dtype": "<f8", "astype": ">i4"}},
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
            {"name": "numcodecs.crc32", "configuration": {"location": "end"}},
        ])
    );
}

#[test]
fn corrupt_checksums_name_the_chunk() {
    for (filters, compressor) in [
        (json!([{"id": "crc32"}]), Value::Null),
        (Value::Null, json!({"id": "fletcher32"})),
        (
            json!([{"id": "adler32"}]),
            json!({"id": "zlib", "level": 1}),
        ),
    ] {
        let (store, a) = make(ElementType::Int32, "<i4", filters, compressor.clone(), 2);
        let a = a.unwrap();
        let data: Vec<u8> = (1..=70i32).flat_map(|v| v.to_ne_bytes()).collect();
        a.write(&[0, 0], &[10, 7], ElementType::Int32, Order::C, &data)
            .unwrap();
        let mut raw = store.get("a/1.2").unwrap().unwrap();
        if compressor.is_null() {
            raw[5] ^= 0x40;
        } else {
            raw.truncate(raw.len() - 1);
            raw.push(0);
        }
        store.set("a/1.2", &raw).unwrap();
        let mut out = vec![0u8; data.len()];
        let err = a
            .read(&[0, 0], &[10, 7], ElementType::Int32, Order::C, &mut out)
            .unwrap_err();
        assert!(
            matches!(err, Error::Codec(ref m) if m.contains("1.2")),
            "{err}"
        );
    }
}

#[test]
fn rejected_filters_write_nothing() {
    for (filters, kind) in [
        (json!([{"id": "delta", "dtype": "<f8"}]), "dtype"),
        (
            json!([{"id": "categorize", "labels": ["a"], "dtype": "<U1"}]),
            "<U1",
        ),
        (json!([{"id": "unknown_filter"}]), "unknown_filter"),
        (json!([{"id": "packbits"}]), "packbits"),
        (json!({"id": "delta"}), "list"),
        (
            json!([{"id": "delta", "dtype": "<i4", "astype": "<i8"}]),
            "larger",
        ),
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut b = ArrayBuilder::new(vec![1 << 40], ElementType::Int32);
        b.chunks(vec![(1 << 32) - 1])
            .filters(filters)
            .compressor(Value::Null);
        let err = b
            .create(store.clone(), "a", Mode::CreateNew)
            .unwrap_err()
            .to_string();
        assert!(err.contains(kind), "{err}");
        assert!(store.list().unwrap().is_empty(), "{err}");
    }
    // v3 cannot hold array filters with F order: rejected before anything is written.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![4, 4], ElementType::Int32);
    b.filters(json!([{"id": "delta", "dtype": "<i4"}]))
        .order(Order::F);
    b.zarr_format(3).unwrap();
    assert!(b.create(store.clone(), "a", Mode::CreateNew).is_err());
    assert!(store.list().unwrap().is_empty());
}

#[test]
fn stored_filter_metadata_is_checked_when_opened() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let zarray = json!({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<f4",
        "compressor": null, "fill_value": 0, "order": "C",
        "filters": [{"id": "delta", "dtype": "<i4"}]});
    store
        .set("a/.zarray", zarray.to_string().as_bytes())
        .unwrap();
    let err = Array::open(store.clone(), "a", Mode::Read)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("delta") && err.contains("<i4") && err.contains("<f4"),
        "{err}"
    );
    let zarray = json!({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<f4",
        "compressor": null, "fill_value": 0, "order": "C", "filters": [{"id": "zfpy"}]});
    store
        .set("a/.zarray", zarray.to_string().as_bytes())
        .unwrap();
    let err = Array::open(store.clone(), "a", Mode::Read).unwrap_err();
    assert!(
        matches!(err, Error::CodecUnsupported(ref m) if m.contains("zfpy")),
        "{err}"
    );
}

#[test]
fn sharded_v3_arrays_filter_inner_chunks() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![10, 7], ElementType::Int32);
    b.chunks(vec![2, 3])
        .shard_shape(vec![4, 6])
        .filters(json!([{"id": "delta", "dtype": "<i4"}, {"id": "crc32"}]))
        .compressor(Value::Null);
    b.zarr_format(3).unwrap();
    let a = b.create(store.clone(), "a", Mode::CreateNew).unwrap();
    let doc: Value = serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    let inner = &doc["codecs"][0]["configuration"]["codecs"];
    assert_eq!(inner[0]["name"], "numcodecs.delta");
    assert_eq!(inner[2]["name"], "numcodecs.crc32");
    let data: Vec<u8> = (0..70i32).flat_map(|v| (v * v).to_ne_bytes()).collect();
    a.write(&[0, 0], &[10, 7], ElementType::Int32, Order::C, &data)
        .unwrap();
    let again = Array::open(store, "a", Mode::Read).unwrap();
    let mut out = vec![0u8; data.len()];
    again
        .read(&[0, 0], &[10, 7], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, data);
}

#[test]
fn categorize_turns_unicode_labels_into_codes() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![5], ElementType::Raw);
    b.dtype_name("<U5")
        .unwrap()
        .chunks(vec![5])
        .compressor(Value::Null)
        .filters(json!([{"id": "categorize", "labels": ["red", "green"], "dtype": "<U5", "astype": "|u1"}]))
        .zarr_format(2)
        .unwrap();
    let a = b.create(store.clone(), "c", Mode::CreateNew).unwrap();
    let words = ["green", "red", "", "blue", "red"];
    let items: Vec<u8> = words
        .iter()
        .flat_map(|w| {
            let mut units: Vec<u32> = w.chars().map(u32::from).collect();
            units.resize(5, 0);
            units
                .into_iter()
                .flat_map(u32::to_ne_bytes)
                .collect::<Vec<u8>>()
        })
        .collect();
    a.write(&[0], &[5], ElementType::Raw, Order::C, &items)
        .unwrap();
    // Unknown labels (and the empty string) are code 0, as numcodecs encodes them.
    assert_eq!(store.get("c/0").unwrap().unwrap(), vec![2, 1, 0, 0, 1]);
    let mut back = vec![0u8; items.len()];
    a.read(&[0], &[5], ElementType::Raw, Order::C, &mut back)
        .unwrap();
    let expected: Vec<u8> = ["green", "red", "", "", "red"]
        .iter()
        .flat_map(|w| {
            let mut units: Vec<u32> = w.chars().map(u32::from).collect();
            units.resize(5, 0);
            units
                .into_iter()
                .flat_map(u32::to_ne_bytes)
                .collect::<Vec<u8>>()
        })
        .collect();
    assert_eq!(back, expected);
    // Labels for another width are refused, naming both types.
    let mut wrong = b.clone();
    wrong.filters(json!([{"id": "categorize", "labels": ["a"], "dtype": "<U2", "astype": "|u1"}]));
    let err = wrong.create(store, "w", Mode::CreateNew).unwrap_err();
    assert!(
        err.to_string().contains("<U2") && err.to_string().contains("<U5"),
        "{err}"
    );
}
