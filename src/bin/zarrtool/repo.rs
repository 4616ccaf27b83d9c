//! The commit that ends `copy --commit` into an Icechunk repository (`icechunk:///PATH`).

use std::sync::Arc;
use zarr::store::{repository_of, Store};
use zarr::Result;

/// Refuses `copy --commit` into a store that keeps no history, before anything is copied.
pub(crate) fn check_committable(target: &Arc<dyn Store>) -> Result<()> {
    repository_of(target.as_ref()).map(|_| ())
}

/// Commits what a copy wrote into `target` with `message`; returns the new snapshot's id.
pub(crate) fn commit(target: &Arc<dyn Store>, message: &str) -> Result<String> {
    repository_of(target.as_ref())?.commit(message)
}
