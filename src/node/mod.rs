//! Nodes of a hierarchy: arrays, the groups above them, and the open/create modes.

mod array;
mod attrs;
mod builder;
pub mod cf;
mod copy;
pub mod exit;
mod group;
pub mod pending;
pub mod typed_attrs;

/// How a node is opened or created (defined beside the stores, which open by it too).
pub use crate::store::Mode;
pub use array::{Array, DIMENSIONS_KEY};
pub use attrs::Attributes;
pub use builder::ArrayBuilder;
pub use copy::{copy, footprint, migrate_1to2, refuse_overlap};
pub use group::{node_kind, Group, NodeKind};

use crate::error::{Error, Result};
use crate::meta::draft::{self, Kind, Scheme};
use crate::meta::v2::{self, ARRAY_KEY, GROUP_KEY};
use crate::meta::{v1, v3, Format};
use crate::store::{get_document, is_document, join_key, node_prefix, Expect, Store};
use serde_json::{Map, Value};
use std::sync::Arc;

/// What arrays and groups share: a path, a store, attributes and a writable flag.
/// Counts the changes started through any handle of this process (every call that passes
/// [`Node::check_writable`]), so kept read results know when they may be stale.
pub(crate) static MUTATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub trait Node {
    /// The normalised path of the node.
    fn path(&self) -> &str;
    /// The store holding the node.
    fn store(&self) -> &Arc<dyn Store>;
    /// The node's attributes document.
    fn attrs(&self) -> &Attributes;
    /// Whether this handle may write.
    fn writable(&self) -> bool;

    /// Refuses writes through a read-only handle, saying what was attempted.
    fn check_writable(&self, what: &str) -> Result<()> {
        if self.writable() {
            MUTATIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        } else {
            Err(Error::ReadOnly(format!(
                "cannot {what}: {:?} was opened read-only",
                self.path()
            )))
        }
    }
    /// All attributes (empty when there are none).
    fn attributes(&self) -> Result<Map<String, Value>> {
        self.attrs().get(self.store().as_ref())
    }
    /// Replaces all attributes.
    fn set_attributes(&self, attributes: &Map<String, Value>) -> Result<()> {
        self.check_writable("set attributes")?;
        self.attrs().set(self.store().as_ref(), attributes)
    }
    /// Sets one attribute, keeping the others.
    fn set_attribute(&self, key: &str, value: Value) -> Result<()> {
        self.check_writable("set an attribute")?;
        self.attrs().set_one(self.store().as_ref(), key, value)
    }
    /// Deletes one attribute; returns whether it existed.
    fn delete_attribute(&self, key: &str) -> Result<bool> {
        self.check_writable("delete an attribute")?;
        self.attrs().delete_one(self.store().as_ref(), key)
    }
}

/// The `node_type` of the v3 `zarr.json` at `path`, if there is one.
pub fn v3_node_type(store: &dyn Store, path: &str) -> Result<Option<String>> {
    let Some(bytes) = get_document(store, &join_key(path, v3::NODE_KEY))? else {
        return Ok(None);
    };
    let doc = crate::meta::json::parse(&bytes).map_err(|e| {
        Error::Metadata(format!(
            "{}: not valid JSON: {e}",
            join_key(path, v3::NODE_KEY)
        ))
    })?;
    Ok(doc
        .get("node_type")
        .and_then(Value::as_str)
        .map(str::to_string))
}

/// The key scheme of the 2022-draft hierarchy in `store`, when its root `zarr.json` is a
/// draft entry point.
pub fn draft_scheme(store: &dyn Store) -> Result<Option<Scheme>> {
    match get_document(store, draft::ENTRY_KEY)? {
        Some(bytes) => draft::detect(&bytes),
        None => Ok(None),
    }
}

/// Writes the entry point of a `scheme` hierarchy unless it is there; a root `zarr.json`
/// of anything else is an error.
fn ensure_entry_point(store: &dyn Store, scheme: Scheme) -> Result<()> {
    if check_entry_point(store, scheme)? {
        Ok(())
    } else {
        store.set(draft::ENTRY_KEY, &scheme.entry_point())
    }
}

/// Whether the store's root holds the entry point of a `scheme` hierarchy (`false`: no
/// root `zarr.json`); a root `zarr.json` of anything else is an error.
pub fn check_entry_point(store: &dyn Store, scheme: Scheme) -> Result<bool> {
    match get_document(store, draft::ENTRY_KEY)? {
        None => Ok(false),
        Some(bytes) if draft::detect(&bytes)? == Some(scheme) => Ok(true),
        Some(_) => Err(Error::Exists(format!(
            "the store's root zarr.json is not the entry point of a Zarr format {} hierarchy; \
             the 2022 draft layout needs a store of its own",
            Format::Draft(scheme).number()
        ))),
    }
}

/// Whether an array's metadata document (v3 `zarr.json`, v2 `.zarray`, v1 `meta`, or the
/// draft's `….array.json`) is at `path`.
pub fn contains_array(store: &dyn Store, path: &str) -> Result<bool> {
    array_in(store, draft_scheme(store)?, path)
}

/// [`contains_array`] for a store whose draft scheme (if any) is already known.
fn array_in(store: &dyn Store, draft: Option<Scheme>, path: &str) -> Result<bool> {
    if let Some(scheme) = draft {
        return store.contains(&scheme.doc_key(path, Kind::Array));
    }
    // A v3 document answers alone (the v2 and v1 ones are looked for only without it).
    if let Some(kind) = v3_node_type(store, path)? {
        return Ok(kind == "array");
    }
    Ok(store.contains(&join_key(path, ARRAY_KEY))?
        || store.contains(&join_key(path, v1::ARRAY_KEY))?)
}

/// Whether a group is at `path`: a group document (v2 `.zgroup`, v3 `zarr.json`, the
/// draft's `….group.json`), or in the draft layout a group implied by its descendants.
pub fn contains_group(store: &dyn Store, path: &str) -> Result<bool> {
    group_in(store, draft_scheme(store)?, path)
}

/// [`contains_group`] for a store whose draft scheme (if any) is already known.
fn group_in(store: &dyn Store, draft: Option<Scheme>, path: &str) -> Result<bool> {
    if let Some(scheme) = draft {
        if path.is_empty() || store.contains(&scheme.doc_key(path, Kind::Group))? {
            return Ok(true);
        }
        let below = store.list_dir(&scheme.meta_dir(path))?;
        return Ok(!below.keys.is_empty() || !below.prefixes.is_empty());
    }
    if let Some(kind) = v3_node_type(store, path)? {
        return Ok(kind == "group");
    }
    store.contains(&join_key(path, GROUP_KEY))
}

/// Writes the group document of `format` at `path` (with `attributes`, which v3 and the
/// draft embed); with `only_new`, only if no other writer created it first
/// (a conditional create).
pub fn write_group(
    store: &dyn Store,
    path: &str,
    format: Format,
    attributes: &Map<String, Value>,
    only_new: bool,
) -> Result<()> {
    if let Some(scheme) = format.draft_scheme() {
        ensure_entry_point(store, scheme)?;
    }
    let (key, document) = format.render_group(path, attributes)?;
    put_document(store, &key, &document, only_new)
}

/// Writes a node's metadata `document` at `key`. With `only_new` (mode `w-`) it is created
/// in one atomic step where the store can (a conditional PUT on object stores, a hard link
/// in a directory): when another writer created it since the checks before, that writer's
/// document is kept and the error says so. Otherwise it replaces what is there.
pub(crate) fn put_document(
    store: &dyn Store,
    key: &str,
    document: &[u8],
    only_new: bool,
) -> Result<()> {
    if only_new {
        match store.set_if(key, document, Expect::Absent) {
            Ok(true) => return Ok(()),
            Ok(false) => {
                return Err(Error::Exists(format!(
                    "{key:?} was created by another writer meanwhile"
                )))
            }
            Err(Error::Unsupported(_)) => {}
            Err(e) => return Err(e),
        }
    }
    store.set(key, document)
}

/// Erases the node at `path` and everything under it: in the draft layout its documents,
/// the documents below it and its chunks; else every key under its path.
pub fn erase_node(store: &dyn Store, path: &str) -> Result<()> {
    if let Some(scheme) = draft_scheme(store)? {
        store.erase(&scheme.doc_key(path, Kind::Array))?;
        store.erase(&scheme.doc_key(path, Kind::Group))?;
        store.erase_prefix(&scheme.meta_dir(path))?;
        return store.erase_prefix(&node_prefix(&scheme.data_base(path)));
    }
    let keys = store.list_prefix(&node_prefix(path))?;
    // The arrays' key prefixes, sorted and none inside another: of those not after a key,
    // only the last can hold it.
    let mut arrays: Vec<String> = array_paths(store, &keys)?
        .iter()
        .map(|a| node_prefix(a))
        .collect();
    arrays.sort();
    // Chunks first, documents last (the node's own last of all): a writer killed midway
    // leaves nodes that still open.
    for array in &arrays {
        store.erase_prefix(array)?;
    }
    let under_array = |key: &str| {
        let after = arrays.partition_point(|a| a.as_str() <= key);
        after > 0 && key.starts_with(arrays[after - 1].as_str())
    };
    let mut documents: Vec<&String> = keys
        .iter()
        .filter(|key| is_document(key) && !under_array(key))
        .collect();
    documents.sort_by_key(|key| std::cmp::Reverse(key.matches('/').count()));
    for key in documents {
        store.erase(key)?;
    }
    Ok(())
}

/// The paths of the arrays among `keys` (a v1 `meta`, v2 `.zarray` or v3 array
/// `zarr.json`), outermost only: everything below an array's path is its own.
fn array_paths(store: &dyn Store, keys: &[String]) -> Result<Vec<String>> {
    let mut arrays: Vec<String> = Vec::new();
    for key in keys {
        let (dir, name) = key.rsplit_once('/').unwrap_or(("", key));
        let is_array = match name {
            v2::ARRAY_KEY => true,
            v3::NODE_KEY => v3_node_type(store, dir).ok().flatten().as_deref() == Some("array"),
            // A file named `meta` is a v1 array's document only when it says so.
            v1::ARRAY_KEY => get_document(store, key)?.is_some_and(|doc| {
                crate::meta::json::parse(&doc)
                    .is_ok_and(|d| d.get("zarr_format").and_then(Value::as_u64) == Some(1))
            }),
            _ => false,
        };
        if is_array {
            arrays.push(dir.to_string());
        }
    }
    arrays.sort();
    let mut outermost: Vec<String> = Vec::new();
    for array in arrays {
        let nested = outermost
            .last()
            .is_some_and(|outer| outer.is_empty() || array.starts_with(&node_prefix(outer)));
        if !nested {
            outermost.push(array);
        }
    }
    Ok(outermost)
}

/// Refuses a node at `path` when an array is one of its ancestors; writes nothing.
pub fn check_parents(store: &dyn Store, path: &str) -> Result<()> {
    let draft = draft_scheme(store)?;
    for parent in ancestors(path) {
        if array_in(store, draft, parent)? {
            return Err(Error::Exists(format!(
                "cannot create {path:?}: an array exists at {parent:?}"
            )));
        }
    }
    Ok(())
}

/// Creates the groups above `path` (the root included) that do not exist yet, in `format`,
/// as the v2 spec requires (v3 allows implicit groups; zarr-python writes them too; the
/// 2022 draft layout only needs its entry point); an array in the way is an error, found
/// before anything is written.
pub fn ensure_parent_groups(store: &dyn Store, path: &str, format: Format) -> Result<()> {
    check_parents(store, path)?;
    if format == Format::V1 {
        // Format 1 has no groups: its arrays stand alone.
        return Ok(());
    }
    if let Some(scheme) = format.draft_scheme() {
        // The draft's groups are implied by their descendants.
        return ensure_entry_point(store, scheme);
    }
    let draft = draft_scheme(store)?;
    for parent in ancestors(path) {
        if !group_in(store, draft, parent)? {
            write_group(store, parent, format, &Map::new(), false)?;
        }
    }
    Ok(())
}

/// The paths above `path`, from the root (`""`) down to its parent.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let ends = path.match_indices('/').map(|(i, _)| i);
    let parents = if path.is_empty() { None } else { Some(0) };
    parents.into_iter().chain(ends).map(move |end| &path[..end])
}

/// The format a new node at `path` gets when the caller does not choose one: the store's
/// 2022-draft layout if it has one, else that of the nearest group above it (so a tree
/// keeps one format), else Zarr v3.
pub fn inherited_format(store: &dyn Store, path: &str) -> Result<Format> {
    if let Some(scheme) = draft_scheme(store)? {
        return Ok(Format::Draft(scheme));
    }
    let mut parent = path;
    while !parent.is_empty() {
        parent = parent.rsplit_once('/').map_or("", |(p, _)| p);
        if v3_node_type(store, parent)?.is_some() {
            return Ok(Format::V3);
        }
        if store.contains(&join_key(parent, GROUP_KEY))? {
            return Ok(Format::V2);
        }
    }
    Ok(Format::V3)
}

#[cfg(test)]
mod tests {
    use super::ancestors;

    #[test]
    fn ancestors_run_from_the_root_to_the_parent() {
        assert_eq!(ancestors("").count(), 0);
        assert_eq!(ancestors("a").collect::<Vec<_>>(), [""]);
        assert_eq!(ancestors("a/b/c").collect::<Vec<_>>(), ["", "a", "a/b"]);
    }
}
