//! `zarrtool rm`: a node and everything below it deleted.

use crate::cli::NodeArg;
use crate::describe::display;
use crate::nodes::open;
use zarr::node::{node_kind, Group, Mode, NodeKind};
use zarr::store::node_prefix;
use zarr::{Error, Result};

/// Deletes the node at `node` and everything below it (with `dry_run`, says what it would).
pub fn run(node: &NodeArg, dry_run: bool) -> Result<u8> {
    let store = open(&node.store, !dry_run)?;
    let path = node.path.trim_matches('/');
    if node_kind(store.as_ref(), path)? == NodeKind::None {
        return Err(Error::NotFound(format!(
            "no array or group at {}",
            display(path)
        )));
    }
    if path.is_empty() {
        return Err(Error::InvalidArg(
            "refusing to delete the root node: delete the store itself".into(),
        ));
    }
    if dry_run {
        let keys = store.list_prefix(&node_prefix(path))?;
        eprintln!("would delete {} ({} keys)", display(path), keys.len());
        return Ok(0);
    }
    let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
    Group::open(store.clone(), parent, Mode::ReadWrite)?.delete(name)?;
    crate::refresh::consolidated_above(store.as_ref(), path)?;
    store.close()?;
    Ok(0)
}
