//! NCZarr's own keys: netCDF-C writes Zarr v2 stores with `_nczarr_superblock` and
//! `_nczarr_group` (the group's dimensions and member order) in `.zgroup`, `_nczarr_array`
//! (the dimensions' paths, `dimrefs`) in `.zarray` and `_nczarr_attr` (the attributes'
//! netCDF types) in `.zattrs`: in capitals up to netCDF-C 4.9.0, in lower case after it,
//! and later versions keep them all in `.zattrs`. They describe the netCDF model of the
//! store, not attributes anyone set: zarrtool shows none of them as attributes and copies
//! none of them.

use serde_json::{Map, Value};

/// Whether `key` is one of NCZarr's own keys (`_nczarr_…`, in any case).
pub fn is_internal(key: &str) -> bool {
    key.get(..8)
        .is_some_and(|head| head.eq_ignore_ascii_case("_nczarr_"))
}

/// `attributes` without NCZarr's own keys.
pub fn user_attributes(mut attributes: Map<String, Value>) -> Map<String, Value> {
    attributes.retain(|key, _| !is_internal(key));
    attributes
}

/// NCZarr's entry `_nczarr_<name>` (in either case) of a metadata document or attributes.
pub fn entry<'a>(document: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    document
        .iter()
        .find(|(key, _)| is_internal(key) && key[8..].eq_ignore_ascii_case(name))
        .map(|(_, value)| value)
}

/// The netCDF types NCZarr recorded for a node's attributes (`_nczarr_attr.types`): the
/// attribute's name and its numpy type string (`<f4`, `<U1` for text).
pub fn attribute_types(attributes: &Map<String, Value>) -> Option<&Map<String, Value>> {
    entry(attributes, "attr")?.get("types")?.as_object()
}

/// The names of an array's dimensions from NCZarr's `dimrefs` (the last part of each
/// path: `/grid/lat` is `lat`), looked for in the array document and its attributes; an
/// empty list for a scalar. `None` when the array has no such entry.
pub fn dimension_names(
    document: &Map<String, Value>,
    attributes: &Map<String, Value>,
) -> Option<Vec<String>> {
    let array = entry(document, "array").or_else(|| entry(attributes, "array"))?;
    let refs = array.get("dimrefs")?.as_array()?;
    refs.iter()
        .map(|r| {
            let path = r.as_str()?;
            Some(path.rsplit('/').next().unwrap_or(path).to_string())
        })
        .collect()
}

/// What NCZarr's `_nczarr_group` says of a group: the dimensions it defines (name and
/// length, in their order) and its variables' and subgroups' names in creation order.
#[derive(Debug, Default)]
pub struct GroupEntry {
    /// The dimensions defined in the group.
    pub dims: Vec<(String, u64)>,
    /// Member names (variables, then groups) in the order netCDF created them.
    pub order: Vec<String>,
}

/// The group entry of a `.zgroup` document or the group's attributes, if there is one.
pub fn group_entry(
    document: &Map<String, Value>,
    attributes: &Map<String, Value>,
) -> Option<GroupEntry> {
    let group = entry(document, "group").or_else(|| entry(attributes, "group"))?;
    let mut out = GroupEntry::default();
    if let Some(dims) = group.get("dims").and_then(Value::as_object) {
        for (name, size) in dims {
            // A length, or (later versions) an object holding it as "size".
            let len = size
                .as_u64()
                .or_else(|| size.get("size").and_then(Value::as_u64));
            if let Some(len) = len {
                out.dims.push((name.clone(), len));
            }
        }
    }
    for list in ["vars", "groups"] {
        let names = group.get(list).and_then(Value::as_array);
        out.order.extend(
            names
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str().map(String::from)),
        );
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn finds_entries_in_either_case_and_place() {
        let attrs = map(
            json!({"units": "K", "_NCZARR_ATTR": {"types": {"units": "<U1"}},
                              "_nczarr_array": {"dimrefs": ["/g/lat", "/x"]}}),
        );
        assert_eq!(attribute_types(&attrs).unwrap()["units"], json!("<U1"));
        assert_eq!(
            dimension_names(&Map::new(), &attrs),
            Some(vec!["lat".to_string(), "x".to_string()])
        );
        assert_eq!(
            user_attributes(attrs).keys().collect::<Vec<_>>(),
            vec!["units"]
        );
        assert!(!is_internal("_nczarr"));
        assert!(!is_internal("_NCZ"));
        assert!(is_internal("_NcZarr_x"));
        let doc = map(json!({"_NCZARR_GROUP": {"dims": {"t": 2, "y": {"size": 3}},
                             "vars": ["b", "a"], "groups": ["g"]}}));
        let g = group_entry(&doc, &Map::new()).unwrap();
        assert_eq!(g.dims, vec![("t".to_string(), 2), ("y".to_string(), 3)]);
        assert_eq!(g.order, vec!["b", "a", "g"]);
        assert!(group_entry(&Map::new(), &Map::new()).is_none());
    }
}
