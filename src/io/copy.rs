//! N-d copies between strided element layouts, moving contiguous runs with one memcpy each.
//! Used to scatter decoded chunks into callers' buffers and gather callers' data into chunks.

use crate::error::{Error, Result};

/// A view of elements in a byte buffer: the element offset of the first element and the
/// element stride of each dimension.
#[derive(Debug, Clone)]
pub struct Layout<'a> {
    /// Offset of the first element, in elements.
    pub offset: usize,
    /// Stride of each dimension, in elements.
    pub strides: &'a [usize],
}

/// A raw destination buffer that several threads write disjoint parts of.
#[derive(Debug, Clone, Copy)]
pub struct SharedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: callers only write disjoint element sets from different threads.
unsafe impl Send for SharedBuf {}
unsafe impl Sync for SharedBuf {}

impl SharedBuf {
    /// Wraps a buffer for disjoint concurrent writes.
    pub fn new(buf: &mut [u8]) -> Self {
        SharedBuf {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
        }
    }

    /// The start of the buffer.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A mutable slice of `len` bytes at `start`.
    ///
    /// # Safety
    /// No other thread may access those bytes while the slice lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice_mut(&self, start: usize, len: usize) -> Result<&mut [u8]> {
        if start.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(Error::Internal(format!(
                "slice {start}+{len} outside a buffer of {} bytes",
                self.len
            )));
        }
        Ok(std::slice::from_raw_parts_mut(self.ptr.add(start), len))
    }
}

/// One dimension of a copy after merging: extent and source/destination element strides.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Axis {
    extent: usize,
    src: usize,
    dst: usize,
}

/// Axes of a copy, inline up to 8 dimensions (no allocation per chunk).
type Axes = smallvec::SmallVec<[Axis; 8]>;

/// Merges dimensions that are contiguous in both layouts and drops extent-1 dimensions,
/// ordered outermost first by destination stride.
fn plan(extent: &[usize], src: &[usize], dst: &[usize]) -> Axes {
    let mut axes: Axes = (0..extent.len())
        .filter(|&d| extent[d] != 1)
        .map(|d| Axis {
            extent: extent[d],
            src: src[d],
            dst: dst[d],
        })
        .collect();
    axes.sort_by(|a, b| b.dst.cmp(&a.dst).then(b.src.cmp(&a.src)));
    let mut merged = Axes::new();
    for axis in axes {
        if let Some(last) = merged.last_mut() {
            if last.src == axis.src * axis.extent && last.dst == axis.dst * axis.extent {
                last.extent *= axis.extent;
                last.src = axis.src;
                last.dst = axis.dst;
                continue;
            }
        }
        merged.push(axis);
    }
    merged
}

/// Whether copying `extent` between the layouts is one contiguous run in both.
pub fn is_single_run(extent: &[usize], src: &[usize], dst: &[usize]) -> bool {
    let axes = plan(extent, src, dst);
    axes.is_empty() || (axes.len() == 1 && axes[0].src == 1 && axes[0].dst == 1)
}

/// The highest byte offset (exclusive) a layout reaches for `extent`.
fn end_byte(elem: usize, extent: &[usize], layout: &Layout) -> Option<usize> {
    let mut last = layout.offset;
    for (e, s) in extent.iter().zip(layout.strides) {
        last = last.checked_add((e - 1).checked_mul(*s)?)?;
    }
    last.checked_add(1)?.checked_mul(elem)
}

/// Copies the `extent`-shaped block of `elem`-byte elements from `src` to `dst`.
///
/// # Safety
/// `dst_ptr..dst_ptr+dst_len` must be valid for writes and not accessed by anyone else in the
/// elements this copy writes; `src` must not overlap those elements.
pub unsafe fn copy_raw(
    elem: usize,
    extent: &[usize],
    src: &[u8],
    src_layout: &Layout,
    dst_ptr: *mut u8,
    dst_len: usize,
    dst_layout: &Layout,
) -> Result<()> {
    if extent.contains(&0) {
        return Ok(());
    }
    let src_end = end_byte(elem, extent, src_layout);
    let dst_end = end_byte(elem, extent, dst_layout);
    if src_end.is_none_or(|e| e > src.len()) || dst_end.is_none_or(|e| e > dst_len) {
        return Err(Error::Internal("copy region exceeds its buffers".into()));
    }
    let axes = plan(extent, src_layout.strides, dst_layout.strides);
    run_axes(
        elem,
        &axes,
        src.as_ptr(),
        src_layout.offset,
        dst_ptr,
        dst_layout.offset,
    );
    Ok(())
}

/// Walks the merged axes (outermost first) with an odometer, copying one line of the
/// innermost axis per step.
unsafe fn run_axes(
    elem: usize,
    axes: &[Axis],
    src: *const u8,
    src_offset: usize,
    dst: *mut u8,
    dst_offset: usize,
) {
    let (inner, outer) = match axes.split_last() {
        Some((inner, outer)) => (*inner, outer),
        None => (
            Axis {
                extent: 1,
                src: 1,
                dst: 1,
            },
            &[][..],
        ),
    };
    let mut index: smallvec::SmallVec<[usize; 8]> = smallvec::smallvec![0; outer.len()];
    let (mut s, mut d) = (src_offset, dst_offset);
    loop {
        copy_line(elem, inner, src.add(s * elem), dst.add(d * elem));
        let mut k = outer.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            index[k] += 1;
            s += outer[k].src;
            d += outer[k].dst;
            if index[k] < outer[k].extent {
                break;
            }
            s -= outer[k].src * outer[k].extent;
            d -= outer[k].dst * outer[k].extent;
            index[k] = 0;
        }
    }
}

/// Copies one line of `axis.extent` elements.
unsafe fn copy_line(elem: usize, axis: Axis, src: *const u8, dst: *mut u8) {
    if axis.src == 1 && axis.dst == 1 {
        std::ptr::copy_nonoverlapping(src, dst, axis.extent * elem);
        return;
    }
    macro_rules! strided {
        ($t:ty) => {{
            let (s, d) = (src as *const $t, dst as *mut $t);
            for i in 0..axis.extent {
                d.add(i * axis.dst)
                    .write_unaligned(s.add(i * axis.src).read_unaligned());
            }
        }};
    }
    match elem {
        1 => strided!(u8),
        2 => strided!(u16),
        4 => strided!(u32),
        8 => strided!(u64),
        16 => strided!(u128),
        _ => {
            for i in 0..axis.extent {
                std::ptr::copy_nonoverlapping(
                    src.add(i * axis.src * elem),
                    dst.add(i * axis.dst * elem),
                    elem,
                );
            }
        }
    }
}

/// Safe copy between two slices.
pub fn copy(
    elem: usize,
    extent: &[usize],
    src: &[u8],
    src_layout: &Layout,
    dst: &mut [u8],
    dst_layout: &Layout,
) -> Result<()> {
    // SAFETY: `dst` is an exclusive borrow, so nobody else accesses it.
    unsafe {
        copy_raw(
            elem,
            extent,
            src,
            src_layout,
            dst.as_mut_ptr(),
            dst.len(),
            dst_layout,
        )
    }
}

/// Sets every element of the `extent` block of `dst` to `pattern` (one element's bytes).
///
/// # Safety
/// As for [`copy_raw`].
pub unsafe fn fill_raw(
    extent: &[usize],
    pattern: &[u8],
    dst_ptr: *mut u8,
    dst_len: usize,
    dst_layout: &Layout,
) -> Result<()> {
    let elem = pattern.len();
    if extent.contains(&0) {
        return Ok(());
    }
    if end_byte(elem, extent, dst_layout).is_none_or(|e| e > dst_len) {
        return Err(Error::Internal("fill region exceeds its buffer".into()));
    }
    // Source strides are all zero: every step reads the pattern again. A contiguous
    // innermost run of several elements reads from a buffer holding the pattern repeated to
    // the run's length (allocated fallibly: an element may be hundreds of MiB).
    let zeros: smallvec::SmallVec<[usize; 8]> = smallvec::smallvec![0; extent.len()];
    let mut axes = plan(extent, &zeros, dst_layout.strides);
    let mut run = Vec::new();
    let source: &[u8] = match axes.last_mut() {
        Some(inner) if inner.dst == 1 && inner.extent > 1 => {
            inner.src = 1;
            let len = inner.extent * elem;
            crate::error::try_reserve(&mut run, len, "a run of fill values")?;
            run.extend(pattern.iter().copied().cycle().take(len));
            &run
        }
        _ => pattern,
    };
    run_axes(elem, &axes, source.as_ptr(), 0, dst_ptr, dst_layout.offset);
    Ok(())
}

/// Sets all of `data` to `pattern` repeated.
pub fn fill(data: &mut [u8], pattern: &[u8]) {
    if pattern.iter().all(|&b| b == pattern[0]) {
        data.fill(pattern[0]);
    } else {
        data.chunks_exact_mut(pattern.len())
            .for_each(|c| c.copy_from_slice(pattern));
    }
}

/// Whether `data` is `pattern` repeated.
pub fn all_equal(data: &[u8], pattern: &[u8]) -> bool {
    if pattern.iter().all(|&b| b == pattern[0]) {
        return data.iter().all(|&b| b == pattern[0]);
    }
    data.chunks_exact(pattern.len()).all(|c| c == pattern)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::Order;

    #[test]
    fn c_to_f_transposes() {
        let shape = [2u64, 3];
        let src: Vec<u8> = (0..6).collect();
        let mut dst = vec![0u8; 6];
        let c = Order::C.strides(&shape);
        let f = Order::F.strides(&shape);
        copy(
            1,
            &[2, 3],
            &src,
            &Layout {
                offset: 0,
                strides: &c,
            },
            &mut dst,
            &Layout {
                offset: 0,
                strides: &f,
            },
        )
        .unwrap();
        assert_eq!(dst, vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn sub_block_copy_and_single_run_detection() {
        // Copy a 2x2 block at (1,1) of a 4x4 u16 array into a dense 2x2.
        let src: Vec<u8> = (0..16u16).flat_map(|v| v.to_ne_bytes()).collect();
        let mut dst = vec![0u8; 8];
        let s = Order::C.strides(&[4, 4]);
        let d = Order::C.strides(&[2, 2]);
        copy(
            2,
            &[2, 2],
            &src,
            &Layout {
                offset: 5,
                strides: &s,
            },
            &mut dst,
            &Layout {
                offset: 0,
                strides: &d,
            },
        )
        .unwrap();
        let got: Vec<u16> = dst
            .chunks(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(got, vec![5, 6, 9, 10]);
        assert!(!is_single_run(&[2, 2], &s, &d));
        assert!(is_single_run(&[2, 4], &s, &Order::C.strides(&[2, 4])));
        assert!(is_single_run(&[1, 4], &s, &d));
        assert!(copy(
            2,
            &[3, 3],
            &src,
            &Layout {
                offset: 5,
                strides: &s
            },
            &mut dst,
            &Layout {
                offset: 0,
                strides: &d
            }
        )
        .is_err());
    }

    #[test]
    fn fill_sets_only_the_block() {
        let mut dst = vec![0u8; 16];
        let s = Order::C.strides(&[4, 4]);
        unsafe {
            fill_raw(
                &[2, 3],
                &[7],
                dst.as_mut_ptr(),
                16,
                &Layout {
                    offset: 1,
                    strides: &s,
                },
            )
            .unwrap()
        };
        assert_eq!(dst, vec![0, 7, 7, 7, 0, 7, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0]);
        let f = Order::F.strides(&[4, 4]);
        let mut dst = vec![0u8; 16];
        unsafe {
            fill_raw(
                &[4, 4],
                &[9],
                dst.as_mut_ptr(),
                16,
                &Layout {
                    offset: 0,
                    strides: &f,
                },
            )
            .unwrap()
        };
        assert!(all_equal(&dst, &[9]));
        assert!(!all_equal(&[1, 2, 1, 2, 1, 3], &[1, 2]));
    }
}
