//! `zarrtool virtualize`: references to the values of netCDF-3 and netCDF-4/HDF5 files
//! where they lie, so that the files read as one Zarr hierarchy without being copied: a
//! kerchunk reference file (JSON, version 1, Zarr v2 metadata) or an Icechunk repository
//! whose chunks are virtual (Zarr v3).
//!
//! The groups, arrays, attributes, dimension names and fill values are planned exactly as
//! `import` plans them (the same walk through the netCDF library), with three differences
//! that make the stored bytes readable as they are: the chunk shape is the file's own (a
//! classic variable whole, or one record of a record variable; an HDF5 dataset's chunks),
//! the item type keeps the file's byte order, and HDF5's filters become numcodecs codecs in
//! the order HDF5 applied them. The chunk positions come from the classic header (checked,
//! `classic`) or from HDF5's chunk index (`hdf5`). Files given together are concatenated
//! along `--concat DIM` (`combine`), each file's references continuing the grid of the one
//! before; `output` writes the result.

mod combine;
mod output;

use super::hdf5::{H5File, Piece, Storage};
use super::{File, Kind};
use serde_json::Value;
use zarr::dtype::ByteOrder;
use zarr::meta::Format;
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
        if placed.bytes > 0 && grid_chunks > super::hdf5::MAX_CHUNKS {
            return Err(Error::Unsupported(format!(
                "{:?}: variable {name:?} has {grid_chunks} records, more than the {} chunks a \
                 reference file may list",
                f.name,
                super::hdf5::MAX_CHUNKS
            )));
        }
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

/// `zarrtool virtualize FILES -o OUTPUT [--concat DIM] [--overwrite]`: OUTPUT is a
/// reference file, or an Icechunk repository (`icechunk:///PATH`).
pub fn run(files: &[String], output: &str, concat: Option<&str>, overwrite: bool) -> Result<u8> {
    if files.len() > 1 && concat.is_none() {
        return Err(Error::InvalidArg(
            "several files need --concat DIM: the dimension they follow one another along".into(),
        ));
    }
    let icechunk = output.to_ascii_lowercase().starts_with("icechunk");
    if !icechunk && std::path::Path::new(output).exists() && !overwrite {
        return Err(Error::Exists(format!(
            "{output:?} exists (--overwrite replaces it)"
        )));
    }
    let format = match icechunk {
        true => Format::V3,
        false => Format::V2,
    };
    let hierarchy = combine::combine(files, concat, format)?;
    let (count, targets) = match icechunk {
        true => output::icechunk(&hierarchy, output, overwrite)?,
        false => output::reference_file(&hierarchy, output)?,
    };
    eprintln!(
        "wrote {output:?}: {count} chunk references into {targets} file{}",
        if targets == 1 { "" } else { "s" }
    );
    if !icechunk {
        output::name_files_outside(&hierarchy, output)?;
    }
    Ok(0)
}
