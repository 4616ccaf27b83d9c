//! Library-wide calls: status names, the last error, versions, features, threads, dtypes.

use super::*;
use crate::dtype::ElementType;
use std::ffi::c_char;

/// The fixed name of a status code (`"ZARR_ERR_NOT_FOUND"`); never NULL, "ZARR_UNKNOWN_STATUS"
/// for values that are not statuses. The string is static: do not free it.
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: the string is static: never free it.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub extern "C" fn zarr_status_str(status: zarr_status_t) -> *const c_char {
    ffi_guard!(c"ZARR_ERR_PANIC".as_ptr() => {
        let name: &'static std::ffi::CStr = match status {
            0 => c"ZARR_OK",
            -1 => c"ZARR_ERR_NULL_ARG",
            -2 => c"ZARR_ERR_INVALID_ARG",
            -3 => c"ZARR_ERR_RANK_MISMATCH",
            -4 => c"ZARR_ERR_OUT_OF_BOUNDS",
            -5 => c"ZARR_ERR_DTYPE_MISMATCH",
            -6 => c"ZARR_ERR_BUFFER_SIZE",
            -7 => c"ZARR_ERR_NOT_FOUND",
            -8 => c"ZARR_ERR_EXISTS",
            -9 => c"ZARR_ERR_METADATA",
            -10 => c"ZARR_ERR_CODEC_UNSUPPORTED",
            -11 => c"ZARR_ERR_CODEC",
            -12 => c"ZARR_ERR_STORAGE_IO",
            -13 => c"ZARR_ERR_READ_ONLY",
            -14 => c"ZARR_ERR_UNSUPPORTED",
            -15 => c"ZARR_ERR_PANIC",
            -16 => c"ZARR_ERR_POISONED",
            -17 => c"ZARR_ERR_INTERNAL",
            -18 => c"ZARR_ERR_INVALID_KEY",
            -19 => c"ZARR_ERR_OVERFLOW",
            -20 => c"ZARR_ERR_NODE_TYPE",
            -21 => c"ZARR_ERR_NO_MEMORY",
            -22 => c"ZARR_ERR_RANGE",
            -23 => c"ZARR_ERR_CONFLICT",
            _ => c"ZARR_UNKNOWN_STATUS",
        };
        name.as_ptr()
    })
}

/// Copies the calling thread's last error message into `buf` (`len` bytes), always
/// NUL-terminated, truncated if needed; `*needed` (may be NULL) gets the full size with
/// the NUL. Meaningful right after a failing call on the same thread; calling it does not
/// change the message. Returns `ZARR_ERR_BUFFER_SIZE` if the message was truncated (pass
/// `buf = NULL, len = 0` to query the size).
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (the message was truncated), `ZARR_ERR_NULL_ARG` (`buf`
/// NULL with `len` above 0).
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread; each thread has its own last message.
#[no_mangle]
pub unsafe extern "C" fn zarr_last_error(
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!(ZARR_ERR_PANIC as i32 => {
        let message = last_error();
        match write_text(&message, buf, len, needed) {
            Ok(()) => ZARR_OK as i32,
            Err(failure) => failure.status as i32,
        }
    })
}

/// The library version as MAJOR * 1000000 + MINOR * 1000 + PATCH (equals
/// `ZARR_VERSION_NUMBER` when header and library match).
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub extern "C" fn zarr_version_number() -> u32 {
    ffi_guard!(0 => {
        let part = |s: &str| s.parse::<u32>().unwrap_or(0);
        part(env!("CARGO_PKG_VERSION_MAJOR")) * 1_000_000
            + part(env!("CARGO_PKG_VERSION_MINOR")) * 1000
            + part(env!("CARGO_PKG_VERSION_PATCH"))
    })
}

/// The library version as a static string ("0.1.0").
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: the string is static: never free it.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub extern "C" fn zarr_version_string() -> *const c_char {
    ffi_guard!(c"".as_ptr() => {
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
    })
}

/// Whether this build supports the codec or filter `id` ("blosc", "zstd", "delta", …, and
/// the Zarr v3 array codecs registered in zarr-extensions: "scale_offset", "cast_value",
/// "bitround", "reshape"); false for NULL.
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_codec_supported(id: *const c_char) -> bool {
    ffi_guard!(false => {
        c_str(id, "id")
            .map(|id| {
                crate::codec::SUPPORTED.contains(&id)
                    || crate::codec::TYPED.contains(&id)
                    || crate::codec::filter::SUPPORTED.contains(&id)
                    || crate::codec::filter::REGISTERED.contains(&id)
            })
            .unwrap_or(false)
    })
}

/// What this build has, as a bit set of `ZARR_HAS_*` values: test with
/// `zarr_features() & ZARR_HAS_S3`. The header is the same for every build (all calls are
/// declared); a store kind missing from the set makes `zarr_store_open_url` give
/// `ZARR_ERR_UNSUPPORTED`.
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub extern "C" fn zarr_features() -> u32 {
    ffi_guard!(0 => {
        let cloud = if cfg!(feature = "cloud") {
            ZARR_HAS_S3 | ZARR_HAS_GCS | ZARR_HAS_AZURE | ZARR_HAS_HTTP
        } else {
            0
        };
        let zfp = if cfg!(feature = "zfp") { ZARR_HAS_ZFP } else { 0 };
        let pcodec = if cfg!(feature = "pcodec") {
            ZARR_HAS_PCODEC
        } else {
            0
        };
        let icechunk = if cfg!(feature = "icechunk") {
            ZARR_HAS_ICECHUNK
        } else {
            0
        };
        ZARR_HAS_ZIP | cloud | zfp | pcodec | icechunk
    })
}

/// Whether handles may be used from several threads at once (always true).
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub extern "C" fn zarr_threadsafe() -> bool {
    ffi_guard!(true => { true })
}

/// Sets the number of worker threads for multi-chunk work (0 = the default: the
/// `ZARR_NUM_THREADS` environment variable, else the cores this process may use).
///
/// Errors: `ZARR_ERR_INVALID_ARG` (more than 4096), `ZARR_ERR_INTERNAL` (the threads cannot
/// start).
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread; the setting is process-wide and applies to calls that start
/// after it (calls running meanwhile finish on the old threads).
#[no_mangle]
pub extern "C" fn zarr_set_num_threads(threads: usize) -> zarr_status_t {
    ffi_guard!({ Ok(crate::io::pool::set_num_threads(threads)?) })
}

/// The number of worker threads.
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub extern "C" fn zarr_get_num_threads() -> usize {
    ffi_guard!(1 => { crate::io::pool::num_threads() })
}

/// Looks up an element type by name: a Zarr v3 name (`"float32"`) or a numpy string
/// (`"<f4"`).
///
/// Errors: `ZARR_ERR_INVALID_ARG` (an unknown name).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_dtype_from_name(
    name: *const c_char,
    out_dtype: *mut zarr_dtype_t,
) -> zarr_status_t {
    ffi_guard!({
        let name = c_str(name, "name")?;
        let out_dtype = out(out_dtype, "out_dtype")?;
        let elem = ElementType::from_name(name)
            .ok_or_else(|| Failure::invalid(format!("{name:?} is not a known element type")))?;
        *out_dtype = elem as i32;
        Ok(())
    })
}

/// The Zarr v3 name of an element type ("float32"), static; NULL for unknown values.
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: the string is static: never free it.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub extern "C" fn zarr_dtype_name(dtype: zarr_dtype_t) -> *const c_char {
    ffi_guard!(std::ptr::null() => {
        match ElementType::from_code(dtype) {
            Some(e) => DTYPE_NAMES[e as usize - 1].as_ptr(),
            None => std::ptr::null(),
        }
    })
}

/// Size in bytes of one element of `dtype`; 0 for unknown values and for `ZARR_DTYPE_RAW`,
/// `ZARR_DTYPE_STRING` and `ZARR_DTYPE_BYTES`, whose size depends on the array.
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub extern "C" fn zarr_dtype_size(dtype: zarr_dtype_t) -> usize {
    ffi_guard!(0 => { ElementType::from_code(dtype).map(ElementType::size).unwrap_or(0) })
}

const DTYPE_NAMES: [&std::ffi::CStr; 33] = [
    c"bool",
    c"int8",
    c"int16",
    c"int32",
    c"int64",
    c"uint8",
    c"uint16",
    c"uint32",
    c"uint64",
    c"float16",
    c"float32",
    c"float64",
    c"complex64",
    c"complex128",
    c"raw",
    c"string",
    c"bytes",
    c"bfloat16",
    c"float8_e4m3",
    c"float8_e4m3fn",
    c"float8_e4m3fnuz",
    c"float8_e4m3b11fnuz",
    c"float8_e5m2",
    c"float8_e5m2fnuz",
    c"float8_e3m4",
    c"float8_e8m0fnu",
    c"float6_e2m3fn",
    c"float6_e3m2fn",
    c"float4_e2m1fn",
    c"int2",
    c"int4",
    c"uint2",
    c"uint4",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_names_are_the_element_type_names() {
        for (i, name) in DTYPE_NAMES.iter().enumerate() {
            let e = ElementType::from_code(i as i32 + 1).unwrap();
            assert_eq!(name.to_str().unwrap(), e.name());
        }
        assert!(ElementType::from_code(DTYPE_NAMES.len() as i32 + 1).is_none());
    }
}
