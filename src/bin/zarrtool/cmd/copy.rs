//! `zarrtool copy`: a node and everything below it copied to another store or path,
//! optionally rechunked, resharded, recompressed or converted between formats; resumable.

use crate::describe::{display, place};
use crate::layout::{refuse_edges_with_shards, split_codecs};
use crate::nczarr;
use crate::nodes::{open, read_region, walk};
use crate::out::{self, print_json};
use crate::per_array::PerArray;
use crate::progress::{region_bytes, unit_of, Progress};
use crate::source::open_hierarchy;
use crate::summary::chunk_count;
use crate::values::{parse_json, parse_shape, shape_text, ChunkSpec};
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use zarr::dtype::{DataKind, ElementType};
use zarr::meta::{ArrayMeta, ChunkGrid, DimEdges, Format, Order};
use zarr::node::{cf, node_kind, Array, ArrayBuilder, Group, Mode, Node, NodeKind, DIMENSIONS_KEY};
use zarr::store::{join_key, Store};
use zarr::{Error, Result};

/// How `copy` lays out the arrays it writes.
pub struct CopySettings {
    chunks: PerArray<ChunkSpec>,
    shards: PerArray<Vec<u64>>,
    /// Store every copied array's chunks unsharded (`--no-shards`).
    unsharded: bool,
    compressor: Option<Value>,
    format: Option<Format>,
}

impl CopySettings {
    /// Reads `--rechunk`, `--shards`, `--no-shards`, `--compressor` and `--format`.
    pub fn parse(
        rechunk: &[String],
        shards: &[String],
        unsharded: bool,
        compressor: Option<&str>,
        format: Option<i32>,
    ) -> Result<Self> {
        Ok(CopySettings {
            chunks: PerArray::parse(rechunk, "--rechunk", ChunkSpec::parse)?,
            shards: PerArray::parse(shards, "--shards", parse_shape)?,
            unsharded,
            compressor: compressor
                .map(|c| parse_json(c, "--compressor"))
                .transpose()?,
            format: format.map(|f| Format::from_number(f.into())).transpose()?,
        })
    }
}

/// How one `copy` runs.
pub struct CopyRun {
    /// Replace what is at the target instead of resuming into it.
    pub overwrite: bool,
    /// Say what would be copied without writing.
    pub dry_run: bool,
    /// Print what was (or would be) copied as JSON.
    pub json: bool,
    /// Commit the copy with this message (the target an Icechunk repository).
    pub commit: Option<String>,
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
        None if !settings.unsharded && from.sharding().is_some() && format.is_v3() => {
            if let Some(chunks) = settings.chunks {
                refuse_shards_not_fitting(from, chunks)?;
                // A sharded source's edges are its shards'.
                if let ChunkGrid::Rectilinear(dims) = &from.grid {
                    builder.chunk_grid(dims.to_vec());
                }
            }
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

/// Refuses to rechunk a sharded array to `chunks` that its shards (kept, as no `--shards`
/// is given) cannot hold whole: a shard must be a multiple of the chunk shape. Says how to
/// choose `--shards`, or that `--no-shards` stores the chunks unsharded and how many.
fn refuse_shards_not_fitting(from: &ArrayMeta, chunks: &ChunkSpec) -> Result<()> {
    let shards = shape_text(&from.chunks);
    let chunks = match chunks {
        ChunkSpec::Shape(chunks) => chunks,
        ChunkSpec::Edges(_) => {
            return Err(Error::InvalidArg(format!(
                "--rechunk with chunk edges cannot keep the shards {shards}: give --no-shards \
                 to store the chunks unsharded"
            )))
        }
    };
    let shard_edges: Vec<Vec<u64>> = match &from.grid {
        ChunkGrid::Rectilinear(dims) => dims.iter().map(edge_lengths).collect(),
        _ => from.chunks.iter().map(|&edge| vec![edge]).collect(),
    };
    let fits = shard_edges
        .iter()
        .zip(chunks)
        .all(|(edges, &chunk)| chunk > 0 && edges.iter().all(|edge| edge % chunk == 0));
    if fits {
        return Ok(());
    }
    // Per dimension the multiple of the chunk nearest the shard (at least one chunk).
    let nearest: Vec<u64> = from
        .chunks
        .iter()
        .zip(chunks)
        .map(|(&shard, &chunk)| {
            let chunk = chunk.max(1);
            ((shard + chunk / 2) / chunk).max(1) * chunk
        })
        .collect();
    let unsharded: u64 = from
        .shape
        .iter()
        .zip(chunks)
        .map(|(&extent, &chunk)| extent.div_ceil(chunk.max(1)))
        .product();
    Err(Error::InvalidArg(format!(
        "the shards {shards} do not hold whole chunks of {} (--rechunk): give --shards a \
         multiple of the chunks (--shards {} is the nearest), or --no-shards to store the \
         {unsharded} chunks unsharded",
        shape_text(chunks),
        nearest
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    )))
}

/// The edge lengths of a rectilinear grid's dimension.
fn edge_lengths(dim: &DimEdges) -> Vec<u64> {
    match dim.runs() {
        Some(runs) => runs.iter().map(|run| run.edge).collect(),
        None => vec![dim.max_edge()],
    }
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

/// Names `path` in an error about it (the error keeps its kind and words).
fn about(path: &str, e: Error) -> Error {
    e.map_message(|message| format!("{}: {message}", display(path)))
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
            unsharded: settings.unsharded,
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
    /// Store the chunks unsharded (`--no-shards`).
    unsharded: bool,
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
    if array.metadata().sharding().is_some() && !format.is_v3() {
        eprintln!(
            "zarrtool: {}: Zarr v{} has no shards: the copy stores its {} chunks unsharded",
            display(array.path()),
            format.number(),
            meta.num_chunks()
        );
    }
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
pub fn run(
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
                    "would copy array {} to {} (Zarr v{}, {})",
                    display(from.path()),
                    display(to_path),
                    format.number(),
                    layout_text(meta)
                ),
            }
        }
        return Ok(0);
    }
    drop(existing);
    let dst = crate::nodes::open_with_options(target, Mode::Append)?;
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

/// How a dry run describes the layout of a copy: `4 chunks of 2 x 3`, or
/// `2 shards of 2 x 6, 8 chunks of 1 x 3`.
fn layout_text(meta: &ArrayMeta) -> String {
    let chunks = format!(
        "{} chunks of {}",
        chunk_count(meta),
        shape_text(meta.inner_chunks())
    );
    match meta.sharding() {
        Some(_) => format!(
            "{} shards of {}, {chunks}",
            meta.num_chunks(),
            shape_text(&meta.chunks)
        ),
        None => chunks,
    }
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
            "chunks_total": chunk_count(meta),
            "shards_total": meta.sharding().map(|_| meta.num_chunks()),
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
