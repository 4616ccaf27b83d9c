//! Arrays with a rectilinear chunk grid (Zarr v3's `rectilinear` chunk grid extension):
//! metadata in the extension's form, every read and write path, resize and append, and
//! hostile documents.

use serde_json::{json, Value};
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::consolidated::{consolidate, ConsolidatedStore};
use zarr::meta::Order;
use zarr::node::{copy, Array, ArrayBuilder, Mode};
use zarr::store::{FilesystemStore, MemoryStore, Store};

/// A `zarr.json` of a 2-d array of `<i4` items, uncompressed, with `grid` as its chunk
/// grid and `codecs` before the `bytes` codec.
fn document(shape: &[u64], chunk_shapes: Value, array_codecs: &[Value]) -> Vec<u8> {
    let mut codecs: Vec<Value> = array_codecs.to_vec();
    codecs.push(json!({"name": "bytes", "configuration": {"endian": "little"}}));
    serde_json::to_vec(&json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": "int32",
        "chunk_grid": {"name": "rectilinear", "configuration": {
            "kind": "inline", "chunk_shapes": chunk_shapes}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": -1,
        "codecs": codecs,
        "attributes": {},
    }))
    .unwrap()
}

fn ints(values: impl IntoIterator<Item = i32>) -> Vec<u8> {
    values.into_iter().flat_map(i32::to_ne_bytes).collect()
}

fn to_ints(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn read(a: &Array, start: &[u64], count: &[u64]) -> Vec<i32> {
    let n: u64 = count.iter().product();
    let mut out = vec![0u8; n as usize * 4];
    a.read(start, count, ElementType::Int32, Order::C, &mut out)
        .unwrap();
    to_ints(&out)
}

fn write(a: &Array, start: &[u64], count: &[u64], values: &[i32]) {
    a.write(
        start,
        count,
        ElementType::Int32,
        Order::C,
        &ints(values.iter().copied()),
    )
    .unwrap();
}

/// The element `(i, j)` of the test pattern.
fn pattern(i: u64, j: u64) -> i32 {
    (i * 100 + j) as i32
}

/// The pattern's region `start`/`count` of a 2-d array.
fn expected(start: &[u64], count: &[u64], value: impl Fn(u64, u64) -> i32) -> Vec<i32> {
    let mut out = Vec::new();
    for i in start[0]..start[0] + count[0] {
        for j in start[1]..start[1] + count[1] {
            out.push(value(i, j));
        }
    }
    out
}

/// Every region of a 2-d array of `shape` whose corners step by `step`.
fn regions(shape: &[u64], step: u64) -> Vec<(Vec<u64>, Vec<u64>)> {
    let mut all = Vec::new();
    let ends = |n: u64| {
        (0..=n)
            .step_by(step as usize)
            .chain([n])
            .collect::<Vec<_>>()
    };
    for &i0 in &ends(shape[0]) {
        for &i1 in ends(shape[0]).iter().filter(|&&e| e >= i0) {
            for &j0 in &ends(shape[1]) {
                for &j1 in ends(shape[1]).iter().filter(|&&e| e >= j0) {
                    all.push((vec![i0, j0], vec![i1 - i0, j1 - j0]));
                }
            }
        }
    }
    all
}

fn memory_with(doc: &[u8]) -> (Arc<dyn Store>, Array) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store.set("a/zarr.json", doc).unwrap();
    let a = Array::open(store.clone(), "a", Mode::ReadWrite).unwrap();
    (store, a)
}

#[test]
fn the_spec_forms_locate_every_chunk() {
    // Rows: edges 3, 4, 6 (sum 13 ≥ 12: the last chunk reaches past the shape); columns:
    // 5, 5, 7 (a run-length pair, then an edge).
    let doc = document(&[12, 17], json!([[3, 4, 6], [[5, 2], 7]]), &[]);
    let (store, a) = memory_with(&doc);
    let meta = a.metadata();
    assert!(meta.is_rectilinear());
    assert_eq!(meta.chunk_grid(), vec![3, 3]);
    assert_eq!(meta.chunks, vec![6, 7]);
    assert_eq!(meta.edge_runs(0), vec![(3, 1), (4, 1), (6, 1)]);
    assert_eq!(meta.edge_runs(1), vec![(5, 2), (7, 1)]);
    assert_eq!(a.chunk_of(&[11, 9]).unwrap(), vec![2, 1]);
    assert_eq!(a.chunk_of(&[3, 10]).unwrap(), vec![1, 2]);
    assert!(a.chunk_of(&[12, 0]).is_err());
    assert_eq!(
        a.chunk_region(&[2, 2]).unwrap(),
        (vec![7, 10], vec![5, 7]),
        "the last row chunk is clipped by the shape"
    );
    assert!(a.chunk_region(&[3, 0]).is_err());

    let all = expected(&[0, 0], &[12, 17], pattern);
    write(&a, &[0, 0], &[12, 17], &all);
    // Each chunk is stored at its own shape: the last row chunk whole (6 rows), beyond the
    // shape included.
    for (index, rows, cols) in [("0/0", 3, 5), ("1/2", 4, 7), ("2/1", 6, 5), ("2/2", 6, 7)] {
        let stored = store.get(&format!("a/c/{index}")).unwrap().unwrap();
        assert_eq!(stored.len(), rows * cols * 4, "chunk {index}");
    }
    let chunk = to_ints(&store.get("a/c/1/1").unwrap().unwrap());
    assert_eq!(chunk, expected(&[3, 5], &[4, 5], pattern));
    assert_eq!(store.list_prefix("a/c/").unwrap().len(), 9);

    let again = Array::open(store.clone(), "a", Mode::Read).unwrap();
    for (start, count) in regions(&[12, 17], 3) {
        assert_eq!(
            read(&again, &start, &count),
            expected(&start, &count, pattern),
            "region {start:?} {count:?}"
        );
    }
}

#[test]
fn partial_writes_merge_and_missing_chunks_read_the_fill_value() {
    let doc = document(&[10, 9], json!([[[1, 3], 7], [2, [3, 2], 1]]), &[]);
    let (store, a) = memory_with(&doc);
    let mut model = vec![-1; 90];
    let mut put = |a: &Array, start: [u64; 2], count: [u64; 2], base: i32| {
        let values: Vec<i32> = (0..(count[0] * count[1]) as i32)
            .map(|k| base + k)
            .collect();
        write(a, &start, &count, &values);
        let mut k = 0;
        for i in start[0]..start[0] + count[0] {
            for j in start[1]..start[1] + count[1] {
                model[(i * 9 + j) as usize] = values[k];
                k += 1;
            }
        }
        model.clone()
    };
    // Inside one chunk, across chunks, a single element, a whole chunk.
    put(&a, [4, 3], [3, 2], 1000);
    put(&a, [1, 1], [6, 7], 2000);
    put(&a, [9, 8], [1, 1], 3000);
    let model = put(&a, [0, 0], [1, 2], 4000);
    for (start, count) in regions(&[10, 9], 2) {
        let want = expected(&start, &count, |i, j| model[(i * 9 + j) as usize]);
        assert_eq!(read(&a, &start, &count), want, "{start:?} {count:?}");
    }
    // Rows 3.. and columns 5..8 were never written whole: chunk (3, 2) holds part only.
    assert!(store.get("a/c/3/3").unwrap().is_some());
    // A chunk written with the fill value everywhere is erased.
    write(&a, &[0, 0], &[1, 2], &[-1, -1]);
    assert!(store.get("a/c/0/0").unwrap().is_none());
    // Never written: chunk (3, 0) holds rows 3..10, columns 0..2 minus what was written.
    assert!(store.get("a/c/3/0").unwrap().is_some());
    assert!(store.get("a/c/0/3").unwrap().is_none());
}

#[test]
fn a_transpose_lays_each_chunk_out_in_its_own_shape() {
    let transpose = json!({"name": "transpose", "configuration": {"order": [1, 0]}});
    let doc = document(&[7, 6], json!([[2, 5], [4, [1, 2]]]), &[transpose]);
    let (store, a) = memory_with(&doc);
    let all = expected(&[0, 0], &[7, 6], pattern);
    write(&a, &[0, 0], &[7, 6], &all);
    // Chunk (1, 0) holds rows 2..7, columns 0..4, stored column by column.
    let stored = to_ints(&store.get("a/c/1/0").unwrap().unwrap());
    let mut by_column = Vec::new();
    for j in 0..4 {
        for i in 2..7 {
            by_column.push(pattern(i, j));
        }
    }
    assert_eq!(stored, by_column);
    write(&a, &[3, 3], &[2, 2], &[1, 2, 3, 4]);
    for (start, count) in regions(&[7, 6], 2) {
        let want = expected(&start, &count, |i, j| match (i, j) {
            (3, 3) => 1,
            (3, 4) => 2,
            (4, 3) => 3,
            (4, 4) => 4,
            _ => pattern(i, j),
        });
        assert_eq!(read(&a, &start, &count), want, "{start:?} {count:?}");
    }
}

#[test]
fn compressed_chunks_on_disk_through_the_cache_and_strided_memory() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    let mut builder = ArrayBuilder::new(vec![40, 30], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![7, 10]);
    builder.chunk_edges(0, &[1, 2, 3, 4, 30]).unwrap();
    builder.compressor(json!({"id": "zstd", "level": 1}));
    let a = builder.create(fs.clone(), "z", Mode::CreateNew).unwrap();
    let doc: Value = serde_json::from_slice(&fs.get("z/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["chunk_grid"],
        json!({"name": "rectilinear", "configuration": {
            "kind": "inline", "chunk_shapes": [[1, 2, 3, 4, 30], 10]}})
    );
    let all = expected(&[0, 0], &[40, 30], pattern);
    // Many chunks in one call: the pipelined path of local files.
    write(&a, &[0, 0], &[40, 30], &all);
    a.flush().unwrap();
    a.set_cache_bytes(1 << 20);
    for _ in 0..2 {
        for (start, count) in regions(&[40, 30], 9) {
            assert_eq!(read(&a, &start, &count), expected(&start, &count, pattern));
        }
    }
    // Column-major memory.
    let mut f = vec![0u8; 40 * 30 * 4];
    a.read(&[0, 0], &[40, 30], ElementType::Int32, Order::F, &mut f)
        .unwrap();
    let f = to_ints(&f);
    assert_eq!(f[1], pattern(1, 0));
    assert_eq!(f[40], pattern(0, 1));
    // Converting reads go through the same plan.
    let mut wide = vec![0u8; 8 * 3];
    a.read_as(&[5, 2], &[1, 3], ElementType::Float64, Order::C, &mut wide)
        .unwrap();
    let wide: Vec<f64> = wide
        .chunks(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(wide, vec![502.0, 503.0, 504.0]);
}

#[test]
fn resize_and_append_follow_the_edges() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(vec![5, 3], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![5, 3]);
    builder.chunk_edges(0, &[5]).unwrap();
    builder.fill_value_json(json!(-1));
    let a = builder.create(store.clone(), "t", Mode::CreateNew).unwrap();
    write(&a, &[0, 0], &[5, 3], &expected(&[0, 0], &[5, 3], pattern));
    // Each append adds one edge of its own length: one chunk per time step.
    a.append(
        0,
        &[2, 3],
        ElementType::Int32,
        Order::C,
        &ints(expected(&[5, 0], &[2, 3], pattern)),
    )
    .unwrap();
    a.append(
        0,
        &[4, 3],
        ElementType::Int32,
        Order::C,
        &ints(expected(&[7, 0], &[4, 3], pattern)),
    )
    .unwrap();
    let meta = a.metadata();
    assert_eq!(meta.shape, vec![11, 3]);
    assert_eq!(meta.edge_runs(0), vec![(5, 1), (2, 1), (4, 1)]);
    let doc: Value = serde_json::from_slice(&store.get("t/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["chunk_grid"]["configuration"]["chunk_shapes"],
        json!([[5, 2, 4], 3])
    );
    for k in ["0/0", "1/0", "2/0"] {
        assert!(store.get(&format!("t/c/{k}")).unwrap().is_some(), "{k}");
    }
    assert_eq!(
        read(&a, &[0, 0], &[11, 3]),
        expected(&[0, 0], &[11, 3], pattern)
    );
    // Shrinking drops the edges wholly beyond the new extent and erases their chunks; the
    // cut chunk keeps its edge.
    a.resize(&[6, 3]).unwrap();
    assert_eq!(a.metadata().edge_runs(0), vec![(5, 1), (2, 1)]);
    assert!(store.get("t/c/2/0").unwrap().is_none());
    // Growing within the edges adds none; past them, one edge for the growth.
    a.resize(&[7, 3]).unwrap();
    assert_eq!(a.metadata().edge_runs(0), vec![(5, 1), (2, 1)]);
    a.resize(&[10, 3]).unwrap();
    assert_eq!(a.metadata().edge_runs(0), vec![(5, 1), (2, 1), (3, 1)]);
    let mut want = expected(&[0, 0], &[10, 3], pattern);
    want[21..].fill(-1);
    assert_eq!(read(&a, &[0, 0], &[10, 3]), want);
    let reopened = Array::open(store.clone(), "t", Mode::Read).unwrap();
    assert_eq!(
        reopened.metadata().edge_runs(0),
        vec![(5, 1), (2, 1), (3, 1)]
    );
}

#[test]
fn consolidated_metadata_and_copies_keep_the_grid() {
    let doc = document(&[6, 4], json!([[1, 5], [[2, 2]]]), &[]);
    let (store, a) = memory_with(&doc);
    write(&a, &[0, 0], &[6, 4], &expected(&[0, 0], &[6, 4], pattern));
    store
        .set(
            "zarr.json",
            br#"{"zarr_format": 3, "node_type": "group", "attributes": {}}"#,
        )
        .unwrap();
    consolidate(store.as_ref(), "").unwrap();
    let consolidated: Arc<dyn Store> =
        Arc::new(ConsolidatedStore::open(store.clone(), "").unwrap());
    let c = Array::open(consolidated, "a", Mode::Read).unwrap();
    assert_eq!(c.metadata().edge_runs(0), vec![(1, 1), (5, 1)]);
    assert_eq!(
        read(&c, &[0, 0], &[6, 4]),
        expected(&[0, 0], &[6, 4], pattern)
    );

    let target: Arc<dyn Store> = Arc::new(MemoryStore::new());
    copy(&store, "", &target, "", None, Mode::CreateNew).unwrap();
    let copied = Array::open(target.clone(), "a", Mode::Read).unwrap();
    assert_eq!(copied.metadata().grid, a.metadata().grid);
    assert!(target.get("a/c/1/1").unwrap().is_some());
    assert_eq!(
        read(&copied, &[0, 0], &[6, 4]),
        expected(&[0, 0], &[6, 4], pattern)
    );

    // A new compressor decodes and encodes each chunk at its own shape.
    let recoded: Arc<dyn Store> = Arc::new(MemoryStore::new());
    copy(
        &store,
        "a",
        &recoded,
        "a",
        Some(&json!({"id": "zstd"})),
        Mode::CreateNew,
    )
    .unwrap();
    let r = Array::open(recoded.clone(), "a", Mode::Read).unwrap();
    assert_eq!(r.metadata().grid, a.metadata().grid);
    let zstd_magic = [0x28, 0xb5, 0x2f, 0xfd];
    for key in ["a/c/0/0", "a/c/1/1"] {
        assert_eq!(recoded.get(key).unwrap().unwrap()[..4], zstd_magic, "{key}");
    }
    assert_eq!(
        read(&r, &[0, 0], &[6, 4]),
        expected(&[0, 0], &[6, 4], pattern)
    );
}

#[test]
fn a_copy_with_a_new_compressor_reencodes_uneven_shards() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(vec![12, 10], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![2, 5]).shard_shape(vec![4, 10]);
    builder.compressor(Value::Null);
    builder.fill_value_json(json!(-1));
    builder.chunk_edges(0, &[2, 6, 4]).unwrap();
    let a = builder.create(store.clone(), "s", Mode::CreateNew).unwrap();
    write(
        &a,
        &[0, 0],
        &[12, 10],
        &expected(&[0, 0], &[12, 10], pattern),
    );
    let target: Arc<dyn Store> = Arc::new(MemoryStore::new());
    copy(
        &store,
        "s",
        &target,
        "s",
        Some(&json!({"id": "zstd"})),
        Mode::CreateNew,
    )
    .unwrap();
    let c = Array::open(target.clone(), "s", Mode::Read).unwrap();
    assert_eq!(c.metadata().grid, a.metadata().grid);
    assert_eq!(
        read(&c, &[0, 0], &[12, 10]),
        expected(&[0, 0], &[12, 10], pattern)
    );
    assert_eq!(target.list_prefix("s/c/").unwrap().len(), 3);
}

#[test]
fn formats_without_the_grid_refuse_it_by_name() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for (format, name) in [(2, "Zarr v2"), (30, "The 2022 draft")] {
        let mut builder = ArrayBuilder::new(vec![5], ElementType::Int32);
        builder.zarr_format(format).unwrap();
        builder.chunk_edges(0, &[2, 3]).unwrap();
        let err = builder
            .create(store.clone(), &format!("f{format}"), Mode::CreateNew)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(name) && err.contains("rectilinear"),
            "{format}: {err}"
        );
    }
    let mut builder = ArrayBuilder::new(vec![5], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    let err = builder.chunk_edges(1, &[5]).unwrap_err().to_string();
    assert!(err.contains("dimension 1"), "{err}");
    let err = builder.chunk_edges(0, &[2, 0, 3]).unwrap_err().to_string();
    assert!(err.contains("≥ 1"), "{err}");
    builder.chunk_edges(0, &[2, 2]).unwrap();
    let err = builder
        .create(store.clone(), "short", Mode::CreateNew)
        .unwrap_err()
        .to_string();
    assert!(err.contains("sum to 4, less than the extent 5"), "{err}");
}

#[test]
fn hostile_grids_are_refused_with_what_is_wrong() {
    let cases: Vec<(Value, &str)> = vec![
        (
            json!([[3, 4], [5, 5, 6]]),
            "sum to 7, less than the extent 12",
        ),
        (json!([[3, 4, 0], 17]), "entry 2 (0)"),
        (json!([[3, -4, 6], 17]), "entry 1 (-4)"),
        (json!([[3, 4.5, 6], 17]), "entry 1 (4.5)"),
        (json!([0, 17]), "chunk_shapes[0] is 0"),
        (json!([-3, 17]), "chunk_shapes[0] is -3"),
        (json!([[[3, 0]], 17]), "[edge, count] pair"),
        (json!([[[3, 1, 1]], 17]), "[edge, count] pair"),
        (json!([[[3]], 17]), "[edge, count] pair"),
        (json!([["3"], 17]), "entry 0"),
        (json!([[], 17]), "lists no edges"),
        (json!(["12", 17]), "must be an integer or a list"),
        (json!([[[u64::MAX, 2]], 17]), "sum overflows 64 bits"),
        (
            json!([[[1u64 << 40, 1u64 << 30]], 17]),
            "sum overflows 64 bits",
        ),
        (json!([[u64::MAX, 1], 17]), "sum overflows 64 bits"),
        (json!([12]), "has 1 dimensions but shape has 2"),
        (json!([12, 17, 1]), "has 3 dimensions but shape has 2"),
        (json!([[1u64 << 40], 17]), "larger than"),
    ];
    for (shapes, want) in cases {
        let doc = document(&[12, 17], shapes.clone(), &[]);
        let store = MemoryStore::new();
        store.set("zarr.json", &doc).unwrap();
        let store: Arc<dyn Store> = Arc::new(store);
        let err = Array::open(store, "", Mode::Read).unwrap_err().to_string();
        assert!(err.contains(want), "{shapes}: {err}");
    }
    // Other kinds and malformed configurations.
    let configs = [
        (
            json!({"kind": "external", "chunk_shapes": [12, 17]}),
            "kind \"external\"",
        ),
        (json!({"chunk_shapes": [12, 17]}), "kind must be \"inline\""),
        (json!({"kind": "inline"}), "chunk_shapes must be a list"),
        (json!(null), "configuration object"),
    ];
    for (config, want) in configs {
        let mut doc: Value =
            serde_json::from_slice(&document(&[12, 17], json!([1, 1]), &[])).unwrap();
        doc["chunk_grid"]["configuration"] = config.clone();
        let store = MemoryStore::new();
        store
            .set("zarr.json", &serde_json::to_vec(&doc).unwrap())
            .unwrap();
        let err = Array::open(Arc::new(store), "", Mode::Read)
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{config}: {err}");
    }
    // Ten million equal chunks as one pair cost one run.
    let doc = document(&[70_000_000, 1], json!([[[7, 10_000_000]], 1]), &[]);
    let (_, a) = memory_with(&doc);
    assert_eq!(a.metadata().chunk_grid(), vec![10_000_000, 1]);
    assert_eq!(a.chunk_of(&[69_999_999, 0]).unwrap(), vec![9_999_999, 0]);
    write(&a, &[69_999_990, 0], &[10, 1], &(0..10).collect::<Vec<_>>());
    assert_eq!(
        read(&a, &[69_999_985, 0], &[15, 1]),
        [-1, -1, -1, -1, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    );
}

#[test]
fn variable_length_items_take_each_chunks_shape() {
    let doc = serde_json::to_vec(&json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [5, 4],
        "data_type": "string",
        "chunk_grid": {"name": "rectilinear", "configuration": {
            "kind": "inline", "chunk_shapes": [[2, 4], [[1, 1], 3]]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "-",
        "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                   {"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1}}],
        "attributes": {},
    }))
    .unwrap();
    let (store, a) = memory_with(&doc);
    let text = |i: u64, j: u64| "é".repeat((i * 4 + j) as usize % 3) + &format!("{i}{j}");
    let all: Vec<String> = (0..5)
        .flat_map(|i| (0..4).map(move |j| (i, j)))
        .map(|(i, j)| text(i, j))
        .collect();
    let items: Vec<&[u8]> = all.iter().map(|s| s.as_bytes()).collect();
    a.write_vlen(&[0, 0], &[5, 4], Order::C, &items).unwrap();
    // Chunk (1, 1) holds rows 2..6 (5 is beyond the shape) and columns 1..4.
    assert!(store.get("a/c/1/1").unwrap().is_some());
    assert_eq!(store.list_prefix("a/c/").unwrap().len(), 4);
    // A partial write merges into the chunks it meets.
    a.write_vlen(&[1, 0], &[2, 2], Order::F, &[b"p", b"q", b"r", b"s"])
        .unwrap();
    let mut want = all.clone();
    want[4] = "p".into();
    want[8] = "q".into();
    want[5] = "r".into();
    want[9] = "s".into();
    let again = Array::open(store.clone(), "a", Mode::Read).unwrap();
    for (start, count) in regions(&[5, 4], 2) {
        let got = again.read_vlen(&start, &count, Order::C).unwrap();
        let mut expect = Vec::new();
        for i in start[0]..start[0] + count[0] {
            for j in start[1]..start[1] + count[1] {
                expect.push(want[(i * 4 + j) as usize].as_bytes());
            }
        }
        assert_eq!(got.slices(), expect, "{start:?} {count:?}");
    }
    // Missing chunks read the fill value.
    store.erase("a/c/0/0").unwrap();
    let got = again.read_vlen(&[0, 0], &[2, 2], Order::C).unwrap();
    assert_eq!(
        got.slices(),
        vec![b"-" as &[u8], "é01".as_bytes(), b"-", b"r"]
    );
}

#[test]
fn shards_follow_the_grid_with_regular_inner_chunks() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(vec![12, 10], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![2, 3]).shard_shape(vec![4, 6]);
    builder.compressor(Value::Null);
    builder.fill_value_json(json!(-1));
    // Shards of 4, 2 and 6 rows (multiples of the inner 2); columns in shards of 6.
    builder.chunk_edges(0, &[4, 2, 6]).unwrap();
    let a = builder.create(store.clone(), "s", Mode::CreateNew).unwrap();
    let meta = a.metadata();
    assert_eq!(meta.chunk_grid(), vec![3, 2]);
    assert_eq!(meta.inner_chunks(), &[2, 3]);
    assert_eq!(a.chunk_region(&[1, 1]).unwrap(), (vec![4, 6], vec![2, 4]));
    let all = expected(&[0, 0], &[12, 10], pattern);
    write(&a, &[0, 0], &[12, 10], &all);
    // Shard (1, 0): one row of inner chunks, two columns of them: 2 chunks of 2x3 int32,
    // their 16-byte index entries and the index checksum.
    let shard = store.get("s/c/1/0").unwrap().unwrap();
    assert_eq!(shard.len(), 2 * 24 + 2 * 16 + 4);
    // Shard (2, 1): 3 x 2 inner chunks; those past the columns' extent (10) are not stored.
    let shard = store.get("s/c/2/1").unwrap().unwrap();
    assert_eq!(shard.len(), 3 * 2 * 24 + 6 * 16 + 4);
    assert_eq!(store.list_prefix("s/c/").unwrap().len(), 6);
    let check_all = |model: &dyn Fn(u64, u64) -> i32| {
        let again = Array::open(store.clone(), "s", Mode::Read).unwrap();
        for (start, count) in regions(&[12, 10], 3) {
            assert_eq!(
                read(&again, &start, &count),
                expected(&start, &count, model),
                "{start:?} {count:?}"
            );
        }
    };
    check_all(&pattern);
    // A write across shards, covering some inner chunks in part.
    write(&a, &[3, 5], &[4, 2], &[1, 2, 3, 4, 5, 6, 7, 8]);
    let merged = |i: u64, j: u64| match (i, j) {
        (3..=6, 5..=6) => ((i - 3) * 2 + (j - 5) + 1) as i32,
        _ => pattern(i, j),
    };
    check_all(&merged);
    // Appends add a shard edge, which must be a multiple of the inner chunks.
    a.append(
        0,
        &[2, 10],
        ElementType::Int32,
        Order::C,
        &ints(expected(&[12, 0], &[2, 10], pattern)),
    )
    .unwrap();
    assert_eq!(
        a.metadata().edge_runs(0),
        vec![(4, 1), (2, 1), (6, 1), (2, 1)]
    );
    assert_eq!(
        read(&a, &[11, 0], &[3, 10]),
        expected(&[11, 0], &[3, 10], pattern)
    );
    let err = a
        .append(
            0,
            &[3, 10],
            ElementType::Int32,
            Order::C,
            &ints(vec![0; 30]),
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("shard edge 3 of dimension 0 is not a multiple"),
        "{err}"
    );
    assert_eq!(a.metadata().shape, vec![14, 10]);

    // Variable-length items in shards of the grid.
    let mut builder = ArrayBuilder::new(vec![5, 2], ElementType::String);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![1, 2]).shard_shape(vec![2, 2]);
    builder.chunk_edges(0, &[2, 3]).unwrap();
    let v = builder.create(store.clone(), "v", Mode::CreateNew).unwrap();
    let texts: Vec<String> = (0..10).map(|k| "x".repeat(k)).collect();
    let items: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
    v.write_vlen(&[0, 0], &[5, 2], Order::C, &items).unwrap();
    v.write_vlen(&[2, 1], &[2, 1], Order::C, &[b"a", b"b"])
        .unwrap();
    let got = v.read_vlen(&[1, 0], &[4, 2], Order::C).unwrap();
    let want: Vec<&[u8]> = vec![
        items[2], items[3], items[4], b"a", items[6], b"b", items[8], items[9],
    ];
    assert_eq!(got.slices(), want);

    // On disk (pipelined shard writes), nested shards inside the grid's shards.
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    let mut builder = ArrayBuilder::new(vec![12, 10], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![1, 1])
        .shard_shape(vec![4, 10])
        .inner_shard_shape(vec![2, 5]);
    builder.chunk_edges(0, &[4, 2, 6]).unwrap();
    let d = builder.create(fs.clone(), "n", Mode::CreateNew).unwrap();
    write(&d, &[0, 0], &[12, 10], &all);
    write(&d, &[5, 3], &[2, 2], &[1, 2, 3, 4]);
    let on_disk = |i: u64, j: u64| match (i, j) {
        (5..=6, 3..=4) => ((i - 5) * 2 + (j - 3) + 1) as i32,
        _ => pattern(i, j),
    };
    for (start, count) in regions(&[12, 10], 4) {
        assert_eq!(read(&d, &start, &count), expected(&start, &count, on_disk));
    }

    // Edges that split inner chunks are refused.
    let mut builder = ArrayBuilder::new(vec![12], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![2]).shard_shape(vec![4]);
    builder.chunk_edges(0, &[4, 3, 5]).unwrap();
    let err = builder
        .create(store.clone(), "bad", Mode::CreateNew)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("shard edge 3 of dimension 0 is not a multiple"),
        "{err}"
    );
}
