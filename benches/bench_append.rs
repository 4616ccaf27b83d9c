//! Time-step appends into a sharded array, the simulation output pattern: a float32 array
//! of shape (T, 1024, 1024) grows by one (1, 1024, 1024) step per append; shards of
//! (32, 256, 256), inner chunks of (1, 64, 64), blosc lz4 with shuffle; a filesystem store
//! behind a wrapper that counts the bytes stored. Prints steps/s, MB/s (of float32 data
//! appended) and bytes written against the final stored size, for streaming appends (one
//! handle, one flush at the end) and for the path without buffering (each append
//! rewrites the shards it touches), next to compressing the same inner chunks with blosc
//! alone on the same pool in the same run, and to a plain program doing the whole job
//! (blosc on the pool, shards gathered and written as files by one writer thread): on a
//! machine where the kernel's copy into the page cache costs about what compressing does,
//! the second is what storing leaves of the first.
//!
//! Run: `cargo bench --bench bench_append [-- --quick] [-- DIR]`: T = 512 (`--quick`: 64);
//! the unbuffered path runs the first 64 steps only (its write amplification no longer
//! grows after one shard depth; `--streaming-only` skips it, for profiling). DIR defaults
//! to a new directory under target/. Figures
//! are printed, never asserted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{DirListing, FilesystemStore, Store};
use zarr::Result;

const SIDE: u64 = 1024;
const STEP_ELEMENTS: usize = (SIDE * SIDE) as usize;
const STEP_BYTES: usize = STEP_ELEMENTS * 4;
const INNER: u64 = 64;
const BLOSC: &str = r#"{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}"#;

/// A filesystem store that counts the bytes stored through it.
#[derive(Debug)]
struct Counting {
    inner: FilesystemStore,
    written: AtomicU64,
}

impl Store for Counting {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.inner.get(key)
    }
    fn get_into(&self, key: &str, buf: &mut Vec<u8>, max_len: u64) -> Result<bool> {
        self.inner.get_into(key, buf, max_len)
    }
    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        self.inner.get_range(key, offset, len)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.written
            .fetch_add(value.len() as u64, Ordering::Relaxed);
        self.inner.set(key, value)
    }
    fn put_many(&self, batch: Vec<(String, Option<Vec<u8>>)>) -> Result<()> {
        let bytes: usize = batch
            .iter()
            .filter_map(|(_, v)| v.as_ref())
            .map(Vec::len)
            .sum();
        self.written.fetch_add(bytes as u64, Ordering::Relaxed);
        self.inner.put_many(batch)
    }
    fn writes_behind(&self) -> bool {
        self.inner.writes_behind()
    }
    fn erase(&self, key: &str) -> Result<bool> {
        self.inner.erase(key)
    }
    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        self.inner.erase_prefix(prefix)
    }
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        self.inner.list_dir(prefix)
    }
    fn size(&self, key: &str) -> Result<Option<u64>> {
        self.inner.size(key)
    }
    fn writable(&self) -> bool {
        true
    }
    fn flush(&self) -> Result<()> {
        self.inner.flush()
    }
}

/// Step `t`: a smooth field drifting with time, with noise in the low mantissa bits.
fn make_step(t: u64, out: &mut [u8]) {
    let mut state = 12345u32 ^ (t as u32).wrapping_mul(2654435761);
    for (i, v) in out.chunks_exact_mut(4).enumerate() {
        let x = (i as u64 % SIDE) as f32;
        let y = (i as u64 / SIDE) as f32;
        state = state.wrapping_mul(1664525).wrapping_add(1013904223);
        let noise = (state >> 16) as f32 / 65536.0 * 1e-3;
        let value = (x * 0.01 + t as f32 * 0.02).sin() * (y * 0.013).cos() + noise;
        v.copy_from_slice(&value.to_ne_bytes());
    }
}

/// Compresses inner chunk `c` (row-major over the step's 16 x 16 grid) of `step` with blosc
/// (lz4, level 5, byte shuffle) into `out` through the chunk buffer `chunk`; returns the
/// compressed size.
fn compress_inner_chunk(step: &[u8], c: usize, chunk: &mut [u8], out: &mut [u8]) -> usize {
    let per_row = (SIDE / INNER) as usize;
    let row_bytes = INNER as usize * 4;
    let (cy, cx) = (c / per_row, c % per_row);
    for row in 0..INNER as usize {
        let at = ((cy * INNER as usize + row) * SIDE as usize + cx * INNER as usize) * 4;
        chunk[row * row_bytes..(row + 1) * row_bytes].copy_from_slice(&step[at..at + row_bytes]);
    }
    // SAFETY: valid buffers of the sizes given; the name is a NUL-terminated literal.
    let n = unsafe {
        blosc_src::blosc_compress_ctx(
            5,
            1,
            4,
            chunk.len(),
            chunk.as_ptr() as *const _,
            out.as_mut_ptr() as *mut _,
            out.len(),
            c"lz4".as_ptr(),
            0,
            1,
        )
    };
    n.max(0) as usize
}

/// Compresses the inner chunks of `step` with blosc alone on the library's pool; returns
/// the compressed bytes.
fn blosc_alone(step: &[u8]) -> u64 {
    use rayon::prelude::*;
    let chunks = ((SIDE / INNER) * (SIDE / INNER)) as usize;
    let chunk_bytes = (INNER * INNER * 4) as usize;
    zarr::io::pool::pool().unwrap().install(|| {
        (0..chunks)
            .into_par_iter()
            .map_init(
                || (vec![0u8; chunk_bytes], vec![0u8; chunk_bytes + 16]),
                |(chunk, out), c| compress_inner_chunk(step, c, chunk, out) as u64,
            )
            .sum()
    })
}

/// The same work done plainly: each step's inner chunks compressed with blosc on the pool
/// and appended to their shard's buffer; every 32 steps the 16 finished shards go to one
/// writer thread that writes each as a file (as the library's storing thread does). Steps are
/// made between the timed parts, as in the runs. Returns the timed seconds.
fn blosc_and_write(dir: &Path, steps: u64) -> f64 {
    use rayon::prelude::*;
    std::fs::create_dir_all(dir).unwrap();
    let per_row = (SIDE / INNER) as usize;
    let per_shard_row = 256 / INNER as usize;
    let chunk_bytes = (INNER * INNER * 4) as usize;
    let (send, receive) = std::sync::mpsc::channel::<(u64, Vec<Vec<u8>>)>();
    let target = dir.to_path_buf();
    let writer = std::thread::spawn(move || {
        for (row, shards) in receive {
            for (s, bytes) in shards.iter().enumerate() {
                std::fs::write(target.join(format!("{row}.{s}")), bytes).unwrap();
            }
        }
    });
    let mut shards: Vec<Vec<u8>> = vec![Vec::new(); 16];
    let mut step = vec![0u8; STEP_BYTES];
    let mut seconds = 0.0;
    for t in 0..steps {
        make_step(t, &mut step);
        let started = Instant::now();
        let encoded: Vec<Vec<u8>> = zarr::io::pool::pool().unwrap().install(|| {
            (0..per_row * per_row)
                .into_par_iter()
                .map_init(
                    || vec![0u8; chunk_bytes],
                    |chunk, c| {
                        let mut out = vec![0u8; chunk_bytes + 16];
                        let n = compress_inner_chunk(&step, c, chunk, &mut out);
                        out.truncate(n);
                        out
                    },
                )
                .collect()
        });
        for (c, bytes) in encoded.iter().enumerate() {
            let (cy, cx) = (c / per_row, c % per_row);
            shards[(cy / per_shard_row) * 4 + cx / per_shard_row].extend_from_slice(bytes);
        }
        if t % 32 == 31 || t + 1 == steps {
            let full = std::mem::replace(&mut shards, vec![Vec::new(); 16]);
            send.send((t / 32, full)).unwrap();
        }
        seconds += started.elapsed().as_secs_f64();
    }
    let started = Instant::now();
    drop(send);
    writer.join().unwrap();
    seconds += started.elapsed().as_secs_f64();
    std::fs::remove_dir_all(dir).unwrap();
    seconds
}

struct Run {
    seconds: f64,
    written: u64,
    stored: u64,
}

fn create(dir: &Path) -> (Arc<Counting>, Array) {
    let _ = std::fs::remove_dir_all(dir);
    let counting = Arc::new(Counting {
        inner: FilesystemStore::open(dir, true, true).unwrap(),
        written: AtomicU64::new(0),
    });
    let store: Arc<dyn Store> = counting.clone();
    let mut builder = ArrayBuilder::new(vec![0, SIDE, SIDE], ElementType::Float32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![1, INNER, INNER])
        .shard_shape(vec![32, 256, 256])
        .fill_value_json(serde_json::json!(0.0))
        .compressor(serde_json::from_str(BLOSC).unwrap());
    let array = builder.create(store, "a", Mode::Overwrite).unwrap();
    (counting, array)
}

fn stored_size(dir: &Path) -> u64 {
    fn walk(p: &Path) -> u64 {
        std::fs::read_dir(p)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let m = e.metadata().unwrap();
                if m.is_dir() {
                    walk(&e.path())
                } else {
                    m.len()
                }
            })
            .sum()
    }
    walk(&dir.join("a"))
}

/// Appends `steps` steps through one handle, buffered or not, and flushes at the end.
fn run(dir: &Path, steps: u64, buffered: bool) -> Run {
    let (counting, array) = create(dir);
    array.set_append_buffering(buffered).unwrap();
    counting.written.store(0, Ordering::SeqCst);
    let mut step = vec![0u8; STEP_BYTES];
    let mut seconds = 0.0;
    for t in 0..steps {
        make_step(t, &mut step);
        let started = Instant::now();
        array
            .append(0, &[1, SIDE, SIDE], ElementType::Float32, Order::C, &step)
            .unwrap();
        seconds += started.elapsed().as_secs_f64();
    }
    let started = Instant::now();
    array.flush().unwrap();
    seconds += started.elapsed().as_secs_f64();
    drop(array);
    Run {
        seconds,
        written: counting.written.load(Ordering::SeqCst),
        stored: stored_size(dir),
    }
}

fn report(name: &str, steps: u64, run: &Run) {
    println!(
        "  {name:<34} {steps:>4} steps: {:7.1} steps/s, {:7.1} MB/s, written {:8.1} MB, \
         stored {:7.1} MB, written/stored {:5.2}",
        steps as f64 / run.seconds,
        steps as f64 * STEP_BYTES as f64 / run.seconds / 1e6,
        run.written as f64 / 1e6,
        run.stored as f64 / 1e6,
        run.written as f64 / run.stored as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let quick = args.iter().any(|a| a == "--quick");
    let dir: PathBuf = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench_append"));
    std::fs::create_dir_all(&dir).unwrap();
    let steps = if quick { 64 } else { 512 };
    let old_steps = 64.min(steps);
    println!(
        "appending (1, {SIDE}, {SIDE}) float32 steps; shards (32, 256, 256), inner chunks \
         (1, {INNER}, {INNER}), blosc lz4 shuffle; {} pool threads",
        zarr::io::pool::num_threads()
    );

    // Blosc alone on the same steps.
    let mut step = vec![0u8; STEP_BYTES];
    let (mut seconds, mut compressed) = (0.0, 0u64);
    for t in 0..steps {
        make_step(t, &mut step);
        let started = Instant::now();
        compressed += blosc_alone(&step);
        seconds += started.elapsed().as_secs_f64();
    }
    let alone = steps as f64 / seconds;
    println!(
        "  {:<34} {steps:>4} steps: {alone:7.1} steps/s, {:7.1} MB/s, compressed {:7.1} MB",
        "blosc alone (no store)",
        alone * STEP_BYTES as f64 / 1e6,
        compressed as f64 / 1e6
    );
    // The same compression with its output written as shard files by plain code: what
    // storing costs on this machine (the kernel's copy into the page cache) included.
    let with_writes = steps as f64 / blosc_and_write(&dir.join("limit"), steps);
    println!(
        "  {:<34} {steps:>4} steps: {with_writes:7.1} steps/s, {:7.1} MB/s",
        "reference: blosc + plain writes",
        with_writes * STEP_BYTES as f64 / 1e6,
    );
    let new = run(&dir.join("buffered"), steps, true);
    report("streaming appends", steps, &new);
    println!(
        "  streaming: {:.2} x the throughput of blosc alone, {:.2} x blosc + plain writes",
        steps as f64 / new.seconds / alone,
        steps as f64 / new.seconds / with_writes,
    );
    if args.iter().any(|a| a == "--streaming-only") {
        return;
    }
    let old = run(&dir.join("unbuffered"), old_steps, false);
    report("unbuffered (rewrite per step)", old_steps, &old);
    println!(
        "  streaming: {:.2} x the bytes stored written; unbuffered: {:.2} x blosc alone, {:.2} \
         x written",
        new.written as f64 / new.stored as f64,
        old_steps as f64 / old.seconds / alone,
        old.written as f64 / old.stored as f64
    );
    // For scripts/bench.sh: steps/s against blosc alone, and bytes written per byte stored.
    println!(
        "ROW|time-step appends into shards (steps/s)|{:.1}|unbuffered {:.1}|{alone:.1}|{:.2} of limit|written/stored {:.2}; {:.2} x blosc + plain writes ({with_writes:.1})",
        steps as f64 / new.seconds,
        old_steps as f64 / old.seconds,
        steps as f64 / new.seconds / alone,
        new.written as f64 / new.stored as f64,
        steps as f64 / new.seconds / with_writes
    );
    let _ = std::fs::remove_dir_all(dir.join("buffered"));
    let _ = std::fs::remove_dir_all(dir.join("unbuffered"));
}
