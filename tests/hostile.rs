//! Hostile input: documents, chunks, keys and regions a stranger's store may hold or a
//! caller may pass. Each must be refused with a clear error (or handled), never crash,
//! never allocate what the input merely claims. docs/RELIABILITY.md lists every case with
//! the test that covers it.

use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Read;
use std::sync::Arc;
use zarr::codec::from_config;
use zarr::dtype::ElementType;
use zarr::meta::consolidated::ConsolidatedStore;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode, Node};
use zarr::store::{FilesystemStore, MemoryStore, Store, ZipMode, ZipStore};
use zarr::Error;

/// The system allocator, counting the bytes each thread holds so a test can bound what one
/// call allocates.
struct Counting;

thread_local! {
    /// Bytes allocated and not freed by this thread.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    /// The most `LIVE` has been since `peak_during` started.
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + delta);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
}

// SAFETY: every call goes to the system allocator unchanged; only counters are updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        count(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, size);
        if !q.is_null() {
            count(size as isize - layout.size() as isize);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What `f` returns and the most bytes it held at once (allocated on this thread).
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(start));
    let value = f();
    (value, (PEAK.with(Cell::get) - start).max(0) as usize)
}

/// A v2 `.zarray` with the given shape and chunks (uint8, no compressor).
fn zarray(shape: Value, chunks: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": "|u1",
        "compressor": null, "fill_value": 3, "order": "C", "filters": null
    }))
    .unwrap()
}

fn store_with(key: &str, value: &[u8]) -> Arc<dyn Store> {
    let store = Arc::new(MemoryStore::new());
    store.set(key, value).unwrap();
    store
}

fn open(store: &Arc<dyn Store>) -> zarr::Result<Array> {
    Array::open(store.clone(), "a", Mode::Read)
}

#[test]
fn decompression_bombs_are_refused_without_inflating() {
    // 16 MiB of zeros, compressed by every codec, stored as a chunk of 16 bytes: the
    // decoders write into the chunk's 16 bytes and stop there, whatever the data claims.
    let zeros = vec![0u8; 16 << 20];
    for config in [
        json!({"id": "blosc", "cname": "lz4", "clevel": 9, "shuffle": 0}),
        json!({"id": "zlib", "level": 9}),
        json!({"id": "gzip", "level": 9}),
        json!({"id": "bz2", "level": 9}),
        json!({"id": "lzma", "preset": 1}),
        json!({"id": "zstd", "level": 3}),
        json!({"id": "lz4", "acceleration": 1}),
    ] {
        let codec = from_config(config.as_object().unwrap(), 1).unwrap();
        let bomb = zarr::codec::encode(codec.as_ref(), &zeros).unwrap();
        assert!(bomb.len() < zeros.len() / 16, "{config}: not a bomb");
        let mut small = [0u8; 16];
        let err = codec.decode_into(&bomb, &mut small).unwrap_err();
        assert!(matches!(err, Error::Codec(_)), "{config}: {err:?}");

        let mut doc: Value = serde_json::from_slice(&zarray(json!([4, 4]), json!([4, 4]))).unwrap();
        doc["compressor"] = config.clone();
        let store = store_with("a/.zarray", &serde_json::to_vec(&doc).unwrap());
        store.set("a/0.0", &bomb).unwrap();
        let array = open(&store).unwrap();
        let mut out = [0u8; 16];
        let err = array
            .read(&[0, 0], &[4, 4], ElementType::UInt8, Order::C, &mut out)
            .unwrap_err();
        assert!(matches!(err, Error::Codec(_)), "{config}: {err:?}");
        assert!(err.to_string().contains("0.0"), "{config}: {err}");
    }
}

#[test]
fn a_thousand_dimensions_open_and_read_or_overflow_cleanly() {
    let ones = vec![1u64; 1000];
    let store = store_with("a/.zarray", &zarray(json!(ones), json!(ones)));
    let array = open(&store).unwrap();
    let mut out = [0u8; 1];
    array
        .read(
            &ones.iter().map(|_| 0).collect::<Vec<_>>(),
            &ones,
            ElementType::UInt8,
            Order::C,
            &mut out,
        )
        .unwrap();
    assert_eq!(out, [3]);
    // 2^1000 elements: refused when opened.
    let twos = vec![2u64; 1000];
    let store = store_with("a/.zarray", &zarray(json!(twos), json!(ones)));
    let err = open(&store).unwrap_err();
    assert!(matches!(err, Error::Metadata(_)), "{err:?}");
    assert!(err.to_string().contains("shape"), "{err}");
}

#[test]
fn chunks_of_one_over_a_huge_shape_read_small_regions() {
    // 2^62 chunks: opening and reading a corner touch only the chunks read.
    let store = store_with("a/.zarray", &zarray(json!([1u64 << 62]), json!([1])));
    let array = open(&store).unwrap();
    let mut out = [0u8; 3];
    array
        .read(
            &[(1u64 << 62) - 3],
            &[3],
            ElementType::UInt8,
            Order::C,
            &mut out,
        )
        .unwrap();
    assert_eq!(out, [3, 3, 3]);
    assert_eq!(array.nchunks_initialized().unwrap(), 0);
    // 2^64 chunks (and elements): refused.
    let store = store_with(
        "a/.zarray",
        &zarray(json!([1u64 << 32, 1u64 << 32]), json!([1, 1])),
    );
    let err = open(&store).unwrap_err();
    assert!(matches!(err, Error::Metadata(_)), "{err:?}");
}

#[test]
fn negative_and_non_integer_numbers_in_v3_metadata_are_refused() {
    let base = json!({
        "zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}]
    });
    let cases: [(&str, Value); 7] = [
        ("/shape", json!([-4, 4])),
        ("/shape", json!([4.5, 4])),
        ("/shape", json!([4, "4"])),
        ("/shape", json!([1e30, 4])),
        ("/chunk_grid/configuration/chunk_shape", json!([0, 2])),
        ("/chunk_grid/configuration/chunk_shape", json!([-2, 2])),
        ("/chunk_grid/configuration/chunk_shape", json!([2.0, 2])),
    ];
    for (pointer, bad) in cases {
        let mut doc = base.clone();
        *doc.pointer_mut(pointer).unwrap() = bad.clone();
        let store = store_with("a/zarr.json", &serde_json::to_vec(&doc).unwrap());
        let err = open(&store).unwrap_err();
        assert!(
            matches!(err, Error::Metadata(_)),
            "{pointer} = {bad}: {err:?}"
        );
    }
}

/// Type strings with multi-byte characters where numpy's letters go (a panic once): every
/// form of metadata and the builder's names refuse them with a message.
#[test]
fn type_strings_with_multi_byte_characters_are_refused() {
    let names = [
        "<\u{e9}",
        "|\u{e9}8",
        ">\u{1f600}4",
        "<M8[\u{e9}]",
        "<U\u{e9}",
        "\u{e9}",
        "<",
    ];
    for name in names {
        let v2 = json!({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": name,
            "compressor": null, "fill_value": null, "order": "C", "filters": null});
        let store = store_with("a/.zarray", &serde_json::to_vec(&v2).unwrap());
        let err = open(&store).unwrap_err();
        assert!(matches!(err, Error::Metadata(_)), "{name:?}: {err:?}");
        let fields = json!({"zarr_format": 2, "shape": [2], "chunks": [2],
            "dtype": [["x", name]], "compressor": null, "fill_value": null, "order": "C",
            "filters": null});
        let store = store_with("a/.zarray", &serde_json::to_vec(&fields).unwrap());
        assert!(open(&store).is_err(), "{name:?} as a field");
        let v3 = json!({"zarr_format": 3, "node_type": "array", "shape": [2],
            "data_type": name, "fill_value": 0, "codecs": [{"name": "bytes"}],
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}});
        let store = store_with("a/zarr.json", &serde_json::to_vec(&v3).unwrap());
        assert!(open(&store).is_err(), "{name:?} in v3");
        let mut b = zarr::node::ArrayBuilder::new(vec![2], zarr::dtype::ElementType::Raw);
        let err = b.dtype_name(name).unwrap_err();
        assert!(matches!(err, Error::InvalidArg(_)), "{name:?}: {err:?}");
    }
}

#[test]
fn deeply_nested_json_is_refused_without_overflowing_the_stack() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let attrs = format!("{{\"a\": {}}}", deep(100_000));
    // As attributes of a v2 array: the array opens, reading the attributes fails.
    let store = store_with("a/.zarray", &zarray(json!([2]), json!([2])));
    store.set("a/.zattrs", attrs.as_bytes()).unwrap();
    let array = open(&store).unwrap();
    let err = array.attributes().unwrap_err();
    assert!(matches!(err, Error::Metadata(_)), "{err:?}");
    // As an array document, v2 and v3, and as consolidated metadata.
    let doc = format!("{{\"zarr_format\": 2, \"shape\": {}}}", deep(100_000));
    let err = open(&store_with("a/.zarray", doc.as_bytes())).unwrap_err();
    assert!(matches!(err, Error::Metadata(_)), "{err:?}");
    let doc = format!("{{\"zarr_format\": 3, \"node_type\": \"array\", \"attributes\": {attrs}}}");
    let err = open(&store_with("a/zarr.json", doc.as_bytes())).unwrap_err();
    assert!(matches!(err, Error::Metadata(_)), "{err:?}");
    let doc = format!("{{\"zarr_consolidated_format\": 1, \"metadata\": {attrs}}}");
    let err = ConsolidatedStore::open(store_with(".zmetadata", doc.as_bytes()), "").unwrap_err();
    assert!(matches!(err, Error::Metadata(_)), "{err:?}");
    // Just under the limit still parses.
    let ok = format!("{{\"a\": {}}}", deep(100));
    store.set("a/.zattrs", ok.as_bytes()).unwrap();
    assert!(open(&store).unwrap().attributes().is_ok());
}

#[test]
fn giant_attribute_documents_read_and_write() {
    // 32 MiB of attributes (100k keys and one long string): slow to parse, but parsed.
    let mut attrs = serde_json::Map::new();
    for i in 0..100_000 {
        attrs.insert(format!("key{i}"), json!([i, "value", {"n": i}]));
    }
    attrs.insert("long".into(), json!("x".repeat(28 << 20)));
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(vec![2], ElementType::UInt8);
    builder.attributes(attrs.clone());
    builder.create(store.clone(), "a", Mode::CreateNew).unwrap();
    // Zarr v3 (the default) keeps attributes inside zarr.json.
    assert!(store.size("a/zarr.json").unwrap().unwrap() > 30 << 20);
    let back = open(&store).unwrap().attributes().unwrap();
    assert_eq!(back.len(), attrs.len());
    assert_eq!(back["key99999"], json!([99999, "value", {"n": 99999}]));
}

#[test]
fn keys_with_nul_bytes_are_refused_everywhere() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for key in ["a\0b", "a/\0/b", "\0"] {
        assert!(
            matches!(store.set(key, b"v"), Err(Error::InvalidKey(_))),
            "{key:?}"
        );
        assert!(
            matches!(store.get(key), Err(Error::InvalidKey(_))),
            "{key:?}"
        );
        let err = Array::open(store.clone(), key, Mode::Read).unwrap_err();
        assert!(matches!(err, Error::InvalidKey(_)), "{key:?}: {err:?}");
    }
    // A consolidated document naming a key with a NUL byte is refused at opening.
    let doc =
        json!({"zarr_consolidated_format": 1, "metadata": {"a\u{0}b/.zgroup": {"zarr_format": 2}}});
    let inner = store_with(".zmetadata", &serde_json::to_vec(&doc).unwrap());
    let err = ConsolidatedStore::open(inner, "").unwrap_err();
    assert!(matches!(err, Error::InvalidKey(_)), "{err:?}");
}

#[test]
fn consolidated_entries_that_escape_are_refused() {
    for entry in ["../x/.zarray", "/abs/.zgroup", "a/../../.zgroup"] {
        let doc = json!({"zarr_consolidated_format": 1, "metadata": {entry: {"zarr_format": 2}}});
        let inner = store_with(".zmetadata", &serde_json::to_vec(&doc).unwrap());
        let err = ConsolidatedStore::open(inner, "").unwrap_err();
        assert!(
            matches!(err, Error::InvalidKey(_) | Error::Metadata(_)),
            "{entry}: {err:?}"
        );
    }
}

#[test]
fn regions_whose_size_overflows_64_bits_are_refused() {
    // An array of 2^63 one-byte elements (its size fits in 64 bits, as every valid array's
    // must); regions whose element count or end overflow 64 bits are refused, and the
    // whole array against a small buffer is refused before any chunk is touched.
    let shape = [1u64 << 21, 1 << 21, 1 << 21];
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(shape.to_vec(), ElementType::UInt8);
    builder.chunks(vec![1 << 10, 1 << 10, 1 << 10]);
    let array = builder.create(store.clone(), "a", Mode::CreateNew).unwrap();
    let mut buf = [0u8; 16];
    for (start, count) in [
        ([0, 0, 0], [u64::MAX, u64::MAX, u64::MAX]),
        ([0, 0, 0], [1 << 32, 1 << 32, 1]),
        ([u64::MAX, 0, 0], [2, 1, 1]),
        ([1, 0, 0], [u64::MAX, 1, 1]),
    ] {
        for write in [false, true] {
            let err = if write {
                array.write(&start, &count, ElementType::UInt8, Order::C, &buf)
            } else {
                array.read(&start, &count, ElementType::UInt8, Order::F, &mut buf)
            }
            .unwrap_err();
            assert!(
                matches!(err, Error::OutOfBounds(_) | Error::Overflow(_)),
                "{start:?}+{count:?}: {err:?}"
            );
        }
    }
    let err = array
        .read(&[0, 0, 0], &shape, ElementType::UInt8, Order::C, &mut buf)
        .unwrap_err();
    assert!(matches!(err, Error::BufferSize(_)), "{err:?}");
    // No chunk was written: only metadata documents are there.
    let keys = store.list().unwrap();
    assert!(
        keys.iter().all(|k| {
            let name = k.rsplit('/').next().unwrap();
            name.starts_with('.') || name == "zarr.json"
        }),
        "{keys:?}"
    );
    // An array whose size in bytes would overflow is refused at creation.
    let mut builder = ArrayBuilder::new(shape.to_vec(), ElementType::UInt16);
    builder.chunks(vec![1 << 10, 1 << 10, 1 << 10]);
    let err = builder.create(store, "b", Mode::CreateNew).unwrap_err();
    assert!(matches!(err, Error::InvalidArg(_)), "{err:?}");
}

/// A filesystem store at `dir/root` and a directory `dir/outside` holding `x`.
fn store_beside_outside(dir: &std::path::Path) -> Arc<dyn Store> {
    std::fs::create_dir_all(dir.join("outside")).unwrap();
    std::fs::write(dir.join("outside/x"), b"secret").unwrap();
    Arc::new(FilesystemStore::open(dir.join("root"), true, true).unwrap())
}

/// Every file below `dir` with its content, sorted by path.
fn tree_of(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(tree_of(&path));
        } else {
            files.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    files.sort();
    files
}

#[test]
fn a_directory_swapped_for_a_link_outside_after_use_leads_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_beside_outside(dir.path());
    store.set("a/b/x", b"inside").unwrap();
    assert_eq!(store.get("a/b/x").unwrap().unwrap(), b"inside");
    assert_eq!(store.list().unwrap(), vec!["a/b/x"]);
    // Another process swaps the directories the handle has used for links outside.
    let root = dir.path().join("root");
    std::fs::rename(root.join("a"), dir.path().join("moved")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside"), root.join("a")).unwrap();
    std::fs::create_dir(dir.path().join("outside/b")).unwrap();
    std::fs::write(dir.path().join("outside/b/x"), b"secret").unwrap();
    let before = tree_of(&dir.path().join("outside"));
    let refused = |what: &str, result: zarr::Result<()>| match result {
        Err(Error::InvalidKey(m)) => assert!(m.contains("outside the store"), "{what}: {m}"),
        other => panic!("{what}: expected InvalidKey, got {other:?}"),
    };
    for key in ["a/x", "a/b/x", "a/new", "a/b/new"] {
        refused(key, store.get(key).map(drop));
        refused(key, store.get_range(key, 0, 1).map(drop));
        refused(key, store.size(key).map(drop));
        refused(key, store.set(key, b"evil"));
        refused(key, store.erase(key).map(drop));
    }
    refused("erase_prefix a/", store.erase_prefix("a/"));
    refused("erase_prefix a/b/", store.erase_prefix("a/b/"));
    refused("erase_prefix a", store.erase_prefix("a"));
    refused("list a/", store.list_prefix("a/").map(drop));
    refused("list_dir a/b/", store.list_dir("a/b/").map(drop));
    refused("list", store.list().map(drop));
    assert_eq!(tree_of(&dir.path().join("outside")), before);
}

/// Runs `f` on another thread and fails if it has not returned within 10 seconds.
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || send.send(f()));
    receive
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the call blocked")
}

#[test]
fn a_fifo_at_a_key_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_beside_outside(dir.path());
    store
        .set("a/.zarray", &zarray(json!([4]), json!([2])))
        .unwrap();
    for name in ["a/0", "fifo"] {
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("root").join(name))
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {name}");
    }
    let reads = within_seconds({
        let store = store.clone();
        move || {
            let mut buf = Vec::new();
            [
                store.get("fifo").map(drop),
                store.get_into("fifo", &mut buf, 10).map(drop),
                store.get_range("fifo", 0, 1).map(drop),
                store.size("fifo").map(drop),
            ]
        }
    });
    for result in reads {
        match result {
            Err(Error::Io(m)) => assert!(
                m.contains("fifo") && m.contains("not a regular file"),
                "{m}"
            ),
            other => panic!("expected an I/O error, got {other:?}"),
        }
    }
    let read = within_seconds(move || {
        let array = Array::open(store, "a", Mode::Read)?;
        array.read(&[0], &[4], ElementType::UInt8, Order::C, &mut [0u8; 4])
    });
    match read {
        Err(Error::Io(m)) => assert!(m.contains("not a regular file"), "{m}"),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn a_key_too_long_for_the_filesystem_is_an_invalid_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_beside_outside(dir.path());
    let long = vec!["0"; 1000].join(".");
    for key in [long.clone(), format!("a/{long}")] {
        let mut buf = Vec::new();
        for result in [
            store.get(&key).map(drop),
            store.get_into(&key, &mut buf, 10).map(drop),
            store.size(&key).map(drop),
            store.set(&key, b"v"),
            store.erase(&key).map(drop),
        ] {
            match result {
                Err(Error::InvalidKey(m)) => {
                    assert!(m.contains("longer than the filesystem allows"), "{m}");
                    assert!(m.contains("255") && m.contains('/'), "{m}");
                }
                other => panic!("{}: expected InvalidKey, got {other:?}", key.len()),
            }
        }
    }
    // An array of 1000 dimensions with '.' in its chunk keys: reading is refused the same way.
    let ones = vec![1u64; 1000];
    store
        .set("b/.zarray", &zarray(json!(ones), json!(ones)))
        .unwrap();
    let array = Array::open(store, "b", Mode::Read).unwrap();
    let err = array
        .read(
            &vec![0; 1000],
            &ones,
            ElementType::UInt8,
            Order::C,
            &mut [0u8],
        )
        .unwrap_err();
    assert!(matches!(err, Error::InvalidKey(_)), "{err:?}");
}

/// A raw deflate stream of `mib` MiB of zeros without compressing them all: one MiB is
/// compressed with a full flush (so it refers to nothing before it) and repeated, then a
/// final empty block ends the stream.
fn deflated_zeros(mib: usize) -> Vec<u8> {
    let mut compress = flate2::Compress::new(flate2::Compression::best(), false);
    let mut piece = Vec::with_capacity(1 << 16);
    compress
        .compress_vec(&vec![0u8; 1 << 20], &mut piece, flate2::FlushCompress::Full)
        .unwrap();
    assert_eq!(compress.total_in(), 1 << 20);
    let mut stream = piece.repeat(mib);
    stream.extend_from_slice(&[0x03, 0x00]);
    stream
}

/// A zip of `(name, method, data, declared size)` entries, written field by field so that
/// the declared sizes can lie (the CRCs of deflated entries are left 0: none is read to its
/// end).
fn zip_of(entries: &[(&str, u16, &[u8], u32)]) -> Vec<u8> {
    let header = |sig: u32, name: &str, method: u16, data: &[u8], declared: u32| {
        let mut h = sig.to_le_bytes().to_vec();
        if sig == 0x0201_4b50 {
            h.extend(20u16.to_le_bytes()); // version made by
        }
        for v in [20u16, 0, method, 0, 0x21] {
            h.extend(v.to_le_bytes()); // version needed, flags, method, time, date
        }
        let crc = if method == 0 {
            crc32fast::hash(data)
        } else {
            0
        };
        for v in [crc, data.len() as u32, declared] {
            h.extend(v.to_le_bytes()); // crc, compressed size, declared size
        }
        h.extend((name.len() as u16).to_le_bytes());
        h.extend(0u16.to_le_bytes()); // extra field length
        h
    };
    let (mut zip, mut central) = (Vec::new(), Vec::new());
    for &(name, method, data, declared) in entries {
        let offset = zip.len() as u32;
        zip.extend(header(0x0403_4b50, name, method, data, declared));
        zip.extend(name.as_bytes());
        zip.extend(data);
        central.extend(header(0x0201_4b50, name, method, data, declared));
        central.extend([0u8; 10]); // comment length, disk, internal and external attributes
        central.extend(offset.to_le_bytes());
        central.extend(name.as_bytes());
    }
    let (at, size, n) = (zip.len() as u32, central.len() as u32, entries.len() as u16);
    zip.extend(central);
    zip.extend(0x0605_4b50u32.to_le_bytes());
    zip.extend([0u8; 4]); // disk numbers
    zip.extend([n.to_le_bytes(), n.to_le_bytes()].concat());
    zip.extend([size.to_le_bytes(), at.to_le_bytes()].concat());
    zip.extend([0u8; 2]); // comment length
    zip
}

#[test]
fn zip_bombs_are_refused_without_inflating() {
    // The construction holds: three repeated pieces inflate to 3 MiB of zeros.
    let mut small = Vec::new();
    flate2::read::DeflateDecoder::new(&deflated_zeros(3)[..])
        .read_to_end(&mut small)
        .unwrap();
    assert!(small.len() == 3 << 20 && small.iter().all(|&b| b == 0));

    // One uint32 element per chunk; each chunk entry inflates to 1 GiB (1 MiB in the zip).
    // "a/0" declares 4 bytes (a lie), "b/0" declares its true size.
    let bomb = deflated_zeros(1024);
    let mut doc: Value = serde_json::from_slice(&zarray(json!([1]), json!([1]))).unwrap();
    doc["dtype"] = json!("<u4");
    let doc = serde_json::to_vec(&doc).unwrap();
    let zip = zip_of(&[
        ("a/.zarray", 0, &doc, doc.len() as u32),
        ("a/0", 8, &bomb, 4),
        ("b/.zarray", 0, &doc, doc.len() as u32),
        ("b/0", 8, &bomb, 1 << 30),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.zip");
    std::fs::write(&path, zip).unwrap();
    let store: Arc<dyn Store> = Arc::new(ZipStore::open(&path, ZipMode::Read, false).unwrap());

    let limit = 16 << 20;
    for name in ["a", "b"] {
        let array = Array::open(store.clone(), name, Mode::Read).unwrap();
        let mut out = [0u8; 4];
        let (result, peak) =
            peak_during(|| array.read(&[0], &[1], ElementType::UInt32, Order::C, &mut out));
        let err = result.unwrap_err();
        assert!(
            matches!(err, Error::Io(_) | Error::Codec(_)),
            "{name}: {err:?}"
        );
        assert!(err.to_string().contains(&format!("\"{name}/0\"")), "{err}");
        assert!(
            peak < limit,
            "{name}: reading one element took {peak} bytes"
        );
    }
    // Read whole, an entry is bounded by its declared size; a range only by its length.
    let (result, peak) = peak_during(|| store.get("a/0"));
    let err = result.unwrap_err();
    assert!(err.to_string().contains("declared size"), "{err}");
    assert!(peak < limit, "get took {peak} bytes");
    let (result, peak) = peak_during(|| store.get_range("b/0", 1 << 20, 4));
    assert_eq!(result.unwrap().unwrap(), [0u8; 4]);
    assert!(peak < limit, "get_range took {peak} bytes");
}

/// Makes the file at `path` a sparse file of `len` bytes (nothing is written to disk).
fn sparse(path: &std::path::Path, len: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

#[test]
fn consolidated_metadata_larger_than_any_document_is_refused_unread() {
    // A 5 GiB `.zmetadata`, v3 group document with inline consolidated metadata, and
    // document to consolidate, each a sparse file: refused by size, before reading.
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    let huge = 5u64 << 30;
    sparse(&dir.path().join("v2/.zmetadata"), huge);
    sparse(&dir.path().join("v3/zarr.json"), huge);
    store.set("c/.zgroup", br#"{"zarr_format": 2}"#).unwrap();
    sparse(&dir.path().join("c/a/.zarray"), huge);
    sparse(&dir.path().join("d/zarr.json"), huge);
    let (results, peak) = peak_during(|| {
        [
            (
                "v2/.zmetadata",
                ConsolidatedStore::open(store.clone(), "v2").map(drop),
            ),
            (
                "v3/zarr.json",
                ConsolidatedStore::open(store.clone(), "v3").map(drop),
            ),
            (
                "c/a/.zarray",
                zarr::meta::consolidated::consolidate(store.as_ref(), "c"),
            ),
            (
                "d/zarr.json",
                zarr::meta::consolidated::consolidate(store.as_ref(), "d"),
            ),
        ]
    });
    for (key, result) in results {
        match result {
            Err(Error::Metadata(m)) => assert!(
                m.contains(&format!("{key:?} holds more than 1073741824 bytes")),
                "{key}: {m}"
            ),
            other => panic!("{key}: expected a metadata error, got {other:?}"),
        }
    }
    assert!(peak < 1 << 20, "{peak} bytes held");
    assert!(!dir.path().join("c/.zmetadata").exists());
}

#[test]
fn consolidated_names_that_only_normalise_onto_a_key_are_refused() {
    // Beside the real entry, one whose name normalises onto it would replace it (or be
    // replaced), depending on the order: refused, naming the entry, in v2 and v3.
    let array = json!({"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "|u1",
        "compressor": null, "fill_value": 0, "order": "C", "filters": null});
    for name in [
        "g//a/.zarray",
        "./g/a/.zarray",
        "g/./a/.zarray",
        "g\\a/.zarray",
        "g/a/.zarray/",
        "/g/a/.zarray",
        "g/a//.zarray",
    ] {
        let doc = json!({"zarr_consolidated_format": 1,
            "metadata": {"g/a/.zarray": array, name: array}});
        let inner = store_with(".zmetadata", &serde_json::to_vec(&doc).unwrap());
        match ConsolidatedStore::open(inner, "") {
            Err(Error::InvalidKey(m)) => assert!(
                m.contains(&format!(".zmetadata has an entry {name:?}")),
                "{name}: {m}"
            ),
            other => panic!("{name}: {other:?}"),
        }
    }
    let node = json!({"zarr_format": 3, "node_type": "group", "attributes": {}});
    for name in [
        "a//b", "./a/b", "a/./b", "a/b/", "a\\b", "/a/b", "", "a/b//",
    ] {
        let root = json!({"zarr_format": 3, "node_type": "group", "attributes": {},
            "consolidated_metadata": {"kind": "inline", "must_understand": false,
                "metadata": {"a": node, "a/b": node, name: node}}});
        let inner = store_with("zarr.json", &serde_json::to_vec(&root).unwrap());
        match ConsolidatedStore::open(inner, "") {
            Err(Error::InvalidKey(m)) => assert!(
                m.contains(&format!("zarr.json has an entry {name:?}")),
                "{name}: {m}"
            ),
            other => panic!("{name:?}: {other:?}"),
        }
    }
    // Normal names open.
    let doc = json!({"zarr_consolidated_format": 1, "metadata": {"g/a/.zarray": array}});
    let inner = store_with(".zmetadata", &serde_json::to_vec(&doc).unwrap());
    ConsolidatedStore::open(inner, "").unwrap();
}

/// A shape of 2^64 - 1 elements: the last chunk reaches past 2^64, so its end is not a
/// number; reading, writing and locating its elements must not overflow (a panic in
/// checked builds, an empty region where sums wrap, losing the write).
#[test]
fn the_last_chunk_of_a_shape_near_2_pow_64_is_read_and_written() {
    let doc = json!({
        "zarr_format": 3, "node_type": "array", "shape": [u64::MAX], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 3,
        "codecs": [{"name": "bytes"}]
    });
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store
        .set("a/zarr.json", &serde_json::to_vec(&doc).unwrap())
        .unwrap();
    let a = Array::open(store.clone(), "a", Mode::ReadWrite).unwrap();
    let last = u64::MAX - 1;
    a.write(&[last - 1], &[2], ElementType::UInt8, Order::C, &[7, 8])
        .unwrap();
    let mut out = [0u8; 3];
    a.read(&[last - 2], &[3], ElementType::UInt8, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, [3, 7, 8]);
    let chunk = last / 10;
    assert_eq!(a.chunk_of(&[last]).unwrap(), [chunk]);
    assert_eq!(
        a.chunk_region(&[chunk]).unwrap(),
        (vec![chunk * 10], vec![u64::MAX - chunk * 10])
    );
    let stored = store.get(&format!("a/c/{chunk}")).unwrap().unwrap();
    assert_eq!(stored, [3, 3, 3, 7, 8, 3, 3, 3, 3, 3]);
}
