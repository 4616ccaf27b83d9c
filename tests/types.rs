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
    assert_eq!(meta["fill_value"], json!(""));
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
}
