//! Zip archives from arbitrary bytes: opened as a read-only zip store, every key listed,
//! read and sized, and the root opened as a group. Entries that escape or only normalise
//! onto a key (`a//0`) are refused: every key listed is a key as it is.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Write;
use std::sync::Arc;
use zarr::store::{Store, ZipMode, ZipStore};

fuzz_target!(|data: &[u8]| {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(data).unwrap();
    file.flush().unwrap();
    let Ok(store) = ZipStore::open(file.path(), ZipMode::Read, false) else {
        return;
    };
    let store: Arc<dyn Store> = Arc::new(store);
    if let Ok(keys) = store.list() {
        for key in keys.iter().take(32) {
            assert!(
                zarr::store::validate_key(key).is_ok_and(|k| k == key.as_str()),
                "zip key {key:?} escapes or is not normal"
            );
            let _ = store.get(key);
            let _ = store.size(key);
            let _ = store.get_range(key, 1, 2);
        }
    }
    let _ = store.list_dir("");
    libzarr_fuzz::read_group(store.clone(), "");
    libzarr_fuzz::read_array(store, "");
});
