//! The array codecs registered in zarr-extensions (`scale_offset`, `cast_value`,
//! `bitround`, `reshape`) and the `complex_float*` type names: exact values from the
//! specifications' examples and sample data, every rounding and out-of-range mode, metadata
//! round trips, and hostile configurations refused with errors naming what is wrong.

use serde_json::{json, Value};
use std::sync::Arc;
use zarr::codec::filter::{from_v3, parse_dtype, FilterRef};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};

/// The codec `name` configured by `config` for data of numpy type `dtype`.
fn codec(name: &str, config: Value, dtype: &str) -> zarr::Result<FilterRef> {
    from_v3(
        name,
        config.as_object().unwrap(),
        &parse_dtype(dtype).unwrap(),
    )
}

/// The error of building codec `name`, as text.
fn refused(name: &str, config: Value, dtype: &str) -> String {
    codec(name, config, dtype).unwrap_err().to_string()
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A v3 array document with `codecs` over a 1-d array of `n` items in one chunk.
fn doc(data_type: &str, fill: Value, n: u64, codecs: Value) -> Value {
    json!({
        "zarr_format": 3, "node_type": "array", "shape": [n], "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [n]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": codecs, "attributes": {}
    })
}

/// A memory store holding `doc` as the array `a`.
fn store_with(doc: &Value) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store
        .set("a/zarr.json", &serde_json::to_vec(doc).unwrap())
        .unwrap();
    store
}

/// The spec's "float64 to uint8 with NaN preservation" example, with scale 0.5 so that
/// every step is exact: (x + 10) * 0.5, rounded to nearest-even, NaN stored as 0.
#[test]
fn scale_offset_and_cast_value_store_the_specs_example_exactly() {
    let codecs = json!([
        {"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.5}},
        {"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}},
        {"name": "bytes"}
    ]);
    let store = store_with(&doc("float64", json!("NaN"), 6, codecs.clone()));
    let a = Array::open(store.clone(), "a", Mode::ReadWrite).unwrap();
    let data = f64s(&[0.0, 3.0, 5.0, f64::NAN, 500.0, -8.0]);
    a.write(&[0], &[6], ElementType::Float64, Order::C, &data)
        .unwrap();
    // 10*0.5 = 5; 13*0.5 = 6.5 → 6 (even); 15*0.5 = 7.5 → 8; NaN → 0; 510*0.5 = 255; 1.
    assert_eq!(
        store.get("a/c/0").unwrap().unwrap(),
        vec![5, 6, 8, 0, 255, 1]
    );
    let mut out = vec![0u8; 48];
    a.read(&[0], &[6], ElementType::Float64, Order::C, &mut out)
        .unwrap();
    let back: Vec<f64> = out
        .chunks(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(&back[..3], &[0.0, 2.0, 6.0]);
    assert!(back[3].is_nan());
    assert_eq!(&back[4..], &[500.0, -8.0]);
    // The document renders back as it was written.
    a.resize(&[7]).unwrap();
    let written: Value =
        serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(written["codecs"], codecs);
    // 1000 → 505 does not fit uint8 without out_of_range: nothing is stored.
    let err = a
        .write(&[0], &[1], ElementType::Float64, Order::C, &f64s(&[1000.0]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("outside 0..=255"), "{err}");
    assert_eq!(store.get("a/c/0").unwrap().unwrap()[0], 5);
}

/// The spec's "uint16 range reduction" example, as written there (a bare `"bytes"`):
/// values 1000..=1255 stored as uint8.
#[test]
fn uint16_range_reduction_to_uint8() {
    let codecs = json!([
        {"name": "scale_offset", "configuration": {"offset": 1000}},
        {"name": "cast_value", "configuration": {"data_type": "uint8"}},
        "bytes"
    ]);
    let store = store_with(&doc("uint16", json!(1000), 4, codecs));
    let a = Array::open(store.clone(), "a", Mode::ReadWrite).unwrap();
    let data: Vec<u8> = [1000u16, 1001, 1128, 1255]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    a.write(&[0], &[4], ElementType::UInt16, Order::C, &data)
        .unwrap();
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), vec![0, 1, 128, 255]);
    let mut out = vec![0u8; 8];
    a.read(&[0], &[4], ElementType::UInt16, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, data);
    // 999 - 1000 is not a uint16.
    let err = a
        .write(
            &[0],
            &[1],
            ElementType::UInt16,
            Order::C,
            &999u16.to_ne_bytes(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("in - offset"), "{err}");
    // A fill value the chain cannot encode is refused when the array is opened.
    let bad = doc(
        "uint16",
        json!(0),
        4,
        json!([
            {"name": "scale_offset", "configuration": {"offset": 1000}},
            {"name": "bytes", "configuration": {"endian": "little"}}
        ]),
    );
    let err = Array::open(store_with(&bad), "a", Mode::Read)
        .unwrap_err()
        .to_string();
    assert!(err.contains("fill value cannot pass codec"), "{err}");
}

#[test]
fn scale_offset_integer_arithmetic_is_checked() {
    let c = codec("scale_offset", json!({"offset": -3, "scale": -2}), "|i1").unwrap();
    let enc = c.encode(&[5i8, -3, 60].map(|v| v as u8)).unwrap();
    assert_eq!(enc, [-16i8, 0, -126].map(|v| v as u8));
    let mut dec = [0u8; 3];
    c.decode_into(&enc, &mut dec).unwrap();
    assert_eq!(dec, [5i8, -3, 60].map(|v| v as u8));
    // (61 + 3) * -2 = -128 fits; (62 + 3) * -2 does not.
    assert_eq!(c.encode(&[61]).unwrap(), [-128i8 as u8]);
    assert!(c
        .encode(&[62])
        .unwrap_err()
        .to_string()
        .contains("not a value of"));
    // An odd stored value has no int8 quotient.
    let err = c.decode_into(&[3], &mut [0]).unwrap_err().to_string();
    assert!(err.contains("remainder"), "{err}");
    // Float arithmetic is the type's: float32 (x - 0.1) * 3 rounds each step to float32.
    let c = codec("scale_offset", json!({"offset": 0.1, "scale": 3}), "<f4").unwrap();
    let x = 1.0f32;
    let expected = ((x - 0.1f32) * 3.0f32).to_le_bytes();
    assert_eq!(c.encode(&x.to_le_bytes()).unwrap(), expected);
    // Overflow is infinity, as IEEE arithmetic makes it.
    let c = codec("scale_offset", json!({"scale": 1e30}), "<f4").unwrap();
    assert_eq!(
        c.encode(&1e10f32.to_le_bytes()).unwrap(),
        f32::INFINITY.to_le_bytes()
    );
}

/// Casts `values` (float64) to `target` with `rounding` and `out_of_range`.
fn cast(
    values: &[f64],
    target: &str,
    rounding: &str,
    range: Option<&str>,
) -> zarr::Result<Vec<u8>> {
    let mut config = json!({"data_type": target, "rounding": rounding});
    if let Some(r) = range {
        config["out_of_range"] = r.into();
    }
    codec("cast_value", config, "<f8")?.encode(&f64s(values))
}

#[test]
fn cast_value_rounds_by_every_mode() {
    let values = [2.5, -2.5, 3.5, 2.4, -2.6, 0.5];
    for (mode, expected) in [
        ("nearest-even", [2i8, -2, 4, 2, -3, 0]),
        ("towards-zero", [2, -2, 3, 2, -2, 0]),
        ("towards-positive", [3, -2, 4, 3, -2, 1]),
        ("towards-negative", [2, -3, 3, 2, -3, 0]),
        ("nearest-away", [3, -3, 4, 2, -3, 1]),
    ] {
        assert_eq!(
            cast(&values, "int8", mode, None).unwrap(),
            expected.map(|v| v as u8),
            "{mode}"
        );
    }
    // Float targets: 1 + 2^-24 is a tie between 1 and 1 + 2^-23 in float32.
    let tie = 1.0 + 2f64.powi(-24);
    let above = (1.0f32 + f32::EPSILON).to_le_bytes().to_vec();
    let one = 1.0f32.to_le_bytes().to_vec();
    for (mode, expected) in [
        ("nearest-even", &one),
        ("towards-zero", &one),
        ("towards-positive", &above),
        ("towards-negative", &one),
        ("nearest-away", &above),
    ] {
        assert_eq!(
            &cast(&[tie], "float32", mode, None).unwrap(),
            expected,
            "{mode}"
        );
    }
    // -tie towards positive is -1; towards negative -(1 + 2^-23).
    assert_eq!(
        cast(&[-tie], "float32", "towards-negative", None).unwrap(),
        (-1.0f32 - f32::EPSILON).to_le_bytes()
    );
    // Signed zero and NaN are kept between float types.
    assert_eq!(
        cast(&[-0.0], "float16", "nearest-even", None).unwrap(),
        [0x00, 0x80]
    );
    let nan = cast(&[f64::NAN], "float32", "nearest-even", None).unwrap();
    assert!(f32::from_le_bytes(nan.try_into().unwrap()).is_nan());
}

#[test]
fn cast_value_handles_out_of_range_values_as_configured() {
    // The spec's examples: 128.0 to int8.
    let err = cast(&[128.0], "int8", "nearest-even", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("outside -128..=127"), "{err}");
    assert_eq!(
        cast(&[128.0], "int8", "nearest-even", Some("clamp")).unwrap(),
        [127]
    );
    assert_eq!(
        cast(&[128.0], "int8", "nearest-even", Some("wrap")).unwrap(),
        [0x80]
    );
    // int32 to int16 wrapping.
    let c = codec(
        "cast_value",
        json!({"data_type": "int16", "out_of_range": "wrap"}),
        "<i4",
    )
    .unwrap();
    let data: Vec<u8> = [32768i32, 32769, -32769]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let expected: Vec<u8> = [-32768i16, -32767, 32767]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(c.encode(&data).unwrap(), expected);
    // Clamping into a float type with infinities gives infinity; without, its maximum.
    assert_eq!(
        cast(&[1e39], "float32", "nearest-even", Some("clamp")).unwrap(),
        f32::INFINITY.to_le_bytes()
    );
    assert!(cast(&[1e39], "float32", "nearest-even", None).is_err());
    // 65520 is float16's largest value plus half a step: nearest-even goes past it,
    // towards-zero stays at 65504.
    assert!(cast(&[65520.0], "float16", "nearest-even", None).is_err());
    assert_eq!(
        cast(&[65520.0], "float16", "towards-zero", None).unwrap(),
        [0xff, 0x7b]
    );
    assert_eq!(
        cast(&[1000.0], "float8_e4m3fn", "nearest-even", Some("clamp")).unwrap(),
        [0x7e]
    );
    // Wrapping a huge float: a multiple of 2^8.
    assert_eq!(
        cast(&[1e300], "uint8", "towards-zero", Some("wrap")).unwrap(),
        [0]
    );
    // NaN and infinities have no integer value unless mapped.
    assert!(cast(&[f64::NAN], "uint8", "nearest-even", Some("clamp")).is_err());
    assert!(cast(&[f64::INFINITY], "int8", "nearest-even", Some("clamp")).is_err());
    assert!(cast(
        &[f64::INFINITY],
        "float6_e2m3fn",
        "nearest-even",
        Some("clamp")
    )
    .is_err());
}

#[test]
fn cast_value_scalar_maps_come_first_and_first_entry_wins() {
    // The spec's NumPy-compatible example.
    let c = codec(
        "cast_value",
        json!({"data_type": "uint8", "rounding": "towards-zero", "out_of_range": "wrap",
               "scalar_map": {"encode": [["NaN", 0], ["+Infinity", 0], ["-Infinity", 0]]}}),
        "<f8",
    )
    .unwrap();
    assert_eq!(
        c.encode(&f64s(&[
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            300.7,
            -1.5
        ]))
        .unwrap(),
        [0, 0, 0, 44, 255]
    );
    let c = codec(
        "cast_value",
        json!({"data_type": "int8", "scalar_map": {"encode": [[1.5, 7], [1.5, 9], [2, 100]],
               "decode": [[7, 1.25]]}}),
        "<f8",
    )
    .unwrap();
    assert_eq!(c.encode(&f64s(&[1.5, 2.0, 2.5])).unwrap(), [7, 100, 2]);
    let mut out = vec![0u8; 16];
    c.decode_into(&[7, 100], &mut out).unwrap();
    assert_eq!(out, f64s(&[1.25, 100.0]));
}

#[test]
fn hostile_configurations_are_refused_with_what_is_wrong() {
    for (name, config, dtype, expected) in [
        (
            "scale_offset",
            json!({"offset": 1, "factor": 2}),
            "<f8",
            "unknown configuration key \"factor\"",
        ),
        (
            "scale_offset",
            json!({"scale": 0}),
            "<i4",
            "must not be zero",
        ),
        (
            "scale_offset",
            json!({"scale": 0.1}),
            "<i4",
            "\"scale\" 0.1 is not a value",
        ),
        (
            "scale_offset",
            json!({"offset": 300}),
            "|u1",
            "outside 0..=255",
        ),
        ("scale_offset", json!({"offset": "5"}), "<f8", "not a float"),
        (
            "scale_offset",
            json!({}),
            "|b1",
            "needs integer or float data",
        ),
        (
            "cast_value",
            json!({}),
            "<f8",
            "missing required key \"data_type\"",
        ),
        (
            "cast_value",
            json!({"data_type": "uint8", "mode": 1}),
            "<f8",
            "unknown configuration key \"mode\"",
        ),
        (
            "cast_value",
            json!({"data_type": "uint8", "rounding": "up"}),
            "<f8",
            "\"rounding\" \"up\" is not one of",
        ),
        (
            "cast_value",
            json!({"data_type": "float32", "out_of_range": "wrap"}),
            "<f8",
            "needs an integer",
        ),
        (
            "cast_value",
            json!({"data_type": "uint8", "out_of_range": "saturate"}),
            "<f8",
            "is not \"clamp\" or \"wrap\"",
        ),
        (
            "cast_value",
            json!({"data_type": "bool"}),
            "<f8",
            "target type \"bool\"",
        ),
        (
            "cast_value",
            json!({"data_type": "float8_e8m0fnu"}),
            "<f8",
            "target type",
        ),
        (
            "cast_value",
            json!({"data_type": "int8"}),
            "<c16",
            "input type",
        ),
        (
            "cast_value",
            json!({"data_type": "no_such_type"}),
            "<f8",
            "\"data_type\"",
        ),
        (
            "cast_value",
            json!({"data_type": "uint8", "scalar_map": {"encode": [["NaN"]]}}),
            "<f8",
            "not a [from, to] pair",
        ),
        (
            "cast_value",
            json!({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 256]]}}),
            "<f8",
            "outside 0..=255",
        ),
        (
            "cast_value",
            json!({"data_type": "uint8", "scalar_map": {"both": []}}),
            "<f8",
            "unknown scalar_map key",
        ),
        (
            "cast_value",
            json!({"data_type": "uint8", "scalar_map": []}),
            "<f8",
            "is not an object",
        ),
        (
            "cast_value",
            json!({"data_type": "uint8", "scalar_map": {"decode": vec![[0, 0]; 257]}}),
            "<f8",
            "at most 256",
        ),
        ("bitround", json!({}), "<f4", "\"keepbits\" must be"),
        (
            "bitround",
            json!({"keepbits": 3, "x": 1}),
            "<f4",
            "unknown configuration key",
        ),
        (
            "bitround",
            json!({"keepbits": 24}),
            "<f4",
            "more than the 23 bits",
        ),
        (
            "bitround",
            json!({"keepbits": 3}),
            "|b1",
            "needs float, complex or integer",
        ),
        ("reshape", json!({}), "<f4", "\"shape\" must be a list"),
        (
            "reshape",
            json!({"shape": [-1, -1]}),
            "<f4",
            "-1 more than once",
        ),
        (
            "reshape",
            json!({"shape": [0, 4]}),
            "<f4",
            "not a positive integer",
        ),
        (
            "reshape",
            json!({"shape": [[1], [0]]}),
            "<f4",
            "strictly increasing",
        ),
        (
            "reshape",
            json!({"shape": [[1, 0], 10]}),
            "<f4",
            "strictly increasing",
        ),
        (
            "reshape",
            json!({"shape": ["2"]}),
            "<f4",
            "is not a positive integer, -1 or a list",
        ),
        (
            "reshape",
            json!({"shape": [4], "order": "C"}),
            "<f4",
            "unknown configuration key",
        ),
    ] {
        let err = refused(name, config.clone(), dtype);
        assert!(err.contains(expected), "{name} {config}: {err}");
    }
}

/// The sample data of zarr-extensions' bitround codec (keepbits 3).
#[test]
fn bitround_matches_the_registered_sample_data() {
    let c = codec("bitround", json!({"keepbits": 3}), "<f4").unwrap();
    let input: Vec<u8> = [
        0.0f32,
        0.1,
        1.2,
        12.3,
        123.4,
        1234.5,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect();
    let stored = [
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd0, 0x3d, 0x00, 0x00, 0xa0, 0x3f, 0x00, 0x00, 0x40,
        0x41, 0x00, 0x00, 0xf0, 0x42, 0x00, 0x00, 0xa0, 0x44, 0x00, 0x00, 0xc0, 0x7f, 0x00, 0x00,
        0x80, 0x7f, 0x00, 0x00, 0x80, 0xff,
    ];
    assert_eq!(c.encode(&input).unwrap(), stored);
    let c = codec("bitround", json!({"keepbits": 3}), "|u1").unwrap();
    assert_eq!(
        c.encode(&[0, 1, 10, 11, 100, 123, 200, 208, 209, 255])
            .unwrap(),
        [0, 1, 10, 12, 96, 128, 192, 192, 224, 224]
    );
    // The bare name renders bare, numcodecs' alias as it was.
    assert_eq!(
        c.v3_codec(),
        json!({"name": "bitround", "configuration": {"keepbits": 3}})
    );
    let doc = doc(
        "float32",
        json!(0.0),
        9,
        json!([{"name": "bitround", "configuration": {"keepbits": 3}}, {"name": "bytes", "configuration": {"endian": "little"}}]),
    );
    let store = store_with(&doc);
    let a = Array::open(store.clone(), "a", Mode::ReadWrite).unwrap();
    a.write(&[0], &[9], ElementType::Float32, Order::C, &input)
        .unwrap();
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), stored);
    a.resize(&[9]).unwrap();
    let written: Value =
        serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(written["codecs"], doc["codecs"]);
}

#[test]
fn reshape_checks_its_shape_against_the_chunks() {
    let reshape = |shape: Value| codec("reshape", json!({"shape": shape}), "<f4").unwrap();
    // The spec's example: a chunk of [100, 50, 64, 3] as [5000, 64, 3].
    let r = reshape(json!([[0, 1], [2], 3]));
    assert_eq!(r.chunk_shape(&[100, 50, 64, 3]).unwrap(), [5000, 64, 3]);
    assert_eq!(
        reshape(json!([-1, 6])).chunk_shape(&[4, 3]).unwrap(),
        [2, 6]
    );
    assert_eq!(
        reshape(json!([[0], -1])).chunk_shape(&[4, 3, 2]).unwrap(),
        [4, 6]
    );
    let err = reshape(json!([5, -1]))
        .chunk_shape(&[4, 3])
        .unwrap_err()
        .to_string();
    assert!(err.contains("no extent for -1"), "{err}");
    let err = reshape(json!([7]))
        .chunk_shape(&[4, 3])
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not hold the 12 items"), "{err}");
    // [2, [1]] over [4, 3]: 2 before dimension 1 is not the 4 before it.
    let err = reshape(json!([4, [1], 1]))
        .chunk_shape(&[2, 3, 2])
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not line up"), "{err}");
    let err = reshape(json!([[5]]))
        .chunk_shape(&[4, 3])
        .unwrap_err()
        .to_string();
    assert!(err.contains("past the 2"), "{err}");

    // An array whose chunks the codec reshapes keeps its data; a shape that does not fit
    // the chunks is refused when it is opened; a transpose beside it too.
    let codecs = json!([{"name": "reshape", "configuration": {"shape": [-1]}}, {"name": "bytes"}]);
    let mut d = doc("uint8", json!(0), 6, codecs);
    d["shape"] = json!([4, 6]);
    d["chunk_grid"]["configuration"]["chunk_shape"] = json!([2, 3]);
    let store = store_with(&d);
    let a = Array::open(store.clone(), "a", Mode::ReadWrite).unwrap();
    let data: Vec<u8> = (0..24).collect();
    a.write(&[0, 0], &[4, 6], ElementType::UInt8, Order::C, &data)
        .unwrap();
    assert_eq!(
        store.get("a/c/1/1").unwrap().unwrap(),
        [15, 16, 17, 21, 22, 23]
    );
    d["codecs"][0]["configuration"]["shape"] = json!([4]);
    let err = Array::open(store_with(&d), "a", Mode::Read)
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not hold the 6 items"), "{err}");
    d["codecs"] = json!([
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "reshape", "configuration": {"shape": [-1]}}, {"name": "bytes"}
    ]);
    let err = Array::open(store_with(&d), "a", Mode::Read)
        .unwrap_err()
        .to_string();
    assert!(err.contains("transpose"), "{err}");
    // An array codec after the bytes codec is named.
    d["codecs"] = json!([{"name": "bytes"}, {"name": "reshape", "configuration": {"shape": [-1]}}]);
    let err = Array::open(store_with(&d), "a", Mode::Read)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"reshape\" before the array-to-bytes codec"),
        "{err}"
    );
}

#[test]
fn complex_float_names_are_the_core_complex_types() {
    let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    let store = store_with(&doc(
        "complex_float32",
        json!([1.0, -2.0]),
        2,
        codecs.clone(),
    ));
    let a = Array::open(store.clone(), "a", Mode::ReadWrite).unwrap();
    let mut out = vec![0u8; 16];
    a.read(&[0], &[2], ElementType::Complex64, Order::C, &mut out)
        .unwrap();
    let fill: Vec<u8> = [1.0f32, -2.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    assert_eq!(out, [fill.clone(), fill].concat());
    let store = store_with(&doc(
        "complex_float64",
        json!([0.5, "NaN"]),
        1,
        codecs.clone(),
    ));
    let a = Array::open(store, "a", Mode::Read).unwrap();
    assert_eq!(a.metadata().dtype.item_size(), 16);
    for name in ["complex_float16", "complex_bfloat16", "complex_float8_e4m3"] {
        let err = Array::open(
            store_with(&doc(name, json!([0, 0]), 1, codecs.clone())),
            "a",
            Mode::Read,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(name) && err.contains("complex_float32"),
            "{err}"
        );
    }
}

/// The builder takes registered codecs among the filters (as v3 codec objects); only
/// Zarr v3 metadata holds them.
#[test]
fn builder_writes_registered_codecs_in_v3_only() {
    let filters = json!([
        {"name": "scale_offset", "configuration": {"offset": 10, "scale": 4}},
        {"name": "cast_value", "configuration": {"data_type": "int8", "out_of_range": "clamp"}},
    ]);
    let make = |format: i32| {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut b = ArrayBuilder::new(vec![4], ElementType::Float32);
        b.chunks(vec![4])
            .filters(filters.clone())
            .compressor(Value::Null)
            .fill_value_json(json!(10));
        b.zarr_format(format).unwrap();
        (b.create(store.clone(), "a", Mode::CreateNew), store)
    };
    let (a, store) = make(3);
    let a = a.unwrap();
    let data: Vec<u8> = [10.0f32, 11.5, -100.0, 40.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    a.write(&[0], &[4], ElementType::Float32, Order::C, &data)
        .unwrap();
    // 0, 6, -440 → -128, 120.
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), [0, 6, 0x80, 120]);
    let written: Value =
        serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(written["codecs"][0], filters[0]);
    assert_eq!(written["codecs"][1], filters[1]);
    assert_eq!(written["codecs"][2], json!({"name": "bytes"}));
    let (a, _) = make(2);
    let err = a.unwrap_err().to_string();
    assert!(
        err.contains("Zarr v2 metadata cannot hold the Zarr v3 codec"),
        "{err}"
    );
    // After a bytes-level filter (a checksum) a registered codec has no place.
    let mut b = ArrayBuilder::new(vec![4], ElementType::Float32);
    b.filters(json!([{"id": "crc32"}, filters[0]]));
    b.zarr_format(3).unwrap();
    let err = b
        .create(Arc::new(MemoryStore::new()), "a", Mode::CreateNew)
        .unwrap_err()
        .to_string();
    assert!(err.contains("must come before checksums"), "{err}");
}

#[test]
fn packbits_packs_components_least_significant_bit_first() {
    // int8 keeps its 8 bits: the padding byte says 0.
    let c = codec("packbits", json!({"padding_encoding": "first_byte"}), "|i1").unwrap();
    assert_eq!(c.encode(&[1, 0xfe]).unwrap(), [0, 1, 0xfe]);
    // int4 1, -2, 7, -8, 0: nibbles 1, e, 7, 8, 0; 20 bits and 4 padding bits.
    let int4 = doc(
        "int4",
        json!(0),
        5,
        json!([{"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}]),
    );
    let store = store_with(&int4);
    let a = Array::open(store.clone(), "a", Mode::ReadWrite).unwrap();
    let values = [1i8, -2, 7, -8, 0].map(|v| v as u8);
    a.write(&[0], &[5], ElementType::Int4, Order::C, &values)
        .unwrap();
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), [4, 0xe1, 0x87, 0x00]);
    let mut out = [0u8; 5];
    a.read(&[0], &[5], ElementType::Int4, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, values);
    a.resize(&[5]).unwrap();
    let written: Value =
        serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(written["codecs"], int4["codecs"]);
    // A wrong padding byte is a codec error.
    store.set("a/c/0", &[3, 0xe1, 0x87, 0x00]).unwrap();
    let again = Array::open(store.clone(), "a", Mode::Read).unwrap();
    let err = again
        .read(&[0], &[5], ElementType::Int4, Order::C, &mut out)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("padding byte says 3 bits, expected 4"),
        "{err}"
    );

    // uint16 bits 4..=9 (6 bits each), padding after: 0x03f0 → 0x3f, 0x0010 → 0x01.
    let c = codec(
        "packbits",
        json!({"padding_encoding": "last_byte", "first_bit": 4, "last_bit": 9}),
        "<u2",
    )
    .unwrap();
    let data: Vec<u8> = [0x03f0u16, 0x0010]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    // 0b111111 then 0b000001: bits 0-5 and 6-11 → 0x7f, 0x00; 4 padding bits.
    assert_eq!(c.encode(&data).unwrap(), [0x7f, 0x00, 4]);
    let mut back = [0u8; 4];
    c.decode_into(&[0x7f, 0x00, 4], &mut back).unwrap();
    assert_eq!(back.to_vec(), data);
    // Signed: int16 bits 0..=3 of -3 (…1101) come back sign-extended.
    let c = codec("packbits", json!({"last_bit": 3}), "<i2").unwrap();
    assert_eq!(c.encode(&(-3i16).to_le_bytes()).unwrap(), [0x0d]);
    let mut back = [0u8; 2];
    c.decode_into(&[0x0d], &mut back).unwrap();
    assert_eq!(i16::from_le_bytes(back), -3);
    // bool: one bit each.
    let c = codec("packbits", json!({}), "|b1").unwrap();
    assert_eq!(
        c.encode(&[1, 0, 1, 1, 0, 0, 0, 0, 1]).unwrap(),
        [0x0d, 0x01]
    );
    for (config, dtype, expected) in [
        (
            json!({"padding_encoding": "middle"}),
            "|b1",
            "\"padding_encoding\" \"middle\"",
        ),
        (
            json!({"first_bit": 3, "last_bit": 1}),
            "<u2",
            "less than first_bit",
        ),
        (
            json!({"last_bit": 16}),
            "<u2",
            "\"last_bit\" 16 is not a bit of the 16-bit",
        ),
        (json!({"first_bit": 1, "start_bit": 1}), "<u2", "both"),
        (json!({"order": 1}), "<u2", "unknown configuration key"),
    ] {
        let err = refused("packbits", config.clone(), dtype);
        assert!(err.contains(expected), "{config}: {err}");
    }
    let err = refused("packbits", json!({}), "|S4");
    assert!(err.contains("cannot encode items"), "{err}");
}

/// The registered packbits from the builder's filters stands in the bytes codec's place.
#[test]
fn builder_writes_registered_packbits_in_place_of_bytes() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut b = ArrayBuilder::new(vec![10], ElementType::Bool);
    b.chunks(vec![10])
        .filters(json!([{"name": "packbits", "configuration": {"padding_encoding": "last_byte"}}]))
        .compressor(json!([{"name": "crc32c"}]))
        .fill_value_json(json!(false));
    b.zarr_format(3).unwrap();
    let a = b.create(store.clone(), "a", Mode::CreateNew).unwrap();
    let data = [1u8, 1, 0, 0, 0, 0, 0, 1, 0, 1];
    a.write(&[0], &[10], ElementType::Bool, Order::C, &data)
        .unwrap();
    let written: Value =
        serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        written["codecs"],
        json!([
            {"name": "packbits", "configuration": {"padding_encoding": "last_byte"}},
            {"name": "crc32c"}
        ])
    );
    // Bits 0-7 then 8-9, least significant first; 6 padding bits; then the checksum.
    let stored = store.get("a/c/0").unwrap().unwrap();
    assert_eq!(&stored[..3], &[0x83, 0x02, 6]);
    let mut out = [0u8; 10];
    Array::open(store, "a", Mode::Read)
        .unwrap()
        .read(&[0], &[10], ElementType::Bool, Order::C, &mut out)
        .unwrap();
    assert_eq!(out, data);
    // Another filter after it has no place in v3 metadata.
    let mut b = ArrayBuilder::new(vec![10], ElementType::UInt8);
    b.filters(
        json!([{"name": "packbits"}, {"name": "bitround", "configuration": {"keepbits": 2}}]),
    );
    b.zarr_format(3).unwrap();
    let err = b
        .create(Arc::new(MemoryStore::new()), "a", Mode::CreateNew)
        .unwrap_err()
        .to_string();
    assert!(err.contains("packbits codec must be the last"), "{err}");
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// cast_value item by item against the reference implementation (cast-value-rs), for
/// every rounding and out-of-range mode: the same bytes, or an error where it refuses.
#[test]
fn cast_value_matches_the_reference_implementation() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("data/cast_value_vectors.json")).unwrap();
    let mut checked = 0;
    for case in &cases {
        let mut config = json!({"data_type": case["target"], "rounding": case["rounding"]});
        if !case["out_of_range"].is_null() {
            config["out_of_range"] = case["out_of_range"].clone();
        }
        if let Some(map) = case.get("scalar_map") {
            config["scalar_map"] = json!({ "encode": map });
        }
        let source = match case["source"].as_str().unwrap() {
            "float64" => "<f8",
            _ => "<i8",
        };
        let c = codec("cast_value", config.clone(), source).unwrap();
        let data = unhex(case["data"].as_str().unwrap());
        for (item, expected) in data.chunks(8).zip(case["results"].as_array().unwrap()) {
            let got = c.encode(item).ok();
            let expected = expected.as_str().map(unhex);
            assert_eq!(got, expected, "{config} on {item:02x?}");
            checked += 1;
        }
    }
    assert_eq!(checked, 6198);
}

/// `keepbits` 0 on 64-bit integers whose top bit is set (negative int64, uint64 from
/// 2^63) rounds them as narrower types round theirs (to 0: no bit is kept), instead of
/// shifting a 64-bit word by 64 (a panic, or another value where shifts wrap).
#[test]
fn bitround_keepbits_zero_rounds_64_bit_integers_as_narrower_ones() {
    let i4 = codec("bitround", json!({"keepbits": 0}), "<i4").unwrap();
    let input: Vec<u8> = [-1i32, 5, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    let rounded: Vec<u8> = [0i32, 8, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(i4.encode(&input).unwrap(), rounded);
    let i8 = codec("bitround", json!({"keepbits": 0}), "<i8").unwrap();
    let input: Vec<u8> = [-1i64, 5, i64::MIN, 3]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let rounded: Vec<u8> = [0i64, 8, 0, 4]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(i8.encode(&input).unwrap(), rounded);
    let u8 = codec("bitround", json!({"keepbits": 0}), ">u8").unwrap();
    let input: Vec<u8> = [u64::MAX, 5, 1 << 63]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let rounded: Vec<u8> = [0u64, 8, 0].iter().flat_map(|v| v.to_be_bytes()).collect();
    assert_eq!(u8.encode(&input).unwrap(), rounded);
}
