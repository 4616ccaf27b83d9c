//! `zarrtool diff`: two arrays or trees compared by value (and by attributes).

use crate::describe::{display, place};
use crate::findings::{finding, FOUND};
use crate::nczarr;
use crate::nodes::{open_node, read_region, walk};
use crate::out::{print_json, Out};
use crate::progress::{region_bytes, unit_of, Progress};
use crate::source::open_hierarchy;
use crate::values::shape_text;
use serde_json::{json, Map, Value};
use zarr::meta::Order;
use zarr::node::{Array, Mode, Node, NodeKind};
use zarr::store::join_key;
use zarr::Result;

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
pub fn run(left: (&str, &str), right: (&str, &str), attrs: bool, as_json: bool) -> Result<u8> {
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
