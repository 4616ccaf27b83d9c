//! Commits, branches and tags of Icechunk repositories opened as stores
//! (`zarr_store_open_url` with `icechunk:///PATH` or `icechunk+s3://BUCKET/PREFIX`).

use super::store::store_ref;
use super::*;
use crate::store::repository_of;

/// Bytes a snapshot id takes with its NUL: the size of the `id_buf` of
/// `zarr_store_commit` and `zarr_store_snapshot_id`.
pub const ZARR_SNAPSHOT_ID_BYTES: u32 = 21;

/// Checks a snapshot id buffer before anything is done: NULL with `id_len` 0 is allowed
/// (the id is not wanted), else it must hold `ZARR_SNAPSHOT_ID_BYTES`.
unsafe fn check_id_buf(id_buf: *mut c_char, id_len: usize) -> FfiResult {
    if id_buf.is_null() && id_len > 0 {
        return Err(Failure::null("id_buf"));
    }
    if !id_buf.is_null() && id_len < ZARR_SNAPSHOT_ID_BYTES as usize {
        return Err(Failure::new(
            ZARR_ERR_BUFFER_SIZE,
            format!("id_buf has {id_len} bytes; a snapshot id needs {ZARR_SNAPSHOT_ID_BYTES}"),
        ));
    }
    Ok(())
}

/// Commits everything written through `store` since its last commit (or its opening) as
/// one new snapshot of its branch, atomically, with `message`: readers of the repository
/// see all of it or none of it. The new snapshot's id (20 characters) goes to `id_buf`
/// (`id_len` at least `ZARR_SNAPSHOT_ID_BYTES`, checked before committing; NULL with
/// `id_len` 0 when not wanted). Appends to arrays in a repository are never held back
/// on their handles (as they are for sharded arrays elsewhere until `zarr_array_flush`):
/// a commit holds every step appended before it. A store freed without a commit commits
/// nothing: what it
/// wrote is dropped (the chunks it stored stay as unreferenced files until the
/// repository's garbage collection).
///
/// Another writer's commit on the branch since this store's session began gives
/// `ZARR_ERR_CONFLICT` and commits nothing: call `zarr_store_rebase`, then commit again.
/// On S3 the branch moves by a conditional write: of racing commits from anywhere exactly
/// one succeeds. On a local disk Icechunk moves the branch without a conditional write;
/// libzarr makes the move exclusive itself (an exclusive `flock` on the repository's
/// directory, which threads and processes take in turn), so of racing libzarr commits
/// exactly one succeeds. Other programs (Python's icechunk) do not take that lock: a commit
/// of theirs at the same instant as one of libzarr's on a local disk may still be lost.
///
/// Durability: on a local disk (where Icechunk itself syncs no file) libzarr syncs each
/// file the commit names (chunks, manifests, transaction log, snapshot; each file, then
/// its directory) before the branch file that names them is written, and the branch file
/// before the call returns, so a power cut leaves the branch at this commit or the one
/// before, never naming a missing file. A failed sync is `ZARR_ERR_STORAGE_IO` naming the
/// file. On S3 every object is durable when written.
///
/// Errors: `ZARR_ERR_CONFLICT` (see above), `ZARR_ERR_INVALID_ARG` (nothing was written
/// since the last commit), `ZARR_ERR_READ_ONLY` (opened read-only, or at a tag or
/// snapshot), `ZARR_ERR_BUFFER_SIZE` (`id_len` too small; nothing committed),
/// `ZARR_ERR_UNSUPPORTED` (not an Icechunk repository), `ZARR_ERR_STORAGE_IO`.
///
/// Ownership: the message is copied; the id is copied into the caller's `id_buf`.
///
/// Thread safety: any thread, once writes through the store are done.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_commit(
    store: *const zarr_store_t,
    message: *const c_char,
    id_buf: *mut c_char,
    id_len: usize,
) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        let message = c_str(message, "message")?;
        check_id_buf(id_buf, id_len)?;
        crate::node::pending::wait_all_requests();
        let id = repository_of(store.as_ref())?.commit(message)?;
        if !id_buf.is_null() {
            write_text(&id, id_buf, id_len, std::ptr::null_mut())?;
        }
        Ok(())
    })
}

/// Copies the id of the snapshot `store` reads (the last commit through it, or the one
/// it was opened at) into `id_buf` (`id_len` at least `ZARR_SNAPSHOT_ID_BYTES`).
///
/// Errors: `ZARR_ERR_BUFFER_SIZE`, `ZARR_ERR_NULL_ARG`, `ZARR_ERR_UNSUPPORTED` (not an
/// Icechunk repository).
///
/// Ownership: the id is copied into the caller's `id_buf`.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_snapshot_id(
    store: *const zarr_store_t,
    id_buf: *mut c_char,
    id_len: usize,
) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        if id_buf.is_null() {
            return Err(Failure::null("id_buf"));
        }
        check_id_buf(id_buf, id_len)?;
        let id = repository_of(store.as_ref())?.snapshot_id()?;
        write_text(&id, id_buf, id_len, std::ptr::null_mut())
    })
}

/// Drops everything written through `store` since its last commit (or its opening): it
/// reads its branch as last committed again. Arrays opened before may hold metadata that
/// no longer exists: open them again.
///
/// Errors: `ZARR_ERR_READ_ONLY`, `ZARR_ERR_UNSUPPORTED` (not an Icechunk repository).
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread, once writes through the store are done.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_discard(store: *const zarr_store_t) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        crate::node::pending::wait_all_requests();
        Ok(repository_of(store.as_ref())?.discard()?)
    })
}

/// Moves what `store` wrote since its last commit onto its branch's newest snapshot, after
/// `zarr_store_commit` gave `ZARR_ERR_CONFLICT`: it succeeds when the commits made on the
/// branch meanwhile changed no array, group or chunk that this store changed, and the
/// store then reads those commits too; commit again afterwards. Overlapping changes give
/// `ZARR_ERR_CONFLICT` (the message lists them) and keep this store's changes as they were.
///
/// Errors: `ZARR_ERR_CONFLICT`, `ZARR_ERR_READ_ONLY`, `ZARR_ERR_UNSUPPORTED` (not an
/// Icechunk repository), `ZARR_ERR_STORAGE_IO`.
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread, once writes through the store are done.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_rebase(store: *const zarr_store_t) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        crate::node::pending::wait_all_requests();
        Ok(repository_of(store.as_ref())?.rebase()?)
    })
}

/// Creates the tag `name` at the snapshot `store` reads (its last commit, or the snapshot
/// it was opened at). Tags never move: open one with `icechunk:///PATH?tag=NAME`, the
/// name percent-encoded where it holds a space, `&`, `#`, `=`, `%` or other characters a
/// URL query cannot carry as they are (`a b` is `?tag=a%20b`). On a local disk the tag is
/// synced to disk before the call returns, as a commit is.
///
/// Names no URL can open are refused: the empty name, and names holding a control
/// character (U+0000 to U+001F, U+007F to U+009F).
///
/// Errors: `ZARR_ERR_EXISTS` (the tag exists, or existed), `ZARR_ERR_INVALID_ARG` (a name
/// refused above, or one Icechunk refuses), `ZARR_ERR_UNSUPPORTED` (not an Icechunk
/// repository), `ZARR_ERR_STORAGE_IO`.
///
/// Ownership: the name is copied.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_create_tag(
    store: *const zarr_store_t,
    name: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        let name = c_str(name, "name")?;
        Ok(repository_of(store.as_ref())?.create_tag(name)?)
    })
}

/// Creates the branch `name` at the snapshot `store` reads. Write to it by opening
/// `icechunk:///PATH?branch=NAME`, the name percent-encoded as for
/// `zarr_store_create_tag`. On a local disk the branch is synced to disk before the call
/// returns, as a commit is. The same names as for tags are refused.
///
/// Errors: `ZARR_ERR_EXISTS` (the branch exists), `ZARR_ERR_INVALID_ARG` (an empty name,
/// one holding a control character, or one Icechunk refuses), `ZARR_ERR_UNSUPPORTED` (not
/// an Icechunk repository), `ZARR_ERR_STORAGE_IO`.
///
/// Ownership: the name is copied.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_create_branch(
    store: *const zarr_store_t,
    name: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        let name = c_str(name, "name")?;
        Ok(repository_of(store.as_ref())?.create_branch(name)?)
    })
}

/// Makes the chunk at `key` of an Icechunk repository (`ARRAY/c/0/1`, the array's chunk
/// key encoding) a virtual chunk: `length` bytes at `offset` of the file `location` (an
/// absolute path or a `file:///` URL), read from there whenever the chunk is read, never
/// copied: a code that writes netCDF (or any file of chunks a Zarr codec reads) publishes
/// a Zarr view of its output this way. The file must lie beneath a directory the store
/// was opened with in its option `virtual_chunk_containers` (a writable store declares
/// them in the repository's configuration; readers name them too to be allowed to read
/// there), and hold at least `offset + length` bytes now. The array's metadata (its codecs)
/// must describe the bytes as they are. Uncommitted until `zarr_store_commit`, as any write.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (a relative path, `.` or `..` in it, a file that is
/// missing or too short, or one beneath no allowed directory: the file and the key
/// named), `ZARR_ERR_INVALID_KEY` (not a chunk key of an array), `ZARR_ERR_READ_ONLY`,
/// `ZARR_ERR_UNSUPPORTED` (not an Icechunk repository, or a remote location),
/// `ZARR_ERR_STORAGE_IO`.
///
/// Ownership: the key and location are copied.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_set_virtual_ref(
    store: *const zarr_store_t,
    key: *const c_char,
    location: *const c_char,
    offset: u64,
    length: u64,
) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        let key = c_str(key, "key")?;
        let location = c_str(location, "location")?;
        Ok(repository_of(store.as_ref())?.set_virtual_ref(key, location, offset, length)?)
    })
}

/// Copies the history of the snapshot `store` reads, newest first, into `buf` as JSON text:
/// an array of objects `{"id", "parent", "time", "message"}` (`parent` null for the
/// repository's first snapshot; `time` RFC 3339 in UTC). String output convention: `len`
/// bytes, NUL-terminated; `*needed` (may be NULL) gets the full size; pass `buf = NULL,
/// len = 0` to ask the size.
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (the text was truncated), `ZARR_ERR_UNSUPPORTED` (not an
/// Icechunk repository), `ZARR_ERR_STORAGE_IO`.
///
/// Ownership: the text is copied into the caller's `buf`.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_history_json(
    store: *const zarr_store_t,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        let history = repository_of(store.as_ref())?.history()?;
        write_text(
            &crate::store::repository::history_json(&history),
            buf,
            len,
            needed,
        )
    })
}

/// Bytes before an exported buffer that hold its length, so `zarr_bytes_free` needs only
/// the pointer.
const LENGTH_PREFIX: usize = std::mem::size_of::<usize>();

/// Hands `bytes` to the caller as a buffer `zarr_bytes_free` releases.
fn give_bytes(bytes: &[u8]) -> *mut std::ffi::c_void {
    let mut buf = Vec::with_capacity(LENGTH_PREFIX + bytes.len());
    buf.extend_from_slice(&bytes.len().to_ne_bytes());
    buf.extend_from_slice(bytes);
    let buf = Box::into_raw(buf.into_boxed_slice()).cast::<u8>();
    // SAFETY: the allocation holds LENGTH_PREFIX bytes before the data.
    unsafe { buf.add(LENGTH_PREFIX).cast() }
}

/// Serializes everything written through `store` since its last commit (or its opening)
/// into a new buffer `*out_bytes` of `*out_len` bytes, for `zarr_store_changes_merge` on
/// another store of the same repository: the way several processes (MPI ranks) write one
/// commit. Each writer opens the branch after the commit that created the arrays, writes
/// chunks of its own only (no array or group created or resized), exports and does not
/// commit; one store merges every writer's bytes and commits once. The chunks are in the
/// repository already; the bytes name them (and carry chunks small enough to be kept
/// inline), so they are small. The store keeps its changes: discard them
/// (`zarr_store_discard`) and rebase (`zarr_store_rebase`) to go on at the new commit.
///
/// The bytes also hold the repository's storage settings (bucket, prefix, endpoint; on a
/// local disk the writer's absolute path of the repository, in clear), with S3 keys given
/// as options overwritten by `*`: the merging store uses its own. Whoever receives the
/// bytes learns where the repository lies.
///
/// On a local disk the chunks this store wrote are synced first (each file and its
/// directory), so the chunks the bytes name are on disk before any commit names them (on a
/// filesystem shared by several nodes, each writer syncs its own).
///
/// Errors: `ZARR_ERR_READ_ONLY` (opened read-only, or at a tag or snapshot),
/// `ZARR_ERR_UNSUPPORTED` (not an Icechunk repository), `ZARR_ERR_NULL_ARG` (`store`,
/// `out_bytes` or `out_len` NULL), `ZARR_ERR_STORAGE_IO` (the sync or the serialization
/// failed).
///
/// Ownership: `*out_bytes` is new: free it with `zarr_bytes_free`; it is NULL (and
/// `*out_len` 0, when the pointers are not NULL) after a failure.
///
/// Thread safety: any thread, once writes through the store are done.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_changes_export(
    store: *const zarr_store_t,
    out_bytes: *mut *mut std::ffi::c_void,
    out_len: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        if !out_len.is_null() {
            *out_len = 0;
        }
        clear_out(out_bytes, "out_bytes")?;
        *out(out_len, "out_len")? = 0;
        let store = &store_ref(store)?.inner;
        crate::node::pending::wait_all_requests();
        let bytes = repository_of(store.as_ref())?.export_changes()?;
        *out_bytes = give_bytes(&bytes);
        *out_len = bytes.len();
        Ok(())
    })
}

/// Adds the changes another store exported (`zarr_store_changes_export`: `len` bytes at
/// `bytes`) to what `store` wrote since its last commit, so that its next
/// `zarr_store_commit` holds both as one snapshot. Merge every writer's bytes, then commit.
///
/// Both stores must read the same snapshot: changes written on another one (a commit came
/// between) give `ZARR_ERR_CONFLICT` and merge nothing; the writers then discard, rebase
/// and write again. Two stores that created or changed the same array or group differently
/// give `ZARR_ERR_CONFLICT` too (create arrays and groups in a commit before the writers
/// start); of a stored object two stores wrote, the one merged last wins, so writers
/// write disjoint stored objects: whole chunks, or whole shards of a sharded array (two
/// writers of one shard each store the whole shard). Bytes that do not decode as exported
/// changes give `ZARR_ERR_INVALID_ARG` (damage that still decodes is not detected), and so
/// does a store still at the repository's first snapshot (which every repository shares:
/// commit the arrays first). Each chunk the bytes write is checked against its array as
/// `store` sees it with the changes (created or resized by them, or as it is here): a
/// chunk of an array `store` removed, or of a node it does not know, one whose indices are
/// not as many as the array's dimensions, or one outside its grid (`store` shrank the
/// array) gives `ZARR_ERR_INVALID_ARG` naming the array and the chunk. On every error
/// nothing changes in `store`.
///
/// Errors: `ZARR_ERR_CONFLICT`, `ZARR_ERR_INVALID_ARG`, `ZARR_ERR_READ_ONLY` (opened
/// read-only, or at a tag or snapshot), `ZARR_ERR_UNSUPPORTED` (not an Icechunk
/// repository), `ZARR_ERR_NULL_ARG` (`bytes` NULL with `len` above 0),
/// `ZARR_ERR_BUFFER_SIZE` (`len` larger than any buffer).
///
/// Ownership: the bytes are only read.
///
/// Thread safety: any thread, once writes through the store are done.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_changes_merge(
    store: *const zarr_store_t,
    bytes: *const std::ffi::c_void,
    len: usize,
) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        let bytes = slice(bytes.cast::<u8>(), len, "bytes")?;
        crate::node::pending::wait_all_requests();
        Ok(repository_of(store.as_ref())?.merge_changes(bytes)?)
    })
}

/// Frees a buffer of bytes libzarr gave (`zarr_store_changes_export`). NULL is a no-op.
///
/// Errors: none: it returns nothing, never a status.
///
/// Ownership: `bytes` is released; do not use it afterwards.
///
/// Thread safety: any thread, once no other call is using the buffer.
#[no_mangle]
pub unsafe extern "C" fn zarr_bytes_free(bytes: *mut std::ffi::c_void) {
    ffi_guard!(() => {
        if bytes.is_null() {
            return;
        }
        let start = bytes.cast::<u8>().sub(LENGTH_PREFIX);
        let mut len = [0u8; LENGTH_PREFIX];
        std::ptr::copy_nonoverlapping(start, len.as_mut_ptr(), LENGTH_PREFIX);
        let total = LENGTH_PREFIX + usize::from_ne_bytes(len);
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(start, total)));
    })
}
