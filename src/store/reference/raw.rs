//! Bounded reading of the parts of a reference file, kept as raw JSON text borrowed from
//! the file: a list or an object is read item by item and refused once it has more items
//! than its bound (the rest is skipped, not kept), so no part is ever built whole in
//! memory before it is checked.

use serde::de::{DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;
use std::marker::PhantomData;

/// The items of a list or an object within their bound, or `Over` when there are more.
pub enum Bounded<T> {
    /// Every item, in order.
    Within(Vec<T>),
    /// More items than the bound.
    Over,
}

impl<T> Bounded<T> {
    /// The items, or the error `over()` when there are more than the bound.
    pub fn or_else<E>(self, over: impl FnOnce() -> E) -> Result<Vec<T>, E> {
        match self {
            Bounded::Within(items) => Ok(items),
            Bounded::Over => Err(over()),
        }
    }
}

/// The items of `raw` if it is a JSON list: at most `max`.
pub fn list(raw: &RawValue, max: usize) -> Option<Bounded<&RawValue>> {
    if !raw.get().starts_with('[') {
        return None;
    }
    let visitor = Items::<&RawValue> {
        max,
        item: PhantomData,
    };
    serde_json::Deserializer::from_str(raw.get())
        .deserialize_seq(visitor)
        .ok()
}

/// The names and values of `raw` if it is a JSON object: at most `max`.
pub fn object(raw: &RawValue, max: usize) -> Option<Bounded<(String, &RawValue)>> {
    if !raw.get().starts_with('{') {
        return None;
    }
    let visitor = Items::<(String, &RawValue)> {
        max,
        item: PhantomData,
    };
    serde_json::Deserializer::from_str(raw.get())
        .deserialize_map(visitor)
        .ok()
}

/// The text of `raw` if it is a JSON string.
pub fn text(raw: &RawValue) -> Option<String> {
    if !raw.get().starts_with('"') {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// The integer `raw` if it is one that fits `T`.
pub fn integer<T: DeserializeOwned>(raw: &RawValue) -> Option<T> {
    serde_json::from_str(raw.get()).ok()
}

/// Reads the items of a list or an object, at most `max` of them.
struct Items<T> {
    max: usize,
    item: PhantomData<T>,
}

impl<'de> Visitor<'de> for Items<&'de RawValue> {
    type Value = Bounded<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            if items.len() == self.max {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                return Ok(Bounded::Over);
            }
            items.push(item);
        }
        Ok(Bounded::Within(items))
    }
}

impl<'de> Visitor<'de> for Items<(String, &'de RawValue)> {
    type Value = Bounded<(String, &'de RawValue)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            if items.len() == self.max {
                map.next_value::<IgnoredAny>()?;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                return Ok(Bounded::Over);
            }
            items.push((name, map.next_value::<&'de RawValue>()?));
        }
        Ok(Bounded::Within(items))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn lists_and_objects_are_read_within_their_bound() {
        let long = format!("[{}0]", "0,".repeat(100_000));
        assert!(matches!(list(raw(&long), 3), Some(Bounded::Over)));
        let Some(Bounded::Within(items)) = list(raw("[1, \"a\", {\"b\": 2}]"), 3) else {
            panic!("a short list");
        };
        let items: Vec<&str> = items.iter().map(|i| i.get()).collect();
        assert_eq!(items, ["1", "\"a\"", "{\"b\": 2}"]);
        assert!(list(raw("{}"), 3).is_none());
        assert!(matches!(
            object(raw("{\"a\": 1, \"b\": [2], \"c\": 3}"), 2),
            Some(Bounded::Over)
        ));
        let Some(Bounded::Within(fields)) = object(raw("{\"a\": 1}"), 2) else {
            panic!("a short object");
        };
        assert_eq!((fields[0].0.as_str(), fields[0].1.get()), ("a", "1"));
        assert_eq!(text(raw("\"x\\n\"")).as_deref(), Some("x\n"));
        assert_eq!(text(raw("1")), None);
        assert_eq!(integer::<u64>(raw("7")), Some(7));
        assert_eq!(integer::<u64>(raw("-7")), None);
        assert_eq!(integer::<u64>(raw("1e3")), None);
    }
}
