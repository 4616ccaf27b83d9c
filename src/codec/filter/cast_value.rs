//! The registered `cast_value` codec (zarr-extensions): converts each value to another
//! integer or float type by its numerical value. In order: a `scalar_map` entry for the
//! value; else the value itself when the target holds it; else the value rounded by
//! `rounding` and brought into range by `out_of_range` (`clamp`, or `wrap` for integer
//! targets); else an error. Decoding is the same procedure from the target type back.
//! NaN is kept between types that have it; an infinity or NaN where the target has none
//! is an error unless mapped.

use super::exact::{self, Exact, NumItem, OutOfRange, Rounding};
use super::Filter;
use crate::dtype::{ByteOrder, DType};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// The codec's name.
pub const NAME: &str = "cast_value";

/// Pairs of a value and what it becomes, looked up first to last.
type ScalarMap = Vec<(Exact, Exact)>;

/// Most entries of one direction of a `scalar_map`.
const MAX_MAP_ENTRIES: usize = 256;

/// `cast_value` from one integer or float type to another.
#[derive(Debug)]
pub struct CastValue {
    target: DType,
    from: NumItem,
    to: NumItem,
    rounding: Rounding,
    range: OutOfRange,
    encode_map: ScalarMap,
    decode_map: ScalarMap,
    /// The configuration as given (kept to render it as it was written).
    config: Map<String, Value>,
}

fn bad(what: String) -> Error {
    exact::config_error(NAME, what)
}

/// The item type of `dtype` when `cast_value` handles it.
fn number(dtype: &DType, role: &str) -> Result<NumItem> {
    NumItem::of(dtype).ok_or_else(|| {
        bad(format!(
            "the {role} type {} is not an integer or float type this codec handles (int2 to \
             int64, uint2 to uint64, float16/32/64, bfloat16, float8/6/4 but float8_e8m0fnu)",
            crate::dtype::v3::to_json(&dtype.kind)
                .map(|v| v.to_string())
                .unwrap_or_else(|_| dtype.to_v2())
        ))
    })
}

/// Reads one direction of `scalar_map`: `[[from, to], …]` with `from` a value of `from`
/// and `to` one of `to`, each in the fill value encoding.
fn parse_map(value: &Value, key: &str, from: &NumItem, to: &NumItem) -> Result<ScalarMap> {
    let list = value.as_array().ok_or_else(|| {
        bad(format!(
            "scalar_map {key:?} must be a list of [from, to] pairs"
        ))
    })?;
    // Each item is looked up in the list: a long one would make every chunk slow.
    if list.len() > MAX_MAP_ENTRIES {
        return Err(bad(format!(
            "scalar_map {key:?} has {} entries; at most {MAX_MAP_ENTRIES} are supported",
            list.len()
        )));
    }
    list.iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([a, b]) => {
                let a = from
                    .parse_scalar(a)
                    .map_err(|e| bad(format!("scalar_map {key:?} entry {pair}: {e}")))?;
                let b = to
                    .parse_scalar(b)
                    .map_err(|e| bad(format!("scalar_map {key:?} entry {pair}: {e}")))?;
                Ok((a, b))
            }
            _ => Err(bad(format!(
                "scalar_map {key:?} entry {pair} is not a [from, to] pair"
            ))),
        })
        .collect()
}

impl CastValue {
    /// Reads the configuration (`data_type`, and optionally `rounding`, `out_of_range`,
    /// `scalar_map`) for data of type `input`.
    pub fn from_v3(config: &Map<String, Value>, input: &DType) -> Result<Self> {
        const KEYS: [&str; 4] = ["data_type", "rounding", "out_of_range", "scalar_map"];
        if let Some(key) = config.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(bad(format!("unknown configuration key {key:?}")));
        }
        let from = number(input, "input")?;
        let kind = crate::dtype::v3::parse(
            config
                .get("data_type")
                .ok_or_else(|| bad("missing required key \"data_type\"".into()))?,
        )
        .map_err(|e| bad(format!("\"data_type\": {e}")))?;
        let order = match input.order {
            ByteOrder::NotApplicable => ByteOrder::NATIVE,
            order => order,
        };
        let mut target = DType::new(kind.clone(), order);
        if target.item_size() <= 1 {
            target = DType::new(kind, ByteOrder::NotApplicable);
        }
        let to = number(&target, "target")?;
        let rounding = match config.get("rounding") {
            None => Rounding::NearestEven,
            Some(v) => Rounding::NAMES
                .iter()
                .find(|(name, _)| v.as_str() == Some(name))
                .map(|(_, mode)| *mode)
                .ok_or_else(|| {
                    bad(format!(
                        "\"rounding\" {v} is not one of \"nearest-even\", \"towards-zero\", \
                         \"towards-positive\", \"towards-negative\", \"nearest-away\""
                    ))
                })?,
        };
        let range = match config.get("out_of_range").map(|v| (v, v.as_str())) {
            None => OutOfRange::Error,
            Some((_, Some("clamp"))) => OutOfRange::Clamp,
            Some((_, Some("wrap"))) if to.is_int() => OutOfRange::Wrap,
            Some((_, Some("wrap"))) => {
                return Err(bad(
                    "\"out_of_range\" \"wrap\" needs an integer \"data_type\"".into(),
                ))
            }
            Some((v, _)) => {
                return Err(bad(format!(
                    "\"out_of_range\" {v} is not \"clamp\" or \"wrap\""
                )))
            }
        };
        let (mut encode_map, mut decode_map) = (Vec::new(), Vec::new());
        match config.get("scalar_map") {
            None => {}
            Some(Value::Object(map)) => {
                if let Some(key) = map.keys().find(|k| *k != "encode" && *k != "decode") {
                    return Err(bad(format!("unknown scalar_map key {key:?}")));
                }
                if let Some(v) = map.get("encode") {
                    encode_map = parse_map(v, "encode", &from, &to)?;
                }
                if let Some(v) = map.get("decode") {
                    decode_map = parse_map(v, "decode", &to, &from)?;
                }
            }
            Some(other) => return Err(bad(format!("\"scalar_map\" {other} is not an object"))),
        }
        Ok(CastValue {
            target,
            from,
            to,
            rounding,
            range,
            encode_map,
            decode_map,
            config: config.clone(),
        })
    }

    /// Converts every item of `data` (of `from`) into `out` (of `to`).
    fn cast(
        &self,
        data: &[u8],
        out: &mut [u8],
        (from, to): (&NumItem, &NumItem),
        map: &ScalarMap,
    ) -> Result<()> {
        let items = data.len() / from.size;
        if !data.len().is_multiple_of(from.size) || items.checked_mul(to.size) != Some(out.len()) {
            return Err(Error::Codec(format!(
                "{NAME}: {} bytes of data for {} bytes of output",
                data.len(),
                out.len()
            )));
        }
        for (i, o) in data
            .chunks_exact(from.size)
            .zip(out.chunks_exact_mut(to.size))
        {
            let v = from.load(i);
            let cast = match map.iter().find(|(k, _)| exact::same(*k, v)) {
                Some((_, mapped)) => *mapped,
                None => exact::convert(v, to, self.rounding, self.range)
                    .map_err(|e| Error::Codec(format!("{NAME}: {e}")))?,
            };
            to.store(cast, o)?;
        }
        Ok(())
    }
}

impl Filter for CastValue {
    fn config(&self) -> Map<String, Value> {
        super::config_with_id(NAME, &self.config)
    }

    fn v3_codec(&self) -> Value {
        json!({"name": NAME, "configuration": self.config})
    }

    fn numcodecs(&self) -> bool {
        false
    }

    fn encoded_dtype(&self) -> DType {
        self.target.clone()
    }

    fn encoded_len(&self, len: usize) -> usize {
        len / self.from.size * self.to.size
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        out.resize(self.encoded_len(data.len()), 0);
        self.cast(data, out, (&self.from, &self.to), &self.encode_map)
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        self.cast(data, out, (&self.to, &self.from), &self.decode_map)
    }
}
