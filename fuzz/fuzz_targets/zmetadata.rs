//! Consolidated metadata (`.zmetadata`) from arbitrary bytes: opened as a consolidated
//! store over a memory store, then every document it lists is read and its nodes opened.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use zarr::store::{ConsolidatedStore, MemoryStore, Store};

fuzz_target!(|data: &[u8]| {
    let inner = Arc::new(MemoryStore::new());
    inner.set(".zmetadata", data).unwrap();
    let Ok(store) = ConsolidatedStore::open(inner, "") else {
        return;
    };
    let store: Arc<dyn Store> = Arc::new(store);
    if let Ok(keys) = store.list() {
        for key in keys.iter().take(16) {
            let _ = store.get(key);
            if let Some(node) = key.strip_suffix("/.zarray") {
                libzarr_fuzz::read_array(store.clone(), node);
            }
        }
    }
    libzarr_fuzz::read_group(store, "");
});
