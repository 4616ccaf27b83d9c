//! pcodec (pco), lossless compression of numerical sequences, through the `pco` crate (the
//! reference implementation): numcodecs' `pcodec` and Zarr v3's `numcodecs.pcodec` (also
//! named `pcodec`). A chunk is one pco standalone file, as numcodecs writes it with
//! `pcodec.standalone.simple_compress`.

use super::typed::{self, TypedCodec};
use super::{config_map, Codec, Config};
use crate::dtype::{DType, DataKind};
use crate::error::{Error, Result};
use crate::io::cast::Native;
use pco::{ChunkConfig, DeltaSpec, ModeSpec, PagingSpec};
use serde_json::{Map, Value};

/// numcodecs' default page size limit.
const DEFAULT_PAGE_N: i64 = 262_144;

/// The pcodec codec.
#[derive(Debug)]
pub struct Pcodec {
    chunk_config: ChunkConfig,
    config: Map<String, Value>,
}

impl Pcodec {
    /// From numcodecs' configuration (`level`, `mode_spec`, `delta_spec`, `paging_spec`,
    /// `delta_encoding_order`, `equal_pages_up_to`), with its defaults.
    pub(crate) fn from_config(cfg: &Config) -> Result<Self> {
        let level = cfg.int("level", 8, 0..=12)?;
        let mode_name = cfg.string("mode_spec", "auto")?;
        let mode = match mode_name {
            "auto" => ModeSpec::Auto,
            "classic" => ModeSpec::Classic,
            _ => return Err(cfg.bad("mode_spec", "\"auto\" or \"classic\"")),
        };
        let order = match cfg.has("delta_encoding_order") {
            true => Some(cfg.int("delta_encoding_order", 0, 0..=7)? as usize),
            false => None,
        };
        // As numcodecs: a delta order with delta_spec "auto" (how configurations before
        // delta_spec said it) means "try this order".
        let delta_name = cfg.string("delta_spec", "auto")?;
        let delta = match (delta_name, order) {
            ("auto" | "try_consecutive", Some(k)) => DeltaSpec::TryConsecutive(k),
            ("auto", None) => DeltaSpec::Auto,
            ("none", None) => DeltaSpec::NoOp,
            ("try_lookback", None) => DeltaSpec::TryLookback,
            ("try_consecutive", None) => {
                return Err(cfg.bad(
                    "delta_encoding_order",
                    "an integer in 0..=7 with delta_spec \"try_consecutive\"",
                ))
            }
            ("none" | "try_lookback", Some(_)) => {
                return Err(cfg.bad(
                    "delta_encoding_order",
                    "null unless delta_spec is \"try_consecutive\"",
                ))
            }
            _ => {
                return Err(cfg.bad(
                    "delta_spec",
                    "\"auto\", \"none\", \"try_consecutive\" or \"try_lookback\"",
                ))
            }
        };
        if cfg.string("paging_spec", "equal_pages_up_to")? != "equal_pages_up_to" {
            return Err(cfg.bad("paging_spec", "\"equal_pages_up_to\""));
        }
        let pages = cfg.int("equal_pages_up_to", DEFAULT_PAGE_N, 1..=i64::from(u32::MAX))?;
        let chunk_config = ChunkConfig::default()
            .with_compression_level(level as usize)
            .with_mode_spec(mode)
            .with_delta_spec(delta)
            .with_paging_spec(PagingSpec::EqualPagesUpTo(pages as usize));
        let config = config_map([
            ("id", "pcodec".into()),
            ("level", level.into()),
            ("mode_spec", mode_name.into()),
            ("delta_spec", delta_name.into()),
            ("paging_spec", "equal_pages_up_to".into()),
            (
                "delta_encoding_order",
                order.map_or(Value::Null, Value::from),
            ),
            ("equal_pages_up_to", pages.into()),
        ]);
        Ok(Pcodec {
            chunk_config,
            config,
        })
    }

    fn encode_numbers<T: Native + Default, P: pco::data_types::Number>(
        &self,
        data: &[u8],
        item: &DType,
        to_pco: impl Fn(T) -> P,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let values: Vec<P> = typed::load::<T>(data, item.order)?
            .into_iter()
            .map(to_pco)
            .collect();
        *out = pco::standalone::simple_compress(&values, &self.chunk_config)
            .map_err(|e| Error::Codec(format!("pcodec: {e}")))?;
        Ok(())
    }

    fn decode_numbers<T: Native + Default, P: pco::data_types::Number>(
        &self,
        data: &[u8],
        item: &DType,
        from_pco: impl Fn(P) -> T,
        out: &mut [u8],
    ) -> Result<()> {
        let n = out.len() / T::SIZE;
        let mut values = typed::zeroed::<P>(n, "a decoded chunk")?;
        let progress = pco::standalone::simple_decompress_into(data, &mut values)
            .map_err(|e| Error::Codec(format!("pcodec data: {e}")))?;
        if progress.n_processed != n {
            return Err(Error::Codec(format!(
                "pcodec data decodes to {} numbers, expected {n}",
                progress.n_processed
            )));
        }
        if !progress.finished {
            return Err(Error::Codec(format!(
                "pcodec data decodes to more than the expected {n} numbers"
            )));
        }
        let values: Vec<T> = values.into_iter().map(from_pco).collect();
        typed::store(&values, out, item.order);
        Ok(())
    }
}

/// Runs `$body` with `$t` the stored number type of `$item`, `$p` pco's and `$to`/`$from`
/// the conversions between them; `$other` for types pcodec does not encode.
macro_rules! with_number {
    ($item:expr, |$t:ident, $p:ident, $to:ident, $from:ident| $body:expr, $other:expr) => {
        match $item.kind {
            DataKind::Int(2) => with_number!(@ i16, i16, $t, $p, $to, $from, $body),
            DataKind::Int(4) => with_number!(@ i32, i32, $t, $p, $to, $from, $body),
            DataKind::Int(8) => with_number!(@ i64, i64, $t, $p, $to, $from, $body),
            DataKind::UInt(2) => with_number!(@ u16, u16, $t, $p, $to, $from, $body),
            DataKind::UInt(4) => with_number!(@ u32, u32, $t, $p, $to, $from, $body),
            DataKind::UInt(8) => with_number!(@ u64, u64, $t, $p, $to, $from, $body),
            DataKind::Float(4) => with_number!(@ f32, f32, $t, $p, $to, $from, $body),
            DataKind::Float(8) => with_number!(@ f64, f64, $t, $p, $to, $from, $body),
            DataKind::Float(2) => {
                type $t = u16;
                type $p = half::f16;
                let $to = half::f16::from_bits;
                let $from = |v: half::f16| v.to_bits();
                $body
            }
            _ => $other,
        }
    };
    (@ $st:ty, $pt:ty, $t:ident, $p:ident, $to:ident, $from:ident, $body:expr) => {{
        type $t = $st;
        type $p = $pt;
        let $to = |v: $st| v;
        let $from = |v: $pt| v;
        $body
    }};
}

impl Codec for Pcodec {
    fn config(&self) -> Map<String, Value> {
        self.config.clone()
    }

    fn encode_into(&self, _data: &[u8], _out: &mut Vec<u8>) -> Result<()> {
        Err(typed::misplaced("pcodec"))
    }

    fn decode_into(&self, _data: &[u8], _out: &mut [u8]) -> Result<()> {
        Err(typed::misplaced("pcodec"))
    }

    fn typed(&self) -> Option<&dyn TypedCodec> {
        Some(self)
    }
}

impl TypedCodec for Pcodec {
    fn check(&self, item: &DType, _rank: usize) -> Result<()> {
        match item.kind {
            DataKind::Int(2 | 4 | 8) | DataKind::UInt(2 | 4 | 8) | DataKind::Float(2 | 4 | 8) => {
                Ok(())
            }
            _ => Err(Error::CodecUnsupported(format!(
                "pcodec encodes 16-, 32- and 64-bit integers and floats, not {}",
                item.element_type().name()
            ))),
        }
    }

    fn encode_typed(
        &self,
        data: &[u8],
        item: &DType,
        _shape: &[u64],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        with_number!(
            item,
            |T, P, to, _from| self.encode_numbers::<T, P>(data, item, to, out),
            self.check(item, 0)
        )
    }

    fn decode_typed(
        &self,
        data: &[u8],
        item: &DType,
        _shape: &[u64],
        out: &mut [u8],
    ) -> Result<()> {
        with_number!(
            item,
            |T, P, _to, from| self.decode_numbers::<T, P>(data, item, from, out),
            self.check(item, 0)
        )
    }
}
