//! Opening a store to read its hierarchy. A web server that cannot list its directories
//! (a plain file server answering WebDAV's listing with 405 or 501) serves the hierarchy
//! from its consolidated metadata, which names every node, as zarr-python reads it.

use std::sync::Arc;
use zarr::meta::consolidated::ConsolidatedStore;
use zarr::store::Store;
use zarr::{Error, Result};

/// A store opened to read a hierarchy.
pub(crate) struct Hierarchy {
    /// The store, or its consolidated metadata over it when it cannot list.
    pub store: Arc<dyn Store>,
    /// Whether its keys can be listed (sizes and counts of stored chunks need a listing).
    pub lists: bool,
}

/// Whether `url` names a store on a web server (`http://`, `https://`).
fn is_web(url: &str) -> bool {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    matches!(scheme.as_deref(), Some("http" | "https"))
}

/// Opens the store at `url` for reading its hierarchy: a web server that cannot list is
/// read through the consolidated metadata at its root when it has some, else as it is
/// (nodes open by path; a listing reports the server's refusal).
pub(crate) fn open_hierarchy(url: &str) -> Result<Hierarchy> {
    let store = crate::nodes::open(url, false)?;
    if !is_web(url) {
        return Ok(Hierarchy { store, lists: true });
    }
    if store.list_dir("").is_ok() {
        return Ok(Hierarchy { store, lists: true });
    }
    match ConsolidatedStore::open(store, "") {
        Ok(consolidated) => Ok(Hierarchy {
            store: Arc::new(consolidated),
            lists: false,
        }),
        // A node is still read by its path; what needs a listing then reports the refusal.
        Err(Error::NotFound(_)) => Ok(Hierarchy {
            store: crate::nodes::open(url, false)?,
            lists: false,
        }),
        Err(e) => Err(e),
    }
}
