//! Bit-level filters of numcodecs: `bitround` (rounds float mantissas to `keepbits` bits,
//! keeping the type) and `packbits` (packs bools eight to a byte after a byte counting
//! the padding bits).

use super::{is_float, Cfg, Filter};
use crate::dtype::{ByteOrder, DType, DataKind};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The `bitround` filter for one float type.
#[derive(Debug)]
pub struct BitRound {
    keepbits: u32,
    dtype: DType,
}

impl BitRound {
    /// Reads the configuration for data of type `input`, which must be a float type with
    /// at least `keepbits` mantissa bits.
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
        let max = mantissa_bits(input);
        if keepbits > max as u64 {
            return Err(Error::Metadata(format!(
                "filter \"bitround\": keepbits {keepbits} is more than the {max} mantissa bits of {}",
                input.to_v2()
            )));
        }
        Ok(BitRound {
            keepbits: keepbits as u32,
            dtype: input.clone(),
        })
    }
}

fn mantissa_bits(dtype: &DType) -> u32 {
    match dtype.kind {
        DataKind::Float(2) => 10,
        DataKind::Float(4) => 23,
        _ => 52,
    }
}

impl Filter for BitRound {
    fn config(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("id".into(), "bitround".into());
        map.insert("keepbits".into(), self.keepbits.into());
        map
    }

    fn encoded_dtype(&self) -> DType {
        self.dtype.clone()
    }

    fn encoded_len(&self, len: usize) -> usize {
        len
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        *out = self.encoded(data)?;
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        super::copy_exact("bitround", data, out)
    }
}

impl BitRound {
    /// Encodes `data` into a new buffer.
    fn encoded(&self, data: &[u8]) -> Result<Vec<u8>> {
        let size = self.dtype.item_size();
        let maskbits = mantissa_bits(&self.dtype) - self.keepbits;
        let mut out = data.to_vec();
        if maskbits == 0 {
            return Ok(out);
        }
        let big = self.dtype.order == ByteOrder::Big;
        let shift = 64 - 8 * size as u32;
        let half_quantum = (1i64 << (maskbits - 1)) - 1;
        let mask = (-1i64 >> maskbits) << maskbits;
        for item in out.chunks_exact_mut(size) {
            let mut raw = [0u8; 8];
            raw[..size].copy_from_slice(item);
            if big {
                raw[..size].reverse();
            }
            // The item as a signed integer of its size, as numcodecs views it.
            let b = ((u64::from_le_bytes(raw) << shift) as i64) >> shift;
            let b = b.wrapping_add(((b >> maskbits) & 1) + half_quantum) & mask;
            let le = (b as u64).to_le_bytes();
            item.copy_from_slice(&le[..size]);
            if big {
                item.reverse();
            }
        }
        Ok(out)
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
