//! `validate`'s check of consolidated metadata against the documents it copies: a v2
//! `.zmetadata` or a v3 group's inline `consolidated_metadata` that lists a document
//! differently from the store, lists one the store no longer has, or misses one the store
//! has (a node added after consolidating), is stale; readers that trust it see another tree.
//! An entry whose name is not a normal key (`g//a/.zarray`, `./a`) is reported too: the
//! library refuses to open such metadata, other readers may merge it onto the real key.

use serde_json::{Map, Value};
use zarr::store::{exact_key, get_document, join_key, node_prefix, Store};
use zarr::{Error, Result};

/// Metadata document names of v2 nodes.
const V2_DOCUMENTS: [&str; 3] = [".zarray", ".zgroup", ".zattrs"];

/// What is stale in the consolidated metadata of the group at `path` (nothing when it has
/// none), one message each, naming the group.
pub fn stale_entries(store: &dyn Store, path: &str, shown: &str) -> Result<Vec<String>> {
    let Some((listed, v3)) = consolidated(store, path)? else {
        return Ok(Vec::new());
    };
    let prefix = node_prefix(path);
    let mut problems = Vec::new();
    for (relative, doc) in &listed {
        // A name that only normalises onto a key names another document for readers that
        // take it verbatim.
        if let Err(e) = exact_key(relative, &"the consolidated metadata") {
            problems.push(format!("{shown}: {e}"));
            continue;
        }
        let key = document_key(path, relative, v3);
        let stored = match get_document(store, &key) {
            Ok(stored) => stored,
            Err(e) => {
                problems.push(format!("{shown}: {e}"));
                continue;
            }
        };
        match stored {
            // zarr-python 3 lists empty attributes of v2 nodes that have no .zattrs.
            None if !v3 && relative.ends_with(".zattrs") && is_empty_attributes(doc) => {}
            None => problems.push(format!(
                "{shown}: consolidated metadata lists {relative:?}, which is not in the store"
            )),
            Some(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Err(e) => problems.push(format!("{shown}: {key:?} is not JSON ({e})")),
                Ok(stored) if without_consolidated(&stored) != without_consolidated(doc) => {
                    problems.push(format!(
                        "{shown}: consolidated metadata of {relative:?} differs from the stored \
                         document"
                    ))
                }
                Ok(_) => {}
            },
        }
    }
    for key in store.list_prefix(&prefix)? {
        let relative = &key[prefix.len()..];
        let (node, name) = relative.rsplit_once('/').unwrap_or(("", relative));
        // v3 lists the nodes below the group; v2 every document, the group's own too.
        let listed_as = match v3 {
            true if name == "zarr.json" && !node.is_empty() => node,
            false if V2_DOCUMENTS.contains(&name) => relative,
            _ => continue,
        };
        if !listed.contains_key(listed_as) {
            problems.push(format!(
                "{shown}: {listed_as:?} is not in the consolidated metadata (added after \
                 consolidating?)"
            ));
        }
    }
    Ok(problems)
}

/// The consolidated documents of the group at `path` by path relative to it (v3: node
/// paths; v2: document keys), and whether they are v3's.
fn consolidated(store: &dyn Store, path: &str) -> Result<Option<(Map<String, Value>, bool)>> {
    let parse = |key: &str| -> Result<Option<Value>> {
        get_document(store, key)?
            .map(|bytes| {
                serde_json::from_slice(&bytes)
                    .map_err(|e| Error::Metadata(format!("{key:?} is not JSON ({e})")))
            })
            .transpose()
    };
    let metadata_of = |doc: &Value, key: &str| -> Result<Map<String, Value>> {
        doc.get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| Error::Metadata(format!("{key:?} has no \"metadata\" object")))
    };
    let v3_key = join_key(path, "zarr.json");
    if let Some(doc) = parse(&v3_key)? {
        return match doc.get("consolidated_metadata") {
            None | Some(Value::Null) => Ok(None),
            Some(inline) => Ok(Some((metadata_of(inline, &v3_key)?, true))),
        };
    }
    let v2_key = join_key(path, ".zmetadata");
    match parse(&v2_key)? {
        None => Ok(None),
        Some(doc) => Ok(Some((metadata_of(&doc, &v2_key)?, false))),
    }
}

/// The store key of the document consolidated as `relative` in the group at `path`.
fn document_key(path: &str, relative: &str, v3: bool) -> String {
    match v3 {
        true => join_key(&join_key(path, relative), "zarr.json"),
        false => join_key(path, relative),
    }
}

/// Whether a consolidated attributes document is empty (`{}` or `null`).
fn is_empty_attributes(doc: &Value) -> bool {
    doc.is_null() || doc.as_object().is_some_and(Map::is_empty)
}

/// A document without its own `consolidated_metadata` (which consolidating writes only into
/// the copy, or only into the stored group).
fn without_consolidated(doc: &Value) -> Value {
    let mut doc = doc.clone();
    if let Some(map) = doc.as_object_mut() {
        map.remove("consolidated_metadata");
    }
    doc
}
