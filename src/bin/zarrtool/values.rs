//! Shapes, regions and element values as text.

use zarr::dtype::{DType, DataKind, Field};
use zarr::meta::DimEdges;
use zarr::node::ArrayBuilder;
use zarr::{Error, Result};

/// A chunk layout given on the command line: a chunk shape (`100,100`), or the edges of a
/// rectilinear chunk grid as the extension's `chunk_shapes` JSON (`[[10,20,30],100]`: per
/// dimension a list of edges and `[edge, count]` pairs, or one edge length).
#[derive(Debug, Clone, PartialEq)]
pub enum ChunkSpec {
    /// One chunk shape.
    Shape(Vec<u64>),
    /// Edges per dimension.
    Edges(Vec<DimEdges>),
}

impl ChunkSpec {
    /// Parses `text` (`what` names the option in errors).
    pub fn parse(text: &str, what: &str) -> Result<Self> {
        if !text.trim_start().starts_with('[') {
            return parse_shape(text, what).map(ChunkSpec::Shape);
        }
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| Error::InvalidArg(format!("{what} {text:?} is not JSON: {e}")))?;
        zarr::meta::grid::parse_chunk_shapes(&value)
            .map(ChunkSpec::Edges)
            .map_err(|e| Error::InvalidArg(format!("{what}: {e}")))
    }

    /// The number of dimensions it is for.
    pub fn rank(&self) -> usize {
        match self {
            ChunkSpec::Shape(shape) => shape.len(),
            ChunkSpec::Edges(dims) => dims.len(),
        }
    }

    /// Gives `builder` this layout.
    pub fn apply(&self, builder: &mut ArrayBuilder) {
        match self {
            ChunkSpec::Shape(shape) => {
                builder.chunks(shape.clone());
            }
            ChunkSpec::Edges(dims) => {
                builder.chunks(dims.iter().map(DimEdges::max_edge).collect());
                builder.chunk_grid(dims.clone());
            }
        }
    }
}

/// Parses `text` as JSON (`what` names the option or value, for the error).
pub fn parse_json(text: &str, what: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| Error::InvalidArg(format!("{what}: {text:?} is not valid JSON: {e}")))
}

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

/// A float as text: its shortest round-trip text in its own precision (`0.1` for a float32
/// 0.1), integers with `.0`, and `nan`, `inf`, `-inf`.
fn float_text<F: Copy + Into<f64> + std::fmt::Debug>(v: F) -> String {
    let x: f64 = v.into();
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 {
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

/// A complex number as text (`1.0+2.0j`).
fn complex_text<F: Copy + Into<f64> + std::fmt::Debug>(re: F, im: F) -> String {
    let negative = Into::<f64>::into(im).is_sign_negative();
    let sign = if negative { "" } else { "+" };
    format!("{}{sign}{}j", float_text(re), float_text(im))
}

/// The most bytes of text an item's byte prints as (a `\u{10ffff}` escape per UTF-32
/// character, `\xNN` per byte, two hex digits per raw byte, separators of records).
const TEXT_BYTES_PER_BYTE: usize = 12;

/// Items below this size print without asking for room first.
const SMALL_ITEM: usize = 1 << 16;

/// Makes sure the text of an item of `bytes` bytes can be had before it is made: the room
/// is reserved fallibly and given back, so an item too large to print in the memory there
/// is gives `NoMemory` instead of aborting the process.
pub fn text_room(bytes: usize, what: &str) -> Result<()> {
    if bytes < SMALL_ITEM {
        return Ok(());
    }
    let mut room: Vec<u8> = Vec::new();
    zarr::error::try_reserve(
        &mut room,
        bytes.saturating_mul(TEXT_BYTES_PER_BYTE).saturating_add(64),
        what,
    )
}

/// One element (native byte order, as read) as text: strings quoted (`"zz"`, `b"ab"`),
/// records as tuples of their field values (`(1, 0.5, b"ab")`), sub-array fields as lists.
pub fn element_text(dtype: &DType, item: &[u8]) -> String {
    let f32_at = |at: usize| f32::from_ne_bytes(item[at..at + 4].try_into().unwrap_or_default());
    let f64_at = |at: usize| f64::from_ne_bytes(item[at..at + 8].try_into().unwrap_or_default());
    match &dtype.kind {
        DataKind::Bool => (item[0] != 0).to_string(),
        DataKind::Int(1) => (item[0] as i8).to_string(),
        DataKind::Int(2) => i16::from_ne_bytes([item[0], item[1]]).to_string(),
        DataKind::Int(4) => {
            i32::from_ne_bytes(item[..4].try_into().unwrap_or_default()).to_string()
        }
        DataKind::Int(_) | DataKind::DateTime(_) | DataKind::TimeDelta(_) => {
            i64::from_ne_bytes(item[..8].try_into().unwrap_or_default()).to_string()
        }
        DataKind::UInt(1) => item[0].to_string(),
        DataKind::UInt(2) => u16::from_ne_bytes([item[0], item[1]]).to_string(),
        DataKind::UInt(4) => {
            u32::from_ne_bytes(item[..4].try_into().unwrap_or_default()).to_string()
        }
        DataKind::UInt(_) => {
            u64::from_ne_bytes(item[..8].try_into().unwrap_or_default()).to_string()
        }
        DataKind::Float(2) => {
            float_text(half::f16::from_bits(u16::from_ne_bytes([item[0], item[1]])).to_f32())
        }
        DataKind::Float(4) => float_text(f32_at(0)),
        DataKind::Float(_) => float_text(f64_at(0)),
        DataKind::Complex(8) => complex_text(f32_at(0), f32_at(4)),
        DataKind::Complex(_) => complex_text(f64_at(0), f64_at(8)),
        DataKind::FixedBytes(_) => format!("b\"{}\"", escape(item)),
        DataKind::Unicode(_) => format!("{:?}", zarr::meta::fill::unicode_text(item)),
        DataKind::NarrowInt { signed: true, .. } => (item[0] as i8).to_string(),
        DataKind::NarrowInt { .. } => item[0].to_string(),
        DataKind::Structured(fields) => {
            let values: Vec<String> = fields.iter().map(|f| field_text(f, item)).collect();
            match values.len() {
                1 => format!("({},)", values[0]),
                _ => format!("({})", values.join(", ")),
            }
        }
        _ => hex_text(item),
    }
}

/// Raw bytes and extension floats: their bytes in hex.
fn hex_text(item: &[u8]) -> String {
    let hex: String = item.iter().map(|b| format!("{b:02x}")).collect();
    format!("0x{hex}")
}

/// One field of a record as text: its value, or a (nested) list for a sub-array field.
fn field_text(field: &Field, record: &[u8]) -> String {
    let size = field.dtype.item_size();
    let bytes = &record[field.offset..field.offset + field.size()];
    fn nested(dtype: &DType, shape: &[u64], bytes: &[u8], size: usize) -> String {
        let Some((&n, rest)) = shape.split_first() else {
            return element_text(dtype, bytes);
        };
        let step = rest.iter().product::<u64>() as usize * size;
        let parts: Vec<String> = (0..n as usize)
            .map(|i| nested(dtype, rest, &bytes[i * step..(i + 1) * step], size))
            .collect();
        format!("[{}]", parts.join(", "))
    }
    nested(&field.dtype, &field.shape, bytes, size)
}

/// One element as CSV values before quoting: strings unquoted, a record one value per
/// field (nested records flattened; a sub-array field one value, a list).
pub fn element_csv(dtype: &DType, item: &[u8], out: &mut Vec<String>) {
    match &dtype.kind {
        DataKind::FixedBytes(_) => out.push(escape(item)),
        DataKind::Unicode(_) => out.push(zarr::meta::fill::unicode_text(item)),
        DataKind::Structured(fields) => {
            for field in fields {
                let bytes = &item[field.offset..field.offset + field.size()];
                if field.shape.is_empty() {
                    element_csv(&field.dtype, bytes, out);
                } else {
                    out.push(field_text(field, item));
                }
            }
        }
        _ => out.push(element_text(dtype, item)),
    }
}

/// A variable-length item as text: a string quoted, bytes as `b"…"`, a numeric array as a
/// list of its elements (`[1, 2, 3]`; read in native byte order).
pub fn vlen_text(dtype: &DType, bytes: &[u8]) -> String {
    match &dtype.kind {
        DataKind::String => format!("{:?}", String::from_utf8_lossy(bytes)),
        DataKind::VlenArray(inner) => {
            let values: Vec<String> = bytes
                .chunks_exact(inner.item_size().max(1))
                .map(|element| element_text(inner, element))
                .collect();
            format!("[{}]", values.join(", "))
        }
        _ => format!("b\"{}\"", bytes.escape_ascii()),
    }
}

/// A variable-length item as a CSV value before quoting: the string itself, bytes escaped,
/// a numeric array as its list.
pub fn vlen_csv(dtype: &DType, bytes: &[u8]) -> String {
    match dtype.kind {
        DataKind::String => String::from_utf8_lossy(bytes).into_owned(),
        DataKind::VlenArray(_) => vlen_text(dtype, bytes),
        _ => bytes.escape_ascii().to_string(),
    }
}

/// Quotes a CSV field when it holds a comma, a quote or a line break (RFC 4180).
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
