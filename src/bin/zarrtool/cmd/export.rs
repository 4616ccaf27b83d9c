//! `zarrtool export`: an array (or a region) to a raw binary file, or a hierarchy to a
//! netCDF-4 file.

use crate::cli::{ExportFormat, FileOrder, NodeArg};
use crate::describe::display;
use crate::nodes::{open, read_region};
use crate::out::Out;
use crate::progress::{unit_of, Progress};
use crate::raw::{chunks_touched, reorder, slabs, to_native};
use crate::values::parse_region;
use std::io::Write;
use zarr::node::{Array, Mode, Node};
use zarr::{Error, Result};

/// Exports the node at `node` to `output`: a netCDF-4 file with `--format netcdf4` or a
/// name ending in `.nc`, else a raw file (see [`crate::cli::Command::Export`]).
#[allow(clippy::too_many_arguments)]
pub fn run(
    node: &NodeArg,
    output: &str,
    format: Option<ExportFormat>,
    region: Option<&str>,
    order: FileOrder,
    unlimited: Vec<String>,
    deflate: u8,
    no_shuffle: bool,
    overwrite: bool,
    max_fill: u64,
) -> Result<u8> {
    let netcdf = match format {
        Some(f) => f == ExportFormat::Netcdf4,
        None => output.to_ascii_lowercase().ends_with(".nc"),
    };
    if !netcdf {
        return raw(node, output, region, order);
    }
    if region.is_some() || order != FileOrder::C || output == "-" {
        return Err(Error::InvalidArg(
            "a netCDF export writes whole arrays to a file: --region, --order and \
             -o - are for raw files (--format raw)"
                .into(),
        ));
    }
    self::netcdf(
        node,
        output,
        unlimited,
        deflate,
        !no_shuffle,
        overwrite,
        max_fill,
    )
}

/// Where `export` writes: a file or standard output.
enum Sink {
    File(std::io::BufWriter<std::fs::File>, String),
    Stdout(Out),
}

impl Sink {
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        match self {
            Sink::File(f, name) => f
                .write_all(bytes)
                .map_err(|e| Error::io(format!("writing {name:?}"), e)),
            Sink::Stdout(out) => out.bytes(bytes),
        }
    }

    fn finish(self) -> Result<()> {
        match self {
            Sink::File(mut f, name) => f
                .flush()
                .map_err(|e| Error::io(format!("writing {name:?}"), e)),
            Sink::Stdout(out) => out.finish(),
        }
    }
}

/// Exports the array at `node` (or its `region`) to the raw file `output` (`-`: standard
/// output) in `order`.
fn raw(node: &NodeArg, output: &str, region: Option<&str>, order: FileOrder) -> Result<u8> {
    let store = open(&node.store, false)?;
    if output != "-" {
        crate::overlap::refuse_export_over_source(output, &store, &node.path)?;
    }
    let array = Array::open(store, &node.path, Mode::Read)?;
    let meta = array.metadata();
    if meta.dtype.is_variable() {
        return Err(Error::Unsupported(format!(
            "exporting variable-length items ({}) to a raw file: use dump",
            meta.dtype.to_v2()
        )));
    }
    let (start, count) = parse_region(region, &meta.shape)?;
    let mut sink = if output == "-" {
        Sink::Stdout(Out::new())
    } else {
        let file = std::fs::File::create(output)
            .map_err(|e| Error::io(format!("creating {output:?}"), e))?;
        Sink::File(std::io::BufWriter::new(file), output.to_string())
    };
    let bar = Progress::new(
        chunks_touched(&meta.chunks, &start, &count),
        unit_of(&meta),
        &display(array.path()),
    );
    // C order streams row by row of chunks; Fortran order needs the whole region first.
    let mut whole = Vec::new();
    for (s, c) in slabs(&meta.chunks, &start, &count) {
        let mut buf = read_region(&array, &s, &c)?;
        bar.inc(chunks_touched(&meta.chunks, &s, &c), buf.len() as u64);
        if order == FileOrder::F {
            whole.append(&mut buf);
            continue;
        }
        // The file holds the array's stored type, byte order included.
        to_native(&meta.dtype, &mut buf);
        sink.write(&buf)?;
    }
    if order == FileOrder::F {
        let mut buf = reorder(&whole, &count, meta.item_size(), false);
        to_native(&meta.dtype, &mut buf);
        sink.write(&buf)?;
    }
    bar.finish();
    sink.finish()?;
    Ok(0)
}

/// Exports the node as a netCDF-4 file (with the netcdf feature).
fn netcdf(
    node: &NodeArg,
    output: &str,
    unlimited: Vec<String>,
    deflate: u8,
    shuffle: bool,
    overwrite: bool,
    max_fill: u64,
) -> Result<u8> {
    #[cfg(feature = "netcdf")]
    {
        let settings = crate::netcdf::export::Settings {
            overwrite,
            unlimited,
            deflate,
            shuffle,
            max_fill,
        };
        crate::netcdf::export::export(node, output, &settings)
    }
    #[cfg(not(feature = "netcdf"))]
    {
        let _ = (node, unlimited, deflate, shuffle, overwrite, max_fill);
        Err(Error::Unsupported(format!(
            "{output:?}: this zarrtool writes no netCDF files (it needs the system netCDF \
             library: cargo feature netcdf, CMake option ZARR_NETCDF); give --format raw for \
             a raw file"
        )))
    }
}
