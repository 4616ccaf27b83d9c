//! LZMA in the xz container or the legacy "alone" format, as numcodecs' `LZMA`.

use super::{config_map, read_exact_stream, Codec, Config};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::io::Write;
use xz2::stream::{Check, LzmaOptions, Stream};

const FORMAT_XZ: i64 = 1;
const FORMAT_ALONE: i64 = 2;

/// The lzma codec.
#[derive(Debug)]
pub struct Lzma {
    format: i64,
    check: i64,
    preset: Option<u32>,
}

impl Lzma {
    /// Builds the codec; defaults are numcodecs' (xz format, default check, preset 6).
    /// Raw streams and custom filter chains are refused.
    pub(crate) fn from_config(cfg: &Config) -> Result<Self> {
        let format = cfg.int("format", FORMAT_XZ, 0..=3)?;
        if format == 3 || cfg.has("filters") {
            return Err(Error::Unsupported(
                "lzma with raw format or custom filters is not supported".into(),
            ));
        }
        let check = cfg.int("check", -1, -1..=10)?;
        if ![-1, 0, 1, 4, 10].contains(&check) {
            return Err(cfg.bad("check", "one of -1, 0, 1, 4, 10"));
        }
        let preset = if cfg.has("preset") {
            Some(cfg.int("preset", 6, 0..=9)? as u32)
        } else {
            None
        };
        Ok(Lzma {
            // Format 0 (auto) only matters for decoding; encode as xz.
            format: if format == 0 { FORMAT_XZ } else { format },
            check,
            preset,
        })
    }

    fn encoder(&self) -> Result<Stream> {
        let preset = self.preset.unwrap_or(6);
        let failed = |e: xz2::stream::Error| Error::Codec(format!("lzma: {e}"));
        if self.format == FORMAT_ALONE {
            let options = LzmaOptions::new_preset(preset).map_err(failed)?;
            return Stream::new_lzma_encoder(&options).map_err(failed);
        }
        let check = match self.check {
            0 => Check::None,
            1 => Check::Crc32,
            10 => Check::Sha256,
            _ => Check::Crc64,
        };
        Stream::new_easy_encoder(preset, check).map_err(failed)
    }
}

impl Codec for Lzma {
    fn config(&self) -> Map<String, Value> {
        config_map([
            ("id", "lzma".into()),
            ("format", self.format.into()),
            ("check", self.check.into()),
            (
                "preset",
                self.preset.map(Value::from).unwrap_or(Value::Null),
            ),
            ("filters", Value::Null),
        ])
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let failed = |e: std::io::Error| Error::Codec(format!("lzma: {e}"));
        out.clear();
        let mut enc = xz2::write::XzEncoder::new_stream(std::mem::take(out), self.encoder()?);
        enc.write_all(data).map_err(failed)?;
        *out = enc.finish().map_err(failed)?;
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        read_exact_stream("lzma", decoder(data)?, out)
    }

    fn decode_bounded(&self, data: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
        super::read_bounded_stream("lzma", decoder(data)?, limit, out)
    }
}

/// A decoder of both xz and "alone" streams; its memory limit bounds what a hostile header
/// can make it allocate.
fn decoder(data: &[u8]) -> Result<xz2::read::XzDecoder<&[u8]>> {
    let stream = Stream::new_auto_decoder(1 << 30, xz2::stream::CONCATENATED)
        .map_err(|e| Error::Codec(format!("lzma: {e}")))?;
    Ok(xz2::read::XzDecoder::new_stream(data, stream))
}
