//! The 2022 draft of Zarr v3 (editor's draft of 25 May 2022): an entry point `zarr.json`
//! at the store root, node documents under `meta/` (`meta/a/b.array.json`,
//! `meta/a.group.json`, the root's `meta/array.json` or `meta/group.json`), chunks under
//! `data/` (`data/a/b/c0/1`), groups implied by their descendants. zarr-python 2.18's
//! experimental v3 writes a variant of it: a `root` segment (`meta/root/a/b.array.json`,
//! `meta/root.group.json`, `data/root/a/b/c0/1`), its own `zarr_format` URI, and one
//! `compressor` instead of a `codecs` list. Both are read; each is written on request.

use super::fill;
use super::{doc, json, v3, ArrayMeta, KeyEncoding, Order, V2Fields};
use crate::codec;
use crate::codec::chain::Chain;
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
    match parse_object(bytes)?.get("attributes") {
        None => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map.clone()),
        Some(_) => Err(bad("attributes", "an object")),
    }
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
    let dtype = parse_data_type(field("data_type")?)?;
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
    let item_size = dtype.item_size();
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
    let codecs = Chain::from_v2(
        order.transpose(shape.len()),
        Default::default(),
        compressors,
        &dtype,
    );
    let meta = ArrayMeta {
        shape,
        chunks,
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
/// object through its `type` or `fallback`.
fn parse_data_type(value: &Value) -> Result<DType> {
    let name = match value {
        Value::String(s) => s.as_str(),
        Value::Object(obj) => obj
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("data_type", "a string or an extension with a type"))?,
        _ => return Err(bad("data_type", "a string")),
    };
    if let Ok(kind) = crate::dtype::v3_kind(name) {
        let order = if DType::new(kind.clone(), ByteOrder::Little).item_size() == 1 {
            ByteOrder::NotApplicable
        } else {
            ByteOrder::Little
        };
        return Ok(DType::new(kind, order));
    }
    match name {
        "i1" => return Ok(DType::new(DataKind::Int(1), ByteOrder::NotApplicable)),
        "u1" => return Ok(DType::new(DataKind::UInt(1), ByteOrder::NotApplicable)),
        _ => {}
    }
    DType::parse_v2(name).or_else(|e| match value.get("fallback") {
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
    })
}

fn render_data_type(dtype: &DType, scheme: Scheme) -> Result<String> {
    let one_byte = dtype.item_size() == 1;
    Ok(match scheme {
        Scheme::Draft if dtype.order != ByteOrder::Big || one_byte => {
            match v3::data_type_json(&dtype.kind)? {
                serde_json::Value::String(name) => name,
                _ => {
                    return Err(Error::Unsupported(format!(
                        "data type {} has no name in the 2022 draft layout",
                        dtype.to_v2()
                    )))
                }
            }
        }
        Scheme::ZarrPython if one_byte => match dtype.kind {
            DataKind::Bool => "bool".into(),
            DataKind::Int(1) => "i1".into(),
            _ => "u1".into(),
        },
        _ => dtype.to_v2(),
    })
}

/// Renders an array document in `scheme` with `attributes`.
pub fn render_array(
    meta: &ArrayMeta,
    attributes: &Map<String, Value>,
    scheme: Scheme,
) -> Result<Vec<u8>> {
    let fields = V2Fields::of(meta, "The 2022 draft")?;
    if !fields.array_filters.is_empty() {
        return Err(Error::Unsupported(
            "the 2022 draft layout is written without filters".into(),
        ));
    }
    let separator = meta.key_encoding.separator.to_string();
    let mut doc = Map::new();
    doc.insert("shape".into(), meta.shape.clone().into());
    doc.insert(
        "data_type".into(),
        render_data_type(&meta.dtype, scheme)?.into(),
    );
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
    let zero = Some(vec![0u8; meta.item_size()]);
    let fill = fill::render_fill(
        if meta.fill_value.is_some() {
            &meta.fill_value
        } else {
            &zero
        },
        &meta.dtype,
    );
    let fill = match (scheme, fill) {
        (Scheme::Draft, Value::String(s)) if s == "Infinity" => Value::from("+Infinity"),
        (_, fill) => fill,
    };
    doc.insert("fill_value".into(), fill);
    doc.insert("extensions".into(), json!([]));
    doc.insert("attributes".into(), Value::Object(attributes.clone()));
    let codec_uri = |id: &str| match scheme {
        Scheme::Draft => format!("{SEED_CODEC_URI}{id}/1.0"),
        Scheme::ZarrPython => format!("{ZARR_PYTHON_CODEC_URI}{id}/1.0"),
    };
    let codecs: Vec<Value> = fields
        .bytes
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
    Ok(json::to_pretty(&Value::Object(doc)))
}

/// Replaces the attributes of a draft document, keeping every other field.
pub fn with_attributes(bytes: &[u8], attributes: &Map<String, Value>) -> Result<Vec<u8>> {
    let mut obj = parse_object(bytes)?;
    obj.insert("attributes".into(), Value::Object(attributes.clone()));
    Ok(json::to_pretty(&Value::Object(obj)))
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
}
