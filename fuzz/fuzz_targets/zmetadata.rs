//! Consolidated metadata (`.zmetadata`) from arbitrary bytes: opened as a consolidated
//! store over a memory store, then every document it lists is read and its nodes opened.
//! Every key listed is a key as it is (names that only normalise onto one are refused).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use zarr::meta::consolidated::ConsolidatedStore;
use zarr::store::{MemoryStore, Store};

fuzz_target!(|data: &[u8]| {
    let inner = Arc::new(MemoryStore::new());
    inner.set(".zmetadata", data).unwrap();
    let Ok(store) = ConsolidatedStore::open(inner, "") else {
        return;
    };
    let store: Arc<dyn Store> = Arc::new(store);
    if let Ok(keys) = store.list() {
        for key in keys.iter().take(16) {
            assert!(
                zarr::store::validate_key(key).is_ok_and(|k| k == key.as_str()),
                "consolidated key {key:?} is not normal"
            );
            let _ = store.get(key);
            if let Some(node) = key.strip_suffix("/.zarray") {
                libzarr_fuzz::read_array(store.clone(), node);
            }
        }
    }
    libzarr_fuzz::read_group(store, "");
});
