//! Array creation from C: a builder with typed setters and JSON for codecs and attributes.

use super::*;
use crate::node::ArrayBuilder;
use std::ffi::{c_char, c_void};
use std::sync::Mutex;

/// Settings for a new array. Create with `zarr_array_builder_new`, adjust with the
/// `zarr_array_builder_set_*` calls, then `zarr_array_create`.
pub struct zarr_array_builder_t {
    inner: Mutex<ArrayBuilder>,
    poison: Poison,
}

impl zarr_array_builder_t {
    /// Runs `f` on the builder's settings.
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut ArrayBuilder) -> FfiResult<T>,
    ) -> FfiResult<T> {
        self.poison.run(|| {
            let mut guard = self.inner.lock().map_err(|_| {
                Failure::new(
                    ZARR_ERR_POISONED,
                    "the builder was poisoned by an earlier panic",
                )
            })?;
            f(&mut guard)
        })
    }
}

pub(crate) fn builder_ref<'a>(
    builder: *const zarr_array_builder_t,
) -> FfiResult<&'a zarr_array_builder_t> {
    // SAFETY: the caller passes a handle from this library or NULL.
    unsafe { builder.as_ref() }.ok_or_else(|| Failure::null("builder"))
}

/// Starts settings for an array of `ndim` dimensions with extents `shape` and element type
/// `dtype`, stored in this machine's byte order. The Zarr format is that of the group the
/// array is created in (Zarr v3 at the top of a store) unless
/// `zarr_array_builder_set_zarr_format` chooses. Other defaults: chunks guessed from the
/// shape, C order, no attributes, the fill value xarray writes (v2: NaN for floats, ""
/// for strings, null for other types, so no real value is masked; v3: 0, or "" for
/// strings); v3: chunk keys "c/0/1"; v2: "." separator; both: blosc zstd level 1 with
/// byte shuffle in 1 MiB blocks (`{"id": "blosc", "cname": "zstd", "clevel": 1, "shuffle":
/// 1, "blocksize": 1048576}`), which zarr-python 2 and 3 and tensorstore read. A v2
/// scalar gets the empty `_ARRAY_DIMENSIONS` list xarray needs.
/// `ZARR_DTYPE_RAW` starts as `|V1`: give the real type with
/// `zarr_array_builder_set_dtype_name`.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (an unknown `dtype`); the shape is checked by
/// `zarr_array_create`.
///
/// Ownership: `shape` is copied; `*out_builder` is new: free it with
/// `zarr_array_builder_free`.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_new(
    dtype: zarr_dtype_t,
    ndim: usize,
    shape: *const u64,
    out_builder: *mut *mut zarr_array_builder_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_builder, "out_builder")?;
        let elem = element_type(dtype)?;
        let shape = slice(shape, ndim, "shape")?.to_vec();
        give(
            out_builder,
            zarr_array_builder_t {
                inner: Mutex::new(ArrayBuilder::new(shape, elem)),
                poison: Poison::default(),
            },
        );
        Ok(())
    })
}

/// Frees a builder (NULL is ignored).
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: takes the builder (NULL is ignored); arrays created from it do not need it.
///
/// Thread safety: any thread, once no other call is using the handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_free(builder: *mut zarr_array_builder_t) {
    ffi_guard!(() => {
        if !builder.is_null() {
            drop(Box::from_raw(builder));
        }
    })
}

/// Sets the stored type by name: numpy strings with byte order (`">f8"`, `"<M8[ns]"`,
/// `"<m8[s]"`, `"|S8"`, `">U4"`, `"|V16"`), Zarr v3 names ("float32", "bfloat16",
/// "float8_e4m3fn", "int4", "r16", "string", "bytes"; native order), a Zarr v3 `data_type`
/// object (`{"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor":
/// 10}}`, `{"name": "struct", "configuration": {"fields": [{"name": "x", "data_type":
/// "float32"}]}}`; native order), a structured type as its JSON field list
/// (`[["x", "<f4"], ["tag", "|S2", [3]]]`), or an object codec configuration
/// (`{"id": "vlen-array", "dtype": "<i4"}`). A numpy string without its byte order (`"f8"`)
/// is in this machine's order, as numpy reads it. In Zarr v3 every multi-byte field of a record
/// has the one byte order of its `bytes` codec: creating a v3 array of a record mixing
/// orders gives `ZARR_ERR_UNSUPPORTED`, as does a sub-array field.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (a name libzarr does not know).
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_dtype_name(
    builder: *mut zarr_array_builder_t,
    name: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let name = c_str(name, "name")?;
        builder_ref(builder)?.with(|b| {
            b.dtype_name(name)?;
            Ok(())
        })
    })
}

/// Sets the chunk shape (`ndim` must be the array's rank; every extent ≥ 1).
///
/// Errors: only the usual ones (Conventions); the setting is checked by
/// `zarr_array_create`.
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_chunk_shape(
    builder: *mut zarr_array_builder_t,
    ndim: usize,
    chunks: *const u64,
) -> zarr_status_t {
    ffi_guard!({
        let chunks = slice(chunks, ndim, "chunks")?.to_vec();
        builder_ref(builder)?.with(|b| {
            b.chunks(chunks);
            Ok(())
        })
    })
}

/// Gives dimension `dim` the `n` chunk edge lengths at `edges` (each ≥ 1, summing to at
/// least the extent), making the array's chunk grid rectilinear (Zarr format 3 only; Zarr v3's
/// `rectilinear` chunk grid extension). Dimensions given no edges keep the chunk shape's
/// length (or the guessed one). When sharded the edges are the shards' and each must be a
/// multiple of the inner chunk shape (inner chunks stay regular).
///
/// Errors: `ZARR_ERR_INVALID_ARG` (`dim` not below the rank, no edges, an edge of 0, a sum
/// past 64 bits, more than 2^24 edges); the rest is checked by `zarr_array_create`.
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_chunk_edges(
    builder: *mut zarr_array_builder_t,
    dim: usize,
    edges: *const u64,
    n: usize,
) -> zarr_status_t {
    ffi_guard!({
        let edges = slice(edges, n, "edges")?;
        builder_ref(builder)?.with(|b| {
            b.chunk_edges(dim, edges)?;
            Ok(())
        })
    })
}

/// Sets the fill value from one element of type `dtype` (which must be the array's memory
/// type) of `len` bytes at `value`.
///
/// Errors: only the usual ones (Conventions); the setting is checked by
/// `zarr_array_create`.
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_fill_value(
    builder: *mut zarr_array_builder_t,
    dtype: zarr_dtype_t,
    value: *const c_void,
    len: usize,
) -> zarr_status_t {
    ffi_guard!({
        let elem = element_type(dtype)?;
        let bytes = slice(value as *const u8, len, "value")?.to_vec();
        builder_ref(builder)?.with(|b| {
            b.fill_value_bytes(elem, bytes);
            Ok(())
        })
    })
}

/// Sets the fill value as metadata JSON: "0", "\"NaN\"", "null", "[1.0, 0.0]", a float's
/// bits as hex ("\"0x7fc00001\"", the only way to give a NaN with a payload: Zarr v3
/// writes it so, other formats refuse it with `ZARR_ERR_INVALID_ARG`), "\"NaT\"", an
/// object of field values for a record (`{"x": 1.5, "tag": "YWI="}`) or base64 of its bytes.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (not JSON); the value is checked by `zarr_array_create`.
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_fill_value_json(
    builder: *mut zarr_array_builder_t,
    json: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let value = parse_json(c_str(json, "json")?, "json")?;
        builder_ref(builder)?.with(|b| {
            b.fill_value_json(value);
            Ok(())
        })
    })
}

/// Makes `value` the array's CF missing value (`_FillValue`), written so that xarray,
/// netCDF-C (NCZarr) and CF readers mask it: Zarr v2 keeps it in `fill_value` (for xarray)
/// and in a `_FillValue` attribute as NCZarr reads it (a number, or "NaN", "Infinity",
/// "-Infinity", its type recorded in `_NCZARR_ATTR`: `{"types": {"_FillValue": "<f4"}}`);
/// Zarr v3 in `fill_value` and in xarray's `_FillValue` attribute beside it (a float as
/// base64 of its little-endian double bytes, an integer as a number). It replaces any fill value set
/// before (and a later fill value replaces it). A double holds every missing value of a
/// type up to 32 bits and 64-bit integers up to 2^53 in magnitude.
///
/// A float16 or float32 array takes the nearest value of its type, as netCDF stores a
/// double `_FillValue` given for a float variable (1e20 is stored as the float32
/// 1.0000000200408773e20), and says so in a notice on standard error (silenced by
/// `ZARR_QUIET`) when that is not `value` exactly; `zarr_array_missing_value` then gives
/// the value stored.
///
/// Errors: only the usual ones (Conventions); `zarr_array_create` refuses with
/// `ZARR_ERR_INVALID_ARG`, naming the array, a value the type cannot hold (a finite value
/// beyond a float type's range; for integers a value out of range, a fraction or NaN) or
/// an array without numbers (strings, booleans, records, dates), and creates nothing.
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_missing_value(
    builder: *mut zarr_array_builder_t,
    value: f64,
) -> zarr_status_t {
    ffi_guard!({
        builder_ref(builder)?.with(|b| {
            b.missing_value(value);
            Ok(())
        })
    })
}

/// Sets the element order inside chunks (`ZARR_ORDER_C` or `ZARR_ORDER_F`).
///
/// Errors: `ZARR_ERR_INVALID_ARG` (an unknown `order`).
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_order(
    builder: *mut zarr_array_builder_t,
    order: zarr_order_t,
) -> zarr_status_t {
    ffi_guard!({
        let order = super::order(order)?;
        builder_ref(builder)?.with(|b| {
            b.order(order);
            Ok(())
        })
    })
}

/// Sets any order of the dimensions inside chunks, as a Zarr v3 `transpose` codec does:
/// chunk dimension `k` is array dimension `permutation[k]` (`ndim` entries, a permutation
/// of 0 to rank - 1; what `zarr_array_chunk_permutation` gives back). It replaces the order
/// `zarr_array_builder_set_order` set, and a later `zarr_array_builder_set_order` replaces
/// it. A list that is not a permutation gives `ZARR_ERR_INVALID_ARG` at creation; v1 and v2
/// arrays hold only C and F order, so other permutations give `ZARR_ERR_UNSUPPORTED` there.
///
/// Errors: only the usual ones (Conventions); the setting is checked by
/// `zarr_array_create`.
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_chunk_permutation(
    builder: *mut zarr_array_builder_t,
    ndim: usize,
    permutation: *const usize,
) -> zarr_status_t {
    ffi_guard!({
        let permutation = slice(permutation, ndim, "permutation")?.to_vec();
        builder_ref(builder)?.with(|b| {
            b.chunk_permutation(permutation);
            Ok(())
        })
    })
}

/// Sets the chunk key separator: "." (flat keys "0.1") or "/" (nested keys "0/1"). With "."
/// a chunk key is one file name in a directory store, which past about a hundred dimensions
/// outgrows the filesystem's name limit (255 bytes on most): use "/" there.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (not "." or "/").
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_dimension_separator(
    builder: *mut zarr_array_builder_t,
    separator: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let separator = separator_char(c_str(separator, "separator")?)?;
        builder_ref(builder)?.with(|b| {
            b.separator(separator);
            Ok(())
        })
    })
}

/// Gives a Zarr v3 array the chunk key encoding `name`: "default" (keys "c/0/1", or "c.0.1"
/// with the separator ".") or "v2" (keys "0.1", or "0/1" with the separator "/", as v2
/// arrays name chunks). `separator` is "." or "/", or NULL for the encoding's own default
/// ("/" for "default", "." for "v2"). Arrays of other formats keep their own keys: "v2"
/// for them gives `ZARR_ERR_INVALID_ARG` at creation.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (an unknown `name` or `separator`).
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_chunk_key_encoding(
    builder: *mut zarr_array_builder_t,
    name: *const c_char,
    separator: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let v2 = match c_str(name, "name")? {
            "default" => false,
            "v2" => true,
            other => {
                return Err(Failure::invalid(format!(
                    "chunk key encoding {other:?} must be \"default\" or \"v2\""
                )))
            }
        };
        let separator = match separator.is_null() {
            true => None,
            false => Some(separator_char(c_str(separator, "separator")?)?),
        };
        builder_ref(builder)?.with(|b| {
            b.v2_chunk_keys(v2);
            if let Some(separator) = separator {
                b.separator(separator);
            } else {
                b.default_separator();
            }
            Ok(())
        })
    })
}

/// Sets where the index of every shard lies, at its start (`index_at_start`) or at its end
/// (zarr-python's default), and whether a `crc32c` checksum follows it (`checksum`, the
/// default; without it the index codecs are `bytes` alone). Applies to every level of a
/// nested sharding; only sharded arrays use it.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_shard_index(
    builder: *mut zarr_array_builder_t,
    index_at_start: bool,
    checksum: bool,
) -> zarr_status_t {
    ffi_guard!({
        builder_ref(builder)?.with(|b| {
            b.shard_index(index_at_start, checksum);
            Ok(())
        })
    })
}

/// Sets the compressor as numcodecs JSON (`{"id": "zstd", "level": 3}`), or "null" for
/// none, or a JSON list of them: Zarr v3's bytes-to-bytes codecs in the order they encode
/// (`[{"id": "zstd", "level": 3}, {"id": "crc32c"}]`; `crc32c` is Zarr v3's checksum
/// codec). A v2 array holds one: a list of several gives `ZARR_ERR_INVALID_ARG` at creation.
/// Each may also be in Zarr v3's form (`{"name": "zstd", "configuration": {"level": 3}}`,
/// `{"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "bitshuffle"}}`), whatever
/// the format.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (not JSON); the codecs are checked by `zarr_array_create`
/// (`ZARR_ERR_CODEC_UNSUPPORTED` for one this build lacks).
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_compressor_json(
    builder: *mut zarr_array_builder_t,
    json: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let value = parse_json(c_str(json, "json")?, "json")?;
        builder_ref(builder)?.with(|b| {
            b.compressor(value);
            Ok(())
        })
    })
}

/// Sets the filter list as JSON: numcodecs configurations applied in order before the
/// compressor (`[{"id": "delta", "dtype": "<i4"}, {"id": "crc32"}]`), "null" or "[]" for
/// none. Entries may also be Zarr v3 array codecs: those registered in zarr-extensions
/// (`{"name": "scale_offset", "configuration": {"offset": 5, "scale": 10}}`, `cast_value`,
/// `bitround`, `reshape`), which only Zarr v3 metadata holds, and `numcodecs.<id>` names
/// for numcodecs' filters. Each filter is checked against the type it receives when the
/// array is created.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (not JSON); the filters are checked by
/// `zarr_array_create` (`ZARR_ERR_INVALID_ARG` for a bad configuration,
/// `ZARR_ERR_UNSUPPORTED` for a registered codec in a format other than 3).
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_filters_json(
    builder: *mut zarr_array_builder_t,
    json: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let value = parse_json(c_str(json, "json")?, "json")?;
        builder_ref(builder)?.with(|b| {
            b.filters(value);
            Ok(())
        })
    })
}

/// Sets the attributes written with the array (a JSON object).
///
/// Errors: `ZARR_ERR_INVALID_ARG` (not a JSON object).
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_attributes_json(
    builder: *mut zarr_array_builder_t,
    json: *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let serde_json::Value::Object(map) = parse_json(c_str(json, "json")?, "json")? else {
            return Err(Failure::invalid("attributes must be a JSON object"));
        };
        builder_ref(builder)?.with(|b| {
            b.attributes(map);
            Ok(())
        })
    })
}

/// Sets the Zarr format version, 2 or 3 (by default the format of the group above the new
/// array, else 3). Settings left at their defaults follow the version (see
/// `zarr_array_builder_new`); in v3 a null fill value is written as 0 (v3 has none).
/// `ZARR_FORMAT_V3_DRAFT` and `ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON` write the 2022 draft layout
/// (chunk keys "c0/1"; the store's root gets the draft's `zarr.json` entry point, and a
/// store whose root `zarr.json` is anything else gives `ZARR_ERR_EXISTS` on creation).
/// Other numbers give `ZARR_ERR_INVALID_ARG`.
///
/// Errors: `ZARR_ERR_INVALID_ARG` (see above).
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_zarr_format(
    builder: *mut zarr_array_builder_t,
    version: i32,
) -> zarr_status_t {
    ffi_guard!({
        builder_ref(builder)?.with(|b| {
            b.zarr_format(version)?;
            Ok(())
        })
    })
}

/// Groups chunks into shards of `ndim` extents `shape` (each a multiple of the chunk
/// shape): one stored object per shard, with an index (bytes little-endian + crc32c) at
/// its end. Zarr v3 only: creating a v2 array with a shard shape gives
/// `ZARR_ERR_INVALID_ARG`. Variable-length items (strings, bytes) can be sharded too.
///
/// Errors: only the usual ones (Conventions); the setting is checked by
/// `zarr_array_create`.
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_shard_shape(
    builder: *mut zarr_array_builder_t,
    ndim: usize,
    shape: *const u64,
) -> zarr_status_t {
    ffi_guard!({
        let shape = slice(shape, ndim, "shape")?.to_vec();
        builder_ref(builder)?.with(|b| {
            b.shard_shape(shape);
            Ok(())
        })
    })
}

/// Nests one more level of sharding inside the shards set so far: the shards' units
/// become inner shards of `ndim` extents `shape` (dividing the enclosing shard shape, a
/// multiple of the chunk shape), each with its own index (bytes little-endian + crc32c)
/// at its end. Call after `zarr_array_builder_set_shard_shape`, once per extra level;
/// setting the shard shape again drops the nested levels.
///
/// Errors: only the usual ones (Conventions); the setting is checked by
/// `zarr_array_create`.
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_add_inner_shard_shape(
    builder: *mut zarr_array_builder_t,
    ndim: usize,
    shape: *const u64,
) -> zarr_status_t {
    ffi_guard!({
        let shape = slice(shape, ndim, "shape")?.to_vec();
        builder_ref(builder)?.with(|b| {
            b.inner_shard_shape(shape);
            Ok(())
        })
    })
}

/// Sets the dimension names, `ndim` UTF-8 strings in C order, one per dimension, written
/// with the array as `zarr_array_set_dimension_names` writes them: v3 arrays keep them in
/// the `dimension_names` of their metadata (NULL for an unnamed dimension, written as null;
/// "" is the name ""), the other formats in the `_ARRAY_DIMENSIONS` attribute (xarray's
/// convention), where every dimension needs a name.
///
/// Errors: only the usual ones (Conventions); `zarr_array_create` refuses with
/// `ZARR_ERR_INVALID_ARG` a count of names that is not the rank, or a NULL name outside v3,
/// and creates nothing.
///
/// Ownership: nothing is kept: the builder copies what it is given.
///
/// Thread safety: any thread: calls on one builder are serialised (usually one thread fills
/// it in).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_builder_set_dimension_names(
    builder: *mut zarr_array_builder_t,
    ndim: usize,
    names: *const *const c_char,
) -> zarr_status_t {
    ffi_guard!({
        let names = optional_strings(names, ndim, "names")?;
        builder_ref(builder)?.with(|b| {
            b.dimension_names(names);
            Ok(())
        })
    })
}

/// A chunk key separator from its text.
fn separator_char(text: &str) -> FfiResult<char> {
    match text {
        "." => Ok('.'),
        "/" => Ok('/'),
        other => Err(Failure::invalid(format!(
            "separator {other:?} must be \".\" or \"/\""
        ))),
    }
}
