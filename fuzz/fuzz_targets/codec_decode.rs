//! Every codec's decoder on arbitrary bytes and an arbitrary expected size: decoding may
//! fail, never crash, never write past the output, never allocate beyond what the expected
//! size and input justify. Each input also round-trips through the codec's encoder.
//!
//! The first input byte picks a configuration from `CODECS`; to fuzz a new codec, add its
//! configuration(s) there and a seed under `fuzz/corpus/codec_decode/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::sync::OnceLock;
use zarr::codec::{from_config, CodecRef};

/// The codec configurations fuzzed, with the item size the array would have.
fn codecs() -> &'static [(CodecRef, &'static str)] {
    static CODECS: OnceLock<Vec<(CodecRef, &'static str)>> = OnceLock::new();
    CODECS.get_or_init(|| {
        let configs: Vec<(Value, usize)> = vec![
            (
                json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}),
                4,
            ),
            (
                json!({"id": "blosc", "cname": "zstd", "clevel": 1, "shuffle": 2}),
                8,
            ),
            (
                json!({"id": "blosc", "cname": "zlib", "clevel": 1, "shuffle": 0}),
                1,
            ),
            (
                json!({"id": "blosc", "cname": "blosclz", "clevel": 9, "shuffle": 1}),
                2,
            ),
            (json!({"id": "zlib", "level": 1}), 1),
            (json!({"id": "gzip", "level": 1}), 1),
            (json!({"id": "bz2", "level": 1}), 1),
            (json!({"id": "lzma"}), 1),
            (json!({"id": "zstd", "level": 1}), 1),
            (json!({"id": "lz4", "acceleration": 1}), 1),
            (json!({"id": "crc32c"}), 1),
        ];
        configs
            .into_iter()
            .map(|(config, item_size)| {
                let id = config["id"].as_str().unwrap().to_string().leak() as &str;
                let codec = from_config(config.as_object().unwrap(), item_size)
                    .expect("fuzzed codec configuration is valid");
                (codec, id)
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let mut input = libzarr_fuzz::Input(data);
    let table = codecs();
    let (codec, id) = &table[input.byte() as usize % table.len()];
    let expected = input.below(1 << 16) as usize;
    let payload = input.rest();

    // Hostile data: any outcome but a crash; a success fills exactly `expected` bytes.
    let mut out = vec![0xA5u8; expected + 16];
    let _ = codec.decode_into(payload, &mut out[..expected]);
    assert!(
        out[expected..].iter().all(|&b| b == 0xA5),
        "{id}: decode wrote past its output"
    );
    // Unknown decoded size: bounded whatever the data claims.
    let mut bounded = Vec::new();
    if codec.decode_bounded(payload, 1 << 20, &mut bounded).is_ok() {
        assert!(bounded.len() <= 1 << 20, "{id}: decoded past its bound");
    }

    // Round trip: what the codec encodes, it decodes to the same bytes.
    let encoded = zarr::codec::encode(codec.as_ref(), payload).expect("encoding succeeds");
    codec
        .decode_bounded(&encoded, payload.len(), &mut bounded)
        .unwrap_or_else(|e| panic!("{id}: bounded round trip failed: {e}"));
    assert_eq!(bounded, payload, "{id}: bounded round trip changed the data");
    {
        let mut back = vec![0u8; payload.len()];
        codec
            .decode_into(&encoded, &mut back)
            .unwrap_or_else(|e| panic!("{id}: round trip failed: {e}"));
        assert_eq!(back, payload, "{id}: round trip changed the data");
    }
});
