//! Opening stores and nodes, walking a hierarchy and reading an array's metadata document
//! and values.

use crate::describe::display;
use serde_json::{json, Value};
use std::sync::Arc;
use zarr::meta::{Format, Order};
use zarr::node::{node_kind, Array, Group, Mode, Node, NodeKind};
use zarr::store::{get_document, join_key, open_url, Store};
use zarr::{Error, Result};

/// The environment variable holding store options (a JSON object) for the stores that
/// are not local directories, zip files or memory: S3 endpoints, a reference file's
/// `allowed_targets`, an Icechunk repository's `virtual_chunk_containers`.
pub const OPTIONS_VARIABLE: &str = "ZARRTOOL_STORE_OPTIONS";

/// The options of [`OPTIONS_VARIABLE`] for the store at `url` (`None` for local stores and
/// when the variable is unset).
pub fn store_options(url: &str) -> Result<Option<serde_json::Map<String, Value>>> {
    let local = zarr::store::local_path(url)?.is_some() || url.starts_with("memory:");
    let Some(text) = std::env::var_os(OPTIONS_VARIABLE).filter(|_| !local) else {
        return Ok(None);
    };
    let bad = || Error::InvalidArg(format!("{OPTIONS_VARIABLE} is not a JSON object"));
    let text = text.into_string().map_err(|_| bad())?;
    match serde_json::from_str::<Value>(&text).map_err(|_| bad())? {
        Value::Object(map) => Ok(Some(map)),
        _ => Err(bad()),
    }
}

/// Opens the store at `url` with `mode` and the options of [`OPTIONS_VARIABLE`].
pub fn open_with_options(url: &str, mode: Mode) -> Result<Arc<dyn Store>> {
    let options = store_options(url)?.map(|o| Value::Object(o).to_string());
    open_url(url, mode, options.as_deref())
}

/// Opens a store for reading, or for writing when `write` (it must exist).
pub fn open(url: &str, write: bool) -> Result<Arc<dyn Store>> {
    open_with_options(url, if write { Mode::ReadWrite } else { Mode::Read })
}

/// Opens the node at `path` as a trait object, for its attributes, with its kind.
pub fn open_node(
    store: Arc<dyn Store>,
    path: &str,
    write: bool,
) -> Result<(Box<dyn Node>, NodeKind)> {
    let mode = if write { Mode::ReadWrite } else { Mode::Read };
    let kind = node_kind(store.as_ref(), path)?;
    let node: Box<dyn Node> = match kind {
        NodeKind::Array => Box::new(Array::open(store, path, mode)?),
        NodeKind::Group => Box::new(Group::open(store, path, mode)?),
        NodeKind::None => {
            return Err(Error::NotFound(format!(
                "no array or group at {}",
                display(path)
            )))
        }
    };
    Ok((node, kind))
}

/// Every node at and below `path`, depth first in name order, with its depth.
pub fn walk(store: &Arc<dyn Store>, path: &str) -> Result<Vec<(String, NodeKind, usize)>> {
    fn go(
        store: &Arc<dyn Store>,
        path: &str,
        kind: NodeKind,
        depth: usize,
        out: &mut Vec<(String, NodeKind, usize)>,
    ) -> Result<()> {
        out.push((path.to_string(), kind, depth));
        if kind == NodeKind::Group {
            let group = Group::open(store.clone(), path, Mode::Read)?;
            for (name, kind) in group.members()? {
                go(store, &join_key(path, &name), kind, depth + 1, out)?;
            }
        }
        Ok(())
    }
    let path = path.trim_matches('/');
    let kind = node_kind(store.as_ref(), path)?;
    if kind == NodeKind::None {
        return Err(Error::NotFound(format!(
            "no array or group at {}",
            display(path)
        )));
    }
    let mut out = Vec::new();
    go(store, path, kind, 0, &mut out)?;
    Ok(out)
}

/// The array's stored metadata document as JSON.
pub fn document(array: &Array) -> Result<Value> {
    let key = array.format().array_key(array.path());
    let bytes = get_document(array.store().as_ref(), &key)?
        .ok_or_else(|| Error::NotFound(format!("no metadata document at {key:?}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::Metadata(format!("{key:?} is not valid JSON: {e}")))
}

/// The codecs an array's metadata document (`doc`, in `format`) states: v3's list, v2's
/// filters and compressor, v1's compression and its options.
pub fn codecs(format: Format, doc: &Value) -> Value {
    let field = |key: &str| doc.get(key).cloned().unwrap_or(Value::Null);
    match format {
        f if f.is_v3() => field("codecs"),
        Format::V1 => json!({
            "compression": field("compression"),
            "compression_opts": field("compression_opts"),
        }),
        _ => json!({"filters": field("filters"), "compressor": field("compressor")}),
    }
}

/// Reads a region in C order, native byte order.
pub fn read_region(array: &Array, start: &[u64], count: &[u64]) -> Result<Vec<u8>> {
    let meta = array.metadata();
    let n = zarr::error::count_of(count, "elements in the region")?;
    let mut buf = zarr::error::try_zeroed(n * meta.item_size(), "the region")?;
    array.read(start, count, meta.dtype.element_type(), Order::C, &mut buf)?;
    Ok(buf)
}
