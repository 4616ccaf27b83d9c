//! Icechunk time series: four float32 arrays of shape (T, 128, 128) (chunks of one step,
//! zstd) each grow by one step per step, the output of a simulation that commits every step.
//! Stored (a) in a plain directory, (b) in an Icechunk repository on local disk with a
//! commit per step, and, given an S3 endpoint, (c) as plain objects on S3 and (d) in an
//! Icechunk repository on S3 with a commit per step. Prints, for each, the time per step
//! (appends and commit), the time of the commit call alone, and the S3 requests per step
//! (in all and in the commit call alone).
//!
//! S3 requests are counted by the counting proxy of the object-store benchmark
//! (benches/s3/proxy.py): `ZARR_BENCH_S3` is the proxy's address (`http://127.0.0.1:PORT`,
//! bucket `bench`, any credentials), read before and after each step at its
//! `/__proxy__/stats` (answered by the proxy itself, not counted). Without it the S3 rows
//! are skipped. scripts/bench-icechunk.sh starts moto and the proxy and runs this.
//!
//! Run: `cargo bench --features icechunk --bench bench_icechunk [-- --steps N] [-- DIR]`:
//! 100 steps by default; DIR defaults to a new directory under target/. Figures are
//! printed, never asserted.

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{open_url, repository_of, Store};

/// Side of one step of each array (SIDE x SIDE float32 values: 64 KiB).
const SIDE: u64 = 128;
/// The arrays appended to together.
const ARRAYS: [&str; 4] = ["temperature", "pressure", "u", "v"];

/// A store of the benchmark and what it takes to open it.
struct Target {
    label: &'static str,
    url: String,
    options: Option<String>,
    committed: bool,
}

/// The counting proxy in front of an S3 server.
struct Proxy {
    host_port: String,
}

impl Proxy {
    /// The requests the proxy has passed on so far, by kind (GET, PUT, LIST, ...).
    fn counts(&self) -> Counts {
        let mut stream = TcpStream::connect(&self.host_port).expect("connect to the proxy");
        write!(
            stream,
            "GET /__proxy__/stats HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\n\r\n",
            self.host_port
        )
        .unwrap();
        // The proxy keeps the connection open: read the head, then Content-Length bytes.
        let mut answer = Vec::new();
        let mut byte = [0u8; 1];
        while !answer.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).expect("the proxy's answer");
            answer.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&answer).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .expect("a Content-Length");
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).unwrap();
        let stats: Value = serde_json::from_slice(&body).expect("the proxy's stats");
        stats["kinds"]
            .as_object()
            .expect("request counts by kind")
            .iter()
            .map(|(kind, n)| (kind.clone(), n.as_u64().expect("a request count")))
            .collect()
    }
}

/// S3 requests by kind.
type Counts = BTreeMap<String, u64>;

/// Adds the requests counted from `before` to `after` to `total`.
fn add_since(total: &mut Counts, before: &Counts, after: &Counts) {
    for (kind, n) in after {
        *total.entry(kind.clone()).or_default() += n - before.get(kind).copied().unwrap_or(0);
    }
}

/// `counts` per step, as "KIND n.n, ...", and their sum per step.
fn per_step(counts: &Counts, steps: u64) -> (String, f64) {
    let per = |n: u64| n as f64 / steps as f64;
    let kinds: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(kind, n)| format!("{kind} {:.1}", per(*n)))
        .collect();
    (kinds.join(", "), per(counts.values().sum()))
}

/// What one target measured over every step.
struct Figures {
    steps: Vec<Duration>,
    commits: Vec<Duration>,
    requests: Counts,
    commit_requests: Counts,
}

/// The values of array `k` at `step`: smooth, with noise in the low bits.
fn step_values(step: u64, k: usize) -> Vec<u8> {
    (0..SIDE * SIDE)
        .flat_map(|i| {
            let x = (i as f32) * 0.013 + step as f32 * 0.7 + k as f32;
            let noise = ((i.wrapping_mul(2654435761) ^ step) % 1000) as f32 * 1e-6;
            (x.sin() + noise).to_ne_bytes()
        })
        .collect()
}

fn create_arrays(store: &Arc<dyn Store>) -> Vec<Array> {
    ARRAYS
        .iter()
        .map(|name| {
            let mut builder = ArrayBuilder::new(vec![0, SIDE, SIDE], ElementType::Float32);
            builder.zarr_format(3).unwrap();
            builder
                .chunks(vec![1, SIDE, SIDE])
                .fill_value_json(serde_json::json!(0.0))
                .compressor(serde_json::json!({"id": "zstd", "level": 1}));
            builder
                .create(store.clone(), name, Mode::CreateNew)
                .expect("create an array")
        })
        .collect()
}

fn commit(store: &Arc<dyn Store>, message: &str) -> String {
    repository_of(store.as_ref())
        .expect("a repository")
        .commit(message)
        .expect("commit")
}

/// Runs the time series on `target`: arrays created (and committed) first, outside the
/// figures; then `steps` steps, each appending one step to every array, then committing.
fn run(target: &Target, steps: u64, proxy: Option<&Proxy>) -> Figures {
    let store = open_url(&target.url, Mode::Append, target.options.as_deref())
        .unwrap_or_else(|e| panic!("open {}: {e}", target.url));
    let arrays = create_arrays(&store);
    if target.committed {
        commit(&store, "arrays");
    }
    let data: Vec<Vec<Vec<u8>>> = (0..steps)
        .map(|step| (0..ARRAYS.len()).map(|k| step_values(step, k)).collect())
        .collect();
    let mut figures = Figures {
        steps: Vec::new(),
        commits: Vec::new(),
        requests: Counts::new(),
        commit_requests: Counts::new(),
    };
    for (step, values) in data.iter().enumerate() {
        let before = proxy.map(Proxy::counts).unwrap_or_default();
        let started = Instant::now();
        for (array, values) in arrays.iter().zip(values) {
            array
                .append(0, &[1, SIDE, SIDE], ElementType::Float32, Order::C, values)
                .expect("append");
        }
        let mut took = started.elapsed();
        if target.committed {
            // Counts are read outside the timed calls.
            let appended = proxy.map(Proxy::counts).unwrap_or_default();
            let committing = Instant::now();
            commit(&store, &format!("step {step}"));
            let commit_took = committing.elapsed();
            figures.commits.push(commit_took);
            took += commit_took;
            let committed = proxy.map(Proxy::counts).unwrap_or_default();
            add_since(&mut figures.commit_requests, &appended, &committed);
        }
        figures.steps.push(took);
        let after = proxy.map(Proxy::counts).unwrap_or_default();
        add_since(&mut figures.requests, &before, &after);
    }
    drop(arrays);
    check(target, steps, &data[data.len() - 1]);
    figures
}

/// Reads the last step back through a new read-only store: the run stored what it timed.
fn check(target: &Target, steps: u64, last: &[Vec<u8>]) {
    let store = open_url(&target.url, Mode::Read, target.options.as_deref()).unwrap();
    for (name, expected) in ARRAYS.iter().zip(last) {
        let array = Array::open(store.clone(), name, Mode::Read).unwrap();
        assert_eq!(array.metadata().shape, vec![steps, SIDE, SIDE], "{name}");
        let mut out = vec![0u8; expected.len()];
        array
            .read(
                &[steps - 1, 0, 0],
                &[1, SIDE, SIDE],
                ElementType::Float32,
                Order::C,
                &mut out,
            )
            .unwrap();
        assert!(&out == expected, "{}: {name} differs", target.label);
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mean_ms(ds: &[Duration]) -> f64 {
    ds.iter().map(|d| ms(*d)).sum::<f64>() / ds.len().max(1) as f64
}

fn median_ms(ds: &[Duration]) -> f64 {
    let mut v: Vec<f64> = ds.iter().map(|d| ms(*d)).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let mut steps = 100u64;
    let mut dir: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--steps" => steps = args.next().and_then(|v| v.parse().ok()).expect("--steps N"),
            "--bench" => {}
            other if other.starts_with('-') => panic!("unknown option {other}"),
            other => dir = Some(PathBuf::from(other)),
        }
    }
    assert!(steps > 0, "--steps must be at least 1");
    let dir =
        dir.unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-icechunk"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();

    let mut targets = vec![
        Target {
            label: "filesystem",
            url: dir.join("plain").display().to_string(),
            options: None,
            committed: false,
        },
        Target {
            label: "icechunk, local disk",
            url: format!("icechunk://{}", dir.join("repo").display()),
            options: None,
            committed: true,
        },
    ];
    let endpoint = std::env::var("ZARR_BENCH_S3").ok();
    let proxy = endpoint.as_ref().map(|e| Proxy {
        host_port: e.trim_start_matches("http://").trim_end_matches('/').into(),
    });
    match &endpoint {
        Some(endpoint) => {
            let options = format!(
                r#"{{"endpoint": "{endpoint}", "region": "us-east-1",
                    "access_key_id": "bench-key", "secret_access_key": "bench-secret"}}"#
            );
            // A prefix of its own per run: the bucket may hold earlier runs.
            let run = std::process::id();
            targets.push(Target {
                label: "S3 (moto)",
                url: format!("s3://bench/icechunk-series-{run}/plain"),
                options: Some(options.clone()),
                committed: false,
            });
            targets.push(Target {
                label: "icechunk, S3 (moto)",
                url: format!("icechunk+s3://bench/icechunk-series-{run}/repo"),
                options: Some(options),
                committed: true,
            });
        }
        None => eprintln!("bench_icechunk: ZARR_BENCH_S3 is not set: the S3 rows are skipped"),
    }

    println!(
        "icechunk time series: {steps} steps x {} arrays, each appending one ({SIDE}, {SIDE}) \
         float32 step (64 KiB, zstd) per step",
        ARRAYS.len()
    );
    println!(
        "{:<22} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10}",
        "store", "ms/step", "ms/step p50", "commit ms", "commit p50", "req/step", "in commit"
    );
    let mut kinds_lines = Vec::new();
    for target in &targets {
        let on_s3 = target.options.is_some();
        let figures = run(target, steps, if on_s3 { proxy.as_ref() } else { None });
        let (commit_mean, commit_median) = if target.committed {
            (
                format!("{:.2}", mean_ms(&figures.commits)),
                format!("{:.2}", median_ms(&figures.commits)),
            )
        } else {
            ("-".into(), "-".into())
        };
        let (kinds, requests) = per_step(&figures.requests, steps);
        let (commit_kinds, commit_requests) = per_step(&figures.commit_requests, steps);
        let (requests, in_commit) = match (on_s3, target.committed) {
            (false, _) => ("-".into(), "-".into()),
            (true, false) => (format!("{requests:.1}"), "-".into()),
            (true, true) => (format!("{requests:.1}"), format!("{commit_requests:.1}")),
        };
        if on_s3 {
            kinds_lines.push(format!("{}: {kinds}", target.label));
            if target.committed {
                kinds_lines.push(format!("{}, commit call: {commit_kinds}", target.label));
            }
        }
        println!(
            "{:<22} {:>12.2} {:>12.2} {:>12} {:>12} {:>10} {:>10}",
            target.label,
            mean_ms(&figures.steps),
            median_ms(&figures.steps),
            commit_mean,
            commit_median,
            requests,
            in_commit
        );
    }
    if !kinds_lines.is_empty() {
        println!("S3 requests per step by kind (counted by the proxy):");
        for line in kinds_lines {
            println!("  {line}");
        }
    }
}
