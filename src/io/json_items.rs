//! String chunks in numcodecs' `json2` object codec form: the chunk's items as one JSON
//! list nested by the chunk's shape (C order of the nesting), followed by `"|O"` and the
//! shape; a 0-d chunk is `[item, "|O", []]`. zarr-python 2 reads the nested items flat in C
//! order, as the item sequence of the chunk (the array's `order` then applies), and so do we.

use crate::error::{Error, Result};
use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::ops::Range;

/// The items of a `json2` chunk of `shape`, as UTF-8 bytes back to back and the range of
/// each. A `null` item is the empty string (as numcodecs' `vlen-utf8` stores `None`) and an
/// integer its decimal text (zarr-python 2 fills unwritten items with the fill value, by
/// default `0`, which a string fill value `0` also reads as); any other item is an error.
/// The data is read as it is parsed, never held as a JSON tree, so memory stays at the
/// size of the items whatever the data holds.
pub fn decode(data: &[u8], shape: &[u64]) -> Result<(Vec<u8>, Vec<Range<usize>>)> {
    let mut items = Items {
        shape,
        bytes: Vec::new(),
        ranges: Vec::new(),
    };
    let mut de = serde_json::Deserializer::from_slice(data);
    (&mut items)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| Error::Codec(format!("json2 data: {e}")))?;
    Ok((items.bytes, items.ranges))
}

/// The items read so far from a chunk of `shape`.
struct Items<'a> {
    shape: &'a [u64],
    bytes: Vec<u8>,
    ranges: Vec<Range<usize>>,
}

impl<'de> DeserializeSeed<'de> for &mut Items<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(Chunk(self))
    }
}

/// The whole chunk: the items (nested by the shape; one item when 0-d), `"|O"`, the shape.
struct Chunk<'a, 'b>(&'a mut Items<'b>);

impl<'de> Visitor<'de> for Chunk<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a list of the items, \"|O\" and the shape")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let items = self.0;
        let shape = items.shape;
        match shape.split_first() {
            None => {
                seq.next_element_seed(Leaf(items))?
                    .ok_or_else(|| A::Error::custom("a 0-d chunk without its item"))?;
            }
            Some((&len, _)) => {
                for _ in 0..len {
                    seq.next_element_seed(Level { items, depth: 1 })?
                        .ok_or_else(|| A::Error::custom("fewer items than the chunk's shape"))?;
                }
            }
        }
        let mismatch = || {
            A::Error::custom(format!(
            "the items do not match the chunk's shape {shape:?} followed by \"|O\" and the shape"
        ))
        };
        let dtype: Value = seq.next_element()?.ok_or_else(mismatch)?;
        if dtype.as_str() != Some("|O") {
            return Err(mismatch());
        }
        let stored: Value = seq.next_element()?.ok_or_else(mismatch)?;
        let expected: Vec<Value> = shape.iter().map(|&d| d.into()).collect();
        if stored != Value::Array(expected) || seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(mismatch());
        }
        Ok(())
    }
}

/// A list at `depth` (1 is the outermost) of the nesting.
struct Level<'a, 'b> {
    items: &'a mut Items<'b>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Level<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        if self.depth == self.items.shape.len() {
            return Leaf(self.items).deserialize(d);
        }
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Level<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let len = self.items.shape[self.depth];
        write!(f, "a list of {len} items (the chunk's shape)")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let len = self.items.shape[self.depth];
        for i in 0..len {
            let level = Level {
                items: &mut *self.items,
                depth: self.depth + 1,
            };
            if seq.next_element_seed(level)?.is_none() {
                return Err(A::Error::custom(format!(
                    "a list of {i} items where the chunk's shape has {len}"
                )));
            }
        }
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(A::Error::custom(format!(
                "a list of more than {len} items where the chunk's shape has {len}"
            )));
        }
        Ok(())
    }
}

/// One item: a string, `null` or an integer.
struct Leaf<'a, 'b>(&'a mut Items<'b>);

impl Leaf<'_, '_> {
    fn push(self, text: &[u8]) {
        let start = self.0.bytes.len();
        self.0.bytes.extend_from_slice(text);
        self.0.ranges.push(start..self.0.bytes.len());
    }
}

impl<'de> DeserializeSeed<'de> for Leaf<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Leaf<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "item {} as a string, null or an integer (json2 object arrays are read when they \
             hold strings)",
            self.0.ranges.len()
        )
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<(), E> {
        self.push(v.as_bytes());
        Ok(())
    }
    fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<(), E> {
        self.push(b"");
        Ok(())
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<(), E> {
        self.push(v.to_string().as_bytes());
        Ok(())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<(), E> {
        self.push(v.to_string().as_bytes());
        Ok(())
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
        let mismatch = "do not match the chunk's shape";
        for (data, shape, says) in [
            (&br#"["a","b","|O",[3]]"#[..], &[3u64][..], mismatch),
            (br#"["a",1.5,"|O",[2]]"#, &[2], "item 1 as a string"),
            (br#"["a",[1],"|O",[2]]"#, &[2], "item 1 as a string"),
            (br#"["a",true,"|O",[2]]"#, &[2], "item 1 as a string"),
            (br#"["a","b","|O",[2,1]]"#, &[2], mismatch),
            (br#"["a","b","<i8",[2]]"#, &[2], mismatch),
            (br#"["a","b","|O",[2],"c"]"#, &[2], mismatch),
            (br#"{"a": 1}"#, &[1], "expected a list of the items"),
            (b"[\"a\", ", &[1], "json2 data"),
            (br#"["a","b","|O",[2]] x"#, &[2], "trailing"),
            (
                br#"[["a"],"b","|O",[2,1]]"#,
                &[2, 1],
                "expected a list of 1 items",
            ),
            (
                br#"[["a"],["b","c"],"|O",[2,1]]"#,
                &[2, 1],
                "more than 1 items",
            ),
            (br#"[[],["b"],"|O",[2,1]]"#, &[2, 1], "a list of 0 items"),
            (br#"["a","b","|O",[]]"#, &[], mismatch),
            (br#"["|O",[]]"#, &[], mismatch),
        ] {
            let err = decode(data, shape).unwrap_err().to_string();
            assert!(err.starts_with("codec error: json2 data: "), "{err}");
            assert!(err.contains(says), "{err} lacks {says}");
        }
    }
}
