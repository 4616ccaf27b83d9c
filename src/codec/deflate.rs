//! zlib and gzip (DEFLATE in its two wrappers), as numcodecs' `Zlib` and `GZip`.

use super::{config_map, read_bounded_stream, read_exact_stream, Codec, Config};
use crate::error::{Error, Result};
use flate2::{read, write, Compression};
use serde_json::{Map, Value};
use std::io::Write;

/// Which wrapper surrounds the DEFLATE stream.
#[derive(Debug, Clone, Copy)]
pub enum Wrapper {
    /// RFC 1950 (numcodecs `zlib`).
    Zlib,
    /// RFC 1952 (numcodecs `gzip`).
    Gzip,
}

/// The zlib or gzip codec.
#[derive(Debug)]
pub struct Deflate {
    wrapper: Wrapper,
    /// The level as configured: 0..=9, or -1 for zlib's default (6), which Python's zlib
    /// and numcodecs accept.
    level: i64,
}

impl Deflate {
    /// Builds the codec; the default level is numcodecs' 1.
    pub(crate) fn from_config(cfg: &Config, wrapper: Wrapper) -> Result<Self> {
        Ok(Deflate {
            wrapper,
            level: cfg.int("level", 1, -1..=9)?,
        })
    }

    fn name(&self) -> &'static str {
        match self.wrapper {
            Wrapper::Zlib => "zlib",
            Wrapper::Gzip => "gzip",
        }
    }
}

impl Codec for Deflate {
    fn config(&self) -> Map<String, Value> {
        config_map([("id", self.name().into()), ("level", self.level.into())])
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        let level = u32::try_from(self.level).map_or(Compression::default(), Compression::new);
        let failed = |e: std::io::Error| Error::Codec(format!("{}: {e}", self.name()));
        match self.wrapper {
            Wrapper::Zlib => {
                let mut enc = write::ZlibEncoder::new(std::mem::take(out), level);
                enc.write_all(data).map_err(failed)?;
                *out = enc.finish().map_err(failed)?;
            }
            Wrapper::Gzip => {
                let mut enc = write::GzEncoder::new(std::mem::take(out), level);
                enc.write_all(data).map_err(failed)?;
                *out = enc.finish().map_err(failed)?;
            }
        }
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        match self.wrapper {
            Wrapper::Zlib => read_exact_stream("zlib", read::ZlibDecoder::new(data), out),
            Wrapper::Gzip => read_exact_stream("gzip", read::MultiGzDecoder::new(data), out),
        }
    }

    fn decode_bounded(&self, data: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
        match self.wrapper {
            Wrapper::Zlib => read_bounded_stream("zlib", read::ZlibDecoder::new(data), limit, out),
            Wrapper::Gzip => {
                read_bounded_stream("gzip", read::MultiGzDecoder::new(data), limit, out)
            }
        }
    }
}
