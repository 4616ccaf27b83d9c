//! What each subcommand does, on the library's API.

use crate::cli::{AttrsAction, Command, DumpFormat, ExportFormat, FileOrder, Layout, NodeArg};
use crate::nczarr;
use crate::out::{self, Out};
use crate::per_array::PerArray;
use crate::progress::{region_bytes, unit_of, Progress};
use crate::source::{open_hierarchy, Hierarchy};
use crate::values::{
    csv_field, element_csv, element_text, parse_region, parse_shape, shape_text, text_room,
    vlen_csv, vlen_text, ChunkSpec,
};
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use std::io::{Read, Write};
use std::sync::Arc;
use zarr::dtype::{swap_bytes, swap_record_fields, DType, DataKind, ElementType};
use zarr::meta::{ArrayMeta, ChunkGrid, Format, Order};
use zarr::node::{cf, node_kind, Array, ArrayBuilder, Group, Mode, Node, NodeKind};
use zarr::store::{get_document, join_key, mask_urls, node_prefix, open_url, Store};
use zarr::{Error, Result};

/// What `info` says of sizes and counts that need a listing the store cannot give.
const UNLISTED: &str = "unknown (the store cannot be listed)";

/// Exit status for differences or problems found.
const FOUND: u8 = 3;

/// The attribute in which Zarr v2 arrays keep their dimension names (xarray's convention).
pub(crate) const DIMENSIONS_KEY: &str = "_ARRAY_DIMENSIONS";

/// Runs one subcommand; returns the exit status.
pub fn run(mut command: Command, cmd: &mut clap::Command) -> Result<u8> {
    crate::locate::locate(&mut command)?;
    match command {
        Command::Info { node, json } => info(&node, json),
        Command::Ls { node, json } => ls(&node, json),
        Command::Tree { node } => tree(&node),
        Command::Header {
            node,
            json,
            special,
        } => crate::header::header(&node, json, special),
        Command::Meta { node, json } => meta(&node, json),
        Command::Attrs { action } => attrs(action),
        Command::Dump {
            node,
            region,
            format,
        } => dump(&node, region.as_deref(), format),
        Command::Create {
            node,
            group,
            shape,
            dtype,
            fill,
            dimension_names,
            attrs,
            overwrite,
            dry_run,
            layout,
        } => create(
            &node,
            group,
            shape.as_deref(),
            dtype.as_deref(),
            fill.as_deref(),
            dimension_names.as_deref(),
            attrs.as_deref(),
            overwrite,
            dry_run,
            &layout,
        ),
        Command::Import {
            file,
            node,
            dtype,
            shape,
            order,
            overwrite,
            dry_run,
            layout,
        } => match (dtype.as_deref(), shape.as_deref()) {
            (Some(dtype), Some(shape)) => {
                let raw = RawFile {
                    dtype,
                    shape,
                    order: order.unwrap_or(FileOrder::C),
                };
                import(&file, &node, &raw, overwrite, dry_run, &layout)
            }
            // clap requires --dtype and --shape together (and --order only with them).
            _ => import_netcdf(&file, &node, overwrite, dry_run, &layout),
        },
        Command::Export {
            node,
            output,
            format,
            region,
            order,
            unlimited,
            deflate,
            no_shuffle,
            overwrite,
            max_fill,
        } => {
            let netcdf = match format {
                Some(f) => f == ExportFormat::Netcdf4,
                None => output.to_ascii_lowercase().ends_with(".nc"),
            };
            if !netcdf {
                return export(&node, &output, region.as_deref(), order);
            }
            if region.is_some() || order != FileOrder::C || output == "-" {
                return Err(Error::InvalidArg(
                    "a netCDF export writes whole arrays to a file: --region, --order and \
                     -o - are for raw files (--format raw)"
                        .into(),
                ));
            }
            export_netcdf(
                &node,
                &output,
                unlimited,
                deflate,
                !no_shuffle,
                overwrite,
                max_fill,
            )
        }
        Command::Copy {
            source,
            target,
            from,
            to,
            rechunk,
            shards,
            compressor,
            format,
            overwrite,
            dry_run,
            json,
            commit,
        } => {
            let settings = CopySettings {
                chunks: PerArray::parse(&rechunk, "--rechunk", ChunkSpec::parse)?,
                shards: PerArray::parse(&shards, "--shards", parse_shape)?,
                compressor: compressor
                    .as_deref()
                    .map(|c| parse_json(c, "--compressor"))
                    .transpose()?,
                format: format.map(|f| Format::from_number(f.into())).transpose()?,
            };
            let run = CopyRun {
                overwrite,
                dry_run,
                json,
                commit,
            };
            copy((&source, &from), (&target, &to), &settings, run)
        }
        Command::Log { url, json } => crate::repo::log(&url, json),
        Command::Tag { url, name } => crate::repo::tag(&url, &name),
        Command::Branch { url, name } => crate::repo::branch(&url, &name),
        Command::Consolidate { node, dry_run } => consolidate(&node, dry_run),
        Command::Migrate { node, dry_run } => {
            let store = open(&node.store, !dry_run)?;
            let array = Array::open(store.clone(), &node.path, Mode::Read)?;
            if array.format() != Format::V1 {
                return Err(Error::InvalidArg(format!(
                    "{} is a Zarr v{} array, not v1",
                    display(&node.path),
                    array.format().number()
                )));
            }
            if dry_run {
                eprintln!("would migrate {} to Zarr v2", display(&node.path));
                return Ok(0);
            }
            zarr::node::migrate_1to2(store.as_ref(), &node.path)?;
            crate::refresh::consolidated_above(store.as_ref(), &node.path)?;
            store.close()?;
            Ok(0)
        }
        Command::Rm { node, dry_run } => rm(&node, dry_run),
        Command::Mv {
            store,
            from,
            to,
            dry_run,
        } => {
            let s = open(&store, !dry_run)?;
            if node_kind(s.as_ref(), &from)? == NodeKind::None {
                return Err(Error::NotFound(format!("no node at {}", display(&from))));
            }
            crate::overlap::refuse_move_over_source(&s, &from, &to)?;
            if dry_run {
                eprintln!("would move {} to {}", display(&from), display(&to));
                return Ok(0);
            }
            Group::open(s.clone(), "", Mode::ReadWrite)?.rename(&from, &to)?;
            crate::refresh::consolidated_above(s.as_ref(), &from)?;
            crate::refresh::consolidated_above(s.as_ref(), &to)?;
            s.close()?;
            Ok(0)
        }
        Command::Validate { node, json, repair } => validate(&node, json, repair),
        Command::Diff {
            left,
            right,
            left_path,
            right_path,
            attrs,
            json,
        } => diff((&left, &left_path), (&right, &right_path), attrs, json),
        Command::Version { features } => {
            let mut out = Out::new();
            out.line(format!("zarrtool {}", env!("CARGO_PKG_VERSION")))?;
            if features {
                for line in feature_lines() {
                    out.line(line)?;
                }
            }
            out.finish()?;
            Ok(0)
        }
        Command::Completions { shell } => {
            // Generated into memory: clap_complete panics on a failed write.
            let mut text = Vec::new();
            clap_complete::generate(shell, cmd, "zarrtool", &mut text);
            let mut out = Out::new();
            out.bytes(&text)?;
            out.finish()?;
            Ok(0)
        }
        Command::Man { dir: Some(dir) } => {
            crate::man::write_pages(cmd, &dir)?;
            Ok(0)
        }
        Command::Man { dir: None } => {
            let text =
                crate::man::main_page(cmd).map_err(|e| Error::io("rendering the man page", e))?;
            let mut out = Out::new();
            out.bytes(&text)?;
            out.finish()?;
            Ok(0)
        }
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
fn import_netcdf(
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

/// What this build supports, one line each.
/// Exports the node as a netCDF-4 file (with the netcdf feature).
fn export_netcdf(
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

fn feature_lines() -> Vec<String> {
    let cloud = if cfg!(feature = "cloud") {
        "s3:// gs:// az:// abfs:// http(s)://"
    } else {
        "none (built without the cloud feature)"
    };
    vec![
        "formats: v1 (read, migrate) v2 v3 2022-draft".into(),
        "stores: directory zip memory".into(),
        format!("object stores: {cloud}"),
        icechunk_line().into(),
        "codecs: blosc gzip zlib zstd bz2 lzma lz4 crc32c crc32 adler32 fletcher32 jenkins_lookup3 \
         shuffle base64 delta fixedscaleoffset quantize bitround packbits categorize astype transpose \
         sharding_indexed vlen-utf8 vlen-bytes vlen-array scale_offset cast_value reshape"
            .into(),
        format!(
            "lossy codecs: {}",
            match (cfg!(feature = "zfp"), cfg!(feature = "pcodec")) {
                (true, true) => "zfp zfpy pcodec",
                (true, false) => "zfp zfpy (built without pcodec)",
                (false, true) => "pcodec (built without zfp)",
                (false, false) => "none (built without zfp and pcodec)",
            }
        ),
        netcdf_line(),
        format!("threads: {}", zarr::io::pool::num_threads()),
    ]
}

/// Whether `icechunk:///PATH` URLs and the repository commands work.
fn icechunk_line() -> &'static str {
    if cfg!(feature = "icechunk") {
        "icechunk: icechunk:///PATH repositories (copy --commit, log, tag, branch)"
    } else {
        "icechunk: none (built without the icechunk feature)"
    }
}

/// Whether (and through which library version) `import` reads netCDF files.
fn netcdf_line() -> String {
    #[cfg(feature = "netcdf")]
    let line = format!(
        "netcdf: import of netCDF-3, netCDF-4 and HDF5 files, export to netCDF-4 (libnetcdf {})",
        crate::netcdf::library_version()
    );
    #[cfg(not(feature = "netcdf"))]
    let line = "netcdf: none (built without the netcdf feature)".to_string();
    line
}

pub(crate) fn parse_json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| Error::InvalidArg(format!("{what}: {text:?} is not valid JSON: {e}")))
}

/// Opens a store for reading, or for writing when `write` (it must exist).
pub(crate) fn open(url: &str, write: bool) -> Result<Arc<dyn Store>> {
    open_url(url, if write { Mode::ReadWrite } else { Mode::Read }, None)
}

/// A node path as shown: `/` for the root, `/a/b` otherwise.
pub(crate) fn display(path: &str) -> String {
    format!("/{}", path.trim_matches('/'))
}

fn print_json(value: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Internal(format!("rendering JSON: {e}")))?;
    out::line(text)
}

/// The array's stored metadata document as JSON.
pub(crate) fn document(array: &Array) -> Result<Value> {
    let key = array.format().array_key(array.path());
    let bytes = get_document(array.store().as_ref(), &key)?
        .ok_or_else(|| Error::NotFound(format!("no metadata document at {key:?}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::Metadata(format!("{key:?} is not valid JSON: {e}")))
}

/// The codecs an array's metadata document (`doc`, in `format`) states: v3's list, v2's
/// filters and compressor, v1's compression and its options.
pub(crate) fn codecs(format: Format, doc: &Value) -> Value {
    let field = |key: &str| doc.get(key).cloned().unwrap_or(Value::Null);
    match format {
        f if f.is_v3() => field("codecs"),
        Format::V1 => json!({
            "compression": field("compression"),
            "compression_opts": field("compression_opts"),
        }),
        _ => json!({"filters": field("filters"), "compressor": field("compressor")}),
    }
}

/// The description `info` and `ls --json` give of an array.
/// Without a listing (`lists` false) the stored sizes and counts are null.
fn array_summary(array: &Array, full: bool, lists: bool) -> Result<Map<String, Value>> {
    let meta = array.metadata();
    let mut out = Map::new();
    out.insert("path".into(), json!(display(array.path())));
    out.insert("node_type".into(), json!("array"));
    out.insert("zarr_format".into(), json!(array.format().number()));
    out.insert("shape".into(), json!(meta.shape));
    out.insert("chunks".into(), json!(meta.inner_chunks()));
    let shards = meta.sharding().map(|_| meta.chunks.clone());
    out.insert("shards".into(), json!(shards));
    if let ChunkGrid::Rectilinear(dims) = &meta.grid {
        let edges: Vec<Value> = dims.iter().map(|d| d.to_json()).collect();
        out.insert("chunk_edges".into(), Value::Array(edges));
    }
    out.insert("dtype".into(), json!(meta.dtype.to_v2()));
    if !full {
        return Ok(out);
    }
    out.insert("codecs".into(), codecs(array.format(), &document(array)?));
    text_room(meta.item_size(), "the fill value's text")?;
    out.insert(
        "fill_value".into(),
        zarr::meta::fill::render_fill(&meta.fill_value, &meta.dtype)?,
    );
    out.insert("dimension_names".into(), json!(array.dimension_names()?));
    out.insert(
        "missing_value".into(),
        crate::header::missing_value(array, &array.attributes()?)?,
    );
    let stored = if lists {
        Some(array.nbytes_stored()?)
    } else {
        None
    };
    let nbytes = meta.nbytes();
    out.insert("nbytes".into(), json!(nbytes));
    out.insert("stored_bytes".into(), json!(stored));
    let ratio = match stored {
        None | Some(0) => Value::Null,
        Some(stored) => json!(((nbytes as f64 / stored as f64) * 1000.0).round() / 1000.0),
    };
    out.insert("ratio".into(), ratio);
    let initialized = if lists {
        Some(array.nchunks_initialized()?)
    } else {
        None
    };
    out.insert("chunks_initialized".into(), json!(initialized));
    out.insert("chunks_total".into(), json!(meta.num_chunks()));
    Ok(out)
}

fn info(node: &NodeArg, as_json: bool) -> Result<u8> {
    let Hierarchy { store, lists } = open_hierarchy(&node.store)?;
    match node_kind(store.as_ref(), &node.path)? {
        NodeKind::None => Err(Error::NotFound(format!(
            "no array or group at {} in {}",
            display(&node.path),
            node.store
        ))),
        NodeKind::Group => {
            let group = Group::open(store, &node.path, Mode::Read)?;
            let members = group.members()?;
            if as_json {
                print_json(&json!({
                    "path": display(&node.path),
                    "node_type": "group",
                    "zarr_format": group.format().number(),
                    "members": members.iter().map(|(n, _)| n).collect::<Vec<_>>(),
                    "attributes": nczarr::user_attributes(group.attributes()?),
                }))?;
            } else {
                let mut out = Out::new();
                out.line(format!("path: {}", display(&node.path)))?;
                out.line("type: group")?;
                out.line(format!("zarr format: {}", group.format().number()))?;
                out.line(format!("members: {}", members.len()))?;
                out.finish()?;
            }
            Ok(0)
        }
        NodeKind::Array => {
            let array = Array::open(store, &node.path, Mode::Read)?;
            let s = array_summary(&array, true, lists)?;
            if as_json {
                print_json(&Value::Object(s))?;
                return Ok(0);
            }
            let meta = array.metadata();
            let mut out = Out::new();
            out.line(format!("path: {}", display(array.path())))?;
            out.line("type: array")?;
            out.line(format!("zarr format: {}", array.format().number()))?;
            out.line(format!("shape: {}", shape_text(&meta.shape)))?;
            match &s.get("chunk_edges") {
                Some(edges) => {
                    out.line(format!(
                        "chunks: rectilinear, largest {}",
                        shape_text(meta.inner_chunks())
                    ))?;
                    out.line(format!("chunk edges: {edges}"))?;
                }
                None => out.line(format!("chunks: {}", shape_text(meta.inner_chunks())))?,
            }
            if meta.sharding().is_some() {
                out.line(format!("shards: {}", shape_text(&meta.chunks)))?;
            }
            out.line(format!("dtype: {}", meta.dtype.to_v2()))?;
            out.line(format!("codecs: {}", s["codecs"]))?;
            out.line(format!("fill value: {}", s["fill_value"]))?;
            let missing = match &s["missing_value"] {
                Value::Null => "none".to_string(),
                value => value.to_string(),
            };
            out.line(format!("missing value: {missing}"))?;
            let names = match array.dimension_names()? {
                Some(names) => names
                    .into_iter()
                    .map(|n| n.unwrap_or_else(|| "~".into()))
                    .collect::<Vec<String>>()
                    .join(", "),
                None => "none".into(),
            };
            out.line(format!("dimension names: {names}"))?;
            out.line(format!("bytes: {}", s["nbytes"]))?;
            // What is counted is the stored objects: the shards of a sharded array.
            let units = if meta.sharding().is_some() {
                "shards"
            } else {
                "chunks"
            };
            if lists {
                out.line(format!("stored bytes: {}", s["stored_bytes"]))?;
                out.line(format!("ratio: {}", s["ratio"]))?;
                out.line(format!(
                    "{units} initialized: {}/{}",
                    s["chunks_initialized"], s["chunks_total"]
                ))?;
            } else {
                out.line(format!("stored bytes: {UNLISTED}"))?;
                out.line(format!("ratio: {UNLISTED}"))?;
                out.line(format!(
                    "{units} initialized: {UNLISTED}, of {}",
                    s["chunks_total"]
                ))?;
            }
            out.finish()?;
            Ok(0)
        }
    }
}

/// Every node at and below `path`, depth first in name order, with its depth.
fn walk(store: &Arc<dyn Store>, path: &str) -> Result<Vec<(String, NodeKind, usize)>> {
    fn go(
        store: &Arc<dyn Store>,
        path: &str,
        kind: NodeKind,
        depth: usize,
        out: &mut Vec<(String, NodeKind, usize)>,
    ) -> Result<()> {
        out.push((path.to_string(), kind, depth));
        if kind == NodeKind::Group {
            let group = Group::open(store.clone(), path, Mode::Read)?;
            for (name, kind) in group.members()? {
                go(store, &join_key(path, &name), kind, depth + 1, out)?;
            }
        }
        Ok(())
    }
    let path = path.trim_matches('/');
    let kind = node_kind(store.as_ref(), path)?;
    if kind == NodeKind::None {
        return Err(Error::NotFound(format!(
            "no array or group at {}",
            display(path)
        )));
    }
    let mut out = Vec::new();
    go(store, path, kind, 0, &mut out)?;
    Ok(out)
}

fn array_line(store: &Arc<dyn Store>, path: &str) -> Result<String> {
    let array = Array::open(store.clone(), path, Mode::Read)?;
    let meta = array.metadata();
    Ok(format!(
        "array {{{}}} {}",
        meta.shape
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        meta.dtype.to_v2()
    ))
}

fn ls(node: &NodeArg, as_json: bool) -> Result<u8> {
    let store = open_hierarchy(&node.store)?.store;
    let nodes = walk(&store, &node.path)?;
    if as_json {
        let mut list = Vec::new();
        for (path, kind, _) in &nodes {
            list.push(match kind {
                NodeKind::Array => Value::Object(array_summary(
                    &Array::open(store.clone(), path, Mode::Read)?,
                    false,
                    true,
                )?),
                _ => json!({"path": display(path), "node_type": "group"}),
            });
        }
        print_json(&Value::Array(list))?;
        return Ok(0);
    }
    let width = nodes
        .iter()
        .map(|(p, _, _)| display(p).len())
        .max()
        .unwrap_or(0);
    let mut out = Out::new();
    for (path, kind, _) in &nodes {
        let what = match kind {
            NodeKind::Array => array_line(&store, path)?,
            _ => "group".into(),
        };
        out.line(format!("{:width$}  {what}", display(path)))?;
    }
    out.finish()?;
    Ok(0)
}

fn tree(node: &NodeArg) -> Result<u8> {
    let store = open_hierarchy(&node.store)?.store;
    let nodes = walk(&store, &node.path)?;
    // For each depth, whether a later sibling follows (to draw the vertical lines).
    let mut open_levels: Vec<bool> = Vec::new();
    let mut out = Out::new();
    for (i, (path, kind, depth)) in nodes.iter().enumerate() {
        let name = if *depth == 0 {
            display(path)
        } else {
            path.rsplit('/').next().unwrap_or(path).to_string()
        };
        let what = match kind {
            NodeKind::Array => format!(" {}", array_line(&store, path)?),
            _ => String::new(),
        };
        if *depth == 0 {
            out.line(format!("{name}{what}"))?;
            continue;
        }
        let last = !nodes[i + 1..]
            .iter()
            .take_while(|(_, _, d)| d >= depth)
            .any(|(_, _, d)| d == depth);
        open_levels.truncate(depth - 1);
        let mut line = String::new();
        for &more in &open_levels {
            line.push_str(if more { "│   " } else { "    " });
        }
        line.push_str(if last { "└── " } else { "├── " });
        out.line(format!("{line}{name}{what}"))?;
        open_levels.push(!last);
    }
    out.finish()?;
    Ok(0)
}

fn meta(node: &NodeArg, as_json: bool) -> Result<u8> {
    let store = open_hierarchy(&node.store)?.store;
    let wrap = |kind: NodeKind, format: Format, document: Value| match as_json {
        true => json!({
            "path": display(&node.path),
            "node_type": node_type(kind),
            "zarr_format": format.number(),
            "document": document,
        }),
        false => document,
    };
    match node_kind(store.as_ref(), &node.path)? {
        NodeKind::Array => {
            let array = Array::open(store, &node.path, Mode::Read)?;
            print_json(&wrap(NodeKind::Array, array.format(), document(&array)?))?
        }
        NodeKind::Group => {
            let group = Group::open(store.clone(), &node.path, Mode::Read)?;
            let path = node.path.trim_matches('/');
            let key = match group.format() {
                f if f.is_v3() && f.draft_scheme().is_none() => join_key(path, "zarr.json"),
                _ => join_key(path, ".zgroup"),
            };
            let bytes = get_document(store.as_ref(), &key)?
                .ok_or_else(|| Error::NotFound(format!("no group document at {key:?}")))?;
            let value: Value = serde_json::from_slice(&bytes)
                .map_err(|e| Error::Metadata(format!("{key:?} is not valid JSON: {e}")))?;
            print_json(&wrap(NodeKind::Group, group.format(), value))?;
        }
        NodeKind::None => {
            return Err(Error::NotFound(format!(
                "no array or group at {}",
                display(&node.path)
            )))
        }
    }
    Ok(0)
}

/// Opens the node at `path` as a trait object, for its attributes, with its kind.
fn open_node(store: Arc<dyn Store>, path: &str, write: bool) -> Result<(Box<dyn Node>, NodeKind)> {
    let mode = if write { Mode::ReadWrite } else { Mode::Read };
    let kind = node_kind(store.as_ref(), path)?;
    let node: Box<dyn Node> = match kind {
        NodeKind::Array => Box::new(Array::open(store, path, mode)?),
        NodeKind::Group => Box::new(Group::open(store, path, mode)?),
        NodeKind::None => {
            return Err(Error::NotFound(format!(
                "no array or group at {}",
                display(path)
            )))
        }
    };
    Ok((node, kind))
}

/// Ends `attrs set` or `attrs del` on `node` at `path` in `s`: unless `dry_run` (whose
/// `attributes` are those it would leave), the consolidated metadata above it rewritten and
/// the store closed; with `json`, the attributes left printed.
fn end_attrs_change(
    s: &dyn Store,
    (node, kind): (Box<dyn Node>, NodeKind),
    path: &str,
    dry_run: Option<Map<String, Value>>,
    json: bool,
) -> Result<u8> {
    let attributes = match dry_run {
        Some(attributes) => Some(attributes),
        None => {
            crate::refresh::consolidated_above(s, path)?;
            let attributes = json.then(|| node.attributes()).transpose()?;
            s.close()?;
            attributes
        }
    };
    if let Some(attributes) = attributes.filter(|_| json) {
        print_attributes_json(path, kind, attributes)?;
    }
    Ok(0)
}

fn attrs(action: AttrsAction) -> Result<u8> {
    match action {
        AttrsAction::Get { node, json } => {
            let store = open_hierarchy(&node.store)?.store;
            let (opened, kind) = open_node(store, &node.path, false)?;
            let attributes = opened.attributes()?;
            match json {
                true => print_attributes_json(&node.path, kind, attributes)?,
                false => print_json(&Value::Object(nczarr::user_attributes(attributes)))?,
            }
            Ok(0)
        }
        AttrsAction::Set {
            store,
            path,
            key,
            value,
            dry_run,
            json,
        } => {
            let value = parse_json(&value, "the attribute value")?;
            // `/` names the root as `""` does.
            let path = path.trim_matches('/');
            let s = open(&store, !dry_run)?;
            let node = open_node(s.clone(), path, !dry_run)?;
            let would_leave = if dry_run {
                let mut attributes = node.0.attributes()?;
                let was = match attributes.get(&key) {
                    Some(old) => format!("now {old}"),
                    None => "not set now".into(),
                };
                eprintln!("would set {key:?} of {} to {value} ({was})", display(path));
                attributes.insert(key, value);
                Some(attributes)
            } else {
                node.0.set_attribute(&key, value)?;
                None
            };
            end_attrs_change(s.as_ref(), node, path, would_leave, json)
        }
        AttrsAction::Del {
            store,
            path,
            key,
            dry_run,
            json,
        } => {
            let path = path.trim_matches('/');
            let s = open(&store, !dry_run)?;
            let node = open_node(s.clone(), path, !dry_run)?;
            let would_leave = if dry_run {
                let mut attributes = node.0.attributes()?;
                let exists = attributes.remove(&key).is_some();
                eprintln!(
                    "{} {key:?} of {}",
                    if exists {
                        "would delete"
                    } else {
                        "no attribute"
                    },
                    display(path)
                );
                Some(attributes)
            } else {
                if !node.0.delete_attribute(&key)? {
                    return Err(Error::NotFound(format!(
                        "no attribute {key:?} on {}",
                        display(path)
                    )));
                }
                None
            };
            end_attrs_change(s.as_ref(), node, path, would_leave, json)
        }
    }
}

/// Prints what `attrs --json` prints of the node at `path` (a `kind`) with `attributes`:
/// {"path", "node_type", "attributes"}, the attributes without NCZarr's own.
fn print_attributes_json(path: &str, kind: NodeKind, attributes: Map<String, Value>) -> Result<()> {
    print_json(&json!({
        "path": display(path),
        "node_type": node_type(kind),
        "attributes": Value::Object(nczarr::user_attributes(attributes)),
    }))
}

/// Reads a region in C order, native byte order.
fn read_region(array: &Array, start: &[u64], count: &[u64]) -> Result<Vec<u8>> {
    let meta = array.metadata();
    let n = zarr::error::count_of(count, "elements in the region")?;
    let mut buf = zarr::error::try_zeroed(n * meta.item_size(), "the region")?;
    array.read(start, count, meta.dtype.element_type(), Order::C, &mut buf)?;
    Ok(buf)
}

fn dump(node: &NodeArg, region: Option<&str>, format: DumpFormat) -> Result<u8> {
    let store = open(&node.store, false)?;
    let array = Array::open(store, &node.path, Mode::Read)?;
    let meta = array.metadata();
    let (start, count) = parse_region(region, &meta.shape)?;
    let mut out = Out::new();
    let csv = format == DumpFormat::Csv;
    let raw = format == DumpFormat::Raw;
    // Lines are made and printed one at a time: a row of the region's last dimension in
    // text and CSV, an item in raw form.
    let row = count.last().copied().unwrap_or(1).max(1) as usize;
    let sep = if csv { "," } else { " " };
    let mut print_row = |values: &[String]| -> Result<()> {
        if raw {
            return values.iter().try_for_each(|v| out.line(v));
        }
        let fields: Vec<String> = values
            .iter()
            .map(|f| if csv { csv_field(f) } else { f.clone() })
            .collect();
        out.line(fields.join(sep))
    };
    let mut values = Vec::new();
    if meta.dtype.is_variable() {
        let vlen = array.read_vlen(&start, &count, Order::C)?;
        let items = vlen.offsets.len() - 1;
        for i in 0..items {
            let bytes = &vlen.data[vlen.offsets[i] as usize..vlen.offsets[i + 1] as usize];
            text_room(bytes.len(), "the item's text")?;
            values.push(if csv {
                vlen_csv(&meta.dtype, bytes)
            } else {
                vlen_text(&meta.dtype, bytes)
            });
            // Raw: one item per line (variable-length items have no fixed bytes).
            if raw || (i + 1) % row == 0 || i + 1 == items {
                print_row(&values)?;
                values.clear();
            }
        }
    } else {
        let mut buf = read_region(&array, &start, &count)?;
        // Records come with their fields in the stored byte order.
        swap_record_fields(&meta.dtype, &mut buf);
        if raw {
            out.bytes(&buf)?;
            out.finish()?;
            return Ok(0);
        }
        let items = buf.chunks_exact(meta.item_size().max(1));
        let n = items.len();
        for (i, item) in items.enumerate() {
            text_room(item.len(), "the item's text")?;
            if csv {
                element_csv(&meta.dtype, item, &mut values);
            } else {
                values.push(element_text(&meta.dtype, item));
            }
            if (i + 1) % row == 0 || i + 1 == n {
                print_row(&values)?;
                values.clear();
            }
        }
    }
    out.finish()?;
    Ok(0)
}

/// Splits a `--codec` list into its leading Zarr v3 array codecs (`scale_offset`,
/// `cast_value`, `bitround`, `reshape`, `packbits`, `numcodecs.<filter>`), which become the
/// filters, and the bytes→bytes codecs after them; `None` when it has no array codecs.
pub(crate) fn split_codecs(codecs: Value) -> (Option<Value>, Value) {
    let is_array_codec = |c: &Value| {
        c.get("id").is_none()
            && c.get("name")
                .and_then(Value::as_str)
                .is_some_and(zarr::codec::filter::is_v3_filter_name)
    };
    match codecs {
        Value::Array(mut list) if list.first().is_some_and(is_array_codec) => {
            let split = list
                .iter()
                .position(|c| !is_array_codec(c))
                .unwrap_or(list.len());
            let rest = list.split_off(split);
            (Some(Value::Array(list)), Value::Array(rest))
        }
        other => (None, other),
    }
}

/// Applies chunks, shards, compressor (and filters, from `--codec`'s array codecs) and
/// format to a builder of an array of `shape`, refusing chunks or shards of another rank.
fn apply_layout(builder: &mut ArrayBuilder, layout: &Layout, shape: &[u64]) -> Result<()> {
    let rank_check = |option: &str, text: &str, rank: usize| match rank == shape.len() {
        true => Ok(()),
        false => Err(Error::InvalidArg(format!(
            "{option} {text} has {rank} dimension{} but the shape {} has {}",
            if rank == 1 { "" } else { "s" },
            shape_text(shape),
            shape.len()
        ))),
    };
    if let Some(text) = &layout.chunks {
        let chunks = ChunkSpec::parse(text, "--chunks")?;
        rank_check("--chunks", text, chunks.rank())?;
        refuse_edges_with_shards(&chunks, layout.shards.is_some(), "--chunks")?;
        chunks.apply(builder);
    }
    if let Some(text) = &layout.shards {
        let shards = parse_shape(text, "--shards")?;
        rank_check("--shards", text, shards.len())?;
        builder.shard_shape(shards);
    }
    if let Some(c) = &layout.compressor {
        let (filters, compressors) = split_codecs(parse_json(c, "--compressor")?);
        if let Some(filters) = filters {
            builder.filters(filters);
        }
        builder.compressor(compressors);
    }
    if let Some(f) = layout.format {
        builder.zarr_format(f)?;
    }
    Ok(())
}

/// Opens the store of a command that creates a node at `path`: for a dry run read-only
/// (`None` when the store does not exist yet), otherwise for writing (created if missing).
/// A node already at `path` is refused unless `overwrite`, the same way in both cases.
/// Returns the store and the kind of node at `path`.
pub(crate) fn target_store(
    url: &str,
    path: &str,
    overwrite: bool,
    dry_run: bool,
) -> Result<(Option<Arc<dyn Store>>, NodeKind)> {
    let store = if dry_run {
        match open(url, false) {
            Ok(store) => Some(store),
            Err(Error::NotFound(_)) => None,
            Err(e) => return Err(e),
        }
    } else {
        Some(open_url(url, Mode::Append, None)?)
    };
    let kind = match &store {
        Some(store) => node_kind(store.as_ref(), path)?,
        None => NodeKind::None,
    };
    if kind != NodeKind::None && !overwrite {
        return Err(Error::Exists(format!(
            "{} at {} in {url}: use --overwrite to replace it",
            kind_name(kind),
            display(path)
        )));
    }
    Ok((store, kind))
}

/// The `node_type` of a node in JSON output.
fn node_type(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Array => "array",
        _ => "group",
    }
}

/// A finding about the node shown as `shown` as JSON: `{"path": shown, field: text}`, the
/// text without the `shown: ` that leads it in the lines printed.
fn finding(shown: &str, line: &str, field: &str) -> Value {
    let text = line
        .strip_prefix(shown)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(line);
    json!({ "path": shown, field: text })
}

/// A store (its URL's user information and query values masked) and a node path in JSON
/// output.
fn place(store: &str, path: &str) -> Value {
    json!({ "store": mask_urls(store), "path": display(path) })
}

pub(crate) fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Array => "an array",
        NodeKind::Group => "a group",
        NodeKind::None => "nothing",
    }
}

/// What a dry run says it would do to create `what` at `path` where `kind` is.
pub(crate) fn would_create(kind: NodeKind, path: &str, what: &str) {
    match kind {
        NodeKind::None => eprintln!("would create {what} at {}", display(path)),
        _ => eprintln!(
            "would replace {} at {} with {what}",
            kind_name(kind),
            display(path)
        ),
    }
}

/// An array's description for dry runs: `array 4 x 5 <i4 (chunks 2 x 3, Zarr v3)`.
pub(crate) fn array_text(meta: &ArrayMeta, format: Format) -> String {
    let shards = match meta.sharding() {
        Some(_) => format!(", shards {}", shape_text(&meta.chunks)),
        None => String::new(),
    };
    format!(
        "array {} {} (chunks {}{shards}, Zarr v{})",
        shape_text(&meta.shape),
        meta.dtype.to_v2(),
        shape_text(meta.inner_chunks()),
        format.number()
    )
}

/// The format of a new array: the one chosen, else the one the store gives `path`.
/// Checks a new array's settings against the target store (what is there, the format it
/// inherits) before anything is written: the store and the metadata to create, or `None`
/// after describing what a dry run would create.
fn planned_array(
    builder: &mut ArrayBuilder,
    node: &NodeArg,
    layout: &Layout,
    overwrite: bool,
    dry_run: bool,
) -> Result<Option<(Arc<dyn Store>, ArrayMeta)>> {
    // Checked before the target store is opened for writing (which creates it), so that
    // refused settings leave no new store behind: in the format given, or v3 where no
    // store is there yet to inherit a format from.
    let no_store =
        zarr::store::local_path(&node.store)?.is_some_and(|p| !std::path::Path::new(p).exists());
    if layout.format.is_some() || no_store {
        let format = layout.format.unwrap_or(3);
        builder.zarr_format(format)?;
        Format::from_number(format.into())?.render_array(&builder.metadata()?, &Map::new())?;
    }
    let (store, kind) = target_store(&node.store, &node.path, overwrite, dry_run)?;
    let format = new_array_format(layout, store.as_ref(), &node.path)?;
    builder.zarr_format(format.number())?;
    let meta = builder.metadata()?;
    match store.filter(|_| !dry_run) {
        Some(store) => Ok(Some((store, meta))),
        None => {
            would_create(kind, &node.path, &array_text(&meta, format));
            Ok(None)
        }
    }
}

fn new_array_format(layout: &Layout, store: Option<&Arc<dyn Store>>, path: &str) -> Result<Format> {
    match (layout.format, store) {
        (Some(f), _) => Format::from_number(f.into()),
        (None, Some(store)) => zarr::node::inherited_format(store.as_ref(), path.trim_matches('/')),
        (None, None) => Ok(Format::V3),
    }
}

#[allow(clippy::too_many_arguments)]
fn create(
    node: &NodeArg,
    group: bool,
    shape: Option<&str>,
    dtype: Option<&str>,
    fill: Option<&str>,
    dimension_names: Option<&str>,
    attrs: Option<&str>,
    overwrite: bool,
    dry_run: bool,
    layout: &Layout,
) -> Result<u8> {
    let mode = if overwrite {
        Mode::Overwrite
    } else {
        Mode::CreateNew
    };
    let attributes = match attrs.map(|a| parse_json(a, "--attrs")).transpose()? {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(Error::InvalidArg("--attrs must be a JSON object".into())),
    };
    if group {
        let format = Format::from_number(layout.format.unwrap_or(3).into())?;
        let (store, kind) = target_store(&node.store, &node.path, overwrite, dry_run)?;
        let Some(store) = store.filter(|_| !dry_run) else {
            would_create(
                kind,
                &node.path,
                &format!("a group (Zarr v{})", format.number()),
            );
            return Ok(0);
        };
        Group::open_with(store.clone(), &node.path, mode, format, &attributes)?;
        crate::refresh::consolidated_above(store.as_ref(), &node.path)?;
        store.close()?;
        return Ok(0);
    }
    let (Some(shape), Some(dtype)) = (shape, dtype) else {
        return Err(Error::InvalidArg(
            "an array needs --shape and --dtype".into(),
        ));
    };
    let shape = parse_shape(shape, "--shape")?;
    let mut builder = ArrayBuilder::new(shape.clone(), ElementType::Raw);
    builder.dtype_name(dtype)?;
    apply_layout(&mut builder, layout, &shape)?;
    if let Some(fill) = fill {
        builder.fill_value_json(parse_json(fill, "--fill")?);
    }
    if let Some(names) = dimension_names {
        builder.dimension_names(
            names
                .split(',')
                .map(|n| Some(n.trim().to_string()))
                .collect(),
        );
    }
    builder.attributes(attributes);
    let Some((store, _)) = planned_array(&mut builder, node, layout, overwrite, dry_run)? else {
        return Ok(0);
    };
    builder.create(store.clone(), &node.path, mode)?;
    crate::refresh::consolidated_above(store.as_ref(), &node.path)?;
    store.close()?;
    Ok(0)
}

/// Permutes a whole array's items between C and Fortran order (`to_c` from F to C).
fn reorder(buf: &[u8], shape: &[u64], item: usize, to_c: bool) -> Vec<u8> {
    let rank = shape.len();
    let mut out = vec![0u8; buf.len()];
    let n = buf.len() / item.max(1);
    let mut index = vec![0u64; rank];
    for c in 0..n {
        // `index` is the C-order multi-index of element `c`; `f` its Fortran offset.
        let mut f = 0u64;
        for d in (0..rank).rev() {
            f = f * shape[d] + index[d];
        }
        let (from, to) = if to_c {
            (f as usize, c)
        } else {
            (c, f as usize)
        };
        out[to * item..(to + 1) * item].copy_from_slice(&buf[from * item..(from + 1) * item]);
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// Converts items between a raw file's byte order (the array's stored one) and the native
/// order the library reads and writes them in (the same swap both ways). Records need none:
/// the library moves them with their fields in the stored byte order.
fn to_native(dtype: &DType, buf: &mut [u8]) {
    if dtype.needs_swap() {
        swap_bytes(buf, dtype.swap_unit());
    }
}

/// The slabs of the region `start`/`count` along the first dimension, one per row of
/// chunks of the grid `chunks` (the whole region for a 0-d array or an empty region).
/// Each slab is a contiguous run of the region's items in C order.
fn slabs(chunks: &[u64], start: &[u64], count: &[u64]) -> Vec<(Vec<u64>, Vec<u64>)> {
    if start.is_empty() || count.contains(&0) {
        return vec![(start.to_vec(), count.to_vec())];
    }
    let step = chunks[0].max(1);
    let end = start[0] + count[0];
    let mut out = Vec::new();
    let mut row = start[0];
    while row < end {
        let next = end.min((row / step + 1) * step);
        let mut s = start.to_vec();
        let mut c = count.to_vec();
        s[0] = row;
        c[0] = next - row;
        out.push((s, c));
        row = next;
    }
    out
}

/// The slabs of a raw file of `shape`, each one row of chunks of the grid `chunks` and one
/// contiguous run of the file's bytes: along the first dimension in C order, along the last
/// in Fortran order (each slab then in Fortran order itself).
fn file_slabs(chunks: &[u64], shape: &[u64], fortran: bool) -> Vec<(Vec<u64>, Vec<u64>)> {
    let zeros = vec![0; shape.len()];
    if !fortran {
        return slabs(chunks, &zeros, shape);
    }
    let reversed = |v: &[u64]| v.iter().rev().copied().collect::<Vec<u64>>();
    slabs(&reversed(chunks), &zeros, &reversed(shape))
        .into_iter()
        .map(|(start, count)| (reversed(&start), reversed(&count)))
        .collect()
}

/// How many chunks of the grid `chunks` the region `start`/`count` touches.
fn chunks_touched(chunks: &[u64], start: &[u64], count: &[u64]) -> u64 {
    if count.contains(&0) {
        return 0;
    }
    start
        .iter()
        .zip(count)
        .zip(chunks)
        .map(|((&s, &c), &k)| (s + c - 1) / k.max(1) - s / k.max(1) + 1)
        .product()
}

/// How `import` reads a raw binary file.
pub struct RawFile<'a> {
    /// The file's element type with its byte order.
    pub dtype: &'a str,
    /// The shape, comma-separated.
    pub shape: &'a str,
    /// The file's element order.
    pub order: FileOrder,
}

fn import(
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

fn export(node: &NodeArg, output: &str, region: Option<&str>, order: FileOrder) -> Result<u8> {
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

fn consolidate(node: &NodeArg, dry_run: bool) -> Result<u8> {
    let store = open(&node.store, !dry_run)?;
    let path = node.path.trim_matches('/');
    // Only a group's metadata is consolidated: refused before anything is written.
    let group = match node_kind(store.as_ref(), path)? {
        NodeKind::Group => Group::open(store.clone(), path, Mode::Read)?,
        kind => {
            return Err(Error::InvalidArg(format!(
                "{} is {}: only a group's metadata is consolidated",
                display(path),
                kind_name(kind)
            )))
        }
    };
    if dry_run {
        let nodes = walk(&store, path)?;
        let key = match group.format() {
            f if f.is_v3() => join_key(path, "zarr.json"),
            _ => join_key(path, ".zmetadata"),
        };
        let n = nodes.len() - 1;
        eprintln!(
            "would consolidate the metadata of {n} node{} below {} into {key:?}",
            if n == 1 { "" } else { "s" },
            display(path)
        );
        return Ok(0);
    }
    zarr::meta::consolidated::consolidate(store.as_ref(), &node.path)?;
    store.close()?;
    Ok(0)
}

fn rm(node: &NodeArg, dry_run: bool) -> Result<u8> {
    let store = open(&node.store, !dry_run)?;
    let path = node.path.trim_matches('/');
    if node_kind(store.as_ref(), path)? == NodeKind::None {
        return Err(Error::NotFound(format!(
            "no array or group at {}",
            display(path)
        )));
    }
    if path.is_empty() {
        return Err(Error::InvalidArg(
            "refusing to delete the root node: delete the store itself".into(),
        ));
    }
    if dry_run {
        let keys = store.list_prefix(&node_prefix(path))?;
        eprintln!("would delete {} ({} keys)", display(path), keys.len());
        return Ok(0);
    }
    let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
    Group::open(store.clone(), parent, Mode::ReadWrite)?.delete(name)?;
    crate::refresh::consolidated_above(store.as_ref(), path)?;
    store.close()?;
    Ok(0)
}

/// Refuses chunk edges given with `--shards` (`what` names the option): the edges would be
/// the shards' and the chunk shape is not given.
fn refuse_edges_with_shards(chunks: &ChunkSpec, shards: bool, what: &str) -> Result<()> {
    match (chunks, shards) {
        (ChunkSpec::Edges(_), true) => Err(Error::InvalidArg(format!(
            "{what} with chunk edges cannot be combined with --shards"
        ))),
        _ => Ok(()),
    }
}

/// How `copy` lays out the arrays it writes.
struct CopySettings {
    chunks: PerArray<ChunkSpec>,
    shards: PerArray<Vec<u64>>,
    compressor: Option<Value>,
    format: Option<Format>,
}

/// How one `copy` runs.
struct CopyRun {
    /// Replace what is at the target instead of resuming into it.
    overwrite: bool,
    /// Say what would be copied without writing.
    dry_run: bool,
    /// Print what was (or would be) copied as JSON.
    json: bool,
    /// Commit the copy with this message (the target an Icechunk repository).
    commit: Option<String>,
}

/// The metadata of the copy of `from`.
fn target_meta(from: &ArrayMeta, settings: &ArrayLayout, format: Format) -> Result<ArrayMeta> {
    let mut builder = ArrayBuilder::new(from.shape.clone(), ElementType::Raw);
    builder.dtype(from.dtype.clone());
    builder.zarr_format(format.number())?;
    match (settings.chunks, &from.grid) {
        (Some(chunks), _) => chunks.apply(&mut builder),
        (None, ChunkGrid::Rectilinear(dims)) if from.sharding().is_none() => {
            ChunkSpec::Edges(dims.to_vec()).apply(&mut builder)
        }
        (None, grid) => {
            builder.chunks(from.inner_chunks().to_vec());
            // A sharded source's edges are its shards'.
            if let ChunkGrid::Rectilinear(dims) = grid {
                builder.chunk_grid(dims.to_vec());
            }
        }
    }
    match settings.shards {
        Some(shards) => {
            builder.shard_shape(shards.clone());
        }
        None if settings.chunks.is_none() && from.sharding().is_some() && format.is_v3() => {
            builder.shard_shape(from.chunks.clone());
        }
        None => {}
    }
    builder.fill_value_json(zarr::meta::fill::render_fill(
        &from.fill_value,
        &from.dtype,
    )?);
    let filters = match settings.compressor {
        Some(c) => {
            let (filters, compressors) = split_codecs(c.clone());
            builder.compressor(compressors);
            filters
        }
        None => None,
    };
    if let Some(filters) = &filters {
        builder.filters(filters.clone());
    }
    let mut meta = builder.metadata()?;
    let source = from.codecs.innermost();
    let inner = meta.codecs.innermost_mut();
    // The source's filters (and order) travel with the data, unless `--codec` gives array
    // codecs; but Zarr v3 does not settle which order a filter that depends on the items'
    // order (delta, packbits) sees after a transpose, and v2 holds only C and F: such
    // copies store their chunks in C order.
    if filters.is_none() {
        inner.array_to_array = source.array_to_array.clone();
    }
    let rank = from.rank();
    let permutation = inner.permutation(rank);
    let c_or_f =
        permutation.iter().copied().eq(0..rank) || permutation.iter().copied().eq((0..rank).rev());
    if (format.is_v3() && inner.filters().any(|f| !f.elementwise())) || (!format.is_v3() && !c_or_f)
    {
        inner
            .array_to_array
            .retain(|c| !matches!(c, zarr::codec::chain::ArrayToArray::Transpose(_)));
    }
    if settings.compressor.is_none() {
        inner.bytes_to_bytes = source.bytes_to_bytes.clone();
    }
    Ok(meta)
}

/// What `copy` writes at one target path, planned before anything is written.
enum Planned {
    /// A group to create (`None` when the target has it and keeps it).
    Group {
        to_path: String,
        create: Option<(Format, Map<String, Value>)>,
    },
    /// An array to copy (into the array the target has when `resume`).
    Array {
        from: Box<Array>,
        to_path: String,
        meta: Box<ArrayMeta>,
        attrs: Map<String, Value>,
        format: Format,
        resume: bool,
    },
}

/// Names `path` in an error about it (the message keeps the error's words).
fn about(path: &str, e: Error) -> Error {
    Error::InvalidArg(format!("{}: {e}", display(path)))
}

/// Plans a copy: every target node's metadata built and checked (codecs, chunking, the
/// document rendered) and every clash with what the target holds refused, before the
/// first write. `dst` is the target store when it exists.
fn plan_copy(
    src: &Arc<dyn Store>,
    from: &str,
    dst: Option<&Arc<dyn Store>>,
    to: &str,
    settings: &CopySettings,
    overwrite: bool,
) -> Result<Vec<Planned>> {
    let nodes = walk(src, from)?;
    let from = from.trim_matches('/');
    let relative = |path: &str| path[from.len()..].trim_start_matches('/').to_string();
    let mut arrays = Vec::new();
    for (path, kind, _) in &nodes {
        if *kind == NodeKind::Array {
            let array = Array::open(src.clone(), path, Mode::Read).map_err(|e| about(path, e))?;
            arrays.push((relative(path), path.clone(), array));
        }
    }
    let ranked: Vec<(String, String, usize)> = arrays
        .iter()
        .map(|(rel, path, a)| (rel.clone(), path.clone(), a.metadata().rank()))
        .collect();
    let chunks = settings.chunks.resolve(&ranked, ChunkSpec::rank)?;
    let shards = settings.shards.resolve(&ranked, Vec::len)?;
    let kind_at = |path: &str| match dst {
        Some(dst) => node_kind(dst.as_ref(), path),
        None => Ok(NodeKind::None),
    };
    let mut arrays = arrays.into_iter().zip(chunks.into_iter().zip(shards));
    let mut plan = Vec::new();
    for (path, kind, _) in &nodes {
        let to_path = join_key(to.trim_matches('/'), &relative(path));
        let there = kind_at(&to_path)?;
        if *kind == NodeKind::Group {
            let group = Group::open(src.clone(), path, Mode::Read).map_err(|e| about(path, e))?;
            let format = settings.format.unwrap_or(group.format().for_copies());
            let create = there != NodeKind::Group || overwrite && path == from;
            if there == NodeKind::Array && !overwrite {
                return Err(Error::Exists(format!(
                    "an array at {} in the target: use --overwrite to replace it",
                    display(&to_path)
                )));
            }
            let create = match create {
                true => Some((format, nczarr::user_attributes(group.attributes()?))),
                false => None,
            };
            plan.push(Planned::Group { to_path, create });
            continue;
        }
        let Some(((_, _, array), (chunks, shards))) = arrays.next() else {
            return Err(Error::Internal("copy plan: arrays out of step".into()));
        };
        let layout = ArrayLayout {
            chunks,
            shards,
            compressor: settings.compressor.as_ref(),
        };
        let planned = plan_array(array, &to_path, &layout, settings.format, |target| {
            Ok(match there {
                NodeKind::Array if !overwrite => Some(resume_check(dst, &to_path, target)?),
                NodeKind::Group if !overwrite => {
                    return Err(Error::Exists(format!(
                        "a group at {} in the target: use --overwrite to replace it",
                        display(&to_path)
                    )))
                }
                _ => None,
            })
        })
        .map_err(|e| match e {
            Error::Exists(_) => e,
            e => about(path, e),
        })?;
        plan.push(planned);
    }
    Ok(plan)
}

/// The layout one array is copied with.
struct ArrayLayout<'a> {
    chunks: Option<&'a ChunkSpec>,
    shards: Option<&'a Vec<u64>>,
    compressor: Option<&'a Value>,
}

/// Plans the copy of one array: its target metadata and attributes, checked; `existing`
/// says whether the target already has it (to resume into), refusing another layout.
fn plan_array(
    array: Array,
    to_path: &str,
    layout: &ArrayLayout,
    format: Option<Format>,
    existing: impl FnOnce(&(&ArrayMeta, Format)) -> Result<Option<()>>,
) -> Result<Planned> {
    if let Some(chunks) = layout.chunks {
        refuse_edges_with_shards(chunks, layout.shards.is_some(), "--rechunk")?;
    }
    let format = format.unwrap_or(array.format().for_copies());
    let mut meta = target_meta(&array.metadata(), layout, format)?;
    // NCZarr's keys describe the source's netCDF model, which the copy does not have.
    let mut attrs = nczarr::user_attributes(array.attributes()?);
    carry_dimension_names(&array, &mut meta, &mut attrs, format)?;
    carry_missing_value(&array, &mut meta, &mut attrs, format)?;
    meta.validate()?;
    format.render_array(&meta, &attrs)?;
    let resume = existing(&(&meta, format))?.is_some();
    Ok(Planned::Array {
        from: Box::new(array),
        to_path: to_path.to_string(),
        meta: Box::new(meta),
        attrs,
        format,
        resume,
    })
}

/// Checks that the array the target has at `to_path` has the layout the copy gives it,
/// so that the copy resumes into it.
fn resume_check(
    dst: Option<&Arc<dyn Store>>,
    to_path: &str,
    (meta, format): &(&ArrayMeta, Format),
) -> Result<()> {
    let Some(dst) = dst else {
        return Ok(());
    };
    let existing = Array::open(dst.clone(), to_path, Mode::Read)?;
    let e = existing.metadata();
    if e.shape != meta.shape
        || e.chunks != meta.chunks
        || e.grid != meta.grid
        || e.inner_chunks() != meta.inner_chunks()
        || e.dtype != meta.dtype
        || existing.format() != *format
    {
        return Err(Error::Exists(format!(
            "{} exists with another shape, chunks, shards, data type or format: \
             use --overwrite to replace it",
            display(to_path)
        )));
    }
    Ok(())
}

/// Copies the node `(store, path)` of `source` to `target` (see
/// [`crate::cli::Command::Copy`]).
fn copy(
    source: (&str, &str),
    target: (&str, &str),
    settings: &CopySettings,
    run: CopyRun,
) -> Result<u8> {
    let ((source, from), (target, to)) = (source, target);
    let CopyRun {
        overwrite,
        dry_run,
        json,
        commit,
    } = run;
    let src = open_hierarchy(source)?.store;
    // Before the target is opened for writing (which may create it inside the source).
    crate::overlap::refuse_copy_over_source(source, &src, from, target, to)?;
    let existing = match open(target, false) {
        Ok(store) => Some(store),
        Err(Error::NotFound(_)) => None,
        Err(e) => return Err(e),
    };
    let plan = plan_copy(&src, from, existing.as_ref(), to, settings, overwrite)?;
    let summary = json.then(|| {
        json!({
            "source": place(source, from),
            "target": place(target, to),
            "dry_run": dry_run,
            "nodes": plan.iter().map(planned_json).collect::<Vec<_>>(),
        })
    });
    if dry_run {
        if let Some(summary) = &summary {
            print_json(summary)?;
            return Ok(0);
        }
        for planned in &plan {
            match planned {
                Planned::Group { to_path, .. } => {
                    eprintln!("would create group {}", display(to_path))
                }
                Planned::Array {
                    from,
                    to_path,
                    meta,
                    format,
                    ..
                } => eprintln!(
                    "would copy array {} to {} (Zarr v{}, {} chunks of {})",
                    display(from.path()),
                    display(to_path),
                    format.number(),
                    meta.num_chunks(),
                    shape_text(&meta.chunks)
                ),
            }
        }
        return Ok(0);
    }
    drop(existing);
    let dst = open_url(target, Mode::Append, None)?;
    if commit.is_some() {
        crate::repo::check_committable(&dst)?;
    }
    let mode = if overwrite {
        Mode::Overwrite
    } else {
        Mode::CreateNew
    };
    for planned in plan {
        match planned {
            Planned::Group {
                to_path,
                create: Some((format, attributes)),
            } => {
                Group::open_with(dst.clone(), &to_path, mode, format, &attributes)?;
            }
            Planned::Group { create: None, .. } => {}
            Planned::Array {
                from,
                to_path,
                meta,
                attrs,
                format,
                resume,
            } => {
                let target = if resume {
                    Array::open(dst.clone(), &to_path, Mode::ReadWrite)?
                } else {
                    Array::create(dst.clone(), &to_path, *meta, &attrs, mode, format)?
                };
                copy_array(&from, &target, &dst).map_err(|e| {
                    Error::InvalidArg(format!(
                        "copying {} stopped: {e} (the copy resumes when run again)",
                        display(from.path())
                    ))
                })?;
            }
        }
    }
    crate::refresh::consolidated_above(dst.as_ref(), to)?;
    let snapshot = commit
        .as_deref()
        .map(|message| crate::repo::commit(&dst, message))
        .transpose()?;
    dst.close()?;
    match (summary, snapshot) {
        (Some(mut summary), snapshot) => {
            if let Some(id) = snapshot {
                summary["snapshot"] = json!(id);
            }
            print_json(&summary)?;
        }
        (None, Some(id)) => out::line(id)?,
        (None, None) => {}
    }
    Ok(0)
}

/// What `copy --json` says of one planned node.
fn planned_json(planned: &Planned) -> Value {
    match planned {
        Planned::Group { to_path, create } => json!({
            "node_type": "group",
            "path": display(to_path),
            "created": create.is_some(),
        }),
        Planned::Array {
            from,
            to_path,
            meta,
            format,
            resume,
            ..
        } => json!({
            "node_type": "array",
            "from": display(from.path()),
            "path": display(to_path),
            "zarr_format": format.number(),
            "shape": meta.shape,
            "chunks": meta.inner_chunks(),
            "shards": meta.sharding().map(|_| meta.chunks.clone()),
            "chunks_total": meta.num_chunks(),
            "resumed": resume,
        }),
    }
}

/// Gives the copy of `from` its dimension names in the target's format: v3
/// `dimension_names`, or v2's `_ARRAY_DIMENSIONS` attribute (the xarray convention, which
/// names every dimension: names with a gap are left out, with a warning).
fn carry_dimension_names(
    from: &Array,
    meta: &mut ArrayMeta,
    attrs: &mut Map<String, Value>,
    format: Format,
) -> Result<()> {
    let names = from.dimension_names()?;
    if !from.format().is_v3() && format.is_v3() {
        attrs.remove(DIMENSIONS_KEY);
    }
    // A scalar's list is empty: xarray needs it in v2 even when the source has none.
    let Some(names) = names.or_else(|| (meta.rank() == 0).then(Vec::new)) else {
        return Ok(());
    };
    if format.is_v3() {
        meta.dimension_names = Some(names);
    } else if !attrs.contains_key(DIMENSIONS_KEY) {
        match names.into_iter().collect::<Option<Vec<String>>>() {
            Some(names) => {
                attrs.insert(DIMENSIONS_KEY.into(), json!(names));
            }
            None => eprintln!(
                "zarrtool: {}: dimension names not kept: Zarr v{}'s {DIMENSIONS_KEY} names \
                 every dimension",
                display(from.path()),
                format.number()
            ),
        }
    }
    Ok(())
}

/// Gives the copy of `from` its CF missing value in the target's encoding (see `cf`) when
/// the copy goes between Zarr v3 and the other formats, or to Zarr v2 from an array with a
/// `_FillValue` attribute (whose NCZarr type record the copy dropped with NCZarr's keys).
/// Without a missing value a v3 fill of zero becomes a null v2 fill (missing chunks still
/// read as zeros, and xarray masks no real zero).
fn carry_missing_value(
    from: &Array,
    meta: &mut ArrayMeta,
    attrs: &mut Map<String, Value>,
    format: Format,
) -> Result<()> {
    let retyped = format == Format::V2 && attrs.contains_key(cf::FILL_ATTRIBUTE);
    if from.format().is_v3() == format.is_v3() && !retyped {
        return Ok(());
    }
    // An integer fill value outside v3 is the missing value exactly (a 64-bit one, as
    // netCDF's default int64 fill, may have no double).
    let source = from.metadata();
    let integer = matches!(source.dtype.kind, DataKind::Int(_) | DataKind::UInt(_));
    let exact = match &source.fill_value {
        Some(fill) if integer && !from.format().is_v3() => Some(cf::encode_bytes(
            fill.clone(),
            &meta.dtype,
            format,
            from.path(),
        )?),
        _ => None,
    };
    let encoded = match exact {
        Some(encoded) => Some(encoded),
        None => from
            .missing_value()?
            .map(|value| cf::encode(value, &meta.dtype, format, from.path()))
            .transpose()?,
    };
    match encoded {
        Some(encoded) => {
            encoded.apply(attrs);
            meta.fill_value = Some(encoded.fill);
        }
        None if !format.requires_fill() => {
            let zero = meta
                .fill_value
                .as_ref()
                .is_some_and(|f| f.iter().all(|&b| b == 0));
            if zero && !meta.dtype.is_variable() {
                meta.fill_value = None;
            }
        }
        None => {}
    }
    Ok(())
}

/// Copies one array chunk by chunk of the target's grid, skipping chunks the target holds.
fn copy_array(from: &Array, target: &Array, dst: &Arc<dyn Store>) -> Result<()> {
    let format = target.format();
    let meta = target.metadata();
    let grid = meta.chunk_grid();
    let total = zarr::error::count_of(&grid, "chunks of the target")?;
    let base = format.data_base(target.path());
    let bar = Progress::new(total as u64, unit_of(&meta), &display(from.path()));
    let cells: Vec<usize> = (0..total).collect();
    let elem = meta.dtype.element_type();
    let variable = meta.dtype.is_variable();
    zarr::io::pool::pool()?.install(|| {
        cells.par_iter().try_for_each(|&cell| -> Result<()> {
            let mut index = vec![0u64; grid.len()];
            let mut rest = cell as u64;
            for d in (0..grid.len()).rev() {
                index[d] = rest % grid[d];
                rest /= grid[d];
            }
            let key = join_key(&base, &meta.chunk_key(&index));
            let (start, count) = target.chunk_region(&index)?;
            if dst.size(&key)?.is_none() {
                if variable {
                    let items = from.read_vlen(&start, &count, Order::C)?;
                    target.write_vlen(&start, &count, Order::C, &items.slices())?;
                } else {
                    let buf = read_region(from, &start, &count)?;
                    target.write(&start, &count, elem, Order::C, &buf)?;
                }
            }
            bar.inc(1, region_bytes(&count, meta.item_size()));
            Ok(())
        })
    })?;
    bar.finish();
    Ok(())
}

/// Checks one array; returns its problems.
fn validate_array(store: &Arc<dyn Store>, path: &str) -> Result<Vec<String>> {
    let array = match Array::open(store.clone(), path, Mode::Read) {
        Ok(a) => a,
        Err(e) => return Ok(vec![format!("{}: {e}", display(path))]),
    };
    let meta = array.metadata();
    let mut problems = Vec::new();
    // What info, copy and dump read besides the metadata: its dimension names.
    if let Err(e) = array.dimension_names() {
        problems.push(format!("{}: {e}", display(path)));
    }
    let base = array.format().data_base(array.path());
    let prefix = node_prefix(&base);
    let grid = meta.chunk_grid();
    let metadata_names = [
        ".zarray",
        ".zattrs",
        "zarr.json",
        "meta",
        "attrs",
        ".zgroup",
        // A writer appending to the array holds it (not data; see io::append_lock).
        zarr::io::append_lock::LOCK_NAME,
    ];
    let mut chunks = Vec::new();
    for key in store.list_prefix(&prefix)? {
        let rel = &key[prefix.len()..];
        if metadata_names.contains(&rel) {
            continue;
        }
        match meta.parse_chunk_key(rel) {
            None => problems.push(format!(
                "{}: orphan key {key:?} (not a chunk key)",
                display(path)
            )),
            Some(index) if index.iter().zip(&grid).any(|(i, g)| i >= g) => problems.push(format!(
                "{}: chunk {key:?} lies outside the array (grid {})",
                display(path),
                shape_text(&grid)
            )),
            Some(index) => chunks.push((key, index)),
        }
    }
    let bar = Progress::new(chunks.len() as u64, unit_of(&meta), &display(path));
    let errors: Vec<String> = zarr::io::pool::pool()?.install(|| {
        chunks
            .par_iter()
            .filter_map(|(key, index)| {
                let result = array.chunk_region(index).and_then(|(start, count)| {
                    bar.inc(1, region_bytes(&count, meta.item_size()));
                    if meta.dtype.is_variable() {
                        array.read_vlen(&start, &count, Order::C).map(|_| ())
                    } else {
                        read_region(&array, &start, &count).map(|_| ())
                    }
                });
                result
                    .err()
                    .map(|e| format!("{}: chunk {key:?}: {e}", display(path)))
            })
            .collect()
    });
    bar.finish();
    problems.extend(errors);
    Ok(problems)
}

/// The temporary files killed writers left under the node of a directory store (see
/// [`crate::strays`]): stale ones are problems, or removed with `repair` (their keys
/// returned); those a writer may be using are named on stderr and left alone.
fn stray_files(
    node: &NodeArg,
    nodes: &[(String, NodeKind, usize)],
    repair: bool,
    problems: &mut Vec<(String, String)>,
) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    let Some(root) =
        zarr::store::local_path(&node.store)?.filter(|p| std::path::Path::new(p).is_dir())
    else {
        return Ok(removed);
    };
    for temp in crate::strays::find(std::path::Path::new(root), &node.path)? {
        // The deepest node whose directory holds it.
        let owner = nodes
            .iter()
            .map(|(path, _, _)| path.trim_matches('/'))
            .filter(|p| p.is_empty() || temp.key.starts_with(&format!("{p}/")))
            .max_by_key(|p| p.len())
            .map_or_else(|| display(&node.path), display);
        let key = &temp.key;
        match (&temp.live, repair) {
            (Some(why), _) => eprintln!(
                "zarrtool: {owner}: temporary file {key:?} left alone: a writer may be using \
                 it ({why})"
            ),
            (None, true) => match std::fs::remove_file(&temp.path) {
                Ok(()) => {
                    eprintln!(
                        "{owner}: removed the stray temporary file {key:?} ({})",
                        temp.writer
                    );
                    removed.push(key.clone());
                }
                Err(e) => problems.push((
                    owner.clone(),
                    format!("{owner}: stray temporary file {key:?}: cannot remove it: {e}"),
                )),
            },
            (None, false) => problems.push((
                owner.clone(),
                format!(
                    "{owner}: stray temporary file {key:?} of a writer that is gone ({}): \
                     --repair removes it",
                    temp.writer
                ),
            )),
        }
    }
    Ok(removed)
}

fn validate(node: &NodeArg, as_json: bool, repair: bool) -> Result<u8> {
    let store = open(&node.store, false)?;
    let nodes = walk(&store, &node.path)?;
    // Each problem with the node it is about, as shown.
    let mut problems: Vec<(String, String)> = Vec::new();
    let mut arrays = 0;
    // Groups whose consolidated metadata is stale.
    let mut stale = Vec::new();
    for (path, kind, _) in &nodes {
        match kind {
            NodeKind::Array => {
                arrays += 1;
                let found = validate_array(&store, path)?;
                problems.extend(found.into_iter().map(|p| (display(path), p)));
            }
            _ => {
                let shown = display(path);
                if let Err(e) =
                    Group::open(store.clone(), path, Mode::Read).and_then(|g| g.attributes())
                {
                    problems.push((shown.clone(), format!("{shown}: {e}")));
                }
                match crate::stale::stale_entries(store.as_ref(), path, &shown) {
                    Ok(found) => {
                        if !found.is_empty() {
                            stale.push(path.clone());
                        }
                        problems.extend(found.into_iter().map(|p| (shown.clone(), p)))
                    }
                    Err(e) => problems.push((shown.clone(), format!("{shown}: {e}"))),
                }
            }
        }
    }
    let removed = stray_files(node, &nodes, repair, &mut problems)?;
    if as_json {
        let listed: Vec<Value> = problems
            .iter()
            .map(|(shown, line)| finding(shown, line, "problem"))
            .collect();
        print_json(&json!({
            "store": mask_urls(&node.store),
            "path": display(&node.path),
            "nodes": nodes.len(),
            "arrays": arrays,
            "problems": listed,
            "stale_consolidated": stale.iter().map(|p| display(p)).collect::<Vec<_>>(),
            "removed": removed,
        }))?;
    } else {
        let mut out = Out::new();
        for (_, line) in &problems {
            out.line(line)?;
        }
        out.finish()?;
    }
    eprintln!(
        "{} nodes ({arrays} arrays) checked: {} problem{}",
        nodes.len(),
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
    for path in &stale {
        eprintln!(
            "the consolidated metadata of {} is stale: `zarrtool consolidate {} {}` rewrites it",
            display(path),
            node.store,
            display(path)
        );
    }
    Ok(if problems.is_empty() { 0 } else { FOUND })
}

/// Compares two arrays by value, block by block; returns the differences found.
fn diff_arrays(left: &Array, right: &Array, name: &str) -> Result<Vec<String>> {
    let (a, b) = (left.metadata(), right.metadata());
    if a.shape != b.shape {
        return Ok(vec![format!(
            "{name}: shape {} != {}",
            shape_text(&a.shape),
            shape_text(&b.shape)
        )]);
    }
    if a.dtype.element_type() != b.dtype.element_type() || a.item_size() != b.item_size() {
        return Ok(vec![format!(
            "{name}: dtype {} != {}",
            a.dtype.to_v2(),
            b.dtype.to_v2()
        )]);
    }
    let cells = left.region_chunks(&vec![0; a.rank()], &a.shape)?;
    let mut differing = 0u64;
    let mut first: Option<Vec<u64>> = None;
    let bar = Progress::new(cells.len() as u64, unit_of(&a), name);
    for index in &cells {
        let (start, count) = left.chunk_region(index)?;
        let same = if a.dtype.is_variable() {
            let (x, y) = (
                left.read_vlen(&start, &count, Order::C)?,
                right.read_vlen(&start, &count, Order::C)?,
            );
            let n = x.offsets.len() - 1;
            let mut bad = None;
            for i in 0..n {
                let xi = &x.data[x.offsets[i] as usize..x.offsets[i + 1] as usize];
                let yi = &y.data[y.offsets[i] as usize..y.offsets[i + 1] as usize];
                if xi != yi {
                    differing += 1;
                    bad.get_or_insert(i);
                }
            }
            bad
        } else {
            let x = read_region(left, &start, &count)?;
            let y = read_region(right, &start, &count)?;
            let size = a.item_size().max(1);
            let mut bad = None;
            for (i, (p, q)) in x.chunks_exact(size).zip(y.chunks_exact(size)).enumerate() {
                if p != q {
                    differing += 1;
                    bad.get_or_insert(i);
                }
            }
            bad
        };
        if let (Some(i), None) = (same, &first) {
            let mut at = vec![0u64; count.len()];
            let mut rest = i as u64;
            for d in (0..count.len()).rev() {
                at[d] = start[d] + rest % count[d];
                rest /= count[d];
            }
            first = Some(at);
        }
        bar.inc(1, region_bytes(&count, a.item_size()));
    }
    bar.finish();
    Ok(match first {
        None => Vec::new(),
        Some(at) => vec![format!(
            "{name}: {differing} element{} differ (first at [{}])",
            if differing == 1 { "" } else { "s" },
            at.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        )],
    })
}

/// A node's attributes by what they mean, for `diff --attrs`: NCZarr's keys left out, an
/// array's dimension names and CF missing value read from whichever encoding it has.
fn meaning(node: &dyn Node, array: Option<&Array>) -> Result<Map<String, Value>> {
    let mut attrs = nczarr::user_attributes(node.attributes()?);
    if let Some(array) = array {
        crate::attr_diff::by_meaning(&mut attrs, array.dimension_names()?, array.missing_value()?);
    }
    Ok(attrs)
}

/// Compares the nodes `(store, path)` of `left` and `right` (see [`crate::cli::Command::Diff`]).
fn diff(left: (&str, &str), right: (&str, &str), attrs: bool, as_json: bool) -> Result<u8> {
    let ((left, left_path), (right, right_path)) = (left, right);
    let (ls, rs) = (open_hierarchy(left)?.store, open_hierarchy(right)?.store);
    let (lp, rp) = (left_path.trim_matches('/'), right_path.trim_matches('/'));
    let rel = |base: &str, p: &str| p[base.len()..].trim_start_matches('/').to_string();
    let lnodes: Vec<(String, NodeKind)> = walk(&ls, lp)?
        .into_iter()
        .map(|(p, k, _)| (rel(lp, &p), k))
        .collect();
    let rnodes: Vec<(String, NodeKind)> = walk(&rs, rp)?
        .into_iter()
        .map(|(p, k, _)| (rel(rp, &p), k))
        .collect();
    // Each difference with the node it is about, as shown.
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, kind) in &lnodes {
        let shown = display(name);
        let about = |lines: Vec<String>| lines.into_iter().map(|l| (shown.clone(), l));
        match rnodes.iter().find(|(n, _)| n == name) {
            None => out.push((shown.clone(), format!("{shown}: only in the first"))),
            Some((_, k)) if k != kind => out.push((
                shown.clone(),
                format!("{shown}: an array in one, a group in the other"),
            )),
            Some(_) => {
                let (lpath, rpath) = (join_key(lp, name), join_key(rp, name));
                let (lnode, rnode) = (
                    open_node(ls.clone(), &lpath, false)?.0,
                    open_node(rs.clone(), &rpath, false)?.0,
                );
                let arrays = match kind {
                    NodeKind::Array => Some((
                        Array::open(ls.clone(), &lpath, Mode::Read)?,
                        Array::open(rs.clone(), &rpath, Mode::Read)?,
                    )),
                    _ => None,
                };
                if attrs {
                    let (l, r) = match &arrays {
                        Some((l, r)) => (
                            meaning(lnode.as_ref(), Some(l))?,
                            meaning(rnode.as_ref(), Some(r))?,
                        ),
                        None => (
                            meaning(lnode.as_ref(), None)?,
                            meaning(rnode.as_ref(), None)?,
                        ),
                    };
                    out.extend(about(crate::attr_diff::differences(&shown, &l, &r)));
                }
                if let Some((l, r)) = &arrays {
                    out.extend(about(diff_arrays(l, r, &shown)?));
                }
            }
        }
    }
    for (name, _) in &rnodes {
        if !lnodes.iter().any(|(n, _)| n == name) {
            let shown = display(name);
            out.push((shown.clone(), format!("{shown}: only in the second")));
        }
    }
    if as_json {
        let listed: Vec<Value> = out
            .iter()
            .map(|(shown, line)| finding(shown, line, "difference"))
            .collect();
        print_json(&json!({
            "left": place(left, left_path),
            "right": place(right, right_path),
            "same": out.is_empty(),
            "differences": listed,
        }))?;
    } else {
        let mut stdout = Out::new();
        for (_, line) in &out {
            stdout.line(line)?;
        }
        stdout.finish()?;
    }
    Ok(if out.is_empty() { 0 } else { FOUND })
}
