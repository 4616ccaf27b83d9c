//! libzarr beside tensorstore on the workloads users wait on, on one 1 GiB float32 array
//! (1024 x 1024 x 256 in 64^3 chunks, on disk), each workload in a process of its own (so
//! its peak memory is its own), next to the limits measured in the same run:
//!
//! - blosc (lz4, shuffle) and zstd (level 1) full writes and full reads, beside raw
//!   compression and decompression of the same chunks on as many threads (and for reads,
//!   copying the array into fresh memory, whichever is slower);
//! - the unaligned read-modify-write of a 960 x 960 x 196 region at (32, 32, 32);
//! - cold reads (the page cache dropped first, which needs root): the full array, and 1000
//!   random 16^3 regions, beside plain cold reads of the same chunk files;
//! - durable writes (every file synced before the write returns), beside plain files
//!   written and synced.
//!
//! tensorstore runs from `ZARR_BENCH_PYTHON` (default: the test environment's zp3), reading
//! the arrays libzarr wrote and writing its own. Run: `cargo bench --bench bench_peers
//! [-- DIR]`. Figures are printed, never asserted; `ROW` lines feed scripts/bench.sh.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{Durability, FilesystemStore, Store};

const SHAPE: [u64; 3] = [1024, 1024, 256];
const CHUNK: u64 = 64;
const TOTAL: usize = 1024 * 1024 * 256 * 4;
const CHUNK_BYTES: usize = 64 * 64 * 64 * 4;
const RMW_START: [u64; 3] = [32, 32, 32];
const RMW_COUNT: [u64; 3] = [960, 960, 196];
const RANDOM_READS: usize = 1000;

fn codec(name: &str) -> serde_json::Value {
    match name {
        "blosc" => serde_json::json!(
            {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
        _ => serde_json::json!({"id": "zstd", "level": 1}),
    }
}

fn load(path: &Path) -> Vec<u8> {
    let mut data = Vec::with_capacity(TOTAL);
    std::fs::File::open(path)
        .unwrap()
        .read_to_end(&mut data)
        .unwrap();
    data
}

/// Drops the page cache (root only); false when it cannot.
fn drop_caches() -> bool {
    let _ = Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
}

/// `n` random 16^3 region starts, the same for every reader.
fn random_starts(n: usize) -> Vec<[u64; 3]> {
    let mut state = 4242u64;
    let mut next = |limit: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % (limit - 15)
    };
    (0..n)
        .map(|_| [next(SHAPE[0]), next(SHAPE[1]), next(SHAPE[2])])
        .collect()
}

fn store(dir: &Path, durability: Durability) -> Arc<dyn Store> {
    let store = FilesystemStore::open(dir, true, true).unwrap();
    store.set_durability(durability).unwrap();
    Arc::new(store)
}

/// One libzarr workload in this process: its seconds and peak memory, as JSON.
fn child(op: &str, dir: &Path, data_path: &Path, codec_name: &str, extra: &str) {
    let data = load(data_path);
    let started;
    match op {
        "write" | "durable-write" => {
            let level = if op == "write" {
                Durability::None
            } else {
                Durability::Flush
            };
            let s = store(dir, level);
            let mut builder = ArrayBuilder::new(SHAPE.to_vec(), ElementType::Float32);
            builder.zarr_format(3).unwrap();
            builder.chunks(vec![CHUNK; 3]).compressor(codec(codec_name));
            started = Instant::now();
            let array = builder.create(s.clone(), "", Mode::Overwrite).unwrap();
            array
                .write(&[0; 3], &SHAPE, ElementType::Float32, Order::C, &data)
                .unwrap();
            s.flush().unwrap();
        }
        "read" => {
            let array = Array::open(store(dir, Durability::None), "", Mode::Read).unwrap();
            let mut out = vec![0u8; TOTAL];
            started = Instant::now();
            array
                .read(&[0; 3], &SHAPE, ElementType::Float32, Order::C, &mut out)
                .unwrap();
            let seconds = started.elapsed().as_secs_f64();
            assert!(out == data, "libzarr read other data");
            return report(seconds);
        }
        "rmw" => {
            let array = Array::open(store(dir, Durability::None), "", Mode::ReadWrite).unwrap();
            let values = region_values(&data);
            started = Instant::now();
            array
                .write(
                    &RMW_START,
                    &RMW_COUNT,
                    ElementType::Float32,
                    Order::C,
                    &values,
                )
                .unwrap();
        }
        "random" => {
            let array = Array::open(store(dir, Durability::None), "", Mode::Read).unwrap();
            let starts = random_starts(RANDOM_READS);
            let mut out = vec![0u8; 16 * 16 * 16 * 4];
            started = Instant::now();
            for s in &starts {
                array
                    .read(s, &[16; 3], ElementType::Float32, Order::C, &mut out)
                    .unwrap();
            }
        }
        _ => panic!("unknown workload {op} {extra}"),
    }
    report(started.elapsed().as_secs_f64());
}

fn report(seconds: f64) {
    println!(
        "{{\"seconds\": {seconds}, \"peak_mib\": {}}}",
        common::peak_kib() as f64 / 1024.0
    );
}

/// The values the read-modify-write workload writes: the region's data doubled.
fn region_values(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity((RMW_COUNT.iter().product::<u64>() * 4) as usize);
    for z in RMW_START[0]..RMW_START[0] + RMW_COUNT[0] {
        for y in RMW_START[1]..RMW_START[1] + RMW_COUNT[1] {
            let at = ((z * SHAPE[1] + y) * SHAPE[2] + RMW_START[2]) as usize * 4;
            for v in data[at..at + RMW_COUNT[2] as usize * 4].chunks_exact(4) {
                let f = f32::from_ne_bytes(v.try_into().unwrap()) * 2.0;
                out.extend_from_slice(&f.to_ne_bytes());
            }
        }
    }
    out
}

/// Runs a workload in a child process: (seconds, peak MiB), or `None` when it failed.
fn run(mut command: Command, cold: bool) -> Option<(f64, f64)> {
    if cold && !drop_caches() {
        return None;
    }
    let out = command.output().ok()?;
    if !out.status.success() {
        eprintln!("workload failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let v: serde_json::Value =
        serde_json::from_slice(out.stdout.split(|&b| b == b'\n').rfind(|l| !l.is_empty())?).ok()?;
    Some((v["seconds"].as_f64()?, v["peak_mib"].as_f64()?))
}

/// The best of `runs` runs (the peak of the best).
fn best_of(runs: usize, cold: bool, make: impl Fn() -> Command) -> Option<(f64, f64)> {
    (0..runs)
        .filter_map(|_| run(make(), cold))
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The chunks of the array, each contiguous.
fn chunks_of(data: &[u8]) -> Vec<Vec<u8>> {
    let grid = [16usize, 16, 4];
    (0..grid.iter().product::<usize>())
        .map(|c| {
            let (cz, cy, cx) = (
                c / (grid[1] * grid[2]),
                (c / grid[2]) % grid[1],
                c % grid[2],
            );
            let mut out = Vec::with_capacity(CHUNK_BYTES);
            for z in 0..64 {
                for y in 0..64 {
                    let row = ((cz * 64 + z) * 1024 + cy * 64 + y) * 256 + cx * 64;
                    out.extend_from_slice(&data[row * 4..(row + 64) * 4]);
                }
            }
            out
        })
        .collect()
}

thread_local! {
    /// Each thread's zstd contexts (level 1), reused as a well-written caller would.
    static ZSTD: std::cell::RefCell<(zstd::bulk::Compressor<'static>, zstd::bulk::Decompressor<'static>)> =
        std::cell::RefCell::new((
            zstd::bulk::Compressor::new(1).unwrap(),
            zstd::bulk::Decompressor::new().unwrap(),
        ));
}

/// Raw compression and decompression of the chunks on `threads` threads: seconds each.
fn raw_codec(name: &str, chunks: &[Vec<u8>], threads: usize) -> (f64, f64) {
    let n = chunks.len();
    let packed: Vec<std::sync::Mutex<Vec<u8>>> = (0..n).map(|_| Default::default()).collect();
    let cname = std::ffi::CString::new("lz4").unwrap();
    let compress = |i: usize| {
        let out = if name == "blosc" {
            let mut out = vec![0u8; CHUNK_BYTES + 16];
            // SAFETY: the buffers' lengths are given.
            let k = unsafe {
                blosc_src::blosc_compress_ctx(
                    5,
                    1,
                    4,
                    CHUNK_BYTES,
                    chunks[i].as_ptr() as *const _,
                    out.as_mut_ptr() as *mut _,
                    out.len(),
                    cname.as_ptr(),
                    0,
                    1,
                )
            };
            out.truncate(k as usize);
            out
        } else {
            ZSTD.with(|z| z.borrow_mut().0.compress(&chunks[i]).unwrap())
        };
        *packed[i].lock().unwrap() = out;
    };
    let t = Instant::now();
    common::parallel(threads, n, compress);
    let tc = t.elapsed().as_secs_f64();
    let t = Instant::now();
    common::parallel(threads, n, |i| {
        let input = packed[i].lock().unwrap();
        let mut out = vec![0u8; CHUNK_BYTES];
        if name == "blosc" {
            // SAFETY: the buffers' lengths are given.
            unsafe {
                blosc_src::blosc_decompress_ctx(
                    input.as_ptr() as *const _,
                    out.as_mut_ptr() as *mut _,
                    out.len(),
                    1,
                )
            };
        } else {
            ZSTD.with(|z| {
                z.borrow_mut()
                    .1
                    .decompress_to_buffer(&input, &mut out)
                    .unwrap()
            });
        }
        std::hint::black_box(&out);
    });
    (tc, t.elapsed().as_secs_f64())
}

/// Plain files of the chunks: seconds to write them (synced each when `sync`) and, after
/// dropping the cache when `cold`, to read them back.
fn plain_files(
    dir: &Path,
    chunks: &[Vec<u8>],
    threads: usize,
    sync: bool,
    cold: bool,
) -> (f64, Option<f64>) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let t = Instant::now();
    common::parallel(threads, chunks.len(), |i| {
        let mut f = std::fs::File::create(dir.join(i.to_string())).unwrap();
        f.write_all(&chunks[i]).unwrap();
        if sync {
            f.sync_all().unwrap();
        }
    });
    let tw = t.elapsed().as_secs_f64();
    if cold && !drop_caches() {
        return (tw, None);
    }
    let t = Instant::now();
    common::parallel(threads, chunks.len(), |i| {
        let mut buf = Vec::with_capacity(CHUNK_BYTES);
        std::fs::File::open(dir.join(i.to_string()))
            .unwrap()
            .read_to_end(&mut buf)
            .unwrap();
        std::hint::black_box(&buf);
    });
    let tr = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(dir);
    (tw, Some(tr))
}

fn gbps(seconds: f64) -> f64 {
    TOTAL as f64 / seconds / 1e9
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(
            &args[1],
            Path::new(&args[2]),
            Path::new(&args[3]),
            &args[4],
            args.get(5).map_or("", String::as_str),
        );
    }
    let base = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-peers"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let python = std::env::var("ZARR_BENCH_PYTHON").unwrap_or_else(|_| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(".test-env/zp3/bin/python")
            .display()
            .to_string()
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/tensorstore_bench.py");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let exe = std::env::current_exe().unwrap();
    let data = common::field();
    let data_path = base.join("data.f32");
    std::fs::write(&data_path, &data).unwrap();
    let chunks = chunks_of(&data);
    // A full read's floor: copying the array into freshly allocated memory (each page is
    // touched first there, which dominates on some machines).
    let fresh_copy = {
        let t = Instant::now();
        let mut fresh = vec![0u8; TOTAL];
        fresh.copy_from_slice(&data);
        std::hint::black_box(&fresh);
        gbps(t.elapsed().as_secs_f64())
    };
    drop(data);
    let positions = base.join("positions.txt");
    let text: String = random_starts(RANDOM_READS)
        .iter()
        .map(|s| format!("{} {} {}\n", s[0], s[1], s[2]))
        .collect();
    std::fs::write(&positions, text).unwrap();

    let ours = |op: &str, dir: &Path, codec: &str| {
        let mut c = Command::new(&exe);
        c.arg("--child").arg(op).arg(dir).arg(&data_path).arg(codec);
        c
    };
    let theirs = |op: &str, dir: &Path, codec: &str, extra: &str| {
        let mut c = Command::new(&python);
        c.arg(&script).arg(op).arg(dir).arg(&data_path).arg(codec);
        if !extra.is_empty() {
            c.arg(extra);
        }
        c
    };
    let can_drop = drop_caches();
    let mut rows: Vec<String> = Vec::new();
    let mut row = |workload: &str,
                   us: Option<(f64, f64)>,
                   peer: Option<(f64, f64)>,
                   limit: f64,
                   unit: &str| {
        let value = |s: f64| if unit == "GB/s" { gbps(s) } else { s };
        let fmt = |r: Option<(f64, f64)>| {
            r.map_or("n/a".to_string(), |(s, _)| format!("{:.3}", value(s)))
        };
        // Speed ratio: a time ratio for seconds, a throughput ratio for GB/s.
        let ratio = match (us, peer) {
            (Some((a, _)), Some((b, _))) => format!("{:.2}", b / a),
            _ => "n/a".into(),
        };
        println!(
            "{workload:<34} libzarr {:>8} {unit:<5} tensorstore {:>8}  limit {:>8.3}  libzarr/peer {ratio:>5}  peak {} / {} MiB",
            fmt(us),
            fmt(peer),
            limit,
            us.map_or("n/a".into(), |(_, p)| format!("{p:.0}")),
            peer.map_or("n/a".into(), |(_, p)| format!("{p:.0}")),
        );
        // No limit measured for a workload: "n/a" in the table.
        let limit = match limit > 0.0 {
            true => format!("{limit:.3}"),
            false => "n/a".into(),
        };
        rows.push(format!(
            "ROW|{workload} ({unit})|{}|tensorstore {}|{limit}|{ratio}|{} / {}",
            fmt(us),
            fmt(peer),
            us.map_or("n/a".into(), |(_, p)| format!("{p:.0}")),
            peer.map_or("n/a".into(), |(_, p)| format!("{p:.0}"))
        ));
    };

    println!(
        "bench_peers: float32 {SHAPE:?}, chunks 64^3, {threads} threads, data in {}",
        base.display()
    );
    for name in ["blosc", "zstd"] {
        let (tc, td) = raw_codec(name, &chunks, threads);
        let dir = base.join(name);
        let peer_dir = base.join(format!("{name}-ts"));
        let w = best_of(2, false, || ours("write", &dir, name));
        let pw = best_of(2, false, || theirs("write", &peer_dir, name, ""));
        row(&format!("{name} full write"), w, pw, gbps(tc), "GB/s");
        let r = best_of(2, false, || ours("read", &dir, name));
        let pr = best_of(2, false, || theirs("read", &dir, name, ""));
        row(
            &format!("{name} full read"),
            r,
            pr,
            gbps(td).min(fresh_copy),
            "GB/s",
        );
        if name == "blosc" {
            if can_drop {
                let (_, plain_cold) =
                    plain_files(&base.join("plain"), &chunks, threads, false, true);
                let cr = best_of(2, true, || ours("read", &dir, name));
                let pcr = best_of(2, true, || theirs("read", &dir, name, ""));
                row(
                    "blosc cold full read",
                    cr,
                    pcr,
                    plain_cold.map_or(0.0, gbps),
                    "GB/s",
                );
                let cq = best_of(2, true, || ours("random", &dir, name));
                let pcq = best_of(2, true, || {
                    theirs("random", &dir, name, positions.to_str().unwrap())
                });
                row("blosc cold 1000 random 16^3", cq, pcq, 0.0, "s");
            } else {
                println!("cold reads: skipped (dropping the page cache needs root)");
            }
            let q = best_of(2, false, || ours("random", &dir, name));
            let pq = best_of(2, false, || {
                theirs("random", &dir, name, positions.to_str().unwrap())
            });
            row("blosc 1000 random 16^3", q, pq, 0.0, "s");
            let region = format!(
                "{}:{}",
                RMW_START.map(|v| v.to_string()).join(","),
                RMW_COUNT.map(|v| v.to_string()).join(",")
            );
            let m = best_of(1, false, || ours("rmw", &dir, name));
            let pm = best_of(1, false, || theirs("rmw", &peer_dir, name, &region));
            row("blosc unaligned RMW 960x960x196", m, pm, 0.0, "s");
            let (plain_sync, _) = plain_files(&base.join("plain"), &chunks, threads, true, false);
            let d = best_of(2, false, || {
                ours("durable-write", &base.join("durable"), name)
            });
            let pd = best_of(2, false, || {
                theirs("durable-write", &base.join("durable-ts"), name, "")
            });
            row("blosc durable full write", d, pd, gbps(plain_sync), "GB/s");
        }
    }
    for r in rows {
        println!("{r}");
    }
    let _ = std::fs::remove_dir_all(&base);
}
