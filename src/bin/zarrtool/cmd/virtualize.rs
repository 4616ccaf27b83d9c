//! `zarrtool virtualize`: kerchunk references to the values of netCDF files (with the
//! netcdf feature; see `crate::netcdf::virtualize`).

use zarr::Result;

/// Writes the references of `files` to `output`, concatenated along `concat`.
pub fn run(files: &[String], output: &str, concat: Option<&str>, overwrite: bool) -> Result<u8> {
    #[cfg(feature = "netcdf")]
    {
        crate::netcdf::virtualize::run(files, output, concat, overwrite)
    }
    #[cfg(not(feature = "netcdf"))]
    {
        let _ = (files, output, concat, overwrite);
        Err(zarr::Error::Unsupported(
            "this build of zarrtool has no netCDF support (it needs the system netCDF \
             library: cargo feature netcdf, CMake option ZARR_NETCDF)"
                .into(),
        ))
    }
}
