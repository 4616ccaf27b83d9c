//! `zarrtool branch`: a new branch at the snapshot an Icechunk repository URL reads.

use crate::nodes::open;
use crate::out;
use zarr::store::repository_of;
use zarr::Result;

/// Creates the branch `name` at the snapshot `url` reads and prints that snapshot's id.
pub fn run(url: &str, name: &str) -> Result<u8> {
    let store = open(url, false)?;
    let repository = repository_of(store.as_ref())?;
    repository.create_branch(name)?;
    out::line(repository.snapshot_id()?)?;
    Ok(0)
}
