//! The 2022 draft layout of Zarr v3 (`zarr.json` entry point, `meta/…`, `data/…`) in both
//! key schemes: the draft's own and zarr-python 2.18's `meta/root/…`.

use serde_json::{json, Value};
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::{Format, Order, DRAFT_NUMBER, DRAFT_ZARR_PYTHON_NUMBER};
use zarr::node::{Array, ArrayBuilder, Group, Mode, Node, NodeKind};
use zarr::store::{FilesystemStore, MemoryStore, Store};
use zarr::Error;

fn doc(store: &dyn Store, key: &str) -> Value {
    let bytes = store
        .get(key)
        .unwrap()
        .unwrap_or_else(|| panic!("{key} is missing"));
    serde_json::from_slice(&bytes).unwrap()
}

fn ints(n: i32) -> Vec<u8> {
    (0..n).flat_map(|v| (v * 3 - 5).to_ne_bytes()).collect()
}

fn builder(format: i32, compressor: Value) -> ArrayBuilder {
    let mut b = ArrayBuilder::new(vec![5, 7], ElementType::Int32);
    b.chunks(vec![2, 3]).compressor(compressor);
    b.zarr_format(format).unwrap();
    b
}

#[test]
fn draft_scheme_keys_documents_and_groups() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let b = builder(DRAFT_NUMBER, json!({"id": "gzip", "level": 1}));
    let a = b.create(store.clone(), "g/sub/a", Mode::CreateNew).unwrap();
    a.write(&[0, 0], &[5, 7], ElementType::Int32, Order::C, &ints(35))
        .unwrap();
    a.set_attribute("units", json!("m")).unwrap();

    let entry = doc(store.as_ref(), "zarr.json");
    assert_eq!(
        entry,
        json!({"zarr_format": "https://purl.org/zarr/spec/core/3.0",
               "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
               "extensions": []})
    );
    let meta = doc(store.as_ref(), "meta/g/sub/a.array.json");
    assert_eq!(
        meta,
        json!({"shape": [5, 7], "data_type": "int32",
               "chunk_grid": {"type": "regular", "chunk_shape": [2, 3], "separator": "/"},
               "chunk_memory_layout": "C", "fill_value": 0, "extensions": [],
               "attributes": {"units": "m"},
               "codecs": [{"type": "https://purl.org/zarr/spec/codecs/gzip/1.0",
                           "configuration": {"level": 1}}]})
    );
    assert!(store.get("data/g/sub/a/c0/0").unwrap().is_some());
    assert!(store.get("data/g/sub/a/c2/2").unwrap().is_some());
    // Parents are implicit: no group documents were written.
    assert!(store.list_prefix("meta/").unwrap().len() == 1);

    // Detection on open, without the caller saying which format.
    let a = Array::open(store.clone(), "g/sub/a", Mode::Read).unwrap();
    assert_eq!(a.format(), Format::Draft(zarr::meta::draft::Scheme::Draft));
    assert_eq!(a.format().number(), DRAFT_NUMBER);
    let mut out = vec![0u8; 140];
    a.read(&[0, 0], &[5, 7], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, ints(35));
    assert_eq!(a.attributes().unwrap()["units"], "m");
    assert_eq!(a.nchunks_initialized().unwrap(), 9);

    // Implicit groups open, list members, and get a document when given attributes.
    let root = Group::open(store.clone(), "", Mode::ReadWrite).unwrap();
    assert_eq!(root.format().number(), DRAFT_NUMBER);
    assert_eq!(root.members().unwrap(), vec![("g".into(), NodeKind::Group)]);
    let g = root.open_group("g", Mode::ReadWrite).unwrap();
    assert!(g.attributes().unwrap().is_empty());
    assert_eq!(g.members().unwrap(), vec![("sub".into(), NodeKind::Group)]);
    g.set_attribute("title", json!("t")).unwrap();
    assert_eq!(
        doc(store.as_ref(), "meta/g.group.json"),
        json!({"attributes": {"title": "t"}})
    );
    // A new group inside takes the store's layout whatever format is asked.
    let h = Group::open_as(store.clone(), "g/h", Mode::CreateNew, Format::V2).unwrap();
    assert_eq!(h.format().number(), DRAFT_NUMBER);
    assert!(store.get("meta/g/h.group.json").unwrap().is_some());
    let sub = g.open_group("sub", Mode::Read).unwrap();
    assert_eq!(sub.members().unwrap(), vec![("a".into(), NodeKind::Array)]);
    assert_eq!(
        g.members().unwrap(),
        vec![
            ("h".into(), NodeKind::Group),
            ("sub".into(), NodeKind::Group)
        ]
    );

    // Deleting a member removes its documents and chunks.
    g.delete("sub").unwrap();
    assert!(store.list_prefix("data/").unwrap().is_empty());
    assert!(store.get("meta/g/sub/a.array.json").unwrap().is_none());
    assert_eq!(g.members().unwrap(), vec![("h".into(), NodeKind::Group)]);

    // Moving and consolidating are refused clearly.
    assert!(matches!(g.rename("h", "k"), Err(Error::Unsupported(_))));
    assert!(matches!(
        zarr::meta::consolidated::consolidate(store.as_ref(), ""),
        Err(Error::Unsupported(_))
    ));
}

#[test]
fn root_arrays_and_separators() {
    for (format, meta_key, chunk) in [
        (DRAFT_NUMBER, "meta/array.json", "data/c1.2"),
        (
            DRAFT_ZARR_PYTHON_NUMBER,
            "meta/root.array.json",
            "data/root/c1.2",
        ),
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut b = builder(format, Value::Null);
        b.separator('.');
        let a = b.create(store.clone(), "", Mode::Overwrite).unwrap();
        a.write(&[0, 0], &[5, 7], ElementType::Int32, Order::C, &ints(35))
            .unwrap();
        assert!(store.get(meta_key).unwrap().is_some(), "{meta_key}");
        assert!(store.get(chunk).unwrap().is_some(), "{chunk}");
        let a = Array::open(store.clone(), "", Mode::Read).unwrap();
        assert_eq!(a.format().number(), format);
        assert_eq!(a.metadata().key_encoding.separator, '.');
        let mut out = vec![0u8; 140];
        a.read(&[0, 0], &[5, 7], ElementType::Int32, Order::C, &mut out)
            .unwrap();
        assert_eq!(out, ints(35));
    }
}

#[test]
fn zarr_python_scheme_documents() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut b = builder(
        DRAFT_ZARR_PYTHON_NUMBER,
        json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
    );
    b.order(Order::F);
    b.create(store.clone(), "g/a", Mode::CreateNew).unwrap();
    assert_eq!(
        doc(store.as_ref(), "zarr.json"),
        json!({"extensions": [],
               "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0",
               "metadata_key_suffix": ".json",
               "zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0"})
    );
    let meta = doc(store.as_ref(), "meta/root/g/a.array.json");
    assert_eq!(meta["data_type"], "<i4");
    assert_eq!(meta["chunk_memory_layout"], "F");
    assert_eq!(
        meta["compressor"],
        json!({"codec": "https://purl.org/zarr/spec/codec/blosc/1.0",
               "configuration": {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}})
    );
    assert!(meta.get("codecs").is_none());

    // A document as zarr-python 2.18 writes it (big-endian, NaN fill, "." separator).
    let theirs = br#"{
        "attributes": {"a": 1},
        "chunk_grid": {"chunk_shape": [2], "separator": ".", "type": "regular"},
        "chunk_memory_layout": "C",
        "data_type": ">f8",
        "dimension_separator": ".",
        "extensions": [],
        "fill_value": "NaN",
        "shape": [4]
    }"#;
    store.set("meta/root/g/b.array.json", theirs).unwrap();
    store
        .set(
            "data/root/g/b/c1",
            &[2.5f64, -1.0].map(f64::to_be_bytes).concat(),
        )
        .unwrap();
    let b = Array::open(store.clone(), "g/b", Mode::Read).unwrap();
    let mut out = vec![0u8; 32];
    b.read(&[0], &[4], ElementType::Float64, Order::C, &mut out)
        .unwrap();
    let got: Vec<f64> = out
        .chunks(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert!(got[0].is_nan() && got[1].is_nan());
    assert_eq!(&got[2..], &[2.5, -1.0]);
    assert_eq!(b.attributes().unwrap()["a"], 1);
    let g = Group::open(store.clone(), "g", Mode::Read).unwrap();
    assert_eq!(
        g.members().unwrap(),
        vec![("a".into(), NodeKind::Array), ("b".into(), NodeKind::Array)]
    );
}

#[test]
fn draft_documents_of_the_spec_are_read() {
    // The draft's own example: numpy-style type, "+Infinity", a codecs list.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store
        .set(
            "zarr.json",
            br#"{"zarr_format": "https://purl.org/zarr/spec/core/3.0",
                 "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
                 "extensions": [{"extension": "http://example.org/foo", "must_understand": false}]}"#,
        )
        .unwrap();
    store
        .set(
            "meta/foo/baz.array.json",
            br#"{"shape": [3], "data_type": "<f4",
                 "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"},
                 "chunk_memory_layout": "C",
                 "codecs": [{"type": "https://purl.org/zarr/spec/codecs/gzip/1.0",
                             "configuration": {"level": 1}}],
                 "fill_value": "+Infinity", "extensions": [], "attributes": {}}"#,
        )
        .unwrap();
    let a = Array::open(store.clone(), "foo/baz", Mode::Read).unwrap();
    let mut out = vec![0u8; 12];
    a.read(&[0], &[3], ElementType::Float32, Order::C, &mut out)
        .unwrap();
    assert!(out
        .chunks(4)
        .all(|c| f32::from_ne_bytes(c.try_into().unwrap()) == f32::INFINITY));
    assert_eq!(
        zarr::node::node_kind(store.as_ref(), "foo").unwrap(),
        NodeKind::Group
    );
}

#[test]
fn draft_errors_name_what_is_wrong() {
    // A store whose root zarr.json is a v3 group has no room for a draft hierarchy.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::open_as(store.clone(), "", Mode::CreateNew, Format::V3).unwrap();
    let err = builder(DRAFT_NUMBER, Value::Null)
        .create(store.clone(), "a", Mode::CreateNew)
        .unwrap_err();
    assert!(matches!(err, Error::Exists(_)), "{err}");
    assert!(err.to_string().contains("entry point"), "{err}");
    // Unknown zarr_format URIs and extensions that must be understood.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store
        .set(
            "zarr.json",
            br#"{"zarr_format": "https://purl.org/zarr/spec/core/4.0"}"#,
        )
        .unwrap();
    let err = Array::open(store.clone(), "a", Mode::Read).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    assert!(err.to_string().contains("core/4.0"), "{err}");
    store
        .set(
            "zarr.json",
            br#"{"zarr_format": "https://purl.org/zarr/spec/core/3.0",
                 "extensions": [{"extension": "x", "must_understand": true}]}"#,
        )
        .unwrap();
    let err = Group::open(store.clone(), "", Mode::Read).unwrap_err();
    assert!(err.to_string().contains("must be understood"), "{err}");
    // Sharding and multi-codec chains in zarr-python's variant.
    let mut b = builder(DRAFT_NUMBER, Value::Null);
    b.shard_shape(vec![4, 6]);
    assert!(matches!(b.metadata(), Err(Error::InvalidArg(_))));
    assert!(matches!(
        ArrayBuilder::new(vec![1], ElementType::Int8).zarr_format(4),
        Err(Error::InvalidArg(_))
    ));
    // Unknown fields and codecs in an array document.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    builder(DRAFT_NUMBER, Value::Null)
        .create(store.clone(), "a", Mode::CreateNew)
        .unwrap();
    let mut meta = doc(store.as_ref(), "meta/a.array.json");
    meta["codecs"] = json!([{"type": "https://example.org/codecs/magic/1.0"}]);
    store
        .set("meta/a.array.json", meta.to_string().as_bytes())
        .unwrap();
    let err = Array::open(store.clone(), "a", Mode::Read).unwrap_err();
    assert!(matches!(err, Error::CodecUnsupported(_)), "{err}");
    meta["novel"] = json!(1);
    store
        .set("meta/a.array.json", meta.to_string().as_bytes())
        .unwrap();
    let err = Array::open(store, "a", Mode::Read).unwrap_err();
    assert!(err.to_string().contains("novel"), "{err}");
}

#[test]
fn draft_trees_copy_keeping_their_layout() {
    let source: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = builder(DRAFT_ZARR_PYTHON_NUMBER, json!({"id": "zstd", "level": 1}))
        .create(source.clone(), "g/sub/a", Mode::CreateNew)
        .unwrap();
    a.write(&[0, 0], &[5, 7], ElementType::Int32, Order::C, &ints(35))
        .unwrap();
    Group::open(source.clone(), "g", Mode::ReadWrite)
        .unwrap()
        .set_attribute("title", json!("t"))
        .unwrap();
    for compressor in [None, Some(json!({"id": "gzip", "level": 2}))] {
        let target: Arc<dyn Store> = Arc::new(MemoryStore::new());
        zarr::node::copy(
            &source,
            "",
            &target,
            "",
            compressor.as_ref(),
            Mode::Overwrite,
        )
        .unwrap();
        assert!(target
            .get("meta/root/g/sub/a.array.json")
            .unwrap()
            .is_some());
        assert!(target.get("data/root/g/sub/a/c2/2").unwrap().is_some());
        let copied = Array::open(target.clone(), "g/sub/a", Mode::Read).unwrap();
        assert_eq!(copied.format().number(), DRAFT_ZARR_PYTHON_NUMBER);
        let mut out = vec![0u8; 140];
        copied
            .read(&[0, 0], &[5, 7], ElementType::Int32, Order::C, &mut out)
            .unwrap();
        assert_eq!(out, ints(35));
        let g = Group::open(target.clone(), "g", Mode::Read).unwrap();
        assert_eq!(g.attributes().unwrap()["title"], "t");
    }
}

#[test]
fn copies_over_the_documents_or_chunks_of_a_draft_source_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("x");
    let source: Arc<dyn Store> = Arc::new(FilesystemStore::open(&top, true, true).unwrap());
    let a = builder(DRAFT_ZARR_PYTHON_NUMBER, json!({"id": "zstd", "level": 1}))
        .create(source.clone(), "g/a", Mode::CreateNew)
        .unwrap();
    a.write(&[0, 0], &[5, 7], ElementType::Int32, Order::C, &ints(35))
        .unwrap();
    let before = source.list().unwrap();
    // Stores rooted at the node's chunks and at its documents: mode w would erase them.
    for (root, path) in [
        ("data/root/g", ""),
        ("data/root", "g/a"),
        ("meta/root", "g"),
    ] {
        let target: Arc<dyn Store> =
            Arc::new(FilesystemStore::open(top.join(root), true, true).unwrap());
        let result = zarr::node::copy(&source, "g", &target, path, None, Mode::Overwrite);
        assert!(
            matches!(&result, Err(Error::InvalidArg(m)) if m.contains("overlap")),
            "{root} + {path}: {result:?}"
        );
    }
    assert_eq!(source.list().unwrap(), before);
    let mut out = vec![0u8; 140];
    a.read(&[0, 0], &[5, 7], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, ints(35));
}
