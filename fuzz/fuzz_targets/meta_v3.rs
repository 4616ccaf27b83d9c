//! Zarr v3 `zarr.json` from arbitrary bytes: parsed, rendered and parsed again when it is
//! an array, and opened end to end from a store (array read, group listing).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use zarr::meta::v3::{self, Node};
use zarr::store::{MemoryStore, Store};

fuzz_target!(|data: &[u8]| {
    if let Ok(Node::Array(meta, attributes)) = v3::parse(data) {
        if let Ok(rendered) = v3::render_array(&meta, &attributes) {
            let again = v3::parse(&rendered).expect("rendered zarr.json parses again");
            let Node::Array(meta2, attributes2) = again else {
                panic!("rendered array parses as a group");
            };
            let rendered2 = v3::render_array(&meta2, &attributes2).expect("renders again");
            assert_eq!(rendered2, rendered, "render is stable");
        }
    }
    let store = Arc::new(MemoryStore::new());
    store.set("a/zarr.json", data).unwrap();
    store.set("zarr.json", data).unwrap();
    libzarr_fuzz::read_array(store.clone(), "a");
    libzarr_fuzz::read_group(store, "");
});
