//! Shapes, regions and element values as text.

use zarr::dtype::{DType, DataKind};
use zarr::{Error, Result};

/// Parses `4,5,6` into a shape (an empty string is the 0-d shape).
pub fn parse_shape(text: &str, what: &str) -> Result<Vec<u64>> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|part| {
            part.trim().parse::<u64>().map_err(|_| {
                Error::InvalidArg(format!(
                    "{what} {text:?}: {part:?} is not a non-negative integer"
                ))
            })
        })
        .collect()
}

/// Parses a region (`0:10,5,:`, a missing part meaning the whole dimension) of an array of
/// `shape` into start and count.
pub fn parse_region(text: Option<&str>, shape: &[u64]) -> Result<(Vec<u64>, Vec<u64>)> {
    let Some(text) = text else {
        return Ok((vec![0; shape.len()], shape.to_vec()));
    };
    let parts: Vec<&str> = if text.trim().is_empty() {
        Vec::new()
    } else {
        text.split(',').collect()
    };
    if parts.len() != shape.len() {
        return Err(Error::RankMismatch(format!(
            "region {text:?} has {} dimensions but the array has {}",
            parts.len(),
            shape.len()
        )));
    }
    let mut start = Vec::new();
    let mut count = Vec::new();
    for (d, (part, &extent)) in parts.iter().zip(shape).enumerate() {
        let bad = || {
            Error::InvalidArg(format!(
                "region {text:?}: dimension {d}: {part:?} is not an index or START:STOP"
            ))
        };
        let num = |s: &str, default: u64| -> Result<u64> {
            if s.trim().is_empty() {
                Ok(default)
            } else {
                s.trim().parse().map_err(|_| bad())
            }
        };
        let (first, stop) = match part.split_once(':') {
            Some((a, b)) => (num(a, 0)?, num(b, extent)?),
            None => {
                let i =
                    num(part, u64::MAX)
                        .and_then(|i| if i == u64::MAX { Err(bad()) } else { Ok(i) })?;
                (i, i.saturating_add(1))
            }
        };
        if first > stop || stop > extent {
            return Err(Error::OutOfBounds(format!(
                "region {text:?}: dimension {d}: {first}:{stop} is outside 0:{extent}"
            )));
        }
        start.push(first);
        count.push(stop - first);
    }
    Ok((start, count))
}

/// Formats a shape as `4 x 5` (`scalar` for 0-d).
pub fn shape_text(shape: &[u64]) -> String {
    if shape.is_empty() {
        return "scalar".into();
    }
    shape
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" x ")
}

/// A float as text: integers without a fraction keep `.0`, others the shortest round trip.
fn float_text(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{v:?}")
    }
}

fn escape(bytes: &[u8]) -> String {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    bytes[..end].escape_ascii().to_string()
}

/// One element (native byte order, as read) as text.
pub fn element_text(dtype: &DType, item: &[u8]) -> String {
    let ne = |n: usize| -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&item[..n]);
        b
    };
    match &dtype.kind {
        DataKind::Bool => (item[0] != 0).to_string(),
        DataKind::Int(1) => (item[0] as i8).to_string(),
        DataKind::Int(2) => i16::from_ne_bytes([item[0], item[1]]).to_string(),
        DataKind::Int(4) => {
            i32::from_ne_bytes(item[..4].try_into().unwrap_or_default()).to_string()
        }
        DataKind::Int(_) | DataKind::DateTime(_) | DataKind::TimeDelta(_) => {
            i64::from_ne_bytes(ne(8)).to_string()
        }
        DataKind::UInt(1) => item[0].to_string(),
        DataKind::UInt(2) => u16::from_ne_bytes([item[0], item[1]]).to_string(),
        DataKind::UInt(4) => {
            u32::from_ne_bytes(item[..4].try_into().unwrap_or_default()).to_string()
        }
        DataKind::UInt(_) => u64::from_ne_bytes(ne(8)).to_string(),
        DataKind::Float(2) => {
            float_text(half::f16::from_bits(u16::from_ne_bytes([item[0], item[1]])).to_f64())
        }
        DataKind::Float(4) => {
            float_text(f32::from_ne_bytes(item[..4].try_into().unwrap_or_default()) as f64)
        }
        DataKind::Float(_) => float_text(f64::from_ne_bytes(ne(8))),
        DataKind::Complex(8) => {
            let re = f32::from_ne_bytes(item[..4].try_into().unwrap_or_default()) as f64;
            let im = f32::from_ne_bytes(item[4..8].try_into().unwrap_or_default()) as f64;
            format!(
                "{}{}{}j",
                float_text(re),
                if im < 0.0 || im.is_sign_negative() {
                    ""
                } else {
                    "+"
                },
                float_text(im)
            )
        }
        DataKind::Complex(_) => {
            let re = f64::from_ne_bytes(item[..8].try_into().unwrap_or_default());
            let im = f64::from_ne_bytes(item[8..16].try_into().unwrap_or_default());
            format!(
                "{}{}{}j",
                float_text(re),
                if im.is_sign_negative() { "" } else { "+" },
                float_text(im)
            )
        }
        DataKind::FixedBytes(_) => format!("b\"{}\"", escape(item)),
        DataKind::Unicode(_) => format!("{:?}", zarr::meta::fill::unicode_text(item)),
        DataKind::NarrowInt { signed: true, .. } => (item[0] as i8).to_string(),
        DataKind::NarrowInt { .. } => item[0].to_string(),
        _ => {
            // Records, raw bytes and extension floats: their bytes in hex.
            let hex: String = item.iter().map(|b| format!("{b:02x}")).collect();
            format!("0x{hex}")
        }
    }
}

/// Quotes a CSV field when it holds a comma, a quote or a line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
