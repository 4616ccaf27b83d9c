//! Keeping consolidated metadata current: after a command changes metadata documents,
//! every group from the root down to the changed node that holds consolidated metadata
//! (a v2 `.zmetadata`, a v3 `consolidated_metadata` member) has it rewritten, innermost
//! first, so that readers that trust it (xarray opens consolidated metadata first) see
//! the change. The library's own writes leave it as it is, as zarr-python's do.

use serde_json::Value;
use zarr::meta::consolidated::{consolidate, CONSOLIDATED_KEY};
use zarr::store::{get_document, join_key, Store};
use zarr::Result;

/// Rewrites the consolidated metadata of `path`'s group and of the groups above it that
/// have some (`path` itself may be gone, as after `rm`).
pub fn consolidated_above(store: &dyn Store, path: &str) -> Result<()> {
    let path = path.trim_matches('/');
    let mut groups = vec![String::new()];
    let mut prefix = String::new();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        prefix = join_key(&prefix, segment);
        groups.push(prefix.clone());
    }
    for group in groups.iter().rev() {
        if has_consolidated(store, group)? {
            consolidate(store, group)?;
        }
    }
    Ok(())
}

/// Whether the group at `path` holds consolidated metadata.
fn has_consolidated(store: &dyn Store, path: &str) -> Result<bool> {
    if let Some(bytes) = get_document(store, &join_key(path, "zarr.json"))? {
        let doc: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if doc.get("zarr_format").and_then(Value::as_u64) == Some(3) {
            return Ok(doc
                .get("consolidated_metadata")
                .is_some_and(|c| !c.is_null()));
        }
    }
    Ok(get_document(store, &join_key(path, CONSOLIDATED_KEY))?.is_some())
}
