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
    /// uses the default speed, which every decoder reads).
    pub(crate) fn from_config(cfg: &Config) -> Result<Self> {
        Ok(Lz4 {
            acceleration: cfg.int("acceleration", 1, 1..=65537)?,
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

    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        let len = u32::try_from(data.len())
            .map_err(|_| Error::Codec(format!("lz4 cannot compress {} bytes", data.len())))?;
        let mut out = len.to_le_bytes().to_vec();
        out.extend(lz4_flex::block::compress(data));
        Ok(out)
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

    fn decode_bounded(&self, data: &[u8], limit: usize) -> Result<Vec<u8>> {
        let size = data
            .get(..4)
            .map(|p| u32::from_le_bytes([p[0], p[1], p[2], p[3]]) as usize)
            .ok_or_else(|| Error::Codec("lz4 data is shorter than its length prefix".into()))?;
        super::check_limit(&self.config(), size, limit)?;
        let mut out = crate::error::try_zeroed(size, "an lz4 chunk")?;
        self.decode_into(data, &mut out)?;
        Ok(out)
    }
}
