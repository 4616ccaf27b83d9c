//! Concurrent writers: overlapping chunks (disjoint cells, unaligned regions) stay exact
//! with thread synchronization, also when every writer has its own handle (and processes
//! open the array through differently rooted stores); strided buffers write a block's
//! interior.

use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::io::lock::Synchronization;
use zarr::io::region::MemLayout;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{Durability, FilesystemStore, MemoryStore, Store};

const ROWS: u64 = 8 * 13;
const COLS: u64 = 37;

/// Writer `w` owns rows [13w, 13w+13) and writes each exactly once, one row per call. The
/// rows are not aligned to the 8-row chunks, so neighbours share chunks and every write is
/// a read-modify-write: an update lost to a race would stay lost.
fn writer(array: &Array, w: u64) {
    for row in 13 * w..13 * w + 13 {
        let values: Vec<u8> = (0..COLS).flat_map(|c| cell(row, c).to_ne_bytes()).collect();
        array
            .write(
                &[row, 0],
                &[1, COLS],
                ElementType::UInt32,
                Order::C,
                &values,
            )
            .unwrap();
    }
}

fn cell(row: u64, col: u64) -> u32 {
    (row * 1000 + col + 1) as u32
}

fn run_writers(sync: Option<Synchronization>) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    let mut lost = 0;
    for round in 0..10 {
        let mut builder = ArrayBuilder::new(vec![ROWS, COLS], ElementType::UInt32);
        builder
            .chunks(vec![8, 16])
            .compressor(json!({"id": "zlib", "level": 1}));
        let array = Arc::new(
            builder
                .create(store.clone(), &format!("a{round}"), Mode::CreateNew)
                .unwrap(),
        );
        if let Some(sync) = &sync {
            array.set_synchronization(sync).unwrap();
        }
        std::thread::scope(|s| {
            for w in 0..8 {
                let array = array.clone();
                s.spawn(move || writer(&array, w));
            }
        });
        let mut out = vec![0u8; (ROWS * COLS * 4) as usize];
        array
            .read(
                &[0, 0],
                &[ROWS, COLS],
                ElementType::UInt32,
                Order::C,
                &mut out,
            )
            .unwrap();
        let got: Vec<u32> = out
            .chunks(4)
            .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        lost += (0..ROWS * COLS)
            .filter(|&i| got[i as usize] != cell(i / COLS, i % COLS))
            .count();
    }
    lost
}

#[test]
fn eight_threads_rewriting_shared_chunks_lose_nothing_with_thread_locks() {
    assert_eq!(run_writers(Some(Synchronization::Thread)), 0);
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        run_writers(Some(Synchronization::Process(dir.path().join("locks")))),
        0
    );
    // Without locks the same writers lose updates on most runs; the count is printed, not
    // asserted, since a lucky schedule loses none.
    println!("cells lost without synchronization: {}", run_writers(None));
}

/// Elements of the incremented array, in chunks of 16: every writer has elements in every
/// chunk.
const ELEMENTS: u64 = 64;
/// Times each element is incremented.
const INCREMENTS: u32 = 16;

/// Creates the incremented array (zeros, zlib) at `path`.
fn create_counters(store: Arc<dyn Store>, path: &str) {
    let mut builder = ArrayBuilder::new(vec![ELEMENTS], ElementType::UInt32);
    builder
        .chunks(vec![16])
        .fill_value_json(json!(0))
        .compressor(json!({"id": "zlib", "level": 1}));
    builder.create(store, path, Mode::Overwrite).unwrap();
}

/// Writer `w` of `writers` increments its elements (`w`, `w + writers`, ...) `INCREMENTS`
/// times, each by reading it and writing it back plus one. Only `w` writes those elements,
/// but every write is a read-modify-write of a chunk all writers share: an update lost to a
/// race stays lost.
fn increment(array: &Array, w: u64, writers: u64) {
    for _ in 0..INCREMENTS {
        for i in (w..ELEMENTS).step_by(writers as usize) {
            let mut value = [0u8; 4];
            array
                .read(&[i], &[1], ElementType::UInt32, Order::C, &mut value)
                .unwrap();
            let next = u32::from_ne_bytes(value) + 1;
            array
                .write(
                    &[i],
                    &[1],
                    ElementType::UInt32,
                    Order::C,
                    &next.to_ne_bytes(),
                )
                .unwrap();
        }
    }
}

/// Increments lost: every element should hold `INCREMENTS`.
fn lost_increments(array: &Array) -> u64 {
    let mut out = vec![0u8; ELEMENTS as usize * 4];
    array
        .read(&[0], &[ELEMENTS], ElementType::UInt32, Order::C, &mut out)
        .unwrap();
    out.chunks(4)
        .map(|c| u64::from(INCREMENTS - u32::from_ne_bytes(c.try_into().unwrap())))
        .sum()
}

/// Opens the counters with `sync` through a handle of its own on `store`.
fn open_counters(store: Arc<dyn Store>, path: &str, sync: &Synchronization) -> Array {
    let array = Array::open(store, path, Mode::ReadWrite).unwrap();
    array.set_synchronization(sync).unwrap();
    array
}

/// 8 threads increment the counters at `path`, each through the handle `open` gives it;
/// returns the increments lost.
fn increment_from_threads(open: impl Fn() -> Array + Sync, check: &Array) -> u64 {
    std::thread::scope(|s| {
        for w in 0..8 {
            let open = &open;
            s.spawn(move || increment(&open(), w, 8));
        }
    });
    lost_increments(check)
}

#[test]
fn threads_with_their_own_handles_share_thread_locks() {
    // 8 writers x 8 elements x 16 increments = 8192 updates, each a partial chunk write.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("x");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(&root, true, true).unwrap());
    create_counters(store.clone(), "s/a");
    // Every thread opens its own store and array handle, half of them through a store
    // rooted at the group above the array.
    let lost = increment_from_threads(
        || {
            let (store_root, path) = if alternate() {
                (root.join("s"), "a")
            } else {
                (root.clone(), "s/a")
            };
            let store = Arc::new(FilesystemStore::open(store_root, true, false).unwrap());
            open_counters(store, path, &Synchronization::Thread)
        },
        &Array::open(store, "s/a", Mode::Read).unwrap(),
    );
    assert_eq!(lost, 0, "increments lost by threads with their own handles");
    // A memory store has no location: handles on the same store object share the locks.
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    create_counters(memory.clone(), "a");
    let lost = increment_from_threads(
        || open_counters(memory.clone(), "a", &Synchronization::Thread),
        &Array::open(memory.clone(), "a", Mode::Read).unwrap(),
    );
    assert_eq!(lost, 0, "increments lost on a memory store");
}

/// Alternates between true and false across calls (which store root a thread takes).
fn alternate() -> bool {
    use std::sync::atomic::{AtomicBool, Ordering};
    static NEXT: AtomicBool = AtomicBool::new(false);
    NEXT.fetch_xor(true, Ordering::Relaxed)
}

/// Environment variable naming the writer a re-executed test binary plays (see
/// `processes_through_differently_rooted_stores_share_lock_files`).
const WORKER: &str = "ZARR_TEST_INCREMENT_WORKER";

/// Writer `w` of 4 processes: odd writers open the array through a store rooted at the
/// group above it, even ones through the top store; all take lock files in `dir/locks`.
fn process_writer(dir: &Path, w: u64) {
    let (root, path) = if w % 2 == 1 {
        (dir.join("x/s"), "a")
    } else {
        (dir.join("x"), "s/a")
    };
    let store = Arc::new(FilesystemStore::open(root, true, false).unwrap());
    let sync = Synchronization::Process(dir.join("locks"));
    increment(&open_counters(store, path, &sync), w, 4);
}

#[test]
fn processes_through_differently_rooted_stores_share_lock_files() {
    if let Ok(spec) = std::env::var(WORKER) {
        let (w, dir) = spec.split_once(':').unwrap();
        process_writer(Path::new(dir), w.parse().unwrap());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(FilesystemStore::open(dir.path().join("x"), true, true).unwrap());
    create_counters(store.clone(), "s/a");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..4)
        .map(|w| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "concurrency::processes_through_differently_rooted_stores_share_lock_files",
                    "--test-threads=1",
                    "--quiet",
                ])
                .env(WORKER, format!("{w}:{}", dir.path().display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writer process failed");
    }
    // 4 writers x 16 elements x 16 increments = 1024 updates.
    let lost = lost_increments(&Array::open(store, "s/a", Mode::Read).unwrap());
    assert_eq!(lost, 0, "increments lost by processes");
}

#[test]
fn strided_buffers_write_and_read_a_block_interior() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    let mut builder = ArrayBuilder::new(vec![4, 6], ElementType::Int16);
    builder.chunks(vec![3, 4]).fill_value_json(json!(-1));
    let array = builder.create(store, "", Mode::Overwrite).unwrap();
    // A 4x6 block with a one-cell halo: 6x8 in memory; the interior starts at (1, 1).
    let halo: Vec<i16> = (0..48)
        .map(|i| {
            if (i / 8) % 5 == 0 || i % 8 == 0 || i % 8 == 7 {
                -99
            } else {
                i as i16
            }
        })
        .collect();
    let bytes: Vec<u8> = halo.iter().flat_map(|v| v.to_ne_bytes()).collect();
    array
        .write(
            &[0, 0],
            &[4, 6],
            ElementType::Int16,
            MemLayout::Strided(&[8, 1]),
            &bytes[18..],
        )
        .unwrap();
    let mut dense = vec![0u8; 48];
    array
        .read(&[0, 0], &[4, 6], ElementType::Int16, Order::C, &mut dense)
        .unwrap();
    let got: Vec<i16> = dense
        .chunks(2)
        .map(|c| i16::from_ne_bytes([c[0], c[1]]))
        .collect();
    let want: Vec<i16> = (0..4)
        .flat_map(|r| (0..6).map(move |c| (9 + r * 8 + c) as i16))
        .collect();
    assert_eq!(got, want);
    // Read back transposed through strides (column-major into a padded buffer).
    let mut padded = vec![0u8; 2 * 5 * 6];
    array
        .read(
            &[0, 0],
            &[4, 6],
            ElementType::Int16,
            MemLayout::Strided(&[1, 5]),
            &mut padded,
        )
        .unwrap();
    let got: Vec<i16> = padded
        .chunks(2)
        .map(|c| i16::from_ne_bytes([c[0], c[1]]))
        .collect();
    for r in 0..4 {
        for c in 0..6 {
            assert_eq!(got[r + 5 * c], want[6 * r + c], "row {r}, column {c}");
        }
    }
    let overlap = array.read(
        &[0, 0],
        &[4, 6],
        ElementType::Int16,
        MemLayout::Strided(&[1, 2]),
        &mut padded,
    );
    assert!(overlap.unwrap_err().to_string().contains("overlap"));
    let short = array.read(
        &[0, 0],
        &[4, 6],
        ElementType::Int16,
        MemLayout::Strided(&[8, 1]),
        &mut padded[..40],
    );
    assert!(short.is_err());
    let negative = array.read(
        &[0, 0],
        &[4, 6],
        ElementType::Int16,
        MemLayout::Strided(&[-8, 1]),
        &mut padded,
    );
    assert!(negative.is_err());
}

/// Keys of one directory stored and erased over and over by threads of their own: a store
/// creates the directory while erasures prune it, and no store or erasure fails (creating
/// a directory that another writer created and an erasure pruned in between once failed
/// with "File exists").
#[test]
fn stores_and_erasures_racing_in_one_directory_never_fail() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 25_000;
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::open(dir.path(), true, true).unwrap();
    store.set_durability(Durability::None).unwrap();
    let errors = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (store, errors) = (&store, &errors);
            s.spawn(move || {
                let key = format!("d/k{t}");
                for _ in 0..ROUNDS {
                    let stored = store.set(&key, b"x");
                    let erased = store.erase(&key).map(drop);
                    for error in [stored, erased].into_iter().filter_map(Result::err) {
                        errors.lock().unwrap().push(error.to_string());
                    }
                }
            });
        }
    });
    let errors = errors.into_inner().unwrap();
    assert!(
        errors.is_empty(),
        "{} failed: {:?}",
        errors.len(),
        &errors[..errors.len().min(3)]
    );
    assert!(
        !dir.path().join("d").exists(),
        "the emptied directory was pruned"
    );
}

#[test]
fn writers_and_erasers_of_different_chunks_in_one_directory_never_fail() {
    // Chunks (0, j) of a v2 array with '/' keys all live in the directory `a/0/`. Writers
    // store data; erasers write the fill value, which erases their chunk and prunes `a/0/`
    // whenever it empties, while writers are creating files in it.
    const CHUNKS: u64 = 8;
    const ROUNDS: u64 = 400;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    let mut builder = ArrayBuilder::new(vec![1, CHUNKS * 4], ElementType::UInt32);
    builder.chunks(vec![1, 4]).separator('/');
    let array = Arc::new(builder.create(store, "a", Mode::CreateNew).unwrap());
    let write = |j: u64, value: u32| {
        let values: Vec<u8> = (0..4).flat_map(|_| value.to_ne_bytes()).collect();
        array.write(&[0, 4 * j], &[1, 4], ElementType::UInt32, Order::C, &values)
    };
    let failures: usize = std::thread::scope(|s| {
        let threads: Vec<_> = (0..CHUNKS)
            .map(|j| {
                s.spawn(move || {
                    (1..=ROUNDS)
                        .filter(|round| {
                            // Even chunks end holding data; odd ones end erased.
                            let value = if (round + j).is_multiple_of(2) {
                                0
                            } else {
                                *round as u32
                            };
                            write(j, value).is_err()
                        })
                        .count()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    });
    assert_eq!(failures, 0);
    let mut out = vec![0u8; (CHUNKS * 16) as usize];
    array
        .read(
            &[0, 0],
            &[1, CHUNKS * 4],
            ElementType::UInt32,
            Order::C,
            &mut out,
        )
        .unwrap();
    for j in 0..CHUNKS {
        let last = if (ROUNDS + j).is_multiple_of(2) {
            0
        } else {
            ROUNDS as u32
        };
        let got = u32::from_ne_bytes(out[(j * 16) as usize..][..4].try_into().unwrap());
        assert_eq!(got, last, "chunk {j}");
    }
}

/// Creates the incremented array as a v3 array of one shard of four inner chunks.
fn create_sharded_counters(store: Arc<dyn Store>, path: &str) {
    let mut builder = ArrayBuilder::new(vec![ELEMENTS], ElementType::UInt32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![16])
        .shard_shape(vec![ELEMENTS])
        .fill_value_json(json!(0));
    builder.create(store, path, Mode::Overwrite).unwrap();
}

#[test]
fn versioned_writers_lose_nothing_without_locks() {
    // Each thread has its own handle and no lock is shared: only the conditional writes
    // keep the 8192 partial rewrites of shared chunks (and of one shared shard) from
    // losing each other.
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    create_counters(memory.clone(), "plain");
    create_sharded_counters(memory.clone(), "sharded");
    for path in ["plain", "sharded"] {
        let lost = increment_from_threads(
            || open_counters(memory.clone(), path, &Synchronization::Versioned),
            &Array::open(memory.clone(), path, Mode::Read).unwrap(),
        );
        assert_eq!(lost, 0, "increments lost with versioned writes ({path})");
    }
    // A directory store keeps no versions: refused, naming what to use instead.
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    create_counters(store.clone(), "a");
    let array = Array::open(store, "a", Mode::ReadWrite).unwrap();
    match array.set_synchronization(&Synchronization::Versioned) {
        Err(zarr::Error::Unsupported(m)) => assert!(m.contains("lock files"), "{m}"),
        other => panic!("versioned writes on a directory: {other:?}"),
    }
}

#[test]
fn thread_locks_on_a_shared_shard_neither_deadlock_nor_lose_updates() {
    // A writer holds the shard's lock while the shard's chunks are encoded on the pool;
    // a pool thread that took another writer's job for the same shard while waiting used
    // to block on that lock for good.
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    create_sharded_counters(memory.clone(), "a");
    let lost = increment_from_threads(
        || open_counters(memory.clone(), "a", &Synchronization::Thread),
        &Array::open(memory.clone(), "a", Mode::Read).unwrap(),
    );
    assert_eq!(
        lost, 0,
        "increments lost on a shared shard under thread locks"
    );
}

#[test]
fn versioned_partial_writes_store_chunks_that_become_fill() {
    // A conditional write cannot erase: a chunk rewritten to all fill value is stored.
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    create_counters(memory.clone(), "a");
    let array = open_counters(memory.clone(), "a", &Synchronization::Versioned);
    let ones = [1u32; 8].map(u32::to_ne_bytes).concat();
    array
        .write(&[0], &[8], ElementType::UInt32, Order::C, &ones)
        .unwrap();
    array
        .write(&[0], &[8], ElementType::UInt32, Order::C, &[0u8; 32])
        .unwrap();
    assert!(memory.contains("a/c/0").unwrap(), "the chunk was erased");
    assert_eq!(lost_increments(&array), u64::from(INCREMENTS) * ELEMENTS);
}

#[test]
fn of_concurrent_creators_in_mode_w_minus_exactly_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let stores: [Arc<dyn Store>; 2] = [
        Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap()),
        Arc::new(MemoryStore::new()),
    ];
    for store in stores {
        for round in 0..8 {
            let path = format!("r{round}");
            let outcomes: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..8u64)
                    .map(|w| {
                        let (store, path) = (store.clone(), path.clone());
                        s.spawn(move || {
                            let mut builder = ArrayBuilder::new(vec![w + 1], ElementType::UInt8);
                            builder.chunks(vec![1]);
                            builder
                                .create(store, &path, Mode::CreateNew)
                                .map(|a| a.metadata().shape[0])
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let won: Vec<u64> = outcomes
                .iter()
                .filter_map(|o| o.as_ref().ok())
                .copied()
                .collect();
            assert_eq!(won.len(), 1, "{store:?} round {round}: {outcomes:?}");
            for outcome in &outcomes {
                if let Err(e) = outcome {
                    assert!(matches!(e, zarr::Error::Exists(_)), "{e:?}");
                }
            }
            // The winner's document is the one stored.
            let shape = Array::open(store.clone(), &path, Mode::Read)
                .unwrap()
                .metadata()
                .shape[0];
            assert_eq!(shape, won[0]);
        }
    }
}

#[test]
fn conditional_writes_check_what_is_stored() {
    use zarr::store::Expect;
    let dir = tempfile::tempdir().unwrap();
    let directory = FilesystemStore::open(dir.path(), true, true).unwrap();
    let memory = MemoryStore::new();
    for store in [&directory as &dyn Store, &memory] {
        assert!(store.set_if("k/v", b"one", Expect::Absent).unwrap());
        assert!(!store.set_if("k/v", b"two", Expect::Absent).unwrap());
        assert_eq!(store.get("k/v").unwrap().unwrap(), b"one");
    }
    // Versions: a stale one is refused, the current one accepted.
    let mut buf = Vec::new();
    let first = memory.get_versioned("k/v", &mut buf, 100).unwrap().unwrap();
    assert_eq!(buf, b"one");
    assert!(memory
        .set_if("k/v", b"two", Expect::Version(&first))
        .unwrap());
    assert!(!memory
        .set_if("k/v", b"three", Expect::Version(&first))
        .unwrap());
    let second = memory.get_versioned("k/v", &mut buf, 100).unwrap().unwrap();
    assert_eq!(buf, b"two");
    assert_ne!(first, second);
    assert!(memory
        .get_versioned("missing", &mut buf, 100)
        .unwrap()
        .is_none());
    assert!(matches!(
        directory.set_if("k/v", b"x", Expect::Version(&second)),
        Err(zarr::Error::Unsupported(_))
    ));
    // A value too long for the bound is refused, not read.
    assert!(memory.get_versioned("k/v", &mut buf, 2).is_err());
}
