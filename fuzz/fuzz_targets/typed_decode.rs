//! The codecs of typed chunks (zfp, numcodecs' zfpy, pcodec) on arbitrary bytes, for an
//! arbitrary chunk shape: decoding may fail, never crash, never write past the chunk, never
//! read past the stream; lossless configurations round-trip what they encode.
//!
//! Byte 0 picks a configuration and item type from `CODECS`; then, two bytes each (little
//! endian), the chunk's rank less one (1 to 4 dimensions) and each extent less one (1 to
//! 16); the rest is the stream.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::sync::OnceLock;
use zarr::codec::{from_config, CodecRef};
use zarr::dtype::DType;

/// The configurations fuzzed: codec, item type (numcodecs' name), lossless.
fn codecs() -> &'static [(CodecRef, DType, bool)] {
    static CODECS: OnceLock<Vec<(CodecRef, DType, bool)>> = OnceLock::new();
    CODECS.get_or_init(|| {
        let configs: Vec<(Value, &str, bool)> = vec![
            (json!({"id": "zfp", "mode": "reversible"}), "<f4", true),
            (json!({"id": "zfp", "mode": "reversible"}), "<i8", true),
            (json!({"id": "zfp", "mode": "fixed_accuracy", "tolerance": 0.01}), "<f8", false),
            (json!({"id": "zfp", "mode": "fixed_rate", "rate": 4}), "<f4", false),
            (json!({"id": "zfp", "mode": "expert", "minbits": 16658, "maxbits": 16658, "maxprec": 64, "minexp": -1074}), "<f8", false),
            (json!({"id": "zfpy", "mode": 5}), "<i4", true),
            (json!({"id": "zfpy", "mode": 3, "precision": 10}), "<f8", false),
            (json!({"id": "pcodec"}), "<f4", true),
            (json!({"id": "pcodec", "level": 2}), "<i2", true),
            (json!({"id": "pcodec"}), "<u8", true),
        ];
        configs
            .into_iter()
            .map(|(config, dtype, lossless)| {
                let codec = from_config(config.as_object().unwrap(), 0)
                    .expect("fuzzed codec configuration is valid");
                (codec, DType::parse_v2(dtype).unwrap(), lossless)
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let mut input = libzarr_fuzz::Input(data);
    let table = codecs();
    let (codec, dtype, lossless) = &table[input.byte() as usize % table.len()];
    let typed = codec.typed().expect("a typed codec");
    let rank = 1 + input.below(4) as usize;
    let shape: Vec<u64> = (0..rank).map(|_| 1 + input.below(16)).collect();
    let payload = input.rest();
    let size = shape.iter().product::<u64>() as usize * dtype.item_size();

    // Hostile data: any outcome but a crash; nothing written past the chunk.
    let mut out = vec![0xA5u8; size + 16];
    let _ = typed.decode_typed(payload, dtype, &shape, &mut out[..size]);
    assert!(out[size..].iter().all(|&b| b == 0xA5), "decode wrote past its output");

    // The payload as a chunk's numbers (cut or padded to its size): encoded and decoded
    // back, exactly when the configuration is lossless.
    let mut chunk = payload.to_vec();
    chunk.resize(size, 0);
    if dtype.kind == zarr::dtype::DataKind::Float(4) || dtype.kind == zarr::dtype::DataKind::Float(8) {
        // NaN and infinities are outside zfp's lossy modes' promise; keep finite numbers.
        let unit = dtype.item_size();
        for item in chunk.chunks_exact_mut(unit) {
            item[unit - 1] &= 0x3f;
        }
    }
    let mut encoded = Vec::new();
    typed
        .encode_typed(&chunk, dtype, &shape, &mut encoded)
        .expect("encoding succeeds");
    let mut back = vec![0u8; size];
    typed
        .decode_typed(&encoded, dtype, &shape, &mut back)
        .expect("what was encoded decodes");
    if *lossless {
        assert_eq!(back, chunk, "lossless round trip changed the data");
    }
});
