//! Arrays: open and create, region read/write, resize and append, attributes, and the
//! queries that need the store (bytes stored, chunks initialised).

use super::attrs::Attributes;
use super::{
    check_entry_point, check_parents, contains_array, contains_group, draft_scheme,
    ensure_parent_groups, erase_node, put_document, Mode, Node,
};
use crate::dtype::ElementType;
use crate::error::{Error, Result};
use crate::io::append::{self, Open};
use crate::io::append_lock::AppendLock;
use crate::io::cache::ChunkCache;
use crate::io::cast;
use crate::io::convert;
use crate::io::encoded;
use crate::io::location::Location;
use crate::io::lock::{Synchronization, WriteGuard};
use crate::io::region::{self, MemLayout, Region};
use crate::io::shard::IndexCache;
use crate::io::vlen::{self, VlenItems};
use crate::meta::{ArrayMeta, Format, Order};
use crate::store::{check_writable, get_document, join_key, node_path, node_prefix, Memo, Store};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};

/// The attribute holding dimension names (xarray's convention, in the OGC standard).
pub const DIMENSIONS_KEY: &str = "_ARRAY_DIMENSIONS";

/// A Zarr array in a store. Safe to share between threads: reads run concurrently, and
/// writes to different chunks run concurrently.
#[derive(Debug)]
pub struct Array {
    store: Arc<dyn Store>,
    path: String,
    /// Shared with the calls that use it, never copied per call (a fill value may be large).
    meta: RwLock<Arc<ArrayMeta>>,
    format: Format,
    writable: bool,
    attrs: Attributes,
    /// Chunk locks of the chosen synchronization (none by default), shared with every
    /// other handle on the array in this process.
    guard: RwLock<WriteGuard>,
    /// Shard indexes read through this handle, reused while their shards are unchanged.
    shards: IndexCache,
    /// Decoded chunks kept for later reads through this handle (off unless sized).
    cache: ChunkCache,
    /// Serialises metadata updates (resize) in this process.
    update: Mutex<()>,
    /// The items of the last variable-length read whose caller's buffers were too small
    /// (a size query), for the call that follows it with buffers of the right size.
    kept_vlen: Mutex<Option<KeptVlen>>,
    /// Streaming appends: the open shards of the growing axis (see [`Array::append`]).
    appends: Mutex<Appends>,
    /// Serialises appends through this handle: each reads the extent it grows.
    appending: Mutex<()>,
    /// Non-blocking writes and appends, run in submission order.
    requests: super::pending::Queue,
    /// The append lock of this handle (see [`crate::io::append_lock`]).
    appender: Mutex<Appender>,
}

/// Whether a handle holds the array's append lock.
#[derive(Debug, Default)]
struct Appender {
    /// The caller turned the lock off: its writers coordinate by other means.
    off: bool,
    /// The lock was taken (at the first append or resize); `lock` is `None` on stores that
    /// need none.
    taken: bool,
    lock: Option<AppendLock>,
}

/// The state of streaming appends on a handle.
#[derive(Debug)]
struct Appends {
    /// Whether appends to a sharded array are buffered (on unless turned off).
    enabled: bool,
    /// The open shards and whether the shape document lags behind the handle's shape.
    open: Option<Open>,
}

/// A variable-length read kept for the call that follows a size query.
#[derive(Debug)]
struct KeptVlen {
    start: Vec<u64>,
    count: Vec<u64>,
    order: Order,
    /// [`super::MUTATIONS`] when the read started: any change since makes it stale.
    generation: u64,
    items: VlenItems,
}

/// The format and metadata document of the array at `path`, in one request for a v3 array:
/// its own `zarr.json` is read first, and the 2022 draft layout (whose entry point is the
/// root `zarr.json`) is looked for only when that is not a v3 document.
fn find_array_document(
    store: &dyn Store,
    path: &str,
    hierarchy: Option<Format>,
) -> Result<Option<(Format, Vec<u8>)>> {
    // In a hierarchy known not to be a 2022-draft one (or a store said to hold one format),
    // its own format's document is looked for first and the draft's entry point not at
    // all: one read for each array of a v2 or v3 tree.
    let hinted = || {
        store
            .zarr_format_hint()
            .and_then(|n| Format::from_number(i64::from(n)).ok())
    };
    if let Some(format) = hierarchy
        .or_else(hinted)
        .filter(|f| f.draft_scheme().is_none())
    {
        let order = [format, Format::V3, Format::V2, Format::V1];
        for (i, format) in order.into_iter().enumerate() {
            if order[..i].contains(&format) {
                continue;
            }
            if let Some(bytes) = get_document(store, &format.array_key(path))? {
                return Ok(Some((format, bytes)));
            }
        }
        return Ok(None);
    }
    // v3 first (one read), then v2 and v1 (two or three), then the 2022 draft's layout.
    let own = get_document(store, &Format::V3.array_key(path))?;
    let draft = match &own {
        // The root `zarr.json` is either a v3 node or the draft's entry point.
        Some(bytes) if path.is_empty() => crate::meta::draft::detect(bytes)?,
        Some(_) => None,
        None => {
            for format in [Format::V2, Format::V1] {
                if let Some(bytes) = get_document(store, &format.array_key(path))? {
                    return Ok(Some((format, bytes)));
                }
            }
            draft_scheme(store)?
        }
    };
    if let Some(scheme) = draft {
        let format = Format::Draft(scheme);
        return Ok(get_document(store, &format.array_key(path))?.map(|bytes| (format, bytes)));
    }
    Ok(own.map(|bytes| (Format::V3, bytes)))
}

impl Array {
    /// Opens the array at `path` with mode `r`, `r+` or `a` (which, without creation
    /// settings, is `r+`).
    pub fn open(store: Arc<dyn Store>, path: &str, mode: Mode) -> Result<Self> {
        Self::open_in(store, path, mode, None)
    }

    /// As [`Array::open`], for an array of a hierarchy whose format (not the 2022 draft's)
    /// is known: its documents are looked for first.
    pub(crate) fn open_in(
        store: Arc<dyn Store>,
        path: &str,
        mode: Mode,
        hierarchy: Option<Format>,
    ) -> Result<Self> {
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
        let path = node_path(path)?;
        let found = find_array_document(store.as_ref(), &path, hierarchy)?;
        let Some((format, bytes)) = found else {
            if contains_group(store.as_ref(), &path)? {
                return Err(Error::NodeType(format!(
                    "{path:?} is a group, not an array"
                )));
            }
            return Err(Error::NotFound(format!("no array at {path:?}")));
        };
        let meta = format.parse_array(&bytes).map_err(|e| match e {
            Error::Metadata(m) => Error::Metadata(format!("array {path:?}: {m}")),
            other => other,
        })?;
        Ok(Array::new(store, path, meta, format, writable))
    }

    fn new(
        store: Arc<dyn Store>,
        path: String,
        meta: ArrayMeta,
        format: Format,
        writable: bool,
    ) -> Self {
        Array {
            attrs: Attributes::new(format.attrs_key(&path), format),
            store,
            path,
            meta: RwLock::new(Arc::new(meta)),
            format,
            writable,
            guard: RwLock::new(WriteGuard::None),
            shards: IndexCache::default(),
            cache: ChunkCache::default(),
            update: Mutex::new(()),
            kept_vlen: Mutex::new(None),
            appending: Mutex::new(()),
            requests: super::pending::Queue::default(),
            appender: Mutex::default(),
            appends: Mutex::new(Appends {
                enabled: true,
                open: None,
            }),
        }
    }

    /// Creates an array at `path` from `meta` (and `attributes`, if not empty) with mode
    /// `w` (replace), `w-` (fail if anything is there) or `a` (open if an array is there).
    pub fn create(
        store: Arc<dyn Store>,
        path: &str,
        meta: ArrayMeta,
        attributes: &Map<String, Value>,
        mode: Mode,
        format: Format,
    ) -> Result<Self> {
        meta.validate()?;
        let path = node_path(path)?;
        check_writable(store.as_ref(), &format!("create an array at {path:?}"))?;
        // The documents probed on the way are read once each.
        let memo = Memo::new(store.as_ref());
        let s: &dyn Store = &memo;
        check_parents(s, &path)?;
        if let Some(scheme) = format.draft_scheme() {
            check_entry_point(s, scheme)?;
        }
        // Rendered before anything is erased or written: a document that cannot be
        // written leaves the store as it was.
        let document = format.render_array(&meta, attributes)?;
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
                if contains_array(s, &path)? {
                    return Err(Error::Exists(format!(
                        "an array already exists at {path:?}"
                    )));
                }
                if contains_group(s, &path)? {
                    return Err(Error::NodeType(format!("a group exists at {path:?}")));
                }
            }
            Mode::Overwrite => erase_node(s, &path)?,
        }
        ensure_parent_groups(s, &path, format)?;
        let only_new = mode == Mode::CreateNew;
        put_document(s, &format.array_key(&path), &document, only_new)?;
        let array = Array::new(store, path, meta, format, true);
        // A v1 array always has its `attrs` document, as zarr 1 wrote it (and zarr-python
        // 2's migration expects).
        if !format.creates_with_attributes() && (!attributes.is_empty() || format == Format::V1) {
            array.attrs.set(array.store.as_ref(), attributes)?;
        }
        Ok(array)
    }

    /// A snapshot of the array's metadata (shared: taking it copies nothing).
    pub fn metadata(&self) -> Arc<ArrayMeta> {
        self.meta
            .read()
            .map(|m| Arc::clone(&m))
            .unwrap_or_else(|p| Arc::clone(&p.into_inner()))
    }

    /// The fill value as compact JSON text, in the form of the array's format (v3: hex bits
    /// for NaNs other than `"NaN"`'s; else the v2 forms; `null` when unset). The text of a
    /// large item is allocated fallibly: [`Error::NoMemory`] when it cannot be had.
    pub fn fill_value_json(&self) -> Result<String> {
        let meta = self.metadata();
        let value = match (&meta.fill_value, self.format) {
            (Some(bytes), Format::V3) => crate::meta::v3::render_value(bytes, &meta.dtype)?,
            (fill, _) => crate::meta::fill::render_fill(fill, &meta.dtype)?,
        };
        crate::meta::json::try_to_compact(&value, "the fill value's JSON text")
    }

    /// Replaces the metadata that later calls see (and drops the decoded chunks kept).
    fn replace_metadata(&self, meta: ArrayMeta) -> Result<()> {
        *self
            .meta
            .write()
            .map_err(|_| Error::Internal("metadata lock poisoned".into()))? = Arc::new(meta);
        self.cache.clear();
        Ok(())
    }

    /// Keeps up to `bytes` of decoded chunks for later reads through this handle (0, the
    /// default, keeps none and empties the cache): a read then takes the chunks it finds
    /// there instead of reading and decoding them. Any write through any store of this
    /// process makes every kept chunk stale; writes by other processes are seen after
    /// [`Array::refresh`]. Variable-length arrays are not cached.
    pub fn set_cache_bytes(&self, bytes: usize) {
        self.cache.set_capacity(bytes);
    }

    /// The size set by [`Array::set_cache_bytes`].
    pub fn cache_bytes(&self) -> usize {
        self.cache.capacity()
    }

    /// Reads the metadata again from the store, so this handle sees the shape (and the
    /// rest) that another handle or process changed since it was opened; decoded chunks
    /// kept by the handle are dropped.
    pub fn refresh(&self) -> Result<()> {
        let mut appends = self.appends()?;
        self.flush_appends(&mut appends, true)?;
        self.reload_metadata()
    }

    /// Reads the metadata document again and replaces the handle's copy (nothing buffered
    /// is stored first).
    fn reload_metadata(&self) -> Result<()> {
        let _guard = self.lock_update()?;
        let key = self.format.array_key(&self.path);
        let bytes = get_document(self.store.as_ref(), &key)?.ok_or_else(|| {
            Error::NotFound(format!("the array at {:?} no longer exists", self.path))
        })?;
        let meta = self.format.parse_array(&bytes).map_err(|e| match e {
            Error::Metadata(m) => Error::Metadata(format!("array {:?}: {m}", self.path)),
            other => other,
        })?;
        self.replace_metadata(meta)
    }

    /// The chunks of the grid that the region `start`/`count` touches, in C order: shards
    /// when the array is sharded (the units stored and rewritten whole, so writers that
    /// never share one need no synchronization).
    pub fn region_chunks(&self, start: &[u64], count: &[u64]) -> Result<Vec<Vec<u64>>> {
        let Some((first, last)) = self.region_chunk_box(start, count)? else {
            return Ok(Vec::new());
        };
        let extent: Vec<u64> = (0..first.len()).map(|d| last[d] - first[d] + 1).collect();
        let total = crate::error::count_of(&extent, "chunks in the region")?;
        let mut chunks = Vec::new();
        chunks.try_reserve_exact(total).map_err(|_| {
            crate::error::no_memory(total * 8 * first.len(), "the chunks of a region")
        })?;
        let mut index = first.clone();
        for _ in 0..total {
            chunks.push(index.clone());
            for d in (0..index.len()).rev() {
                index[d] += 1;
                if index[d] <= last[d] {
                    break;
                }
                index[d] = first[d];
            }
        }
        Ok(chunks)
    }

    /// The first and last chunk of the grid (shard, when sharded) per dimension that the
    /// region `start`/`count` touches, or `None` for an empty region.
    pub(crate) fn region_chunk_box(
        &self,
        start: &[u64],
        count: &[u64],
    ) -> Result<Option<(Vec<u64>, Vec<u64>)>> {
        let meta = self.metadata();
        region::check_bounds(&meta, Region { start, count })?;
        if count.contains(&0) {
            return Ok(None);
        }
        let first = (0..meta.rank())
            .map(|d| meta.chunk_of(d, start[d]))
            .collect();
        let last = (0..meta.rank())
            .map(|d| meta.chunk_of(d, start[d] + count[d] - 1))
            .collect();
        Ok(Some((first, last)))
    }

    /// The region of the grid's chunk (shard, when sharded) at `index`: its first element
    /// and extent per dimension, clipped to the array's shape.
    pub fn chunk_region(&self, index: &[u64]) -> Result<(Vec<u64>, Vec<u64>)> {
        let meta = self.metadata();
        if index.len() != meta.rank() {
            return Err(Error::RankMismatch(format!(
                "the chunk index has {} dimensions but the array has {}",
                index.len(),
                meta.rank()
            )));
        }
        let grid = meta.chunk_grid();
        let mut start = Vec::with_capacity(index.len());
        let mut count = Vec::with_capacity(index.len());
        for d in 0..index.len() {
            if index[d] >= grid[d] {
                return Err(Error::OutOfBounds(format!(
                    "dimension {d}: chunk {} is outside the grid of {} chunks",
                    index[d], grid[d]
                )));
            }
            let (first, edge) = meta.chunk_span(d, index[d]);
            start.push(first);
            count.push(first.saturating_add(edge).min(meta.shape[d]) - first);
        }
        Ok((start, count))
    }

    /// The index of the grid's chunk (shard, when sharded) holding the element at `index`.
    pub fn chunk_of(&self, index: &[u64]) -> Result<Vec<u64>> {
        let meta = self.metadata();
        let ones = vec![1; index.len()];
        region::check_bounds(
            &meta,
            Region {
                start: index,
                count: &ones,
            },
        )?;
        Ok((0..index.len())
            .map(|d| meta.chunk_of(d, index[d]))
            .collect())
    }

    /// Reads the region `start`/`count` into `buf` (elements of type `elem`, native byte
    /// order, laid out as `layout` says: an [`Order`] or element strides). Missing chunks read
    /// as the fill value.
    pub fn read<'a>(
        &self,
        start: &[u64],
        count: &[u64],
        elem: ElementType,
        layout: impl Into<MemLayout<'a>>,
        buf: &mut [u8],
    ) -> Result<()> {
        self.settle()?;
        let meta = self.metadata();
        let region = Region { start, count };
        let strides = region::check(&meta, region, elem, layout.into(), buf.len())?;
        if elem != meta.dtype.element_type() {
            // bfloat16 read as float32: read the items dense, then widen them into place.
            let elements = crate::error::count_of(count, "region element count")?;
            let mut dense = Vec::new();
            crate::error::try_resize(&mut dense, elements * meta.item_size(), "bfloat16 items")?;
            region::read(
                self.store.as_ref(),
                &self.format.data_base(&self.path),
                &meta,
                region,
                Order::C.strides(count),
                &mut dense,
                &self.shards,
                &self.cache,
            )?;
            convert::bf16_to_f32(&dense, count, &strides, buf);
            return Ok(());
        }
        region::read(
            self.store.as_ref(),
            &self.format.data_base(&self.path),
            &meta,
            region,
            strides.clone(),
            buf,
            &self.shards,
            &self.cache,
        )?;
        convert::normalize_narrow(&meta.dtype, count, &strides, buf);
        Ok(())
    }

    /// Writes `buf` into the region `start`/`count` (arguments as for [`Array::read`]),
    /// holding each chunk's lock while it is rewritten when a synchronizer is set.
    pub fn write<'a>(
        &self,
        start: &[u64],
        count: &[u64],
        elem: ElementType,
        layout: impl Into<MemLayout<'a>>,
        buf: &[u8],
    ) -> Result<()> {
        self.check_writable("write")?;
        self.settle_appends(start, count)?;
        let meta = self.metadata();
        let region = Region { start, count };
        let strides = region::check(&meta, region, elem, layout.into(), buf.len())?;
        if elem != meta.dtype.element_type() {
            // float32 written to bfloat16: narrow the items into a dense buffer first.
            let elements = crate::error::count_of(count, "region element count")?;
            let dense = convert::f32_to_bf16(buf, count, &strides, elements)?;
            return region::write(
                self.store.as_ref(),
                &self.format.data_base(&self.path),
                &meta,
                region,
                Order::C.strides(count),
                &dense,
                &*self.guard()?,
            );
        }
        convert::check_narrow(&meta.dtype, count, &strides, buf)?;
        region::write(
            self.store.as_ref(),
            &self.format.data_base(&self.path),
            &meta,
            region,
            strides,
            buf,
            &*self.guard()?,
        )
    }

    /// Before a write of the region `start`/`count`: shards still being stored behind the
    /// appends are collected (the write may rewrite them), and open shards the region
    /// overlaps are stored and closed; the write then rewrites them as any other shard.
    fn settle_appends(&self, start: &[u64], count: &[u64]) -> Result<()> {
        let mut appends = self.appends()?;
        if let Some(open) = appends.open.as_mut() {
            self.collect_stored(open, true)?;
        }
        let meta = self.metadata();
        let overlaps = appends.open.as_ref().is_some_and(|open| {
            open.axis_range(&meta).is_some_and(|(lo, hi)| {
                let axis = open.axis;
                start.len() == meta.rank()
                    && count.len() == meta.rank()
                    && start[axis] < hi
                    && start[axis].saturating_add(count[axis]) > lo
            })
        });
        if overlaps {
            self.flush_appends(&mut appends, true)?;
        }
        Ok(())
    }

    /// Encodes the whole chunk at `index` of the grid the codecs encode (inner chunks when
    /// sharded) from `data` (its elements in the array's type, native byte order, C order,
    /// past the array's edge too), for [`Array::write_encoded`], possibly through another
    /// handle of the array in another process. `None`: the chunk equals the fill value and
    /// is not stored.
    pub fn encode_chunk(&self, index: &[u64], data: &[u8]) -> Result<Option<Vec<u8>>> {
        self.encode_chunk_with(index, data, |e| e.map(<[u8]>::to_vec))
    }

    /// [`Array::encode_chunk`], handing the encoding to `use_encoding` where it lies.
    pub fn encode_chunk_with<R>(
        &self,
        index: &[u64],
        data: &[u8],
        use_encoding: impl FnOnce(Option<&[u8]>) -> R,
    ) -> Result<R> {
        let keep_fill = self.guard()?.keeps_empty();
        encoded::encode_unit(&self.metadata(), index, data, keep_fill, use_encoding)
    }

    /// The most bytes [`Array::encode_chunk`] returns for one chunk of this array.
    pub fn encoded_chunk_bound(&self) -> u64 {
        self.metadata().max_encoded_chunk_len()
    }

    /// How many encoded chunks [`Array::write_encoded`] takes for the object at `index`
    /// (of the grid of stored objects): the inner chunks per shard, or one.
    pub fn encoded_units(&self, index: &[u64]) -> Result<usize> {
        encoded::units_of(&self.metadata(), index)
    }

    /// Stores the object (chunk, or shard) at `index` of the grid of stored objects whole
    /// from `units`, chunks encoded by [`Array::encode_chunk`] (a shard's inner chunks in
    /// C order; `None`: not stored, read as the fill value), under the handle's
    /// synchronizer. The encodings are stored as given: bytes that are not one are
    /// refused only when longer than any encoding can be.
    pub fn write_encoded(&self, index: &[u64], units: &[Option<&[u8]>]) -> Result<()> {
        self.check_writable("write_encoded")?;
        let (start, count) = self.chunk_region(index)?;
        self.settle_appends(&start, &count)?;
        encoded::write_object(
            self.store.as_ref(),
            &self.format.data_base(&self.path),
            &self.metadata(),
            &*self.guard()?,
            index,
            units,
        )
    }

    /// Reads the region `start`/`count` into `buf` as elements of `elem`, a numeric type
    /// that may differ from the array's, converted with netCDF's rules ([`cast`]): every
    /// element is converted, and [`Error::Range`] reports those that did not fit after all
    /// were stored. The same type, or a conversion [`Array::read`] does itself, is a plain
    /// read.
    pub fn read_as(
        &self,
        start: &[u64],
        count: &[u64],
        elem: ElementType,
        order: Order,
        buf: &mut [u8],
    ) -> Result<()> {
        let stored = self.metadata().dtype.element_type();
        if elem == stored || region::converts(stored, elem) {
            return self.read(start, count, elem, order, buf);
        }
        let (elements, bytes) = self.converted_region(start, count, elem, buf.len())?;
        if elem.size() >= stored.size() {
            // Widening: the items are read into the start of `buf` and converted in place.
            self.read(start, count, stored, order, &mut buf[..bytes])?;
            return cast::convert_in_place(stored, elem, buf, elements);
        }
        let mut items = crate::error::try_zeroed(bytes, "the converted region")?;
        self.read(start, count, stored, order, &mut items)?;
        cast::convert(stored, elem, &items, buf)
    }

    /// Writes `buf`, elements of the numeric type `elem`, into the region `start`/`count`,
    /// converted to the array's type with the rules of [`Array::read_as`]. When any element
    /// does not fit, nothing is written and the error is [`Error::Range`].
    pub fn write_from(
        &self,
        start: &[u64],
        count: &[u64],
        elem: ElementType,
        order: Order,
        buf: &[u8],
    ) -> Result<()> {
        let stored = self.metadata().dtype.element_type();
        if elem == stored || region::converts(stored, elem) {
            return self.write(start, count, elem, order, buf);
        }
        self.check_writable("write")?;
        let (_, bytes) = self.converted_region(start, count, elem, buf.len())?;
        let mut items = crate::error::try_zeroed(bytes, "the converted region")?;
        cast::convert(elem, stored, buf, &mut items)?;
        self.write(start, count, stored, order, &items)
    }

    /// Checks a converted read or write (region, both types, the caller's `buf_len` bytes
    /// of `elem`) and returns the region's element count and its size in the array's type.
    fn converted_region(
        &self,
        start: &[u64],
        count: &[u64],
        elem: ElementType,
        buf_len: usize,
    ) -> Result<(usize, usize)> {
        let region = Region { start, count };
        region::check_bounds(&self.metadata(), region)?;
        self.converted_size(count, elem, buf_len)
    }

    /// Checks both types of a conversion and the caller's `buf_len` bytes of `elem` for a
    /// block of extents `count`, and returns its element count and its size in the array's
    /// type.
    fn converted_size(
        &self,
        count: &[u64],
        elem: ElementType,
        buf_len: usize,
    ) -> Result<(usize, usize)> {
        let stored = self.metadata().dtype.element_type();
        if !cast::convertible(stored) {
            return Err(cast::unsupported(stored, "the array's"));
        }
        if !cast::convertible(elem) {
            return Err(cast::unsupported(elem, "the buffer's"));
        }
        let elements = crate::error::count_of(count, "region element count")?;
        let expected = elements.checked_mul(elem.size()).ok_or_else(|| {
            Error::Overflow("the region's size in bytes exceeds the address space".into())
        })?;
        if buf_len != expected {
            return Err(Error::BufferSize(format!(
                "the region holds {elements} elements of {} ({expected} bytes) but the \
                 buffer has {buf_len} bytes",
                elem.name()
            )));
        }
        let bytes = elements.checked_mul(stored.size()).ok_or_else(|| {
            Error::Overflow("the converted region's size exceeds the address space".into())
        })?;
        Ok((elements, bytes))
    }

    /// Reads the items of region `start`/`count` of a variable-length array (strings,
    /// bytes, numeric arrays in native byte order), in `order`. Missing chunks read as the
    /// fill value; a stored string that is not UTF-8 is an error.
    pub fn read_vlen(&self, start: &[u64], count: &[u64], order: Order) -> Result<VlenItems> {
        self.read_vlen_tracked(start, count, order)
            .map(|(items, _)| items)
    }

    /// As [`Array::read_vlen`], with the change count the read started at; a read kept by
    /// [`Array::keep_vlen`] for the same region is used when nothing changed since.
    pub fn read_vlen_tracked(
        &self,
        start: &[u64],
        count: &[u64],
        order: Order,
    ) -> Result<(VlenItems, u64)> {
        let generation = super::MUTATIONS.load(std::sync::atomic::Ordering::SeqCst);
        let kept = self.kept_vlen.lock().ok().and_then(|mut k| k.take());
        if let Some(k) = kept {
            if k.generation == generation
                && k.start == start
                && k.count == count
                && k.order == order
            {
                return Ok((k.items, generation));
            }
        }
        let meta = self.metadata();
        check_variable(&meta)?;
        let items = vlen::read(
            self.store.as_ref(),
            &self.format.data_base(&self.path),
            &meta,
            Region { start, count },
            order,
        )?;
        Ok((items, generation))
    }

    /// Keeps the items of a read (made at change count `generation`) for the next read of
    /// the same region, so asking for the size first does not decode everything twice.
    pub fn keep_vlen(
        &self,
        start: &[u64],
        count: &[u64],
        order: Order,
        generation: u64,
        items: VlenItems,
    ) {
        if let Ok(mut kept) = self.kept_vlen.lock() {
            *kept = Some(KeptVlen {
                start: start.to_vec(),
                count: count.to_vec(),
                order,
                generation,
                items,
            });
        }
    }

    /// Writes `items` (one per element of region `start`/`count`, in `order`) into a
    /// variable-length array. Strings must be UTF-8; nothing is stored if any item is
    /// rejected.
    pub fn write_vlen(
        &self,
        start: &[u64],
        count: &[u64],
        order: Order,
        items: &[&[u8]],
    ) -> Result<()> {
        self.check_writable("write")?;
        let meta = self.metadata();
        check_variable(&meta)?;
        vlen::write(
            self.store.as_ref(),
            &self.format.data_base(&self.path),
            &meta,
            Region { start, count },
            order,
            items,
            &*self.guard()?,
        )
    }

    /// Chooses how concurrent writers are synchronised (see [`Synchronization`]). Set it
    /// before writers start; every handle writing the array should use the same setting.
    /// The locks are the array's, found by its real location: handles opened through
    /// differently rooted stores, or links, take the same locks and lock files.
    pub fn set_synchronization(&self, sync: &Synchronization) -> Result<()> {
        let mut appends = self.appends()?;
        self.flush_appends(&mut appends, true)?;
        let base = self.format.data_base(&self.path);
        let home = Location::of(&self.store, &base);
        let guard = WriteGuard::new(sync, self.store.as_ref(), &home, &node_prefix(&base))?;
        *self
            .guard
            .write()
            .map_err(|_| Error::Internal("lock table poisoned".into()))? = guard;
        Ok(())
    }

    /// Changes the shape; chunks wholly outside the new shape are erased.
    pub fn resize(&self, shape: &[u64]) -> Result<()> {
        self.check_writable("resize")?;
        let mut appends = self.appends()?;
        self.flush_appends(&mut appends, true)?;
        self.take_append_lock()?;
        let _guard = self.lock_update()?;
        let mut meta = ArrayMeta::clone(&self.metadata());
        if shape.len() != meta.rank() {
            return Err(Error::RankMismatch(format!(
                "new shape has {} dimensions but the array has {}",
                shape.len(),
                meta.rank()
            )));
        }
        // Only a shrink leaves chunks outside the grid: growing lists no chunk (an append
        // loop through resize would otherwise list every chunk at every step).
        let shrinks = shape.iter().zip(&meta.shape).any(|(new, old)| new < old);
        meta.set_shape(shape)?;
        meta.validate().map_err(|e| match e {
            Error::Metadata(m) => Error::InvalidArg(format!("new shape: {m}")),
            other => other,
        })?;
        let grid = meta.chunk_grid();
        let guard = self.guard()?;
        let outside = if shrinks {
            self.chunk_keys(&meta)?
        } else {
            Vec::new()
        };
        for (key, index) in outside {
            if index.iter().zip(&grid).any(|(i, g)| i >= g) {
                // Under the chunk's lock, so a writer's read-modify-write of it never
                // straddles the erase.
                let _lock = guard.lock(&key)?;
                self.store.erase(&key)?;
            }
        }
        self.store.set(
            &self.format.array_key(&self.path),
            &self.format.render_array(&meta, &self.attributes()?)?,
        )?;
        self.replace_metadata(meta)
    }

    /// Appends `buf`, whose shape is `count`, along `axis`: every other extent of `count`
    /// must equal the array's. `layout` is C or F order, or element strides as for a
    /// strided write. Returns the new shape.
    pub fn append<'a>(
        &self,
        axis: usize,
        count: &[u64],
        elem: ElementType,
        layout: impl Into<MemLayout<'a>>,
        buf: &[u8],
    ) -> Result<Vec<u64>> {
        let layout = layout.into();
        self.check_writable("append")?;
        let _appending = self.appending()?;
        let mut appends = self.appends()?;
        self.take_append_lock()?;
        let meta = self.metadata();
        let (start, grown) = appended_region(&meta, axis, count)?;
        let new_shape = grown.shape.clone();
        let strides = region::check(
            &grown,
            Region {
                start: &start,
                count,
            },
            elem,
            layout,
            buf.len(),
        )?;
        if self.streams(&appends, &meta, elem)? {
            convert::check_narrow(&meta.dtype, count, &strides, buf)?;
            let region = Region {
                start: &start,
                count,
            };
            self.append_buffered(
                &mut appends,
                axis,
                grown,
                meta.shape[axis],
                region,
                strides,
                buf,
            )?;
            return Ok(new_shape);
        }
        // Not buffered: what earlier appends buffered is stored first.
        self.flush_appends(&mut appends, true)?;
        drop(appends);
        self.resize(&new_shape)?;
        let written = self.write(&start, count, elem, layout, buf);
        self.undo_growth(&meta.shape, written)?;
        Ok(new_shape)
    }

    /// Appends `buf`, elements of the numeric type `elem` in `order`, along `axis` (as
    /// [`Array::append`]), converted to the array's type with the rules of
    /// [`Array::write_from`]: when any element does not fit, nothing is appended and the
    /// error is [`Error::Range`]. Returns the new shape.
    pub fn append_from(
        &self,
        axis: usize,
        count: &[u64],
        elem: ElementType,
        order: Order,
        buf: &[u8],
    ) -> Result<Vec<u64>> {
        let stored = self.metadata().dtype.element_type();
        if elem == stored || region::converts(stored, elem) {
            return self.append(axis, count, elem, order, buf);
        }
        self.check_writable("append")?;
        let (_, bytes) = self.converted_size(count, elem, buf.len())?;
        let mut items = crate::error::try_zeroed(bytes, "the converted step")?;
        cast::convert(elem, stored, buf, &mut items)?;
        self.append(axis, count, stored, order, &items)
    }

    /// After an append grew the array from `shape`: when `written` failed, shrinks the
    /// array back (erasing what the failed write stored) and returns that failure, with the
    /// shrink's own failure beside it if it has one.
    fn undo_growth(&self, shape: &[u64], written: Result<()>) -> Result<()> {
        let Err(e) = written else {
            return Ok(());
        };
        match self.resize(shape) {
            Ok(()) => Err(e),
            Err(undo) => Err(Error::Internal(format!(
                "{e}; and shrinking the array back to {shape:?} failed: {undo}"
            ))),
        }
    }

    /// Takes the handle's append lock.
    fn appending(&self) -> Result<std::sync::MutexGuard<'_, ()>> {
        self.appending
            .lock()
            .map_err(|_| Error::Internal("append lock poisoned".into()))
    }

    /// Appends one variable-length item per element of a region of shape `count` along
    /// `axis` (items in `order`, as [`Array::write_vlen`] takes them); every other extent of
    /// `count` must equal the array's. Returns the new shape. The array grows, then the
    /// items are written; when writing fails the array shrinks back.
    pub fn append_vlen(
        &self,
        axis: usize,
        count: &[u64],
        order: Order,
        items: &[&[u8]],
    ) -> Result<Vec<u64>> {
        self.check_writable("append")?;
        let _appending = self.appending()?;
        let meta = self.metadata();
        if !meta.dtype.is_variable() {
            return Err(Error::DtypeMismatch(format!(
                "the array holds fixed-size items ({}): append them with append",
                meta.dtype.to_v2()
            )));
        }
        let (start, grown) = appended_region(&meta, axis, count)?;
        let n = crate::error::count_of(count, "appended element count")?;
        if items.len() != n {
            return Err(Error::BufferSize(format!(
                "{} items given for {n} appended elements",
                items.len()
            )));
        }
        crate::io::vlen::check_items(&meta.dtype, items)?;
        self.resize(&grown.shape)?;
        let written = self.write_vlen(&start, count, order, items);
        self.undo_growth(&meta.shape, written)?;
        Ok(grown.shape)
    }

    /// Whether an append of items of type `elem` to the array `meta` is buffered: on a
    /// writable handle of a sharded array (one level of shards), without a synchronizer,
    /// the items given in the stored type, and buffering not turned off. Never in a
    /// repository (Icechunk): a commit there must hold every step appended before it.
    fn streams(&self, appends: &Appends, meta: &ArrayMeta, elem: ElementType) -> Result<bool> {
        // Shards of a rectilinear grid differ in size: appends to them resize and write.
        Ok(appends.enabled
            && self.writable
            && self.store.repository().is_none()
            && !meta.is_rectilinear()
            && append::buffered_level(meta).is_some()
            && elem == meta.dtype.element_type()
            && matches!(*self.guard()?, WriteGuard::None))
    }

    /// Appends `buf` as `region` into the open shards of `axis` (the shape growing from
    /// `old_extent` to `grown`'s), stores the shards it completes and, when no shard stays
    /// open or the buffer has grown past [`append::APPEND_BUFFER_BYTES`], everything else.
    #[allow(clippy::too_many_arguments)]
    fn append_buffered(
        &self,
        appends: &mut Appends,
        axis: usize,
        grown: ArrayMeta,
        old_extent: u64,
        region: Region,
        strides: Vec<usize>,
        buf: &[u8],
    ) -> Result<()> {
        if appends.open.as_ref().is_some_and(|o| o.axis != axis) {
            self.flush_appends(appends, true)?;
        }
        let base = self.format.data_base(&self.path);
        let store = self.store.as_ref();
        let open = appends.open.get_or_insert_with(|| Open::new(axis));
        // The shards stored behind the last appends are collected before this one is
        // staged (waiting for them when it completes shards): their error is this call's,
        // and the step is then not appended.
        let completes = Open::completes_shard(&grown, axis, old_extent, grown.shape[axis]);
        self.collect_stored(open, completes)?;
        open.stage(store, &base, &grown, old_extent, region, strides, buf)?;
        self.replace_metadata(grown)?;
        let meta = self.metadata();
        // Completed shards are stored behind the next appends.
        open.store_complete(&self.store, &base, &meta, meta.shape[axis])?;
        if open.bytes() > append::APPEND_BUFFER_BYTES {
            self.flush_appends(appends, true)?;
        }
        Ok(())
    }

    /// Collects the shards stored behind the last appends (waiting for them with `wait`)
    /// and, when they were the last open shards, stores the metadata document with the
    /// extent they complete: the shape then covers them, and no step still buffered.
    fn collect_stored(&self, open: &mut Open, wait: bool) -> Result<()> {
        let Some(extent) = open.finish_storing(wait)? else {
            return Ok(());
        };
        let _guard = self.lock_update()?;
        let current = self.metadata();
        let mut meta = ArrayMeta::clone(&current);
        meta.shape[open.axis] = extent;
        let document = self.format.render_array(&meta, &self.attributes()?)?;
        self.store
            .set(&self.format.array_key(&self.path), &document)?;
        if current.shape[open.axis] == extent {
            open.shape_changed = false;
        }
        Ok(())
    }

    /// Stores what appends buffered on this handle: the open shards that changed, then
    /// the metadata document with the handle's shape. With `close`, the open shards are
    /// dropped from memory too.
    fn flush_appends(&self, appends: &mut Appends, close: bool) -> Result<()> {
        let Some(open) = appends.open.as_mut() else {
            return Ok(());
        };
        self.collect_stored(open, true)?;
        let meta = self.metadata();
        let base = self.format.data_base(&self.path);
        open.store_open(self.store.as_ref(), &base, &meta, close)?;
        if open.shape_changed {
            let _guard = self.lock_update()?;
            let document = self.format.render_array(&meta, &self.attributes()?)?;
            self.store
                .set(&self.format.array_key(&self.path), &document)?;
            open.shape_changed = false;
        }
        if close {
            appends.open = None;
        }
        Ok(())
    }

    /// Stores what appends buffered on this handle and flushes the store (see
    /// [`Store::flush`]): every step appended before it is then readable through other
    /// handles and processes, and survives this process being killed. Open shards stay
    /// in memory, so later appends rewrite them once more when complete. Waits first for
    /// the handle's non-blocking requests (their errors are theirs, not the flush's).
    pub fn flush(&self) -> Result<()> {
        self.check_writable("flush")?;
        self.wait_requests();
        let mut appends = self.appends()?;
        self.flush_appends(&mut appends, false)?;
        drop(appends);
        self.store.flush()
    }

    /// Finishes the handle's work and reports its errors, as closing a netCDF file does:
    /// waits for its non-blocking requests, then on a writable handle stores what appends
    /// buffered and flushes the store (as [`Array::flush`]); a read-only handle has
    /// nothing to store. The handle stays usable.
    pub fn close(&self) -> Result<()> {
        if !self.writable {
            self.wait_requests();
            return Ok(());
        }
        self.flush()
    }

    /// Turns buffering of appends on (the default) or off; turning it off stores what is
    /// buffered first. Off, every append rewrites the shards it touches at once.
    pub fn set_append_buffering(&self, on: bool) -> Result<()> {
        let mut appends = self.appends()?;
        if !on {
            self.flush_appends(&mut appends, true)?;
        }
        appends.enabled = on;
        Ok(())
    }

    /// Encoded bytes that appends hold buffered on this handle.
    pub fn append_buffer_bytes(&self) -> Result<usize> {
        Ok(self.appends()?.open.as_ref().map_or(0, Open::bytes))
    }

    /// Stores what appends buffered, keeping the open shards, so the store holds what this
    /// handle shows (before reads and queries of the store).
    fn settle(&self) -> Result<()> {
        let mut appends = self.appends()?;
        self.flush_appends(&mut appends, false)
    }

    fn appends(&self) -> Result<std::sync::MutexGuard<'_, Appends>> {
        self.appends
            .lock()
            .map_err(|_| Error::Internal("append buffer poisoned".into()))
    }

    /// The metadata format of the array.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The dimension names, `None` for an unnamed dimension: v3 `dimension_names`, or the
    /// `_ARRAY_DIMENSIONS` attribute of v2 (the xarray convention; a null entry is unnamed),
    /// else those of NCZarr's `_nczarr_array` entry (its `dimrefs`). `None` when the array has
    /// none, and for NCZarr's scalars (shape `[1]` with an empty `_ARRAY_DIMENSIONS`).
    pub fn dimension_names(&self) -> Result<Option<Vec<Option<String>>>> {
        if self.format.is_v3() {
            return Ok(self.metadata().dimension_names.clone());
        }
        let attributes = self.attributes()?;
        let Some(value) = attributes.get(DIMENSIONS_KEY).cloned() else {
            return self.nczarr_dimension_names(&attributes);
        };
        if self.metadata().shape == [1] && value.as_array().is_some_and(|v| v.is_empty()) {
            return Ok(None);
        }
        let bad = || {
            Error::Metadata(format!(
                "array {:?}: {DIMENSIONS_KEY} must be a list of {} strings",
                self.path,
                self.metadata().rank()
            ))
        };
        let names: Vec<Option<String>> = value
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(Some(s.clone())),
                Value::Null => Ok(None),
                _ => Err(bad()),
            })
            .collect::<Result<_>>()?;
        if names.len() != self.metadata().rank() {
            return Err(bad());
        }
        Ok(Some(names))
    }

    /// The dimension names netCDF-C's NCZarr keeps in `_nczarr_array` (`_NCZARR_ARRAY` up to
    /// netCDF-C 4.9.0), in the v2 array document or, in later versions, the attributes: the
    /// last part of each `dimrefs` path (`/grid/lat` is `lat`). `None` outside v2, without
    /// such an entry, and for NCZarr's scalars (shape `[1]` without dimensions).
    fn nczarr_dimension_names(
        &self,
        attributes: &Map<String, Value>,
    ) -> Result<Option<Vec<Option<String>>>> {
        if self.format != Format::V2 {
            return Ok(None);
        }
        let find = |doc: &Map<String, Value>| {
            doc.iter()
                .find(|(key, _)| key.eq_ignore_ascii_case("_nczarr_array"))
                .map(|(_, entry)| entry.clone())
        };
        let mut entry = find(attributes);
        if entry.is_none() {
            let key = self.format.array_key(&self.path);
            if let Some(bytes) = get_document(self.store.as_ref(), &key)? {
                let doc = crate::meta::json::parse(&bytes)
                    .map_err(|e| Error::Metadata(format!("{key}: not valid JSON: {e}")))?;
                entry = doc.as_object().and_then(find);
            }
        }
        let Some(refs) = entry.as_ref().and_then(|e| e.get("dimrefs")) else {
            return Ok(None);
        };
        let meta = self.metadata();
        let bad = || {
            Error::Metadata(format!(
                "array {:?}: _nczarr_array dimrefs must be a list of {} dimension paths",
                self.path,
                meta.rank()
            ))
        };
        let refs = refs.as_array().ok_or_else(bad)?;
        if refs.is_empty() && meta.shape == [1] {
            return Ok(None);
        }
        if refs.len() != meta.rank() {
            return Err(bad());
        }
        let names = refs
            .iter()
            .map(|r| {
                let path = r.as_str().ok_or_else(bad)?;
                let name = path.rsplit('/').next().unwrap_or(path);
                Ok((!name.is_empty()).then(|| name.to_string()))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(names))
    }

    /// Sets the dimension names, one per dimension, `None` for an unnamed one (v3 only: v2
    /// keeps them in `_ARRAY_DIMENSIONS`, which xarray reads as a list of strings).
    pub fn set_dimension_names(&self, names: &[Option<String>]) -> Result<()> {
        let rank = self.metadata().rank();
        if names.len() != rank {
            return Err(Error::RankMismatch(format!(
                "{} dimension names for an array of rank {rank}",
                names.len()
            )));
        }
        if self.format.is_v3() {
            self.check_writable("set dimension names")?;
            let mut appends = self.appends()?;
            self.flush_appends(&mut appends, false)?;
            let _guard = self.lock_update()?;
            let mut meta = ArrayMeta::clone(&self.metadata());
            meta.dimension_names = Some(names.to_vec());
            let document = self.format.render_array(&meta, &self.attributes()?)?;
            self.store
                .set(&self.format.array_key(&self.path), &document)?;
            return self.replace_metadata(meta);
        }
        let names = names
            .iter()
            .map(|n| n.as_deref().map(Value::from))
            .collect::<Option<Vec<Value>>>()
            .ok_or_else(|| {
                Error::InvalidArg(format!(
                    "array {:?}: a Zarr v{} array keeps its dimension names in \
                     {DIMENSIONS_KEY}, where every dimension needs a name",
                    self.path,
                    self.format.number()
                ))
            })?;
        self.set_attribute(DIMENSIONS_KEY, Value::Array(names))
    }

    /// The CF missing value (`_FillValue`) as xarray, netCDF-C and CF readers see it,
    /// whichever way the store holds it (see [`super::cf::decode`]); `None` when none is set.
    pub fn missing_value(&self) -> Result<Option<f64>> {
        let meta = self.metadata();
        super::cf::decode(&meta, &self.attributes()?, self.format, &self.path)
    }

    /// Makes `value` the CF missing value: the fill value (which unwritten chunks read as)
    /// and the `_FillValue` attribute beside it (see [`super::cf`]), in one document in
    /// Zarr v3 (in v2 the attributes' document follows the array's). A float type takes
    /// the nearest value it holds (with a notice on standard error when that is not
    /// `value`); a value beyond its range, or one an integer type cannot hold exactly, is
    /// refused and nothing is written.
    pub fn set_missing_value(&self, value: f64) -> Result<()> {
        let meta = self.metadata();
        let encoded = super::cf::encode(value, &meta.dtype, self.format, &self.path)?;
        self.check_writable("set the missing value")?;
        let mut appends = self.appends()?;
        self.flush_appends(&mut appends, false)?;
        let _guard = self.lock_update()?;
        let mut meta = ArrayMeta::clone(&self.metadata());
        let mut attributes = self.attributes()?;
        let before = attributes.clone();
        encoded.apply(&mut attributes);
        meta.fill_value = Some(encoded.fill.clone());
        let document = self.format.render_array(&meta, &attributes)?;
        self.store
            .set(&self.format.array_key(&self.path), &document)?;
        // Outside v3 the attributes have their own document.
        if attributes != before && !self.format.creates_with_attributes() {
            self.attrs.set(self.store.as_ref(), &attributes)?;
        }
        self.replace_metadata(meta)?;
        encoded.notice_rounding(value, &self.metadata().dtype, &self.path);
        Ok(())
    }

    /// How writes through this handle are synchronised.
    fn guard(&self) -> Result<RwLockReadGuard<'_, WriteGuard>> {
        self.guard
            .read()
            .map_err(|_| Error::Internal("lock table poisoned".into()))
    }

    fn lock_update(&self) -> Result<std::sync::MutexGuard<'_, ()>> {
        self.update
            .lock()
            .map_err(|_| Error::Internal("update lock poisoned".into()))
    }

    /// Keys of the stored chunks inside the grid of `meta`'s rank, with their indices.
    pub(crate) fn chunk_keys(&self, meta: &ArrayMeta) -> Result<Vec<(String, Vec<u64>)>> {
        let base = self.format.data_base(&self.path);
        let prefix = node_prefix(&base);
        // Keys are one level deep only with flat v2 keys; nested or "c/"-prefixed keys
        // need the recursive listing.
        let flat =
            !meta.key_encoding.prefix && (meta.key_encoding.separator == '.' || meta.rank() <= 1);
        let relative: Vec<String> = if !flat {
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
                    .map(|index| (join_key(&base, &rel), index))
            })
            .collect())
    }

    /// Total bytes stored under the array: metadata, attributes and chunks.
    pub fn nbytes_stored(&self) -> Result<u64> {
        self.settle()?;
        let mut total = 0;
        if self.format.draft_scheme().is_some() {
            total += self
                .store
                .size(&self.format.array_key(&self.path))?
                .unwrap_or(0);
            for (key, _) in self.chunk_keys(&self.metadata())? {
                total += self.store.size(&key)?.unwrap_or(0);
            }
            return Ok(total);
        }
        for key in self.store.list_prefix(&node_prefix(&self.path))? {
            total += self.store.size(&key)?.unwrap_or(0);
        }
        Ok(total)
    }

    /// The indices of the grid's chunks (shards, when sharded) that are stored, in C order:
    /// the others read as the fill value. Found by listing the store, so the time it takes
    /// follows the stored chunks, not the size of the grid.
    pub fn stored_chunks(&self) -> Result<Vec<Vec<u64>>> {
        self.settle()?;
        let meta = self.metadata();
        let grid = meta.chunk_grid();
        let mut chunks: Vec<Vec<u64>> = self
            .chunk_keys(&meta)?
            .into_iter()
            .map(|(_, index)| index)
            .filter(|index| index.iter().zip(&grid).all(|(i, g)| i < g))
            .collect();
        chunks.sort_unstable();
        chunks.dedup();
        Ok(chunks)
    }

    /// Number of chunks inside the grid that are stored.
    pub fn nchunks_initialized(&self) -> Result<u64> {
        self.settle()?;
        let meta = self.metadata();
        let grid = meta.chunk_grid();
        Ok(self
            .chunk_keys(&meta)?
            .iter()
            .filter(|(_, index)| index.iter().zip(&grid).all(|(i, g)| i < g))
            .count() as u64)
    }
}

impl Array {
    /// Takes the array's append lock for this handle at its first append or resize (unless
    /// turned off), then reads the metadata again: another writer may have grown the array
    /// since this handle read it.
    fn take_append_lock(&self) -> Result<()> {
        let mut appender = self.appender()?;
        if appender.off || appender.taken {
            return Ok(());
        }
        appender.lock = AppendLock::take(&self.store, &self.path)?;
        appender.taken = true;
        drop(appender);
        self.reload_metadata()
    }

    /// Releases the append lock if this handle holds it; the next append or resize takes it
    /// again.
    fn release_append_lock(&self) -> Result<()> {
        let mut appender = self.appender()?;
        appender.taken = false;
        match appender.lock.take() {
            Some(lock) => lock.release(),
            None => Ok(()),
        }
    }

    /// Turns the append lock on (the default) or off for this handle. Off, appends and
    /// resizes take no lock (and one held is released): for writers that coordinate by
    /// other means, such as MPI ranks of which one resizes, or handles under a
    /// synchronizer that never append at once.
    pub fn set_append_lock(&self, on: bool) -> Result<()> {
        self.release_append_lock()?;
        self.appender()?.off = !on;
        Ok(())
    }

    /// Finishes the handle as freeing it would, reporting errors: waits for its
    /// non-blocking requests, stores what appends buffered and releases the append lock.
    /// The handle stays usable. Used at process exit ([`super::exit`]).
    pub(crate) fn finish(&self) -> Result<()> {
        self.wait_requests();
        let stored = self
            .appends()
            .and_then(|mut appends| self.flush_appends(&mut appends, true));
        let released = self.release_append_lock();
        stored.and(released)
    }

    fn appender(&self) -> Result<std::sync::MutexGuard<'_, Appender>> {
        self.appender
            .lock()
            .map_err(|_| Error::Internal("append lock state poisoned".into()))
    }

    /// The queue of this handle's non-blocking requests.
    pub(super) fn requests(&self) -> &super::pending::Queue {
        &self.requests
    }
}

impl Drop for Array {
    /// Stores what appends buffered and releases the append lock; an error here is lost
    /// (call [`Array::flush`] first to see it), and the buffered steps may then be missing
    /// from the store.
    fn drop(&mut self) {
        if let Ok(mut appends) = self.appends.lock() {
            let _ = self.flush_appends(&mut appends, true);
        }
        let _ = self.release_append_lock();
    }
}

impl Node for Array {
    fn path(&self) -> &str {
        &self.path
    }
    fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }
    fn attrs(&self) -> &Attributes {
        &self.attrs
    }
    fn writable(&self) -> bool {
        self.writable
    }
    /// Sets one attribute, keeping the others; a `_FillValue` that is no missing value of
    /// the array's type is refused (see [`super::cf::check_attribute`]).
    fn set_attribute(&self, key: &str, value: Value) -> Result<()> {
        super::cf::check_attribute(key, &value, &self.metadata().dtype, &self.path)?;
        self.check_writable("set an attribute")?;
        self.attrs.set_one(self.store.as_ref(), key, value)
    }
}

/// Refuses fixed-size arrays in the variable-length calls.
fn check_variable(meta: &ArrayMeta) -> Result<()> {
    if meta.dtype.is_variable() {
        Ok(())
    } else {
        Err(Error::DtypeMismatch(format!(
            "the array holds fixed-size items ({}): use the plain read and write calls",
            meta.dtype.to_v2()
        )))
    }
}

/// Where data of shape `count` appended along `axis` to the array `meta` goes, and the
/// array's metadata once grown to hold it; refuses a rank, an axis or another extent that
/// does not fit, and a shape that overflows.
fn appended_region(meta: &ArrayMeta, axis: usize, count: &[u64]) -> Result<(Vec<u64>, ArrayMeta)> {
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
    let mut grown = meta.clone();
    let mut shape = meta.shape.clone();
    shape[axis] = meta.shape[axis]
        .checked_add(count[axis])
        .ok_or_else(|| Error::Overflow("appended shape overflows 64 bits".into()))?;
    grown.set_shape(&shape)?;
    grown.validate()?;
    Ok((start, grown))
}
