//! The decoded-chunk cache of an array handle: repeated reads take kept chunks instead of
//! reading and decoding them (counted on a counting store), data stays exact, the size
//! bounds what is kept, and writes through any handle or store of the process make kept
//! chunks stale, also while other threads read through the cache.

use crate::common;

use common::counting::Counting;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::Store;

/// Memory stores share one write generation: the tests run one at a time, so that one's
/// writes do not empty the other's cache while it counts reads.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn make(store: Arc<dyn Store>, path: &str, shards: bool) -> Array {
    let mut builder = ArrayBuilder::new(vec![64, 64], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![16, 16])
        .fill_value_json(json!(-1))
        .compressor(json!({"id": "zstd", "level": 1}));
    if shards {
        builder.shard_shape(vec![32, 32]);
    }
    builder.create(store, path, Mode::Overwrite).unwrap()
}

fn pattern(offset: i32) -> Vec<u8> {
    (0..64 * 64i32)
        .flat_map(|v| (v * 3 + offset).to_ne_bytes())
        .collect()
}

/// The elements of `data` (64 x 64 int32) in rows `r`, columns `c`.
fn part(data: &[u8], r: std::ops::Range<usize>, c: std::ops::Range<usize>) -> Vec<u8> {
    r.flat_map(|row| data[(row * 64 + c.start) * 4..(row * 64 + c.end) * 4].to_vec())
        .collect()
}

fn read(array: &Array, r: std::ops::Range<u64>, c: std::ops::Range<u64>) -> Vec<u8> {
    let count = [r.end - r.start, c.end - c.start];
    let mut out = vec![0u8; (count[0] * count[1] * 4) as usize];
    array
        .read(
            &[r.start, c.start],
            &count,
            ElementType::Int32,
            Order::C,
            &mut out,
        )
        .unwrap();
    out
}

/// Reads (whole values and ranges) since the last reset.
fn reads(counting: &Counting) -> u64 {
    counting.gets.load(Ordering::SeqCst) + counting.ranges.load(Ordering::SeqCst)
}

#[test]
fn repeated_reads_take_kept_chunks_and_writes_make_them_stale() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    for shards in [false, true] {
        let counting = Arc::new(Counting::default());
        let store: Arc<dyn Store> = counting.clone();
        let array = make(store.clone(), "a", shards);
        let data = pattern(7);
        array
            .write(&[0, 0], &[64, 64], ElementType::Int32, Order::C, &data)
            .unwrap();
        let reader = Array::open(store.clone(), "a", Mode::Read).unwrap();
        reader.set_cache_bytes(1 << 20);
        assert_eq!(reader.cache_bytes(), 1 << 20);

        // A first read reads its chunks (3 x 3 of them); overlapping reads after it read
        // nothing, and every element is exact.
        counting.reset();
        assert!(read(&reader, 5..40, 10..45) == part(&data, 5..40, 10..45));
        assert!(reads(&counting) > 0, "shards {shards}");
        counting.reset();
        for (r, c) in [
            (6..40, 11..45),
            (16..32, 16..32),
            (5..6, 44..45),
            (0..48, 0..48),
        ] {
            let got = read(
                &reader,
                r.start as u64..r.end as u64,
                c.start as u64..c.end as u64,
            );
            assert!(got == part(&data, r.clone(), c.clone()), "{r:?} {c:?}");
        }
        // (0..48 reaches chunks not read before: only those are read.)
        let first = reads(&counting);
        counting.reset();
        assert!(read(&reader, 0..48, 0..48) == part(&data, 0..48, 0..48));
        assert_eq!(
            reads(&counting),
            0,
            "shards {shards}: all kept ({first} before)"
        );

        // A write through another handle: the next read sees it, exactly.
        let writer = Array::open(store.clone(), "a", Mode::ReadWrite).unwrap();
        let new = pattern(-1000);
        writer
            .write(
                &[16, 16],
                &[16, 16],
                ElementType::Int32,
                Order::C,
                &part(&new, 16..32, 16..32),
            )
            .unwrap();
        let mut expected = data.clone();
        for row in 16..32 {
            expected[(row * 64 + 16) * 4..(row * 64 + 32) * 4]
                .copy_from_slice(&new[(row * 64 + 16) * 4..(row * 64 + 32) * 4]);
        }
        assert!(read(&reader, 0..48, 0..48) == part(&expected, 0..48, 0..48));
        // A write straight to the store (erasing a chunk): stale too.
        // (The chunk, or the shard holding it: rows and columns 0..16, or 0..32.)
        assert!(store.erase("a/c/0/0").unwrap());
        let erased = if shards { 32 } else { 16 };
        for row in 0..erased {
            for v in expected[row * 64 * 4..(row * 64 + erased) * 4].chunks_exact_mut(4) {
                v.copy_from_slice(&(-1i32).to_ne_bytes());
            }
        }
        assert!(
            read(&reader, 0..48, 0..48) == part(&expected, 0..48, 0..48),
            "shards {shards}: an erased chunk reads as the fill value"
        );

        // A small cache keeps what fits and stays exact; size 0 keeps nothing.
        reader.set_cache_bytes(2 * 16 * 16 * 4);
        for _ in 0..2 {
            assert!(read(&reader, 16..64, 16..64) == part(&expected, 16..64, 16..64));
        }
        reader.set_cache_bytes(0);
        counting.reset();
        read(&reader, 16..32, 16..32);
        let once = reads(&counting);
        read(&reader, 16..32, 16..32);
        assert_eq!(reads(&counting), 2 * once, "no cache: every read reads");
    }
}

#[test]
fn writes_during_cached_reads_are_never_hidden() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let array = make(store.clone(), "w", false);
    let reader = Array::open(store.clone(), "w", Mode::Read).unwrap();
    reader.set_cache_bytes(1 << 20);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for t in 0..3u64 {
            let (reader, stop) = (&reader, &stop);
            scope.spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let lo = (t * 8) % 48;
                    read(reader, lo..lo + 16, 0..64);
                }
            });
        }
        for k in 0..60i32 {
            let values: Vec<u8> = (0..64 * 64).flat_map(|_| k.to_ne_bytes()).collect();
            array
                .write(&[0, 0], &[64, 64], ElementType::Int32, Order::C, &values)
                .unwrap();
            // Whatever the readers kept meanwhile, a read after the write sees it.
            assert!(read(&reader, 0..64, 0..64) == values, "round {k}");
        }
        stop.store(true, Ordering::SeqCst);
    });
}
