//! Arrays: open and create, region read/write, resize and append, attributes, and the
//! queries that need the store (bytes stored, chunks initialised).

use super::{contains_array, contains_group, ensure_parent_groups, Mode};
use crate::error::{Error, Result};
use crate::io::region::{self, Region};
use crate::meta::dtype::ElementType;
use crate::meta::v2::{self, ARRAY_KEY, ATTRS_KEY};
use crate::meta::{ArrayMeta, Order};
use crate::store::{check_writable, join_key, node_prefix, normalize_path, Store};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, RwLock};

/// A Zarr array in a store. Safe to share between threads: reads run concurrently, and
/// writes to different chunks run concurrently.
#[derive(Debug)]
pub struct Array {
    store: Arc<dyn Store>,
    path: String,
    meta: RwLock<ArrayMeta>,
    writable: bool,
    /// Serialises read-modify-write updates of metadata and attributes in this process.
    update: Mutex<()>,
}

impl Array {
    /// Opens the array at `path` with mode `r`, `r+` or `a` (which, without creation
    /// settings, is `r+`).
    pub fn open(store: Arc<dyn Store>, path: &str, mode: Mode) -> Result<Self> {
        let writable = match mode {
            Mode::Read => false,
            Mode::ReadWrite | Mode::Append => true,
            Mode::Overwrite | Mode::CreateNew => {
                return Err(Error::InvalidArg(format!(
                    "mode {:?} creates an array: use an array builder",
                    mode.name()
                )))
            }
        };
        if writable {
            check_writable(store.as_ref(), "open an array for writing")?;
        }
        let path = normalize_path(path)?;
        let bytes = match store.get(&join_key(&path, ARRAY_KEY))? {
            Some(bytes) => bytes,
            None if contains_group(store.as_ref(), &path)? => {
                return Err(Error::NotFound(format!(
                    "{path:?} is a group, not an array"
                )))
            }
            None => return Err(Error::NotFound(format!("no array at {path:?}"))),
        };
        let meta = v2::parse_array(&bytes)?;
        Ok(Array {
            store,
            path,
            meta: RwLock::new(meta),
            writable,
            update: Mutex::new(()),
        })
    }

    /// Creates an array at `path` from `meta` (and `attributes`, if not empty) with mode
    /// `w` (replace), `w-` (fail if anything is there) or `a` (open if an array is there).
    pub fn create(
        store: Arc<dyn Store>,
        path: &str,
        meta: ArrayMeta,
        attributes: &Map<String, Value>,
        mode: Mode,
    ) -> Result<Self> {
        meta.validate()?;
        let path = normalize_path(path)?;
        check_writable(store.as_ref(), &format!("create an array at {path:?}"))?;
        let s = store.as_ref();
        match mode {
            Mode::Read | Mode::ReadWrite => {
                return Err(Error::InvalidArg(format!(
                    "mode {:?} does not create arrays",
                    mode.name()
                )))
            }
            Mode::Append if contains_array(s, &path)? => {
                return Array::open(store, &path, Mode::ReadWrite)
            }
            Mode::Append | Mode::CreateNew => {
                if contains_array(s, &path)? || contains_group(s, &path)? {
                    return Err(Error::Exists(format!("a node already exists at {path:?}")));
                }
            }
            Mode::Overwrite => {
                store.erase_prefix(&node_prefix(&path))?;
                if !path.is_empty() {
                    store.erase(&path)?;
                }
            }
        }
        ensure_parent_groups(s, &path)?;
        store.set(&join_key(&path, ARRAY_KEY), &v2::render_array(&meta))?;
        if !attributes.is_empty() {
            store.set(
                &join_key(&path, ATTRS_KEY),
                &v2::to_pretty_json(&Value::Object(attributes.clone())),
            )?;
        }
        Ok(Array {
            store,
            path,
            meta: RwLock::new(meta),
            writable: true,
            update: Mutex::new(()),
        })
    }

    /// A snapshot of the array's metadata.
    pub fn metadata(&self) -> ArrayMeta {
        self.meta
            .read()
            .map(|m| m.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// The normalised path of the array in its store.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The store holding the array.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Whether this handle may write.
    pub fn writable(&self) -> bool {
        self.writable
    }

    fn check_writable(&self, what: &str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly(format!(
                "cannot {what}: array {:?} was opened read-only",
                self.path
            )))
        }
    }

    /// Reads the region `start`/`count` into `buf` (elements of type `elem`, native byte
    /// order, laid out in `order`). Missing chunks read as the fill value.
    pub fn read(
        &self,
        start: &[u64],
        count: &[u64],
        elem: ElementType,
        order: Order,
        buf: &mut [u8],
    ) -> Result<()> {
        let meta = self.metadata();
        let region = Region { start, count };
        region::check(&meta, region, elem, buf.len())?;
        region::read(self.store.as_ref(), &self.path, &meta, region, order, buf)
    }

    /// Writes `buf` into the region `start`/`count`.
    pub fn write(
        &self,
        start: &[u64],
        count: &[u64],
        elem: ElementType,
        order: Order,
        buf: &[u8],
    ) -> Result<()> {
        self.check_writable("write")?;
        let meta = self.metadata();
        let region = Region { start, count };
        region::check(&meta, region, elem, buf.len())?;
        region::write(self.store.as_ref(), &self.path, &meta, region, order, buf)
    }

    /// Changes the shape; chunks wholly outside the new shape are erased.
    pub fn resize(&self, shape: &[u64]) -> Result<()> {
        self.check_writable("resize")?;
        let _guard = self.lock_update()?;
        let mut meta = self.metadata();
        if shape.len() != meta.rank() {
            return Err(Error::RankMismatch(format!(
                "new shape has {} dimensions but the array has {}",
                shape.len(),
                meta.rank()
            )));
        }
        meta.shape = shape.to_vec();
        meta.validate()?;
        let grid = meta.chunk_grid();
        for (key, index) in self.chunk_keys(&meta)? {
            if index.iter().zip(&grid).any(|(i, g)| i >= g) {
                self.store.erase(&key)?;
            }
        }
        self.store
            .set(&join_key(&self.path, ARRAY_KEY), &v2::render_array(&meta))?;
        *self
            .meta
            .write()
            .map_err(|_| Error::Internal("metadata lock poisoned".into()))? = meta;
        Ok(())
    }

    /// Appends `buf`, whose shape is `count`, along `axis`: every other extent of `count`
    /// must equal the array's. Returns the new shape.
    pub fn append(
        &self,
        axis: usize,
        count: &[u64],
        elem: ElementType,
        order: Order,
        buf: &[u8],
    ) -> Result<Vec<u64>> {
        self.check_writable("append")?;
        let meta = self.metadata();
        if count.len() != meta.rank() {
            return Err(Error::RankMismatch(format!(
                "appended data has {} dimensions but the array has {}",
                count.len(),
                meta.rank()
            )));
        }
        if axis >= meta.rank() {
            return Err(Error::InvalidArg(format!(
                "axis {axis} is not below the rank {}",
                meta.rank()
            )));
        }
        for d in (0..meta.rank()).filter(|&d| d != axis) {
            if count[d] != meta.shape[d] {
                return Err(Error::InvalidArg(format!(
                    "appended data has extent {} in dimension {d} but the array has {}",
                    count[d], meta.shape[d]
                )));
            }
        }
        let mut start = vec![0u64; meta.rank()];
        start[axis] = meta.shape[axis];
        let mut new_shape = meta.shape.clone();
        new_shape[axis] = meta.shape[axis]
            .checked_add(count[axis])
            .ok_or_else(|| Error::Overflow("appended shape overflows 64 bits".into()))?;
        let mut grown = meta.clone();
        grown.shape = new_shape.clone();
        grown.validate()?;
        region::check(
            &grown,
            Region {
                start: &start,
                count,
            },
            elem,
            buf.len(),
        )?;
        self.resize(&new_shape)?;
        self.write(&start, count, elem, order, buf)?;
        Ok(new_shape)
    }

    /// The array's attributes (empty when it has none).
    pub fn attributes(&self) -> Result<Map<String, Value>> {
        match self.store.get(&join_key(&self.path, ATTRS_KEY))? {
            Some(bytes) => v2::parse_attributes(&bytes),
            None => Ok(Map::new()),
        }
    }

    /// Replaces all attributes.
    pub fn set_attributes(&self, attributes: &Map<String, Value>) -> Result<()> {
        self.check_writable("set attributes")?;
        let _guard = self.lock_update()?;
        self.store_attributes(attributes)
    }

    /// Sets one attribute.
    pub fn set_attribute(&self, key: &str, value: Value) -> Result<()> {
        self.check_writable("set an attribute")?;
        let _guard = self.lock_update()?;
        let mut attributes = self.attributes()?;
        attributes.insert(key.to_string(), value);
        self.store_attributes(&attributes)
    }

    /// Deletes one attribute; returns whether it existed.
    pub fn delete_attribute(&self, key: &str) -> Result<bool> {
        self.check_writable("delete an attribute")?;
        let _guard = self.lock_update()?;
        let mut attributes = self.attributes()?;
        let existed = attributes.shift_remove(key).is_some();
        if existed {
            self.store_attributes(&attributes)?;
        }
        Ok(existed)
    }

    fn store_attributes(&self, attributes: &Map<String, Value>) -> Result<()> {
        self.store.set(
            &join_key(&self.path, ATTRS_KEY),
            &v2::to_pretty_json(&Value::Object(attributes.clone())),
        )
    }

    fn lock_update(&self) -> Result<std::sync::MutexGuard<'_, ()>> {
        self.update
            .lock()
            .map_err(|_| Error::Internal("update lock poisoned".into()))
    }

    /// Keys of the stored chunks inside the grid of `meta`'s rank, with their indices.
    fn chunk_keys(&self, meta: &ArrayMeta) -> Result<Vec<(String, Vec<u64>)>> {
        let prefix = node_prefix(&self.path);
        let relative: Vec<String> = if meta.separator == '/' && meta.rank() > 1 {
            self.store
                .list_prefix(&prefix)?
                .into_iter()
                .map(|k| k[prefix.len()..].to_string())
                .collect()
        } else {
            self.store.list_dir(&prefix)?.keys
        };
        Ok(relative
            .into_iter()
            .filter_map(|rel| {
                meta.parse_chunk_key(&rel)
                    .map(|index| (join_key(&self.path, &rel), index))
            })
            .collect())
    }

    /// Total bytes stored under the array: metadata, attributes and chunks.
    pub fn nbytes_stored(&self) -> Result<u64> {
        let mut total = 0;
        for key in self.store.list_prefix(&node_prefix(&self.path))? {
            total += self.store.size(&key)?.unwrap_or(0);
        }
        Ok(total)
    }

    /// Number of chunks inside the grid that are stored.
    pub fn nchunks_initialized(&self) -> Result<u64> {
        let meta = self.metadata();
        let grid = meta.chunk_grid();
        Ok(self
            .chunk_keys(&meta)?
            .iter()
            .filter(|(_, index)| index.iter().zip(&grid).all(|(i, g)| i < g))
            .count() as u64)
    }
}
