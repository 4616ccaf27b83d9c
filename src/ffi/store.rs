//! Stores from C: open a directory or make a memory store, and use keys directly.

use super::*;
use crate::node::Mode;
use crate::store::{Durability, FilesystemStore, MemoryStore, Store, ZipMode, ZipStore};
use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

/// A store handle. Arrays opened from it keep it alive, so it may be freed at any time.
pub struct zarr_store_t {
    pub(crate) inner: Arc<dyn Store>,
}

/// Hands `store` to the caller as a new handle, flushed at process exit if still open then
/// (`node::exit`).
unsafe fn give_store(out_store: *mut *mut zarr_store_t, store: Arc<dyn Store>) {
    crate::node::exit::watch_store(&store);
    give(out_store, zarr_store_t { inner: store });
}

/// How much of what a store writes survives a crash (`zarr_store_set_durability`). At every
/// level a process killed at any moment leaves each key with its old or its new value,
/// never a mix, because values are written to a temporary file and renamed into place (a
/// leftover temporary file is ignored). The levels differ after a power loss or an
/// operating-system crash, and assume storage that honours fsync. Values never change or
/// get reused.
#[repr(i32)]
#[derive(Debug, Clone, Copy)]
pub enum zarr_durability {
    /// Nothing is synced. After a power loss the writes of the last seconds (until the
    /// operating system writes its cache back) may be lost: a key holds its old value, or
    /// is missing if it was new, and on some filesystems a value renamed into place shortly
    /// before holds an empty or truncated file.
    ZARR_DURABILITY_NONE = 0,
    /// The default for filesystem stores. The handle remembers the files it wrote and the
    /// directories whose entries it changed, and fsyncs exactly those at
    /// `zarr_store_flush`, `zarr_store_close` and `zarr_store_free` (other users' data on
    /// a shared filesystem is not waited for). Once one of these returns successfully,
    /// everything written through the handle before it survives a power loss; writes since
    /// the last flush are as under `ZARR_DURABILITY_NONE`. A handle remembers at most
    /// 16384 files and directories: the write that reaches that many flushes them.
    ZARR_DURABILITY_FLUSH = 1,
    /// Each value's file is fsynced before it is renamed into place and its directory
    /// after (and every directory created or removed with it): when a write or erasure
    /// returns (`zarr_store_set`, `zarr_array_write`, ...), it survives a power loss. The
    /// slowest level: one or two device flushes per chunk written.
    ZARR_DURABILITY_EACH_WRITE = 2,
}

/// A durability level: one of the `zarr_durability` values, passed as an integer.
pub type zarr_durability_t = i32;

/// Converts a durability code.
fn durability(code: zarr_durability_t) -> FfiResult<Durability> {
    match code {
        0 => Ok(Durability::None),
        1 => Ok(Durability::Flush),
        2 => Ok(Durability::EachWrite),
        _ => Err(Failure::invalid(format!(
            "{code} is not a zarr_durability_t value"
        ))),
    }
}

/// A list of strings owned by libzarr; free with `zarr_strings_free`.
pub struct zarr_strings_t {
    /// The items; `None` is a null item (an unnamed dimension).
    items: Vec<Option<CString>>,
}

pub(crate) fn store_ref<'a>(store: *const zarr_store_t) -> FfiResult<&'a zarr_store_t> {
    // SAFETY: the caller passes a handle from this library or NULL.
    unsafe { store.as_ref() }.ok_or_else(|| Failure::null("store"))
}

pub(crate) fn strings(items: Vec<String>) -> zarr_strings_t {
    optional_strings_list(items.into_iter().map(Some).collect())
}

/// A string list in which `None` items are null (`zarr_strings_get` gives NULL).
pub(crate) fn optional_strings_list(items: Vec<Option<String>>) -> zarr_strings_t {
    zarr_strings_t {
        items: items
            .into_iter()
            .map(|s| s.map(|s| CString::new(s).unwrap_or_default()))
            .collect(),
    }
}

/// Opens a directory as a store. `ZARR_MODE_R` opens it read-only and `ZARR_MODE_R_PLUS`
/// read-write (both need it to exist); `ZARR_MODE_A`, `ZARR_MODE_W` and `ZARR_MODE_W_MINUS`
/// open it read-write and create it if missing (nothing is erased at store level).
/// `*out_store` is NULL on failure. Writes are synced as `ZARR_DURABILITY_FLUSH` says until
/// `zarr_store_set_durability` changes it. Every key is resolved beneath the directory when
/// it is used: symbolic links that stay inside are followed; one that leads outside, and
/// any absolute link, gives `ZARR_ERR_INVALID_KEY`. A FIFO, socket or device at a key gives
/// `ZARR_ERR_STORAGE_IO` without blocking; a key with a component longer than the
/// filesystem's name limit gives `ZARR_ERR_INVALID_KEY`.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (`ZARR_MODE_R` or `ZARR_MODE_R_PLUS` and no directory),
/// `ZARR_ERR_STORAGE_IO` (not a directory, or it cannot be created).
///
/// Ownership: `*out_store` is a new handle: free it with `zarr_store_free`.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_open_fs(
    path: *const c_char,
    mode: zarr_mode_t,
    out_store: *mut *mut zarr_store_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_store, "out_store")?;
        let path = c_str(path, "path")?;
        let mode = super::mode(mode)?;
        let writable = mode != Mode::Read;
        let create = !matches!(mode, Mode::Read | Mode::ReadWrite);
        let store = FilesystemStore::open(path, writable, create)?;
        give_store(out_store, Arc::new(store));
        Ok(())
    })
}

/// Opens a zip file as a store: `ZARR_MODE_R` reads it; `ZARR_MODE_W` creates it
/// (replacing a file there), `ZARR_MODE_W_MINUS` creates it and fails if it exists,
/// `ZARR_MODE_A` adds entries (creating it if missing), `ZARR_MODE_R_PLUS` adds entries to an
/// existing zip. Each key can be written once; rewriting one gives `ZARR_ERR_EXISTS`. New
/// entries are stored, or deflated when `deflate` is true. Call `zarr_store_close` to finish
/// the zip and see any error (freeing does it too, silently). Metadata documents written
/// through the handle read back at once; chunks only after closing.
///
/// Nothing is written at `path` before closing: the new archive is built in a hidden
/// temporary file beside it (appending copies the old archive there at the first write,
/// without recompressing, so it costs a rewrite of the archive) and moved over `path` by
/// `zarr_store_close`. A process killed at any moment, even while closing, leaves the
/// previous archive whole with all its entries (or no file, for a new one); opening for
/// writing removes temporary files left by killed writers. Only one handle at a time may
/// write over an existing zip: a second one fails with `ZARR_ERR_STORAGE_IO` (a lock, which
/// readers ignore). Writing through a symbolic link (or a chain of them) updates the file it
/// leads to, beside which the temporary file is made; the link stays a link.
///
/// Entry names must be keys as they are: a name that only normalises onto one (`a//0`,
/// `a\0`, `./a/0`) makes the zip refused with `ZARR_ERR_INVALID_KEY` naming it
/// (zarr-python reads names verbatim, so such an entry would be another array for it);
/// entries of directories (ending in `/`) are skipped; a name repeated in the central
/// directory reads as its last entry, as zarr-python reads it.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (a mode that reads an existing zip, and none is there),
/// `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and a file is there), `ZARR_ERR_INVALID_KEY` (an
/// entry name that escapes the store or is not a normal key),
/// `ZARR_ERR_STORAGE_IO` (not a zip, or another handle is writing it).
///
/// Ownership: `*out_store` is a new handle: free it with `zarr_store_free`.
///
/// Thread safety: any thread; calls through one handle are serialised inside. One writing
/// handle per zip.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_open_zip(
    path: *const c_char,
    mode: zarr_mode_t,
    deflate: bool,
    out_store: *mut *mut zarr_store_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_store, "out_store")?;
        let path = c_str(path, "path")?;
        let zip_mode = match super::mode(mode)? {
            Mode::Read => ZipMode::Read,
            Mode::Overwrite => ZipMode::Create { overwrite: true },
            Mode::CreateNew => ZipMode::Create { overwrite: false },
            Mode::Append => ZipMode::Append,
            Mode::ReadWrite if std::path::Path::new(path).exists() => ZipMode::Append,
            Mode::ReadWrite => {
                return Err(crate::Error::NotFound(format!("zip {path} does not exist")).into())
            }
        };
        give_store(
            out_store,
            Arc::new(ZipStore::open(path, zip_mode, deflate)?),
        );
        Ok(())
    })
}

/// Opens the store that `url` names, with `mode` as for `zarr_store_open_fs`
/// (`ZARR_MODE_R` read-only, every other mode read-write). `options_json` may be NULL, or
/// a JSON object of settings; a setting the store kind does not use gives
/// `ZARR_ERR_INVALID_ARG`. `*out_store` is NULL on failure. URLs:
///
/// - a plain path or `file://PATH`: a directory, as `zarr_store_open_fs`; a plain path
///   ending in `.zip` that is not a directory is a zip file, as in zarr-python;
/// - `memory://`: a new, empty memory store;
/// - `zip://PATH`: a zip file, as `zarr_store_open_zip` (option `"deflate": true`);
/// - `s3://BUCKET/PREFIX` (S3 and S3-compatible servers), `gs://BUCKET/PREFIX` (Google
///   Cloud Storage), `az://CONTAINER/PREFIX` or
///   `abfs://CONTAINER@ACCOUNT.dfs.core.windows.net/PREFIX` (Azure Blob Storage);
/// - `http://…` and `https://…`: a web server, read-only (any other mode gives
///   `ZARR_ERR_READ_ONLY`); keys are read with GET and range GETs below the URL.
///
/// Object-store options: `endpoint` (e.g. `"http://127.0.0.1:9000"`; an `http://` endpoint
/// allows plain HTTP), `region`, `access_key_id`, `secret_access_key`, `session_token`,
/// `profile` (an AWS profile, read from `~/.aws/credentials` and `~/.aws/config`),
/// `anonymous` (unsigned requests, for public S3 buckets and Azure containers; refused with
/// `ZARR_ERR_UNSUPPORTED` for `gs://`), `allow_http`, `timeout_ms` (per
/// request, default 30000), `connect_timeout_ms` (5000), `max_retries` (3; 5xx, throttling
/// and dropped connections are retried with back-off), `retry_timeout_ms` (60000),
/// `max_requests` (requests of this store in flight at once, default 64),
/// `multipart_threshold` (values this long or longer are uploaded in parts, default 64 MiB)
/// and `part_size` (16 MiB, at least 5 MiB), `zarr_format` (1, 2 or 3: the format the store
/// holds, whose documents are then looked for first, so that opening a v2 array or a
/// consolidated v2 hierarchy takes one request instead of two; v3 takes one either way),
/// `max_list_keys` (the most keys one listing may hold, default 10000000: more is
/// `ZARR_ERR_STORAGE_IO`, never a cut listing); and any `aws_*`, `google_*` or `azure_*` key of the object_store crate (e.g.
/// `"azure_storage_use_emulator": true`).
///
/// Credentials, when the options give none: S3 reads the `AWS_*` environment variables
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
/// `AWS_ENDPOINT_URL`, ...), then the profile named by `AWS_PROFILE` (else `default`) in
/// `~/.aws/credentials` and `~/.aws/config` (or `AWS_SHARED_CREDENTIALS_FILE`,
/// `AWS_CONFIG_FILE`), then instance or container metadata; GCS reads
/// `GOOGLE_APPLICATION_CREDENTIALS` and the `GOOGLE_*` variables; Azure the `AZURE_STORAGE_*`
/// variables. Opening sends no request: a missing bucket shows at the first read
/// (`ZARR_ERR_NOT_FOUND`, naming it). Errors name the URL and key and the HTTP status,
/// never a secret: URLs in messages lose their user information and query values, and of
/// a server's error body only its code and message are kept. Every request has a timeout.
/// Redirects are followed only to the same scheme, host and port (credentials never go to
/// another host); one elsewhere gives `ZARR_ERR_STORAGE_IO` naming its status. A server
/// that ignores `Range` costs no more memory than the bytes asked for. Listings must come
/// in key order: a server repeating keys or continuation tokens gives
/// `ZARR_ERR_STORAGE_IO`; keys that cannot be keys of a store (`data//x`) are skipped. A value is written with one PUT (or one
/// multipart upload): readers see the old or the new object, never a mix; a PUT is durable
/// when it returns, so every `zarr_durability` level is accepted. Updates of one object by
/// several writers at once may be lost (the last PUT wins) unless the array's synchronizer is
/// `ZARR_SYNC_VERSIONED` (ETag-checked conditional writes); mode `ZARR_MODE_W_MINUS` creates
/// with a conditional PUT, so of several creators exactly one succeeds.
///
/// `icechunk:///PATH` opens the Icechunk repository in the directory PATH, and
/// `icechunk+s3://BUCKET/PREFIX` the one at a prefix on S3 (builds with
/// `ZARR_HAS_ICECHUNK`; options `endpoint`, `region`, `access_key_id`,
/// `secret_access_key`, `session_token`, `allow_http`, `anonymous`, as for `s3://`): queries `?branch=NAME` (default `main`), `?tag=NAME` or
/// `?snapshot=ID` say where in its history. `ZARR_MODE_R` reads (a tag and a snapshot
/// open in this mode only); the other modes write to the branch, `ZARR_MODE_R_PLUS` needing
/// the repository to exist, `ZARR_MODE_A`, `ZARR_MODE_W` and `ZARR_MODE_W_MINUS` creating
/// it in a missing or empty directory or prefix (nothing is erased). What is written stays invisible
/// to every other reader until `zarr_store_commit`; a store freed without a commit commits
/// nothing. Icechunk holds Zarr v3 only: v2 metadata is refused with
/// `ZARR_ERR_UNSUPPORTED`. A missing repository, branch, tag or snapshot gives
/// `ZARR_ERR_NOT_FOUND` naming it; no options apply to local repositories.
///
/// `reference:///PATH` opens the kerchunk reference file (JSON, version 0 or 1) at the
/// absolute path PATH as a read-only store (`ZARR_MODE_R` only; other modes give
/// `ZARR_ERR_READ_ONLY`; `reference:relative/path` gives `ZARR_ERR_INVALID_ARG`): each key
/// is bytes held in the file or a byte range of a local file it names (netCDF-4, HDF5 and
/// netCDF-3 archives read as Zarr without being copied). A reference may point only beneath
/// the reference file's own directory (held from when the store opens; a reference file in
/// `/` needs the option, else `ZARR_ERR_INVALID_ARG`); option `allowed_targets`, a list of
/// absolute directories (`{"allowed_targets": ["/data/archive"]}`), allows those too. A
/// relative target is relative to the reference file's directory. A reference elsewhere
/// (another directory, a `..` component, a symbolic link leading out of the directory it is
/// named in) gives `ZARR_ERR_INVALID_KEY` when read or sized, naming the key and the
/// target; one on another host (`s3://`, `http://`, ...) gives `ZARR_ERR_UNSUPPORTED` (not
/// supported yet); a range past the end of its file gives `ZARR_ERR_STORAGE_IO`. A malformed
/// reference file, or one past the limits (512 MiB of JSON, 4 million references, 10000
/// templates and 10000 `gen` entries, keys and URLs of 4096 bytes), gives
/// `ZARR_ERR_METADATA` when opened (`ZARR_ERR_INVALID_KEY` for a key that is not a normal
/// key, `ZARR_ERR_UNSUPPORTED` for templates that take arguments).
///
/// A build without object stores (see `zarr_features`) gives `ZARR_ERR_UNSUPPORTED` for
/// their URLs; an unknown scheme or malformed URL gives `ZARR_ERR_INVALID_ARG`.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (an unknown scheme, a malformed URL, an option the store
/// kind does not use), `ZARR_ERR_UNSUPPORTED` (a store kind this build lacks),
/// `ZARR_ERR_READ_ONLY` (`http(s)://` with a mode that writes), and those of
/// `zarr_store_open_fs` and `zarr_store_open_zip` for their URLs.
///
/// Ownership: the URL and options are copied. `*out_store` is a new handle: free it with
/// `zarr_store_free`.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_open_url(
    url: *const c_char,
    mode: zarr_mode_t,
    options_json: *const c_char,
    out_store: *mut *mut zarr_store_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_store, "out_store")?;
        let url = c_str(url, "url")?;
        let mode = super::mode(mode)?;
        let options = if options_json.is_null() {
            None
        } else {
            Some(c_str(options_json, "options_json")?)
        };
        let store = crate::store::open_url(url, mode, options)?;
        give_store(out_store, store);
        Ok(())
    })
}

/// Finishes pending work and reports its errors; the store stays usable. It first waits
/// until no non-blocking request of the process is in flight (their errors stay with the
/// requests). A directory store
/// is flushed as `zarr_store_flush` does. For a zip written through the handle, the new
/// archive's central directory is written, the file synced to disk and atomically renamed
/// over the zip's path: a crash before the rename leaves the old archive, after it the new
/// one. If closing fails, the zip at the path is as it was and the entries written through
/// the handle are lost. A no-op for memory stores.
///
/// Errors: `ZARR_ERR_STORAGE_IO` (the zip or a sync failed).
///
/// Ownership: the handle stays the caller's: free it with `zarr_store_free`.
///
/// Thread safety: any thread, once writes through the store are done (a zip write after
/// closing starts a new archive).
#[no_mangle]
pub unsafe extern "C" fn zarr_store_close(store: *const zarr_store_t) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        crate::node::pending::wait_all_requests();
        Ok(store.inner.close()?)
    })
}

/// Sets how much of what the store writes survives a crash (see `zarr_durability`).
/// Directory stores accept every level; memory and zip stores accept only
/// `ZARR_DURABILITY_NONE` and give `ZARR_ERR_UNSUPPORTED` for the others, since they cannot
/// sync what they write. Lowering the level keeps what is still to be flushed.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (an unknown level), `ZARR_ERR_UNSUPPORTED` (see above).
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread; writes running meanwhile are synced at the old or the new
/// level.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_set_durability(
    store: *const zarr_store_t,
    level: zarr_durability_t,
) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        Ok(store.inner.set_durability(durability(level)?)?)
    })
}

/// Syncs what the handle wrote since its last flush (under `ZARR_DURABILITY_FLUSH`: each
/// file written and each directory whose entries changed), so it survives a power loss;
/// the first failure is reported, after every file was tried. A no-op for other levels and
/// for memory and zip stores. It first waits until no non-blocking request of the process
/// is in flight (their errors stay with the requests).
///
/// Errors: `ZARR_ERR_STORAGE_IO` (the first file or directory that failed).
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread; writes finishing meanwhile may be left to the next flush.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_flush(store: *const zarr_store_t) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        crate::node::pending::wait_all_requests();
        Ok(store.inner.flush()?)
    })
}

/// Creates an empty in-memory store.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: `*out_store` is a new handle: free it with `zarr_store_free`.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_new_memory(out_store: *mut *mut zarr_store_t) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_store, "out_store")?;
        give_store(out_store, Arc::new(MemoryStore::new()));
        Ok(())
    })
}

/// Releases a store handle (NULL is ignored), once no non-blocking request of the process
/// is in flight, flushing it first as `zarr_store_flush` does;
/// a flush error cannot be reported here: call `zarr_store_close` first to see it. Arrays
/// opened from it stay usable; what they write afterwards is flushed when the last of them
/// is freed.
///
/// An Icechunk repository's uncommitted writes are dropped, never committed.
///
/// Errors: none: it returns a value, never a status. A flush error is lost (see above).
///
/// Ownership: takes the handle (NULL is ignored); arrays and groups opened from it keep the
/// store alive.
///
/// Thread safety: any thread, once no other call is using the handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_free(store: *mut zarr_store_t) {
    ffi_guard!(() => {
        if !store.is_null() {
            let store = Box::from_raw(store);
            crate::node::pending::wait_all_requests();
            let _ = store.inner.flush();
        }
    })
}

/// Stores `len` bytes at `key`, replacing any value.
///
/// Errors: `ZARR_ERR_READ_ONLY`, `ZARR_ERR_INVALID_KEY`, `ZARR_ERR_EXISTS` (a zip key
/// written before).
///
/// Ownership: `value` is copied.
///
/// Thread safety: any thread; of writes of one key at once, the last one wins.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_set(
    store: *const zarr_store_t,
    key: *const c_char,
    value: *const c_void,
    len: usize,
) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        let key = c_str(key, "key")?;
        let value = slice(value as *const u8, len, "value")?;
        Ok(store.inner.set(key, value)?)
    })
}

/// Copies the value at `key` into `buf`. `*needed` (may be NULL) gets its size; a buffer
/// too small gives `ZARR_ERR_BUFFER_SIZE` and nothing is copied. A missing key gives
/// `ZARR_ERR_NOT_FOUND`. The size is asked of the store first (a HEAD request on object
/// stores), so a value too large for `buf` is measured, never read; a fitting value is read
/// with `len` as its limit, so a value that grew past `len` meanwhile is refused the same
/// way (`*needed` its new size) and no more than `len` bytes of it are held.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such key), `ZARR_ERR_BUFFER_SIZE` (`len` too small;
/// `*needed` is set), `ZARR_ERR_INVALID_KEY`.
///
/// Ownership: the value is copied into the caller's `buf`.
///
/// Thread safety: any thread; a value is read whole, old or new.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_get(
    store: *const zarr_store_t,
    key: *const c_char,
    buf: *mut c_void,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let store = &store_ref(store)?.inner;
        let key = c_str(key, "key")?;
        let missing = || Failure::from(crate::Error::NotFound(format!("no key {key:?}")));
        let too_small = |size: u64| {
            if let Some(n) = needed.as_mut() {
                *n = usize::try_from(size).unwrap_or(usize::MAX);
            }
            Failure::new(
                ZARR_ERR_BUFFER_SIZE,
                format!("the value of {key:?} has {size} bytes but the buffer has {len}"),
            )
        };
        let size = store.size(key)?.ok_or_else(missing)?;
        if size > len as u64 {
            return Err(too_small(size));
        }
        let mut value = Vec::new();
        match store.get_into(key, &mut value, len as u64) {
            Ok(true) => {}
            Ok(false) => return Err(missing()),
            // Grown past the buffer since its size was asked.
            Err(e) => match store.size(key)? {
                Some(size) if size > len as u64 => return Err(too_small(size)),
                _ => return Err(e.into()),
            },
        }
        if let Some(n) = needed.as_mut() {
            *n = value.len();
        }
        slice_mut(buf as *mut u8, value.len(), "buf")?.copy_from_slice(&value);
        Ok(())
    })
}

/// Sets `*out_exists` to whether `key` exists.
///
/// Errors: `ZARR_ERR_INVALID_KEY`.
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_contains(
    store: *const zarr_store_t,
    key: *const c_char,
    out_exists: *mut bool,
) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        let key = c_str(key, "key")?;
        let out_exists = out(out_exists, "out_exists")?;
        *out_exists = store.inner.contains(key)?;
        Ok(())
    })
}

/// Removes `key`; `ZARR_ERR_NOT_FOUND` if it does not exist.
///
/// Errors: `ZARR_ERR_NOT_FOUND` (no such key), `ZARR_ERR_READ_ONLY`,
/// `ZARR_ERR_INVALID_KEY`, `ZARR_ERR_UNSUPPORTED` (a zip entry).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_erase(
    store: *const zarr_store_t,
    key: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        let key = c_str(key, "key")?;
        if !store.inner.erase(key)? {
            return Err(crate::Error::NotFound(format!("no key {key:?}")).into());
        }
        Ok(())
    })
}

/// Removes every key starting with `prefix` ("" erases everything).
///
/// Errors: `ZARR_ERR_READ_ONLY`, `ZARR_ERR_INVALID_KEY`, `ZARR_ERR_UNSUPPORTED` (zip
/// entries).
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; keys written meanwhile under `prefix` may stay.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_erase_prefix(
    store: *const zarr_store_t,
    prefix: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let store = store_ref(store)?;
        let prefix = c_str(prefix, "prefix")?;
        Ok(store.inner.erase_prefix(prefix)?)
    })
}

/// Lists every key starting with `prefix`, sorted, into a new string list.
///
/// Errors: `ZARR_ERR_INVALID_KEY`, `ZARR_ERR_UNSUPPORTED` (a store that cannot list, such
/// as a plain web server).
///
/// Ownership: `*out_keys` is a new list: free it with `zarr_strings_free`.
///
/// Thread safety: any thread, at the same time as any other call; the store is listed as it
/// is then.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_list(
    store: *const zarr_store_t,
    prefix: *const c_char,
    out_keys: *mut *mut zarr_strings_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_keys, "out_keys")?;
        let store = store_ref(store)?;
        let prefix = c_str(prefix, "prefix")?;
        give(out_keys, strings(store.inner.list_prefix(prefix)?));
        Ok(())
    })
}

/// Lists one level below `prefix` ("" or ending in "/"): the keys directly under it and the
/// child prefixes (names without "/"), each sorted, into two new string lists.
///
/// Errors: as `zarr_store_list`.
///
/// Ownership: `*out_keys` and `*out_prefixes` are new lists: free each with
/// `zarr_strings_free`.
///
/// Thread safety: any thread, at the same time as any other call; the store is listed as it
/// is then.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_list_dir(
    store: *const zarr_store_t,
    prefix: *const c_char,
    out_keys: *mut *mut zarr_strings_t,
    out_prefixes: *mut *mut zarr_strings_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_keys, "out_keys")?;
        clear_out(out_prefixes, "out_prefixes")?;
        let store = store_ref(store)?;
        let prefix = c_str(prefix, "prefix")?;
        let listing = store.inner.list_dir(prefix)?;
        give(out_keys, strings(listing.keys));
        give(out_prefixes, strings(listing.prefixes));
        Ok(())
    })
}

/// Number of strings in a list (0 for NULL).
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_strings_count(list: *const zarr_strings_t) -> usize {
    ffi_guard!(0 => { list.as_ref().map(|l| l.items.len()).unwrap_or(0) })
}

/// String `index` of a list, valid until the list is freed; NULL when out of range, and
/// for a null item (only lists of dimension names have them: an unnamed dimension).
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: the string belongs to the list: never free it, nor use it after
/// `zarr_strings_free`.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_strings_get(
    list: *const zarr_strings_t,
    index: usize,
) -> *const c_char {
    ffi_guard!(std::ptr::null() => {
        list.as_ref()
            .and_then(|l| l.items.get(index))
            .and_then(|s| s.as_ref())
            .map(|s| s.as_ptr())
            .unwrap_or(std::ptr::null())
    })
}

/// Frees a string list (NULL is ignored).
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: takes the list (NULL is ignored) and every string it gave.
///
/// Thread safety: any thread, once no other call is using the handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_strings_free(list: *mut zarr_strings_t) {
    ffi_guard!(() => {
        if !list.is_null() {
            drop(Box::from_raw(list));
        }
    })
}
