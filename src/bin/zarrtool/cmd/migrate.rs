//! `zarrtool migrate`: a Zarr v1 array converted to v2 in place.

use crate::cli::NodeArg;
use crate::describe::display;
use crate::nodes::open;
use zarr::meta::Format;
use zarr::node::{Array, Mode};
use zarr::{Error, Result};

/// Converts the v1 array at `node` to v2 (with `dry_run`, says it would).
pub fn run(node: &NodeArg, dry_run: bool) -> Result<u8> {
    let store = open(&node.store, !dry_run)?;
    let array = Array::open(store.clone(), &node.path, Mode::Read)?;
    if array.format() != Format::V1 {
        return Err(Error::InvalidArg(format!(
            "{} is a Zarr v{} array, not v1",
            display(&node.path),
            array.format().number()
        )));
    }
    if dry_run {
        eprintln!("would migrate {} to Zarr v2", display(&node.path));
        return Ok(0);
    }
    zarr::node::migrate_1to2(store.as_ref(), &node.path)?;
    crate::refresh::consolidated_above(store.as_ref(), &node.path)?;
    store.close()?;
    Ok(0)
}
