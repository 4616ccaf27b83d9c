//! Attributes as typed values (strings, numbers and lists of them) rather than JSON text:
//! the library writes the JSON, and a read names the attribute when its stored type does
//! not fit the one asked for.
//!
//! A float32 is written as the shortest decimal that reads back as the same float32
//! (`0.1`, not `0.10000000149011612`), so every reader (which sees a double) gets the value
//! the writer meant, and reading it back as float32 gives the float exactly. No type record
//! is kept beside the value: a float32 reads back as float64 in readers that only see JSON.
//! NaN and the infinities are written as the bare tokens `NaN`, `Infinity` and `-Infinity`,
//! as Python's `json` writes them (see [`crate::meta::json`]).

use super::Node;
use crate::error::{Error, Result};
use crate::meta::json::{as_non_finite, non_finite};
use serde_json::{Number, Value};

/// What an attribute's JSON value holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrKind {
    /// A string.
    String,
    /// An integer (a JSON number without fraction or exponent).
    Integer,
    /// Any other number.
    Float,
    /// A non-empty list of strings.
    Strings,
    /// A non-empty list of integers.
    Integers,
    /// A non-empty list of numbers, some not integers.
    Floats,
    /// Anything else: null, a bool, an object, an empty or mixed list.
    Other,
}

impl AttrKind {
    /// The kind of `value`, and its number of items (1 for a scalar, the length of a list).
    pub fn of(value: &Value) -> (AttrKind, usize) {
        let scalar = |v: &Value| match v {
            Value::String(_) if as_non_finite(v).is_some() => AttrKind::Float,
            Value::String(_) => AttrKind::String,
            Value::Number(n) if n.is_f64() => AttrKind::Float,
            Value::Number(_) => AttrKind::Integer,
            _ => AttrKind::Other,
        };
        let Value::Array(items) = value else {
            return (scalar(value), 1);
        };
        let kinds: Vec<AttrKind> = items.iter().map(scalar).collect();
        let kind = if kinds.is_empty() || kinds.contains(&AttrKind::Other) {
            AttrKind::Other
        } else if kinds.iter().all(|k| *k == AttrKind::String) {
            AttrKind::Strings
        } else if kinds.contains(&AttrKind::String) {
            AttrKind::Other
        } else if kinds.contains(&AttrKind::Float) {
            AttrKind::Floats
        } else {
            AttrKind::Integers
        };
        (kind, items.len())
    }
}

/// A type an attribute can be set from and read as.
pub trait AttrValue: Sized {
    /// The JSON written for the value.
    fn to_json(&self) -> Result<Value>;
    /// The value of attribute `key` (named in errors) holding `json`.
    fn from_json(key: &str, json: &Value) -> Result<Self>;
}

/// The refusal of attribute `key` holding `json` read as `wanted`.
fn mismatch(key: &str, json: &Value, wanted: &str) -> Error {
    let held = match AttrKind::of(json).0 {
        AttrKind::String => "a string",
        AttrKind::Integer => "an integer",
        AttrKind::Float => "a float",
        AttrKind::Strings => "a list of strings",
        AttrKind::Integers => "a list of integers",
        AttrKind::Floats => "a list of floats",
        AttrKind::Other => "neither a string, a number nor a list of them",
    };
    Error::DtypeMismatch(format!("attribute {key:?} is {held}, not {wanted}"))
}

impl AttrValue for String {
    fn to_json(&self) -> Result<Value> {
        let value = Value::String(self.clone());
        if as_non_finite(&value).is_some() {
            return Err(Error::InvalidArg(
                "U+F8FF followed by NaN or Infinity is how non-finite floats are kept: \
                 not a string value"
                    .into(),
            ));
        }
        Ok(value)
    }
    fn from_json(key: &str, json: &Value) -> Result<Self> {
        match json {
            Value::String(s) if as_non_finite(json).is_none() => Ok(s.clone()),
            _ => Err(mismatch(key, json, "a string")),
        }
    }
}

macro_rules! integer_attr {
    ($($t:ty),*) => {$(
        impl AttrValue for $t {
            fn to_json(&self) -> Result<Value> {
                Ok(Value::from(*self))
            }
            fn from_json(key: &str, json: &Value) -> Result<Self> {
                let Value::Number(n) = json else {
                    let wanted = match as_non_finite(json) {
                        Some(_) => concat!("an integer (", stringify!($t), ")"),
                        None => "a number",
                    };
                    return Err(mismatch(key, json, wanted));
                };
                if n.is_f64() {
                    return Err(mismatch(key, json, concat!("an integer (", stringify!($t), ")")));
                }
                n.as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
                    .and_then(|v| <$t>::try_from(v).ok())
                    .ok_or_else(|| {
                        Error::Range(format!(
                            "attribute {key:?} ({n}) does not fit in {}",
                            stringify!($t)
                        ))
                    })
            }
        }
    )*};
}
integer_attr!(i32, i64, u64);

macro_rules! float_attr {
    ($($t:ty),*) => {$(
        impl AttrValue for $t {
            fn to_json(&self) -> Result<Value> {
                if let Some(token) = non_finite(*self as f64) {
                    return Ok(token);
                }
                // Rust prints the shortest decimal that reads back as the same value of
                // this type; JSON keeps that decimal.
                let shortest: f64 = self.to_string().parse().map_err(|_| {
                    Error::Internal(format!("{self} does not print as a number"))
                })?;
                Number::from_f64(shortest).map(Value::Number).ok_or_else(|| {
                    Error::Internal(format!("{self} has no JSON number"))
                })
            }
            fn from_json(key: &str, json: &Value) -> Result<Self> {
                if let Some(v) = as_non_finite(json) {
                    return Ok(v as $t);
                }
                let Value::Number(n) = json else {
                    return Err(mismatch(key, json, "a number"));
                };
                let v = n.as_f64().ok_or_else(|| mismatch(key, json, "a number"))?;
                let c = v as $t;
                if c.is_infinite() {
                    return Err(Error::Range(format!(
                        "attribute {key:?} ({n}) does not fit in {}",
                        stringify!($t)
                    )));
                }
                Ok(c)
            }
        }
    )*};
}
float_attr!(f32, f64);

impl<T: AttrValue> AttrValue for Vec<T> {
    fn to_json(&self) -> Result<Value> {
        let mut items = Vec::new();
        items
            .try_reserve(self.len())
            .map_err(|_| crate::error::no_memory(self.len(), "attribute items"))?;
        for item in self {
            items.push(item.to_json()?);
        }
        Ok(Value::Array(items))
    }
    fn from_json(key: &str, json: &Value) -> Result<Self> {
        let Value::Array(items) = json else {
            return Err(mismatch(key, json, "a list"));
        };
        let mut values = Vec::new();
        values
            .try_reserve(items.len())
            .map_err(|_| crate::error::no_memory(items.len(), "attribute items"))?;
        for (i, item) in items.iter().enumerate() {
            values.push(T::from_json(&format!("{key}[{i}]"), item)?);
        }
        Ok(values)
    }
}

/// The value of attribute `key` of `node`; `Error::NotFound` when absent.
pub fn get_json(node: &dyn Node, key: &str) -> Result<Value> {
    node.attributes()?
        .shift_remove(key)
        .ok_or_else(|| Error::NotFound(format!("no attribute {key:?}")))
}

/// Attribute `key` of `node` as `T`; a stored type that does not fit is
/// `Error::DtypeMismatch`, a number out of `T`'s range `Error::Range`, both naming it.
pub fn get<T: AttrValue>(node: &dyn Node, key: &str) -> Result<T> {
    T::from_json(key, &get_json(node, key)?)
}

/// Sets attribute `key` of `node` to `value`, keeping the others.
pub fn set<T: AttrValue>(node: &dyn Node, key: &str, value: &T) -> Result<()> {
    node.set_attribute(key, value.to_json()?)
}

/// The kind of attribute `key` of `node` and its number of items.
pub fn kind(node: &dyn Node, key: &str) -> Result<(AttrKind, usize)> {
    Ok(AttrKind::of(&get_json(node, key)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_are_written_as_their_shortest_decimal() {
        for (v, text) in [
            (0.1f32, "0.1"),
            (1.0e-7, "1e-7"),
            (3.4028235e38, "3.4028235e+38"),
        ] {
            let j = v.to_json().unwrap();
            assert_eq!(crate::meta::json::to_compact(&j), text);
            assert_eq!(f32::from_json("k", &j).unwrap().to_bits(), v.to_bits());
        }
        assert_eq!(0.1f64.to_json().unwrap(), json!(0.1));
        // Non-finite floats are the bare tokens Python's json writes.
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let j = v.to_json().unwrap();
            assert_eq!(AttrKind::of(&j), (AttrKind::Float, 1));
            let back = f64::from_json("k", &j).unwrap();
            assert!(back.to_bits() == v.to_bits() || (v.is_nan() && back.is_nan()));
            assert!(matches!(
                String::from_json("k", &j),
                Err(Error::DtypeMismatch(_))
            ));
        }
        let text = crate::meta::json::to_compact(&vec![f32::NEG_INFINITY].to_json().unwrap());
        assert_eq!(text, "[-Infinity]");
        let marker = crate::meta::json::as_non_finite;
        let parsed = crate::meta::json::parse_str("[NaN]").unwrap();
        assert!(marker(&parsed[0]).unwrap().is_nan());
        assert!(matches!(
            String::from_json("k", &parsed[0]),
            Err(Error::DtypeMismatch(m)) if m.contains("is a float")
        ));
        assert!(matches!(
            i64::from_json("k", &parsed[0]),
            Err(Error::DtypeMismatch(m)) if m.contains("is a float")
        ));
        assert!(matches!(
            "\u{F8FF}NaN".to_string().to_json(),
            Err(Error::InvalidArg(_))
        ));
    }

    #[test]
    fn reads_refuse_what_does_not_fit() {
        let cases: Vec<(Value, &str, std::result::Result<String, &str>)> = vec![
            (json!("K"), "string", Ok("K".into())),
            (
                json!("K"),
                "f64",
                Err("attribute \"k\" is a string, not a number"),
            ),
            (
                json!(1.5),
                "i64",
                Err("attribute \"k\" is a float, not an integer (i64)"),
            ),
            (json!(3), "f64", Ok("3".into())),
            (
                json!(3),
                "string",
                Err("attribute \"k\" is an integer, not a string"),
            ),
            (
                json!(3000000000u64),
                "i32",
                Err("attribute \"k\" (3000000000) does not fit in i32"),
            ),
            (json!(u64::MAX), "i64", Err("does not fit in i64")),
            (json!(u64::MAX), "u64", Ok(u64::MAX.to_string())),
            (
                json!(1e300),
                "f32",
                Err("attribute \"k\" (1e+300) does not fit in f32"),
            ),
            (json!([1, 2.5]), "f64s", Ok("[1.0, 2.5]".into())),
            (
                json!([1, "a"]),
                "f64s",
                Err("attribute \"k[1]\" is a string, not a number"),
            ),
            (
                json!({"a": 1}),
                "string",
                Err("is neither a string, a number nor a list"),
            ),
            (json!(null), "f64", Err("is neither")),
        ];
        for (value, as_type, want) in cases {
            let got = match as_type {
                "string" => String::from_json("k", &value),
                "f64" => f64::from_json("k", &value).map(|v| v.to_string()),
                "f32" => f32::from_json("k", &value).map(|v| v.to_string()),
                "i64" => i64::from_json("k", &value).map(|v| v.to_string()),
                "i32" => i32::from_json("k", &value).map(|v| v.to_string()),
                "u64" => u64::from_json("k", &value).map(|v| v.to_string()),
                _ => Vec::<f64>::from_json("k", &value).map(|v| format!("{v:?}")),
            };
            match (&want, &got) {
                (Ok(w), Ok(g)) => assert_eq!(w, g, "{value} as {as_type}"),
                (Err(w), Err(e)) => assert!(e.to_string().contains(w), "{value}: {e}"),
                _ => panic!("{value} as {as_type}: {got:?}, expected {want:?}"),
            }
        }
    }

    #[test]
    fn kinds() {
        let cases = [
            (json!("x"), AttrKind::String, 1),
            (json!(-4), AttrKind::Integer, 1),
            (json!(0.5), AttrKind::Float, 1),
            (json!(["a", "b"]), AttrKind::Strings, 2),
            (json!([1, 2, 3]), AttrKind::Integers, 3),
            (json!([1, 2.5]), AttrKind::Floats, 2),
            (json!([]), AttrKind::Other, 0),
            (json!([1, "a"]), AttrKind::Other, 2),
            (json!(true), AttrKind::Other, 1),
            (json!({"a": 1}), AttrKind::Other, 1),
        ];
        for (value, kind, n) in cases {
            assert_eq!(AttrKind::of(&value), (kind, n), "{value}");
        }
    }
}
