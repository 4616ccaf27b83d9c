//! How nodes are named in messages and JSON output: paths, kinds, stores and arrays.

use crate::values::shape_text;
use serde_json::{json, Value};
use zarr::meta::{ArrayMeta, Format};
use zarr::node::NodeKind;
use zarr::store::mask_urls;

/// A node path as shown: `/` for the root, `/a/b` otherwise.
pub fn display(path: &str) -> String {
    format!("/{}", path.trim_matches('/'))
}

/// A node kind as a message names it: `an array`, `a group`, `nothing`.
pub fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Array => "an array",
        NodeKind::Group => "a group",
        NodeKind::None => "nothing",
    }
}

/// The `node_type` of a node in JSON output.
pub fn node_type(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Array => "array",
        _ => "group",
    }
}

/// A store (its URL's user information and query values masked) and a node path in JSON
/// output.
pub fn place(store: &str, path: &str) -> Value {
    json!({ "store": mask_urls(store), "path": display(path) })
}

/// An array's description for dry runs: `array 4 x 5 <i4 (chunks 2 x 3, Zarr v3)`.
pub fn array_text(meta: &ArrayMeta, format: Format) -> String {
    let shards = match meta.sharding() {
        Some(_) => format!(", shards {}", shape_text(&meta.chunks)),
        None => String::new(),
    };
    format!(
        "array {} {} (chunks {}{shards}, Zarr v{})",
        shape_text(&meta.shape),
        meta.dtype.to_v2(),
        shape_text(meta.inner_chunks()),
        format.number()
    )
}
