//! Allocation benchmark for the chunk data path: a counting global allocator measures the
//! heap allocations that reads and writes make per chunk, in steady state (each operation
//! runs once to warm up, then a second run is measured and divided by its chunk count),
//! through the Rust API, on a memory store and a filesystem store, on one worker thread
//! and on the default pool. Cases: uncompressed, blosc lz4 + shuffle, delta + zstd,
//! big-endian `>f4`, sharded v3 with zstd, half-chunk writes, and variable-length strings.
//!
//! Only the Rust global allocator is seen: memory that c-blosc and zstd take with their
//! own `malloc` (compression contexts, blosc's block buffers) is not counted.
//!
//! Run: `cargo bench --bench bench_alloc`. Figures are printed, never asserted.

use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::io::pool;
use zarr::meta::Order;
use zarr::node::{ArrayBuilder, Mode};
use zarr::store::{FilesystemStore, MemoryStore, Store};

/// The array shape: 4×4×4 = 64 chunks.
const SHAPE: [u64; 3] = [256, 256, 64];
/// The chunk shape: 64×64×16 float32 items, 256 KiB.
const CHUNK: [u64; 3] = [64, 64, 16];
/// The number of chunks of the array.
const CHUNKS: usize = 64;
/// Items per chunk.
const CHUNK_ITEMS: usize = 64 * 64 * 16;
/// Bytes of a float32 chunk.
const CHUNK_BYTES: usize = CHUNK_ITEMS * 4;
/// Bytes of every variable-length string item.
const STRING_LEN: usize = 8;
/// The region of each half-chunk write: the first half of a chunk along dimension 0.
const HALF: [u64; 3] = [32, 64, 16];

/// Calls to alloc, alloc_zeroed and realloc.
static CALLS: AtomicUsize = AtomicUsize::new(0);
/// Bytes requested by those calls (a realloc counts its new size).
static BYTES: AtomicUsize = AtomicUsize::new(0);
/// Calls requesting at least [`CHUNK_SIZED`] bytes.
static BIG: AtomicUsize = AtomicUsize::new(0);
/// The size from which a request counts as chunk-sized (the current case's chunk size).
static CHUNK_SIZED: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The system allocator, counting every request.
struct Counting;

impl Counting {
    /// Records one request of `size` bytes.
    fn count(size: usize) {
        CALLS.fetch_add(1, Relaxed);
        BYTES.fetch_add(size, Relaxed);
        if size >= CHUNK_SIZED.load(Relaxed) {
            BIG.fetch_add(1, Relaxed);
        }
    }
}

// SAFETY: every call is passed to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::count(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::count(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::count(new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocation counts, totals or per chunk.
#[derive(Debug, Clone, Copy)]
struct Counts {
    /// Allocation calls.
    calls: f64,
    /// Bytes requested.
    bytes: f64,
    /// Chunk-sized allocation calls.
    big: f64,
}

/// The counters now.
fn snapshot() -> Counts {
    Counts {
        calls: CALLS.load(Relaxed) as f64,
        bytes: BYTES.load(Relaxed) as f64,
        big: BIG.load(Relaxed) as f64,
    }
}

/// Runs `op` once to warm up, then again counting, and returns the counts per chunk of
/// the `chunks` chunks one run touches; requests of `chunk_size` bytes or more count as
/// chunk-sized.
fn per_chunk(chunks: usize, chunk_size: usize, mut op: impl FnMut()) -> Counts {
    CHUNK_SIZED.store(chunk_size, Relaxed);
    op();
    let before = snapshot();
    op();
    let after = snapshot();
    let n = chunks as f64;
    Counts {
        calls: (after.calls - before.calls) / n,
        bytes: (after.bytes - before.bytes) / n,
        big: (after.big - before.big) / n,
    }
}

/// What a case writes and reads.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// The whole float32 array in one call each way.
    Whole,
    /// One write call per chunk covering half of it (read, merge, re-encode).
    HalfChunks,
    /// The whole array of variable-length strings in one call each way.
    Strings,
}

/// One array configuration measured.
struct Case {
    /// The case's name in the table.
    name: &'static str,
    /// What is written and read.
    kind: Kind,
    /// Sets the format, type and codecs on a builder of a float32 SHAPE array of CHUNK
    /// chunks with a NaN fill value.
    setup: fn(&mut ArrayBuilder),
}

/// blosc lz4, level 5, byte shuffle (zarr-python 2's default).
fn blosc() -> Value {
    json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})
}

/// zstd level 1.
fn zstd() -> Value {
    json!({"id": "zstd", "level": 1})
}

/// The cases, in table order.
fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "uncompressed v2",
            kind: Kind::Whole,
            setup: |b| {
                b.zarr_format(2).unwrap().compressor(Value::Null);
            },
        },
        Case {
            name: "blosc lz4 shuffle v2",
            kind: Kind::Whole,
            setup: |b| {
                b.zarr_format(2).unwrap().compressor(blosc());
            },
        },
        Case {
            name: "delta + zstd v2",
            kind: Kind::Whole,
            setup: |b| {
                b.zarr_format(2)
                    .unwrap()
                    .filters(json!([{"id": "delta", "dtype": "<f4"}]))
                    .compressor(zstd());
            },
        },
        Case {
            name: ">f4 uncompressed v2",
            kind: Kind::Whole,
            setup: |b| {
                b.zarr_format(2)
                    .unwrap()
                    .dtype_name(">f4")
                    .unwrap()
                    .compressor(Value::Null);
            },
        },
        Case {
            name: "sharded 4 chunks zstd v3",
            kind: Kind::Whole,
            setup: |b| {
                b.zarr_format(3)
                    .unwrap()
                    .shard_shape(vec![64, 64, 64])
                    .compressor(zstd());
            },
        },
        Case {
            name: "half chunks, blosc v2",
            kind: Kind::HalfChunks,
            setup: |b| {
                b.zarr_format(2).unwrap().compressor(blosc());
            },
        },
        Case {
            name: "string zstd v3",
            kind: Kind::Strings,
            setup: |b| {
                b.zarr_format(3)
                    .unwrap()
                    .dtype_name("string")
                    .unwrap()
                    .fill_value_json(json!(""))
                    .compressor(zstd());
            },
        },
    ]
}

/// A smooth field with noise in the low mantissa bits, in native byte order: compresses
/// like simulation output.
fn make_data() -> Vec<u8> {
    let n = SHAPE.iter().product::<u64>() as usize;
    let mut data = Vec::with_capacity(n * 4);
    let mut state = 12345u32;
    for i in 0..n {
        let z = (i % 64) as f32;
        let y = ((i / 64) % 256) as f32;
        let x = (i / (64 * 256)) as f32;
        state = state.wrapping_mul(1664525).wrapping_add(1013904223);
        let value = (x * 0.03).sin() * (y * 0.04).cos() + z * 0.001 + (state >> 24) as f32 * 1e-6;
        data.extend_from_slice(&value.to_ne_bytes());
    }
    data
}

/// One string of STRING_LEN bytes per element, back to back.
fn make_strings() -> Vec<u8> {
    let n = SHAPE.iter().product::<u64>() as usize;
    let mut text = Vec::with_capacity(n * STRING_LEN);
    for i in 0..n {
        text.extend_from_slice(
            format!("{:08x}", (i as u32).wrapping_mul(2654435761) >> 8).as_bytes(),
        );
    }
    text
}

/// The chunk origins of the array, in C order of the chunk grid.
fn chunk_origins() -> Vec<[u64; 3]> {
    let grid: Vec<u64> = SHAPE.iter().zip(CHUNK).map(|(s, c)| s / c).collect();
    let mut origins = Vec::with_capacity(CHUNKS);
    for i in 0..grid[0] {
        for j in 0..grid[1] {
            for k in 0..grid[2] {
                origins.push([i * CHUNK[0], j * CHUNK[1], k * CHUNK[2]]);
            }
        }
    }
    origins
}

/// One line of the table.
struct Row {
    /// The store's name.
    store: &'static str,
    /// The pool's worker count.
    threads: usize,
    /// The case's name.
    case: &'static str,
    /// "write" or "read".
    direction: &'static str,
    /// Counts per chunk.
    counts: Counts,
    /// The chunk size from which an allocation counts as chunk-sized.
    chunk_size: usize,
}

/// Creates the array of `case` at `path` and measures its writes and reads.
fn measure(
    store: Arc<dyn Store>,
    path: &str,
    case: &Case,
    data: &[u8],
    strings: &[&[u8]],
) -> Vec<(&'static str, Counts, usize)> {
    let mut builder = ArrayBuilder::new(SHAPE.to_vec(), ElementType::Float32);
    builder.chunks(CHUNK.to_vec()).fill_value_json(json!("NaN"));
    (case.setup)(&mut builder);
    let array = builder.create(store, path, Mode::Overwrite).unwrap();
    let zero = [0u64; 3];
    match case.kind {
        Kind::Whole => {
            let write = per_chunk(CHUNKS, CHUNK_BYTES, || {
                array
                    .write(&zero, &SHAPE, ElementType::Float32, Order::C, data)
                    .unwrap()
            });
            let mut back = vec![0u8; data.len()];
            let read = per_chunk(CHUNKS, CHUNK_BYTES, || {
                array
                    .read(&zero, &SHAPE, ElementType::Float32, Order::C, &mut back)
                    .unwrap()
            });
            vec![("write", write, CHUNK_BYTES), ("read", read, CHUNK_BYTES)]
        }
        Kind::HalfChunks => {
            // Whole chunks first, so each half-chunk write merges into a stored chunk.
            array
                .write(&zero, &SHAPE, ElementType::Float32, Order::C, data)
                .unwrap();
            let half = &data[..HALF.iter().product::<u64>() as usize * 4];
            let origins = chunk_origins();
            let write = per_chunk(CHUNKS, CHUNK_BYTES, || {
                for origin in &origins {
                    array
                        .write(origin, &HALF, ElementType::Float32, Order::C, half)
                        .unwrap();
                }
            });
            vec![("write", write, CHUNK_BYTES)]
        }
        Kind::Strings => {
            let chunk_size = CHUNK_ITEMS * STRING_LEN;
            let write = per_chunk(CHUNKS, chunk_size, || {
                array.write_vlen(&zero, &SHAPE, Order::C, strings).unwrap()
            });
            let read = per_chunk(CHUNKS, chunk_size, || {
                array.read_vlen(&zero, &SHAPE, Order::C).unwrap();
            });
            vec![("write", write, chunk_size), ("read", read, chunk_size)]
        }
    }
}

fn main() {
    println!(
        "target after the pipeline rework: ≤ 3 allocations per chunk for fixed-size types, \
         no chunk-sized allocation per codec stage\n"
    );
    println!(
        "libzarr allocation benchmark: float32 {SHAPE:?} in {CHUNKS} chunks of {CHUNK:?} \
         ({} KiB); strings of {STRING_LEN} bytes in the same chunks",
        CHUNK_BYTES >> 10
    );
    println!(
        "per chunk, steady state (second of two runs); Rust heap only (c-blosc and zstd \
         allocate with their own malloc, not counted)"
    );
    println!(
        "chunk-sized: at least the chunk size (strings: the bytes of a chunk's items); \
         threads: 1 (deterministic), then the default pool ({} here)\n",
        pool::default_num_threads()
    );
    let data = make_data();
    let text = make_strings();
    let strings: Vec<&[u8]> = text.chunks_exact(STRING_LEN).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    // 1 thread for deterministic figures, then the default pool (0).
    for threads in [1usize, 0] {
        pool::set_num_threads(threads).unwrap();
        let stores: [(&'static str, Arc<dyn Store>); 2] = [
            ("memory", Arc::new(MemoryStore::new())),
            (
                "filesystem",
                Arc::new(
                    FilesystemStore::open(dir.path().join(threads.to_string()), true, true)
                        .unwrap(),
                ),
            ),
        ];
        for (store_name, store) in stores {
            for (i, case) in cases().iter().enumerate() {
                for (direction, counts, chunk_size) in
                    measure(store.clone(), &format!("case{i}"), case, &data, &strings)
                {
                    rows.push(Row {
                        store: store_name,
                        threads: pool::num_threads(),
                        case: case.name,
                        direction,
                        counts,
                        chunk_size,
                    });
                }
            }
        }
    }
    println!(
        "{:10} {:>7}  {:24} {:5} {:>12} {:>10} {:>12} {:>9}",
        "store", "threads", "case", "dir", "allocs/chunk", "KiB/chunk", "chunk-sized", "chunk KiB"
    );
    for r in &rows {
        println!(
            "{:10} {:>7}  {:24} {:5} {:>12.2} {:>10.1} {:>12.2} {:>9}",
            r.store,
            r.threads,
            r.case,
            r.direction,
            r.counts.calls,
            r.counts.bytes / 1024.0,
            r.counts.big,
            r.chunk_size >> 10
        );
    }
}
