//! `zarrtool dump`: an array's values (or a region's) as text, CSV or raw bytes.

use crate::cli::{DumpFormat, NodeArg};
use crate::nodes::{open, read_region};
use crate::out::Out;
use crate::values::{
    csv_field, element_csv, element_text, parse_region, text_room, vlen_csv, vlen_text,
};
use zarr::dtype::{swap_record_fields, DataKind};
use zarr::meta::fill::read_float;
use zarr::meta::Order;
use zarr::node::{cf, Array, Mode, Node};
use zarr::{Error, Result};

/// Prints the values of the array at `node` (of `region`, when given) in `format`; with
/// `missing`, that text for each value equal to the array's CF missing value.
pub fn run(
    node: &NodeArg,
    region: Option<&str>,
    format: DumpFormat,
    missing: Option<&str>,
) -> Result<u8> {
    if missing.is_some() && format == DumpFormat::Raw {
        return Err(Error::InvalidArg(
            "--missing prints text for missing values: it is for --format text and csv, not \
             raw"
            .into(),
        ));
    }
    let store = open(&node.store, false)?;
    let array = Array::open(store, &node.path, Mode::Read)?;
    let meta = array.metadata();
    let (start, count) = parse_region(region, &meta.shape)?;
    let masked = match missing {
        Some(text) => MissingValue::of(&array)?.map(|value| (value, text)),
        None => None,
    };
    let mut out = Out::new();
    let csv = format == DumpFormat::Csv;
    let raw = format == DumpFormat::Raw;
    // Lines are made and printed one at a time: a row of the region's last dimension in
    // text and CSV, an item in raw form.
    let row = count.last().copied().unwrap_or(1).max(1) as usize;
    let sep = if csv { "," } else { " " };
    let mut print_row = |values: &[String]| -> Result<()> {
        if raw {
            return values.iter().try_for_each(|v| out.line(v));
        }
        let fields: Vec<String> = values
            .iter()
            .map(|f| if csv { csv_field(f) } else { f.clone() })
            .collect();
        out.line(fields.join(sep))
    };
    let mut values = Vec::new();
    if meta.dtype.is_variable() {
        let vlen = array.read_vlen(&start, &count, Order::C)?;
        let items = vlen.offsets.len() - 1;
        for i in 0..items {
            let bytes = &vlen.data[vlen.offsets[i] as usize..vlen.offsets[i + 1] as usize];
            text_room(bytes.len(), "the item's text")?;
            values.push(if csv {
                vlen_csv(&meta.dtype, bytes)
            } else {
                vlen_text(&meta.dtype, bytes)
            });
            // Raw: one item per line (variable-length items have no fixed bytes).
            if raw || (i + 1) % row == 0 || i + 1 == items {
                print_row(&values)?;
                values.clear();
            }
        }
    } else {
        let mut buf = read_region(&array, &start, &count)?;
        // Records come with their fields in the stored byte order.
        swap_record_fields(&meta.dtype, &mut buf);
        if raw {
            out.bytes(&buf)?;
            out.finish()?;
            return Ok(0);
        }
        let items = buf.chunks_exact(meta.item_size().max(1));
        let n = items.len();
        for (i, item) in items.enumerate() {
            text_room(item.len(), "the item's text")?;
            if let Some((_, text)) = masked.as_ref().filter(|(value, _)| value.is(item)) {
                values.push(text.to_string());
            } else if csv {
                element_csv(&meta.dtype, item, &mut values);
            } else {
                values.push(element_text(&meta.dtype, item));
            }
            if (i + 1) % row == 0 || i + 1 == n {
                print_row(&values)?;
                values.clear();
            }
        }
    }
    out.finish()?;
    Ok(0)
}

/// An array's CF missing value, to tell the items that hold it, as ncdump tells its
/// _FillValue: the `_FillValue` attribute, else outside Zarr v3 the fill value (which
/// xarray and netCDF-C read as the missing value). Numeric types only.
enum MissingValue {
    /// An integer's native bytes, compared exactly.
    Integer(Vec<u8>),
    /// A float's value (of `size` bytes), compared as a number: NaN matches any NaN.
    Float { value: f64, size: usize },
}

impl MissingValue {
    /// The missing value of `array`; `None` when it has none or is not numeric.
    fn of(array: &Array) -> Result<Option<Self>> {
        let meta = array.metadata();
        let integer = matches!(meta.dtype.kind, DataKind::Int(_) | DataKind::UInt(_));
        let size = match meta.dtype.kind {
            DataKind::Float(size @ (2 | 4 | 8)) => size,
            _ if integer => meta.item_size(),
            _ => return Ok(None),
        };
        // An integer fill value outside v3 is the missing value exactly (an int64 one may
        // have no double).
        let fill = meta.fill_value.as_ref().filter(|f| f.len() == size);
        let bytes = match fill {
            Some(fill) if integer && !array.format().is_v3() => fill.clone(),
            _ => match array.missing_value()? {
                Some(value) => cf::encode(value, &meta.dtype, array.format(), array.path())?.fill,
                None => return Ok(None),
            },
        };
        Ok(Some(match integer {
            true => MissingValue::Integer(bytes),
            false => MissingValue::Float {
                value: read_float(&bytes, size),
                size,
            },
        }))
    }

    /// Whether `item` (one element's native bytes) holds the missing value.
    fn is(&self, item: &[u8]) -> bool {
        match self {
            MissingValue::Integer(bytes) => item == bytes.as_slice(),
            MissingValue::Float { value, size } => {
                let x = read_float(item, *size);
                x == *value || (x.is_nan() && value.is_nan())
            }
        }
    }
}
