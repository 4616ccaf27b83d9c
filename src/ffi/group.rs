//! Groups and hierarchies from C: open/create groups, members, delete and move, attributes,
//! consolidated metadata, copying and v1 migration.

use super::array::{give_array, zarr_array_t};
use super::builder::builder_ref;
use super::store::{store_ref, strings};
use super::*;
use crate::meta::consolidated::ConsolidatedStore;
use crate::node::{Group, Node, NodeKind};
use crate::store::Store;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// Kinds of node at a path.
#[repr(i32)]
#[derive(Debug, Clone, Copy)]
pub enum zarr_node_kind {
    /// Nothing Zarr recognises.
    ZARR_NODE_NONE = 0,
    /// An array.
    ZARR_NODE_ARRAY = 1,
    /// A group.
    ZARR_NODE_GROUP = 2,
}

/// A node kind: one of the `zarr_node_kind` values.
pub type zarr_node_kind_t = i32;

/// A group handle. Safe to use from several threads at once; keeps its store alive.
pub struct zarr_group_t {
    inner: Arc<Group>,
    poison: Poison,
}

fn with_group<T>(
    group: *const zarr_group_t,
    f: impl FnOnce(&Group) -> FfiResult<T>,
) -> FfiResult<T> {
    // SAFETY: the caller passes a handle from this library or NULL.
    let handle = unsafe { group.as_ref() }.ok_or_else(|| Failure::null("group"))?;
    handle.poison.run(|| f(&handle.inner))
}

unsafe fn give_group(out_group: *mut *mut zarr_group_t, group: Group) {
    give(
        out_group,
        zarr_group_t {
            inner: Arc::new(group),
            poison: Poison::default(),
        },
    );
}

/// Opens or creates the group at `path` ("" or "/" is the root): `ZARR_MODE_R` and
/// `ZARR_MODE_R_PLUS` need it to exist, `ZARR_MODE_A` creates it if missing, `ZARR_MODE_W`
/// replaces the Zarr nodes there (arrays with their chunks, groups' documents, everything
/// below; keys that belong to no node, such as other files in the directory, are kept),
/// `ZARR_MODE_W_MINUS` fails if anything is there. Missing
/// parent groups are created. A new group gets the format of the group above it, or Zarr
/// v3 at the top of a store (`zarr_group_create` chooses). An array at `path` gives
/// `ZARR_ERR_NODE_TYPE`.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (`ZARR_MODE_R` or `ZARR_MODE_R_PLUS` and no group),
/// `ZARR_ERR_NODE_TYPE` (an array at `path`), `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and
/// something is there, or an array above a group to create), `ZARR_ERR_METADATA`,
/// `ZARR_ERR_READ_ONLY` (a mode that writes, on a read-only store), `ZARR_ERR_INVALID_KEY`
/// (`path`).
///
/// Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
/// store alive.
///
/// Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
/// creators of one path at once replace each other's nodes.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open(
    store: *const zarr_store_t,
    path: *const c_char,
    mode: zarr_mode_t,
    out_group: *mut *mut zarr_group_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_group, "out_group")?;
        let store = store_ref(store)?.inner.clone();
        let path = c_str(path, "path")?;
        let mode = super::mode(mode)?;
        give_group(out_group, Group::open(store, path, mode)?);
        Ok(())
    })
}

/// Like `zarr_group_open`, but a group that has to be created is written in Zarr format
/// `zarr_format` (2: `.zgroup`; 3: `zarr.json`; `ZARR_FORMAT_V3_DRAFT` or
/// `ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON`: the 2022 draft's group document, parents left
/// implicit), as are missing parent groups. An existing group opens in whatever format it
/// has; in a store holding a 2022-draft hierarchy new groups take its layout.
///
/// Errors: those of `zarr_group_open`, and `ZARR_ERR_INVALID_ARG` (an unknown
/// `zarr_format`).
///
/// Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
/// store alive.
///
/// Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
/// creators of one path at once replace each other's nodes.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create(
    store: *const zarr_store_t,
    path: *const c_char,
    mode: zarr_mode_t,
    zarr_format: i32,
    out_group: *mut *mut zarr_group_t,
) -> zarr_status_t {
    ffi_guard!({ create_group(store, path, mode, zarr_format, std::ptr::null(), out_group) })
}

/// Like `zarr_group_create`, giving the group the attributes in `attributes_json` (a JSON
/// object; NULL or `"{}"` for none). A group that has to be created is written with them in
/// one document write (v3 `zarr.json`; v2 `.zgroup` then `.zattrs`), so a v3 group with
/// attributes can go into a store where each key is written once (a zip file); an existing
/// group opened for writing gets them set, replacing its attributes (`ZARR_MODE_R` gives
/// `ZARR_ERR_READ_ONLY` when there are attributes to set).
///
/// Errors: those of `zarr_group_create`; `ZARR_ERR_INVALID_ARG` (attributes that are not a
/// JSON object), `ZARR_ERR_READ_ONLY` (`ZARR_MODE_R` with attributes).
///
/// Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
/// store alive.
///
/// Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
/// creators of one path at once replace each other's nodes.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create_with_attrs(
    store: *const zarr_store_t,
    path: *const c_char,
    mode: zarr_mode_t,
    zarr_format: i32,
    attributes_json: *const c_char,
    out_group: *mut *mut zarr_group_t,
) -> zarr_status_t {
    ffi_guard!({ create_group(store, path, mode, zarr_format, attributes_json, out_group) })
}

/// Opens or creates a group for `zarr_group_create` and `zarr_group_create_with_attrs`.
unsafe fn create_group(
    store: *const zarr_store_t,
    path: *const c_char,
    mode: zarr_mode_t,
    zarr_format: i32,
    attributes_json: *const c_char,
    out_group: *mut *mut zarr_group_t,
) -> FfiResult {
    clear_out(out_group, "out_group")?;
    let store = store_ref(store)?.inner.clone();
    let path = c_str(path, "path")?;
    let mode = super::mode(mode)?;
    let format = group_format(zarr_format)?;
    let attributes = if attributes_json.is_null() {
        serde_json::Map::new()
    } else {
        match parse_json(
            c_str(attributes_json, "attributes_json")?,
            "attributes_json",
        )? {
            serde_json::Value::Object(map) => map,
            _ => return Err(Failure::invalid("attributes_json must be a JSON object")),
        }
    };
    if mode == crate::node::Mode::Read && !attributes.is_empty() {
        return Err(Error::ReadOnly(format!(
            "group {path:?} opened read-only cannot be given attributes"
        ))
        .into());
    }
    give_group(
        out_group,
        Group::open_with(store, path, mode, format, &attributes)?,
    );
    Ok(())
}

/// The format a group is created in, from the number a caller gives.
fn group_format(zarr_format: i32) -> FfiResult<crate::meta::Format> {
    match zarr_format {
        2 | 3 | super::ZARR_FORMAT_V3_DRAFT | super::ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON => {
            Ok(crate::meta::Format::from_number(zarr_format as i64)?)
        }
        other => Err(Failure::invalid(format!(
            "Zarr format {other}: groups are written in format 2, 3, \
             ZARR_FORMAT_V3_DRAFT or ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON"
        ))),
    }
}

/// Opens the group at `path` through its consolidated metadata (inside a v3 group's
/// `zarr.json`, else `path/.zmetadata`): the documents of every node it holds, and the
/// member lists of its groups, come from that one read (one request on an object store for
/// v3, two for v2), as zarr-python serves consolidated metadata; chunks are read from the
/// store. Nodes added after consolidation are not listed, but open when asked for by path
/// (read from the store). `ZARR_ERR_NOT_FOUND` without consolidated metadata. The
/// consolidated document is bounded as every metadata document (1 GiB, refused unread
/// beyond); an entry whose name only normalises onto a key (`g//a/.zarray`, `./a`) is
/// refused, never merged with the real one.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no consolidated metadata), `ZARR_ERR_METADATA` (also a
/// document over 1 GiB), `ZARR_ERR_INVALID_KEY` (an entry naming no normal key), and those
/// of `zarr_group_open`.
///
/// Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
/// store alive.
///
/// Thread safety: any thread; the handle serves the metadata as it was consolidated.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open_consolidated(
    store: *const zarr_store_t,
    path: *const c_char,
    mode: zarr_mode_t,
    out_group: *mut *mut zarr_group_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_group, "out_group")?;
        let inner = store_ref(store)?.inner.clone();
        let path = c_str(path, "path")?;
        let mode = super::mode(mode)?;
        let consolidated: Arc<dyn Store> = Arc::new(ConsolidatedStore::open(inner, path)?);
        give_group(out_group, Group::open(consolidated, path, mode)?);
        Ok(())
    })
}

/// Consolidates the metadata of the hierarchy at `path`, as zarr-python's
/// `consolidate_metadata` does for each format. A v2 group: every `.zarray`, `.zgroup` and
/// `.zattrs` below `path` into `path/.zmetadata` (`zarr_consolidated_format: 1`). A v3
/// group: every `zarr.json` below `path` into the group's own `zarr.json`, as its
/// `consolidated_metadata` member (`kind: "inline"`, keyed by path relative to the group),
/// which zarr-python 3 and `zarr_group_open_consolidated` read. The 2022 draft layout has
/// no consolidated metadata (`ZARR_ERR_UNSUPPORTED`). Run it again after adding nodes: a
/// consolidated reader does not list nodes added since.
///
/// Errors: `ZARR_ERR_METADATA` (a document that is not JSON), `ZARR_ERR_UNSUPPORTED` (the
/// 2022 draft layout), `ZARR_ERR_READ_ONLY`, `ZARR_ERR_INVALID_KEY` (`path`).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; nodes written meanwhile may be missed: consolidate when
/// writers are done.
#[no_mangle]
pub unsafe extern "C" fn zarr_consolidate_metadata(
    store: *const zarr_store_t,
    path: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        let path = c_str(path, "path")?;
        Ok(crate::meta::consolidated::consolidate(
            store.inner.as_ref(),
            path,
        )?)
    })
}

/// Releases a group handle (NULL is ignored).
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: takes the handle (NULL is ignored); the store is released with the last
/// handle using it.
///
/// Thread safety: any thread, once no other call is using the handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_free(group: *mut zarr_group_t) {
    ffi_guard!(() => {
        if !group.is_null() {
            drop(Box::from_raw(group));
        }
    })
}

/// Copies the group's normalised path ("" for the root) into `buf`.
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention).
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_path(
    group: *const zarr_group_t,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let path = with_group(group, |g| Ok(g.path().to_string()))?;
        write_text(&path, buf, len, needed)
    })
}

/// Sets `*out_version` to the group's Zarr format: 2, 3, `ZARR_FORMAT_V3_DRAFT` or
/// `ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON`.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_zarr_format(
    group: *const zarr_group_t,
    out_version: *mut i32,
) -> zarr_status_t {
    ffi_guard!({
        let out_version = out(out_version, "out_version")?;
        *out_version = with_group(group, |g| Ok(g.format().number()))?;
        Ok(())
    })
}

/// Sets `*out_kind` to what is at `path` in `store`.
///
/// Errors: `ZARR_ERR_INVALID_KEY` (`path`).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_node_kind_at(
    store: *const zarr_store_t,
    path: *const c_char,
    out_kind: *mut zarr_node_kind_t,
) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        let path = crate::store::normalize_path(c_str(path, "path")?)?;
        let out_kind = out(out_kind, "out_kind")?;
        *out_kind = crate::node::node_kind(store.inner.as_ref(), &path)? as i32;
        Ok(())
    })
}

/// Sets `*out_kind` to what is at `path` below the group ("a/b" for nested members).
///
/// Errors: `ZARR_ERR_INVALID_KEY` (`path`).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_contains(
    group: *const zarr_group_t,
    path: *const c_char,
    out_kind: *mut zarr_node_kind_t,
) -> zarr_status_t {
    ffi_guard!({
        let path = c_str(path, "path")?;
        let out_kind = out(out_kind, "out_kind")?;
        *out_kind = with_group(group, |g| Ok(g.contains(path)?))? as i32;
        Ok(())
    })
}

/// Lists the names of the group's direct members of `kind` (`ZARR_NODE_ARRAY`,
/// `ZARR_NODE_GROUP`, or `ZARR_NODE_NONE` for all), sorted, into a new string list.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (an unknown `kind`).
///
/// Ownership: `*out_names` is a new list: free it with `zarr_strings_free`.
///
/// Thread safety: any thread, at the same time as any other call; the store is listed as it
/// is then.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_members(
    group: *const zarr_group_t,
    kind: zarr_node_kind_t,
    out_names: *mut *mut zarr_strings_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_names, "out_names")?;
        let kind = match kind {
            0 => None,
            1 => Some(NodeKind::Array),
            2 => Some(NodeKind::Group),
            other => {
                return Err(Failure::invalid(format!(
                    "{other} is not a zarr_node_kind_t value"
                )))
            }
        };
        let names = with_group(group, |g| {
            Ok(match kind {
                None => g.members()?.into_iter().map(|(name, _)| name).collect(),
                Some(kind) => g.member_names(kind)?,
            })
        })?;
        give(out_names, strings(names));
        Ok(())
    })
}

/// Opens (or, by mode, creates) the group at `path` below this group.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (`ZARR_MODE_R` or `ZARR_MODE_R_PLUS` and no group),
/// `ZARR_ERR_NODE_TYPE` (an array at `path`), `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and
/// something is there, or an array above a group to create), `ZARR_ERR_METADATA`,
/// `ZARR_ERR_READ_ONLY` (a mode that writes, on a read-only store), `ZARR_ERR_INVALID_KEY`
/// (`path`).
///
/// Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
/// store alive.
///
/// Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
/// creators of one path at once replace each other's nodes.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open_group(
    group: *const zarr_group_t,
    path: *const c_char,
    mode: zarr_mode_t,
    out_group: *mut *mut zarr_group_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_group, "out_group")?;
        let path = c_str(path, "path")?;
        let mode = super::mode(mode)?;
        let child = with_group(group, |g| Ok(g.open_group(path, mode)?))?;
        give_group(out_group, child);
        Ok(())
    })
}

/// Opens the array at `path` below this group (`ZARR_MODE_R`, `ZARR_MODE_R_PLUS`,
/// `ZARR_MODE_A`).
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no array at `path`), `ZARR_ERR_NODE_TYPE` (a group there),
/// `ZARR_ERR_METADATA` (a document libzarr cannot read, the field named),
/// `ZARR_ERR_CODEC_UNSUPPORTED`, `ZARR_ERR_INVALID_ARG` (a mode that creates: use a
/// builder), `ZARR_ERR_READ_ONLY` (a writable mode on a read-only store),
/// `ZARR_ERR_INVALID_KEY` (`path`).
///
/// Ownership: `*out_array` is a new handle: free it with `zarr_array_free`. It keeps the
/// store alive.
///
/// Thread safety: any thread; any number of handles may be open on one array.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open_array(
    group: *const zarr_group_t,
    path: *const c_char,
    mode: zarr_mode_t,
    out_array: *mut *mut zarr_array_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_array, "out_array")?;
        let path = c_str(path, "path")?;
        let mode = super::mode(mode)?;
        let array = with_group(group, |g| Ok(g.open_array(path, mode)?))?;
        give_array(out_array, array);
        Ok(())
    })
}

/// Creates an array at `path` below this group from the builder's settings (modes as for
/// `zarr_array_create`).
///
/// Errors: `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and an array is at `path`, or an array
/// above it), `ZARR_ERR_NODE_TYPE` (`ZARR_MODE_W_MINUS` or `ZARR_MODE_A` and a group is at
/// `path`), `ZARR_ERR_INVALID_ARG` (settings that do not fit together, or a mode that does
/// not create), `ZARR_ERR_CODEC_UNSUPPORTED`, `ZARR_ERR_UNSUPPORTED`, `ZARR_ERR_READ_ONLY`
/// (a read-only store), `ZARR_ERR_INVALID_KEY` (`path`).
///
/// Ownership: the builder stays the caller's. `*out_array` is a new handle: free it with
/// `zarr_array_free`. It keeps the store alive.
///
/// Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
/// creators of one path at once replace each other's nodes.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create_array(
    group: *const zarr_group_t,
    builder: *const zarr_array_builder_t,
    path: *const c_char,
    mode: zarr_mode_t,
    out_array: *mut *mut zarr_array_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_array, "out_array")?;
        let path = c_str(path, "path")?;
        let mode = super::mode(mode)?;
        let builder = builder_ref(builder)?;
        let array = with_group(group, |g| {
            builder.with(|b| Ok(g.create_array(path, b, mode)?))
        })?;
        give_array(out_array, array);
        Ok(())
    })
}

/// Deletes the member at `path` below this group and everything under it.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (nothing at `path`), `ZARR_ERR_READ_ONLY`,
/// `ZARR_ERR_INVALID_KEY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; handles still open on what was deleted are not told.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_delete(
    group: *const zarr_group_t,
    path: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let path = c_str(path, "path")?;
        with_group(group, |g| Ok(g.delete(path)?))
    })
}

/// Moves the member at `from` to `to` (both below this group); the destination must not
/// exist. Groups above `to` are created.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (nothing at `from`), `ZARR_ERR_EXISTS` (something at `to`),
/// `ZARR_ERR_INVALID_ARG` (`to` inside `from`, also through a symbolic link in the store,
/// naming both), `ZARR_ERR_READ_ONLY` (a read-only handle, as consolidated ones are),
/// `ZARR_ERR_UNSUPPORTED` (the 2022 draft layout), `ZARR_ERR_INVALID_KEY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; handles still open on the old path are not told.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_move(
    group: *const zarr_group_t,
    from: *const c_char,
    to: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let from = c_str(from, "from")?;
        let to = c_str(to, "to")?;
        with_group(group, |g| Ok(g.rename(from, to)?))
    })
}

/// Copies the group's attributes (a JSON object) into `buf`.
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention), `ZARR_ERR_METADATA`.
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attrs_get(
    group: *const zarr_group_t,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |g| attrs::get_all(g, buf, len, needed)) })
}

/// Replaces all of the group's attributes with the JSON object `json`.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (not a JSON object), `ZARR_ERR_READ_ONLY` (a read-only
/// handle or store).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; updates through one handle are serialised, while of updates
/// made at once through several handles or processes the last one wins.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attrs_set(
    group: *const zarr_group_t,
    json: *const c_char,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |g| attrs::set_all(g, json)) })
}

/// Copies the JSON value of the group's attribute `key`; `ZARR_ERR_NOT_FOUND` if absent.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_BUFFER_SIZE` (string output
/// convention), `ZARR_ERR_METADATA`.
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_get(
    group: *const zarr_group_t,
    key: *const c_char,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |g| attrs::get_one(g, key, buf, len, needed)) })
}

/// Sets the group's attribute `key` to the JSON value `json`.
///
/// Errors: `ZARR_ERR_READ_ONLY` (a read-only handle or store).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; updates through one handle are serialised, while of updates
/// made at once through several handles or processes the last one wins.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_set(
    group: *const zarr_group_t,
    key: *const c_char,
    json: *const c_char,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |g| attrs::set_one(g, key, json)) })
}

/// Reports what the group's attribute `key` holds (`*out_kind`, a `zarr_attr_kind` value) and,
/// when `out_count` is not NULL, its number of items (1 for a scalar, the length of a list).
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_METADATA`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_kind(
    group: *const zarr_group_t,
    key: *const c_char,
    out_kind: *mut zarr_attr_kind_t,
    out_count: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |h| attrs::kind(h, key, out_kind, out_count)) })
}

/// Sets the group's attribute `key` to the UTF-8 string `value` (any text: the library escapes
/// it), keeping the others.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (`key` or `value` not UTF-8; U+F8FF followed by `NaN`,
/// `Infinity` or `-Infinity`, the library's mark of a non-finite float), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: as `zarr_group_attr_set`.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_set_string(
    group: *const zarr_group_t,
    key: *const c_char,
    value: *const c_char,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |h| attrs::set_string(h, key, value)) })
}

/// Copies the string the group's attribute `key` holds into `buf` (string output convention).
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_DTYPE_MISMATCH` (it is not
/// a string; the message names it and says what it is), `ZARR_ERR_BUFFER_SIZE`.
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_get_string(
    group: *const zarr_group_t,
    key: *const c_char,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |h| attrs::get_string(h, key, buf, len, needed)) })
}

/// Sets the group's attribute `key` to the list of the `n` UTF-8 strings at `values`. netCDF-C
/// (4.9) cannot open a v2 store holding a list of strings as an attribute: join such lists
/// into one string (CF's `flag_meanings` is blank-separated) for stores netCDF reads.
///
/// Errors: `ZARR_ERR_NULL_ARG` (`values` or one of its strings NULL), `ZARR_ERR_INVALID_ARG`
/// (a string not UTF-8, named by index), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: as `zarr_group_attr_set`.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_set_strings(
    group: *const zarr_group_t,
    key: *const c_char,
    values: *const *const c_char,
    n: usize,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |h| attrs::set_strings(h, key, values, n)) })
}

/// Gives the list of strings the group's attribute `key` holds.
///
/// Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a list of strings; the
/// message names the attribute, or the item, at fault).
///
/// Ownership: the caller frees `*out_list` with `zarr_strings_free`; it is NULL after a
/// failure.
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_get_strings(
    group: *const zarr_group_t,
    key: *const c_char,
    out_list: *mut *mut zarr_strings_t,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |h| attrs::get_strings(h, key, out_list)) })
}

/// Sets the group's attribute `key` to the number at `value`, of type `dtype`:
/// `ZARR_DTYPE_INT32`, `ZARR_DTYPE_INT64`, `ZARR_DTYPE_FLOAT32` or `ZARR_DTYPE_FLOAT64`.
/// A float32 is written as the shortest decimal that reads back as the same float32
/// (0.1f as `0.1`): readers that see JSON get the value meant, as a double, and
/// `zarr_group_attr_get_number` with `ZARR_DTYPE_FLOAT32` gives the float exactly. No type is
/// recorded beside the value. NaN and infinities are written as the bare tokens `NaN`,
/// `Infinity` and `-Infinity`, as Python's `json` (and so zarr-python) writes them; readers
/// that hold to strict JSON (tensorstore, for one) then refuse the whole document, as they
/// refuse zarr-python's.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (another `dtype`), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: as `zarr_group_attr_set`.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_set_number(
    group: *const zarr_group_t,
    key: *const c_char,
    dtype: zarr_dtype_t,
    value: *const c_void,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |h| attrs::set_numbers(h, key, dtype, value, 1, true)) })
}

/// Stores the number the group's attribute `key` holds at `value`, as `dtype` (the types of
/// `zarr_group_attr_set_number`). Any number reads as a float type; only integers read as an
/// integer type.
///
/// Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a number, or a float read
/// as an integer; the message names the attribute), `ZARR_ERR_RANGE` (it does not fit in
/// `dtype`), `ZARR_ERR_INVALID_ARG` (another `dtype`).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_get_number(
    group: *const zarr_group_t,
    key: *const c_char,
    dtype: zarr_dtype_t,
    value: *mut c_void,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |h| attrs::get_number(h, key, dtype, value)) })
}

/// Sets the group's attribute `key` to the list of the `n` numbers of type `dtype` at `values`
/// (the types and float32 rule of `zarr_group_attr_set_number`).
///
/// Errors: `ZARR_ERR_INVALID_ARG` (another `dtype`), `ZARR_ERR_OVERFLOW` (`n` values exceed the address space), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: as `zarr_group_attr_set`.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_set_numbers(
    group: *const zarr_group_t,
    key: *const c_char,
    dtype: zarr_dtype_t,
    values: *const c_void,
    n: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_group(group, |h| {
            attrs::set_numbers(h, key, dtype, values, n, false)
        })
    })
}

/// Stores the list of numbers the group's attribute `key` holds in `values` (room for `len` of
/// type `dtype`, the types of `zarr_group_attr_get_number`); `*out_count` gets the list's
/// length, also when it exceeds `len` (then `ZARR_ERR_BUFFER_SIZE`; pass `len` 0 to ask).
///
/// Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a list of numbers, or a
/// float read as an integer; the message names the item), `ZARR_ERR_RANGE`,
/// `ZARR_ERR_BUFFER_SIZE`, `ZARR_ERR_OVERFLOW` (`len` values exceed the address space).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_get_numbers(
    group: *const zarr_group_t,
    key: *const c_char,
    dtype: zarr_dtype_t,
    values: *mut c_void,
    len: usize,
    out_count: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        with_group(group, |h| {
            attrs::get_numbers(h, key, dtype, values, len, out_count)
        })
    })
}

/// Deletes the group's attribute `key`; `ZARR_ERR_NOT_FOUND` if absent.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; updates through one handle are serialised, while of updates
/// made at once through several handles or processes the last one wins.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attr_delete(
    group: *const zarr_group_t,
    key: *const c_char,
) -> zarr_status_t {
    ffi_guard!({ with_group(group, |g| attrs::delete_one(g, key)) })
}

/// Copies the array or group tree at `source_path` in `source` to `target_path` in
/// `target` (any stores), with attributes, chunk by chunk in bounded memory. With
/// `compressor_json` NULL chunks are copied as stored; otherwise every chunk is re-encoded
/// with that compressor ("null" for none). `mode`: `ZARR_MODE_W`, `ZARR_MODE_W_MINUS` or
/// `ZARR_MODE_A`, applied to the top node. A target that overlaps the source (the same
/// node, or one inside the other, through any store roots, links or handles on the same
/// directory, zip file or memory store) is refused with `ZARR_ERR_INVALID_ARG` naming both
/// locations, before anything is erased or written.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (nothing at `source_path`), `ZARR_ERR_INVALID_ARG`
/// (overlapping source and target, a bad mode), `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS`),
/// `ZARR_ERR_READ_ONLY`, `ZARR_ERR_CODEC_UNSUPPORTED`, `ZARR_ERR_CODEC`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; the source is copied as it is read, so do not write it
/// meanwhile.
#[no_mangle]
pub unsafe extern "C" fn zarr_copy(
    source: *const zarr_store_t,
    source_path: *const c_char,
    target: *const zarr_store_t,
    target_path: *const c_char,
    compressor_json: *const c_char,
    mode: zarr_mode_t,
) -> zarr_status_t {
    ffi_guard!({
        let source = store_ref(source)?.inner.clone();
        let target = store_ref(target)?.inner.clone();
        let source_path = c_str(source_path, "source_path")?;
        let target_path = c_str(target_path, "target_path")?;
        let compressor = if compressor_json.is_null() {
            None
        } else {
            Some(parse_json(
                c_str(compressor_json, "compressor_json")?,
                "compressor_json",
            )?)
        };
        let mode = super::mode(mode)?;
        Ok(crate::node::copy(
            &source,
            source_path,
            &target,
            target_path,
            compressor.as_ref(),
            mode,
        )?)
    })
}

/// Converts the v1 array at `path` (keys `meta` and `attrs`) to v2 in place, as
/// zarr-python's `migrate_1to2`.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no v1 array at `path`), `ZARR_ERR_METADATA`,
/// `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; no other handle may use the array meanwhile.
#[no_mangle]
pub unsafe extern "C" fn zarr_migrate_1to2(
    store: *const zarr_store_t,
    path: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        let path = c_str(path, "path")?;
        Ok(crate::node::migrate_1to2(store.inner.as_ref(), path)?)
    })
}
