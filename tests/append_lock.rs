//! The append lock: two programs appending to one array no longer both succeed while half
//! the steps are lost. The second appender is refused with `Error::Conflict` naming the
//! holder; it may append once the first is done, after the first's steps. Checked with two
//! processes (this test binary run again as a child appender) on a directory store and on
//! the S3 emulator, sharded and not, and within one process through two handles.

use crate::common;

use serde_json::json;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{open_url, FilesystemStore, Store};
use zarr::Error;

/// Steps each appender writes.
const STEPS: u64 = 100;
/// Elements of a step.
const WIDTH: u64 = 6;

/// The step `step` of appender `who`: every element tells both.
fn step_values(who: u32, step: u64) -> Vec<u8> {
    (0..WIDTH)
        .flat_map(|i| (who * 1_000_000 + step as u32 * 10 + i as u32).to_le_bytes())
        .collect()
}

/// Appends step `step` of appender `who` to `array`.
fn append_step(array: &Array, who: u32, step: u64) -> zarr::Result<Vec<u64>> {
    array.append(
        0,
        &[1, WIDTH],
        ElementType::UInt32,
        Order::C,
        &step_values(who, step),
    )
}

fn create_series(store: Arc<dyn Store>, sharded: bool) {
    let mut builder = ArrayBuilder::new(vec![0, WIDTH], ElementType::UInt32);
    builder.chunks(vec![10, WIDTH]).zarr_format(3).unwrap();
    if sharded {
        builder.shard_shape(vec![10, WIDTH]);
        builder.chunks(vec![1, WIDTH]);
    }
    builder.create(store, "t", Mode::Overwrite).unwrap();
}

/// Runs this binary again as appender `who` of the store at `url` (with `options`): it
/// appends its steps, waiting its turn when another holds the lock.
fn spawn_appender(who: u32, url: &str, options: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "append_lock::child_appender",
            "--ignored",
            "--nocapture",
        ])
        .env("ZARR_TEST_APPENDER", format!("{who}\n{url}\n{options}"))
        .spawn()
        .unwrap()
}

/// The child's work (a no-op unless run by [`spawn_appender`]): opens the array, takes the
/// append lock with its first append (retrying while another appender holds it, each
/// refusal counted on standard output), then appends its steps one by one and frees the
/// handle.
#[test]
#[ignore = "run as a child process by the tests below"]
fn child_appender() {
    let Ok(spec) = std::env::var("ZARR_TEST_APPENDER") else {
        return;
    };
    let mut parts = spec.splitn(3, '\n');
    let who: u32 = parts.next().unwrap().parse().unwrap();
    let url = parts.next().unwrap();
    let options = parts.next().filter(|o| !o.is_empty());
    let store = open_url(url, Mode::ReadWrite, options).unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut refusals = 0;
    let array = loop {
        let array = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
        match append_step(&array, who, 0) {
            Ok(_) => break array,
            Err(Error::Conflict(message)) => {
                assert!(message.contains("is being appended to"), "{message}");
                refusals += 1;
                assert!(Instant::now() < deadline, "never got the lock: {message}");
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("appender {who}: {e}"),
        }
    };
    for step in 1..STEPS {
        append_step(&array, who, step).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    drop(array);
    println!("appender {who} refused {refusals} times");
}

/// Every step of both appenders is stored once, each appender's steps contiguous and in
/// order.
fn check_both_appended(store: Arc<dyn Store>) {
    let array = Array::open(store, "t", Mode::Read).unwrap();
    let shape = array.metadata().shape.clone();
    assert_eq!(shape, vec![2 * STEPS, WIDTH], "steps lost or doubled");
    let mut buf = vec![0u8; (2 * STEPS * WIDTH * 4) as usize];
    array
        .read(&[0, 0], &shape, ElementType::UInt32, Order::C, &mut buf)
        .unwrap();
    let first = u32::from_le_bytes(buf[..4].try_into().unwrap()) / 1_000_000;
    assert!(first == 1 || first == 2, "first step by {first}");
    let second = 3 - first;
    let mut expected = Vec::new();
    for who in [first, second] {
        for step in 0..STEPS {
            expected.extend(step_values(who, step));
        }
    }
    assert!(
        buf == expected,
        "the stored steps are not both appenders' steps in turn"
    );
}

fn two_processes(url: &str, options: &str, store: Arc<dyn Store>) {
    for sharded in [false, true] {
        create_series(store.clone(), sharded);
        let mut children = [
            spawn_appender(1, url, options),
            spawn_appender(2, url, options),
        ];
        for child in &mut children {
            assert!(child.wait().unwrap().success(), "an appender failed");
        }
        check_both_appended(store.clone());
        assert_eq!(
            store.get("t/.zarr-append.lock").unwrap(),
            None,
            "the lock outlived its holders"
        );
    }
}

#[test]
fn two_processes_appending_to_a_directory_store_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    two_processes(dir.path().to_str().unwrap(), "", store);
}

#[test]
fn two_processes_appending_to_s3_lose_nothing() {
    let Some(server) = common::moto() else { return };
    let options = common::s3_options(server.port);
    let url = "s3://zarr-test/append-lock";
    let store = open_url(url, Mode::ReadWrite, Some(&options)).unwrap();
    two_processes(url, &options, store);
}

#[test]
fn a_second_handle_is_refused_until_the_first_is_freed() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    for sharded in [false, true] {
        create_series(store.clone(), sharded);
        let first = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
        let second = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
        append_step(&first, 1, 0).unwrap();
        let lock = std::fs::read_to_string(dir.path().join("t/.zarr-append.lock")).unwrap();
        assert!(
            lock.contains(&format!("\"pid\":{}", std::process::id())),
            "{lock}"
        );
        match append_step(&second, 2, 0) {
            Err(Error::Conflict(message)) => {
                assert!(
                    message.contains("another handle of this process"),
                    "{message}"
                )
            }
            other => panic!("second appender not refused: {other:?}"),
        }
        assert!(matches!(
            second.resize(&[5, WIDTH]),
            Err(Error::Conflict(_))
        ));
        append_step(&first, 1, 1).unwrap();
        drop(first);
        assert!(!dir.path().join("t/.zarr-append.lock").exists());
        // The second continues after the first's steps, not over them.
        let shape = append_step(&second, 2, 0).unwrap();
        assert_eq!(shape, vec![3, WIDTH]);
        let mut buf = vec![0u8; (3 * WIDTH * 4) as usize];
        second
            .read(
                &[0, 0],
                &[3, WIDTH],
                ElementType::UInt32,
                Order::C,
                &mut buf,
            )
            .unwrap();
        let expected = [step_values(1, 0), step_values(1, 1), step_values(2, 0)].concat();
        assert_eq!(buf, expected);
    }
}

/// Writes a lock document as another holder would.
fn plant_lock(dir: &std::path::Path, host: &str, pid: u32) {
    std::fs::write(
        dir.join("t/.zarr-append.lock"),
        json!({"host": host, "pid": pid, "token": "planted", "since": 1}).to_string(),
    )
    .unwrap();
}

fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn stale_locks_are_taken_over_and_others_named() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    create_series(store.clone(), true);
    // A process of this host that has ended: its lock is taken over.
    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    plant_lock(dir.path(), &this_host(), gone_pid);
    let array = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
    append_step(&array, 1, 0).unwrap();
    drop(array);
    // A running process of this host (the parent of this one), and a process of another
    // host: refused, naming the holder and the file, and nothing appended.
    for (host, pid) in [
        (this_host(), std::os::unix::process::parent_id()),
        ("elsewhere.example".to_string(), 4242),
    ] {
        plant_lock(dir.path(), &host, pid);
        let array = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
        match append_step(&array, 2, 0) {
            Err(Error::Conflict(message)) => {
                assert!(message.contains(&format!("process {pid}")), "{message}");
                assert!(message.contains(&host), "{message}");
                assert!(message.contains("t/.zarr-append.lock"), "{message}");
            }
            other => panic!("not refused: {other:?}"),
        }
        drop(array);
        assert!(
            dir.path().join("t/.zarr-append.lock").exists(),
            "a lock not ours was removed"
        );
        let array = Array::open(store.clone(), "t", Mode::Read).unwrap();
        assert_eq!(array.metadata().shape, vec![1, WIDTH]);
    }
    // A lock that is not one: refused, the file named.
    std::fs::write(dir.path().join("t/.zarr-append.lock"), b"\x00garbage").unwrap();
    let array = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
    match array.resize(&[4, WIDTH]) {
        Err(Error::Conflict(message)) => assert!(message.contains("cannot be read"), "{message}"),
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn coordinated_writers_turn_the_lock_off() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    create_series(store.clone(), false);
    let first = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
    let second = Array::open(store.clone(), "t", Mode::ReadWrite).unwrap();
    first.resize(&[2, WIDTH]).unwrap();
    assert!(dir.path().join("t/.zarr-append.lock").exists());
    // Turning it off releases the lock held.
    first.set_append_lock(false).unwrap();
    second.set_append_lock(false).unwrap();
    assert!(!dir.path().join("t/.zarr-append.lock").exists());
    first.resize(&[4, WIDTH]).unwrap();
    second.resize(&[6, WIDTH]).unwrap();
    assert!(!dir.path().join("t/.zarr-append.lock").exists());
}
