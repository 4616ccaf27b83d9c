//! The attributes of a node (`.zattrs` in v2, inside `zarr.json` in v3, inside the node's
//! document in the 2022 draft layout), shared by arrays and groups.

use crate::error::{Error, Result};
use crate::meta::{draft, v2, v3, Format};
use crate::store::{get_document, Store};
use serde_json::{Map, Value};
use std::sync::Mutex;

/// Reads and updates one node's attributes; updates in this process are serialised.
#[derive(Debug)]
pub struct Attributes {
    key: String,
    format: Format,
    update: Mutex<()>,
}

impl Attributes {
    /// The attributes stored under `key` (`.zattrs`, v1 `attrs`, or the node's own document
    /// in v3 and the draft) of a node in `format`.
    pub fn new(key: String, format: Format) -> Self {
        Attributes {
            key,
            format,
            update: Mutex::new(()),
        }
    }

    /// The store key of the document.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether the attributes live inside a v3 `zarr.json`.
    fn embedded(&self) -> bool {
        self.format.embeds_attributes()
    }

    /// All attributes (empty when there is no document).
    pub fn get(&self, store: &dyn Store) -> Result<Map<String, Value>> {
        if self.format.draft_scheme().is_some() {
            // An implicit group has no document, and no attributes.
            let Some(bytes) = get_document(store, &self.key)? else {
                return Ok(Map::new());
            };
            return draft::parse_attributes(&bytes).map_err(|e| match e {
                Error::Metadata(m) => Error::Metadata(format!("{}: {m}", self.key)),
                other => other,
            });
        }
        if self.embedded() {
            let bytes = get_document(store, &self.key)?
                .ok_or_else(|| Error::NotFound(format!("{} is missing", self.key)))?;
            return match v3::parse(&bytes).map_err(|e| match e {
                Error::Metadata(m) => Error::Metadata(format!("{}: {m}", self.key)),
                other => other,
            })? {
                v3::Node::Array(_, attributes) | v3::Node::Group(attributes) => Ok(attributes),
            };
        }
        match get_document(store, &self.key)? {
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
        if self.format.draft_scheme().is_some() {
            return match get_document(store, &self.key)? {
                Some(bytes) => store.set(&self.key, &draft::with_attributes(&bytes, attributes)?),
                // An implicit group gets a document when it is given attributes.
                None => store.set(&self.key, &draft::render_group(attributes)),
            };
        }
        if self.embedded() {
            let bytes = get_document(store, &self.key)?
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
