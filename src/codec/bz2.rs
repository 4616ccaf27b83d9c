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

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let failed = |e: std::io::Error| Error::Codec(format!("bz2: {e}"));
        out.clear();
        let mut enc = BzEncoder::new(std::mem::take(out), Compression::new(self.level));
        enc.write_all(data).map_err(failed)?;
        *out = enc.finish().map_err(failed)?;
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        read_exact_stream("bz2", MultiBzDecoder::new(data), out)
    }

    fn decode_bounded(&self, data: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
        super::read_bounded_stream("bz2", MultiBzDecoder::new(data), limit, out)
    }
}
