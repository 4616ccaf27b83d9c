//! zarrs doing the workloads of libzarr's `benches/bench_peers.rs` on the same data, one
//! workload per process, printing one JSON line: the seconds it took and the process's
//! peak resident memory (VmHWM) in MiB — the protocol of `../tensorstore_bench.py`.
//!
//! ```text
//! zarrs-peer OP STORE DATA CODEC [ARGS]
//! ```
//!
//! OP: `write` (the whole array from the raw float32 file DATA), `read` (the whole array,
//! checked against DATA), `rmw` (write the region `START:COUNT` given in ARGS, the data
//! doubled), `random` (the 16^3 regions listed in the file ARGS). CODEC: `blosc`, `zstd`,
//! `none`, or `sharded` (256^3 shards of 32^3 blosc chunks). zarrs' filesystem store
//! syncs every file it writes; the unsynced class runs this under `eatmydata`.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use zarrs::array::{Array, ArrayMetadata};
use zarrs::filesystem::FilesystemStore;

const SHAPE: [u64; 3] = [1024, 1024, 256];

/// The v3 `zarr.json` libzarr and tensorstore write for CODEC.
fn metadata(codec: &str) -> serde_json::Value {
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let blosc = json!({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
        "shuffle": "shuffle", "typesize": 4, "blocksize": 0}});
    let (chunk, codecs) = match codec {
        "blosc" => (64, json!([bytes, blosc])),
        "zstd" => (
            64,
            json!([bytes, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
        ),
        "none" => (64, json!([bytes])),
        "sharded" => (
            256,
            json!([{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [32, 32, 32],
                "codecs": [bytes, blosc],
                "index_codecs": [bytes, {"name": "crc32c"}],
                "index_location": "end"}}]),
        ),
        other => panic!("unknown codec {other}"),
    };
    json!({"zarr_format": 3, "node_type": "array", "shape": SHAPE, "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk, chunk, chunk]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0.0, "codecs": codecs})
}

fn load(path: &str) -> Vec<f32> {
    let bytes = std::fs::read(path).expect("read DATA");
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

fn ranges(start: [u64; 3], count: [u64; 3]) -> [Range<u64>; 3] {
    [0, 1, 2].map(|d| start[d]..start[d] + count[d])
}

fn triple(text: &str) -> [u64; 3] {
    let v: Vec<u64> = text.split(',').map(|s| s.parse().unwrap()).collect();
    [v[0], v[1], v[2]]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [op, path, data_path, codec] = [0, 1, 2, 3].map(|i| args[i].as_str());
    let store = || Arc::new(FilesystemStore::new(path).expect("open store"));
    let all = ranges([0; 3], SHAPE);
    let started;
    match op {
        "write" => {
            let data = load(data_path);
            if std::path::Path::new(path).exists() {
                std::fs::remove_dir_all(path).unwrap();
            }
            let meta: ArrayMetadata = serde_json::from_value(metadata(codec)).unwrap();
            started = Instant::now();
            let array = Array::new_with_metadata(store(), "/", meta).unwrap();
            array.store_metadata().unwrap();
            array.store_array_subset(&all, &data).unwrap();
        }
        "read" => {
            let data = load(data_path);
            let array = Array::open(store(), "/").unwrap();
            started = Instant::now();
            let out: Vec<f32> = array.retrieve_array_subset(&all).unwrap();
            let seconds = started.elapsed().as_secs_f64();
            assert!(out == data, "zarrs read other data");
            return report(seconds);
        }
        "rmw" => {
            let data = load(data_path);
            let (first, count) = args[4].split_once(':').unwrap();
            let (first, count) = (triple(first), triple(count));
            let mut values = Vec::with_capacity(count.iter().product::<u64>() as usize);
            for z in first[0]..first[0] + count[0] {
                for y in first[1]..first[1] + count[1] {
                    let at = ((z * SHAPE[1] + y) * SHAPE[2] + first[2]) as usize;
                    values.extend(data[at..at + count[2] as usize].iter().map(|v| v * 2.0));
                }
            }
            let array = Array::open(store(), "/").unwrap();
            started = Instant::now();
            array
                .store_array_subset(&ranges(first, count), &values)
                .unwrap();
        }
        "random" => {
            let positions = std::fs::read_to_string(&args[4]).unwrap();
            let starts: Vec<[u64; 3]> = positions
                .lines()
                .map(|l| triple(&l.split_whitespace().collect::<Vec<_>>().join(",")))
                .collect();
            let array = Array::open(store(), "/").unwrap();
            started = Instant::now();
            for s in starts {
                let out: Vec<f32> = array.retrieve_array_subset(&ranges(s, [16; 3])).unwrap();
                std::hint::black_box(out);
            }
        }
        other => panic!("unknown operation {other}"),
    }
    report(started.elapsed().as_secs_f64());
}

fn report(seconds: f64) {
    println!("{}", json!({"seconds": seconds, "peak_mib": peak_mib()}));
}
