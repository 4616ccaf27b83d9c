//! The zfp (Zarr v3 `zfp`, numcodecs `zfpy`) and pcodec codecs through the Rust API: exact
//! round trips in their lossless modes, error bounds in the lossy ones, the metadata each
//! format writes, types and shapes they refuse, and hostile chunk streams that must fail
//! cleanly.
#![cfg(all(feature = "zfp", feature = "pcodec"))]

use serde_json::{json, Value};
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};
use zarr::Error;

/// The array's shape and its chunks' (edge chunks are partial).
const SHAPE: [u64; 3] = [20, 13, 7];
const CHUNKS: [u64; 3] = [8, 6, 5];

/// Creates array "a" in a new store.
fn create(
    elem: ElementType,
    codecs: Value,
    format: i32,
    chunks: &[u64],
) -> (Arc<dyn Store>, zarr::Result<Array>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let shape = if chunks.len() == SHAPE.len() {
        SHAPE.to_vec()
    } else {
        chunks.iter().map(|c| c * 2 + 1).collect()
    };
    let mut b = ArrayBuilder::new(shape, elem);
    b.chunks(chunks.to_vec())
        .compressor(codecs)
        .fill_value_json(json!(0));
    b.zarr_format(format).unwrap();
    let array = b.create(store.clone(), "a", Mode::CreateNew);
    (store, array)
}

/// A smooth field with a little noise: element `i` of `n`.
fn field(n: usize) -> Vec<f64> {
    let mut seed = 12345u64;
    (0..n)
        .map(|i| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let noise = ((seed >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.2;
            let x = i as f64;
            15.0 + 10.0 * (x / 50.0).sin() * (x / 7.0).cos() + noise
        })
        .collect()
}

/// The field as native bytes of `elem`.
fn native(elem: ElementType, values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| match elem {
            ElementType::Int8 => ((v * 4.0) as i8).to_ne_bytes().to_vec(),
            ElementType::UInt8 => ((v * 8.0) as u8).to_ne_bytes().to_vec(),
            ElementType::Int16 => ((v * 100.0) as i16).to_ne_bytes().to_vec(),
            ElementType::UInt16 => ((v * 100.0) as u16).to_ne_bytes().to_vec(),
            ElementType::Int32 => ((v * 1000.0) as i32).to_ne_bytes().to_vec(),
            ElementType::UInt32 => ((v * 1000.0) as u32).to_ne_bytes().to_vec(),
            ElementType::Int64 => ((v * 1e6) as i64).to_ne_bytes().to_vec(),
            ElementType::UInt64 => ((v * 1e6) as u64).to_ne_bytes().to_vec(),
            ElementType::Float16 => half::f16::from_f64(v).to_ne_bytes().to_vec(),
            ElementType::Float32 => (v as f32).to_ne_bytes().to_vec(),
            ElementType::Float64 => v.to_ne_bytes().to_vec(),
            other => panic!("no test data for {other:?}"),
        })
        .collect()
}

/// Writes the field, reopens the array and reads it all back.
fn write_read(store: &Arc<dyn Store>, a: &Array, elem: ElementType, data: &[u8]) -> Vec<u8> {
    let shape = a.metadata().shape.clone();
    a.write(&vec![0; shape.len()], &shape, elem, Order::C, data)
        .unwrap();
    let again = Array::open(store.clone(), "a", Mode::Read).unwrap();
    let mut out = vec![0u8; data.len()];
    again
        .read(&vec![0; shape.len()], &shape, elem, Order::C, &mut out)
        .unwrap();
    out
}

fn count(shape: &[u64]) -> usize {
    shape.iter().product::<u64>() as usize
}

/// The largest absolute difference between two float32 buffers.
fn max_error_f32(a: &[u8], b: &[u8]) -> f64 {
    a.chunks_exact(4)
        .zip(b.chunks_exact(4))
        .map(|(x, y)| {
            let x = f32::from_ne_bytes(x.try_into().unwrap()) as f64;
            let y = f32::from_ne_bytes(y.try_into().unwrap()) as f64;
            (x - y).abs()
        })
        .fold(0.0, f64::max)
}

#[test]
fn lossless_modes_round_trip_exactly() {
    let reversible = [
        json!({"name": "zfp", "configuration": {"mode": "reversible"}}),
        json!({"id": "zfpy", "mode": 5}),
        json!({"id": "pcodec"}),
        json!({"id": "pcodec", "level": 3, "mode_spec": "classic", "delta_spec": "try_consecutive", "delta_encoding_order": 2, "equal_pages_up_to": 100}),
        json!({"name": "numcodecs.pcodec", "configuration": {"delta_spec": "none"}}),
    ];
    for codec in reversible {
        let types: &[ElementType] = if codec["name"] == "zfp" {
            // The registered codec promotes narrow and unsigned integers.
            &[
                ElementType::Int8,
                ElementType::UInt8,
                ElementType::Int16,
                ElementType::UInt16,
                ElementType::Int32,
                ElementType::UInt32,
                ElementType::Int64,
                ElementType::UInt64,
                ElementType::Float32,
                ElementType::Float64,
            ]
        } else if codec.to_string().contains("zfp") {
            &[
                ElementType::Int32,
                ElementType::Int64,
                ElementType::Float32,
                ElementType::Float64,
            ]
        } else {
            &[
                ElementType::Int16,
                ElementType::UInt16,
                ElementType::Int32,
                ElementType::UInt32,
                ElementType::Int64,
                ElementType::UInt64,
                ElementType::Float16,
                ElementType::Float32,
                ElementType::Float64,
            ]
        };
        for &elem in types {
            for format in [2, 3] {
                let (store, a) = create(elem, codec.clone(), format, &CHUNKS);
                let a = a.unwrap_or_else(|e| panic!("{codec} {elem:?} v{format}: {e}"));
                let data = native(elem, &field(count(&SHAPE)));
                let out = write_read(&store, &a, elem, &data);
                assert!(out == data, "{codec} {elem:?} v{format}");
            }
        }
    }
}

#[test]
fn lossy_modes_keep_their_error_bound() {
    let data = native(ElementType::Float32, &field(count(&SHAPE)));
    for tolerance in [0.5, 0.01, 1e-4] {
        for codec in [
            json!({"name": "zfp", "configuration": {"mode": "fixed_accuracy", "tolerance": tolerance}}),
            json!({"id": "zfpy", "mode": 4, "tolerance": tolerance}),
        ] {
            for format in [2, 3] {
                let (store, a) = create(ElementType::Float32, codec.clone(), format, &CHUNKS);
                let out = write_read(&store, &a.unwrap(), ElementType::Float32, &data);
                let err = max_error_f32(&out, &data);
                assert!(err <= tolerance, "{codec} v{format}: error {err}");
                assert!(
                    err > 0.0 || tolerance < 1e-3,
                    "{codec}: lossless at {tolerance}?"
                );
            }
        }
    }
    // Fixed precision and fixed rate: bounded by the field's range, and the rate fixes the
    // stored size (one 4x4x4 block of 64 values in rate × 64 bits).
    for codec in [
        json!({"name": "zfp", "configuration": {"mode": "fixed_precision", "precision": 16}}),
        json!({"id": "zfpy", "mode": 3, "precision": 16}),
        json!({"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 8}}),
        json!({"id": "zfpy", "mode": 2, "rate": 8}),
        json!({"name": "zfp", "configuration": {"mode": "expert", "minbits": 1, "maxbits": 4096, "maxprec": 20, "minexp": -20}}),
    ] {
        let (store, a) = create(ElementType::Float32, codec.clone(), 3, &CHUNKS);
        let out = write_read(&store, &a.unwrap(), ElementType::Float32, &data);
        let err = max_error_f32(&out, &data);
        assert!(err < 0.5, "{codec}: error {err}");
    }
    let (store, a) = create(
        ElementType::Float64,
        json!({"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 8}}),
        3,
        &[4, 4, 4],
    );
    let a = a.unwrap();
    let data = native(ElementType::Float64, &field(count(&SHAPE)));
    write_read(&store, &a, ElementType::Float64, &data);
    let chunk = store.get("a/c/0/0/0").unwrap().unwrap();
    assert_eq!(chunk.len(), 64, "8 bits for each of 64 values");
}

#[test]
fn metadata_names_the_codec_in_each_format() {
    let (store, a) = create(
        ElementType::Float32,
        json!({"name": "zfp", "configuration": {"mode": "fixed_accuracy", "tolerance": 0.05}}),
        3,
        &CHUNKS,
    );
    a.unwrap();
    let doc: Value = serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["codecs"],
        json!([{"name": "zfp", "configuration": {"mode": "fixed_accuracy", "tolerance": 0.05}}])
    );
    let (store, a) = create(
        ElementType::Float64,
        json!([{"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.5}}, {"id": "crc32c"}]),
        3,
        &CHUNKS,
    );
    let a = a.unwrap();
    let data = native(ElementType::Float64, &field(count(&SHAPE)));
    write_read(&store, &a, ElementType::Float64, &data);
    let doc: Value = serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["codecs"],
        json!([
            {"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.5, "rate": -1.0, "precision": -1}},
            {"name": "crc32c"}
        ])
    );
    let (store, a) = create(
        ElementType::Int32,
        json!({"id": "pcodec", "level": 4}),
        2,
        &CHUNKS,
    );
    a.unwrap();
    let doc: Value = serde_json::from_slice(&store.get("a/.zarray").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["compressor"],
        json!({"id": "pcodec", "level": 4, "mode_spec": "auto", "delta_spec": "auto",
               "paging_spec": "equal_pages_up_to", "delta_encoding_order": null,
               "equal_pages_up_to": 262144})
    );
    let (store, a) = create(ElementType::Int32, json!({"id": "pcodec"}), 3, &CHUNKS);
    a.unwrap();
    let doc: Value = serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(doc["codecs"][0]["name"], "numcodecs.pcodec");
    assert_eq!(doc["codecs"].as_array().unwrap().len(), 1);
}

#[test]
fn sharded_and_high_rank_chunks() {
    // zfp as the inner chunks' codec of a shard.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(SHAPE.to_vec(), ElementType::Float32);
    b.chunks(vec![4, 3, 5])
        .shard_shape(vec![8, 6, 5])
        .compressor(json!({"name": "zfp", "configuration": {"mode": "reversible"}}));
    b.zarr_format(3).unwrap();
    let a = b.create(store.clone(), "a", Mode::CreateNew).unwrap();
    let data = native(ElementType::Float32, &field(count(&SHAPE)));
    assert!(write_read(&store, &a, ElementType::Float32, &data) == data);
    // Six dimensions, four of them above one: the registered codec drops the ones.
    let chunks = [2, 1, 3, 1, 4, 5];
    let (store, a) = create(
        ElementType::Float64,
        json!({"name": "zfp", "configuration": {"mode": "reversible"}}),
        3,
        &chunks,
    );
    let a = a.unwrap();
    let n = count(&a.metadata().shape);
    let data = native(ElementType::Float64, &field(n));
    assert!(write_read(&store, &a, ElementType::Float64, &data) == data);
    // Five dimensions above one, or zfpy beyond four: refused when writing.
    let (_, a) = create(
        ElementType::Float64,
        json!({"name": "zfp", "configuration": {"mode": "reversible"}}),
        3,
        &[2, 2, 2, 2, 2],
    );
    let a = a.unwrap();
    let n = count(&a.metadata().shape);
    let shape = a.metadata().shape.clone();
    let err = a
        .write(
            &[0; 5],
            &shape,
            ElementType::Float64,
            Order::C,
            &native(ElementType::Float64, &field(n)),
        )
        .unwrap_err();
    assert!(err.to_string().contains("1 to 4 dimensions"), "{err}");
    let (_, a) = create(
        ElementType::Float64,
        json!({"id": "zfpy", "mode": 5}),
        3,
        &[2, 2, 2, 2, 2],
    );
    assert!(
        matches!(a, Err(Error::CodecUnsupported(ref m)) if m.contains("zfpy")),
        "{a:?}"
    );
}

#[test]
fn unsupported_types_and_settings_are_refused() {
    let zfp = json!({"name": "zfp", "configuration": {"mode": "reversible"}});
    for (elem, codec) in [
        (ElementType::Int8, json!({"id": "zfpy", "mode": 5})),
        (ElementType::UInt32, json!({"id": "zfpy", "mode": 5})),
        (ElementType::Float16, zfp.clone()),
        (ElementType::Bool, zfp.clone()),
        (ElementType::Int8, json!({"id": "pcodec"})),
        (ElementType::Bool, json!({"id": "pcodec"})),
    ] {
        let (_, a) = create(elem, codec.clone(), 3, &CHUNKS);
        let err = a.unwrap_err();
        assert!(err.to_string().contains("not "), "{codec} {elem:?}: {err}");
    }
    for codec in [
        json!({"name": "zfp", "configuration": {"mode": "fixed_rate"}}),
        json!({"name": "zfp", "configuration": {"mode": "fixed_accuracy", "tolerance": -1}}),
        json!({"name": "zfp", "configuration": {"mode": "fixed_precision", "precision": 0}}),
        json!({"name": "zfp", "configuration": {"mode": "lossy"}}),
        json!({"name": "zfp", "configuration": {"mode": "expert", "minbits": 9, "maxbits": 8, "maxprec": 1, "minexp": 0}}),
        json!({"id": "zfpy", "mode": 1}),
        json!({"id": "pcodec", "level": 13}),
        json!({"id": "pcodec", "mode_spec": "dict"}),
        json!({"id": "pcodec", "delta_spec": "try_consecutive"}),
        json!({"id": "pcodec", "paging_spec": "exact"}),
        // A typed codec after another bytes codec.
        json!([{"id": "zstd"}, {"id": "pcodec"}]),
        // Rates beyond a value's 64 bits (zfp sizes its output by them).
        json!({"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 64.5}}),
        json!({"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 1e12}}),
        json!({"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 0}}),
        json!({"id": "zfpy", "mode": 2, "rate": 1e12}),
    ] {
        let (_, a) = create(ElementType::Float32, codec.clone(), 3, &CHUNKS);
        assert!(a.is_err(), "{codec}");
    }
}

/// Stores `bytes` as chunk (0, 0, 0) of a fresh array with `codec` and reads that chunk.
fn read_hostile(elem: ElementType, codec: &Value, format: i32, bytes: &[u8]) -> zarr::Result<()> {
    let (store, a) = create(elem, codec.clone(), format, &CHUNKS);
    a.unwrap();
    let key = if format == 3 { "a/c/0/0/0" } else { "a/0.0.0" };
    store.set(key, bytes).unwrap();
    let a = Array::open(store, "a", Mode::Read).unwrap();
    let mut out = vec![0u8; count(&CHUNKS) * elem.size()];
    a.read(&[0, 0, 0], &CHUNKS, elem, Order::C, &mut out)
}

/// The encoded first chunk of the field with `codec`.
fn encoded_chunk(elem: ElementType, codec: &Value, format: i32, chunks: &[u64]) -> Vec<u8> {
    let (store, a) = create(elem, codec.clone(), format, chunks);
    let a = a.unwrap();
    let data = native(elem, &field(count(&a.metadata().shape)));
    write_read(&store, &a, elem, &data);
    let key = if format == 3 {
        format!("a/c/{}", vec!["0"; chunks.len()].join("/"))
    } else {
        format!("a/{}", vec!["0"; chunks.len()].join("."))
    };
    store.get(&key).unwrap().unwrap()
}

#[test]
fn hostile_streams_fail_cleanly() {
    let codecs = [
        (
            ElementType::Float32,
            json!({"name": "zfp", "configuration": {"mode": "reversible"}}),
        ),
        (
            ElementType::Float64,
            json!({"name": "zfp", "configuration": {"mode": "fixed_accuracy", "tolerance": 1e-3}}),
        ),
        (ElementType::Int32, json!({"id": "zfpy", "mode": 5})),
        (
            ElementType::Float32,
            json!({"id": "zfpy", "mode": 4, "tolerance": 0.01}),
        ),
        (ElementType::Float64, json!({"id": "pcodec"})),
        (ElementType::Int16, json!({"id": "pcodec"})),
    ];
    for (elem, codec) in &codecs {
        let good = encoded_chunk(*elem, codec, 2, &CHUNKS);
        let mut flipped = good.clone();
        for b in flipped.iter_mut().take(16) {
            *b ^= 0x5a;
        }
        let mut longer = good.clone();
        longer.extend_from_slice(&good);
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("empty", vec![]),
            ("one byte", vec![1]),
            ("truncated to half", good[..good.len() / 2].to_vec()),
            ("truncated by one", good[..good.len() - 1].to_vec()),
            ("garbage", b"garbage garbage garbage garbage".repeat(9)),
            ("header flipped", flipped),
            ("all ones", vec![0xff; good.len()]),
        ];
        // The registered zfp codec's stream has no header and no check: any bits are
        // some stream, so changed bytes may decode (to other numbers); only a stream too
        // short for its blocks is sure to fail. A checksum codec after it catches the rest.
        let headerless = codec["name"] == "zfp";
        for (name, bytes) in cases {
            match read_hostile(*elem, codec, 2, &bytes) {
                Err(Error::Codec(m)) => assert!(m.contains("chunk"), "{codec} {name}: {m}"),
                Ok(()) if headerless && !matches!(name, "empty" | "one byte") => {}
                other => panic!("{codec} {name}: {other:?}"),
            }
        }
        // The stream of a chunk of another type, or of another size.
        let other_elem = if elem.size() == 8 {
            ElementType::Int32
        } else {
            ElementType::Int64
        };
        let wrong_type = encoded_chunk(other_elem, codec, 2, &CHUNKS);
        let wrong_size = encoded_chunk(*elem, codec, 2, &[4, 6, 5]);
        if !headerless {
            assert!(
                read_hostile(*elem, codec, 2, &wrong_type).is_err(),
                "{codec} type"
            );
            assert!(
                read_hostile(*elem, codec, 2, &wrong_size).is_err(),
                "{codec} size"
            );
        }
    }
}

#[test]
fn a_header_that_lies_is_refused_before_decoding() {
    // zfpy: a header claiming a huge float64 array for a chunk of 240 float32.
    let codec = json!({"id": "zfpy", "mode": 5});
    let mut good = encoded_chunk(ElementType::Float32, &codec, 2, &CHUNKS);
    // The header's 32-bit magic "zfp" + codec version, then 52 bits of field metadata: set
    // every metadata bit (type, dimensions, extents) to claim the largest array.
    for b in &mut good[4..10] {
        *b = 0xff;
    }
    let err = read_hostile(ElementType::Float32, &codec, 2, &good).unwrap_err();
    assert!(
        matches!(err, Error::Codec(ref m) if m.contains("zfpy data")),
        "{err}"
    );
}

#[test]
fn narrow_and_unsigned_integers_are_promoted_as_the_registered_codec_says() {
    // uint8 0..=255 and int16 extremes survive reversible mode exactly; uint32 above
    // int32's range is clamped (the spec's promotion), in every mode.
    let zfp = json!({"name": "zfp", "configuration": {"mode": "reversible"}});
    let (store, a) = create(ElementType::UInt8, zfp.clone(), 3, &[16]);
    let a = a.unwrap();
    let n = count(&a.metadata().shape);
    let data: Vec<u8> = (0..n).map(|i| (i * 97 % 256) as u8).collect();
    assert_eq!(write_read(&store, &a, ElementType::UInt8, &data), data);
    let (store, a) = create(ElementType::Int16, zfp.clone(), 3, &[16]);
    let a = a.unwrap();
    let values: Vec<i16> = (0..n).map(|i| [i16::MIN, i16::MAX, 0, -1][i % 4]).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    assert_eq!(write_read(&store, &a, ElementType::Int16, &data), data);
    let (store, a) = create(ElementType::UInt32, zfp, 3, &[16]);
    let a = a.unwrap();
    let values: Vec<u32> = (0..n).map(|i| [0, 7, u32::MAX, 1 << 31][i % 4]).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let back = write_read(&store, &a, ElementType::UInt32, &data);
    let expected: Vec<u8> = values
        .iter()
        .flat_map(|&v| v.min(i32::MAX as u32).to_ne_bytes())
        .collect();
    assert_eq!(back, expected);
}

/// A float32 Zarr v3 array "a" of `shape` with the chunk grid `grid` and `codecs`, in a new
/// store.
fn v3_array(shape: &[u64], grid: Value, codecs: Value) -> (Arc<dyn Store>, zarr::Result<Array>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let doc = json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": "float32",
        "chunk_grid": grid,
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": codecs,
        "attributes": {},
    });
    store
        .set("a/zarr.json", &serde_json::to_vec(&doc).unwrap())
        .unwrap();
    let a = Array::open(store.clone(), "a", Mode::ReadWrite);
    (store, a)
}

fn regular(chunks: &[u64]) -> Value {
    json!({"name": "regular", "configuration": {"chunk_shape": chunks}})
}

fn rectilinear(chunk_shapes: Value) -> Value {
    json!({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}})
}

/// The stored object `key` of `store`.
fn stored(store: &Arc<dyn Store>, key: &str) -> Vec<u8> {
    store.get(key).unwrap().expect(key)
}

#[test]
fn rates_up_to_64_bits_per_value_are_accepted() {
    let (store, a) = create(
        ElementType::Float32,
        json!({"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 64}}),
        3,
        &CHUNKS,
    );
    let a = a.unwrap();
    let data = native(ElementType::Float32, &field(count(&SHAPE)));
    assert!(max_error_f32(&write_read(&store, &a, ElementType::Float32, &data), &data) < 1e-3);
    let (_, a) = create(
        ElementType::Float32,
        json!({"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 64.5}}),
        3,
        &CHUNKS,
    );
    let err = a.unwrap_err().to_string();
    assert!(err.contains("\"rate\"") && err.contains("(0, 64]"), "{err}");
}

#[test]
fn zfp_codes_each_chunk_of_a_rectilinear_grid_at_its_own_shape() {
    for codec in [
        json!({"name": "zfp", "configuration": {"mode": "reversible"}}),
        json!({"name": "numcodecs.zfpy", "configuration": {"mode": 5}}),
    ] {
        let (store, a) = v3_array(
            &[7, 5],
            rectilinear(json!([[4, 2, 1], [3, 2]])),
            json!([codec]),
        );
        let a = a.unwrap();
        let data = native(ElementType::Float32, &field(35));
        assert!(
            write_read(&store, &a, ElementType::Float32, &data) == data,
            "{codec}"
        );
        // The 1x2 corner chunk is the field a regular array of 1x2 chunks makes of it.
        let (one, b) = v3_array(&[1, 2], regular(&[1, 2]), json!([codec]));
        b.unwrap()
            .write(
                &[0, 0],
                &[1, 2],
                ElementType::Float32,
                Order::C,
                &data[33 * 4..],
            )
            .unwrap();
        assert_eq!(
            stored(&store, "a/c/2/1"),
            stored(&one, "a/c/0/0"),
            "{codec}"
        );
        // A copy with another compressor decodes each chunk at its shape.
        let target: Arc<dyn Store> = Arc::new(MemoryStore::new());
        zarr::node::copy(
            &store,
            "a",
            &target,
            "a",
            Some(&json!({"id": "zstd"})),
            Mode::CreateNew,
        )
        .unwrap();
        let c = Array::open(target, "a", Mode::Read).unwrap();
        let mut out = vec![0u8; data.len()];
        c.read(&[0, 0], &[7, 5], ElementType::Float32, Order::C, &mut out)
            .unwrap();
        assert!(out == data, "{codec}");
    }
}

#[test]
fn reshape_gives_zfp_the_shape_it_encodes() {
    let zfp = json!({"name": "zfp", "configuration": {"mode": "reversible"}});
    let reshape = |shape: Value| json!({"name": "reshape", "configuration": {"shape": shape}});
    // Chunks of 8x4x4 reshaped to 32x4: the stored chunk is a 2-D zfp field, as a 2-D
    // array of 32x4 chunks stores it.
    let (store, a) = v3_array(
        &[8, 4, 4],
        regular(&[8, 4, 4]),
        json!([reshape(json!([[0, 1], [2]])), zfp]),
    );
    let a = a.unwrap();
    let data = native(ElementType::Float32, &field(128));
    assert!(write_read(&store, &a, ElementType::Float32, &data) == data);
    let (flat, b) = v3_array(&[32, 4], regular(&[32, 4]), json!([zfp]));
    b.unwrap()
        .write(&[0, 0], &[32, 4], ElementType::Float32, Order::C, &data)
        .unwrap();
    assert_eq!(stored(&store, "a/c/0/0/0"), stored(&flat, "a/c/0/0"));
    // Five dimensions of more than one item reshaped to the four zfp and zfpy take.
    for codec in [
        zfp.clone(),
        json!({"name": "numcodecs.zfpy", "configuration": {"mode": 5}}),
    ] {
        let (store, a) = v3_array(
            &[4, 4, 2, 2, 2],
            regular(&[2, 2, 2, 2, 2]),
            json!([reshape(json!([[0, 1], [2], [3], [4]])), codec]),
        );
        let a = a.unwrap();
        let data = native(ElementType::Float32, &field(128));
        assert!(
            write_read(&store, &a, ElementType::Float32, &data) == data,
            "{codec}"
        );
    }
    // A transpose hands zfp the transposed 3x2 chunk, as a 3x2 array of its items stores it.
    let (store, a) = v3_array(
        &[4, 6],
        regular(&[2, 3]),
        json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, zfp]),
    );
    let a = a.unwrap();
    let data = native(ElementType::Float32, &field(24));
    assert!(write_read(&store, &a, ElementType::Float32, &data) == data);
    let transposed: Vec<u8> = (0..3)
        .flat_map(|j| (0..2).map(move |i| i * 6 + j))
        .flat_map(|k| data[k * 4..k * 4 + 4].to_vec())
        .collect();
    let (flat, b) = v3_array(&[3, 2], regular(&[3, 2]), json!([zfp]));
    b.unwrap()
        .write(
            &[0, 0],
            &[3, 2],
            ElementType::Float32,
            Order::C,
            &transposed,
        )
        .unwrap();
    assert_eq!(stored(&store, "a/c/0/0"), stored(&flat, "a/c/0/0"));
    // On a rectilinear grid every chunk shape must fit the reshape: 32x4 holds the 8x4x4
    // chunk but not the 2x4x4 one.
    let grid = rectilinear(json!([[8, 2], [4], [4]]));
    let (_, a) = v3_array(
        &[10, 4, 4],
        grid.clone(),
        json!([reshape(json!([32, 4])), zfp]),
    );
    let err = a.unwrap_err().to_string();
    assert!(err.contains("[2, 4, 4]"), "{err}");
    let (store, a) = v3_array(
        &[10, 4, 4],
        grid,
        json!([reshape(json!([[0, 1], [2]])), zfp]),
    );
    let a = a.unwrap();
    let data = native(ElementType::Float32, &field(160));
    assert!(write_read(&store, &a, ElementType::Float32, &data) == data);
}

#[test]
fn a_bytes_codec_beside_a_typed_codec_is_refused() {
    for name in ["zfp", "pcodec"] {
        let config = match name {
            "zfp" => json!({"mode": "reversible"}),
            _ => json!({}),
        };
        let (_, a) = v3_array(
            &[8],
            regular(&[8]),
            json!([{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": name, "configuration": config}]),
        );
        let err = a.unwrap_err().to_string();
        assert!(err.contains(&format!("{name:?}")), "{err}");
    }
}
