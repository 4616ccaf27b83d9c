//! `zarrtool create`: a new array or group.

use crate::cli::{Layout, NodeArg};
use crate::layout::apply_layout;
use crate::target::{planned_array, target_store, would_create};
use crate::values::{parse_json, parse_shape};
use serde_json::{Map, Value};
use zarr::dtype::ElementType;
use zarr::meta::Format;
use zarr::node::{ArrayBuilder, Group, Mode};
use zarr::{Error, Result};

#[allow(clippy::too_many_arguments)]
pub fn run(
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
