//! Reading a kerchunk reference file (JSON, versions 0 and 1) into the store's table of
//! references, as fsspec's `ReferenceFileSystem` reads it: a text value is the value itself
//! (`base64:` followed by base64 for bytes), a JSON object is the value as JSON text,
//! `[url]` is the whole file at `url` and `[url, offset, length]` that many bytes of it
//! from `offset`. Version 1 adds `templates` (substituted into reference URLs as
//! `{{name}}`) and `gen` entries, which expand into references over the Cartesian product
//! of their `dimensions` ([`super::gen`]); its references are those of `refs`, then those
//! `gen` makes (which replace any of the same key).
//!
//! The file is read as a stream: each reference is checked as it is read, and every other
//! part is kept as raw text borrowed from the file and read within its bound
//! ([`super::raw`]). Every size is bounded before it is used: see the `MAX_*` constants.

use super::gen::gen_entries;
use super::raw::{self, Bounded};
use super::shown::{clipped, shown, shown_url};
use super::template::{render, Scope};
use crate::error::{Error, Result};
use crate::store::validate_key;
use base64::Engine;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

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
/// The longest key, target URL or template (before and after templates are substituted),
/// in bytes.
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
    /// The distinct target URLs that the references name (templates substituted).
    pub targets: Vec<Arc<str>>,
}

/// Reads the reference file `text` (already bounded by [`MAX_FILE_BYTES`]).
pub fn parse(text: &[u8]) -> Result<References> {
    if text.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(metadata(
            "it is not a JSON object (expected a JSON object of references)".into(),
        ));
    }
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let document = deserializer
        .deserialize_map(DocumentVisitor)
        .and_then(|document| deserializer.end().map(|()| document))
        .map_err(|e| Error::Metadata(e.to_string()))?;
    let mut builder = Builder::default();
    match document.version {
        None => {
            if let Some(name) = document.version_1_field {
                return Err(metadata(format!(
                    "it has {name:?} but no \"version\": 1 (a version 0 file holds only keys)"
                )));
            }
            for (key, value) in document.keys.map_err(metadata)? {
                let reference = builder.reference(&key, value, None)?;
                builder.insert(key, reference)?;
            }
        }
        Some(version) if is_version_1(version) => {
            let templates = templates(document.templates)?;
            let gen = gen_entries(document.gen, &templates)?;
            for (key, value) in document.refs.unwrap_or_default() {
                let reference = builder.reference(&key, value, Some(&templates))?;
                builder.insert(key, reference)?;
            }
            let mut rendered = 0;
            for (i, entry) in gen.iter().enumerate() {
                entry
                    .expand(&templates, &mut rendered, |(key, url, range)| {
                        let target = builder.target(url)?;
                        builder.insert(key, Reference::Target { target, range })
                    })
                    .map_err(|e| e.map_message(|m| format!("gen entry {i}: {m}")))?;
            }
        }
        Some(version) => {
            return Err(metadata(format!(
                "unknown version {} (known: 0, without \"version\", and 1)",
                clipped(version.get())
            )))
        }
    }
    builder.finish()
}

fn metadata(message: String) -> Error {
    Error::Metadata(message)
}

/// Whether `version` is 1, as an integer or a number equal to it (`1.0`), as fsspec reads
/// it.
fn is_version_1(version: &RawValue) -> bool {
    raw::integer::<serde_json::Number>(version)
        .is_some_and(|n| n.as_u64() == Some(1) || n.as_f64() == Some(1.0))
}

/// A reference as the file writes it, its URL not yet substituted.
#[derive(Debug)]
enum Written {
    Inline(Vec<u8>),
    Target(String, Option<(u64, u64)>),
}

/// The parts of a reference file: those of version 1 kept as raw text until the version
/// is known, and the references, checked as they are read.
#[derive(Debug)]
struct Document<'de> {
    version: Option<&'de RawValue>,
    templates: Option<&'de RawValue>,
    gen: Option<&'de RawValue>,
    refs: Option<Vec<(String, Written)>>,
    /// The first of `templates`, `gen` and `refs` present.
    version_1_field: Option<&'static str>,
    /// The other top-level entries: the references of a version 0 file (ignored in version
    /// 1, as fsspec does), or the first thing wrong with them.
    keys: std::result::Result<Vec<(String, Written)>, String>,
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Document<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object of references")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
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
                    let value: &RawValue = map.next_value()?;
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
            let value: &RawValue = map.next_value()?;
            let value = written(&key, value).map_err(serde::de::Error::custom)?;
            refs.push((key, value));
        }
        Ok(refs)
    }
}

fn too_many() -> String {
    format!("more than {MAX_REFERENCES} references")
}

/// The reference at `key` as the file writes it (`value`).
fn written(key: &str, value: &RawValue) -> std::result::Result<Written, String> {
    if key.len() > MAX_NAME_BYTES {
        return Err(format!(
            "the key {} is longer than {MAX_NAME_BYTES} bytes",
            shown(key)
        ));
    }
    let key = shown(key);
    if let Some(text) = raw::text(value) {
        return match text.strip_prefix("base64:") {
            Some(encoded) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map(Written::Inline)
                .map_err(|e| format!("key {key}: its base64 value is malformed ({e})")),
            None => Ok(Written::Inline(text.into_bytes())),
        };
    }
    if value.get().starts_with('{') {
        return Ok(Written::Inline(value.get().as_bytes().to_vec()));
    }
    let items = match raw::list(value, 3) {
        Some(Bounded::Within(items)) => items,
        Some(Bounded::Over) => {
            return Err(format!(
                "key {key}: a reference is [url] or [url, offset, length], not a longer list"
            ))
        }
        None => {
            return Err(format!(
                "key {key}: a value is text, a JSON object, [url] or [url, offset, length], \
                 not {}",
                clipped(value.get())
            ))
        }
    };
    let integer = |v: &RawValue, what: &str| {
        raw::integer::<u64>(v).ok_or_else(|| {
            format!(
                "key {key}: its {what} {} is not a byte count",
                clipped(v.get())
            )
        })
    };
    let (url, range) = match items.as_slice() {
        [url] => (url, None),
        [url, offset, length] => (
            url,
            Some((integer(offset, "offset")?, integer(length, "length")?)),
        ),
        _ => {
            return Err(format!(
                "key {key}: a reference is [url] or [url, offset, length], not a list of {}",
                items.len()
            ))
        }
    };
    match raw::text(url) {
        Some(url) if url.len() > MAX_NAME_BYTES => Err(format!(
            "key {key}: its URL is longer than {MAX_NAME_BYTES} bytes"
        )),
        Some(url) => Ok(Written::Target(url, range)),
        None if url.get() == "null" => Err(format!(
            "key {key} names no target URL (null): a default target is not supported"
        )),
        None => Err(format!("key {key}: its URL must be text")),
    }
}

/// The `templates` of a version 1 file (`raw`): names and the text they stand for.
fn templates(raw: Option<&RawValue>) -> Result<HashMap<String, String>> {
    let Some(raw) = raw else {
        return Ok(HashMap::new());
    };
    let entries = raw::object(raw, MAX_TEMPLATES)
        .ok_or_else(|| metadata("\"templates\" must be an object".into()))?
        .or_else(|| {
            metadata(format!(
                "it has more templates than the {MAX_TEMPLATES} it may"
            ))
        })?;
    entries
        .into_iter()
        .map(|(name, value)| match raw::text(value) {
            Some(text) if text.contains("{{") => Err(Error::Unsupported(format!(
                "template {} takes arguments, which is not supported",
                shown(&name)
            ))),
            Some(text) if text.len() <= MAX_NAME_BYTES && name.len() <= MAX_NAME_BYTES => {
                Ok((name, text))
            }
            _ => Err(metadata(format!(
                "template {} must be named and be text of at most {MAX_NAME_BYTES} bytes",
                shown(&name)
            ))),
        })
        .collect()
}

/// The references being gathered, within the limits.
#[derive(Default)]
struct Builder {
    entries: BTreeMap<String, Reference>,
    targets: Vec<Arc<str>>,
    target_ids: HashMap<Arc<str>, u32>,
    /// The bytes of the keys, inline values and target URLs held.
    held: usize,
}

impl Builder {
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
                render(&url, &scope, MAX_NAME_BYTES).map_err(|m| {
                    metadata(format!(
                        "key {}: its URL {}: {m}",
                        shown(key),
                        shown_url(&url)
                    ))
                })?
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
        if let Some(&id) = self.target_ids.get(url.as_str()) {
            return Ok(id);
        }
        if url.len() > MAX_NAME_BYTES {
            return Err(metadata(format!(
                "a target URL is longer than {MAX_NAME_BYTES} bytes"
            )));
        }
        let id = u32::try_from(self.targets.len())
            .map_err(|_| metadata("it names more target files than can be counted".into()))?;
        self.held = held_after(self.held, 0, url.len())?;
        let url: Arc<str> = url.into();
        self.targets.push(url.clone());
        self.target_ids.insert(url, id);
        Ok(id)
    }

    /// Adds `reference` at `key`, replacing any reference there.
    fn insert(&mut self, key: String, reference: Reference) -> Result<()> {
        if key.len() > MAX_NAME_BYTES {
            return Err(metadata(format!(
                "the key {} is longer than {MAX_NAME_BYTES} bytes",
                shown(&key)
            )));
        }
        if !matches!(validate_key(&key), Ok(normal) if normal == key) {
            return Err(Error::InvalidKey(format!(
                "it has an entry {} that is not a normal key (a relative path without empty, \
                 '.' or '..' parts)",
                shown(&key)
            )));
        }
        let old = self.entries.get(&key);
        if old.is_none() && self.entries.len() >= MAX_REFERENCES {
            return Err(metadata(too_many()));
        }
        let size = |reference: &Reference| match reference {
            Reference::Inline(bytes) => key.len() + bytes.len(),
            Reference::Target { .. } => key.len(),
        };
        self.held = held_after(self.held, old.map_or(0, size), size(&reference))?;
        self.entries.insert(key, reference);
        Ok(())
    }

    /// The references gathered, with only the targets that they still name (a replaced
    /// reference may have been the last to name one).
    fn finish(self) -> Result<References> {
        let Builder {
            mut entries,
            targets,
            ..
        } = self;
        let mut renumbered: Vec<Option<u32>> = vec![None; targets.len()];
        let mut kept = Vec::new();
        for reference in entries.values_mut() {
            let Reference::Target { target, .. } = reference else {
                continue;
            };
            let old = *target as usize;
            *target = match renumbered[old] {
                Some(id) => id,
                None => {
                    let id = u32::try_from(kept.len()).map_err(|_| {
                        metadata("it names more target files than can be counted".into())
                    })?;
                    kept.push(targets[old].clone());
                    renumbered[old] = Some(id);
                    id
                }
            };
        }
        Ok(References {
            entries,
            targets: kept,
        })
    }
}

/// The bytes held once `removed` bytes are let go of and `added` more held: refused past
/// [`MAX_HELD_BYTES`].
fn held_after(held: usize, removed: usize, added: usize) -> Result<usize> {
    let held = held.saturating_sub(removed).saturating_add(added);
    if held > MAX_HELD_BYTES {
        return Err(metadata(format!(
            "its keys, target URLs and values take more than {MAX_HELD_BYTES} bytes"
        )));
    }
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<References> {
        parse(text.as_bytes())
    }

    fn whole(refs: &References, key: &str) -> (String, Option<(u64, u64)>) {
        match &refs.entries[key] {
            Reference::Target { target, range } => {
                (refs.targets[*target as usize].to_string(), *range)
            }
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
            Reference::Inline(br#"{"x": [1, 2]}"#.to_vec())
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
        assert!(message(&many).contains("more templates than"));
        // Deep nesting is skipped without recursion, and refused as no reference.
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(message(&deep).contains("its URL must be text"));
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
            ("{\"../x\": \"x\"}", "not a normal key"),
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
        assert!(message(&long_key).contains("is longer than 4096 bytes"));
        let long_url = format!(
            r#"{{"version": 1, "templates": {{"t": "{}"}}, "refs": {{"a": ["{}"]}}}}"#,
            "x".repeat(4000),
            "{{t}}".repeat(3)
        );
        assert!(message(&long_url).contains("renders longer"));
    }

    #[test]
    fn gen_entries_share_one_budget_checked_before_expanding() {
        // 250 entries of 4M combinations each, all making the same key: refused before any
        // is expanded (expanding them would take a billion renders).
        let entry = r#"{"key": "k", "url": "/f", "dimensions": {"i": {"stop": 4000000}}}"#;
        let many = format!(
            r#"{{"version": 1, "gen": [{}]}}"#,
            vec![entry; 250].join(",")
        );
        let err = parsed(&many).unwrap_err();
        assert!(
            matches!(&err, Error::Metadata(m) if m.contains("gen entries make more references")),
            "{err}"
        );
        // Two entries within the budget together are expanded.
        let two = r#"{"version": 1, "gen": [
            {"key": "a/{{i}}", "url": "/f", "dimensions": {"i": {"stop": 3}}},
            {"key": "a/{{i}}", "url": "/g", "dimensions": {"i": [1, 5]}}]}"#;
        let refs = parsed(two).unwrap();
        assert_eq!(refs.entries.len(), 4);
        assert_eq!(whole(&refs, "a/1"), ("/g".into(), None));
        assert_eq!(whole(&refs, "a/0"), ("/f".into(), None));
    }

    #[test]
    fn template_text_is_bounded_before_it_is_rendered() {
        let long = "k".repeat(MAX_NAME_BYTES + 1);
        for field in ["key", "url", "offset", "length"] {
            let mut entry = serde_json::json!({"key": "k", "url": "/f", "offset": "0",
                "length": "1", "dimensions": {"i": [1]}});
            entry[field] = serde_json::Value::String(long.clone());
            let text = serde_json::json!({"version": 1, "gen": [entry]}).to_string();
            let got = message(&text);
            assert!(
                got.contains(&format!("its \"{field}\" is longer than {MAX_NAME_BYTES}")),
                "{field}: {got}"
            );
        }
        let url = format!(r#"{{"version": 1, "refs": {{"a": ["{long}"]}}}}"#);
        assert!(message(&url).contains("its URL is longer than"));
    }

    #[test]
    fn hostile_values_are_refused_while_read() {
        // A list of ten million items: refused at its fourth, never built.
        let zeros = format!(r#"{{"a": [{}0]}}"#, "0,".repeat(10_000_000));
        assert!(message(&zeros)
            .contains("\"a\": a reference is [url] or [url, offset, length], not a longer list"));
        let templates = format!(
            r#"{{"version": 1, "templates": {{{}"z": "v"}}}}"#,
            "\"t\": \"v\",".repeat(2_000_000)
        );
        assert!(message(&templates).contains("more templates than the 10000"));
        let dimensions: String = (0..40).map(|i| format!("\"d{i}\": [1],")).collect();
        let wide = format!(
            r#"{{"version": 1, "gen": [{{"key": "k", "url": "/f", "dimensions": {{{dimensions}"z": [1]}}}}]}}"#
        );
        assert!(message(&wide).contains("1 to 32 dimensions"));
        let gens = format!(
            r#"{{"version": 1, "gen": [{}1]}}"#,
            "1,".repeat(MAX_GEN_ENTRIES)
        );
        assert!(message(&gens).contains("more than the 10000 gen entries"));
        // Objects are kept as their text, counted like any value.
        let refs = parsed(r#"{"a": {"b": [1, 2]}}"#).unwrap();
        assert_eq!(
            refs.entries["a"],
            Reference::Inline(br#"{"b": [1, 2]}"#.to_vec())
        );
    }

    #[test]
    fn messages_show_values_bounded_and_urls_without_secrets() {
        let key = "k".repeat(1 << 20);
        let got = message(&format!(r#"{{"{key}": "x"}}"#));
        assert!(
            got.contains("is longer than 4096") && got.len() < 500,
            "{}",
            got.len()
        );
        let got = message(&format!(r#"{{"a": [{}]}}"#, "1".repeat(1 << 20)));
        assert!(got.len() < 500, "{}", got.len());
        let got = message(r#"{"version": 1, "refs": {"a": ["https://u:TOKEN@h/{{nope}}?sig=S"]}}"#);
        assert!(
            got.contains("https://h/{{nope}}") && !got.contains("TOKEN") && !got.contains("sig"),
            "{got}"
        );
        let got = message(
            r#"{"version": 1, "gen": [{"key": "k", "url": "https://u:TOKEN@h/{{i}}{{nope}}?sig=S", "dimensions": {"i": [1]}}]}"#,
        );
        assert!(
            got.contains("\"https://h/") && !got.contains("TOKEN") && !got.contains("sig"),
            "{got}"
        );
        let got = message(&format!(r#"{{"version": [{}]}}"#, "1,".repeat(1000) + "1"));
        assert!(got.contains("unknown version") && got.len() < 500, "{got}");
    }

    #[test]
    fn replaced_references_are_not_counted_twice() {
        let refs = parsed(
            r#"{"version": 1, "refs": {"k": ["/old"], "j": ["/kept"]},
                "gen": [{"key": "k", "url": "/new{{i}}", "dimensions": {"i": [1, 2]}}]}"#,
        )
        .unwrap();
        // Only the targets still named are kept.
        let mut targets: Vec<&str> = refs.targets.iter().map(|t| &**t).collect();
        targets.sort();
        assert_eq!(targets, ["/kept", "/new2"]);
        assert_eq!(whole(&refs, "k"), ("/new2".into(), None));
        let mut builder = Builder::default();
        let value = vec![0u8; MAX_HELD_BYTES / 2];
        for _ in 0..4 {
            builder
                .insert("a".into(), Reference::Inline(value.clone()))
                .unwrap();
        }
        assert_eq!(builder.held, 1 + MAX_HELD_BYTES / 2);
    }

    #[test]
    fn version_1_may_be_written_as_a_float() {
        let refs = parsed(r#"{"version": 1.0, "refs": {"a": "x"}}"#).unwrap();
        assert_eq!(refs.entries["a"], Reference::Inline(b"x".to_vec()));
        assert!(message(r#"{"version": 1.5}"#).contains("unknown version 1.5"));
    }
}
