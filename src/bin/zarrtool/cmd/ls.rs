//! `zarrtool ls`: every node below a path, one line each or as JSON.

use crate::cli::NodeArg;
use crate::describe::display;
use crate::nodes::walk;
use crate::out::{print_json, Out};
use crate::source::open_hierarchy;
use crate::summary::{array_line, array_summary};
use serde_json::{json, Value};
use zarr::node::{Array, Mode, NodeKind};
use zarr::Result;

/// Lists the nodes at and below `node`, one line each, or with `as_json` as JSON.
pub fn run(node: &NodeArg, as_json: bool) -> Result<u8> {
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
