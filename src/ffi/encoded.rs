//! Chunks encoded in one process and stored whole by another: every process of a parallel
//! writer encodes the chunks it holds, one stores each object (the MPI layer's
//! aggregators), as HDF5's direct chunk writes (`H5Dwrite_chunk`) store what the caller
//! compressed.

use super::array::{check_ndim, with_array, zarr_array_t};
use super::*;
use std::ffi::c_void;

/// Sets `*out_bytes` to the most bytes `zarr_array_encode_chunk` writes for one chunk of
/// this array: a size for its `out` buffer.
///
/// Errors: `ZARR_ERR_OVERFLOW` (the bound does not fit a `size_t`).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_encoded_chunk_bound(
    array: *const zarr_array_t,
    out_bytes: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let out_bytes = out(out_bytes, "out_bytes")?;
        let bound = with_array(array, |a| Ok(a.encoded_chunk_bound()))?;
        *out_bytes = usize::try_from(bound)
            .map_err(|_| Error::Overflow(format!("an encoded chunk may take {bound} bytes")))?;
        Ok(())
    })
}

/// Encodes the whole chunk at `index` (`ndim` numbers) of the grid the codecs encode (the
/// inner chunks when the array is sharded, else the chunks) from `buf`: the chunk's
/// elements in the array's type (`zarr_array_dtype`), native byte order, C order, past the
/// array's edge too (`buf_bytes` must be the chunk's size). The encoding goes to `out`
/// (`out_bytes` long; `zarr_array_encoded_chunk_bound` is always enough) and its length to
/// `*out_written`; `*out_stored` is false, and nothing written, when the chunk equals the
/// fill value and is not stored. Nothing is stored by this call: the encodings go to
/// `zarr_array_write_encoded`, in this process or another one with a handle of the same
/// array.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (`index` outside
/// the grid), `ZARR_ERR_BUFFER_SIZE` (`buf_bytes` is not the chunk's size; or `out` is
/// too small: `*out_written` is then the length needed), `ZARR_ERR_UNSUPPORTED` (variable-
/// length items, nested shards, a rectilinear grid of shards), `ZARR_ERR_CODEC`.
///
/// Ownership: nothing is kept; `buf` is only read.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_encode_chunk(
    array: *const zarr_array_t,
    ndim: usize,
    index: *const u64,
    buf: *const c_void,
    buf_bytes: usize,
    out_buf: *mut c_void,
    out_bytes: usize,
    out_written: *mut usize,
    out_stored: *mut bool,
) -> zarr_status_t {
    ffi_guard!({
        let written = out(out_written, "out_written")?;
        let stored = out(out_stored, "out_stored")?;
        *written = 0;
        *stored = false;
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let index = slice(index, ndim, "index")?;
            let data = slice(buf as *const u8, buf_bytes, "buf")?;
            a.encode_chunk_with(index, data, |encoded| {
                let Some(encoded) = encoded else {
                    return Ok(());
                };
                *written = encoded.len();
                if encoded.len() > out_bytes {
                    return Err(Error::BufferSize(format!(
                        "chunk {index:?} encodes to {} bytes; out_bytes is {out_bytes}",
                        encoded.len()
                    ))
                    .into());
                }
                slice_mut(out_buf as *mut u8, encoded.len(), "out_buf")?.copy_from_slice(encoded);
                *stored = true;
                Ok(())
            })?
        })
    })
}

/// Sets `*out_units` to how many encoded chunks `zarr_array_write_encoded` takes for the
/// object at `index` (`ndim` numbers) of the grid of stored objects (shards when sharded,
/// else chunks): the inner chunks per shard, or 1.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH`, `ZARR_ERR_OUT_OF_BOUNDS`, `ZARR_ERR_UNSUPPORTED` (as
/// `zarr_array_encode_chunk`).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_encoded_units(
    array: *const zarr_array_t,
    ndim: usize,
    index: *const u64,
    out_units: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let out_units = out(out_units, "out_units")?;
        *out_units = with_array(array, |a| {
            check_ndim(a, ndim)?;
            Ok(a.encoded_units(slice(index, ndim, "index")?)?)
        })?;
        Ok(())
    })
}

/// Stores the object at `index` (`ndim` numbers; a shard when sharded, else a chunk) whole
/// from `nunits` encodings made by `zarr_array_encode_chunk` (`zarr_array_encoded_units`
/// of them: a shard's inner chunks in C order within it): `units[i]` of `unit_bytes[i]`
/// bytes, or NULL for a chunk not stored (read as the fill value). The object's old
/// content is replaced; an object of no stored chunk is erased. The shard's index is
/// built here. Under the handle's synchronizer, as `zarr_array_write`; durability as the
/// store's `zarr_durability`.
///
/// The encodings are stored as given: bytes that did not come from
/// `zarr_array_encode_chunk` for this array and chunk are refused only when longer than
/// `zarr_array_encoded_chunk_bound`, and otherwise fail when read.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH`, `ZARR_ERR_OUT_OF_BOUNDS`, `ZARR_ERR_UNSUPPORTED` (as
/// `zarr_array_encode_chunk`), `ZARR_ERR_INVALID_ARG` (`nunits` is not the object's, or an
/// encoding longer than the bound), `ZARR_ERR_READ_ONLY`, `ZARR_ERR_IO`.
///
/// Ownership: nothing is kept; the encodings are only read.
///
/// Thread safety: any thread; as `zarr_array_write` for writers of the same object.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_encoded(
    array: *const zarr_array_t,
    ndim: usize,
    index: *const u64,
    nunits: usize,
    units: *const *const c_void,
    unit_bytes: *const usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let index = slice(index, ndim, "index")?;
            let expected = a.encoded_units(index)?;
            if nunits != expected {
                return Err(Error::InvalidArg(format!(
                    "object {index:?} takes {expected} encoded chunks; nunits is {nunits}"
                ))
                .into());
            }
            let pointers = slice(units, nunits, "units")?;
            let lengths = slice(unit_bytes, nunits, "unit_bytes")?;
            let mut encoded = Vec::with_capacity(nunits);
            for (&p, &len) in pointers.iter().zip(lengths) {
                encoded.push(match p.is_null() {
                    true => None,
                    false => Some(slice(p as *const u8, len, "units[i]")?),
                });
            }
            Ok(a.write_encoded(index, &encoded)?)
        })
    })
}
