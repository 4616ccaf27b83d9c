//! Groups, consolidated metadata, zip stores, copying and v1 arrays through the Rust API.

use serde_json::json;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::consolidated::{consolidate, ConsolidatedStore};
use zarr::meta::{Format, Order};
use zarr::node::{copy, migrate_1to2, Array, ArrayBuilder, Group, Mode, Node, NodeKind};
use zarr::store::{FilesystemStore, MemoryStore, Store, ZipMode, ZipStore};
use zarr::Error;

fn ints(n: i32) -> Vec<u8> {
    (0..n).flat_map(|v| v.to_ne_bytes()).collect()
}

/// Builds root{attrs} / a{group} / a/b{group} / a/b/x{array} / y{array} in `format`.
fn build_tree(store: Arc<dyn Store>, format: Format) {
    let root = Group::open_as(store.clone(), "", Mode::Overwrite, format).unwrap();
    root.set_attributes(
        json!({"title": "tree ✓", "big": 12345678901234567u64, "none": null})
            .as_object()
            .unwrap(),
    )
    .unwrap();
    let b = root.open_group("a/b", Mode::Append).unwrap();
    let mut builder = ArrayBuilder::new(vec![6, 4], ElementType::Int32);
    builder.chunks(vec![4, 3]);
    let x = b.create_array("x", &builder, Mode::CreateNew).unwrap();
    x.write(&[0, 0], &[6, 4], ElementType::Int32, Order::C, &ints(24))
        .unwrap();
    x.set_dimension_names(&[Some("time".into()), Some("lat".into())])
        .unwrap();
    let y = root.create_array("y", &builder, Mode::CreateNew).unwrap();
    y.write(&[0, 0], &[6, 4], ElementType::Int32, Order::F, &ints(24))
        .unwrap();
}

fn check_tree(store: Arc<dyn Store>) {
    let root = Group::open(store, "", Mode::Read).unwrap();
    assert_eq!(
        root.attributes().unwrap()["big"],
        json!(12345678901234567u64)
    );
    assert_eq!(root.member_names(NodeKind::Group).unwrap(), vec!["a"]);
    assert_eq!(root.member_names(NodeKind::Array).unwrap(), vec!["y"]);
    assert_eq!(root.contains("a/b/x").unwrap(), NodeKind::Array);
    let x = root.open_array("a/b/x", Mode::Read).unwrap();
    let mut out = vec![0u8; 96];
    x.read(&[0, 0], &[6, 4], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, ints(24));
    assert_eq!(
        x.dimension_names().unwrap().unwrap(),
        vec![Some("time".to_string()), Some("lat".to_string())]
    );
    let y = root.open_array("y", Mode::Read).unwrap();
    y.read(&[0, 0], &[6, 4], ElementType::Int32, Order::F, &mut out)
        .unwrap();
    assert_eq!(out, ints(24));
}

#[test]
fn groups_members_delete_move_and_errors() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    build_tree(store.clone(), Format::V2);
    check_tree(store.clone());
    let root = Group::open(store.clone(), "/", Mode::ReadWrite).unwrap();
    assert!(matches!(
        root.open_group("y", Mode::Read),
        Err(Error::NodeType(_))
    ));
    assert!(matches!(
        root.open_array("a", Mode::Read),
        Err(Error::NodeType(_))
    ));
    assert!(matches!(
        root.open_group("a/../y", Mode::Read),
        Err(Error::InvalidKey(_))
    ));
    root.rename("a/b/x", "c/x2").unwrap();
    assert_eq!(root.contains("a/b/x").unwrap(), NodeKind::None);
    assert_eq!(root.contains("c").unwrap(), NodeKind::Group);
    assert_eq!(root.contains("c/x2").unwrap(), NodeKind::Array);
    assert!(matches!(root.rename("y", "c/x2"), Err(Error::Exists(_))));
    root.delete("a").unwrap();
    assert!(store.list_prefix("a/").unwrap().is_empty());
    assert!(matches!(root.delete("a"), Err(Error::NotFound(_))));
    let read_only = Group::open(store.clone(), "", Mode::Read).unwrap();
    assert!(matches!(read_only.delete("y"), Err(Error::ReadOnly(_))));
    assert_eq!(read_only.contains("y").unwrap(), NodeKind::Array);
    store.set("bad/.zgroup", b"[1]").unwrap();
    let err = Group::open(store.clone(), "bad", Mode::Read)
        .unwrap_err()
        .to_string();
    assert!(err.contains(".zgroup"), "{err}");
    store.set("y/.zattrs", b"[]").unwrap();
    let err = root
        .open_array("y", Mode::Read)
        .unwrap()
        .attributes()
        .unwrap_err()
        .to_string();
    assert!(err.contains(".zattrs"), "{err}");
}

#[test]
fn consolidated_copy_and_zip_round_trip() {
    for format in [Format::V2, Format::V3] {
        consolidated_copy_and_zip_round_trip_in(format);
    }
}

fn consolidated_copy_and_zip_round_trip_in(format: Format) {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn Store> =
        Arc::new(FilesystemStore::open(dir.path().join("tree"), true, true).unwrap());
    build_tree(fs.clone(), format);
    consolidate(fs.as_ref(), "").unwrap();
    check_tree(Arc::new(ConsolidatedStore::open(fs.clone(), "").unwrap()));
    // Directory → zip (re-encoded with zstd) → memory.
    let zip_path = dir.path().join("tree.zip");
    let zip: Arc<dyn Store> =
        Arc::new(ZipStore::open(&zip_path, ZipMode::Create { overwrite: false }, true).unwrap());
    copy(
        &fs,
        "",
        &zip,
        "",
        Some(&json!({"id": "zstd", "level": 3})),
        Mode::Overwrite,
    )
    .unwrap();
    zip.close().unwrap();
    let zip: Arc<dyn Store> = Arc::new(ZipStore::open(&zip_path, ZipMode::Read, false).unwrap());
    check_tree(zip.clone());
    let meta = Array::open(zip.clone(), "y", Mode::Read)
        .unwrap()
        .metadata();
    assert_eq!(meta.codecs.bytes_to_bytes[0].config()["id"], "zstd");
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    copy(&zip, "", &memory, "", None, Mode::CreateNew).unwrap();
    check_tree(memory.clone());
    assert!(
        memory.get(".zmetadata").unwrap().is_none(),
        "a copy writes fresh metadata only"
    );
}

#[test]
fn v1_arrays_open_write_and_migrate() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store
        .set(
            "meta",
            br#"{"zarr_format": 1, "shape": [4], "chunks": [2], "dtype": "<i4",
            "compression": "zlib", "compression_opts": 1, "fill_value": 42, "order": "C"}"#,
        )
        .unwrap();
    store.set("attrs", br#"{"foo": 42}"#).unwrap();
    let a = Array::open(store.clone(), "", Mode::ReadWrite).unwrap();
    assert_eq!(a.format().number(), 1);
    let mut out = vec![0u8; 16];
    a.read(&[0], &[4], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    assert_eq!(
        out,
        [42i32; 4]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect::<Vec<_>>()
    );
    a.write(&[0], &[2], ElementType::Int32, Order::C, &ints(2))
        .unwrap();
    a.resize(&[6]).unwrap();
    assert!(store.get("meta").unwrap().is_some());
    assert_eq!(a.attributes().unwrap()["foo"], 42);
    // Freeing the handle that resized releases its append lock.
    drop(a);
    migrate_1to2(store.as_ref(), "").unwrap();
    assert_eq!(store.list().unwrap(), vec![".zarray", ".zattrs", "0"]);
    let b = Array::open(store, "", Mode::Read).unwrap();
    assert_eq!(b.format().number(), 2);
    assert_eq!(b.metadata().shape, vec![6]);
    let mut out = vec![0u8; 24];
    b.read(&[0], &[6], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    let got: Vec<i32> = out
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, vec![0, 1, 42, 42, 42, 42]);
}

/// Every key under `prefix` with its bytes.
fn snapshot(store: &dyn Store, prefix: &str) -> Vec<(String, Vec<u8>)> {
    store
        .list_prefix(prefix)
        .unwrap()
        .into_iter()
        .map(|k| {
            let v = store.get(&k).unwrap().unwrap();
            (k, v)
        })
        .collect()
}

/// Asserts that `result` is the refusal of an overlapping copy naming both locations.
fn assert_overlap_refused(result: zarr::Result<()>, source: &str, target: &str) {
    match result {
        Err(Error::InvalidArg(message)) => {
            assert!(message.contains(source), "{message} (source {source})");
            assert!(message.contains(target), "{message} (target {target})");
        }
        other => panic!("overlapping copy not refused: {other:?}"),
    }
}

#[test]
fn copies_whose_target_overlaps_the_source_are_refused_before_anything_is_erased() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("x");
    let outer: Arc<dyn Store> = Arc::new(FilesystemStore::open(&top, true, true).unwrap());
    build_tree(outer.clone(), Format::V2);
    let sub = top.join("a").canonicalize().unwrap();
    let inner: Arc<dyn Store> = Arc::new(FilesystemStore::open(&sub, true, false).unwrap());
    let deeper: Arc<dyn Store> =
        Arc::new(FilesystemStore::open(sub.join("b"), true, false).unwrap());
    let before = snapshot(outer.as_ref(), "");
    let t = top.canonicalize().unwrap().display().to_string();
    let (s, b) = (
        sub.display().to_string(),
        sub.join("b").display().to_string(),
    );
    for mode in [Mode::Overwrite, Mode::Append, Mode::CreateNew] {
        // The source store is rooted at x/a; the target x + "a" is the same directory.
        let result = copy(&inner, "", &outer, "a", None, mode);
        assert_overlap_refused(result, &s, &s);
        // The target store is rooted inside the source node.
        assert_overlap_refused(copy(&outer, "a", &deeper, "", None, mode), &s, &b);
        assert_overlap_refused(copy(&outer, "a", &deeper, "c", None, mode), &s, &b);
        // The source (x/a/b) is inside the target node (x/a), which mode w would erase.
        assert_overlap_refused(copy(&deeper, "", &outer, "a", None, mode), &b, &s);
        // Array copies: the same array through two roots, and the root of the store.
        let x = sub.join("b/x").display().to_string();
        assert_overlap_refused(copy(&deeper, "x", &outer, "a/b/x", None, mode), &x, &x);
        assert_overlap_refused(copy(&deeper, "x", &outer, "", None, mode), &x, &t);
    }
    assert!(before == snapshot(outer.as_ref(), ""), "the source changed");
    // A link inside the store leading to the source is the source.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&sub, top.join("link")).unwrap();
        let result = copy(&inner, "", &outer, "link", None, Mode::Overwrite);
        assert_overlap_refused(result, &s, &s);
        std::fs::remove_file(top.join("link")).unwrap();
        assert!(before == snapshot(outer.as_ref(), ""), "the source changed");
    }
    // Copies beside the source still work, through either root.
    copy(&inner, "", &outer, "a2", None, Mode::Overwrite).unwrap();
    copy(&deeper, "x", &outer, "a/x2", None, Mode::Overwrite).unwrap();
    copy(&outer, "a/b/x", &deeper, "x3", None, Mode::Overwrite).unwrap();
    let x = Array::open(outer.clone(), "a2/b/x", Mode::Read).unwrap();
    let mut out = vec![0u8; 96];
    x.read(&[0, 0], &[6, 4], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, ints(24));
    for copied in ["a/x2/", "a/b/x3/"] {
        let keys: Vec<_> = snapshot(outer.as_ref(), copied)
            .into_iter()
            .map(|(k, v)| (k[copied.len()..].to_string(), v))
            .collect();
        let original: Vec<_> = snapshot(outer.as_ref(), "a/b/x/")
            .into_iter()
            .map(|(k, v)| (k["a/b/x/".len()..].to_string(), v))
            .collect();
        assert!(keys == original, "{copied} differs from its source");
    }
}

#[test]
fn overlapping_copies_in_memory_and_zip_stores_are_refused() {
    // A memory store has no location: the same store object with nested paths overlaps,
    // another memory store does not.
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    build_tree(memory.clone(), Format::V3);
    let before = snapshot(memory.as_ref(), "");
    for (from, to) in [("a", "a/b/c"), ("a/b", "a"), ("a/b/x", "a/b/x"), ("", "z")] {
        let result = copy(&memory, from, &memory, to, None, Mode::Overwrite);
        assert!(
            matches!(result, Err(Error::InvalidArg(_))),
            "{from} -> {to}"
        );
    }
    assert!(
        before == snapshot(memory.as_ref(), ""),
        "the source changed"
    );
    copy(&memory, "a", &memory, "a2", None, Mode::Overwrite).unwrap();
    let other: Arc<dyn Store> = Arc::new(MemoryStore::new());
    copy(&memory, "", &other, "", None, Mode::Overwrite).unwrap();
    // Two handles on one zip file have the same location.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tree.zip");
    let writer = ZipStore::open(&path, ZipMode::Create { overwrite: false }, false).unwrap();
    let writer: Arc<dyn Store> = Arc::new(writer);
    build_tree(writer.clone(), Format::V2);
    writer.close().unwrap();
    let reader: Arc<dyn Store> = Arc::new(ZipStore::open(&path, ZipMode::Read, false).unwrap());
    let appender: Arc<dyn Store> = Arc::new(ZipStore::open(&path, ZipMode::Append, false).unwrap());
    let result = copy(&reader, "a", &appender, "a/b/y", None, Mode::CreateNew);
    assert!(matches!(result, Err(Error::InvalidArg(_))), "{result:?}");
    copy(&reader, "a", &appender, "c", None, Mode::CreateNew).unwrap();
    appender.close().unwrap();
    let reader: Arc<dyn Store> = Arc::new(ZipStore::open(&path, ZipMode::Read, false).unwrap());
    assert_eq!(
        Array::open(reader, "c/b/x", Mode::Read)
            .unwrap()
            .metadata()
            .shape,
        vec![6, 4]
    );
}

/// A consolidated v3 hierarchy's own document is served without its (large)
/// `consolidated_metadata` member, and a rewrite of it through the consolidated store (new
/// attributes) keeps that member in the stored document.
#[test]
fn v3_consolidated_root_document_is_light_and_stays_consolidated() {
    let fs: Arc<dyn Store> = Arc::new(MemoryStore::new());
    build_tree(fs.clone(), Format::V3);
    consolidate(fs.as_ref(), "").unwrap();
    let stored = |store: &dyn Store| -> serde_json::Value {
        serde_json::from_slice(&store.get("zarr.json").unwrap().unwrap()).unwrap()
    };
    let before = stored(fs.as_ref())["consolidated_metadata"].clone();
    assert!(before["metadata"]
        .as_object()
        .is_some_and(|m| !m.is_empty()));
    let consolidated: Arc<dyn Store> = Arc::new(ConsolidatedStore::open(fs.clone(), "").unwrap());
    let served = stored(consolidated.as_ref());
    assert!(served.get("consolidated_metadata").is_none(), "{served}");
    assert_eq!(served["node_type"], "group");
    let root = Group::open(consolidated.clone(), "", Mode::ReadWrite).unwrap();
    root.set_attribute("edited", json!(true)).unwrap();
    let after = stored(fs.as_ref());
    assert_eq!(after["attributes"]["edited"], json!(true));
    assert_eq!(after["consolidated_metadata"], before);
    assert!(stored(consolidated.as_ref())
        .get("consolidated_metadata")
        .is_none());
    check_tree(Arc::new(ConsolidatedStore::open(fs.clone(), "").unwrap()));
}

#[cfg(unix)]
#[test]
fn moves_into_the_moved_node_through_a_link_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("x");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(&top, true, true).unwrap());
    build_tree(store.clone(), Format::V2);
    std::os::unix::fs::symlink("a", top.join("l")).unwrap();
    let before = snapshot(store.as_ref(), "a/");
    let root = Group::open(store.clone(), "", Mode::ReadWrite).unwrap();
    let a = top.join("a").canonicalize().unwrap();
    for (from, to, source, target) in [
        ("a", "l/moved", "", "moved"),
        ("a/b", "l/b/c", "b", "b/c"),
        ("a/b/x", "l/b/x/y", "b/x", "b/x/y"),
    ] {
        assert_overlap_refused(
            root.rename(from, to),
            &a.join(source).display().to_string(),
            &a.join(target).display().to_string(),
        );
    }
    assert!(
        before == snapshot(store.as_ref(), "a/"),
        "the source changed"
    );
    root.rename("a/b", "c").unwrap();
    assert_eq!(root.contains("c/x").unwrap(), NodeKind::Array);
}
