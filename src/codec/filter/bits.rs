//! Bit-level filters of numcodecs: `bitround` (rounds float mantissas to `keepbits` bits,
//! keeping the type) and `packbits` (packs bools eight to a byte after a byte counting
//! the padding bits).

use super::{is_float, Cfg, Filter};
use crate::dtype::{ByteOrder, DType, DataKind, ExtFloat};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The `bitround` filter for one type: numcodecs' (`numcodecs.bitround`, float types)
/// or the registered `bitround` codec, which also rounds bfloat16, complex items (each
/// part) and integers (to `keepbits` bits from the most significant set bit, saturating
/// at the largest value those bits can round to, as zarrs does).
#[derive(Debug)]
pub struct BitRound {
    keepbits: u32,
    dtype: DType,
    /// Mantissa bits of each float part, or `None` for integers.
    mantissa: Option<u32>,
    /// Bytes of each rounded part (a complex item has two).
    unit: usize,
    /// Whether it was given as the registered `bitround` codec.
    registered: bool,
}

impl BitRound {
    /// Reads numcodecs' configuration for data of type `input`, which must be a float
    /// type with at least `keepbits` mantissa bits.
    pub(crate) fn from_config(cfg: &Cfg, input: &DType) -> Result<Self> {
        let keepbits = cfg
            .required("keepbits")?
            .as_u64()
            .ok_or_else(|| cfg.bad("keepbits", "a non-negative integer"))?;
        if !is_float(input) {
            return Err(Error::Metadata(format!(
                "filter \"bitround\" needs float data, but the data it receives is {}",
                input.to_v2()
            )));
        }
        Self::new(keepbits, input, false)
    }

    /// Reads the registered codec's configuration (`keepbits` alone) for data of type
    /// `input`: a float, bfloat16, complex or integer type.
    pub fn from_v3(config: &Map<String, Value>, input: &DType) -> Result<Self> {
        if let Some(key) = config.keys().find(|k| *k != "keepbits") {
            return Err(Error::Metadata(format!(
                "codec \"bitround\": unknown configuration key {key:?}"
            )));
        }
        let keepbits = config
            .get("keepbits")
            .and_then(Value::as_u64)
            .ok_or_else(|| {
                Error::Metadata(
                    "codec \"bitround\": \"keepbits\" must be a non-negative integer".into(),
                )
            })?;
        Self::new(keepbits, input, true)
    }

    fn new(keepbits: u64, input: &DType, registered: bool) -> Result<Self> {
        let (mantissa, unit) = match input.kind {
            DataKind::Float(2) => (Some(10), 2),
            DataKind::Float(4) => (Some(23), 4),
            DataKind::Float(8) => (Some(52), 8),
            DataKind::Complex(8) => (Some(23), 4),
            DataKind::Complex(16) => (Some(52), 8),
            DataKind::ExtFloat(ExtFloat::BFloat16) => (Some(7), 2),
            DataKind::Int(n) | DataKind::UInt(n) => (None, n),
            _ => {
                return Err(Error::Metadata(format!(
                    "codec \"bitround\" needs float, complex or integer data, but the data it \
                     receives is {}",
                    input.to_v2()
                )))
            }
        };
        let max = mantissa.unwrap_or(8 * unit as u32);
        if keepbits > max as u64 {
            return Err(Error::Metadata(format!(
                "filter \"bitround\": keepbits {keepbits} is more than the {max} bits of {}",
                input.to_v2()
            )));
        }
        Ok(BitRound {
            keepbits: keepbits as u32,
            dtype: input.clone(),
            mantissa,
            unit,
            registered,
        })
    }
}

impl Filter for BitRound {
    fn config(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("id".into(), "bitround".into());
        map.insert("keepbits".into(), self.keepbits.into());
        map
    }

    fn v3_codec(&self) -> Value {
        let name = match self.registered {
            true => "bitround",
            false => "numcodecs.bitround",
        };
        serde_json::json!({"name": name, "configuration": {"keepbits": self.keepbits}})
    }

    fn numcodecs(&self) -> bool {
        !self.registered
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
        let big = self.dtype.order == ByteOrder::Big;
        for unit in out.chunks_exact_mut(self.unit) {
            let mut raw = [0u8; 8];
            raw[..self.unit].copy_from_slice(unit);
            if big {
                raw[..self.unit].reverse();
            }
            let bits = u64::from_le_bytes(raw);
            let rounded = match self.mantissa {
                Some(m) => self.round_mantissa(bits, m),
                None => self.round_integer(bits),
            };
            unit.copy_from_slice(&rounded.to_le_bytes()[..self.unit]);
            if big {
                unit.reverse();
            }
        }
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        super::copy_exact("bitround", data, out)
    }
}

impl BitRound {
    /// A float's bits with the mantissa rounded to `keepbits` of its `mantissa` bits, ties
    /// to even, as numcodecs does (the bits as a signed integer of their size).
    fn round_mantissa(&self, bits: u64, mantissa: u32) -> u64 {
        let maskbits = mantissa - self.keepbits;
        if maskbits == 0 {
            return bits;
        }
        let shift = 64 - 8 * self.unit as u32;
        let half_quantum = (1i64 << (maskbits - 1)) - 1;
        let mask = (-1i64 >> maskbits) << maskbits;
        let b = ((bits << shift) as i64) >> shift;
        (b.wrapping_add(((b >> maskbits) & 1) + half_quantum) & mask) as u64
    }

    /// An integer's bits rounded to `keepbits` bits from its most significant set bit
    /// (ties to even), saturating at the unit's largest value before the mask.
    fn round_integer(&self, bits: u64) -> u64 {
        let width = 8 * self.unit as u32;
        let top = width - (bits << (64 - width)).leading_zeros().min(width);
        if self.keepbits >= top {
            return bits;
        }
        let maskbits = top - self.keepbits;
        if maskbits == width {
            // No bit is kept (the mask below would be empty): shifting a 64-bit word by
            // its width would overflow.
            return 0;
        }
        let all = u64::MAX >> (64 - width);
        let mask = (all >> maskbits) << maskbits;
        let half_quantum = (1u64 << (maskbits - 1)) - 1;
        let add = ((bits >> maskbits) & 1) + half_quantum;
        (bits.saturating_add(add).min(all)) & mask
    }
}

/// The `packbits` filter (bool data).
#[derive(Debug)]
pub struct PackBits;

impl PackBits {
    /// Checks that the data it receives is bool.
    pub(crate) fn from_config(_cfg: &Cfg, input: &DType) -> Result<Self> {
        if input.kind != DataKind::Bool {
            return Err(Error::Metadata(format!(
                "filter \"packbits\" needs bool data (|b1), but the data it receives is {}",
                input.to_v2()
            )));
        }
        Ok(PackBits)
    }
}

impl Filter for PackBits {
    fn config(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("id".into(), "packbits".into());
        map
    }

    fn encoded_dtype(&self) -> DType {
        DType::new(DataKind::UInt(1), ByteOrder::NotApplicable)
    }

    fn elementwise(&self) -> bool {
        false
    }

    fn encoded_len(&self, len: usize) -> usize {
        1 + len.div_ceil(8)
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        *out = self.encoded(data)?;
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let padding = ((8 - out.len() % 8) % 8) as u8;
        if data.len() != self.encoded_len(out.len()) || data[0] != padding {
            return Err(Error::Codec(format!(
                "packbits: encoded data has {} bytes and {} padding bits, expected {} bytes and {padding}",
                data.len(),
                data.first().copied().unwrap_or(0),
                self.encoded_len(out.len())
            )));
        }
        for (i, o) in out.iter_mut().enumerate() {
            *o = (data[1 + i / 8] >> (7 - i % 8)) & 1;
        }
        Ok(())
    }
}

impl PackBits {
    /// Encodes `data` into a new buffer.
    fn encoded(&self, data: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.encoded_len(data.len())];
        out[0] = ((8 - data.len() % 8) % 8) as u8;
        for (i, &b) in data.iter().enumerate() {
            if b != 0 {
                out[1 + i / 8] |= 0x80 >> (i % 8);
            }
        }
        Ok(out)
    }
}
