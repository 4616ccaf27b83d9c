//! Reading a JSON metadata document field by field, with errors that name the document
//! and the key at fault.

use super::json;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// A parsed metadata document: its name (`.zarray`, `meta`, `zarr.json`) and its object.
#[derive(Debug)]
pub struct Doc {
    name: &'static str,
    obj: Map<String, Value>,
}

impl Doc {
    /// Parses `bytes` as the JSON object the document `name` must be.
    pub fn parse(name: &'static str, bytes: &[u8]) -> Result<Self> {
        match json::parse(bytes) {
            Ok(Value::Object(obj)) => Ok(Doc { name, obj }),
            Ok(_) => Err(Error::Metadata(format!("{name} is not a JSON object"))),
            Err(e) => Err(Error::Metadata(format!("{name} is not valid JSON: {e}"))),
        }
    }

    /// The whole object.
    pub fn object(&self) -> &Map<String, Value> {
        &self.obj
    }

    /// An optional field.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.obj.get(key)
    }

    /// A required field.
    pub fn field(&self, key: &str) -> Result<&Value> {
        self.obj
            .get(key)
            .ok_or_else(|| Error::Metadata(format!("{}: missing required key {key:?}", self.name)))
    }

    /// An error saying that `key` must be `what`.
    pub fn bad(&self, key: &str, what: &str) -> Error {
        Error::Metadata(format!("{}: {key:?} must be {what}", self.name))
    }

    /// Checks that `zarr_format` is `version`.
    pub fn expect_format(&self, version: u64) -> Result<()> {
        if self.field("zarr_format")?.as_u64() == Some(version) {
            Ok(())
        } else {
            Err(self.bad("zarr_format", &version.to_string()))
        }
    }

    /// A required list of non-negative integers.
    pub fn u64_list(&self, key: &str) -> Result<Vec<u64>> {
        u64_list(self.field(key)?).ok_or_else(|| self.bad(key, "a list of non-negative integers"))
    }
}

/// A JSON list of non-negative integers, if `value` is one.
pub fn u64_list(value: &Value) -> Option<Vec<u64>> {
    value.as_array()?.iter().map(Value::as_u64).collect()
}
