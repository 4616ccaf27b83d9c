//! Crash safety: a writer process rewrites chunks, attributes and the shape of arrays in a
//! filesystem store and is killed with SIGKILL at random moments; after every kill the
//! arrays open, every chunk decodes, and each chunk holds wholly its old or its new
//! content (every element of a chunk is the generation that wrote it, so a mix shows).
//!
//! One kill in five goes to a zip store instead: the writer opens an existing archive for
//! appending, adds arrays, closes it and starts again, and is killed at a random moment (now
//! and then while closing); after every kill the archive opens, every entry committed before
//! reads back byte for byte, every array of a session closed before the kill is there and
//! whole, and the session in flight is there entirely or not at all.
//!
//! This file is its own test harness: run normally it is the driver, and the driver starts
//! this same executable as the writer (`ZARR_CRASH_WRITER` or `ZARR_CRASH_ZIP` set).
//! `ZARR_CRASH_KILLS` sets the number of kills (default 20; the crash-safety stage of
//! scripts/test.sh uses more).

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::pending::Layout;
use zarr::node::{Array, ArrayBuilder, Mode, Node};
use zarr::store::{FilesystemStore, Store, ZipMode, ZipStore};

/// Chunk edge; arrays are 2 x 2 chunks, or 2 x 1 while shrunk.
const EDGE: u64 = 16;
const FULL: [u64; 2] = [2 * EDGE, 2 * EDGE];
const NARROW: [u64; 2] = [2 * EDGE, EDGE];
/// Chunk edge of the arrays in the zip (2 x 2 chunks each).
const ZIP_EDGE: u64 = 8;
/// Every how many kills one goes to the zip.
const ZIP_EVERY: u64 = 5;

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One operation of the writer, announced before it starts and confirmed when done.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    /// Chunk (row, col) rewritten with every element `generation`.
    Chunk(u64, u64),
    /// Every chunk of the current shape rewritten, one after the other.
    All,
    /// Attributes replaced: `generation` and a padding string.
    Attrs,
    /// Shape changed to `FULL` (true) or `NARROW`.
    Resize(bool),
}

fn main() {
    if let Ok(dir) = std::env::var("ZARR_CRASH_WRITER") {
        writer(Path::new(&dir));
        return;
    }
    if let Ok(path) = std::env::var("ZARR_CRASH_ZIP") {
        zip_writer(Path::new(&path));
        return;
    }
    if let Ok(dir) = std::env::var("ZARR_CRASH_APPEND") {
        append_writer(Path::new(&dir), false);
        return;
    }
    if let Ok(dir) = std::env::var("ZARR_CRASH_APPEND_ASYNC") {
        append_writer(Path::new(&dir), true);
        return;
    }
    #[cfg(feature = "icechunk")]
    if let Ok(dir) = std::env::var("ZARR_CRASH_ICECHUNK") {
        icechunk::committer(Path::new(&dir));
        return;
    }
    let kills: u64 = std::env::var("ZARR_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    driver(kills);
}

// ---- the writer ---------------------------------------------------------------------

fn writer(dir: &Path) {
    let generation: u64 = std::env::var("ZARR_CRASH_GEN").unwrap().parse().unwrap();
    let seed: u64 = std::env::var("ZARR_CRASH_SEED").unwrap().parse().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir, true, false).unwrap());
    let array = Array::open(store, "a", Mode::ReadWrite).unwrap();
    let mut rng = Rng(seed | 1);
    let mut out = std::io::stdout().lock();
    for generation in generation.. {
        let shape = array.metadata().shape.clone();
        let cols = shape[1] / EDGE;
        let op = match rng.below(10) {
            0..=5 => Op::Chunk(rng.below(2), rng.below(cols)),
            6 => Op::All,
            7 | 8 => Op::Attrs,
            _ => Op::Resize(cols == 1),
        };
        writeln!(out, "@op {generation} {op:?}").unwrap();
        out.flush().unwrap();
        let fill = |n: u64| -> Vec<u8> {
            (0..n)
                .flat_map(|_| (generation as u32).to_ne_bytes())
                .collect()
        };
        match op {
            Op::Chunk(r, c) => array
                .write(
                    &[r * EDGE, c * EDGE],
                    &[EDGE, EDGE],
                    ElementType::UInt32,
                    Order::C,
                    &fill(EDGE * EDGE),
                )
                .unwrap(),
            Op::All => array
                .write(
                    &[0, 0],
                    &shape,
                    ElementType::UInt32,
                    Order::C,
                    &fill(shape[0] * shape[1]),
                )
                .unwrap(),
            Op::Attrs => {
                let mut attrs = Map::new();
                attrs.insert("generation".into(), json!(generation));
                attrs.insert(
                    "padding".into(),
                    json!("x".repeat(4096 + generation as usize % 977)),
                );
                array.set_attributes(&attrs).unwrap();
            }
            Op::Resize(grow) => array.resize(if grow { &FULL } else { &NARROW }).unwrap(),
        }
        writeln!(out, "@ok {generation}").unwrap();
        out.flush().unwrap();
    }
}

/// Adds the array `z<generation>` to a zip store: 2 x 2 zlib chunks, every element
/// `generation`.
fn write_zip_array(store: Arc<dyn Store>, generation: u64) {
    let shape = vec![2 * ZIP_EDGE; 2];
    let mut builder = ArrayBuilder::new(shape.clone(), ElementType::UInt32);
    builder
        .chunks(vec![ZIP_EDGE; 2])
        .compressor(json!({"id": "zlib", "level": 1}));
    let array = builder
        .create(store, &format!("z{generation}"), Mode::CreateNew)
        .unwrap();
    let data: Vec<u8> = (0..shape[0] * shape[1])
        .flat_map(|_| (generation as u32).to_ne_bytes())
        .collect();
    array
        .write(&[0, 0], &shape, ElementType::UInt32, Order::C, &data)
        .unwrap();
}

/// The zip writer: sessions of opening the archive for appending, adding one to three
/// arrays (announced when written) and closing (announced before and after).
fn zip_writer(path: &Path) {
    let mut generation: u64 = std::env::var("ZARR_CRASH_GEN").unwrap().parse().unwrap();
    let seed: u64 = std::env::var("ZARR_CRASH_SEED").unwrap().parse().unwrap();
    let mut rng = Rng(seed | 1);
    let mut out = std::io::stdout().lock();
    writeln!(out, "@zip-start").unwrap();
    out.flush().unwrap();
    loop {
        let deflate = rng.below(2) == 1;
        let store = Arc::new(ZipStore::open(path, ZipMode::Append, deflate).unwrap());
        for _ in 0..1 + rng.below(3) {
            write_zip_array(store.clone(), generation);
            writeln!(out, "@zip-array {generation}").unwrap();
            out.flush().unwrap();
            generation += 1;
        }
        writeln!(out, "@zip-closing").unwrap();
        out.flush().unwrap();
        store.close().unwrap();
        writeln!(out, "@zip-closed").unwrap();
        out.flush().unwrap();
    }
}

// ---- the driver ---------------------------------------------------------------------

/// What the driver knows of one array: its shape, each chunk's generation (0 = fill) and
/// the attributes' generation.
#[derive(Debug, Clone)]
struct Model {
    shape: Vec<u64>,
    chunks: BTreeMap<(u64, u64), u64>,
    attrs: u64,
}

/// Parses the writer's `@op` lines: (generation, operation).
fn parse_op(line: &str) -> Option<(u64, Op)> {
    let rest = line.strip_prefix("@op ")?;
    let (generation, op) = rest.split_once(' ')?;
    let op = if let Some(args) = op.strip_prefix("Chunk(") {
        let (r, c) = args.trim_end_matches(')').split_once(", ")?;
        Op::Chunk(r.parse().ok()?, c.parse().ok()?)
    } else if op == "All" {
        Op::All
    } else if op == "Attrs" {
        Op::Attrs
    } else {
        Op::Resize(op == "Resize(true)")
    };
    Some((generation.parse().ok()?, op))
}

/// The model after `op` (of `generation`) completed.
fn apply(model: &mut Model, generation: u64, op: &Op) {
    let cols = model.shape[1] / EDGE;
    match op {
        Op::Chunk(r, c) => {
            model.chunks.insert((*r, *c), generation);
        }
        Op::All => {
            for r in 0..2 {
                for c in 0..cols {
                    model.chunks.insert((r, c), generation);
                }
            }
        }
        Op::Attrs => model.attrs = generation,
        Op::Resize(grow) => {
            model.shape = if *grow {
                FULL.to_vec()
            } else {
                NARROW.to_vec()
            };
            if !grow {
                for r in 0..2 {
                    model.chunks.insert((r, 1), 0);
                }
            }
        }
    }
}

fn create(dir: &Path, format: u8) -> Model {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir, true, true).unwrap());
    let mut builder = ArrayBuilder::new(FULL.to_vec(), ElementType::UInt32);
    builder
        .zarr_format(format.into())
        .unwrap()
        .chunks(vec![EDGE, EDGE]);
    if format == 2 {
        builder.compressor(json!({"id": "zlib", "level": 1}));
    }
    builder.create(store, "a", Mode::CreateNew).unwrap();
    Model {
        shape: FULL.to_vec(),
        chunks: (0..2)
            .flat_map(|r| (0..2).map(move |c| ((r, c), 0)))
            .collect(),
        attrs: 0,
    }
}

/// Opens the array after a kill and checks it against `before` (the model after the last
/// completed operation) and the operation in flight; returns the model of what is there
/// and the number of checks made.
fn verify(dir: &Path, before: &Model, in_flight: Option<&(u64, Op)>) -> (Model, u64) {
    let mut checks = 0;
    let mut allowed = vec![before.clone()];
    if let Some((generation, op)) = in_flight {
        let mut after = before.clone();
        apply(&mut after, *generation, op);
        allowed.push(after);
    }
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir, false, false).unwrap());
    for key in store.list().unwrap() {
        assert!(!key.contains(".zarr-tmp."), "temporary file {key:?} listed");
    }
    let array = Array::open(store, "a", Mode::Read).unwrap_or_else(|e| {
        panic!(
            "{}: the array does not open after a kill: {e}",
            dir.display()
        )
    });
    let shape = array.metadata().shape.clone();
    assert!(
        allowed.iter().any(|m| m.shape == shape),
        "shape {shape:?} is neither the old nor the new one ({allowed:?})"
    );
    checks += 1;
    let attrs = array.attributes().expect("attributes parse after a kill");
    let attrs_generation = attrs.get("generation").and_then(Value::as_u64).unwrap_or(0);
    assert!(
        allowed.iter().any(|m| m.attrs == attrs_generation),
        "attributes of generation {attrs_generation} ({allowed:?})"
    );
    checks += 1;
    let mut data = vec![0u8; (shape[0] * shape[1] * 4) as usize];
    array
        .read(&[0, 0], &shape, ElementType::UInt32, Order::C, &mut data)
        .unwrap_or_else(|e| {
            panic!(
                "{}: a chunk does not decode after a kill: {e}",
                dir.display()
            )
        });
    let values: Vec<u32> = data
        .chunks(4)
        .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    let mut observed = Model {
        shape: shape.clone(),
        chunks: before.chunks.clone(),
        attrs: attrs_generation,
    };
    for r in 0..shape[0] / EDGE {
        for c in 0..shape[1] / EDGE {
            let first = values[(r * EDGE * shape[1] + c * EDGE) as usize];
            for i in 0..EDGE {
                for j in 0..EDGE {
                    let v = values[((r * EDGE + i) * shape[1] + c * EDGE + j) as usize];
                    assert_eq!(
                        v, first,
                        "chunk ({r}, {c}) mixes generations {first} and {v}"
                    );
                }
            }
            let first = u64::from(first);
            // A chunk of the shrunk part may be erased (fill) while the shape is still old.
            let erasable = matches!(in_flight, Some((_, Op::Resize(false)))) && c == 1;
            assert!(
                allowed.iter().any(|m| m.chunks[&(r, c)] == first) || (erasable && first == 0),
                "chunk ({r}, {c}) holds generation {first}, neither old nor new ({allowed:?})"
            );
            observed.chunks.insert((r, c), first);
            checks += 1;
        }
    }
    if shape[1] == EDGE {
        for r in 0..2 {
            observed.chunks.insert((r, 1), 0);
        }
    }
    (observed, checks)
}

/// Starts the writer with `env`, waits until it is at work, lets it run a random while,
/// kills it with SIGKILL and returns the lines it wrote.
fn run_and_kill(env: (&str, &Path), generation: u64, rng: &mut Rng) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(env.0, env.1)
        .env("ZARR_CRASH_GEN", generation.to_string())
        .env("ZARR_CRASH_SEED", rng.next().to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let reader = {
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().push(line);
            }
        })
    };
    // Wait until the writer is at work, then let it run a random while.
    let deadline = Instant::now() + Duration::from_secs(30);
    while lines.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the writer never started");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the writer exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_micros(rng.below(40_000)));
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    let lines = lines.lock().unwrap().clone();
    lines
}

/// What the driver knows of the zip: every entry checked after the last kill (key →
/// bytes) and the generations of its arrays.
#[derive(Debug, Default)]
struct ZipModel {
    entries: BTreeMap<String, Vec<u8>>,
    arrays: BTreeSet<u64>,
}

/// What the zip writer reported before its kill: arrays of the sessions it closed, and the
/// arrays of the session in flight with whether it had started closing.
#[derive(Debug, Default)]
struct ZipReport {
    closed: BTreeSet<u64>,
    in_flight: BTreeSet<u64>,
    closing: bool,
}

fn parse_zip_lines(lines: &[String]) -> ZipReport {
    let mut report = ZipReport::default();
    for line in lines {
        if let Some(generation) = line.strip_prefix("@zip-array ") {
            report.in_flight.insert(generation.parse().unwrap());
        } else if line == "@zip-closing" {
            report.closing = true;
        } else if line == "@zip-closed" {
            report.closed.append(&mut report.in_flight);
            report.closing = false;
        }
    }
    report
}

/// Creates the zip holding two arrays (generations 1 and 2) and returns its model.
fn create_zip(path: &Path) -> ZipModel {
    let store =
        Arc::new(ZipStore::open(path, ZipMode::Create { overwrite: false }, false).unwrap());
    for generation in [1, 2] {
        write_zip_array(store.clone(), generation);
    }
    store.close().unwrap();
    let mut model = ZipModel::default();
    let report = ZipReport {
        closed: BTreeSet::from([1, 2]),
        ..ZipReport::default()
    };
    verify_zip(path, &mut model, &report);
    model
}

/// Opens the zip after a kill and checks it against `model` and what the writer reported;
/// updates the model to what is there and returns the number of checks made.
fn verify_zip(path: &Path, model: &mut ZipModel, report: &ZipReport) -> u64 {
    let store: Arc<dyn Store> = Arc::new(
        ZipStore::open(path, ZipMode::Read, false)
            .unwrap_or_else(|e| panic!("the zip does not open after a kill: {e}")),
    );
    let mut checks = 0;
    for (key, value) in &model.entries {
        let read = store
            .get(key)
            .unwrap_or_else(|e| panic!("{key:?} after a kill: {e}"));
        assert!(read.as_ref() == Some(value), "{key:?} changed after a kill");
        checks += 1;
    }
    let present: BTreeSet<u64> = store
        .list_dir("")
        .unwrap()
        .prefixes
        .iter()
        .map(|name| name.strip_prefix('z').unwrap().parse().unwrap())
        .collect();
    let committed: BTreeSet<u64> = model.arrays.union(&report.closed).copied().collect();
    let added: BTreeSet<u64> = present.difference(&committed).copied().collect();
    assert!(
        committed.is_subset(&present),
        "arrays {:?} committed before the kill are missing",
        committed.difference(&present).collect::<Vec<_>>()
    );
    assert!(
        added.is_empty() || (report.closing && added == report.in_flight),
        "arrays {added:?} appeared; the session in flight wrote {:?} (closing: {})",
        report.in_flight,
        report.closing
    );
    for &generation in present.difference(&model.arrays) {
        let array = Array::open(store.clone(), &format!("z{generation}"), Mode::Read).unwrap();
        let shape = array.metadata().shape.clone();
        let mut data = vec![0u8; (shape[0] * shape[1] * 4) as usize];
        array
            .read(&[0, 0], &shape, ElementType::UInt32, Order::C, &mut data)
            .unwrap();
        assert!(
            data.chunks(4)
                .all(|b| u32::from_ne_bytes(b.try_into().unwrap()) == generation as u32),
            "array z{generation} is not whole after a kill"
        );
        checks += 1;
    }
    for key in store.list().unwrap() {
        if let std::collections::btree_map::Entry::Vacant(slot) = model.entries.entry(key) {
            let value = store.get(slot.key()).unwrap().unwrap();
            slot.insert(value);
        }
    }
    model.arrays = present;
    checks
}

fn driver(kills: u64) {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let dirs = [dir.path().join("v2"), dir.path().join("v3")];
    let mut models = [create(&dirs[0], 2), create(&dirs[1], 3)];
    std::fs::create_dir(dir.path().join("zip")).unwrap();
    let zip = dir.path().join("zip").join("crash.zip");
    let mut zip_model = create_zip(&zip);
    let mut generation = 3u64;
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let (mut checks, mut in_flight_kills, mut completed_ops) = (0u64, 0u64, 0u64);
    let (mut zip_kills, mut closing_kills, mut zip_sessions) = (0u64, 0u64, 0u64);
    for round in 0..kills {
        if round % ZIP_EVERY == ZIP_EVERY - 1 {
            let lines = run_and_kill(("ZARR_CRASH_ZIP", &zip), generation, &mut rng);
            let report = parse_zip_lines(&lines);
            if let Some(&last) = report.closed.union(&report.in_flight).max() {
                generation = generation.max(last + 1);
            }
            zip_kills += 1;
            closing_kills += u64::from(report.closing);
            zip_sessions += lines.iter().filter(|l| *l == "@zip-closed").count() as u64;
            checks += verify_zip(&zip, &mut zip_model, &report);
            continue;
        }
        let which = (round % 2) as usize;
        let lines = run_and_kill(("ZARR_CRASH_WRITER", &dirs[which]), generation, &mut rng);
        let mut pending: Option<(u64, Op)> = None;
        for line in lines.iter() {
            if let Some(op) = parse_op(line) {
                pending = Some(op);
            } else if let Some(done) = line.strip_prefix("@ok ") {
                let (g, op) = pending.take().expect("@ok follows @op");
                assert_eq!(done.parse::<u64>().unwrap(), g);
                apply(&mut models[which], g, &op);
                completed_ops += 1;
            }
            if let Some((g, _)) = &pending {
                generation = generation.max(g + 1);
            }
        }
        in_flight_kills += u64::from(pending.is_some());
        let (observed, n) = verify(&dirs[which], &models[which], pending.as_ref());
        models[which] = observed;
        checks += n;
    }
    // Streaming appends: a writer appends steps to a sharded array, flushing now and then,
    // and is killed; every step of the stored shape, and at least every flushed one, reads
    // back exactly.
    let append_dir = dir.path().join("append");
    create_appended(&append_dir);
    let (mut append_kills, mut appended, mut append_checks) = (0u64, 0u64, 0u64);
    for _ in 0..(kills / ZIP_EVERY).max(4) {
        let lines = run_and_kill(("ZARR_CRASH_APPEND", &append_dir), 0, &mut rng);
        let flushed = lines
            .iter()
            .filter_map(|l| l.strip_prefix("@flushed ")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        let (steps, n) = verify_appended(&append_dir, flushed);
        append_kills += 1;
        appended = steps;
        append_checks += n;
    }
    checks += append_checks;
    println!(
        "crash safety: {append_kills} kills of a streaming appender, {appended} steps kept, \
         {append_checks} checks"
    );
    // The same with non-blocking appends: every step whose request was waited for and
    // flushed reads back exactly, whatever was in flight when the writer was killed.
    let async_dir = dir.path().join("append-async");
    create_appended(&async_dir);
    let (mut async_kills, mut async_steps, mut async_checks) = (0u64, 0u64, 0u64);
    for _ in 0..(kills / ZIP_EVERY).max(4) {
        let lines = run_and_kill(("ZARR_CRASH_APPEND_ASYNC", &async_dir), 0, &mut rng);
        let flushed = lines
            .iter()
            .filter_map(|l| l.strip_prefix("@flushed ")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        let (steps, n) = verify_appended(&async_dir, flushed);
        async_kills += 1;
        async_steps = steps;
        async_checks += n;
    }
    checks += async_checks;
    println!(
        "crash safety: {async_kills} kills of a non-blocking appender, {async_steps} steps \
         kept, {async_checks} checks"
    );
    #[cfg(feature = "icechunk")]
    {
        checks += icechunk::drive((kills / ZIP_EVERY).max(4), dir.path(), &mut rng);
    }
    let leftovers = count_temp_files(dir.path());
    println!(
        "crash safety: {kills} kills ({in_flight_kills} during an operation; {zip_kills} of a \
         zip writer, {closing_kills} while closing), {completed_ops} operations and \
         {zip_sessions} zip sessions completed, {} zip entries kept, {checks} checks passed, \
         {leftovers} leftover temporary files ignored, {:.1}s",
        zip_model.entries.len(),
        started.elapsed().as_secs_f64()
    );
    println!("1 passed, 0 failed");
}

// ---- streaming appends ---------------------------------------------------------------

/// Elements of one appended step (8 x 8) and the shard depth along the growing axis.
const STEP: u64 = 64;
const APPEND_DEPTH: u64 = 4;

fn create_appended(dir: &Path) {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir, true, true).unwrap());
    let mut builder = ArrayBuilder::new(vec![0, 8, 8], ElementType::UInt32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![1, 4, 4])
        .shard_shape(vec![APPEND_DEPTH, 8, 8])
        .fill_value_json(json!(0))
        .compressor(json!({"id": "zstd", "level": 1}));
    builder.create(store, "t", Mode::Overwrite).unwrap();
}

/// Step `t`'s elements: t * 64 + i + 1.
fn appended_step(t: u64) -> Vec<u32> {
    (0..STEP).map(|i| (t * STEP + i + 1) as u32).collect()
}

/// Appends steps from the stored shape on, flushing after a random 1-6 steps and saying
/// so (`@flushed <steps>`).
/// Appends steps until killed, flushing after a random number of them and saying so;
/// `nonblocking`: each round submits one to four non-blocking appends, waits for them in
/// reverse order, then flushes.
fn append_writer(dir: &Path, nonblocking: bool) {
    let seed: u64 = std::env::var("ZARR_CRASH_SEED").unwrap().parse().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir, true, false).unwrap());
    let array = Arc::new(Array::open(store, "t", Mode::ReadWrite).unwrap());
    let mut rng = Rng(seed | 1);
    let mut out = std::io::stdout().lock();
    writeln!(out, "@start").unwrap();
    out.flush().unwrap();
    let step_bytes = |t: u64| -> Vec<u8> {
        appended_step(t)
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect()
    };
    let mut until_flush = 1 + rng.below(6);
    loop {
        let t = array.metadata().shape[0];
        if nonblocking {
            let k = 1 + rng.below(4);
            let requests: Vec<_> = (t..t + k)
                .map(|step| {
                    let data = Box::new(step_bytes(step));
                    array
                        .append_async(
                            0,
                            vec![1, 8, 8],
                            ElementType::UInt32,
                            Layout::Dense(Order::C),
                            data,
                        )
                        .unwrap()
                })
                .collect();
            for request in requests.iter().rev() {
                request.wait().unwrap();
            }
            array.flush().unwrap();
            writeln!(out, "@flushed {}", t + k).unwrap();
            out.flush().unwrap();
            continue;
        }
        array
            .append(0, &[1, 8, 8], ElementType::UInt32, Order::C, &step_bytes(t))
            .unwrap();
        until_flush -= 1;
        if until_flush == 0 {
            array.flush().unwrap();
            writeln!(out, "@flushed {}", t + 1).unwrap();
            out.flush().unwrap();
            until_flush = 1 + rng.below(6);
        }
    }
}

/// Checks the appended array after a kill: it opens, holds at least `flushed` steps, and
/// every step it holds is exact. Returns the steps and the checks made.
fn verify_appended(dir: &Path, flushed: u64) -> (u64, u64) {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir, false, false).unwrap());
    verify_steps(store, flushed)
}

/// Checks the array `t` of `store`: it holds at least `flushed` steps, each exact. Returns
/// the steps and the checks made.
fn verify_steps(store: Arc<dyn Store>, flushed: u64) -> (u64, u64) {
    let array = Array::open(store, "t", Mode::Read).unwrap();
    let steps = array.metadata().shape[0];
    assert!(steps >= flushed, "{steps} steps stored, {flushed} flushed");
    let mut buf = vec![0u8; (steps * STEP * 4) as usize];
    array
        .read(
            &[0, 0, 0],
            &[steps, 8, 8],
            ElementType::UInt32,
            Order::C,
            &mut buf,
        )
        .unwrap();
    let got: Vec<u32> = buf
        .chunks(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    for t in 0..steps {
        let at = (t * STEP) as usize;
        assert_eq!(
            got[at..at + STEP as usize],
            appended_step(t)[..],
            "step {t} of {steps} ({flushed} flushed)"
        );
    }
    (steps, steps + 2)
}

fn count_temp_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                count_temp_files(&e.path())
            } else {
                usize::from(e.file_name().to_string_lossy().contains(".zarr-tmp."))
            }
        })
        .sum()
}

/// An Icechunk repository's writer killed while it appends and commits: the branch head is
/// always a complete commit, at least the last one announced, every step of it exact.
#[cfg(feature = "icechunk")]
mod icechunk {
    use super::*;
    use zarr::store::{open_url, repository_of};

    fn url(dir: &Path) -> String {
        format!("icechunk://{}", dir.display())
    }

    /// Appends a step and commits it, over and over, announcing each commit.
    pub fn committer(dir: &Path) {
        let store = open_url(&url(dir), Mode::Append, None).unwrap();
        let array = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
        let repo = repository_of(store.as_ref()).unwrap();
        let mut out = std::io::stdout().lock();
        writeln!(out, "@start").unwrap();
        out.flush().unwrap();
        loop {
            let t = array.metadata().shape[0];
            let data: Vec<u8> = appended_step(t)
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect();
            array
                .append(0, &[1, 8, 8], ElementType::UInt32, Order::C, &data)
                .unwrap();
            repo.commit(&format!("step {}", t + 1)).unwrap();
            writeln!(out, "@committed {}", t + 1).unwrap();
            out.flush().unwrap();
        }
    }

    /// Kills the committer `kills` times; returns the checks made.
    pub fn drive(kills: u64, base: &Path, rng: &mut Rng) -> u64 {
        let dir = base.join("icechunk");
        let store = open_url(&url(&dir), Mode::Append, None).unwrap();
        let mut builder = ArrayBuilder::new(vec![0, 8, 8], ElementType::UInt32);
        builder.zarr_format(3).unwrap();
        builder.chunks(vec![1, 8, 8]).fill_value_json(json!(0));
        builder.create(store.clone(), "t", Mode::Overwrite).unwrap();
        repository_of(store.as_ref())
            .unwrap()
            .commit("created")
            .unwrap();
        drop(store);
        let (mut steps, mut checks) = (0, 0);
        for _ in 0..kills {
            let lines = run_and_kill(("ZARR_CRASH_ICECHUNK", &dir), 0, rng);
            let committed = lines
                .iter()
                .filter_map(|l| l.strip_prefix("@committed ")?.parse::<u64>().ok())
                .max()
                .unwrap_or(0);
            let head = open_url(&url(&dir), Mode::Read, None).unwrap();
            let (kept, n) = verify_steps(head, committed);
            // The head is the last commit or the one after it (committed, not announced).
            assert!(
                kept <= committed.max(steps) + 1,
                "{kept} steps, {committed} announced"
            );
            steps = kept;
            checks += n;
        }
        println!("crash safety: {kills} kills of an Icechunk committer, {steps} steps committed, {checks} checks");
        checks
    }
}
