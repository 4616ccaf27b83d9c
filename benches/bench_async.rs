//! Output hidden behind computation: a loop of time steps, each a busy compute phase as
//! long as one step's output takes, then the step's output (a float32 (1, 512, 512) slab,
//! chunks of (1, 128, 128), zstd, into a filesystem store). Blocking, every step waits for
//! its write; non-blocking, the write runs behind the next step's computation and the step
//! waits only for the write before it (two buffers in turn). Prints both loops' times and
//! the fraction of the output time the non-blocking loop hid.
//!
//! Run: `cargo bench --bench bench_async [-- --quick] [-- DIR]`: 32 steps (`--quick`: 8).
//! DIR defaults to a new directory under target/. Figures are printed, never asserted
//! (they depend on the cores free for the encoding while the computation runs).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::pending::{Layout, Request};
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{FilesystemStore, Store};

const SIDE: u64 = 512;

/// Step `t`'s values: smooth, so the compressor has work to do.
fn step(t: u64) -> Vec<u8> {
    (0..SIDE * SIDE)
        .flat_map(|i| ((i as f32 * 0.001 + t as f32).sin()).to_ne_bytes())
        .collect()
}

/// Spins for `d`: the simulation's computation, on the calling thread.
fn compute(d: Duration) -> f64 {
    let end = Instant::now() + d;
    let mut x = 0.0f64;
    while Instant::now() < end {
        for i in 0..1000 {
            x = (x + i as f64).sqrt();
        }
    }
    x
}

fn create(store: Arc<dyn Store>, name: &str, steps: u64) -> Arc<Array> {
    let mut builder = ArrayBuilder::new(vec![steps, SIDE, SIDE], ElementType::Float32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![1, 128, 128])
        .compressor(serde_json::json!({"id": "zstd", "level": 3}));
    Arc::new(builder.create(store, name, Mode::Overwrite).unwrap())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let steps: u64 = if args.iter().any(|a| a == "--quick") {
        8
    } else {
        32
    };
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench_async"));
    std::fs::create_dir_all(&dir).unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(&dir, true, true).unwrap());
    let data: Vec<Vec<u8>> = (0..2).map(step).collect();
    let shape = [1, SIDE, SIDE];

    // The output time of one step, alone.
    let a = create(store.clone(), "blocking", steps);
    let started = Instant::now();
    for t in 0..steps {
        a.write(
            &[t, 0, 0],
            &shape,
            ElementType::Float32,
            Order::C,
            &data[t as usize % 2],
        )
        .unwrap();
    }
    let output = started.elapsed() / steps as u32;

    let mut sink = 0.0;
    let started = Instant::now();
    for t in 0..steps {
        sink += compute(output);
        a.write(
            &[t, 0, 0],
            &shape,
            ElementType::Float32,
            Order::C,
            &data[t as usize % 2],
        )
        .unwrap();
    }
    let blocking = started.elapsed();

    let b = create(store, "nonblocking", steps);
    let started = Instant::now();
    let mut previous: Option<Request> = None;
    for t in 0..steps {
        sink += compute(output);
        if let Some(r) = previous.take() {
            r.wait().unwrap();
        }
        let buf = Box::new(data[t as usize % 2].clone());
        let layout = Layout::Dense(Order::C);
        previous = Some(
            b.write_async(
                vec![t, 0, 0],
                shape.to_vec(),
                ElementType::Float32,
                layout,
                buf,
            )
            .unwrap(),
        );
    }
    if let Some(r) = previous {
        r.wait().unwrap();
    }
    let nonblocking = started.elapsed();

    let total_output = output.as_secs_f64() * steps as f64;
    let hidden = (blocking.as_secs_f64() - nonblocking.as_secs_f64()) / total_output;
    println!(
        "{steps} steps, output {:.1} ms/step, compute as long; pool {} threads",
        output.as_secs_f64() * 1e3,
        zarr::io::pool::num_threads()
    );
    println!("blocking     {:.3} s", blocking.as_secs_f64());
    println!("non-blocking {:.3} s", nonblocking.as_secs_f64());
    println!("output time hidden: {:.0} %", hidden * 100.0);
    std::hint::black_box(sink);
}
