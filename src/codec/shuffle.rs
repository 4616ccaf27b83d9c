//! numcodecs' `shuffle`: byte `k` of every element is gathered into the `k`-th block.
//! `elementsize` is the element size in bytes (numcodecs' default 4); NCZarr's
//! `elementsize: 0` means the item size of the data shuffled, and is never written.

use super::{check_len, config_map, Codec, Config};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The shuffle codec.
#[derive(Debug)]
pub struct Shuffle {
    elementsize: usize,
}

impl Shuffle {
    /// Reads the configuration; `item_size` stands in for `elementsize: 0`.
    pub(crate) fn from_config(cfg: &Config, item_size: usize) -> Result<Self> {
        let elementsize = match cfg.int("elementsize", 4, 0..=1 << 20)? {
            0 => item_size,
            n => n as usize,
        };
        Ok(Shuffle { elementsize })
    }

    fn check(&self, len: usize) -> Result<()> {
        if self.elementsize > 1 && !len.is_multiple_of(self.elementsize) {
            return Err(Error::Codec(format!(
                "shuffle: {len} bytes are not a whole number of {}-byte elements",
                self.elementsize
            )));
        }
        Ok(())
    }

    fn run(&self, data: &[u8], out: &mut [u8], unshuffle: bool) {
        let size = self.elementsize;
        if size <= 1 {
            out.copy_from_slice(data);
            return;
        }
        let count = data.len() / size;
        for i in 0..count {
            for b in 0..size {
                let (packed, spread) = (b * count + i, i * size + b);
                if unshuffle {
                    out[spread] = data[packed];
                } else {
                    out[packed] = data[spread];
                }
            }
        }
    }
}

impl Codec for Shuffle {
    fn config(&self) -> Map<String, Value> {
        config_map([
            ("id", "shuffle".into()),
            ("elementsize", self.elementsize.into()),
        ])
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        self.check(data.len())?;
        crate::error::try_resize(out, data.len(), "a shuffled chunk")?;
        self.run(data, out, false);
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        check_len("shuffle", data.len(), out.len())?;
        self.check(data.len())?;
        self.run(data, out, true);
        Ok(())
    }

    fn decoded_len(&self, data: &[u8]) -> Result<usize> {
        Ok(data.len())
    }

    fn encoded_len(&self, len: usize) -> Option<usize> {
        Some(len)
    }
}
