//! Icechunk repositories as stores (`icechunk:///PATH`): arrays and groups committed and
//! read back at a branch, a tag and a snapshot; time travel over a long history; readers in
//! another process seeing only whole commits, in order; discard;
//! two writers on one branch; hostile URLs and damaged repositories; FIFOs and links
//! leading outside in repositories.
#![cfg(feature = "icechunk")]

use crate::common;

use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::{Format, Order};
use zarr::node::{Array, ArrayBuilder, Group, Mode};
use zarr::store::{open_url, repository_of, Store};
use zarr::Error;

fn url(dir: &Path, query: &str) -> String {
    format!("icechunk://{}{query}", dir.display())
}

fn open(dir: &Path, query: &str, mode: Mode) -> Arc<dyn Store> {
    open_url(&url(dir, query), mode, None).unwrap()
}

fn commit(store: &Arc<dyn Store>, message: &str) -> String {
    repository_of(store.as_ref())
        .unwrap()
        .commit(message)
        .unwrap()
}

fn int32s(values: impl IntoIterator<Item = i32>) -> Vec<u8> {
    values.into_iter().flat_map(i32::to_ne_bytes).collect()
}

/// Values no compressor shrinks much, so that chunks are stored as files of their own
/// (Icechunk keeps chunks under 512 bytes inside its manifests).
fn noisy(n: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    (0..n)
        .flat_map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64).to_ne_bytes()
        })
        .collect()
}

fn read_all(array: &Array, elem: ElementType, item: usize) -> Vec<u8> {
    let shape = array.metadata().shape.clone();
    let n: u64 = shape.iter().product();
    let mut buf = vec![0u8; n as usize * item];
    array
        .read(&vec![0; shape.len()], &shape, elem, Order::C, &mut buf)
        .unwrap();
    buf
}

fn attributes(store: &dyn Store, key: &str) -> Value {
    let doc: Value = serde_json::from_slice(&store.get(key).unwrap().unwrap()).unwrap();
    doc["attributes"].clone()
}

/// A group `sim` (with attributes) holding `temperature` (int32, zstd) and `pressure`
/// (float64, sharded), written through `store`.
fn write_step(store: &Arc<dyn Store>, step: i32) {
    let mut attrs = Map::new();
    attrs.insert("step".into(), json!(step));
    Group::open_with(store.clone(), "sim", Mode::Append, Format::V3, &attrs).unwrap();
    let mut builder = ArrayBuilder::new(vec![4, 6], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![2, 3])
        .fill_value_json(json!(-1))
        .compressor(json!({"id": "zstd", "level": 1}));
    let mut units = Map::new();
    units.insert("units".into(), json!("K"));
    builder.attributes(units);
    let temperature = builder
        .create(store.clone(), "sim/temperature", Mode::Overwrite)
        .unwrap();
    temperature
        .write(
            &[0, 0],
            &[4, 6],
            ElementType::Int32,
            Order::C,
            &int32s((0..24).map(|v| v + 100 * step)),
        )
        .unwrap();
    let mut builder = ArrayBuilder::new(vec![64, 64], ElementType::Float64);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![8, 8])
        .shard_shape(vec![32, 32])
        .fill_value_json(json!(0.0))
        .compressor(json!({"id": "zstd", "level": 1}));
    let pressure = builder
        .create(store.clone(), "sim/pressure", Mode::Overwrite)
        .unwrap();
    pressure
        .write(
            &[0, 0],
            &[64, 64],
            ElementType::Float64,
            Order::C,
            &noisy(64 * 64, step as u64),
        )
        .unwrap();
}

/// Checks what [`write_step`] wrote for `step`, read through `store`.
fn check_step(store: &Arc<dyn Store>, step: i32) {
    let temperature = Array::open(store.clone(), "sim/temperature", Mode::Read).unwrap();
    assert_eq!(
        read_all(&temperature, ElementType::Int32, 4),
        int32s((0..24).map(|v| v + 100 * step))
    );
    let pressure = Array::open(store.clone(), "sim/pressure", Mode::Read).unwrap();
    assert_eq!(
        read_all(&pressure, ElementType::Float64, 8),
        noisy(64 * 64, step as u64)
    );
    // A part of one shard: the inner chunks are read by range.
    let mut part = vec![0u8; 3 * 5 * 8];
    pressure
        .read(&[9, 17], &[3, 5], ElementType::Float64, Order::C, &mut part)
        .unwrap();
    let whole = noisy(64 * 64, step as u64);
    let expected: Vec<u8> = (9..12)
        .flat_map(|row| whole[(row * 64 + 17) * 8..(row * 64 + 22) * 8].to_vec())
        .collect();
    assert_eq!(part, expected);
    assert_eq!(
        attributes(store.as_ref(), "sim/zarr.json"),
        json!({"step": step})
    );
    assert_eq!(
        attributes(store.as_ref(), "sim/temperature/zarr.json"),
        json!({"units": "K"})
    );
}

#[test]
fn commits_read_back_at_branch_tag_and_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let writer = open(&repo, "", Mode::Append);
    write_step(&writer, 1);
    check_step(&writer, 1);
    // Nothing is visible to other readers before the commit.
    let before = open(&repo, "", Mode::Read);
    assert!(matches!(
        Array::open(before, "sim/temperature", Mode::Read),
        Err(Error::NotFound(_))
    ));
    let first = commit(&writer, "step 1");
    assert_eq!(first.len(), 20);
    repository_of(writer.as_ref())
        .unwrap()
        .create_tag("v1")
        .unwrap();
    for query in [
        "".to_string(),
        "?branch=main".into(),
        "?tag=v1".into(),
        format!("?snapshot={first}"),
    ] {
        let reader = open(&repo, &query, Mode::Read);
        assert!(!reader.writable(), "{query}");
        check_step(&reader, 1);
        assert_eq!(
            reader.list_dir("sim/").unwrap().prefixes,
            vec!["pressure".to_string(), "temperature".to_string()]
        );
        assert_eq!(
            reader.list_dir("sim/").unwrap().keys,
            vec!["zarr.json".to_string()]
        );
        assert!(reader
            .list_prefix("sim/temperature/")
            .unwrap()
            .contains(&"sim/temperature/c/1/1".to_string()));
    }

    // The next step replaces the values; a member is deleted; the tag keeps step 1.
    write_step(&writer, 2);
    let group = Group::open(writer.clone(), "sim", Mode::ReadWrite).unwrap();
    let mut builder = ArrayBuilder::new(vec![3], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    group
        .create_array("scratch", &builder, Mode::CreateNew)
        .unwrap();
    commit(&writer, "step 2 with scratch");
    group.delete("scratch").unwrap();
    let second = commit(&writer, "step 2");
    let head = open(&repo, "", Mode::Read);
    check_step(&head, 2);
    assert!(matches!(
        Array::open(head.clone(), "sim/scratch", Mode::Read),
        Err(Error::NotFound(_))
    ));
    check_step(&open(&repo, "?tag=v1", Mode::Read), 1);
    check_step(&open(&repo, &format!("?snapshot={second}"), Mode::Read), 2);

    // A branch made at the tag's snapshot, written and committed on its own.
    let at_tag = open(&repo, "?tag=v1", Mode::Read);
    repository_of(at_tag.as_ref())
        .unwrap()
        .create_branch("rerun")
        .unwrap();
    let rerun = open(&repo, "?branch=rerun", Mode::ReadWrite);
    check_step(&rerun, 1);
    write_step(&rerun, 7);
    commit(&rerun, "rerun step 7");
    check_step(&open(&repo, "?branch=rerun", Mode::Read), 7);
    check_step(&open(&repo, "", Mode::Read), 2);

    // Read-only places refuse writes and commits.
    let tag = open(&repo, "?tag=v1", Mode::Read);
    assert!(matches!(
        tag.set("x/zarr.json", b"{}"),
        Err(Error::ReadOnly(_))
    ));
    assert!(matches!(
        repository_of(tag.as_ref()).unwrap().commit("no"),
        Err(Error::ReadOnly(_))
    ));
    assert!(matches!(
        open_url(&url(&repo, "?tag=v1"), Mode::Append, None),
        Err(Error::ReadOnly(_))
    ));
    assert!(matches!(
        repository_of(tag.as_ref()).unwrap().create_tag("v1"),
        Err(Error::Exists(_))
    ));
}

#[test]
fn v2_metadata_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("repo"), "", Mode::Append);
    let mut builder = ArrayBuilder::new(vec![4], ElementType::Int32);
    builder.zarr_format(2).unwrap();
    let refused = builder.create(store.clone(), "old", Mode::Overwrite);
    assert!(matches!(refused, Err(Error::Unsupported(_))), "{refused:?}");
    assert!(matches!(
        store.set(
            "x/zarr.json",
            br#"{"zarr_format": 3, "node_type": "nonsense"}"#
        ),
        Err(Error::Metadata(_))
    ));
}

/// Commits in the long-history test: each appends a step to one array.
const HISTORY_STEPS: i64 = 100;

#[test]
fn time_travel_over_a_long_history() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let store = open(&repo, "", Mode::Append);
    let mut builder = ArrayBuilder::new(vec![0], ElementType::Int64);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![5]);
    let series = builder
        .create(store.clone(), "series", Mode::CreateNew)
        .unwrap();
    let mut ids = Vec::new();
    for step in 0..HISTORY_STEPS {
        let values: Vec<u8> = (0..3)
            .flat_map(|i| (step * 1000 + i).to_ne_bytes())
            .collect();
        series
            .append(0, &[3], ElementType::Int64, Order::C, &values)
            .unwrap();
        ids.push(commit(&store, &format!("step {step}")));
    }
    for (step, id) in ids.iter().enumerate() {
        let reader = open(&repo, &format!("?snapshot={id}"), Mode::Read);
        let array = Array::open(reader, "series", Mode::Read).unwrap();
        let expected: Vec<u8> = (0..=step as i64)
            .flat_map(|s| (0..3).map(move |i| s * 1000 + i))
            .flat_map(i64::to_ne_bytes)
            .collect();
        assert_eq!(array.metadata().shape, vec![3 * (step as u64 + 1)]);
        assert_eq!(
            read_all(&array, ElementType::Int64, 8),
            expected,
            "step {step}"
        );
    }
    let history = repository_of(store.as_ref()).unwrap().history().unwrap();
    // Newest first, back to the repository's first snapshot.
    let steps = HISTORY_STEPS as usize;
    assert_eq!(history.len(), steps + 1);
    for (at, id) in ids.iter().rev().enumerate() {
        assert_eq!(&history[at].id, id);
        assert_eq!(history[at].message, format!("step {}", steps - 1 - at));
        assert_eq!(history[at].parent.as_ref(), Some(&history[at + 1].id));
    }
    assert_eq!(history[steps].parent, None);
    let json: Value =
        serde_json::from_str(&zarr::store::repository::history_json(&history)).unwrap();
    assert_eq!(json[0]["message"], format!("step {}", steps - 1));
    assert_eq!(json[steps]["parent"], Value::Null);
}

/// Names the repository a child process of the cross-process visibility test commits to.
const COMMITTER: &str = "ZARR_ICECHUNK_COMMITTER";
/// Commits that child makes, after the repository's setup commit (step 0).
const VISIBILITY_STEPS: i32 = 200;
/// The arrays every commit of that test changes together, with their shapes and chunks.
const TOGETHER: [(&str, u64, u64); 4] = [
    ("a", 8, 4),
    ("b", 6, 3),
    ("grid/c", 10, 5),
    ("grid/d", 4, 4),
];

/// The values of array number `k` (length `len`) at `step`: each element names both, so
/// one element tells which step it came from.
fn step_values(step: i32, k: usize, len: u64) -> Vec<i32> {
    (0..len as i32)
        .map(|i| step * 1000 + k as i32 * 100 + i)
        .collect()
}

/// Writes every array of [`TOGETHER`] with its values at `step` (creating them first at
/// step 0).
fn write_together(store: &Arc<dyn Store>, step: i32) {
    if step == 0 {
        Group::open_with(store.clone(), "grid", Mode::Append, Format::V3, &Map::new()).unwrap();
    }
    for (k, (path, len, chunk)) in TOGETHER.iter().enumerate() {
        let array = if step == 0 {
            let mut builder = ArrayBuilder::new(vec![*len], ElementType::Int32);
            builder.zarr_format(3).unwrap();
            builder.chunks(vec![*chunk]).fill_value_json(json!(-1));
            builder
                .create(store.clone(), path, Mode::CreateNew)
                .unwrap()
        } else {
            Array::open(store.clone(), path, Mode::ReadWrite).unwrap()
        };
        array
            .write(
                &[0],
                &[*len],
                ElementType::Int32,
                Order::C,
                &int32s(step_values(step, k, *len)),
            )
            .unwrap();
    }
}

/// The step every array of [`TOGETHER`] holds through `store`; fails when any element of
/// any array belongs to another step.
fn step_together(store: &Arc<dyn Store>) -> i32 {
    let steps: Vec<i32> = TOGETHER
        .iter()
        .enumerate()
        .map(|(k, (path, len, _))| {
            let array = Array::open(store.clone(), path, Mode::Read).unwrap();
            let bytes = read_all(&array, ElementType::Int32, 4);
            let step = i32::from_ne_bytes(bytes[..4].try_into().unwrap()) / 1000;
            assert_eq!(
                bytes,
                int32s(step_values(step, k, *len)),
                "{path} mixes steps"
            );
            step
        })
        .collect();
    assert!(
        steps.iter().all(|s| *s == steps[0]),
        "one read saw the arrays at steps {steps:?}"
    );
    steps[0]
}

/// The child of [`readers_in_another_process_see_whole_commits_in_order`]: one commit per
/// step, each rewriting every array of [`TOGETHER`].
fn commit_steps(repo: &Path) {
    let store = open(repo, "", Mode::ReadWrite);
    for step in 1..=VISIBILITY_STEPS {
        write_together(&store, step);
        commit(&store, &format!("step {step}"));
    }
}

/// A child process, killed and waited for when dropped (when a check fails while it runs).
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A process commits [`VISIBILITY_STEPS`] times, each commit changing four arrays (two in
/// a group) together; meanwhile this process opens the branch head again and again, each
/// time through a new read-only store, and reads every array: all of them always hold one
/// and the same step, and the step seen never goes back.
#[test]
fn readers_in_another_process_see_whole_commits_in_order() {
    if let Ok(repo) = std::env::var(COMMITTER) {
        commit_steps(Path::new(&repo));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let setup = open(&repo, "", Mode::Append);
    write_together(&setup, 0);
    commit(&setup, "step 0");
    drop(setup);

    let mut child = Reaped(
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "icechunk::readers_in_another_process_see_whole_commits_in_order",
                "--test-threads=1",
                "--quiet",
            ])
            .env(COMMITTER, &repo)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut last = 0;
    let mut reads = 0;
    let mut seen = std::collections::BTreeSet::new();
    let status = loop {
        let finished = child.0.try_wait().unwrap();
        let step = step_together(&open(&repo, "", Mode::Read));
        assert!(
            step >= last,
            "the head went back from step {last} to {step}"
        );
        last = step;
        reads += 1;
        seen.insert(step);
        if let Some(status) = finished {
            break status;
        }
    };
    assert!(status.success(), "the committing process failed");
    // Read after the child ended: the last commit.
    assert_eq!(last, VISIBILITY_STEPS);
    let between = seen
        .iter()
        .filter(|s| **s > 0 && **s < VISIBILITY_STEPS)
        .count();
    eprintln!("{reads} reads saw {between} steps while they were being committed");
    assert!(
        between >= 3,
        "the reads saw only steps {seen:?}: none raced the commits"
    );
    let history = repository_of(open(&repo, "", Mode::Read).as_ref())
        .unwrap()
        .history()
        .unwrap();
    assert_eq!(history.len(), VISIBILITY_STEPS as usize + 2);
}

#[test]
fn discard_drops_what_was_not_committed() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let store = open(&repo, "", Mode::Append);
    write_step(&store, 1);
    commit(&store, "step 1");
    write_step(&store, 2);
    let mut builder = ArrayBuilder::new(vec![2], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .create(store.clone(), "sim/extra", Mode::CreateNew)
        .unwrap();
    let versions = repository_of(store.as_ref()).unwrap();
    versions.discard().unwrap();
    check_step(&store, 1);
    assert!(!store.contains("sim/extra/zarr.json").unwrap());
    assert!(matches!(
        versions.commit("nothing"),
        Err(Error::InvalidArg(_))
    ));
    // A store dropped without a commit commits nothing.
    let dropped = open(&repo, "", Mode::ReadWrite);
    write_step(&dropped, 3);
    drop(dropped);
    check_step(&open(&repo, "", Mode::Read), 1);
    assert_eq!(
        repository_of(open(&repo, "", Mode::Read).as_ref())
            .unwrap()
            .history()
            .unwrap()
            .len(),
        2
    );
}

/// The crate sizes a chunk never written as 0 bytes; the store must say it is missing
/// (copies resume by the sizes of the target's chunks).
#[test]
fn chunks_never_written_have_no_size() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let store = open(&repo, "", Mode::Append);
    let mut builder = ArrayBuilder::new(vec![4, 6], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![2, 3]);
    let array = builder.create(store.clone(), "a", Mode::CreateNew).unwrap();
    array
        .write(
            &[0, 0],
            &[2, 3],
            ElementType::Int32,
            Order::C,
            &int32s(0..6),
        )
        .unwrap();
    commit(&store, "one chunk");
    for store in [store, open(&repo, "", Mode::Read)] {
        let written = store.get("a/c/0/0").unwrap().unwrap().len() as u64;
        assert!(written > 0);
        assert_eq!(store.size("a/c/0/0").unwrap(), Some(written));
        assert_eq!(store.size("a/c/1/1").unwrap(), None);
        assert_eq!(store.size("b/c/0/0").unwrap(), None);
        assert_eq!(store.size("b/zarr.json").unwrap(), None);
        assert!(store.size("a/zarr.json").unwrap().unwrap() > 0);
    }
}

fn write_ones(store: &Arc<dyn Store>, path: &str, value: i32) {
    let array = Array::open(store.clone(), path, Mode::ReadWrite).unwrap();
    array
        .write(
            &[0],
            &[4],
            ElementType::Int32,
            Order::C,
            &int32s([value; 4]),
        )
        .unwrap();
}

#[test]
fn two_writers_on_one_branch() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let setup = open(&repo, "", Mode::Append);
    for name in ["a", "b"] {
        let mut builder = ArrayBuilder::new(vec![4], ElementType::Int32);
        builder.zarr_format(3).unwrap();
        builder.chunks(vec![4]).fill_value_json(json!(0));
        builder
            .create(setup.clone(), name, Mode::CreateNew)
            .unwrap();
    }
    commit(&setup, "arrays");

    // Disjoint changes: the second commit conflicts, rebases, then commits.
    let first = open(&repo, "", Mode::ReadWrite);
    let second = open(&repo, "", Mode::ReadWrite);
    write_ones(&first, "a", 1);
    write_ones(&second, "b", 2);
    commit(&first, "a = 1");
    let versions = repository_of(second.as_ref()).unwrap();
    assert!(matches!(versions.commit("b = 2"), Err(Error::Conflict(_))));
    versions.rebase().unwrap();
    versions.commit("b = 2").unwrap();
    let head = open(&repo, "", Mode::Read);
    for (name, value) in [("a", 1), ("b", 2)] {
        let array = Array::open(head.clone(), name, Mode::Read).unwrap();
        assert_eq!(read_all(&array, ElementType::Int32, 4), int32s([value; 4]));
    }

    // Overlapping changes: the rebase fails and keeps the second writer's changes.
    let first = open(&repo, "", Mode::ReadWrite);
    let second = open(&repo, "", Mode::ReadWrite);
    write_ones(&first, "a", 3);
    write_ones(&second, "a", 4);
    commit(&first, "a = 3");
    let versions = repository_of(second.as_ref()).unwrap();
    assert!(matches!(versions.commit("a = 4"), Err(Error::Conflict(_))));
    assert!(matches!(versions.rebase(), Err(Error::Conflict(_))));
    let mine = Array::open(second.clone(), "a", Mode::Read).unwrap();
    assert_eq!(read_all(&mine, ElementType::Int32, 4), int32s([4; 4]));
    let head = Array::open(open(&repo, "", Mode::Read), "a", Mode::Read).unwrap();
    assert_eq!(read_all(&head, ElementType::Int32, 4), int32s([3; 4]));
}

/// Erasing a prefix that is no node (an array written without the group above it) erases
/// every key below it.
#[test]
fn erasing_a_prefix_that_is_no_node_erases_what_lies_below() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("repo"), "", Mode::Append);
    let array_doc = json!({"zarr_format": 3, "node_type": "array", "shape": [4],
        "data_type": "int32", "chunk_grid": {"name": "regular",
        "configuration": {"chunk_shape": [4]}}, "chunk_key_encoding": {"name": "default"},
        "fill_value": 0, "codecs": [{"name": "bytes",
        "configuration": {"endian": "little"}}]});
    store
        .set("x/a/zarr.json", array_doc.to_string().as_bytes())
        .unwrap();
    store.set("x/a/c/0", &int32s([1, 2, 3, 4])).unwrap();
    store.erase_prefix("x/").unwrap();
    assert_eq!(store.list_prefix("x/").unwrap(), Vec::<String>::new());
    assert_eq!(store.get("x/a/c/0").unwrap(), None);
}

/// Appends to a sharded array are held back on their handle elsewhere until a flush; in a
/// repository they are stored at once, so a commit right after them holds every step.
#[test]
fn a_commit_holds_every_step_appended_to_a_sharded_array() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let store = open(&repo, "", Mode::Append);
    let mut builder = ArrayBuilder::new(vec![0, 4], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![1, 4])
        .shard_shape(vec![8, 4])
        .fill_value_json(json!(-1));
    let array = builder.create(store.clone(), "t", Mode::CreateNew).unwrap();
    for step in 0..3 {
        array
            .append(0, &[1, 4], ElementType::Int32, Order::C, &int32s([step; 4]))
            .unwrap();
    }
    assert_eq!(array.append_buffer_bytes().unwrap(), 0);
    let id = commit(&store, "three steps");
    drop(array);
    drop(store);
    let reader = open(&repo, &format!("?snapshot={id}"), Mode::Read);
    let array = Array::open(reader, "t", Mode::Read).unwrap();
    assert_eq!(array.metadata().shape, vec![3, 4]);
    assert_eq!(
        read_all(&array, ElementType::Int32, 4),
        int32s((0..3).flat_map(|s| [s; 4]))
    );
}

/// On local disk a commit takes an exclusive `flock` on the repository's directory (which
/// another process's libzarr holds while it commits): held here through a descriptor of
/// its own, the commit waits for it and then succeeds.
#[cfg(unix)]
#[test]
fn a_local_commit_waits_for_the_repository_lock() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let store = open(&repo, "", Mode::Append);
    let mut builder = ArrayBuilder::new(vec![4], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder.chunks(vec![4]).fill_value_json(json!(0));
    builder.create(store.clone(), "a", Mode::CreateNew).unwrap();
    write_ones(&store, "a", 7);

    let held = std::fs::File::open(&repo).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let committing = {
        let store = store.clone();
        std::thread::spawn(move || {
            repository_of(store.as_ref())
                .unwrap()
                .commit("while locked")
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !committing.is_finished(),
        "the commit did not wait for the lock"
    );
    drop(held);
    let id = committing.join().unwrap().unwrap();

    let reader = open(&repo, &format!("?snapshot={id}"), Mode::Read);
    let array = Array::open(reader, "a", Mode::Read).unwrap();
    assert_eq!(read_all(&array, ElementType::Int32, 4), int32s([7; 4]));
}

#[test]
fn hostile_urls_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    // Reading a repository that does not exist names it.
    match open_url(&url(&repo, ""), Mode::Read, None) {
        Err(Error::NotFound(message)) => assert!(message.contains("repo"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        open_url(&url(&repo, ""), Mode::ReadWrite, None),
        Err(Error::NotFound(_))
    ));
    let store = open(&repo, "", Mode::Append);
    write_step(&store, 1);
    let id = commit(&store, "step 1");
    // An empty directory without a repository is not one either.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(matches!(
        open_url(&url(&empty, ""), Mode::Read, None),
        Err(Error::NotFound(_))
    ));
    // A directory with other files in it is not made a repository.
    let busy = dir.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("notes.txt"), b"mine").unwrap();
    assert!(open_url(&url(&busy, ""), Mode::Append, None).is_err());
    assert_eq!(std::fs::read(busy.join("notes.txt")).unwrap(), b"mine");

    // The same length and alphabet, another first character.
    let missing_id = match id.strip_prefix('0') {
        Some(rest) => format!("1{rest}"),
        None => format!("0{}", &id[1..]),
    };
    for (query, what) in [
        (format!("?snapshot={missing_id}"), "missing snapshot"),
        ("?tag=nope".to_string(), "missing tag"),
        ("?branch=nope".to_string(), "missing branch"),
    ] {
        let opened = open_url(&url(&repo, &query), Mode::Read, None);
        assert!(
            matches!(opened, Err(Error::NotFound(_))),
            "{what}: {opened:?}"
        );
    }
    for query in ["?snapshot=not-an-id!", "?tag=a&tag=b", "?when=now"] {
        assert!(matches!(
            open_url(&url(&repo, query), Mode::Read, None),
            Err(Error::InvalidArg(_))
        ));
    }
    assert!(matches!(
        open_url(&url(&repo, ""), Mode::Read, Some(r#"{"region": "x"}"#)),
        Err(Error::InvalidArg(_))
    ));
    for (bad, options) in [
        ("icechunk+s3:///prefix", None),
        ("icechunk+s3://bucket/p", Some(r#"{"timeout_ms": 5}"#)),
        (
            "icechunk+s3://bucket/p",
            Some(r#"{"access_key_id": "only"}"#),
        ),
    ] {
        assert!(
            matches!(
                open_url(bad, Mode::Read, options),
                Err(Error::InvalidArg(_))
            ),
            "{bad} {options:?}"
        );
    }
    // Stores that keep no history refuse the versioning calls.
    let plain = open_url("memory://", Mode::Append, None).unwrap();
    assert!(matches!(
        repository_of(plain.as_ref()),
        Err(Error::Unsupported(_))
    ));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Replaces every file under `dir` with bytes of the same length, or removes it.
fn damage(dir: &Path, remove: bool) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            damage(&path, remove);
        } else if remove {
            std::fs::remove_file(&path).unwrap();
        } else {
            let len = std::fs::metadata(&path).unwrap().len() as usize;
            std::fs::write(&path, vec![0xA5u8; len]).unwrap();
        }
    }
}

/// Opens the repository and reads everything of step 1; the first error, if any.
fn try_read_step(repo: &Path) -> zarr::Result<()> {
    let store = open_url(&url(repo, ""), Mode::Read, None)?;
    for (path, elem, item) in [
        ("sim/temperature", ElementType::Int32, 4usize),
        ("sim/pressure", ElementType::Float64, 8),
    ] {
        let array = Array::open(store.clone(), path, Mode::Read)?;
        let shape = array.metadata().shape.clone();
        let n: u64 = shape.iter().product();
        let mut buf = vec![0u8; n as usize * item];
        array.read(&[0, 0], &shape, elem, Order::C, &mut buf)?;
    }
    store.list_prefix("")?;
    Ok(())
}

#[test]
fn damaged_repositories_give_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    let store = open(&good, "", Mode::Append);
    write_step(&store, 1);
    commit(&store, "step 1");
    try_read_step(&good).unwrap();
    let mut entries: Vec<String> = std::fs::read_dir(&good)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    for needed in ["chunks", "manifests", "repo", "snapshots"] {
        assert!(entries.iter().any(|e| e == needed), "{entries:?}");
    }
    for entry in entries {
        for remove in [false, true] {
            let copy = dir.path().join(format!("{entry}-{remove}"));
            copy_dir(&good, &copy);
            let target = copy.join(&entry);
            if target.is_dir() {
                damage(&target, remove);
            } else if remove {
                std::fs::remove_file(&target).unwrap();
            } else {
                let len = std::fs::metadata(&target).unwrap().len() as usize;
                std::fs::write(&target, vec![0xA5u8; len]).unwrap();
            }
            let outcome = try_read_step(&copy);
            let how = if remove { "removed" } else { "garbled" };
            match outcome {
                Err(e) => assert!(!e.to_string().contains("panicked"), "{entry} {how}: {e}"),
                // Transaction logs and the record of overwritten refs are not read here.
                Ok(()) => assert!(
                    ["transactions", "overwritten"].contains(&entry.as_str()),
                    "{entry} {how}: read without an error"
                ),
            }
        }
    }
}

#[test]
fn repositories_on_s3() {
    let Some(server) = common::moto() else { return };
    let options = format!(
        r#"{{"endpoint": "http://127.0.0.1:{}", "region": "us-east-1",
            "access_key_id": "testing", "secret_access_key": "testing-secret"}}"#,
        server.port
    );
    let at = |query: &str, mode: Mode| {
        open_url(
            &format!("icechunk+s3://zarr-test/runs/one{query}"),
            mode,
            Some(&options),
        )
    };
    assert!(matches!(at("", Mode::Read), Err(Error::NotFound(_))));
    let writer = at("", Mode::Append).unwrap();
    write_step(&writer, 1);
    let first = commit(&writer, "step 1");
    repository_of(writer.as_ref())
        .unwrap()
        .create_tag("v1")
        .unwrap();
    write_step(&writer, 2);
    commit(&writer, "step 2");
    check_step(&at("", Mode::Read).unwrap(), 2);
    check_step(&at("?tag=v1", Mode::Read).unwrap(), 1);
    check_step(&at(&format!("?snapshot={first}"), Mode::Read).unwrap(), 1);

    // Two writers: S3's conditional write lets one commit of the two through.
    let other = at("", Mode::ReadWrite).unwrap();
    write_step(&writer, 3);
    write_step(&other, 4);
    commit(&writer, "step 3");
    let versions = repository_of(other.as_ref()).unwrap();
    assert!(matches!(versions.commit("step 4"), Err(Error::Conflict(_))));
    check_step(&at("", Mode::Read).unwrap(), 3);

    // Exported changes carry none of the credentials given as options (the serialized
    // session holds its storage's), and still merge into another writer's session.
    let part = at("", Mode::ReadWrite).unwrap();
    write_step(&part, 5);
    let changes = repository_of(part.as_ref())
        .unwrap()
        .export_changes()
        .unwrap();
    let holds = |needle: &[u8]| changes.windows(needle.len()).any(|w| w == needle);
    assert!(!holds(b"testing-secret") && !holds(b"-secret") && !holds(b"testing"));
    let merger = at("", Mode::ReadWrite).unwrap();
    let merging = repository_of(merger.as_ref()).unwrap();
    merging.merge_changes(&changes).unwrap();
    merging.commit("step 5").unwrap();
    check_step(&at("", Mode::Read).unwrap(), 5);
}

const WRITERS: u64 = 4;

/// The int32 values writer `rank` stores in its two rows of `t` at `step`.
fn rank_rows(step: i32, rank: u64) -> Vec<i32> {
    (0..2 * 64)
        .map(|i| step * 1000 + rank as i32 * 200 + i)
        .collect()
}

/// Writer `rank`'s two rows of `t` (int32, chunks small enough to be kept inline) and of
/// `p` (float64 noise, chunks stored as files of their own) at `step`, through `store`.
fn write_rank_rows(store: &Arc<dyn Store>, step: i32, rank: u64) {
    let t = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
    let origin = [2 * rank, 0];
    let rows = int32s(rank_rows(step, rank));
    t.write(&origin, &[2, 64], ElementType::Int32, Order::C, &rows)
        .unwrap();
    let p = Array::open(store.clone(), "p", Mode::ReadWrite).unwrap();
    let noise = noisy(2 * 64, step as u64 * 10 + rank);
    p.write(&origin, &[2, 64], ElementType::Float64, Order::C, &noise)
        .unwrap();
}

/// Whether `store` reads every writer's rows of `step`.
fn check_all_rows(store: &Arc<dyn Store>, step: i32) {
    let t = Array::open(store.clone(), "t", Mode::Read).unwrap();
    let p = Array::open(store.clone(), "p", Mode::Read).unwrap();
    let want_t: Vec<u8> = (0..WRITERS)
        .flat_map(|r| int32s(rank_rows(step, r)))
        .collect();
    let want_p: Vec<u8> = (0..WRITERS)
        .flat_map(|r| noisy(2 * 64, step as u64 * 10 + r))
        .collect();
    assert_eq!(read_all(&t, ElementType::Int32, 4), want_t, "step {step}");
    assert_eq!(read_all(&p, ElementType::Float64, 8), want_p, "step {step}");
}

/// Creates `t` and `p` (8 x 64, chunks of 2 rows) and commits them.
fn create_rank_arrays(repo: &Path) {
    let setup = open(repo, "", Mode::Append);
    for (name, elem) in [("t", ElementType::Int32), ("p", ElementType::Float64)] {
        let mut builder = ArrayBuilder::new(vec![2 * WRITERS, 64], elem);
        builder.zarr_format(3).unwrap();
        builder.chunks(vec![2, 64]).fill_value_json(json!(0));
        builder
            .create(setup.clone(), name, Mode::CreateNew)
            .unwrap();
    }
    commit(&setup, "arrays");
}

/// Four writers on one branch write their rows in stores of their own, export their
/// changes, and the first merges them all and commits once per step; the others discard
/// and rebase to go on at that commit.
#[test]
fn writers_merge_their_changes_into_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    create_rank_arrays(&repo);
    let stores: Vec<Arc<dyn Store>> = (0..WRITERS)
        .map(|_| open(&repo, "", Mode::ReadWrite))
        .collect();
    let before = repository_of(stores[0].as_ref())
        .unwrap()
        .history()
        .unwrap();
    for step in 1..=3 {
        let exported: Vec<Vec<u8>> = std::thread::scope(|scope| {
            let writers: Vec<_> = stores
                .iter()
                .enumerate()
                .map(|(rank, store)| {
                    scope.spawn(move || {
                        write_rank_rows(store, step, rank as u64);
                        repository_of(store.as_ref())
                            .unwrap()
                            .export_changes()
                            .unwrap()
                    })
                })
                .collect();
            writers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        let root = repository_of(stores[0].as_ref()).unwrap();
        for changes in &exported[1..] {
            root.merge_changes(changes).unwrap();
        }
        let id = root.commit(&format!("step {step}")).unwrap();
        for store in &stores[1..] {
            let versions = repository_of(store.as_ref()).unwrap();
            versions.discard().unwrap();
            versions.rebase().unwrap();
            assert_eq!(versions.snapshot_id().unwrap(), id);
        }
        check_all_rows(&open(&repo, "", Mode::Read), step);
    }
    let history = repository_of(open(&repo, "", Mode::Read).as_ref())
        .unwrap()
        .history()
        .unwrap();
    assert_eq!(history.len(), before.len() + 3);
    let messages: Vec<&str> = history[..3].iter().map(|s| s.message.as_str()).collect();
    assert_eq!(messages, ["step 3", "step 2", "step 1"]);
    assert_eq!(history[3], before[0]);
    // Each step stays readable at its snapshot.
    for (snapshot, step) in history[..3].iter().zip([3, 2, 1]) {
        check_all_rows(
            &open(&repo, &format!("?snapshot={}", snapshot.id), Mode::Read),
            step,
        );
    }
}

/// Bytes that are no exported changes, changes of another snapshot, clashing arrays and
/// stores that cannot write are refused, and nothing changes.
#[test]
fn merging_refuses_what_it_cannot_merge() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    create_rank_arrays(&repo);
    let root = open(&repo, "", Mode::ReadWrite);
    let writer = open(&repo, "", Mode::ReadWrite);
    write_rank_rows(&writer, 1, 1);
    let versions = repository_of(root.as_ref()).unwrap();
    let changes = repository_of(writer.as_ref())
        .unwrap()
        .export_changes()
        .unwrap();

    let garbage = [b"".to_vec(), b"not changes".to_vec(), vec![0xff; 4096]];
    let truncated = [changes[..changes.len() / 2].to_vec(), changes[..1].to_vec()];
    for bytes in garbage.iter().chain(&truncated) {
        match versions.merge_changes(bytes) {
            Err(Error::InvalidArg(m)) => assert!(m.contains("not the changes"), "{m}"),
            other => panic!("{} bytes: {other:?}", bytes.len()),
        }
    }
    // Nothing was merged: there is nothing to commit.
    assert!(matches!(versions.commit("none"), Err(Error::InvalidArg(_))));

    // Read-only stores neither export nor merge.
    for query in [
        "",
        &format!("?snapshot={}", versions.snapshot_id().unwrap()),
    ] {
        let reader = open(&repo, query, Mode::Read);
        let read_only = repository_of(reader.as_ref()).unwrap();
        assert!(matches!(
            read_only.merge_changes(&changes),
            Err(Error::ReadOnly(_))
        ));
        assert!(matches!(
            read_only.export_changes(),
            Err(Error::ReadOnly(_))
        ));
    }
    // A new repository's first snapshot is every repository's: nothing is merged there.
    let fresh = open(&dir.path().join("fresh"), "", Mode::Append);
    match repository_of(fresh.as_ref())
        .unwrap()
        .merge_changes(&changes)
    {
        Err(Error::InvalidArg(m)) => assert!(m.contains("first snapshot"), "{m}"),
        other => panic!("{other:?}"),
    }

    // Plain stores have no changes to merge.
    let plain = zarr::store::MemoryStore::new();
    assert!(matches!(repository_of(&plain), Err(Error::Unsupported(_))));

    // Changes written on an older snapshot than the store's.
    write_rank_rows(&root, 1, 0);
    versions.commit("row 0").unwrap();
    match versions.merge_changes(&changes) {
        Err(Error::Conflict(m)) => assert!(m.contains("same commit"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(versions.commit("none"), Err(Error::InvalidArg(_))));

    // Two writers creating the same array differently clash.
    let (first, second) = (
        open(&repo, "", Mode::ReadWrite),
        open(&repo, "", Mode::ReadWrite),
    );
    for (store, size) in [(&first, 4), (&second, 5)] {
        let mut builder = ArrayBuilder::new(vec![size], ElementType::Int32);
        builder.zarr_format(3).unwrap();
        builder
            .create(store.clone(), "new", Mode::CreateNew)
            .unwrap();
    }
    let theirs = repository_of(second.as_ref())
        .unwrap()
        .export_changes()
        .unwrap();
    let mine = repository_of(first.as_ref()).unwrap();
    // The crate's own merge conflict, not a snapshot mismatch.
    match mine.merge_changes(&theirs) {
        Err(Error::Conflict(message)) => assert!(
            message.contains("changed the same array or group"),
            "{message}"
        ),
        other => panic!("expected a merge conflict, got {other:?}"),
    }
    let new = Array::open(first.clone(), "new", Mode::Read).unwrap();
    assert_eq!(new.metadata().shape, [4]);
}

/// Changes writing chunks of another rank than their array's, outside its grid (the
/// merging store shrank it), or of an array the merging store removed, are refused at the
/// merge, naming the array and the chunk, and nothing of them is merged.
#[test]
fn merging_checks_each_chunk_against_its_array() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    create_rank_arrays(&repo);
    let exported = |key: &str| {
        let writer = open(&repo, "", Mode::ReadWrite);
        writer.set(key, &noisy(2 * 64, 3)).unwrap();
        repository_of(writer.as_ref())
            .unwrap()
            .export_changes()
            .unwrap()
    };
    let root = open(&repo, "", Mode::ReadWrite);
    let versions = repository_of(root.as_ref()).unwrap();

    // Three indices for a chunk of a two-dimensional array.
    match versions.merge_changes(&exported("p/c/0/0/0")) {
        Err(Error::InvalidArg(m)) => {
            assert!(
                m.contains("chunk [0, 0, 0] of \"/p\", which has 2 dimensions"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(versions.commit("none"), Err(Error::InvalidArg(_))));

    // The merging store shrank `p` to one row of chunks: the second is outside.
    let doc = root.get("p/zarr.json").unwrap().unwrap();
    let mut doc: Value = serde_json::from_slice(&doc).unwrap();
    doc["shape"] = json!([2, 64]);
    root.set("p/zarr.json", doc.to_string().as_bytes()).unwrap();
    match versions.merge_changes(&exported("p/c/1/0")) {
        Err(Error::InvalidArg(m)) => assert!(
            m.contains("chunk [1, 0] of \"/p\", outside its grid of [1, 1] chunks"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }

    // The merging store removed `t`.
    root.erase_prefix("t/").unwrap();
    match versions.merge_changes(&exported("t/c/0/0")) {
        Err(Error::InvalidArg(m)) => assert!(m.contains("no array or group"), "{m}"),
        other => panic!("{other:?}"),
    }

    // Nothing of them was merged: the commit holds the store's own changes only.
    versions.commit("shrink p, remove t").unwrap();
    let reader = open(&repo, "", Mode::Read);
    assert_eq!(reader.list_prefix("t/").unwrap(), Vec::<String>::new());
    assert_eq!(reader.get("p/c/0/0/0").unwrap(), None);
    assert_eq!(reader.get("p/c/1/0").unwrap(), None);
    let p = Array::open(reader.clone(), "p", Mode::Read).unwrap();
    assert_eq!(read_all(&p, ElementType::Float64, 8), vec![0u8; 2 * 64 * 8]);
}

/// Tags and branches whose names hold spaces, `&`, `#`, `=` or `%` open by URL with those
/// percent-encoded; names no URL can reach are refused when created; messages name the
/// tag or branch.
#[test]
fn ref_names_reach_every_url_that_encodes_them() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let store = open(&repo, "", Mode::Append);
    write_step(&store, 1);
    commit(&store, "step 1");
    let versions = repository_of(store.as_ref()).unwrap();
    for (name, encoded) in [("a b", "a%20b"), ("x&y#z=1%", "x%26y%23z%3D1%25")] {
        versions.create_tag(name).unwrap();
        check_step(&open(&repo, &format!("?tag={encoded}"), Mode::Read), 1);
        let branch = format!("dev {name}");
        versions.create_branch(&branch).unwrap();
        let on_branch = open(&repo, &format!("?branch=dev%20{encoded}"), Mode::ReadWrite);
        write_step(&on_branch, 2);
        commit(&on_branch, "step 2");
        check_step(
            &open(&repo, &format!("?branch=dev%20{encoded}"), Mode::Read),
            2,
        );
        check_step(&open(&repo, &format!("?tag={encoded}"), Mode::Read), 1);
    }
    for name in ["", "a\tb"] {
        for created in [versions.create_tag(name), versions.create_branch(name)] {
            match created {
                Err(Error::InvalidArg(m)) => assert!(m.contains("no URL could open it"), "{m}"),
                other => panic!("{name:?}: {other:?}"),
            }
        }
    }
    // A missing tag or branch is named, not masked.
    for query in ["?tag=no%20such%20tag", "?branch=no%20such%20tag"] {
        match open_url(&url(&repo, query), Mode::Read, None) {
            Err(Error::NotFound(m)) => assert!(m.contains("no%20such%20tag"), "{m}"),
            other => panic!("{query}: {other:?}"),
        }
    }
    // A relative path is refused as one.
    match open_url("icechunk:relative/repo", Mode::Append, None) {
        Err(Error::InvalidArg(m)) => assert!(m.contains("must be absolute"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(!Path::new("relative").exists() && !Path::new("icechunk:relative").exists());
}

/// Runs `call` on a thread of its own; its result, or a failure when it takes longer than
/// 30 s (a call waiting forever fails the test instead of hanging it).
fn promptly<T: Send + 'static>(what: &str, call: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(call());
    });
    match receiver.recv_timeout(std::time::Duration::from_secs(30)) {
        Ok(answer) => answer,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no answer after 30 s"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: the call panicked"),
    }
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The files of the repository at `dir` below `sub`, relative to `dir`, sorted.
fn files(dir: &Path, sub: &str) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir.join(sub))
        .unwrap()
        .map(|e| format!("{sub}/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    found.sort();
    found
}

#[test]
fn a_fifo_in_a_repository_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    let store = open(&good, "", Mode::Append);
    write_step(&store, 1);
    commit(&store, "step 1");
    drop(store);
    // Each file a read needs: the branch file, the snapshot it names, the manifests and
    // every chunk; reading must fail at once naming the FIFO. A transaction log and the
    // first snapshot are not read, but a FIFO there must not block either.
    let mut needed = vec!["repo".to_string()];
    needed.extend(files(&good, "manifests"));
    needed.extend(files(&good, "chunks"));
    let mut others = files(&good, "transactions");
    let snapshots = files(&good, "snapshots");
    assert_eq!(snapshots.len(), 2, "{snapshots:?}");
    others.extend(snapshots.iter().cloned());
    let mut refused_snapshots = 0;
    for (n, file) in needed.iter().chain(&others).enumerate() {
        let copy = dir.path().join(format!("copy{n}"));
        copy_dir(&good, &copy);
        std::fs::remove_file(copy.join(file)).unwrap();
        mkfifo(&copy.join(file));
        let at = copy.clone();
        let outcome = promptly(file, move || try_read_step(&at));
        match outcome {
            Err(e) => {
                let m = e.to_string();
                assert!(m.contains(&format!("{file:?}")), "{file}: {m}");
                assert!(m.contains("not a regular file"), "{file}: {m}");
                refused_snapshots += usize::from(file.starts_with("snapshots/"));
            }
            Ok(()) => assert!(!needed.contains(file), "{file}: read without an error"),
        }
        // Writing and committing on top: an error or a commit, at once.
        let at = copy.clone();
        promptly(file, move || -> zarr::Result<String> {
            let store = open_url(&url(&at, ""), Mode::ReadWrite, None)?;
            store.set("sim/pressure/c/0/0", &noisy(256, 2))?;
            repository_of(store.as_ref())?.commit("step 2")
        })
        .ok();
    }
    // The snapshot the branch names is read (the first one is not).
    assert_eq!(refused_snapshots, 1);
}

/// A repository at `dir/repo` with step 1 committed, and `dir/outside` beside it holding
/// `secret` (the bytes of one of its chunks) and nothing else.
fn repository_beside_outside(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let repo = dir.join("repo");
    let store = open(&repo, "", Mode::Append);
    write_step(&store, 1);
    commit(&store, "step 1");
    let outside = dir.join("outside");
    std::fs::create_dir(&outside).unwrap();
    (repo, outside)
}

/// Every file below `dir` with its bytes, sorted by path.
fn contents(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(contents(&path));
        } else {
            found.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    found.sort();
    found
}

#[test]
fn a_chunk_linked_outside_the_repository_is_refused() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (repo, outside) = repository_beside_outside(dir.path());
    let chunk = files(&repo, "chunks").remove(0);
    std::fs::rename(repo.join(&chunk), outside.join("secret")).unwrap();
    symlink(outside.join("secret"), repo.join(&chunk)).unwrap();
    let before = contents(&outside);
    let m = try_read_step(&repo).unwrap_err().to_string();
    assert!(m.contains(&format!("{chunk:?}")), "{m}");
    assert!(m.contains("leads outside the repository"), "{m}");
    // The same link, relative and inside the repository, is followed.
    std::fs::rename(outside.join("secret"), repo.join("kept")).unwrap();
    std::fs::remove_file(repo.join(&chunk)).unwrap();
    symlink("../kept", repo.join(&chunk)).unwrap();
    try_read_step(&repo).unwrap();
    assert_eq!(before.len(), 1);
}

#[test]
fn a_chunks_directory_linked_outside_the_repository_is_neither_read_nor_written() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (repo, outside) = repository_beside_outside(dir.path());
    let linked = outside.join("chunks");
    std::fs::rename(repo.join("chunks"), &linked).unwrap();
    symlink(&linked, repo.join("chunks")).unwrap();
    let before = contents(&outside);
    let m = try_read_step(&repo).unwrap_err().to_string();
    assert!(m.contains("\"chunks"), "{m}");
    assert!(m.contains("leads outside the repository"), "{m}");
    // A write of new chunks is refused before any file is made there.
    let store = open(&repo, "", Mode::ReadWrite);
    let refused = store.set("sim/pressure/c/0/0", &noisy(256, 2)).err();
    let m = refused
        .expect("a chunk written through a link out of the repository")
        .to_string();
    assert!(
        m.contains("\"chunks\"") && m.contains("leads outside the repository"),
        "{m}"
    );
    assert_eq!(contents(&outside), before);
}

#[test]
fn a_repository_given_through_a_link_is_its_target() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = repository_beside_outside(dir.path());
    let link = dir.path().join("link");
    symlink(&repo, &link).unwrap();
    check_step(&open(&link, "", Mode::Read), 1);
    let store = open(&link, "", Mode::ReadWrite);
    write_step(&store, 2);
    commit(&store, "step 2 through the link");
    check_step(&open(&repo, "", Mode::Read), 2);
}

/// A FIFO put in place of the repository's directory while a store is open: its commit
/// fails at once instead of waiting to lock a directory that is no longer one.
#[test]
fn a_fifo_in_place_of_the_repository_fails_a_commit_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let store = open(&repo, "", Mode::Append);
    write_step(&store, 1);
    std::fs::rename(&repo, dir.path().join("moved")).unwrap();
    mkfifo(&repo);
    let outcome = promptly("commit", move || {
        repository_of(store.as_ref())
            .map(|r| r.commit("step 1"))
            .unwrap()
    });
    match outcome {
        Err(Error::Io(m)) => assert!(m.contains("cannot lock the repository's directory"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// The store of the repository at `repo` (branch main) opened with `mode` and the option
/// `virtual_chunk_containers` naming `containers`.
fn with_containers(repo: &Path, mode: Mode, containers: &[&Path]) -> zarr::Result<Arc<dyn Store>> {
    let list: Vec<&str> = containers.iter().map(|d| d.to_str().unwrap()).collect();
    let options = json!({ "virtual_chunk_containers": list }).to_string();
    open_url(&url(repo, ""), mode, Some(&options))
}

#[test]
fn virtual_chunks_are_read_from_allowed_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, data, other) = (
        dir.path().join("repo"),
        dir.path().join("data"),
        dir.path().join("other"),
    );
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    // A file of 100 header bytes, then 12 big-endian int32 values (chunks of 4).
    let values: Vec<i32> = (0..12).map(|i| i * 1000 - 7).collect();
    let mut file = vec![0xAB; 100];
    file.extend(values.iter().flat_map(|v| v.to_be_bytes()));
    let archive = data.join("archive.bin");
    std::fs::write(&archive, &file).unwrap();
    std::fs::write(other.join("secret.bin"), &file).unwrap();
    let store = with_containers(&repo, Mode::Append, &[&data]).unwrap();
    let mut builder = ArrayBuilder::new(vec![12], ElementType::Int32);
    builder.chunks(vec![4]).compressor(Value::Null);
    builder.dtype_name(">i4").unwrap();
    builder.create(store.clone(), "v", Mode::CreateNew).unwrap();
    let icechunk = repository_of(store.as_ref()).unwrap();
    for c in 0..3u64 {
        icechunk
            .set_virtual_ref(
                &format!("v/c/{c}"),
                archive.to_str().unwrap(),
                100 + c * 16,
                16,
            )
            .unwrap();
    }
    // What cannot be referenced is refused, naming the file, and nothing changes.
    let refused = |key: &str, location: String, offset: u64, length: u64| {
        icechunk
            .set_virtual_ref(key, &location, offset, length)
            .unwrap_err()
    };
    let secret = other.join("secret.bin").display().to_string();
    let e = refused("v/c/0", secret.clone(), 100, 16);
    assert!(
        matches!(e, Error::InvalidArg(_))
            && e.to_string()
                .contains("lies beneath none of the directories"),
        "{e}"
    );
    let e = refused(
        "v/c/0",
        format!("{}/../other/secret.bin", data.display()),
        100,
        16,
    );
    assert!(e.to_string().contains("'..'"), "{e}");
    let e = refused("v/c/0", archive.display().to_string(), 140, 16);
    assert!(
        e.to_string().contains("run past its end (148 bytes)"),
        "{e}"
    );
    let e = refused("v/c/0", "relative/file.bin".into(), 0, 1);
    assert!(e.to_string().contains("not an absolute path"), "{e}");
    let e = refused("v/c/0", "s3://bucket/file.nc".into(), 0, 1);
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
    commit(&store, "virtual chunks");
    drop(store);
    // A reader that allows the directory reads the values; the file is not copied.
    let reader = with_containers(&repo, Mode::Read, &[&data]).unwrap();
    let array = Array::open(reader, "v", Mode::Read).unwrap();
    assert_eq!(
        read_all(&array, ElementType::Int32, 4),
        int32s(values.clone())
    );
    let size: u64 = common::dir_size(&repo);
    assert!(size < 4096, "the repository holds {size} bytes");
    // A reader that allows nothing cannot read them, and is told why.
    let reader = open(&repo, "", Mode::Read);
    let array = Array::open(reader, "v", Mode::Read).unwrap();
    let mut buf = vec![0u8; 48];
    let e = array
        .read(&[0], &[12], ElementType::Int32, Order::C, &mut buf)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("authorize the virtual chunk container"),
        "{e}"
    );
    // Bad option values are refused when opening.
    for bad in [
        json!(["relative"]),
        json!(["/"]),
        json!("/data"),
        json!(["/a/../b"]),
    ] {
        let options = json!({ "virtual_chunk_containers": bad }).to_string();
        let e = open_url(&url(&repo, ""), Mode::Read, Some(&options)).unwrap_err();
        assert!(matches!(e, Error::InvalidArg(_)), "{bad}: {e}");
    }
}
