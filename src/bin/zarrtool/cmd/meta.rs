//! `zarrtool meta`: a node's stored metadata document.

use crate::cli::NodeArg;
use crate::describe::{display, node_type};
use crate::nodes::document;
use crate::out::print_json;
use crate::source::open_hierarchy;
use serde_json::{json, Value};
use zarr::meta::Format;
use zarr::node::{node_kind, Array, Group, Mode, NodeKind};
use zarr::store::{get_document, join_key};
use zarr::{Error, Result};

/// Prints the metadata document of the node at `node` (with `as_json`, wrapped with its
/// path, type and format).
pub fn run(node: &NodeArg, as_json: bool) -> Result<u8> {
    let store = open_hierarchy(&node.store)?.store;
    let wrap = |kind: NodeKind, format: Format, document: Value| match as_json {
        true => json!({
            "path": display(&node.path),
            "node_type": node_type(kind),
            "zarr_format": format.number(),
            "document": document,
        }),
        false => document,
    };
    match node_kind(store.as_ref(), &node.path)? {
        NodeKind::Array => {
            let array = Array::open(store, &node.path, Mode::Read)?;
            print_json(&wrap(NodeKind::Array, array.format(), document(&array)?))?
        }
        NodeKind::Group => {
            let group = Group::open(store.clone(), &node.path, Mode::Read)?;
            let path = node.path.trim_matches('/');
            let key = match group.format() {
                f if f.is_v3() && f.draft_scheme().is_none() => join_key(path, "zarr.json"),
                _ => join_key(path, ".zgroup"),
            };
            let bytes = get_document(store.as_ref(), &key)?
                .ok_or_else(|| Error::NotFound(format!("no group document at {key:?}")))?;
            let value: Value = serde_json::from_slice(&bytes)
                .map_err(|e| Error::Metadata(format!("{key:?} is not valid JSON: {e}")))?;
            print_json(&wrap(NodeKind::Group, group.format(), value))?;
        }
        NodeKind::None => {
            return Err(Error::NotFound(format!(
                "no array or group at {}",
                display(&node.path)
            )))
        }
    }
    Ok(0)
}
