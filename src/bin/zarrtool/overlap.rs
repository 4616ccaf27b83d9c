//! Refusing commands that would write over what they read: a copy, move, import or export
//! whose target is its source, lies inside it or holds it, however it is reached (the same
//! path, a symbolic link, a store rooted inside the other, the same zip file). Checked
//! before anything is opened for writing, so a refused command changes nothing.

use std::path::Path;
use std::sync::Arc;
use zarr::io::location::Location;
use zarr::node::{footprint, refuse_overlap, Mode};
use zarr::store::{local_path, node_prefix, Store};
use zarr::{Error, Result};

/// Refuses writing the node at `to` in the store `target` (a URL, not opened yet) from the
/// node at `from` in `source`, the store `source_url` names, when the two overlap.
pub fn refuse_copy_over_source(
    source_url: &str,
    source: &Arc<dyn Store>,
    from: &str,
    target: &str,
    to: &str,
) -> Result<()> {
    refuse_overlap(&footprint(source, from)?, &target_footprint(target, to)?)?;
    match (remote(source_url, from)?, remote(target, to)?) {
        (Some(a), Some(b)) if nested(&a, &b) || nested(&b, &a) => Err(Error::InvalidArg(format!(
            "cannot write a node into itself, into a node inside it or over a node holding \
             it: the source {a} and the target {b} overlap"
        ))),
        _ => Ok(()),
    }
}

/// Refuses moving the node at `from` to `to` in `store` when one is the other or lies
/// inside it, also through links inside the store.
pub fn refuse_move_over_source(store: &Arc<dyn Store>, from: &str, to: &str) -> Result<()> {
    refuse_overlap(&footprint(store, from)?, &footprint(store, to)?)
}

/// Refuses importing `file` into the node at `path` of the store `target` (not opened yet)
/// when the file is that node's store or lies inside the node (replacing the node would
/// delete the file being read).
pub fn refuse_import_over_file(file: &str, target: &str, path: &str) -> Result<()> {
    let file_location = Location::at(Path::new(file), "");
    match target_footprint(target, path)?
        .into_iter()
        .find(|to| to.overlaps(&file_location))
    {
        Some(to) => Err(Error::InvalidArg(format!(
            "cannot import {file_location} into {to}: the file lies in the target, which \
             importing replaces"
        ))),
        None => Ok(()),
    }
}

/// Refuses exporting the array at `path` of `store` to the file `output` when the file is
/// one of the array's keys or holds them (the zip file of the store): creating it would
/// truncate what is being read.
pub fn refuse_export_over_source(output: &str, store: &Arc<dyn Store>, path: &str) -> Result<()> {
    let file_location = Location::at(Path::new(output), "");
    match footprint(store, path)?
        .into_iter()
        .find(|from| from.overlaps(&file_location))
    {
        Some(from) => Err(Error::InvalidArg(format!(
            "cannot export {from} to {file_location}: the file lies in the array exported, \
             which writing it would destroy"
        ))),
        None => Ok(()),
    }
}

/// The real locations of the node at `path` in the local store `url` names, read-only when
/// it exists (a 2022-draft hierarchy's nodes lie in several places), else where it would be
/// created; none for memory and object stores (a new memory store is apart from every
/// store; object stores are compared by URL).
fn target_footprint(url: &str, path: &str) -> Result<Vec<Location>> {
    let Some(local) = local_path(url)? else {
        return Ok(Vec::new());
    };
    match crate::nodes::open_with_options(url, Mode::Read) {
        Ok(store) => footprint(&store, path),
        Err(Error::NotFound(_)) => Ok(vec![Location::at(Path::new(local), path)]),
        Err(e) => Err(e),
    }
}

/// The URL of the node at `path` in an object store (`s3://bucket/prefix/path/`, as given,
/// not resolved: aliases of one bucket are not told apart); `None` for local and memory
/// stores.
fn remote(url: &str, path: &str) -> Result<Option<String>> {
    if local_path(url)?.is_some() || url.to_ascii_lowercase().starts_with("memory://") {
        return Ok(None);
    }
    let path = zarr::store::normalize_path(path)?;
    Ok(Some(format!(
        "{}/{}",
        url.trim_end_matches('/'),
        node_prefix(&path)
    )))
}

/// Whether the node URL `inner` (ending in `/`) is `outer` or lies inside it.
fn nested(outer: &str, inner: &str) -> bool {
    inner.starts_with(outer)
}
