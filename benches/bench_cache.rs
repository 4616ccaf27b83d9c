//! Repeated small reads: 10,000 reads of random 16³ regions inside a working set of 64
//! chunks (a 256³ float32 array of 64³ chunks, blosc lz4 + shuffle, on disk), as a viewer
//! or an analysis loop reads. libzarr without a cache, then with a 256 MiB decoded-chunk
//! cache (`Array::set_cache_bytes`), beside tensorstore with a 256 MiB `cache_pool` reading
//! the same positions from the same array (when `ZARR_BENCH_PYTHON` names a Python with
//! tensorstore; the test environment's zp3 by default), and the floor measured in the same
//! run: copying the same regions out of a decoded array in memory.
//!
//! Run: `cargo bench --bench bench_cache [-- DIR] [--reads N]`. Figures are printed, never
//! asserted. The last line is a `ROW` line for scripts/bench.sh.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{FilesystemStore, Store};

const SIDE: u64 = 256;
const CHUNK: u64 = 64;
const REGION: u64 = 16;
const CACHE_BYTES: usize = 256 << 20;

/// A smooth field with noise in the low mantissa bits.
fn field() -> Vec<u8> {
    let mut state = 7u32;
    (0..SIDE * SIDE * SIDE)
        .flat_map(|i| {
            let (x, y, z) = (i % SIDE, (i / SIDE) % SIDE, i / (SIDE * SIDE));
            state = state.wrapping_mul(1664525).wrapping_add(1013904223);
            let v = (x as f32 * 0.03).sin() * (y as f32 * 0.02).cos()
                + z as f32 * 0.001
                + (state >> 24) as f32 * 1e-6;
            v.to_ne_bytes()
        })
        .collect()
}

/// `n` random region starts (a fixed seed: every reader reads the same ones).
fn positions(n: usize) -> Vec<[u64; 3]> {
    let mut state = 99u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % (SIDE - REGION + 1)
    };
    (0..n).map(|_| [next(), next(), next()]).collect()
}

/// Microseconds per read of the regions at `starts` through `array`; checks the values
/// against `data`.
fn run(array: &Array, starts: &[[u64; 3]], data: &[u8]) -> f64 {
    let mut out = vec![0u8; (REGION * REGION * REGION * 4) as usize];
    let t = Instant::now();
    for s in starts {
        array
            .read(s, &[REGION; 3], ElementType::Float32, Order::C, &mut out)
            .unwrap();
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / starts.len() as f64;
    let last = starts.last().unwrap();
    let mut expected = Vec::new();
    copy_region(data, last, &mut expected);
    assert!(out == expected, "the last region read differs");
    us
}

/// The region at `start` of the decoded array `data`, row by row.
fn copy_region(data: &[u8], start: &[u64; 3], out: &mut Vec<u8>) {
    out.clear();
    for z in start[0]..start[0] + REGION {
        for y in start[1]..start[1] + REGION {
            let at = ((z * SIDE + y) * SIDE + start[2]) as usize * 4;
            out.extend_from_slice(&data[at..at + REGION as usize * 4]);
        }
    }
}

/// tensorstore reading the same regions with a cache pool: microseconds per read.
fn tensorstore(python: &str, path: &Path, starts: &[[u64; 3]], scratch: &Path) -> Option<f64> {
    let list = scratch.join("positions.txt");
    let text: String = starts
        .iter()
        .map(|s| format!("{} {} {}\n", s[0], s[1], s[2]))
        .collect();
    std::fs::write(&list, text).ok()?;
    let script = format!(
        r#"
import time, numpy as np, tensorstore as ts
starts = np.loadtxt({list:?}, dtype=np.int64).reshape(-1, 3)
t = ts.open({{"driver": "zarr3", "kvstore": {{"driver": "file", "path": {path:?}}},
             "context": {{"cache_pool": {{"total_bytes_limit": {CACHE_BYTES}}}}},
             "recheck_cached_data": False}}).result()
r = {REGION}
t0 = time.perf_counter()
for z, y, x in starts:
    t[z:z + r, y:y + r, x:x + r].read().result()
print((time.perf_counter() - t0) * 1e6 / len(starts))
"#,
        list = list.display().to_string(),
        path = path.display().to_string(),
    );
    let out = Command::new(python).arg("-c").arg(script).output().ok()?;
    if !out.status.success() {
        eprintln!(
            "tensorstore run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let reads = args
        .iter()
        .position(|a| a == "--reads")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000usize);
    let base = args
        .iter()
        .find(|a| !a.starts_with("--") && a.parse::<usize>().is_err())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-cache"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let data = field();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(&base, true, true).unwrap());
    let mut builder = ArrayBuilder::new(vec![SIDE; 3], ElementType::Float32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![CHUNK; 3]).compressor(serde_json::json!(
        {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}
    ));
    let array = builder.create(store.clone(), "a", Mode::Overwrite).unwrap();
    array
        .write(&[0; 3], &[SIDE; 3], ElementType::Float32, Order::C, &data)
        .unwrap();
    drop(array);
    let starts = positions(reads);

    // The floor: the same regions copied out of the decoded array in memory.
    let mut region = Vec::new();
    let t = Instant::now();
    for s in &starts {
        copy_region(&data, s, &mut region);
        std::hint::black_box(&region);
    }
    let floor = t.elapsed().as_secs_f64() * 1e6 / reads as f64;

    let plain = Array::open(store.clone(), "a", Mode::Read).unwrap();
    let uncached = run(&plain, &starts, &data);
    let cached_array = Array::open(store.clone(), "a", Mode::Read).unwrap();
    cached_array.set_cache_bytes(CACHE_BYTES);
    let cached = run(&cached_array, &starts, &data);

    let python = std::env::var("ZARR_BENCH_PYTHON").unwrap_or_else(|_| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(".test-env/zp3/bin/python")
            .display()
            .to_string()
    });
    let peer = tensorstore(&python, &base.join("a"), &starts, &base);

    println!(
        "bench_cache: {reads} reads of 16^3 float32 regions, 64 chunks of 64^3 (blosc lz4), \
         cache {} MiB",
        CACHE_BYTES >> 20
    );
    println!("{:<34} {:>12}", "case", "us per read");
    println!("{:<34} {uncached:>12.1}", "libzarr, no cache");
    println!("{:<34} {cached:>12.1}", "libzarr, decoded-chunk cache");
    match peer {
        Some(p) => println!("{:<34} {p:>12.1}", "tensorstore, cache_pool"),
        None => println!("{:<34} {:>12}", "tensorstore, cache_pool", "n/a"),
    }
    println!("{:<34} {floor:>12.1}", "floor: copy from memory");
    println!(
        "cache speed-up: {:.1}x; against tensorstore: {}",
        uncached / cached,
        peer.map_or("n/a".into(), |p| format!("{:.2}x", p / cached))
    );
    println!(
        "ROW|repeated 16^3 reads (us/read)|{cached:.1}|{}|{floor:.1}|{}",
        peer.map_or("n/a".into(), |p| format!("tensorstore {p:.1}")),
        peer.map_or("n/a".into(), |p| format!("{:.2}", p / cached))
    );
    let _ = std::fs::remove_dir_all(&base);
}
