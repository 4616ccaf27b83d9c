//! `zarrtool validate`: every chunk decoded and the metadata, keys, consolidated metadata
//! and temporary files checked.

use crate::cli::NodeArg;
use crate::describe::display;
use crate::findings::{finding, FOUND};
use crate::nodes::{open, read_region, walk};
use crate::out::{print_json, Out};
use crate::progress::{region_bytes, unit_of, Progress};
use crate::values::shape_text;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::sync::Arc;
use zarr::meta::Order;
use zarr::node::{Array, Group, Mode, Node, NodeKind};
use zarr::store::{mask_urls, node_prefix, Store};
use zarr::Result;

/// Checks one array; returns its problems.
fn validate_array(store: &Arc<dyn Store>, path: &str) -> Result<Vec<String>> {
    let array = match Array::open(store.clone(), path, Mode::Read) {
        Ok(a) => a,
        Err(e) => return Ok(vec![format!("{}: {e}", display(path))]),
    };
    let meta = array.metadata();
    let mut problems = Vec::new();
    // What info, copy and dump read besides the metadata: its dimension names.
    if let Err(e) = array.dimension_names() {
        problems.push(format!("{}: {e}", display(path)));
    }
    let base = array.format().data_base(array.path());
    let prefix = node_prefix(&base);
    let grid = meta.chunk_grid();
    let metadata_names = [
        ".zarray",
        ".zattrs",
        "zarr.json",
        "meta",
        "attrs",
        ".zgroup",
        // A writer appending to the array holds it (not data; see io::append_lock).
        zarr::io::append_lock::LOCK_NAME,
    ];
    let mut chunks = Vec::new();
    for key in store.list_prefix(&prefix)? {
        let rel = &key[prefix.len()..];
        if metadata_names.contains(&rel) {
            continue;
        }
        match meta.parse_chunk_key(rel) {
            None => problems.push(format!(
                "{}: orphan key {key:?} (not a chunk key)",
                display(path)
            )),
            Some(index) if index.iter().zip(&grid).any(|(i, g)| i >= g) => problems.push(format!(
                "{}: chunk {key:?} lies outside the array (grid {})",
                display(path),
                shape_text(&grid)
            )),
            Some(index) => chunks.push((key, index)),
        }
    }
    let bar = Progress::new(chunks.len() as u64, unit_of(&meta), &display(path));
    let errors: Vec<String> = zarr::io::pool::pool()?.install(|| {
        chunks
            .par_iter()
            .filter_map(|(key, index)| {
                let result = array.chunk_region(index).and_then(|(start, count)| {
                    bar.inc(1, region_bytes(&count, meta.item_size()));
                    if meta.dtype.is_variable() {
                        array.read_vlen(&start, &count, Order::C).map(|_| ())
                    } else {
                        read_region(&array, &start, &count).map(|_| ())
                    }
                });
                result
                    .err()
                    .map(|e| format!("{}: chunk {key:?}: {e}", display(path)))
            })
            .collect()
    });
    bar.finish();
    problems.extend(errors);
    Ok(problems)
}

/// The temporary files killed writers left under the node of a directory store (see
/// [`crate::strays`]): stale ones are problems, or removed with `repair` (their keys
/// returned); those a writer may be using are named on stderr and left alone.
fn stray_files(
    node: &NodeArg,
    nodes: &[(String, NodeKind, usize)],
    repair: bool,
    problems: &mut Vec<(String, String)>,
) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    let Some(root) =
        zarr::store::local_path(&node.store)?.filter(|p| std::path::Path::new(p).is_dir())
    else {
        return Ok(removed);
    };
    for temp in crate::strays::find(std::path::Path::new(root), &node.path)? {
        // The deepest node whose directory holds it.
        let owner = nodes
            .iter()
            .map(|(path, _, _)| path.trim_matches('/'))
            .filter(|p| p.is_empty() || temp.key.starts_with(&format!("{p}/")))
            .max_by_key(|p| p.len())
            .map_or_else(|| display(&node.path), display);
        let key = &temp.key;
        match (&temp.live, repair) {
            (Some(why), _) => eprintln!(
                "zarrtool: {owner}: temporary file {key:?} left alone: a writer may be using \
                 it ({why})"
            ),
            (None, true) => match std::fs::remove_file(&temp.path) {
                Ok(()) => {
                    eprintln!(
                        "{owner}: removed the stray temporary file {key:?} ({})",
                        temp.writer
                    );
                    removed.push(key.clone());
                }
                Err(e) => problems.push((
                    owner.clone(),
                    format!("{owner}: stray temporary file {key:?}: cannot remove it: {e}"),
                )),
            },
            (None, false) => problems.push((
                owner.clone(),
                format!(
                    "{owner}: stray temporary file {key:?} of a writer that is gone ({}): \
                     --repair removes it",
                    temp.writer
                ),
            )),
        }
    }
    Ok(removed)
}

/// Checks the node at `node` and everything below it; with `repair`, removes the stale
/// temporary files of killed writers. Returns [`FOUND`] when a problem is found.
pub fn run(node: &NodeArg, as_json: bool, repair: bool) -> Result<u8> {
    let store = open(&node.store, false)?;
    let nodes = walk(&store, &node.path)?;
    // Each problem with the node it is about, as shown.
    let mut problems: Vec<(String, String)> = Vec::new();
    let mut arrays = 0;
    // Groups whose consolidated metadata is stale.
    let mut stale = Vec::new();
    for (path, kind, _) in &nodes {
        match kind {
            NodeKind::Array => {
                arrays += 1;
                let found = validate_array(&store, path)?;
                problems.extend(found.into_iter().map(|p| (display(path), p)));
            }
            _ => {
                let shown = display(path);
                if let Err(e) =
                    Group::open(store.clone(), path, Mode::Read).and_then(|g| g.attributes())
                {
                    problems.push((shown.clone(), format!("{shown}: {e}")));
                }
                match crate::stale::stale_entries(store.as_ref(), path, &shown) {
                    Ok(found) => {
                        if !found.is_empty() {
                            stale.push(path.clone());
                        }
                        problems.extend(found.into_iter().map(|p| (shown.clone(), p)))
                    }
                    Err(e) => problems.push((shown.clone(), format!("{shown}: {e}"))),
                }
            }
        }
    }
    let removed = stray_files(node, &nodes, repair, &mut problems)?;
    if as_json {
        let listed: Vec<Value> = problems
            .iter()
            .map(|(shown, line)| finding(shown, line, "problem"))
            .collect();
        print_json(&json!({
            "store": mask_urls(&node.store),
            "path": display(&node.path),
            "nodes": nodes.len(),
            "arrays": arrays,
            "problems": listed,
            "stale_consolidated": stale.iter().map(|p| display(p)).collect::<Vec<_>>(),
            "removed": removed,
        }))?;
    } else {
        let mut out = Out::new();
        for (_, line) in &problems {
            out.line(line)?;
        }
        out.finish()?;
    }
    eprintln!(
        "{} nodes ({arrays} arrays) checked: {} problem{}",
        nodes.len(),
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
    for path in &stale {
        eprintln!(
            "the consolidated metadata of {} is stale: `zarrtool consolidate {} {}` rewrites it",
            display(path),
            node.store,
            display(path)
        );
    }
    Ok(if problems.is_empty() { 0 } else { FOUND })
}
