//! Arrays from C: create, open, region I/O, resize, append, queries and attributes.

use super::*;
use crate::io::lock::Synchronization;
use crate::io::region::MemLayout;
use crate::meta::Format;
use crate::node::{Array, Node};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// An array handle. Safe to use from several threads at once; keeps its store alive.
pub struct zarr_array_t {
    inner: Arc<Array>,
    poison: Poison,
}

/// Runs `f` on the array behind a handle.
pub(super) fn with_array<T>(
    array: *const zarr_array_t,
    f: impl FnOnce(&Array) -> FfiResult<T>,
) -> FfiResult<T> {
    with_array_arc(array, |a| f(a))
}

/// Runs `f` on the shared array behind a handle (for what outlives the call).
pub(super) fn with_array_arc<T>(
    array: *const zarr_array_t,
    f: impl FnOnce(&Arc<Array>) -> FfiResult<T>,
) -> FfiResult<T> {
    // SAFETY: the caller passes a handle from this library or NULL.
    let handle = unsafe { array.as_ref() }.ok_or_else(|| Failure::null("array"))?;
    handle.poison.run(|| f(&handle.inner))
}

pub(crate) unsafe fn give_array(out_array: *mut *mut zarr_array_t, array: Array) {
    let array = Arc::new(array);
    crate::node::exit::watch_array(&array);
    give(
        out_array,
        zarr_array_t {
            inner: array,
            poison: Poison::default(),
        },
    );
}

pub(crate) fn store_arc(store: *const zarr_store_t) -> FfiResult<Arc<dyn crate::store::Store>> {
    // SAFETY: the caller passes a handle from this library or NULL.
    Ok(unsafe { store.as_ref() }
        .ok_or_else(|| Failure::null("store"))?
        .inner
        .clone())
}

/// The arguments every region call shares, checked in order: `ndim` against the rank
/// (before any pointer is read), then `start`, `count` and the memory type.
pub(super) unsafe fn region_args<'a>(
    array: &Array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
) -> FfiResult<(&'a [u64], &'a [u64], crate::dtype::ElementType)> {
    check_ndim(array, ndim)?;
    Ok((
        slice(start, ndim, "start")?,
        slice(count, ndim, "count")?,
        element_type(mem_dtype)?,
    ))
}

/// Checks `ndim` against the array's rank before any pointer is read.
pub(super) fn check_ndim(array: &Array, ndim: usize) -> FfiResult {
    let rank = array.metadata().rank();
    if ndim != rank {
        return Err(crate::Error::RankMismatch(format!(
            "ndim is {ndim} but the array has rank {rank}"
        ))
        .into());
    }
    Ok(())
}

/// Creates an array at `path` in `store` from the builder's settings. `mode` is
/// `ZARR_MODE_W` (replace the Zarr nodes at `path`, as `zarr_group_open` does; other keys
/// are kept), `ZARR_MODE_W_MINUS` (fail with
/// `ZARR_ERR_EXISTS` if anything is there) or `ZARR_MODE_A` (open an existing array
/// instead). Missing parent groups are created. `*out_array` is NULL on failure.
///
/// Errors: `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and an array is at `path`, or an array
/// above it), `ZARR_ERR_NODE_TYPE` (`ZARR_MODE_W_MINUS` or `ZARR_MODE_A` and a group is at
/// `path`), `ZARR_ERR_INVALID_ARG` (settings that do not fit together, or a mode that does
/// not create), `ZARR_ERR_CODEC_UNSUPPORTED`, `ZARR_ERR_UNSUPPORTED`, `ZARR_ERR_READ_ONLY`
/// (a read-only store), `ZARR_ERR_INVALID_KEY` (`path`).
///
/// Ownership: the builder stays the caller's (it may create more arrays). `*out_array` is a
/// new handle: free it with `zarr_array_free`. It keeps the store alive.
///
/// Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
/// creators of one path at once replace each other's nodes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_create(
    builder: *const zarr_array_builder_t,
    store: *const zarr_store_t,
    path: *const c_char,
    mode: zarr_mode_t,
    out_array: *mut *mut zarr_array_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_array, "out_array")?;
        let store = store_arc(store)?;
        let path = c_str(path, "path")?;
        let mode = super::mode(mode)?;
        let array = builder_ref(builder)?.with(|b| Ok(b.create(store, path, mode)?))?;
        give_array(out_array, array);
        Ok(())
    })
}

/// Creates an array from a complete metadata document, for full control over the
/// metadata: a v2 `.zarray` document, or a Zarr v3 `zarr.json` array document (one whose
/// `zarr_format` is 3: any codec chain, sharding, chunk key encoding, dimension names and
/// attributes it holds are written as given). A v3 group document gives
/// `ZARR_ERR_INVALID_ARG`, a malformed one `ZARR_ERR_METADATA` naming the field at fault.
/// Missing parent groups are created in the document's format. Modes as for
/// `zarr_array_create`.
///
/// Errors: `ZARR_ERR_METADATA` (a malformed document, the field named),
/// `ZARR_ERR_INVALID_ARG` (a group document), and those of `zarr_array_create`.
///
/// Ownership: the document is only read. `*out_array` is a new handle: free it with
/// `zarr_array_free`. It keeps the store alive.
///
/// Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
/// creators of one path at once replace each other's nodes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_create_json(
    store: *const zarr_store_t,
    path: *const c_char,
    zarray_json: *const c_char,
    mode: zarr_mode_t,
    out_array: *mut *mut zarr_array_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_array, "out_array")?;
        let store = store_arc(store)?;
        let path = c_str(path, "path")?;
        let json = c_str(zarray_json, "zarray_json")?;
        let mode = super::mode(mode)?;
        // A document saying zarr_format 3 is v3; anything else (malformed included) is
        // read as v2, whose parser names what is wrong.
        let is_v3 = crate::meta::json::parse_str(json)
            .is_ok_and(|doc| doc.get("zarr_format").and_then(|v| v.as_u64()) == Some(3));
        let (meta, attributes, format) = if is_v3 {
            match crate::meta::v3::parse(json.as_bytes())? {
                crate::meta::v3::Node::Array(meta, attributes) => (*meta, attributes, Format::V3),
                crate::meta::v3::Node::Group(_) => {
                    return Err(Failure::invalid("zarray_json describes a group"))
                }
            }
        } else {
            (
                crate::meta::v2::parse_array(json.as_bytes())?,
                Default::default(),
                Format::V2,
            )
        };
        give_array(
            out_array,
            Array::create(store, path, meta, &attributes, mode, format)?,
        );
        Ok(())
    })
}

/// Opens the array at `path` with `ZARR_MODE_R` (read-only), `ZARR_MODE_R_PLUS` or
/// `ZARR_MODE_A` (read-write). `*out_array` is NULL on failure.
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
/// Thread safety: any thread; any number of handles, in any threads and processes, may be
/// open on one array.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_open(
    store: *const zarr_store_t,
    path: *const c_char,
    mode: zarr_mode_t,
    out_array: *mut *mut zarr_array_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_array, "out_array")?;
        let store = store_arc(store)?;
        let path = c_str(path, "path")?;
        let mode = super::mode(mode)?;
        give_array(out_array, Array::open(store, path, mode)?);
        Ok(())
    })
}

/// Releases an array handle (NULL is ignored), once its non-blocking requests are done
/// (it waits for them; their errors stay with the requests). Appends it buffered are
/// stored first (see `zarr_array_append`), but an error in doing so is lost and those
/// steps may then be missing: call `zarr_array_close` (or `zarr_array_flush`) before
/// freeing to see it. The append lock the handle holds is released. Freeing syncs nothing
/// by itself; when the handle holds the last reference to its store (the store handle was
/// freed), the store is released and flushed as `zarr_store_free` does (see
/// `zarr_durability`).
///
/// A handle still open when the process ends normally (`exit()`, a return from `main`,
/// Fortran's `end program`) is finished as freeing it would: its requests are waited for,
/// its buffered appends stored, its lock released and its store flushed (an error then is
/// printed on standard error, unless `ZARR_QUIET` is set). `_exit`, a signal or a crash lose what was not flushed; a
/// `fork()` child's `exit()` leaves its parent's handles alone.
///
/// Errors: none: it returns a value, never a status. An error storing buffered appends is
/// lost (see above).
///
/// Ownership: takes the handle (NULL is ignored); the store is released with the last
/// handle using it.
///
/// Thread safety: any thread, once no other call is using the handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_free(array: *mut zarr_array_t) {
    ffi_guard!(() => {
        if !array.is_null() {
            let handle = Box::from_raw(array);
            handle.inner.wait_requests();
            drop(handle);
        }
    })
}

/// Reads the region `start[0..ndim]`, `count[0..ndim]` into `buf` (`buf_bytes` must equal
/// the product of `count` times the element size). Elements are of type `mem_dtype` (the
/// array's, see `zarr_array_dtype`) in this machine's byte order, laid out in `order`
/// (`ZARR_ORDER_C` or `ZARR_ORDER_F`). Everything is checked before any I/O. Missing
/// chunks read as the fill value; a chunk key a directory store cannot hold (a component
/// longer than the filesystem's name limit, as "."-separated keys of hundreds of
/// dimensions make) is `ZARR_ERR_INVALID_KEY`, never read as missing.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (the region leaves
/// the array), `ZARR_ERR_DTYPE_MISMATCH` (`mem_dtype`), `ZARR_ERR_BUFFER_SIZE`
/// (`buf_bytes`), `ZARR_ERR_OVERFLOW`, `ZARR_ERR_CODEC` (a chunk that does not decode or
/// fails its checksum, named), `ZARR_ERR_INVALID_KEY`.
///
/// Ownership: `buf` stays the caller's; after a failure it may hold part of the region.
///
/// Thread safety: any thread, at the same time as other reads and writes: each chunk is
/// read as it was before or after a write of it, never a mix.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *mut c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            let (start, count, elem) = region_args(a, ndim, start, count, mem_dtype)?;
            let order = super::order(order)?;
            let buf = slice_mut(buf as *mut u8, buf_bytes, "buf")?;
            Ok(a.read(start, count, elem, order, buf)?)
        })
    })
}

/// Writes `buf` into the region `start`/`count`; arguments as for `zarr_array_read`.
/// Chunks the region covers are written without being read; partly covered chunks are read,
/// merged and rewritten. A chunk left equal to the fill value is erased. Writers to
/// different chunks may run concurrently; two writers touching one chunk may lose updates.
/// What survives a crash once this returns is the store's `zarr_durability`.
///
/// Errors: as `zarr_array_read`, plus `ZARR_ERR_READ_ONLY` (a read-only handle or store)
/// and `ZARR_ERR_INVALID_ARG` (a value a narrow type cannot hold, e.g. int4).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; writes at the same time are safe when they touch different
/// chunks (shards, when sharded): otherwise set a synchronizer
/// (`zarr_array_set_synchronizer`) or updates may be lost.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *const c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            let (start, count, elem) = region_args(a, ndim, start, count, mem_dtype)?;
            let order = super::order(order)?;
            let buf = slice(buf as *const u8, buf_bytes, "buf")?;
            Ok(a.write(start, count, elem, order, buf)?)
        })
    })
}

/// Like `zarr_array_read`, but `mem_dtype` may be any numeric type (bool, the 8- to 64-bit
/// integers, float32, float64) while the array is of another: the elements are converted
/// as netCDF's `nc_get_vara_*` does. Integers convert exactly when they fit; floats to
/// integers truncate toward zero; bool is 0 or 1 (nonzero reads as 1; a bool buffer takes
/// only values that truncate to 0 or 1). Every element is converted; when some do not fit
/// the buffer's type (an integer outside its range, a finite value beyond float's range,
/// NaN or an infinity to an integer), the call still stores all of them, those as Rust's
/// saturating cast gives (NaN as 0, infinities to float stay infinite), and returns
/// `ZARR_ERR_RANGE`, as `nc_get_vara_*` returns `NC_ERANGE`. The same type is a plain read.
/// A buffer type at least as wide as the array's is converted in place in `buf`; a narrower
/// one goes through a temporary buffer of the region's items in the array's type.
///
/// Errors: as `zarr_array_read`; `ZARR_ERR_RANGE` (elements that did not fit, counted in
/// the message, which names the first); `ZARR_ERR_DTYPE_MISMATCH` (the array's or the
/// buffer's type is not numeric: float16, complex, strings, raw items, ...).
///
/// Ownership: `buf` stays the caller's; after a failure other than `ZARR_ERR_RANGE` it may
/// hold part of the region.
///
/// Thread safety: as `zarr_array_read`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_as(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *mut c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            let (start, count, elem) = region_args(a, ndim, start, count, mem_dtype)?;
            let order = super::order(order)?;
            let buf = slice_mut(buf as *mut u8, buf_bytes, "buf")?;
            Ok(a.read_as(start, count, elem, order, buf)?)
        })
    })
}

/// Like `zarr_array_write`, but `buf` holds elements of the numeric type `mem_dtype`,
/// converted to the array's type with the rules of `zarr_array_read_as` (as netCDF's
/// `nc_put_vara_*`). All elements are converted before anything is stored: when any does
/// not fit the array's type, nothing is written and the call returns `ZARR_ERR_RANGE`
/// (netCDF writes the region anyway, the values that do not fit as its build converts them,
/// cast or replaced by the fill value, and then returns `NC_ERANGE`).
///
/// Errors: as `zarr_array_write`; `ZARR_ERR_RANGE` (nothing written);
/// `ZARR_ERR_DTYPE_MISMATCH` (a type that is not numeric).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: as `zarr_array_write`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_from(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *const c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            let (start, count, elem) = region_args(a, ndim, start, count, mem_dtype)?;
            let order = super::order(order)?;
            let buf = slice(buf as *const u8, buf_bytes, "buf")?;
            Ok(a.write_from(start, count, elem, order, buf)?)
        })
    })
}

/// Like `zarr_array_read`, but element `i` of the region (index per dimension) is at
/// element offset `Σ i[d] * mem_strides[d]` of `buf` (netCDF's `imap`), so a block can be
/// read into the interior of a larger array, halos excluded. Strides are in elements,
/// non-negative and must not make elements overlap; `buf_bytes` must reach the last element.
///
/// Errors: as `zarr_array_read`; `ZARR_ERR_INVALID_ARG` for strides that make elements
/// overlap, `ZARR_ERR_BUFFER_SIZE` when `buf_bytes` does not reach the last element.
///
/// Ownership: `buf` stays the caller's; after a failure it may hold part of the region.
///
/// Thread safety: any thread, at the same time as other reads and writes: each chunk is
/// read as it was before or after a write of it, never a mix.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_strided(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_strides: *const i64,
    mem_dtype: zarr_dtype_t,
    buf: *mut c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            let (start, count, elem) = region_args(a, ndim, start, count, mem_dtype)?;
            let strides = slice(mem_strides, ndim, "mem_strides")?;
            let buf = slice_mut(buf as *mut u8, buf_bytes, "buf")?;
            Ok(a.read(start, count, elem, MemLayout::Strided(strides), buf)?)
        })
    })
}

/// Like `zarr_array_write`, with the strided buffer layout of `zarr_array_read_strided`.
///
/// Errors: as `zarr_array_write`, and the stride errors of `zarr_array_read_strided`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; writes at the same time are safe when they touch different
/// chunks (shards, when sharded): otherwise set a synchronizer
/// (`zarr_array_set_synchronizer`) or updates may be lost.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_strided(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_strides: *const i64,
    mem_dtype: zarr_dtype_t,
    buf: *const c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            let (start, count, elem) = region_args(a, ndim, start, count, mem_dtype)?;
            let strides = slice(mem_strides, ndim, "mem_strides")?;
            let buf = slice(buf as *const u8, buf_bytes, "buf")?;
            Ok(a.write(start, count, elem, MemLayout::Strided(strides), buf)?)
        })
    })
}

/// Chooses how concurrent writers of this array are synchronised, as zarr-python 2's
/// synchronizers: `ZARR_SYNC_NONE` (the default: no two writers may touch one chunk),
/// `ZARR_SYNC_THREAD` (per-chunk locks inside this process) or `ZARR_SYNC_PROCESS`
/// (per-chunk lock files in `lock_dir`, a directory on a filesystem every writing process
/// sees, plus the in-process locks). `lock_dir` is required for `ZARR_SYNC_PROCESS` and
/// ignored otherwise. Set it on every writing handle before writing; reads never lock.
///
/// The locks are the array's, not the handle's: every handle on the array in this process
/// shares them, and lock files are named by a stable hash of the chunk's real location (the
/// canonical directory of the array joined with the chunk key), so handles opened through
/// differently rooted stores (directory `X/s` + array `a`, or `X` + `s/a`) or through links
/// exclude each other. Processes and MPI ranks agree when they see the store at the same
/// canonical path: on several nodes, mount the shared filesystem at the same path on every
/// node, and put `lock_dir` on a filesystem whose `flock` works across nodes. For a memory
/// store, handles on the same store handle share the locks.
///
/// `ZARR_SYNC_VERSIONED` takes no locks (lock files do not exist on object stores): a chunk,
/// or a shard, that a write covers only in part is read with its version (the object's
/// ETag), merged, and written with a conditional PUT that succeeds only if nobody changed
/// it since; otherwise it is read, merged and written again (up to 64 attempts, with short
/// random pauses, then `ZARR_ERR_STORAGE_IO`). No update is lost between writers that all
/// use it, in any number of processes or nodes. Writes that cover a whole chunk or shard
/// replace it without a condition (the last writer wins, as under locks), and a partly
/// written chunk that becomes all fill value is stored rather than erased (a conditional
/// erase does not exist). Updates can still be lost to a writer that does not use it, or
/// when a resize erases chunks while others write them. Object stores (S3, GCS, Azure) and
/// memory stores support it; directory and zip stores refuse it with
/// `ZARR_ERR_UNSUPPORTED` (use `ZARR_SYNC_PROCESS` there).
///
/// Errors: `ZARR_ERR_INVALID_ARG` (an unknown `sync`), `ZARR_ERR_NULL_ARG` (no `lock_dir`
/// for `ZARR_SYNC_PROCESS`), `ZARR_ERR_STORAGE_IO` (`lock_dir` cannot be created),
/// `ZARR_ERR_UNSUPPORTED` (`ZARR_SYNC_VERSIONED` on a directory or zip store); and those of
/// storing buffered appends.
///
/// Ownership: `lock_dir` is copied.
///
/// Thread safety: any thread; set it before the handle's writes start (a write already
/// running keeps the setting it started with).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_synchronizer(
    array: *const zarr_array_t,
    sync: zarr_sync_t,
    lock_dir: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let sync = match sync {
            0 => Synchronization::None,
            1 => Synchronization::Thread,
            2 => Synchronization::Process(c_str(lock_dir, "lock_dir")?.into()),
            3 => Synchronization::Versioned,
            other => {
                return Err(Failure::invalid(format!(
                    "{other} is not a zarr_sync_t value"
                )))
            }
        };
        with_array(array, |a| Ok(a.set_synchronization(&sync)?))
    })
}

/// Turns the array's append lock on (`on` true, the default) or off for this handle.
///
/// Appending and resizing take the array's append lock at the handle's first append or
/// resize and keep it until the handle is freed, so that a second appender (another
/// process, or another handle of this one) is refused with `ZARR_ERR_CONFLICT` naming the
/// holder, instead of both being told every step was stored while half of them are lost
/// (netCDF-4 refuses a second writer likewise). On directory stores the lock is the file
/// `.zarr-append.lock` in the array's directory, naming the holder's host and process; on
/// object stores the same object, created by a conditional PUT. Icechunk repositories need
/// none (their commits refuse a conflicting writer), and zip archives, written whole by one
/// handle, have none. A lock left by a process that no longer runs on the same host is
/// taken over, with a notice on standard error (set `ZARR_QUIET` to silence it); a lock of
/// another host names the file to remove once its process is known to be gone. Taking the lock reads the array's metadata
/// again, so an appender continues after the steps of the one before. Region writes
/// (`zarr_array_write`) never take it.
///
/// Writers that coordinate by other means turn it off on every such handle before their
/// first append or resize (turning it off releases a lock this handle holds): MPI ranks
/// of which one resizes while the others write regions, or handles that resize in turn
/// under their own locking.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept.
///
/// Thread safety: any thread; set it before the handle's appends and resizes start.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_append_lock(
    array: *const zarr_array_t,
    on: bool,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| Ok(a.set_append_lock(on)?)) })
}

/// Changes the array's shape; chunks wholly outside the new shape are erased. The handle
/// takes the array's append lock (see `zarr_array_set_append_lock`).
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_INVALID_ARG` (a shape the metadata
/// refuses), `ZARR_ERR_READ_ONLY`, `ZARR_ERR_CONFLICT` (another handle or process holds the
/// append lock: the message names it).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; other handles and processes see the new shape after
/// `zarr_array_refresh`. Writes to chunks that a shrinking resize erases, made meanwhile
/// through other handles, are lost.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_resize(
    array: *const zarr_array_t,
    ndim: usize,
    shape: *const u64,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            Ok(a.resize(slice(shape, ndim, "shape")?)?)
        })
    })
}

/// Appends `buf` (shape `count[0..ndim]`, other arguments as for `zarr_array_write`) along
/// `axis`; every other extent of `count` must equal the array's. The array grows by
/// `count[axis]`.
///
/// On a sharded array (one level of shards) without a synchronizer, with `mem_dtype` the
/// array's own type, appends are streamed: the handle keeps the shards of the growing
/// axis that are not yet complete as their encoded inner chunks (at most
/// `ZARR_APPEND_BUFFER_BYTES`) and stores each shard once, after an append completes it:
/// a thread of the handle's own stores the completed shards while the next appends encode
/// (so up to one more set of completed shards is held while it works). The stored shape
/// (what other handles and processes see) grows once completed shards are stored and no
/// shard stays open (seen by a later append), at `zarr_array_flush` and when the handle is
/// freed; reads and queries through this handle see every appended step (they store the
/// buffer first). A write, resize, refresh or synchronizer change through the handle
/// stores the buffer first (a write only when it meets the open shards). A process killed
/// between flushes loses only the steps appended since the last one. Otherwise each append
/// rewrites the shards it touches at once. A refused append changes nothing. When storing
/// completed shards fails, the next append that collects them (the latest, the next one
/// that completes shards) or the flush returns the error, and that append appends
/// nothing; the shards stay buffered and the next flush stores them again.
///
/// One handle appends to an array at a time (other handles may read): the first append
/// takes the array's append lock, held until the handle is freed, and an append through
/// another handle or process meanwhile is refused (see `zarr_array_set_append_lock`). A
/// program that ends without freeing the handle still stores what it buffered (see
/// `zarr_array_free`).
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_INVALID_ARG` (`axis` not below the
/// rank, or another extent differs from the array's), `ZARR_ERR_DTYPE_MISMATCH` (`mem_dtype`
/// is not the array's type: `zarr_array_append_from` converts), `ZARR_ERR_BUFFER_SIZE`, `ZARR_ERR_OVERFLOW`, `ZARR_ERR_READ_ONLY`, `ZARR_ERR_CODEC`,
/// `ZARR_ERR_CONFLICT` (another handle or process holds the append lock: the message names
/// it; nothing is appended).
///
/// Ownership: `buf` is only read during the call; a streaming handle keeps the step's
/// encoded chunks (at most `ZARR_APPEND_BUFFER_BYTES` in all) until it stores them.
///
/// Thread safety: any thread; calls on one handle are serialised. One handle appends to an
/// array at a time.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_append(
    array: *const zarr_array_t,
    axis: usize,
    ndim: usize,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *const c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let count = slice(count, ndim, "count")?;
            let elem = element_type(mem_dtype)?;
            let order = super::order(order)?;
            let buf = slice(buf as *const u8, buf_bytes, "buf")?;
            a.append(axis, count, elem, order, buf)?;
            Ok(())
        })
    })
}

/// Like `zarr_array_append`, but `buf` holds elements of the numeric type `mem_dtype`,
/// converted to the array's type as `zarr_array_write_from` converts them (a float64 model
/// field appended to a float32 series, say). All elements are converted before anything is
/// stored: when any does not fit the array's type, nothing is appended and the call
/// returns `ZARR_ERR_RANGE`. The converted step is appended as `zarr_array_append` appends
/// one of the array's own type (streamed on a sharded array).
///
/// Errors: as `zarr_array_append`; `ZARR_ERR_RANGE` (nothing appended);
/// `ZARR_ERR_DTYPE_MISMATCH` (the array's or the buffer's type is not numeric).
///
/// Ownership: as `zarr_array_append`.
///
/// Thread safety: as `zarr_array_append`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_append_from(
    array: *const zarr_array_t,
    axis: usize,
    ndim: usize,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *const c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let count = slice(count, ndim, "count")?;
            let elem = element_type(mem_dtype)?;
            let order = super::order(order)?;
            let buf = slice(buf as *const u8, buf_bytes, "buf")?;
            a.append_from(axis, count, elem, order, buf)?;
            Ok(())
        })
    })
}

/// Like `zarr_array_append`, with the strided buffer layout of `zarr_array_read_strided`:
/// element `i` of the step (extents `count`) is at element offset `Σ i[d] * mem_strides[d]`
/// of `buf`, so a step can be appended from the interior of a larger array, halos excluded.
///
/// Errors: as `zarr_array_append`, and the stride errors of `zarr_array_read_strided`.
///
/// Ownership: as `zarr_array_append`.
///
/// Thread safety: as `zarr_array_append`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_append_strided(
    array: *const zarr_array_t,
    axis: usize,
    ndim: usize,
    count: *const u64,
    mem_strides: *const i64,
    mem_dtype: zarr_dtype_t,
    buf: *const c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let count = slice(count, ndim, "count")?;
            let strides = slice(mem_strides, ndim, "mem_strides")?;
            let elem = element_type(mem_dtype)?;
            let buf = slice(buf as *const u8, buf_bytes, "buf")?;
            a.append(axis, count, elem, MemLayout::Strided(strides), buf)?;
            Ok(())
        })
    })
}

/// Finishes the handle's work and reports its errors, as closing a netCDF file does: it
/// waits for the handle's non-blocking requests (their errors stay with the requests),
/// then on a writable handle stores what appends buffered and flushes the store, as
/// `zarr_array_flush` does; a read-only handle has nothing to store. Unlike
/// `zarr_array_free`, which loses such an error, it returns it. The handle stays usable
/// (closing again finds nothing to store): free it with `zarr_array_free`.
///
/// Errors: those of storing the buffered appends and syncing the store
/// (`ZARR_ERR_STORAGE_IO`, `ZARR_ERR_CODEC`); the appends that failed stay buffered.
///
/// Ownership: the handle stays the caller's.
///
/// Thread safety: any thread, once the handle's appends are done; serialised with them.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_close(array: *const zarr_array_t) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| Ok(a.close()?)) })
}

/// Stores what appends buffered on this handle (the open shards, then the shape) and
/// flushes the store (`zarr_store_flush`): every step appended before it is then readable
/// through other handles and processes and survives this process being killed. A shard
/// left incomplete is stored whole again when a later append completes it, so flush
/// rarely (e.g. at checkpoints). `ZARR_ERR_READ_ONLY` on a read-only handle; nothing to
/// store is not an error. It first waits for the handle's non-blocking requests (their
/// errors stay with the requests: see `zarr_request_wait`).
///
/// Errors: `ZARR_ERR_READ_ONLY` (a read-only handle), and those of storing the shards and
/// syncing the store (`ZARR_ERR_STORAGE_IO`, `ZARR_ERR_CODEC`).
///
/// Ownership: the handle keeps its open shards in memory.
///
/// Thread safety: any thread; serialised with the handle's appends.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_flush(array: *const zarr_array_t) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| Ok(a.flush()?)) })
}

/// Sets `*out_rank` to the number of dimensions.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_rank(
    array: *const zarr_array_t,
    out_rank: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let out_rank = out(out_rank, "out_rank")?;
        *out_rank = with_array(array, |a| Ok(a.metadata().rank()))?;
        Ok(())
    })
}

unsafe fn copy_dims(
    array: *const zarr_array_t,
    ndim: usize,
    dest: *mut u64,
    pick: fn(&crate::meta::ArrayMeta) -> &[u64],
) -> FfiResult {
    with_array(array, |a| {
        check_ndim(a, ndim)?;
        let meta = a.metadata();
        slice_mut(dest, ndim, "out")?.copy_from_slice(pick(&meta));
        Ok(())
    })
}

/// Copies the shape into `out_shape[0..ndim]` (`ndim` must be the rank).
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim` is not the rank).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_shape(
    array: *const zarr_array_t,
    ndim: usize,
    out_shape: *mut u64,
) -> zarr_status_t {
    ffi_guard!({ copy_dims(array, ndim, out_shape, |m| &m.shape) })
}

/// Copies the chunk shape into `out_chunks[0..ndim]` (`ndim` must be the rank); on a
/// rectilinear chunk grid, the largest edge of each dimension (`zarr_array_chunk_edges`
/// gives every edge).
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim` is not the rank).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_shape(
    array: *const zarr_array_t,
    ndim: usize,
    out_chunks: *mut u64,
) -> zarr_status_t {
    ffi_guard!({ copy_dims(array, ndim, out_chunks, |m| m.inner_chunks()) })
}

/// Copies the shard shape into `out_shape[0..ndim]` (`ndim` must be the rank);
/// `ZARR_ERR_NOT_FOUND` when the array is not sharded. `zarr_array_chunk_shape` gives the
/// inner chunks.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_NOT_FOUND` (not sharded).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_shard_shape(
    array: *const zarr_array_t,
    ndim: usize,
    out_shape: *mut u64,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let meta = a.metadata();
            let shard = meta.sharding().ok_or_else(|| {
                Failure::from(crate::Error::NotFound(format!(
                    "array {:?} is not sharded",
                    a.path()
                )))
            })?;
            slice_mut(out_shape, ndim, "out_shape")?.copy_from_slice(shard.shape);
            Ok(())
        })
    })
}

/// Sets `*out_levels` to the number of nested sharding levels: 0 when the array is not
/// sharded, 1 for shards of chunks, 2 for shards of inner shards of chunks, and so on.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_shard_levels(
    array: *const zarr_array_t,
    out_levels: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let out_levels = out(out_levels, "out_levels")?;
        *out_levels = with_array(array, |a| {
            Ok(a.metadata().sharding().map_or(0, |s| s.levels().len()))
        })?;
        Ok(())
    })
}

/// Copies the shard shape of sharding level `level` into `out_shape[0..ndim]` (`ndim` must
/// be the rank): level 0 is the stored shards (as `zarr_array_shard_shape`), level 1 the
/// inner shards inside them, and so on; `ZARR_ERR_NOT_FOUND` when `level` is not below
/// `zarr_array_shard_levels`.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_NOT_FOUND` (no such level).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_shard_level_shape(
    array: *const zarr_array_t,
    level: usize,
    ndim: usize,
    out_shape: *mut u64,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let meta = a.metadata();
            let levels = meta.sharding().map(|s| s.levels()).unwrap_or_default();
            let shard = levels.get(level).ok_or_else(|| {
                Failure::from(crate::Error::NotFound(format!(
                    "array {:?} has {} sharding levels, not level {level}",
                    a.path(),
                    levels.len()
                )))
            })?;
            slice_mut(out_shape, ndim, "out_shape")?.copy_from_slice(shard.shape);
            Ok(())
        })
    })
}

/// Sets `*out_dtype` to the memory element type reads and writes use (`ZARR_DTYPE_INT64`
/// for datetime64 and timedelta64; `zarr_array_dtype_name` tells the stored type).
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_dtype(
    array: *const zarr_array_t,
    out_dtype: *mut zarr_dtype_t,
) -> zarr_status_t {
    ffi_guard!({
        let out_dtype = out(out_dtype, "out_dtype")?;
        *out_dtype = with_array(array, |a| Ok(a.metadata().dtype.element_type() as i32))?;
        Ok(())
    })
}

/// Copies the stored type as v2 metadata writes it (`"<f8"`, `"|u1"`, `">M8[ns]"`, `"|S4"`,
/// `"|O"` for variable-length items, the JSON field list of a structured type) into `buf`
/// (string output convention: `*needed` gets the size with NUL; too small gives
/// `ZARR_ERR_BUFFER_SIZE`).
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention).
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_dtype_name(
    array: *const zarr_array_t,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let name = with_array(array, |a| Ok(a.metadata().dtype.to_v2()))?;
        write_text(&name, buf, len, needed)
    })
}

/// Sets `*out_size` to the size of one element in bytes.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_item_size(
    array: *const zarr_array_t,
    out_size: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let out_size = out(out_size, "out_size")?;
        *out_size = with_array(array, |a| Ok(a.metadata().item_size()))?;
        Ok(())
    })
}

/// Copies the fill value (one element, native byte order) into `buf`, whose `len` must be
/// the element size, and sets `*out_is_null` to whether the metadata says `null` (then
/// `buf` gets zeros, which is what missing chunks read as). Variable-length arrays give
/// `ZARR_ERR_DTYPE_MISMATCH`: their fill value is an item, given by
/// `zarr_array_fill_value_json`.
///
/// Errors: `ZARR_ERR_DTYPE_MISMATCH` (a variable-length array), `ZARR_ERR_BUFFER_SIZE`
/// (`len` is not the element size).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_fill_value(
    array: *const zarr_array_t,
    buf: *mut c_void,
    len: usize,
    out_is_null: *mut bool,
) -> zarr_status_t {
    ffi_guard!({
        let out_is_null = out(out_is_null, "out_is_null")?;
        let meta = with_array(array, |a| Ok(a.metadata()))?;
        if meta.dtype.is_variable() {
            return Err(crate::Error::DtypeMismatch(
                "a variable-length fill value has no fixed size: use zarr_array_fill_value_json"
                    .into(),
            )
            .into());
        }
        if len != meta.item_size() {
            return Err(Failure::new(
                ZARR_ERR_BUFFER_SIZE,
                format!(
                    "the fill value has {} bytes but the buffer has {len}",
                    meta.item_size()
                ),
            ));
        }
        let buf = slice_mut(buf as *mut u8, len, "buf")?;
        match &meta.fill_value {
            Some(bytes) => buf.copy_from_slice(bytes),
            None => buf.fill(0),
        }
        *out_is_null = meta.fill_value.is_none();
        Ok(())
    })
}

/// Makes `value` the array's CF missing value: its fill value (which unwritten chunks read
/// as) and the `_FillValue` attribute beside it, in one document in Zarr v3, in Zarr v2 in
/// `.zarray` then `.zattrs` (see `zarr_array_builder_set_missing_value` for the
/// encodings). Format 1 and the 2022 draft keep it in the fill value alone (a `_FillValue`
/// attribute there is removed).
///
/// A float type takes the nearest value it holds, with a notice on standard error when
/// that is not `value` exactly (as `zarr_array_builder_set_missing_value`).
///
/// Errors: `ZARR_ERR_INVALID_ARG` (a value the type cannot hold: beyond a float type's
/// range, or for integers out of range, a fraction or NaN; or an array without numbers:
/// nothing is written), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept.
///
/// Thread safety: any thread; updates through one handle are serialised, while of updates
/// made at once through several handles or processes the last one wins.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_missing_value(
    array: *const zarr_array_t,
    value: f64,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| Ok(a.set_missing_value(value)?)) })
}

/// Sets `*out_is_set` to whether the array has a CF missing value and `*out_value` to it
/// (false and 0 when none, and after a failure), whichever way the store holds it: a `_FillValue` attribute (xarray's
/// base64 form, a number, or "NaN"), as xarray, NCZarr and libzarr write it, or outside
/// v3 (where it comes first) a `fill_value` that is not null (which xarray and NCZarr read as the
/// missing value).
///
/// Errors: `ZARR_ERR_METADATA` (a `_FillValue` attribute that is no value of the type),
/// `ZARR_ERR_DTYPE_MISMATCH` (a 64-bit integer missing value a double cannot hold exactly).
///
/// Ownership: nothing is kept; the results go to the caller's outputs.
///
/// Thread safety: any thread; it reads the store (the attributes).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_missing_value(
    array: *const zarr_array_t,
    out_is_set: *mut bool,
    out_value: *mut f64,
) -> zarr_status_t {
    ffi_guard!({
        let out_is_set = out(out_is_set, "out_is_set")?;
        let out_value = out(out_value, "out_value")?;
        // Cleared first: after a failure the outputs say "none".
        *out_is_set = false;
        *out_value = 0.0;
        let value = with_array(array, |a| Ok(a.missing_value()?))?;
        *out_is_set = value.is_some();
        *out_value = value.unwrap_or(0.0);
        Ok(())
    })
}

/// Copies the fill value as the array's metadata writes it ("NaN", "0", "null",
/// "[1.0,2.0]"; in Zarr v3 a NaN with a payload as hex bits, "0x7fc00001", and a record
/// as an object of field values) into `buf` (string output convention).
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention); `ZARR_ERR_NO_MEMORY` when
/// the text of a large item (base64 of hundreds of MiB) cannot be allocated.
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_fill_value_json(
    array: *const zarr_array_t,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let json = with_array(array, |a| Ok(a.fill_value_json()?))?;
        write_text(&json, buf, len, needed)
    })
}

/// Sets `*out_order` to the element order inside chunks: `ZARR_ORDER_F` for a v3 transpose
/// that reverses the dimensions, `ZARR_ORDER_C` otherwise (also for other permutations,
/// which reads and writes handle like any order).
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_order(
    array: *const zarr_array_t,
    out_order: *mut zarr_order_t,
) -> zarr_status_t {
    ffi_guard!({
        let out_order = out(out_order, "out_order")?;
        *out_order = with_array(array, |a| Ok(a.metadata().order() as i32))?;
        Ok(())
    })
}

/// Copies into `out_permutation[0..ndim]` (`ndim` must be the rank) the order of the
/// dimensions inside decoded chunks, over every `transpose` of the codec chain: chunk
/// dimension `k` is array dimension `out_permutation[k]` (`0, 1, …` for C order, reversed
/// for F order, any permutation in Zarr v3).
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim` is not the rank).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_permutation(
    array: *const zarr_array_t,
    ndim: usize,
    out_permutation: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let meta = a.metadata();
            let perm = meta.chain().permutation(meta.rank());
            slice_mut(out_permutation, ndim, "out_permutation")?.copy_from_slice(&perm);
            Ok(())
        })
    })
}

/// Sets `*out_version` to the array's Zarr format: 1, 2, 3, `ZARR_FORMAT_V3_DRAFT` or
/// `ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON` (the 2022 draft layout, detected on open).
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_zarr_format(
    array: *const zarr_array_t,
    out_version: *mut i32,
) -> zarr_status_t {
    ffi_guard!({
        let out_version = out(out_version, "out_version")?;
        *out_version = with_array(array, |a| Ok(a.format().number()))?;
        Ok(())
    })
}

/// Sets `*out_nbytes` to the size of all elements in bytes.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_nbytes(
    array: *const zarr_array_t,
    out_nbytes: *mut u64,
) -> zarr_status_t {
    ffi_guard!({
        let out_nbytes = out(out_nbytes, "out_nbytes")?;
        *out_nbytes = with_array(array, |a| Ok(a.metadata().nbytes()))?;
        Ok(())
    })
}

/// Sets `*out_nbytes` to the bytes stored for the array: metadata, attributes and chunks.
///
/// Errors: only the usual ones (Conventions); it lists the store.
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; the store is listed as it
/// is then.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_nbytes_stored(
    array: *const zarr_array_t,
    out_nbytes: *mut u64,
) -> zarr_status_t {
    ffi_guard!({
        let out_nbytes = out(out_nbytes, "out_nbytes")?;
        *out_nbytes = with_array(array, |a| Ok(a.nbytes_stored()?))?;
        Ok(())
    })
}

/// Sets `*out_count` to the number of chunks in the grid.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_nchunks(
    array: *const zarr_array_t,
    out_count: *mut u64,
) -> zarr_status_t {
    ffi_guard!({
        let out_count = out(out_count, "out_count")?;
        *out_count = with_array(array, |a| Ok(a.metadata().num_chunks()))?;
        Ok(())
    })
}

/// Lists the chunks of the grid that the region `start`/`count` touches — the shards, when
/// the array is sharded: the units stored and rewritten whole, so writers (threads,
/// processes, MPI ranks) that never share one need no synchronizer. `*out_count` gets how
/// many there are; their indices, `ndim` numbers each, in C order of the grid, are copied to
/// `out_indices` when `capacity` (in chunks) holds them all, else `ZARR_ERR_BUFFER_SIZE`
/// (pass NULL and 0 to ask for the count). `zarr_array_chunk_region` gives each one's
/// elements.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (the region leaves
/// the array), `ZARR_ERR_BUFFER_SIZE` (`capacity` too small; `*out_count` is set).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_region_chunks(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    out_indices: *mut u64,
    capacity: usize,
    out_count: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let out_count = out(out_count, "out_count")?;
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let start = slice(start, ndim, "start")?;
            let count = slice(count, ndim, "count")?;
            let chunks = a.region_chunks(start, count)?;
            *out_count = chunks.len();
            if chunks.len() > capacity {
                return Err(Failure::new(
                    ZARR_ERR_BUFFER_SIZE,
                    format!(
                        "the region touches {} chunks but there is room for {capacity}",
                        chunks.len()
                    ),
                ));
            }
            if !chunks.is_empty() {
                let dst = slice_mut(out_indices, chunks.len() * ndim, "out_indices")?;
                for (d, value) in dst.iter_mut().zip(chunks.iter().flatten()) {
                    *d = *value;
                }
            }
            Ok(())
        })
    })
}

/// Copies the region of the grid's chunk at `index` (`ndim` numbers; a shard when the array
/// is sharded) to `out_start` and `out_count`: its first element and extent per dimension,
/// clipped to the array's shape. `ZARR_ERR_OUT_OF_BOUNDS` when `index` is outside the grid.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (`index` outside the
/// grid).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_region(
    array: *const zarr_array_t,
    ndim: usize,
    index: *const u64,
    out_start: *mut u64,
    out_count: *mut u64,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let index = slice(index, ndim, "index")?;
            let out_start = slice_mut(out_start, ndim, "out_start")?;
            let out_count = slice_mut(out_count, ndim, "out_count")?;
            let (start, count) = a.chunk_region(index)?;
            out_start.copy_from_slice(&start);
            out_count.copy_from_slice(&count);
            Ok(())
        })
    })
}

/// Sets `*out_kind` to the layout of the chunk grid: `ZARR_CHUNK_GRID_REGULAR` or
/// `ZARR_CHUNK_GRID_RECTILINEAR`.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_grid_kind(
    array: *const zarr_array_t,
    out_kind: *mut zarr_chunk_grid_t,
) -> zarr_status_t {
    ffi_guard!({
        let out_kind = out(out_kind, "out_kind")?;
        *out_kind = with_array(array, |a| {
            Ok(match a.metadata().is_rectilinear() {
                true => zarr_chunk_grid::ZARR_CHUNK_GRID_RECTILINEAR as i32,
                false => zarr_chunk_grid::ZARR_CHUNK_GRID_REGULAR as i32,
            })
        })?;
        Ok(())
    })
}

/// Copies into `out_grid[0..ndim]` (`ndim` must be the rank) the number of chunks (shards
/// when sharded) along each dimension that hold elements of the array.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim` is not the rank).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_grid_shape(
    array: *const zarr_array_t,
    ndim: usize,
    out_grid: *mut u64,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let grid = a.metadata().chunk_grid();
            slice_mut(out_grid, ndim, "out_grid")?.copy_from_slice(&grid);
            Ok(())
        })
    })
}

/// Lists the edge lengths of the chunks (shards when sharded) along dimension `dim` that
/// hold elements of the array, first to last: `*out_count` gets how many there are; they
/// are copied to `out_edges` when `capacity` holds them all, else `ZARR_ERR_BUFFER_SIZE`
/// (pass NULL and 0 to ask for the count). A regular grid's edges are all the chunk
/// shape's; the last edge may reach past the array's extent.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (`dim` not below the rank), `ZARR_ERR_BUFFER_SIZE`
/// (`capacity` too small; `*out_count` is set).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_edges(
    array: *const zarr_array_t,
    dim: usize,
    out_edges: *mut u64,
    capacity: usize,
    out_count: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let out_count = out(out_count, "out_count")?;
        with_array(array, |a| {
            let meta = a.metadata();
            if dim >= meta.rank() {
                return Err(crate::Error::InvalidArg(format!(
                    "dimension {dim} is not below the rank {}",
                    meta.rank()
                ))
                .into());
            }
            let runs = meta.edge_runs(dim);
            let total = runs.iter().map(|&(_, n)| n).sum::<u64>();
            *out_count = usize::try_from(total).unwrap_or(usize::MAX);
            if total > capacity as u64 {
                return Err(Failure::new(
                    ZARR_ERR_BUFFER_SIZE,
                    format!("dimension {dim} has {total} chunks but there is room for {capacity}"),
                ));
            }
            if total > 0 {
                let dst = slice_mut(out_edges, total as usize, "out_edges")?;
                let edges = runs
                    .iter()
                    .flat_map(|&(edge, n)| std::iter::repeat_n(edge, n as usize));
                for (d, edge) in dst.iter_mut().zip(edges) {
                    *d = edge;
                }
            }
            Ok(())
        })
    })
}

/// Copies into `out_chunk[0..ndim]` the index of the grid's chunk (shard when sharded)
/// holding the element at `index` (`ndim` numbers, inside the array's shape).
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (`index` outside the
/// array).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_of(
    array: *const zarr_array_t,
    ndim: usize,
    index: *const u64,
    out_chunk: *mut u64,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let index = slice(index, ndim, "index")?;
            let out_chunk = slice_mut(out_chunk, ndim, "out_chunk")?;
            out_chunk.copy_from_slice(&a.chunk_of(index)?);
            Ok(())
        })
    })
}

/// Reads the array's metadata again from the store, so this handle sees the shape (and
/// the rest) that another handle or process changed since it was opened — after another
/// MPI rank resized or appended, say (each rank calls it after the barrier that follows
/// the resize). Decoded chunks the handle keeps (`zarr_array_set_cache_bytes`) are dropped.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (the array was deleted), `ZARR_ERR_METADATA`; and those of
/// storing buffered appends.
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread; calls running meanwhile on the handle use the old or the new
/// metadata.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_refresh(array: *const zarr_array_t) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| Ok(a.refresh()?)) })
}

/// Keeps up to `bytes` of decoded chunks on this handle for later reads (0, the default,
/// keeps none and frees what is kept): a read takes the chunks it finds there instead of
/// reading and decoding them, least recently used chunks make room first. For viewers and
/// analysis loops that read overlapping regions again and again. The handle stays safe to
/// use from many threads. Any write through any handle or store of this process makes every
/// kept chunk stale, so reads never see older data than this process wrote; changes made by
/// other processes are seen after `zarr_array_refresh` (which empties the cache).
/// Variable-length arrays are not cached. Memory: at most `bytes`, plus one chunk per
/// reading thread.
///
/// Errors: `ZARR_ERR_NULL_ARG` for a NULL handle.
///
/// Ownership: the kept chunks belong to the handle and are freed with it (or by a size of 0).
///
/// Thread safety: any thread, at the same time as reads and writes through the handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_cache_bytes(
    array: *const zarr_array_t,
    bytes: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            a.set_cache_bytes(bytes);
            Ok(())
        })
    })
}

/// Sets `*out_count` to the number of chunks that are stored.
///
/// Errors: only the usual ones (Conventions); it lists the store.
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; the store is listed as it
/// is then.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_nchunks_initialized(
    array: *const zarr_array_t,
    out_count: *mut u64,
) -> zarr_status_t {
    ffi_guard!({
        let out_count = out(out_count, "out_count")?;
        *out_count = with_array(array, |a| Ok(a.nchunks_initialized()?))?;
        Ok(())
    })
}

/// Copies the array's metadata document, as its format has it (`.zarray`, v1 `meta` or
/// v3 `zarr.json`), into `buf`.
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention).
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_metadata_json(
    array: *const zarr_array_t,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let doc = with_array(array, |a| {
            Ok(a.format().render_array(&a.metadata(), &a.attributes()?)?)
        })?;
        write_text(&String::from_utf8_lossy(&doc), buf, len, needed)
    })
}

/// Copies the attributes (a JSON object, `{}` when there are none) into `buf`.
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention), `ZARR_ERR_METADATA`.
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attrs_get(
    array: *const zarr_array_t,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| attrs::get_all(a, buf, len, needed)) })
}

/// Replaces all attributes with the JSON object `json`.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (not a JSON object), `ZARR_ERR_READ_ONLY` (a read-only
/// handle or store).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; updates through one handle are serialised, while of updates
/// made at once through several handles or processes the last one wins.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attrs_set(
    array: *const zarr_array_t,
    json: *const c_char,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| attrs::set_all(a, json)) })
}

/// Copies the JSON value of attribute `key` into `buf`; `ZARR_ERR_NOT_FOUND` if absent.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_BUFFER_SIZE` (string output
/// convention), `ZARR_ERR_METADATA`.
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_get(
    array: *const zarr_array_t,
    key: *const c_char,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| attrs::get_one(a, key, buf, len, needed)) })
}

/// Sets attribute `key` to the JSON value `json`, keeping the others.
///
/// Errors: `ZARR_ERR_READ_ONLY` (a read-only handle or store), `ZARR_ERR_INVALID_ARG` (a
/// `_FillValue` that is no missing value of the array's numeric type: text that encodes no
/// number, a fraction or a value out of range for integers; nothing is written).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; updates through one handle are serialised, while of updates
/// made at once through several handles or processes the last one wins.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_set(
    array: *const zarr_array_t,
    key: *const c_char,
    json: *const c_char,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| attrs::set_one(a, key, json)) })
}

/// Deletes attribute `key`; `ZARR_ERR_NOT_FOUND` if absent.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; updates through one handle are serialised, while of updates
/// made at once through several handles or processes the last one wins.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_delete(
    array: *const zarr_array_t,
    key: *const c_char,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |a| attrs::delete_one(a, key)) })
}

/// Reports what attribute `key` holds (`*out_kind`, a `zarr_attr_kind` value) and,
/// when `out_count` is not NULL, its number of items (1 for a scalar, the length of a list).
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_METADATA`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_kind(
    array: *const zarr_array_t,
    key: *const c_char,
    out_kind: *mut zarr_attr_kind_t,
    out_count: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |h| attrs::kind(h, key, out_kind, out_count)) })
}

/// Sets attribute `key` to the UTF-8 string `value` (any text: the library escapes
/// it), keeping the others.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (`key` or `value` not UTF-8; U+F8FF followed by `NaN`,
/// `Infinity` or `-Infinity`, the library's mark of a non-finite float), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: as `zarr_array_attr_set`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_set_string(
    array: *const zarr_array_t,
    key: *const c_char,
    value: *const c_char,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |h| attrs::set_string(h, key, value)) })
}

/// Copies the string attribute `key` holds into `buf` (string output convention).
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_DTYPE_MISMATCH` (it is not
/// a string; the message names it and says what it is), `ZARR_ERR_BUFFER_SIZE`.
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_get_string(
    array: *const zarr_array_t,
    key: *const c_char,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |h| attrs::get_string(h, key, buf, len, needed)) })
}

/// Sets attribute `key` to the list of the `n` UTF-8 strings at `values`. netCDF-C
/// (4.9) cannot open a v2 store holding a list of strings as an attribute: join such lists
/// into one string (CF's `flag_meanings` is blank-separated) for stores netCDF reads.
///
/// Errors: `ZARR_ERR_NULL_ARG` (`values` or one of its strings NULL), `ZARR_ERR_INVALID_ARG`
/// (a string not UTF-8, named by index), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: as `zarr_array_attr_set`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_set_strings(
    array: *const zarr_array_t,
    key: *const c_char,
    values: *const *const c_char,
    n: usize,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |h| attrs::set_strings(h, key, values, n)) })
}

/// Gives the list of strings attribute `key` holds.
///
/// Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a list of strings; the
/// message names the attribute, or the item, at fault).
///
/// Ownership: the caller frees `*out_list` with `zarr_strings_free`; it is NULL after a
/// failure.
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_get_strings(
    array: *const zarr_array_t,
    key: *const c_char,
    out_list: *mut *mut zarr_strings_t,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |h| attrs::get_strings(h, key, out_list)) })
}

/// Sets attribute `key` to the number at `value`, of type `dtype`:
/// `ZARR_DTYPE_INT32`, `ZARR_DTYPE_INT64`, `ZARR_DTYPE_FLOAT32` or `ZARR_DTYPE_FLOAT64`.
/// A float32 is written as the shortest decimal that reads back as the same float32
/// (0.1f as `0.1`): readers that see JSON get the value meant, as a double, and
/// `zarr_array_attr_get_number` with `ZARR_DTYPE_FLOAT32` gives the float exactly. No type is
/// recorded beside the value. NaN and infinities are written as the bare tokens `NaN`,
/// `Infinity` and `-Infinity`, as Python's `json` (and so zarr-python) writes them; readers
/// that hold to strict JSON (tensorstore, for one) then refuse the whole document, as they
/// refuse zarr-python's.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (another `dtype`), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: as `zarr_array_attr_set`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_set_number(
    array: *const zarr_array_t,
    key: *const c_char,
    dtype: zarr_dtype_t,
    value: *const c_void,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |h| attrs::set_numbers(h, key, dtype, value, 1, true)) })
}

/// Stores the number attribute `key` holds at `value`, as `dtype` (the types of
/// `zarr_array_attr_set_number`). Any number reads as a float type; only integers read as an
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
pub unsafe extern "C" fn zarr_array_attr_get_number(
    array: *const zarr_array_t,
    key: *const c_char,
    dtype: zarr_dtype_t,
    value: *mut c_void,
) -> zarr_status_t {
    ffi_guard!({ with_array(array, |h| attrs::get_number(h, key, dtype, value)) })
}

/// Sets attribute `key` to the list of the `n` numbers of type `dtype` at `values`
/// (the types and float32 rule of `zarr_array_attr_set_number`).
///
/// Errors: `ZARR_ERR_INVALID_ARG` (another `dtype`), `ZARR_ERR_OVERFLOW` (`n` values exceed the address space), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: as `zarr_array_attr_set`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attr_set_numbers(
    array: *const zarr_array_t,
    key: *const c_char,
    dtype: zarr_dtype_t,
    values: *const c_void,
    n: usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |h| {
            attrs::set_numbers(h, key, dtype, values, n, false)
        })
    })
}

/// Stores the list of numbers attribute `key` holds in `values` (room for `len` of
/// type `dtype`, the types of `zarr_array_attr_get_number`); `*out_count` gets the list's
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
pub unsafe extern "C" fn zarr_array_attr_get_numbers(
    array: *const zarr_array_t,
    key: *const c_char,
    dtype: zarr_dtype_t,
    values: *mut c_void,
    len: usize,
    out_count: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |h| {
            attrs::get_numbers(h, key, dtype, values, len, out_count)
        })
    })
}

/// Sets the dimension names: `ndim` UTF-8 strings, one per dimension, NULL for an unnamed
/// dimension (an empty string is a name: ""). v3 arrays keep them in the `dimension_names`
/// of their metadata (null for unnamed), v2 arrays in the `_ARRAY_DIMENSIONS` attribute
/// (xarray's convention), where every dimension needs a name: a NULL gives
/// `ZARR_ERR_INVALID_ARG` there.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_INVALID_ARG` (a NULL name in v2),
/// `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; updates through one handle are serialised, while of updates
/// made at once through several handles or processes the last one wins.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_dimension_names(
    array: *const zarr_array_t,
    ndim: usize,
    names: *const *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let names = optional_strings(names, ndim, "names")?;
            Ok(a.set_dimension_names(&names)?)
        })
    })
}

/// Gets the dimension names into a new string list, in which an unnamed dimension (v3
/// null) is a NULL item (`zarr_strings_get` gives NULL) and a name that is the empty string
/// is ""; `ZARR_ERR_NOT_FOUND` when the array has none, `ZARR_ERR_METADATA` when
/// `_ARRAY_DIMENSIONS` is not a list of rank strings. A v2 array without
/// `_ARRAY_DIMENSIONS` that netCDF-C wrote (NCZarr) has the names of its `_nczarr_array`
/// dimension paths (`/grid/lat` is `lat`).
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no names), `ZARR_ERR_METADATA`.
///
/// Ownership: `*out_names` is a new list: free it with `zarr_strings_free`.
///
/// Thread safety: any thread; it reads the store.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_dimension_names(
    array: *const zarr_array_t,
    out_names: *mut *mut zarr_strings_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_names, "out_names")?;
        let names = with_array(array, |a| {
            a.dimension_names()?.ok_or_else(|| {
                crate::Error::NotFound(format!("array {:?} has no dimension names", a.path()))
                    .into()
            })
        })?;
        give(out_names, optional_strings_list(names));
        Ok(())
    })
}
