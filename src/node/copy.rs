//! Copying arrays and hierarchies between stores, chunk by chunk in bounded memory, and
//! migrating v1 arrays to v2 in place.

use super::{node_kind, Array, Group, Mode, Node, NodeKind};
use crate::codec;
use crate::error::{Error, Result};
use crate::io::location::Location;
use crate::io::pool;
use crate::io::region::{decode_chunk, encode_chunk};
use crate::io::shard::ChunkWork;
use crate::meta::draft::Kind;
use crate::meta::MAX_VLEN_CHUNK_BYTES;
use crate::meta::{v1, v2, Order};
use crate::store::{get_bounded, join_key, normalize_path, Store};
use rayon::prelude::*;
use serde_json::Value;
use std::sync::Arc;

/// Copies the array or group tree at `source_path` in `source` to `target_path` in
/// `target`, with attributes. `compressor`, when given, re-encodes every chunk with that
/// configuration (`null` for none); otherwise chunks are copied as stored bytes. Memory
/// stays bounded by a few chunks per worker whatever the array size. `mode` applies to the
/// top node (`w` replaces, `w-` fails if something is there, `a` adds to what is there).
/// A target that overlaps the source (the same node, or one inside the other, through any
/// store roots, links or handles on the same storage) is refused with
/// [`Error::InvalidArg`] before anything is erased or written.
pub fn copy(
    source: &Arc<dyn Store>,
    source_path: &str,
    target: &Arc<dyn Store>,
    target_path: &str,
    compressor: Option<&Value>,
    mode: Mode,
) -> Result<()> {
    if matches!(mode, Mode::Read | Mode::ReadWrite) {
        return Err(Error::InvalidArg(format!(
            "mode {:?} does not create a copy",
            mode.name()
        )));
    }
    let source_path = normalize_path(source_path)?;
    let target_path = normalize_path(target_path)?;
    refuse_overlap(
        &footprint(source, &source_path)?,
        &footprint(target, &target_path)?,
    )?;
    let nodes = walk(source.as_ref(), &source_path)?;
    if nodes.is_empty() {
        return Err(Error::NotFound(format!(
            "nothing to copy at {source_path:?}"
        )));
    }
    for (i, (relative, kind)) in nodes.iter().enumerate() {
        let node_mode = match (i, mode) {
            (0, mode) => mode,
            (_, Mode::Append) => Mode::Append,
            _ => Mode::CreateNew,
        };
        let from_path = join_path(&source_path, relative);
        let to_path = join_path(&target_path, relative);
        match kind {
            NodeKind::Array => {
                copy_array(source, &from_path, target, &to_path, compressor, node_mode)?
            }
            _ => {
                let from = Group::open(source.clone(), &from_path, Mode::Read)?;
                Group::open_with(
                    target.clone(),
                    &to_path,
                    node_mode,
                    from.format(),
                    &from.attributes()?,
                )?;
            }
        }
    }
    Ok(())
}

/// Refuses writing a target whose keys lie at `targets` from a source whose keys lie at
/// `sources` (see [`footprint`]) when they overlap (the same node, or one inside the
/// other), however the stores are rooted, linked or opened: erasing or writing the target
/// would destroy the source before it is read. The error, [`Error::InvalidArg`], names both.
pub fn refuse_overlap(sources: &[Location], targets: &[Location]) -> Result<()> {
    for from in sources {
        if let Some(to) = targets.iter().find(|to| from.overlaps(to)) {
            return Err(Error::InvalidArg(format!(
                "cannot write a node into itself, into a node inside it or over a node \
                 holding it: the source {from} and the target {to} overlap"
            )));
        }
    }
    Ok(())
}

/// The real locations of the keys of the node at `path` in `store`: below its path, or in
/// a 2022 draft hierarchy its documents, the documents below it and its chunks; the whole
/// store for the root.
pub fn footprint(store: &Arc<dyn Store>, path: &str) -> Result<Vec<Location>> {
    let path = normalize_path(path)?;
    let path = path.as_ref();
    let keys = match super::draft_scheme(store.as_ref())? {
        Some(scheme) if !path.is_empty() => vec![
            scheme.doc_key(path, Kind::Array),
            scheme.doc_key(path, Kind::Group),
            scheme.meta_dir(path),
            scheme.data_base(path),
        ],
        _ => vec![path.to_string()],
    };
    Ok(keys.iter().map(|key| Location::of(store, key)).collect())
}

/// Joins two node paths, either of which may be empty (the root).
fn join_path(parent: &str, child: &str) -> String {
    match (parent.is_empty(), child.is_empty()) {
        (_, true) => parent.to_string(),
        (true, false) => child.to_string(),
        (false, false) => format!("{parent}/{child}"),
    }
}

/// Every node at and below `path`, parents before children, as (path relative to `path`,
/// kind); empty when nothing is there.
fn walk(store: &dyn Store, path: &str) -> Result<Vec<(String, NodeKind)>> {
    let kind = node_kind(store, path)?;
    let mut nodes = Vec::new();
    match kind {
        NodeKind::None => {}
        NodeKind::Array => nodes.push((String::new(), kind)),
        NodeKind::Group => {
            nodes.push((String::new(), kind));
            let names = match super::draft_scheme(store)? {
                Some(scheme) => super::group::draft_children(store, scheme, path)?
                    .into_iter()
                    .map(|(name, _)| name)
                    .collect(),
                None => store.list_dir(&crate::store::node_prefix(path))?.prefixes,
            };
            for name in names {
                for (relative, kind) in walk(store, &join_key(path, &name))? {
                    nodes.push((join_path(&name, &relative), kind));
                }
            }
        }
    }
    Ok(nodes)
}

fn copy_array(
    source: &Arc<dyn Store>,
    source_path: &str,
    target: &Arc<dyn Store>,
    target_path: &str,
    compressor: Option<&Value>,
    mode: Mode,
) -> Result<()> {
    let from = Array::open(source.clone(), source_path, Mode::Read)?;
    let source_meta = from.metadata();
    let mut meta = (*source_meta).clone();
    if let Some(config) = compressor {
        let item_size =
            crate::codec::filter::output_dtype_of(meta.chain().filters(), &meta.dtype).item_size();
        meta.codecs.innermost_mut().bytes_to_bytes = match config {
            Value::Null => Vec::new(),
            Value::Object(config) => vec![codec::from_config(config, item_size)?],
            other => {
                return Err(Error::InvalidArg(format!(
                    "compressor {other} is not an object or null"
                )))
            }
        };
    }
    let to = Array::create(
        target.clone(),
        target_path,
        meta.clone(),
        &from.attributes()?,
        mode,
        from.format().for_copies(),
    )?;
    // With mode `a` the target may already exist: its layout must match, and its own
    // compressor decides whether chunks are re-encoded.
    let existing = to.metadata();
    if existing.shape != meta.shape
        || existing.chunks != meta.chunks
        || existing.grid != meta.grid
        || existing.inner_chunks() != meta.inner_chunks()
        || existing.dtype != meta.dtype
        || existing.chain().permutation(meta.rank()) != meta.chain().permutation(meta.rank())
    {
        return Err(Error::Exists(format!(
            "array {:?} exists with a different shape, chunks, shards, data type or order",
            to.path()
        )));
    }
    let meta = existing;
    let reencode = meta.chain().encoding() != source_meta.chain().encoding();
    let chunks = from.chunk_keys(&source_meta)?;
    // Items framed differently (vlen and json2) are re-encoded item by item too.
    let framing_differs = std::mem::discriminant(&meta.chain().array_to_bytes)
        != std::mem::discriminant(&source_meta.chain().array_to_bytes);
    if reencode && (meta.sharding().is_some() || framing_differs) {
        return copy_by_regions(&from, &to, &chunks);
    }
    let max_stored = source_meta.max_stored_len();
    pool::pool()?.install(|| {
        chunks
            .par_iter()
            .try_for_each_init(ChunkWork::default, |work, (key, index)| {
                let Some(raw) = get_bounded(source.as_ref(), key, max_stored)? else {
                    return Ok(());
                };
                let target_key =
                    join_key(&to.format().data_base(to.path()), &meta.chunk_key(index));
                if !reencode {
                    return target.set(&target_key, &raw);
                }
                let ChunkWork { chunk, scratch } = work;
                if meta.dtype.is_variable() {
                    *chunk = source_meta
                        .chain()
                        .decode_bytes_bounded(&raw, MAX_VLEN_CHUNK_BYTES, scratch)?
                        .to_vec();
                    return target.set(&target_key, meta.chain().encode_bytes(chunk, scratch)?);
                }
                // Each chunk of an unsharded rectilinear grid has its own size.
                let chunk_bytes = if meta.chunks_vary() {
                    meta.chunk_shape_at(index).iter().product::<u64>() as usize * meta.item_size()
                } else {
                    meta.chunk_bytes()
                };
                crate::error::try_resize(chunk, chunk_bytes, "a decoded chunk")?;
                decode_chunk(&source_meta, &key.as_str(), index, &raw, chunk, scratch)?;
                target.set(
                    &target_key,
                    encode_chunk(&meta, &key.as_str(), index, chunk, scratch)?,
                )
            })
    })
}

/// Re-encodes an array one stored object (a shard, or a chunk whose items change their
/// framing) at a time: its region is read from `from` and written to `to` (which encodes
/// its inner chunks in parallel; variable-length items go item by item), so memory stays at
/// one shard per call.
fn copy_by_regions(from: &Array, to: &Array, shards: &[(String, Vec<u64>)]) -> Result<()> {
    let meta = from.metadata();
    let elem = meta.dtype.element_type();
    let grid = meta.chunk_grid();
    let mut buf = Vec::new();
    for (_, index) in shards {
        // Objects left outside the shape (by a shrink elsewhere) hold nothing to copy.
        if index.iter().zip(&grid).any(|(i, g)| i >= g) {
            continue;
        }
        let (start, edges): (Vec<u64>, Vec<u64>) = (0..meta.rank())
            .map(|d| meta.chunk_span(d, index[d]))
            .unzip();
        let count: Vec<u64> = (0..meta.rank())
            .map(|d| edges[d].min(meta.shape[d].saturating_sub(start[d])))
            .collect();
        if meta.dtype.is_variable() {
            let items = from.read_vlen(&start, &count, Order::C)?;
            to.write_vlen(&start, &count, Order::C, &items.slices())?;
            continue;
        }
        let bytes = count.iter().product::<u64>() as usize * meta.item_size();
        crate::error::try_resize(&mut buf, bytes, "a shard of the copy")?;
        from.read(&start, &count, elem, Order::C, &mut buf)?;
        to.write(&start, &count, elem, Order::C, &buf)?;
    }
    Ok(())
}

/// Converts the v1 array at `path` to v2 in place, as zarr-python's `migrate_1to2`: `meta`
/// becomes `.zarray` (with `compressor` and `filters: null`), `attrs` becomes `.zattrs`.
/// The new documents are written before the old ones are erased.
pub fn migrate_1to2(store: &dyn Store, path: &str) -> Result<()> {
    let path = normalize_path(path)?;
    let meta_key = join_key(&path, v1::ARRAY_KEY);
    let bytes = store
        .get(&meta_key)?
        .ok_or_else(|| Error::NotFound(format!("no v1 array at {path:?}")))?;
    let meta = v1::parse_array(&bytes)?;
    store.set(&join_key(&path, v2::ARRAY_KEY), &v2::render_array(&meta)?)?;
    let attrs_key = join_key(&path, v1::ATTRS_KEY);
    if let Some(attrs) = store.get(&attrs_key)? {
        v2::parse_attributes(&attrs)?;
        store.set(&join_key(&path, v2::ATTRS_KEY), &attrs)?;
        store.erase(&attrs_key)?;
    }
    store.erase(&meta_key)?;
    Ok(())
}
