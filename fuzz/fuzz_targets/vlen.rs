//! Variable-length chunks from arbitrary bytes: a 1-d array of 6 items in chunks of 3 whose
//! first chunk is the fuzz input, read whole. Variants (first byte, modulo 10): v2 `|O`
//! strings, bytes or `<i2` arrays, and v3 `string`, each stored raw or zstd-compressed;
//! then v2 strings under the `json2` object codec, raw or compressed. Reads may fail, never
//! crash, allocate without bound or return invalid UTF-8 for strings.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use std::sync::{Arc, OnceLock};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};

/// (type name, format) of each variant; bit 3 of the variant byte adds zstd.
const TYPES: [(&str, u8); 4] = [
    ("string", 2),
    ("bytes", 2),
    (r#"{"id": "vlen-array", "dtype": "<i2"}"#, 2),
    ("string", 3),
];

/// The metadata documents of each variant, as (key, bytes).
fn documents() -> &'static [(String, Vec<u8>)] {
    static DOCS: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    DOCS.get_or_init(|| {
        let mut docs = Vec::new();
        for variant in 0..8u8 {
            let (name, format) = TYPES[(variant & 3) as usize];
            let store = Arc::new(MemoryStore::new());
            let mut builder = ArrayBuilder::new(vec![6], ElementType::String);
            builder
                .dtype_name(name)
                .unwrap()
                .chunks(vec![3])
                .zarr_format(format.into())
                .unwrap()
                .compressor(if variant & 4 != 0 {
                    json!({"id": "zstd", "level": 1})
                } else {
                    json!(null)
                });
            builder.create(store.clone(), "v", Mode::CreateNew).unwrap();
            let key = if format == 2 {
                "v/.zarray"
            } else {
                "v/zarr.json"
            };
            docs.push((key.to_string(), store.get(key).unwrap().unwrap()));
        }
        // json2: the v2 string documents with the other object codec.
        for variant in [0, 4] {
            let (key, doc) = &docs[variant];
            let mut meta: serde_json::Value = serde_json::from_slice(doc).unwrap();
            meta["filters"] = json!([{"id": "json2", "encoding": "utf-8"}]);
            docs.push((key.clone(), serde_json::to_vec(&meta).unwrap()));
        }
        docs
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&variant, chunk)) = data.split_first() else {
        return;
    };
    let variant = variant % 10;
    let (key, doc) = &documents()[variant as usize];
    let store = Arc::new(MemoryStore::new());
    store.set(key, doc).unwrap();
    let chunk_key = if key.ends_with(".zarray") {
        "v/0"
    } else {
        "v/c/0"
    };
    store.set(chunk_key, chunk).unwrap();
    let array = Array::open(store, "v", Mode::Read).unwrap();
    if let Ok(items) = array.read_vlen(&[0], &[6], Order::C) {
        assert_eq!(items.len(), 6);
        if variant >= 8 || TYPES[(variant & 3) as usize].0 == "string" {
            for i in 0..6 {
                assert!(std::str::from_utf8(items.get(i)).is_ok());
            }
        }
    }
});
