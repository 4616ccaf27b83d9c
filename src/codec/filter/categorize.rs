//! numcodecs' `categorize`: fixed-width unicode items (`<U n`, UTF-32 code units) become
//! integer codes of `astype` — 1 + the index of the label they equal (the last such
//! label), 0 for none; decoding gives each code's label (truncated to `n` characters) and
//! the empty string for 0 or unknown codes. Labels compare as numpy compares unicode
//! items: trailing NULs do not count.

use super::num::{Kind, NumType, Value as Num};
use super::{parse_dtype, Filter};
use crate::dtype::DType;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The `categorize` filter.
#[derive(Debug)]
pub struct Categorize {
    labels: Vec<String>,
    /// Each label's code points, truncated to `width` (what decoding writes).
    points: Vec<Vec<u32>>,
    /// Characters per item.
    width: usize,
    /// Items are big-endian UTF-32.
    big: bool,
    astype: DType,
    a: NumType,
}

impl Categorize {
    /// Reads the configuration: `labels` (strings), `dtype` (`<U n` or `>U n`; object
    /// data is not supported), `astype` (an integer type, default `|u1`).
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        let bad = |key: &str, what: &str| {
            Error::Metadata(format!("filter \"categorize\": {key:?} must be {what}"))
        };
        let labels: Vec<String> = config
            .get("labels")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("labels", "a list of strings"))?
            .iter()
            .map(|l| l.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("labels", "a list of strings"))?;
        let dtype = config
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("dtype", "a unicode data type such as \"<U8\""))?;
        let (big, width) = parse_unicode(dtype).ok_or_else(|| {
            if dtype.trim_start_matches(['<', '>', '|', '=']) == "O" {
                Error::Unsupported(
                    "filter \"categorize\": object data (dtype \"|O\") is not supported".into(),
                )
            } else {
                bad(
                    "dtype",
                    &format!("a unicode data type such as \"<U8\", not {dtype:?}"),
                )
            }
        })?;
        let astype = match config.get("astype") {
            None | Some(Value::Null) => "|u1",
            Some(v) => v
                .as_str()
                .ok_or_else(|| bad("astype", "an integer data type"))?,
        };
        let astype = parse_dtype(astype)
            .map_err(|e| bad("astype", &format!("an integer data type ({e})")))?;
        let a = NumType::of(&astype, "filter \"categorize\" \"astype\"")?;
        if !matches!(a.kind, Kind::Int | Kind::UInt) {
            return Err(bad("astype", "an integer data type"));
        }
        let max_code = match a.kind {
            Kind::Int => (1u64 << (8 * a.size - 1)) - 1,
            _ => u64::MAX >> (64 - 8 * a.size),
        };
        if labels.len() as u64 > max_code {
            return Err(bad(
                "astype",
                &format!("a type holding {} label codes", labels.len()),
            ));
        }
        let points = labels
            .iter()
            .map(|l| l.chars().take(width).map(u32::from).collect())
            .collect();
        Ok(Categorize {
            labels,
            points,
            width,
            big,
            astype,
            a,
        })
    }

    /// The numpy type string of the items it receives (`"<U8"`).
    pub fn dtype(&self) -> String {
        format!("{}U{}", if self.big { '>' } else { '<' }, self.width)
    }

    /// Checks that the data it receives is of its `dtype`.
    pub fn check_input(&self, input: &DType) -> Result<()> {
        let got = input.to_v2();
        if got != self.dtype() {
            return Err(Error::Metadata(format!(
                "filter \"categorize\": \"dtype\" is {} but the data it receives is {got}",
                self.dtype()
            )));
        }
        Ok(())
    }

    fn item_bytes(&self) -> usize {
        4 * self.width
    }

    /// The code of one item.
    fn code(&self, item: &[u8]) -> u64 {
        let mut chars: Vec<u32> = item
            .chunks_exact(4)
            .map(|c| {
                let c: [u8; 4] = c.try_into().expect("4 bytes");
                if self.big {
                    u32::from_be_bytes(c)
                } else {
                    u32::from_le_bytes(c)
                }
            })
            .collect();
        while chars.last() == Some(&0) {
            chars.pop();
        }
        self.labels
            .iter()
            .enumerate()
            .rev()
            .find(|(_, label)| label.chars().map(u32::from).eq(chars.iter().copied()))
            .map_or(0, |(i, _)| i as u64 + 1)
    }
}

/// `(big endian, characters)` of a unicode type string (`"<U8"`, `">U1"`).
fn parse_unicode(text: &str) -> Option<(bool, usize)> {
    let (big, rest) = match text.as_bytes().first()? {
        b'<' | b'|' | b'=' => (false, &text[1..]),
        b'>' => (true, &text[1..]),
        _ => (false, text),
    };
    let width: usize = rest.strip_prefix('U')?.parse().ok()?;
    (width > 0 && width < 1 << 24).then_some((big, width))
}

impl Filter for Categorize {
    fn config(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("id".into(), "categorize".into());
        map.insert("labels".into(), self.labels.clone().into());
        map.insert("dtype".into(), self.dtype().into());
        map.insert("astype".into(), self.astype.to_v2().into());
        map
    }

    fn encoded_dtype(&self) -> DType {
        self.astype.clone()
    }

    fn encoded_len(&self, len: usize) -> usize {
        len / self.item_bytes() * self.a.size
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        *out = self.encoded(data)?;
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let (isz, asz) = (self.item_bytes(), self.a.size);
        if !out.len().is_multiple_of(isz) || data.len() != self.encoded_len(out.len()) {
            return Err(Error::Codec(format!(
                "categorize: encoded data has {} bytes, expected {}",
                data.len(),
                self.encoded_len(out.len())
            )));
        }
        out.fill(0);
        for (code, item) in data.chunks_exact(asz).zip(out.chunks_exact_mut(isz)) {
            let index = match self.a.load(code) {
                Num::I(i) if i > 0 => i as u64 - 1,
                Num::U(u) if u > 0 => u - 1,
                _ => continue,
            };
            let Some(points) = self.points.get(index as usize) else {
                continue;
            };
            for (c, slot) in points.iter().zip(item.chunks_exact_mut(4)) {
                slot.copy_from_slice(&if self.big {
                    c.to_be_bytes()
                } else {
                    c.to_le_bytes()
                });
            }
        }
        Ok(())
    }
}

impl Categorize {
    /// Encodes `data` into a new buffer.
    fn encoded(&self, data: &[u8]) -> Result<Vec<u8>> {
        let (isz, asz) = (self.item_bytes(), self.a.size);
        if !data.len().is_multiple_of(isz) {
            return Err(Error::Codec(format!(
                "categorize: {} bytes are not a whole number of {} items",
                data.len(),
                self.dtype()
            )));
        }
        let mut out = vec![0u8; self.encoded_len(data.len())];
        for (item, code) in data.chunks_exact(isz).zip(out.chunks_exact_mut(asz)) {
            self.a.store(Num::U(self.code(item)), code);
        }
        Ok(out)
    }
}
