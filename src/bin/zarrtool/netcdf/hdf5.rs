//! Where a netCDF-4/HDF5 file keeps a dataset's chunks: a few hand-written bindings to the
//! HDF5 C API (1.10.5 and later, the library netCDF itself links), for `virtualize`.
//!
//! The chunk index is HDF5's own (B-tree, extensible or fixed array): every chunk of the
//! grid is looked up by its coordinates (`H5Dget_chunk_info_by_coord`), which gives its
//! file offset, its stored size and the filters it skipped. The filter pipeline is read
//! from the dataset's creation properties and becomes numcodecs filters in the same order.

use serde_json::{json, Value};
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use zarr::dtype::ByteOrder;
use zarr::{Error, Result};

type Hid = i64;
type Herr = c_int;
type Hsize = u64;
type Haddr = u64;

const H5P_DEFAULT: Hid = 0;
const H5E_DEFAULT: Hid = 0;
const H5F_ACC_RDONLY: c_uint = 0;
const HADDR_UNDEF: Haddr = u64::MAX;
const H5D_CONTIGUOUS: c_int = 1;
const H5D_CHUNKED: c_int = 2;
const H5T_ORDER_LE: c_int = 0;
const H5T_ORDER_BE: c_int = 1;
/// The most dimensions an HDF5 dataset has (`H5S_MAX_RANK`).
const MAX_RANK: usize = 32;

const FILTER_DEFLATE: c_int = 1;
const FILTER_SHUFFLE: c_int = 2;
const FILTER_FLETCHER32: c_int = 3;
const FILTER_ZSTD: c_int = 32015;

#[link(name = "hdf5")]
extern "C" {
    fn H5open() -> Herr;
    fn H5Eset_auto2(stack: Hid, func: *const c_void, data: *mut c_void) -> Herr;
    fn H5Fopen(name: *const c_char, flags: c_uint, fapl: Hid) -> Hid;
    fn H5Fclose(file: Hid) -> Herr;
    fn H5Lexists(loc: Hid, name: *const c_char, lapl: Hid) -> c_int;
    fn H5Dopen2(loc: Hid, name: *const c_char, dapl: Hid) -> Hid;
    fn H5Dclose(dset: Hid) -> Herr;
    fn H5Dget_space(dset: Hid) -> Hid;
    fn H5Dget_type(dset: Hid) -> Hid;
    fn H5Dget_create_plist(dset: Hid) -> Hid;
    fn H5Dget_offset(dset: Hid) -> Haddr;
    fn H5Dget_chunk_info_by_coord(
        dset: Hid,
        offset: *const Hsize,
        filter_mask: *mut c_uint,
        addr: *mut Haddr,
        size: *mut Hsize,
    ) -> Herr;
    fn H5Sget_simple_extent_ndims(space: Hid) -> c_int;
    fn H5Sget_simple_extent_dims(space: Hid, dims: *mut Hsize, max: *mut Hsize) -> c_int;
    fn H5Sclose(space: Hid) -> Herr;
    fn H5Tget_order(dtype: Hid) -> c_int;
    fn H5Tget_size(dtype: Hid) -> usize;
    fn H5Tclose(dtype: Hid) -> Herr;
    fn H5Pget_layout(plist: Hid) -> c_int;
    fn H5Pget_chunk(plist: Hid, max: c_int, dims: *mut Hsize) -> c_int;
    fn H5Pget_nfilters(plist: Hid) -> c_int;
    fn H5Pget_filter2(
        plist: Hid,
        idx: c_uint,
        flags: *mut c_uint,
        cd_nelmts: *mut usize,
        cd_values: *mut c_uint,
        namelen: usize,
        name: *mut c_char,
        config: *mut c_uint,
    ) -> c_int;
    fn H5Pget_external_count(plist: Hid) -> c_int;
    fn H5Pclose(plist: Hid) -> Herr;
}

/// An HDF5 identifier, closed by `close` when dropped.
struct Id(Hid, unsafe extern "C" fn(Hid) -> Herr);

impl Drop for Id {
    fn drop(&mut self) {
        // SAFETY: a valid identifier of the kind `close` closes, closed once.
        unsafe { (self.1)(self.0) };
    }
}

/// One stored chunk: its grid index, file offset and stored length.
pub type Piece = (Vec<u64>, u64, u64);

/// A dataset's storage, as `virtualize` references it.
pub struct Storage {
    /// The chunk shape (the whole shape when contiguous).
    pub chunks: Vec<u64>,
    /// The stored byte order of the items.
    pub order: ByteOrder,
    /// The numcodecs filters that decode a chunk, in the order HDF5 applied them.
    pub filters: Vec<Value>,
    /// The chunks that are stored (the others were never written).
    pub pieces: Vec<Piece>,
    /// How many chunks the grid has.
    pub grid_chunks: u64,
}

/// An HDF5 file open for reading.
pub struct H5File {
    id: Id,
    name: String,
    size: u64,
}

impl H5File {
    /// Opens `path` (of `size` bytes, named `name` in messages) read-only.
    pub fn open(path: &str, name: &str, size: u64) -> Result<H5File> {
        let c_path = CString::new(path)
            .map_err(|_| Error::InvalidArg(format!("{path:?} holds a NUL byte")))?;
        // SAFETY: initialising the library and turning off its printing of error stacks
        // (errors are reported here) take no pointers the library keeps.
        unsafe {
            H5open();
            H5Eset_auto2(H5E_DEFAULT, std::ptr::null(), std::ptr::null_mut());
        }
        // SAFETY: a valid C string; default properties.
        let id = unsafe { H5Fopen(c_path.as_ptr(), H5F_ACC_RDONLY, H5P_DEFAULT) };
        if id < 0 {
            return Err(Error::Io(format!("HDF5 cannot open {name:?}")));
        }
        Ok(H5File {
            id: Id(id, H5Fclose),
            name: name.to_string(),
            size,
        })
    }

    /// The storage of the dataset of netCDF variable `var` (at `group`, `/`-separated),
    /// of `shape` and items of `item` bytes; `shown` names it in messages.
    pub fn storage(
        &self,
        group: &str,
        var: &str,
        shape: &[u64],
        item: usize,
        shown: &str,
    ) -> Result<Storage> {
        let refuse = |why: String| {
            Error::Unsupported(format!(
                "{:?}: {shown} cannot be referenced: {why}",
                self.name
            ))
        };
        let dset = self.dataset(group, var, shown)?;
        let check = |ok: bool, what: &str| match ok {
            true => Ok(()),
            false => Err(Error::Io(format!(
                "HDF5 {:?}: {shown}: reading {what} failed",
                self.name
            ))),
        };
        // SAFETY: valid dataset identifiers; each result is checked before use.
        let (space, dtype, plist) = unsafe {
            (
                H5Dget_space(dset.0),
                H5Dget_type(dset.0),
                H5Dget_create_plist(dset.0),
            )
        };
        check(
            space >= 0 && dtype >= 0 && plist >= 0,
            "its dataspace, type and properties",
        )?;
        let (space, dtype, plist) = (
            Id(space, H5Sclose),
            Id(dtype, H5Tclose),
            Id(plist, H5Pclose),
        );
        // SAFETY: a valid dataspace.
        let rank = unsafe { H5Sget_simple_extent_ndims(space.0) };
        check((0..=MAX_RANK as c_int).contains(&rank), "its rank")?;
        let mut dims = [0 as Hsize; MAX_RANK];
        // SAFETY: room for MAX_RANK dimensions, at least `rank`.
        let got =
            unsafe { H5Sget_simple_extent_dims(space.0, dims.as_mut_ptr(), std::ptr::null_mut()) };
        check(got == rank, "its shape")?;
        let dims = &dims[..rank as usize];
        if dims != shape {
            return Err(Error::Metadata(format!(
                "{:?}: {shown}: HDF5 gives the shape {dims:?}, netCDF {shape:?}",
                self.name
            )));
        }
        // SAFETY: a valid datatype.
        let (size, order) = unsafe { (H5Tget_size(dtype.0), H5Tget_order(dtype.0)) };
        if size != item {
            return Err(refuse(format!(
                "its HDF5 items are {size} bytes, netCDF's {item}"
            )));
        }
        let order = match order {
            H5T_ORDER_LE if item > 1 => ByteOrder::Little,
            H5T_ORDER_BE if item > 1 => ByteOrder::Big,
            _ if item == 1 => ByteOrder::NotApplicable,
            _ => {
                return Err(refuse(format!(
                    "its items have the HDF5 byte order {order}"
                )))
            }
        };
        // SAFETY: a valid property list.
        if unsafe { H5Pget_external_count(plist.0) } > 0 {
            return Err(refuse("its values are in external files".into()));
        }
        // SAFETY: a valid property list.
        match unsafe { H5Pget_layout(plist.0) } {
            H5D_CONTIGUOUS => self.contiguous(&dset, shape, size, order, shown),
            H5D_CHUNKED => self.chunked(&dset, &plist, shape, size, order, shown),
            0 => Err(refuse(
                "it is stored compact, inside HDF5's object header".into(),
            )),
            other => Err(refuse(format!("it has the HDF5 layout {other}"))),
        }
    }

    /// Opens the dataset of netCDF variable `var` in `group`: by its name, or by the name
    /// netCDF gives a variable that shares a dimension's name without being its coordinate.
    fn dataset(&self, group: &str, var: &str, shown: &str) -> Result<Id> {
        let base = format!("/{}", group.trim_matches('/'));
        for name in [var.to_string(), format!("_nc4_non_coord_{var}")] {
            let path = match base.as_str() {
                "/" => format!("/{name}"),
                b => format!("{b}/{name}"),
            };
            let Ok(c_path) = CString::new(path) else {
                continue;
            };
            // SAFETY: a valid file and C string; default properties. Each step of the path
            // is a group the netCDF library found, so only the last may be missing.
            if unsafe { H5Lexists(self.id.0, c_path.as_ptr(), H5P_DEFAULT) } <= 0 {
                continue;
            }
            // SAFETY: as above.
            let id = unsafe { H5Dopen2(self.id.0, c_path.as_ptr(), H5P_DEFAULT) };
            if id >= 0 {
                return Ok(Id(id, H5Dclose));
            }
        }
        Err(Error::Io(format!(
            "HDF5 {:?}: no dataset for {shown}",
            self.name
        )))
    }

    /// A contiguous dataset: one chunk of the whole shape, or none when never written.
    fn contiguous(
        &self,
        dset: &Id,
        shape: &[u64],
        item: usize,
        order: ByteOrder,
        shown: &str,
    ) -> Result<Storage> {
        let bytes = shape
            .iter()
            .try_fold(item as u64, |n, &d| n.checked_mul(d))
            .filter(|&n| n <= self.size)
            .ok_or_else(|| {
                Error::Metadata(format!(
                    "{:?}: {shown} is larger than the file ({} bytes)",
                    self.name, self.size
                ))
            })?;
        // SAFETY: a valid dataset.
        let at = unsafe { H5Dget_offset(dset.0) };
        let mut pieces = Vec::new();
        if at != HADDR_UNDEF && bytes > 0 {
            self.within(at, bytes, shown)?;
            pieces.push((vec![0; shape.len()], at, bytes));
        }
        Ok(Storage {
            chunks: shape.iter().map(|&d| d.max(1)).collect(),
            order,
            filters: Vec::new(),
            pieces,
            grid_chunks: 1,
        })
    }

    /// A chunked dataset: its filters, then every chunk of the grid looked up.
    fn chunked(
        &self,
        dset: &Id,
        plist: &Id,
        shape: &[u64],
        item: usize,
        order: ByteOrder,
        shown: &str,
    ) -> Result<Storage> {
        let mut chunks = [0 as Hsize; MAX_RANK];
        // SAFETY: room for MAX_RANK dimensions.
        let rank = unsafe { H5Pget_chunk(plist.0, MAX_RANK as c_int, chunks.as_mut_ptr()) };
        if rank < 0 || rank as usize != shape.len() {
            return Err(Error::Io(format!(
                "HDF5 {:?}: {shown}: reading its chunk shape failed",
                self.name
            )));
        }
        let chunks: Vec<u64> = chunks[..shape.len()].to_vec();
        if chunks.contains(&0) {
            return Err(Error::Metadata(format!(
                "{:?}: {shown} has the chunk shape {chunks:?}",
                self.name
            )));
        }
        let filters = self.filters(plist, item, shown)?;
        let grid: Vec<u64> = shape
            .iter()
            .zip(&chunks)
            .map(|(s, c)| s.div_ceil(*c))
            .collect();
        let grid_chunks = grid
            .iter()
            .try_fold(1u64, |n, &g| n.checked_mul(g))
            .filter(|&n| n <= MAX_CHUNKS)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "{:?}: {shown} has a grid of {grid:?} chunks, more than the {MAX_CHUNKS} \
                     a reference file may list",
                    self.name
                ))
            })?;
        let mut pieces = Vec::new();
        let mut index = vec![0u64; shape.len()];
        for _ in 0..grid_chunks {
            let offset: Vec<Hsize> = index.iter().zip(&chunks).map(|(i, c)| i * c).collect();
            let (mut mask, mut at, mut size) = (0 as c_uint, 0 as Haddr, 0 as Hsize);
            // SAFETY: a valid dataset, an offset of its rank and valid out pointers.
            let code = unsafe {
                H5Dget_chunk_info_by_coord(dset.0, offset.as_ptr(), &mut mask, &mut at, &mut size)
            };
            if code < 0 {
                return Err(Error::Io(format!(
                    "HDF5 {:?}: {shown}: looking up the chunk at {offset:?} failed",
                    self.name
                )));
            }
            if at != HADDR_UNDEF && size > 0 {
                if mask != 0 {
                    return Err(Error::Unsupported(format!(
                        "{:?}: {shown} cannot be referenced: its chunk at {offset:?} skipped \
                         filters (mask {mask:#x}), so it is encoded unlike the others",
                        self.name
                    )));
                }
                self.within(at, size, shown)?;
                pieces.push((index.clone(), at, size));
            }
            // The next index in C order.
            for d in (0..index.len()).rev() {
                index[d] += 1;
                if index[d] < grid[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Ok(Storage {
            chunks,
            order,
            filters,
            pieces,
            grid_chunks,
        })
    }

    /// The dataset's filter pipeline as numcodecs filters; any other filter is refused.
    fn filters(&self, plist: &Id, item: usize, shown: &str) -> Result<Vec<Value>> {
        // SAFETY: a valid property list.
        let count = unsafe { H5Pget_nfilters(plist.0) };
        let mut filters = Vec::new();
        for i in 0..count.max(0) as c_uint {
            let (mut flags, mut config) = (0 as c_uint, 0 as c_uint);
            let mut values = [0 as c_uint; 8];
            let mut nvalues = values.len();
            let mut name = [0 as c_char; 64];
            // SAFETY: room for `nvalues` parameters and a name of `name.len()` bytes.
            let id = unsafe {
                H5Pget_filter2(
                    plist.0,
                    i,
                    &mut flags,
                    &mut nvalues,
                    values.as_mut_ptr(),
                    name.len(),
                    name.as_mut_ptr(),
                    &mut config,
                )
            };
            let filter = match id {
                FILTER_DEFLATE => json!({"id": "zlib", "level": values[0].min(9)}),
                FILTER_SHUFFLE => json!({"id": "shuffle", "elementsize": item}),
                FILTER_FLETCHER32 => json!({"id": "fletcher32"}),
                FILTER_ZSTD => json!({"id": "zstd", "level": values[0] as i32}),
                other => {
                    let name: Vec<u8> = name
                        .iter()
                        .take_while(|&&c| c != 0)
                        .map(|&c| c as u8)
                        .collect();
                    return Err(Error::Unsupported(format!(
                        "{:?}: {shown} cannot be referenced: it uses HDF5 filter {other} \
                         ({:?}), which has no Zarr codec here (deflate, shuffle, fletcher32 \
                         and zstd have)",
                        self.name,
                        String::from_utf8_lossy(&name)
                    )));
                }
            };
            filters.push(filter);
        }
        Ok(filters)
    }

    /// Checks that `len` bytes at `at` lie within the file.
    fn within(&self, at: u64, len: u64, shown: &str) -> Result<()> {
        match at.checked_add(len) {
            Some(end) if end <= self.size => Ok(()),
            _ => Err(Error::Metadata(format!(
                "{:?}: {shown}: HDF5 places {len} bytes at byte {at}, past the end of the \
                 file ({} bytes)",
                self.name, self.size
            ))),
        }
    }
}

/// The most chunks one variable's grid may have.
pub const MAX_CHUNKS: u64 = 50_000_000;
