//! The layout options of new arrays (`--chunks`, `--shards`, `--compressor`/`--codec`,
//! `--format`) applied to an array builder.

use crate::cli::Layout;
use crate::values::{parse_json, parse_shape, shape_text, ChunkSpec};
use serde_json::Value;
use zarr::node::ArrayBuilder;
use zarr::{Error, Result};

/// Splits a `--codec` list into its leading Zarr v3 array codecs (`scale_offset`,
/// `cast_value`, `bitround`, `reshape`, `packbits`, `numcodecs.<filter>`), which become the
/// filters, and the bytes→bytes codecs after them; `None` when it has no array codecs.
pub fn split_codecs(codecs: Value) -> (Option<Value>, Value) {
    let is_array_codec = |c: &Value| {
        c.get("id").is_none()
            && c.get("name")
                .and_then(Value::as_str)
                .is_some_and(zarr::codec::filter::is_v3_filter_name)
    };
    match codecs {
        Value::Array(mut list) if list.first().is_some_and(is_array_codec) => {
            let split = list
                .iter()
                .position(|c| !is_array_codec(c))
                .unwrap_or(list.len());
            let rest = list.split_off(split);
            (Some(Value::Array(list)), Value::Array(rest))
        }
        other => (None, other),
    }
}

/// Applies chunks, shards, compressor (and filters, from `--codec`'s array codecs) and
/// format to a builder of an array of `shape`, refusing chunks or shards of another rank.
pub fn apply_layout(builder: &mut ArrayBuilder, layout: &Layout, shape: &[u64]) -> Result<()> {
    let rank_check = |option: &str, text: &str, rank: usize| match rank == shape.len() {
        true => Ok(()),
        false => Err(Error::InvalidArg(format!(
            "{option} {text} has {rank} dimension{} but the shape {} has {}",
            if rank == 1 { "" } else { "s" },
            shape_text(shape),
            shape.len()
        ))),
    };
    if let Some(text) = &layout.chunks {
        let chunks = ChunkSpec::parse(text, "--chunks")?;
        rank_check("--chunks", text, chunks.rank())?;
        refuse_edges_with_shards(&chunks, layout.shards.is_some(), "--chunks")?;
        chunks.apply(builder);
    }
    if let Some(text) = &layout.shards {
        let shards = parse_shape(text, "--shards")?;
        rank_check("--shards", text, shards.len())?;
        builder.shard_shape(shards);
    }
    if let Some(c) = &layout.compressor {
        let (filters, compressors) = split_codecs(parse_json(c, "--compressor")?);
        if let Some(filters) = filters {
            builder.filters(filters);
        }
        builder.compressor(compressors);
    }
    if let Some(f) = layout.format {
        builder.zarr_format(f)?;
    }
    Ok(())
}

/// Refuses chunk edges given with `--shards` (`what` names the option): the edges would be
/// the shards' and the chunk shape is not given.
pub fn refuse_edges_with_shards(chunks: &ChunkSpec, shards: bool, what: &str) -> Result<()> {
    match (chunks, shards) {
        (ChunkSpec::Edges(_), true) => Err(Error::InvalidArg(format!(
            "{what} with chunk edges cannot be combined with --shards"
        ))),
        _ => Ok(()),
    }
}
