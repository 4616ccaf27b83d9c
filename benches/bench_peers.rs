//! libzarr beside zarrs and tensorstore on the workloads users wait on, on one 1 GiB
//! float32 array (1024 x 1024 x 256 in 64^3 chunks, or 256^3 shards of 32^3 chunks, on
//! disk), each workload in a process of its own (so its peak memory is its own), the
//! median of five runs taken in turns (libzarr, zarrs, tensorstore, then again), every run
//! starting with the data of the ones before on disk, next to the limits measured in the
//! same run:
//!
//! - full writes uncompressed, blosc (lz4, shuffle), zstd (level 1) and sharded blosc, in
//!   two durability classes: unsynced (libzarr `ZARR_DURABILITY_NONE`, tensorstore without
//!   `file_io_sync`, zarrs under eatmydata, which makes its per-file fsync a no-op) and
//!   synced (libzarr syncing at flush, tensorstore with `file_io_sync`, zarrs as it is),
//!   beside raw compression of the same chunks on as many threads and plain files written
//!   (and synced);
//! - full reads of libzarr's arrays, hot and cold (the page cache dropped before every
//!   run, which needs root), beside raw decompression, a copy into fresh memory and plain
//!   cold reads of the chunk files;
//! - 1000 random 16^3 regions (hot and cold) and the unaligned read-modify-write of a
//!   960 x 960 x 196 region at (32, 32, 32).
//!
//! tensorstore runs from `ZARR_BENCH_PYTHON` (default: the test environment's zp3), zarrs
//! from `ZARR_BENCH_ZARRS` (default: target/zarrs-peer/release/zarrs-peer, which
//! scripts/bench.sh builds from benches/peers/zarrs-peer). Run: `cargo bench --bench
//! bench_peers [-- DIR]`. Figures are printed, never asserted; `ROW` lines feed
//! scripts/bench.sh.

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

/// The compressor of CODEC: `blosc` (lz4, shuffle), `zstd` (level 1), `none`, or
/// `sharded` (blosc inside 256^3 shards of 32^3 chunks).
fn codec(name: &str) -> serde_json::Value {
    match name {
        "blosc" | "sharded" => serde_json::json!(
            {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
        "none" => serde_json::Value::Null,
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
            // The previous run's array is removed before the clock starts, as the peers
            // do (tensorstore's `delete_existing`, zarrs' runner).
            let _ = std::fs::remove_dir_all(dir);
            let s = store(dir, level);
            let mut builder = ArrayBuilder::new(SHAPE.to_vec(), ElementType::Float32);
            builder.zarr_format(3).unwrap();
            builder.compressor(codec(codec_name));
            if codec_name == "sharded" {
                builder.chunks(vec![32; 3]).shard_shape(vec![256; 3]);
            } else {
                builder.chunks(vec![CHUNK; 3]);
            }
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

/// Runs a workload in a child process: (seconds, peak MiB), or `None` when it failed. A
/// cold run drops the page cache first; every run starts with the previous runs' data on
/// disk (`sync`), so that no run pays for another's write-back.
fn run(mut command: Command, cold: bool) -> Option<(f64, f64)> {
    if cold {
        if !drop_caches() {
            return None;
        }
    } else {
        let _ = Command::new("sync").status();
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

/// Each command's median of `REPS` runs by time (with its peak memory), the commands taking
/// turns (one run of each, then the next round), so that a slow spell of the machine falls
/// on all of them; `None` for a command that is missing or failed.
fn medians(commands: &[Option<&dyn Fn() -> Command>], cold: bool) -> Vec<Option<(f64, f64)>> {
    let mut runs: Vec<Option<Vec<(f64, f64)>>> =
        commands.iter().map(|c| c.map(|_| Vec::new())).collect();
    for _ in 0..REPS {
        for (make, done) in commands.iter().zip(&mut runs) {
            if let (Some(make), Some(list)) = (make, done.as_mut()) {
                match run(make(), cold) {
                    Some(r) => list.push(r),
                    None => *done = None,
                }
            }
        }
    }
    runs.into_iter()
        .map(|list| {
            let mut all = list?;
            all.sort_by(|a, b| a.0.total_cmp(&b.0));
            Some(all[all.len() / 2])
        })
        .collect()
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

/// The peers' programs: how to run each on a workload.
struct Peers {
    exe: PathBuf,
    python: String,
    tensorstore: PathBuf,
    zarrs: Option<PathBuf>,
    eatmydata: Option<PathBuf>,
    data: PathBuf,
}

/// One library doing one workload.
#[derive(Clone, Copy, PartialEq)]
enum Who {
    Libzarr,
    Zarrs,
    Tensorstore,
}

const PEERS: [Who; 2] = [Who::Zarrs, Who::Tensorstore];

impl Who {
    fn name(self) -> &'static str {
        match self {
            Who::Libzarr => "libzarr",
            Who::Zarrs => "zarrs",
            Who::Tensorstore => "tensorstore",
        }
    }
}

impl Peers {
    /// The command for `who` doing `op` on the store at `dir`; `None` when that peer is
    /// not available. `synced` writes sync every file before they return (zarrs always
    /// does; its unsynced runs go through eatmydata, which turns fsync into nothing).
    fn command(
        &self,
        who: Who,
        op: &str,
        synced: bool,
        dir: &Path,
        codec: &str,
        extra: &str,
    ) -> Option<Command> {
        let op = match (op, synced) {
            ("write", true) if who != Who::Zarrs => "durable-write",
            _ => op,
        };
        let mut c = match who {
            Who::Libzarr => {
                let mut c = Command::new(&self.exe);
                c.arg("--child");
                c
            }
            Who::Tensorstore => {
                let mut c = Command::new(&self.python);
                c.arg(&self.tensorstore);
                c
            }
            Who::Zarrs => {
                let zarrs = self.zarrs.as_ref()?;
                if op == "write" && !synced {
                    let mut c = Command::new(self.eatmydata.as_ref()?);
                    c.arg(zarrs);
                    c
                } else {
                    Command::new(zarrs)
                }
            }
        };
        c.arg(op).arg(dir).arg(&self.data).arg(codec);
        if !extra.is_empty() {
            c.arg(extra);
        }
        Some(c)
    }
}

/// Where `name` is on PATH.
fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// The table's rows: printed as they come, and as `ROW|` lines for scripts/bench.sh.
#[derive(Default)]
struct Table {
    rows: Vec<String>,
}

impl Table {
    /// One workload: libzarr's figure, each peer's, the limit, and libzarr's ratio to the
    /// best peer (a throughput ratio for GB/s, a time ratio for seconds).
    fn row(
        &mut self,
        workload: &str,
        unit: &str,
        results: &[(Who, Option<(f64, f64)>)],
        limit: f64,
    ) {
        let value = |s: f64| if unit == "GB/s" { gbps(s) } else { s };
        let fmt = |r: Option<(f64, f64)>| {
            r.map_or("n/a".to_string(), |(s, _)| format!("{:.3}", value(s)))
        };
        let ours = results
            .iter()
            .find(|(w, _)| *w == Who::Libzarr)
            .and_then(|(_, r)| *r);
        let best = results
            .iter()
            .filter(|(w, _)| *w != Who::Libzarr)
            .filter_map(|(w, r)| r.map(|r| (*w, r)))
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0));
        let ratio = match (ours, best) {
            (Some((a, _)), Some((who, (b, _)))) => format!("{:.2} ({})", b / a, who.name()),
            _ => "n/a".into(),
        };
        let peers = results
            .iter()
            .filter(|(w, _)| *w != Who::Libzarr)
            .map(|(w, r)| format!("{} {}", w.name(), fmt(*r)))
            .collect::<Vec<_>>()
            .join(", ");
        let peaks = results
            .iter()
            .map(|(_, r)| r.map_or("n/a".into(), |(_, p)| format!("{p:.0}")))
            .collect::<Vec<_>>()
            .join(" / ");
        let limit = if limit > 0.0 {
            format!("{limit:.3}")
        } else {
            "n/a".into()
        };
        println!(
            "{workload:<40} libzarr {:>7} {unit:<4} {peers}  limit {limit}  ratio {ratio}  peak MiB {peaks}",
            fmt(ours)
        );
        self.rows.push(format!(
            "ROW|{workload} ({unit})|{}|{peers}|{limit}|{ratio}|{peaks}",
            fmt(ours)
        ));
    }
}

/// Runs of every workload; each figure is their median.
const REPS: usize = 5;

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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let base = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/bench-peers"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let python = std::env::var("ZARR_BENCH_PYTHON")
        .unwrap_or_else(|_| root.join(".test-env/zp3/bin/python").display().to_string());
    let zarrs = std::env::var_os("ZARR_BENCH_ZARRS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/zarrs-peer/release/zarrs-peer"));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
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
    let peers = Peers {
        exe: std::env::current_exe().unwrap(),
        python,
        tensorstore: root.join("benches/peers/tensorstore_bench.py"),
        zarrs: zarrs.is_file().then_some(zarrs),
        eatmydata: which("eatmydata"),
        data: data_path,
    };
    if peers.zarrs.is_none() {
        println!("zarrs: not built (scripts/bench.sh builds benches/peers/zarrs-peer): skipped");
    } else if peers.eatmydata.is_none() {
        println!("zarrs: eatmydata is missing: its unsynced writes are skipped");
    }
    let can_drop = drop_caches();
    if !can_drop {
        println!("cold reads: skipped (dropping the page cache needs root)");
    }
    println!(
        "bench_peers: float32 {SHAPE:?}, chunks 64^3 (sharded: 256^3 shards of 32^3), {threads} threads, median of {REPS}, data in {}",
        base.display()
    );

    let mut table = Table::default();
    let everyone = |op: &str,
                    synced: bool,
                    cold: bool,
                    dir: &dyn Fn(Who) -> PathBuf,
                    codec: &str,
                    extra: &str| {
        let who: Vec<Who> = [Who::Libzarr].into_iter().chain(PEERS).collect();
        let makers: Vec<_> = who
            .iter()
            .map(|&w| {
                let dir = dir(w);
                let peers = &peers;
                peers
                    .command(w, op, synced, &dir, codec, extra)
                    .map(|_| move || peers.command(w, op, synced, &dir, codec, extra).unwrap())
            })
            .collect();
        let commands: Vec<Option<&dyn Fn() -> Command>> = makers
            .iter()
            .map(|m| m.as_ref().map(|m| m as &dyn Fn() -> Command))
            .collect();
        who.into_iter()
            .zip(medians(&commands, cold))
            .collect::<Vec<_>>()
    };
    let (plain_write, plain_cold) =
        plain_files(&base.join("plain"), &chunks, threads, false, can_drop);
    let (plain_sync, _) = plain_files(&base.join("plain"), &chunks, threads, true, false);
    for name in ["none", "blosc", "zstd", "sharded"] {
        let (tc, td) = match name {
            "blosc" | "sharded" | "zstd" => raw_codec(
                if name == "zstd" { "zstd" } else { "blosc" },
                &chunks,
                threads,
            ),
            _ => (plain_write, 0.0),
        };
        // Every library writes its own copy; all read libzarr's.
        let own = |who: Who| base.join(format!("{name}-{}", who.name()));
        let ours = |_: Who| base.join(format!("{name}-libzarr"));
        let w = everyone("write", false, false, &own, name, "");
        table.row(
            &format!("{name} full write, unsynced"),
            "GB/s",
            &w,
            gbps(tc),
        );
        let sw = everyone("write", true, false, &own, name, "");
        table.row(
            &format!("{name} full write, synced"),
            "GB/s",
            &sw,
            gbps(plain_sync.max(tc)),
        );
        let r = everyone("read", false, false, &ours, name, "");
        let read_limit = if td > 0.0 {
            gbps(td).min(fresh_copy)
        } else {
            fresh_copy
        };
        table.row(&format!("{name} full read"), "GB/s", &r, read_limit);
        if can_drop && name != "zstd" {
            let cr = everyone("read", false, true, &ours, name, "");
            table.row(
                &format!("{name} cold full read"),
                "GB/s",
                &cr,
                plain_cold.map_or(0.0, gbps),
            );
        }
        if name == "blosc" {
            let at = positions.to_str().unwrap();
            let q = everyone("random", false, false, &ours, name, at);
            table.row("blosc 1000 random 16^3", "s", &q, 0.0);
            if can_drop {
                let cq = everyone("random", false, true, &ours, name, at);
                table.row("blosc cold 1000 random 16^3", "s", &cq, 0.0);
            }
            let region = format!(
                "{}:{}",
                RMW_START.map(|v| v.to_string()).join(","),
                RMW_COUNT.map(|v| v.to_string()).join(",")
            );
            // Each rewrites its own copy (written above), once per repetition.
            let m = everyone("rmw", false, false, &own, name, &region);
            table.row("blosc unaligned RMW 960x960x196", "s", &m, 0.0);
        }
    }
    for r in table.rows {
        println!("{r}");
    }
    let _ = std::fs::remove_dir_all(&base);
}
