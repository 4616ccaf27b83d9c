//! `zarrtool version`: the version and, with --features, what this build supports.

use crate::out::Out;
use zarr::Result;

/// Prints the version and, with `features`, what this build supports.
pub fn run(features: bool) -> Result<u8> {
    let mut out = Out::new();
    out.line(format!("zarrtool {}", env!("CARGO_PKG_VERSION")))?;
    if features {
        for line in feature_lines() {
            out.line(line)?;
        }
    }
    out.finish()?;
    Ok(0)
}

/// The text of `zarrtool --version`: the version and the optional parts this build has.
pub fn long_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let parts: Vec<&str> = [
            ("cloud", cfg!(feature = "cloud")),
            ("zfp", cfg!(feature = "zfp")),
            ("pcodec", cfg!(feature = "pcodec")),
            ("icechunk", cfg!(feature = "icechunk")),
            ("netcdf", cfg!(feature = "netcdf")),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect();
        let parts = if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(" ")
        };
        format!(
            "{}\nbuilt with: {parts} (zarrtool version --features says more)",
            env!("CARGO_PKG_VERSION")
        )
    })
}

/// What this build supports, one line each.
fn feature_lines() -> Vec<String> {
    let cloud = if cfg!(feature = "cloud") {
        "s3:// gs:// az:// abfs:// http(s)://"
    } else {
        "none (built without the cloud feature)"
    };
    vec![
        "formats: v1 (read, migrate) v2 v3 2022-draft".into(),
        "stores: directory zip memory reference (kerchunk JSON, read-only)".into(),
        format!("object stores: {cloud}"),
        icechunk_line().into(),
        "codecs: blosc gzip zlib zstd bz2 lzma lz4 crc32c crc32 adler32 fletcher32 jenkins_lookup3 \
         shuffle base64 delta fixedscaleoffset quantize bitround packbits categorize astype transpose \
         sharding_indexed vlen-utf8 vlen-bytes vlen-array scale_offset cast_value reshape"
            .into(),
        format!(
            "lossy codecs: {}",
            match (cfg!(feature = "zfp"), cfg!(feature = "pcodec")) {
                (true, true) => "zfp zfpy pcodec",
                (true, false) => "zfp zfpy (built without pcodec)",
                (false, true) => "pcodec (built without zfp)",
                (false, false) => "none (built without zfp and pcodec)",
            }
        ),
        netcdf_line(),
        format!("threads: {}", zarr::io::pool::num_threads()),
    ]
}

/// Whether `icechunk:///PATH` URLs and the repository commands work.
fn icechunk_line() -> &'static str {
    if cfg!(feature = "icechunk") {
        "icechunk: icechunk:///PATH repositories (copy --commit, log, tag, branch)"
    } else {
        "icechunk: none (built without the icechunk feature)"
    }
}

/// Whether (and through which library version) `import` reads netCDF files.
fn netcdf_line() -> String {
    #[cfg(feature = "netcdf")]
    let line = format!(
        "netcdf: import of netCDF-3, netCDF-4 and HDF5 files, export to netCDF-4, references to \
         their chunks (libnetcdf {})",
        crate::netcdf::library_version()
    );
    #[cfg(not(feature = "netcdf"))]
    let line = "netcdf: none (built without the netcdf feature)".to_string();
    line
}
