//! `zarrtool import`: a raw binary file (with --dtype and --shape), or a netCDF or HDF5
//! file, into a store.

use crate::cli::{FileOrder, Layout, NodeArg};
use crate::describe::display;
use crate::layout::apply_layout;
use crate::progress::{region_bytes, unit_of, Progress};
use crate::raw::{chunks_touched, file_slabs, reorder, to_native};
use crate::target::planned_array;
use crate::values::{parse_shape, shape_text};
use std::io::Read;
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{node_kind, ArrayBuilder, Mode, NodeKind};
use zarr::store::Store;
use zarr::{Error, Result};

/// Imports `file` as the node at `node`: a raw binary file with `dtype` and `shape` (and
/// `order`), else a netCDF or HDF5 file (see [`crate::cli::Command::Import`]).
#[allow(clippy::too_many_arguments)]
pub fn run(
    file: &str,
    node: &NodeArg,
    dtype: Option<&str>,
    shape: Option<&str>,
    order: Option<FileOrder>,
    overwrite: bool,
    dry_run: bool,
    layout: &Layout,
) -> Result<u8> {
    match (dtype, shape) {
        (Some(dtype), Some(shape)) => {
            let file_layout = RawFile {
                dtype,
                shape,
                order: order.unwrap_or(FileOrder::C),
            };
            raw(file, node, &file_layout, overwrite, dry_run, layout)
        }
        // clap requires --dtype and --shape together (and --order only with them).
        _ => netcdf(file, node, overwrite, dry_run, layout),
    }
}

/// The first bytes of the files the netCDF library reads, and what they are.
fn netcdf_kind(file: &str) -> Result<Option<&'static str>> {
    if file == "-" {
        return Ok(None);
    }
    let mut head = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(8).read_to_end(&mut head))
        .map_err(|e| Error::io(format!("reading {file:?}"), e))?;
    Ok(match head.as_slice() {
        [b'C', b'D', b'F', 1, ..] => Some("netCDF-3 classic"),
        [b'C', b'D', b'F', 2, ..] => Some("netCDF-3 64-bit offset"),
        [b'C', b'D', b'F', 5, ..] => Some("netCDF-3 CDF-5"),
        b"\x89HDF\r\n\x1a\n" => Some("netCDF-4/HDF5"),
        _ => None,
    })
}

/// `import` without --dtype and --shape: a netCDF or HDF5 file.
fn netcdf(
    file: &str,
    node: &NodeArg,
    overwrite: bool,
    dry_run: bool,
    layout: &Layout,
) -> Result<u8> {
    let Some(kind) = netcdf_kind(file)? else {
        return Err(Error::InvalidArg(format!(
            "{file:?} is not a netCDF or HDF5 file: a raw binary file needs --dtype and --shape"
        )));
    };
    #[cfg(feature = "netcdf")]
    {
        let _ = kind;
        crate::overlap::refuse_import_over_file(file, &node.store, &node.path)?;
        crate::netcdf::import(file, node, overwrite, dry_run, layout)
    }
    #[cfg(not(feature = "netcdf"))]
    {
        let _ = (node, overwrite, dry_run, layout);
        Err(Error::Unsupported(format!(
            "{file:?} is a {kind} file, and this build of zarrtool has no netCDF support \
             (it needs the system netCDF library: cargo feature netcdf, CMake option \
             ZARR_NETCDF)"
        )))
    }
}

/// How `import` reads a raw binary file.
struct RawFile<'a> {
    /// The file's element type with its byte order.
    dtype: &'a str,
    /// The shape, comma-separated.
    shape: &'a str,
    /// The file's element order.
    order: FileOrder,
}

/// Imports the raw file `file` (`-`: standard input) as the array at `node`.
fn raw(
    file: &str,
    node: &NodeArg,
    raw: &RawFile,
    overwrite: bool,
    dry_run: bool,
    layout: &Layout,
) -> Result<u8> {
    if file != "-" {
        crate::overlap::refuse_import_over_file(file, &node.store, &node.path)?;
    }
    let shape = parse_shape(raw.shape, "--shape")?;
    let mut builder = ArrayBuilder::new(shape.clone(), ElementType::Raw);
    builder.dtype_name(raw.dtype)?;
    apply_layout(&mut builder, layout, &shape)?;
    let dtype_meta = builder.metadata()?;
    if dtype_meta.dtype.is_variable() {
        return Err(Error::Unsupported(format!(
            "importing variable-length items ({}) from a raw file",
            raw.dtype
        )));
    }
    let item = dtype_meta.item_size();
    let expected = zarr::error::checked_product(shape.iter().copied(), "the shape")?
        .checked_mul(item as u64)
        .ok_or_else(|| Error::Overflow(format!("shape {} is too large", shape_text(&shape))))?;
    let wrong_size = |held: u64| {
        Error::BufferSize(format!(
            "{file:?} holds {held} bytes but shape {} of {} needs {expected}",
            shape_text(&shape),
            raw.dtype
        ))
    };
    let reading = |e| Error::io(format!("reading {file:?}"), e);
    // A file is read slab by slab after its length is checked; standard input has no length
    // to check first, so it is read whole before anything is written: at most one byte more
    // than the shape needs (to tell a longer stream), into a buffer reserved up front.
    let mut input: Box<dyn Read> = if file == "-" {
        let mut data = Vec::new();
        let len = zarr::error::to_usize(expected, "the size of standard input")?;
        data.try_reserve_exact(len)
            .map_err(|_| zarr::error::no_memory(len, "standard input"))?;
        std::io::stdin()
            .take(expected.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(reading)?;
        let held = data.len() as u64;
        if held > expected {
            return Err(Error::BufferSize(format!(
                "standard input holds more than the {expected} bytes shape {} of {} needs",
                shape_text(&shape),
                raw.dtype
            )));
        }
        if held < expected {
            return Err(wrong_size(held));
        }
        Box::new(std::io::Cursor::new(data))
    } else {
        let f = std::fs::File::open(file).map_err(reading)?;
        let held = f.metadata().map_err(reading)?.len();
        if held != expected {
            return Err(wrong_size(held));
        }
        Box::new(f)
    };
    let new_store = zarr::store::local_path(&node.store)?
        .map(std::path::PathBuf::from)
        .filter(|p| !p.exists());
    let Some((store, meta)) = planned_array(&mut builder, node, layout, overwrite, dry_run)? else {
        return Ok(0);
    };
    let made = Made::before(store.as_ref(), &node.path, new_store)?;
    let mode = if overwrite {
        Mode::Overwrite
    } else {
        Mode::CreateNew
    };
    let array = builder.create(store.clone(), &node.path, mode)?;
    let fortran = raw.order == FileOrder::F;
    let elem = meta.dtype.element_type();
    let bar = Progress::new(meta.num_chunks(), unit_of(&meta), &display(&node.path));
    let mut buf = Vec::new();
    let mut fill = || -> Result<()> {
        for (start, count) in file_slabs(&meta.chunks, &shape, fortran) {
            // At most one row of chunks: the slab is within the shape, whose bytes fit in u64.
            let len = usize::try_from(region_bytes(&count, item))
                .map_err(|_| Error::Overflow("a row of chunks is larger than memory".into()))?;
            buf.resize(len, 0);
            input.read_exact(&mut buf).map_err(reading)?;
            to_native(&meta.dtype, &mut buf);
            let slab = match fortran {
                true => reorder(&buf, &count, item, true),
                false => std::mem::take(&mut buf),
            };
            array.write(&start, &count, elem, Order::C, &slab)?;
            if !fortran {
                buf = slab;
            }
            bar.inc(chunks_touched(&meta.chunks, &start, &count), len as u64);
        }
        bar.finish();
        crate::refresh::consolidated_above(store.as_ref(), &node.path)
    };
    if let Err(error) = fill() {
        drop(array);
        return Err(made.undo(store, &node.path, overwrite, error));
    }
    store.close()?;
    Ok(0)
}

/// What an import is about to create, to take back when it fails midway: the groups above
/// the array that do not exist yet, and the store's directory when there is none yet.
struct Made {
    groups: Vec<String>,
    store_dir: Option<std::path::PathBuf>,
}

impl Made {
    /// Notes what is missing above `path` in `store` (`store_dir`: a directory the store
    /// was just created in).
    fn before(
        store: &dyn Store,
        path: &str,
        store_dir: Option<std::path::PathBuf>,
    ) -> Result<Made> {
        let mut groups = Vec::new();
        let mut prefix = String::new();
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        for segment in segments.iter().take(segments.len().saturating_sub(1)) {
            prefix = zarr::store::join_key(&prefix, segment);
            if node_kind(store, &prefix)? == NodeKind::None {
                groups.push(prefix.clone());
            }
        }
        Ok(Made { groups, store_dir })
    }

    /// Removes the partly written array at `path`, the groups and the store directory the
    /// import created, and returns `error` saying what is left.
    fn undo(self, store: Arc<dyn Store>, path: &str, overwrite: bool, error: Error) -> Error {
        let shown = display(path);
        let mut cleaned = zarr::node::erase_node(store.as_ref(), path);
        for group in self.groups.iter().rev() {
            cleaned = cleaned.and_then(|()| zarr::node::erase_node(store.as_ref(), group));
        }
        cleaned = cleaned.and_then(|()| crate::refresh::consolidated_above(store.as_ref(), path));
        drop(store);
        if let (Ok(()), Some(dir)) = (&cleaned, &self.store_dir) {
            cleaned = std::fs::remove_dir_all(dir)
                .map_err(|e| Error::io(format!("removing {}", dir.display()), e));
        }
        let left = match (cleaned, overwrite) {
            (Ok(()), false) => "nothing of it was kept".to_string(),
            (Ok(()), true) => format!("the array {shown} it replaced is gone (--overwrite)"),
            (Err(e), _) => format!("the partly written array {shown} could not be removed: {e}"),
        };
        error.map_message(|message| format!("{message}; the import failed midway: {left}"))
    }
}
