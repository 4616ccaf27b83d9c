//! I/O benchmark: writes and reads a 1 GiB float32 array (1024×1024×256, chunks 64×64×64)
//! through the C API, uncompressed and with blosc lz4 + shuffle, and prints GB/s next to
//! limits measured in the same run: memcpy, plain file write/read of the same bytes in the
//! same directory, and raw blosc compress/decompress of the same chunks on the same number
//! of threads. Also measures the peak memory of a full-array read in a child process, and
//! the filesystem store's own costs: microseconds per `get` of a small value by key depth,
//! and writing one array under each durability level beside plain file writes (without and
//! with an fsync per file).
//!
//! Run: `cargo bench --bench bench_io [-- DIR]` (DIR defaults to a new directory under
//! target/); `cargo bench --bench bench_io -- --store [DIR]` runs only the store's costs.
//! Figures are printed, never asserted.

mod common;

use std::ffi::CString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use zarr::ffi::*;

const SHAPE: [u64; 3] = [1024, 1024, 256];
const CHUNK: [u64; 3] = [64, 64, 64];
const CHUNK_BYTES: usize = 64 * 64 * 64 * 4;
const TOTAL_BYTES: usize = 1024 * 1024 * 256 * 4;
/// Thread counts measured: the machine's cores, then oversubscribed to show no collapse.
const THREADS: [usize; 4] = [1, 2, 4, 8];
const BLOSC: &str = r#"{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}"#;

fn check(status: zarr_status_t, what: &str) {
    if status != 0 {
        let mut buf = vec![0u8; 1024];
        unsafe { zarr_last_error(buf.as_mut_ptr() as *mut _, buf.len(), std::ptr::null_mut()) };
        let msg = String::from_utf8_lossy(&buf[..buf.iter().position(|&b| b == 0).unwrap_or(0)])
            .to_string();
        panic!("{what}: status {status}: {msg}");
    }
}

fn gbps(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

/// Best of `runs` timings of `f`.
fn best(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The bytes of chunk `c` (flat index, C order over the chunk grid), gathered from `data`.
fn chunk_of(data: &[u8], c: usize, out: &mut Vec<u8>) {
    out.clear();
    let (gy, gx) = (16, 4);
    let (cz, cy, cx) = (c / (gy * gx), (c / gx) % gy, c % gx);
    for z in 0..64 {
        for y in 0..64 {
            let row = ((cz * 64 + z) * 1024 + cy * 64 + y) * 256 + cx * 64;
            out.extend_from_slice(&data[row * 4..(row + 64) * 4]);
        }
    }
}

fn plain_write(dir: &Path, data: &[u8], threads: usize) {
    common::parallel(threads, TOTAL_BYTES / CHUNK_BYTES, |i| {
        let mut f = std::fs::File::create(dir.join(i.to_string())).unwrap();
        f.write_all(&data[i * CHUNK_BYTES..(i + 1) * CHUNK_BYTES])
            .unwrap();
    });
}

fn plain_read(dir: &Path, out: &mut [u8], threads: usize) {
    let ptr = out.as_mut_ptr() as usize;
    common::parallel(threads, TOTAL_BYTES / CHUNK_BYTES, |i| {
        // SAFETY: each index writes its own CHUNK_BYTES range.
        let dst = unsafe {
            std::slice::from_raw_parts_mut((ptr + i * CHUNK_BYTES) as *mut u8, CHUNK_BYTES)
        };
        std::fs::File::open(dir.join(i.to_string()))
            .unwrap()
            .read_exact(dst)
            .unwrap();
    });
}

fn blosc_raw(chunks: &[Vec<u8>], threads: usize) -> (f64, f64) {
    let n = chunks.len();
    let compressed: Vec<std::sync::Mutex<Vec<u8>>> = (0..n).map(|_| Default::default()).collect();
    let cname = CString::new("lz4").unwrap();
    let tc = best(2, || {
        common::parallel(threads, n, |i| {
            let mut out = vec![0u8; CHUNK_BYTES + 16];
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
            *compressed[i].lock().unwrap() = out;
        })
    });
    let td = best(2, || {
        common::parallel(threads, n, |i| {
            let mut out = vec![0u8; CHUNK_BYTES];
            let c = compressed[i].lock().unwrap();
            unsafe {
                blosc_src::blosc_decompress_ctx(
                    c.as_ptr() as *const _,
                    out.as_mut_ptr() as *mut _,
                    CHUNK_BYTES,
                    1,
                )
            };
        })
    });
    (gbps(TOTAL_BYTES, tc), gbps(TOTAL_BYTES, td))
}

unsafe fn create(store: *mut zarr_store_t, path: &str, compressor: &str) -> *mut zarr_array_t {
    let mut builder = std::ptr::null_mut();
    check(
        zarr_array_builder_new(
            zarr_dtype::ZARR_DTYPE_FLOAT32 as i32,
            3,
            SHAPE.as_ptr(),
            &mut builder,
        ),
        "builder",
    );
    check(
        zarr_array_builder_set_chunk_shape(builder, 3, CHUNK.as_ptr()),
        "chunks",
    );
    let c = CString::new(compressor).unwrap();
    check(
        zarr_array_builder_set_compressor_json(builder, c.as_ptr()),
        "compressor",
    );
    // NaN fill: no chunk of this data equals it, so every chunk is stored.
    check(
        zarr_array_builder_set_fill_value_json(builder, c"\"NaN\"".as_ptr()),
        "fill",
    );
    let mut array = std::ptr::null_mut();
    let p = CString::new(path).unwrap();
    check(
        zarr_array_create(
            builder,
            store,
            p.as_ptr(),
            zarr_mode::ZARR_MODE_W as i32,
            &mut array,
        ),
        "create",
    );
    zarr_array_builder_free(builder);
    array
}

unsafe fn io(array: *mut zarr_array_t, data: &mut [u8], write: bool) {
    let start = [0u64; 3];
    let status = if write {
        zarr_array_write(
            array,
            3,
            start.as_ptr(),
            SHAPE.as_ptr(),
            zarr_dtype::ZARR_DTYPE_FLOAT32 as i32,
            0,
            data.as_ptr() as *const _,
            data.len(),
        )
    } else {
        zarr_array_read(
            array,
            3,
            start.as_ptr(),
            SHAPE.as_ptr(),
            zarr_dtype::ZARR_DTYPE_FLOAT32 as i32,
            0,
            data.as_mut_ptr() as *mut _,
            data.len(),
        )
    };
    check(status, if write { "write" } else { "read" });
}

/// A Zarr v3 float32 array of SHAPE with 32^3 chunks, grouped in 256^3 shards if asked.
unsafe fn create_v3(
    store: *mut zarr_store_t,
    path: &str,
    compressor: &str,
    sharded: bool,
) -> *mut zarr_array_t {
    let mut builder = std::ptr::null_mut();
    check(
        zarr_array_builder_new(
            zarr_dtype::ZARR_DTYPE_FLOAT32 as i32,
            3,
            SHAPE.as_ptr(),
            &mut builder,
        ),
        "builder",
    );
    check(zarr_array_builder_set_zarr_format(builder, 3), "format");
    check(
        zarr_array_builder_set_chunk_shape(builder, 3, [32u64; 3].as_ptr()),
        "chunks",
    );
    if sharded {
        check(
            zarr_array_builder_set_shard_shape(builder, 3, [256u64; 3].as_ptr()),
            "shards",
        );
    }
    let c = CString::new(compressor).unwrap();
    check(
        zarr_array_builder_set_compressor_json(builder, c.as_ptr()),
        "compressor",
    );
    check(
        zarr_array_builder_set_fill_value_json(builder, c"\"NaN\"".as_ptr()),
        "fill",
    );
    let mut array = std::ptr::null_mut();
    let p = CString::new(path).unwrap();
    check(
        zarr_array_create(
            builder,
            store,
            p.as_ptr(),
            zarr_mode::ZARR_MODE_W as i32,
            &mut array,
        ),
        "create",
    );
    zarr_array_builder_free(builder);
    array
}

/// Reads a `side`^3 float32 region at `start` into `buf`.
unsafe fn read_cube(array: *mut zarr_array_t, start: [u64; 3], side: u64, buf: &mut [u8]) {
    let count = [side; 3];
    let n = (side * side * side * 4) as usize;
    check(
        zarr_array_read(
            array,
            3,
            start.as_ptr(),
            count.as_ptr(),
            zarr_dtype::ZARR_DTYPE_FLOAT32 as i32,
            0,
            buf.as_mut_ptr() as *mut _,
            n,
        ),
        "read region",
    );
}

/// Zarr v3 on 2 threads: sharded (256^3 shards of 32^3 chunks) against unsharded 32^3
/// chunks, full write and read, 1000 random 16^3 regions, and whole-shard reads.
fn sharding(store: *mut zarr_store_t, data: &mut [u8], back: &mut [u8]) {
    println!(
        "
Zarr v3 on 2 threads: 256^3 shards of 32^3 chunks against unsharded 32^3 chunks"
    );
    check(zarr_set_num_threads(2), "threads");
    let zstd = r#"{"id": "zstd", "level": 1}"#;
    for (name, compressor) in [("blosc lz4", BLOSC), ("zstd 1", zstd)] {
        for sharded in [false, true] {
            let array = unsafe { create_v3(store, "v3", compressor, sharded) };
            // Best of two: single full passes on this shared machine vary by 2x.
            let tw = best(2, || unsafe { io(array, data, true) });
            back.fill(0);
            let tr = best(2, || unsafe { io(array, back, false) });
            assert!(back == data, "v3 read back differs");
            let mut region = vec![0u8; 16 * 16 * 16 * 4];
            let mut state = 0x9e37_79b9_7f4a_7c15u64;
            let t = Instant::now();
            for _ in 0..1000 {
                let mut start = [0u64; 3];
                for (d, s) in start.iter_mut().enumerate() {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    *s = state % (SHAPE[d] - 16);
                }
                unsafe { read_cube(array, start, 16, &mut region) };
            }
            let per_region = t.elapsed().as_secs_f64() / 1000.0;
            let mut shard = vec![0u8; 256 * 256 * 256 * 4];
            let t = Instant::now();
            for i in 0..4u64 {
                unsafe { read_cube(array, [256 * i, 0, 0], 256, &mut shard) };
            }
            let per_shard = t.elapsed().as_secs_f64() / 4.0;
            println!(
                "  {name:10} {:9}: write {:5.2} GB/s, read {:5.2} GB/s; random 16^3 region {:7.1} us; whole 256^3 block {:7.1} ms ({:.0}x a region)",
                if sharded { "sharded" } else { "unsharded" },
                gbps(TOTAL_BYTES, tw),
                gbps(TOTAL_BYTES, tr),
                per_region * 1e6,
                per_shard * 1e3,
                per_shard / per_region
            );
            unsafe { zarr_array_free(array) };
        }
    }
}

/// Child mode: read the whole array once and report the peak resident memory beyond the
/// (already touched) output buffer.
fn peak_read(dir: &str, path: &str, threads: usize) {
    let mut out = vec![1u8; TOTAL_BYTES];
    let before = common::peak_kib();
    unsafe {
        check(zarr_set_num_threads(threads), "threads");
        let mut store = std::ptr::null_mut();
        let d = CString::new(dir).unwrap();
        check(
            zarr_store_open_fs(d.as_ptr(), zarr_mode::ZARR_MODE_R as i32, &mut store),
            "store",
        );
        let mut array = std::ptr::null_mut();
        let p = CString::new(path).unwrap();
        check(
            zarr_array_open(store, p.as_ptr(), zarr_mode::ZARR_MODE_R as i32, &mut array),
            "open",
        );
        io(array, &mut out, false);
        zarr_array_free(array);
        zarr_store_free(store);
    }
    let after = common::peak_kib();
    println!("{before} {after}");
}

/// Gets per timed run in [`get_cost`].
const GETS: u32 = 20_000;

/// Microseconds per `get` of a 64-byte value at a key of `depth` components (`depth - 1`
/// directories), through a filesystem store at `dir`: best of 3 runs of [`GETS`] gets.
fn get_cost(dir: &Path, depth: usize) -> f64 {
    use zarr::store::{FilesystemStore, Store};
    let store = FilesystemStore::open(dir, true, true).unwrap();
    let key = (1..depth).map(|d| format!("d{d}/")).collect::<String>() + "k";
    store.set(&key, &[7u8; 64]).unwrap();
    let seconds = best(3, || {
        for _ in 0..GETS {
            assert_eq!(store.get(&key).unwrap().unwrap().len(), 64);
        }
    });
    seconds / f64::from(GETS) * 1e6
}

/// Side of the cubic float32 array of [`durability_costs`] (64 MiB).
const DURABLE_SIDE: u64 = 256;

/// Seconds to write `files` files of `size` bytes from `data` on 2 threads into a fresh
/// `dir`, each fsynced before closing if `sync`.
fn plain_files(dir: &Path, data: &[u8], files: usize, size: usize, sync: bool) -> f64 {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    // Earlier runs' data is written back first, so it does not slow this one.
    rustix::fs::sync();
    let t = Instant::now();
    common::parallel(2, files, |i| {
        let mut f = std::fs::File::create(dir.join(i.to_string())).unwrap();
        f.write_all(&data[i * size..(i + 1) * size]).unwrap();
        if sync {
            f.sync_all().unwrap();
        }
    });
    t.elapsed().as_secs_f64()
}

/// Seconds to create a float32 array of side [`DURABLE_SIDE`] in chunks of side `chunk` in
/// a fresh store at `dir` under durability `level`, write `data` into it on 2 threads and
/// flush the store.
fn durable_write(dir: &Path, data: &[u8], chunk: u64, level: zarr_durability) -> f64 {
    let _ = std::fs::remove_dir_all(dir);
    let d = CString::new(dir.to_str().unwrap()).unwrap();
    let shape = [DURABLE_SIDE; 3];
    unsafe {
        check(zarr_set_num_threads(2), "threads");
        let mut store = std::ptr::null_mut();
        check(
            zarr_store_open_fs(d.as_ptr(), zarr_mode::ZARR_MODE_A as i32, &mut store),
            "store",
        );
        check(zarr_store_set_durability(store, level as i32), "durability");
        let mut builder = std::ptr::null_mut();
        check(
            zarr_array_builder_new(
                zarr_dtype::ZARR_DTYPE_FLOAT32 as i32,
                3,
                shape.as_ptr(),
                &mut builder,
            ),
            "builder",
        );
        check(
            zarr_array_builder_set_chunk_shape(builder, 3, [chunk; 3].as_ptr()),
            "chunks",
        );
        check(
            zarr_array_builder_set_compressor_json(builder, c"null".as_ptr()),
            "compressor",
        );
        check(
            zarr_array_builder_set_fill_value_json(builder, c"\"NaN\"".as_ptr()),
            "fill",
        );
        rustix::fs::sync();
        let t = Instant::now();
        let mut array = std::ptr::null_mut();
        check(
            zarr_array_create(
                builder,
                store,
                c"a".as_ptr(),
                zarr_mode::ZARR_MODE_W as i32,
                &mut array,
            ),
            "create",
        );
        check(
            zarr_array_write(
                array,
                3,
                [0u64; 3].as_ptr(),
                shape.as_ptr(),
                zarr_dtype::ZARR_DTYPE_FLOAT32 as i32,
                0,
                data.as_ptr() as *const _,
                data.len(),
            ),
            "write",
        );
        check(zarr_store_flush(store), "flush");
        let seconds = t.elapsed().as_secs_f64();
        zarr_array_free(array);
        zarr_array_builder_free(builder);
        zarr_store_free(store);
        seconds
    }
}

/// The same array written under each durability level (timed up to the end of a flush),
/// beside plain writes of as many files of the chunks' size: best of 2 each.
fn durability_costs(dir: &Path) {
    let bytes = (DURABLE_SIDE.pow(3) * 4) as usize;
    let data: Vec<u8> = (0..bytes / 4)
        .flat_map(|i| (i as f32).to_ne_bytes())
        .collect();
    println!("\ndurability: a {} MiB float32 array written on 2 threads and flushed, uncompressed (best of 2)", bytes >> 20);
    for chunk in [64u64, 16] {
        let (files, size) = (
            bytes / (chunk.pow(3) * 4) as usize,
            (chunk.pow(3) * 4) as usize,
        );
        let rate = |seconds: f64| {
            format!(
                "{:6.3} GB/s {:7.0} files/s",
                gbps(bytes, seconds),
                files as f64 / seconds
            )
        };
        println!("  {files} chunks of {} KiB:", size >> 10);
        let plain = best(2, || {
            plain_files(&dir.join("plain"), &data, files, size, false);
        });
        let synced = best(2, || {
            plain_files(&dir.join("plain"), &data, files, size, true);
        });
        println!("    plain files, no sync           {}", rate(plain));
        println!("    plain files, fsync each        {}", rate(synced));
        for (name, level) in [
            (
                "ZARR_DURABILITY_NONE",
                zarr_durability::ZARR_DURABILITY_NONE,
            ),
            (
                "ZARR_DURABILITY_FLUSH",
                zarr_durability::ZARR_DURABILITY_FLUSH,
            ),
            (
                "ZARR_DURABILITY_EACH_WRITE",
                zarr_durability::ZARR_DURABILITY_EACH_WRITE,
            ),
        ] {
            let seconds = (0..2)
                .map(|_| durable_write(&dir.join("zarr"), &data, chunk, level))
                .fold(f64::INFINITY, f64::min);
            println!(
                "    {name:30} {} ({:4.2}x plain)",
                rate(seconds),
                plain / seconds
            );
        }
    }
}

/// The filesystem store's own costs, in a fresh directory under `dir`.
fn store_costs(dir: &Path) {
    let dir = dir.join("store-costs");
    let _ = std::fs::remove_dir_all(&dir);
    println!("\nfilesystem store: one get of a 64-byte value (best of 3 x {GETS})");
    for depth in [1, 7] {
        println!(
            "  key of {depth} component(s): {:6.2} us per get",
            get_cost(&dir.join("keys"), depth)
        );
    }
    durability_costs(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--peak-read") {
        return peak_read(&args[1], &args[2], args[3].parse().unwrap());
    }
    let only_store = args.first().map(String::as_str) == Some("--store");
    if only_store {
        args.remove(0);
    }
    let dir = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data"));
    if only_store {
        return store_costs(&dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("plain")).unwrap();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("libzarr I/O benchmark: float32 {SHAPE:?}, chunks {CHUNK:?}, {} MiB, {cores} cores, data in {}", TOTAL_BYTES >> 20, dir.display());

    let mut data = common::field();
    let mut back = vec![0u8; TOTAL_BYTES];
    let memcpy = gbps(TOTAL_BYTES, best(3, || back.copy_from_slice(&data)));
    println!("\nlimits");
    println!("  memcpy                         {memcpy:6.2} GB/s");
    let mut chunks = Vec::new();
    for c in 0..TOTAL_BYTES / CHUNK_BYTES {
        let mut buf = Vec::with_capacity(CHUNK_BYTES);
        chunk_of(&data, c, &mut buf);
        chunks.push(buf);
    }
    let mut limits = Vec::new();
    for threads in THREADS {
        let tw = best(2, || plain_write(&dir.join("plain"), &data, threads));
        let tr = best(2, || plain_read(&dir.join("plain"), &mut back, threads));
        let (bc, bd) = blosc_raw(&chunks, threads);
        println!("  {threads} thread(s): plain file write {:6.2} GB/s, read {:6.2} GB/s; raw blosc lz4 compress {:6.2} GB/s, decompress {:6.2} GB/s",
            gbps(TOTAL_BYTES, tw), gbps(TOTAL_BYTES, tr), bc, bd);
        limits.push((gbps(TOTAL_BYTES, tw), gbps(TOTAL_BYTES, tr), bc, bd));
    }
    drop(chunks);
    let _ = std::fs::remove_dir_all(dir.join("plain"));

    println!("\nlibzarr through the C API (ratio to the limit on the same threads)");
    let dir_c = CString::new(dir.to_str().unwrap()).unwrap();
    let mut store = std::ptr::null_mut();
    unsafe {
        check(
            zarr_store_open_fs(dir_c.as_ptr(), zarr_mode::ZARR_MODE_A as i32, &mut store),
            "store",
        )
    };
    for (name, compressor) in [("uncompressed", "null"), ("blosc lz4 shuffle", BLOSC)] {
        for threads in THREADS {
            check(zarr_set_num_threads(threads), "threads");
            let array = unsafe { create(store, name.split(' ').next().unwrap(), compressor) };
            let tw = best(2, || unsafe { io(array, &mut data, true) });
            back.fill(0);
            let tr = best(2, || unsafe { io(array, &mut back, false) });
            assert!(back == data, "read back differs");
            let mut stored = 0u64;
            unsafe { check(zarr_array_nbytes_stored(array, &mut stored), "stored") };
            let (lw, lr, bc, bd) = limits[THREADS.iter().position(|&t| t == threads).unwrap()];
            let (rw, rr) = if compressor == "null" {
                (lw, lr)
            } else {
                (bc, bd)
            };
            println!("  {name:18} {threads} thread(s): write {:6.2} GB/s ({:4.2}x), read {:6.2} GB/s ({:4.2}x; {:4.2}x memcpy), stored {} MiB",
                gbps(TOTAL_BYTES, tw), gbps(TOTAL_BYTES, tw) / rw, gbps(TOTAL_BYTES, tr), gbps(TOTAL_BYTES, tr) / rr,
                gbps(TOTAL_BYTES, tr) / memcpy, stored >> 20);
            unsafe { zarr_array_free(array) };
        }
    }
    sharding(store, &mut data, &mut back);
    unsafe { zarr_store_free(store) };
    drop(back);
    drop(data);

    println!("\npeak memory of a full-array read (child process; output buffer already resident)");
    let exe = std::env::current_exe().unwrap();
    for name in ["uncompressed", "blosc"] {
        for threads in [1usize, 2] {
            let out = std::process::Command::new(&exe)
                .args([
                    "--peak-read",
                    dir.to_str().unwrap(),
                    name,
                    &threads.to_string(),
                ])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let v: Vec<u64> = text
                .split_whitespace()
                .filter_map(|s| s.parse().ok())
                .collect();
            if v.len() == 2 {
                let extra_mib = (v[1].saturating_sub(v[0])) as f64 / 1024.0;
                let bound_mib = (2 * threads * CHUNK_BYTES) as f64 / 1048576.0;
                println!("  {name:12} {threads} thread(s): {:7.1} MiB above the output buffer (bound: 2 chunks per worker = {bound_mib:.0} MiB)", extra_mib);
            } else {
                println!(
                    "  {name:12} {threads} thread(s): child failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    store_costs(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}
