//! Region I/O against a dense reference: random shapes, chunk shapes, orders, separators
//! and regions; every write goes to both, every read must match the reference exactly.

use crate::common;

use serde_json::json;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};

/// A small deterministic generator (xorshift), so failures reproduce.
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

/// Row-major flat index of `idx` in `shape`.
fn flat(idx: &[u64], shape: &[u64]) -> usize {
    idx.iter()
        .zip(shape)
        .fold(0, |acc, (i, s)| acc * *s as usize + *i as usize)
}

/// Every index of `count` in C order, or F order.
fn indices(count: &[u64], order: Order) -> Vec<Vec<u64>> {
    let n: u64 = count.iter().product();
    let mut out = Vec::with_capacity(n as usize);
    for mut k in 0..n {
        let mut idx = vec![0u64; count.len()];
        let dims: Vec<usize> = match order {
            Order::C => (0..count.len()).rev().collect(),
            Order::F => (0..count.len()).collect(),
        };
        for d in dims {
            idx[d] = k % count[d];
            k /= count[d];
        }
        out.push(idx);
    }
    out
}

fn random_region(rng: &mut Rng, shape: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let start: Vec<u64> = shape.iter().map(|&s| rng.below(s + 1)).collect();
    let count: Vec<u64> = shape
        .iter()
        .zip(&start)
        .map(|(&s, &st)| rng.below(s - st + 1))
        .collect();
    (start, count)
}

#[test]
fn random_regions_match_a_dense_reference() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for case in 0..120 {
        let rank = rng.below(5) as usize;
        let shape: Vec<u64> = (0..rank).map(|_| rng.below(9)).collect();
        let chunks: Vec<u64> = (0..rank).map(|_| 1 + rng.below(4)).collect();
        let chunk_order = if rng.below(2) == 0 {
            Order::C
        } else {
            Order::F
        };
        let big_endian = rng.below(2) == 0;
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut builder = ArrayBuilder::new(shape.clone(), ElementType::UInt16);
        builder
            .chunks(chunks.clone())
            .order(chunk_order)
            .separator(if rng.below(2) == 0 { '.' } else { '/' })
            .fill_value_json(json!(7))
            .compressor(if rng.below(2) == 0 {
                json!(null)
            } else {
                json!({"id": "zlib"})
            });
        if big_endian {
            builder.dtype_name(">u2").unwrap();
        }
        let array = builder
            .create(store.clone(), "g/arr", Mode::CreateNew)
            .unwrap();
        let total: u64 = shape.iter().product();
        let mut reference = vec![7u16; total as usize];
        for _step in 0..6 {
            let (start, count) = random_region(&mut rng, &shape);
            let order = if rng.below(2) == 0 {
                Order::C
            } else {
                Order::F
            };
            let positions = indices(&count, order);
            // Values drawn from a small set so some chunks end up all fill (and get erased).
            let values: Vec<u16> = positions
                .iter()
                .map(|_| {
                    if rng.below(3) == 0 {
                        7
                    } else {
                        rng.below(1000) as u16
                    }
                })
                .collect();
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            array
                .write(&start, &count, ElementType::UInt16, order, &bytes)
                .unwrap();
            for (pos, v) in positions.iter().zip(&values) {
                let idx: Vec<u64> = pos.iter().zip(&start).map(|(p, s)| p + s).collect();
                reference[flat(&idx, &shape)] = *v;
            }
            let (start, count) = random_region(&mut rng, &shape);
            let order = if rng.below(2) == 0 {
                Order::C
            } else {
                Order::F
            };
            let n: u64 = count.iter().product();
            let mut out = vec![0u8; n as usize * 2];
            array
                .read(&start, &count, ElementType::UInt16, order, &mut out)
                .unwrap();
            let got: Vec<u16> = out
                .chunks(2)
                .map(|c| u16::from_ne_bytes([c[0], c[1]]))
                .collect();
            let want: Vec<u16> = indices(&count, order)
                .iter()
                .map(|pos| {
                    let idx: Vec<u64> = pos.iter().zip(&start).map(|(p, s)| p + s).collect();
                    reference[flat(&idx, &shape)]
                })
                .collect();
            assert_eq!(
                got, want,
                "case {case}: shape {shape:?} chunks {chunks:?} start {start:?} count {count:?}"
            );
        }
        // Reopen from the store and read everything.
        let reopened = Array::open(store.clone(), "g/arr", Mode::Read).unwrap();
        let mut out = vec![0u8; total as usize * 2];
        reopened
            .read(
                &vec![0; rank],
                &shape,
                ElementType::UInt16,
                Order::C,
                &mut out,
            )
            .unwrap();
        let got: Vec<u16> = out
            .chunks(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(got, reference, "case {case} after reopening");
        // No stored chunk may be all fill.
        let meta = reopened.metadata();
        assert!(reopened.nchunks_initialized().unwrap() <= meta.num_chunks());
    }
}

#[test]
fn resize_and_append_keep_data_and_erase_outside_chunks() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(vec![4, 4], ElementType::Int32);
    builder
        .chunks(vec![2, 2])
        .compressor(json!(null))
        .zarr_format(2)
        .unwrap();
    let array = builder.create(store.clone(), "", Mode::Overwrite).unwrap();
    let data: Vec<u8> = (1..=16i32).flat_map(|v| v.to_ne_bytes()).collect();
    array
        .write(&[0, 0], &[4, 4], ElementType::Int32, Order::C, &data)
        .unwrap();
    assert_eq!(array.nchunks_initialized().unwrap(), 4);
    array.resize(&[2, 4]).unwrap();
    // The resizing handle holds the array's append lock until it is dropped.
    assert_eq!(
        store.list().unwrap(),
        vec![".zarr-append.lock", ".zarray", "0.0", "0.1"]
    );
    let extra: Vec<u8> = (100..108i32).flat_map(|v| v.to_ne_bytes()).collect();
    let shape = array
        .append(0, &[2, 4], ElementType::Int32, Order::C, &extra)
        .unwrap();
    assert_eq!(shape, vec![4, 4]);
    let mut out = vec![0u8; 64];
    array
        .read(&[0, 0], &[4, 4], ElementType::Int32, Order::C, &mut out)
        .unwrap();
    let got: Vec<i32> = out
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![1, 2, 3, 4, 5, 6, 7, 8, 100, 101, 102, 103, 104, 105, 106, 107]
    );
    let column: Vec<u8> = [9i32, 9, 9, 9]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    assert_eq!(
        array
            .append(1, &[4, 1], ElementType::Int32, Order::F, &column)
            .unwrap(),
        vec![4, 5]
    );
    assert!(array
        .append(1, &[3, 1], ElementType::Int32, Order::C, &column[..12])
        .is_err());
    assert!(array
        .append(2, &[4, 1], ElementType::Int32, Order::C, &column)
        .is_err());
}

#[test]
fn corrupt_chunks_fail_with_the_key_and_leave_the_array_usable() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(vec![4], ElementType::Float64);
    builder.chunks(vec![2]);
    let array = builder.create(store.clone(), "x", Mode::Overwrite).unwrap();
    let data: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    array
        .write(&[0], &[4], ElementType::Float64, Order::C, &data)
        .unwrap();
    store.set("x/c/1", b"not zstd at all").unwrap();
    let mut out = vec![0u8; 32];
    let err = array
        .read(&[0], &[4], ElementType::Float64, Order::C, &mut out)
        .unwrap_err();
    assert!(err.to_string().contains("\"x/c/1\""), "{err}");
    let mut first = vec![0u8; 16];
    array
        .read(&[0], &[2], ElementType::Float64, Order::C, &mut first)
        .unwrap();
    assert_eq!(first, data[..16]);
    // A partial write into the corrupt chunk fails without touching it; a full write repairs it.
    assert!(array
        .write(&[3], &[1], ElementType::Float64, Order::C, &data[..8])
        .is_err());
    assert_eq!(store.get("x/c/1").unwrap().unwrap(), b"not zstd at all");
    array
        .write(&[2], &[2], ElementType::Float64, Order::C, &data[16..])
        .unwrap();
    array
        .read(&[0], &[4], ElementType::Float64, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, data);
}

/// Reads of local files spanning more than one read-ahead batch (64 MiB of chunks) go by
/// batches whose files are read ahead while the pool decodes; writes of many chunks go by
/// batches stored behind the encoding. Both exact, whole and in part, sharded or not, with
/// and without the decoded-chunk cache.
#[test]
fn large_reads_and_writes_of_local_files_are_exact() {
    use zarr::store::FilesystemStore;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path(), true, true).unwrap());
    let shape = [3072u64, 4096];
    let data: Vec<u8> = (0..shape[0] * shape[1])
        .flat_map(|i| ((i % 65521) as f64 * 0.25 - (i / 4096) as f64).to_ne_bytes())
        .collect();
    for (name, shards) in [("plain", None), ("sharded", Some(vec![1024u64, 1024]))] {
        let mut builder = ArrayBuilder::new(shape.to_vec(), ElementType::Float64);
        builder.zarr_format(3).unwrap();
        builder
            .chunks(vec![256, 256])
            .compressor(serde_json::Value::Null);
        if let Some(shards) = shards {
            builder.shard_shape(shards);
        }
        let array = builder
            .create(store.clone(), name, Mode::Overwrite)
            .unwrap();
        array
            .write(&[0, 0], &shape, ElementType::Float64, Order::C, &data)
            .unwrap();
        // A write covering chunks in part: read, merged and stored behind the encoding.
        let (start, count) = ([100u64, 130], [2900u64, 3900]);
        let patch: Vec<u8> = (0..count[0] * count[1])
            .flat_map(|i| (-(i as f64)).to_ne_bytes())
            .collect();
        array
            .write(&start, &count, ElementType::Float64, Order::C, &patch)
            .unwrap();
        let mut expected = data.clone();
        for r in 0..count[0] as usize {
            let at = ((start[0] as usize + r) * shape[1] as usize + start[1] as usize) * 8;
            let from = r * count[1] as usize * 8;
            expected[at..at + count[1] as usize * 8]
                .copy_from_slice(&patch[from..from + count[1] as usize * 8]);
        }
        for cache in [0usize, 256 << 20] {
            let reader = Array::open(store.clone(), name, Mode::Read).unwrap();
            reader.set_cache_bytes(cache);
            for _ in 0..2 {
                let mut back = vec![0u8; data.len()];
                reader
                    .read(&[0, 0], &shape, ElementType::Float64, Order::C, &mut back)
                    .unwrap();
                assert!(
                    back == expected,
                    "{name}, cache {cache}: a full read differs"
                );
            }
            let mut part = vec![0u8; 2000 * 3000 * 8];
            reader
                .read(
                    &[1000, 1000],
                    &[2000, 3000],
                    ElementType::Float64,
                    Order::C,
                    &mut part,
                )
                .unwrap();
            for r in 0..2000usize {
                let at = ((1000 + r) * shape[1] as usize + 1000) * 8;
                assert!(
                    part[r * 3000 * 8..(r + 1) * 3000 * 8] == expected[at..at + 3000 * 8],
                    "{name}, cache {cache}: row {r} of a partial read differs"
                );
            }
        }
    }
}

/// A memory store that says it serves many reads at once, and whose batched reads hand one
/// read twice and leave another out: a store outside the library keeping the rule badly.
#[derive(Debug)]
struct Forgetful(MemoryStore);

impl Store for Forgetful {
    fn get(&self, key: &str) -> zarr::Result<Option<Vec<u8>>> {
        self.0.get(key)
    }
    fn get_range(&self, key: &str, offset: u64, len: u64) -> zarr::Result<Option<Vec<u8>>> {
        self.0.get_range(key, offset, len)
    }
    fn get_tail(&self, key: &str, len: u64) -> zarr::Result<Option<zarr::store::Tail>> {
        self.0.get_tail(key, len)
    }
    fn get_range_if(
        &self,
        key: &str,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
        version: &zarr::store::Version,
    ) -> zarr::Result<zarr::store::Ranged> {
        self.0.get_range_if(key, offset, len, buf, version)
    }
    fn concurrency(&self) -> usize {
        4
    }
    fn fetch_each(
        &self,
        batch: &[zarr::store::Fetch],
        spares: &zarr::store::Spares,
        each: &mut dyn FnMut(usize, zarr::Result<zarr::store::Fetched>),
    ) {
        for (i, fetched) in self.0.fetch_many(batch, spares).into_iter().enumerate() {
            match i {
                // The second read is left out; the first is handed on twice.
                1 => {}
                0 if batch.len() > 1 => {
                    let again = self.0.fetch_many(&batch[..1], spares).pop().unwrap();
                    each(0, fetched);
                    each(0, again);
                }
                _ => each(i, fetched),
            }
        }
    }
    fn set(&self, key: &str, value: &[u8]) -> zarr::Result<()> {
        self.0.set(key, value)
    }
    fn erase(&self, key: &str) -> zarr::Result<bool> {
        self.0.erase(key)
    }
    fn erase_prefix(&self, prefix: &str) -> zarr::Result<()> {
        self.0.erase_prefix(prefix)
    }
    fn list_prefix(&self, prefix: &str) -> zarr::Result<Vec<String>> {
        self.0.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &str) -> zarr::Result<zarr::store::DirListing> {
        self.0.list_dir(prefix)
    }
    fn size(&self, key: &str) -> zarr::Result<Option<u64>> {
        self.0.size(key)
    }
    fn writable(&self) -> bool {
        true
    }
}

#[test]
fn batched_reads_of_a_store_that_answers_badly_are_still_exact() {
    // On a thread, so that a read waiting for a part that never comes fails the test.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        read_through_a_forgetful_store();
        let _ = done.send(());
    });
    finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the reads finished (a panic above, or a part waited for forever)");
}

fn read_through_a_forgetful_store() {
    let store: Arc<dyn Store> = Arc::new(Forgetful(MemoryStore::new()));
    let data: Vec<u8> = (0..96u32 * 80).map(|i| (i % 249) as u8 + 1).collect();
    // Shards of four chunks: batches of sixteen chunks hold four shards, so the whole-shard
    // reads and the ranged reads of a batch are several reads each.
    for (name, shards) in [("chunks", None), ("shards", Some([16, 20]))] {
        let array = common::bytes_array(
            &store,
            name,
            &[96, 80],
            &[8, 10],
            shards.as_ref().map(|s| &s[..]),
            &data,
        );
        // Read into a cleared buffer, so that a part left unwritten shows.
        let back = read_rows(&array, ElementType::UInt8, [0, 0], [96, 80]);
        assert!(back == data, "{name}");
        // Regions taking some chunks of each shard: ranged reads.
        for (start, count) in [([7, 9], [50, 33]), ([0, 15], [96, 10])] {
            let part = read_rows(&array, ElementType::UInt8, start, count);
            assert!(
                part == rows_of(&data, 80, 1, start, count),
                "{name}, {count:?} at {start:?}"
            );
        }
    }
}

/// The `count` region at `start` of a 2-d array, read as `elem` in C order into a cleared
/// buffer.
fn read_rows(array: &Array, elem: ElementType, start: [usize; 2], count: [usize; 2]) -> Vec<u8> {
    let mut part = vec![0u8; count[0] * count[1] * elem.size()];
    array
        .read(
            &[start[0] as u64, start[1] as u64],
            &[count[0] as u64, count[1] as u64],
            elem,
            Order::C,
            &mut part,
        )
        .unwrap();
    part
}

/// The `count` region at `start` of `data`, a C-order 2-d array of `columns` items of
/// `item` bytes per row.
fn rows_of(
    data: &[u8],
    columns: usize,
    item: usize,
    start: [usize; 2],
    count: [usize; 2],
) -> Vec<u8> {
    (start[0]..start[0] + count[0])
        .flat_map(|r| {
            &data[(r * columns + start[1]) * item..(r * columns + start[1] + count[1]) * item]
        })
        .copied()
        .collect()
}

/// Chunks decoded from answers several chunks share (a shard read whole, for a full read)
/// or from one range each (a partial read), in a batched store: big-endian, compressed or
/// not, with the decoded-chunk cache off and on, every value read back exactly.
#[test]
fn batched_sharded_reads_of_big_endian_chunks_are_exact_with_and_without_the_cache() {
    let store: Arc<dyn Store> = Arc::new(Forgetful(MemoryStore::new()));
    let values: Vec<f64> = (0..96 * 80).map(|i| i as f64 * 0.25 - 700.0).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    for (n, compressor) in [json!(null), json!({"id": "zstd", "level": 1})]
        .into_iter()
        .enumerate()
    {
        let name = format!("big{n}");
        let mut builder = ArrayBuilder::new(vec![96, 80], ElementType::Float64);
        builder.dtype_name(">f8").unwrap();
        builder.zarr_format(3).unwrap();
        builder
            .chunks(vec![8, 10])
            .shard_shape(vec![16, 20])
            .compressor(compressor);
        let array = builder
            .create(store.clone(), &name, Mode::Overwrite)
            .unwrap();
        array
            .write(&[0, 0], &[96, 80], ElementType::Float64, Order::C, &data)
            .unwrap();
        for cache in [0, 1 << 20] {
            let reader = Array::open(store.clone(), &name, Mode::Read).unwrap();
            reader.set_cache_bytes(cache);
            // Twice: with the cache on, the second read is served from it.
            for _ in 0..2 {
                let back = read_rows(&reader, ElementType::Float64, [0, 0], [96, 80]);
                assert!(back == data, "{name}, cache {cache}");
                let part = read_rows(&reader, ElementType::Float64, [7, 9], [50, 33]);
                assert!(
                    part == rows_of(&data, 80, 8, [7, 9], [50, 33]),
                    "{name}, cache {cache}: region"
                );
            }
        }
    }
}

/// Shards most of whose bytes no index entry points to (as a writer that appends leaves
/// them), read whole from a batched store: each chunk is copied out of the shard's buffer
/// rather than keeping it alive, and every value still reads back exactly.
#[test]
fn batched_reads_of_shards_with_unused_bytes_are_exact() {
    let store: Arc<dyn Store> = Arc::new(Forgetful(MemoryStore::new()));
    let data: Vec<u8> = (0..32u32 * 40).map(|i| (i % 251) as u8 + 1).collect();
    common::bytes_array(&store, "gaps", &[32, 40], &[8, 10], Some(&[16, 20]), &data);
    let keys = store.list_prefix("gaps/c/").unwrap();
    assert_eq!(keys.len(), 4);
    for key in keys {
        // Four chunks of 80 bytes, then the index: four (offset, size) pairs and its crc32c.
        let shard = store.get(&key).unwrap().unwrap();
        let (body, index) = shard.split_at(shard.len() - 4 * 16 - 4);
        let unused = vec![0xEEu8; 4 * body.len()];
        let mut entries = Vec::new();
        for pair in index[..64].chunks(16) {
            let offset = u64::from_le_bytes(pair[..8].try_into().unwrap());
            entries.extend((offset + unused.len() as u64).to_le_bytes());
            entries.extend(&pair[8..]);
        }
        let crc = crc32c::crc32c(&entries).to_le_bytes();
        store
            .set(&key, &[&unused[..], body, &entries, &crc].concat())
            .unwrap();
    }
    let reader = Array::open(store.clone(), "gaps", Mode::Read).unwrap();
    assert!(read_rows(&reader, ElementType::UInt8, [0, 0], [32, 40]) == data);
    let part = read_rows(&reader, ElementType::UInt8, [3, 5], [20, 30]);
    assert!(part == rows_of(&data, 40, 1, [3, 5], [20, 30]));
}
