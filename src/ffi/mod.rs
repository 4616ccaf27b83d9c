//! The C ABI: opaque handles, status codes, the thread's last error, and one panic guard
//! around every exported function. No logic lives here: each function checks its
//! pointers, converts its arguments, calls one core function and maps the result.

//!
//! # Safety
//! Every exported function has the same contract, stated once in the header's Conventions:
//! pointers are NULL or valid for the lengths given, handles come from this library and are
//! not used after being freed. Every call runs inside the call gate (`io::gate`), so that a
//! `fork()` waits until no call holds a lock and a child can use its parent's handles.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

mod array;
mod attrs;
mod builder;
mod commits;
mod encoded;
mod general;
mod group;
mod request;
mod store;
mod types;

use crate::error::Error;
use std::cell::RefCell;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

pub use array::*;
pub use builder::*;
pub use commits::*;
pub use encoded::*;
pub use general::*;
pub use group::*;
pub use request::*;
pub use store::*;

/// Status codes returned by every fallible function. Values never change or get reused.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum zarr_status {
    /// Success.
    ZARR_OK = 0,
    /// A required pointer argument was NULL.
    ZARR_ERR_NULL_ARG = -1,
    /// An argument was malformed or out of range (including unknown enum values).
    ZARR_ERR_INVALID_ARG = -2,
    /// `ndim` did not match the array's rank.
    ZARR_ERR_RANK_MISMATCH = -3,
    /// A region or index lay outside the array.
    ZARR_ERR_OUT_OF_BOUNDS = -4,
    /// The memory data type did not match the array's.
    ZARR_ERR_DTYPE_MISMATCH = -5,
    /// A buffer had the wrong size (or an output buffer was too small; see `needed`).
    ZARR_ERR_BUFFER_SIZE = -6,
    /// A node or key does not exist.
    ZARR_ERR_NOT_FOUND = -7,
    /// A node exists where none may be.
    ZARR_ERR_EXISTS = -8,
    /// A metadata document is malformed.
    ZARR_ERR_METADATA = -9,
    /// A codec is not supported by this build.
    ZARR_ERR_CODEC_UNSUPPORTED = -10,
    /// Encoding or decoding a chunk failed.
    ZARR_ERR_CODEC = -11,
    /// The storage backend failed.
    ZARR_ERR_STORAGE_IO = -12,
    /// A write through a read-only handle or store.
    ZARR_ERR_READ_ONLY = -13,
    /// A valid feature that this build does not implement.
    ZARR_ERR_UNSUPPORTED = -14,
    /// libzarr panicked; the message says where. The handle used is now poisoned.
    ZARR_ERR_PANIC = -15,
    /// The handle was poisoned by an earlier panic.
    ZARR_ERR_POISONED = -16,
    /// An internal invariant broke (a bug in libzarr).
    ZARR_ERR_INTERNAL = -17,
    /// A store key or node path is malformed or would escape the store.
    ZARR_ERR_INVALID_KEY = -18,
    /// Size arithmetic overflowed 64 bits.
    ZARR_ERR_OVERFLOW = -19,
    /// The node at a path is of the other kind (an array where a group was expected, or
    /// the reverse).
    ZARR_ERR_NODE_TYPE = -20,
    /// A buffer could not be allocated (the process is short of memory or address space).
    ZARR_ERR_NO_MEMORY = -21,
    /// Some values did not fit the element type they were converted to (as netCDF's
    /// `NC_ERANGE`); what the call did with the others is in its documentation.
    ZARR_ERR_RANGE = -22,
    /// Another writer was first: a commit or rebase of an Icechunk repository met another
    /// writer's commit on the branch (nothing was committed; `zarr_store_rebase`, then
    /// commit again), or another handle or process holds the array's append lock (nothing
    /// was appended or resized; see `zarr_array_set_append_lock`).
    ZARR_ERR_CONFLICT = -23,
}

/// A status code: one of the `zarr_status` values.
pub type zarr_status_t = i32;

use zarr_status::*;

/// Element types of the data path. Values never change or get reused.
#[repr(i32)]
#[derive(Debug, Clone, Copy)]
pub enum zarr_dtype {
    /// bool (1 byte, 0 or 1).
    ZARR_DTYPE_BOOL = 1,
    /// int8_t.
    ZARR_DTYPE_INT8 = 2,
    /// int16_t.
    ZARR_DTYPE_INT16 = 3,
    /// int32_t.
    ZARR_DTYPE_INT32 = 4,
    /// int64_t; also the memory type of datetime64 and timedelta64 arrays.
    ZARR_DTYPE_INT64 = 5,
    /// uint8_t.
    ZARR_DTYPE_UINT8 = 6,
    /// uint16_t.
    ZARR_DTYPE_UINT16 = 7,
    /// uint32_t.
    ZARR_DTYPE_UINT32 = 8,
    /// uint64_t.
    ZARR_DTYPE_UINT64 = 9,
    /// IEEE 754 half precision, moved as its 16 bits.
    ZARR_DTYPE_FLOAT16 = 10,
    /// float.
    ZARR_DTYPE_FLOAT32 = 11,
    /// double.
    ZARR_DTYPE_FLOAT64 = 12,
    /// Two floats (real, imaginary), as C `float complex`.
    ZARR_DTYPE_COMPLEX64 = 13,
    /// Two doubles (real, imaginary), as C `double complex`.
    ZARR_DTYPE_COMPLEX128 = 14,
    /// Raw item bytes, `zarr_array_item_size` bytes each: fixed-width byte strings (`S`),
    /// unicode strings (`U`, UTF-32 code units in native byte order), void (`V`, `r*`) and
    /// structured records (fields in their stored byte order; see `zarr_array_field_layout`).
    ZARR_DTYPE_RAW = 15,
    /// Variable-length UTF-8 strings: read and written with the `zarr_array_*_vlen` calls.
    ZARR_DTYPE_STRING = 16,
    /// Variable-length bytes or numeric arrays: read and written with the
    /// `zarr_array_*_vlen` calls.
    ZARR_DTYPE_BYTES = 17,
    /// bfloat16 (1 sign, 8 exponent, 7 mantissa bits), moved as its 16 bits (`uint16_t`);
    /// a bfloat16 array is also read and written as `ZARR_DTYPE_FLOAT32` (exact widening;
    /// narrowing rounds to nearest, ties to even).
    ZARR_DTYPE_BFLOAT16 = 18,
    /// float8_e4m3 (IEEE-like: infinities, NaN), moved as its byte.
    ZARR_DTYPE_FLOAT8_E4M3 = 19,
    /// float8_e4m3fn (no infinity; NaN 0x7f/0xff), moved as its byte.
    ZARR_DTYPE_FLOAT8_E4M3FN = 20,
    /// float8_e4m3fnuz (bias 8; NaN 0x80, no negative zero), moved as its byte.
    ZARR_DTYPE_FLOAT8_E4M3FNUZ = 21,
    /// float8_e4m3b11fnuz (bias 11; NaN 0x80), moved as its byte.
    ZARR_DTYPE_FLOAT8_E4M3B11FNUZ = 22,
    /// float8_e5m2 (IEEE-like), moved as its byte.
    ZARR_DTYPE_FLOAT8_E5M2 = 23,
    /// float8_e5m2fnuz (bias 16; NaN 0x80), moved as its byte.
    ZARR_DTYPE_FLOAT8_E5M2FNUZ = 24,
    /// float8_e3m4 (IEEE-like), moved as its byte.
    ZARR_DTYPE_FLOAT8_E3M4 = 25,
    /// float8_e8m0fnu (unsigned powers of two; NaN 0xff), moved as its byte.
    ZARR_DTYPE_FLOAT8_E8M0FNU = 26,
    /// float6_e2m3fn, one byte holding the value in its low 6 bits (the others 0).
    ZARR_DTYPE_FLOAT6_E2M3FN = 27,
    /// float6_e3m2fn, one byte holding the value in its low 6 bits (the others 0).
    ZARR_DTYPE_FLOAT6_E3M2FN = 28,
    /// float4_e2m1fn, one byte holding the value in its low 4 bits (the others 0).
    ZARR_DTYPE_FLOAT4_E2M1FN = 29,
    /// int2 as `int8_t` (-2..1); other values are refused on write.
    ZARR_DTYPE_INT2 = 30,
    /// int4 as `int8_t` (-8..7); other values are refused on write.
    ZARR_DTYPE_INT4 = 31,
    /// uint2 as `uint8_t` (0..3); other values are refused on write.
    ZARR_DTYPE_UINT2 = 32,
    /// uint4 as `uint8_t` (0..15); other values are refused on write.
    ZARR_DTYPE_UINT4 = 33,
}

/// An element type: one of the `zarr_dtype` values, passed as an integer.
pub type zarr_dtype_t = i32;

/// What an attribute holds, as `zarr_array_attr_kind` and `zarr_group_attr_kind` report.
/// Values never change or get reused.
#[repr(i32)]
#[derive(Debug, Clone, Copy)]
pub enum zarr_attr_kind {
    /// A string.
    ZARR_ATTR_STRING = 1,
    /// An integer (a JSON number without fraction or exponent).
    ZARR_ATTR_INTEGER = 2,
    /// Any other number.
    ZARR_ATTR_FLOAT = 3,
    /// A non-empty list of strings.
    ZARR_ATTR_STRINGS = 4,
    /// A non-empty list of integers.
    ZARR_ATTR_INTEGERS = 5,
    /// A non-empty list of numbers, some not integers.
    ZARR_ATTR_FLOATS = 6,
    /// Any other JSON: null, a bool, an object, an empty or mixed list.
    ZARR_ATTR_OTHER = 7,
}

/// An attribute kind: one of the `zarr_attr_kind` values.
pub type zarr_attr_kind_t = i32;

/// Element order of a buffer in memory.
#[repr(i32)]
#[derive(Debug, Clone, Copy)]
pub enum zarr_order {
    /// Row-major: the last dimension varies fastest.
    ZARR_ORDER_C = 0,
    /// Column-major: the first dimension varies fastest.
    ZARR_ORDER_F = 1,
}

/// A memory order: one of the `zarr_order` values, passed as an integer.
pub type zarr_order_t = i32;

/// How an array's chunk grid is laid out.
#[repr(i32)]
#[derive(Debug, Clone, Copy)]
pub enum zarr_chunk_grid {
    /// Every chunk has the chunk shape (the last ones clipped by the array's shape).
    ZARR_CHUNK_GRID_REGULAR = 0,
    /// Chunk edge lengths per dimension (Zarr v3's `rectilinear` chunk grid).
    ZARR_CHUNK_GRID_RECTILINEAR = 1,
}

/// A chunk grid kind: one of the `zarr_chunk_grid` values.
pub type zarr_chunk_grid_t = i32;

/// How concurrent writers of one array are synchronised.
#[repr(i32)]
#[derive(Debug, Clone, Copy)]
pub enum zarr_sync {
    /// No locking: no two writers may touch one chunk.
    ZARR_SYNC_NONE = 0,
    /// Per-chunk locks inside this process, shared by every handle on the array.
    ZARR_SYNC_THREAD = 1,
    /// Per-chunk lock files in a directory shared by all writing processes.
    ZARR_SYNC_PROCESS = 2,
    /// Conditional writes checked against the version read (ETags on object stores).
    ZARR_SYNC_VERSIONED = 3,
}

/// A synchronization kind: one of the `zarr_sync` values.
pub type zarr_sync_t = i32;

/// How stores and nodes are opened, as zarr-python's mode strings.
#[repr(i32)]
#[derive(Debug, Clone, Copy)]
pub enum zarr_mode {
    /// "r": read only; must exist.
    ZARR_MODE_R = 0,
    /// "r+": read and write; must exist.
    ZARR_MODE_R_PLUS = 1,
    /// "a": read and write; created if missing.
    ZARR_MODE_A = 2,
    /// "w": created, replacing what is there.
    ZARR_MODE_W = 3,
    /// "w-": created; fails if something is there.
    ZARR_MODE_W_MINUS = 4,
}

/// An open mode: one of the `zarr_mode` values, passed as an integer.
pub type zarr_mode_t = i32;

/// Major version of libzarr.
pub const ZARR_VERSION_MAJOR: u32 = 0;
/// Minor version of libzarr.
pub const ZARR_VERSION_MINOR: u32 = 1;
/// Patch version of libzarr.
pub const ZARR_VERSION_PATCH: u32 = 0;
/// MAJOR * 1000000 + MINOR * 1000 + PATCH.
pub const ZARR_VERSION_NUMBER: u32 = 1000;
/// The soname major version: `libzarr.so.N` where N is this number.
pub const ZARR_ABI_VERSION: u32 = 0;

/// The most bytes of encoded inner chunks an array handle keeps buffered between
/// `zarr_array_append` calls to a sharded array (256 MiB). Past it, after an append, the
/// handle stores its open shards and drops them from memory, and a later append reads a
/// shard it continues back once. Memory per handle is this much compressed data, plus
/// 24 bytes per inner chunk of each open shard, plus (during a call) the step's own
/// encoded chunks.
pub const ZARR_APPEND_BUFFER_BYTES: u32 = 256 << 20;

/// `zarr_features()` bit: zip files as stores (every build).
pub const ZARR_HAS_ZIP: u32 = 1;
/// `zarr_features()` bit: `s3://` stores (S3 and S3-compatible servers).
pub const ZARR_HAS_S3: u32 = 2;
/// `zarr_features()` bit: `gs://` stores (Google Cloud Storage).
pub const ZARR_HAS_GCS: u32 = 4;
/// `zarr_features()` bit: `az://` and `abfs://` stores (Azure Blob Storage).
pub const ZARR_HAS_AZURE: u32 = 8;
/// `zarr_features()` bit: read-only `http://` and `https://` stores.
pub const ZARR_HAS_HTTP: u32 = 16;
/// `zarr_features()` bit: the zfp codecs (Zarr v3 `zfp`, numcodecs `zfpy`).
pub const ZARR_HAS_ZFP: u32 = 32;
/// `zarr_features()` bit: the pcodec codec (numcodecs `pcodec`, Zarr v3 `numcodecs.pcodec`).
pub const ZARR_HAS_PCODEC: u32 = 64;
/// `zarr_features()` bit: Icechunk repositories as stores (`icechunk:///PATH` URLs and
/// the commit, branch and tag calls).
pub const ZARR_HAS_ICECHUNK: u32 = 128;

/// Zarr format number of the 2022 draft of v3 in the draft's own layout: a `zarr.json`
/// entry point, `meta/PATH.array.json` and `meta/PATH.group.json` documents, chunks
/// at `data/PATH/c0/1`. Accepted by `zarr_array_builder_set_zarr_format` and
/// `zarr_group_create`; reported by `zarr_array_zarr_format` and `zarr_group_zarr_format`.
pub const ZARR_FORMAT_V3_DRAFT: i32 = 30;

/// Zarr format number of the 2022 draft of v3 in zarr-python 2.18's layout (its
/// experimental v3): `meta/root/PATH.array.json`, chunks at `data/root/PATH/c0/1`, its
/// own `zarr_format` URI and one `compressor`.
pub const ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON: i32 = 31;

/// A failed call: the status it returns and the message stored as the last error.
#[derive(Debug)]
pub(crate) struct Failure {
    status: zarr_status,
    message: String,
}

impl Failure {
    pub(crate) fn new(status: zarr_status, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn null(arg: &str) -> Self {
        Failure::new(ZARR_ERR_NULL_ARG, format!("argument {arg} is NULL"))
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Failure::new(ZARR_ERR_INVALID_ARG, message)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let status = match &e {
            Error::InvalidArg(_) => ZARR_ERR_INVALID_ARG,
            Error::RankMismatch(_) => ZARR_ERR_RANK_MISMATCH,
            Error::OutOfBounds(_) => ZARR_ERR_OUT_OF_BOUNDS,
            Error::DtypeMismatch(_) => ZARR_ERR_DTYPE_MISMATCH,
            Error::BufferSize(_) => ZARR_ERR_BUFFER_SIZE,
            Error::NotFound(_) => ZARR_ERR_NOT_FOUND,
            Error::Exists(_) => ZARR_ERR_EXISTS,
            Error::Metadata(_) => ZARR_ERR_METADATA,
            Error::CodecUnsupported(_) => ZARR_ERR_CODEC_UNSUPPORTED,
            Error::Codec(_) => ZARR_ERR_CODEC,
            Error::Io(_) => ZARR_ERR_STORAGE_IO,
            Error::ReadOnly(_) => ZARR_ERR_READ_ONLY,
            Error::Unsupported(_) => ZARR_ERR_UNSUPPORTED,
            Error::InvalidKey(_) => ZARR_ERR_INVALID_KEY,
            Error::Overflow(_) => ZARR_ERR_OVERFLOW,
            Error::NodeType(_) => ZARR_ERR_NODE_TYPE,
            Error::NoMemory(_) => ZARR_ERR_NO_MEMORY,
            Error::Range(_) => ZARR_ERR_RANGE,
            Error::Conflict(_) => ZARR_ERR_CONFLICT,
            Error::Internal(_) => ZARR_ERR_INTERNAL,
        };
        Failure::new(status, e.to_string())
    }
}

/// The outcome of an exported function's body.
pub(crate) type FfiResult<T = ()> = std::result::Result<T, Failure>;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_last_error(message: &str) {
    LAST_ERROR.with(|e| {
        let mut e = e.borrow_mut();
        e.clear();
        e.push_str(message);
    });
}

pub(crate) fn last_error() -> String {
    LAST_ERROR.with(|e| e.borrow().clone())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    format!("libzarr panicked: {}", crate::error::panic_text(payload))
}

/// Keeps panics quiet: the C caller gets `ZARR_ERR_PANIC` and the message through
/// `zarr_last_error`; the default report on stderr appears only when `ZARR_LOG` is set.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::env::var_os("ZARR_LOG").is_some() {
                previous(info);
            }
        }));
    });
}

/// Runs an exported function's body inside the call gate (`io::gate`: a `fork()` waits
/// until no call is running): catches panics, maps failures to a status and stores their
/// message as the thread's last error.
pub(crate) fn guard(body: impl FnOnce() -> FfiResult) -> zarr_status_t {
    quiet_panics();
    let _inside = crate::io::gate::enter();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ZARR_OK as i32,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.status as i32
        }
        Err(payload) => {
            set_last_error(&panic_message(payload.as_ref()));
            ZARR_ERR_PANIC as i32
        }
    }
}

/// Like [`guard`] for functions that return a value rather than a status: a panic
/// returns `fallback`.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    quiet_panics();
    let _inside = crate::io::gate::enter();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            set_last_error(&panic_message(payload.as_ref()));
            fallback
        }
    }
}

/// The one entry to an exported function's body. `ffi_guard!({ ... })` returns a status;
/// `ffi_guard!(fallback => { ... })` returns the body's value, or `fallback` on panic.
macro_rules! ffi_guard {
    ($fallback:expr => $body:block) => {
        $crate::ffi::guard_value($fallback, || $body)
    };
    ($body:block) => {
        $crate::ffi::guard(|| $body)
    };
}
pub(crate) use ffi_guard;

/// A handle's poisoned flag: set when a call on the handle panicked.
#[derive(Debug, Default)]
pub(crate) struct Poison(AtomicBool);

impl Poison {
    /// Runs `f` unless poisoned; a panic inside poisons the handle and keeps unwinding to
    /// the guard.
    pub(crate) fn run<T>(&self, f: impl FnOnce() -> FfiResult<T>) -> FfiResult<T> {
        if self.0.load(Ordering::Acquire) {
            return Err(Failure::new(
                ZARR_ERR_POISONED,
                "the handle was poisoned by an earlier panic",
            ));
        }
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(result) => result,
            Err(payload) => {
                self.0.store(true, Ordering::Release);
                std::panic::resume_unwind(payload)
            }
        }
    }
}

/// A borrowed C string argument as UTF-8.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char, arg: &str) -> FfiResult<&'a str> {
    if ptr.is_null() {
        return Err(Failure::null(arg));
    }
    CStr::from_ptr(ptr)
        .to_str()
        .map_err(|_| Failure::invalid(format!("argument {arg} is not valid UTF-8")))
}

/// Refuses a length of `len` items of `T` that no buffer can have (more than `isize::MAX`
/// bytes): such a length is a caller's mistake, not the size of its memory.
fn check_len<T>(len: usize, arg: &str) -> FfiResult {
    match len.checked_mul(std::mem::size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(()),
        _ => Err(Failure::new(
            ZARR_ERR_BUFFER_SIZE,
            format!("argument {arg}: {len} items are more than any buffer can hold"),
        )),
    }
}

/// A borrowed array argument of `len` items; NULL is allowed only when `len` is 0.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: usize, arg: &str) -> FfiResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::null(arg));
    }
    check_len::<T>(len, arg)?;
    Ok(std::slice::from_raw_parts(ptr, len))
}

/// A borrowed mutable buffer of `len` items; NULL is allowed only when `len` is 0.
pub(crate) unsafe fn slice_mut<'a, T>(
    ptr: *mut T,
    len: usize,
    arg: &str,
) -> FfiResult<&'a mut [T]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(Failure::null(arg));
    }
    check_len::<T>(len, arg)?;
    Ok(std::slice::from_raw_parts_mut(ptr, len))
}

/// A required output pointer.
pub(crate) unsafe fn out<'a, T>(ptr: *mut T, arg: &str) -> FfiResult<&'a mut T> {
    ptr.as_mut().ok_or_else(|| Failure::null(arg))
}

/// Copies `text` into a caller buffer of `len` bytes, NUL-terminated and truncated if it
/// must be; `*needed` (if not NULL) gets the full size including the NUL. Returns
/// `ZARR_ERR_BUFFER_SIZE` when the text did not fit.
pub(crate) unsafe fn write_text(
    text: &str,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> FfiResult {
    let bytes = text.as_bytes();
    if let Some(n) = needed.as_mut() {
        *n = bytes.len() + 1;
    }
    if !buf.is_null() && len > 0 {
        let n = bytes.len().min(len - 1);
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf as *mut u8, n);
        *buf.add(n) = 0;
    }
    if buf.is_null() && len > 0 {
        return Err(Failure::null("buf"));
    }
    if bytes.len() + 1 > len {
        return Err(Failure::new(
            ZARR_ERR_BUFFER_SIZE,
            format!(
                "the output needs {} bytes but the buffer has {len}",
                bytes.len() + 1
            ),
        ));
    }
    Ok(())
}

/// `n` C strings of which any may be NULL (`None`), as a caller's array of pointers.
pub(crate) unsafe fn optional_strings(
    items: *const *const c_char,
    n: usize,
    arg: &str,
) -> FfiResult<Vec<Option<String>>> {
    slice(items, n, arg)?
        .iter()
        .map(|&item| {
            if item.is_null() {
                Ok(None)
            } else {
                c_str(item, &format!("{arg}[i]")).map(|s| Some(s.to_string()))
            }
        })
        .collect()
}

/// Parses a JSON argument.
pub(crate) fn parse_json(text: &str, arg: &str) -> FfiResult<serde_json::Value> {
    crate::meta::json::parse_str(text)
        .map_err(|e| Failure::invalid(format!("argument {arg} is not valid JSON: {e}")))
}

/// Converts an element type code.
pub(crate) fn element_type(code: zarr_dtype_t) -> FfiResult<crate::dtype::ElementType> {
    crate::dtype::ElementType::from_code(code)
        .ok_or_else(|| Failure::invalid(format!("{code} is not a zarr_dtype_t value")))
}

/// Converts a memory order code.
pub(crate) fn order(code: zarr_order_t) -> FfiResult<crate::meta::Order> {
    match code {
        0 => Ok(crate::meta::Order::C),
        1 => Ok(crate::meta::Order::F),
        _ => Err(Failure::invalid(format!(
            "{code} is not a zarr_order_t value"
        ))),
    }
}

/// Converts an open mode code.
pub(crate) fn mode(code: zarr_mode_t) -> FfiResult<crate::node::Mode> {
    crate::node::Mode::from_code(code)
        .ok_or_else(|| Failure::invalid(format!("{code} is not a zarr_mode_t value")))
}

/// Stores a new handle in an output pointer.
pub(crate) unsafe fn give<T>(out_ptr: *mut *mut T, value: T) {
    *out_ptr = Box::into_raw(Box::new(value));
}

/// Sets a handle output pointer to NULL (if it is not NULL itself) before any work, so a
/// failure always leaves NULL there.
pub(crate) unsafe fn clear_out<T>(out_ptr: *mut *mut T, arg: &str) -> FfiResult {
    if out_ptr.is_null() {
        return Err(Failure::null(arg));
    }
    *out_ptr = std::ptr::null_mut();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_poisons_the_handle() {
        let poison = Poison::default();
        let status = guard(|| poison.run(|| -> FfiResult { panic!("boom") }));
        assert_eq!(status, ZARR_ERR_PANIC as i32);
        assert!(last_error().contains("boom"));
        let status = guard(|| poison.run(|| Ok(())));
        assert_eq!(status, ZARR_ERR_POISONED as i32);
    }

    #[test]
    fn every_exported_function_is_guarded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ffi");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for (i, _) in text.match_indices("extern \"C\" fn ") {
                let body_start = i + text[i..].find('{').unwrap();
                let body = text[body_start + 1..].trim_start();
                let name: String = text[i + 14..].chars().take_while(|c| *c != '(').collect();
                assert!(
                    body.starts_with("ffi_guard!("),
                    "{name} is not behind ffi_guard!"
                );
                checked += 1;
            }
        }
        assert!(checked > 50, "only {checked} exported functions found");
    }

    #[test]
    fn status_names_and_versions_agree() {
        assert_eq!(
            ZARR_VERSION_MAJOR.to_string(),
            env!("CARGO_PKG_VERSION_MAJOR")
        );
        assert_eq!(
            ZARR_VERSION_MINOR.to_string(),
            env!("CARGO_PKG_VERSION_MINOR")
        );
        assert_eq!(
            ZARR_VERSION_PATCH.to_string(),
            env!("CARGO_PKG_VERSION_PATCH")
        );
        assert_eq!(
            ZARR_VERSION_NUMBER,
            ZARR_VERSION_MAJOR * 1_000_000 + ZARR_VERSION_MINOR * 1000 + ZARR_VERSION_PATCH
        );
        assert_eq!(ZARR_ABI_VERSION, ZARR_VERSION_MAJOR);
        for code in 1..=zarr_dtype::ZARR_DTYPE_UINT4 as i32 {
            assert_eq!(element_type(code).unwrap() as i32, code);
        }
        assert!(element_type(zarr_dtype::ZARR_DTYPE_UINT4 as i32 + 1).is_err());
    }
}
