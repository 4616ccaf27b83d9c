//! Region planning: arrays of random rank (0-4), shape, chunk shape, chunk order, format
//! (v2, v3, v3 sharded) and random write/read regions in C or F order, checked element by
//! element against a dense reference. Any mismatch or failure of a valid call is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};

const FILL: u16 = 7;

/// Row-major flat index of `idx` in `shape`.
fn flat(idx: &[u64], shape: &[u64]) -> usize {
    idx.iter()
        .zip(shape)
        .fold(0, |acc, (i, s)| acc * *s as usize + *i as usize)
}

/// The array index of the `k`-th element of a region laid out in `order`.
fn index_of(mut k: u64, start: &[u64], count: &[u64], order: Order) -> Vec<u64> {
    let mut idx = vec![0u64; count.len()];
    let dims: Vec<usize> = match order {
        Order::C => (0..count.len()).rev().collect(),
        Order::F => (0..count.len()).collect(),
    };
    for d in dims {
        idx[d] = start[d] + k % count[d];
        k /= count[d];
    }
    idx
}

fn region(input: &mut libzarr_fuzz::Input, shape: &[u64]) -> (Vec<u64>, Vec<u64>, Order) {
    let start: Vec<u64> = shape.iter().map(|&s| input.below(s + 1)).collect();
    let count = shape
        .iter()
        .zip(&start)
        .map(|(&s, &st)| input.below(s - st + 1))
        .collect();
    let order = if input.flag() { Order::F } else { Order::C };
    (start, count, order)
}

fuzz_target!(|data: &[u8]| {
    let mut input = libzarr_fuzz::Input(data);
    let rank = input.below(5) as usize;
    let shape: Vec<u64> = (0..rank).map(|_| input.below(10)).collect();
    let chunks: Vec<u64> = (0..rank).map(|_| 1 + input.below(4)).collect();
    let format = input.below(3);
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(shape.clone(), ElementType::UInt16);
    builder
        .chunks(chunks.clone())
        .order(if input.flag() { Order::F } else { Order::C })
        .fill_value_json(json!(FILL))
        .compressor(if input.flag() {
            json!({"id": "zlib", "level": 1})
        } else {
            json!(null)
        });
    if format > 0 {
        builder.zarr_format(3).unwrap();
    } else {
        builder.separator(if input.flag() { '/' } else { '.' });
    }
    if format == 2 && rank > 0 {
        let shards: Vec<u64> = chunks.iter().map(|&c| c * (1 + input.below(3))).collect();
        builder.shard_shape(shards);
    }
    if input.flag() {
        builder
            .dtype_name(if format == 0 { ">u2" } else { "uint16" })
            .unwrap();
    }
    let array = builder
        .create(store, "g/a", Mode::CreateNew)
        .expect("a valid array");
    let total: u64 = shape.iter().product();
    let mut reference = vec![FILL; total as usize];
    for _ in 0..1 + input.below(4) {
        let (start, count, order) = region(&mut input, &shape);
        let n: u64 = count.iter().product();
        let values: Vec<u16> = (0..n)
            .map(|_| {
                if input.flag() {
                    FILL
                } else {
                    input.below(1000) as u16
                }
            })
            .collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        array
            .write(&start, &count, ElementType::UInt16, order, &bytes)
            .expect("a valid write");
        for (k, v) in values.iter().enumerate() {
            reference[flat(&index_of(k as u64, &start, &count, order), &shape)] = *v;
        }
        let (start, count, order) = region(&mut input, &shape);
        let n: u64 = count.iter().product();
        let mut out = vec![0u8; n as usize * 2];
        array
            .read(&start, &count, ElementType::UInt16, order, &mut out)
            .expect("a valid read");
        for (k, got) in out.chunks(2).enumerate() {
            let got = u16::from_ne_bytes([got[0], got[1]]);
            let want = reference[flat(&index_of(k as u64, &start, &count, order), &shape)];
            assert_eq!(
                got, want,
                "element {k} of region {start:?}+{count:?} ({order:?})"
            );
        }
    }
});
