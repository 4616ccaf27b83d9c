//! Data safety under hostile stores and careless calls: chunk files far larger than any
//! valid encoding, allocations that cannot be had, huge structured types, mode `w` over a
//! directory holding other files, and draft documents naming `.` or `..`. Each test fails
//! without the guard it covers; docs/RELIABILITY.md lists them.

use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarr::dtype::ElementType;
use zarr::meta::{Order, DRAFT_ZARR_PYTHON_NUMBER};
use zarr::node::{copy, Array, ArrayBuilder, Group, Mode, NodeKind};
use zarr::store::{FilesystemStore, MemoryStore, Store};
use zarr::Error;

fn fs_store(dir: &Path) -> Arc<dyn Store> {
    Arc::new(FilesystemStore::open(dir, true, true).unwrap())
}

/// Makes the file at `path` a sparse file of `len` bytes (nothing is written to disk).
fn sparse(path: &Path, len: u64) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::File::create(path).unwrap().set_len(len).unwrap();
}

/// Asserts `result` is a codec error naming `key`, returned within a few seconds of `start`.
fn refused<T: std::fmt::Debug>(result: zarr::Result<T>, key: &str, start: Instant) {
    match result {
        Err(Error::Codec(m)) => assert!(m.contains(key), "{m}"),
        other => panic!("{key}: expected a codec error, got {other:?}"),
    }
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{key}: read slowly"
    );
}

#[test]
fn chunk_files_larger_than_any_encoding_are_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let store = fs_store(dir.path());
    for (name, compressor) in [("raw", Value::Null), ("zstd", json!({"id": "zstd"}))] {
        let mut b = ArrayBuilder::new(vec![8], ElementType::UInt8);
        b.chunks(vec![4])
            .compressor(compressor)
            .zarr_format(2)
            .unwrap();
        let a = b.create(store.clone(), name, Mode::CreateNew).unwrap();
        a.write(&[0], &[8], ElementType::UInt8, Order::C, &[7; 8])
            .unwrap();
        // 64 GiB for a 4-byte chunk: read whole, this aborted the process.
        sparse(&dir.path().join(name).join("0"), 64 << 30);
        let key = format!("{name}/0");
        let mut one = [0u8; 1];
        let start = Instant::now();
        refused(
            a.read(&[0], &[1], ElementType::UInt8, Order::C, &mut one),
            &key,
            start,
        );
        // A partial write reads the chunk first: refused the same way, nothing written.
        refused(
            a.write(&[1], &[1], ElementType::UInt8, Order::C, &[1]),
            &key,
            start,
        );
        assert_eq!(fs::metadata(dir.path().join(&key)).unwrap().len(), 64 << 30);
        // The other chunk still reads.
        let mut rest = [0u8; 4];
        a.read(&[4], &[4], ElementType::UInt8, Order::C, &mut rest)
            .unwrap();
        assert_eq!(rest, [7; 4]);
    }
}

#[test]
fn shards_and_variable_length_chunks_are_bounded_too() {
    let dir = tempfile::tempdir().unwrap();
    let store = fs_store(dir.path());
    let mut b = ArrayBuilder::new(vec![8], ElementType::UInt8);
    b.chunks(vec![2])
        .shard_shape(vec![4])
        .compressor(Value::Null);
    let a = b.create(store.clone(), "sharded", Mode::CreateNew).unwrap();
    a.write(&[0], &[8], ElementType::UInt8, Order::C, &[5; 8])
        .unwrap();
    // A 64 GiB shard whose index (at the end, with its crc32c) says inner chunk 0 holds
    // all of it but the index.
    let path = dir.path().join("sharded/c/0");
    let total: u64 = 64 << 30;
    sparse(&path, total);
    let mut index = Vec::new();
    for (offset, len) in [(0u64, total - 36), (u64::MAX, u64::MAX)] {
        index.extend(offset.to_le_bytes());
        index.extend(len.to_le_bytes());
    }
    index.extend(crc32c::crc32c(&index).to_le_bytes());
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.seek(SeekFrom::Start(total - 36)).unwrap();
        f.write_all(&index).unwrap();
    }
    let start = Instant::now();
    let mut one = [0u8; 1];
    refused(
        a.read(&[0], &[1], ElementType::UInt8, Order::C, &mut one),
        "sharded/c/0",
        start,
    );
    // Rewriting part of the shard reads it whole first: refused before reading.
    refused(
        a.write(&[0], &[1], ElementType::UInt8, Order::C, &[1]),
        "sharded/c/0",
        start,
    );

    let mut b = ArrayBuilder::new(vec![4], ElementType::String);
    b.chunks(vec![2]).zarr_format(3).unwrap();
    let s = b.create(store.clone(), "strings", Mode::CreateNew).unwrap();
    sparse(&dir.path().join("strings/c/0"), 64 << 30);
    let start = Instant::now();
    refused(s.read_vlen(&[0], &[1], Order::C), "strings/c/0", start);
}

#[test]
fn unicode_items_are_limited_in_bytes_not_characters() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let doc = |dtype: &str| {
        json!({"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": dtype,
               "compressor": null, "fill_value": null, "order": "C", "filters": null})
        .to_string()
    };
    // 2^30 characters are 4 GiB items: refused.
    store
        .set("big/.zarray", doc("<U1073741824").as_bytes())
        .unwrap();
    match Array::open(store.clone(), "big", Mode::Read) {
        Err(Error::Metadata(m)) => assert!(m.contains("U1073741824"), "{m}"),
        other => panic!("expected a metadata error, got {other:?}"),
    }
    store
        .set("over/.zarray", doc("<U268435457").as_bytes())
        .unwrap();
    assert!(matches!(
        Array::open(store.clone(), "over", Mode::Read),
        Err(Error::Metadata(_))
    ));
    // The largest accepted (1 GiB items) opens without touching that much memory.
    store
        .set("max/.zarray", doc("<U268435456").as_bytes())
        .unwrap();
    let a = Array::open(store.clone(), "max", Mode::Read).unwrap();
    assert_eq!(a.metadata().item_size(), 1 << 30);
}

/// Run in a child limited to 4 GiB of address space (see the test below).
const NO_MEMORY_CHILD: &str = "ZARR_SAFETY_NO_MEMORY_CHILD";

#[test]
fn a_chunk_too_large_for_memory_is_an_error_not_an_abort() {
    if std::env::var_os(NO_MEMORY_CHILD).is_some() {
        // 16 GiB chunks backed by a few bytes: decoding needs a 16 GiB buffer.
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut b = ArrayBuilder::new(vec![1 << 34], ElementType::UInt8);
        b.chunks(vec![1 << 34])
            .compressor(json!({"id": "zstd", "level": 1}));
        let a = b.create(store.clone(), "a", Mode::CreateNew).unwrap();
        store.set("a/c/0", &[0x28, 0xb5, 0x2f, 0xfd, 0, 0]).unwrap();
        let mut one = [0u8; 1];
        let err = a
            .read(&[5], &[1], ElementType::UInt8, Order::C, &mut one)
            .unwrap_err();
        assert!(matches!(err, Error::NoMemory(_)), "{err:?}");
        assert!(err.to_string().contains("17179869184"), "{err}");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(exe)
        .args([
            "safety::a_chunk_too_large_for_memory_is_an_error_not_an_abort",
            "--exact",
            "--test-threads=1",
        ])
        .env(NO_MEMORY_CHILD, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {text}");
    assert!(text.contains("1 passed"), "{text}");
}

/// A v2 `.zarray` of one uint8 element whose dtype is a record of `n` fields.
fn record_doc(n: usize) -> Vec<u8> {
    let fields: Vec<Value> = (0..n).map(|i| json!([format!("f{i}"), "|u1"])).collect();
    serde_json::to_vec(&json!({
        "zarr_format": 2, "shape": [1], "chunks": [1], "dtype": fields,
        "compressor": null, "fill_value": null, "order": "C", "filters": null
    }))
    .unwrap()
}

#[test]
fn structured_types_parse_in_linear_time_and_are_capped() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store.set("ok/.zarray", &record_doc(60_000)).unwrap();
    store.set("over/.zarray", &record_doc(100_000)).unwrap();
    let start = Instant::now();
    let a = Array::open(store.clone(), "ok", Mode::Read).unwrap();
    assert_eq!(a.metadata().item_size(), 60_000);
    let mut record = vec![0u8; 60_000];
    a.read(&[0], &[1], ElementType::Raw, Order::C, &mut record)
        .unwrap();
    match Array::open(store.clone(), "over", Mode::Read) {
        Err(Error::Metadata(m)) => assert!(m.contains("65536 fields"), "{m}"),
        other => panic!("expected a metadata error, got {other:?}"),
    }
    // Quadratic parsing took about a minute here.
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn mode_w_replaces_zarr_nodes_and_keeps_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = fs_store(dir.path());
    for format in [2, 3] {
        let root = Group::open(store.clone(), "", Mode::Overwrite).unwrap();
        let mut b = ArrayBuilder::new(vec![4], ElementType::UInt8);
        b.chunks(vec![2]).zarr_format(format).unwrap();
        root.create_array("g/a", &b, Mode::CreateNew)
            .unwrap()
            .write(&[0], &[4], ElementType::UInt8, Order::C, &[1, 2, 3, 4])
            .unwrap();
        fs::write(dir.path().join("notes.txt"), b"mine").unwrap();
        fs::create_dir_all(dir.path().join("g/scripts")).unwrap();
        fs::write(dir.path().join("g/scripts/run.sh"), b"echo").unwrap();

        let root = Group::open(store.clone(), "", Mode::Overwrite).unwrap();
        assert!(root.members().unwrap().is_empty(), "format {format}");
        assert_eq!(fs::read(dir.path().join("notes.txt")).unwrap(), b"mine");
        assert_eq!(
            fs::read(dir.path().join("g/scripts/run.sh")).unwrap(),
            b"echo"
        );
        assert!(!dir.path().join("g/a").exists(), "format {format}");
        let keys = store.list().unwrap();
        assert!(
            keys.iter().all(|k| k == "notes.txt"
                || k == "g/scripts/run.sh"
                || k == ".zgroup"
                || k == "zarr.json"),
            "{keys:?}"
        );
    }
}

#[test]
fn draft_documents_naming_dot_segments_are_not_members() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![3], ElementType::UInt8);
    b.chunks(vec![3])
        .zarr_format(DRAFT_ZARR_PYTHON_NUMBER)
        .unwrap();
    let a = b.create(store.clone(), "g/a", Mode::CreateNew).unwrap();
    a.write(&[0], &[3], ElementType::UInt8, Order::C, &[1, 2, 3])
        .unwrap();
    let doc = store.get("meta/root/g/a.array.json").unwrap().unwrap();
    for name in [
        "..array.json",
        "...array.json",
        ".group.json",
        "..group.json",
    ] {
        store.set(&format!("meta/root/g/{name}"), &doc).unwrap();
    }
    let g = Group::open(store.clone(), "g", Mode::Read).unwrap();
    assert_eq!(
        g.members().unwrap(),
        vec![("a".to_string(), NodeKind::Array)]
    );
    let target: Arc<dyn Store> = Arc::new(MemoryStore::new());
    copy(&store, "", &target, "", None, Mode::CreateNew).unwrap();
    let copied = Array::open(target, "g/a", Mode::Read).unwrap();
    let mut out = [0u8; 3];
    copied
        .read(&[0], &[3], ElementType::UInt8, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, [1, 2, 3]);
}

#[test]
fn copies_refuse_oversized_chunk_files_unread() {
    let dir = tempfile::tempdir().unwrap();
    let store = fs_store(&dir.path().join("src"));
    let target = fs_store(&dir.path().join("dst"));
    for (name, shards) in [("plain", None), ("sharded", Some(vec![4]))] {
        let mut b = ArrayBuilder::new(vec![8], ElementType::UInt8);
        b.chunks(vec![2]).compressor(Value::Null);
        if let Some(shape) = shards {
            b.shard_shape(shape);
        }
        let a = b.create(store.clone(), name, Mode::CreateNew).unwrap();
        a.write(&[0], &[8], ElementType::UInt8, Order::C, &[9; 8])
            .unwrap();
        let key = format!("{name}/c/0");
        sparse(&dir.path().join("src").join(&key), 64 << 30);
        let start = Instant::now();
        refused(
            copy(&store, name, &target, name, None, Mode::Overwrite),
            &key,
            start,
        );
    }
}

#[test]
fn metadata_documents_larger_than_any_are_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let store = fs_store(dir.path());
    for key in ["v2/.zarray", "v3/zarr.json", "g/.zgroup", "zarr.json"] {
        sparse(&dir.path().join(key), 64 << 30);
    }
    let start = Instant::now();
    for (path, result) in [
        ("v2", Array::open(store.clone(), "v2", Mode::Read).map(drop)),
        ("v3", Array::open(store.clone(), "v3", Mode::Read).map(drop)),
        ("g", Group::open(store.clone(), "g", Mode::Read).map(drop)),
    ] {
        match result {
            Err(Error::Metadata(m)) => assert!(m.contains("more than"), "{path}: {m}"),
            other => panic!("{path}: expected a metadata error, got {other:?}"),
        }
    }
    assert!(start.elapsed() < Duration::from_secs(20));
}
