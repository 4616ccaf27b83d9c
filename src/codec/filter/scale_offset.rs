//! The registered `scale_offset` codec (zarr-extensions): `out = (in - offset) * scale` on
//! encode and `out = in / scale + offset` on decode, in the arithmetic of the type it
//! receives. Integer results outside the type, and integer divisions with a remainder,
//! are errors; float results are rounded to the type (to nearest, ties to even) and may
//! be infinite or NaN as IEEE arithmetic makes them (zarr-python 3's reading of the spec),
//! but an overflow in a type without infinities is an error.

use super::exact::{self, Exact, NumItem, OutOfRange, Rounding};
use super::Filter;
use crate::dtype::DType;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The codec's name.
pub const NAME: &str = "scale_offset";

/// `scale_offset` for one integer or float type.
#[derive(Debug)]
pub struct ScaleOffset {
    dtype: DType,
    item: NumItem,
    offset: Exact,
    scale: Exact,
    /// The configuration as given (kept to render it as it was written).
    config: Map<String, Value>,
}

impl ScaleOffset {
    /// Reads the configuration (`offset`, `scale`, both optional, in the fill value
    /// encoding of `input`) for data of type `input`.
    pub fn from_v3(config: &Map<String, Value>, input: &DType) -> Result<Self> {
        let bad = |what: String| exact::config_error(NAME, what);
        if let Some(key) = config.keys().find(|k| *k != "offset" && *k != "scale") {
            return Err(bad(format!("unknown configuration key {key:?}")));
        }
        let item = NumItem::of(input).ok_or_else(|| {
            bad(format!(
                "needs integer or float data, but the data it receives is {}",
                input.to_v2()
            ))
        })?;
        let scalar = |key: &str, default: i64| match config.get(key) {
            None => Ok(match item.is_int() {
                true => Exact::Int(default.into()),
                false => Exact::Float(default as f64),
            }),
            Some(v) => item.parse_scalar(v).map_err(|e| {
                bad(format!(
                    "{key:?} {v} is not a value of {}: {e}",
                    input.to_v2()
                ))
            }),
        };
        let offset = scalar("offset", 0)?;
        let scale = scalar("scale", 1)?;
        if exact::same(scale, Exact::Int(0)) {
            return Err(bad("\"scale\" must not be zero".into()));
        }
        Ok(ScaleOffset {
            dtype: input.clone(),
            item,
            offset,
            scale,
            config: config.clone(),
        })
    }

    /// One float operation's exact (or f64-rounded) result rounded to the type: past its
    /// range it is an infinity, as in IEEE arithmetic, or an error where the type has none.
    fn rounded(&self, x: f64) -> Result<f64> {
        let range = match self.item.has_infinities() {
            true => OutOfRange::Clamp,
            false => OutOfRange::Error,
        };
        match exact::convert(Exact::Float(x), &self.item, Rounding::NearestEven, range) {
            Ok(Exact::Float(r)) => Ok(r),
            Ok(Exact::Int(_)) => Err(Error::Internal("a float rounded to an integer".into())),
            Err(e) => Err(Error::Codec(format!("{NAME}: {e}"))),
        }
    }

    /// An integer result, checked against the type.
    fn int_result(&self, v: Option<i128>, what: &str) -> Result<i128> {
        let checked = v
            .map(Exact::Int)
            .ok_or_else(|| format!("{what} overflows"))
            .and_then(|v| exact::convert(v, &self.item, Rounding::NearestEven, OutOfRange::Error));
        match checked {
            Ok(Exact::Int(i)) => Ok(i),
            Ok(Exact::Float(_)) => Err(Error::Internal("an integer became a float".into())),
            Err(e) => Err(Error::Codec(format!(
                "{NAME}: {what} is not a value of {}: {e}",
                self.dtype.to_v2()
            ))),
        }
    }

    /// Encodes one value.
    fn encode_one(&self, v: Exact) -> Result<Exact> {
        match (v, self.offset, self.scale) {
            (Exact::Int(x), Exact::Int(o), Exact::Int(s)) => {
                let d = self.int_result(x.checked_sub(o), "in - offset")?;
                Ok(Exact::Int(
                    self.int_result(d.checked_mul(s), "(in - offset) * scale")?,
                ))
            }
            (Exact::Float(x), Exact::Float(o), Exact::Float(s)) => {
                let d = self.rounded(x - o)?;
                Ok(Exact::Float(self.rounded(d * s)?))
            }
            _ => Err(Error::Internal("scale_offset of mixed kinds".into())),
        }
    }

    /// Decodes one value.
    fn decode_one(&self, v: Exact) -> Result<Exact> {
        match (v, self.offset, self.scale) {
            (Exact::Int(x), Exact::Int(o), Exact::Int(s)) => {
                if x % s != 0 {
                    return Err(Error::Codec(format!(
                        "{NAME}: {x} / {s} has a remainder, so it is not a value of {}",
                        self.dtype.to_v2()
                    )));
                }
                let q = self.int_result(x.checked_div(s), "in / scale")?;
                Ok(Exact::Int(
                    self.int_result(q.checked_add(o), "in / scale + offset")?,
                ))
            }
            (Exact::Float(x), Exact::Float(o), Exact::Float(s)) => {
                let q = self.rounded(x / s)?;
                Ok(Exact::Float(self.rounded(q + o)?))
            }
            _ => Err(Error::Internal("scale_offset of mixed kinds".into())),
        }
    }

    /// Applies `op` to every item of `data`, writing into `out` (the same size).
    fn map(&self, data: &[u8], out: &mut [u8], op: impl Fn(Exact) -> Result<Exact>) -> Result<()> {
        let size = self.item.size;
        if data.len() != out.len() || !data.len().is_multiple_of(size) {
            return Err(Error::Codec(format!(
                "{NAME}: {} bytes of data for {} bytes of output in items of {size} bytes",
                data.len(),
                out.len()
            )));
        }
        for (i, o) in data.chunks_exact(size).zip(out.chunks_exact_mut(size)) {
            self.item.store(op(self.item.load(i))?, o)?;
        }
        Ok(())
    }
}

impl Filter for ScaleOffset {
    fn config(&self) -> Map<String, Value> {
        super::config_with_id(NAME, &self.config)
    }

    fn v3_codec(&self) -> Value {
        super::v3_entry(NAME, &self.config)
    }

    fn numcodecs(&self) -> bool {
        false
    }

    fn encoded_dtype(&self) -> DType {
        self.dtype.clone()
    }

    fn encoded_len(&self, len: usize) -> usize {
        len
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        out.resize(data.len(), 0);
        self.map(data, out, |v| self.encode_one(v))
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        self.map(data, out, |v| self.decode_one(v))
    }
}
