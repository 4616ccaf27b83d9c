//! Zarr v3 arrays and groups through the Rust API.

use serde_json::json;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Group, Mode, Node, NodeKind};
use zarr::store::{MemoryStore, Store};

#[test]
fn v3_arrays_round_trip_with_attributes_and_dimension_names() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(vec![5, 7], ElementType::Float64);
    builder
        .chunks(vec![2, 3])
        .order(Order::F)
        .fill_value_json(json!("NaN"))
        .dimension_names(vec![Some("y".into()), None])
        .attributes(json!({"units": "K"}).as_object().unwrap().clone());
    builder.dtype_name(">f8").unwrap();
    builder.zarr_format(3).unwrap();
    let a = builder
        .create(store.clone(), "g/a", Mode::CreateNew)
        .unwrap();
    let data: Vec<u8> = (0..35).flat_map(|i| (i as f64).to_ne_bytes()).collect();
    a.write(&[0, 0], &[5, 7], ElementType::Float64, Order::C, &data)
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&store.get("g/a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(doc["node_type"], "array");
    assert_eq!(doc["codecs"][0]["name"], "transpose");
    assert_eq!(doc["codecs"][1]["configuration"]["endian"], "big");
    // The default compressor: blosc zstd level 1, byte shuffle of the 8-byte items.
    assert_eq!(
        doc["codecs"][2],
        json!({"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1,
            "shuffle": "shuffle", "typesize": 8, "blocksize": 1048576}})
    );
    assert_eq!(doc["dimension_names"], json!(["y", null]));
    assert_eq!(doc["attributes"]["units"], "K");
    assert!(store.get("g/a/c/0/0").unwrap().is_some());
    let group: serde_json::Value =
        serde_json::from_slice(&store.get("g/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(group["node_type"], "group");

    let b = Array::open(store.clone(), "g/a", Mode::ReadWrite).unwrap();
    assert_eq!(b.format().number(), 3);
    let mut out = vec![0u8; data.len()];
    b.read(&[0, 0], &[5, 7], ElementType::Float64, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, data);
    b.set_attribute("more", json!([1, 2])).unwrap();
    b.resize(&[6, 7]).unwrap();
    let reopened = Array::open(store.clone(), "g/a", Mode::Read).unwrap();
    assert_eq!(reopened.attributes().unwrap()["units"], "K");
    assert_eq!(reopened.attributes().unwrap()["more"], json!([1, 2]));
    assert_eq!(reopened.metadata().shape, vec![6, 7]);
    assert_eq!(
        reopened.dimension_names().unwrap().unwrap(),
        vec![Some("y".to_string()), None]
    );
    let root = Group::open(store.clone(), "", Mode::Read).unwrap();
    assert_eq!(root.format().number(), 3);
    assert_eq!(root.contains("g/a").unwrap(), NodeKind::Array);
    let g = root.open_group("g", Mode::Read).unwrap();
    assert_eq!(g.member_names(NodeKind::Array).unwrap(), vec!["a"]);
}

#[test]
fn v3_documents_from_other_writers_parse() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store
        .set(
            "x/zarr.json",
            br#"{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
                "fill_value": "0x7fc00000", "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}},
                {"name": "crc32c"}], "extension": {"must_understand": false}}"#,
        )
        .unwrap();
    let a = Array::open(store.clone(), "x", Mode::ReadWrite).unwrap();
    let mut out = vec![0u8; 16];
    a.read(&[0], &[4], ElementType::Float32, Order::C, &mut out)
        .unwrap();
    assert!(f32::from_ne_bytes(out[..4].try_into().unwrap()).is_nan());
    let data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    a.write(&[0], &[4], ElementType::Float32, Order::C, &data)
        .unwrap();
    assert!(store.get("x/1").unwrap().is_some(), "v2 key encoding");
    a.read(&[0], &[4], ElementType::Float32, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, data);
    store
        .set(
            "y/zarr.json",
            br#"{"zarr_format": 3, "node_type": "array", "unknown": 1}"#,
        )
        .unwrap();
    let err = Array::open(store.clone(), "y", Mode::Read)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown"), "{err}");
}

#[test]
fn v3_consolidated_metadata_in_the_root_document() {
    use zarr::meta::consolidated::{consolidate, ConsolidatedStore};
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let root = Group::open_as(store.clone(), "", Mode::Overwrite, zarr::meta::Format::V3).unwrap();
    root.set_attribute("title", json!("t")).unwrap();
    let mut builder = ArrayBuilder::new(vec![4], ElementType::UInt8);
    builder.zarr_format(3).unwrap();
    builder
        .create(store.clone(), "a/b/x", Mode::CreateNew)
        .unwrap();
    consolidate(store.as_ref(), "").unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&store.get("zarr.json").unwrap().unwrap()).unwrap();
    let metadata = &doc["consolidated_metadata"]["metadata"];
    assert_eq!(doc["consolidated_metadata"]["kind"], "inline");
    assert_eq!(metadata["a/b/x"]["node_type"], "array");
    assert_eq!(metadata["a"]["node_type"], "group");
    assert_eq!(doc["attributes"]["title"], "t");
    // Opening through it reads nothing else; a node added later is not listed (as
    // zarr-python serves consolidated metadata) but is found by its path.
    let mut later = ArrayBuilder::new(vec![2], ElementType::Int8);
    later.zarr_format(3).unwrap();
    later
        .create(store.clone(), "late", Mode::CreateNew)
        .unwrap();
    let overlay: Arc<dyn Store> = Arc::new(ConsolidatedStore::open(store.clone(), "").unwrap());
    let g = Group::open(overlay, "", Mode::Read).unwrap();
    assert_eq!(g.contains("a/b/x").unwrap(), NodeKind::Array);
    assert_eq!(g.contains("late").unwrap(), NodeKind::Array);
    let members: Vec<String> = g.members().unwrap().into_iter().map(|(n, _)| n).collect();
    assert_eq!(members, ["a"]);
    assert_eq!(g.attributes().unwrap()["title"], "t");
}

#[test]
fn new_nodes_are_v3_unless_a_v2_group_above_them_says_otherwise() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let builder = ArrayBuilder::new(vec![4], ElementType::Int16);
    // At the top of a store: Zarr v3, for arrays and for groups.
    let a = builder.create(store.clone(), "a", Mode::CreateNew).unwrap();
    assert_eq!(a.format(), zarr::meta::Format::V3);
    assert!(store.contains("a/zarr.json").unwrap() && store.contains("zarr.json").unwrap());
    let g = Group::open(store.clone(), "g", Mode::CreateNew).unwrap();
    assert_eq!(g.format(), zarr::meta::Format::V3);
    // Below a v2 group, the group's format, however deep.
    let v2 = Group::open_as(
        store.clone(),
        "old",
        Mode::CreateNew,
        zarr::meta::Format::V2,
    )
    .unwrap();
    let deep = builder
        .create(store.clone(), "old/x/y", Mode::CreateNew)
        .unwrap();
    assert_eq!(deep.format(), zarr::meta::Format::V2);
    assert!(store.contains("old/x/.zgroup").unwrap() && store.contains("old/x/y/.zarray").unwrap());
    let sub = v2.open_group("sub", Mode::CreateNew).unwrap();
    assert_eq!(sub.format(), zarr::meta::Format::V2);
    // An explicit choice wins.
    let mut explicit = builder.clone();
    explicit.zarr_format(3).unwrap();
    let mixed = explicit
        .create(store.clone(), "old/v3", Mode::CreateNew)
        .unwrap();
    assert_eq!(mixed.format(), zarr::meta::Format::V3);
}
