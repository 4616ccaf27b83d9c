//! The `gen` entries of a version 1 reference file: each makes one reference for every
//! combination of the values of its `dimensions` (the last varies fastest), its key, URL,
//! offset and length rendered as templates with the variables of that combination.
//!
//! All entries together make at most [`MAX_REFERENCES`] references and render at most
//! [`MAX_RENDERED_BYTES`]: both are checked before (and while) anything is expanded, so a
//! small file cannot ask for unbounded work.

use super::parse::{MAX_GEN_DIMENSIONS, MAX_GEN_ENTRIES, MAX_NAME_BYTES, MAX_REFERENCES};
use super::raw::{self, Bounded};
use super::shown::{shown, shown_url};
use super::template::{render, Scope};
use crate::error::{Error, Result};
use serde_json::value::RawValue;
use std::collections::HashMap;

/// The most bytes that the `gen` entries of one reference file may render (their keys,
/// URLs, offsets and lengths, every combination counted).
pub const MAX_RENDERED_BYTES: u64 = 2 << 30;

/// The most fields of one `gen` entry (unknown ones are ignored, as fsspec does).
const MAX_GEN_FIELDS: usize = 64;

/// A `gen` entry, read and checked but not yet expanded.
pub struct GenEntry {
    key: String,
    url: String,
    /// The offset and length templates, or `None` for whole files.
    range: Option<(String, String)>,
    names: Vec<String>,
    dimensions: Vec<Dimension>,
    /// The number of combinations of the dimensions' values.
    count: u64,
}

/// What one combination of a `gen` entry makes: a key, a target URL and a range.
pub type Made = (String, String, Option<(u64, u64)>);

/// The `gen` entries of a version 1 file (`raw`, its `"gen"`), checked against the limits
/// before any is expanded. Dimensions may not share the name of one of `templates`.
pub fn gen_entries(
    raw: Option<&RawValue>,
    templates: &HashMap<String, String>,
) -> Result<Vec<GenEntry>> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    let entries = raw::list(raw, MAX_GEN_ENTRIES)
        .ok_or_else(|| metadata("\"gen\" must be a list".into()))?
        .or_else(|| {
            metadata(format!(
                "it has more than the {MAX_GEN_ENTRIES} gen entries it may"
            ))
        })?;
    let entries = entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| {
            GenEntry::parse(entry, templates).map_err(|m| metadata(format!("gen entry {i}: {m}")))
        })
        .collect::<Result<Vec<_>>>()?;
    entries
        .iter()
        .try_fold(0u64, |total, entry| total.checked_add(entry.count))
        .filter(|&total| total <= MAX_REFERENCES as u64)
        .ok_or_else(|| {
            metadata(format!(
                "its gen entries make more references than the {MAX_REFERENCES} a reference \
                 file may hold"
            ))
        })?;
    Ok(entries)
}

fn metadata(message: String) -> Error {
    Error::Metadata(message)
}

impl GenEntry {
    /// The entry `raw`, its templates' text and dimensions checked.
    fn parse(
        raw: &RawValue,
        templates: &HashMap<String, String>,
    ) -> std::result::Result<Self, String> {
        let fields = match raw::object(raw, MAX_GEN_FIELDS) {
            None => return Err("it is not an object".into()),
            Some(Bounded::Over) => return Err(format!("it has more than {MAX_GEN_FIELDS} fields")),
            Some(Bounded::Within(fields)) => fields,
        };
        let field = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
        let template = |name: &str| -> std::result::Result<Option<String>, String> {
            let Some(value) = field(name) else {
                return Ok(None);
            };
            let text = match raw::text(value) {
                Some(text) => text,
                None if matches!(name, "offset" | "length")
                    && raw::integer::<serde_json::Number>(value).is_some() =>
                {
                    value.get().to_string()
                }
                None => return Err(format!("its {name:?} must be text")),
            };
            if text.len() > MAX_NAME_BYTES {
                return Err(format!(
                    "its {name:?} is longer than {MAX_NAME_BYTES} bytes"
                ));
            }
            Ok(Some(text))
        };
        let key = template("key")?.ok_or("it has no \"key\"")?;
        let url = template("url")?.ok_or("it has no \"url\"")?;
        let range = match (template("offset")?, template("length")?) {
            (Some(offset), Some(length)) => Some((offset, length)),
            (None, None) => None,
            _ => return Err("it has one of \"offset\" and \"length\" without the other".into()),
        };
        let dimensions = match field("dimensions").and_then(|d| raw::object(d, MAX_GEN_DIMENSIONS))
        {
            Some(Bounded::Within(dimensions)) if !dimensions.is_empty() => dimensions,
            _ => {
                return Err(format!(
                    "its \"dimensions\" must be an object of 1 to {MAX_GEN_DIMENSIONS} dimensions"
                ))
            }
        };
        let mut names = Vec::new();
        let mut values = Vec::new();
        for (name, value) in dimensions {
            if templates.contains_key(&name) {
                return Err(format!(
                    "dimension {} has the name of a template",
                    shown(&name)
                ));
            }
            values.push(Dimension::parse(&name, value)?);
            names.push(name);
        }
        let count = values
            .iter()
            .try_fold(1u64, |count, d| count.checked_mul(d.len()))
            .filter(|&count| count <= MAX_REFERENCES as u64)
            .ok_or_else(|| {
                format!(
                    "it makes more references than the {MAX_REFERENCES} a reference file may \
                     hold"
                )
            })?;
        Ok(GenEntry {
            key,
            url,
            range,
            names,
            dimensions: values,
            count,
        })
    }

    /// Gives `add` what each combination of this entry makes, in order; `rendered` counts
    /// the bytes rendered so far, refused past [`MAX_RENDERED_BYTES`].
    pub fn expand(
        &self,
        templates: &HashMap<String, String>,
        rendered: &mut u64,
        mut add: impl FnMut(Made) -> Result<()>,
    ) -> Result<()> {
        let mut at = vec![0u64; self.dimensions.len()];
        for _ in 0..self.count {
            let variables: Vec<(&str, i64)> = self
                .names
                .iter()
                .zip(&self.dimensions)
                .zip(&at)
                .map(|((name, dimension), &i)| (name.as_str(), dimension.get(i)))
                .collect();
            let scope = Scope {
                templates,
                variables: &variables,
            };
            let mut rendered_as = |what: &str, text: &str| -> Result<String> {
                let value = render(text, &scope, MAX_NAME_BYTES).map_err(|m| {
                    let text = if what == "url" {
                        shown_url(text)
                    } else {
                        shown(text)
                    };
                    metadata(format!("its {what} {text}: {m}"))
                })?;
                *rendered += value.len() as u64;
                if *rendered > MAX_RENDERED_BYTES {
                    return Err(metadata(format!(
                        "its gen entries render more than {MAX_RENDERED_BYTES} bytes"
                    )));
                }
                Ok(value)
            };
            let key = rendered_as("key", &self.key)?;
            let url = rendered_as("url", &self.url)?;
            let range = match &self.range {
                None => None,
                Some((offset, length)) => {
                    let mut number = |what: &str, text: &str| {
                        let value = rendered_as(what, text)?;
                        value.trim().parse::<u64>().map_err(|_| {
                            metadata(format!(
                                "its {what} renders as {}, not a byte count",
                                shown(&value)
                            ))
                        })
                    };
                    Some((number("offset", offset)?, number("length", length)?))
                }
            };
            add((key, url, range))?;
            // The next combination: the last dimension varies fastest.
            for (i, dimension) in self.dimensions.iter().enumerate().rev() {
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

/// The values a variable of a `gen` entry takes.
enum Dimension {
    /// `start`, `start + step`, ... before `stop`, as Python's `range`: `len` values.
    Range { start: i64, step: i64, len: u64 },
    /// The values listed.
    List(Vec<i64>),
}

impl Dimension {
    /// The dimension `name` written as `raw`.
    fn parse(name: &str, raw: &RawValue) -> std::result::Result<Self, String> {
        let bad = || {
            format!(
                "dimension {} must be {{\"start\", \"stop\", \"step\"}} or a list of integers",
                shown(name)
            )
        };
        if let Some(items) = raw::list(raw, MAX_REFERENCES) {
            let Bounded::Within(items) = items else {
                return Err(format!(
                    "dimension {} lists more than {MAX_REFERENCES} values",
                    shown(name)
                ));
            };
            return items
                .into_iter()
                .map(|v| raw::integer::<i64>(v).ok_or_else(bad))
                .collect::<std::result::Result<_, _>>()
                .map(Dimension::List);
        }
        let Some(Bounded::Within(fields)) = raw::object(raw, 3) else {
            return Err(bad());
        };
        if let Some((other, _)) = fields
            .iter()
            .find(|(k, _)| !["start", "stop", "step"].contains(&k.as_str()))
        {
            return Err(format!(
                "dimension {} has an unknown field {}",
                shown(name),
                shown(other)
            ));
        }
        let field =
            |field: &str, default: Option<i64>| match fields.iter().find(|(k, _)| k == field) {
                None => default.ok_or_else(bad),
                Some((_, v)) => raw::integer::<i64>(v).ok_or_else(bad),
            };
        let (start, stop, step) = (
            field("start", Some(0))?,
            field("stop", None)?,
            field("step", Some(1))?,
        );
        if step == 0 {
            return Err(format!("dimension {} has a step of 0", shown(name)));
        }
        let (start_wide, stop_wide, step_wide) =
            (i128::from(start), i128::from(stop), i128::from(step));
        let span = if step > 0 {
            stop_wide - start_wide
        } else {
            start_wide - stop_wide
        };
        // Up to 2^64 values: a count past u64::MAX saturates (and is refused as too many).
        let len = if span <= 0 {
            0
        } else {
            (span + step_wide.abs() - 1) / step_wide.abs()
        };
        Ok(Dimension::Range {
            start,
            step,
            len: u64::try_from(len).unwrap_or(u64::MAX),
        })
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
