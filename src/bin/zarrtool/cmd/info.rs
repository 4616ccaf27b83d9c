//! `zarrtool info`: a node's summary.

use crate::cli::NodeArg;
use crate::describe::display;
use crate::nczarr;
use crate::out::{print_json, Out};
use crate::source::{open_hierarchy, Hierarchy};
use crate::summary::array_summary;
use crate::values::shape_text;
use serde_json::{json, Value};
use zarr::meta::{ArrayMeta, ChunkGrid};
use zarr::node::{node_kind, Array, Group, Mode, Node, NodeKind};
use zarr::{Error, Result};

/// What `info` says of sizes and counts that need a listing the store cannot give.
const UNLISTED: &str = "unknown (the store cannot be listed)";

/// Prints a summary of the node at `node`: lines, or with `as_json` a JSON object.
pub fn run(node: &NodeArg, as_json: bool) -> Result<u8> {
    let Hierarchy { store, lists } = open_hierarchy(&node.store)?;
    match node_kind(store.as_ref(), &node.path)? {
        NodeKind::None => Err(Error::NotFound(format!(
            "no array or group at {} in {}",
            display(&node.path),
            node.store
        ))),
        NodeKind::Group => {
            let group = Group::open(store, &node.path, Mode::Read)?;
            let members = group.members()?;
            if as_json {
                print_json(&json!({
                    "path": display(&node.path),
                    "node_type": "group",
                    "zarr_format": group.format().number(),
                    "members": members.iter().map(|(n, _)| n).collect::<Vec<_>>(),
                    "attributes": nczarr::user_attributes(group.attributes()?),
                }))?;
            } else {
                let mut out = Out::new();
                out.line(format!("path: {}", display(&node.path)))?;
                out.line("type: group")?;
                out.line(format!("zarr format: {}", group.format().number()))?;
                out.line(format!("members: {}", members.len()))?;
                out.finish()?;
            }
            Ok(0)
        }
        NodeKind::Array => {
            let array = Array::open(store, &node.path, Mode::Read)?;
            let s = array_summary(&array, true, lists)?;
            if as_json {
                print_json(&Value::Object(s))?;
                return Ok(0);
            }
            let meta = array.metadata();
            let mut out = Out::new();
            out.line(format!("path: {}", display(array.path())))?;
            out.line("type: array")?;
            out.line(format!("zarr format: {}", array.format().number()))?;
            out.line(format!("shape: {}", shape_text(&meta.shape)))?;
            match &s.get("chunk_edges") {
                Some(edges) => {
                    out.line(format!(
                        "chunks: rectilinear, largest {}",
                        shape_text(meta.inner_chunks())
                    ))?;
                    out.line(format!("chunk edges: {edges}"))?;
                }
                None => out.line(format!("chunks: {}", shape_text(meta.inner_chunks())))?,
            }
            if meta.sharding().is_some() {
                out.line(format!("shards: {}", shape_text(&meta.chunks)))?;
            }
            out.line(format!("dtype: {}", meta.dtype.to_v2()))?;
            out.line(format!("codecs: {}", s["codecs"]))?;
            out.line(format!("fill value: {}", s["fill_value"]))?;
            let missing = match &s["missing_value"] {
                Value::Null => "none".to_string(),
                value => value.to_string(),
            };
            out.line(format!("missing value: {missing}"))?;
            let names = match array.dimension_names()? {
                Some(names) => names
                    .into_iter()
                    .map(|n| n.unwrap_or_else(|| "~".into()))
                    .collect::<Vec<String>>()
                    .join(", "),
                None => "none".into(),
            };
            out.line(format!("dimension names: {names}"))?;
            out.line(format!("bytes: {}", s["nbytes"]))?;
            // A listing counts the stored objects: the shards of a sharded array.
            let (units, initialized, total) = match meta.sharding() {
                Some(_) => ("shards", &s["shards_initialized"], &s["shards_total"]),
                None => ("chunks", &s["chunks_initialized"], &s["chunks_total"]),
            };
            if lists {
                out.line(format!("stored bytes: {}", s["stored_bytes"]))?;
                out.line(format!("ratio: {}", s["ratio"]))?;
                out.line(format!("{units} initialized: {initialized}/{total}"))?;
            } else {
                out.line(format!("stored bytes: {UNLISTED}"))?;
                out.line(format!("ratio: {UNLISTED}"))?;
                out.line(format!("{units} initialized: {UNLISTED}, of {total}"))?;
            }
            if meta.sharding().is_some() {
                out.line(chunks_per_shard(&meta, &s["chunks_total"]))?;
            }
            out.finish()?;
            Ok(0)
        }
    }
}

/// The line of `info` on a sharded array's chunks: how many a shard holds (at most, when
/// the shards' edges vary) and how many tile the array (`total`).
fn chunks_per_shard(meta: &ArrayMeta, total: &Value) -> String {
    let per_shard: u64 = meta
        .chunks
        .iter()
        .zip(meta.inner_chunks())
        .map(|(&shard, &chunk)| shard / chunk.max(1))
        .product();
    let up_to = match meta.grid {
        ChunkGrid::Rectilinear(_) => "up to ",
        ChunkGrid::Regular => "",
    };
    format!("chunks per shard: {up_to}{per_shard} ({total} in all)")
}
