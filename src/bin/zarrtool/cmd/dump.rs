//! `zarrtool dump`: an array's values (or a region's) as text, CSV or raw bytes.

use crate::cli::{DumpFormat, NodeArg};
use crate::nodes::{open, read_region};
use crate::out::Out;
use crate::values::{
    csv_field, element_csv, element_text, parse_region, text_room, vlen_csv, vlen_text,
};
use zarr::dtype::swap_record_fields;
use zarr::meta::Order;
use zarr::node::{Array, Mode};
use zarr::Result;

/// Prints the values of the array at `node` (of `region`, when given) in `format`.
pub fn run(node: &NodeArg, region: Option<&str>, format: DumpFormat) -> Result<u8> {
    let store = open(&node.store, false)?;
    let array = Array::open(store, &node.path, Mode::Read)?;
    let meta = array.metadata();
    let (start, count) = parse_region(region, &meta.shape)?;
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
            if csv {
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
