//! Chunks encoded through one handle and objects stored whole through another
//! (`Array::encode_chunk`, `Array::write_encoded`): the stored bytes equal what a region
//! write stores, fill chunks are not stored, and wrong arguments are refused.

use serde_json::json;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};
use zarr::Error;

/// A 10 x 12 int32 array at `path`: 2 x 3 chunks, sharded 4 x 6 when `sharded`, fill -1.
fn array(store: &Arc<dyn Store>, path: &str, sharded: bool) -> Array {
    let mut builder = ArrayBuilder::new(vec![10, 12], ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(vec![2, 3])
        .fill_value_json(json!(-1))
        .compressor(json!({"id": "zstd", "level": 1}));
    if sharded {
        builder.shard_shape(vec![4, 6]);
    }
    builder
        .create(store.clone(), path, Mode::Overwrite)
        .unwrap()
}

/// The element at (i, j): its flat index, except the fill value in the rows from 8 on.
fn value(i: u64, j: u64) -> i32 {
    if i >= 8 {
        -1
    } else {
        (i * 12 + j) as i32
    }
}

/// The whole chunk of `chunk` elements at `index` (past the array's edge too).
fn chunk_data(index: &[u64], chunk: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    for a in 0..chunk[0] {
        for b in 0..chunk[1] {
            let (i, j) = (index[0] * chunk[0] + a, index[1] * chunk[1] + b);
            out.extend(value(i, j).to_ne_bytes());
        }
    }
    out
}

/// Every key under `prefix` with its bytes, sorted, with the prefix cut off.
fn contents(store: &dyn Store, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let mut keys = store.list_prefix(prefix).unwrap();
    keys.retain(|k| !k.ends_with(".json"));
    keys.sort();
    keys.into_iter()
        .map(|k| {
            (
                k[prefix.len()..].to_string(),
                store.get(&k).unwrap().unwrap(),
            )
        })
        .collect()
}

/// Writes the whole array object by object from encodings, through a second handle for
/// the encoding.
fn write_all_encoded(target: &Array, encoder: &Array, sharded: bool) {
    let per_object: [u64; 2] = if sharded { [2, 2] } else { [1, 1] };
    let grid = [10u64.div_ceil(2 * per_object[0]), 12 / (3 * per_object[1])];
    for s0 in 0..grid[0] {
        for s1 in 0..grid[1] {
            let mut units: Vec<Option<Vec<u8>>> = Vec::new();
            for a in 0..per_object[0] {
                for b in 0..per_object[1] {
                    let index = [s0 * per_object[0] + a, s1 * per_object[1] + b];
                    units.push(match index[0] < 5 {
                        true => encoder
                            .encode_chunk(&index, &chunk_data(&index, &[2, 3]))
                            .unwrap(),
                        // Past the array's edge, in its last row of shards.
                        false => None,
                    });
                }
            }
            assert_eq!(target.encoded_units(&[s0, s1]).unwrap(), units.len());
            let borrowed: Vec<Option<&[u8]>> = units.iter().map(Option::as_deref).collect();
            target.write_encoded(&[s0, s1], &borrowed).unwrap();
        }
    }
}

#[test]
fn encoded_objects_store_what_a_region_write_stores() {
    for sharded in [false, true] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let written = array(&store, "w", sharded);
        let all: Vec<u8> = (0..10)
            .flat_map(|i| (0..12).flat_map(move |j| value(i, j).to_ne_bytes()))
            .collect();
        written
            .write(&[0, 0], &[10, 12], ElementType::Int32, Order::C, &all)
            .unwrap();
        let target = array(&store, "e", sharded);
        let encoder = Array::open(store.clone(), "e", Mode::Read).unwrap();
        write_all_encoded(&target, &encoder, sharded);
        assert_eq!(
            contents(store.as_ref(), "e/"),
            contents(store.as_ref(), "w/"),
            "sharded: {sharded}: the same objects, byte for byte"
        );
        let mut back = vec![0u8; all.len()];
        target
            .read(&[0, 0], &[10, 12], ElementType::Int32, Order::C, &mut back)
            .unwrap();
        assert_eq!(back, all, "sharded: {sharded}");
    }
}

#[test]
fn fill_chunks_are_not_stored_and_objects_of_none_are_erased() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let target = array(&store, "e", true);
    let fill = chunk_data(&[4, 0], &[2, 3]);
    assert_eq!(target.encode_chunk(&[4, 0], &fill).unwrap(), None);
    let data = chunk_data(&[0, 0], &[2, 3]);
    let unit = target.encode_chunk(&[0, 0], &data).unwrap().unwrap();
    target
        .write_encoded(&[0, 0], &[Some(&unit), None, None, None])
        .unwrap();
    assert!(store.get("e/c/0/0").unwrap().is_some());
    target.write_encoded(&[0, 0], &[None; 4]).unwrap();
    assert!(
        store.get("e/c/0/0").unwrap().is_none(),
        "a shard of no stored chunk is erased"
    );
}

#[test]
fn wrong_arguments_are_refused_and_store_nothing() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let target = array(&store, "e", true);
    let data = chunk_data(&[0, 0], &[2, 3]);
    let unit = target.encode_chunk(&[0, 0], &data).unwrap().unwrap();
    let cases: Vec<(Result<(), Error>, &str)> = vec![
        (
            target.encode_chunk(&[0, 0], &data[4..]).map(drop),
            "holds 24 bytes; the buffer has 20",
        ),
        (
            target.encode_chunk(&[5, 0], &data).map(drop),
            "dimension 0 has 5 chunks",
        ),
        (target.encode_chunk(&[0], &data).map(drop), "1 dimensions"),
        (
            target.write_encoded(&[0, 0], &[Some(&unit)]),
            "takes 4 encoded chunks; 1 were given",
        ),
        (
            target.write_encoded(&[3, 0], &[None; 4]),
            "dimension 0: chunk 3 is outside the grid of 3 chunks",
        ),
        (
            target.write_encoded(&[0, 0], &[Some(&vec![0u8; 1 << 20]), None, None, None]),
            "longer than any encoding",
        ),
        (
            target.write_encoded(&[2, 0], &[None, None, Some(&unit), None]),
            "encoded chunk 2 of shard [2, 0] lies past the array's edge (dimension 0)",
        ),
    ];
    for (result, expected) in cases {
        let message = result.expect_err(expected).to_string();
        assert!(message.contains(expected), "{message:?} lacks {expected:?}");
    }
    assert!(contents(store.as_ref(), "e/").is_empty(), "nothing stored");
    let reader = Array::open(store.clone(), "e", Mode::Read).unwrap();
    let refused = reader.write_encoded(&[0, 0], &[Some(&unit), None, None, None]);
    assert!(matches!(refused, Err(Error::ReadOnly(_))), "{refused:?}");
}
