//! Filters and checksum codecs against vectors numcodecs made
//! (tests/interop/gen_filter_vectors.py), and their error cases.

use super::*;
use serde_json::json;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Builds what a vector configures: a filter for its input type, a categorize filter
/// (unicode types are checked at codec level), or a bytes-to-bytes codec.
fn build(config: &Map<String, Value>, dtype: &str) -> (Option<FilterRef>, Option<CodecRef>) {
    let id = config["id"].as_str().unwrap();
    if id == "categorize" {
        let filter = Categorize::from_config(config).unwrap();
        assert_eq!(filter.dtype(), dtype);
        return (Some(Arc::new(filter)), None);
    }
    if SUPPORTED.contains(&id) {
        let input = parse_dtype(dtype).unwrap();
        return match from_config(config, &input).unwrap() {
            Built::Array(f) => (Some(f), None),
            Built::Bytes(c) => (None, Some(c)),
        };
    }
    (None, Some(codec::from_config(config, 1).unwrap()))
}

#[test]
fn numcodecs_vectors_encode_and_decode_byte_for_byte() {
    let vectors: Vec<Value> = serde_json::from_str(include_str!(
        "../../../tests/data/numcodecs_filter_vectors.json"
    ))
    .unwrap();
    assert!(vectors.len() > 90);
    for v in &vectors {
        let config = v["config"].as_object().unwrap();
        let dtype = v["dtype"].as_str().unwrap();
        let (data, encoded, decoded) = (
            hex(v["data"].as_str().unwrap()),
            hex(v["encoded"].as_str().unwrap()),
            hex(v["decoded"].as_str().unwrap()),
        );
        let label = format!("{} on {dtype}", Value::Object(config.clone()));
        let (filter, codec) = build(config, dtype);
        let (ours, full) = match (&filter, &codec) {
            (Some(f), _) => {
                assert_eq!(f.encoded_len(data.len()), encoded.len(), "{label}");
                (f.encode(&data).unwrap(), f.config())
            }
            (_, Some(c)) => (codec::encode(c.as_ref(), &data).unwrap(), c.config()),
            _ => unreachable!(),
        };
        assert_eq!(ours, encoded, "encoding {label}");
        assert_eq!(Value::Object(full), v["full_config"], "config of {label}");
        let mut out = vec![0u8; decoded.len()];
        match (&filter, &codec) {
            (Some(f), _) => f.decode_into(&encoded, &mut out).unwrap(),
            (_, Some(c)) => c.decode_into(&encoded, &mut out).unwrap(),
            _ => unreachable!(),
        }
        assert_eq!(out, decoded, "decoding {label}");
        // Checksums refuse any changed byte.
        if let (Some(c), false) = (&codec, config["id"] == "shuffle") {
            let mut bad = encoded.clone();
            let last = bad.len() - 1;
            bad[last] ^= 1;
            let err = c.decode_into(&bad, &mut out).unwrap_err().to_string();
            assert!(err.contains(config["id"].as_str().unwrap()), "{err}");
        }
    }
}

fn dt(text: &str) -> DType {
    parse_dtype(text).unwrap()
}

fn filter(config: Value, input: &str) -> Result<FilterRef> {
    match from_config(config.as_object().unwrap(), &dt(input))? {
        Built::Array(f) => Ok(f),
        Built::Bytes(_) => panic!("not an array filter"),
    }
}

#[test]
fn filters_check_the_type_they_receive() {
    let err = filter(json!({"id": "delta", "dtype": "<i4"}), "<f8")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("delta") && err.contains("<i4") && err.contains("<f8"),
        "{err}"
    );
    let err = filter(
        json!({"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}),
        "<i8",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("decode_dtype") && err.contains("<i8"), "{err}");
    let err = filter(
        json!({"id": "quantize", "digits": 2, "dtype": "<i4"}),
        "<i4",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("quantize") && err.contains("float"), "{err}");
    let err = filter(json!({"id": "bitround", "keepbits": 3}), "<i4")
        .unwrap_err()
        .to_string();
    assert!(err.contains("bitround") && err.contains("<i4"), "{err}");
    let err = filter(json!({"id": "bitround", "keepbits": 24}), "<f4")
        .unwrap_err()
        .to_string();
    assert!(err.contains("keepbits"), "{err}");
    let err = filter(json!({"id": "packbits"}), "<i4")
        .unwrap_err()
        .to_string();
    assert!(err.contains("packbits") && err.contains("bool"), "{err}");
    let err = filter(
        json!({"id": "categorize", "labels": ["a"], "dtype": "<U2"}),
        "<i4",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("categorize") && err.contains("<U2") && err.contains("<i4"),
        "{err}"
    );
    let err = filter(
        json!({"id": "fixedscaleoffset", "scale": 2, "dtype": "<f8"}),
        "<f8",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("offset"), "{err}");
    // A chain checks each filter against the previous one's output.
    let chain =
        json!([{"id": "delta", "dtype": "<i4", "astype": "<i2"}, {"id": "delta", "dtype": "<i4"}]);
    let err = chain_from_json(&chain, &dt("<i4"), Forms::Numcodecs)
        .unwrap_err()
        .to_string();
    assert!(err.contains("<i4") && err.contains("<i2"), "{err}");
    let chain = json!([{"id": "delta", "dtype": "<i4", "astype": "<i2"}, {"id": "shuffle", "elementsize": 0}, {"id": "crc32"}]);
    let (filters, bytes) = chain_from_json(&chain, &dt("<i4"), Forms::Numcodecs).unwrap();
    assert_eq!(
        bytes[0].config()["elementsize"],
        2,
        "elementsize 0 is the item size"
    );
    assert_eq!(output_dtype(&filters, &dt("<i4")).to_v2(), "<i2");
    assert_eq!(bytes.len(), 2);
}

#[test]
fn unknown_filters_and_bad_configs_are_errors() {
    let err = filter(json!({"id": "nope"}), "<i4").unwrap_err();
    assert!(
        matches!(err, Error::CodecUnsupported(ref m) if m.contains("nope")),
        "{err}"
    );
    let err = filter(json!({"id": "zlib"}), "<i4").unwrap_err();
    assert!(
        matches!(err, Error::Unsupported(ref m) if m.contains("zlib")),
        "{err}"
    );
    let err = Categorize::from_config(
        json!({"id": "categorize", "labels": ["a"], "dtype": "|O"})
            .as_object()
            .unwrap(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    let labels: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    let err = Categorize::from_config(
        json!({"id": "categorize", "labels": labels, "dtype": "<U3"})
            .as_object()
            .unwrap(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("astype"), "{err}");
    assert!(Categorize::from_config(
        json!({"id": "categorize", "labels": [1], "dtype": "<U3"})
            .as_object()
            .unwrap()
    )
    .is_err());
    assert!(chain_from_json(&json!([1]), &dt("<i4"), Forms::Numcodecs).is_err());
    assert!(chain_from_json(&json!({"id": "delta"}), &dt("<i4"), Forms::Numcodecs).is_err());
    assert!(codec::from_config(
        json!({"id": "crc32", "location": "middle"})
            .as_object()
            .unwrap(),
        1
    )
    .is_err());
}

#[test]
fn decoding_refuses_wrong_sizes() {
    let delta = filter(
        json!({"id": "delta", "dtype": "<i4", "astype": "<i2"}),
        "<i4",
    )
    .unwrap();
    let mut out = vec![0u8; 16];
    assert!(delta.decode_into(&[0u8; 6], &mut out).is_err());
    assert!(delta.decode_into(&[0u8; 8], &mut out).is_ok());
    let packbits = filter(json!({"id": "packbits"}), "|b1").unwrap();
    let mut out = vec![0u8; 9];
    assert!(packbits.decode_into(&[7, 0, 0], &mut out).is_ok());
    assert!(packbits.decode_into(&[6, 0, 0], &mut out).is_err());
    assert!(packbits.decode_into(&[7, 0], &mut out).is_err());
}
