//! `export --format netcdf4`: a Zarr hierarchy (or one array) as a netCDF-4 file, written
//! through the system netCDF library.
//!
//! Groups become groups and arrays variables, in name order (Zarr keeps no other). A
//! variable's dimensions are its array's dimension names (`{array}_dim{i}` for an unnamed
//! one), each defined once in the group that first needs it with that length and shared
//! by the groups below, as netCDF scopes them; `--unlimited NAME` makes a dimension
//! unlimited. Fixed-width byte strings become `char` over one more dimension, `string{n}`
//! (as xarray names it), variable-length strings `string`. The CF missing value becomes
//! `_FillValue` of the variable's type, written first (an integer's exactly; a string
//! variable's `_FillValue` is left out). Attributes keep the netCDF types
//! recorded in NCZarr's `_NCZARR_ATTR` (as `zarrtool import` writes it); others take the
//! type their JSON value says: text `char`, a list of strings `string`, integers `int`
//! (`int64` or `uint64` when they do not fit), other numbers `double`, anything else its
//! JSON text. Chunked variables keep their (inner) chunk shape, cut to the dimensions'
//! lengths, and are compressed with deflate and shuffle unless told otherwise.
//!
//! Everything is planned and checked before the file is made, so an array netCDF has no
//! type for is refused before anything is written; the file is written beside the target
//! under a temporary name and renamed over it only when complete (a signal meanwhile
//! removes it: `interrupt.rs`). Values are copied chunk by chunk of each array's grid: the
//! stored chunks only when netCDF reads unwritten values as the array's fill value, else
//! every chunk, the fill values written bounded by `--max-fill`.

use super::{ffi, nc_message, TYPES_KEY};
use crate::cli::NodeArg;
use crate::describe::display;
use crate::progress::{region_bytes, unit_of, Progress};
use crate::source::{open_hierarchy, Hierarchy};
use serde_json::{Map, Value};
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use zarr::dtype::DataKind;
use zarr::error::{count_of, try_zeroed};
use zarr::meta::json::as_non_finite;
use zarr::meta::{ArrayMeta, Order};
use zarr::node::{cf, node_kind, Array, Group, Mode, Node, NodeKind, DIMENSIONS_KEY};
use zarr::store::join_key;
use zarr::{Error, Result};

/// How the file is written.
pub struct Settings {
    /// Replace an existing file.
    pub overwrite: bool,
    /// The dimensions made unlimited.
    pub unlimited: Vec<String>,
    /// The deflate level, 0 for none.
    pub deflate: u8,
    /// Shuffle the bytes before deflate.
    pub shuffle: bool,
    /// The most bytes of fill values written for chunks not stored, over the whole file.
    pub max_fill: u64,
}

/// An attribute's netCDF type and values.
enum Attr {
    /// `char` text.
    Text(String),
    /// `string` values.
    Strings(Vec<CString>),
    /// Numbers of a numeric type, native bytes.
    Numbers(c_int, Vec<u8>),
}

/// What an array's items become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VarType {
    /// A numeric type.
    Number(c_int),
    /// `char` strings of this width, over a last dimension of that length.
    Char(usize),
    /// `string`.
    String,
}

/// A dimension a variable uses: its name and the depth of the group defining it.
struct DimRef {
    name: String,
    depth: usize,
}

/// An array and the variable it becomes.
struct VarPlan {
    array: Array,
    name: String,
    ty: VarType,
    dims: Vec<DimRef>,
    /// The netCDF chunk shape (`None`: netCDF's choice).
    chunks: Option<Vec<usize>>,
    /// `_FillValue`: one item of the variable's type, native bytes.
    fill: Option<Vec<u8>>,
    attrs: Vec<(String, Attr)>,
    /// The chunks written: the stored ones when netCDF's fill for the variable is the
    /// array's fill value (the others are left unwritten, and read as it); `None` for every
    /// chunk of the grid.
    written: Option<Vec<Vec<u64>>>,
    /// The bytes of fill values written for chunks not stored.
    fill_bytes: u64,
}

/// A group and what it holds.
struct GroupPlan {
    name: String,
    attrs: Vec<(String, Attr)>,
    /// The dimensions defined here, in the order first needed.
    dims: Vec<(String, u64)>,
    vars: Vec<VarPlan>,
    groups: Vec<GroupPlan>,
}

/// The netCDF type of a Zarr data type, or `None` when netCDF has none.
fn var_type(kind: &DataKind) -> Option<VarType> {
    Some(VarType::Number(match kind {
        DataKind::Int(1) => ffi::NC_BYTE,
        DataKind::Int(2) => ffi::NC_SHORT,
        DataKind::Int(4) => ffi::NC_INT,
        DataKind::Int(8) => ffi::NC_INT64,
        DataKind::UInt(1) => ffi::NC_UBYTE,
        DataKind::UInt(2) => ffi::NC_USHORT,
        DataKind::UInt(4) => ffi::NC_UINT,
        DataKind::UInt(8) => ffi::NC_UINT64,
        DataKind::Float(4) => ffi::NC_FLOAT,
        DataKind::Float(8) => ffi::NC_DOUBLE,
        DataKind::FixedBytes(n) => return Some(VarType::Char(*n)),
        DataKind::String => return Some(VarType::String),
        _ => return None,
    }))
}

/// The size of one item of a numeric netCDF type.
fn number_size(xtype: c_int) -> usize {
    match xtype {
        ffi::NC_BYTE | ffi::NC_UBYTE | ffi::NC_CHAR => 1,
        ffi::NC_SHORT | ffi::NC_USHORT => 2,
        ffi::NC_INT | ffi::NC_UINT | ffi::NC_FLOAT => 4,
        _ => 8,
    }
}

/// The numeric netCDF type an NCZarr type name (`<f4`, `>i2`, `|u1`) stands for; `NC_CHAR`
/// for NCZarr's text (`<U1`, `|S1`); `None` for anything else.
fn hinted_type(code: &str) -> Option<c_int> {
    let bare = code.trim_start_matches(['<', '>', '|', '=']);
    Some(match bare {
        "i1" => ffi::NC_BYTE,
        "u1" => ffi::NC_UBYTE,
        "i2" => ffi::NC_SHORT,
        "u2" => ffi::NC_USHORT,
        "i4" => ffi::NC_INT,
        "u4" => ffi::NC_UINT,
        "i8" => ffi::NC_INT64,
        "u8" => ffi::NC_UINT64,
        "f4" => ffi::NC_FLOAT,
        "f8" => ffi::NC_DOUBLE,
        _ if bare.starts_with(['U', 'S']) => ffi::NC_CHAR,
        _ => return None,
    })
}

/// A JSON number (or a non-finite float's text) as an integer or a float.
#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

/// The number `value` holds; with `lenient`, also `"NaN"`, `"Infinity"` and `"-Infinity"`
/// as text (an attribute NCZarr's types say is numeric).
fn number(value: &Value, lenient: bool) -> Option<Num> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .map(Num::Int)
            .or_else(|| n.as_f64().map(Num::Float)),
        Value::String(s) => as_non_finite(value).map(Num::Float).or_else(|| {
            let v = match s.as_str() {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                _ => return None,
            };
            lenient.then_some(Num::Float(v))
        }),
        _ => None,
    }
}

/// Appends `n` as one item of the numeric netCDF type `xtype` to `out`, or `None` when the
/// type cannot hold it exactly (a fraction or out of range for an integer type, out of
/// range for float).
fn push_number(xtype: c_int, n: Num, out: &mut Vec<u8>) -> Option<()> {
    let int = match n {
        Num::Int(i) => Some(i),
        Num::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 2e38 => Some(f as i128),
        Num::Float(_) => None,
    };
    let float = match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    };
    macro_rules! int {
        ($t:ty) => {
            out.extend_from_slice(&<$t>::try_from(int?).ok()?.to_ne_bytes())
        };
    }
    match xtype {
        ffi::NC_BYTE => int!(i8),
        ffi::NC_UBYTE => int!(u8),
        ffi::NC_SHORT => int!(i16),
        ffi::NC_USHORT => int!(u16),
        ffi::NC_INT => int!(i32),
        ffi::NC_UINT => int!(u32),
        ffi::NC_INT64 => int!(i64),
        ffi::NC_UINT64 => int!(u64),
        ffi::NC_FLOAT => {
            if float.is_finite() && float.abs() > f32::MAX as f64 {
                return None;
            }
            out.extend_from_slice(&(float as f32).to_ne_bytes())
        }
        _ => out.extend_from_slice(&float.to_ne_bytes()),
    }
    Some(())
}

/// The integer type that holds every one of `items`: `int`, else `int64`, else `uint64`.
fn integer_type(items: &[i128]) -> c_int {
    let fits = |lo: i128, hi: i128| items.iter().all(|i| (lo..=hi).contains(i));
    if fits(i32::MIN.into(), i32::MAX.into()) {
        ffi::NC_INT
    } else if fits(i64::MIN.into(), i64::MAX.into()) {
        ffi::NC_INT64
    } else {
        ffi::NC_UINT64
    }
}

/// A C string for netCDF, refused (naming `what`) when it holds a NUL.
fn c_string(text: &str, what: &dyn Fn() -> String) -> Result<CString> {
    CString::new(text).map_err(|_| {
        Error::InvalidArg(format!(
            "{}: {text:?} holds a NUL, which netCDF text cannot",
            what()
        ))
    })
}

/// One attribute as netCDF stores it: the type `hint` names (NCZarr's), else the one its
/// JSON value says (see the module's text). `owner` names it in errors.
fn attribute(key: &str, value: &Value, hint: Option<c_int>, owner: &str) -> Result<Attr> {
    let what = || format!("{owner}: attribute {key:?}");
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    match hint {
        Some(ffi::NC_CHAR) => {
            if let Value::String(s) = value {
                return Ok(Attr::Text(s.clone()));
            }
        }
        Some(xtype) => {
            let mut bytes = Vec::new();
            for item in &items {
                number(item, true)
                    .and_then(|n| push_number(xtype, n, &mut bytes))
                    .ok_or_else(|| {
                        Error::Range(format!(
                            "{}: {item} is not a value of its type {}",
                            what(),
                            super::type_code(xtype).unwrap_or("?")
                        ))
                    })?;
            }
            if !items.is_empty() {
                return Ok(Attr::Numbers(xtype, bytes));
            }
        }
        None => {}
    }
    if let Value::String(s) = value {
        if number(value, false).is_none() {
            return Ok(Attr::Text(s.clone()));
        }
    }
    let texts: Option<Vec<&str>> = items
        .iter()
        .map(|v| v.as_str().filter(|_| number(v, false).is_none()))
        .collect();
    if let (Value::Array(_), Some(texts)) = (value, &texts) {
        if !texts.is_empty() {
            let strings = texts
                .iter()
                .map(|t| c_string(t, &what))
                .collect::<Result<_>>()?;
            return Ok(Attr::Strings(strings));
        }
    }
    let nums: Option<Vec<Num>> = items.iter().map(|v| number(v, false)).collect();
    if let Some(nums) = nums.filter(|n| !n.is_empty()) {
        let ints: Option<Vec<i128>> = nums
            .iter()
            .map(|n| match n {
                Num::Int(i) => Some(*i),
                Num::Float(_) => None,
            })
            .collect();
        let xtype = ints.as_deref().map_or(ffi::NC_DOUBLE, integer_type);
        let mut bytes = Vec::new();
        for n in nums {
            push_number(xtype, n, &mut bytes)
                .ok_or_else(|| Error::Range(format!("{}: {value} is out of range", what())))?;
        }
        return Ok(Attr::Numbers(xtype, bytes));
    }
    // Anything else (true, null, an object, an empty or mixed list): its JSON text.
    Ok(Attr::Text(value.to_string()))
}

/// The attributes of a node as netCDF attributes, without what the variable's definition
/// says (`_ARRAY_DIMENSIONS`, `_FillValue`) and NCZarr's records (`_nczarr_*`, read for
/// the types).
fn attributes(map: &Map<String, Value>, owner: &str) -> Result<Vec<(String, Attr)>> {
    let types = map
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(TYPES_KEY))
        .and_then(|(_, v)| v.get("types"))
        .and_then(Value::as_object);
    let mut out = Vec::new();
    for (key, value) in map {
        let lower = key.to_ascii_lowercase();
        if key == DIMENSIONS_KEY || key == cf::FILL_ATTRIBUTE || lower.starts_with("_nczarr") {
            continue;
        }
        let hint = types
            .and_then(|t| t.get(key))
            .and_then(Value::as_str)
            .and_then(hinted_type);
        out.push((key.clone(), attribute(key, value, hint, owner)?));
    }
    Ok(out)
}

/// The dimensions visible in a group: its own and its ancestors', innermost last.
type Scopes = Vec<Vec<(String, u64)>>;

/// The dimension `name` of length `len` a variable of the innermost group uses: the
/// innermost visible one of that name when its length is `len`, else a new one defined in
/// the innermost group (refused when that group already has one of another length).
fn resolve_dim(scopes: &mut Scopes, name: &str, len: u64, array: &str) -> Result<DimRef> {
    let depth = scopes.len() - 1;
    for (d, scope) in scopes.iter().enumerate().rev() {
        if let Some((_, l)) = scope.iter().find(|(n, _)| n == name) {
            if *l == len {
                return Ok(DimRef {
                    name: name.into(),
                    depth: d,
                });
            }
            if d == depth {
                return Err(Error::InvalidArg(format!(
                    "array {}: dimension {name:?} has length {len}, but {l} for another \
                     array of the group: a netCDF dimension has one length",
                    display(array)
                )));
            }
            break;
        }
    }
    scopes[depth].push((name.into(), len));
    Ok(DimRef {
        name: name.into(),
        depth,
    })
}

/// Plans the variable of the array at `path` of `source`, named `name`, in the innermost
/// group of `scopes`.
fn plan_var(source: &Hierarchy, path: &str, name: &str, scopes: &mut Scopes) -> Result<VarPlan> {
    let array = Array::open(source.store.clone(), path, Mode::Read)?;
    let meta = array.metadata();
    let shown = format!("array {}", display(path));
    let ty = var_type(&meta.dtype.kind).ok_or_else(|| {
        Error::Unsupported(format!(
            "{shown}: netCDF has no type for {} items (it stores integers, float32, \
             float64, fixed-width byte strings and strings)",
            meta.dtype.to_v2()
        ))
    })?;
    let names = array.dimension_names()?;
    let mut dims = Vec::new();
    for (i, &len) in meta.shape.iter().enumerate() {
        let dim = names
            .as_ref()
            .and_then(|n| n[i].clone())
            .unwrap_or_else(|| format!("{name}_dim{i}"));
        dims.push(resolve_dim(scopes, &dim, len, path)?);
    }
    if let VarType::Char(n) = ty {
        dims.push(resolve_dim(scopes, &format!("string{n}"), n as u64, path)?);
    }
    let attrs_json = array.attributes()?;
    // An integer's missing value exactly (not through a double); none for strings, whose
    // `_FillValue` attribute netCDF has no numeric fill for (it is left out).
    let fill = match ty {
        VarType::Number(xtype) => {
            let value = crate::missing::missing_value(&array, &attrs_json)?;
            match number(&value, true) {
                None => None,
                // Zarr v2's default fill of floats, NaN, is no missing value anybody set.
                Some(Num::Float(v))
                    if v.is_nan()
                        && !array.format().is_v3()
                        && !attrs_json.contains_key(cf::FILL_ATTRIBUTE) =>
                {
                    None
                }
                Some(n) => {
                    let mut bytes = Vec::new();
                    push_number(xtype, n, &mut bytes).ok_or_else(|| {
                        Error::Range(format!(
                            "{shown}: missing value {value} is not a value of its type"
                        ))
                    })?;
                    Some(bytes)
                }
            }
        }
        _ => None,
    };
    // netCDF chunks: the (inner) chunk shape, cut to the dimensions' lengths; netCDF's for
    // an empty variable (its dimension of length 0 is unlimited), none for a scalar.
    let empty = meta.shape.contains(&0) || ty == VarType::Char(0);
    let chunks = (!dims.is_empty() && !empty).then(|| {
        let mut c: Vec<usize> = meta
            .inner_chunks()
            .iter()
            .zip(&meta.shape)
            .map(|(&c, &len)| c.min(len.max(1)).max(1) as usize)
            .collect();
        if let VarType::Char(n) = ty {
            c.push(n.max(1));
        }
        c
    });
    // A store that cannot list (a web server) has every chunk read, as the array reads it:
    // which are stored is not known, nor what they would leave to fill.
    let (written, fill_bytes) = match source.lists {
        false => (None, 0),
        true => {
            let stored = array.stored_chunks()?;
            match netcdf_fills_as_zarr(&meta, ty, fill.as_deref()) {
                true => (Some(stored), 0),
                false => (None, missing_bytes(&array, ty, &stored)?),
            }
        }
    };
    Ok(VarPlan {
        attrs: attributes(&attrs_json, &shown)?,
        array,
        name: name.into(),
        ty,
        dims,
        chunks,
        fill,
        written,
        fill_bytes,
    })
}

/// netCDF's default fill value of the numeric type `xtype` (`NC_FILL_*` of `netcdf.h`),
/// native bytes.
fn default_fill(xtype: c_int) -> Vec<u8> {
    match xtype {
        ffi::NC_BYTE => (-127i8).to_ne_bytes().to_vec(),
        ffi::NC_UBYTE => u8::MAX.to_ne_bytes().to_vec(),
        ffi::NC_SHORT => (-32767i16).to_ne_bytes().to_vec(),
        ffi::NC_USHORT => u16::MAX.to_ne_bytes().to_vec(),
        ffi::NC_INT => (-2147483647i32).to_ne_bytes().to_vec(),
        ffi::NC_UINT => u32::MAX.to_ne_bytes().to_vec(),
        ffi::NC_INT64 => (-9223372036854775806i64).to_ne_bytes().to_vec(),
        ffi::NC_UINT64 => (u64::MAX - 1).to_ne_bytes().to_vec(),
        ffi::NC_FLOAT => 9.969_21e36_f32.to_ne_bytes().to_vec(),
        _ => 9.969_209_968_386_869e36f64.to_ne_bytes().to_vec(),
    }
}

/// Whether what netCDF reads where nothing was written (the variable's `_FillValue`
/// `fill`, else netCDF's default: `\0` for `char`) is exactly what the array `meta` reads
/// where no chunk is stored (its fill value, zeros when null). Never for `string`:
/// netCDF-C 4.9 fails reading strings never written (an HDF error), so they are written.
fn netcdf_fills_as_zarr(meta: &ArrayMeta, ty: VarType, fill: Option<&[u8]>) -> bool {
    let zarr = meta.fill_value.as_deref();
    match ty {
        VarType::Number(xtype) => {
            let netcdf = fill.map_or_else(|| default_fill(xtype), <[u8]>::to_vec);
            match zarr {
                Some(bytes) => bytes == netcdf.as_slice(),
                None => netcdf.iter().all(|&b| b == 0),
            }
        }
        VarType::Char(_) => zarr.is_none_or(|b| b.iter().all(|&c| c == 0)),
        VarType::String => false,
    }
}

/// The bytes of fill values written for the elements of `array` in no stored chunk (the
/// chunks `stored`): one item each (a string's fill value and its NUL).
fn missing_bytes(array: &Array, ty: VarType, stored: &[Vec<u64>]) -> Result<u64> {
    let meta = array.metadata();
    let total = meta.shape.iter().map(|&n| n as u128).product::<u128>();
    let mut held = 0u128;
    for index in stored {
        let (_, count) = array.chunk_region(index)?;
        held += count.iter().map(|&n| n as u128).product::<u128>();
    }
    let item = match ty {
        VarType::String => meta.fill_value.as_ref().map_or(0, Vec::len) + 1,
        _ => meta.item_size(),
    };
    Ok(u64::try_from(total.saturating_sub(held).saturating_mul(item as u128)).unwrap_or(u64::MAX))
}

/// Plans the group at `path` of `source` (named `name`) and everything below it.
fn plan_group(
    source: &Hierarchy,
    path: &str,
    name: &str,
    scopes: &mut Scopes,
) -> Result<GroupPlan> {
    let group = Group::open(source.store.clone(), path, Mode::Read)?;
    let shown = format!("group {}", display(path));
    scopes.push(Vec::new());
    let mut plan = GroupPlan {
        name: name.into(),
        attrs: attributes(&group.attributes()?, &shown)?,
        dims: Vec::new(),
        vars: Vec::new(),
        groups: Vec::new(),
    };
    let members = group.members()?;
    for (member, kind) in &members {
        if *kind == NodeKind::Array {
            let var = plan_var(source, &join_key(path, member), member, scopes)?;
            plan.vars.push(var);
        }
    }
    for (member, kind) in &members {
        if *kind == NodeKind::Group {
            let below = plan_group(source, &join_key(path, member), member, scopes)?;
            plan.groups.push(below);
        }
    }
    plan.dims = scopes.pop().unwrap_or_default();
    Ok(plan)
}

/// Refuses a plan that would write more than `max_fill` bytes of fill values for chunks
/// not stored, naming the largest such array.
fn refuse_too_much_fill(plan: &GroupPlan, max_fill: u64) -> Result<()> {
    fn each<'a>(plan: &'a GroupPlan, out: &mut Vec<&'a VarPlan>) {
        out.extend(plan.vars.iter().filter(|v| v.fill_bytes > 0));
        plan.groups.iter().for_each(|g| each(g, out));
    }
    let mut vars = Vec::new();
    each(plan, &mut vars);
    let total = vars
        .iter()
        .fold(0u64, |t, v| t.saturating_add(v.fill_bytes));
    let Some(largest) = vars.iter().max_by_key(|v| v.fill_bytes) else {
        return Ok(());
    };
    if total <= max_fill {
        return Ok(());
    }
    let array = &largest.array;
    let fill = array.fill_value_json()?;
    Err(Error::InvalidArg(format!(
        "array {}: {} bytes of its elements are in no stored chunk and read as its fill \
         value {fill}, which netCDF would not give back unwritten (the variable's fill is \
         netCDF's default or its _FillValue): writing them ({total} bytes in all) would pass \
         --max-fill {max_fill}. Give a larger --max-fill, or set the array's _FillValue \
         attribute to its fill value so that netCDF fills them",
        display(array.path()),
        largest.fill_bytes,
    )))
}

/// Every dimension name a plan defines.
fn dim_names(plan: &GroupPlan, out: &mut Vec<String>) {
    out.extend(plan.dims.iter().map(|(n, _)| n.clone()));
    plan.groups.iter().for_each(|g| dim_names(g, out));
}

/// The netCDF file being written under a temporary name: closed and removed when dropped
/// before [`Created::finish`], or by SIGINT, SIGTERM and SIGHUP meanwhile.
struct Created {
    ncid: c_int,
    temp: PathBuf,
    target: String,
    open: bool,
    /// Removes the temporary file when a signal ends the process.
    #[cfg(unix)]
    interrupt: super::interrupt::Guard,
}

impl Created {
    /// Makes a new netCDF-4 file beside `target`.
    fn new(target: &str) -> Result<Created> {
        let path = Path::new(target);
        let file_name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| Error::InvalidArg(format!("{target:?} names no file")))?;
        let temp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
        let c_path = temp
            .to_str()
            .and_then(|p| CString::new(p).ok())
            .ok_or_else(|| Error::InvalidArg(format!("{target:?} is not a UTF-8 C string")))?;
        #[cfg(unix)]
        let interrupt = super::interrupt::Guard::new(&c_path);
        let mut ncid = 0;
        // SAFETY: a valid C string and a valid out pointer.
        let code = unsafe {
            ffi::nc_create(
                c_path.as_ptr(),
                ffi::NC_NETCDF4 | ffi::NC_NOCLOBBER,
                &mut ncid,
            )
        };
        if code != ffi::NC_NOERR {
            return Err(Error::Io(format!(
                "netCDF cannot create {}: {}",
                temp.display(),
                nc_message(code)
            )));
        }
        Ok(Created {
            ncid,
            temp,
            target: target.into(),
            open: true,
            #[cfg(unix)]
            interrupt,
        })
    }

    /// A netCDF status as a result naming the file and `what` was being done.
    fn check(&self, code: c_int, what: impl FnOnce() -> String) -> Result<()> {
        if code == ffi::NC_NOERR {
            return Ok(());
        }
        Err(Error::Io(format!(
            "netCDF {:?}: {}: {}",
            self.target,
            what(),
            nc_message(code)
        )))
    }

    /// Closes the file and renames it to the target.
    fn finish(mut self) -> Result<()> {
        self.open = false;
        // SAFETY: the id came from nc_create and is closed once.
        let code = unsafe { ffi::nc_close(self.ncid) };
        self.check(code, || "writing the file".into())?;
        std::fs::rename(&self.temp, &self.target).map_err(|e| {
            Error::io(
                format!("renaming {} to {:?}", self.temp.display(), self.target),
                e,
            )
        })?;
        self.temp = PathBuf::new();
        #[cfg(unix)]
        self.interrupt.release();
        Ok(())
    }
}

impl Drop for Created {
    fn drop(&mut self) {
        if self.open {
            // SAFETY: the id came from nc_create and is closed once.
            unsafe { ffi::nc_close(self.ncid) };
        }
        if !self.temp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes the attributes `attrs` of variable `varid` (or `NC_GLOBAL`) of group `ncid`.
fn put_attributes(
    file: &Created,
    ncid: c_int,
    varid: c_int,
    attrs: &[(String, Attr)],
    owner: &str,
) -> Result<()> {
    for (key, attr) in attrs {
        let what = || format!("attribute {key:?} of {owner}");
        let name = c_string(key, &what)?;
        let pointers: Vec<*const c_char>;
        let (xtype, len, data): (c_int, usize, *const c_void) = match attr {
            Attr::Text(text) => (ffi::NC_CHAR, text.len(), text.as_ptr().cast()),
            Attr::Strings(items) => {
                pointers = items.iter().map(|s| s.as_ptr()).collect();
                (ffi::NC_STRING, pointers.len(), pointers.as_ptr().cast())
            }
            Attr::Numbers(xtype, bytes) => (
                *xtype,
                bytes.len() / number_size(*xtype),
                bytes.as_ptr().cast(),
            ),
        };
        // SAFETY: a NUL-terminated name; `data` holds `len` values of `xtype` (string
        // pointers to NUL-terminated text for NC_STRING) and outlives the call.
        let code = unsafe { ffi::nc_put_att(ncid, varid, name.as_ptr(), xtype, len, data) };
        file.check(code, what)?;
    }
    Ok(())
}

/// A defined variable: its group, id and plan.
struct Defined<'a> {
    ncid: c_int,
    varid: c_int,
    path: String,
    plan: &'a VarPlan,
}

/// Defines the group `plan` as `ncid` (at `path`) and everything below it, collecting the
/// variables defined.
fn define<'a>(
    file: &Created,
    ncid: c_int,
    path: &str,
    plan: &'a GroupPlan,
    settings: &Settings,
    dimids: &mut Vec<Vec<(String, c_int)>>,
    defined: &mut Vec<Defined<'a>>,
) -> Result<()> {
    let shown = format!("group {}", display(path));
    put_attributes(file, ncid, ffi::NC_GLOBAL, &plan.attrs, &shown)?;
    let mut here = Vec::new();
    for (name, len) in &plan.dims {
        let what = || format!("dimension {name:?} of {shown}");
        let c_name = c_string(name, &what)?;
        let len = match settings.unlimited.contains(name) {
            true => ffi::NC_UNLIMITED,
            false => usize::try_from(*len).map_err(|_| Error::Overflow(what()))?,
        };
        let mut id = 0;
        // SAFETY: a NUL-terminated name and a valid out pointer.
        let code = unsafe { ffi::nc_def_dim(ncid, c_name.as_ptr(), len, &mut id) };
        file.check(code, what)?;
        here.push((name.clone(), id));
    }
    dimids.push(here);
    for var in &plan.vars {
        let var_path = join_key(path, &var.name);
        let shown = format!("variable {}", display(&var_path));
        let what = || shown.clone();
        let ids: Vec<c_int> = var
            .dims
            .iter()
            .map(|d| {
                dimids[d.depth]
                    .iter()
                    .find(|(n, _)| *n == d.name)
                    .map(|(_, id)| *id)
                    .ok_or_else(|| Error::Internal(format!("{shown}: dimension {}", d.name)))
            })
            .collect::<Result<_>>()?;
        let xtype = match var.ty {
            VarType::Number(t) => t,
            VarType::Char(_) => ffi::NC_CHAR,
            VarType::String => ffi::NC_STRING,
        };
        let name = c_string(&var.name, &what)?;
        let mut varid = 0;
        // SAFETY: a NUL-terminated name, `ids.len()` dimension ids, a valid out pointer.
        let code = unsafe {
            ffi::nc_def_var(
                ncid,
                name.as_ptr(),
                xtype,
                ids.len() as c_int,
                ids.as_ptr(),
                &mut varid,
            )
        };
        file.check(code, what)?;
        if let Some(chunks) = &var.chunks {
            // HDF5 refuses chunks of 4 GiB or more: netCDF then chooses.
            let item = match var.ty {
                VarType::Number(t) => number_size(t),
                _ => std::mem::size_of::<*const c_char>(),
            };
            let bytes = chunks
                .iter()
                .try_fold(item, |n, &c| n.checked_mul(c))
                .filter(|&b| b < u32::MAX as usize);
            if bytes.is_some() {
                // SAFETY: one chunk size per dimension of the variable.
                let code = unsafe {
                    ffi::nc_def_var_chunking(ncid, varid, ffi::NC_CHUNKED, chunks.as_ptr())
                };
                file.check(code, || format!("the chunks of {shown}"))?;
            }
            if settings.deflate > 0 && var.ty != VarType::String {
                // SAFETY: plain arguments.
                let code = unsafe {
                    ffi::nc_def_var_deflate(
                        ncid,
                        varid,
                        c_int::from(settings.shuffle),
                        1,
                        c_int::from(settings.deflate),
                    )
                };
                file.check(code, || format!("the compression of {shown}"))?;
            }
        }
        if let Some(fill) = &var.fill {
            // SAFETY: one item of the variable's type.
            let code = unsafe { ffi::nc_def_var_fill(ncid, varid, 0, fill.as_ptr().cast()) };
            file.check(code, || format!("the _FillValue of {shown}"))?;
        }
        put_attributes(file, ncid, varid, &var.attrs, &shown)?;
        defined.push(Defined {
            ncid,
            varid,
            path: var_path,
            plan: var,
        });
    }
    for group in &plan.groups {
        let what = || format!("group {}", display(&join_key(path, &group.name)));
        let name = c_string(&group.name, &what)?;
        let mut id = 0;
        // SAFETY: a NUL-terminated name and a valid out pointer.
        let code = unsafe { ffi::nc_def_grp(ncid, name.as_ptr(), &mut id) };
        file.check(code, what)?;
        define(
            file,
            id,
            &join_key(path, &group.name),
            group,
            settings,
            dimids,
            defined,
        )?;
    }
    dimids.pop();
    Ok(())
}

/// The chunks of a grid of `grid` chunks per dimension, in C order, one at a time.
fn every_chunk(grid: &[u64]) -> impl Iterator<Item = Vec<u64>> + '_ {
    let mut next = (!grid.contains(&0)).then(|| vec![0; grid.len()]);
    std::iter::from_fn(move || {
        let index = next.take()?;
        let mut after = index.clone();
        for d in (0..grid.len()).rev() {
            after[d] += 1;
            if after[d] < grid[d] {
                next = Some(after);
                break;
            }
            after[d] = 0;
        }
        Some(index)
    })
}

/// Copies a variable's values, chunk by chunk of its array's grid: the stored chunks, and
/// the others too when netCDF would not read them as the array's fill value. With
/// `unlimited` (the variable has an unlimited dimension), its last element is written
/// when no stored chunk holds it, so that the dimension has its length.
fn copy_values(file: &Created, var: &Defined, unlimited: bool) -> Result<()> {
    let array = &var.plan.array;
    let meta = array.metadata();
    let grid = meta.chunk_grid();
    let shown = display(&var.path);
    let (total, cells): (u64, Box<dyn Iterator<Item = Vec<u64>>>) = match &var.plan.written {
        Some(stored) => (stored.len() as u64, Box::new(stored.iter().cloned())),
        None => (
            grid.iter().fold(1u64, |n, &g| n.saturating_mul(g)),
            Box::new(every_chunk(&grid)),
        ),
    };
    let bar = Progress::new(total, unit_of(&meta), &shown);
    for index in cells {
        let (start, count) = array.chunk_region(&index)?;
        put_region(file, var, &start, &count)?;
        bar.inc(1, region_bytes(&count, meta.item_size()));
    }
    bar.finish();
    if let (true, Some(stored)) = (unlimited, &var.plan.written) {
        let last: Vec<u64> = grid.iter().map(|g| g.saturating_sub(1)).collect();
        if !grid.contains(&0) && stored.binary_search(&last).is_err() {
            // Its fill value, as the array reads it: also what netCDF fills the rest with.
            let start: Vec<u64> = meta.shape.iter().map(|&n| n - 1).collect();
            put_region(file, var, &start, &vec![1; start.len()])?;
        }
    }
    Ok(())
}

/// Writes the region `start`/`count` of a variable's array (as the array reads it) to the
/// variable.
fn put_region(file: &Created, var: &Defined, start: &[u64], count: &[u64]) -> Result<()> {
    let array = &var.plan.array;
    let meta = array.metadata();
    let shown = display(&var.path);
    let what = format!("a chunk of {shown}");
    let n = count_of(count, &what)?;
    let mut nc_start: Vec<usize> = start.iter().map(|&s| s as usize).collect();
    let mut nc_count: Vec<usize> = count.iter().map(|&c| c as usize).collect();
    if let VarType::Char(width) = var.plan.ty {
        nc_start.push(0);
        nc_count.push(width);
    }
    // A scalar's start and count are not read, but must point somewhere.
    if nc_start.is_empty() {
        nc_start.push(0);
        nc_count.push(1);
    }
    let put = |data: *const c_void| {
        // SAFETY: start and count have one entry per netCDF dimension (or one for a
        // scalar), and `data` holds the region's items.
        let code = unsafe {
            ffi::nc_put_vara(
                var.ncid,
                var.varid,
                nc_start.as_ptr(),
                nc_count.as_ptr(),
                data,
            )
        };
        file.check(code, || format!("writing {shown}"))
    };
    match var.plan.ty {
        VarType::String => {
            let items = array.read_vlen(start, count, Order::C)?;
            let mut texts = Vec::with_capacity(n);
            for w in items.offsets.windows(2) {
                let bytes = &items.data[w[0] as usize..w[1] as usize];
                let text = CString::new(bytes).map_err(|_| {
                    Error::InvalidArg(format!(
                        "{shown}: a string holds a NUL, which netCDF strings cannot"
                    ))
                })?;
                texts.push(text);
            }
            let pointers: Vec<*const c_char> = texts.iter().map(|t| t.as_ptr()).collect();
            put(pointers.as_ptr().cast())
        }
        _ => {
            let bytes = n
                .checked_mul(meta.item_size())
                .ok_or_else(|| Error::Overflow(format!("{what} has more bytes than memory")))?;
            let mut buf = try_zeroed(bytes, &what)?;
            if n > 0 && bytes > 0 {
                array.read(start, count, meta.dtype.element_type(), Order::C, &mut buf)?;
                put(buf.as_ptr().cast())?;
            }
            Ok(())
        }
    }
}

/// Exports the node of `node` (a group and everything below it, or one array) as the
/// netCDF-4 file `output` (see the module's text).
pub fn export(node: &NodeArg, output: &str, settings: &Settings) -> Result<u8> {
    let source = open_hierarchy(&node.store)?;
    let store = &source.store;
    crate::overlap::refuse_export_over_source(output, store, &node.path)?;
    if !settings.overwrite && Path::new(output).exists() {
        return Err(Error::Exists(format!(
            "{output:?} exists: give --overwrite to replace it"
        )));
    }
    let path = node.path.trim_matches('/');
    let mut scopes: Scopes = Vec::new();
    // The plan, and the path the file's root group stands for (an array's group).
    let (plan, root) = match node_kind(store.as_ref(), path)? {
        NodeKind::Group => (plan_group(&source, path, "", &mut scopes)?, path),
        NodeKind::Array => {
            scopes.push(Vec::new());
            let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
            let var = plan_var(&source, path, name, &mut scopes)?;
            let plan = GroupPlan {
                name: String::new(),
                attrs: Vec::new(),
                dims: scopes.pop().unwrap_or_default(),
                vars: vec![var],
                groups: Vec::new(),
            };
            (plan, parent)
        }
        NodeKind::None => {
            return Err(Error::NotFound(format!(
                "no array or group at {}",
                display(path)
            )))
        }
    };
    let mut names = Vec::new();
    dim_names(&plan, &mut names);
    if let Some(missing) = settings.unlimited.iter().find(|u| !names.contains(u)) {
        return Err(Error::InvalidArg(format!(
            "--unlimited {missing}: no exported array has a dimension of that name"
        )));
    }
    refuse_too_much_fill(&plan, settings.max_fill)?;
    let file = Created::new(output)?;
    let mut defined = Vec::new();
    define(
        &file,
        file.ncid,
        root,
        &plan,
        settings,
        &mut Vec::new(),
        &mut defined,
    )?;
    // SAFETY: an open file's id.
    let code = unsafe { ffi::nc_enddef(file.ncid) };
    file.check(code, || "ending its definitions".into())?;
    for var in &defined {
        let unlimited = var
            .plan
            .dims
            .iter()
            .any(|d| settings.unlimited.contains(&d.name));
        copy_values(&file, var, unlimited)?;
    }
    file.finish()?;
    Ok(0)
}
