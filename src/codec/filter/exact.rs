//! Exact values of the integer and float data types, for the registered array codecs
//! (`scale_offset`, `cast_value`): loading and storing items of a stored type, scalars in
//! Zarr v3's fill value encoding, and rounding a value to a type by a rounding mode.

use crate::dtype::minifloat::Specials;
use crate::dtype::{ByteOrder, DType, DataKind, ExtFloat};
use crate::error::{Error, Result};
use half::f16;
use serde_json::Value;

/// One value of an integer or float type, held exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Exact {
    /// An integer.
    Int(i128),
    /// A float (NaN and infinities included).
    Float(f64),
}

/// How a rounding step picks between the two nearest values of a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// The nearest, ties to the even one (IEEE 754 `roundTiesToEven`).
    NearestEven,
    /// Towards zero.
    TowardsZero,
    /// Towards positive infinity.
    TowardsPositive,
    /// Towards negative infinity.
    TowardsNegative,
    /// The nearest, ties away from zero.
    NearestAway,
}

impl Rounding {
    /// Every mode with its name in `cast_value`'s configuration.
    pub const NAMES: [(&'static str, Rounding); 5] = [
        ("nearest-even", Rounding::NearestEven),
        ("towards-zero", Rounding::TowardsZero),
        ("towards-positive", Rounding::TowardsPositive),
        ("towards-negative", Rounding::TowardsNegative),
        ("nearest-away", Rounding::NearestAway),
    ];

    /// Whether a magnitude whose discarded part is `rem` (half is `half`) of a quantum
    /// goes up to the next quantum; `odd` says whether the kept part is odd.
    fn rounds_up(self, negative: bool, rem: u128, half: Option<u128>, odd: bool) -> bool {
        // `half` is None when the quantum is beyond every `rem` (it is then below half).
        let cmp = half.map_or(std::cmp::Ordering::Less, |h| rem.cmp(&h));
        match self {
            Rounding::NearestEven => cmp.is_gt() || (cmp.is_eq() && odd),
            Rounding::NearestAway => cmp.is_ge(),
            Rounding::TowardsZero => false,
            Rounding::TowardsPositive => rem > 0 && !negative,
            Rounding::TowardsNegative => rem > 0 && negative,
        }
    }

    /// `f` (finite) rounded to an integer.
    fn to_integer(self, f: f64) -> f64 {
        match self {
            Rounding::NearestEven => f.round_ties_even(),
            Rounding::TowardsZero => f.trunc(),
            Rounding::TowardsPositive => f.ceil(),
            Rounding::TowardsNegative => f.floor(),
            Rounding::NearestAway => f.round(),
        }
    }
}

/// A binary float format.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloatFormat {
    /// Mantissa bits stored (without the implicit one).
    mant_bits: u32,
    /// Exponent of the smallest normal number.
    emin: i32,
    /// The largest finite value.
    max: f64,
    /// Whether it has infinities.
    inf: bool,
    /// Whether it has NaN.
    nan: bool,
    /// How its bits are laid out.
    bits: FloatBits,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum FloatBits {
    F16,
    F32,
    F64,
    Ext(ExtFloat),
}

/// How an integer or float type holds its values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Repr {
    /// An integer of `bits` bits, two's complement when signed.
    Int {
        /// Value bits.
        bits: u32,
        /// Whether it is signed.
        signed: bool,
    },
    /// A binary float.
    Float(FloatFormat),
}

/// An integer or float item type of a stored byte order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumItem {
    /// Its values.
    pub repr: Repr,
    /// Stored bytes of one item.
    pub size: usize,
    /// Most significant byte first.
    big: bool,
}

impl NumItem {
    /// The item type of `dtype`, or `None` unless it is an integer or float type
    /// (`float8_e8m0fnu`, which has no zero, is not one here).
    pub fn of(dtype: &DType) -> Option<Self> {
        let float = |mant_bits, emin, max, bits| {
            Repr::Float(FloatFormat {
                mant_bits,
                emin,
                max,
                inf: true,
                nan: true,
                bits,
            })
        };
        let (repr, size) = match &dtype.kind {
            DataKind::Int(n) | DataKind::UInt(n) => (
                Repr::Int {
                    bits: 8 * *n as u32,
                    signed: matches!(dtype.kind, DataKind::Int(_)),
                },
                *n,
            ),
            DataKind::NarrowInt { signed, bits } => (
                Repr::Int {
                    bits: *bits,
                    signed: *signed,
                },
                1,
            ),
            DataKind::Float(2) => (float(10, -14, 65504.0, FloatBits::F16), 2),
            DataKind::Float(4) => (float(23, -126, f32::MAX as f64, FloatBits::F32), 4),
            DataKind::Float(8) => (float(52, -1022, f64::MAX, FloatBits::F64), 8),
            DataKind::ExtFloat(t) if t.format().specials != Specials::UnsignedE8M0 => {
                let f = t.format();
                let max = (0..=t.mask())
                    .map(|b| t.to_f64(b))
                    .filter(|v| v.is_finite())
                    .fold(0.0, f64::max);
                let format = FloatFormat {
                    mant_bits: f.mant_bits,
                    emin: 1 - f.bias,
                    max,
                    inf: f.specials == Specials::Ieee,
                    nan: f.nan.is_some(),
                    bits: FloatBits::Ext(*t),
                };
                (Repr::Float(format), t.size())
            }
            _ => return None,
        };
        Some(NumItem {
            repr,
            size,
            big: dtype.order == ByteOrder::Big,
        })
    }

    /// Whether it is a float type with infinities.
    pub fn has_infinities(&self) -> bool {
        matches!(self.repr, Repr::Float(f) if f.inf)
    }

    /// Whether it is an integer type.
    pub fn is_int(&self) -> bool {
        matches!(self.repr, Repr::Int { .. })
    }

    /// The raw bits of the item at the start of `bytes`.
    fn raw(&self, bytes: &[u8]) -> u64 {
        let mut raw = [0u8; 8];
        raw[..self.size].copy_from_slice(&bytes[..self.size]);
        if self.big {
            raw[..self.size].reverse();
        }
        u64::from_le_bytes(raw)
    }

    /// Reads the item at the start of `bytes`.
    pub fn load(&self, bytes: &[u8]) -> Exact {
        let raw = self.raw(bytes);
        match self.repr {
            Repr::Int { bits, signed } => {
                let shift = 128 - bits;
                let v = (raw as u128) << shift;
                Exact::Int(if signed {
                    (v as i128) >> shift
                } else {
                    (v >> shift) as i128
                })
            }
            Repr::Float(f) => Exact::Float(match f.bits {
                FloatBits::F16 => f16::from_bits(raw as u16).to_f64(),
                FloatBits::F32 => f32::from_bits(raw as u32) as f64,
                FloatBits::F64 => f64::from_bits(raw),
                FloatBits::Ext(t) => t.to_f64(raw as u16),
            }),
        }
    }

    /// Writes `v`, a value of this type (an integer in range, or a float it holds
    /// exactly), to the start of `out`.
    pub fn store(&self, v: Exact, out: &mut [u8]) -> Result<()> {
        let raw: u64 = match (self.repr, v) {
            (Repr::Int { bits, .. }, Exact::Int(i)) => (i as u64) & (u64::MAX >> (64 - bits)),
            (Repr::Float(f), Exact::Float(x)) => match f.bits {
                FloatBits::F16 => f16::from_f64(x).to_bits() as u64,
                FloatBits::F32 => (x as f32).to_bits() as u64,
                FloatBits::F64 => x.to_bits(),
                FloatBits::Ext(t) => t.from_f64(x).map_err(Error::Codec)? as u64,
            },
            _ => return Err(Error::Internal("a value stored as the wrong kind".into())),
        };
        let le = raw.to_le_bytes();
        out[..self.size].copy_from_slice(&le[..self.size]);
        if self.big {
            out[..self.size].reverse();
        }
        Ok(())
    }

    /// The smallest and largest value of an integer type.
    fn int_range(bits: u32, signed: bool) -> (i128, i128) {
        match signed {
            true => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
            false => (0, (1i128 << bits) - 1),
        }
    }

    /// Parses a scalar in Zarr v3's fill value encoding for this type: an integer for
    /// integer types; a number, `"NaN"`, `"Infinity"`, `"-Infinity"` or `"0x…"` bits for
    /// float types. The value must be one the type holds.
    pub fn parse_scalar(&self, value: &Value) -> std::result::Result<Exact, String> {
        match self.repr {
            Repr::Int { bits, signed } => {
                let i = value
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| value.as_u64().map(i128::from))
                    .ok_or_else(|| format!("{value} is not an integer"))?;
                let (min, max) = Self::int_range(bits, signed);
                if i < min || i > max {
                    return Err(format!("{i} is outside {min}..={max}"));
                }
                Ok(Exact::Int(i))
            }
            Repr::Float(_) => {
                let x = match value {
                    Value::Number(n) => n.as_f64().ok_or_else(|| format!("{n} is not a number"))?,
                    Value::String(s) => match s.as_str() {
                        "NaN" => f64::NAN,
                        "Infinity" | "+Infinity" => f64::INFINITY,
                        "-Infinity" => f64::NEG_INFINITY,
                        hex => {
                            let digits = hex
                                .strip_prefix("0x")
                                .filter(|d| d.len() == 2 * self.size)
                                .ok_or_else(|| format!("{value} is not a float of this type"))?;
                            let raw = u64::from_str_radix(digits, 16)
                                .map_err(|_| format!("{value} is not hexadecimal bits"))?;
                            let little = NumItem {
                                big: false,
                                ..*self
                            };
                            return Ok(little.load(&raw.to_le_bytes()));
                        }
                    },
                    _ => return Err(format!("{value} is not a number")),
                };
                // A number is read as the nearest value of the type, as a fill value is.
                convert(
                    Exact::Float(x),
                    self,
                    Rounding::NearestEven,
                    OutOfRange::Error,
                )
            }
        }
    }
}

/// `2^e` times `x`, exactly when the result is a normal or subnormal f64 with `x`'s
/// significant bits.
fn ldexp(mut x: f64, mut e: i32) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e)
}

/// The sign, and the magnitude as `m · 2^e`, of a finite value.
fn split(v: Exact) -> (bool, u128, i32) {
    match v {
        Exact::Int(i) => (i < 0, i.unsigned_abs(), 0),
        Exact::Float(x) => {
            let bits = x.to_bits();
            let exp = ((bits >> 52) & 0x7ff) as i32;
            let frac = bits & ((1u64 << 52) - 1);
            let (m, e) = match exp {
                0 => (frac, -1074),
                _ => (frac | (1u64 << 52), exp - 1075),
            };
            (x.is_sign_negative(), m as u128, e)
        }
    }
}

/// `v` rounded to the precision of float format `f` by `mode`, as an f64; a magnitude
/// past the format's largest finite value is kept as it rounded (or infinity, when it
/// is past f64's range), for the caller to treat as out of range. NaN and infinities are
/// returned as they are.
pub fn round_to_float(
    v: Exact,
    f: FloatFormat,
    mode: Rounding,
) -> std::result::Result<f64, String> {
    if let Exact::Float(x) = v {
        if !x.is_finite() {
            return Ok(x);
        }
    }
    let (negative, m, e) = split(v);
    let signed = |x: f64| if negative { -x } else { x };
    if m == 0 {
        return Ok(signed(0.0));
    }
    let top = 127 - m.leading_zeros() as i32 + e;
    let quantum = top.max(f.emin) - f.mant_bits as i32;
    if quantum <= e {
        // Exact: at most mant_bits + 1 significant bits above the quantum.
        return Ok(signed(ldexp(m as f64, e)));
    }
    let shift = (quantum - e) as u32;
    let (kept, rem, half) = if shift >= 128 {
        (0u128, m, None)
    } else {
        let kept = m >> shift;
        (kept, m - (kept << shift), Some(1u128 << (shift - 1)))
    };
    let kept = kept + mode.rounds_up(negative, rem, half, kept & 1 == 1) as u128;
    Ok(signed(ldexp(kept as f64, quantum)))
}

/// What a value past a type's range becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfRange {
    /// An error.
    Error,
    /// The nearest end of the range (infinity for float types that have it).
    Clamp,
    /// The value modulo 2^bits (integer types).
    Wrap,
}

/// `v` converted to the type of `to` by `mode` and `range`, or why it cannot be.
pub fn convert(
    v: Exact,
    to: &NumItem,
    mode: Rounding,
    range: OutOfRange,
) -> std::result::Result<Exact, String> {
    match to.repr {
        Repr::Int { bits, signed } => {
            let (min, max) = NumItem::int_range(bits, signed);
            let i = match v {
                Exact::Int(i) => i,
                Exact::Float(x) if !x.is_finite() => {
                    return Err(format!("{x} has no value in an integer type"))
                }
                Exact::Float(x) => {
                    let r = mode.to_integer(x);
                    // Beyond 2^127 a float is a multiple of every 2^bits: it wraps to 0
                    // and clamps like any value past the range.
                    if r.abs() >= 2f64.powi(127) {
                        match range {
                            OutOfRange::Wrap => 0,
                            _ if r > 0.0 => max + 1,
                            _ => min - 1,
                        }
                    } else {
                        r as i128
                    }
                }
            };
            if (min..=max).contains(&i) {
                return Ok(Exact::Int(i));
            }
            match range {
                OutOfRange::Error => Err(format!("{i} is outside {min}..={max}")),
                OutOfRange::Clamp => Ok(Exact::Int(i.clamp(min, max))),
                OutOfRange::Wrap => {
                    let low = (i as u128) & (u128::MAX >> (128 - bits));
                    let shift = 128 - bits;
                    Ok(Exact::Int(match signed {
                        true => ((low << shift) as i128) >> shift,
                        false => low as i128,
                    }))
                }
            }
        }
        Repr::Float(f) => {
            let r = round_to_float(v, f, mode)?;
            if r.is_nan() {
                return match f.nan {
                    true => Ok(Exact::Float(r)),
                    false => Err("NaN has no value in a type without NaN".into()),
                };
            }
            let from_infinity = matches!(v, Exact::Float(x) if x.is_infinite());
            if from_infinity && !f.inf {
                return Err(format!("{r} has no value in a type without infinities"));
            }
            if r.abs() <= f.max || from_infinity {
                return Ok(Exact::Float(r));
            }
            match range {
                OutOfRange::Clamp if f.inf => Ok(Exact::Float(r.signum() * f64::INFINITY)),
                OutOfRange::Clamp => Ok(Exact::Float(r.signum() * f.max)),
                _ => Err(format!("{r} is outside the range ±{} of the type", f.max)),
            }
        }
    }
}

/// Whether two values are the same number (NaN matching NaN).
pub fn same(a: Exact, b: Exact) -> bool {
    match (a, b) {
        (Exact::Float(x), Exact::Float(y)) => x == y || x.is_nan() && y.is_nan(),
        (Exact::Int(x), Exact::Int(y)) => x == y,
        (Exact::Int(i), Exact::Float(x)) | (Exact::Float(x), Exact::Int(i)) => {
            x.is_finite() && x.fract() == 0.0 && x.abs() < 2f64.powi(127) && x as i128 == i
        }
    }
}

/// An error of codec `name` about its configuration.
pub fn config_error(name: &str, what: String) -> Error {
    Error::Metadata(format!("codec {name:?}: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(name: &str) -> NumItem {
        NumItem::of(&crate::codec::filter::parse_dtype(name).unwrap()).unwrap()
    }

    /// Values spread over the binary exponents of float64, with signs and ties.
    fn samples() -> Vec<f64> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut out = Vec::new();
        for _ in 0..20000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let exp = (state >> 52) as i32 % 80 - 40;
            let x = f64::from_bits((state & ((1 << 52) - 1)) | (1023u64 << 52)) * 2f64.powi(exp);
            out.push(if state & 1 == 1 { -x } else { x });
        }
        out
    }

    /// Nearest-even rounding agrees with the hardware (float32) and the `half` crate
    /// (float16), both of which round to nearest, ties to even.
    #[test]
    fn nearest_even_matches_independent_conversions() {
        let (f32t, f16t) = (item("<f4"), item("<f2"));
        for x in samples() {
            let v = Exact::Float(x);
            let r = convert(v, &f32t, Rounding::NearestEven, OutOfRange::Clamp).unwrap();
            assert_eq!(r, Exact::Float(x as f32 as f64), "{x}");
            let r = convert(v, &f16t, Rounding::NearestEven, OutOfRange::Clamp).unwrap();
            assert_eq!(r, Exact::Float(half::f16::from_f64(x).to_f64()), "{x}");
        }
    }

    /// Directed modes give the neighbour of the nearest value on their side.
    #[test]
    fn directed_rounding_brackets_the_value() {
        let t = item("<f4");
        for x in samples() {
            let v = Exact::Float(x);
            let get = |mode| match convert(v, &t, mode, OutOfRange::Clamp).unwrap() {
                Exact::Float(r) => r,
                Exact::Int(_) => unreachable!(),
            };
            let (up, down, zero) = (
                get(Rounding::TowardsPositive),
                get(Rounding::TowardsNegative),
                get(Rounding::TowardsZero),
            );
            assert!(down <= x && x <= up, "{x}: {down} {up}");
            assert_eq!(down == up, x as f32 as f64 == x, "{x}");
            if down != up {
                assert_eq!((down as f32).next_up() as f64, up, "{x}");
            }
            assert_eq!(zero, if x < 0.0 { up } else { down }, "{x}");
        }
    }
}
