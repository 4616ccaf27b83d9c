//! zfp, the compressed number format for 1–4 dimensional blocks of int32, int64, float32
//! and float64 (lossy in its fixed-rate, fixed-precision and fixed-accuracy modes, lossless
//! in reversible mode), through `zfp-rs`, a Rust implementation that writes the same bytes
//! as the zfp C library. The registered codec also encodes 8- and
//! 16-bit and unsigned integers, promoted to int32 or int64 as its specification says.
//! Two forms: the registered Zarr v3 `zfp` codec (mode named by a string, no zfp header:
//! the metadata says everything) and numcodecs' `zfpy` (mode by zfp's number, a full zfp
//! header before the stream, as `zfpy.compress_numpy` writes it).
//!
//! Decoding never trusts the stream: a header's type and size must be the chunk's, and a
//! stream whose decoding goes past its end is refused (zfp-rs checks every read).

use super::typed::{self, TypedCodec};
use super::{config_map, Codec, Config};
use crate::dtype::{DType, DataKind};
use crate::error::{Error, Result};
use crate::io::cast::Native;
use serde_json::{Map, Value};
use zfp_rs::{
    ZfpBitStream, ZfpConfig, ZfpDecompressionError, ZfpDimensionality, ZfpField, ZfpFieldMut,
    ZfpHeaderMask, ZfpScalar, ZfpScalarType, ZfpStreamAlignment,
};

/// zfp's compression mode and its parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// Bits per value.
    FixedRate(f64),
    /// Bit planes kept per block.
    FixedPrecision(u32),
    /// Largest absolute error.
    FixedAccuracy(f64),
    /// Lossless.
    Reversible,
    /// zfp's four parameters as they are.
    Expert {
        minbits: u32,
        maxbits: u32,
        maxprec: u32,
        minexp: i32,
    },
}

/// numcodecs' numbers for zfp's modes (`zfp_mode` in zfp.h).
const ZFPY_FIXED_RATE: i64 = 2;
const ZFPY_FIXED_PRECISION: i64 = 3;
const ZFPY_FIXED_ACCURACY: i64 = 4;
const ZFPY_REVERSIBLE: i64 = 5;

/// The zfp codec in either form.
#[derive(Debug)]
pub struct Zfp {
    mode: Mode,
    /// numcodecs' `zfpy`: a full zfp header before the stream.
    header: bool,
    config: Map<String, Value>,
}

impl Zfp {
    /// The registered v3 `zfp` codec from its configuration (`{"mode": "fixed_accuracy",
    /// "tolerance": 0.05}`).
    pub(crate) fn from_config(cfg: &Config) -> Result<Self> {
        let mode = match cfg.string("mode", "")? {
            "fixed_rate" => Mode::FixedRate(rate_value(cfg, cfg.number("rate", f64::NAN)?)?),
            "fixed_precision" => Mode::FixedPrecision(precision(cfg, "precision")?),
            "fixed_accuracy" => Mode::FixedAccuracy(tolerance(cfg, "tolerance")?),
            "reversible" => Mode::Reversible,
            "expert" => expert(cfg)?,
            _ => {
                return Err(cfg.bad(
                    "mode",
                    "\"fixed_rate\", \"fixed_precision\", \"fixed_accuracy\", \"reversible\" \
                     or \"expert\"",
                ))
            }
        };
        let mut config = config_map([("id", "zfp".into())]);
        match mode {
            Mode::FixedRate(rate) => {
                config.insert("mode".into(), "fixed_rate".into());
                config.insert("rate".into(), rate.into());
            }
            Mode::FixedPrecision(p) => {
                config.insert("mode".into(), "fixed_precision".into());
                config.insert("precision".into(), p.into());
            }
            Mode::FixedAccuracy(t) => {
                config.insert("mode".into(), "fixed_accuracy".into());
                config.insert("tolerance".into(), t.into());
            }
            Mode::Reversible => {
                config.insert("mode".into(), "reversible".into());
            }
            Mode::Expert {
                minbits,
                maxbits,
                maxprec,
                minexp,
            } => {
                config.insert("mode".into(), "expert".into());
                config.insert("minbits".into(), minbits.into());
                config.insert("maxbits".into(), maxbits.into());
                config.insert("maxprec".into(), maxprec.into());
                config.insert("minexp".into(), minexp.into());
            }
        }
        Ok(Zfp {
            mode,
            header: false,
            config,
        })
    }

    /// numcodecs' `zfpy` from its configuration (`{"id": "zfpy", "mode": 4, "tolerance":
    /// 0.01, "rate": -1, "precision": -1}`): as `zfpy.compress_numpy`, the mode's own
    /// parameter decides, and a negative one means reversible.
    pub(crate) fn from_numcodecs(cfg: &Config) -> Result<Self> {
        let code = cfg.int("mode", ZFPY_FIXED_ACCURACY, 0..=5)?;
        let tolerance = cfg.number("tolerance", -1.0)?;
        let rate = cfg.number("rate", -1.0)?;
        let precision = cfg.int("precision", -1, -1..=i64::from(u32::MAX))?;
        let mode = match code {
            ZFPY_FIXED_ACCURACY if tolerance >= 0.0 => Mode::FixedAccuracy(tolerance),
            ZFPY_FIXED_RATE if rate > 0.0 => Mode::FixedRate(rate_value(cfg, rate)?),
            ZFPY_FIXED_PRECISION if precision >= 0 => {
                Mode::FixedPrecision(precision_value(cfg, precision)?)
            }
            ZFPY_FIXED_ACCURACY | ZFPY_FIXED_RATE | ZFPY_FIXED_PRECISION | ZFPY_REVERSIBLE => {
                Mode::Reversible
            }
            _ => {
                return Err(cfg.bad(
                    "mode",
                    "2 (fixed rate), 3 (fixed precision), 4 (fixed accuracy) or 5 (reversible)",
                ))
            }
        };
        Ok(Zfp {
            mode,
            header: true,
            config: config_map([
                ("id", "zfpy".into()),
                ("mode", code.into()),
                ("tolerance", tolerance.into()),
                ("rate", rate.into()),
                ("precision", precision.into()),
            ]),
        })
    }

    fn id(&self) -> &'static str {
        if self.header {
            "zfpy"
        } else {
            "zfp"
        }
    }

    /// The zfp field dimensions (C order, 1 to 4 of them) of a chunk of `shape`: the
    /// registered codec drops extents of 1 from chunks of more than four dimensions.
    fn dims(&self, shape: &[u64]) -> Result<Vec<usize>> {
        let mut dims: Vec<u64> = shape.to_vec();
        if dims.len() > 4 && !self.header {
            dims.retain(|&d| d != 1);
        }
        if dims.is_empty() {
            dims.push(1);
        }
        if dims.len() > 4 {
            return Err(Error::CodecUnsupported(format!(
                "{} encodes chunks of 1 to 4 dimensions (of more than one item), not {shape:?}",
                self.id()
            )));
        }
        dims.iter()
            .map(|&d| usize::try_from(d).map_err(|_| Error::Overflow(format!("{shape:?}"))))
            .collect()
    }

    /// zfp's parameters for a field of `ztype` in `rank` dimensions.
    fn zfp_config(&self, ztype: ZfpScalarType, rank: usize) -> Result<ZfpConfig> {
        let invalid = || {
            Error::Metadata(format!(
                "{} parameters {} are not valid",
                self.id(),
                Value::Object(self.config.clone())
            ))
        };
        Ok(match self.mode {
            Mode::FixedRate(rate) => {
                let dims = u32::try_from(rank)
                    .ok()
                    .and_then(|r| ZfpDimensionality::try_from(r).ok())
                    .ok_or_else(invalid)?;
                ZfpConfig::fixed_rate(rate, ztype, dims, ZfpStreamAlignment::Unaligned)
                    .map_err(|_| invalid())?
            }
            Mode::FixedPrecision(p) => ZfpConfig::fixed_precision(p),
            Mode::FixedAccuracy(t) => ZfpConfig::fixed_accuracy(t),
            Mode::Reversible => ZfpConfig::reversible(),
            Mode::Expert {
                minbits,
                maxbits,
                maxprec,
                minexp,
            } => ZfpConfig::expert(minbits, maxbits, maxprec, minexp).map_err(|_| invalid())?,
        })
    }

    /// Encodes items of `S` as zfp's `T`, promoted by `up`.
    fn encode_numbers<S: Native + Default, T: Native + ZfpScalar>(
        &self,
        data: &[u8],
        item: &DType,
        up: impl Fn(S) -> T,
        dims: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let stored = typed::load::<S>(data, item.order)?;
        let mut values = typed::zeroed::<T>(stored.len(), "a chunk")?;
        for (v, s) in values.iter_mut().zip(stored) {
            *v = up(s);
        }
        let extents = zfp_extents(dims)?;
        let field = ZfpField::new(&values, extents).map_err(|e| self.failed("encode", e))?;
        let config = self.zfp_config(T::SCALAR_TYPE, dims.len())?;
        let max = config
            .maximum_size(T::SCALAR_TYPE, extents)
            .ok_or_else(|| Error::Overflow(format!("a zfp stream for a chunk of {dims:?}")))?;
        let mut stream = ZfpBitStream::new(max)
            .map_err(|_| Error::NoMemory(format!("a zfp stream of {max} bytes")))?;
        if self.header {
            stream
                .write_header(&config, &field.metadata(), ZfpHeaderMask::FULL)
                .map_err(|e| self.failed("write the header of", e))?;
        }
        stream
            .compress(&config, &field)
            .map_err(|e| self.failed("encode", e))?;
        let bytes = stream.as_bytes();
        out.clear();
        crate::error::try_reserve(out, bytes.len(), "a zfp stream")?;
        out.extend_from_slice(bytes);
        Ok(())
    }

    /// Decodes zfp's `T` into items of `S`, demoted by `down`.
    fn decode_numbers<S: Native + Default, T: Native + ZfpScalar>(
        &self,
        data: &[u8],
        item: &DType,
        down: impl Fn(T) -> S,
        dims: &[usize],
        out: &mut [u8],
    ) -> Result<()> {
        let n = out.len() / S::SIZE;
        let mut stream = ZfpBitStream::from_bytes(data)
            .map_err(|_| Error::NoMemory(format!("a zfp stream of {} bytes", data.len())))?;
        let (config, extents) = if self.header {
            self.read_header(&mut stream, T::SCALAR_TYPE, n)?
        } else {
            let config = self.zfp_config(T::SCALAR_TYPE, dims.len())?;
            (config, zfp_extents(dims)?)
        };
        let mut values = typed::zeroed::<T>(n, "a decoded chunk")?;
        let mut field =
            ZfpFieldMut::new(&mut values, extents).map_err(|e| self.failed("decode", e))?;
        let consumed = match stream.decompress(&config, &mut field) {
            Ok(consumed) => consumed,
            Err(ZfpDecompressionError::Truncated { required, .. }) => {
                return Err(self.truncated(data.len(), required))
            }
            Err(e) => return Err(self.failed("decode", e)),
        };
        // zfp streams end on a whole 64-bit word: one cut inside its last word decodes
        // from the zero padding of that word, and is refused here.
        if consumed > data.len() {
            return Err(self.truncated(data.len(), consumed));
        }
        let mut stored = typed::zeroed::<S>(n, "a decoded chunk")?;
        for (s, v) in stored.iter_mut().zip(values) {
            *s = down(v);
        }
        typed::store(&stored, out, item.order);
        Ok(())
    }

    /// Reads and checks the zfp header at the start of `stream` (numcodecs' form): it must
    /// hold `ztype` numbers, `n` of them (in any shape: older numcodecs wrote the chunk
    /// flattened). Gives the parameters it names and the field's extents.
    fn read_header(
        &self,
        stream: &mut ZfpBitStream,
        ztype: ZfpScalarType,
        n: usize,
    ) -> Result<(ZfpConfig, [usize; 4])> {
        let header = stream.read_header(ZfpHeaderMask::FULL).ok();
        let Some((config, meta)) = header.and_then(|h| h.config.zip(h.metadata)) else {
            return Err(Error::Codec("zfpy data has no valid zfp header".into()));
        };
        if meta.scalar_type != ztype {
            return Err(Error::Codec(format!(
                "zfpy data holds {} numbers, the array {}",
                type_name(meta.scalar_type),
                type_name(ztype)
            )));
        }
        let extents: Vec<usize> = meta.dims.into_iter().take_while(|&d| d > 0).collect();
        let count = extents
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d));
        if count != Some(n) {
            return Err(Error::Codec(format!(
                "zfpy data holds an array of {extents:?} numbers, the chunk {n}"
            )));
        }
        Ok((config, meta.dims))
    }

    /// The error of a stream that ends after `len` bytes where its blocks need `needed`.
    fn truncated(&self, len: usize, needed: usize) -> Error {
        Error::Codec(format!(
            "{} data is truncated: it ends after {len} bytes, its blocks need {needed}",
            self.id()
        ))
    }

    /// The error of zfp refusing to `what` a chunk.
    fn failed(&self, what: &str, e: impl std::fmt::Display) -> Error {
        Error::Codec(format!("{}: could not {what} the chunk: {e}", self.id()))
    }
}

/// zfp's extents (the fastest-varying first, unused ones 0) of C-order `dims` (1 to 4).
fn zfp_extents(dims: &[usize]) -> Result<[usize; 4]> {
    if dims.is_empty() || dims.len() > 4 {
        return Err(Error::Internal(format!("zfp field of {dims:?}")));
    }
    let mut extents = [0usize; 4];
    for (e, &d) in extents.iter_mut().zip(dims.iter().rev()) {
        *e = d;
    }
    Ok(extents)
}

/// Most bits per value of the fixed-rate mode: a value's own width at most (zfp turns
/// `4^dims * rate` bits per block into an unsigned int, and sizes its output by it).
const MAX_RATE: f64 = 64.0;

/// A fixed rate: bits per value in (0, 64].
fn rate_value(cfg: &Config, rate: f64) -> Result<f64> {
    if rate > 0.0 && rate <= MAX_RATE {
        Ok(rate)
    } else {
        Err(cfg.bad(
            "rate",
            &format!("a number of bits per value in (0, 64], not {rate}"),
        ))
    }
}

/// A tolerance: a number of at least zero.
fn tolerance(cfg: &Config, key: &str) -> Result<f64> {
    let v = cfg.number(key, f64::NAN)?;
    if v >= 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(cfg.bad(key, "a number of at least 0"))
    }
}

/// A precision: 1 to 64 bit planes.
fn precision(cfg: &Config, key: &str) -> Result<u32> {
    let p = cfg.int(key, -1, 1..=64)?;
    precision_value(cfg, p)
}

fn precision_value(cfg: &Config, p: i64) -> Result<u32> {
    u32::try_from(p)
        .ok()
        .filter(|p| (1..=64).contains(p))
        .ok_or_else(|| cfg.bad("precision", "an integer in 1..=64"))
}

/// The expert mode's four parameters.
fn expert(cfg: &Config) -> Result<Mode> {
    let max_bits = i64::from(zfp_rs::ZFP_MAX_BITS);
    let minbits = cfg.int("minbits", -1, 1..=max_bits)? as u32;
    let maxbits = cfg.int("maxbits", -1, 1..=max_bits)? as u32;
    let maxprec = cfg.int("maxprec", -1, 1..=64)? as u32;
    let minexp = cfg.int("minexp", i64::MIN, -1074..=1023)? as i32;
    if minbits > maxbits {
        return Err(cfg.bad("minbits", "at most maxbits"));
    }
    Ok(Mode::Expert {
        minbits,
        maxbits,
        maxprec,
        minexp,
    })
}

/// zfp's type for items of `item`: int32, int64, float32 and float64 as they are, narrower
/// and unsigned integers promoted (the registered codec's rules).
fn zfp_type(item: &DType) -> Option<ZfpScalarType> {
    match item.kind {
        DataKind::Int(1 | 2 | 4) | DataKind::UInt(1 | 2 | 4) => Some(ZfpScalarType::I32),
        DataKind::Int(8) | DataKind::UInt(8) => Some(ZfpScalarType::I64),
        DataKind::Float(4) => Some(ZfpScalarType::F32),
        DataKind::Float(8) => Some(ZfpScalarType::F64),
        _ => None,
    }
}

/// Whether items of `item` are one of zfp's own types (all numcodecs' zfpy encodes).
fn zfp_native(item: &DType) -> bool {
    matches!(item.kind, DataKind::Int(4 | 8) | DataKind::Float(4 | 8))
}

/// Runs `$body` with `$s` the stored number type of `$item`, `$t` zfp's, and `$up`/`$down`
/// the promotion to zfp's type and back: an N-bit integer shifted to the top of an int32
/// (unsigned ones first centred on zero), demoted with clamping; uint32 and uint64 clamped
/// into int32 and int64. `$other` for types zfp cannot encode.
macro_rules! with_zfp_number {
    ($item:expr, |$s:ident, $t:ident, $up:ident, $down:ident| $body:expr, $other:expr) => {
        match $item.kind {
            DataKind::Int(4) => with_zfp_number!(@ i32, i32, |v: i32| v, |v: i32| v,
                $s, $t, $up, $down, $body),
            DataKind::Int(8) => with_zfp_number!(@ i64, i64, |v: i64| v, |v: i64| v,
                $s, $t, $up, $down, $body),
            DataKind::Float(4) => with_zfp_number!(@ f32, f32, |v: f32| v, |v: f32| v,
                $s, $t, $up, $down, $body),
            DataKind::Float(8) => with_zfp_number!(@ f64, f64, |v: f64| v, |v: f64| v,
                $s, $t, $up, $down, $body),
            DataKind::Int(1) => with_zfp_number!(@ i8, i32,
                |v: i8| i32::from(v) << 23,
                |v: i32| (v >> 23).clamp(-0x80, 0x7f) as i8, $s, $t, $up, $down, $body),
            DataKind::UInt(1) => with_zfp_number!(@ u8, i32,
                |v: u8| (i32::from(v) - 0x80) << 23,
                |v: i32| ((v >> 23) + 0x80).clamp(0, 0xff) as u8, $s, $t, $up, $down, $body),
            DataKind::Int(2) => with_zfp_number!(@ i16, i32,
                |v: i16| i32::from(v) << 15,
                |v: i32| (v >> 15).clamp(-0x8000, 0x7fff) as i16, $s, $t, $up, $down, $body),
            DataKind::UInt(2) => with_zfp_number!(@ u16, i32,
                |v: u16| (i32::from(v) - 0x8000) << 15,
                |v: i32| ((v >> 15) + 0x8000).clamp(0, 0xffff) as u16,
                $s, $t, $up, $down, $body),
            DataKind::UInt(4) => with_zfp_number!(@ u32, i32,
                |v: u32| v.min(i32::MAX as u32) as i32,
                |v: i32| v.max(0) as u32, $s, $t, $up, $down, $body),
            DataKind::UInt(8) => with_zfp_number!(@ u64, i64,
                |v: u64| v.min(i64::MAX as u64) as i64,
                |v: i64| v.max(0) as u64, $s, $t, $up, $down, $body),
            _ => $other,
        }
    };
    (@ $st:ty, $tt:ty, $upf:expr, $downf:expr,
     $s:ident, $t:ident, $up:ident, $down:ident, $body:expr) => {{
        type $s = $st;
        type $t = $tt;
        let $up = $upf;
        let $down = $downf;
        $body
    }};
}

fn type_name(t: ZfpScalarType) -> &'static str {
    match t {
        ZfpScalarType::I32 => "int32",
        ZfpScalarType::I64 => "int64",
        ZfpScalarType::F32 => "float32",
        ZfpScalarType::F64 => "float64",
    }
}

impl Codec for Zfp {
    fn config(&self) -> Map<String, Value> {
        self.config.clone()
    }

    fn encode_into(&self, _data: &[u8], _out: &mut Vec<u8>) -> Result<()> {
        Err(typed::misplaced(self.id()))
    }

    fn decode_into(&self, _data: &[u8], _out: &mut [u8]) -> Result<()> {
        Err(typed::misplaced(self.id()))
    }

    fn typed(&self) -> Option<&dyn TypedCodec> {
        Some(self)
    }
}

impl TypedCodec for Zfp {
    fn check(&self, item: &DType, rank: usize) -> Result<()> {
        if zfp_type(item).is_none() || (self.header && !zfp_native(item)) {
            let types = if self.header {
                "int32, int64, float32 and float64"
            } else {
                "8- to 64-bit integers, float32 and float64"
            };
            return Err(Error::CodecUnsupported(format!(
                "{} encodes {types} items, not {}",
                self.id(),
                item.element_type().name()
            )));
        }
        if self.header && rank > 4 {
            return Err(Error::CodecUnsupported(format!(
                "zfpy encodes chunks of 1 to 4 dimensions, not {rank}"
            )));
        }
        Ok(())
    }

    fn encode_typed(
        &self,
        data: &[u8],
        item: &DType,
        shape: &[u64],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let dims = self.dims(shape)?;
        check_chunk_bytes(item, shape, data.len())?;
        with_zfp_number!(
            item,
            |S, T, up, _down| self.encode_numbers::<S, T>(data, item, up, &dims, out),
            self.check(item, shape.len())
        )
    }

    fn decode_typed(&self, data: &[u8], item: &DType, shape: &[u64], out: &mut [u8]) -> Result<()> {
        let dims = self.dims(shape)?;
        check_chunk_bytes(item, shape, out.len())?;
        with_zfp_number!(
            item,
            |S, T, _up, down| self.decode_numbers::<S, T>(data, item, down, &dims, out),
            self.check(item, shape.len())
        )
    }
}

/// Checks that `len` bytes are exactly a chunk of `shape` holding items of `item`.
fn check_chunk_bytes(item: &DType, shape: &[u64], len: usize) -> Result<()> {
    let count = typed::element_count(shape)?;
    if count.checked_mul(item.item_size()) != Some(len) {
        return Err(Error::Internal(format!(
            "zfp: a chunk of {shape:?} is not {len} bytes"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A zfpy stream of only a header (in expert mode, every block at least `minbits`) for
    /// `n` float32 numbers in one dimension.
    fn header_only(n: usize, minbits: u32) -> Vec<u8> {
        let values = vec![0f32; n];
        let field = ZfpField::new(&values, n).unwrap();
        let config = ZfpConfig::expert(minbits, zfp_rs::ZFP_MAX_BITS, 32, -149).unwrap();
        let mut stream = ZfpBitStream::new(64).unwrap();
        let written = stream
            .write_header(&config, &field.metadata(), ZfpHeaderMask::FULL)
            .unwrap();
        stream.flush();
        assert!(written > 96, "a full header with expert parameters");
        stream.as_bytes().to_vec()
    }

    #[test]
    fn a_stream_shorter_than_its_blocks_minimum_is_refused_before_padding() {
        let codec =
            super::super::from_config(json!({"id": "zfpy"}).as_object().unwrap(), 4).unwrap();
        let typed = codec.typed().unwrap();
        let dtype = DType::parse_v2("<f4").unwrap();
        // 2^20 numbers in 2^18 blocks of at least 16658 bits: 545 MB the stream does not have.
        let n = 1 << 20;
        let stream = header_only(n, zfp_rs::ZFP_MAX_BITS);
        let mut out = vec![0u8; n * 4];
        let err = typed
            .decode_typed(&stream, &dtype, &[n as u64], &mut out)
            .unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
        // The same header with a small minimum is refused as truncated by zfp's reading.
        let stream = header_only(n, 1);
        let err = typed
            .decode_typed(&stream, &dtype, &[n as u64], &mut out)
            .unwrap_err();
        assert!(matches!(err, Error::Codec(_)), "{err}");
    }
}
