//! numcodecs' `base64`: the bytes as standard Base64 text (RFC 4648 alphabet, `=` padding).

use super::{check_len, config_map, Codec};
use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{Map, Value};

/// The base64 codec (no parameters).
#[derive(Debug)]
pub struct Base64;

impl Codec for Base64 {
    fn config(&self) -> Map<String, Value> {
        config_map([("id", "base64".into())])
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        crate::error::try_resize(out, 4 * data.len().div_ceil(3), "base64 output")?;
        let n = STANDARD
            .encode_slice(data, out)
            .map_err(|e| Error::Codec(format!("base64: {e}")))?;
        out.truncate(n);
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        check_len("base64", self.decoded_len(data)?, out.len())?;
        let n = STANDARD
            .decode_slice_unchecked(data, out)
            .map_err(|e| Error::Codec(format!("base64: {e}")))?;
        check_len("base64", n, out.len())
    }

    fn decoded_len(&self, data: &[u8]) -> Result<usize> {
        if !data.len().is_multiple_of(4) {
            return Err(Error::Codec(format!(
                "base64 data has {} bytes, not a multiple of 4",
                data.len()
            )));
        }
        let padding = data
            .iter()
            .rev()
            .take(2)
            .take_while(|&&b| b == b'=')
            .count();
        Ok(data.len() / 4 * 3 - padding)
    }

    fn encoded_len(&self, len: usize) -> Option<usize> {
        Some(4 * len.div_ceil(3))
    }
}
