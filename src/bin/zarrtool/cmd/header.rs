//! `zarrtool header`: every group, dimension, variable and attribute of a store (or a
//! subtree) on one screen, in the CDL that `ncdump -h` prints for a netCDF file, or as JSON.
//! Reads metadata documents only, never chunks.
//!
//! The netCDF model is read as netCDF-C reads a Zarr store: dimensions come from NCZarr's
//! group entries and `dimrefs`, else from the dimension names (v3 `dimension_names`, v2
//! `_ARRAY_DIMENSIONS`) and the shapes; a dimension without a name is `_zdim_<length>`,
//! as netCDF-C names it. A group defines the dimensions its arrays use unless an enclosing
//! group defines the same name with the same length; a name used with two lengths in one
//! group is printed once, with a comment giving the other lengths and their variables.
//! Attribute types are NCZarr's recorded ones, else inferred as netCDF-C infers them from
//! JSON (integers: the first of byte, ubyte, short, ushort, int, uint, int64, uint64 that
//! holds every value; other numbers: double; text: char; a list of strings: string; true
//! and false: ubyte 1 and 0; anything else: its JSON text).

use crate::cli::NodeArg;
use crate::describe::display;
use crate::missing::{float_json, missing_value};
use crate::nczarr;
use crate::nodes::{codecs, document};
use crate::out::Out;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use zarr::dtype::{ByteOrder, DType, DataKind};
use zarr::meta::json::{as_non_finite, to_compact};
use zarr::meta::Format;
use zarr::node::{cf, node_kind, Array, Group, Mode, Node, NodeKind, DIMENSIONS_KEY};
use zarr::store::{get_document, join_key, mask_urls, Store};
use zarr::{Error, Result};

/// netCDF's provenance attribute, which `ncdump -h` does not show either.
const PROVENANCE: &str = "_NCProperties";

/// A netCDF type of a variable or attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NcType {
    Byte,
    UByte,
    Short,
    UShort,
    Int,
    UInt,
    Int64,
    UInt64,
    Float,
    Double,
    Char,
    String,
}

/// The integer types in the order netCDF-C tries them for a JSON integer, with their ranges.
const INTEGER_TYPES: [(NcType, i128, i128); 8] = [
    (NcType::Byte, i8::MIN as i128, i8::MAX as i128),
    (NcType::UByte, 0, u8::MAX as i128),
    (NcType::Short, i16::MIN as i128, i16::MAX as i128),
    (NcType::UShort, 0, u16::MAX as i128),
    (NcType::Int, i32::MIN as i128, i32::MAX as i128),
    (NcType::UInt, 0, u32::MAX as i128),
    (NcType::Int64, i64::MIN as i128, i64::MAX as i128),
    (NcType::UInt64, 0, u64::MAX as i128),
];

impl NcType {
    /// The CDL name.
    fn name(self) -> &'static str {
        match self {
            NcType::Byte => "byte",
            NcType::UByte => "ubyte",
            NcType::Short => "short",
            NcType::UShort => "ushort",
            NcType::Int => "int",
            NcType::UInt => "uint",
            NcType::Int64 => "int64",
            NcType::UInt64 => "uint64",
            NcType::Float => "float",
            NcType::Double => "double",
            NcType::Char => "char",
            NcType::String => "string",
        }
    }

    /// The suffix of an integer literal of this type in CDL.
    fn suffix(self) -> &'static str {
        match self {
            NcType::Byte => "b",
            NcType::UByte => "UB",
            NcType::Short => "s",
            NcType::UShort => "US",
            NcType::UInt => "U",
            NcType::Int64 => "LL",
            NcType::UInt64 => "ULL",
            _ => "",
        }
    }

    fn is_integer(self) -> bool {
        INTEGER_TYPES.iter().any(|(t, _, _)| *t == self)
    }

    /// The type of a numpy type string as NCZarr records attribute types (`<i2`, `<U1`).
    fn from_numpy(text: &str) -> Option<NcType> {
        let code = text.trim_start_matches(['<', '>', '|', '=']);
        Some(match code {
            "i1" | "b" => NcType::Byte,
            "u1" | "B" => NcType::UByte,
            "i2" => NcType::Short,
            "u2" => NcType::UShort,
            "i4" => NcType::Int,
            "u4" => NcType::UInt,
            "i8" => NcType::Int64,
            "u8" => NcType::UInt64,
            "f4" => NcType::Float,
            "f8" => NcType::Double,
            "U1" | "S1" | "c" => NcType::Char,
            _ if code.starts_with(['U', 'S']) => NcType::String,
            _ => return None,
        })
    }

    /// The narrowest integer type holding every value, in netCDF-C's order.
    fn integer_for(values: &[i128]) -> Option<NcType> {
        let (lo, hi) = (values.iter().min()?, values.iter().max()?);
        INTEGER_TYPES
            .iter()
            .find(|(_, min, max)| min <= lo && hi <= max)
            .map(|(t, _, _)| *t)
    }
}

/// One value of an attribute.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    Int(i128),
    Float(f64),
    Text(String),
}

impl Item {
    /// The value of a JSON scalar (a bare non-finite token is a float; a bool is 0 or 1).
    fn of(value: &Value) -> Option<Item> {
        if let Some(v) = as_non_finite(value) {
            return Some(Item::Float(v));
        }
        match value {
            Value::Number(n) => Some(match (n.as_i64(), n.as_u64()) {
                (Some(v), _) => Item::Int(v.into()),
                (_, Some(v)) => Item::Int(v.into()),
                _ => Item::Float(n.as_f64()?),
            }),
            Value::Bool(b) => Some(Item::Int((*b).into())),
            Value::String(s) => Some(Item::Text(s.clone())),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Item::Int(v) => Some(*v as f64),
            Item::Float(v) => Some(*v),
            Item::Text(_) => None,
        }
    }
}

/// An attribute as netCDF sees it: its type and values.
#[derive(Debug, Clone)]
struct Attr {
    name: String,
    ty: NcType,
    items: Vec<Item>,
    /// The stored JSON of a value netCDF holds as its text (null, objects, mixed lists).
    json: Option<Value>,
}

impl Attr {
    /// Types the attribute `name` holding `value`: as NCZarr recorded (`declared`) when
    /// the value fits that type, else as netCDF-C infers it from JSON.
    fn new(name: &str, value: &Value, declared: Option<NcType>) -> Attr {
        let items: Vec<Item> = match value {
            Value::Array(list) => list.iter().map(Item::of).collect::<Option<_>>(),
            scalar => Item::of(scalar).map(|i| vec![i]),
        }
        .unwrap_or_default();
        // netCDF-C keeps true and false as ubyte.
        let bools = match value {
            Value::Array(list) => list.iter().all(Value::is_boolean),
            scalar => scalar.is_boolean(),
        };
        let texts = items.iter().all(|i| matches!(i, Item::Text(_)));
        let numbers = items.iter().all(|i| !matches!(i, Item::Text(_)));
        let fits = |ty: NcType| match ty {
            NcType::Char => texts && items.len() == 1 && !value.is_array(),
            NcType::String => texts,
            t if t.is_integer() => items.iter().all(|i| matches!(i, Item::Int(_))),
            _ => numbers,
        };
        let ty = match declared.filter(|t| !items.is_empty() && fits(*t)) {
            Some(t) => t,
            None if items.is_empty() || !(texts || numbers) => {
                // Null, objects, empty and mixed lists: their JSON text.
                return Attr {
                    name: name.to_string(),
                    ty: NcType::Char,
                    items: vec![Item::Text(json_text(value))],
                    json: Some(strict_json(value)),
                };
            }
            None if texts && !value.is_array() => NcType::Char,
            None if texts => NcType::String,
            None if bools => NcType::UByte,
            None => {
                let ints: Option<Vec<i128>> = items
                    .iter()
                    .map(|i| match i {
                        Item::Int(v) => Some(*v),
                        _ => None,
                    })
                    .collect();
                ints.and_then(|v| NcType::integer_for(&v))
                    .unwrap_or(NcType::Double)
            }
        };
        Attr {
            name: name.to_string(),
            ty,
            items,
            json: None,
        }
    }

    /// The values in CDL (`"K"`, `1s, 2s`, `-9999.f`).
    fn cdl_values(&self) -> String {
        let values: Vec<String> = self.items.iter().map(|i| cdl_item(i, self.ty)).collect();
        values.join(", ")
    }

    /// The attribute as JSON: name, type and values (a list for more than one); a
    /// non-finite float is `"NaN"`, `"Infinity"` or `"-Infinity"`.
    fn to_json(&self) -> Value {
        if let Some(value) = &self.json {
            return json!({"name": self.name, "type": "json", "value": value});
        }
        let values: Vec<Value> = self
            .items
            .iter()
            .map(|i| match i {
                Item::Int(v) if matches!(self.ty, NcType::Float | NcType::Double) => {
                    Value::from(*v as f64)
                }
                Item::Int(v) => i64::try_from(*v)
                    .map(Value::from)
                    .or_else(|_| u64::try_from(*v).map(Value::from))
                    .unwrap_or(Value::Null),
                Item::Float(v) if self.ty == NcType::Float => float_json(*v as f32 as f64, true),
                Item::Float(v) => float_json(*v, false),
                Item::Text(s) => Value::from(s.as_str()),
            })
            .collect();
        let value = match <[Value; 1]>::try_from(values) {
            Ok([one]) => one,
            Err(all) => Value::Array(all),
        };
        json!({"name": self.name, "type": self.ty.name(), "value": value})
    }
}

/// JSON text as netCDF-C writes it into a text attribute: `, ` and `: ` in objects, `,`
/// in lists, non-finite floats as bare tokens.
fn json_text(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(json_text).collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), json_text(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        scalar => to_compact(scalar),
    }
}

/// `value` with every bare non-finite token as the string `"NaN"`, `"Infinity"` or
/// `"-Infinity"`, so that the JSON printed is strict.
fn strict_json(value: &Value) -> Value {
    if let Some(v) = as_non_finite(value) {
        return zarr::meta::fill::float_json(v);
    }
    match value {
        Value::Array(items) => Value::Array(items.iter().map(strict_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), strict_json(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// One value as a CDL literal of `ty`, as `ncdump` prints it.
fn cdl_item(item: &Item, ty: NcType) -> String {
    match (item, ty) {
        (Item::Text(s), _) => format!("\"{}\"", escape_text(s)),
        (Item::Int(v), t) if t.is_integer() => format!("{v}{}", t.suffix()),
        (item, NcType::Float) => {
            let v = item.as_f64().unwrap_or(f64::NAN) as f32;
            match v {
                _ if v.is_nan() => "NaNf".into(),
                f32::INFINITY => "Infinityf".into(),
                f32::NEG_INFINITY => "-Infinityf".into(),
                _ => format!("{}f", c_format_g(v as f64, 7)),
            }
        }
        (item, _) => {
            let v = item.as_f64().unwrap_or(f64::NAN);
            match v {
                _ if v.is_nan() => "NaN".into(),
                f64::INFINITY => "Infinity".into(),
                f64::NEG_INFINITY => "-Infinity".into(),
                _ => c_format_g(v, 15),
            }
        }
    }
}

/// C's `%#.{digits}g` with the zeros after the decimal point trimmed (the point kept), as
/// `ncdump` prints floats: `2.`, `0.1`, `1.e-05`, `-9999.`.
fn c_format_g(v: f64, digits: usize) -> String {
    let trim = |text: &str| {
        if text.contains('.') {
            text.trim_end_matches('0').to_string()
        } else {
            format!("{text}.")
        }
    };
    let scientific = format!("{:.*e}", digits - 1, v);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= digits as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    } else {
        let decimals = (digits as i32 - 1 - exponent).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    }
}

/// Text in a CDL string literal, escaped as `ncdump` escapes it.
fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A name in CDL, escaped as `ncdump` escapes names so that `ncgen` reads it back:
/// a leading digit and the characters CDL gives a meaning to (space and
/// `` !"#$%&'()*,:;<=>?[\]^`{|}~ ``) get a backslash; an ASCII control character (newline,
/// tab, DEL, ...) becomes `\%xx`, its two hex digits. netCDF holds no name with a control
/// character, a `/`, a trailing space or a first character other than a letter, a digit,
/// `_` or a non-ASCII one; such names are printed as the nearest names it holds, so that
/// every declaration stays one line that `ncgen` accepts: `/` and a trailing space take
/// the `\%xx` form too (which `ncgen` reads as the text `%xx`), and a name that starts
/// with another character, or is empty or `_` (`ncgen`'s fill mark), gets a leading `_`.
fn escape_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let first = name.chars().next();
    if !first.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()) || name == "_"
    {
        out.push('_');
    }
    if name.is_empty() {
        out.push('_');
    }
    let last = name.len().saturating_sub(1);
    for (i, c) in name.char_indices() {
        match c {
            c if c.is_ascii_control() || c == '/' || (c == ' ' && i == last) => {
                out.push_str(&format!("\\%{:02x}", c as u32))
            }
            c if i == 0 && c.is_ascii_digit() => {
                out.push('\\');
                out.push(c);
            }
            ' ' | '!' | '"' | '#' | '$' | '%' | '&' | '\'' | '(' | ')' | '*' | ',' | ':' | ';'
            | '<' | '=' | '>' | '?' | '[' | '\\' | ']' | '^' | '`' | '{' | '|' | '}' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A dimension defined in a group, with the other lengths its name was used with there.
#[derive(Debug, Clone)]
struct Dim {
    name: String,
    len: u64,
    /// (length, variable) for each variable using the name with another length.
    others: Vec<(u64, String)>,
}

/// A variable: an array with its netCDF type and dimensions.
#[derive(Debug)]
struct Var {
    name: String,
    path: String,
    /// The CDL type name (a Zarr name for types netCDF lacks).
    ty: String,
    dtype: String,
    shape: Vec<u64>,
    dims: Vec<String>,
    attrs: Vec<Attr>,
    /// The CF missing value as JSON (null when there is none).
    missing: Value,
    /// How it is stored, with `--special`.
    storage: Option<Storage>,
}

/// How a variable is stored, as `ncdump -s` shows it in virtual attributes (`_Storage`,
/// `_ChunkSizes`, `_Endianness`), and what only Zarr has (shards, codecs).
#[derive(Debug)]
struct Storage {
    /// NCZarr's storage (`chunked`, `scalar`), else `chunked`.
    kind: String,
    /// The chunk shape (inner chunks of a sharded array).
    chunks: Vec<u64>,
    /// The shard shape of a sharded array.
    shards: Option<Vec<u64>>,
    /// The byte order of multi-byte numbers: `little` or `big`.
    endianness: Option<&'static str>,
    /// The codecs as the metadata document states them.
    codecs: Value,
}

impl Storage {
    /// The virtual attributes `ncdump -s` prints.
    fn attrs(&self) -> Vec<Attr> {
        let text = |name: &str, text: &str| Attr {
            name: name.into(),
            ty: NcType::Char,
            items: vec![Item::Text(text.into())],
            json: None,
        };
        let mut attrs = vec![text("_Storage", &self.kind)];
        if !self.chunks.is_empty() {
            attrs.push(Attr {
                name: "_ChunkSizes".into(),
                ty: NcType::Int,
                items: self.chunks.iter().map(|&n| Item::Int(n.into())).collect(),
                json: None,
            });
        }
        if let Some(order) = self.endianness {
            attrs.push(text("_Endianness", order));
        }
        attrs
    }

    /// Comment lines for what netCDF has no attribute for: shards and codecs.
    fn comments(&self, var: &str) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(shards) = &self.shards {
            let shape: Vec<String> = shards.iter().map(u64::to_string).collect();
            lines.push(format!("// {var}:_ShardSizes = {} ;", shape.join(", ")));
        }
        lines.push(format!("// {var}:_Codecs = {} ;", to_compact(&self.codecs)));
        lines
    }

    fn to_json(&self) -> Value {
        json!({
            "storage": self.kind,
            "chunks": self.chunks,
            "shards": self.shards,
            "endianness": self.endianness,
            "codecs": strict_json(&self.codecs),
        })
    }
}

/// A group with what it defines and holds.
#[derive(Debug, Default)]
struct GroupModel {
    name: String,
    path: String,
    format: i32,
    dims: Vec<Dim>,
    vars: Vec<Var>,
    attrs: Vec<Attr>,
    groups: Vec<GroupModel>,
}

/// `zarrtool header`: prints the model of the node's subtree as CDL, or JSON.
pub fn run(node: &NodeArg, as_json: bool, special: bool) -> Result<u8> {
    let store = crate::source::open_hierarchy(&node.store)?.store;
    let path = node.path.trim_matches('/');
    let model = match node_kind(store.as_ref(), path)? {
        NodeKind::None => {
            return Err(Error::NotFound(format!(
                "no array or group at {} in {}",
                display(path),
                node.store
            )))
        }
        NodeKind::Group => read_group(&store, path, &[], special)?,
        NodeKind::Array => {
            // An array alone: the dimensions it uses and its variable.
            let array = Array::open(store.clone(), path, Mode::Read)?;
            let mut var = read_var(&array, special)?;
            if var.name.is_empty() {
                var.name = store_stem(&node.store);
            }
            let mut group = GroupModel {
                path: path.to_string(),
                format: array.format().number(),
                ..GroupModel::default()
            };
            define_dims(&mut group.dims, &[], &var);
            group.vars.push(var);
            group
        }
    };
    let title = match path {
        "" => mask_urls(&node.store),
        _ => format!("{} {}", mask_urls(&node.store), display(path)),
    };
    let mut out = Out::new();
    if as_json {
        let doc = json!({
            "store": mask_urls(&node.store),
            "path": display(path),
            "root": group_json(&model),
        });
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Error::Internal(format!("rendering JSON: {e}")))?;
        out.line(text)?;
    } else {
        out.line(format!("zarr {title} {{"))?;
        print_group(&mut out, &model, 0)?;
        out.line("}")?;
    }
    out.finish()?;
    Ok(0)
}

/// A name for an array at a store's root, which has none: the store's last path part
/// without its extension (`data.zarr` gives `data`), else `data`.
fn store_stem(store: &str) -> String {
    let path = store.split_once("://").map_or(store, |(_, rest)| rest);
    let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let stem = match last.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => last,
    };
    match stem {
        "" => "data".to_string(),
        stem => stem.to_string(),
    }
}

/// Reads the group at `path` and everything below it; `outer` are the dimensions the
/// enclosing groups define.
fn read_group(
    store: &Arc<dyn Store>,
    path: &str,
    outer: &[Dim],
    special: bool,
) -> Result<GroupModel> {
    let group = Group::open(store.clone(), path, Mode::Read)?;
    let attributes = group.attributes()?;
    let entry = match group.format() {
        Format::V2 => group_document(store.as_ref(), path)?
            .and_then(|doc| nczarr::group_entry(&doc, &attributes)),
        _ => None,
    };
    let mut model = GroupModel {
        name: path.rsplit('/').next().unwrap_or(path).to_string(),
        path: path.to_string(),
        format: group.format().number(),
        attrs: node_attrs(&attributes, None),
        ..GroupModel::default()
    };
    let mut members = group.members()?;
    if let Some(entry) = &entry {
        model.dims = entry
            .dims
            .iter()
            .map(|(name, len)| Dim {
                name: name.clone(),
                len: *len,
                others: Vec::new(),
            })
            .collect();
        // NCZarr's creation order first, as netCDF lists them; the others by name.
        let rank = |name: &str| entry.order.iter().position(|n| n == name);
        members.sort_by_key(|(name, _)| rank(name).unwrap_or(usize::MAX));
    }
    let mut subgroups = Vec::new();
    for (name, kind) in members {
        let child = join_key(path, &name);
        match kind {
            NodeKind::Array => {
                let var = read_var(&Array::open(store.clone(), &child, Mode::Read)?, special)?;
                define_dims(&mut model.dims, outer, &var);
                model.vars.push(var);
            }
            _ => subgroups.push(child),
        }
    }
    let mut scope = outer.to_vec();
    scope.extend(model.dims.iter().cloned());
    for child in subgroups {
        model
            .groups
            .push(read_group(store, &child, &scope, special)?);
    }
    Ok(model)
}

/// A v2 group's `.zgroup` document as a JSON object, if there is one.
fn group_document(store: &dyn Store, path: &str) -> Result<Option<Map<String, Value>>> {
    let key = join_key(path, ".zgroup");
    let Some(bytes) = get_document(store, &key)? else {
        return Ok(None);
    };
    let doc = zarr::meta::json::parse(&bytes)
        .map_err(|e| Error::Metadata(format!("{key:?} is not valid JSON: {e}")))?;
    Ok(doc.as_object().cloned())
}

/// Adds to a group's dimensions those `var` uses that neither it nor an enclosing group
/// (`outer`) defines with that length; a name it defines with another length gets the
/// variable's length as a note.
fn define_dims(dims: &mut Vec<Dim>, outer: &[Dim], var: &Var) {
    for (name, &len) in var.dims.iter().zip(&var.shape) {
        if let Some(dim) = dims.iter_mut().find(|d| &d.name == name) {
            if dim.len != len && !dim.others.iter().any(|(l, _)| *l == len) {
                dim.others.push((len, var.name.clone()));
            }
            continue;
        }
        // The innermost enclosing definition is the one the name refers to.
        let seen = outer.iter().rev().find(|d| &d.name == name);
        if seen.is_none_or(|d| d.len != len) {
            dims.push(Dim {
                name: name.clone(),
                len,
                others: Vec::new(),
            });
        }
    }
}

/// The attributes netCDF shows of a node: without NCZarr's keys, `_ARRAY_DIMENSIONS` and
/// `_NCProperties`, typed by NCZarr's record or by inference; `fill` is a variable's
/// `_FillValue` (its CF missing value in the variable's type), in the attribute's place or
/// last.
fn node_attrs(attributes: &Map<String, Value>, fill: Option<&Attr>) -> Vec<Attr> {
    let types = nczarr::attribute_types(attributes);
    let mut out = Vec::new();
    let mut fill_placed = false;
    for (name, value) in attributes {
        if nczarr::is_internal(name) || name == DIMENSIONS_KEY || name == PROVENANCE {
            continue;
        }
        if name == cf::FILL_ATTRIBUTE {
            if let Some(fill) = fill {
                out.push(fill.clone());
                fill_placed = true;
            }
            continue;
        }
        let declared = types
            .and_then(|t| t.get(name))
            .and_then(Value::as_str)
            .and_then(NcType::from_numpy);
        out.push(Attr::new(name, value, declared));
    }
    if let (Some(fill), false) = (fill, fill_placed) {
        out.push(fill.clone());
    }
    out
}

/// The variable an array is (with how it is stored when `special`).
fn read_var(array: &Array, special: bool) -> Result<Var> {
    let meta = array.metadata();
    let attributes = array.attributes()?;
    let doc = match array.format() {
        Format::V2 => document(array)?,
        _ if special => document(array)?,
        _ => Value::Null,
    };
    let storage = special.then(|| storage(array, &doc, &attributes));
    let doc = doc.as_object().cloned().unwrap_or_default();
    let nczarr_names = nczarr::dimension_names(&doc, &attributes);
    let is_nczarr = nczarr_names.is_some();
    let (ty, string_len) = var_type(&meta.dtype, is_nczarr);
    let mut shape = meta.shape.clone();
    let mut dims: Vec<String> = match nczarr_names {
        // NCZarr keeps a scalar as shape [1] without dimensions.
        Some(names) if names.is_empty() && shape == [1] => {
            shape.clear();
            names
        }
        Some(names) if names.len() == shape.len() => names,
        _ => match array.dimension_names()? {
            Some(names) => names
                .into_iter()
                .zip(&shape)
                // netCDF has no empty names: an empty one is no name.
                .map(|(n, len)| {
                    n.filter(|n| !n.is_empty())
                        .unwrap_or_else(|| anonymous(*len))
                })
                .collect(),
            None => shape.iter().map(|len| anonymous(*len)).collect(),
        },
    };
    if let Some(n) = string_len {
        // Fixed byte strings are characters along one more dimension, as xarray writes them
        // to netCDF.
        dims.push(format!("string{n}"));
        shape.push(n as u64);
    }
    let missing = missing_value(array, &attributes)?;
    // NCZarr's fill value without a `_FillValue` attribute is netCDF's default fill, which
    // netCDF does not show as an attribute.
    let shows_fill = !is_nczarr || attributes.contains_key(cf::FILL_ATTRIBUTE);
    let fill = match (&missing, nc_type(&meta.dtype, is_nczarr)) {
        (m, Some(t)) if shows_fill && !m.is_null() => Item::of(m).map(|item| Attr {
            name: cf::FILL_ATTRIBUTE.into(),
            ty: t,
            items: vec![match item {
                Item::Text(s) => Item::Float(s.parse().unwrap_or(f64::NAN)),
                other => other,
            }],
            json: None,
        }),
        _ => None,
    };
    let name = array.path().rsplit('/').next().unwrap_or("").to_string();
    Ok(Var {
        attrs: node_attrs(&attributes, fill.as_ref()),
        name,
        path: display(array.path()),
        ty,
        dtype: meta.dtype.to_v2(),
        shape,
        dims,
        missing,
        storage,
    })
}

/// How an array is stored (`doc`: its metadata document).
fn storage(array: &Array, doc: &Value, attributes: &Map<String, Value>) -> Storage {
    let meta = array.metadata();
    let empty = Map::new();
    let nczarr_kind = nczarr::entry(doc.as_object().unwrap_or(&empty), "array")
        .or_else(|| nczarr::entry(attributes, "array"))
        .and_then(|a| a.get("storage"))
        .and_then(Value::as_str)
        .map(String::from);
    let numeric = matches!(
        meta.dtype.kind,
        DataKind::Int(_) | DataKind::UInt(_) | DataKind::Float(_) | DataKind::Complex(_)
    );
    let endianness = match meta.dtype.order {
        ByteOrder::Little if numeric && meta.item_size() > 1 => Some("little"),
        ByteOrder::Big if numeric && meta.item_size() > 1 => Some("big"),
        _ => None,
    };
    Storage {
        kind: nczarr_kind.unwrap_or_else(|| "chunked".into()),
        chunks: meta.inner_chunks().to_vec(),
        shards: meta.sharding().map(|_| meta.chunks.clone()),
        endianness,
        codecs: codecs(array.format(), doc),
    }
}

/// netCDF-C's name for a dimension without one.
fn anonymous(len: u64) -> String {
    format!("_zdim_{len}")
}

/// The netCDF type of a Zarr type, if netCDF has one (NCZarr keeps `char` as `<U1`).
fn nc_type(dtype: &DType, nczarr: bool) -> Option<NcType> {
    Some(match dtype.kind {
        DataKind::Int(1) => NcType::Byte,
        DataKind::Int(2) => NcType::Short,
        DataKind::Int(4) => NcType::Int,
        DataKind::Int(8) => NcType::Int64,
        DataKind::UInt(1) => NcType::UByte,
        DataKind::UInt(2) => NcType::UShort,
        DataKind::UInt(4) => NcType::UInt,
        DataKind::UInt(8) => NcType::UInt64,
        DataKind::Float(4) => NcType::Float,
        DataKind::Float(8) => NcType::Double,
        DataKind::FixedBytes(_) => NcType::Char,
        DataKind::Unicode(1) if nczarr => NcType::Char,
        DataKind::Unicode(_) | DataKind::String => NcType::String,
        _ => return None,
    })
}

/// A variable's CDL type name (the Zarr v3 name of types netCDF lacks) and, for byte
/// strings longer than one, their length (an extra dimension of characters).
fn var_type(dtype: &DType, nczarr: bool) -> (String, Option<usize>) {
    let string_len = match dtype.kind {
        DataKind::FixedBytes(n) if n > 1 => Some(n),
        _ => None,
    };
    let name = match nc_type(dtype, nczarr) {
        Some(t) => t.name().to_string(),
        None => match zarr::dtype::v3::to_json(&dtype.kind) {
            Ok(Value::String(name)) => name,
            Ok(Value::Object(o)) => o
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| dtype.to_v2(), String::from),
            _ => dtype.to_v2(),
        },
    };
    (name, string_len)
}

/// Prints a group's contents at nesting `level` (the root's is 0), as `ncdump -h` does.
fn print_group(out: &mut Out, group: &GroupModel, level: usize) -> Result<()> {
    let pad = "  ".repeat(level);
    if !group.dims.is_empty() {
        out.line(format!("{pad}dimensions:"))?;
        for dim in &group.dims {
            let mut line = format!("{pad}\t{} = {} ;", escape_name(&dim.name), dim.len);
            if !dim.others.is_empty() {
                let others: Vec<String> = dim
                    .others
                    .iter()
                    .map(|(len, var)| format!("{len} in {}", escape_name(var)))
                    .collect();
                line.push_str(&format!(" // also {}", others.join(", ")));
            }
            out.line(line)?;
        }
    }
    if !group.vars.is_empty() {
        out.line(format!("{pad}variables:"))?;
        for var in &group.vars {
            let name = escape_name(&var.name);
            let dims = match var.dims.is_empty() {
                true => String::new(),
                false => {
                    let names: Vec<String> = var.dims.iter().map(|d| escape_name(d)).collect();
                    format!("({})", names.join(", "))
                }
            };
            out.line(format!("{pad}\t{} {name}{dims} ;", var.ty))?;
            for attr in &var.attrs {
                print_attr(out, &pad, &name, attr)?;
            }
            if let Some(storage) = &var.storage {
                for attr in storage.attrs() {
                    print_attr(out, &pad, &name, &attr)?;
                }
                for comment in storage.comments(&name) {
                    out.line(format!("{pad}\t\t{comment}"))?;
                }
            }
        }
    }
    if !group.attrs.is_empty() {
        out.line("")?;
        let what = if level == 0 { "global" } else { "group" };
        out.line(format!("{pad}// {what} attributes:"))?;
        for attr in &group.attrs {
            print_attr(out, &pad, "", attr)?;
        }
    }
    for sub in &group.groups {
        let name = escape_name(&sub.name);
        out.line("")?;
        out.line(format!("{pad}group: {name} {{"))?;
        print_group(out, sub, level + 1)?;
        out.line(format!("{pad}  }} // group {name}"))?;
    }
    Ok(())
}

fn print_attr(out: &mut Out, pad: &str, var: &str, attr: &Attr) -> Result<()> {
    let prefix = if attr.ty == NcType::String {
        "string "
    } else {
        ""
    };
    out.line(format!(
        "{pad}\t\t{prefix}{var}:{} = {} ;",
        escape_name(&attr.name),
        attr.cdl_values()
    ))
}

/// A group's model as JSON.
fn group_json(group: &GroupModel) -> Value {
    let dims: Vec<Value> = group
        .dims
        .iter()
        .map(|d| {
            let mut dim = json!({"name": d.name, "length": d.len});
            if !d.others.is_empty() {
                let others: Vec<Value> = d
                    .others
                    .iter()
                    .map(|(len, var)| json!({"length": len, "variable": var}))
                    .collect();
                dim["other_lengths"] = Value::Array(others);
            }
            dim
        })
        .collect();
    let vars: Vec<Value> = group
        .vars
        .iter()
        .map(|v| {
            let mut var = json!({
                "name": v.name,
                "path": v.path,
                "type": v.ty,
                "dtype": v.dtype,
                "shape": v.shape,
                "dimensions": v.dims,
                "missing_value": v.missing,
                "attributes": v.attrs.iter().map(Attr::to_json).collect::<Vec<_>>(),
            });
            if let Some(storage) = &v.storage {
                var["storage"] = storage.to_json();
            }
            var
        })
        .collect();
    json!({
        "name": group.name,
        "path": display(&group.path),
        "zarr_format": group.format,
        "dimensions": dims,
        "variables": vars,
        "attributes": group.attrs.iter().map(Attr::to_json).collect::<Vec<_>>(),
        "groups": group.groups.iter().map(group_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_ncdump_prints_them() {
        let cases = [
            (2.0, 15, "2."),
            (1e-5, 15, "1.e-05"),
            (1e300, 15, "1.e+300"),
            (std::f64::consts::PI, 15, "3.14159265358979"),
            (0.1, 15, "0.1"),
            (-9999.0, 7, "-9999."),
            (0.1f32 as f64, 7, "0.1"),
            (1.5e-10f32 as f64, 7, "1.5e-10"),
            (123456789.0, 7, "1.234568e+08"),
            (0.0001, 7, "0.0001"),
            (0.0, 15, "0."),
        ];
        for (v, digits, want) in cases {
            assert_eq!(c_format_g(v, digits), want, "{v}");
        }
    }

    #[test]
    fn attributes_are_typed_as_netcdf_types_them() {
        let cases = [
            (json!("K"), None, "char", "\"K\""),
            (json!(200), None, "ubyte", "200UB"),
            (json!(-300), None, "short", "-300s"),
            (json!(70000), None, "int", "70000"),
            (json!(3000000000u64), None, "uint", "3000000000U"),
            (json!(9999999999u64), None, "int64", "9999999999LL"),
            (json!(u64::MAX), None, "uint64", "18446744073709551615ULL"),
            (json!([1, -1, 200]), None, "short", "1s, -1s, 200s"),
            (json!([1.5, 2]), None, "double", "1.5, 2."),
            (json!(true), None, "ubyte", "1UB"),
            (json!([false, true]), None, "ubyte", "0UB, 1UB"),
            (json!(["a", "b\"c"]), None, "string", "\"a\", \"b\\\"c\""),
            (
                json!({"a": [1, 2], "b": null}),
                None,
                "char",
                "\"{\\\"a\\\": [1,2], \\\"b\\\": null}\"",
            ),
            (json!(null), None, "char", "\"null\""),
            (json!([]), None, "char", "\"[]\""),
            (json!([1, "a"]), None, "char", "\"[1,\\\"a\\\"]\""),
            (json!(-9999), Some(NcType::Float), "float", "-9999.f"),
            (json!([0, 400]), Some(NcType::Float), "float", "0.f, 400.f"),
            (json!(1), Some(NcType::Short), "short", "1s"),
            // A record that does not fit the value is not believed.
            (json!("x"), Some(NcType::Int), "char", "\"x\""),
            (json!(1.5), Some(NcType::Int), "double", "1.5"),
        ];
        for (value, declared, ty, text) in cases {
            let attr = Attr::new("a", &value, declared);
            assert_eq!(
                (attr.ty.name(), attr.cdl_values().as_str()),
                (ty, text),
                "{value}"
            );
        }
        let nan = zarr::meta::json::parse_str("[NaN, -Infinity]").unwrap();
        let attr = Attr::new("a", &nan, Some(NcType::Float));
        assert_eq!(attr.cdl_values(), "NaNf, -Infinityf");
        assert_eq!(attr.to_json()["value"], json!(["NaN", "-Infinity"]));
    }

    #[test]
    fn a_root_array_is_named_after_its_store() {
        for (store, name) in [
            ("data.zarr", "data"),
            ("/tmp/x/t2m.zarr/", "t2m"),
            ("zip://a/b.zip", "b"),
            ("s3://bucket/path/v1", "v1"),
            ("memory://", "data"),
            (".zarr", ".zarr"),
        ] {
            assert_eq!(store_stem(store), name, "{store}");
        }
    }

    #[test]
    fn text_and_names_are_escaped() {
        assert_eq!(
            escape_text("a\"b\\c\n\t'\u{1}é"),
            "a\\\"b\\\\c\\n\\t\\'\\001é"
        );
        assert_eq!(escape_name("t2m"), "t2m");
        assert_eq!(escape_name("my var"), "my\\ var");
        assert_eq!(escape_name("2x"), "\\2x");
        assert_eq!(escape_name("_x.y-z"), "_x.y-z");
        assert_eq!(escape_name("a\nb\tc\u{7f}"), "a\\%0ab\\%09c\\%7f");
        assert_eq!(escape_name("a/b"), "a\\%2fb");
        assert_eq!(escape_name(" x "), "_\\ x\\%20");
        assert_eq!(escape_name("\"q\\%"), "_\\\"q\\\\\\%");
        assert_eq!(escape_name("-x"), "_-x");
        assert_eq!(escape_name(""), "__");
        assert_eq!(escape_name("_"), "__");
        assert_eq!(escape_name("été ✓"), "été\\ ✓");
    }
}
