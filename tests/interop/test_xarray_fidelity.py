"""xarray sees a netCDF file and its ``zarrtool import`` copy alike.

A CF netCDF-4 file made here by ``ncgen`` holds the cases CF data depends on: an unlimited
time with bounds (``hours since``, its first value 0), a scalar integer ``crs`` as grid
mapping, float32 data with a ``_FillValue`` (cells never written and cells holding it), a
packed short with float32 ``scale_factor``/``add_offset`` and a missing value, unsigned
byte flags, an integer with ``missing_value``, ``char`` and ``string`` variables,
coordinates with real zeros, a sub-group and global attributes. It is imported as Zarr v2
and v3, and ``xr.testing.assert_identical(xr.open_dataset(nc), xr.open_zarr(zarr))`` must
hold for the root and the group (decoding and masking on).

Where the two backends must differ, the difference is asserted exactly and then removed
before the comparison (see ``backend_differences``): Zarr attributes are JSON, whose numbers
carry no float32 type. Needs xarray and netCDF4-python (the zp3 environment); skipped
elsewhere.
"""

from __future__ import annotations

import subprocess
import warnings

import numpy as np
import pytest
import zarr

from test_cli_interop import zarrtool  # noqa: F401  (the session fixture)
from test_cli_interop import run

xr = pytest.importorskip("xarray")
pytest.importorskip("netCDF4")
ZARR_MAJOR = int(zarr.__version__.split(".")[0])
FORMATS = [2, 3] if ZARR_MAJOR >= 3 else [2]

CDL = """netcdf era {
dimensions:
  time = UNLIMITED ;
  bnds = 2 ;
  lat = 3 ;
  lon = 4 ;
  station = 3 ;
  nchar = 6 ;
variables:
  double time(time) ;
    time:units = "hours since 2000-01-01 00:00:00" ;
    time:calendar = "standard" ;
    time:standard_name = "time" ;
    time:bounds = "time_bnds" ;
  double time_bnds(time, bnds) ;
  double lat(lat) ;
    lat:units = "degrees_north" ;
    lat:standard_name = "latitude" ;
  double lon(lon) ;
    lon:units = "degrees_east" ;
    lon:standard_name = "longitude" ;
  int crs ;
    crs:grid_mapping_name = "latitude_longitude" ;
    crs:semi_major_axis = 6371229. ;
    crs:inverse_flattening = 0. ;
  float t2m(time, lat, lon) ;
    t2m:_FillValue = -9999.f ;
    t2m:units = "K" ;
    t2m:long_name = "2 metre temperature" ;
    t2m:grid_mapping = "crs" ;
    t2m:valid_range = 150.f, 350.f ;
    t2m:accuracy = 0.1f ;
  short tp(time, lat, lon) ;
    tp:scale_factor = 0.001f ;
    tp:add_offset = 10.f ;
    tp:_FillValue = -32767s ;
    tp:units = "m" ;
  ubyte flags(lat, lon) ;
    flags:flag_values = 0UB, 1UB, 2UB ;
    flags:flag_meanings = "land sea ice" ;
  int count(station) ;
    count:missing_value = -1 ;
  char station_name(station, nchar) ;
  string label(station) ;

// global attributes:
  :Conventions = "CF-1.8" ;
  :title = "ERA5-like test file" ;
  :version = 3 ;
  :resolution = 0.25 ;
data:
  time = 0, 1, 2 ;
  time_bnds = -0.5, 0.5, 0.5, 1.5, 1.5, 2.5 ;
  lat = -1, 0, 1 ;
  lon = 0, 0.25, 0.5, 0.75 ;
  crs = 0 ;
  t2m = 280, 281.5, _, 0,  -9999, 283.25, 284, 285,  286, 287, 288, 289,
        270, 271, 272, 273,  274, _, 276, 277,  278, 279, 280, 281,
        260, 261, 262, 263,  264, 265, 266, 267,  268, 269, 270, 271 ;
  tp = 0, 1, -32767, 3, 4, 5, 6, 7, 8, 9, 10, -10000,
       _, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
       100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200 ;
  flags = 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2 ;
  count = 0, -1, 7 ;
  station_name = "alpha", "b", "" ;
  label = "one", "", "three" ;

group: surface {
  dimensions:
    depth = 2 ;
  variables:
    float depth(depth) ;
      depth:units = "m" ;
    float sst(depth, lat, lon) ;
      sst:_FillValue = 1.e20f ;
      sst:units = "degC" ;
  // group attributes:
    :source = "model" ;
  data:
    depth = 0, 10 ;
    sst = 0, 1, 2, 3, 4, _, 6, 7, 8, 9, 10, 11,
          12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 1.e20 ;
  }
}
"""


@pytest.fixture(scope="module")
def netcdf_file(tmp_path_factory):
    """The CF file above, made by ncgen as netCDF-4."""
    root = tmp_path_factory.mktemp("fidelity")
    cdl = root / "era.cdl"
    cdl.write_text(CDL)
    nc = root / "era.nc"
    subprocess.run(["ncgen", "-k", "nc4", "-o", str(nc), str(cdl)], check=True)
    return nc


def open_both(nc, store, group):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = xr.open_dataset(nc, group=group).load()
        ours = xr.open_zarr(str(store), group=group, consolidated=False).load()
    return theirs, ours


def backend_differences(nc, theirs, ours):
    """Asserts, then removes, what differs between the backends by the formats' nature.

    - A float32 attribute is a JSON number in Zarr: xarray reads it as a Python float. libzarr
      writes its shortest text (``0.1``), so the float is the value netCDF's float32 means.
    - A packed variable decodes to the type of its ``scale_factor``: netCDF's float32 gives
      float32, Zarr's JSON number float64 (raw * 0.001 + 10 in double, which rounds to the
      netCDF values exactly).
    - A netCDF string variable reads as fixed-width unicode, a Zarr one as objects (same
      values; ``assert_identical`` compares values, not types).
    """
    if "t2m" not in theirs:
        return
    accuracy = theirs["t2m"].attrs["accuracy"]
    assert type(accuracy) is np.float32 and accuracy == np.float32(0.1)
    assert type(ours["t2m"].attrs["accuracy"]) is float
    assert ours["t2m"].attrs["accuracy"] == 0.1
    ours["t2m"].attrs["accuracy"] = accuracy

    assert theirs["tp"].dtype == np.float32 and ours["tp"].dtype == np.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = xr.open_dataset(nc, mask_and_scale=False)["tp"].values
    want = np.where(raw == -32767, np.nan, raw * 0.001 + 10.0)
    np.testing.assert_array_equal(ours["tp"].values, want)
    np.testing.assert_array_equal(ours["tp"].values.astype(np.float32), theirs["tp"].values)
    ours["tp"] = ours["tp"].astype(np.float32)

    assert theirs["label"].dtype == np.dtype("<U5") and ours["label"].dtype == object


@pytest.mark.parametrize("group", [None, "surface"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_import_is_identical_in_xarray(zarrtool, netcdf_file, tmp_path, fmt, group):
    store = tmp_path / f"v{fmt}.zarr"
    run(zarrtool, "import", netcdf_file, store, "--format", fmt)
    theirs, ours = open_both(netcdf_file, store, group)
    backend_differences(netcdf_file, theirs, ours)
    xr.testing.assert_identical(theirs, ours)


@pytest.mark.parametrize("fmt", FORMATS)
def test_import_decodes_the_cf_cases(zarrtool, netcdf_file, tmp_path, fmt):
    """The values themselves, so that an error both backends shared would show too."""
    store = tmp_path / f"v{fmt}.zarr"
    run(zarrtool, "import", netcdf_file, store, "--format", fmt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(str(store), consolidated=False).load()
        sub = xr.open_zarr(str(store), group="surface", consolidated=False).load()
    nan = np.nan
    hours = np.array([0, 1, 2], dtype="timedelta64[h]")
    start = np.datetime64("2000-01-01T00:00", "ns")
    np.testing.assert_array_equal(ds["time"].values, start + hours)
    np.testing.assert_array_equal(ds["time_bnds"].values[0],
                                  start + np.array([-30, 30], dtype="timedelta64[m]"))
    np.testing.assert_array_equal(ds["lat"].values, [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(ds["lon"].values, [0.0, 0.25, 0.5, 0.75])
    assert ds["crs"].dtype == np.int32 and ds["crs"].dims == () and int(ds["crs"]) == 0
    np.testing.assert_array_equal(ds["t2m"].values[0, 0], [280.0, 281.5, nan, 0.0])
    np.testing.assert_array_equal(ds["t2m"].values[0, 1], [nan, 283.25, 284.0, 285.0])
    assert ds["t2m"].dtype == np.float32 and ds["t2m"].encoding["_FillValue"] == -9999.0
    assert np.isnan(ds["tp"].values[0, 0, 2]) and np.isnan(ds["tp"].values[1, 0, 0])
    assert ds["tp"].values[0, 2, 3] == -10000 * 0.001 + 10.0
    assert ds["tp"].encoding["dtype"] == np.int16
    assert ds["flags"].dtype == np.uint8
    assert ds["flags"].attrs["flag_values"] == [0, 1, 2]
    np.testing.assert_array_equal(ds["count"].values, [0.0, nan, 7.0])
    assert ds["count"].encoding["dtype"] == np.int32
    assert ds["station_name"].values.tolist() == [b"alpha", b"b", b""]
    assert ds["label"].values.tolist() == ["one", "", "three"]
    assert ds.attrs == {"Conventions": "CF-1.8", "title": "ERA5-like test file",
                        "version": 3, "resolution": 0.25}
    np.testing.assert_array_equal(sub["depth"].values, [0.0, 10.0])
    np.testing.assert_array_equal(sub["sst"].values[0, 1], [4.0, nan, 6.0, 7.0])
    assert np.isnan(sub["sst"].values[1, 2, 3]) and sub["sst"].values[0, 0, 0] == 0.0
    assert sub.attrs == {"source": "model"}
