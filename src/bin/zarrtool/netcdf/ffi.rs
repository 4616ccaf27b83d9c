//! The part of the netCDF C API (netCDF 4.x, `netcdf.h`) that import and export use.

use std::ffi::{c_char, c_int, c_void};

pub const NC_NOERR: c_int = 0;
pub const NC_NOWRITE: c_int = 0;
pub const NC_GLOBAL: c_int = -1;
pub const NC_MAX_NAME: usize = 256;
pub const NC_CHUNKED: c_int = 0;
/// `nc_create`: a netCDF-4 (HDF5) file.
pub const NC_NETCDF4: c_int = 0x1000;
/// `nc_create`: fail when the file exists.
pub const NC_NOCLOBBER: c_int = 0x4;
/// `nc_def_dim`: an unlimited dimension.
pub const NC_UNLIMITED: usize = 0;

pub const NC_BYTE: c_int = 1;
pub const NC_CHAR: c_int = 2;
pub const NC_SHORT: c_int = 3;
pub const NC_INT: c_int = 4;
pub const NC_FLOAT: c_int = 5;
pub const NC_DOUBLE: c_int = 6;
pub const NC_UBYTE: c_int = 7;
pub const NC_USHORT: c_int = 8;
pub const NC_UINT: c_int = 9;
pub const NC_INT64: c_int = 10;
pub const NC_UINT64: c_int = 11;
pub const NC_STRING: c_int = 12;

pub const NC_VLEN: c_int = 13;
pub const NC_OPAQUE: c_int = 14;
pub const NC_ENUM: c_int = 15;
pub const NC_COMPOUND: c_int = 16;

#[link(name = "netcdf")]
extern "C" {
    pub fn nc_open(path: *const c_char, mode: c_int, ncidp: *mut c_int) -> c_int;
    pub fn nc_close(ncid: c_int) -> c_int;
    pub fn nc_strerror(ncerr: c_int) -> *const c_char;
    pub fn nc_inq_libvers() -> *const c_char;
    pub fn nc_inq_grps(ncid: c_int, numgrps: *mut c_int, ncids: *mut c_int) -> c_int;
    pub fn nc_inq_grpname(ncid: c_int, name: *mut c_char) -> c_int;
    pub fn nc_inq_varids(ncid: c_int, nvars: *mut c_int, varids: *mut c_int) -> c_int;
    pub fn nc_inq_var(
        ncid: c_int,
        varid: c_int,
        name: *mut c_char,
        xtypep: *mut c_int,
        ndimsp: *mut c_int,
        dimidsp: *mut c_int,
        nattsp: *mut c_int,
    ) -> c_int;
    pub fn nc_inq_dim(ncid: c_int, dimid: c_int, name: *mut c_char, lenp: *mut usize) -> c_int;
    pub fn nc_inq_natts(ncid: c_int, ngattsp: *mut c_int) -> c_int;
    pub fn nc_inq_attname(ncid: c_int, varid: c_int, attnum: c_int, name: *mut c_char) -> c_int;
    pub fn nc_inq_att(
        ncid: c_int,
        varid: c_int,
        name: *const c_char,
        xtypep: *mut c_int,
        lenp: *mut usize,
    ) -> c_int;
    pub fn nc_get_att(ncid: c_int, varid: c_int, name: *const c_char, ip: *mut c_void) -> c_int;
    pub fn nc_free_string(len: usize, data: *mut *mut c_char) -> c_int;
    pub fn nc_inq_var_chunking(
        ncid: c_int,
        varid: c_int,
        storagep: *mut c_int,
        chunksizesp: *mut usize,
    ) -> c_int;
    pub fn nc_inq_var_fill(
        ncid: c_int,
        varid: c_int,
        no_fill: *mut c_int,
        fill_valuep: *mut c_void,
    ) -> c_int;
    pub fn nc_get_vara(
        ncid: c_int,
        varid: c_int,
        startp: *const usize,
        countp: *const usize,
        ip: *mut c_void,
    ) -> c_int;
    pub fn nc_inq_user_type(
        ncid: c_int,
        xtype: c_int,
        name: *mut c_char,
        size: *mut usize,
        base_nc_typep: *mut c_int,
        nfieldsp: *mut usize,
        classp: *mut c_int,
    ) -> c_int;
    pub fn nc_create(path: *const c_char, cmode: c_int, ncidp: *mut c_int) -> c_int;
    pub fn nc_enddef(ncid: c_int) -> c_int;
    pub fn nc_def_grp(parent: c_int, name: *const c_char, ncidp: *mut c_int) -> c_int;
    pub fn nc_def_dim(ncid: c_int, name: *const c_char, len: usize, idp: *mut c_int) -> c_int;
    pub fn nc_def_var(
        ncid: c_int,
        name: *const c_char,
        xtype: c_int,
        ndims: c_int,
        dimidsp: *const c_int,
        varidp: *mut c_int,
    ) -> c_int;
    pub fn nc_def_var_chunking(
        ncid: c_int,
        varid: c_int,
        storage: c_int,
        chunksizesp: *const usize,
    ) -> c_int;
    pub fn nc_def_var_deflate(
        ncid: c_int,
        varid: c_int,
        shuffle: c_int,
        deflate: c_int,
        deflate_level: c_int,
    ) -> c_int;
    pub fn nc_def_var_fill(
        ncid: c_int,
        varid: c_int,
        no_fill: c_int,
        fill_value: *const c_void,
    ) -> c_int;
    pub fn nc_put_att(
        ncid: c_int,
        varid: c_int,
        name: *const c_char,
        xtype: c_int,
        len: usize,
        op: *const c_void,
    ) -> c_int;
    pub fn nc_put_vara(
        ncid: c_int,
        varid: c_int,
        startp: *const usize,
        countp: *const usize,
        op: *const c_void,
    ) -> c_int;
}
