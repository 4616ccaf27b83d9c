//! bzip2, as numcodecs' `BZ2`.

use super::{config_map, read_exact_stream, Codec, Config};
use crate::error::{Error, Result};
use bzip2::{read::MultiBzDecoder, write::BzEncoder, Compression};
use serde_json::{Map, Value};
use std::io::Write;

/// The bz2 codec.
#[derive(Debug)]
pub struct Bz2 {
    level: u32,
}

impl Bz2 {
    /// Builds the codec; the default level is numcodecs' 1.
    pub(crate) fn from_config(cfg: &Config) -> Result<Self> {
        Ok(Bz2 {
            level: cfg.int("level", 1, 1..=9)? as u32,
        })
    }
}

impl Codec for Bz2 {
    fn config(&self) -> Map<String, Value> {
        config_map([("id", "bz2".into()), ("level", self.level.into())])
    }

    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        let failed = |e: std::io::Error| Error::Codec(format!("bz2: {e}"));
        let mut enc = BzEncoder::new(Vec::new(), Compression::new(self.level));
        enc.write_all(data).map_err(failed)?;
        enc.finish().map_err(failed)
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        read_exact_stream("bz2", MultiBzDecoder::new(data), out)
    }

    fn decode_bounded(&self, data: &[u8], limit: usize) -> Result<Vec<u8>> {
        super::read_bounded_stream("bz2", MultiBzDecoder::new(data), limit)
    }
}
