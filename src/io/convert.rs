//! Element conversions around the data path: `bfloat16` arrays read and written as
//! `float32`, and the narrow types (2-, 4- and 6-bit values in one byte) normalized on
//! read and checked on write.

use crate::dtype::DType;
use crate::error::{Error, Result};
use half::bf16;

/// Calls `f(k, offset)` for every element of a region of extents `count`: `k` its index in
/// C order, `offset` its place in a buffer with element `strides`.
pub fn for_each_offset(count: &[u64], strides: &[usize], mut f: impl FnMut(usize, usize)) {
    if count.contains(&0) {
        return;
    }
    let rank = count.len();
    let mut index = vec![0u64; rank];
    let mut offset = 0usize;
    let mut k = 0usize;
    loop {
        f(k, offset);
        k += 1;
        let mut d = rank;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            offset += strides[d];
            if index[d] < count[d] {
                break;
            }
            offset -= strides[d] * count[d] as usize;
            index[d] = 0;
        }
    }
}

/// Writes the `bfloat16` items of `dense` (native bits, C order) as `float32` into `buf` at
/// the element `strides` (exact: every bfloat16 is a float32).
pub fn bf16_to_f32(dense: &[u8], count: &[u64], strides: &[usize], buf: &mut [u8]) {
    for_each_offset(count, strides, |k, offset| {
        let bits = u16::from_ne_bytes([dense[2 * k], dense[2 * k + 1]]);
        let value = bf16::from_bits(bits).to_f32();
        buf[4 * offset..4 * offset + 4].copy_from_slice(&value.to_ne_bytes());
    });
}

/// The `float32` items of `buf` at the element `strides` as `bfloat16` (rounded to nearest,
/// ties to even; NaN stays NaN), dense in C order (allocated fallibly).
pub fn f32_to_bf16(
    buf: &[u8],
    count: &[u64],
    strides: &[usize],
    elements: usize,
) -> Result<Vec<u8>> {
    let mut dense = crate::error::try_zeroed(elements * 2, "bfloat16 items")?;
    for_each_offset(count, strides, |k, offset| {
        let value = f32::from_ne_bytes(buf[4 * offset..4 * offset + 4].try_into().expect("4"));
        dense[2 * k..2 * k + 2].copy_from_slice(&bf16::from_f32(value).to_bits().to_ne_bytes());
    });
    Ok(dense)
}

/// Puts every item of a narrow type read into `buf` in its canonical byte: the value's bits,
/// sign-extended for signed integers, the bits above it cleared otherwise (other writers
/// may leave anything there).
pub fn normalize_narrow(dtype: &DType, count: &[u64], strides: &[usize], buf: &mut [u8]) {
    let Some((bits, signed)) = dtype.narrow_bits() else {
        return;
    };
    let shift = 8 - bits;
    for_each_offset(count, strides, |_, offset| {
        let v = buf[offset];
        buf[offset] = if signed {
            (((v << shift) as i8) >> shift) as u8
        } else {
            v & (0xff >> shift)
        };
    });
}

/// Refuses narrow-type items that are not in their canonical byte (out of range integers,
/// float6/float4 bytes with high bits set), naming the first.
pub fn check_narrow(dtype: &DType, count: &[u64], strides: &[usize], buf: &[u8]) -> Result<()> {
    let Some((bits, signed)) = dtype.narrow_bits() else {
        return Ok(());
    };
    let mut bad = None;
    for_each_offset(count, strides, |k, offset| {
        let v = buf[offset];
        let ok = if signed {
            let i = v as i8 as i32;
            (-(1 << (bits - 1))..(1 << (bits - 1))).contains(&i)
        } else {
            v >> bits == 0
        };
        if !ok && bad.is_none() {
            bad = Some((k, v));
        }
    });
    match bad {
        None => Ok(()),
        Some((k, v)) => Err(Error::InvalidArg(format!(
            "element {k} of the region (byte {v:#04x}) is not a {} value: {}",
            dtype.element_type().name(),
            if signed {
                format!(
                    "{bits}-bit integers are sign-extended bytes from {} to {}",
                    -(1 << (bits - 1)),
                    (1 << (bits - 1)) - 1
                )
            } else {
                format!("the value must fit in the low {bits} bits")
            }
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_follow_strides_in_c_order() {
        let mut seen = Vec::new();
        for_each_offset(&[2, 3], &[1, 2], |k, o| seen.push((k, o)));
        assert_eq!(seen, [(0, 0), (1, 2), (2, 4), (3, 1), (4, 3), (5, 5)]);
        let mut none = 0;
        for_each_offset(&[2, 0], &[1, 2], |_, _| none += 1);
        assert_eq!(none, 0);
        let mut scalar = Vec::new();
        for_each_offset(&[], &[], |k, o| scalar.push((k, o)));
        assert_eq!(scalar, [(0, 0)]);
    }
}
