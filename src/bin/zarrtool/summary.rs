//! What `info`, `ls` and `tree` say of an array.

use crate::describe::display;
use crate::missing::missing_value;
use crate::nodes::{codecs, document};
use crate::values::text_room;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use zarr::meta::{ArrayMeta, ChunkGrid};
use zarr::node::{Array, Mode, Node};
use zarr::store::Store;
use zarr::Result;

/// The description `info` and `ls --json` give of an array.
/// Without a listing (`lists` false) the stored sizes and counts are null.
pub fn array_summary(array: &Array, full: bool, lists: bool) -> Result<Map<String, Value>> {
    let meta = array.metadata();
    let mut out = Map::new();
    out.insert("path".into(), json!(display(array.path())));
    out.insert("node_type".into(), json!("array"));
    out.insert("zarr_format".into(), json!(array.format().number()));
    out.insert("shape".into(), json!(meta.shape));
    out.insert("chunks".into(), json!(meta.inner_chunks()));
    let shards = meta.sharding().map(|_| meta.chunks.clone());
    out.insert("shards".into(), json!(shards));
    if let ChunkGrid::Rectilinear(dims) = &meta.grid {
        let edges: Vec<Value> = dims.iter().map(|d| d.to_json()).collect();
        out.insert("chunk_edges".into(), Value::Array(edges));
    }
    out.insert("dtype".into(), json!(meta.dtype.to_v2()));
    if !full {
        return Ok(out);
    }
    out.insert("codecs".into(), codecs(array.format(), &document(array)?));
    text_room(meta.item_size(), "the fill value's text")?;
    out.insert(
        "fill_value".into(),
        zarr::meta::fill::render_fill(&meta.fill_value, &meta.dtype)?,
    );
    out.insert("dimension_names".into(), json!(array.dimension_names()?));
    out.insert(
        "missing_value".into(),
        missing_value(array, &array.attributes()?)?,
    );
    let stored = if lists {
        Some(array.nbytes_stored()?)
    } else {
        None
    };
    let nbytes = meta.nbytes();
    out.insert("nbytes".into(), json!(nbytes));
    out.insert("stored_bytes".into(), json!(stored));
    let ratio = match stored {
        None | Some(0) => Value::Null,
        Some(stored) => json!(((nbytes as f64 / stored as f64) * 1000.0).round() / 1000.0),
    };
    out.insert("ratio".into(), ratio);
    // What a listing counts is the stored objects: a sharded array's shards (its chunks
    // would need every shard's index read).
    let stored_objects = if lists {
        Some(array.nchunks_initialized()?)
    } else {
        None
    };
    let sharded = meta.sharding().is_some();
    let chunks_initialized = stored_objects.filter(|_| !sharded);
    out.insert("chunks_initialized".into(), json!(chunks_initialized));
    out.insert("chunks_total".into(), json!(chunk_count(&meta)));
    let shards_initialized = stored_objects.filter(|_| sharded);
    out.insert("shards_initialized".into(), json!(shards_initialized));
    let shards_total = sharded.then(|| meta.num_chunks());
    out.insert("shards_total".into(), json!(shards_total));
    Ok(out)
}

/// How many chunks tile the array: its inner chunks when sharded (every shard edge is a
/// multiple of the chunk shape, so they tile it from the origin).
pub fn chunk_count(meta: &ArrayMeta) -> u64 {
    if meta.sharding().is_none() {
        return meta.num_chunks();
    }
    let along: Vec<u64> = meta
        .shape
        .iter()
        .zip(meta.inner_chunks())
        .map(|(&extent, &chunk)| extent.div_ceil(chunk.max(1)))
        .collect();
    match along.contains(&0) {
        true => 0,
        false => along.iter().product(),
    }
}

/// The one-line description `ls` and `tree` give of the array at `path`:
/// `array {4, 5} <i4`.
pub fn array_line(store: &Arc<dyn Store>, path: &str) -> Result<String> {
    let array = Array::open(store.clone(), path, Mode::Read)?;
    let meta = array.metadata();
    Ok(format!(
        "array {{{}}} {}",
        meta.shape
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        meta.dtype.to_v2()
    ))
}
