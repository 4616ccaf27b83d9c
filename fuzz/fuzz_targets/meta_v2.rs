//! Zarr v2 metadata: `.zarray`, `.zgroup` and `.zattrs` from arbitrary bytes. A document
//! that parses renders and parses again to the same metadata; every document is also put
//! in a store and opened end to end (array read, group listing, attributes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use zarr::meta::v2;
use zarr::store::{MemoryStore, Store};

fuzz_target!(|data: &[u8]| {
    if let Ok(meta) = v2::parse_array(data) {
        let rendered = v2::render_array(&meta).expect("parsed metadata renders");
        let again = v2::parse_array(&rendered).expect("rendered .zarray parses again");
        assert_eq!(
            v2::render_array(&again).expect("renders again"),
            rendered,
            "render is stable"
        );
    }
    let _ = v2::parse_group(data);
    let _ = v2::parse_attributes(data);

    let store = Arc::new(MemoryStore::new());
    store.set("a/.zarray", data).unwrap();
    store.set("a/.zattrs", data).unwrap();
    store.set(".zgroup", data).unwrap();
    libzarr_fuzz::read_array(store.clone(), "a");
    libzarr_fuzz::read_group(store, "");
});
