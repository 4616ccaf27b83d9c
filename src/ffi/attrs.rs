//! The attribute calls shared by arrays and groups.

use super::*;
use crate::node::Node;
use std::ffi::c_char;

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
