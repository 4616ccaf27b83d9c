//! Fixed-width strings, raw bytes, structured records and variable-length items: metadata as
//! peers write it, exact data through the raw and vlen paths, and the errors.

use serde_json::{json, Value};
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};
use zarr::Error;

fn build(
    store: &Arc<MemoryStore>,
    dtype: &str,
    format: u8,
    shape: Vec<u64>,
    chunks: Vec<u64>,
) -> Array {
    let mut b = ArrayBuilder::new(shape, ElementType::Int8);
    b.dtype_name(dtype)
        .unwrap()
        .chunks(chunks)
        .zarr_format(format.into())
        .unwrap();
    b.create(store.clone(), "a", Mode::Overwrite).unwrap()
}

fn doc(store: &MemoryStore, key: &str) -> Value {
    serde_json::from_slice(&store.get(key).unwrap().unwrap()).unwrap()
}

#[test]
fn fixed_width_types_move_as_raw_items() {
    for (dtype, item) in [
        ("|S3", 3usize),
        ("<U2", 8),
        (">U2", 8),
        ("|V4", 4),
        ("r32", 4),
    ] {
        for format in [2u8, 3] {
            if dtype == "r32" && format == 2 {
                continue;
            }
            let store = Arc::new(MemoryStore::new());
            let a = build(&store, dtype, format, vec![5], vec![2]);
            assert_eq!(a.metadata().item_size(), item);
            assert_eq!(a.metadata().dtype.element_type(), ElementType::Raw);
            let data: Vec<u8> = (0..5 * item as u8).collect();
            a.write(&[0], &[5], ElementType::Raw, Order::C, &data)
                .unwrap();
            let reopened = Array::open(store.clone(), "a", Mode::Read).unwrap();
            let mut back = vec![0u8; data.len()];
            reopened
                .read(&[0], &[5], ElementType::Raw, Order::C, &mut back)
                .unwrap();
            assert_eq!(back, data, "{dtype} v{format}");
            // Wrong memory type and wrong buffer size.
            let mut wrong = vec![0u8; 5];
            assert!(matches!(
                reopened.read(&[0], &[5], ElementType::UInt8, Order::C, &mut wrong),
                Err(Error::DtypeMismatch(_))
            ));
            assert!(matches!(
                reopened.read(&[0], &[5], ElementType::Raw, Order::C, &mut wrong),
                Err(Error::BufferSize(_))
            ));
        }
    }
}

#[test]
fn big_endian_unicode_is_stored_big_endian_and_read_native() {
    let store = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![2], ElementType::Raw);
    b.dtype_name(">U2")
        .unwrap()
        .chunks(vec![2])
        .compressor(Value::Null)
        .zarr_format(2)
        .unwrap();
    let a = b.create(store.clone(), "a", Mode::Overwrite).unwrap();
    let native: Vec<u8> = ['a', '😀', 'b', '\0']
        .iter()
        .flat_map(|&c| (c as u32).to_ne_bytes())
        .collect();
    a.write(&[0], &[2], ElementType::Raw, Order::C, &native)
        .unwrap();
    let stored = store.get("a/0").unwrap().unwrap();
    let expected: Vec<u8> = ['a', '😀', 'b', '\0']
        .iter()
        .flat_map(|&c| (c as u32).to_be_bytes())
        .collect();
    assert_eq!(stored, expected);
    assert_eq!(doc(&store, "a/.zarray")["dtype"], json!(">U2"));
}

#[test]
fn structured_records_round_trip_with_their_metadata() {
    let store = Arc::new(MemoryStore::new());
    let dtype = json!([
        ["id", "<i4"],
        ["pos", ">f8", [2]],
        ["tag", [["c", "|S2"], ["u", "<u2"]]]
    ]);
    let mut b = ArrayBuilder::new(vec![3], ElementType::Raw);
    b.dtype_name(&dtype.to_string())
        .unwrap()
        .chunks(vec![2])
        .zarr_format(2)
        .unwrap();
    b.fill_value_json(json!("AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
    let a = b.create(store.clone(), "a", Mode::Overwrite).unwrap();
    let meta = doc(&store, "a/.zarray");
    assert_eq!(meta["dtype"], dtype);
    assert_eq!(
        meta["fill_value"],
        json!("AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
    );
    assert_eq!(a.metadata().item_size(), 4 + 16 + 4);
    // Unwritten records read as the fill value (id 1, the rest zero).
    let mut back = vec![0xffu8; 3 * 24];
    a.read(&[0], &[3], ElementType::Raw, Order::C, &mut back)
        .unwrap();
    for r in back.chunks(24) {
        assert_eq!(r[..4], 1i32.to_le_bytes());
        assert!(r[4..].iter().all(|&b| b == 0));
    }
    let data: Vec<u8> = (0..72u8).collect();
    a.write(&[0], &[3], ElementType::Raw, Order::C, &data)
        .unwrap();
    a.read(&[0], &[3], ElementType::Raw, Order::C, &mut back)
        .unwrap();
    assert_eq!(back, data);
    let leaves: Vec<(String, usize)> = a
        .metadata()
        .dtype
        .leaf_fields()
        .into_iter()
        .map(|f| (f.name, f.offset))
        .collect();
    assert_eq!(
        leaves,
        [
            ("id".into(), 0),
            ("pos".into(), 4),
            ("tag.c".into(), 20),
            ("tag.u".into(), 22)
        ]
    );
}

#[test]
fn variable_length_strings_round_trip_in_v2_and_v3() {
    let words: Vec<&str> = vec!["", "a", "héllo", "😀 non-BMP", "nul\0inside", "x", "last"];
    for format in [2u8, 3] {
        let store = Arc::new(MemoryStore::new());
        let a = build(&store, "string", format, vec![7], vec![3]);
        let items: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        a.write_vlen(&[0], &[7], Order::C, &items).unwrap();
        let back = Array::open(store.clone(), "a", Mode::Read)
            .unwrap()
            .read_vlen(&[0], &[7], Order::C)
            .unwrap();
        let got: Vec<&[u8]> = (0..back.len()).map(|i| back.get(i)).collect();
        assert_eq!(got, items, "v{format}");
        // A partial rewrite keeps its neighbours.
        a.write_vlen(&[2], &[2], Order::C, &[b"two", b"three"])
            .unwrap();
        let back = a.read_vlen(&[1], &[4], Order::C).unwrap();
        assert_eq!(back.get(0), b"a");
        assert_eq!(back.get(1), b"two");
        assert_eq!(back.get(2), b"three");
        assert_eq!(back.get(3), "nul\0inside".as_bytes());
        // Invalid UTF-8 is refused before anything is stored.
        let before = store
            .get(if format == 2 { "a/0" } else { "a/c/0" })
            .unwrap();
        let err = a
            .write_vlen(&[0], &[2], Order::C, &[b"ok", b"\xff\xfe"])
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidArg(ref m) if m.contains("item 1")),
            "{err}"
        );
        assert_eq!(
            store
                .get(if format == 2 { "a/0" } else { "a/c/0" })
                .unwrap(),
            before
        );
        // Fixed-size calls are refused.
        let mut buf = vec![0u8; 7];
        assert!(matches!(
            a.read(&[0], &[7], ElementType::UInt8, Order::C, &mut buf),
            Err(Error::DtypeMismatch(_))
        ));
    }
}

#[test]
fn vlen_metadata_is_what_zarr_python_writes() {
    let store = Arc::new(MemoryStore::new());
    build(&store, "string", 2, vec![4], vec![2]);
    let meta = doc(&store, "a/.zarray");
    assert_eq!(meta["dtype"], json!("|O"));
    assert_eq!(meta["filters"], json!([{"id": "vlen-utf8"}]));
    // xarray's fill (zarr-python 2.18 writes ""), which xarray does not mask.
    assert_eq!(meta["fill_value"], json!(null));
    build(&store, "string", 3, vec![4], vec![2]);
    let meta = doc(&store, "a/zarr.json");
    assert_eq!(meta["data_type"], json!("string"));
    assert_eq!(
        meta["codecs"][0],
        json!({"name": "vlen-utf8", "configuration": {}})
    );
    build(&store, "bytes", 3, vec![4], vec![2]);
    let meta = doc(&store, "a/zarr.json");
    assert_eq!(meta["data_type"], json!("bytes"));
    assert_eq!(
        meta["codecs"][0],
        json!({"name": "vlen-bytes", "configuration": {}})
    );
    build(
        &store,
        r#"{"id": "vlen-array", "dtype": ">i2"}"#,
        2,
        vec![4],
        vec![2],
    );
    let meta = doc(&store, "a/.zarray");
    assert_eq!(
        meta["filters"],
        json!([{"id": "vlen-array", "dtype": ">i2"}])
    );
}

#[test]
fn vlen_arrays_move_in_native_byte_order() {
    let store = Arc::new(MemoryStore::new());
    let a = build(
        &store,
        r#"{"id": "vlen-array", "dtype": ">i2"}"#,
        2,
        vec![2],
        vec![2],
    );
    let first: Vec<u8> = [1i16, -2, 3].iter().flat_map(|v| v.to_ne_bytes()).collect();
    a.write_vlen(&[0], &[2], Order::C, &[&first, &[]]).unwrap();
    let back = a.read_vlen(&[0], &[2], Order::C).unwrap();
    assert_eq!(back.get(0), first);
    assert!(back.get(1).is_empty());
    assert!(matches!(
        a.write_vlen(&[0], &[1], Order::C, &[&[1, 2, 3]]),
        Err(Error::InvalidArg(_))
    ));
}

#[test]
fn corrupt_vlen_chunks_are_errors_naming_the_chunk() {
    let store = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![2], ElementType::String);
    b.chunks(vec![2])
        .compressor(Value::Null)
        .zarr_format(2)
        .unwrap();
    let a = b.create(store.clone(), "a", Mode::Overwrite).unwrap();
    for bad in [
        vec![2u8, 0, 0, 0, 1, 0, 0, 0, b'a', 200, 0, 0, 0, b'b'],
        vec![3u8, 0, 0, 0],
        vec![2u8, 0, 0, 0, 1, 0, 0, 0, 0xff, 0, 0, 0, 0],
    ] {
        store.set("a/0", &bad).unwrap();
        let err = a.read_vlen(&[0], &[2], Order::C).unwrap_err();
        assert!(
            matches!(err, Error::Codec(ref m) if m.contains("\"a/0\"")),
            "{err}"
        );
    }
}

/// A variable-length chunk of a huge chunk shape whose count says "every item" but whose
/// data holds none: an error naming the chunk, with nothing reserved for the claimed count.
#[test]
fn a_vlen_count_the_chunk_cannot_hold_reserves_nothing() {
    let store = Arc::new(MemoryStore::new());
    let n = u64::from(u32::MAX);
    let mut b = ArrayBuilder::new(vec![n], ElementType::String);
    b.chunks(vec![n])
        .compressor(Value::Null)
        .zarr_format(2)
        .unwrap();
    let a = b.create(store.clone(), "a", Mode::Overwrite).unwrap();
    // The count matches the chunk (2^32 - 1 items); one length follows, then nothing.
    let mut chunk = u32::MAX.to_le_bytes().to_vec();
    chunk.extend_from_slice(&[0, 0, 0, 0]);
    store.set("a/0", &chunk).unwrap();
    let err = a.read_vlen(&[0], &[1], Order::C).unwrap_err();
    assert!(
        matches!(err, Error::Codec(ref m) if m.contains("\"a/0\"")),
        "{err}"
    );
}

#[test]
fn fill_values_of_string_types_read_back() {
    let store = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![3], ElementType::String);
    b.chunks(vec![2]).fill_value_json(json!("n/a"));
    let a = b.create(store.clone(), "a", Mode::Overwrite).unwrap();
    a.write_vlen(&[0], &[1], Order::C, &[b"x"]).unwrap();
    let back = a.read_vlen(&[0], &[3], Order::C).unwrap();
    assert_eq!(
        (back.get(0), back.get(1), back.get(2)),
        (&b"x"[..], &b"n/a"[..], &b"n/a"[..])
    );
    // NCZarr's "" for |S and zarr-python 2's "0" for <U.
    let mut b = ArrayBuilder::new(vec![2], ElementType::Raw);
    b.dtype_name("|S4").unwrap().fill_value_json(json!(""));
    let a = b.create(store.clone(), "s", Mode::Overwrite).unwrap();
    assert_eq!(a.metadata().fill_value, Some(vec![0; 4]));
    let mut b = ArrayBuilder::new(vec![2], ElementType::Raw);
    b.dtype_name("<U1").unwrap().fill_value_json(json!(0));
    let a = b.create(store.clone(), "u", Mode::Overwrite).unwrap();
    assert_eq!(
        a.metadata().fill_value,
        Some(('0' as u32).to_ne_bytes().to_vec())
    );
}

#[test]
fn copying_variable_length_arrays_re_encodes_their_chunks() {
    let source: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let target: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![5], ElementType::String);
    b.chunks(vec![2]);
    let a = b.create(source.clone(), "s", Mode::Overwrite).unwrap();
    let items: [&[u8]; 5] = [b"a", b"", "\u{e9}".as_bytes(), b"dd", b"e"];
    a.write_vlen(&[0], &[5], Order::C, &items).unwrap();
    let zstd = json!({"id": "zstd", "level": 3});
    zarr::node::copy(&source, "s", &target, "t", Some(&zstd), Mode::CreateNew).unwrap();
    let copy = Array::open(target.clone(), "t", Mode::Read).unwrap();
    assert_eq!(
        copy.metadata().chain().bytes_to_bytes[0].config()["id"],
        json!("zstd")
    );
    let back = copy.read_vlen(&[0], &[5], Order::C).unwrap();
    assert_eq!((0..5).map(|i| back.get(i)).collect::<Vec<_>>(), items);

    // Sharded, re-encoded shard by shard (this failed with a type mismatch before).
    let mut b = ArrayBuilder::new(vec![5], ElementType::String);
    b.chunks(vec![2])
        .shard_shape(vec![4])
        .zarr_format(3)
        .unwrap();
    let sharded = b.create(source.clone(), "sh", Mode::Overwrite).unwrap();
    sharded.write_vlen(&[0], &[5], Order::C, &items).unwrap();
    zarr::node::copy(&source, "sh", &target, "sh", Some(&zstd), Mode::CreateNew).unwrap();
    let back = Array::open(target.clone(), "sh", Mode::Read)
        .unwrap()
        .read_vlen(&[0], &[5], Order::C)
        .unwrap();
    assert_eq!((0..5).map(|i| back.get(i)).collect::<Vec<_>>(), items);

    // json2 strings copied into an existing vlen-utf8 array: re-framed item by item.
    source
        .set(
            "j/.zarray",
            json!({"zarr_format": 2, "shape": [5], "chunks": [2], "dtype": "|O",
                "compressor": null, "fill_value": null, "order": "C",
                "filters": [{"id": "json2"}]})
            .to_string()
            .as_bytes(),
        )
        .unwrap();
    for (key, chunk) in [
        ("j/0", r#"["a",""]"#),
        ("j/1", r#"["\u00e9","dd"]"#),
        ("j/2", r#"["e",null]"#),
    ] {
        let doc = format!("{},\"|O\",[2]]", &chunk[..chunk.len() - 1]);
        source.set(key, doc.as_bytes()).unwrap();
    }
    let mut b = ArrayBuilder::new(vec![5], ElementType::String);
    b.chunks(vec![2])
        .compressor(Value::Null)
        .zarr_format(2)
        .unwrap();
    b.create(target.clone(), "j", Mode::CreateNew).unwrap();
    zarr::node::copy(&source, "j", &target, "j", None, Mode::Append).unwrap();
    let copy = Array::open(target.clone(), "j", Mode::Read).unwrap();
    let back = copy.read_vlen(&[0], &[5], Order::C).unwrap();
    assert_eq!((0..5).map(|i| back.get(i)).collect::<Vec<_>>(), items);
    let stored = target.get("j/0").unwrap().unwrap();
    assert_eq!(
        stored[..4],
        2u32.to_le_bytes(),
        "vlen framing: the item count first"
    );
}

/// Builds a v3 array of `dtype` with `fill` (metadata JSON) in a fresh memory store.
fn build_v3(dtype: &str, fill: Option<Value>, shape: Vec<u64>) -> (Arc<MemoryStore>, Array) {
    let store = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(shape, ElementType::Raw);
    b.dtype_name(dtype).unwrap().zarr_format(3).unwrap();
    b.compressor(Value::Null);
    if let Some(fill) = fill {
        b.fill_value_json(fill);
    }
    let a = b.create(store.clone(), "a", Mode::Overwrite).unwrap();
    (store, a)
}

#[test]
fn extension_floats_move_as_bits_with_exact_fill_values() {
    for (name, elem, fill, fill_bits) in [
        (
            "bfloat16",
            ElementType::BFloat16,
            json!(0.1),
            vec![0xcd, 0x3d],
        ),
        (
            "float8_e4m3fn",
            ElementType::Float8E4M3FN,
            json!(-448.0),
            vec![0xfe],
        ),
        (
            "float8_e5m2",
            ElementType::Float8E5M2,
            json!("-Infinity"),
            vec![0xfc],
        ),
        (
            "float8_e4m3fnuz",
            ElementType::Float8E4M3FNUZ,
            json!("NaN"),
            vec![0x80],
        ),
        (
            "float8_e8m0fnu",
            ElementType::Float8E8M0FNU,
            json!(0.25),
            vec![0x7d],
        ),
        (
            "float4_e2m1fn",
            ElementType::Float4E2M1FN,
            json!(1.5),
            vec![0x03],
        ),
    ] {
        let (store, a) = build_v3(name, Some(fill.clone()), vec![3]);
        let doc = doc(&store, "a/zarr.json");
        assert_eq!(doc["data_type"], name);
        let mut back = vec![0u8; 3 * fill_bits.len()];
        a.read(&[0], &[3], elem, Order::C, &mut back).unwrap();
        assert_eq!(back, fill_bits.repeat(3), "{name}");
        let expected_fill = match name {
            "bfloat16" => json!(0.10009765625),
            _ => fill,
        };
        assert_eq!(doc["fill_value"], expected_fill, "{name}");
        assert!(matches!(
            a.read(&[0], &[3], ElementType::UInt8, Order::C, &mut back),
            Err(Error::DtypeMismatch(_))
        ));
    }
    // bfloat16 is 2 bytes: the bytes codec says its order; it reads and writes as float32.
    let (store, a) = build_v3("bfloat16", None, vec![4]);
    assert_eq!(
        doc(&store, "a/zarr.json")["codecs"][0]["configuration"]["endian"],
        if cfg!(target_endian = "little") {
            "little"
        } else {
            "big"
        }
    );
    let values: [f32; 4] = [1.0, -2.5, 0.1, f32::INFINITY];
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    a.write(&[0], &[4], ElementType::Float32, Order::C, &bytes)
        .unwrap();
    let mut bits = vec![0u8; 8];
    a.read(&[0], &[4], ElementType::BFloat16, Order::C, &mut bits)
        .unwrap();
    let words: Vec<u16> = bits
        .chunks(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(words, [0x3f80, 0xc020, 0x3dcd, 0x7f80]);
    let mut wide = vec![0u8; 16];
    a.read(&[0], &[4], ElementType::Float32, Order::C, &mut wide)
        .unwrap();
    let got: Vec<f32> = wide
        .chunks(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, [1.0, -2.5, f32::from_bits(0x3dcd_0000), f32::INFINITY]);
    // Strided: every other element of an 8-float buffer, the gaps untouched.
    let mut strided = vec![0xffu8; 32];
    a.read(
        &[0],
        &[4],
        ElementType::Float32,
        zarr::io::region::MemLayout::Strided(&[2]),
        &mut strided,
    )
    .unwrap();
    assert_eq!(strided[..4], 1f32.to_ne_bytes());
    assert_eq!(strided[4..8], [0xff; 4]);
    assert_eq!(strided[8..12], (-2.5f32).to_ne_bytes());
    // Fill values a type cannot hold are refused by name.
    let store = Arc::new(MemoryStore::new());
    for (name, fill) in [
        ("float8_e4m3fn", json!(1000.0)),
        ("float4_e2m1fn", json!("NaN")),
        ("float8_e8m0fnu", json!(0)),
        ("int4", json!(8)),
        ("uint2", json!(-1)),
    ] {
        let mut b = ArrayBuilder::new(vec![2], ElementType::Raw);
        b.dtype_name(name).unwrap().zarr_format(3).unwrap();
        b.fill_value_json(fill);
        let err = b.create(store.clone(), "x", Mode::Overwrite).unwrap_err();
        assert!(matches!(err, Error::InvalidArg(_)), "{name}: {err}");
    }
}

#[test]
fn narrow_types_are_sign_extended_on_read_and_checked_on_write() {
    let (store, a) = build_v3("int4", Some(json!(-3)), vec![4]);
    assert_eq!(doc(&store, "a/zarr.json")["fill_value"], -3);
    // Another writer may leave anything in the high bits: reads give the canonical byte.
    store.set("a/c/0", &[0x0f, 0xf7, 0x58, 0x08]).unwrap();
    let mut back = [0u8; 4];
    a.read(&[0], &[4], ElementType::Int4, Order::C, &mut back)
        .unwrap();
    assert_eq!(back.map(|b| b as i8), [-1, 7, -8, -8]);
    let err = a
        .write(&[0], &[2], ElementType::Int4, Order::C, &[7, 8])
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidArg(ref m) if m.contains("element 1")),
        "{err}"
    );
    a.write(&[0], &[2], ElementType::Int4, Order::C, &[0xf8, 7])
        .unwrap();
    assert_eq!(store.get("a/c/0").unwrap().unwrap()[..2], [0xf8, 0x07]);
    let (_, u) = build_v3("float4_e2m1fn", None, vec![2]);
    assert!(u
        .write(
            &[0],
            &[2],
            ElementType::Float4E2M1FN,
            Order::C,
            &[0x0f, 0x10]
        )
        .is_err());
}

#[test]
fn nan_payloads_are_kept_as_hex_in_v3_and_refused_elsewhere() {
    for (dtype, hex, bytes) in [
        (
            "float32",
            "0x7fc00001",
            0x7fc0_0001u32.to_ne_bytes().to_vec(),
        ),
        (
            "float32",
            "0xffc00000",
            0xffc0_0000u32.to_ne_bytes().to_vec(),
        ),
        (
            "float64",
            "0x7ff0000000000001",
            0x7ff0_0000_0000_0001u64.to_ne_bytes().to_vec(),
        ),
        ("float16", "0x7e01", 0x7e01u16.to_ne_bytes().to_vec()),
        ("bfloat16", "0x7fc1", 0x7fc1u16.to_ne_bytes().to_vec()),
        ("float8_e4m3fn", "0xff", vec![0xff]),
    ] {
        let (store, a) = build_v3(dtype, Some(json!(hex)), vec![2]);
        assert_eq!(doc(&store, "a/zarr.json")["fill_value"], hex, "{dtype}");
        assert_eq!(a.metadata().fill_value.as_deref(), Some(&bytes[..]));
        let again = Array::open(store.clone(), "a", Mode::Read).unwrap();
        assert_eq!(again.metadata().fill_value.as_deref(), Some(&bytes[..]));
    }
    // The canonical NaN stays "NaN"; complex parts keep their own payloads.
    let (store, _) = build_v3("float32", Some(json!("0x7fc00000")), vec![1]);
    assert_eq!(doc(&store, "a/zarr.json")["fill_value"], "NaN");
    let (store, _) = build_v3("complex64", Some(json!(["NaN", "0x7f800001"])), vec![1]);
    assert_eq!(
        doc(&store, "a/zarr.json")["fill_value"],
        json!(["NaN", "0x7f800001"])
    );
    let store = Arc::new(MemoryStore::new());
    for format in [1, 2] {
        let mut b = ArrayBuilder::new(vec![2], ElementType::Float32);
        b.zarr_format(format).unwrap();
        b.fill_value_json(json!("0x7fc00001"));
        let err = b.create(store.clone(), "x", Mode::Overwrite).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArg(ref m) if m.contains("payload")),
            "{err}"
        );
    }
}

#[test]
fn v3_times_carry_unit_and_scale_factor() {
    let (store, a) = build_v3("<M8[10us]", Some(json!("NaT")), vec![2]);
    let d = doc(&store, "a/zarr.json");
    assert_eq!(
        d["data_type"],
        json!({"name": "numpy.datetime64", "configuration": {"unit": "us", "scale_factor": 10}})
    );
    assert_eq!(d["fill_value"], "NaT");
    let mut back = vec![0u8; 16];
    a.read(&[0], &[2], ElementType::Int64, Order::C, &mut back)
        .unwrap();
    assert_eq!(back[..8], i64::MIN.to_ne_bytes());
    let (store, _) = build_v3(
        r#"{"name": "numpy.timedelta64", "configuration": {"unit": "μs", "scale_factor": 1}}"#,
        Some(json!(-5)),
        vec![2],
    );
    let d = doc(&store, "a/zarr.json");
    assert_eq!(d["data_type"]["configuration"]["unit"], "us");
    assert_eq!(d["fill_value"], -5);
    for bad in [
        r#"{"name": "numpy.datetime64", "configuration": {"unit": "xs", "scale_factor": 1}}"#,
        r#"{"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 0}}"#,
        r#"{"name": "numpy.datetime64", "configuration": {"unit": "s"}}"#,
    ] {
        let mut b = ArrayBuilder::new(vec![1], ElementType::Int64);
        assert!(b.dtype_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn v3_records_are_written_as_struct_and_read_in_both_forms() {
    let dtype = json!([
        ["id", "<i4"],
        ["pos", [["x", "<f4"], ["y", "<f4"]]],
        ["tag", "|S2"]
    ]);
    let (store, a) = build_v3(
        &dtype.to_string(),
        Some(json!({"id": 7, "pos": {"x": 1.5, "y": "NaN"}, "tag": "YWI="})),
        vec![3],
    );
    let d = doc(&store, "a/zarr.json");
    assert_eq!(
        d["data_type"],
        json!({"name": "structured", "configuration": {"fields": [
            ["id", "int32"],
            ["pos", {"name": "structured", "configuration": {"fields": [
                ["x", "float32"], ["y", "float32"]]}}],
            ["tag", {"name": "null_terminated_bytes", "configuration": {"length_bytes": 2}}]]}})
    );
    // The fill value: base64 of the record's stored bytes (7, 1.5, NaN, "ab").
    assert_eq!(d["fill_value"], json!("BwAAAAAAwD8AAMB/YWI="));
    assert_eq!(
        d["codecs"][0],
        json!({"name": "bytes", "configuration": {"endian": "little"}})
    );
    let mut record = 7i32.to_le_bytes().to_vec();
    record.extend(1.5f32.to_le_bytes());
    record.extend(f32::NAN.to_le_bytes());
    record.extend(b"ab");
    let mut back = vec![0u8; 3 * 14];
    a.read(&[0], &[3], ElementType::Raw, Order::C, &mut back)
        .unwrap();
    assert_eq!(back, record.repeat(3));
    // zarr-python 3.1's legacy form: "structured", [name, type] pairs, base64 fill, no
    // endian (little).
    let legacy = json!({"zarr_format": 3, "node_type": "array", "shape": [2],
        "data_type": {"name": "structured", "configuration": {"fields": [["a", "int16"], ["b", "uint8"]]}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "AQID",
        "codecs": [{"name": "bytes"}], "attributes": {}});
    store
        .set("l/zarr.json", legacy.to_string().as_bytes())
        .unwrap();
    let l = Array::open(store.clone(), "l", Mode::Read).unwrap();
    let fields: Vec<String> = l
        .metadata()
        .dtype
        .leaf_fields()
        .iter()
        .map(|f| f.dtype.to_v2())
        .collect();
    assert_eq!(fields, ["<i2", "|u1"]);
    let mut back = vec![0u8; 6];
    l.read(&[0], &[2], ElementType::Raw, Order::C, &mut back)
        .unwrap();
    assert_eq!(back, [1, 2, 3, 1, 2, 3]);
    // The registry's newer `struct`: fields as {name, data_type} objects, the fill value
    // an object of field values (NaN and a nested record among them), and big-endian.
    let registry = json!({"zarr_format": 3, "node_type": "array", "shape": [2],
        "data_type": {"name": "struct", "configuration": {"fields": [
            {"name": "t", "data_type": "int16"},
            {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [
                {"name": "v", "data_type": "float32"}]}}}]}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": {"t": -2, "p": {"v": "NaN"}},
        "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}], "attributes": {}});
    store
        .set("r/zarr.json", registry.to_string().as_bytes())
        .unwrap();
    let r = Array::open(store.clone(), "r", Mode::Read).unwrap();
    let fields: Vec<String> = r
        .metadata()
        .dtype
        .leaf_fields()
        .iter()
        .map(|f| f.dtype.to_v2())
        .collect();
    assert_eq!(fields, [">i2", ">f4"]);
    let mut item = (-2i16).to_be_bytes().to_vec();
    item.extend(f32::NAN.to_be_bytes());
    let mut back = vec![0u8; 12];
    r.read(&[0], &[2], ElementType::Raw, Order::C, &mut back)
        .unwrap();
    assert_eq!(back, item.repeat(2), "the fill value of every field");
    store
        .set("r/c/0", &[0, 5, 0x3f, 0xc0, 0, 0, 0xff, 0xfe, 0, 0, 0, 0])
        .unwrap();
    r.read(&[0], &[2], ElementType::Raw, Order::C, &mut back)
        .unwrap();
    assert_eq!(back, [0, 5, 0x3f, 0xc0, 0, 0, 0xff, 0xfe, 0, 0, 0, 0]);
    let missing_field = registry
        .to_string()
        .replace(r#""p":{"v":"NaN"}"#, r#""q":1"#);
    assert_ne!(missing_field, registry.to_string());
    store.set("r/zarr.json", missing_field.as_bytes()).unwrap();
    let err = Array::open(store.clone(), "r", Mode::Read).unwrap_err();
    assert!(err.to_string().contains("field \"p\""), "{err}");
    // Mixed byte orders and sub-arrays have no v3 form.
    for bad in [r#"[["a", "<i4"], ["b", ">i4"]]"#, r#"[["a", "<i4", [2]]]"#] {
        let mut b = ArrayBuilder::new(vec![1], ElementType::Raw);
        b.dtype_name(bad).unwrap().zarr_format(3).unwrap();
        let err = b.create(store.clone(), "x", Mode::Overwrite).unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{bad}: {err}");
    }
}

/// Opaque items are written as `raw_bytes` with a base64 fill value; the core `r<N>` name
/// is read with either fill value form.
#[test]
fn raw_items_are_written_as_raw_bytes_and_read_as_r_n() {
    let (store, a) = build_v3("|V3", Some(json!("AQID")), vec![4]);
    let d = doc(&store, "a/zarr.json");
    assert_eq!(
        d["data_type"],
        json!({"name": "raw_bytes", "configuration": {"length_bytes": 3}})
    );
    assert_eq!(d["fill_value"], json!("AQID"));
    a.write(&[0], &[2], ElementType::Raw, Order::C, b"abcdef")
        .unwrap();
    for fill in [json!([1, 2, 3]), json!("AQID")] {
        let mut core = d.clone();
        core["data_type"] = json!("r24");
        core["fill_value"] = fill;
        store
            .set("a/zarr.json", core.to_string().as_bytes())
            .unwrap();
        let mut back = vec![0u8; 12];
        Array::open(store.clone(), "a", Mode::Read)
            .unwrap()
            .read(&[0], &[4], ElementType::Raw, Order::C, &mut back)
            .unwrap();
        assert_eq!(back, b"abcdef\x01\x02\x03\x01\x02\x03");
    }
}

#[test]
fn v1_arrays_are_created_and_v1_records_read() {
    let store = Arc::new(MemoryStore::new());
    let dtype = json!([["a", "<i2"], ["b", ">f4"]]);
    let a = build(&store, &dtype.to_string(), 1, vec![3], vec![2]);
    let meta = doc(&store, "a/meta");
    assert_eq!(meta["zarr_format"], 1);
    assert_eq!(meta["dtype"], dtype);
    let data: Vec<u8> = (0..18).collect();
    a.write(&[0], &[3], ElementType::Raw, Order::C, &data)
        .unwrap();
    let again = Array::open(store.clone(), "a", Mode::Read).unwrap();
    assert_eq!(again.format(), zarr::meta::Format::V1);
    let mut back = vec![0u8; 18];
    again
        .read(&[0], &[3], ElementType::Raw, Order::C, &mut back)
        .unwrap();
    assert_eq!(back, data);
    // No groups in format 1: a v1 array stands alone.
    assert!(store.get("zarr.json").unwrap().is_none());
    assert!(store.get(".zgroup").unwrap().is_none());
    assert_eq!(doc(&store, "a/attrs"), json!({}));
}

#[test]
fn variable_length_items_append_along_any_axis() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let strings = |a: &Array| -> Vec<String> {
        let shape = a.metadata().shape.clone();
        let back = a
            .read_vlen(&vec![0; shape.len()], &shape, Order::C)
            .unwrap();
        (0..back.len())
            .map(|i| String::from_utf8(back.get(i).to_vec()).unwrap())
            .collect()
    };
    for (name, format, shards) in [("v2", 2, None), ("v3", 3, None), ("sh", 3, Some(4))] {
        let mut b = ArrayBuilder::new(vec![0, 2], ElementType::String);
        b.chunks(vec![2, 2]).zarr_format(format).unwrap();
        if let Some(s) = shards {
            b.shard_shape(vec![s, 2]);
        }
        let a = b.create(store.clone(), name, Mode::CreateNew).unwrap();
        for step in 0..5u32 {
            let row = [format!("t{step}a"), format!("t{step}b é")];
            let items: Vec<&[u8]> = row.iter().map(|s| s.as_bytes()).collect();
            let shape = a.append_vlen(0, &[1, 2], Order::C, &items).unwrap();
            assert_eq!(shape, vec![u64::from(step) + 1, 2], "{name}");
        }
        // A column, given in F order (one item per row).
        let column: Vec<String> = (0..5).map(|r| format!("c{r}")).collect();
        let items: Vec<&[u8]> = column.iter().map(|s| s.as_bytes()).collect();
        assert_eq!(
            a.append_vlen(1, &[5, 1], Order::F, &items).unwrap(),
            vec![5, 3]
        );
        let reopened = Array::open(store.clone(), name, Mode::Read).unwrap();
        let expected: Vec<String> = (0..5)
            .flat_map(|r| [format!("t{r}a"), format!("t{r}b é"), format!("c{r}")])
            .collect();
        assert_eq!(strings(&reopened), expected, "{name}");
        // A rejected item leaves the array as it was.
        let bad: [&[u8]; 2] = [b"ok", b"\xff\xfe"];
        let err = a.append_vlen(0, &[1, 3], Order::C, &bad[..]).unwrap_err();
        assert!(matches!(err, zarr::Error::BufferSize(_)), "{err}");
        let bad: [&[u8]; 3] = [b"ok", b"\xff\xfe", b"x"];
        let err = a.append_vlen(0, &[1, 3], Order::C, &bad).unwrap_err();
        assert!(err.to_string().contains("UTF-8"), "{err}");
        let reopened = Array::open(store.clone(), name, Mode::Read).unwrap();
        assert_eq!(reopened.metadata().shape, vec![5, 3], "{name}");
        assert_eq!(strings(&reopened), expected, "{name}");
        let err = a
            .append_vlen(0, &[1, 2], Order::C, &[b"a", b"b"])
            .unwrap_err();
        assert!(matches!(err, zarr::Error::InvalidArg(_)), "{err}");
    }
    let b = ArrayBuilder::new(vec![2], ElementType::Int32);
    let fixed = b.create(store.clone(), "fixed", Mode::CreateNew).unwrap();
    let err = fixed.append_vlen(0, &[1], Order::C, &[b"x"]).unwrap_err();
    assert!(matches!(err, zarr::Error::DtypeMismatch(_)), "{err}");
}

#[test]
fn json2_arrays_in_another_text_encoding_are_refused() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for (encoding, readable) in [("utf-8", true), ("UTF8", true), ("latin-1", false)] {
        let doc = json!({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O",
            "compressor": null, "fill_value": null, "order": "C",
            "filters": [{"id": "json2", "encoding": encoding}]});
        store.set("j/.zarray", doc.to_string().as_bytes()).unwrap();
        match Array::open(store.clone(), "j", Mode::Read) {
            Ok(_) => assert!(readable, "{encoding}"),
            Err(e) => {
                assert!(!readable, "{encoding}: {e}");
                assert!(
                    matches!(&e, zarr::Error::CodecUnsupported(m) if m.contains("latin-1")),
                    "{e}"
                );
            }
        }
    }
}
