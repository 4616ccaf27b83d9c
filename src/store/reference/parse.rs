//! Reading a kerchunk reference file (JSON, versions 0 and 1) into the store's table of
//! references, as fsspec's `ReferenceFileSystem` reads it: a text value is the value itself
//! (`base64:` followed by base64 for bytes), a JSON object is the value as JSON text,
//! `[url]` is the whole file at `url` and `[url, offset, length]` that many bytes of it
//! from `offset`. Version 1 adds `templates` (substituted into reference URLs as
//! `{{name}}`) and `gen` entries, which expand into references over the Cartesian product
//! of their `dimensions`; its references are those of `refs`, then those `gen` makes
//! (which replace any of the same key).
//!
//! Every size is bounded before it is used: see the `MAX_*` constants.

use super::template::{render, Scope};
use crate::error::{Error, Result};
use crate::store::exact_key;
use base64::Engine;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// The largest reference file read (512 MiB).
pub const MAX_FILE_BYTES: u64 = 512 << 20;
/// The most references a reference file may hold, `gen` expansions included.
pub const MAX_REFERENCES: usize = 4_000_000;
/// The most templates of a reference file.
pub const MAX_TEMPLATES: usize = 10_000;
/// The most `gen` entries of a reference file.
pub const MAX_GEN_ENTRIES: usize = 10_000;
/// The most dimensions of one `gen` entry.
pub const MAX_GEN_DIMENSIONS: usize = 32;
/// The longest key or target URL (after templates are substituted), in bytes.
pub const MAX_NAME_BYTES: usize = 4096;
/// The most bytes of keys, target URLs and inline values that one reference file may make
/// the store hold (1 GiB; `gen` entries make many from little).
pub const MAX_HELD_BYTES: usize = 1 << 30;

/// What a key of the store stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// The value itself.
    Inline(Vec<u8>),
    /// Bytes of a target file.
    Target {
        /// The target's index in [`References::targets`].
        target: u32,
        /// The offset and length of the bytes, or `None` for the whole file.
        range: Option<(u64, u64)>,
    },
}

/// The references of a reference file.
#[derive(Debug, Default)]
pub struct References {
    /// Each key's reference.
    pub entries: BTreeMap<String, Reference>,
    /// The distinct target URLs, as the references name them (templates substituted).
    pub targets: Vec<String>,
}

/// Reads the reference file `text` (already bounded by [`MAX_FILE_BYTES`]).
pub fn parse(text: &[u8]) -> Result<References> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let document = deserializer
        .deserialize_map(DocumentVisitor)
        .and_then(|document| deserializer.end().map(|()| document))
        .map_err(|e| Error::Metadata(e.to_string()))?;
    let mut builder = Builder::default();
    match document.version.as_ref().map(|v| (v, v.as_u64())) {
        None => {
            if let Some(name) = document.version_1_field {
                return Err(metadata(format!(
                    "it has {name:?} but no \"version\": 1 (a version 0 file holds only keys)"
                )));
            }
            let entries = document.keys.map_err(metadata)?;
            for (key, value) in entries {
                let reference = builder.reference(&key, value, None)?;
                builder.insert(key, reference)?;
            }
        }
        Some((_, Some(1))) => {
            let templates = templates(document.templates)?;
            for (key, value) in document.refs.unwrap_or_default() {
                let reference = builder.reference(&key, value, Some(&templates))?;
                builder.insert(key, reference)?;
            }
            for (i, entry) in gen_entries(document.gen)?.iter().enumerate() {
                builder
                    .expand(entry, &templates)
                    .map_err(|e| e.map_message(|m| format!("gen entry {i}: {m}")))?;
            }
        }
        Some((version, _)) => {
            return Err(metadata(format!(
                "unknown version {version} (known: 0, without \"version\", and 1)"
            )))
        }
    }
    Ok(References {
        entries: builder.entries,
        targets: builder.targets,
    })
}

fn metadata(message: String) -> Error {
    Error::Metadata(message)
}

/// A reference as the file writes it, its URL not yet substituted.
#[derive(Debug)]
enum Written {
    Inline(Vec<u8>),
    Target(String, Option<(u64, u64)>),
}

/// The parts of a reference file.
#[derive(Debug)]
struct Document {
    version: Option<Value>,
    templates: Option<Value>,
    gen: Option<Value>,
    refs: Option<Vec<(String, Written)>>,
    /// The first of `templates`, `gen` and `refs` present.
    version_1_field: Option<&'static str>,
    /// The other top-level entries: the references of a version 0 file (ignored in version
    /// 1, as fsspec does), or the first thing wrong with them.
    keys: std::result::Result<Vec<(String, Written)>, String>,
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Document;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object of references")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Document, A::Error> {
        let mut document = Document {
            version: None,
            templates: None,
            gen: None,
            refs: None,
            version_1_field: None,
            keys: Ok(Vec::new()),
        };
        while let Some(key) = map.next_key::<String>()? {
            let field = match key.as_str() {
                "version" => {
                    document.version = Some(map.next_value()?);
                    continue;
                }
                "templates" => {
                    document.templates = Some(map.next_value()?);
                    "templates"
                }
                "gen" => {
                    document.gen = Some(map.next_value()?);
                    "gen"
                }
                "refs" => {
                    document.refs = Some(map.next_value_seed(RefsSeed)?);
                    "refs"
                }
                _ => {
                    let value: Value = map.next_value()?;
                    if let Ok(keys) = &mut document.keys {
                        if keys.len() >= MAX_REFERENCES {
                            return Err(serde::de::Error::custom(too_many()));
                        }
                        match written(&key, value) {
                            Ok(written) => keys.push((key, written)),
                            Err(e) => document.keys = Err(e),
                        }
                    }
                    continue;
                }
            };
            document.version_1_field.get_or_insert(field);
        }
        Ok(document)
    }
}

/// The `refs` object of a version 1 file.
struct RefsSeed;

impl<'de> DeserializeSeed<'de> for RefsSeed {
    type Value = Vec<(String, Written)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RefsSeed {
    type Value = Vec<(String, Written)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of references as \"refs\"")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut refs = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if refs.len() >= MAX_REFERENCES {
                return Err(serde::de::Error::custom(too_many()));
            }
            let value: Value = map.next_value()?;
            refs.push((written(&key, value).map_err(serde::de::Error::custom)?, key));
        }
        Ok(refs.into_iter().map(|(value, key)| (key, value)).collect())
    }
}

fn too_many() -> String {
    format!("more than {MAX_REFERENCES} references")
}

/// The reference at `key` as the file writes it.
fn written(key: &str, value: Value) -> std::result::Result<Written, String> {
    let integer = |v: &Value, what: &str| {
        v.as_u64()
            .ok_or_else(|| format!("key {key:?}: its {what} {v} is not a byte count"))
    };
    match value {
        Value::String(text) => match text.strip_prefix("base64:") {
            Some(encoded) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map(Written::Inline)
                .map_err(|e| format!("key {key:?}: its base64 value is malformed ({e})")),
            None => Ok(Written::Inline(text.into_bytes())),
        },
        Value::Object(_) => Ok(Written::Inline(value.to_string().into_bytes())),
        Value::Array(items) => match items.as_slice() {
            [Value::String(url)] => Ok(Written::Target(url.clone(), None)),
            [Value::String(url), offset, length] => Ok(Written::Target(
                url.clone(),
                Some((integer(offset, "offset")?, integer(length, "length")?)),
            )),
            [Value::Null] | [Value::Null, _, _] => Err(format!(
                "key {key:?} names no target URL (null): a default target is not supported"
            )),
            _ => Err(format!(
                "key {key:?}: a reference is [url] or [url, offset, length], not a list of {}",
                items.len()
            )),
        },
        other => Err(format!(
            "key {key:?}: a value is text, a JSON object, [url] or [url, offset, length], not \
             {other}"
        )),
    }
}

/// The `templates` of a version 1 file: names and the text they stand for.
fn templates(value: Option<Value>) -> Result<HashMap<String, String>> {
    let map = match value {
        None => return Ok(HashMap::new()),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(metadata("\"templates\" must be an object".into())),
    };
    if map.len() > MAX_TEMPLATES {
        return Err(metadata(format!(
            "it has {} templates, more than the {MAX_TEMPLATES} it may",
            map.len()
        )));
    }
    map.into_iter()
        .map(|(name, value)| match value {
            Value::String(text) if text.contains("{{") => Err(Error::Unsupported(format!(
                "template {name:?} takes arguments, which is not supported"
            ))),
            Value::String(text) if text.len() <= MAX_NAME_BYTES => Ok((name, text)),
            _ => Err(metadata(format!(
                "template {name:?} must be text of at most {MAX_NAME_BYTES} bytes"
            ))),
        })
        .collect()
}

/// The `gen` entries of a version 1 file.
fn gen_entries(value: Option<Value>) -> Result<Vec<Value>> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(entries)) if entries.len() <= MAX_GEN_ENTRIES => Ok(entries),
        Some(Value::Array(entries)) => Err(metadata(format!(
            "it has {} gen entries, more than the {MAX_GEN_ENTRIES} it may",
            entries.len()
        ))),
        Some(_) => Err(metadata("\"gen\" must be a list".into())),
    }
}

/// The values a variable of a `gen` entry takes.
enum Dimension {
    /// `start`, `start + step`, ... before `stop`, as Python's `range`: `len` values.
    Range { start: i64, step: i64, len: u64 },
    /// The values listed.
    List(Vec<i64>),
}

impl Dimension {
    fn parse(name: &str, value: &Value) -> Result<Self> {
        let bad = || {
            metadata(format!(
                "dimension {name:?} must be {{\"start\", \"stop\", \"step\"}} or a list of \
                 integers"
            ))
        };
        match value {
            Value::Array(items) => items
                .iter()
                .map(|v| v.as_i64().ok_or_else(bad))
                .collect::<Result<_>>()
                .map(Dimension::List),
            Value::Object(fields) => {
                let field = |name: &str, default: Option<i64>| match fields.get(name) {
                    None => default.ok_or_else(bad),
                    Some(v) => v.as_i64().ok_or_else(bad),
                };
                if let Some(other) = fields
                    .keys()
                    .find(|k| !["start", "stop", "step"].contains(&k.as_str()))
                {
                    return Err(metadata(format!(
                        "dimension {name:?} has an unknown field {other:?}"
                    )));
                }
                let (start, stop, step) = (
                    field("start", Some(0))?,
                    field("stop", None)?,
                    field("step", Some(1))?,
                );
                if step == 0 {
                    return Err(metadata(format!("dimension {name:?} has a step of 0")));
                }
                let (start_wide, stop_wide, step_wide) =
                    (i128::from(start), i128::from(stop), i128::from(step));
                let span = if step > 0 {
                    stop_wide - start_wide
                } else {
                    start_wide - stop_wide
                };
                let len = if span <= 0 {
                    0
                } else {
                    (span + step_wide.abs() - 1) / step_wide.abs()
                };
                Ok(Dimension::Range {
                    start,
                    step,
                    len: len as u64,
                })
            }
            _ => Err(bad()),
        }
    }

    fn len(&self) -> u64 {
        match self {
            Dimension::Range { len, .. } => *len,
            Dimension::List(values) => values.len() as u64,
        }
    }

    /// The `i`th value (`i` below [`Dimension::len`]).
    fn get(&self, i: u64) -> i64 {
        match self {
            // Within the range, so within `start..stop`: no overflow.
            Dimension::Range { start, step, .. } => {
                (i128::from(*start) + i128::from(*step) * i128::from(i)) as i64
            }
            Dimension::List(values) => values[i as usize],
        }
    }
}

/// The references being gathered, within the limits.
#[derive(Default)]
struct Builder {
    entries: BTreeMap<String, Reference>,
    targets: Vec<String>,
    target_ids: HashMap<String, u32>,
    held: usize,
}

impl Builder {
    /// Counts `bytes` more held, refused past [`MAX_HELD_BYTES`].
    fn hold(&mut self, bytes: usize) -> Result<()> {
        self.held = self.held.saturating_add(bytes);
        if self.held > MAX_HELD_BYTES {
            return Err(metadata(format!(
                "its keys, target URLs and values take more than {MAX_HELD_BYTES} bytes"
            )));
        }
        Ok(())
    }

    /// The reference at `key` as the file writes it, its URL's templates substituted when
    /// `templates` are given (version 1).
    fn reference(
        &mut self,
        key: &str,
        value: Written,
        templates: Option<&HashMap<String, String>>,
    ) -> Result<Reference> {
        let (url, range) = match value {
            Written::Inline(bytes) => return Ok(Reference::Inline(bytes)),
            Written::Target(url, range) => (url, range),
        };
        let url = match templates {
            Some(templates) if url.contains("{{") => {
                let scope = Scope {
                    templates,
                    variables: &[],
                };
                render(&url, &scope, MAX_NAME_BYTES)
                    .map_err(|m| metadata(format!("key {key:?}: its URL {url:?}: {m}")))?
            }
            _ => url,
        };
        Ok(Reference::Target {
            target: self.target(url)?,
            range,
        })
    }

    /// The index of target `url`, added if new.
    fn target(&mut self, url: String) -> Result<u32> {
        if let Some(&id) = self.target_ids.get(&url) {
            return Ok(id);
        }
        if url.len() > MAX_NAME_BYTES {
            return Err(metadata(format!(
                "a target URL is longer than {MAX_NAME_BYTES} bytes"
            )));
        }
        self.hold(url.len())?;
        // At most MAX_REFERENCES targets: the index fits.
        let id = self.targets.len() as u32;
        self.targets.push(url.clone());
        self.target_ids.insert(url, id);
        Ok(id)
    }

    /// Adds `reference` at `key`, replacing any reference there.
    fn insert(&mut self, key: String, reference: Reference) -> Result<()> {
        exact_key(&key, &"it")?;
        if key.len() > MAX_NAME_BYTES {
            return Err(metadata(format!(
                "a key is longer than {MAX_NAME_BYTES} bytes"
            )));
        }
        if self.entries.len() >= MAX_REFERENCES && !self.entries.contains_key(&key) {
            return Err(metadata(too_many()));
        }
        let inline = match &reference {
            Reference::Inline(bytes) => bytes.len(),
            _ => 0,
        };
        self.hold(key.len() + inline)?;
        self.entries.insert(key, reference);
        Ok(())
    }

    /// Adds the references that the `gen` entry `entry` makes.
    fn expand(&mut self, entry: &Value, templates: &HashMap<String, String>) -> Result<()> {
        let Value::Object(fields) = entry else {
            return Err(metadata("it is not an object".into()));
        };
        let text = |name: &str| -> Result<Option<String>> {
            match fields.get(name) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(Value::Number(n)) if name == "offset" || name == "length" => {
                    Ok(Some(n.to_string()))
                }
                Some(_) => Err(metadata(format!("its {name:?} must be text"))),
            }
        };
        let key = text("key")?.ok_or_else(|| metadata("it has no \"key\"".into()))?;
        let url = text("url")?.ok_or_else(|| metadata("it has no \"url\"".into()))?;
        let range = match (text("offset")?, text("length")?) {
            (Some(offset), Some(length)) => Some((offset, length)),
            (None, None) => None,
            _ => {
                return Err(metadata(
                    "it has one of \"offset\" and \"length\" without the other".into(),
                ))
            }
        };
        let Some(Value::Object(dimensions)) = fields.get("dimensions") else {
            return Err(metadata("its \"dimensions\" must be an object".into()));
        };
        if dimensions.is_empty() || dimensions.len() > MAX_GEN_DIMENSIONS {
            return Err(metadata(format!(
                "it must have 1 to {MAX_GEN_DIMENSIONS} dimensions"
            )));
        }
        let mut names = Vec::new();
        let mut values = Vec::new();
        for (name, value) in dimensions {
            if templates.contains_key(name) {
                return Err(metadata(format!(
                    "dimension {name:?} has the name of a template"
                )));
            }
            names.push(name.as_str());
            values.push(Dimension::parse(name, value)?);
        }
        let count = values
            .iter()
            .try_fold(1u64, |count, d| count.checked_mul(d.len()))
            .filter(|&count| count <= (MAX_REFERENCES - self.entries.len()) as u64)
            .ok_or_else(|| {
                metadata(format!(
                    "it makes more references than the {MAX_REFERENCES} a reference file may \
                     hold"
                ))
            })?;
        let mut at = vec![0u64; values.len()];
        for _ in 0..count {
            let variables: Vec<(&str, i64)> = names
                .iter()
                .zip(&values)
                .zip(&at)
                .map(|((name, dimension), &i)| (*name, dimension.get(i)))
                .collect();
            let scope = Scope {
                templates,
                variables: &variables,
            };
            let rendered = |what: &str, text: &str| {
                render(text, &scope, MAX_NAME_BYTES)
                    .map_err(|m| metadata(format!("its {what} {text:?}: {m}")))
            };
            let key = rendered("key", &key)?;
            let target = self.target(rendered("url", &url)?)?;
            let range = match &range {
                None => None,
                Some((offset, length)) => {
                    let number = |what: &str, text: &str| {
                        let value = rendered(what, text)?;
                        value.trim().parse::<u64>().map_err(|_| {
                            metadata(format!("its {what} renders as {value:?}, not a byte count"))
                        })
                    };
                    Some((number("offset", offset)?, number("length", length)?))
                }
            };
            self.insert(key, Reference::Target { target, range })?;
            // The next combination: the last dimension varies fastest.
            for (i, dimension) in values.iter().enumerate().rev() {
                at[i] += 1;
                if at[i] < dimension.len() {
                    break;
                }
                at[i] = 0;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<References> {
        parse(text.as_bytes())
    }

    fn whole(refs: &References, key: &str) -> (String, Option<(u64, u64)>) {
        match &refs.entries[key] {
            Reference::Target { target, range } => (refs.targets[*target as usize].clone(), *range),
            Reference::Inline(_) => panic!("{key} is inline"),
        }
    }

    #[test]
    fn version_0_values() {
        let refs = parsed(
            r#"{".zgroup": "{\"zarr_format\": 2}", "a/.zattrs": {"x": [1, 2]},
                "a/0": ["/d/f.nc", 10, 20], "a/1": ["/d/g.nc"], "b": "base64:AAEC/w=="}"#,
        )
        .unwrap();
        assert_eq!(
            refs.entries[".zgroup"],
            Reference::Inline(br#"{"zarr_format": 2}"#.to_vec())
        );
        assert_eq!(
            refs.entries["a/.zattrs"],
            Reference::Inline(br#"{"x":[1,2]}"#.to_vec())
        );
        assert_eq!(refs.entries["b"], Reference::Inline(vec![0, 1, 2, 255]));
        assert_eq!(whole(&refs, "a/0"), ("/d/f.nc".into(), Some((10, 20))));
        assert_eq!(whole(&refs, "a/1"), ("/d/g.nc".into(), None));
        // In version 0, braces are no templates.
        let literal = parsed(r#"{"a": ["/d/{{x}}"]}"#).unwrap();
        assert_eq!(whole(&literal, "a"), ("/d/{{x}}".into(), None));
    }

    #[test]
    fn version_1_templates_and_gen() {
        let refs = parsed(
            r#"{"version": 1,
                "templates": {"u": "/srv/path", "x": "ignored"},
                "gen": [{"key": "gen_key{{i}}", "url": "{{u}}_{{i}}",
                         "offset": "{{(i + 1) * 1000}}", "length": "1000",
                         "dimensions": {"i": {"stop": 5}}},
                        {"key": "g/{{a}}.{{b}}", "url": "{{u}}",
                         "dimensions": {"a": [7, 9], "b": {"start": 4, "stop": 0, "step": -2}}}],
                "refs": {"key0": "data", "key2": ["{{u}}", 10000, 100], "gen_key4": "replaced"}}"#,
        )
        .unwrap();
        assert_eq!(refs.entries["key0"], Reference::Inline(b"data".to_vec()));
        assert_eq!(
            whole(&refs, "key2"),
            ("/srv/path".into(), Some((10000, 100)))
        );
        for i in 0..5u64 {
            assert_eq!(
                whole(&refs, &format!("gen_key{i}")),
                (format!("/srv/path_{i}"), Some(((i + 1) * 1000, 1000)))
            );
        }
        let g: Vec<&str> = refs
            .entries
            .keys()
            .filter(|k| k.starts_with("g/"))
            .map(|k| k.as_str())
            .collect();
        assert_eq!(g, ["g/7.2", "g/7.4", "g/9.2", "g/9.4"]);
        assert_eq!(whole(&refs, "g/9.2"), ("/srv/path".into(), None));
        assert_eq!(refs.entries.len(), 2 + 5 + 4);
    }

    fn message(text: &str) -> String {
        parsed(text).unwrap_err().to_string()
    }

    #[test]
    fn hostile_files_are_refused_quickly() {
        let huge_gen = r#"{"version": 1, "gen": [{"key": "k{{i}}.{{j}}", "url": "/f",
            "dimensions": {"i": {"stop": 1000000}, "j": {"stop": 1000000}}}]}"#;
        assert!(message(huge_gen).contains("more references than the 4000000"));
        let overflow = r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "/f",
            "dimensions": {"i": {"start": -9223372036854775808, "stop": 9223372036854775807},
                           "j": {"stop": 9223372036854775807}, "k": {"stop": 4}}}]}"#;
        assert!(message(overflow).contains("more references"));
        let templates: Vec<String> = (0..MAX_TEMPLATES + 1)
            .map(|i| format!("\"t{i}\": \"v\""))
            .collect();
        let many = format!(
            r#"{{"version": 1, "templates": {{{}}}}}"#,
            templates.join(",")
        );
        assert!(message(&many).contains("templates, more than"));
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(message(&deep).contains("recursion limit"));
        for (text, expected) in [
            ("[1, 2]", "expected a JSON object of references"),
            ("\"x\"", "expected a JSON object of references"),
            ("{\"a\": \"base64:***\"}", "\"a\": its base64 value is malformed"),
            ("{\"a\": [\"/f\", -1, 2]}", "offset -1 is not a byte count"),
            ("{\"a\": [\"/f\", 0, 1e3]}", "is not a byte count"),
            ("{\"a\": [\"/f\", 0]}", "not a list of 2"),
            ("{\"a\": [null, 0, 1]}", "names no target URL"),
            ("{\"a\": 5}", "not 5"),
            ("{\"a//0\": \"x\"}", "not a normal key"),
            ("{\"../x\": \"x\"}", "not a valid key"),
            ("{\"version\": 2}", "unknown version 2"),
            ("{\"refs\": {}}", "\"refs\" but no \"version\": 1"),
            ("{\"version\": 1, \"refs\": []}", "expected an object of references"),
            ("{\"version\": 1, \"refs\": {\"a\": [\"{{nope}}\"]}}", "\"nope\" is neither"),
            ("{\"version\": 1, \"templates\": {\"f\": \"{{c}}\"}}", "takes arguments"),
            ("{\"version\": 1, \"gen\": [{\"key\": \"k\", \"url\": \"/f\", \"offset\": \"1\", \"dimensions\": {\"i\": [1]}}]}", "without the other"),
            ("{\"version\": 1, \"gen\": [{\"key\": \"k\", \"url\": \"/f\", \"offset\": \"{{i-5}}\", \"length\": \"1\", \"dimensions\": {\"i\": [1]}}]}", "renders as \"-4\""),
            ("{\"version\": 1, \"gen\": [{\"key\": \"k\", \"url\": \"/f\", \"dimensions\": {\"i\": {\"stop\": 3, \"step\": 0}}}]}", "step of 0"),
            ("{\"a\": \"x\"} trailing", "trailing characters"),
        ] {
            let got = message(text);
            assert!(got.contains(expected), "{text}: {got}");
        }
        // Unknown top-level entries of a version 1 file are ignored, as fsspec does.
        let refs = parsed(r#"{"version": 1, "refs": {"a": "x"}, "note": 5}"#).unwrap();
        assert_eq!(refs.entries.len(), 1);
    }

    #[test]
    fn keys_and_urls_have_bounded_length() {
        let long_key = format!("{{\"{}\": \"x\"}}", "k".repeat(MAX_NAME_BYTES + 1));
        assert!(message(&long_key).contains("key is longer"));
        let long_url = format!(
            r#"{{"version": 1, "templates": {{"t": "{}"}}, "refs": {{"a": ["{}"]}}}}"#,
            "x".repeat(4000),
            "{{t}}".repeat(3)
        );
        assert!(message(&long_url).contains("renders longer"));
    }
}
