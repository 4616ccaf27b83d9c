//! Data types beyond numbers from C: the fields of structured records, and the
//! variable-length items (strings, bytes, numeric arrays) of `|O`, `string` and `bytes`
//! arrays.

use super::array::{check_ndim, with_array, zarr_array_t};
use super::*;
use crate::dtype::{DataKind, ElementType, Field};
use crate::io::vlen::VlenItems;
use crate::node::{Array, Node};
use std::ffi::{c_char, c_void};

/// A list of variable-length items owned by libzarr; free with `zarr_vlen_list_free`.
pub struct zarr_vlen_list_t {
    /// Each item followed by a NUL byte, so strings can be used as C strings.
    data: Vec<u8>,
    /// Start of each item in `data`, plus one past the last item's NUL.
    starts: Vec<usize>,
}

/// Leaf field `index` of the array's record type.
fn leaf_field(array: *const zarr_array_t, index: usize) -> FfiResult<Field> {
    with_array(array, |a| {
        let fields = a.metadata().dtype.leaf_fields();
        let n = fields.len();
        fields.into_iter().nth(index).ok_or_else(|| {
            Failure::new(
                ZARR_ERR_OUT_OF_BOUNDS,
                format!("field {index} does not exist: the record type has {n} fields"),
            )
        })
    })
}

/// Sets `*out_count` to the number of fields of a structured array's record, nested records
/// flattened to their leaves (`"outer.inner"`); 0 for other arrays.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_nfields(
    array: *const zarr_array_t,
    out_count: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let out_count = out(out_count, "out_count")?;
        *out_count = with_array(array, |a| Ok(a.metadata().dtype.leaf_fields().len()))?;
        Ok(())
    })
}

/// Copies the name of field `index` (nested names joined by dots) into `buf` (string
/// output convention). `ZARR_ERR_OUT_OF_BOUNDS` when there is no such field.
///
/// Errors: `ZARR_ERR_OUT_OF_BOUNDS` (no such field), `ZARR_ERR_BUFFER_SIZE`.
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_field_name(
    array: *const zarr_array_t,
    index: usize,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ write_text(&leaf_field(array, index)?.name, buf, len, needed) })
}

/// Copies the numpy type string of one element of field `index` (`"<i4"`, `">f8"`,
/// `"|S2"`) into `buf` (string output convention).
///
/// Errors: `ZARR_ERR_OUT_OF_BOUNDS` (no such field), `ZARR_ERR_BUFFER_SIZE`.
///
/// Ownership: the text is copied into the caller's `buf` (string output convention).
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_field_dtype_name(
    array: *const zarr_array_t,
    index: usize,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({ write_text(&leaf_field(array, index)?.dtype.to_v2(), buf, len, needed) })
}

/// Gives where field `index` lies in a record: `*out_offset` (bytes from the record's
/// start), `*out_size` (bytes, sub-array included), and its sub-array shape: `*out_ndim`
/// dimensions (0 for a scalar field) copied into `out_shape`, which has room for
/// `max_ndim`. `ZARR_ERR_BUFFER_SIZE` when `max_ndim` is too small (`*out_ndim` is set).
/// Field bytes keep their stored byte order.
///
/// Errors: `ZARR_ERR_OUT_OF_BOUNDS` (no such field), `ZARR_ERR_BUFFER_SIZE` (`max_ndim`).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_field_layout(
    array: *const zarr_array_t,
    index: usize,
    out_offset: *mut usize,
    out_size: *mut usize,
    out_ndim: *mut usize,
    out_shape: *mut u64,
    max_ndim: usize,
) -> zarr_status_t {
    ffi_guard!({
        let field = leaf_field(array, index)?;
        *out(out_offset, "out_offset")? = field.offset;
        *out(out_size, "out_size")? = field.size();
        *out(out_ndim, "out_ndim")? = field.shape.len();
        if field.shape.len() > max_ndim {
            return Err(Failure::new(
                ZARR_ERR_BUFFER_SIZE,
                format!(
                    "field {:?} has {} dimensions but out_shape has room for {max_ndim}",
                    field.name,
                    field.shape.len()
                ),
            ));
        }
        slice_mut(out_shape, field.shape.len(), "out_shape")?.copy_from_slice(&field.shape);
        Ok(())
    })
}

/// Sets `*out_dtype` to the element type of a variable-length array's items: the numeric
/// type of `vlen-array` items (as `zarr_array_read_vlen` gives them, in native byte order;
/// `*out_item_size` gets its size), `ZARR_DTYPE_STRING` for strings and `ZARR_DTYPE_BYTES`
/// for byte strings (`*out_item_size` 1: items are runs of bytes). `out_item_size` may be
/// NULL. An array of fixed-size items gives `ZARR_ERR_DTYPE_MISMATCH`.
///
/// Errors: `ZARR_ERR_DTYPE_MISMATCH` (an array of fixed-size items).
///
/// Ownership: nothing is kept; the result goes to the caller's output.
///
/// Thread safety: any thread, at the same time as any other call; it answers from this
/// handle's copy of the metadata (`zarr_array_refresh` reads it again).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_vlen_item_dtype(
    array: *const zarr_array_t,
    out_dtype: *mut zarr_dtype_t,
    out_item_size: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let out_dtype = out(out_dtype, "out_dtype")?;
        let (code, size) = with_array(array, |a| {
            let meta = a.metadata();
            match &meta.dtype.kind {
                DataKind::VlenArray(inner) => Ok((inner.element_type() as i32, inner.item_size())),
                DataKind::String => Ok((ElementType::String as i32, 1)),
                DataKind::VlenBytes => Ok((ElementType::Bytes as i32, 1)),
                _ => Err(crate::Error::DtypeMismatch(format!(
                    "array {:?} holds fixed-size items ({}), not variable-length ones",
                    a.path(),
                    meta.dtype.to_v2()
                ))
                .into()),
            }
        })?;
        *out_dtype = code;
        if let Some(out_size) = out_item_size.as_mut() {
            *out_size = size;
        }
        Ok(())
    })
}

/// Converts records read with `ZARR_DTYPE_RAW` (fields in their stored byte order, as
/// `zarr_array_field_dtype_name` gives it) to this machine's byte order, in place: every
/// multi-byte number, each half of a complex number, each UTF-32 code unit, in nested
/// records and sub-array fields too. `buf_bytes` must be a whole number of records
/// (`zarr_array_item_size`). Arrays that are not structured are left unchanged.
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (not a whole number of records).
///
/// Ownership: `buf` stays the caller's and is converted in place.
///
/// Thread safety: any thread; only `buf` is touched.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_records_to_native(
    array: *const zarr_array_t,
    buf: *mut c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({ swap_records(array, buf, buf_bytes) })
}

/// Converts records in this machine's byte order to their stored byte order, in place, for
/// a write with `ZARR_DTYPE_RAW`: the reverse of `zarr_array_records_to_native`.
///
/// Errors: `ZARR_ERR_BUFFER_SIZE` (not a whole number of records).
///
/// Ownership: `buf` stays the caller's and is converted in place.
///
/// Thread safety: any thread; only `buf` is touched.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_records_to_stored(
    array: *const zarr_array_t,
    buf: *mut c_void,
    buf_bytes: usize,
) -> zarr_status_t {
    ffi_guard!({ swap_records(array, buf, buf_bytes) })
}

/// Swaps the non-native fields of whole records in a caller's buffer (its own inverse).
unsafe fn swap_records(
    array: *const zarr_array_t,
    buf: *mut c_void,
    buf_bytes: usize,
) -> FfiResult {
    let dtype = with_array(array, |a| Ok(a.metadata().dtype.clone()))?;
    let record = dtype.item_size();
    if record == 0 || !buf_bytes.is_multiple_of(record) {
        return Err(Failure::new(
            ZARR_ERR_BUFFER_SIZE,
            format!("buf_bytes {buf_bytes} is not a whole number of {record}-byte items"),
        ));
    }
    let records = slice_mut(buf.cast::<u8>(), buf_bytes, "buf")?;
    crate::dtype::swap_record_fields(&dtype, records);
    Ok(())
}

/// The arguments the vlen region calls share, checked in order: `ndim` against the rank
/// (before any pointer is read), then `start`, `count` and `order`.
unsafe fn vlen_region<'a>(
    array: &Array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    order: zarr_order_t,
) -> FfiResult<(&'a [u64], &'a [u64], crate::meta::Order)> {
    check_ndim(array, ndim)?;
    Ok((
        slice(start, ndim, "start")?,
        slice(count, ndim, "count")?,
        super::order(order)?,
    ))
}

/// Reads the items of a region of a variable-length array.
unsafe fn read_items(
    array: &Array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    order: zarr_order_t,
) -> FfiResult<VlenItems> {
    let (start, count, order) = vlen_region(array, ndim, start, count, order)?;
    Ok(array.read_vlen(start, count, order)?)
}

/// Reads the items of a region into caller buffers, or, when they are too small, keeps the
/// items for the call that follows with buffers of the right size and says what is needed.
unsafe fn read_items_into(
    array: &Array,
    region: (usize, *const u64, *const u64, zarr_order_t),
    offsets: &mut dyn FnMut(&VlenItems) -> FfiResult<bool>,
) -> FfiResult {
    let (ndim, start, count, order) = region;
    let (start, count, order) = vlen_region(array, ndim, start, count, order)?;
    let (items, generation) = array.read_vlen_tracked(start, count, order)?;
    if !offsets(&items)? {
        array.keep_vlen(start, count, order, generation, items);
    }
    Ok(())
}

/// Reads the items of region `start`/`count` of a variable-length array (`|O`, `string`,
/// `bytes`) in `order` into caller buffers: item `i` is the bytes from `data[offsets[i]]`
/// up to `data[offsets[i + 1]]`, so `offsets` needs one entry more than the region has
/// elements (`n_offsets`). Numeric array items are in native byte order. `*data_needed`
/// gets the bytes the items take; when `data_bytes` is smaller (a NULL `data` with 0 asks
/// for the size) the call gives `ZARR_ERR_BUFFER_SIZE` and fills nothing else. A stored
/// string that is not UTF-8 gives `ZARR_ERR_CODEC`.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS`,
/// `ZARR_ERR_DTYPE_MISMATCH` (an array of fixed-size items), `ZARR_ERR_BUFFER_SIZE`
/// (`n_offsets` or `data_bytes`), `ZARR_ERR_CODEC`.
///
/// Ownership: `offsets` and `data` stay the caller's.
///
/// Thread safety: any thread, at the same time as other reads and writes: each chunk is
/// read as it was before or after a write of it, never a mix.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_vlen(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    order: zarr_order_t,
    offsets: *mut u64,
    n_offsets: usize,
    data: *mut c_void,
    data_bytes: usize,
    data_needed: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        // Fills the caller's buffers; `false` (with the error kept in `failure`) when they
        // are too small, so the items are kept for the next call.
        let mut failure = None;
        let mut fill = |items: &VlenItems| -> FfiResult<bool> {
            match fill_vlen(items, offsets, n_offsets, data, data_bytes, data_needed) {
                Err(f) if f.status == ZARR_ERR_BUFFER_SIZE => {
                    failure = Some(f);
                    Ok(false)
                }
                other => other.map(|()| true),
            }
        };
        with_array(array, |a| {
            read_items_into(a, (ndim, start, count, order), &mut fill)
        })?;
        failure.map_or(Ok(()), Err)
    })
}

/// Copies `items` into the caller's buffers of `zarr_array_read_vlen`.
unsafe fn fill_vlen(
    items: &VlenItems,
    offsets: *mut u64,
    n_offsets: usize,
    data: *mut c_void,
    data_bytes: usize,
    data_needed: *mut usize,
) -> FfiResult {
    if let Some(n) = data_needed.as_mut() {
        *n = items.data.len();
    }
    if n_offsets != items.offsets.len() {
        return Err(Failure::new(
            ZARR_ERR_BUFFER_SIZE,
            format!(
                "the region has {} items, so offsets needs {} entries, not {n_offsets}",
                items.len(),
                items.offsets.len()
            ),
        ));
    }
    if data_bytes < items.data.len() {
        return Err(Failure::new(
            ZARR_ERR_BUFFER_SIZE,
            format!(
                "the items take {} bytes but the data buffer has {data_bytes}",
                items.data.len()
            ),
        ));
    }
    slice_mut(offsets, n_offsets, "offsets")?.copy_from_slice(&items.offsets);
    slice_mut(data as *mut u8, items.data.len(), "data")?.copy_from_slice(&items.data);
    Ok(())
}

/// Reads the items of a region (arguments as for `zarr_array_read_vlen`) into a list owned
/// by libzarr, set in `*out_list` (NULL on failure); free it with `zarr_vlen_list_free`.
///
/// Errors: as `zarr_array_read_vlen`, without `ZARR_ERR_BUFFER_SIZE`.
///
/// Ownership: `*out_list` is a new list: free it with `zarr_vlen_list_free`.
///
/// Thread safety: any thread, at the same time as other reads and writes: each chunk is
/// read as it was before or after a write of it, never a mix.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_vlen_list(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    order: zarr_order_t,
    out_list: *mut *mut zarr_vlen_list_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_list, "out_list")?;
        let items = with_array(array, |a| read_items(a, ndim, start, count, order))?;
        let mut list = zarr_vlen_list_t {
            data: Vec::with_capacity(items.data.len() + items.len()),
            starts: Vec::with_capacity(items.offsets.len()),
        };
        for i in 0..items.len() {
            list.starts.push(list.data.len());
            list.data.extend_from_slice(items.get(i));
            list.data.push(0);
        }
        list.starts.push(list.data.len());
        give(out_list, list);
        Ok(())
    })
}

/// Number of items in a list (0 for NULL).
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_vlen_list_count(list: *const zarr_vlen_list_t) -> usize {
    ffi_guard!(0 => { list.as_ref().map_or(0, |l| l.starts.len().saturating_sub(1)) })
}

/// Item `index` of a list, valid until the list is freed, followed by a NUL byte (so a
/// string without embedded NULs is a C string); `*out_len` (if not NULL) gets its length
/// without that NUL. NULL when `index` is out of range.
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: the item belongs to the list: never free it, nor use it after
/// `zarr_vlen_list_free`.
///
/// Thread safety: any thread, at the same time as any other call.
#[no_mangle]
pub unsafe extern "C" fn zarr_vlen_list_item(
    list: *const zarr_vlen_list_t,
    index: usize,
    out_len: *mut usize,
) -> *const c_void {
    ffi_guard!(std::ptr::null() => {
        let Some(list) = list.as_ref() else {
            return std::ptr::null();
        };
        match (list.starts.get(index), list.starts.get(index + 1)) {
            (Some(&begin), Some(&end)) => {
                if let Some(n) = out_len.as_mut() {
                    *n = end - begin - 1;
                }
                list.data[begin..].as_ptr() as *const c_void
            }
            _ => std::ptr::null(),
        }
    })
}

/// Frees a list (NULL is ignored).
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: takes the list (NULL is ignored) and every item it gave.
///
/// Thread safety: any thread, once no other call is using the handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_vlen_list_free(list: *mut zarr_vlen_list_t) {
    ffi_guard!(() => {
        if !list.is_null() {
            drop(Box::from_raw(list));
        }
    })
}

/// Writes one item per element of region `start`/`count` (in `order`) into a
/// variable-length array: item `i` is `lengths[i]` bytes at `items[i]`, or, when `lengths`
/// is NULL, the NUL-terminated string `items[i]`. Strings must be UTF-8 and array items a
/// whole number of elements (native byte order); every item is checked before anything is
/// stored, and a rejected call stores nothing.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS`,
/// `ZARR_ERR_DTYPE_MISMATCH` (an array of fixed-size items), `ZARR_ERR_INVALID_ARG` (a
/// string that is not UTF-8, an item that is not whole elements), `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; writes at the same time are safe when they touch different
/// chunks (shards, when sharded): otherwise set a synchronizer
/// (`zarr_array_set_synchronizer`) or updates may be lost.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_vlen(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    order: zarr_order_t,
    items: *const *const c_void,
    lengths: *const usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            let (start, count, order) = vlen_region(a, ndim, start, count, order)?;
            let borrowed = borrowed_items(count, items, lengths)?;
            Ok(a.write_vlen(start, count, order, &borrowed)?)
        })
    })
}

/// The `n` items of a region of shape `count` given as pointers and lengths (or, with
/// `lengths` NULL, NUL-terminated strings), borrowed for the call.
unsafe fn borrowed_items<'a>(
    count: &[u64],
    items: *const *const c_void,
    lengths: *const usize,
) -> FfiResult<Vec<&'a [u8]>> {
    let n = crate::error::count_of(count, "region element count")?;
    let pointers = slice(items, n, "items")?;
    let lengths = if lengths.is_null() {
        None
    } else {
        Some(slice(lengths, n, "lengths")?)
    };
    let mut borrowed: Vec<&[u8]> = Vec::with_capacity(n);
    for (i, &p) in pointers.iter().enumerate() {
        let len = match lengths {
            Some(l) => l[i],
            None if p.is_null() => return Err(Failure::null(&format!("items[{i}]"))),
            None => std::ffi::CStr::from_ptr(p as *const c_char)
                .to_bytes()
                .len(),
        };
        borrowed.push(slice(p as *const u8, len, &format!("items[{i}]"))?);
    }
    Ok(borrowed)
}

/// Appends one item per element of a region of shape `count[0..ndim]` along `axis` of a
/// variable-length array (items as `zarr_array_write_vlen` takes them, in `order`); every
/// other extent of `count` must equal the array's. The array grows by `count[axis]`, then
/// the items are written; a rejected item shrinks it back, so a failed call leaves the
/// array as it was. Appends of variable-length items are not buffered.
///
/// Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_INVALID_ARG` (`axis` not below the
/// rank, another extent differs from the array's, a string that is not UTF-8, an item that
/// is not whole elements), `ZARR_ERR_DTYPE_MISMATCH` (an array of fixed-size items: use
/// `zarr_array_append`), `ZARR_ERR_OVERFLOW`, `ZARR_ERR_READ_ONLY`.
///
/// Ownership: nothing is kept: arguments are only read during the call.
///
/// Thread safety: any thread; calls on one handle are serialised. One handle appends to an
/// array at a time.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_append_vlen(
    array: *const zarr_array_t,
    axis: usize,
    ndim: usize,
    count: *const u64,
    order: zarr_order_t,
    items: *const *const c_void,
    lengths: *const usize,
) -> zarr_status_t {
    ffi_guard!({
        with_array(array, |a| {
            check_ndim(a, ndim)?;
            let count = slice(count, ndim, "count")?;
            let order = super::order(order)?;
            let borrowed = borrowed_items(count, items, lengths)?;
            a.append_vlen(axis, count, order, &borrowed)?;
            Ok(())
        })
    })
}
