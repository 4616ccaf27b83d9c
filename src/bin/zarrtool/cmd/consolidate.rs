//! `zarrtool consolidate`: a group's consolidated metadata.

use crate::cli::NodeArg;
use crate::describe::{display, kind_name};
use crate::nodes::{open, walk};
use zarr::node::{node_kind, Group, Mode, NodeKind};
use zarr::store::join_key;
use zarr::{Error, Result};

/// Writes the consolidated metadata of the group at `node` (with `dry_run`, says what it
/// would consolidate).
pub fn run(node: &NodeArg, dry_run: bool) -> Result<u8> {
    let store = open(&node.store, !dry_run)?;
    let path = node.path.trim_matches('/');
    // Only a group's metadata is consolidated: refused before anything is written.
    let group = match node_kind(store.as_ref(), path)? {
        NodeKind::Group => Group::open(store.clone(), path, Mode::Read)?,
        kind => {
            return Err(Error::InvalidArg(format!(
                "{} is {}: only a group's metadata is consolidated",
                display(path),
                kind_name(kind)
            )))
        }
    };
    if dry_run {
        let nodes = walk(&store, path)?;
        let key = match group.format() {
            f if f.is_v3() => join_key(path, "zarr.json"),
            _ => join_key(path, ".zmetadata"),
        };
        let n = nodes.len() - 1;
        eprintln!(
            "would consolidate the metadata of {n} node{} below {} into {key:?}",
            if n == 1 { "" } else { "s" },
            display(path)
        );
        return Ok(0);
    }
    zarr::meta::consolidated::consolidate(store.as_ref(), &node.path)?;
    store.close()?;
    Ok(0)
}
