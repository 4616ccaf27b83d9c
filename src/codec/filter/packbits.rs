//! The registered `packbits` codec (zarr-extensions), an array→bytes codec: each item's
//! components (two for complex types) are cut to the bits `first_bit..=last_bit` of their
//! little-endian value and packed one after another, least significant bit first, into a
//! stream padded with zero bits to whole bytes; `padding_encoding` may store the number of
//! padding bits in a byte before (`first_byte`) or after (`last_byte`) it. Decoding shifts
//! the bits back and sign-extends signed integers. Within a byte the stream starts at the
//! least significant bit, as zarrs writes it (numcodecs' own `packbits`, whose padding byte
//! `first_byte` mirrors, starts at the most significant one).
//!
//! It runs as the last array filter, followed by a `bytes` codec that has nothing to swap
//! (its output is bytes); Zarr v3 metadata lists it in the `bytes` codec's place. The
//! specification's text names the keys `padding_encoding` (`first_byte`, `last_byte`,
//! `none`), `first_bit` and `last_bit`, as zarrs writes them; its schema's `start_byte`,
//! `end_byte`, `start_bit` and `end_bit` are read as the same.

use super::Filter;
use crate::dtype::{ByteOrder, DType, DataKind};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The codec's name.
pub const NAME: &str = "packbits";

/// Where the count of padding bits is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Padding {
    None,
    FirstByte,
    LastByte,
}

/// `packbits` for items of one type.
#[derive(Debug)]
pub struct PackBits {
    dtype: DType,
    /// Components of an item.
    components: usize,
    first_bit: u32,
    last_bit: u32,
    /// Whether decoded values are sign-extended.
    signed: bool,
    padding: Padding,
    /// The configuration as given (kept to render it as it was written).
    config: Map<String, Value>,
}

fn bad(what: String) -> Error {
    super::exact::config_error(NAME, what)
}

/// The bits of a component, the components of an item and whether it is a signed
/// integer, for the types the specification lists.
fn layout(dtype: &DType) -> Option<(u32, usize, bool)> {
    Some(match &dtype.kind {
        DataKind::Bool => (1, 1, false),
        DataKind::NarrowInt { signed, bits } => (*bits, 1, *signed),
        DataKind::Int(n) => (8 * *n as u32, 1, true),
        DataKind::UInt(n) | DataKind::Float(n) => (8 * *n as u32, 1, false),
        DataKind::Complex(n) => (4 * *n as u32, 2, false),
        DataKind::ExtFloat(t) => (t.format().bits, 1, false),
        _ => return None,
    })
}

impl PackBits {
    /// Reads the configuration for items of `input`.
    pub fn from_v3(config: &Map<String, Value>, input: &DType) -> Result<Self> {
        const KEYS: [&str; 5] = [
            "padding_encoding",
            "first_bit",
            "last_bit",
            "start_bit",
            "end_bit",
        ];
        if let Some(key) = config.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(bad(format!("unknown configuration key {key:?}")));
        }
        let (component_bits, components, signed) = layout(input).ok_or_else(|| {
            bad(format!(
                "cannot encode items of {} (bool, integers, floats and complex types)",
                input.to_v2()
            ))
        })?;
        let padding = match config.get("padding_encoding") {
            None => Padding::None,
            Some(v) => match v.as_str() {
                Some("none") => Padding::None,
                Some("first_byte" | "start_byte") => Padding::FirstByte,
                Some("last_byte" | "end_byte") => Padding::LastByte,
                _ => {
                    return Err(bad(format!(
                        "\"padding_encoding\" {v} is not \"none\", \"first_byte\" or \"last_byte\""
                    )))
                }
            },
        };
        let bit = |keys: [&str; 2], default: u32| -> Result<u32> {
            let given: Vec<(&str, &Value)> = keys
                .iter()
                .filter_map(|k| config.get(*k).map(|v| (*k, v)))
                .filter(|(_, v)| !v.is_null())
                .collect();
            match given.as_slice() {
                [] => Ok(default),
                [(key, v)] => v
                    .as_u64()
                    .filter(|&b| b < component_bits as u64)
                    .map(|b| b as u32)
                    .ok_or_else(|| {
                        bad(format!(
                            "{key:?} {v} is not a bit of the {component_bits}-bit components of {}",
                            input.to_v2()
                        ))
                    }),
                _ => Err(bad(format!(
                    "both {:?} and {:?} are given",
                    keys[0], keys[1]
                ))),
            }
        };
        let first_bit = bit(["first_bit", "start_bit"], 0)?;
        let last_bit = bit(["last_bit", "end_bit"], component_bits - 1)?;
        if last_bit < first_bit {
            return Err(bad(format!(
                "last_bit {last_bit} is less than first_bit {first_bit}"
            )));
        }
        Ok(PackBits {
            dtype: input.clone(),
            components,
            first_bit,
            last_bit,
            signed,
            padding,
            config: config.clone(),
        })
    }

    /// Bits stored per component.
    fn kept_bits(&self) -> u32 {
        self.last_bit - self.first_bit + 1
    }

    /// Bytes of one component.
    fn component_size(&self) -> usize {
        self.dtype.item_size() / self.components
    }

    /// Packed bytes (without the padding byte) and padding bits of `len` decoded bytes.
    fn packed(&self, len: usize) -> (usize, u8) {
        let bits = (len / self.component_size()).saturating_mul(self.kept_bits() as usize);
        (bits.div_ceil(8), ((8 - bits % 8) % 8) as u8)
    }

    /// The little-endian value of the component at the start of `bytes`.
    fn load(&self, bytes: &[u8]) -> u64 {
        let size = self.component_size();
        let mut raw = [0u8; 8];
        raw[..size].copy_from_slice(&bytes[..size]);
        if self.dtype.order == ByteOrder::Big {
            raw[..size].reverse();
        }
        u64::from_le_bytes(raw)
    }

    /// Writes a component's little-endian value to the start of `out`.
    fn store(&self, value: u64, out: &mut [u8]) {
        let size = self.component_size();
        out[..size].copy_from_slice(&value.to_le_bytes()[..size]);
        if self.dtype.order == ByteOrder::Big {
            out[..size].reverse();
        }
    }
}

impl Filter for PackBits {
    fn config(&self) -> Map<String, Value> {
        super::config_with_id(NAME, &self.config)
    }

    fn v3_codec(&self) -> Value {
        super::v3_entry(NAME, &self.config)
    }

    fn numcodecs(&self) -> bool {
        false
    }

    fn array_to_bytes(&self) -> bool {
        true
    }

    fn elementwise(&self) -> bool {
        false
    }

    fn encoded_dtype(&self) -> DType {
        DType::new(DataKind::UInt(1), ByteOrder::NotApplicable)
    }

    fn encoded_len(&self, len: usize) -> usize {
        let (packed, _) = self.packed(len);
        packed + (self.padding != Padding::None) as usize
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let (packed, padding) = self.packed(data.len());
        out.clear();
        out.resize(self.encoded_len(data.len()), 0);
        let stream = match self.padding {
            Padding::None => &mut out[..],
            Padding::FirstByte => {
                out[0] = padding;
                &mut out[1..]
            }
            Padding::LastByte => {
                out[packed] = padding;
                &mut out[..packed]
            }
        };
        let kept = self.kept_bits();
        let mask = u64::MAX >> (64 - kept);
        let mut bit = 0usize;
        for component in data.chunks_exact(self.component_size()) {
            let mut value = (self.load(component) >> self.first_bit) & mask;
            let mut left = kept;
            while left > 0 {
                let (byte, offset) = (bit / 8, (bit % 8) as u32);
                let take = left.min(8 - offset);
                stream[byte] |= ((value & ((1 << take) - 1)) as u8) << offset;
                value >>= take;
                left -= take;
                bit += take as usize;
            }
        }
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let (packed, padding) = self.packed(out.len());
        if data.len() != self.encoded_len(out.len())
            || !out.len().is_multiple_of(self.component_size())
        {
            return Err(Error::Codec(format!(
                "packbits: encoded data has {} bytes, expected {}",
                data.len(),
                self.encoded_len(out.len())
            )));
        }
        let (stream, stored_padding) = match self.padding {
            Padding::None => (data, padding),
            Padding::FirstByte => (&data[1..], data[0]),
            Padding::LastByte => (&data[..packed], data[packed]),
        };
        if stored_padding != padding {
            return Err(Error::Codec(format!(
                "packbits: the padding byte says {stored_padding} bits, expected {padding}"
            )));
        }
        let kept = self.kept_bits();
        let top = self.first_bit + kept;
        let mut bit = 0usize;
        let size = self.component_size();
        for component in out.chunks_exact_mut(size) {
            let mut value = 0u64;
            let mut got = 0u32;
            while got < kept {
                let (byte, offset) = (bit / 8, (bit % 8) as u32);
                let take = (kept - got).min(8 - offset);
                let bits = (stream[byte] >> offset) as u64 & ((1 << take) - 1);
                value |= bits << got;
                got += take;
                bit += take as usize;
            }
            value <<= self.first_bit;
            // Signed integers: the last kept bit is the sign, extended over the stored
            // bytes (a narrow integer's byte holds its value sign-extended).
            if self.signed && value >> (top - 1) & 1 == 1 && top < 64 {
                value |= u64::MAX << top;
            }
            self.store(value, component);
        }
        Ok(())
    }
}
