//! `zarrtool attrs get|set|del`: a node's attributes.

use crate::cli::AttrsAction;
use crate::describe::{display, node_type};
use crate::nczarr;
use crate::nodes::{open, open_node};
use crate::out::print_json;
use crate::source::open_hierarchy;
use crate::values::parse_json;
use serde_json::{json, Map, Value};
use zarr::node::{Node, NodeKind};
use zarr::store::Store;
use zarr::{Error, Result};

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

/// Gets, sets or deletes attributes, as `action` says.
pub fn run(action: AttrsAction) -> Result<u8> {
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
