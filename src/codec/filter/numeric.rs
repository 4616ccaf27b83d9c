//! The element-wise numeric filters of numcodecs: `delta`, `fixedscaleoffset`,
//! `quantize` and `astype`, each from `dtype` (what it receives) to `astype` (what it
//! produces), computing as numpy 2 does.

use super::num::{Kind, NumType, Value as Num};
use super::{is_float, Cfg, Filter};
use crate::dtype::DType;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// A Python number from a configuration (numpy treats ints and floats differently).
#[derive(Debug, Clone, Copy)]
enum Scalar {
    Int(i64),
    Float(f64),
}

impl Scalar {
    fn parse(cfg: &Cfg, key: &str) -> Result<(Self, Value)> {
        let v = cfg.required(key)?;
        let scalar = match v {
            Value::Number(n) if n.is_i64() => Scalar::Int(n.as_i64().expect("i64")),
            Value::Number(n) => Scalar::Float(n.as_f64().ok_or_else(|| cfg.bad(key, "a number"))?),
            _ => return Err(cfg.bad(key, "a number")),
        };
        Ok((scalar, v.clone()))
    }

    fn num(self) -> Num {
        match self {
            Scalar::Int(i) => Num::I(i),
            Scalar::Float(f) => Num::F(f),
        }
    }

    fn f64(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }
}

#[derive(Debug)]
enum Op {
    Delta,
    FixedScaleOffset {
        offset: Scalar,
        scale: Scalar,
        offset_json: Value,
        scale_json: Value,
    },
    Quantize {
        digits: i64,
        scale: f64,
    },
    AsType,
}

/// A numeric filter from items of `dtype` to items of `astype`.
#[derive(Debug)]
pub struct Numeric {
    op: Op,
    dtype: DType,
    astype: DType,
    t: NumType,
    a: NumType,
}

impl Numeric {
    /// Reads the configuration of `delta`, `fixedscaleoffset`, `quantize` or `astype` for
    /// data of type `input`; a `dtype` other than `input` is an error.
    pub(crate) fn from_config(cfg: &Cfg, input: &DType) -> Result<Self> {
        let (in_key, out_key) = match cfg.id {
            "astype" => ("decode_dtype", "encode_dtype"),
            _ => ("dtype", "astype"),
        };
        let dtype = cfg.dtype(in_key)?.unwrap_or_else(|| input.clone());
        cfg.expect_input(in_key, &dtype, input)?;
        let astype = match cfg.dtype(out_key)? {
            Some(t) => t,
            None if cfg.id == "astype" => return Err(cfg.required(out_key).unwrap_err()),
            None => dtype.clone(),
        };
        let what = |key: &str| format!("filter {:?} {key:?}", cfg.id);
        let t = NumType::of(&dtype, &what(in_key))?;
        let a = NumType::of(&astype, &what(out_key))?;
        let op = match cfg.id {
            "delta" => Op::Delta,
            "astype" => Op::AsType,
            "quantize" => {
                if !is_float(&dtype) || !is_float(&astype) {
                    return Err(Error::Metadata(format!(
                        "filter \"quantize\": \"dtype\" ({}) and \"astype\" ({}) must be float types",
                        dtype.to_v2(),
                        astype.to_v2()
                    )));
                }
                let digits = cfg
                    .required("digits")?
                    .as_i64()
                    .filter(|d| d.abs() <= 300)
                    .ok_or_else(|| cfg.bad("digits", "an integer"))?;
                Op::Quantize {
                    digits,
                    scale: quantize_scale(digits),
                }
            }
            _ => {
                let (offset, offset_json) = Scalar::parse(cfg, "offset")?;
                let (scale, scale_json) = Scalar::parse(cfg, "scale")?;
                Op::FixedScaleOffset {
                    offset,
                    scale,
                    offset_json,
                    scale_json,
                }
            }
        };
        if !matches!(op, Op::AsType) && (t.kind == Kind::Bool || a.kind == Kind::Bool) {
            return Err(Error::Metadata(format!(
                "filter {:?}: bool data ({} to {}) is not supported",
                cfg.id,
                dtype.to_v2(),
                astype.to_v2()
            )));
        }
        Ok(Numeric {
            op,
            dtype,
            astype,
            t,
            a,
        })
    }

    fn id(&self) -> &'static str {
        match self.op {
            Op::Delta => "delta",
            Op::FixedScaleOffset { .. } => "fixedscaleoffset",
            Op::Quantize { .. } => "quantize",
            Op::AsType => "astype",
        }
    }

    /// One value of `fixedscaleoffset` encoding: `around((x - offset) * scale)`.
    fn scale_offset(&self, x: Num, offset: Scalar, scale: Scalar) -> Num {
        let t = self.t;
        let f64t = NumType {
            kind: Kind::Float,
            size: 8,
            big: false,
        };
        let diff = match (t.kind, offset) {
            (Kind::Float, _) | (_, Scalar::Int(_)) => t.sub(x, offset.num()),
            _ => f64t.sub(x, offset.num()),
        };
        let product = match (diff, scale) {
            (Num::F(_), _) if t.kind == Kind::Float => t.mul(diff, scale.num()),
            (Num::F(_), _) | (_, Scalar::Float(_)) => f64t.mul(diff, scale.num()),
            _ => t.mul(diff, scale.num()),
        };
        match product {
            Num::F(f) => Num::F(f.round_ties_even()),
            int => int,
        }
    }

    /// One value of `fixedscaleoffset` decoding: `e / scale + offset`.
    fn unscale(&self, e: Num, offset: Scalar, scale: Scalar) -> Num {
        let a = self.a;
        if a.kind == Kind::Float {
            let q = a.round(as_f64(e) / as_f64(a.cast(scale.num())));
            Num::F(a.round(q + as_f64(a.cast(offset.num()))))
        } else {
            Num::F(as_f64(e) / scale.f64() + offset.f64())
        }
    }
}

fn as_f64(v: Num) -> f64 {
    match v {
        Num::I(i) => i as f64,
        Num::U(u) => u as f64,
        Num::F(f) => f,
    }
}

/// numcodecs' quantize scale: the power of two just above `10^digits`.
fn quantize_scale(digits: i64) -> f64 {
    let precision = 10f64.powf(-digits as f64);
    let exp = precision.log10();
    let exp = if exp < 0.0 { exp.floor() } else { exp.ceil() };
    let bits = 10f64.powf(-exp).log2().ceil();
    2f64.powf(bits)
}

impl Filter for Numeric {
    fn config(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("id".into(), self.id().into());
        match &self.op {
            Op::AsType => {
                map.insert("encode_dtype".into(), self.astype.to_v2().into());
                map.insert("decode_dtype".into(), self.dtype.to_v2().into());
                return map;
            }
            Op::FixedScaleOffset {
                offset_json,
                scale_json,
                ..
            } => {
                map.insert("scale".into(), scale_json.clone());
                map.insert("offset".into(), offset_json.clone());
            }
            Op::Quantize { digits, .. } => {
                map.insert("digits".into(), (*digits).into());
            }
            Op::Delta => {}
        }
        map.insert("dtype".into(), self.dtype.to_v2().into());
        map.insert("astype".into(), self.astype.to_v2().into());
        map
    }

    fn encoded_dtype(&self) -> DType {
        self.astype.clone()
    }

    fn encoded_len(&self, len: usize) -> usize {
        len / self.t.size * self.a.size
    }

    fn elementwise(&self) -> bool {
        !matches!(self.op, Op::Delta)
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let (ts, asz) = (self.t.size, self.a.size);
        if !data.len().is_multiple_of(ts) {
            return Err(Error::Codec(format!(
                "{}: {} bytes are not a whole number of {} items",
                self.id(),
                data.len(),
                self.dtype.to_v2()
            )));
        }
        let n = data.len() / ts;
        crate::error::try_resize(out, n * asz, "a filtered chunk")?;
        let mut prev = Num::I(0);
        for i in 0..n {
            let x = self.t.load(&data[i * ts..]);
            let v = match &self.op {
                Op::Delta if i > 0 => self.t.sub(x, prev),
                Op::Delta | Op::AsType => x,
                Op::FixedScaleOffset { offset, scale, .. } => self.scale_offset(x, *offset, *scale),
                Op::Quantize { scale, .. } => {
                    let s = self.t.round(*scale);
                    let r = self.t.round(s * as_f64(x)).round_ties_even();
                    Num::F(self.t.round(r / s))
                }
            };
            prev = x;
            self.a.store(v, &mut out[i * asz..]);
        }
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let (ts, asz) = (self.t.size, self.a.size);
        let n = out.len() / ts;
        if !out.len().is_multiple_of(ts) || data.len() != n * asz {
            return Err(Error::Codec(format!(
                "{}: encoded data has {} bytes, expected {}",
                self.id(),
                data.len(),
                n * asz
            )));
        }
        let acc_type = NumType::promote(self.a, self.t);
        let mut acc = Num::I(0);
        for i in 0..n {
            let e = self.a.load(&data[i * asz..]);
            let v = match &self.op {
                Op::Delta => {
                    acc = if i == 0 {
                        acc_type.cast(e)
                    } else {
                        acc_type.add(acc, e)
                    };
                    acc
                }
                Op::FixedScaleOffset { offset, scale, .. } => self.unscale(e, *offset, *scale),
                Op::Quantize { .. } | Op::AsType => e,
            };
            self.t.store(v, &mut out[i * ts..]);
        }
        Ok(())
    }
}
