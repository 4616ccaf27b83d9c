//! The 2022 draft of Zarr v3 (editor's draft of 25 May 2022): an entry point `zarr.json`
//! at the store root, node documents under `meta/` (`meta/a/b.array.json`,
//! `meta/a.group.json`, the root's `meta/array.json` or `meta/group.json`), chunks under
//! `data/` (`data/a/b/c0/1`), groups implied by their descendants. zarr-python 2.18's
//! experimental v3 writes a variant of it: a `root` segment (`meta/root/a/b.array.json`,
//! `meta/root.group.json`, `data/root/a/b/c0/1`), its own `zarr_format` URI, and one
//! `compressor` instead of a `codecs` list. Both are read; each is written on request.

use super::fill;
use super::{doc, json, v3, ArrayMeta, ChunkGrid, KeyEncoding, Order, V2Fields};
use crate::codec;
use crate::codec::chain::Chain;
use crate::codec::filter;
use crate::dtype::{ByteOrder, DType, DataKind};
use crate::error::{Error, Result};
use crate::store::node_prefix;
use serde_json::{json, Map, Value};

/// The entry point document's key, at the store root.
pub const ENTRY_KEY: &str = "zarr.json";

/// The draft's `zarr_format` URI.
pub const SEED_URI: &str = "https://purl.org/zarr/spec/core/3.0";

/// zarr-python 2.18's `zarr_format` URI.
pub const ZARR_PYTHON_URI: &str = "https://purl.org/zarr/spec/protocol/core/3.0";

/// Codec URIs of the draft (`…/codecs/gzip/1.0`) and of zarr-python 2.18 (`…/codec/…`).
const SEED_CODEC_URI: &str = "https://purl.org/zarr/spec/codecs/";
const ZARR_PYTHON_CODEC_URI: &str = "https://purl.org/zarr/spec/codec/";

/// `root/path`, or `root` for the root node's empty path.
fn join_path(root: &str, path: &str) -> String {
    if path.is_empty() {
        root.to_string()
    } else {
        format!("{root}/{path}")
    }
}

/// The key scheme (and document dialect) of a 2022-draft hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// The draft as published: `meta/…`, `data/…`, a `codecs` list.
    Draft,
    /// zarr-python 2.18's variant: `meta/root/…`, `data/root/…`, one `compressor`.
    ZarrPython,
}

/// What a draft metadata document describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An array (`.array.json`).
    Array,
    /// A group (`.group.json`).
    Group,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Array => "array.json",
            Kind::Group => "group.json",
        }
    }
}

impl Scheme {
    /// The prefix of metadata documents (`meta`, `meta/root`).
    fn meta_root(self) -> &'static str {
        match self {
            Scheme::Draft => "meta",
            Scheme::ZarrPython => "meta/root",
        }
    }

    /// The key of the document of the node of `kind` at `path`.
    pub fn doc_key(self, path: &str, kind: Kind) -> String {
        match (self, path.is_empty()) {
            (Scheme::Draft, true) => format!("meta/{}", kind.suffix()),
            (Scheme::ZarrPython, true) => format!("meta/root.{}", kind.suffix()),
            (_, false) => format!("{}/{path}.{}", self.meta_root(), kind.suffix()),
        }
    }

    /// The listing prefix of the documents below the node at `path` (`meta/root/a/`).
    pub fn meta_dir(self, path: &str) -> String {
        node_prefix(&join_path(self.meta_root(), path))
    }

    /// The chunk key encoding of arrays in this scheme with `separator`: `c0/1`; a 0-d
    /// array's chunk is `c` by the draft's rule (the empty index), `c0` as zarr-python
    /// 2.18 writes it (its chunk coordinates of a 0-d array are `(0,)`).
    pub fn key_encoding(self, separator: char) -> KeyEncoding {
        KeyEncoding::draft(separator, self == Scheme::ZarrPython)
    }

    /// The key chunk keys of the array at `path` are joined to (`data/a`, `data/root/a`).
    pub fn data_base(self, path: &str) -> String {
        let root = match self {
            Scheme::Draft => "data",
            Scheme::ZarrPython => "data/root",
        };
        join_path(root, path)
    }

    /// The entry point document of this scheme.
    pub fn entry_point(self) -> Vec<u8> {
        let doc = match self {
            Scheme::Draft => json!({
                "zarr_format": SEED_URI,
                "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
                "extensions": [],
            }),
            Scheme::ZarrPython => json!({
                "extensions": [],
                "metadata_encoding": ZARR_PYTHON_URI,
                "metadata_key_suffix": ".json",
                "zarr_format": ZARR_PYTHON_URI,
            }),
        };
        json::to_pretty(&doc)
    }
}

/// The scheme a root `zarr.json` names, `None` when it is not a draft entry point (a
/// Zarr v3.0 document says `"zarr_format": 3`). Unknown URIs and must-understand
/// extensions are errors.
pub fn detect(bytes: &[u8]) -> Result<Option<Scheme>> {
    let Ok(doc) = json::parse(bytes) else {
        return Ok(None);
    };
    let Some(uri) = doc.get("zarr_format").and_then(Value::as_str) else {
        return Ok(None);
    };
    let scheme = match uri {
        SEED_URI => Scheme::Draft,
        ZARR_PYTHON_URI => Scheme::ZarrPython,
        _ => {
            return Err(Error::Unsupported(format!(
                "zarr.json: zarr_format {uri:?} is not a Zarr version libzarr reads"
            )))
        }
    };
    if let Some(suffix) = doc
        .get("metadata_key_suffix")
        .or_else(|| doc.pointer("/metadata_encoding/metadata_key_suffix"))
        .and_then(Value::as_str)
    {
        if suffix != ".json" {
            return Err(Error::Unsupported(format!(
                "zarr.json: metadata key suffix {suffix:?} is not supported (only \".json\")"
            )));
        }
    }
    check_extensions(doc.get("extensions"), "zarr.json")?;
    Ok(Some(scheme))
}

/// Refuses extensions that must be understood (libzarr understands none).
fn check_extensions(value: Option<&Value>, what: &str) -> Result<()> {
    let Some(value) = value else { return Ok(()) };
    let list = value
        .as_array()
        .ok_or_else(|| Error::Metadata(format!("{what}: \"extensions\" must be a list")))?;
    if let Some(ext) = list
        .iter()
        .find(|e| e.get("must_understand") != Some(&Value::Bool(false)))
    {
        return Err(Error::Unsupported(format!(
            "{what}: extension {ext} must be understood, and libzarr does not know it"
        )));
    }
    Ok(())
}

fn bad(key: &str, what: &str) -> Error {
    Error::Metadata(format!("{key:?} must be {what}"))
}

fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>> {
    match json::parse(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Error::Metadata("the document is not a JSON object".into())),
        Err(e) => Err(Error::Metadata(format!("not valid JSON: {e}"))),
    }
}

/// The attributes of a draft array or group document.
pub fn parse_attributes(bytes: &[u8]) -> Result<Map<String, Value>> {
    let obj = parse_object(bytes)?;
    match obj.get("attributes") {
        None => Ok(Map::new()),
        Some(Value::Object(map)) => {
            let mut map = map.clone();
            // An array's filters, kept among its attributes by zarr-python 2.18, are
            // metadata: the chain, not the user's attributes.
            if obj.contains_key("data_type") && codec_filters(map.get(FILTERS)).is_some() {
                map.shift_remove(FILTERS);
            }
            Ok(map)
        }
        Some(_) => Err(bad("attributes", "an object")),
    }
}

/// The attribute zarr-python 2.18's draft arrays keep their filters in (the object codec
/// of a variable-length type first), as it has no field of its own for them.
const FILTERS: &str = "filters";

/// `value` as a list of numcodecs configurations (`{"id": …}` objects), if it is one.
fn codec_filters(value: Option<&Value>) -> Option<&Vec<Value>> {
    value.and_then(Value::as_array).filter(|list| {
        list.iter()
            .all(|c| c.get("id").and_then(Value::as_str).is_some())
    })
}

/// Checks a group document: an object whose only names are `attributes` and
/// `extensions` (not understood ones refused).
pub fn parse_group(bytes: &[u8]) -> Result<Map<String, Value>> {
    let obj = parse_object(bytes)?;
    if let Some(key) = obj
        .keys()
        .find(|k| !["attributes", "extensions"].contains(&k.as_str()))
    {
        return Err(Error::Unsupported(format!(
            "group document has the field {key:?}, which libzarr does not understand"
        )));
    }
    check_extensions(obj.get("extensions"), "group document")?;
    parse_attributes(bytes)
}

/// Renders a group document.
pub fn render_group(attributes: &Map<String, Value>) -> Vec<u8> {
    json::to_pretty(&json!({ "attributes": attributes }))
}

const ARRAY_FIELDS: [&str; 12] = [
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_memory_layout",
    "fill_value",
    "extensions",
    "attributes",
    "codecs",
    "compressor",
    "storage_transformers",
    "dimension_separator",
    "dimension_names",
];

/// Parses an array document of either scheme (a `codecs` list or a `compressor`), found in
/// a hierarchy of `scheme` (which decides the key of a 0-d array's chunk).
pub fn parse_array(bytes: &[u8], scheme: Scheme) -> Result<ArrayMeta> {
    let obj = parse_object(bytes)?;
    if let Some(key) = obj.keys().find(|k| !ARRAY_FIELDS.contains(&k.as_str())) {
        return Err(Error::Unsupported(format!(
            "array document has the field {key:?}, which libzarr does not understand"
        )));
    }
    let field = |key: &str| {
        obj.get(key)
            .ok_or_else(|| Error::Metadata(format!("missing required key {key:?}")))
    };
    check_extensions(obj.get("extensions"), "array document")?;
    if obj
        .get("storage_transformers")
        .is_some_and(|t| t.as_array().is_none_or(|t| !t.is_empty()))
    {
        return Err(Error::Unsupported(
            "storage transformers are not supported".into(),
        ));
    }
    let shape = doc::u64_list(field("shape")?)
        .ok_or_else(|| bad("shape", "a list of non-negative integers"))?;
    let mut filter_list: &[Value] = obj
        .get("attributes")
        .and_then(|a| codec_filters(a.get(FILTERS)))
        .map_or(&[], Vec::as_slice);
    let mut object_codec = None;
    let dtype = match parse_data_type(field("data_type")?)? {
        Some(dtype) => dtype,
        // "|O": the object codec, first of the filters, says what the items are.
        None => {
            let (first, rest) = filter_list.split_first().ok_or_else(|| {
                bad(
                    "attributes.filters",
                    "a list starting with vlen-utf8, vlen-bytes or vlen-array for data type \"|O\"",
                )
            })?;
            filter_list = rest;
            object_codec = Some(first);
            crate::dtype::object_dtype(first)?
        }
    };
    if dtype.is_variable() && !filter_list.is_empty() {
        return Err(Error::CodecUnsupported(
            "filters after the object codec of a variable-length array are not supported".into(),
        ));
    }
    let filters = filter::chain_from_json(
        &Value::Array(filter_list.to_vec()),
        &dtype,
        filter::Forms::Numcodecs,
    )?;
    let grid = field("chunk_grid")?;
    if grid.get("type").and_then(Value::as_str) != Some("regular") {
        return Err(Error::Unsupported(format!(
            "chunk grid {grid} is not supported (only \"regular\")"
        )));
    }
    let chunks = grid
        .get("chunk_shape")
        .and_then(doc::u64_list)
        .ok_or_else(|| bad("chunk_grid", "regular with a chunk_shape"))?;
    let separator = match grid.get("separator").and_then(Value::as_str) {
        None | Some("/") => '/',
        Some(".") => '.',
        Some(_) => return Err(bad("chunk_grid separator", "\"/\" or \".\"")),
    };
    let order = match field("chunk_memory_layout")?.as_str() {
        Some("C") => Order::C,
        Some("F") => Order::F,
        _ => return Err(bad("chunk_memory_layout", "\"C\" or \"F\"")),
    };
    // The compressor receives what the last filter produces.
    let item_size = match filters.1.is_empty() {
        true => filter::output_dtype(&filters.0, &dtype).item_size(),
        false => 1,
    };
    let mut configs = Vec::new();
    match obj.get("codecs") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => configs.extend(list.iter().cloned()),
        Some(_) => return Err(bad("codecs", "a list of codec objects")),
    }
    match obj.get("compressor") {
        None | Some(Value::Null) => {}
        Some(c) => configs.push(c.clone()),
    }
    let compressors = configs
        .iter()
        .map(|c| codec::from_config(&numcodecs_config(c)?, item_size))
        .collect::<Result<Vec<_>>>()?;
    let fill_value = match field("fill_value")? {
        Value::Null => None,
        // zarr-python 2.18 writes its default 0 for variable-length items: no fill value.
        Value::Number(n) if dtype.is_variable() && n.as_u64() == Some(0) => None,
        Value::String(s) if s == "+Infinity" => v3::parse_fill(&json!("Infinity"), &dtype)?,
        value => v3::parse_fill(value, &dtype)?,
    };
    let dimension_names = match obj.get("dimension_names") {
        None | Some(Value::Null) => None,
        Some(Value::Array(names)) => Some(
            names
                .iter()
                .map(|n| n.as_str().map(str::to_string))
                .collect(),
        ),
        Some(_) => return Err(bad("dimension_names", "a list")),
    };
    let codecs = Chain::from_v2(order.transpose(shape.len()), filters, compressors, &dtype)
        .with_object_codec(object_codec);
    let meta = ArrayMeta {
        shape,
        chunks,
        grid: ChunkGrid::Regular,
        dtype,
        codecs,
        fill_value,
        key_encoding: scheme.key_encoding(separator),
        dimension_names,
    };
    meta.validate()?;
    Ok(meta)
}

/// A codec object of either scheme (`{"type"|"codec": URI, "configuration": …}`) as a
/// numcodecs configuration.
fn numcodecs_config(value: &Value) -> Result<Map<String, Value>> {
    let uri = value
        .get("codec")
        .or_else(|| value.get("type"))
        .and_then(Value::as_str)
        .ok_or_else(|| bad("codecs", "objects naming their codec by URI"))?;
    let id = uri
        .strip_prefix(SEED_CODEC_URI)
        .or_else(|| uri.strip_prefix(ZARR_PYTHON_CODEC_URI))
        .and_then(|rest| rest.split('/').next())
        .filter(|id| !id.is_empty())
        .ok_or_else(|| Error::CodecUnsupported(format!("codec {uri:?} is not supported")))?;
    let mut config = match value.get("configuration") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(bad("codec configuration", "an object")),
    };
    config.insert("id".into(), id.into());
    Ok(config)
}

/// Reads a data type: the draft's names (`"int32"`, little-endian), numpy type strings
/// (`"<i4"`, `">f8"`, zarr-python 2.18's `"bool"`, `"i1"`, `"u1"`), or an extension
/// object (`{"extension": …, "type": …}`) through its `type` (a numpy type string, or a
/// structured type's field list) or `fallback`. `None` for the object type `"|O"`, whose
/// items the object codec among the filters describes.
fn parse_data_type(value: &Value) -> Result<Option<DType>> {
    let name = match value {
        Value::String(s) => s.as_str(),
        Value::Object(obj) => match obj.get("type") {
            Some(Value::String(s)) => s.as_str(),
            Some(fields @ Value::Array(_)) => return DType::parse_v2_json(fields).map(Some),
            _ => return Err(bad("data_type", "a string or an extension with a type")),
        },
        _ => return Err(bad("data_type", "a string")),
    };
    if name == "|O" {
        return Ok(None);
    }
    if let Ok(kind) = crate::dtype::v3_kind(name) {
        let order = if DType::new(kind.clone(), ByteOrder::Little).item_size() == 1 {
            ByteOrder::NotApplicable
        } else {
            ByteOrder::Little
        };
        return Ok(Some(DType::new(kind, order)));
    }
    match name {
        "i1" => return Ok(Some(DType::new(DataKind::Int(1), ByteOrder::NotApplicable))),
        "u1" => {
            return Ok(Some(DType::new(
                DataKind::UInt(1),
                ByteOrder::NotApplicable,
            )))
        }
        _ => {}
    }
    DType::parse_v2(name).map(Some).or_else(|e| {
        match value.get("fallback").filter(|f| !f.is_null()) {
            Some(fallback) => {
                let first = fallback
                    .as_array()
                    .and_then(|l| l.first())
                    .unwrap_or(fallback);
                parse_data_type(first)
            }
            None => Err(match e {
                Error::Metadata(_) => Error::Unsupported(format!(
                    "data type {name:?} is not supported by this version of libzarr"
                )),
                other => other,
            }),
        }
    })
}

fn render_data_type(dtype: &DType, scheme: Scheme) -> Result<Value> {
    let one_byte = dtype.item_size() == 1 && !dtype.is_variable();
    // zarr-python 2.18 names types beyond the core ones by an extension object.
    let extension =
        |uri: &str, kind: Value| json!({"extension": uri, "fallback": null, "type": kind});
    Ok(match scheme {
        Scheme::Draft if dtype.order != ByteOrder::Big || one_byte => {
            match v3::data_type_json(&dtype.kind)? {
                Value::String(name) => name.into(),
                _ => {
                    return Err(Error::Unsupported(format!(
                        "data type {} has no name in the 2022 draft layout",
                        dtype.to_v2()
                    )))
                }
            }
        }
        Scheme::Draft => dtype.to_v2().into(),
        Scheme::ZarrPython => match &dtype.kind {
            DataKind::Bool => "bool".into(),
            DataKind::Int(1) => "i1".into(),
            DataKind::UInt(1) => "u1".into(),
            DataKind::Structured(_) => {
                extension("TODO: structured array protocol URL", dtype.to_v2_json())
            }
            DataKind::String | DataKind::VlenBytes | DataKind::VlenArray(_) => {
                extension("TODO: object array protocol URL", "|O".into())
            }
            DataKind::Complex(_) => extension(ZARR_PYTHON_COMPLEX_URI, dtype.to_v2().into()),
            DataKind::FixedBytes(_) => {
                extension("TODO: bytestring array protocol URL", dtype.to_v2().into())
            }
            DataKind::Unicode(_) => {
                extension("TODO: unicode array protocol URL", dtype.to_v2().into())
            }
            DataKind::Raw(_) => {
                extension("TODO: structured array protocol URL", dtype.to_v2().into())
            }
            DataKind::DateTime(_) | DataKind::TimeDelta(_) => {
                extension(ZARR_PYTHON_DATETIME_URI, dtype.to_v2().into())
            }
            _ => dtype.to_v2().into(),
        },
    })
}

/// The extension URIs zarr-python 2.18 names complex and time types by.
const ZARR_PYTHON_COMPLEX_URI: &str = "https://zarr-specs.readthedocs.io/en/core-protocol-v3.0-dev/protocol/extensions/complex-dtypes/v1.0.html";
const ZARR_PYTHON_DATETIME_URI: &str =
    "https://zarr-specs.readthedocs.io/en/latest/extensions/data-types/datetime/v1.0.html";

/// Renders an array document in `scheme` with `attributes`.
pub fn render_array(
    meta: &ArrayMeta,
    attributes: &Map<String, Value>,
    scheme: Scheme,
) -> Result<Vec<u8>> {
    let fields = V2Fields::of(meta, "The 2022 draft")?;
    // zarr-python 2.18 keeps filters (the object codec of variable-length items first)
    // among the attributes, and one compressor; the draft's own scheme has a codec list
    // and no filters.
    let mut attributes = attributes.clone();
    let bytes_codecs = match scheme {
        Scheme::Draft if !fields.array_filters.is_empty() || meta.dtype.is_variable() => {
            return Err(Error::Unsupported(
                "the 2022 draft's own layout is written without filters or variable-length \
                 items (zarr-python 2.18's variant, format 31, holds them)"
                    .into(),
            ))
        }
        Scheme::Draft => fields.bytes.to_vec(),
        Scheme::ZarrPython => {
            let (filters, compressor) =
                fields.filters_and_compressor("zarr-python 2.18's draft layout")?;
            let filters: Vec<Value> = meta
                .codecs
                .object_codec(&meta.dtype)
                .into_iter()
                .chain(filters.into_iter().map(Value::Object))
                .collect();
            if attributes.contains_key(FILTERS) {
                return Err(Error::InvalidArg(format!(
                    "attribute {FILTERS:?}: zarr-python 2.18's draft layout keeps an array's \
                     filters there"
                )));
            }
            if !filters.is_empty() {
                attributes.insert(FILTERS.into(), filters.into());
            }
            compressor.into_iter().cloned().collect()
        }
    };
    let separator = meta.key_encoding.separator.to_string();
    let mut doc = Map::new();
    doc.insert("shape".into(), meta.shape.clone().into());
    doc.insert("data_type".into(), render_data_type(&meta.dtype, scheme)?);
    doc.insert(
        "chunk_grid".into(),
        json!({"type": "regular", "chunk_shape": meta.chunks, "separator": separator}),
    );
    doc.insert(
        "chunk_memory_layout".into(),
        match fields.order {
            Order::C => "C",
            Order::F => "F",
        }
        .into(),
    );
    let fill = match &meta.fill_value {
        Some(bytes) => fill::render_item(bytes, &meta.dtype)?,
        None => fill::render_item(
            &crate::error::try_zeroed(meta.item_size(), "the fill value")?,
            &meta.dtype,
        )?,
    };
    let fill = match (scheme, fill) {
        (Scheme::Draft, Value::String(s)) if s == "Infinity" => Value::from("+Infinity"),
        // zarr-python 2.18 reads an object array's fill value through its object codec;
        // null (none) is what it reads for every one.
        _ if meta.dtype.is_variable() => Value::Null,
        (_, fill) => fill,
    };
    doc.insert("fill_value".into(), fill);
    doc.insert("extensions".into(), json!([]));
    doc.insert("attributes".into(), Value::Object(attributes));
    let codec_uri = |id: &str| match scheme {
        Scheme::Draft => format!("{SEED_CODEC_URI}{id}/1.0"),
        Scheme::ZarrPython => format!("{ZARR_PYTHON_CODEC_URI}{id}/1.0"),
    };
    let codecs: Vec<Value> = bytes_codecs
        .iter()
        .map(|c| {
            let mut config = c.config();
            let id = config
                .shift_remove("id")
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            match scheme {
                Scheme::Draft => json!({"type": codec_uri(&id), "configuration": config}),
                Scheme::ZarrPython => json!({"codec": codec_uri(&id), "configuration": config}),
            }
        })
        .collect();
    match scheme {
        Scheme::Draft => {
            doc.insert("codecs".into(), codecs.into());
        }
        Scheme::ZarrPython => {
            match codecs.as_slice() {
                [] => {}
                [one] => {
                    doc.insert("compressor".into(), one.clone());
                }
                _ => return Err(Error::Unsupported(
                    "zarr-python 2.18's draft layout holds one compressor; this array has a chain"
                        .into(),
                )),
            }
        }
    }
    if let Some(names) = &meta.dimension_names {
        doc.insert(
            "dimension_names".into(),
            names
                .iter()
                .map(|n| n.clone().map(Value::from).unwrap_or(Value::Null))
                .collect(),
        );
    }
    doc.sort_keys();
    json::try_to_pretty(&Value::Object(doc), "the array metadata document")
}

/// Replaces the attributes of a draft document, keeping every other field.
/// An array's filters kept among its attributes (zarr-python 2.18's) stay there, and no
/// attribute may take their name.
pub fn with_attributes(bytes: &[u8], attributes: &Map<String, Value>) -> Result<Vec<u8>> {
    let mut obj = parse_object(bytes)?;
    let kept = match obj.get("attributes") {
        Some(old) if obj.contains_key("data_type") => {
            codec_filters(old.get(FILTERS)).map(|f| Value::Array(f.clone()))
        }
        _ => None,
    };
    let mut attributes = attributes.clone();
    if let Some(filters) = kept {
        if attributes.contains_key(FILTERS) {
            return Err(Error::InvalidArg(format!(
                "attribute {FILTERS:?}: zarr-python 2.18's draft layout keeps this array's \
                 filters there"
            )));
        }
        attributes.insert(FILTERS.into(), filters);
    }
    obj.insert("attributes".into(), Value::Object(attributes));
    json::try_to_pretty(&Value::Object(obj), "the metadata document")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_both_schemes() {
        let s = Scheme::Draft;
        assert_eq!(s.doc_key("", Kind::Array), "meta/array.json");
        assert_eq!(s.doc_key("", Kind::Group), "meta/group.json");
        assert_eq!(s.doc_key("foo/baz", Kind::Array), "meta/foo/baz.array.json");
        assert_eq!(s.data_base("foo/baz"), "data/foo/baz");
        assert_eq!(s.data_base(""), "data");
        assert_eq!(s.meta_dir("foo"), "meta/foo/");
        assert_eq!(s.meta_dir(""), "meta/");
        let z = Scheme::ZarrPython;
        assert_eq!(z.doc_key("", Kind::Group), "meta/root.group.json");
        assert_eq!(z.doc_key("g/a", Kind::Array), "meta/root/g/a.array.json");
        assert_eq!(z.data_base("g/a"), "data/root/g/a");
        assert_eq!(z.meta_dir(""), "meta/root/");
    }

    #[test]
    fn entry_points_are_detected() {
        for s in [Scheme::Draft, Scheme::ZarrPython] {
            assert_eq!(detect(&s.entry_point()).unwrap(), Some(s));
        }
        assert_eq!(
            detect(br#"{"zarr_format": 3, "node_type": "group"}"#).unwrap(),
            None
        );
        assert!(detect(br#"{"zarr_format": "https://example.org/4.0"}"#).is_err());
        let ext = br#"{"zarr_format": "https://purl.org/zarr/spec/core/3.0",
            "extensions": [{"extension": "x", "must_understand": true}]}"#;
        assert!(matches!(detect(ext), Err(Error::Unsupported(_))));
    }

    #[test]
    fn filters_among_attributes_are_metadata() {
        let doc = br#"{"shape": [2], "data_type": {"extension": "x", "type": "|O"},
            "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"},
            "chunk_memory_layout": "C", "fill_value": 0, "extensions": [],
            "attributes": {"filters": [{"id": "vlen-utf8"}], "units": "m"}}"#;
        let meta = parse_array(doc, Scheme::ZarrPython).unwrap();
        assert_eq!(meta.dtype.kind, DataKind::String);
        assert_eq!(meta.fill_value, None);
        let attrs = parse_attributes(doc).unwrap();
        assert_eq!(Value::Object(attrs.clone()), json!({"units": "m"}));
        // Setting attributes keeps the filters; an attribute may not take their name.
        let mut new = Map::new();
        new.insert("title".into(), json!("t"));
        let rewritten = with_attributes(doc, &new).unwrap();
        let obj = parse_object(&rewritten).unwrap();
        assert_eq!(
            obj["attributes"],
            json!({"title": "t", "filters": [{"id": "vlen-utf8"}]})
        );
        new.insert("filters".into(), json!([]));
        assert!(matches!(
            with_attributes(doc, &new),
            Err(Error::InvalidArg(_))
        ));
        // A group's "filters" attribute is the user's.
        let group = br#"{"attributes": {"filters": [{"id": "x"}]}}"#;
        assert!(parse_attributes(group).unwrap().contains_key("filters"));
        // Without the object codec "|O" says nothing of its items.
        let bare =
            String::from_utf8_lossy(doc).replace(r#""filters": [{"id": "vlen-utf8"}], "#, "");
        assert!(parse_array(bare.as_bytes(), Scheme::ZarrPython).is_err());
    }
}
