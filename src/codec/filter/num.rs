//! Numbers of numeric data types as numpy holds and converts them: loading and storing
//! items of a stored type, numpy's `astype` conversions, type promotion, and arithmetic
//! rounded to a type.

use crate::dtype::{ByteOrder, DType, DataKind};
use crate::error::{Error, Result};
use half::f16;

/// A numeric item type: bool, integer or float of a size and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumType {
    /// What the bytes mean.
    pub kind: Kind,
    /// Size in bytes.
    pub size: usize,
    /// Most significant byte first.
    pub big: bool,
}

/// The kind of a numeric type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// numpy bool.
    Bool,
    /// Signed integer.
    Int,
    /// Unsigned integer.
    UInt,
    /// IEEE float.
    Float,
}

/// One value: an integer (kept in 64 bits) or a float (kept as f64, holding a value of
/// its type's precision).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// Signed integer or bool.
    I(i64),
    /// Unsigned integer.
    U(u64),
    /// Float.
    F(f64),
}

impl NumType {
    /// The numeric type of `dtype`, or an error naming `what` for other types.
    pub fn of(dtype: &DType, what: &str) -> Result<Self> {
        let (kind, size) = match dtype.kind {
            DataKind::Bool => (Kind::Bool, 1),
            DataKind::Int(n) => (Kind::Int, n),
            DataKind::UInt(n) => (Kind::UInt, n),
            DataKind::Float(n) => (Kind::Float, n),
            _ => {
                return Err(Error::Metadata(format!(
                    "{what}: data type {} is not a bool, integer or float type",
                    dtype.to_v2()
                )))
            }
        };
        Ok(NumType {
            kind,
            size,
            big: dtype.order == ByteOrder::Big,
        })
    }

    /// Reads the item at the start of `bytes`.
    pub fn load(&self, bytes: &[u8]) -> Value {
        let mut raw = [0u8; 8];
        raw[..self.size].copy_from_slice(&bytes[..self.size]);
        if self.big {
            raw[..self.size].reverse();
        }
        let bits = u64::from_le_bytes(raw);
        match self.kind {
            Kind::Bool => Value::I((bits != 0) as i64),
            Kind::UInt => Value::U(bits),
            Kind::Int => {
                let shift = 64 - 8 * self.size as u32;
                Value::I(((bits << shift) as i64) >> shift)
            }
            Kind::Float => Value::F(match self.size {
                2 => f16::from_bits(bits as u16).to_f64(),
                4 => f32::from_bits(bits as u32) as f64,
                _ => f64::from_bits(bits),
            }),
        }
    }

    /// Converts `v` to this type as numpy's `astype` does, and writes it to the start of
    /// `out`.
    pub fn store(&self, v: Value, out: &mut [u8]) {
        let bits: u64 = match (self.kind, self.cast(v)) {
            (Kind::Float, Value::F(f)) => match self.size {
                2 => f16::from_f64(f).to_bits() as u64,
                4 => (f as f32).to_bits() as u64,
                _ => f.to_bits(),
            },
            (_, Value::I(i)) => i as u64,
            (_, Value::U(u)) => u,
            (_, Value::F(f)) => f.to_bits(),
        };
        let le = bits.to_le_bytes();
        out[..self.size].copy_from_slice(&le[..self.size]);
        if self.big {
            out[..self.size].reverse();
        }
    }

    /// `v` converted to this type (numpy `astype`: integers wrap, floats truncate toward
    /// zero into integers as x86-64 does, floats round to the nearest).
    pub fn cast(&self, v: Value) -> Value {
        match self.kind {
            Kind::Bool => Value::I(match v {
                Value::I(i) => (i != 0) as i64,
                Value::U(u) => (u != 0) as i64,
                Value::F(f) => (f != 0.0) as i64,
            }),
            Kind::Float => Value::F(self.round(match v {
                Value::I(i) if self.size == 4 => i as f32 as f64,
                Value::U(u) if self.size == 4 => u as f32 as f64,
                Value::I(i) => i as f64,
                Value::U(u) => u as f64,
                Value::F(f) => f,
            })),
            Kind::Int | Kind::UInt => {
                let bits = match v {
                    Value::I(i) => i as u64,
                    Value::U(u) => u,
                    Value::F(f) => float_to_int_bits(f, self.size, self.kind == Kind::Int),
                };
                self.wrap(bits)
            }
        }
    }

    /// The integer `bits` truncated to this (integer) type.
    fn wrap(&self, bits: u64) -> Value {
        let shift = 64 - 8 * self.size as u32;
        match self.kind {
            Kind::UInt => Value::U((bits << shift) >> shift),
            _ => Value::I(((bits << shift) as i64) >> shift),
        }
    }

    /// `f` rounded to this float type's precision.
    pub fn round(&self, f: f64) -> f64 {
        match self.size {
            2 => f16::from_f64(f).to_f64(),
            4 => f as f32 as f64,
            _ => f,
        }
    }

    /// `a - b` in this type (integers wrap).
    pub fn sub(&self, a: Value, b: Value) -> Value {
        self.arith(a, b, i64::wrapping_sub, u64::wrapping_sub, |x, y| x - y)
    }

    /// `a + b` in this type (integers wrap).
    pub fn add(&self, a: Value, b: Value) -> Value {
        self.arith(a, b, i64::wrapping_add, u64::wrapping_add, |x, y| x + y)
    }

    /// `a * b` in this type (integers wrap).
    pub fn mul(&self, a: Value, b: Value) -> Value {
        self.arith(a, b, i64::wrapping_mul, u64::wrapping_mul, |x, y| x * y)
    }

    fn arith(
        &self,
        a: Value,
        b: Value,
        int: fn(i64, i64) -> i64,
        uint: fn(u64, u64) -> u64,
        float: fn(f64, f64) -> f64,
    ) -> Value {
        let (a, b) = (self.cast(a), self.cast(b));
        match (a, b) {
            (Value::F(x), Value::F(y)) => Value::F(self.round(float(x, y))),
            (Value::U(x), Value::U(y)) => self.wrap(uint(x, y)),
            (Value::I(x), Value::I(y)) => self.wrap(int(x, y) as u64),
            _ => unreachable!("operands cast to one type"),
        }
    }

    /// The type numpy computes in when combining arrays of types `a` and `b`.
    pub fn promote(a: NumType, b: NumType) -> NumType {
        let float = |size| NumType {
            kind: Kind::Float,
            size,
            big: false,
        };
        let int = |kind, size| NumType {
            kind,
            size,
            big: false,
        };
        match (a.kind, b.kind) {
            (Kind::Bool, _) => b,
            (_, Kind::Bool) => a,
            (x, y) if x == y => int(x, a.size.max(b.size)),
            (Kind::Float, _) => float(float_for(a.size, b.size)),
            (_, Kind::Float) => float(float_for(b.size, a.size)),
            _ => {
                let (s, u) = if a.kind == Kind::Int { (a, b) } else { (b, a) };
                if s.size > u.size {
                    s
                } else if u.size < 8 {
                    int(Kind::Int, u.size * 2)
                } else {
                    float(8)
                }
            }
        }
    }
}

/// The float size numpy promotes a float of `float` bytes and an integer of `int` bytes to.
fn float_for(float: usize, int: usize) -> usize {
    match int {
        1 => float,
        2 => float.max(4),
        _ => 8,
    }
}

/// The integer bits x86-64 (and so numpy there) gives for converting `f` to an integer of
/// `size` bytes: truncation toward zero; out-of-range values and NaN give the minimum of
/// the 32- or 64-bit conversion used.
fn float_to_int_bits(f: f64, size: usize, signed: bool) -> u64 {
    let cvt32 = |f: f64| -> i64 {
        if !(-2147483648.0..2147483648.0).contains(&f.trunc()) {
            i32::MIN as i64
        } else {
            f as i64
        }
    };
    let cvt64 = |f: f64| -> i64 {
        if !(-9223372036854775808.0..9223372036854775808.0).contains(&f) {
            i64::MIN
        } else {
            f as i64
        }
    };
    match (size, signed) {
        (1 | 2, _) | (4, true) => cvt32(f) as u64,
        (4, false) | (8, true) => cvt64(f) as u64,
        _ if (9223372036854775808.0..18446744073709551616.0).contains(&f) => {
            (cvt64(f - 9223372036854775808.0) as u64) ^ (1 << 63)
        }
        _ => cvt64(f) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(kind: Kind, size: usize) -> NumType {
        NumType {
            kind,
            size,
            big: false,
        }
    }

    #[test]
    fn casts_and_promotion_follow_numpy() {
        let i1 = t(Kind::Int, 1);
        assert_eq!(i1.cast(Value::I(200)), Value::I(-56));
        assert_eq!(i1.cast(Value::F(-3.9)), Value::I(-3));
        assert_eq!(t(Kind::UInt, 1).cast(Value::F(-1.0)), Value::U(255));
        assert_eq!(
            t(Kind::Float, 4).cast(Value::F(0.1)),
            Value::F(0.1f32 as f64)
        );
        assert_eq!(i1.sub(Value::I(-128), Value::I(1)), Value::I(127));
        let p = NumType::promote(t(Kind::UInt, 1), t(Kind::Int, 2));
        assert_eq!((p.kind, p.size), (Kind::Int, 2));
        let p = NumType::promote(t(Kind::UInt, 8), t(Kind::Int, 8));
        assert_eq!((p.kind, p.size), (Kind::Float, 8));
        let p = NumType::promote(t(Kind::Float, 2), t(Kind::Int, 2));
        assert_eq!((p.kind, p.size), (Kind::Float, 4));
        let mut out = [0u8; 2];
        let be = NumType {
            big: true,
            ..t(Kind::Int, 2)
        };
        be.store(Value::I(258), &mut out);
        assert_eq!(out, [1, 2]);
        assert_eq!(be.load(&out), Value::I(258));
    }
}
