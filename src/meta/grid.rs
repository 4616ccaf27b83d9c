//! The chunk grid: regular (every chunk of one shape, [`ArrayMeta::chunks`]) or rectilinear
//! (Zarr v3's `rectilinear` chunk grid extension: per dimension, a list of chunk edge
//! lengths, or one length repeated).
//!
//! Edges are kept as runs of equal lengths, so a dimension of millions of equal chunks costs
//! one entry; a run is found by binary search. The regular grid stays plain arithmetic.
//!
//! [`ArrayMeta::chunks`]: super::ArrayMeta::chunks

use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::sync::Arc;

/// Most entries (edges and run-length pairs, over all dimensions) a rectilinear grid's
/// document may list: more is refused when the metadata is read.
pub const MAX_GRID_ENTRIES: usize = 1 << 24;

/// How the chunks of an array's grid are laid out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ChunkGrid {
    /// Every chunk has the shape `ArrayMeta::chunks` (the last ones clipped by the shape).
    #[default]
    Regular,
    /// Per-dimension edges (`ArrayMeta::chunks` then holds the largest edge of each).
    Rectilinear(Arc<Vec<DimEdges>>),
}

/// The chunk edges along one dimension of a rectilinear grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimEdges {
    /// One edge length repeated as far as the array reaches (an integer in the document).
    Regular(u64),
    /// Explicit edges as runs of equal lengths, in order (a list in the document).
    Runs(Vec<Run>),
}

/// `count` consecutive chunks of edge length `edge`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Edge length of each chunk of the run (≥ 1).
    pub edge: u64,
    /// Number of chunks in the run (≥ 1).
    pub count: u64,
    /// Index of the run's first chunk along the dimension.
    first: u64,
    /// Array index where the run's first chunk starts.
    start: u64,
}

impl DimEdges {
    /// Builds runs from `(edge, count)` pairs, merging neighbours of equal edges; `None`
    /// when a zero appears or the edges' sum or count overflows 64 bits.
    pub fn from_runs(pairs: impl IntoIterator<Item = (u64, u64)>) -> Option<Self> {
        let mut runs: Vec<Run> = Vec::new();
        let (mut first, mut start) = (0u64, 0u64);
        for (edge, count) in pairs {
            if edge == 0 || count == 0 {
                return None;
            }
            let length = edge.checked_mul(count)?;
            match runs.last_mut() {
                Some(last) if last.edge == edge => last.count = last.count.checked_add(count)?,
                _ => runs.push(Run {
                    edge,
                    count,
                    first,
                    start,
                }),
            }
            first = first.checked_add(count)?;
            start = start.checked_add(length)?;
        }
        (!runs.is_empty()).then_some(DimEdges::Runs(runs))
    }

    /// The runs of explicit edges (`None` for a repeated length).
    pub fn runs(&self) -> Option<&[Run]> {
        match self {
            DimEdges::Regular(_) => None,
            DimEdges::Runs(runs) => Some(runs),
        }
    }

    /// Sum of the explicit edges (`None`: a repeated length reaches any extent).
    pub fn span(&self) -> Option<u64> {
        let last = self.runs()?.last()?;
        Some(last.start + last.edge * last.count)
    }

    /// The largest edge.
    pub fn max_edge(&self) -> u64 {
        match self {
            DimEdges::Regular(m) => *m,
            DimEdges::Runs(runs) => runs.iter().map(|r| r.edge).max().unwrap_or(1),
        }
    }

    /// The chunk holding array index `i` (which the edges reach).
    pub fn chunk_of(&self, i: u64) -> u64 {
        match self {
            DimEdges::Regular(m) => i / m,
            DimEdges::Runs(runs) => {
                let run = &runs[runs.partition_point(|r| r.start <= i).saturating_sub(1)];
                run.first + (i - run.start) / run.edge
            }
        }
    }

    /// The first array index and the edge of chunk `c` (one the edges list).
    pub fn chunk_span(&self, c: u64) -> (u64, u64) {
        match self {
            DimEdges::Regular(m) => (c * m, *m),
            DimEdges::Runs(runs) => {
                let run = &runs[runs.partition_point(|r| r.first <= c).saturating_sub(1)];
                (run.start + (c - run.first) * run.edge, run.edge)
            }
        }
    }

    /// Number of chunks holding elements of an extent of `extent`.
    pub fn chunks_along(&self, extent: u64) -> u64 {
        if extent == 0 {
            0
        } else {
            self.chunk_of(extent - 1) + 1
        }
    }

    /// The edges after the extent changed to `extent`: explicit edges grow by one edge
    /// covering what lies beyond their sum, and lose the edges wholly beyond a smaller
    /// extent (the first edge always stays); a repeated length stays.
    pub fn resized(&self, extent: u64) -> Option<Self> {
        let DimEdges::Runs(runs) = self else {
            return Some(self.clone());
        };
        let span = self.span()?;
        let pairs = runs.iter().map(|r| (r.edge, r.count));
        if extent > span {
            return Self::from_runs(pairs.chain([(extent - span, 1)]));
        }
        let keep = self.chunks_along(extent).max(1);
        let mut left = keep;
        let kept: Vec<(u64, u64)> = pairs
            .map_while(|(edge, count)| {
                let take = count.min(left);
                left -= take;
                (take > 0).then_some((edge, take))
            })
            .collect();
        Self::from_runs(kept)
    }

    /// The edges as `(edge, count)` runs for the chunks holding elements of `extent`.
    pub fn runs_within(&self, extent: u64) -> Vec<(u64, u64)> {
        let n = self.chunks_along(extent);
        match self {
            DimEdges::Regular(m) => match n {
                0 => Vec::new(),
                n => vec![(*m, n)],
            },
            DimEdges::Runs(runs) => runs
                .iter()
                .filter(|r| r.first < n)
                .map(|r| (r.edge, r.count.min(n - r.first)))
                .collect(),
        }
    }

    /// The document form: an integer, or a list of edges with runs of two or more as
    /// `[edge, count]` pairs.
    pub fn to_json(&self) -> Value {
        match self {
            DimEdges::Regular(m) => json!(m),
            DimEdges::Runs(runs) => runs
                .iter()
                .map(|r| match r.count {
                    1 => json!(r.edge),
                    n => json!([r.edge, n]),
                })
                .collect(),
        }
    }

    /// Parses one dimension of `chunk_shapes` (`dim` names it in errors), counting its
    /// entries into `entries`, refused past [`MAX_GRID_ENTRIES`].
    pub fn parse(value: &Value, dim: usize, entries: &mut usize) -> Result<Self> {
        let bad = |what: String| {
            Error::Metadata(format!(
                "zarr.json: chunk_grid.configuration.chunk_shapes[{dim}] {what}"
            ))
        };
        let positive = |v: &Value| v.as_u64().filter(|&n| n >= 1);
        if let Value::Number(_) = value {
            let m =
                positive(value).ok_or_else(|| bad(format!("is {value}, not an integer ≥ 1")))?;
            *entries += 1;
            return Ok(DimEdges::Regular(m));
        }
        let items = value.as_array().ok_or_else(|| {
            bad("must be an integer or a list of edges and [edge, count] pairs".into())
        })?;
        if items.is_empty() {
            return Err(bad("lists no edges".into()));
        }
        *entries = entries.saturating_add(items.len());
        if *entries > MAX_GRID_ENTRIES {
            return Err(Error::Metadata(format!(
                "zarr.json: chunk_grid.configuration.chunk_shapes lists more than \
                 {MAX_GRID_ENTRIES} entries"
            )));
        }
        let mut pairs: Vec<(u64, u64)> = Vec::new();
        pairs
            .try_reserve_exact(items.len())
            .map_err(|_| crate::error::no_memory(items.len() * 16, "the chunk grid's edges"))?;
        for (k, item) in items.iter().enumerate() {
            let pair = match item {
                Value::Array(p) if p.len() == 2 => positive(&p[0]).zip(positive(&p[1])),
                Value::Array(_) => None,
                v => positive(v).map(|e| (e, 1)),
            };
            pairs.push(pair.ok_or_else(|| {
                bad(format!(
                    "entry {k} ({item}) is neither an integer ≥ 1 nor an [edge, count] pair \
                     of integers ≥ 1"
                ))
            })?);
        }
        Self::from_runs(pairs).ok_or_else(|| bad("has edges whose sum overflows 64 bits".into()))
    }
}

/// Parses a `chunk_shapes` list (one entry per dimension: an edge length, or a list of
/// edges and `[edge, count]` pairs), at most [`MAX_GRID_ENTRIES`] entries in all.
pub fn parse_chunk_shapes(value: &Value) -> Result<Vec<DimEdges>> {
    let dims = value.as_array().ok_or_else(|| {
        Error::Metadata(
            "zarr.json: chunk_grid configuration.chunk_shapes must be a list, one entry per \
             dimension"
                .into(),
        )
    })?;
    let mut entries = 0;
    dims.iter()
        .enumerate()
        .map(|(d, value)| DimEdges::parse(value, d, &mut entries))
        .collect()
}

/// Parses a rectilinear `chunk_grid` configuration for an array of `shape`: the edges of
/// each dimension, checked to reach the shape.
pub fn parse_rectilinear(config: &Value, shape: &[u64]) -> Result<Vec<DimEdges>> {
    let bad = |what: &str| Error::Metadata(format!("zarr.json: chunk_grid {what}"));
    let config = config
        .as_object()
        .ok_or_else(|| bad("\"rectilinear\" needs a configuration object"))?;
    match config.get("kind").and_then(Value::as_str) {
        Some("inline") => {}
        Some(kind) => {
            return Err(Error::Unsupported(format!(
                "zarr.json: rectilinear chunk grid kind {kind:?} is not supported (only \
                 \"inline\")"
            )))
        }
        None => return Err(bad("configuration.kind must be \"inline\"")),
    }
    let dims = parse_chunk_shapes(config.get("chunk_shapes").unwrap_or(&Value::Null))?;
    if dims.len() != shape.len() {
        return Err(Error::Metadata(format!(
            "zarr.json: chunk_grid.configuration.chunk_shapes has {} dimensions but shape has {}",
            dims.len(),
            shape.len()
        )));
    }
    for (d, (dim, &extent)) in dims.iter().zip(shape).enumerate() {
        check_reaches(dim, d, extent)?;
    }
    Ok(dims)
}

/// Refuses edges along dimension `d` whose sum is less than the extent.
pub fn check_reaches(dim: &DimEdges, d: usize, extent: u64) -> Result<()> {
    match dim.span() {
        Some(span) if span < extent => Err(Error::Metadata(format!(
            "chunk_grid: the edges of dimension {d} sum to {span}, less than the extent {extent}"
        ))),
        _ => Ok(()),
    }
}

/// The `chunk_grid` object of a rectilinear grid.
pub fn render_rectilinear(dims: &[DimEdges]) -> Value {
    let shapes: Vec<Value> = dims.iter().map(DimEdges::to_json).collect();
    json!({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": shapes}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(pairs: &[(u64, u64)]) -> DimEdges {
        DimEdges::from_runs(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn locates_chunks_by_runs() {
        // Edges 1, 1, 1, 3, 5, 5.
        let d = runs(&[(1, 3), (3, 1), (5, 2)]);
        let starts: Vec<_> = (0..6).map(|c| d.chunk_span(c)).collect();
        assert_eq!(starts, [(0, 1), (1, 1), (2, 1), (3, 3), (6, 5), (11, 5)]);
        let of: Vec<_> = (0..16).map(|i| d.chunk_of(i)).collect();
        assert_eq!(of, [0, 1, 2, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5]);
        assert_eq!(d.span(), Some(16));
        assert_eq!(d.chunks_along(12), 6);
        assert_eq!(d.chunks_along(11), 5);
        assert_eq!(d.chunks_along(0), 0);
        assert_eq!(d.max_edge(), 5);
    }

    #[test]
    fn ten_million_equal_chunks_are_one_run() {
        let d = runs(&[(7, 10_000_000)]);
        assert_eq!(d.runs().unwrap().len(), 1);
        assert_eq!(d.chunk_of(69_999_999), 9_999_999);
        assert_eq!(d.chunk_span(9_999_999), (69_999_993, 7));
    }

    #[test]
    fn resizing_adds_or_drops_edges() {
        let d = runs(&[(4, 2), (3, 1)]);
        assert_eq!(d.resized(15), Some(runs(&[(4, 2), (3, 1), (4, 1)])));
        assert_eq!(d.resized(5), Some(runs(&[(4, 2)])));
        assert_eq!(d.resized(0), Some(runs(&[(4, 1)])));
        assert_eq!(d.resized(11), Some(d.clone()));
        assert_eq!(
            DimEdges::Regular(3).resized(100),
            Some(DimEdges::Regular(3))
        );
    }

    #[test]
    fn entries_past_the_bound_are_refused() {
        let mut entries = MAX_GRID_ENTRIES - 1;
        let err = DimEdges::parse(&json!([1, [2, 3]]), 0, &mut entries).unwrap_err();
        assert!(
            err.to_string().contains("more than 16777216 entries"),
            "{err}"
        );
        let mut entries = MAX_GRID_ENTRIES - 2;
        assert!(DimEdges::parse(&json!([1, [2, 3]]), 0, &mut entries).is_ok());
    }

    #[test]
    fn parses_every_form_of_the_spec_example() {
        let doc = json!({"kind": "inline", "chunk_shapes": [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]});
        let dims = parse_rectilinear(&doc, &[6, 6, 6, 6, 6]).unwrap();
        assert_eq!(dims[0], DimEdges::Regular(4));
        assert_eq!(dims[1], runs(&[(1, 1), (2, 1), (3, 1)]));
        assert_eq!(dims[2], runs(&[(4, 2)]));
        assert_eq!(dims[3], runs(&[(1, 3), (3, 1)]));
        assert_eq!(dims[4], runs(&[(4, 3)]));
        let rendered = render_rectilinear(&dims);
        assert_eq!(
            rendered["configuration"]["chunk_shapes"],
            json!([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [[4, 3]]])
        );
    }
}
