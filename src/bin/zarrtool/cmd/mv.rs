//! `zarrtool mv`: a node moved inside a store.

use crate::describe::display;
use crate::nodes::open;
use zarr::node::{node_kind, Group, Mode, NodeKind};
use zarr::{Error, Result};

/// Moves the node at `from` to `to` in the store at `store` (with `dry_run`, says it would).
pub fn run(store: &str, from: &str, to: &str, dry_run: bool) -> Result<u8> {
    let s = open(store, !dry_run)?;
    if node_kind(s.as_ref(), from)? == NodeKind::None {
        return Err(Error::NotFound(format!("no node at {}", display(from))));
    }
    crate::overlap::refuse_move_over_source(&s, from, to)?;
    if dry_run {
        eprintln!("would move {} to {}", display(from), display(to));
        return Ok(0);
    }
    Group::open(s.clone(), "", Mode::ReadWrite)?.rename(from, to)?;
    crate::refresh::consolidated_above(s.as_ref(), from)?;
    crate::refresh::consolidated_above(s.as_ref(), to)?;
    s.close()?;
    Ok(0)
}
