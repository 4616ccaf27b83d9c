//! `import` of netCDF-3, netCDF-4 and HDF5 files through the system netCDF library (cargo
//! feature `netcdf`), by a few hand-written bindings to its C API (`netcdf.h`, in `ffi`);
//! `export` (its own module) writes netCDF-4 files through the same library.
//!
//! Every netCDF group becomes a Zarr group (the root group's attributes, the file's global
//! attributes, go to the group at the target path) and every variable an array with its
//! dimensions' names, its attributes and its fill value. The numeric types map to Zarr's,
//! `char` arrays become fixed-width byte strings over their last dimension (the string
//! length), `string` variables Zarr strings; user-defined types (compound, vlen, opaque,
//! enum) are refused before anything is written. The numeric attributes' netCDF types are
//! recorded in NCZarr's `_NCZARR_ATTR` attribute.
//!
//! The file is not trusted: a classic file's header is checked before the library reads it
//! (`classic`), names are read into buffers proven large enough for them, and every size
//! the file gives is checked (and bounded by the file's size) before anything is allocated
//! for it or read into it.

mod classic;
pub mod export;
mod ffi;
mod hdf5;
#[cfg(unix)]
mod interrupt;
pub mod virtualize;

use crate::cli::{Layout, NodeArg};
use crate::describe::{array_text, display};
use crate::progress::{region_bytes, unit_of, Progress};
use crate::target::{target_store, would_create};
use crate::values::{parse_json, parse_shape};
use serde_json::{Map, Value};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::{BufRead, BufReader};
use std::ptr::null_mut;
use zarr::dtype::{ByteOrder, DType, DataKind, ElementType, MAX_ITEM_SIZE};
use zarr::error::{no_memory, try_zeroed};
use zarr::meta::{ArrayMeta, Format, Order};
use zarr::node::{cf, ArrayBuilder, Group, Mode, DIMENSIONS_KEY};
use zarr::store::{join_key, node_path};
use zarr::{Error, Result};

/// The netCDF library's version (`4.9.0`).
pub fn library_version() -> String {
    // SAFETY: nc_inq_libvers returns a static NUL-terminated string.
    let text = unsafe { CStr::from_ptr(ffi::nc_inq_libvers()) };
    let text = text.to_string_lossy();
    text.split_whitespace().next().unwrap_or("").to_string()
}

/// A buffer for the name of a variable, dimension, group or type: `NC_MAX_NAME` bytes and a
/// NUL. Large enough: classic headers are checked to hold no longer names (`classic`), and
/// netCDF-C cuts the HDF5 object names of netCDF-4 files to `NC_MAX_NAME` bytes as it reads
/// them (`strncpy` into a buffer of that size) or fails to open the file.
type NameBuf = [u8; ffi::NC_MAX_NAME + 1];

/// The size of the buffer for an attribute's name. netCDF-C does not shorten the attribute
/// names of HDF5 files (a 1000-byte name comes back whole), but HDF5 stores an attribute's
/// name with a 2-byte length that counts its NUL, so none is longer than 65 534 bytes.
const ATT_NAME_BYTES: usize = 1 << 16;

/// The NUL-terminated name the library wrote into `buf` (zeroed beforehand).
fn name_text(buf: &[u8]) -> Result<String> {
    CStr::from_bytes_until_nul(buf)
        .map(|n| n.to_string_lossy().into_owned())
        .map_err(|_| Error::Internal("the netCDF library gave a name without its end".into()))
}

/// An open netCDF file, closed when dropped.
struct File {
    ncid: c_int,
    name: String,
    /// The file's size: no attribute's values are larger.
    size: u64,
    /// Where a classic file's header places its variables (`None` for HDF5 files).
    classic: Option<classic::Layout>,
}

impl File {
    /// Opens `path` with the netCDF library once what it would trust is checked: a classic
    /// file's header (`classic::check`). The library is given the file's canonical path,
    /// which it never takes for a URL.
    fn open(path: &str) -> Result<File> {
        let io = |e| Error::io(format!("reading {path:?}"), e);
        let real = std::fs::canonicalize(path).map_err(io)?;
        let file = std::fs::File::open(&real).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let mut reader = BufReader::new(file);
        let classic = match reader.fill_buf().map_err(io)?.starts_with(b"CDF") {
            true => Some(classic::check(reader, size, path)?),
            false => None,
        };
        let c_path = real
            .to_str()
            .and_then(|p| CString::new(p).ok())
            .ok_or_else(|| Error::InvalidArg(format!("{real:?} is not a UTF-8 C string")))?;
        let mut ncid = 0;
        // SAFETY: a valid C string and a valid out pointer.
        let code = unsafe { ffi::nc_open(c_path.as_ptr(), ffi::NC_NOWRITE, &mut ncid) };
        if code != ffi::NC_NOERR {
            return Err(Error::Io(format!(
                "netCDF cannot open {path:?}: {}",
                nc_message(code)
            )));
        }
        Ok(File {
            ncid,
            name: path.to_string(),
            size,
            classic,
        })
    }

    /// The byte size of `len` items of `item` bytes, refused (naming `what`) when the product
    /// overflows or exceeds the file's size: sizes the file gives are bounded by it.
    fn bytes_of(&self, len: usize, item: usize, what: &str) -> Result<usize> {
        len.checked_mul(item)
            .filter(|&b| b as u64 <= self.size)
            .ok_or_else(|| {
                Error::Metadata(format!(
                    "{:?}: {what} claims {len} values of {item} bytes, more than the file's \
                     {} bytes",
                    self.name, self.size
                ))
            })
    }

    /// A netCDF status as a result: failures name the file and what was being done.
    fn check(&self, code: c_int, what: impl FnOnce() -> String) -> Result<()> {
        if code == ffi::NC_NOERR {
            return Ok(());
        }
        Err(Error::Io(format!(
            "netCDF {:?}: {}: {}",
            self.name,
            what(),
            nc_message(code)
        )))
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: the id came from nc_open and is closed once.
        unsafe { ffi::nc_close(self.ncid) };
    }
}

fn nc_message(code: c_int) -> String {
    // SAFETY: nc_strerror returns a static NUL-terminated string for any code.
    unsafe { CStr::from_ptr(ffi::nc_strerror(code)) }
        .to_string_lossy()
        .into_owned()
}

/// How a variable's elements are stored in Zarr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A number of this many bytes, as netCDF gives it (native byte order).
    Number(usize),
    /// `char` over the last dimension: a fixed-width byte string of this many bytes.
    Char(usize),
    /// `string`: a variable-length UTF-8 string.
    String,
}

/// A netCDF variable and the array it becomes.
struct Var {
    ncid: c_int,
    varid: c_int,
    /// The array's path below the import's root.
    path: String,
    kind: Kind,
    /// The netCDF dimensions' lengths.
    nc_shape: Vec<usize>,
    meta: ArrayMeta,
    format: Format,
    attrs: Map<String, Value>,
    /// Where the file stores its values, when they are referenced rather than copied.
    stored: Option<virtualize::Stored>,
}

/// A netCDF group and the group it becomes.
struct GroupPlan {
    path: String,
    attrs: Map<String, Value>,
}

/// How the variables are laid out: `--chunks`/`--shards` (for variables of their rank),
/// `--compressor` and the format; or, when they are referenced (`virtualize`), as the file
/// stores them.
struct Settings<'a> {
    chunks: Option<Vec<u64>>,
    shards: Option<Vec<u64>>,
    compressor: Option<Value>,
    format: Format,
    /// The file's storage, whose chunks the arrays reference.
    source: Option<&'a virtualize::Source>,
}

/// The class of a user-defined type, as named in errors.
fn class_name(class: c_int) -> &'static str {
    match class {
        ffi::NC_COMPOUND => "compound",
        ffi::NC_VLEN => "vlen",
        ffi::NC_OPAQUE => "opaque",
        ffi::NC_ENUM => "enum",
        _ => "user-defined",
    }
}

/// The Zarr element type of a netCDF atomic type (not char or string).
fn element_type(xtype: c_int) -> Option<ElementType> {
    Some(match xtype {
        ffi::NC_BYTE => ElementType::Int8,
        ffi::NC_UBYTE => ElementType::UInt8,
        ffi::NC_SHORT => ElementType::Int16,
        ffi::NC_USHORT => ElementType::UInt16,
        ffi::NC_INT => ElementType::Int32,
        ffi::NC_UINT => ElementType::UInt32,
        ffi::NC_INT64 => ElementType::Int64,
        ffi::NC_UINT64 => ElementType::UInt64,
        ffi::NC_FLOAT => ElementType::Float32,
        ffi::NC_DOUBLE => ElementType::Float64,
        _ => return None,
    })
}

/// `Ok` for an atomic type (byte to string), else the refusal of a user-defined or unknown
/// type.
fn refuse_type(f: &File, ncid: c_int, xtype: c_int, what: &str) -> Result<()> {
    if (ffi::NC_BYTE..=ffi::NC_STRING).contains(&xtype) {
        return Ok(());
    }
    if xtype < ffi::NC_BYTE {
        return Err(Error::Unsupported(format!(
            "{:?}: {what} has the unknown netCDF type {xtype}",
            f.name
        )));
    }
    let mut name: NameBuf = [0; ffi::NC_MAX_NAME + 1];
    let (mut size, mut base, mut nfields, mut class) = (0usize, 0, 0usize, 0);
    // SAFETY: a name buffer (see NameBuf) and valid out pointers.
    let code = unsafe {
        ffi::nc_inq_user_type(
            ncid,
            xtype,
            name.as_mut_ptr().cast(),
            &mut size,
            &mut base,
            &mut nfields,
            &mut class,
        )
    };
    f.check(code, || format!("the type of {what}"))?;
    Err(Error::Unsupported(format!(
        "{:?}: {what} has the {} type {:?}: zarrtool imports numeric, char and string \
         netCDF types (compound, vlen, opaque and enum types are refused)",
        f.name,
        class_name(class),
        name_text(&name)?
    )))
}

/// A number as JSON: finite floats by their shortest text (`0.1` for a float's 0.1), NaN
/// and the infinities as the strings Zarr uses for them (`"NaN"`, `"Infinity"`).
fn float_json(v: f64, text: String) -> Value {
    if v.is_nan() {
        Value::from("NaN")
    } else if v.is_infinite() {
        Value::from(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

/// Numbers of netCDF type `xtype` (native bytes) as JSON values.
fn numbers_json(xtype: c_int, bytes: &[u8]) -> Vec<Value> {
    macro_rules! each {
        ($t:ty, $f:expr) => {
            bytes
                .chunks_exact(std::mem::size_of::<$t>())
                .map(|b| {
                    let v = <$t>::from_ne_bytes(b.try_into().expect("an element"));
                    $f(v)
                })
                .collect()
        };
    }
    match xtype {
        ffi::NC_BYTE => each!(i8, Value::from),
        ffi::NC_UBYTE => each!(u8, Value::from),
        ffi::NC_SHORT => each!(i16, Value::from),
        ffi::NC_USHORT => each!(u16, Value::from),
        ffi::NC_INT => each!(i32, Value::from),
        ffi::NC_UINT => each!(u32, Value::from),
        ffi::NC_INT64 => each!(i64, Value::from),
        ffi::NC_UINT64 => each!(u64, Value::from),
        ffi::NC_FLOAT => each!(f32, |v: f32| float_json(v as f64, format!("{v:?}"))),
        _ => each!(f64, |v: f64| float_json(v, format!("{v:?}"))),
    }
}

/// Takes the strings of an array of C string pointers the library allocated, and frees them.
fn take_strings(f: &File, ptrs: &mut [*mut c_char]) -> Result<Vec<Vec<u8>>> {
    let out = ptrs
        .iter()
        .map(|&p| {
            if p.is_null() {
                Vec::new()
            } else {
                // SAFETY: the library wrote NUL-terminated strings or null pointers.
                unsafe { CStr::from_ptr(p) }.to_bytes().to_vec()
            }
        })
        .collect();
    // SAFETY: the pointers came from the library, which frees them (null ones are skipped).
    let code = unsafe { ffi::nc_free_string(ptrs.len(), ptrs.as_mut_ptr()) };
    f.check(code, || "freeing strings".into())?;
    Ok(out)
}

/// The attribute NCZarr keeps attribute types in (`{"types": {"scale_factor": "<f4"}}`),
/// which NCZarr reads in Zarr v2 and xarray hides (of groups in both formats, of arrays in
/// v2 only); import writes it for numeric attributes where xarray hides it and export reads
/// it, so that types JSON cannot tell apart (a float from a double, a short from an int)
/// survive a round trip.
const TYPES_KEY: &str = "_NCZARR_ATTR";

/// The NCZarr (numpy) name of a numeric netCDF type's attribute values.
fn type_code(xtype: c_int) -> Option<&'static str> {
    Some(match xtype {
        ffi::NC_BYTE => "<i1",
        ffi::NC_UBYTE => "<u1",
        ffi::NC_SHORT => "<i2",
        ffi::NC_USHORT => "<u2",
        ffi::NC_INT => "<i4",
        ffi::NC_UINT => "<u4",
        ffi::NC_INT64 => "<i8",
        ffi::NC_UINT64 => "<u8",
        ffi::NC_FLOAT => "<f4",
        ffi::NC_DOUBLE => "<f8",
        _ => return None,
    })
}

/// The attributes of a variable (or, for `NC_GLOBAL`, of a group) as JSON. A value of one
/// item is a scalar, longer ones lists; text (`char`) is one string. A variable's
/// `_FillValue` is a null place holder: it becomes the array's fill value (and attribute). With `record_types`, the numeric attributes'
/// types are kept in NCZarr's `_NCZARR_ATTR` attribute ([`TYPES_KEY`]).
fn attributes(
    f: &File,
    ncid: c_int,
    varid: c_int,
    count: c_int,
    owner: &str,
    record_types: bool,
) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    let mut types = Map::new();
    let mut name = Vec::new();
    for i in 0..count {
        name.clear();
        name.resize(ATT_NAME_BYTES, 0);
        // SAFETY: a zeroed buffer of ATT_NAME_BYTES, longer than any attribute name.
        let code = unsafe { ffi::nc_inq_attname(ncid, varid, i, name.as_mut_ptr().cast()) };
        f.check(code, || format!("attribute {i} of {owner}"))?;
        let key = name_text(&name)?;
        let bytes = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        if bytes > ffi::NC_MAX_NAME {
            let start: String = key.chars().take(32).collect();
            return Err(Error::Metadata(format!(
                "{:?}: attribute {i} of {owner} has a name of {} bytes ({start:?}...), more than \
                 netCDF allows ({})",
                f.name,
                bytes,
                ffi::NC_MAX_NAME
            )));
        }
        let what = || format!("attribute {key:?} of {owner}");
        let (mut xtype, mut len) = (0, 0usize);
        // SAFETY: the name buffer is NUL-terminated; valid out pointers.
        let code =
            unsafe { ffi::nc_inq_att(ncid, varid, name.as_ptr().cast(), &mut xtype, &mut len) };
        f.check(code, what)?;
        if key == "_FillValue" && varid != ffi::NC_GLOBAL {
            // A place holder, so that the missing value's attribute keeps netCDF's order.
            out.insert(key, Value::Null);
            continue;
        }
        if key == TYPES_KEY {
            return Err(Error::Unsupported(format!(
                "{:?}: {owner} has an attribute {TYPES_KEY}, the name import keeps attribute \
                 types in",
                f.name
            )));
        }
        refuse_type(f, ncid, xtype, &what())?;
        // Reads the values into `into`, which has room for `len` items of the type.
        let get = |into: *mut c_void| {
            // SAFETY: the name is NUL-terminated; the caller's buffer holds the values.
            let code = unsafe { ffi::nc_get_att(ncid, varid, name.as_ptr().cast(), into) };
            f.check(code, what)
        };
        let value = match xtype {
            ffi::NC_CHAR => {
                let mut bytes = try_zeroed(f.bytes_of(len, 1, &what())?, &what())?;
                get(bytes.as_mut_ptr().cast())?;
                let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                Value::from(String::from_utf8_lossy(&bytes[..end]).into_owned())
            }
            ffi::NC_STRING => {
                let ptr = std::mem::size_of::<*mut c_char>();
                let mut ptrs = null_ptrs(f.bytes_of(len, ptr, &what())? / ptr, &what())?;
                get(ptrs.as_mut_ptr().cast())?;
                let items: Vec<Value> = take_strings(f, &mut ptrs)?
                    .into_iter()
                    .map(|s| Value::from(String::from_utf8_lossy(&s).into_owned()))
                    .collect();
                one_or_list(items)
            }
            t => {
                let size = element_size(t)?;
                let mut bytes = try_zeroed(f.bytes_of(len, size, &what())?, &what())?;
                get(bytes.as_mut_ptr().cast())?;
                if let Some(code) = type_code(t) {
                    types.insert(key.clone(), Value::from(code));
                }
                one_or_list(numbers_json(xtype, &bytes))
            }
        };
        out.insert(key, value);
    }
    if record_types && !types.is_empty() {
        let mut hint = Map::new();
        hint.insert("types".into(), Value::Object(types));
        out.insert(TYPES_KEY.into(), Value::Object(hint));
    }
    Ok(out)
}

/// A value of one item as itself, of any other number as a list.
fn one_or_list(items: Vec<Value>) -> Value {
    match <[Value; 1]>::try_from(items) {
        Ok([one]) => one,
        Err(items) => Value::Array(items),
    }
}

/// The first width of a `char` variable's strings that Zarr items cannot hold.
const MAX_CHAR_WIDTH: usize = MAX_ITEM_SIZE + 1;

/// The size of an item of an atomic numeric netCDF type.
fn element_size(xtype: c_int) -> Result<usize> {
    element_type(xtype)
        .map(|e| e.size())
        .ok_or_else(|| Error::Internal(format!("netCDF type {xtype} is not a number")))
}

/// `n` null string pointers for the library to fill, or `Error::NoMemory` naming `what`.
fn null_ptrs(n: usize, what: &str) -> Result<Vec<*mut c_char>> {
    let mut ptrs = Vec::new();
    ptrs.try_reserve_exact(n)
        .map_err(|_| no_memory(n.saturating_mul(std::mem::size_of::<usize>()), what))?;
    ptrs.resize(n, null_mut());
    Ok(ptrs)
}

/// Refuses a variable or group name that is not one Zarr node name (empty, `.`, `..`,
/// with a `/` or `\`, or a metadata document's name), before anything is written.
fn check_node_name(f: &File, name: &str, what: &str) -> Result<()> {
    let one = !name.contains(['/', '\\']) && node_path(name).is_ok_and(|p| p == name);
    if name.is_empty() || !one {
        return Err(Error::InvalidKey(format!(
            "{:?}: {what} is named {name:?}, which is not a Zarr node name",
            f.name
        )));
    }
    Ok(())
}

/// Reads what netCDF says of one variable and plans its array.
fn variable(f: &File, ncid: c_int, varid: c_int, group: &str, settings: &Settings) -> Result<Var> {
    let mut name: NameBuf = [0; ffi::NC_MAX_NAME + 1];
    let (mut xtype, mut ndims, mut natts) = (0, 0, 0);
    // SAFETY: a name buffer (see NameBuf) and valid out pointers; dimension ids asked for
    // below.
    let code = unsafe {
        ffi::nc_inq_var(
            ncid,
            varid,
            name.as_mut_ptr().cast(),
            &mut xtype,
            &mut ndims,
            null_mut(),
            &mut natts,
        )
    };
    f.check(code, || {
        format!("variable {varid} of group {}", display(group))
    })?;
    let vname = name_text(&name)?;
    check_node_name(
        f,
        &vname,
        &format!("variable {varid} of group {}", display(group)),
    )?;
    let path = join_key(group, &vname);
    let shown = format!("variable {}", display(&path));
    let mut dimids = vec![0 as c_int; ndims.max(0) as usize];
    // SAFETY: room for `ndims` dimension ids.
    let code = unsafe {
        ffi::nc_inq_var(
            ncid,
            varid,
            null_mut(),
            null_mut(),
            null_mut(),
            dimids.as_mut_ptr(),
            null_mut(),
        )
    };
    f.check(code, || format!("the dimensions of {shown}"))?;
    let mut dims = Vec::new();
    for &dimid in &dimids {
        let mut dname: NameBuf = [0; ffi::NC_MAX_NAME + 1];
        let mut len = 0usize;
        // SAFETY: a name buffer (see NameBuf) and a valid out pointer.
        let code = unsafe { ffi::nc_inq_dim(ncid, dimid, dname.as_mut_ptr().cast(), &mut len) };
        f.check(code, || format!("dimension {dimid} of {shown}"))?;
        dims.push((name_text(&dname)?, len));
    }
    refuse_type(f, ncid, xtype, &shown)?;
    let rank = dims.len();
    let kind = match xtype {
        ffi::NC_CHAR => Kind::Char(dims.last().map_or(1, |d| d.1.max(1))),
        ffi::NC_STRING => Kind::String,
        t => Kind::Number(element_size(t)?),
    };
    if let Kind::Char(n @ MAX_CHAR_WIDTH..) = kind {
        return Err(Error::Unsupported(format!(
            "{:?}: {shown} holds strings of {n} chars, more than a Zarr item may hold \
             ({MAX_ITEM_SIZE} bytes)",
            f.name
        )));
    }
    // A char array's last dimension is its strings' length.
    let zdims = match kind {
        Kind::Char(_) if rank > 0 => &dims[..rank - 1],
        _ => &dims[..],
    };
    let shape: Vec<u64> = zdims.iter().map(|d| d.1 as u64).collect();
    let stored = match settings.source {
        Some(source) => {
            let nc_shape: Vec<u64> = dims.iter().map(|d| d.1 as u64).collect();
            Some(virtualize::stored(
                f, source, group, &vname, &nc_shape, kind, &shown,
            )?)
        }
        None => None,
    };
    let order = stored.as_ref().map_or(ByteOrder::NATIVE, |s| s.order);
    let dtype = match kind {
        Kind::Char(n) => DType::new(DataKind::FixedBytes(n), ByteOrder::NotApplicable),
        Kind::String => DType::new(DataKind::String, ByteOrder::NotApplicable),
        Kind::Number(_) => element_type(xtype)
            .and_then(|e| e.to_dtype(order))
            .ok_or_else(|| Error::Internal(format!("no Zarr type for netCDF type {xtype}")))?,
    };
    let mut builder = ArrayBuilder::new(shape.clone(), ElementType::Raw);
    builder.dtype(dtype.clone());
    builder.zarr_format(settings.format.number())?;
    if let Some(stored) = &stored {
        let (filters, compressor) = stored.codecs();
        builder.chunks(stored.chunks.clone());
        builder.filters(filters);
        builder.compressor(compressor);
    }
    // Chunks: --chunks for this rank, else netCDF's own when the variable is chunked,
    // else the builder's guess.
    let mut storage = 0;
    let mut sizes = vec![0usize; rank.max(1)];
    // SAFETY: room for `rank` chunk sizes.
    let code = unsafe { ffi::nc_inq_var_chunking(ncid, varid, &mut storage, sizes.as_mut_ptr()) };
    let kept = (code == ffi::NC_NOERR && storage == ffi::NC_CHUNKED && rank > 0).then(|| {
        sizes[..shape.len()]
            .iter()
            .map(|&c| c.max(1) as u64)
            .collect::<Vec<_>>()
    });
    match (&settings.chunks, kept) {
        _ if stored.is_some() => {}
        (Some(chunks), _) if chunks.len() == shape.len() => {
            builder.chunks(chunks.clone());
        }
        (_, Some(kept)) => {
            builder.chunks(kept);
        }
        _ => {}
    }
    if let Some(shards) = settings.shards.as_ref().filter(|s| s.len() == shape.len()) {
        builder.shard_shape(shards.clone());
    }
    if let Some(c) = &settings.compressor {
        let (filters, compressors) = crate::layout::split_codecs(c.clone());
        if let Some(filters) = filters {
            builder.filters(filters);
        }
        builder.compressor(compressors);
    }
    // xarray shows a v3 array's `_NCZARR_ATTR` as an attribute (and `to_netcdf` refuses it):
    // v3 arrays keep JSON's types only.
    let v2 = !settings.format.is_v3();
    let mut attrs = attributes(f, ncid, varid, natts, &shown, v2)?;
    // netCDF's default fill stays implicit (xarray reading the file masks nothing there):
    // the array gets the builder's default. An explicit _FillValue, else missing_value,
    // becomes the CF missing value.
    let (mut att_type, mut att_len) = (0, 0usize);
    // SAFETY: a NUL-terminated name; valid out pointers.
    let explicit = unsafe {
        ffi::nc_inq_att(
            ncid,
            varid,
            c"_FillValue".as_ptr(),
            &mut att_type,
            &mut att_len,
        )
    } == ffi::NC_NOERR;
    let mut no_fill = 0;
    let mut fill = [0u8; 16];
    // SAFETY: 16 bytes hold any atomic type's fill value (a string's is a pointer).
    let code = unsafe { ffi::nc_inq_var_fill(ncid, varid, &mut no_fill, fill.as_mut_ptr().cast()) };
    f.check(code, || format!("the fill value of {shown}"))?;
    // A missing_value that is no value of the type (text, a list, out of range) stays an
    // attribute only, with a warning.
    let missing = attrs.get("missing_value").map(|v| match v.as_f64() {
        // netCDF converts it to the variable's type; a float attribute's text is the
        // shortest that gives its float32 back.
        Some(v) if dtype.kind == DataKind::Float(4) => {
            cf::encode(v as f32 as f64, &dtype, settings.format, &path)
        }
        Some(v) => cf::encode(v, &dtype, settings.format, &path),
        None => Err(Error::InvalidArg(format!(
            "{shown}: missing_value {v} is not one number"
        ))),
    });
    match kind {
        Kind::Number(size) if explicit => {
            let encoded = cf::encode_bytes(fill[..size].to_vec(), &dtype, settings.format, &path)?;
            keep_missing(&mut builder, &mut attrs, &dtype, encoded);
        }
        Kind::Number(size) => match missing {
            Some(Ok(encoded)) => keep_missing(&mut builder, &mut attrs, &dtype, encoded),
            Some(Err(e)) => eprintln!("zarrtool: {e}: missing_value is kept as an attribute only"),
            // Chunks the file never stored read as netCDF's fill when referenced.
            None if stored.as_ref().is_some_and(|s| !s.complete) => {
                builder.fill_value_bytes(dtype.element_type(), fill[..size].to_vec());
            }
            None => {}
        },
        // Every char of an unwritten string is the fill char.
        Kind::Char(n) if explicit => {
            let mut chars = try_zeroed(n, &format!("the fill value of {shown}"))?;
            chars.fill(fill[0]);
            builder.fill_value_bytes(ElementType::Raw, chars);
        }
        Kind::String if explicit => {
            const PTR: usize = std::mem::size_of::<usize>();
            let ptr = usize::from_ne_bytes(fill[..PTR].try_into().expect("a pointer"));
            let mut ptrs = [ptr as *mut c_char];
            let text = take_strings(f, &mut ptrs)?.remove(0);
            builder.fill_value_bytes(ElementType::String, text);
        }
        // xarray takes a v2 fill value for the CF missing value: the default "" would mask
        // the empty strings netCDF shows. A null fill (xarray's own for strings) masks none.
        Kind::String if !settings.format.requires_fill() => {
            builder.fill_value_json(Value::Null);
        }
        Kind::Char(_) | Kind::String => {}
    }
    if attrs.get(cf::FILL_ATTRIBUTE) == Some(&Value::Null) {
        attrs.shift_remove(cf::FILL_ATTRIBUTE);
    }
    let names: Vec<String> = zdims.iter().map(|d| d.0.clone()).collect();
    if settings.format.is_v3() {
        if !names.is_empty() {
            builder.dimension_names(names.into_iter().map(Some).collect());
        }
    } else {
        // A scalar's list is empty: xarray needs it all the same.
        attrs.insert(DIMENSIONS_KEY.into(), Value::from(names));
    }
    let meta = builder
        .metadata()
        .map_err(|e| Error::InvalidArg(format!("{shown}: {e}")))?;
    Ok(Var {
        ncid,
        varid,
        path,
        kind,
        nc_shape: dims.iter().map(|d| d.1).collect(),
        meta,
        format: settings.format,
        attrs,
        stored,
    })
}

/// Makes `encoded` the array's CF missing value: its fill value and the `_FillValue`
/// attribute beside it (see `cf::Encoded::apply`).
fn keep_missing(
    builder: &mut ArrayBuilder,
    attrs: &mut Map<String, Value>,
    dtype: &DType,
    encoded: cf::Encoded,
) {
    encoded.apply(attrs);
    builder.fill_value_bytes(dtype.element_type(), encoded.fill);
}

/// Walks a netCDF group and those below it, planning groups and arrays.
fn walk(
    f: &File,
    ncid: c_int,
    path: &str,
    settings: &Settings,
    groups: &mut Vec<GroupPlan>,
    vars: &mut Vec<Var>,
) -> Result<()> {
    let shown = format!("group {}", display(path));
    let mut natts = 0;
    // SAFETY: a valid out pointer.
    let code = unsafe { ffi::nc_inq_natts(ncid, &mut natts) };
    f.check(code, || format!("the attributes of {shown}"))?;
    groups.push(GroupPlan {
        path: path.to_string(),
        attrs: attributes(f, ncid, ffi::NC_GLOBAL, natts, &shown, true)?,
    });
    let mut nvars = 0;
    // SAFETY: a valid out pointer; the ids are asked for below.
    let code = unsafe { ffi::nc_inq_varids(ncid, &mut nvars, null_mut()) };
    f.check(code, || format!("the variables of {shown}"))?;
    let mut varids = vec![0 as c_int; nvars.max(0) as usize];
    // SAFETY: room for `nvars` ids.
    let code = unsafe { ffi::nc_inq_varids(ncid, &mut nvars, varids.as_mut_ptr()) };
    f.check(code, || format!("the variables of {shown}"))?;
    for varid in varids {
        vars.push(variable(f, ncid, varid, path, settings)?);
    }
    let mut ngroups = 0;
    // SAFETY: a valid out pointer; the ids are asked for below.
    let code = unsafe { ffi::nc_inq_grps(ncid, &mut ngroups, null_mut()) };
    f.check(code, || format!("the groups of {shown}"))?;
    let mut ids = vec![0 as c_int; ngroups.max(0) as usize];
    // SAFETY: room for `ngroups` ids.
    let code = unsafe { ffi::nc_inq_grps(ncid, &mut ngroups, ids.as_mut_ptr()) };
    f.check(code, || format!("the groups of {shown}"))?;
    for id in ids {
        let mut name: NameBuf = [0; ffi::NC_MAX_NAME + 1];
        // SAFETY: a name buffer (see NameBuf).
        let code = unsafe { ffi::nc_inq_grpname(id, name.as_mut_ptr().cast()) };
        f.check(code, || format!("a group of {shown}"))?;
        let gname = name_text(&name)?;
        check_node_name(f, &gname, &format!("a group of {shown}"))?;
        walk(f, id, &join_key(path, &gname), settings, groups, vars)?;
    }
    Ok(())
}

/// Copies one variable's values into its array, chunk by chunk of the array's grid.
fn copy_values(f: &File, var: &Var, array: &zarr::node::Array, root: &str) -> Result<()> {
    let rank = var.meta.rank();
    let cells = array.region_chunks(&vec![0; rank], &var.meta.shape)?;
    let shown = display(&join_key(root, &var.path));
    let bar = Progress::new(cells.len() as u64, unit_of(&array.metadata()), &shown);
    for index in &cells {
        let (start, count) = array.chunk_region(index)?;
        let what = format!("a chunk of {shown}");
        // The region's items, and their bytes when `size` each.
        let n = count
            .iter()
            .try_fold(1u64, |n, &c| n.checked_mul(c))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| Error::Overflow(format!("{what} has more items than memory")))?;
        let bytes = |size: usize| {
            n.checked_mul(size)
                .ok_or_else(|| no_memory(usize::MAX, &what))
        };
        // netCDF's region: a char array's strings are read whole.
        let mut nc_start: Vec<usize> = start.iter().map(|&s| s as usize).collect();
        let mut nc_count: Vec<usize> = count.iter().map(|&c| c as usize).collect();
        if let Kind::Char(_) = var.kind {
            if var.nc_shape.len() > rank {
                nc_start.push(0);
                nc_count.push(var.nc_shape[rank]);
            }
        }
        // A scalar's start and count are not read, but must point somewhere.
        if nc_start.is_empty() {
            nc_start.push(0);
            nc_count.push(1);
        }
        // Reads the region into `into`, which has room for it in the variable's layout.
        let read = |into: *mut c_void| {
            // SAFETY: the region's start and count arrays have one entry per netCDF
            // dimension (or one for a scalar), and the caller's buffer holds the region.
            let code = unsafe {
                ffi::nc_get_vara(
                    var.ncid,
                    var.varid,
                    nc_start.as_ptr(),
                    nc_count.as_ptr(),
                    into,
                )
            };
            f.check(code, || format!("reading {shown}"))
        };
        match var.kind {
            Kind::String => {
                // Room for the region's string pointers, freed by take_strings.
                let mut ptrs = null_ptrs(n, &what)?;
                read(ptrs.as_mut_ptr().cast::<c_void>())?;
                let items = take_strings(f, &mut ptrs)?;
                let parts: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
                array.write_vlen(&start, &count, Order::C, &parts)?;
            }
            Kind::Char(width) => {
                let stored = var.nc_shape.get(rank).copied().unwrap_or(1);
                // Room for the region's chars (`stored` = `width` per string).
                let mut buf = try_zeroed(bytes(width)?, &what)?;
                if stored > 0 && n > 0 {
                    read(buf.as_mut_ptr().cast::<c_void>())?;
                }
                array.write(&start, &count, ElementType::Raw, Order::C, &buf)?;
            }
            Kind::Number(size) => {
                // Room for the region's items of the variable's type.
                let mut buf = try_zeroed(bytes(size)?, &what)?;
                read(buf.as_mut_ptr().cast::<c_void>())?;
                let elem = var.meta.dtype.element_type();
                array.write(&start, &count, elem, Order::C, &buf)?;
            }
        }
        bar.inc(1, region_bytes(&count, var.meta.item_size()));
    }
    bar.finish();
    Ok(())
}

/// Imports the netCDF (or HDF5) `file` as a hierarchy at `node` (see the module's text).
pub fn import(
    file: &str,
    node: &NodeArg,
    overwrite: bool,
    dry_run: bool,
    layout: &Layout,
) -> Result<u8> {
    let f = File::open(file)?;
    let root = node.path.trim_matches('/').to_string();
    // The plan is made with the store opened read-only (if it exists): nothing is written
    // when the file holds something the import refuses.
    let (existing, kind) = target_store(&node.store, &root, overwrite, true)?;
    let format = match (layout.format, &existing) {
        (Some(n), _) => Format::from_number(n.into())?,
        (None, Some(s)) => zarr::node::inherited_format(s.as_ref(), &root)?,
        (None, None) => Format::V3,
    };
    let settings = Settings {
        chunks: layout
            .chunks
            .as_deref()
            .map(|c| parse_shape(c, "--chunks"))
            .transpose()?,
        shards: layout
            .shards
            .as_deref()
            .map(|c| parse_shape(c, "--shards"))
            .transpose()?,
        compressor: layout
            .compressor
            .as_deref()
            .map(|c| parse_json(c, "--compressor"))
            .transpose()?,
        format,
        source: None,
    };
    // Everything is read and checked before anything is written.
    let mut groups = Vec::new();
    let mut vars = Vec::new();
    walk(&f, f.ncid, "", &settings, &mut groups, &mut vars)?;
    let mut seen = std::collections::HashSet::new();
    for path in groups
        .iter()
        .map(|g| &g.path)
        .chain(vars.iter().map(|v| &v.path))
    {
        if !seen.insert(path.as_str()) {
            return Err(Error::Exists(format!(
                "{file:?}: a group and a variable are both named {}",
                display(path)
            )));
        }
    }
    if dry_run {
        let v = format.number();
        would_create(kind, &root, &format!("a group (Zarr v{v}) from {file:?}"));
        for g in groups.iter().skip(1) {
            eprintln!(
                "would create a group (Zarr v{v}) at {}",
                display(&join_key(&root, &g.path))
            );
        }
        for var in &vars {
            eprintln!(
                "would create {} at {}",
                array_text(&var.meta, var.format),
                display(&join_key(&root, &var.path))
            );
        }
        return Ok(0);
    }
    drop(existing);
    let (store, _) = target_store(&node.store, &root, overwrite, false)?;
    let store = store.ok_or_else(|| Error::Internal("no store to write".into()))?;
    for (i, g) in groups.iter().enumerate() {
        let mode = match (i, overwrite) {
            (0, true) => Mode::Overwrite,
            _ => Mode::CreateNew,
        };
        Group::open_with(
            store.clone(),
            &join_key(&root, &g.path),
            mode,
            format,
            &g.attrs,
        )?;
    }
    for var in &vars {
        let array = zarr::node::Array::create(
            store.clone(),
            &join_key(&root, &var.path),
            var.meta.clone(),
            &var.attrs,
            Mode::CreateNew,
            var.format,
        )?;
        copy_values(&f, var, &array, &root)?;
    }
    crate::refresh::consolidated_above(store.as_ref(), &root)?;
    store.close()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use zarr::store::MemoryStore;

    /// A valid classic file of `version`: dimensions n = 3 and time (records, 2 of them); a
    /// global char attribute; int x(n) with a short attribute; char c(time, n).
    fn classic_file(version: u8) -> Vec<u8> {
        let wide = version == 5;
        let mut b = vec![b'C', b'D', b'F', version];
        let int = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_be_bytes());
        let non_neg = |b: &mut Vec<u8>, v: u64| match wide {
            true => b.extend_from_slice(&v.to_be_bytes()),
            false => b.extend_from_slice(&(v as u32).to_be_bytes()),
        };
        let name = |b: &mut Vec<u8>, n: &str| {
            non_neg(b, n.len() as u64);
            b.extend_from_slice(n.as_bytes());
            b.resize(b.len().div_ceil(4) * 4, 0);
        };
        non_neg(&mut b, 2);
        int(&mut b, 0x0A);
        non_neg(&mut b, 2);
        name(&mut b, "n");
        non_neg(&mut b, 3);
        name(&mut b, "time");
        non_neg(&mut b, 0);
        int(&mut b, 0x0C);
        non_neg(&mut b, 1);
        name(&mut b, "title");
        int(&mut b, 2);
        non_neg(&mut b, 5);
        b.extend_from_slice(b"hello\0\0\0");
        int(&mut b, 0x0B);
        non_neg(&mut b, 2);
        // Variables: name, dimension ids, attributes, type, vsize; begin comes last.
        let mut begins = Vec::new();
        name(&mut b, "x");
        non_neg(&mut b, 1);
        non_neg(&mut b, 0);
        int(&mut b, 0x0C);
        non_neg(&mut b, 1);
        name(&mut b, "valid_max");
        int(&mut b, 3);
        non_neg(&mut b, 1);
        b.extend_from_slice(&[0, 9, 0, 0]);
        int(&mut b, 4);
        non_neg(&mut b, 12);
        begins.push(b.len());
        b.resize(b.len() + if version == 1 { 4 } else { 8 }, 0);
        name(&mut b, "c");
        non_neg(&mut b, 2);
        non_neg(&mut b, 1);
        non_neg(&mut b, 0);
        int(&mut b, 0);
        non_neg(&mut b, 0);
        int(&mut b, 2);
        non_neg(&mut b, 4);
        begins.push(b.len());
        b.resize(b.len() + if version == 1 { 4 } else { 8 }, 0);
        // Data: x, then two records of c (3 chars each, padded to 4 as the only record
        // variable is not).
        for (i, at) in begins.into_iter().enumerate() {
            let begin = (b.len() + 12 * i) as u64;
            match version {
                1 => b[at..at + 4].copy_from_slice(&(begin as u32).to_be_bytes()),
                _ => b[at..at + 8].copy_from_slice(&begin.to_be_bytes()),
            }
        }
        for v in [1i32, 2, 3] {
            int(&mut b, v as u32);
        }
        b.extend_from_slice(b"abcdef");
        b
    }

    /// Plans and copies every variable of the netCDF file `path` into a memory store, as
    /// the import does.
    fn import_into_memory(path: &str) -> Result<()> {
        let f = File::open(path)?;
        let settings = Settings {
            chunks: None,
            shards: None,
            compressor: None,
            format: Format::V3,
            source: None,
        };
        let (mut groups, mut vars) = (Vec::new(), Vec::new());
        walk(&f, f.ncid, "", &settings, &mut groups, &mut vars)?;
        let store: Arc<dyn zarr::store::Store> = Arc::new(MemoryStore::new());
        for var in &vars {
            let array = zarr::node::Array::create(
                store.clone(),
                &var.path,
                var.meta.clone(),
                &var.attrs,
                Mode::CreateNew,
                var.format,
            )?;
            copy_values(&f, var, &array, "")?;
        }
        Ok(())
    }

    /// Random changes to valid classic files (bytes, 4- and 8-byte fields set to extremes,
    /// cuts): the header check never panics (overflow checks are on in tests), and every
    /// file it accepts is read whole by the netCDF library without a crash, its errors
    /// being errors.
    #[test]
    fn mutated_classic_files_are_checked_or_read_safely() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.nc");
        let path = path.to_str().unwrap();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut accepted, mut refused) = (0, 0);
        for version in [1, 2, 5] {
            let valid = classic_file(version);
            std::fs::write(path, &valid).unwrap();
            import_into_memory(path).unwrap();
            for _ in 0..1500 {
                let mut b = valid.clone();
                for _ in 0..1 + next() % 3 {
                    let at = (next() as usize) % b.len();
                    let end = b.len();
                    let extreme = [0u8, 0x7f, 0x80, 0xff][(next() % 4) as usize];
                    match next() % 4 {
                        0 => b[at] = next() as u8,
                        1 => b[at..end.min(at + 4)].fill(extreme),
                        2 => b[at..end.min(at + 8)].fill(extreme),
                        _ => b.truncate(at.max(4)),
                    }
                }
                std::fs::write(path, &b).unwrap();
                let size = b.len() as u64;
                match classic::check(b.as_slice(), size, path) {
                    Ok(_) => {
                        accepted += 1;
                        let _ = import_into_memory(path);
                    }
                    Err(e) => {
                        refused += 1;
                        assert!(matches!(e, Error::Metadata(_)), "{e}");
                    }
                }
            }
        }
        assert!(accepted > 150 && refused > 3500, "{accepted} {refused}");
    }

    #[test]
    fn numbers_as_json() {
        let floats: Vec<u8> = [0.1f32, f32::NAN, f32::NEG_INFINITY]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(
            Value::Array(numbers_json(ffi::NC_FLOAT, &floats)).to_string(),
            r#"[0.1,"NaN","-Infinity"]"#
        );
        let ints: Vec<u8> = [-1i16, 7].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(
            Value::Array(numbers_json(ffi::NC_SHORT, &ints)).to_string(),
            "[-1,7]"
        );
    }
}
