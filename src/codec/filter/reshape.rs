//! The registered `reshape` codec (zarr-extensions): gives a chunk another shape with the
//! same items in the same (C) order, so its bytes are unchanged. Each output extent is a
//! size, `-1` (at most once: what the item count leaves), or a list of input dimensions
//! whose extents it multiplies, which must be strictly increasing over the whole shape and
//! line up with the input (the extents before and after it multiply to the same counts).

use super::Filter;
use crate::dtype::DType;
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// The codec's name.
pub const NAME: &str = "reshape";

/// One output extent as configured.
#[derive(Debug, Clone, PartialEq)]
enum Extent {
    Size(u64),
    Rest,
    Dims(Vec<usize>),
}

/// `reshape` for items of one type.
#[derive(Debug)]
pub struct Reshape {
    dtype: DType,
    shape: Vec<Extent>,
    /// The configuration as given (kept to render it as it was written).
    config: Map<String, Value>,
}

fn bad(what: String) -> Error {
    super::exact::config_error(NAME, what)
}

/// Most output dimensions accepted.
const MAX_RANK: usize = 64;

impl Reshape {
    /// Reads the configuration (`shape`) for items of `input`; the shape is checked
    /// against a chunk's by [`Filter::chunk_shape`].
    pub fn from_v3(config: &Map<String, Value>, input: &DType) -> Result<Self> {
        if let Some(key) = config.keys().find(|k| *k != "shape") {
            return Err(bad(format!("unknown configuration key {key:?}")));
        }
        let list = config
            .get("shape")
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty() && l.len() <= MAX_RANK)
            .ok_or_else(|| {
                bad(format!(
                    "\"shape\" must be a list of 1 to {MAX_RANK} extents"
                ))
            })?;
        let shape = list
            .iter()
            .map(|v| match v {
                Value::Number(_) if v.as_i64() == Some(-1) => Ok(Extent::Rest),
                Value::Number(_) => v
                    .as_u64()
                    .filter(|&n| n > 0)
                    .map(Extent::Size)
                    .ok_or_else(|| bad(format!("extent {v} is not a positive integer or -1"))),
                Value::Array(dims) => dims
                    .iter()
                    .map(|d| {
                        d.as_u64()
                            .and_then(|d| usize::try_from(d).ok())
                            .filter(|&d| d < MAX_RANK)
                            .ok_or_else(|| bad(format!("input dimension {d} is not valid")))
                    })
                    .collect::<Result<_>>()
                    .map(Extent::Dims),
                _ => Err(bad(format!(
                    "extent {v} is not a positive integer, -1 or a list of input dimensions"
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        if shape.iter().filter(|e| **e == Extent::Rest).count() > 1 {
            return Err(bad("\"shape\" has -1 more than once".into()));
        }
        let dims: Vec<usize> = shape
            .iter()
            .flat_map(|e| match e {
                Extent::Dims(d) => d.clone(),
                _ => Vec::new(),
            })
            .collect();
        if dims.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad(format!(
                "the input dimensions {dims:?} must be strictly increasing"
            )));
        }
        Ok(Reshape {
            dtype: input.clone(),
            shape,
            config: config.clone(),
        })
    }
}

/// The product of `extents`, or an error when it overflows.
fn product(extents: &[u64]) -> Result<u64> {
    extents
        .iter()
        .try_fold(1u64, |p, &e| p.checked_mul(e))
        .ok_or_else(|| bad(format!("the extents {extents:?} overflow 64 bits")))
}

impl Filter for Reshape {
    fn config(&self) -> Map<String, Value> {
        super::config_with_id(NAME, &self.config)
    }

    fn v3_codec(&self) -> Value {
        json!({"name": NAME, "configuration": self.config})
    }

    fn numcodecs(&self) -> bool {
        false
    }

    fn elementwise(&self) -> bool {
        // A transpose beside it would see another shape.
        false
    }

    fn reshaped_rank(&self) -> Option<usize> {
        Some(self.shape.len())
    }

    fn chunk_shape(&self, input: &[u64]) -> Result<Vec<u64>> {
        let total = product(input)?;
        let mut out = Vec::with_capacity(self.shape.len());
        for e in &self.shape {
            out.push(match e {
                Extent::Size(n) => *n,
                Extent::Rest => 1,
                Extent::Dims(dims) => {
                    let extents = dims
                        .iter()
                        .map(|&d| {
                            input.get(d).copied().ok_or_else(|| {
                                bad(format!(
                                    "input dimension {d} is past the {} of the chunk",
                                    input.len()
                                ))
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    product(&extents)?
                }
            });
        }
        if let Some(rest) = self.shape.iter().position(|e| *e == Extent::Rest) {
            let known = product(&out)?;
            if known == 0 || total % known != 0 {
                return Err(bad(format!(
                    "no extent for -1 makes {:?} hold the {total} items of a chunk of {input:?}",
                    self.config.get("shape").unwrap_or(&Value::Null).to_string()
                )));
            }
            out[rest] = total / known;
        }
        if product(&out)? != total {
            return Err(bad(format!(
                "shape {out:?} does not hold the {total} items of a chunk of {input:?}"
            )));
        }
        for (i, e) in self.shape.iter().enumerate() {
            if let Extent::Dims(dims) = e {
                let (Some(&first), Some(&last)) = (dims.first(), dims.last()) else {
                    continue;
                };
                if product(&out[..i])? != product(&input[..first])?
                    || product(&out[i + 1..])? != product(&input[last + 1..])?
                {
                    return Err(bad(format!(
                        "output dimension {i} (input dimensions {dims:?}) does not line up with \
                         a chunk of {input:?} reshaped to {out:?}"
                    )));
                }
            }
        }
        Ok(out)
    }

    fn encoded_dtype(&self) -> DType {
        self.dtype.clone()
    }

    fn encoded_len(&self, len: usize) -> usize {
        len
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        out.extend_from_slice(data);
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        super::copy_exact(NAME, data, out)
    }
}
