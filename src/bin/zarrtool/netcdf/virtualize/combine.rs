//! The hierarchy the references of one or many files make: each file planned (`plan`), the
//! files checked to agree, and their chunks joined along the concatenation dimension.

use super::super::hdf5::H5File;
use super::super::{walk, File, GroupPlan, Settings, Var};
use super::{Source, Stored};
use crate::describe::display;
use serde_json::{Map, Value};
use std::sync::Arc;
use zarr::meta::{ArrayMeta, Format, Order};
use zarr::node::{Array, Group, Mode, DIMENSIONS_KEY};
use zarr::store::{join_key, MemoryStore, Store};
use zarr::{Error, Result};

/// The most bytes of one variable that are copied rather than referenced when its files'
/// chunks cannot continue one grid (a time coordinate chunked by 512 steps in files of 31
/// days).
const MAX_COPIED_BYTES: u64 = 64 << 20;

/// One chunk stored in a file: its grid index, the file's absolute path, offset, length.
pub type Reference = (Vec<u64>, Arc<str>, u64, u64);

/// Where an array's values come from.
pub enum Values {
    /// Chunks stored in the files.
    Referenced(Vec<Reference>),
    /// The whole array's items (native byte order, C order), copied from the files.
    Copied(Vec<u8>),
}

/// An array of the hierarchy: its metadata (its shape the files' together), attributes and
/// values.
pub struct VirtualArray {
    pub path: String,
    pub meta: ArrayMeta,
    pub attrs: Map<String, Value>,
    pub values: Values,
}

/// The hierarchy: the groups of the first file, and every variable's array.
pub struct Hierarchy {
    pub format: Format,
    /// The files' absolute paths, in the order given.
    pub targets: Vec<Arc<str>>,
    pub groups: Vec<GroupPlan>,
    pub arrays: Vec<VirtualArray>,
}

/// One file's plan: its documents (in a memory store, as `import` would write them) and its
/// variables with their stored chunks.
struct FilePlan {
    /// The file as named on the command line.
    name: String,
    /// Its absolute path: what the references name.
    target: Arc<str>,
    docs: Arc<dyn Store>,
    groups: Vec<GroupPlan>,
    vars: Vec<Var>,
}

/// Plans the references of `path` in `format`.
fn plan(path: &str, format: Format) -> Result<FilePlan> {
    let f = File::open(path)?;
    let real =
        std::fs::canonicalize(path).map_err(|e| Error::io(format!("reading {path:?}"), e))?;
    let target: Arc<str> = real
        .to_str()
        .ok_or_else(|| Error::InvalidArg(format!("{real:?} is not UTF-8")))?
        .into();
    let source = match f.classic {
        Some(_) => Source::Classic,
        None => Source::Hdf5(H5File::open(&target, path, f.size)?),
    };
    let settings = Settings {
        chunks: None,
        shards: None,
        compressor: None,
        format,
        source: Some(&source),
    };
    let mut groups: Vec<GroupPlan> = Vec::new();
    let mut vars = Vec::new();
    walk(&f, f.ncid, "", &settings, &mut groups, &mut vars)?;
    let docs: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for g in &groups {
        Group::open_with(docs.clone(), &g.path, Mode::CreateNew, format, &g.attrs)?;
    }
    for var in &vars {
        let meta = var.meta.clone();
        Array::create(
            docs.clone(),
            &var.path,
            meta,
            &var.attrs,
            Mode::CreateNew,
            format,
        )?;
    }
    Ok(FilePlan {
        name: path.to_string(),
        target,
        docs,
        groups,
        vars,
    })
}

/// The document of array `path` in `docs` without its attributes, and its attributes
/// (v2: `.zarray` and `.zattrs`; v3: `zarr.json`).
fn described(docs: &dyn Store, path: &str) -> Result<(Value, Value)> {
    let json = |key: &str| -> Result<Option<Value>> {
        let Some(bytes) = docs.get(&join_key(path, key))? else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::Internal(format!("document {key:?} is not JSON: {e}")))
    };
    if let Some(mut doc) = json("zarr.json")? {
        let attrs = doc
            .as_object_mut()
            .and_then(|d| d.shift_remove("attributes"))
            .unwrap_or_default();
        return Ok((doc, attrs));
    }
    let doc = json(".zarray")?.ok_or_else(|| Error::Internal(format!("no array {path}")))?;
    Ok((doc, json(".zattrs")?.unwrap_or_default()))
}

/// The axis of dimension `dim` of `var`, if it has it.
fn axis_of(var: &Var, dim: &str) -> Option<usize> {
    if let Some(names) = &var.meta.dimension_names {
        return names.iter().position(|n| n.as_deref() == Some(dim));
    }
    var.attrs
        .get(DIMENSIONS_KEY)?
        .as_array()?
        .iter()
        .position(|d| d.as_str() == Some(dim))
}

/// A file whose chunks are read, opened once.
struct Target<'a> {
    path: &'a str,
    file: std::fs::File,
}

impl<'a> Target<'a> {
    fn open(path: &'a str) -> Result<Self> {
        let file =
            std::fs::File::open(path).map_err(|e| Error::io(format!("reading {path:?}"), e))?;
        Ok(Target { path, file })
    }

    /// The bytes `len` at `at` (a range the file was checked to hold).
    fn piece(&self, at: u64, len: u64) -> Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let n = zarr::error::to_usize(len, "a chunk")?;
        let mut buf = zarr::error::try_zeroed(n, "a chunk")?;
        self.file
            .read_exact_at(&mut buf, at)
            .map_err(|e| Error::io(format!("reading {:?}", self.path), e))?;
        Ok(buf)
    }
}

/// Whether `a` and `b` store the same bytes for a variable (compared chunk by chunk).
fn same_values(a: (&Stored, &str), b: (&Stored, &str)) -> Result<bool> {
    if a.0.pieces.len() != b.0.pieces.len() {
        return Ok(false);
    }
    let (ta, tb) = (Target::open(a.1)?, Target::open(b.1)?);
    for (pa, pb) in a.0.pieces.iter().zip(&b.0.pieces) {
        if pa.0 != pb.0 || pa.2 != pb.2 || ta.piece(pa.1, pa.2)? != tb.piece(pb.1, pb.2)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The decoded values of `var` in `plan` (its stored chunks read and decoded as the
/// references would be), as items of its element type in native order, C order.
fn values(plan: &FilePlan, var: &Var) -> Result<Vec<u8>> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for doc in [".zarray", ".zattrs", "zarr.json"] {
        let key = join_key(&var.path, doc);
        if let Some(bytes) = plan.docs.get(&key)? {
            store.set(&key, &bytes)?;
        }
    }
    if let Some(stored) = &var.stored {
        let target = Target::open(&plan.target)?;
        for (index, at, len) in &stored.pieces {
            let key = join_key(&var.path, &var.meta.chunk_key(index));
            store.set(&key, &target.piece(*at, *len)?)?;
        }
    }
    let array = Array::open(store, &var.path, Mode::Read)?;
    let bytes = zarr::error::checked_product(var.meta.shape.iter().copied(), "a shape")?
        .checked_mul(var.meta.dtype.item_size() as u64)
        .ok_or_else(|| Error::Overflow(format!("variable {} is too large", var.path)))?;
    let mut buf =
        zarr::error::try_zeroed(zarr::error::to_usize(bytes, "a variable")?, "a variable")?;
    let start = vec![0; var.meta.rank()];
    let elem = var.meta.dtype.element_type();
    array.read(&start, &var.meta.shape, elem, Order::C, &mut buf)?;
    Ok(buf)
}

/// The values of `parts` (each file's variable) joined along `axis` into an array of
/// `shape`, for files whose chunks cannot continue one grid (`why`); refused above
/// [`MAX_COPIED_BYTES`].
fn joined(parts: &[(&FilePlan, &Var)], axis: usize, shape: &[u64], why: String) -> Result<Vec<u8>> {
    let item = parts[0].1.meta.dtype.item_size() as u64;
    let bytes = shape
        .iter()
        .try_fold(item, |n, &d| n.checked_mul(d))
        .filter(|&b| b <= MAX_COPIED_BYTES)
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "{why}; its values are too many to copy (at most {MAX_COPIED_BYTES} bytes)"
            ))
        })?;
    // Each file's block of rows lands at its offset along `axis` in every outer row.
    let outer: u64 = shape[..axis].iter().product();
    let row = |len: u64| len * shape[axis + 1..].iter().product::<u64>() * item;
    let mut data = zarr::error::try_zeroed(bytes as usize, "joined values")?;
    let mut offset = 0;
    for (plan, var) in parts {
        let values = values(plan, var)?;
        let len = var.meta.shape[axis];
        let n = row(len) as usize;
        for o in 0..outer {
            let from = (o * row(len)) as usize;
            let to = (o * row(shape[axis]) + row(offset)) as usize;
            data[to..to + n].copy_from_slice(&values[from..from + n]);
        }
        offset += len;
    }
    Ok(data)
}

/// The references of `var` (of the plan `target`), its grid index along `axis` moved on by
/// `shift` chunks.
fn references(var: &Var, target: &Arc<str>, axis: usize, shift: u64) -> Vec<Reference> {
    let Some(stored) = &var.stored else {
        return Vec::new();
    };
    stored
        .pieces
        .iter()
        .map(|(index, at, len)| {
            let mut index = index.clone();
            if let Some(i) = index.get_mut(axis) {
                *i += shift;
            }
            (index, target.clone(), *at, *len)
        })
        .collect()
}

/// The hierarchy of `files` in `format`, concatenated along `concat` when given.
pub fn combine(files: &[String], concat: Option<&str>, format: Format) -> Result<Hierarchy> {
    let plans = files
        .iter()
        .map(|f| plan(f, format))
        .collect::<Result<Vec<_>>>()?;
    let first = &plans[0];
    if let Some(dim) = concat {
        if !first.vars.iter().any(|v| axis_of(v, dim).is_some()) {
            return Err(Error::InvalidArg(format!(
                "no variable of {:?} has the dimension {dim:?} to concatenate along",
                first.name
            )));
        }
    }
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
    let mut arrays = Vec::new();
    for var in &first.vars {
        let axis = concat.and_then(|dim| axis_of(var, dim));
        let (mine, my_attrs) = described(first.docs.as_ref(), &var.path)?;
        let shown = format!("variable {}", display(&var.path));
        let mut parts = Vec::new();
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
            let (mut theirs, their_attrs) = described(p.docs.as_ref(), &var.path)?;
            if their_attrs != my_attrs {
                return Err(differ("attributes"));
            }
            if let Some(axis) = axis {
                theirs["shape"][axis] = mine["shape"][axis].clone();
            }
            if theirs != mine {
                return Err(differ("shape, type, chunks or codecs"));
            }
            if axis.is_none() && !std::ptr::eq(p, first) {
                if let (Some(a), Some(b)) = (&var.stored, &other.stored) {
                    if !same_values((a, &first.target), (b, &p.target))? {
                        return Err(differ("values"));
                    }
                }
            }
            parts.push((p, other));
        }
        let mut meta = var.meta.clone();
        let values = match axis {
            None => Values::Referenced(references(var, &first.target, 0, 0)),
            Some(axis) => {
                meta.shape[axis] = parts.iter().map(|(_, v)| v.meta.shape[axis]).sum();
                let chunk = var.meta.chunks[axis];
                let dim = concat.unwrap_or_default();
                let misaligned = parts[..parts.len() - 1]
                    .iter()
                    .find(|(_, v)| v.meta.shape[axis] % chunk != 0);
                match misaligned {
                    Some((p, v)) => {
                        let why = format!(
                            "{shown}: {:?} holds {} steps of {dim:?}, not a whole number of \
                             its chunks of {chunk}, so the next file's chunks cannot continue \
                             the grid",
                            p.name, v.meta.shape[axis]
                        );
                        Values::Copied(joined(&parts, axis, &meta.shape, why)?)
                    }
                    None => {
                        let mut all = Vec::new();
                        let mut extent = 0;
                        for (p, other) in &parts {
                            all.extend(references(other, &p.target, axis, extent / chunk));
                            extent += other.meta.shape[axis];
                        }
                        Values::Referenced(all)
                    }
                }
            }
        };
        arrays.push(VirtualArray {
            path: var.path.clone(),
            meta,
            attrs: var.attrs.clone(),
            values,
        });
    }
    let targets = plans.iter().map(|p| p.target.clone()).collect();
    let groups = plans
        .into_iter()
        .next()
        .map(|p| p.groups)
        .unwrap_or_default();
    Ok(Hierarchy {
        format,
        targets,
        groups,
        arrays,
    })
}
