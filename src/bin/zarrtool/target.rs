//! Where the commands that create a node (`create`, `import`) write it: the target store
//! opened (or not, for a dry run), what is there refused unless replaced, and the new
//! array's settings checked before anything is written.

use crate::cli::{Layout, NodeArg};
use crate::describe::{array_text, display, kind_name};
use crate::nodes::open;
use serde_json::Map;
use std::sync::Arc;
use zarr::meta::{ArrayMeta, Format};
use zarr::node::{node_kind, ArrayBuilder, Mode, NodeKind};
use zarr::store::Store;
use zarr::{Error, Result};

/// Opens the store of a command that creates a node at `path`: for a dry run read-only
/// (`None` when the store does not exist yet), otherwise for writing (created if missing).
/// A node already at `path` is refused unless `overwrite`, the same way in both cases.
/// Returns the store and the kind of node at `path`.
pub fn target_store(
    url: &str,
    path: &str,
    overwrite: bool,
    dry_run: bool,
) -> Result<(Option<Arc<dyn Store>>, NodeKind)> {
    let store = if dry_run {
        match open(url, false) {
            Ok(store) => Some(store),
            Err(Error::NotFound(_)) => None,
            Err(e) => return Err(e),
        }
    } else {
        Some(crate::nodes::open_with_options(url, Mode::Append)?)
    };
    let kind = match &store {
        Some(store) => node_kind(store.as_ref(), path)?,
        None => NodeKind::None,
    };
    if kind != NodeKind::None && !overwrite {
        return Err(Error::Exists(format!(
            "{} at {} in {url}: use --overwrite to replace it",
            kind_name(kind),
            display(path)
        )));
    }
    Ok((store, kind))
}

/// What a dry run says it would do to create `what` at `path` where `kind` is.
pub fn would_create(kind: NodeKind, path: &str, what: &str) {
    match kind {
        NodeKind::None => eprintln!("would create {what} at {}", display(path)),
        _ => eprintln!(
            "would replace {} at {} with {what}",
            kind_name(kind),
            display(path)
        ),
    }
}

/// The format of a new array: the one chosen, else the one the store gives `path`.
/// Checks a new array's settings against the target store (what is there, the format it
/// inherits) before anything is written: the store and the metadata to create, or `None`
/// after describing what a dry run would create.
pub fn planned_array(
    builder: &mut ArrayBuilder,
    node: &NodeArg,
    layout: &Layout,
    overwrite: bool,
    dry_run: bool,
) -> Result<Option<(Arc<dyn Store>, ArrayMeta)>> {
    // Checked before the target store is opened for writing (which creates it), so that
    // refused settings leave no new store behind: in the format given, or v3 where no
    // store is there yet to inherit a format from.
    let no_store =
        zarr::store::local_path(&node.store)?.is_some_and(|p| !std::path::Path::new(p).exists());
    if layout.format.is_some() || no_store {
        let format = layout.format.unwrap_or(3);
        builder.zarr_format(format)?;
        Format::from_number(format.into())?.render_array(&builder.metadata()?, &Map::new())?;
    }
    let (store, kind) = target_store(&node.store, &node.path, overwrite, dry_run)?;
    let format = new_array_format(layout, store.as_ref(), &node.path)?;
    builder.zarr_format(format.number())?;
    let meta = builder.metadata()?;
    match store.filter(|_| !dry_run) {
        Some(store) => Ok(Some((store, meta))),
        None => {
            would_create(kind, &node.path, &array_text(&meta, format));
            Ok(None)
        }
    }
}

fn new_array_format(layout: &Layout, store: Option<&Arc<dyn Store>>, path: &str) -> Result<Format> {
    match (layout.format, store) {
        (Some(f), _) => Format::from_number(f.into()),
        (None, Some(store)) => zarr::node::inherited_format(store.as_ref(), path.trim_matches('/')),
        (None, None) => Ok(Format::V3),
    }
}
