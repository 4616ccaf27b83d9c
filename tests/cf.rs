//! CF missing values and default fill values as xarray reads them: what the builder and
//! `Array::set_missing_value` write in each format, what `Array::missing_value` finds in
//! stores written by peers, the refusals (nothing written), and the defaults.

use serde_json::{json, Value};
use std::sync::Arc;
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode, Node};
use zarr::store::{MemoryStore, Store};
use zarr::Error;

fn doc(store: &MemoryStore, key: &str) -> Value {
    serde_json::from_slice(&store.get(key).unwrap().unwrap()).unwrap()
}

fn builder(dtype: &str, format: i32, shape: Vec<u64>) -> ArrayBuilder {
    let mut b = ArrayBuilder::new(shape, ElementType::Raw);
    b.dtype_name(dtype).unwrap().zarr_format(format).unwrap();
    b
}

/// Reads the whole (1-d) array in its own type, as f64 values.
fn read_all(a: &Array, n: u64) -> Vec<f64> {
    let elem = a.metadata().dtype.element_type();
    let size = a.metadata().item_size();
    let mut buf = vec![0u8; n as usize * size];
    a.read(&[0], &[n], elem, Order::C, &mut buf).unwrap();
    buf.chunks(size)
        .map(|c| match elem {
            ElementType::Float32 => f32::from_ne_bytes(c.try_into().unwrap()) as f64,
            ElementType::Float64 => f64::from_ne_bytes(c.try_into().unwrap()),
            ElementType::Int16 => i16::from_ne_bytes(c.try_into().unwrap()) as f64,
            ElementType::Int32 => i32::from_ne_bytes(c.try_into().unwrap()) as f64,
            ElementType::Int64 => i64::from_ne_bytes(c.try_into().unwrap()) as f64,
            ElementType::UInt8 => c[0] as f64,
            ElementType::UInt16 => u16::from_ne_bytes(c.try_into().unwrap()) as f64,
            other => panic!("no test conversion for {other:?}"),
        })
        .collect()
}

fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

#[test]
fn missing_values_are_written_as_xarray_and_netcdf_read_them() {
    // (type, missing value, v2 fill_value, v3 _FillValue attribute)
    let cases = [
        ("<f8", -9999.0, json!(-9999.0), json!("AAAAAICHw8A=")),
        ("<f4", -9999.0, json!(-9999.0), json!("AAAAAICHw8A=")),
        ("<f4", f64::NAN, json!("NaN"), json!("AAAAAAAA+H8=")),
        ("<f8", 1e30, json!(1e30), json!("6oygOVk+KUY=")),
        ("<i2", -9.0, json!(-9), json!(-9)),
        ("<i4", -2147483647.0, json!(-2147483647), json!(-2147483647)),
        (
            "<i8",
            -9.0e15,
            json!(-9000000000000000i64),
            json!(-9000000000000000i64),
        ),
        ("|u1", 255.0, json!(255), json!(255)),
        ("<u2", 0.0, json!(0), json!(0)),
    ];
    for (dtype, value, v2_fill, v3_attr) in cases {
        for format in [2, 3] {
            let store = Arc::new(MemoryStore::new());
            let mut b = builder(dtype, format, vec![4]);
            b.chunks(vec![2]).missing_value(value);
            let a = b.create(store.clone(), "v", Mode::Overwrite).unwrap();
            let what = format!("{dtype} {value} v{format}");
            if format == 2 {
                assert_eq!(doc(&store, "v/.zarray")["fill_value"], v2_fill, "{what}");
                // The attribute NCZarr reads, typed as the array is.
                let nczarr_type = dtype.replace('|', "<");
                assert_eq!(
                    doc(&store, "v/.zattrs"),
                    json!({"_FillValue": v2_fill,
                           "_NCZARR_ATTR": {"types": {"_FillValue": nczarr_type}}}),
                    "{what}"
                );
            } else {
                let meta = doc(&store, "v/zarr.json");
                assert_eq!(meta["attributes"]["_FillValue"], v3_attr, "{what}");
                assert_eq!(meta["fill_value"], v2_fill, "{what}");
            }
            let got = a.missing_value().unwrap().unwrap();
            assert!(same(got, value), "{what}: {got}");
            // Unwritten cells read as the missing value.
            assert!(read_all(&a, 4).iter().all(|&v| same(v, value)), "{what}");
            // Opened again, the query answers the same.
            let again = Array::open(store.clone(), "v", Mode::Read).unwrap();
            assert!(
                same(again.missing_value().unwrap().unwrap(), value),
                "{what}"
            );
        }
    }
}

#[test]
fn values_the_type_cannot_hold_are_refused_and_nothing_is_written() {
    let cases = [
        ("<i2", f64::NAN),
        ("<i2", 40000.0),
        ("<i4", 1.5),
        ("|u1", -1.0),
        ("<i8", 9.3e18),
        ("<u8", -1.0),
        ("<f4", 1e300),
        ("<f4", -1e39),
        ("|b1", 1.0),
        ("|S4", 0.0),
        ("<U4", 0.0),
        ("<M8[ns]", 0.0),
    ];
    for (dtype, value) in cases {
        for format in [2, 3] {
            let store = Arc::new(MemoryStore::new());
            let mut b = builder(dtype, format, vec![4]);
            b.missing_value(value);
            let err = b
                .create(store.clone(), "grid/t2m", Mode::Overwrite)
                .unwrap_err();
            assert!(
                matches!(err, Error::InvalidArg(_)),
                "{dtype} {value}: {err}"
            );
            assert!(err.to_string().contains("grid/t2m"), "{err}");
            assert!(store.list_prefix("").unwrap().is_empty(), "{dtype} {value}");
            // Setting it on an existing array changes nothing either.
            let a = builder(dtype, format, vec![4])
                .create(store.clone(), "x", Mode::Overwrite)
                .unwrap();
            let before: Vec<_> = ["x/.zarray", "x/.zattrs", "x/zarr.json"]
                .iter()
                .map(|k| store.get(k).unwrap())
                .collect();
            let err = a.set_missing_value(value).unwrap_err();
            assert!(err.to_string().contains("\"x\""), "{err}");
            let after: Vec<_> = ["x/.zarray", "x/.zattrs", "x/zarr.json"]
                .iter()
                .map(|k| store.get(k).unwrap())
                .collect();
            assert_eq!(before, after, "{dtype} {value} v{format}");
        }
    }
}

#[test]
fn set_missing_value_rewrites_fill_and_attribute() {
    for format in [2, 3] {
        let store = Arc::new(MemoryStore::new());
        let mut b = builder("<f4", format, vec![2]);
        let mut attrs = serde_json::Map::new();
        attrs.insert("units".into(), json!("K"));
        b.attributes(attrs);
        let a = b.create(store.clone(), "t", Mode::Overwrite).unwrap();
        a.set_missing_value(-9999.0).unwrap();
        assert_eq!(a.missing_value().unwrap(), Some(-9999.0));
        assert_eq!(read_all(&a, 2), vec![-9999.0, -9999.0]);
        let attrs = a.attributes().unwrap();
        assert_eq!(attrs["units"], json!("K"));
        match format {
            2 => {
                assert_eq!(attrs["_FillValue"], json!(-9999.0));
                assert_eq!(
                    attrs["_NCZARR_ATTR"],
                    json!({"types": {"_FillValue": "<f4"}})
                );
            }
            _ => assert_eq!(attrs["_FillValue"], json!("AAAAAICHw8A=")),
        }
        // A new missing value replaces both, NaN as NCZarr writes it.
        a.set_missing_value(f64::NAN).unwrap();
        assert!(a.missing_value().unwrap().unwrap().is_nan());
        let again = Array::open(store.clone(), "t", Mode::Read).unwrap();
        let attrs = again.attributes().unwrap();
        match format {
            2 => {
                assert_eq!(doc(&store, "t/.zarray")["fill_value"], json!("NaN"));
                assert_eq!(attrs["_FillValue"], json!("NaN"));
            }
            _ => assert_eq!(attrs["_FillValue"], json!("AAAAAAAA+H8=")),
        }
    }
    // A v2 `_FillValue` attribute that disagrees with the new fill value is replaced, and
    // NCZarr's other recorded types stay.
    let store = Arc::new(MemoryStore::new());
    let a = builder("<i4", 2, vec![2])
        .create(store.clone(), "n", Mode::Overwrite)
        .unwrap();
    a.set_attribute("_FillValue", json!(7)).unwrap();
    a.set_attribute("_NCZARR_ATTR", json!({"types": {"valid_min": "<i2"}}))
        .unwrap();
    assert_eq!(a.missing_value().unwrap(), Some(7.0));
    a.set_missing_value(-1.0).unwrap();
    assert_eq!(a.missing_value().unwrap(), Some(-1.0));
    assert_eq!(doc(&store, "n/.zarray")["fill_value"], json!(-1));
    assert_eq!(
        doc(&store, "n/.zattrs"),
        json!({"_FillValue": -1,
               "_NCZARR_ATTR": {"types": {"valid_min": "<i2", "_FillValue": "<i4"}}})
    );
}

#[test]
fn a_plain_fill_value_writes_no_missing_value_attribute() {
    let store = Arc::new(MemoryStore::new());
    let mut b = builder("<f4", 2, vec![2]);
    b.fill_value_json(json!(-999.0));
    b.create(store.clone(), "f", Mode::Overwrite).unwrap();
    assert_eq!(doc(&store, "f/.zarray")["fill_value"], json!(-999.0));
    assert!(store.get("f/.zattrs").unwrap().is_none());
}

/// Writes one v3 or v2 array document by hand, as a peer would.
fn put(store: &MemoryStore, key: &str, value: Value) {
    store
        .set(key, serde_json::to_vec(&value).unwrap().as_slice())
        .unwrap();
}

fn v3_doc(dtype: &str, fill: Value, attributes: Value) -> Value {
    json!({
        "zarr_format": 3, "node_type": "array", "shape": [2], "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": attributes
    })
}

fn v2_doc(dtype: &str, fill: Value) -> Value {
    json!({
        "zarr_format": 2, "shape": [2], "chunks": [2], "dtype": dtype, "fill_value": fill,
        "order": "C", "compressor": null, "filters": null
    })
}

#[test]
fn missing_values_are_found_however_the_store_holds_them() {
    // (v3 type, v3 fill, attributes, missing value)
    let v3 = [
        // xarray: fill 0 (zarr-python's default) and the base64 attribute.
        (
            "float32",
            json!(0.0),
            json!({"_FillValue": "AAAAAICHw8A="}),
            Some(-9999.0),
        ),
        (
            "float64",
            json!(0.0),
            json!({"_FillValue": "AAAAAAAA+H8="}),
            Some(f64::NAN),
        ),
        ("int16", json!(0), json!({"_FillValue": -9}), Some(-9.0)),
        // NCZarr: the attribute as a number, or a one-item list.
        (
            "float32",
            json!(-9999.0),
            json!({"_FillValue": -9999.0}),
            Some(-9999.0),
        ),
        ("int32", json!(-9), json!({"_FillValue": [-9]}), Some(-9.0)),
        // A v3 fill value alone is not a missing value: xarray does not mask it.
        ("float32", json!(-9999.0), json!({}), None),
        ("int8", json!(0), json!({}), None),
    ];
    for (dtype, fill, attrs, want) in v3 {
        let store = Arc::new(MemoryStore::new());
        put(&store, "a/zarr.json", v3_doc(dtype, fill, attrs.clone()));
        let a = Array::open(store, "a", Mode::Read).unwrap();
        let got = a.missing_value().unwrap();
        match (got, want) {
            (Some(g), Some(w)) => assert!(same(g, w), "{dtype} {attrs}: {g}"),
            (g, w) => assert_eq!(g, w, "{dtype} {attrs}"),
        }
    }
    // (v2 type, fill_value, missing value)
    let v2 = [
        ("<f4", json!("NaN"), Some(f64::NAN)),
        ("<f8", json!(-9999.0), Some(-9999.0)),
        ("<i4", json!(-9), Some(-9.0)),
        ("<i4", json!(null), None),
        ("<f8", json!(null), None),
    ];
    for (dtype, fill, want) in v2 {
        let store = Arc::new(MemoryStore::new());
        put(&store, "a/.zarray", v2_doc(dtype, fill.clone()));
        let got = Array::open(store, "a", Mode::Read)
            .unwrap()
            .missing_value()
            .unwrap();
        match (got, want) {
            (Some(g), Some(w)) => assert!(same(g, w), "{dtype} {fill}: {g}"),
            (g, w) => assert_eq!(g, w, "{dtype} {fill}"),
        }
    }
    // Malformed attributes are errors naming the array; an int64 a double cannot hold too.
    for (dtype, fill, attr) in [
        ("float32", json!(0.0), json!("Incorrect")),
        ("int16", json!(0), json!(1.5)),
        ("int16", json!(0), json!("AAAAAICHw8A=")),
        ("float32", json!(0.0), json!({"x": 1})),
    ] {
        let store = Arc::new(MemoryStore::new());
        put(
            &store,
            "bad/zarr.json",
            v3_doc(dtype, fill, json!({"_FillValue": attr})),
        );
        let err = Array::open(store, "bad", Mode::Read)
            .unwrap()
            .missing_value()
            .unwrap_err();
        assert!(matches!(err, Error::Metadata(_)), "{attr}: {err}");
        assert!(err.to_string().contains("\"bad\""), "{err}");
    }
    let store = Arc::new(MemoryStore::new());
    put(
        &store,
        "big/.zarray",
        v2_doc("<i8", json!(9007199254740993i64)),
    );
    // The same as v3's integer attribute (xarray's and NCZarr's form).
    let attr = json!({"_FillValue": 9007199254740993i64});
    put(&store, "big3/zarr.json", v3_doc("int64", json!(0), attr));
    for name in ["big", "big3"] {
        let err = Array::open(store.clone(), name, Mode::Read)
            .unwrap()
            .missing_value()
            .unwrap_err();
        assert!(matches!(err, Error::DtypeMismatch(_)), "{name}: {err}");
    }
}

#[test]
fn defaults_are_what_xarray_reads_as_meant() {
    // (type, v2 fill_value, v3 fill_value)
    let cases = [
        ("<f4", json!("NaN"), json!(0.0)),
        ("<f8", json!("NaN"), json!(0.0)),
        ("<i2", json!(null), json!(0)),
        ("<i8", json!(null), json!(0)),
        ("|u1", json!(null), json!(0)),
        ("|b1", json!(null), json!(false)),
        ("<M8[ns]", json!(null), json!(0)),
        ("<c8", json!(null), json!([0.0, 0.0])),
        ("|S4", json!(null), json!("AAAAAA==")),
        ("<U2", json!(null), json!("")),
    ];
    for (dtype, v2, v3) in cases {
        let store = Arc::new(MemoryStore::new());
        let a = builder(dtype, 2, vec![4])
            .create(store.clone(), "a", Mode::Overwrite)
            .unwrap();
        assert_eq!(doc(&store, "a/.zarray")["fill_value"], v2, "{dtype}");
        assert!(store.get("a/.zattrs").unwrap().is_none(), "{dtype}");
        // A null fill reads as zeros where nothing was written.
        if v2.is_null() {
            let mut buf = vec![0xffu8; 4 * a.metadata().item_size()];
            a.read(
                &[0],
                &[4],
                a.metadata().dtype.element_type(),
                Order::C,
                &mut buf,
            )
            .unwrap();
            assert!(buf.iter().all(|&b| b == 0), "{dtype}");
        }
        builder(dtype, 3, vec![4])
            .create(store.clone(), "b", Mode::Overwrite)
            .unwrap();
        let meta = doc(&store, "b/zarr.json");
        assert_eq!(meta["fill_value"], v3, "{dtype}");
        assert!(meta
            .get("attributes")
            .is_none_or(|a| a.get("_FillValue").is_none()));
    }
    // An explicit fill value is kept as given.
    let store = Arc::new(MemoryStore::new());
    let mut b = builder("<f8", 2, vec![4]);
    b.fill_value_json(json!(0));
    b.create(store.clone(), "z", Mode::Overwrite).unwrap();
    assert_eq!(doc(&store, "z/.zarray")["fill_value"], json!(0.0));
}

#[test]
fn v2_scalars_get_the_empty_dimension_list() {
    let store = Arc::new(MemoryStore::new());
    let a = builder("<i4", 2, vec![])
        .create(store.clone(), "crs", Mode::Overwrite)
        .unwrap();
    assert_eq!(doc(&store, "crs/.zattrs"), json!({"_ARRAY_DIMENSIONS": []}));
    assert_eq!(a.dimension_names().unwrap(), Some(vec![]));
    // v3 scalars keep it out of their attributes.
    builder("<i4", 3, vec![])
        .create(store.clone(), "crs3", Mode::Overwrite)
        .unwrap();
    let meta = doc(&store, "crs3/zarr.json");
    assert!(
        meta["attributes"].get("_ARRAY_DIMENSIONS").is_none(),
        "{meta}"
    );
}

#[test]
fn nczarr_scalars_and_attributes_are_read() {
    let store = Arc::new(MemoryStore::new());
    // As netCDF-C 4.9 writes them: a scalar as shape [1] with an empty dimension list, and
    // the missing value as a `_FillValue` attribute beside a null fill value.
    let mut crs = v2_doc("<i4", json!(null));
    crs["shape"] = json!([1]);
    crs["chunks"] = json!([1]);
    crs["_NCZARR_ARRAY"] = json!({"dimrefs": [], "storage": "scalar"});
    put(&store, "crs/.zarray", crs);
    put(
        &store,
        "crs/.zattrs",
        json!({"_ARRAY_DIMENSIONS": [], "_NCZARR_ATTR": {"types": {}}}),
    );
    let a = Array::open(store.clone(), "crs", Mode::Read).unwrap();
    assert_eq!(a.dimension_names().unwrap(), None);
    assert_eq!(a.missing_value().unwrap(), None);
    put(&store, "t/.zarray", v2_doc("<f4", json!(null)));
    put(
        &store,
        "t/.zattrs",
        json!({"_FillValue": -9999, "_ARRAY_DIMENSIONS": ["x"],
               "_NCZARR_ATTR": {"types": {"_FillValue": "<f4"}}}),
    );
    let a = Array::open(store.clone(), "t", Mode::Read).unwrap();
    assert_eq!(a.missing_value().unwrap(), Some(-9999.0));
    assert_eq!(a.dimension_names().unwrap(), Some(vec![Some("x".into())]));
    // A list of another length is still an error, outside NCZarr's scalar form.
    put(&store, "t/.zattrs", json!({"_ARRAY_DIMENSIONS": []}));
    let a = Array::open(store.clone(), "t", Mode::Read).unwrap();
    assert!(matches!(a.dimension_names(), Err(Error::Metadata(_))));

    // Without xarray's attribute, NCZarr's dimrefs name the dimensions: in the array
    // document (netCDF-C 4.9.0, in capitals) or in the attributes (later versions).
    let mut doc = v2_doc("<f4", json!(null));
    doc["shape"] = json!([2, 3]);
    doc["chunks"] = json!([2, 3]);
    doc["_NCZARR_ARRAY"] = json!({"dimrefs": ["/time", "/grid/lat"], "storage": "chunked"});
    put(&store, "d/.zarray", doc.clone());
    let a = Array::open(store.clone(), "d", Mode::Read).unwrap();
    assert_eq!(
        a.dimension_names().unwrap(),
        Some(vec![Some("time".into()), Some("lat".into())])
    );
    doc.as_object_mut().unwrap().remove("_NCZARR_ARRAY");
    put(&store, "d/.zarray", doc);
    put(
        &store,
        "d/.zattrs",
        json!({"_nczarr_array": {"dimrefs": ["/x", "/y"]}}),
    );
    let a = Array::open(store.clone(), "d", Mode::Read).unwrap();
    assert_eq!(
        a.dimension_names().unwrap(),
        Some(vec![Some("x".into()), Some("y".into())])
    );
    // Paths that do not fit the rank are an error naming the entry.
    put(
        &store,
        "d/.zattrs",
        json!({"_nczarr_array": {"dimrefs": ["/x"]}}),
    );
    let a = Array::open(store.clone(), "d", Mode::Read).unwrap();
    let err = a.dimension_names().unwrap_err();
    assert!(
        matches!(&err, Error::Metadata(m) if m.contains("_nczarr_array dimrefs")),
        "{err}"
    );
    // No entry at all: no names.
    put(&store, "d/.zattrs", json!({}));
    let a = Array::open(store, "d", Mode::Read).unwrap();
    assert_eq!(a.dimension_names().unwrap(), None);
}
