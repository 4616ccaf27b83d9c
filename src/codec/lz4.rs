//! LZ4 as numcodecs writes it: a 4-byte little-endian length prefix, then one LZ4 block.

use super::{check_len, config_map, Codec, Config};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The lz4 codec.
#[derive(Debug)]
pub struct Lz4 {
    acceleration: i64,
}

impl Lz4 {
    /// Builds the codec; `acceleration` is kept in the configuration (the encoder always
    /// uses the default speed, which every decoder reads). Any C `int` is accepted, as
    /// numcodecs passes it to LZ4, which reads values below 1 as 1 and clamps large ones.
    pub(crate) fn from_config(cfg: &Config) -> Result<Self> {
        Ok(Lz4 {
            acceleration: cfg.int("acceleration", 1, i32::MIN.into()..=i32::MAX.into())?,
        })
    }
}

impl Codec for Lz4 {
    fn config(&self) -> Map<String, Value> {
        config_map([
            ("id", "lz4".into()),
            ("acceleration", self.acceleration.into()),
        ])
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let len = u32::try_from(data.len())
            .map_err(|_| Error::Codec(format!("lz4 cannot compress {} bytes", data.len())))?;
        let bound = 4 + lz4_flex::block::get_maximum_output_size(data.len());
        crate::error::try_resize(out, bound, "lz4 output")?;
        out[..4].copy_from_slice(&len.to_le_bytes());
        let n = lz4_flex::block::compress_into(data, &mut out[4..])
            .map_err(|e| Error::Codec(format!("lz4: {e}")))?;
        out.truncate(4 + n);
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let prefix: [u8; 4] = data
            .get(..4)
            .and_then(|p| p.try_into().ok())
            .ok_or_else(|| Error::Codec("lz4 data is shorter than its length prefix".into()))?;
        check_len("lz4", u32::from_le_bytes(prefix) as usize, out.len())?;
        let n = lz4_flex::block::decompress_into(&data[4..], out)
            .map_err(|e| Error::Codec(format!("lz4: {e}")))?;
        check_len("lz4", n, out.len())
    }

    fn decoded_len(&self, data: &[u8]) -> Result<usize> {
        data.get(..4)
            .map(|p| u32::from_le_bytes([p[0], p[1], p[2], p[3]]) as usize)
            .ok_or_else(|| Error::Codec("lz4 data is shorter than its length prefix".into()))
    }
}
