//! The attribute calls shared by arrays and groups.

use super::store::zarr_strings_t;
use super::*;
use crate::io::cast::Native;
use crate::node::typed_attrs::{self, AttrKind, AttrValue};
use crate::node::Node;
use std::ffi::{c_char, c_void};

/// Copies all attributes as a JSON object.
pub(crate) unsafe fn get_all(
    node: &dyn Node,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> FfiResult {
    write_text(
        &crate::meta::json::to_compact(&serde_json::Value::Object(node.attributes()?)),
        buf,
        len,
        needed,
    )
}

/// Replaces all attributes with a JSON object.
pub(crate) unsafe fn set_all(node: &dyn Node, json: *const c_char) -> FfiResult {
    let serde_json::Value::Object(map) = parse_json(c_str(json, "json")?, "json")? else {
        return Err(Failure::invalid("attributes must be a JSON object"));
    };
    Ok(node.set_attributes(&map)?)
}

/// Copies one attribute's JSON value; NOT_FOUND when absent.
pub(crate) unsafe fn get_one(
    node: &dyn Node,
    key: *const c_char,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> FfiResult {
    let key = c_str(key, "key")?;
    let attributes = node.attributes()?;
    let value = attributes
        .get(key)
        .ok_or_else(|| Failure::from(crate::Error::NotFound(format!("no attribute {key:?}"))))?;
    write_text(&crate::meta::json::to_compact(value), buf, len, needed)
}

/// Sets one attribute from JSON.
pub(crate) unsafe fn set_one(
    node: &dyn Node,
    key: *const c_char,
    json: *const c_char,
) -> FfiResult {
    let key = c_str(key, "key")?;
    let value = parse_json(c_str(json, "json")?, "json")?;
    Ok(node.set_attribute(key, value)?)
}

/// Deletes one attribute; NOT_FOUND when absent.
pub(crate) unsafe fn delete_one(node: &dyn Node, key: *const c_char) -> FfiResult {
    let key = c_str(key, "key")?;
    if node.delete_attribute(key)? {
        Ok(())
    } else {
        Err(crate::Error::NotFound(format!("no attribute {key:?}")).into())
    }
}

/// The number types of the typed attribute calls, as their memory layout.
trait Plain: AttrValue + Native {}

impl Plain for i32 {}
impl Plain for i64 {}
impl Plain for f32 {}
impl Plain for f64 {}

/// Calls `$f::<T>($args)` with `T` the Rust type of an attribute number type code.
macro_rules! by_number_type {
    ($code:expr, $f:ident($($arg:expr),*)) => {
        match $code {
            c if c == zarr_dtype::ZARR_DTYPE_INT32 as i32 => $f::<i32>($($arg),*),
            c if c == zarr_dtype::ZARR_DTYPE_INT64 as i32 => $f::<i64>($($arg),*),
            c if c == zarr_dtype::ZARR_DTYPE_FLOAT32 as i32 => $f::<f32>($($arg),*),
            c if c == zarr_dtype::ZARR_DTYPE_FLOAT64 as i32 => $f::<f64>($($arg),*),
            c => Err(Failure::invalid(format!(
                "attribute numbers are ZARR_DTYPE_INT32, INT64, FLOAT32 or FLOAT64, not {c}"
            ))),
        }
    };
}

/// `n` items of `size` bytes at `ptr`, the product checked.
unsafe fn items<'a>(ptr: *const c_void, n: usize, size: usize) -> FfiResult<&'a [u8]> {
    let bytes = n
        .checked_mul(size)
        .filter(|b| *b <= isize::MAX as usize)
        .ok_or_else(|| {
            Failure::from(crate::Error::Overflow(format!(
                "{n} values of {size} bytes exceed the address space"
            )))
        })?;
    slice(ptr as *const u8, bytes, "values")
}

/// Reports the kind of attribute `key` and its number of items (1 for a scalar).
pub(crate) unsafe fn kind(
    node: &dyn Node,
    key: *const c_char,
    out_kind: *mut zarr_attr_kind_t,
    out_count: *mut usize,
) -> FfiResult {
    let out_kind = out(out_kind, "out_kind")?;
    let (kind, n) = typed_attrs::kind(node, c_str(key, "key")?)?;
    *out_kind = match kind {
        AttrKind::String => zarr_attr_kind::ZARR_ATTR_STRING,
        AttrKind::Integer => zarr_attr_kind::ZARR_ATTR_INTEGER,
        AttrKind::Float => zarr_attr_kind::ZARR_ATTR_FLOAT,
        AttrKind::Strings => zarr_attr_kind::ZARR_ATTR_STRINGS,
        AttrKind::Integers => zarr_attr_kind::ZARR_ATTR_INTEGERS,
        AttrKind::Floats => zarr_attr_kind::ZARR_ATTR_FLOATS,
        AttrKind::Other => zarr_attr_kind::ZARR_ATTR_OTHER,
    } as i32;
    if let Some(count) = out_count.as_mut() {
        *count = n;
    }
    Ok(())
}

/// Sets attribute `key` to the string `value`.
pub(crate) unsafe fn set_string(
    node: &dyn Node,
    key: *const c_char,
    value: *const c_char,
) -> FfiResult {
    let key = c_str(key, "key")?;
    let value = c_str(value, "value")?.to_string();
    Ok(typed_attrs::set(node, key, &value)?)
}

/// Copies string attribute `key` into `buf` (string output convention).
pub(crate) unsafe fn get_string(
    node: &dyn Node,
    key: *const c_char,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> FfiResult {
    let value: String = typed_attrs::get(node, c_str(key, "key")?)?;
    write_text(&value, buf, len, needed)
}

/// Sets attribute `key` to the list of `n` strings at `values`.
pub(crate) unsafe fn set_strings(
    node: &dyn Node,
    key: *const c_char,
    values: *const *const c_char,
    n: usize,
) -> FfiResult {
    let key = c_str(key, "key")?;
    let mut list = Vec::new();
    list.try_reserve(n)
        .map_err(|_| crate::error::no_memory(n, "attribute strings"))?;
    for (i, &item) in slice(values, n, "values")?.iter().enumerate() {
        list.push(c_str(item, &format!("values[{i}]"))?.to_string());
    }
    Ok(typed_attrs::set(node, key, &list)?)
}

/// Gives the list of strings of attribute `key`.
pub(crate) unsafe fn get_strings(
    node: &dyn Node,
    key: *const c_char,
    out_list: *mut *mut zarr_strings_t,
) -> FfiResult {
    clear_out(out_list, "out_list")?;
    let list: Vec<String> = typed_attrs::get(node, c_str(key, "key")?)?;
    give(out_list, super::store::strings(list));
    Ok(())
}

fn set_list<T: Plain>(node: &dyn Node, key: &str, bytes: &[u8], scalar: bool) -> FfiResult {
    let n = bytes.len() / T::SIZE;
    let mut values: Vec<T> = Vec::new();
    values
        .try_reserve(n)
        .map_err(|_| crate::error::no_memory(n.saturating_mul(T::SIZE), "attribute values"))?;
    values.extend(bytes.chunks_exact(T::SIZE).map(T::load));
    Ok(match (scalar, values.first()) {
        (true, Some(v)) => typed_attrs::set(node, key, v),
        _ => typed_attrs::set(node, key, &values),
    }?)
}

/// Sets attribute `key` to `n` numbers of type `dtype` at `values`: one number when
/// `scalar` (then `n` is 1), else a list.
pub(crate) unsafe fn set_numbers(
    node: &dyn Node,
    key: *const c_char,
    dtype: zarr_dtype_t,
    values: *const c_void,
    n: usize,
    scalar: bool,
) -> FfiResult {
    let key = c_str(key, "key")?;
    let size = by_number_type!(dtype, size_of_number())?;
    let bytes = items(values, n, size)?;
    if scalar && values.is_null() {
        return Err(Failure::null("value"));
    }
    by_number_type!(dtype, set_list(node, key, bytes, scalar))
}

fn size_of_number<T: Plain>() -> FfiResult<usize> {
    Ok(T::SIZE)
}

fn get_scalar<T: Plain>(node: &dyn Node, key: &str, out: &mut [u8]) -> FfiResult {
    let v: T = typed_attrs::get(node, key)?;
    v.store(&mut out[..T::SIZE]);
    Ok(())
}

/// Stores number attribute `key` as `dtype` at `value`.
pub(crate) unsafe fn get_number(
    node: &dyn Node,
    key: *const c_char,
    dtype: zarr_dtype_t,
    value: *mut c_void,
) -> FfiResult {
    let key = c_str(key, "key")?;
    let size = by_number_type!(dtype, size_of_number())?;
    if value.is_null() {
        return Err(Failure::null("value"));
    }
    let out = slice_mut(value as *mut u8, size, "value")?;
    by_number_type!(dtype, get_scalar(node, key, out))
}

fn get_list<T: Plain>(
    node: &dyn Node,
    key: &str,
    values: *mut c_void,
    len: usize,
    count: &mut usize,
) -> FfiResult {
    let list: Vec<T> = typed_attrs::get(node, key)?;
    *count = list.len();
    if list.len() > len {
        return Err(Failure::new(
            zarr_status::ZARR_ERR_BUFFER_SIZE,
            format!(
                "attribute {key:?} has {} values but the buffer holds {len}",
                list.len()
            ),
        ));
    }
    // SAFETY: `values` holds `len` values of T (checked by `items` before).
    let out = unsafe { slice_mut(values as *mut u8, list.len() * T::SIZE, "values")? };
    for (v, slot) in list.into_iter().zip(out.chunks_exact_mut(T::SIZE)) {
        v.store(slot);
    }
    Ok(())
}

/// Stores the list of numbers of attribute `key` as `dtype` in `values` (room for `len`);
/// `*count` gets the list's length, and `ZARR_ERR_BUFFER_SIZE` says it exceeds `len`.
pub(crate) unsafe fn get_numbers(
    node: &dyn Node,
    key: *const c_char,
    dtype: zarr_dtype_t,
    values: *mut c_void,
    len: usize,
    count: *mut usize,
) -> FfiResult {
    let key = c_str(key, "key")?;
    let count = out(count, "out_count")?;
    let size = by_number_type!(dtype, size_of_number())?;
    items(values, len, size)?;
    by_number_type!(dtype, get_list(node, key, values, len, count))
}
