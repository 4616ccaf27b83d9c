//! The v3 `crc32c` codec: appends the CRC-32C of the data as 4 little-endian bytes, and
//! checks it when decoding.

use super::{check_len, config_map, Codec};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The crc32c checksum codec.
#[derive(Debug)]
pub struct Crc32c;

impl Crc32c {
    fn strip<'a>(&self, data: &'a [u8]) -> Result<&'a [u8]> {
        let split = data
            .len()
            .checked_sub(4)
            .ok_or_else(|| Error::Codec("crc32c data is shorter than its checksum".into()))?;
        let (body, stored) = data.split_at(split);
        let stored = u32::from_le_bytes(stored.try_into().expect("4 bytes"));
        let actual = crc32c::crc32c(body);
        if stored != actual {
            return Err(Error::Codec(format!(
                "crc32c checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"
            )));
        }
        Ok(body)
    }
}

impl Codec for Crc32c {
    fn config(&self) -> Map<String, Value> {
        config_map([("id", "crc32c".into())])
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        crate::error::try_reserve(out, data.len() + 4, "a checksummed chunk")?;
        out.extend_from_slice(data);
        out.extend_from_slice(&crc32c::crc32c(data).to_le_bytes());
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let body = self.strip(data)?;
        check_len("crc32c", body.len(), out.len())?;
        out.copy_from_slice(body);
        Ok(())
    }

    fn decoded_len(&self, data: &[u8]) -> Result<usize> {
        Ok(self.strip(data)?.len())
    }

    fn encoded_len(&self, len: usize) -> Option<usize> {
        Some(len + 4)
    }
}
