//! zfp, the compressed number format for 1–4 dimensional blocks of int32, int64, float32
//! and float64 (lossy in its fixed-rate, fixed-precision and fixed-accuracy modes, lossless
//! in reversible mode), through the zfp C library. The registered codec also encodes 8- and
//! 16-bit and unsigned integers, promoted to int32 or int64 as its specification says.
//! Two forms: the registered Zarr v3 `zfp` codec (mode named by a string, no zfp header:
//! the metadata says everything) and numcodecs' `zfpy` (mode by zfp's number, a full zfp
//! header before the stream, as `zfpy.compress_numpy` writes it).
//!
//! Decoding never trusts the stream: a header's type and size must be the chunk's, and the
//! stream is read from a zero-padded copy long enough for the most bits the decoder can
//! take for the chunk's blocks, so a truncated or hostile stream cannot make zfp read past
//! its buffer; a stream whose decoding went past its end is refused.

use super::typed::{self, TypedCodec};
use super::{config_map, Codec, Config};
use crate::dtype::{DType, DataKind};
use crate::error::{Error, Result};
use crate::io::cast::Native;
use serde_json::{Map, Value};
use std::ffi::c_void;
use std::ptr::NonNull;
use zfp_sys as sys;

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

    /// Sets the stream's mode for a field of `ztype` in `rank` dimensions.
    fn set_mode(&self, stream: &Stream, ztype: sys::zfp_type, rank: usize) -> Result<()> {
        let zfp = stream.zfp.as_ptr();
        // SAFETY: `zfp` is an open stream; these calls only set its parameters.
        unsafe {
            match self.mode {
                Mode::FixedRate(rate) => {
                    sys::zfp_stream_set_rate(zfp, rate, ztype, rank as u32, 0);
                }
                Mode::FixedPrecision(p) => {
                    sys::zfp_stream_set_precision(zfp, p);
                }
                Mode::FixedAccuracy(t) => {
                    sys::zfp_stream_set_accuracy(zfp, t);
                }
                Mode::Reversible => sys::zfp_stream_set_reversible(zfp),
                Mode::Expert {
                    minbits,
                    maxbits,
                    maxprec,
                    minexp,
                } => {
                    if sys::zfp_stream_set_params(zfp, minbits, maxbits, maxprec, minexp) == 0 {
                        return Err(Error::Metadata(format!(
                            "zfp expert parameters {} are not valid",
                            Value::Object(self.config.clone())
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// Encodes items of `S` as zfp's `T` (`ztype`), promoted by `up`.
    #[allow(clippy::too_many_arguments)]
    fn encode_numbers<S: Native + Default, T: Native + Default>(
        &self,
        data: &[u8],
        item: &DType,
        up: impl Fn(S) -> T,
        ztype: sys::zfp_type,
        dims: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let stored = typed::load::<S>(data, item.order)?;
        let mut values = typed::zeroed::<T>(stored.len(), "a chunk")?;
        for (v, s) in values.iter_mut().zip(stored) {
            *v = up(s);
        }
        let field = Field::new(values.as_mut_ptr().cast(), ztype, dims)?;
        let stream = Stream::new()?;
        self.set_mode(&stream, ztype, dims.len())?;
        // SAFETY: stream and field are valid; the size depends on their parameters only.
        let max = unsafe { sys::zfp_stream_maximum_size(stream.zfp.as_ptr(), field.ptr()) };
        let mut buf = typed::zeroed::<u64>(max.div_ceil(8) + 1, "a zfp stream")?;
        let bits = stream.attach(&mut buf)?;
        // SAFETY: the bit stream covers `buf`, at least zfp's largest stream for the field;
        // the field points at `values`, of its size.
        let size = unsafe {
            if self.header
                && sys::zfp_write_header(stream.zfp.as_ptr(), field.ptr(), sys::ZFP_HEADER_FULL)
                    == 0
            {
                return Err(Error::Codec("zfp could not write its header".into()));
            }
            sys::zfp_compress(stream.zfp.as_ptr(), field.ptr())
        };
        drop(bits);
        if size == 0 || size > buf.len() * 8 {
            return Err(Error::Codec(format!(
                "zfp could not encode the chunk {dims:?}"
            )));
        }
        out.clear();
        crate::error::try_reserve(out, size, "a zfp stream")?;
        out.extend(buf.iter().flat_map(|w| w.to_ne_bytes()).take(size));
        Ok(())
    }

    /// Decodes zfp's `T` (`ztype`) into items of `S`, demoted by `down`.
    #[allow(clippy::too_many_arguments)]
    fn decode_numbers<S: Native + Default, T: Native + Default>(
        &self,
        data: &[u8],
        item: &DType,
        down: impl Fn(T) -> S,
        ztype: sys::zfp_type,
        dims: &[usize],
        out: &mut [u8],
    ) -> Result<()> {
        let n = out.len() / S::SIZE;
        let stream = Stream::new()?;
        let (field, header_bits) = if self.header {
            self.read_header(data, &stream, ztype, n)?
        } else {
            let field = Field::new(std::ptr::null_mut(), ztype, dims)?;
            self.set_mode(&stream, ztype, dims.len())?;
            (field, 0)
        };
        // The most bits the decoder can take: the header, then per block its minimum (it
        // skips to it) or the most its bit-plane coder reads (each of the type's bit planes
        // at most twice the block's values, a group test each, plus the block's exponent
        // and precision fields), whichever is larger, capped by the mode's maximum.
        let (mut minbits, mut maxbits, mut maxprec, mut minexp) = (0u32, 0u32, 0u32, 0i32);
        // SAFETY: valid stream and field; the calls read their parameters.
        let (blocks, rank) = unsafe {
            sys::zfp_stream_params(
                stream.zfp.as_ptr(),
                &mut minbits,
                &mut maxbits,
                &mut maxprec,
                &mut minexp,
            );
            (
                sys::zfp_field_blocks(field.ptr()),
                sys::zfp_field_dimensionality(field.ptr()),
            )
        };
        // Every block takes at least minbits: a stream shorter than that is truncated, and a
        // header's large minbits must not make the padding large.
        let least = (blocks as u64)
            .saturating_mul(u64::from(minbits))
            .saturating_add(header_bits);
        if least > 8 * data.len() as u64 {
            return Err(Error::Codec(format!(
                "{} data is truncated: {} bytes for {blocks} blocks of at least {minbits} bits",
                self.id(),
                data.len()
            )));
        }
        let planes = 8 * T::SIZE as u64;
        let values = 1u64 << (2 * rank.clamp(1, 4));
        let coder = planes * (2 * values + 2) + 256;
        // A float block spends a few bits (under 32: zero test, exponent or precision)
        // before its integers, whose limit zfp computes as maxbits less those bits,
        // unsigned: a smaller maxbits wraps around and lifts the limit, so it caps nothing.
        let capped = match maxbits {
            0..64 => coder,
            _ => coder.min(u64::from(maxbits)),
        };
        let per_block = u64::from(minbits).max(capped);
        let bound = (blocks as u64)
            .checked_mul(per_block)
            .and_then(|b| b.checked_add(header_bits + 64))
            .and_then(|b| usize::try_from(b.div_ceil(8)).ok())
            .ok_or_else(|| Error::Codec(format!("{} data: chunk too large", self.id())))?;
        let words = data.len().max(bound).div_ceil(8) + 2;
        let mut buf = typed::zeroed::<u64>(words, "a zfp stream")?;
        for (w, chunk) in buf.iter_mut().zip(data.chunks(8)) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_ne_bytes(word);
        }
        let mut values = typed::zeroed::<T>(n, "a decoded chunk")?;
        let bits = stream.attach(&mut buf)?;
        // SAFETY: the bit stream covers `buf`, zero-padded past the data to the most the
        // decoder can read; the field points at `values`, of the header-checked size.
        let consumed = unsafe {
            if self.header
                && sys::zfp_read_header(stream.zfp.as_ptr(), field.ptr(), sys::ZFP_HEADER_FULL) == 0
            {
                return Err(Error::Codec("zfpy data has no valid zfp header".into()));
            }
            sys::zfp_field_set_pointer(field.ptr(), values.as_mut_ptr().cast());
            sys::zfp_decompress(stream.zfp.as_ptr(), field.ptr())
        };
        drop(bits);
        if consumed == 0 {
            return Err(Error::Codec(format!(
                "{} data could not be decoded",
                self.id()
            )));
        }
        if consumed > data.len() {
            return Err(Error::Codec(format!(
                "{} data is truncated: it ends after {} bytes, its blocks need {consumed}",
                self.id(),
                data.len()
            )));
        }
        let mut stored = typed::zeroed::<S>(n, "a decoded chunk")?;
        for (s, v) in stored.iter_mut().zip(values) {
            *s = down(v);
        }
        typed::store(&stored, out, item.order);
        Ok(())
    }

    /// Reads and checks the zfp header of `data` (numcodecs' form) into a new field, and
    /// sets the stream's mode from it: the header must hold `ztype` numbers, `n` of them
    /// (in any shape: older numcodecs wrote the chunk flattened). Gives the field and the
    /// header's size in bits.
    fn read_header(
        &self,
        data: &[u8],
        stream: &Stream,
        ztype: sys::zfp_type,
        n: usize,
    ) -> Result<(Field, u64)> {
        let mut head = [0u64; (sys::ZFP_HEADER_MAX_BITS as usize).div_ceil(64) + 2];
        for (w, chunk) in head.iter_mut().zip(data.chunks(8)) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_ne_bytes(word);
        }
        let field = Field::alloc()?;
        let bits = stream.attach(&mut head)?;
        // SAFETY: the header is at most ZFP_HEADER_MAX_BITS, within `head`.
        let read =
            unsafe { sys::zfp_read_header(stream.zfp.as_ptr(), field.ptr(), sys::ZFP_HEADER_FULL) };
        drop(bits);
        if read == 0 || read as u64 > 8 * data.len() as u64 {
            return Err(Error::Codec("zfpy data has no valid zfp header".into()));
        }
        let mut size = [0usize; 4];
        // SAFETY: a valid field; `size` has room for four extents.
        let (found, rank) = unsafe {
            sys::zfp_field_size(field.ptr(), size.as_mut_ptr());
            (
                sys::zfp_field_type(field.ptr()),
                sys::zfp_field_dimensionality(field.ptr()) as usize,
            )
        };
        if found != ztype {
            return Err(Error::Codec(format!(
                "zfpy data holds {} numbers, the array {}",
                type_name(found),
                type_name(ztype)
            )));
        }
        let count = size[..rank.min(4)]
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d));
        if rank == 0 || count != Some(n) {
            return Err(Error::Codec(format!(
                "zfpy data holds an array of {:?} numbers, the chunk {n}",
                &size[..rank.min(4)]
            )));
        }
        Ok((field, read as u64))
    }
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
    let max_bits = i64::from(sys::ZFP_MAX_BITS);
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
fn zfp_type(item: &DType) -> Option<sys::zfp_type> {
    match item.kind {
        DataKind::Int(1 | 2 | 4) | DataKind::UInt(1 | 2 | 4) => Some(sys::zfp_type_zfp_type_int32),
        DataKind::Int(8) | DataKind::UInt(8) => Some(sys::zfp_type_zfp_type_int64),
        DataKind::Float(4) => Some(sys::zfp_type_zfp_type_float),
        DataKind::Float(8) => Some(sys::zfp_type_zfp_type_double),
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

fn type_name(t: sys::zfp_type) -> &'static str {
    match t {
        sys::zfp_type_zfp_type_int32 => "int32",
        sys::zfp_type_zfp_type_int64 => "int64",
        sys::zfp_type_zfp_type_float => "float32",
        sys::zfp_type_zfp_type_double => "float64",
        _ => "unknown",
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
        let ztype = zfp_type(item);
        with_zfp_number!(
            item,
            |S, T, up, _down| {
                let ztype = ztype.expect("a zfp type");
                self.encode_numbers::<S, T>(data, item, up, ztype, &dims, out)
            },
            self.check(item, shape.len())
        )
    }

    fn decode_typed(&self, data: &[u8], item: &DType, shape: &[u64], out: &mut [u8]) -> Result<()> {
        let dims = self.dims(shape)?;
        check_chunk_bytes(item, shape, out.len())?;
        let ztype = zfp_type(item);
        with_zfp_number!(
            item,
            |S, T, _up, down| {
                let ztype = ztype.expect("a zfp type");
                self.decode_numbers::<S, T>(data, item, down, ztype, &dims, out)
            },
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

/// An open zfp stream.
struct Stream {
    zfp: NonNull<sys::zfp_stream>,
}

impl Stream {
    fn new() -> Result<Self> {
        // SAFETY: a stream without a bit stream yet.
        NonNull::new(unsafe { sys::zfp_stream_open(std::ptr::null_mut()) })
            .map(|zfp| Stream { zfp })
            .ok_or_else(|| Error::NoMemory("cannot open a zfp stream".into()))
    }

    /// Points the stream at `buf` (rewound) for as long as the returned bit stream lives.
    fn attach<'b>(&'b self, buf: &'b mut [u64]) -> Result<Bits<'b>> {
        // SAFETY: `buf` outlives the returned bit stream, which is detached on drop.
        let bits = unsafe { sys::stream_open(buf.as_mut_ptr().cast(), std::mem::size_of_val(buf)) };
        let bits = NonNull::new(bits)
            .ok_or_else(|| Error::NoMemory("cannot open a zfp bit stream".into()))?;
        // SAFETY: both are open.
        unsafe {
            sys::zfp_stream_set_bit_stream(self.zfp.as_ptr(), bits.as_ptr());
            sys::zfp_stream_rewind(self.zfp.as_ptr());
        }
        Ok(Bits {
            stream: self,
            bits,
            _buf: std::marker::PhantomData,
        })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: opened by zfp_stream_open; its bit stream is detached already.
        unsafe { sys::zfp_stream_close(self.zfp.as_ptr()) }
    }
}

/// A bit stream over a buffer, attached to a zfp stream.
struct Bits<'b> {
    stream: &'b Stream,
    bits: NonNull<sys::bitstream>,
    _buf: std::marker::PhantomData<&'b mut [u64]>,
}

impl Drop for Bits<'_> {
    fn drop(&mut self) {
        // SAFETY: detach from the zfp stream, then close the bit stream (not its buffer).
        unsafe {
            sys::zfp_stream_set_bit_stream(self.stream.zfp.as_ptr(), std::ptr::null_mut());
            sys::stream_close(self.bits.as_ptr());
        }
    }
}

/// A zfp field: the type and extents of an array, and where its numbers are.
struct Field(NonNull<sys::zfp_field>);

impl Field {
    /// A field of `ztype` numbers at `data` with C-order extents `dims` (1 to 4).
    fn new(data: *mut c_void, ztype: sys::zfp_type, dims: &[usize]) -> Result<Self> {
        // SAFETY: zfp keeps the pointer and extents; the numbers are read only while the
        // caller's buffer lives. zfp's x is the fastest-varying (last) dimension.
        let field = unsafe {
            match *dims {
                [x] => sys::zfp_field_1d(data, ztype, x),
                [y, x] => sys::zfp_field_2d(data, ztype, x, y),
                [z, y, x] => sys::zfp_field_3d(data, ztype, x, y, z),
                [w, z, y, x] => sys::zfp_field_4d(data, ztype, x, y, z, w),
                _ => std::ptr::null_mut(),
            }
        };
        NonNull::new(field)
            .map(Field)
            .ok_or_else(|| Error::Internal(format!("zfp field of {dims:?}")))
    }

    /// An empty field, for a header to fill.
    fn alloc() -> Result<Self> {
        // SAFETY: allocates an empty field.
        NonNull::new(unsafe { sys::zfp_field_alloc() })
            .map(Field)
            .ok_or_else(|| Error::NoMemory("cannot allocate a zfp field".into()))
    }

    fn ptr(&self) -> *mut sys::zfp_field {
        self.0.as_ptr()
    }
}

impl Drop for Field {
    fn drop(&mut self) {
        // SAFETY: allocated by zfp; the numbers it points at are not its own.
        unsafe { sys::zfp_field_free(self.0.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A zfpy stream of only a header (in expert mode, every block at least `minbits`) for
    /// `n` float32 numbers in one dimension.
    fn header_only(n: usize, minbits: u32) -> Vec<u8> {
        let stream = Stream::new().unwrap();
        let field = Field::new(std::ptr::null_mut(), sys::zfp_type_zfp_type_float, &[n]).unwrap();
        let mut buf = [0u64; 8];
        let bits = stream.attach(&mut buf).unwrap();
        // SAFETY: valid stream and field; the header fits in `buf`.
        let written = unsafe {
            assert_ne!(
                sys::zfp_stream_set_params(
                    stream.zfp.as_ptr(),
                    minbits,
                    sys::ZFP_MAX_BITS,
                    32,
                    -149
                ),
                0
            );
            let written =
                sys::zfp_write_header(stream.zfp.as_ptr(), field.ptr(), sys::ZFP_HEADER_FULL);
            sys::zfp_stream_flush(stream.zfp.as_ptr());
            written
        };
        drop(bits);
        assert!(written > 96, "a full header with expert parameters");
        buf.iter()
            .flat_map(|w| w.to_ne_bytes())
            .take(written.div_ceil(8))
            .collect()
    }

    #[test]
    fn a_stream_shorter_than_its_blocks_minimum_is_refused_before_padding() {
        let codec =
            super::super::from_config(json!({"id": "zfpy"}).as_object().unwrap(), 4).unwrap();
        let typed = codec.typed().unwrap();
        let dtype = DType::parse_v2("<f4").unwrap();
        // 2^20 numbers in 2^18 blocks of at least 16658 bits: 545 MB the stream does not have.
        let n = 1 << 20;
        let stream = header_only(n, sys::ZFP_MAX_BITS);
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
