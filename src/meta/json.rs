//! JSON documents as Zarr implementations write them. Python's `json` writes non-finite
//! floats as the bare tokens `NaN`, `Infinity` and `-Infinity` (zarr-python does so for
//! float attributes), which strict JSON lacks: they are read into marker strings and written
//! back as the same bare tokens, so such documents round-trip exactly. Integers of any size
//! are kept exactly (serde_json's arbitrary precision).

use crate::error::Error;
use serde::Serialize;
use serde_json::Value;
use std::io::Write;

/// Marker prefix of a non-finite float read from a bare token (a private-use character,
/// which no real attribute starts with).
const MARK: char = '\u{F8FF}';
const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];

/// Parses a document, accepting bare `NaN`, `Infinity` and `-Infinity` outside strings.
pub fn parse(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => return serde_json::from_slice(bytes),
    };
    if !TOKENS.iter().any(|t| text.contains(t)) {
        return serde_json::from_str(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if let Some(token) = TOKENS.iter().find(|t| rest.starts_with(**t)) {
            out.push('"');
            out.push(MARK);
            out.push_str(token);
            out.push('"');
            rest = &rest[token.len()..];
            continue;
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    serde_json::from_str(&out)
}

/// Parses a document given as text.
pub fn parse_str(text: &str) -> Result<Value, serde_json::Error> {
    parse(text.as_bytes())
}

/// Puts marker strings back as bare tokens where they are values; a key that looks like
/// one (a name is always a string) stays a string.
fn unmark(text: String) -> String {
    if !text.contains(MARK) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    'scan: while let Some(at) = rest.find(&format!("\"{MARK}")) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        for token in TOKENS {
            let quoted = format!("\"{MARK}{token}\"");
            if let Some(after) = rest.strip_prefix(quoted.as_str()) {
                if !after.trim_start().starts_with(':') {
                    out.push_str(token);
                    rest = after;
                    continue 'scan;
                }
            }
        }
        out.push('"');
        rest = &rest[1..];
    }
    out.push_str(rest);
    out
}

/// The value written as the bare token of a non-finite float (`NaN`, `Infinity`,
/// `-Infinity`); `None` for a finite one.
pub fn non_finite(x: f64) -> Option<Value> {
    let token = match x {
        _ if x.is_nan() => "NaN",
        f64::INFINITY => "Infinity",
        f64::NEG_INFINITY => "-Infinity",
        _ => return None,
    };
    Some(Value::String(format!("{MARK}{token}")))
}

/// The non-finite float a bare token was read as, if `value` is one.
pub fn as_non_finite(value: &Value) -> Option<f64> {
    match value.as_str()?.strip_prefix(MARK)? {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// Renders compactly (for the C API's outputs).
pub fn to_compact(value: &Value) -> String {
    unmark(value.to_string())
}

/// Renders with 4-space indentation, as zarr-python's `json.dumps(indent=4)`.
pub fn to_pretty(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    value
        .serialize(&mut ser)
        .expect("serialising a JSON value into memory cannot fail");
    unmark(String::from_utf8(out).expect("serde_json writes UTF-8")).into_bytes()
}

/// Renders compactly as [`to_compact`] does, the text allocated fallibly (a document may
/// hold a fill value of hundreds of MiB): [`Error::NoMemory`] naming `what` when it cannot
/// be had.
pub fn try_to_compact(value: &Value, what: &str) -> crate::error::Result<String> {
    let text = fallibly(value, serde_json::ser::CompactFormatter, what)?;
    Ok(unmark(
        String::from_utf8(text).expect("serde_json writes UTF-8"),
    ))
}

/// Renders as [`to_pretty`] does, the text allocated fallibly (see [`try_to_compact`]).
pub fn try_to_pretty(value: &Value, what: &str) -> crate::error::Result<Vec<u8>> {
    let formatter = || serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let text = fallibly(value, formatter(), what)?;
    Ok(unmark(String::from_utf8(text).expect("serde_json writes UTF-8")).into_bytes())
}

/// Serialises `value` with `formatter` into a buffer of exactly its length, reserved
/// fallibly after a first pass that only counts the bytes.
fn fallibly<F: serde_json::ser::Formatter + Clone>(
    value: &Value,
    formatter: F,
    what: &str,
) -> crate::error::Result<Vec<u8>> {
    let serialise = |out: &mut dyn Write, formatter: F| {
        let mut ser = serde_json::Serializer::with_formatter(out, formatter);
        value
            .serialize(&mut ser)
            .map_err(|e| Error::Internal(format!("serialising {what}: {e}")))
    };
    let mut counter = Counter(0);
    serialise(&mut counter, formatter.clone())?;
    let mut out = Vec::new();
    crate::error::try_reserve(&mut out, counter.0, what)?;
    serialise(&mut out, formatter)?;
    Ok(out)
}

/// A writer that keeps only the number of bytes written.
struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_tokens_and_huge_integers_round_trip() {
        let text = r#"{"a": NaN, "b": [Infinity, -Infinity], "s": "NaN Infinity \" NaN", "big": 123456789012345678901234567890, "neg": -1e400}"#;
        let value = parse(text.as_bytes()).unwrap();
        assert_eq!(value["s"], "NaN Infinity \" NaN");
        let compact = to_compact(&value);
        assert!(compact.contains(r#""a":NaN"#), "{compact}");
        assert!(compact.contains(r#"[Infinity,-Infinity]"#), "{compact}");
        assert!(
            compact.contains("123456789012345678901234567890"),
            "{compact}"
        );
        assert_eq!(parse(compact.as_bytes()).unwrap(), value);
        assert!(parse(b"{\"x\": NaNa}").is_err());
    }

    /// A key spelled as a marker stays a string: the document stays JSON that Python's
    /// `json` and zarr-python read.
    #[test]
    fn keys_that_look_like_markers_stay_strings() {
        let marker = non_finite(f64::NAN).unwrap();
        let key = marker.as_str().unwrap().to_string();
        let mut map = serde_json::Map::new();
        map.insert(key.clone(), marker.clone());
        map.insert("v".into(), marker);
        let value = Value::Object(map);
        for text in [
            to_compact(&value),
            String::from_utf8(to_pretty(&value)).unwrap(),
        ] {
            assert!(text.contains(&format!("\"{key}\"")), "{text}");
            assert!(text.contains(": NaN") || text.contains(":NaN"), "{text}");
            assert_eq!(parse(text.as_bytes()).unwrap(), value, "{text}");
        }
    }
}
