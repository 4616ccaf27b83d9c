//! `zarrtool tree`: the hierarchy below a path, drawn as a tree.

use crate::cli::NodeArg;
use crate::describe::display;
use crate::nodes::walk;
use crate::out::Out;
use crate::source::open_hierarchy;
use crate::summary::array_line;
use zarr::node::NodeKind;
use zarr::Result;

/// Draws the hierarchy at and below `node`.
pub fn run(node: &NodeArg) -> Result<u8> {
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
