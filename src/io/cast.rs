//! Numeric conversion between element types with netCDF's rules (`nc_get_vara_double` and
//! friends): every element is converted; one that the target cannot hold (an integer
//! outside its range, a finite float beyond its magnitude, NaN or an infinity to an
//! integer) is counted, and stored as Rust's `as` gives it (saturated, NaN as 0). Floats to
//! integers truncate toward zero; bool is 0 or 1 both ways (a bool target takes only
//! values that truncate to 0 or 1).

use crate::dtype::ElementType;
use crate::error::{Error, Result};

/// A plain number type: its size and how it moves to and from native-order bytes.
pub(crate) trait Native: Copy {
    /// Bytes per element.
    const SIZE: usize;
    /// The element at the start of `bytes` (native byte order).
    fn load(bytes: &[u8]) -> Self;
    /// Writes the element to the start of `bytes`.
    fn store(self, bytes: &mut [u8]);
}

macro_rules! native {
    ($($t:ty),*) => {$(
        impl Native for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn load(bytes: &[u8]) -> Self {
                <$t>::from_ne_bytes(bytes[..Self::SIZE].try_into().unwrap())
            }
            #[inline(always)]
            fn store(self, bytes: &mut [u8]) {
                bytes[..Self::SIZE].copy_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}
native!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// One numeric element type, converted from the two forms every element passes through
/// (an exact integer or a double).
trait Num: Native {
    /// Converts `self` to `T`, and whether `T` holds it.
    fn cast<T: Num>(self) -> (T, bool);
    /// An integer value as this type, and whether it fits.
    fn from_int(v: i128) -> (Self, bool);
    /// A float value as this type, and whether it fits.
    fn from_float(v: f64) -> (Self, bool);
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)]
            fn cast<T: Num>(self) -> (T, bool) {
                T::from_int(self as i128)
            }
            #[inline(always)]
            fn from_int(v: i128) -> (Self, bool) {
                let c = v.clamp(<$t>::MIN as i128, <$t>::MAX as i128);
                (c as $t, c == v)
            }
            #[inline(always)]
            fn from_float(v: f64) -> (Self, bool) {
                // The range in exact powers of two: MIN..=MAX holds t iff LO <= t < HI.
                const LO: f64 = <$t>::MIN as f64;
                const HI: f64 = (<$t>::MAX as u128 + 1) as f64;
                let t = v.trunc();
                (v as $t, (LO..HI).contains(&t))
            }
        }
    )*};
}
integer!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)]
            fn cast<T: Num>(self) -> (T, bool) {
                T::from_float(self as f64)
            }
            #[inline(always)]
            fn from_int(v: i128) -> (Self, bool) {
                (v as $t, true)
            }
            #[inline(always)]
            fn from_float(v: f64) -> (Self, bool) {
                let c = v as $t;
                // Only a finite value beyond the type's magnitude does not fit.
                (c, c.is_finite() || !v.is_finite())
            }
        }
    )*};
}
float!(f32, f64);

/// bool, one byte: nonzero reads as 1.
#[derive(Clone, Copy)]
struct Flag(u8);

impl Native for Flag {
    const SIZE: usize = 1;
    #[inline(always)]
    fn load(bytes: &[u8]) -> Self {
        Flag((bytes[0] != 0) as u8)
    }
    #[inline(always)]
    fn store(self, bytes: &mut [u8]) {
        bytes[0] = self.0;
    }
}

impl Num for Flag {
    #[inline(always)]
    fn cast<T: Num>(self) -> (T, bool) {
        T::from_int(self.0 as i128)
    }
    #[inline(always)]
    fn from_int(v: i128) -> (Self, bool) {
        (Flag((v != 0) as u8), v == 0 || v == 1)
    }
    #[inline(always)]
    fn from_float(v: f64) -> (Self, bool) {
        let t = v.trunc();
        (Flag((t != 0.0 && !t.is_nan()) as u8), t == 0.0 || t == 1.0)
    }
}

/// Converts the elements of `src` (type `S`) into `dst` (type `T`), position for position;
/// returns how many did not fit and the index of the first.
fn run<S: Num, T: Num>(src: &[u8], dst: &mut [u8]) -> (usize, Option<usize>) {
    let mut bad = 0usize;
    for (s, d) in src.chunks_exact(S::SIZE).zip(dst.chunks_exact_mut(T::SIZE)) {
        let (v, fits) = S::load(s).cast::<T>();
        v.store(d);
        bad += !fits as usize;
    }
    if bad == 0 {
        return (0, None);
    }
    let first = src
        .chunks_exact(S::SIZE)
        .position(|s| !S::load(s).cast::<T>().1);
    (bad, first)
}

/// Converts the first `n` elements of `buf`, items of `S` packed at its start, into `T`
/// items in place (`T` at least as wide as `S`): from the last, so each item is read before
/// its bytes are overwritten. Returns how many did not fit and the index of the first.
fn run_in_place<S: Num, T: Num>(buf: &mut [u8], n: usize) -> (usize, Option<usize>) {
    let (mut bad, mut first) = (0usize, None);
    for i in (0..n).rev() {
        let (v, fits) = S::load(&buf[i * S::SIZE..]).cast::<T>();
        v.store(&mut buf[i * T::SIZE..]);
        if !fits {
            bad += 1;
            first = Some(i);
        }
    }
    (bad, first)
}

/// Calls `$body` with `$t` bound to the Rust type of a numeric element type, or returns
/// `$other` for the others.
macro_rules! with_type {
    ($elem:expr, $t:ident => $body:expr, $other:expr) => {
        match $elem {
            ElementType::Bool => {
                type $t = Flag;
                $body
            }
            ElementType::Int8 => {
                type $t = i8;
                $body
            }
            ElementType::Int16 => {
                type $t = i16;
                $body
            }
            ElementType::Int32 => {
                type $t = i32;
                $body
            }
            ElementType::Int64 => {
                type $t = i64;
                $body
            }
            ElementType::UInt8 => {
                type $t = u8;
                $body
            }
            ElementType::UInt16 => {
                type $t = u16;
                $body
            }
            ElementType::UInt32 => {
                type $t = u32;
                $body
            }
            ElementType::UInt64 => {
                type $t = u64;
                $body
            }
            ElementType::Float32 => {
                type $t = f32;
                $body
            }
            ElementType::Float64 => {
                type $t = f64;
                $body
            }
            _ => $other,
        }
    };
}

/// Whether `elem` is one of the types converted here: bool, the 8- to 64-bit integers,
/// float32 and float64.
pub fn convertible(elem: ElementType) -> bool {
    use ElementType::*;
    matches!(
        elem,
        Bool | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float32 | Float64
    )
}

/// The refusal of an element type that is not converted, naming `role` ("array" or
/// "buffer").
pub fn unsupported(elem: ElementType, role: &str) -> Error {
    Error::DtypeMismatch(format!(
        "{role} type {} is not converted: conversions are between bool, the integers and \
         float32/float64",
        elem.name()
    ))
}

/// Converts `src` (elements of `from`) into `dst` (as many elements of `to`), position for
/// position. Every element is converted; when some do not fit the target, returns
/// [`Error::Range`] counting them and naming the first (its index in the buffer).
pub fn convert(from: ElementType, to: ElementType, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let (bad, first) = with_type!(from, S => with_type!(to, T => run::<S, T>(src, dst),
        return Err(unsupported(to, "target"))), return Err(unsupported(from, "source")));
    range_result(bad, first, src.len() / from.size(), from, to)
}

/// As [`convert`] in place: `buf` holds `n` items of `from` at its start and gets `n`
/// items of `to`, which must be at least as wide (no temporary buffer).
pub fn convert_in_place(
    from: ElementType,
    to: ElementType,
    buf: &mut [u8],
    n: usize,
) -> Result<()> {
    if to.size() < from.size() || buf.len() < n.saturating_mul(to.size()) {
        return Err(Error::Internal(format!(
            "in-place conversion of {n} {} items to {} in {} bytes",
            from.name(),
            to.name(),
            buf.len()
        )));
    }
    let (bad, first) = with_type!(from, S => with_type!(to, T => run_in_place::<S, T>(buf, n),
        return Err(unsupported(to, "target"))), return Err(unsupported(from, "source")));
    range_result(bad, first, n, from, to)
}

/// `Ok`, or the [`Error::Range`] of `bad` of `n` elements that did not fit, the first at
/// `first`.
fn range_result(
    bad: usize,
    first: Option<usize>,
    n: usize,
    from: ElementType,
    to: ElementType,
) -> Result<()> {
    match first {
        None => Ok(()),
        Some(index) => Err(Error::Range(format!(
            "{bad} of {n} elements of {} do not fit in {} (the first at element {index})",
            from.name(),
            to.name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElementType::*;

    const TYPES: [ElementType; 11] = [
        Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float32, Float64,
    ];

    /// A value as exact integer or double.
    #[derive(Clone, Copy, Debug)]
    enum V {
        I(i128),
        F(f64),
    }

    fn int_range(t: ElementType) -> Option<(i128, i128)> {
        Some(match t {
            Bool => (0, 1),
            Int8 => (i8::MIN as i128, i8::MAX as i128),
            Int16 => (i16::MIN as i128, i16::MAX as i128),
            Int32 => (i32::MIN as i128, i32::MAX as i128),
            Int64 => (i64::MIN as i128, i64::MAX as i128),
            UInt8 => (0, u8::MAX as i128),
            UInt16 => (0, u16::MAX as i128),
            UInt32 => (0, u32::MAX as i128),
            UInt64 => (0, u64::MAX as i128),
            _ => return None,
        })
    }

    /// The bytes of `v` in type `t`, when `t` holds it exactly.
    fn encode(t: ElementType, v: V) -> Option<Vec<u8>> {
        match (t, v) {
            (Float32, V::F(f)) if (f as f32 as f64 == f) || f.is_nan() => {
                Some((f as f32).to_ne_bytes().to_vec())
            }
            (Float64, V::F(f)) => Some(f.to_ne_bytes().to_vec()),
            (Float32, V::I(i)) if i as f32 as i128 == i && (i as f32).is_finite() => {
                Some((i as f32).to_ne_bytes().to_vec())
            }
            (Float64, V::I(i)) if i as f64 as i128 == i => Some((i as f64).to_ne_bytes().to_vec()),
            (_, V::I(i)) => {
                let (lo, hi) = int_range(t)?;
                (lo..=hi)
                    .contains(&i)
                    .then(|| i.to_le_bytes()[..t.size()].to_vec())
                    .map(|mut b| {
                        if cfg!(target_endian = "big") {
                            b.reverse();
                        }
                        b
                    })
            }
            _ => None,
        }
    }

    /// What the conversion of `v` to `t` must give: its bytes when it fits.
    fn expected(t: ElementType, v: V) -> Option<Vec<u8>> {
        match (int_range(t), v) {
            (Some(_), V::F(f)) if !f.is_finite() => None,
            (Some(_), V::F(f)) => encode(t, V::I(f.trunc() as i128)),
            (Some(_), V::I(_)) => encode(t, v),
            (None, V::I(i)) if t == Float32 => Some((i as f32).to_ne_bytes().to_vec()),
            (None, V::I(i)) => Some((i as f64).to_ne_bytes().to_vec()),
            (None, V::F(f)) if t == Float32 => {
                let c = f as f32;
                (c.is_finite() || !f.is_finite()).then(|| c.to_ne_bytes().to_vec())
            }
            (None, V::F(f)) => Some(f.to_ne_bytes().to_vec()),
        }
    }

    fn samples() -> Vec<V> {
        let mut values = vec![];
        for t in TYPES {
            if let Some((lo, hi)) = int_range(t) {
                values.extend([V::I(lo), V::I(hi), V::I(lo - 1), V::I(hi + 1)]);
            }
        }
        values.extend([0, 1, -1, 2, 100, -100, 1 << 24, (1 << 24) + 1].map(V::I));
        let floats = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            0.9,
            1.0,
            1.9,
            -1.9,
            2.5,
            127.9,
            128.0,
            -128.9,
            -129.0,
            255.9,
            256.0,
            300.7,
            -300.7,
            65535.5,
            2147483647.9,
            2147483648.0,
            -2147483648.9,
            4294967296.0,
            9.223372036854775e18,
            9.223372036854776e18,
            -9.223372036854776e18,
            1.8446744073709552e19,
            16777217.0,
            0.1,
            3.4028234663852886e38,
            3.4028235677973366e38,
            1e39,
            -1e39,
            1e300,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        values.extend(floats.map(V::F));
        values
    }

    #[test]
    fn every_pair_converts_as_netcdf_does() {
        let mut checked = 0;
        for from in TYPES {
            for to in TYPES {
                for v in samples() {
                    let Some(src) = encode(from, v) else { continue };
                    // What the source holds, as the reference sees it.
                    let held = match from {
                        Float32 => V::F(f32::from_ne_bytes(src[..].try_into().unwrap()) as f64),
                        Float64 => V::F(f64::from_ne_bytes(src[..].try_into().unwrap())),
                        _ => v,
                    };
                    let mut dst = vec![0xAB; to.size()];
                    let result = convert(from, to, &src, &mut dst);
                    let want = expected(to, held);
                    match (&want, &result) {
                        (Some(bytes), Ok(())) => assert_eq!(&dst, bytes, "{from:?}->{to:?} {v:?}"),
                        (None, Err(Error::Range(m))) => {
                            assert!(m.contains("1 of 1 elements"), "{m}")
                        }
                        _ => panic!("{from:?}->{to:?} {v:?}: {result:?}, expected {want:?}"),
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 2000, "{checked}");
    }

    #[test]
    fn in_place_agrees_with_copying_for_every_widening_pair() {
        for from in TYPES {
            for to in TYPES.into_iter().filter(|t| t.size() >= from.size()) {
                let items: Vec<Vec<u8>> = samples()
                    .into_iter()
                    .filter_map(|v| encode(from, v))
                    .collect();
                let src: Vec<u8> = items.concat();
                let n = items.len();
                let mut want = vec![0u8; n * to.size()];
                let expected = convert(from, to, &src, &mut want);
                let mut buf = vec![0u8; n * to.size()];
                buf[..src.len()].copy_from_slice(&src);
                let got = convert_in_place(from, to, &mut buf, n);
                assert_eq!(got, expected, "{from:?}->{to:?}");
                assert_eq!(buf, want, "{from:?}->{to:?}");
            }
        }
    }

    fn f64s(values: &[f64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }

    #[test]
    fn out_of_range_elements_are_counted_and_all_converted() {
        let src = f64s(&[1.9, f64::NAN, -2.7, 40000.0, f64::INFINITY, -1e10]);
        let mut dst = vec![0u8; 12];
        let err = convert(Float64, Int16, &src, &mut dst).unwrap_err();
        assert_eq!(
            err,
            Error::Range(
                "4 of 6 elements of float64 do not fit in int16 (the first at element 1)".into()
            )
        );
        let got: Vec<i16> = dst
            .chunks(2)
            .map(|c| i16::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, [1, 0, -2, i16::MAX, i16::MAX, i16::MIN]);
    }

    #[test]
    fn named_cases() {
        let one = |from, to, src: Vec<u8>| {
            let mut dst = vec![0u8; ElementType::size(to)];
            convert(from, to, &src, &mut dst).map(|()| dst)
        };
        // Truncation toward zero, infinities between floats, bool both ways.
        assert_eq!(
            one(Float64, Int32, f64s(&[-7.99])).unwrap(),
            (-7i32).to_ne_bytes()
        );
        assert_eq!(
            one(Float64, Float32, f64s(&[f64::NEG_INFINITY])).unwrap(),
            f32::NEG_INFINITY.to_ne_bytes()
        );
        assert!(matches!(
            one(Float64, Float32, f64s(&[1e39])),
            Err(Error::Range(_))
        ));
        assert!(matches!(
            one(Float64, UInt8, f64s(&[-1.0])),
            Err(Error::Range(_))
        ));
        assert_eq!(one(Float64, UInt8, f64s(&[-0.9])).unwrap(), [0]);
        assert_eq!(one(Bool, Float64, vec![1]).unwrap(), 1f64.to_ne_bytes());
        assert_eq!(one(Bool, Int8, vec![7]).unwrap(), [1]);
        assert!(matches!(
            one(Int16, Bool, 2i16.to_ne_bytes().to_vec()),
            Err(Error::Range(_))
        ));
        assert_eq!(
            one(UInt64, Float32, u64::MAX.to_ne_bytes().to_vec()).unwrap(),
            (u64::MAX as f32).to_ne_bytes()
        );
        // Types that are not converted are refused by name.
        let err = one(Float16, Float64, vec![0, 0]).unwrap_err();
        assert!(
            matches!(&err, Error::DtypeMismatch(m) if m.contains("float16")),
            "{err}"
        );
        let err = one(Float64, Complex64, f64s(&[0.0])).unwrap_err();
        assert!(
            matches!(&err, Error::DtypeMismatch(m) if m.contains("complex64")),
            "{err}"
        );
    }
}
