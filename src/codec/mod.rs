//! Codecs: the codec chain of an array ([`chain`]), the array filters ([`filter`]) and the
//! bytes→bytes codecs (numcodecs-compatible compressors, checksums and shuffle), built from
//! their JSON configuration through one explicit registry.

mod base64;
mod blosc;
mod bz2;
pub mod chain;
mod checksum;
mod crc32c;
mod deflate;
pub mod filter;
mod lz4;
mod lzma;
#[cfg(feature = "pcodec")]
mod pcodec;
mod shuffle;
pub mod typed;
#[cfg(feature = "zfp")]
mod zfp;
mod zstd;

use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A bytes→bytes codec.
pub trait Codec: Send + Sync + std::fmt::Debug {
    /// The full configuration, with `id` and every default filled in, as numcodecs'
    /// `get_config()` gives it.
    fn config(&self) -> Map<String, Value>;
    /// Encodes `data` into `out`, replacing its contents (its capacity is reused).
    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()>;
    /// Decodes `data` into `out`, which has exactly the decoded size; decoded data of any
    /// other size is an error, and nothing is written past `out`.
    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()>;
    /// Decodes data whose decoded size is not known in advance into `out` (replacing its
    /// contents), failing once the output would exceed `limit` bytes, so memory stays
    /// bounded. Codecs whose decoded size follows from their data need not override it.
    fn decode_bounded(&self, data: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<()> {
        let len = self.decoded_len(data)?;
        check_limit(&self.config(), len, limit)?;
        crate::error::try_resize(out, len, "a decoded chunk")?;
        self.decode_into(data, out)
    }
    /// The decoded size of `data` when it follows from the data's own length (checksums,
    /// shuffle); compressors, whose size is not known without decoding, refuse.
    fn decoded_len(&self, _data: &[u8]) -> Result<usize> {
        Err(Error::Internal(format!(
            "codec {} does not know its decoded size",
            self.config()
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("?")
        )))
    }
    /// The encoded size of `len` bytes, when it follows from `len` alone (checksums,
    /// shuffle); `None` for compressors.
    fn encoded_len(&self, _len: usize) -> Option<usize> {
        None
    }
    /// Whether v2 metadata lists it among the `filters` (not as the `compressor`).
    fn v2_filter(&self) -> bool {
        false
    }
    /// The codec as one that encodes a chunk's numbers knowing their type and shape (zfp,
    /// pcodec), which the chain then calls instead of the bytes→bytes methods.
    fn typed(&self) -> Option<&dyn typed::TypedCodec> {
        None
    }
}

/// The most bytes `codec` can make of `len` bytes: its exact size when that follows from
/// `len` (checksums, shuffle), else what incompressible data grows to at worst (every
/// compressor here adds far less than an eighth plus 64 KiB).
pub fn max_compressed_len(codec: &dyn Codec, len: usize) -> usize {
    codec
        .encoded_len(len)
        .unwrap_or_else(|| len.saturating_add(len / 8).saturating_add(1 << 16))
}

/// Encodes `data` with `codec` into a new buffer.
pub fn encode(codec: &dyn Codec, data: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    codec.encode_into(data, &mut out)?;
    Ok(out)
}

/// A shared codec.
pub type CodecRef = Arc<dyn Codec>;

/// The codec ids this build supports.
pub const SUPPORTED: [&str; 14] = [
    "blosc",
    "zlib",
    "gzip",
    "bz2",
    "lzma",
    "zstd",
    "lz4",
    "crc32c",
    "crc32",
    "adler32",
    "fletcher32",
    "jenkins_lookup3",
    "shuffle",
    "base64",
];

/// The ids of the codecs of typed chunks this build has (by cargo feature).
pub const TYPED: &[&str] = &[
    #[cfg(feature = "zfp")]
    "zfp",
    #[cfg(feature = "zfp")]
    "zfpy",
    #[cfg(feature = "pcodec")]
    "pcodec",
];

/// Builds a codec from its v2 configuration (`{"id": "zstd", "level": 3}`); `item_size`
/// is the item size of the data it encodes (blosc's default `typesize`, shuffle's
/// `elementsize: 0`).
pub fn from_config(config: &Map<String, Value>, item_size: usize) -> Result<CodecRef> {
    let id = config.get("id").and_then(Value::as_str).ok_or_else(|| {
        Error::Metadata(format!(
            "codec configuration {} has no string \"id\"",
            Value::Object(config.clone())
        ))
    })?;
    let cfg = Config { id, map: config };
    Ok(match id {
        "blosc" => Arc::new(blosc::Blosc::from_config(&cfg, item_size)?),
        "zlib" => Arc::new(deflate::Deflate::from_config(&cfg, deflate::Wrapper::Zlib)?),
        "gzip" => Arc::new(deflate::Deflate::from_config(&cfg, deflate::Wrapper::Gzip)?),
        "bz2" => Arc::new(bz2::Bz2::from_config(&cfg)?),
        "lzma" => Arc::new(lzma::Lzma::from_config(&cfg)?),
        "zstd" => Arc::new(zstd::Zstd::from_config(&cfg)?),
        "lz4" => Arc::new(lz4::Lz4::from_config(&cfg)?),
        "crc32c" => Arc::new(crc32c::Crc32c),
        "crc32" | "adler32" | "fletcher32" | "jenkins_lookup3" => {
            Arc::new(checksum::Checksum::from_config(&cfg)?)
        }
        "shuffle" => Arc::new(shuffle::Shuffle::from_config(&cfg, item_size)?),
        "base64" => Arc::new(base64::Base64),
        #[cfg(feature = "zfp")]
        "zfp" => Arc::new(zfp::Zfp::from_config(&cfg)?),
        #[cfg(feature = "zfp")]
        "zfpy" => Arc::new(zfp::Zfp::from_numcodecs(&cfg)?),
        #[cfg(feature = "pcodec")]
        "pcodec" => Arc::new(pcodec::Pcodec::from_config(&cfg)?),
        #[cfg(not(feature = "zfp"))]
        "zfp" | "zfpy" => return Err(built_without(id, "zfp")),
        #[cfg(not(feature = "pcodec"))]
        "pcodec" => return Err(built_without(id, "pcodec")),
        other => {
            return Err(Error::CodecUnsupported(format!(
                "codec id {other:?} is not supported"
            )))
        }
    })
}

/// The error for codec `id` in a build without its cargo `feature`.
#[cfg(not(all(feature = "zfp", feature = "pcodec")))]
fn built_without(id: &str, feature: &str) -> Error {
    Error::CodecUnsupported(format!(
        "codec {id:?}: this libzarr was built without {feature} (cargo feature \"{feature}\")"
    ))
}

/// Read access to one codec configuration, with errors naming the codec and key.
pub(crate) struct Config<'a> {
    id: &'a str,
    map: &'a Map<String, Value>,
}

impl Config<'_> {
    /// An integer parameter in `range`, or `default` when absent or null.
    pub fn int(
        &self,
        key: &str,
        default: i64,
        range: std::ops::RangeInclusive<i64>,
    ) -> Result<i64> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v.as_i64().filter(|i| range.contains(i)).ok_or_else(|| {
                self.bad(
                    key,
                    &format!("an integer in {}..={}", range.start(), range.end()),
                )
            }),
        }
    }

    /// A number parameter, or `default` when absent or null.
    #[cfg(feature = "zfp")]
    pub fn number(&self, key: &str, default: f64) -> Result<f64> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| self.bad(key, "a number")),
        }
    }

    /// A boolean parameter, or `default` when absent or null.
    pub fn bool(&self, key: &str, default: bool) -> Result<bool> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| self.bad(key, "a boolean")),
        }
    }

    /// A string parameter, or `default` when absent or null.
    pub fn string<'b>(&'b self, key: &str, default: &'b str) -> Result<&'b str> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v.as_str().ok_or_else(|| self.bad(key, "a string")),
        }
    }

    /// Whether `key` is present and not null.
    pub fn has(&self, key: &str) -> bool {
        !matches!(self.map.get(key), None | Some(Value::Null))
    }

    /// An error saying that `key` must be `what`.
    pub fn bad(&self, key: &str, what: &str) -> Error {
        Error::Metadata(format!("codec {:?}: {key:?} must be {what}", self.id))
    }
}

/// Builds a configuration map from `(key, value)` pairs.
pub(crate) fn config_map<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Checks a decoded length against the expected one.
pub(crate) fn check_len(codec: &str, got: usize, expected: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::Codec(format!(
            "{codec} data decodes to {got} bytes, expected {expected}"
        )))
    }
}

/// Fails when a decoded size exceeds `limit`.
pub(crate) fn check_limit(config: &Map<String, Value>, size: usize, limit: usize) -> Result<()> {
    if size > limit {
        let id = config.get("id").and_then(Value::as_str).unwrap_or("?");
        return Err(Error::Codec(format!(
            "{id} data decodes to more than the limit of {limit} bytes"
        )));
    }
    Ok(())
}

/// Reads a stream decoder to its end into `out` (replacing its contents), failing once it
/// yields more than `limit` bytes.
pub(crate) fn read_bounded_stream(
    codec: &str,
    reader: impl std::io::Read,
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    use std::io::Read;
    out.clear();
    reader
        .take(limit as u64 + 1)
        .read_to_end(out)
        .map_err(|e| Error::Codec(format!("{codec}: {e}")))?;
    if out.len() > limit {
        return Err(Error::Codec(format!(
            "{codec} data decodes to more than the limit of {limit} bytes"
        )));
    }
    Ok(())
}

/// Reads a stream decoder into `out`, failing if it yields more or fewer bytes; memory stays
/// bounded by `out` whatever the input claims.
pub(crate) fn read_exact_stream(
    codec: &str,
    mut reader: impl std::io::Read,
    out: &mut [u8],
) -> Result<()> {
    let mut filled = 0;
    while filled < out.len() {
        match reader.read(&mut out[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::Codec(format!("{codec}: {e}"))),
        }
    }
    if filled < out.len() {
        return Err(Error::Codec(format!(
            "{codec} data decodes to {filled} bytes, expected {}",
            out.len()
        )));
    }
    let mut extra = [0u8; 1];
    match reader.read(&mut extra) {
        Ok(0) => Ok(()),
        Ok(_) => Err(Error::Codec(format!(
            "{codec} data decodes to more than the expected {} bytes",
            out.len()
        ))),
        Err(e) => Err(Error::Codec(format!("{codec}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Vec<u8> {
        (0..100_000u32)
            .flat_map(|i| ((i / 7) as f32).to_le_bytes())
            .collect()
    }

    #[test]
    fn every_codec_round_trips_and_rejects_garbage() {
        let configs = [
            json!({"id": "blosc"}),
            json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}),
            json!({"id": "blosc", "cname": "blosclz", "shuffle": -1}),
            json!({"id": "blosc", "cname": "snappy", "shuffle": 0}),
            json!({"id": "blosc", "cname": "zlib"}),
            json!({"id": "blosc", "cname": "lz4hc", "clevel": 9}),
            json!({"id": "zlib", "level": 6}),
            json!({"id": "gzip", "level": 1}),
            json!({"id": "bz2", "level": 9}),
            json!({"id": "lzma"}),
            json!({"id": "lzma", "format": 2, "preset": 1}),
            json!({"id": "zstd", "level": 5, "checksum": true}),
            json!({"id": "zstd", "level": -3}),
            json!({"id": "lz4", "acceleration": 1}),
            json!({"id": "crc32c"}),
            json!({"id": "base64"}),
            json!({"id": "blosc", "typesize": 0}),
            // Values numcodecs writes and its libraries read as their default or clamp.
            json!({"id": "zlib", "level": -1}),
            json!({"id": "gzip", "level": -1}),
            json!({"id": "zstd", "level": 30}),
            json!({"id": "zstd", "level": -200000}),
            json!({"id": "lz4", "acceleration": 0}),
            json!({"id": "lz4", "acceleration": -5}),
            json!({"id": "lz4", "acceleration": 100000}),
        ];
        let data = sample();
        for config in configs {
            let codec = from_config(config.as_object().unwrap(), 4).unwrap();
            let encoded = encode(codec.as_ref(), &data).unwrap();
            let mut out = vec![0u8; data.len()];
            codec.decode_into(&encoded, &mut out).unwrap();
            assert_eq!(out, data, "{config}");
            let mut short = vec![0u8; data.len() - 1];
            assert!(
                codec.decode_into(&encoded, &mut short).is_err(),
                "{config} short"
            );
            let mut long = vec![0u8; data.len() + 1];
            assert!(
                codec.decode_into(&encoded, &mut long).is_err(),
                "{config} long"
            );
            assert!(
                codec
                    .decode_into(&encoded[..encoded.len() / 2], &mut out)
                    .is_err(),
                "{config} truncated"
            );
            assert!(
                codec
                    .decode_into(b"garbage garbage garbage", &mut out)
                    .is_err(),
                "{config} garbage"
            );
            let again = from_config(&codec.config(), 4).unwrap();
            assert_eq!(again.config(), codec.config());
        }
    }

    #[test]
    fn codecs_left_out_of_the_build_say_so() {
        for (id, built) in [
            ("zfp", cfg!(feature = "zfp")),
            ("zfpy", cfg!(feature = "zfp")),
            ("pcodec", cfg!(feature = "pcodec")),
        ] {
            let result = from_config(json!({"id": id}).as_object().unwrap(), 4);
            assert_eq!(TYPED.contains(&id), built, "{id}");
            match result {
                Err(Error::CodecUnsupported(m)) if !built => {
                    assert!(m.contains("built without"), "{id}: {m}")
                }
                // zfp needs its mode; numcodecs' zfpy and pcodec have defaults.
                Err(Error::Metadata(m)) if built && id == "zfp" => assert!(m.contains("mode")),
                Ok(c) if built => assert!(c.typed().is_some()),
                other => panic!("{id}: {other:?}"),
            }
        }
    }

    #[test]
    fn unknown_and_malformed_configs_are_errors() {
        let err = from_config(json!({"id": "nope"}).as_object().unwrap(), 1).unwrap_err();
        assert!(matches!(err, Error::CodecUnsupported(ref m) if m.contains("nope")));
        assert!(from_config(json!({"level": 1}).as_object().unwrap(), 1).is_err());
        assert!(from_config(json!({"id": "zlib", "level": 12}).as_object().unwrap(), 1).is_err());
        assert!(from_config(
            json!({"id": "blosc", "cname": "xx"}).as_object().unwrap(),
            1
        )
        .is_err());
        assert!(from_config(json!({"id": "blosc", "shuffle": 3}).as_object().unwrap(), 1).is_err());
    }
}
