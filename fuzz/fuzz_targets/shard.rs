//! Shards from arbitrary bytes: a v3 sharded array (2 x 2 shards of 2 x 2 inner chunks of
//! 2 x 3 uint16) whose first shard is the fuzz input, read whole. Variants (first byte)
//! put the index at the end or the start, with or without its crc32c checksum, and store
//! inner chunks raw or zstd-compressed. Reads may fail, never crash or read out of bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};

const SHAPE: [u64; 2] = [8, 12];

/// `zarr.json` of each variant: (index at start, index checksum, inner zstd).
fn documents() -> &'static [Vec<u8>] {
    static DOCS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    DOCS.get_or_init(|| {
        let mut docs = Vec::new();
        for variant in 0..8u8 {
            let (at_start, checksum, zstd) = (variant & 1 != 0, variant & 2 != 0, variant & 4 != 0);
            let store = Arc::new(MemoryStore::new());
            let mut builder = ArrayBuilder::new(SHAPE.to_vec(), ElementType::UInt16);
            builder
                .zarr_format(3)
                .unwrap()
                .chunks(vec![2, 3])
                .shard_shape(vec![4, 6])
                .fill_value_json(json!(7))
                .compressor(if zstd {
                    json!({"id": "zstd", "level": 1})
                } else {
                    json!(null)
                });
            builder.create(store.clone(), "s", Mode::CreateNew).unwrap();
            let mut doc: Value =
                serde_json::from_slice(&store.get("s/zarr.json").unwrap().unwrap()).unwrap();
            let sharding = doc["codecs"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|c| c["name"] == "sharding_indexed")
                .expect("a sharding codec");
            let config = &mut sharding["configuration"];
            config["index_location"] = json!(if at_start { "start" } else { "end" });
            let mut index_codecs =
                vec![json!({"name": "bytes", "configuration": {"endian": "little"}})];
            if checksum {
                index_codecs.push(json!({"name": "crc32c"}));
            }
            config["index_codecs"] = Value::Array(index_codecs);
            docs.push(serde_json::to_vec(&doc).unwrap());
        }
        docs
    })
}

fuzz_target!(|data: &[u8]| {
    let mut input = libzarr_fuzz::Input(data);
    let docs = documents();
    let doc = &docs[input.byte() as usize % docs.len()];
    let store = Arc::new(MemoryStore::new());
    store.set("s/zarr.json", doc).unwrap();
    store.set("s/c/0/0", input.rest()).unwrap();
    store.set("s/c/1/1", input.rest()).unwrap();
    let array = Array::open(store, "s", Mode::Read).expect("the variant's metadata is valid");
    let mut whole = vec![0u8; (SHAPE[0] * SHAPE[1] * 2) as usize];
    let _ = array.read(&[0, 0], &SHAPE, ElementType::UInt16, Order::C, &mut whole);
    // One inner chunk, which reads only its byte range of the shard.
    let mut one = vec![0u8; 12];
    let _ = array.read(&[2, 3], &[2, 3], ElementType::UInt16, Order::F, &mut one);
    let _ = array.nchunks_initialized();
});
