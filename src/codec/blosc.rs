//! Blosc (c-blosc 1.x, built from source), byte-compatible with numcodecs' `Blosc`.
//! Compression runs single-threaded inside blosc: libzarr parallelises across chunks.

use super::{config_map, Codec, Config};
use crate::error::{Error, Result};
use blosc_src as ffi;
use serde_json::{Map, Value};
use std::ffi::{c_void, CString};

const CNAMES: [&str; 6] = ["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"];

/// The blosc codec.
#[derive(Debug)]
pub struct Blosc {
    cname: CString,
    clevel: i64,
    shuffle: i64,
    blocksize: i64,
    typesize: Option<i64>,
    item_size: usize,
}

impl Blosc {
    /// Builds the codec; defaults are numcodecs' (lz4, level 5, byte shuffle). A `typesize`
    /// equal to the item size (as Zarr v3 metadata always gives it) is the default and is not
    /// kept: v2 metadata written from it then has no `typesize`, which numcodecs before 0.16
    /// refuses.
    pub(crate) fn from_config(cfg: &Config, item_size: usize) -> Result<Self> {
        let cname = cfg.string("cname", "lz4")?;
        if !CNAMES.contains(&cname) {
            return Err(cfg.bad("cname", &format!("one of {CNAMES:?}")));
        }
        Ok(Blosc {
            cname: CString::new(cname).map_err(|_| cfg.bad("cname", "a plain string"))?,
            clevel: cfg.int("clevel", 5, 0..=9)?,
            shuffle: cfg.int("shuffle", 1, -1..=2)?,
            blocksize: cfg.int("blocksize", 0, 0..=i32::MAX as i64)?,
            // 0 (which earlier libzarr builds wrote for variable-length items) is unset too.
            typesize: if cfg.has("typesize") {
                Some(cfg.int("typesize", 1, 0..=i32::MAX.into())?)
                    .filter(|&t| t != 0 && t as usize != item_size.max(1))
            } else {
                None
            },
            item_size,
        })
    }

    /// The type size given to blosc, as numcodecs gives it: the configured one or the item
    /// size (1 for bytes). c-blosc shuffles by 1 beyond its 255; zarr-python 3 writes the
    /// item size of wide items as it is.
    fn typesize(&self) -> usize {
        self.typesize.map_or(self.item_size, |t| t as usize).max(1)
    }
}

impl Codec for Blosc {
    fn config(&self) -> Map<String, Value> {
        let mut map = config_map([
            ("id", "blosc".into()),
            ("cname", self.cname.to_str().unwrap_or("lz4").into()),
            ("clevel", self.clevel.into()),
            ("shuffle", self.shuffle.into()),
            ("blocksize", self.blocksize.into()),
        ]);
        if let Some(t) = self.typesize {
            map.insert("typesize".into(), t.into());
        }
        map
    }

    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        if data.len() > ffi::BLOSC_MAX_BUFFERSIZE as usize {
            return Err(Error::Codec(format!(
                "blosc cannot compress {} bytes (its limit is {})",
                data.len(),
                ffi::BLOSC_MAX_BUFFERSIZE
            )));
        }
        let typesize = self.typesize();
        let shuffle = match self.shuffle {
            -1 if typesize == 1 => ffi::BLOSC_BITSHUFFLE as i32,
            -1 => ffi::BLOSC_SHUFFLE as i32,
            s => s as i32,
        };
        let capacity = data.len() + ffi::BLOSC_MAX_OVERHEAD as usize;
        crate::error::try_resize(out, capacity, "blosc output")?;
        // SAFETY: src and dest are valid for the lengths given and do not overlap.
        let n = unsafe {
            ffi::blosc_compress_ctx(
                self.clevel as i32,
                shuffle,
                typesize,
                data.len(),
                data.as_ptr() as *const c_void,
                out.as_mut_ptr() as *mut c_void,
                capacity,
                self.cname.as_ptr(),
                self.blocksize as usize,
                1,
            )
        };
        if n <= 0 {
            return Err(Error::Codec(format!("blosc compression failed ({n})")));
        }
        out.truncate(n as usize);
        Ok(())
    }

    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let mut nbytes = 0usize;
        // SAFETY: blosc reads at most `data.len()` bytes of `data`.
        let valid = unsafe {
            ffi::blosc_cbuffer_validate(data.as_ptr() as *const c_void, data.len(), &mut nbytes)
        };
        if valid != 0 {
            return Err(Error::Codec("blosc data is truncated or not blosc".into()));
        }
        super::check_len("blosc", nbytes, out.len())?;
        // SAFETY: validated above; blosc writes at most `out.len()` bytes.
        let n = unsafe {
            ffi::blosc_decompress_ctx(
                data.as_ptr() as *const c_void,
                out.as_mut_ptr() as *mut c_void,
                out.len(),
                1,
            )
        };
        if n < 0 || n as usize != out.len() {
            return Err(Error::Codec(format!("blosc data is corrupt (status {n})")));
        }
        Ok(())
    }

    fn decoded_len(&self, data: &[u8]) -> Result<usize> {
        let mut nbytes = 0usize;
        // SAFETY: blosc reads at most `data.len()` bytes of `data`.
        let valid = unsafe {
            ffi::blosc_cbuffer_validate(data.as_ptr() as *const c_void, data.len(), &mut nbytes)
        };
        if valid != 0 {
            return Err(Error::Codec("blosc data is truncated or not blosc".into()));
        }
        Ok(nbytes)
    }
}
