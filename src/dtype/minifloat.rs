//! The extension floating-point types of Zarr v3 (`bfloat16` and the float8, float6 and
//! float4 families of zarr-extensions, as ml_dtypes and tensorstore define them): their
//! formats, and exact conversions between their bits and `f64` for fill values.
//!
//! Items are moved as their raw bits; only fill values (and `bfloat16` read or written as
//! `float32`) are converted.

/// How a format spells infinities and NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Specials {
    /// IEEE 754: the all-ones exponent is infinity (zero mantissa) or NaN.
    Ieee,
    /// Finite ("fn"): no infinity; NaN is the all-ones exponent and mantissa (either sign).
    FiniteAllOnesNan,
    /// Finite with unsigned zero ("fnuz"): no infinity, no negative zero; NaN is the bit
    /// pattern of negative zero (`0x80`).
    Fnuz,
    /// Finite without NaN: every bit pattern is a number.
    FiniteNoNan,
    /// float8_e8m0fnu: no sign, no zero, no infinity; NaN is all ones.
    UnsignedE8M0,
}

/// An extension floating-point type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtFloat {
    /// Brain floating point: 1 sign, 8 exponent, 7 mantissa bits.
    BFloat16,
    /// IEEE-like float8 with 4 exponent bits, bias 7.
    Float8E4M3,
    /// float8, 4 exponent bits, bias 7, no infinity, NaN all ones.
    Float8E4M3FN,
    /// float8, 4 exponent bits, bias 8, NaN `0x80`.
    Float8E4M3FNUZ,
    /// float8, 4 exponent bits, bias 11, NaN `0x80`.
    Float8E4M3B11FNUZ,
    /// IEEE-like float8 with 5 exponent bits, bias 15.
    Float8E5M2,
    /// float8, 5 exponent bits, bias 16, NaN `0x80`.
    Float8E5M2FNUZ,
    /// IEEE-like float8 with 3 exponent bits, bias 3.
    Float8E3M4,
    /// Unsigned power of two: 8 exponent bits, bias 127, NaN `0xff`.
    Float8E8M0FNU,
    /// float6 (1 byte, low 6 bits), 2 exponent bits, bias 1, no infinity or NaN.
    Float6E2M3FN,
    /// float6 (1 byte, low 6 bits), 3 exponent bits, bias 3, no infinity or NaN.
    Float6E3M2FN,
    /// float4 (1 byte, low 4 bits), 2 exponent bits, bias 1, no infinity or NaN.
    Float4E2M1FN,
}

/// The layout of one format.
#[derive(Debug, Clone, Copy)]
pub struct Format {
    /// The Zarr v3 data type name.
    pub name: &'static str,
    /// Bits that carry the value (the rest of the stored byte is ignored on read).
    pub bits: u32,
    /// Exponent bits.
    pub exp_bits: u32,
    /// Mantissa bits.
    pub mant_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Infinities and NaN.
    pub specials: Specials,
    /// The bits `"NaN"` stands for, if the format has NaN.
    pub nan: Option<u16>,
}

const FORMATS: [(ExtFloat, Format); 12] = {
    const fn f(
        name: &'static str,
        bits: u32,
        exp_bits: u32,
        mant_bits: u32,
        bias: i32,
        specials: Specials,
        nan: Option<u16>,
    ) -> Format {
        Format {
            name,
            bits,
            exp_bits,
            mant_bits,
            bias,
            specials,
            nan,
        }
    }
    use ExtFloat::*;
    use Specials::*;
    [
        (BFloat16, f("bfloat16", 16, 8, 7, 127, Ieee, Some(0x7fc0))),
        (Float8E4M3, f("float8_e4m3", 8, 4, 3, 7, Ieee, Some(0x7c))),
        (
            Float8E4M3FN,
            f("float8_e4m3fn", 8, 4, 3, 7, FiniteAllOnesNan, Some(0x7f)),
        ),
        (
            Float8E4M3FNUZ,
            f("float8_e4m3fnuz", 8, 4, 3, 8, Fnuz, Some(0x80)),
        ),
        (
            Float8E4M3B11FNUZ,
            f("float8_e4m3b11fnuz", 8, 4, 3, 11, Fnuz, Some(0x80)),
        ),
        (Float8E5M2, f("float8_e5m2", 8, 5, 2, 15, Ieee, Some(0x7e))),
        (
            Float8E5M2FNUZ,
            f("float8_e5m2fnuz", 8, 5, 2, 16, Fnuz, Some(0x80)),
        ),
        (Float8E3M4, f("float8_e3m4", 8, 3, 4, 3, Ieee, Some(0x78))),
        (
            Float8E8M0FNU,
            f("float8_e8m0fnu", 8, 8, 0, 127, UnsignedE8M0, Some(0xff)),
        ),
        (
            Float6E2M3FN,
            f("float6_e2m3fn", 6, 2, 3, 1, FiniteNoNan, None),
        ),
        (
            Float6E3M2FN,
            f("float6_e3m2fn", 6, 3, 2, 3, FiniteNoNan, None),
        ),
        (
            Float4E2M1FN,
            f("float4_e2m1fn", 4, 2, 1, 1, FiniteNoNan, None),
        ),
    ]
};

/// Every extension floating-point type.
pub const ALL: [ExtFloat; 12] = {
    let mut out = [ExtFloat::BFloat16; 12];
    let mut i = 0;
    while i < 12 {
        out[i] = FORMATS[i].0;
        i += 1;
    }
    out
};

impl ExtFloat {
    /// The type's format.
    pub fn format(self) -> &'static Format {
        &FORMATS
            .iter()
            .find(|(t, _)| *t == self)
            .expect("every type has a format")
            .1
    }

    /// The Zarr v3 name (`"bfloat16"`, `"float8_e4m3fn"`).
    pub fn name(self) -> &'static str {
        self.format().name
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        FORMATS
            .iter()
            .find(|(_, f)| f.name == name)
            .map(|(t, _)| *t)
    }

    /// Bytes of one stored item (2 for bfloat16, else 1).
    pub fn size(self) -> usize {
        if self.format().bits > 8 {
            2
        } else {
            1
        }
    }

    /// Mask of the bits that carry the value.
    pub fn mask(self) -> u16 {
        ((1u32 << self.format().bits) - 1) as u16
    }

    /// The exact value of `bits` (bits outside the format are ignored).
    pub fn to_f64(self, bits: u16) -> f64 {
        let f = self.format();
        let bits = bits & self.mask();
        let mant_mask = (1u16 << f.mant_bits) - 1;
        let exp_max = (1u16 << f.exp_bits) - 1;
        if f.specials == Specials::UnsignedE8M0 {
            return if bits == 0xff {
                f64::NAN
            } else {
                2f64.powi(bits as i32 - f.bias)
            };
        }
        let sign_bit = 1u16 << (f.bits - 1);
        let negative = bits & sign_bit != 0;
        let exp = (bits >> f.mant_bits) & exp_max;
        let mant = bits & mant_mask;
        match f.specials {
            Specials::Ieee if exp == exp_max => {
                return match (mant, negative) {
                    (0, false) => f64::INFINITY,
                    (0, true) => f64::NEG_INFINITY,
                    _ => f64::NAN,
                };
            }
            Specials::FiniteAllOnesNan if exp == exp_max && mant == mant_mask => {
                return f64::NAN;
            }
            Specials::Fnuz if bits == sign_bit => return f64::NAN,
            _ => {}
        }
        let magnitude = if exp == 0 {
            mant as f64 * 2f64.powi(1 - f.bias - f.mant_bits as i32)
        } else {
            (mant as f64 / (1u32 << f.mant_bits) as f64 + 1.0) * 2f64.powi(exp as i32 - f.bias)
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// Whether `bits` is a NaN of this type.
    pub fn is_nan(self, bits: u16) -> bool {
        self.to_f64(bits).is_nan()
    }

    /// The bits of `v` rounded to the nearest value of this type (ties to even), or why it
    /// has none: NaN, infinities and zero where the type lacks them, magnitudes past the
    /// largest finite value of a type without infinity, negative numbers of an unsigned type.
    pub fn from_f64(self, v: f64) -> Result<u16, String> {
        let f = self.format();
        let name = f.name;
        if v.is_nan() {
            return f.nan.ok_or_else(|| format!("{name} has no NaN"));
        }
        if f.specials == Specials::UnsignedE8M0 {
            return e8m0_from_f64(v).ok_or_else(|| {
                format!("{name} holds powers of two from 2^-127 to 2^127, not {v}")
            });
        }
        let sign_bit = 1u16 << (f.bits - 1);
        let sign = if v.is_sign_negative() { sign_bit } else { 0 };
        let exp_max = (1u16 << f.exp_bits) - 1;
        let out_of_range = || format!("{v} is outside the range of {name}, which has no infinity");
        if v.is_infinite() {
            return match f.specials {
                Specials::Ieee => Ok(sign | (exp_max << f.mant_bits)),
                _ => Err(out_of_range()),
            };
        }
        let a = v.abs();
        let zero = |sign: u16| match f.specials {
            // No negative zero: its pattern is NaN.
            Specials::Fnuz => 0,
            _ => sign,
        };
        if a == 0.0 {
            return Ok(zero(sign));
        }
        // a = m · 2^e with m in [1, 2).
        let e = exponent_of(a);
        let emin = 1 - f.bias;
        let e_eff = e.max(emin);
        let quantum = 2f64.powi(e_eff - f.mant_bits as i32);
        let n = (a / quantum).round_ties_even();
        let (mut n, mut e_eff) = (n as u64, e_eff);
        if n == 0 {
            return Ok(zero(sign));
        }
        let implicit = 1u64 << f.mant_bits;
        if n >= implicit << 1 {
            n >>= 1;
            e_eff += 1;
        }
        let (exp_field, mant) = if n < implicit {
            (0i32, n as u16)
        } else {
            (e_eff + f.bias, (n - implicit) as u16)
        };
        let largest_exp = match f.specials {
            Specials::Ieee => exp_max as i32 - 1,
            _ => exp_max as i32,
        };
        let too_big = exp_field > largest_exp
            || (f.specials == Specials::FiniteAllOnesNan
                && exp_field == exp_max as i32
                && mant == (1u16 << f.mant_bits) - 1);
        if too_big {
            return match f.specials {
                Specials::Ieee => Ok(sign | (exp_max << f.mant_bits)),
                _ => Err(out_of_range()),
            };
        }
        Ok(sign | ((exp_field as u16) << f.mant_bits) | mant)
    }
}

/// float8_e8m0fnu: the nearest power of two, a tie (`1.5 · 2^e`) going up, as ml_dtypes
/// rounds it.
fn e8m0_from_f64(v: f64) -> Option<u16> {
    if v.is_infinite() || v <= 0.0 {
        return None;
    }
    let e = exponent_of(v);
    let m = v / 2f64.powi(e);
    let code = e + 127 + i32::from(m >= 1.5);
    (0..=254).contains(&code).then_some(code as u16)
}

/// The exponent `e` of a finite positive `a = m · 2^e`, `m` in `[1, 2)` (subnormal `f64`s
/// included).
fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal: 2^-1074 times the mantissa.
        let mant = bits & ((1u64 << 52) - 1);
        -1074 + 63 - mant.leading_zeros() as i32
    } else {
        biased - 1023
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values and bit patterns checked against ml_dtypes 0.5.
    #[test]
    fn known_values() {
        use ExtFloat::*;
        let cases: &[(ExtFloat, f64, u16)] = &[
            (BFloat16, 1.0, 0x3f80),
            (BFloat16, -2.5, 0xc020),
            (BFloat16, f64::INFINITY, 0x7f80),
            (Float8E4M3FN, 448.0, 0x7e),
            (Float8E4M3FN, 1.0, 0x38),
            (Float8E4M3FN, -0.001953125, 0x81),
            (Float8E4M3, 240.0, 0x77),
            (Float8E4M3FNUZ, 240.0, 0x7f),
            (Float8E4M3FNUZ, 1.0, 0x40),
            (Float8E4M3B11FNUZ, 1.0, 0x58),
            (Float8E5M2, 57344.0, 0x7b),
            (Float8E5M2, 1.0, 0x3c),
            (Float8E5M2FNUZ, 1.0, 0x40),
            (Float8E3M4, 1.0, 0x30),
            (Float8E8M0FNU, 1.0, 0x7f),
            (Float8E8M0FNU, 0.5, 0x7e),
            (Float8E8M0FNU, 4.0, 0x81),
            (Float6E2M3FN, 7.5, 0x1f),
            (Float6E3M2FN, 28.0, 0x1f),
            (Float4E2M1FN, 6.0, 0x7),
            (Float4E2M1FN, -0.5, 0x9),
        ];
        for &(t, v, bits) in cases {
            assert_eq!(t.from_f64(v), Ok(bits), "{t:?} {v}");
            assert_eq!(t.to_f64(bits), v, "{t:?} {bits:#x}");
        }
    }

    #[test]
    fn rounding_specials_and_errors() {
        use ExtFloat::*;
        // Ties to even: 1 + 1/16 lies between 1 and 1.125 in e4m3fn.
        assert_eq!(Float8E4M3FN.from_f64(1.0625), Ok(0x38));
        assert_eq!(Float8E4M3FN.from_f64(1.1875), Ok(0x3a));
        assert_eq!(BFloat16.from_f64(0.1), Ok(0x3dcd));
        assert_eq!(Float8E4M3FN.from_f64(f64::NAN), Ok(0x7f));
        assert!(Float8E4M3FN.is_nan(0xff));
        assert!(Float8E4M3FN.from_f64(500.0).is_err());
        assert_eq!(Float8E5M2.from_f64(1e6), Ok(0x7c));
        assert_eq!(Float8E5M2FNUZ.from_f64(-0.0), Ok(0));
        assert!(Float8E5M2FNUZ.is_nan(0x80));
        assert!(Float4E2M1FN.from_f64(f64::NAN).is_err());
        assert!(Float8E8M0FNU.from_f64(0.0).is_err());
        assert!(Float8E8M0FNU.from_f64(-1.0).is_err());
        assert_eq!(Float8E8M0FNU.from_f64(3.0), Ok(0x81));
        assert_eq!(Float8E8M0FNU.from_f64(2.9), Ok(0x80));
        // Bits above the format are ignored.
        assert_eq!(Float4E2M1FN.to_f64(0xf7), 6.0);
    }

    #[test]
    fn every_pattern_round_trips() {
        for t in ALL {
            for bits in 0..=t.mask() {
                let v = t.to_f64(bits);
                if v.is_nan() {
                    continue;
                }
                let back = t.from_f64(v).unwrap();
                let same = back == bits
                    // fnuz types have one zero.
                    || (v == 0.0 && t.format().specials == Specials::Fnuz);
                assert!(same, "{t:?} {bits:#x} -> {v} -> {back:#x}");
            }
        }
    }
}
