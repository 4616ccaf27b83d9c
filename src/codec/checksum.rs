//! numcodecs' 32-bit checksum codecs: `crc32` and `adler32` (4 little-endian bytes at the
//! start, or at the end with `location: "end"`), `fletcher32` and `jenkins_lookup3` (4
//! little-endian bytes at the end). Decoding checks the checksum.

use super::{check_len, Codec, Config};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The checksum algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Algorithm {
    /// zlib's CRC-32.
    Crc32,
    /// zlib's Adler-32.
    Adler32,
    /// HDF5's Fletcher-32 (16-bit big-endian words).
    Fletcher32,
    /// HDF5's Bob Jenkins lookup3 hash, with a seed and bytes hashed before the data.
    Lookup3 {
        initval: u32,
        prefix: Option<Vec<u8>>,
    },
}

/// A checksum codec.
#[derive(Debug)]
pub struct Checksum {
    algorithm: Algorithm,
    /// The checksum precedes the data (else it follows it).
    at_start: bool,
}

impl Checksum {
    /// Reads the configuration of codec `id` (`crc32`, `adler32`, `fletcher32`,
    /// `jenkins_lookup3`).
    pub(crate) fn from_config(cfg: &Config) -> Result<Self> {
        let (algorithm, default_start) = match cfg.id {
            "crc32" => (Algorithm::Crc32, true),
            "adler32" => (Algorithm::Adler32, true),
            "fletcher32" => (Algorithm::Fletcher32, false),
            _ => {
                let initval = cfg.int("initval", 0, 0..=u32::MAX as i64)? as u32;
                let prefix = match cfg.map.get("prefix") {
                    None | Some(Value::Null) => None,
                    Some(Value::Array(list)) => Some(
                        list.iter()
                            .map(|v| v.as_u64().filter(|&b| b < 256).map(|b| b as u8))
                            .collect::<Option<Vec<u8>>>()
                            .ok_or_else(|| cfg.bad("prefix", "null or a list of bytes"))?,
                    ),
                    Some(_) => return Err(cfg.bad("prefix", "null or a list of bytes")),
                };
                (Algorithm::Lookup3 { initval, prefix }, false)
            }
        };
        let at_start = match cfg.map.get("location") {
            None | Some(Value::Null) => default_start,
            Some(v) if matches!(algorithm, Algorithm::Crc32 | Algorithm::Adler32) => {
                match v.as_str() {
                    Some("start") => true,
                    Some("end") => false,
                    _ => return Err(cfg.bad("location", "\"start\" or \"end\"")),
                }
            }
            Some(_) => return Err(cfg.bad("location", "absent (this checksum is at the end)")),
        };
        Ok(Checksum {
            algorithm,
            at_start,
        })
    }

    fn id(&self) -> &'static str {
        match self.algorithm {
            Algorithm::Crc32 => "crc32",
            Algorithm::Adler32 => "adler32",
            Algorithm::Fletcher32 => "fletcher32",
            Algorithm::Lookup3 { .. } => "jenkins_lookup3",
        }
    }

    /// The checksum of `data`.
    pub fn checksum(&self, data: &[u8]) -> u32 {
        match &self.algorithm {
            Algorithm::Crc32 => crc32fast::hash(data),
            Algorithm::Adler32 => {
                let mut a = adler2::Adler32::new();
                a.write_slice(data);
                a.checksum()
            }
            Algorithm::Fletcher32 => fletcher32(data),
            Algorithm::Lookup3 { initval, prefix } => match prefix {
                None => lookup3(data, *initval),
                Some(p) => lookup3(&[p.as_slice(), data].concat(), *initval),
            },
        }
    }

    /// The payload of `data` after checking its checksum.
    fn strip<'a>(&self, data: &'a [u8]) -> Result<&'a [u8]> {
        let id = self.id();
        if data.len() < 4 {
            return Err(Error::Codec(format!(
                "{id} data has {} bytes, fewer than its 4-byte checksum",
                data.len()
            )));
        }
        let (stored, body) = if self.at_start {
            let (s, b) = data.split_at(4);
            (s, b)
        } else {
            let (b, s) = data.split_at(data.len() - 4);
            (s, b)
        };
        let stored = u32::from_le_bytes(stored.try_into().expect("4 bytes"));
        let actual = self.checksum(body);
        if stored != actual {
            return Err(Error::Codec(format!(
                "{id} checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"
            )));
        }
        Ok(body)
    }
}

impl Codec for Checksum {
    fn config(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("id".into(), self.id().into());
        match &self.algorithm {
            Algorithm::Crc32 | Algorithm::Adler32 if !self.at_start => {
                map.insert("location".into(), "end".into());
            }
            Algorithm::Lookup3 { initval, prefix } => {
                map.insert("initval".into(), (*initval).into());
                map.insert(
                    "prefix".into(),
                    prefix.clone().map(Value::from).unwrap_or(Value::Null),
                );
            }
            _ => {}
        }
        map
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let sum = self.checksum(data).to_le_bytes();
        out.clear();
        crate::error::try_reserve(out, data.len() + 4, "a checksummed chunk")?;
        if self.at_start {
            out.extend_from_slice(&sum);
        }
        out.extend_from_slice(data);
        if !self.at_start {
            out.extend_from_slice(&sum);
        }
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let body = self.strip(data)?;
        check_len(self.id(), body.len(), out.len())?;
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

/// HDF5's Fletcher-32 over big-endian 16-bit words (a last odd byte is the high byte of
/// a final word), as numcodecs computes it.
fn fletcher32(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let fold = |s: u32| (s & 0xffff) + (s >> 16);
    let words = data.len() / 2;
    for block in data[..words * 2].chunks(720) {
        for word in block.chunks_exact(2) {
            sum1 = sum1.wrapping_add(((word[0] as u32) << 8) | word[1] as u32);
            sum2 = sum2.wrapping_add(sum1);
        }
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    if data.len() % 2 == 1 {
        sum1 = sum1.wrapping_add((data[data.len() - 1] as u32) << 8);
        sum2 = sum2.wrapping_add(sum1);
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
    (sum2 << 16) | sum1
}

/// Bob Jenkins' lookup3 `hashlittle` over bytes, as HDF5's `H5_checksum_lookup3`.
fn lookup3(data: &[u8], initval: u32) -> u32 {
    let init = 0xdead_beef_u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let word = |k: &[u8], i: usize| -> u32 {
        (0..4).fold(0u32, |acc, j| {
            acc | (k.get(i + j).copied().unwrap_or(0) as u32) << (8 * j)
        })
    };
    let mut k = data;
    while k.len() > 12 {
        a = a.wrapping_add(word(k, 0));
        b = b.wrapping_add(word(k, 4));
        c = c.wrapping_add(word(k, 8));
        // mix(a, b, c)
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(4);
        b = b.wrapping_add(a);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(k, 0));
    b = b.wrapping_add(word(k, 4));
    c = c.wrapping_add(word(k, 8));
    // final(a, b, c)
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(24));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Values computed by numcodecs 0.15.1 / 0.16.1.
        assert_eq!(crc32fast::hash(b"hello"), 0x3610a686);
        assert_eq!(fletcher32(b""), 0);
        assert_eq!(lookup3(b"", 0), 0xdeadbeef);
    }
}
