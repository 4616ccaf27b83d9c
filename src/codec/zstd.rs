//! Zstandard, as numcodecs' `Zstd` (with its `checksum` key); decodes frames with or
//! without a content size.

use super::{check_len, config_map, Codec, Config};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The zstd codec.
#[derive(Debug)]
pub struct Zstd {
    level: i32,
    checksum: bool,
}

impl Zstd {
    /// Builds the codec; the default level is numcodecs' 1.
    pub(crate) fn from_config(cfg: &Config) -> Result<Self> {
        Ok(Zstd {
            level: cfg.int("level", 1, -131072..=22)? as i32,
            checksum: cfg.bool("checksum", false)?,
        })
    }
}

impl Codec for Zstd {
    fn config(&self) -> Map<String, Value> {
        let mut map = config_map([("id", "zstd".into()), ("level", self.level.into())]);
        if self.checksum {
            map.insert("checksum".into(), true.into());
        }
        map
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let failed = |e: std::io::Error| Error::Codec(format!("zstd: {e}"));
        let mut compressor = zstd::bulk::Compressor::new(self.level).map_err(failed)?;
        compressor
            .set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(self.checksum))
            .map_err(failed)?;
        out.clear();
        crate::error::try_reserve(
            out,
            zstd::zstd_safe::compress_bound(data.len()),
            "zstd output",
        )?;
        compressor.compress_to_buffer(data, out).map_err(failed)?;
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let mut decompressor =
            zstd::bulk::Decompressor::new().map_err(|e| Error::Codec(format!("zstd: {e}")))?;
        let n = decompressor
            .decompress_to_buffer(data, out)
            .map_err(|e| Error::Codec(format!("zstd: {e}")))?;
        check_len("zstd", n, out.len())
    }

    fn decode_bounded(&self, data: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
        let decoder = zstd::stream::read::Decoder::with_buffer(data)
            .map_err(|e| Error::Codec(format!("zstd: {e}")))?;
        super::read_bounded_stream("zstd", decoder, limit, out)
    }
}
