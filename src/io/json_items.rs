//! String chunks in numcodecs' `json2` object codec form: the chunk's items as one JSON
//! list nested by the chunk's shape (C order of the nesting), followed by `"|O"` and the
//! shape; a 0-d chunk is `[item, "|O", []]`. zarr-python 2 reads the nested items flat in C
//! order, as the item sequence of the chunk (the array's `order` then applies), and so do we.

use crate::error::{Error, Result};
use serde_json::Value;
use std::ops::Range;

/// The items of a `json2` chunk of `shape`, as UTF-8 bytes back to back and the range of
/// each. A `null` item is the empty string (as numcodecs' `vlen-utf8` stores `None`) and an
/// integer its decimal text (zarr-python 2 fills unwritten items with the fill value, by
/// default `0`, which a string fill value `0` also reads as); any other item is an error.
pub fn decode(data: &[u8], shape: &[u64]) -> Result<(Vec<u8>, Vec<Range<usize>>)> {
    let bad = |why: String| Error::Codec(format!("json2 data: {why}"));
    let value: Value = serde_json::from_slice(data).map_err(|e| bad(e.to_string()))?;
    let Value::Array(mut list) = value else {
        return Err(bad("not a JSON list".into()));
    };
    let stored_shape = list.pop();
    let stored_dtype = list.pop();
    let expected: Vec<Value> = shape.iter().map(|&d| d.into()).collect();
    if stored_shape != Some(Value::Array(expected)) {
        return Err(bad(format!(
            "the shape it ends with is {}, the chunk's is {shape:?}",
            stored_shape.unwrap_or(Value::Null)
        )));
    }
    if stored_dtype.as_ref().and_then(Value::as_str) != Some("|O") {
        return Err(bad(format!(
            "its type is {}, not \"|O\"",
            stored_dtype.unwrap_or(Value::Null)
        )));
    }
    let mut leaves = Vec::new();
    if shape.is_empty() {
        match <[Value; 1]>::try_from(list) {
            Ok([item]) => leaves.push(item),
            Err(list) => return Err(bad(format!("a 0-d chunk holds {} items", list.len()))),
        }
    } else {
        flatten(Value::Array(list), shape, &mut leaves).map_err(bad)?;
    }
    let mut bytes = Vec::new();
    let mut ranges = Vec::with_capacity(leaves.len());
    for (i, leaf) in leaves.into_iter().enumerate() {
        let start = bytes.len();
        match leaf {
            Value::String(s) => bytes.extend_from_slice(s.as_bytes()),
            Value::Null => {}
            Value::Number(n) if n.is_i64() || n.is_u64() => {
                bytes.extend_from_slice(n.to_string().as_bytes())
            }
            other => {
                return Err(bad(format!(
                    "item {i} is {other}, not a string (json2 object arrays are read when \
                     they hold strings)"
                )))
            }
        }
        ranges.push(start..bytes.len());
    }
    Ok((bytes, ranges))
}

/// Appends the leaves of `value`, a list nested `shape.len()` deep with `shape[k]` entries at
/// depth `k`, in C order.
fn flatten(value: Value, shape: &[u64], out: &mut Vec<Value>) -> std::result::Result<(), String> {
    let Some((&len, inner)) = shape.split_first() else {
        out.push(value);
        return Ok(());
    };
    match value {
        Value::Array(list) if list.len() as u64 == len => {
            list.into_iter().try_for_each(|v| flatten(v, inner, out))
        }
        Value::Array(list) => Err(format!(
            "a list of {} items where the chunk's shape has {len}",
            list.len()
        )),
        other => Err(format!("{other} where a list of {len} items belongs")),
    }
}

/// Encodes `items` (UTF-8 strings, in the chunk's item order) as a `json2` chunk of `shape`.
pub fn encode<'a>(
    items: impl ExactSizeIterator<Item = &'a [u8]>,
    shape: &[u64],
) -> Result<Vec<u8>> {
    let mut leaves = items.map(|item| {
        std::str::from_utf8(item)
            .map(|s| Value::String(s.into()))
            .map_err(|e| Error::Codec(format!("json2: an item is not UTF-8 ({e})")))
    });
    let mut list = if shape.is_empty() {
        vec![leaves.next().transpose()?.unwrap_or(Value::Null)]
    } else {
        match nest(&mut leaves, shape)? {
            Value::Array(list) => list,
            _ => unreachable!("nest makes a list for a non-empty shape"),
        }
    };
    list.push("|O".into());
    list.push(shape.to_vec().into());
    serde_json::to_vec(&list).map_err(|e| Error::Codec(format!("json2: {e}")))
}

/// The next leaves of `leaves` nested by `shape`.
fn nest(leaves: &mut impl Iterator<Item = Result<Value>>, shape: &[u64]) -> Result<Value> {
    match shape.split_first() {
        None => leaves
            .next()
            .unwrap_or_else(|| Err(Error::Internal("json2: fewer items than the shape".into()))),
        Some((&len, inner)) => (0..len)
            .map(|_| nest(leaves, inner))
            .collect::<Result<Vec<_>>>()
            .map(Value::Array),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(ranges: &[Range<usize>], bytes: &[u8]) -> Vec<String> {
        ranges
            .iter()
            .map(|r| String::from_utf8(bytes[r.clone()].to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn numcodecs_json2_chunks_round_trip() {
        // What numcodecs.JSON().encode gives for a (2, 3) object chunk and a 0-d one.
        let stored = br#"[["a","b\u00e9",""],[null,"x y","\"q\""],[0,"z",-12],"|O",[3,3]]"#;
        let (bytes, ranges) = decode(stored, &[3, 3]).unwrap();
        assert_eq!(
            items(&ranges, &bytes),
            ["a", "bé", "", "", "x y", "\"q\"", "0", "z", "-12"]
        );
        let again = encode(ranges.iter().map(|r| &bytes[r.clone()]), &[3, 3]).unwrap();
        assert_eq!(
            String::from_utf8(again).unwrap(),
            r#"[["a","bé",""],["","x y","\"q\""],["0","z","-12"],"|O",[3,3]]"#
        );
        let (bytes, ranges) = decode(br#"["one","|O",[]]"#, &[]).unwrap();
        assert_eq!(items(&ranges, &bytes), ["one"]);
        assert_eq!(
            encode([b"one".as_slice()].into_iter(), &[]).unwrap(),
            br#"["one","|O",[]]"#
        );
    }

    #[test]
    fn malformed_json2_chunks_are_errors_naming_what_is_wrong() {
        for (data, shape, says) in [
            (
                &br#"["a","b","|O",[3]]"#[..],
                &[3u64][..],
                "a list of 2 items",
            ),
            (br#"["a",1.5,"|O",[2]]"#, &[2], "item 1 is 1.5"),
            (br#"["a",[1],"|O",[2]]"#, &[2], "item 1 is [1]"),
            (br#"["a","b","|O",[2,1]]"#, &[2], "shape"),
            (br#"["a","b","<i8",[2]]"#, &[2], "not \"|O\""),
            (br#"{"a": 1}"#, &[1], "not a JSON list"),
            (b"[\"a\", ", &[1], "json2 data"),
            (
                br#"[["a"],"b","|O",[2,1]]"#,
                &[2, 1],
                "where a list of 1 items belongs",
            ),
            (br#"["a","b","|O",[]]"#, &[], "a 0-d chunk holds 2 items"),
        ] {
            let err = decode(data, shape).unwrap_err().to_string();
            assert!(err.contains(says), "{err} lacks {says}");
        }
    }
}
