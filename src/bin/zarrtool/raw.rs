//! Raw binary files (`import`, `export`): element order, byte order, and the slabs (one
//! row of chunks each) in which they are read and written.

use zarr::dtype::{swap_bytes, DType};

/// Permutes a whole array's items between C and Fortran order (`to_c` from F to C).
pub fn reorder(buf: &[u8], shape: &[u64], item: usize, to_c: bool) -> Vec<u8> {
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
pub fn to_native(dtype: &DType, buf: &mut [u8]) {
    if dtype.needs_swap() {
        swap_bytes(buf, dtype.swap_unit());
    }
}

/// The slabs of the region `start`/`count` along the first dimension, one per row of
/// chunks of the grid `chunks` (the whole region for a 0-d array or an empty region).
/// Each slab is a contiguous run of the region's items in C order.
pub fn slabs(chunks: &[u64], start: &[u64], count: &[u64]) -> Vec<(Vec<u64>, Vec<u64>)> {
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
pub fn file_slabs(chunks: &[u64], shape: &[u64], fortran: bool) -> Vec<(Vec<u64>, Vec<u64>)> {
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
pub fn chunks_touched(chunks: &[u64], start: &[u64], count: &[u64]) -> u64 {
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
