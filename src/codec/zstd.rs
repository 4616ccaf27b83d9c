//! Zstandard, as numcodecs' `Zstd` (with its `checksum` key); decodes frames with or
//! without a content size.

use super::{check_len, config_map, Codec, Config};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::cell::RefCell;

thread_local! {
    /// Each thread's compression context and the (level, checksum) it is set for: making
    /// one per chunk costs about as much as compressing a small chunk.
    static COMPRESSOR: RefCell<Option<(i32, bool, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
    /// Each thread's decompression context.
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// The zstd codec.
#[derive(Debug)]
pub struct Zstd {
    level: i32,
    checksum: bool,
}

impl Zstd {
    /// Builds the codec; the default level is numcodecs' 1. Any C `int` is accepted, as
    /// numcodecs passes it to zstd, which clamps it to the levels it has (-131072..=22).
    pub(crate) fn from_config(cfg: &Config) -> Result<Self> {
        Ok(Zstd {
            level: cfg.int("level", 1, i32::MIN.into()..=i32::MAX.into())? as i32,
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
        out.clear();
        crate::error::try_reserve(
            out,
            zstd::zstd_safe::compress_bound(data.len()),
            "zstd output",
        )?;
        COMPRESSOR.with(|slot| {
            let mut slot = slot.borrow_mut();
            let current =
                matches!(&*slot, Some((l, c, _)) if *l == self.level && *c == self.checksum);
            if !current {
                let mut compressor = zstd::bulk::Compressor::new(self.level).map_err(failed)?;
                compressor
                    .set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(self.checksum))
                    .map_err(failed)?;
                *slot = Some((self.level, self.checksum, compressor));
            }
            let (_, _, compressor) = slot.as_mut().expect("set above");
            compressor.compress_to_buffer(data, out).map_err(failed)
        })?;
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let failed = |e: std::io::Error| Error::Codec(format!("zstd: {e}"));
        let n = DECOMPRESSOR.with(|slot| {
            let mut slot = slot.borrow_mut();
            if slot.is_none() {
                *slot = Some(zstd::bulk::Decompressor::new().map_err(failed)?);
            }
            slot.as_mut()
                .expect("set above")
                .decompress_to_buffer(data, out)
                .map_err(failed)
        })?;
        check_len("zstd", n, out.len())
    }

    fn decode_bounded(&self, data: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
        let decoder = zstd::stream::read::Decoder::with_buffer(data)
            .map_err(|e| Error::Codec(format!("zstd: {e}")))?;
        super::read_bounded_stream("zstd", decoder, limit, out)
    }
}
