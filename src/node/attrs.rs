//! The attributes of a node (`.zattrs` in v2, inside `zarr.json` in v3), shared by arrays
//! and groups.

use crate::error::{Error, Result};
use crate::meta::{v2, v3};
use crate::store::{join_key, Store};
use serde_json::{Map, Value};
use std::sync::Mutex;

/// Reads and updates one node's attributes; updates in this process are serialised.
#[derive(Debug)]
pub struct Attributes {
    key: String,
    update: Mutex<()>,
}

impl Attributes {
    /// The attributes of the node at `path`, stored under `name` (`.zattrs`, or `attrs` in v1).
    pub fn new(path: &str, name: &str) -> Self {
        Attributes {
            key: join_key(path, name),
            update: Mutex::new(()),
        }
    }

    /// The store key of the document.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether the attributes live inside a v3 `zarr.json`.
    fn embedded(&self) -> bool {
        self.key.rsplit('/').next() == Some(v3::NODE_KEY)
    }

    /// All attributes (empty when there is no document).
    pub fn get(&self, store: &dyn Store) -> Result<Map<String, Value>> {
        if self.embedded() {
            let bytes = store
                .get(&self.key)?
                .ok_or_else(|| Error::NotFound(format!("{} is missing", self.key)))?;
            return match v3::parse(&bytes).map_err(|e| match e {
                Error::Metadata(m) => Error::Metadata(format!("{}: {m}", self.key)),
                other => other,
            })? {
                v3::Node::Array(_, attributes) | v3::Node::Group(attributes) => Ok(attributes),
            };
        }
        match store.get(&self.key)? {
            Some(bytes) => v2::parse_attributes(&bytes).map_err(|e| match e {
                Error::Metadata(m) => Error::Metadata(format!("{}: {m}", self.key)),
                other => other,
            }),
            None => Ok(Map::new()),
        }
    }

    /// Replaces all attributes.
    pub fn set(&self, store: &dyn Store, attributes: &Map<String, Value>) -> Result<()> {
        let _guard = self.lock()?;
        self.write(store, attributes)
    }

    /// Sets one attribute, keeping the others.
    pub fn set_one(&self, store: &dyn Store, key: &str, value: Value) -> Result<()> {
        let _guard = self.lock()?;
        let mut attributes = self.get(store)?;
        attributes.insert(key.to_string(), value);
        self.write(store, &attributes)
    }

    /// Deletes one attribute; returns whether it existed.
    pub fn delete_one(&self, store: &dyn Store, key: &str) -> Result<bool> {
        let _guard = self.lock()?;
        let mut attributes = self.get(store)?;
        let existed = attributes.shift_remove(key).is_some();
        if existed {
            self.write(store, &attributes)?;
        }
        Ok(existed)
    }

    fn write(&self, store: &dyn Store, attributes: &Map<String, Value>) -> Result<()> {
        if self.embedded() {
            let bytes = store
                .get(&self.key)?
                .ok_or_else(|| Error::NotFound(format!("{} is missing", self.key)))?;
            return store.set(&self.key, &v3::with_attributes(&bytes, attributes)?);
        }
        store.set(
            &self.key,
            &v2::to_pretty_json(&Value::Object(attributes.clone())),
        )
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, ()>> {
        self.update
            .lock()
            .map_err(|_| Error::Internal("attribute lock poisoned".into()))
    }
}
