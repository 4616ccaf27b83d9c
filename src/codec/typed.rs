//! Codecs that encode a chunk's numbers knowing their type and the chunk's shape (`zfp`,
//! numcodecs' `zfpy` and `pcodec`). Zarr v3 lists them as the array→bytes codec; numcodecs
//! as a v2 compressor that receives the chunk's array. In the chain they stand first among
//! the bytes→bytes codecs, right after a `bytes` codec that hands them the items in a known
//! byte order, and the chain gives them the item type and the stored chunk shape.

use crate::dtype::DType;
#[cfg(any(feature = "zfp", feature = "pcodec"))]
use crate::dtype::{swap_bytes, ByteOrder};
use crate::error::{Error, Result};
#[cfg(any(feature = "zfp", feature = "pcodec"))]
use crate::io::cast::Native;

/// A codec of typed chunks.
pub trait TypedCodec: Send + Sync {
    /// Checks that items of `item` in chunks of `rank` dimensions can be encoded.
    fn check(&self, item: &DType, rank: usize) -> Result<()>;
    /// Encodes `data` (items of `item`, in its byte order, a chunk of `shape`) into `out`,
    /// replacing its contents.
    fn encode_typed(
        &self,
        data: &[u8],
        item: &DType,
        shape: &[u64],
        out: &mut Vec<u8>,
    ) -> Result<()>;
    /// Decodes `data` into `out`, exactly the chunk's bytes (items of `item` in its byte
    /// order, a chunk of `shape`); data that decodes to anything else is an error.
    fn decode_typed(&self, data: &[u8], item: &DType, shape: &[u64], out: &mut [u8]) -> Result<()>;
}

/// The error a typed codec gives when it is used as a plain bytes→bytes codec.
pub(crate) fn misplaced(id: &str) -> Error {
    Error::CodecUnsupported(format!(
        "codec {id} encodes a chunk's numbers: it must come right after the bytes codec \
         (Zarr v3: in its place), with no other codec before it"
    ))
}

#[cfg(any(feature = "zfp", feature = "pcodec"))]
/// A vector of `n` default values, allocated fallibly.
pub(crate) fn zeroed<T: Default + Clone>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| crate::error::no_memory(n.saturating_mul(std::mem::size_of::<T>()), what))?;
    v.resize(n, T::default());
    Ok(v)
}

#[cfg(any(feature = "zfp", feature = "pcodec"))]
/// Whether items in `order` are not in this machine's byte order.
fn swapped(order: ByteOrder) -> bool {
    order != ByteOrder::NotApplicable && order != ByteOrder::NATIVE
}

#[cfg(any(feature = "zfp", feature = "pcodec"))]
/// The numbers `data` holds (items of `T`'s size in `order`).
pub(crate) fn load<T: Native + Default>(data: &[u8], order: ByteOrder) -> Result<Vec<T>> {
    let mut values = zeroed::<T>(data.len() / T::SIZE, "a chunk")?;
    for (v, b) in values.iter_mut().zip(data.chunks_exact(T::SIZE)) {
        *v = T::load(b);
    }
    if swapped(order) && T::SIZE > 1 {
        // Loaded as native numbers, the bytes are still in stored order: swap them back.
        let mut bytes = zeroed::<u8>(data.len(), "a chunk")?;
        store(&values, &mut bytes, ByteOrder::NATIVE);
        swap_bytes(&mut bytes, T::SIZE);
        for (v, b) in values.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
            *v = T::load(b);
        }
    }
    Ok(values)
}

#[cfg(any(feature = "zfp", feature = "pcodec"))]
/// Writes `values` into `out` in `order`.
pub(crate) fn store<T: Native>(values: &[T], out: &mut [u8], order: ByteOrder) {
    for (v, b) in values.iter().zip(out.chunks_exact_mut(T::SIZE)) {
        v.store(b);
    }
    if swapped(order) {
        swap_bytes(out, T::SIZE);
    }
}

#[cfg(feature = "zfp")]
/// The number of items in a chunk of `shape`, checked.
pub(crate) fn element_count(shape: &[u64]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
        .ok_or_else(|| Error::Metadata(format!("chunk shape {shape:?} is too large")))
}

#[cfg(all(test, feature = "zfp", feature = "pcodec"))]
mod tests {
    use crate::dtype::DType;
    use serde_json::Value;

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Chunks numcodecs made with zfpy and pcodec decode to the numbers numcodecs decodes
    /// them to, and ours encode to the same bytes where the library is the same (zfp).
    #[test]
    fn numcodecs_vectors_decode_exactly() {
        let file: Value =
            serde_json::from_str(include_str!("../../tests/data/lossy_codec_vectors.json"))
                .unwrap();
        let cases = file["cases"].as_array().unwrap();
        assert!(cases.len() > 50);
        for case in cases {
            let config = case["config"].as_object().unwrap();
            let codec = super::super::from_config(config, 0).unwrap();
            let typed = codec.typed().expect("a typed codec");
            let dtype = DType::parse_v2(case["dtype"].as_str().unwrap()).unwrap();
            let shape: Vec<u64> = case["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap())
                .collect();
            typed.check(&dtype, shape.len()).unwrap();
            let (data, encoded, decoded) = (
                hex(case["data"].as_str().unwrap()),
                hex(case["encoded"].as_str().unwrap()),
                hex(case["decoded"].as_str().unwrap()),
            );
            let mut out = vec![0u8; decoded.len()];
            typed
                .decode_typed(&encoded, &dtype, &shape, &mut out)
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            assert!(out == decoded, "decoding {}", case["config"]);
            let mut ours = Vec::new();
            typed
                .encode_typed(&data, &dtype, &shape, &mut ours)
                .unwrap();
            if config["id"] == "zfpy" {
                assert!(ours == encoded, "encoding {}", case["config"]);
            } else {
                // pco's encoder may choose differently between versions: ours must read
                // back to the input exactly.
                let mut back = vec![0u8; data.len()];
                typed
                    .decode_typed(&ours, &dtype, &shape, &mut back)
                    .unwrap();
                assert!(back == data, "pcodec round trip {}", case["config"]);
            }
        }
    }
}
