//! `zarrtool virtualize`: kerchunk references (JSON, version 1, Zarr v2 metadata) to the
//! values of netCDF-3 and netCDF-4/HDF5 files where they lie, so that the files read as one
//! Zarr hierarchy without being copied.
//!
//! The groups, arrays, attributes, dimension names and fill values are planned exactly as
//! `import` plans them (the same walk through the netCDF library), with three differences
//! that make the stored bytes readable as they are: the chunk shape is the file's own (a
//! classic variable whole, or one record of a record variable; an HDF5 dataset's chunks),
//! the item type keeps the file's byte order, and HDF5's filters become numcodecs codecs in
//! the order HDF5 applied them. The chunk positions come from the classic header (checked,
//! `classic`) or from HDF5's chunk index (`hdf5`). Files given together are concatenated
//! along `--concat DIM`, each file's references continuing the grid of the one before.

use super::hdf5::{H5File, Piece, Storage};
use super::{walk, File, GroupPlan, Kind, Settings, Var};
use crate::describe::display;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarr::dtype::{ByteOrder, ElementType};
use zarr::meta::{ArrayMeta, Format, Order};
use zarr::node::{Array, Group, Mode, DIMENSIONS_KEY};
use zarr::store::{join_key, MemoryStore, Store};
use zarr::{Error, Result};

/// Where a file's variables are stored, for the plan of each variable.
pub(super) enum Source {
    /// A classic file: its header's layout (`File::classic`).
    Classic,
    /// A netCDF-4/HDF5 file, open through HDF5.
    Hdf5(H5File),
}

/// A variable's storage in Zarr's terms: its chunk shape, byte order and codecs, and the
/// chunks the file holds (grid index over the array's dimensions, offset, length).
pub(super) struct Stored {
    pub chunks: Vec<u64>,
    pub order: ByteOrder,
    pub filters: Vec<Value>,
    pub pieces: Vec<Piece>,
    /// Whether every chunk of the grid is stored.
    pub complete: bool,
}

impl Stored {
    /// The filter list and compressor of a Zarr v2 array that decode these chunks: the last
    /// codec HDF5 applied is the compressor.
    pub fn codecs(&self) -> (Value, Value) {
        match self.filters.split_last() {
            None => (Value::Null, Value::Null),
            Some((last, [])) => (Value::Null, last.clone()),
            Some((last, rest)) => (Value::from(rest.to_vec()), last.clone()),
        }
    }
}

/// The storage of the variable `name` of `group` in `f`, of netCDF shape `nc_shape` and
/// `kind`, in Zarr's terms (a char variable's last dimension is its strings' length).
pub(super) fn stored(
    f: &File,
    source: &Source,
    group: &str,
    name: &str,
    nc_shape: &[u64],
    kind: Kind,
    shown: &str,
) -> Result<Stored> {
    let item = match kind {
        Kind::Number(size) => size,
        Kind::Char(_) => 1,
        Kind::String => {
            return Err(Error::Unsupported(format!(
                "{:?}: {shown} holds variable-length strings, which HDF5 keeps in its heap \
                 rather than in the chunks: they cannot be referenced",
                f.name
            )))
        }
    };
    let storage = match source {
        Source::Classic => classic_storage(f, name, nc_shape, item)?,
        Source::Hdf5(h5) => h5.storage(group, name, nc_shape, item, shown)?,
    };
    let mut chunks = storage.chunks;
    let mut pieces = storage.pieces;
    if let Kind::Char(_) = kind {
        // Zarr's items are whole strings: a chunk must hold each string whole.
        let (Some(&last), Some(&len)) = (chunks.last(), nc_shape.last()) else {
            return Err(Error::Internal(format!(
                "{shown}: a char variable of rank 0"
            )));
        };
        if last < len {
            return Err(Error::Unsupported(format!(
                "{:?}: {shown} cannot be referenced: its chunks split its strings ({last} of \
                 {len} chars), and a Zarr item holds a whole string",
                f.name
            )));
        }
        chunks.pop();
        for piece in &mut pieces {
            piece.0.pop();
        }
    }
    let complete = pieces.len() as u64 == storage.grid_chunks;
    Ok(Stored {
        chunks,
        order: storage.order,
        filters: storage.filters,
        pieces,
        complete,
    })
}

/// The storage of a classic file's variable `name`: one chunk of the whole variable, or
/// one per record of a record variable, big-endian and uncompressed.
fn classic_storage(f: &File, name: &str, nc_shape: &[u64], item: usize) -> Result<Storage> {
    let layout = f
        .classic
        .as_ref()
        .ok_or_else(|| Error::Internal("a classic file without its layout".into()))?;
    let placed = layout.vars.iter().find(|v| v.name == name).ok_or_else(|| {
        Error::Internal(format!("{:?}: variable {name:?} not in the header", f.name))
    })?;
    let order = match item {
        1 => ByteOrder::NotApplicable,
        _ => ByteOrder::Big,
    };
    let rank = nc_shape.len();
    let mut chunks: Vec<u64> = nc_shape.iter().map(|&d| d.max(1)).collect();
    let mut pieces = Vec::new();
    let grid_chunks;
    if placed.record {
        chunks[0] = 1;
        grid_chunks = layout.numrecs;
        if placed.bytes > 0 {
            // The header check proved every record within the file.
            for r in 0..layout.numrecs {
                let mut index = vec![0; rank];
                index[0] = r;
                pieces.push((index, placed.begin + r * layout.recsize, placed.bytes));
            }
        }
    } else {
        grid_chunks = 1;
        if placed.bytes > 0 {
            pieces.push((vec![0; rank], placed.begin, placed.bytes));
        }
    }
    Ok(Storage {
        chunks,
        order,
        filters: Vec::new(),
        pieces,
        grid_chunks: if placed.bytes > 0 { grid_chunks } else { 0 },
    })
}

/// One file's plan: its documents (in a memory store, as `import` would write them) and its
/// variables with their stored chunks.
struct FilePlan {
    /// The file as named on the command line.
    name: String,
    /// Its absolute path: what the references name.
    target: String,
    docs: Arc<dyn Store>,
    vars: Vec<Var>,
}

/// Plans the references of `path`.
fn plan(path: &str) -> Result<FilePlan> {
    let f = File::open(path)?;
    let real =
        std::fs::canonicalize(path).map_err(|e| Error::io(format!("reading {path:?}"), e))?;
    let target = real
        .to_str()
        .ok_or_else(|| Error::InvalidArg(format!("{real:?} is not UTF-8")))?
        .to_string();
    let source = match f.classic {
        Some(_) => Source::Classic,
        None => Source::Hdf5(H5File::open(&target, path, f.size)?),
    };
    let settings = Settings {
        chunks: None,
        shards: None,
        compressor: None,
        format: Format::V2,
        source: Some(&source),
    };
    let mut groups: Vec<GroupPlan> = Vec::new();
    let mut vars = Vec::new();
    walk(&f, f.ncid, "", &settings, &mut groups, &mut vars)?;
    let docs: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for g in &groups {
        Group::open_with(docs.clone(), &g.path, Mode::CreateNew, Format::V2, &g.attrs)?;
    }
    for var in &vars {
        Array::create(
            docs.clone(),
            &var.path,
            var.meta.clone(),
            &var.attrs,
            Mode::CreateNew,
            Format::V2,
        )?;
    }
    Ok(FilePlan {
        name: path.to_string(),
        target,
        docs,
        vars,
    })
}

/// A document of `store` as JSON.
fn doc(store: &dyn Store, key: &str) -> Result<Value> {
    let bytes = store
        .get(key)?
        .ok_or_else(|| Error::Internal(format!("no document {key:?}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::Internal(format!("document {key:?} is not JSON: {e}")))
}

/// The axis of dimension `dim` in an array's attributes, if it has it.
fn axis_of(attrs: &Map<String, Value>, dim: &str) -> Option<usize> {
    attrs
        .get(DIMENSIONS_KEY)?
        .as_array()?
        .iter()
        .position(|d| d.as_str() == Some(dim))
}

/// The references: every document inline, every stored chunk as `[path, offset, length]`.
type Refs = Map<String, Value>;

/// Adds `plan`'s documents to `refs`.
fn add_docs(refs: &mut Refs, plan: &FilePlan) -> Result<()> {
    for key in plan.docs.list()? {
        let bytes = plan.docs.get(&key)?.unwrap_or_default();
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::Internal(format!("document {key:?} is not UTF-8")))?;
        refs.insert(key, Value::String(text));
    }
    Ok(())
}

/// Adds the chunks of `var` (read from `target`) to `refs`, its grid index along `axis`
/// moved on by `shift` chunks.
fn add_chunks(refs: &mut Refs, var: &Var, meta: &ArrayMeta, target: &str, shift: (usize, u64)) {
    let Some(stored) = &var.stored else { return };
    for (index, at, len) in &stored.pieces {
        let mut index = index.clone();
        if let Some(i) = index.get_mut(shift.0) {
            *i += shift.1;
        }
        let key = join_key(&var.path, &meta.chunk_key(&index));
        refs.insert(key, json!([target, at, len]));
    }
}

/// The most bytes of one variable that are copied into the reference file when its
/// files' chunks cannot continue one grid (a time coordinate chunked by 512 steps in files
/// of 31 days).
const MAX_INLINE_BYTES: u64 = 64 << 20;

/// The bytes `len` at `at` of `target` (a range the file was checked to hold).
fn piece_bytes(target: &str, at: u64, len: u64) -> Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let io = |e| Error::io(format!("reading {target:?}"), e);
    let n = zarr::error::to_usize(len, "a chunk")?;
    let mut buf = zarr::error::try_zeroed(n, "a chunk")?;
    std::fs::File::open(target)
        .and_then(|f| f.read_exact_at(&mut buf, at))
        .map_err(io)?;
    Ok(buf)
}

/// Whether `a` and `b` store the same bytes for a variable (compared chunk by chunk).
fn same_values(a: (&Stored, &str), b: (&Stored, &str)) -> Result<bool> {
    if a.0.pieces.len() != b.0.pieces.len() {
        return Ok(false);
    }
    for (pa, pb) in a.0.pieces.iter().zip(&b.0.pieces) {
        if pa.0 != pb.0 || pa.2 != pb.2 {
            return Ok(false);
        }
        if piece_bytes(a.1, pa.1, pa.2)? != piece_bytes(b.1, pb.1, pb.2)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The decoded values of `var` in `plan` (its stored chunks read and decoded as the
/// references would be), as items of its element type in native order, C order.
fn values(plan: &FilePlan, var: &Var) -> Result<Vec<u8>> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for doc in [".zarray", ".zattrs"] {
        let key = join_key(&var.path, doc);
        if let Some(bytes) = plan.docs.get(&key)? {
            store.set(&key, &bytes)?;
        }
    }
    if let Some(stored) = &var.stored {
        for (index, at, len) in &stored.pieces {
            let key = join_key(&var.path, &var.meta.chunk_key(index));
            store.set(&key, &piece_bytes(&plan.target, *at, *len)?)?;
        }
    }
    let array = Array::open(store, &var.path, Mode::Read)?;
    let bytes = zarr::error::checked_product(var.meta.shape.iter().copied(), "a shape")?
        .checked_mul(var.meta.dtype.item_size() as u64)
        .ok_or_else(|| Error::Overflow(format!("variable {} is too large", var.path)))?;
    let mut buf =
        zarr::error::try_zeroed(zarr::error::to_usize(bytes, "a variable")?, "a variable")?;
    let start = vec![0; var.meta.rank()];
    array.read(
        &start,
        &var.meta.shape,
        var.meta.dtype.element_type(),
        Order::C,
        &mut buf,
    )?;
    Ok(buf)
}

/// Adds `var` concatenated from every plan along `axis` to `refs` as one uncompressed
/// chunk written into the reference file (base64, items in native order converted to the
/// stored type by the library), for files whose chunks cannot continue
/// one grid. Refused above [`MAX_INLINE_BYTES`].
fn add_inline(
    refs: &mut Refs,
    plans: &[FilePlan],
    var: &Var,
    axis: usize,
    why: String,
) -> Result<()> {
    let mut shape = var.meta.shape.clone();
    shape[axis] = 0;
    let mut parts = Vec::new();
    for p in plans {
        let other = p
            .vars
            .iter()
            .find(|v| v.path == var.path)
            .ok_or_else(|| Error::Internal(format!("no variable {}", var.path)))?;
        shape[axis] += other.meta.shape[axis];
        parts.push((p, other));
    }
    let item = var.meta.dtype.item_size() as u64;
    let bytes = shape.iter().try_fold(item, |n, &d| n.checked_mul(d));
    if bytes.is_none_or(|b| b > MAX_INLINE_BYTES) {
        return Err(Error::Unsupported(format!(
            "{why}; its values ({} bytes) are too many to copy into the reference file (at              most {MAX_INLINE_BYTES})",
            bytes.map_or("more than 2^64".into(), |b| b.to_string())
        )));
    }
    // The rows before `axis` in C order: each file's block of them lands at its offset.
    let outer: u64 = shape[..axis].iter().product();
    let row = |len: u64| len * shape[axis + 1..].iter().product::<u64>() * item;
    let mut data = vec![0u8; bytes.unwrap_or(0) as usize];
    let mut offset = 0;
    for (p, other) in &parts {
        let values = values(p, other)?;
        let len = other.meta.shape[axis];
        for o in 0..outer {
            let from = (o * row(len)) as usize;
            let to = (o * row(shape[axis]) + row(offset)) as usize;
            data[to..to + row(len) as usize]
                .copy_from_slice(&values[from..from + row(len) as usize]);
        }
        offset += len;
    }
    let mut builder = zarr::node::ArrayBuilder::new(shape.clone(), ElementType::Raw);
    builder.dtype(var.meta.dtype.clone());
    builder.zarr_format(2)?;
    builder.chunks(shape.iter().map(|&d| d.max(1)).collect());
    builder.filters(Value::Null);
    builder.compressor(Value::Null);
    let zarray = doc(plans[0].docs.as_ref(), &join_key(&var.path, ".zarray"))?;
    builder.fill_value_json(zarray["fill_value"].clone());
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = builder.create(store.clone(), &var.path, Mode::CreateNew)?;
    let elem = var.meta.dtype.element_type();
    array.write(&vec![0; shape.len()], &shape, elem, Order::C, &data)?;
    use base64::Engine;
    for key in store.list()? {
        if key.ends_with(".zattrs") || key.ends_with(".zgroup") {
            continue;
        }
        let bytes = store.get(&key)?.unwrap_or_default();
        let value = match key.ends_with(".zarray") {
            true => String::from_utf8(bytes)
                .map_err(|_| Error::Internal(format!("document {key:?} is not UTF-8")))?,
            false => format!(
                "base64:{}",
                base64::engine::general_purpose::STANDARD.encode(bytes)
            ),
        };
        refs.insert(key, Value::String(value));
    }
    Ok(())
}

/// The references of `files`, concatenated along `concat` when given.
fn references(files: &[String], concat: Option<&str>) -> Result<Refs> {
    let plans = files.iter().map(|f| plan(f)).collect::<Result<Vec<_>>>()?;
    let first = &plans[0];
    if let Some(dim) = concat {
        if !first.vars.iter().any(|v| axis_of(&v.attrs, dim).is_some()) {
            return Err(Error::InvalidArg(format!(
                "no variable of {:?} has the dimension {dim:?} to concatenate along",
                first.name
            )));
        }
    }
    let mut refs = Refs::new();
    add_docs(&mut refs, first)?;
    for p in &plans[1..] {
        if p.vars.len() != first.vars.len() {
            return Err(Error::InvalidArg(format!(
                "{:?} has {} variables and {:?} {}: files concatenated hold the same variables",
                first.name,
                first.vars.len(),
                p.name,
                p.vars.len()
            )));
        }
    }
    for var in &first.vars {
        let attrs_key = join_key(&var.path, ".zattrs");
        let array_key = join_key(&var.path, ".zarray");
        let axis = concat.and_then(|dim| axis_of(&var.attrs, dim));
        let mut zarray = doc(first.docs.as_ref(), &array_key)?;
        let shown = format!("variable {}", display(&var.path));
        let mut others = Vec::new();
        for p in &plans {
            let other = p.vars.iter().find(|v| v.path == var.path).ok_or_else(|| {
                Error::InvalidArg(format!(
                    "{:?} has no {shown}, which {:?} has: files concatenated hold the same \
                     variables",
                    p.name, first.name
                ))
            })?;
            let differ = |what: &str| {
                Error::InvalidArg(format!(
                    "{:?} and {:?} differ in the {what} of {shown}{}",
                    first.name,
                    p.name,
                    match (axis, concat) {
                        (None, Some(dim)) => format!(
                            ", which has no dimension {dim:?} to concatenate along: such \
                             variables must be the same in every file"
                        ),
                        _ => String::new(),
                    }
                ))
            };
            if doc(first.docs.as_ref(), &attrs_key).ok() != doc(p.docs.as_ref(), &attrs_key).ok() {
                return Err(differ("attributes"));
            }
            let mut theirs = doc(p.docs.as_ref(), &array_key)?;
            if let Some(axis) = axis {
                theirs["shape"][axis] = zarray["shape"][axis].clone();
            }
            if theirs != zarray {
                return Err(differ("shape, type, chunks or codecs"));
            }
            if axis.is_none() && !std::ptr::eq(p, first) {
                let (mine, theirs) = (var.stored.as_ref(), other.stored.as_ref());
                if let (Some(a), Some(b)) = (mine, theirs) {
                    if !same_values((a, &first.target), (b, &p.target))? {
                        return Err(differ("values"));
                    }
                }
            }
            others.push((p, other));
        }
        let Some(axis) = axis else {
            add_chunks(&mut refs, var, &var.meta, &first.target, (0, 0));
            continue;
        };
        let chunk = var.meta.chunks[axis];
        let dim = concat.unwrap_or_default();
        let misaligned = others[..others.len() - 1]
            .iter()
            .find(|(_, v)| v.meta.shape[axis] % chunk != 0);
        if let Some((p, v)) = misaligned {
            let why = format!(
                "{shown}: {:?} holds {} steps of {dim:?}, not a whole number of its chunks \
                 of {chunk}, so the next file's chunks cannot continue the grid",
                p.name, v.meta.shape[axis]
            );
            add_inline(&mut refs, &plans, var, axis, why)?;
            continue;
        }
        let mut extent = 0u64;
        for (p, other) in &others {
            add_chunks(
                &mut refs,
                other,
                &var.meta,
                &p.target,
                (axis, extent / chunk),
            );
            extent += other.meta.shape[axis];
        }
        zarray["shape"][axis] = Value::from(extent);
        let text = String::from_utf8(zarr::meta::v2::to_pretty_json(&zarray))
            .map_err(|_| Error::Internal("a document that is not UTF-8".into()))?;
        refs.insert(array_key, Value::String(text));
    }
    Ok(refs)
}

/// `zarrtool virtualize FILES -o OUTPUT [--concat DIM] [--overwrite]`.
pub fn run(files: &[String], output: &str, concat: Option<&str>, overwrite: bool) -> Result<u8> {
    if files.len() > 1 && concat.is_none() {
        return Err(Error::InvalidArg(
            "several files need --concat DIM: the dimension they follow one another along".into(),
        ));
    }
    let out = Path::new(output);
    if out.exists() && !overwrite {
        return Err(Error::Exists(format!(
            "{output:?} exists (--overwrite replaces it)"
        )));
    }
    let refs = references(files, concat)?;
    let count = refs.values().filter(|v| v.is_array()).count();
    let text = serde_json::to_vec(&json!({"version": 1, "refs": refs}))
        .map_err(|e| Error::Internal(format!("writing the references: {e}")))?;
    write_replacing(out, &text)?;
    eprintln!(
        "wrote {output:?}: {count} chunk references into {} file{}",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    let dir = std::fs::canonicalize(
        out.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
    .map_err(|e| Error::io(format!("reading the directory of {output:?}"), e))?;
    let outside: Vec<PathBuf> = files
        .iter()
        .filter_map(|f| std::fs::canonicalize(f).ok())
        .filter(|f| !f.starts_with(&dir))
        .collect();
    if let Some(f) = outside.first() {
        eprintln!(
            "zarrtool: {} of the files (such as {:?}) lie outside {:?}, where references may \
             point by default: write the reference file beside them, or open it with the \
             store option {{\"allowed_targets\": [\"{}\"]}}",
            outside.len(),
            f,
            dir,
            f.parent().unwrap_or(Path::new("/")).display()
        );
    }
    Ok(0)
}

/// Writes `bytes` to `path` under a temporary name first, then renames it over `path`.
fn write_replacing(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let name = path
        .file_name()
        .ok_or_else(|| Error::InvalidArg(format!("{path:?} names no file")))?;
    let temp = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let io = |e| Error::io(format!("writing {}", path.display()), e);
    let written = std::fs::File::create(&temp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&temp, path)) {
        let _ = std::fs::remove_file(&temp);
        return Err(io(e));
    }
    Ok(())
}
