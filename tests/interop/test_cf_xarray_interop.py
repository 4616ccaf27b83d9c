"""What libzarr writes means the same in xarray: missing values and default fill values.

libzarr's C API (``zarr_tool build`` with ZARR_TOOL_MISSING, i.e.
``zarr_array_builder_set_missing_value``) writes arrays with and without a CF missing value,
in Zarr v2 and v3; xarray (``xr.open_zarr``, mask_and_scale on) must decode exactly: missing
cells (written as the missing value, or never written) NaN, real zeros unmasked, no
``_FillValue`` where none was meant, the stored dtypes as written. Then a netCDF-4 file made
by ``ncgen`` is imported by ``zarrtool import`` as v2 and v3, and xarray's view of the Zarr
copy is compared with netCDF's own (``ncdump``). Skipped where xarray is not installed.
"""

from __future__ import annotations

import json
import re
import subprocess
import warnings

import numpy as np
import pytest
import zarr

from test_cli_interop import zarrtool  # noqa: F401  (the session fixture)
from test_cli_interop import run
from test_v2_interop import tool  # noqa: F401  (the session fixture)

xr = pytest.importorskip("xarray")
ZARR_MAJOR = int(zarr.__version__.split(".")[0])
FORMATS = [2, 3] if ZARR_MAJOR >= 3 else [2]

# (dtype, missing value)
MISSING = [("<f4", -9999.0), ("<f8", -9999.0), ("<i2", -9999), ("<i4", -9999),
           ("<i8", -9999), ("|u1", 255)]


def open_zarr(store):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_zarr(str(store), consolidated=False)


def build(tool, tmp_path, monkeypatch, store, name, dtype, data, *, fmt, missing=None,
          dims="x", chunks="2"):
    monkeypatch.setenv("ZARR_TOOL_FORMAT", str(fmt))
    monkeypatch.setenv("ZARR_TOOL_DIMS", dims)
    if missing is None:
        monkeypatch.delenv("ZARR_TOOL_MISSING", raising=False)
    else:
        monkeypatch.setenv("ZARR_TOOL_MISSING", repr(float(missing)))
    tool.build(tmp_path, store, name, dtype=dtype, shape=list(data.shape), chunks=chunks,
               fill="-", order="-", sep="-", compressor="null",
               data=np.ascontiguousarray(data, dtype=dtype).tobytes(), buf_order="C")


def assert_decoded(var, expected, what):
    got = var.values
    assert got.shape == expected.shape, what
    assert np.array_equal(np.isnan(got) if got.dtype.kind == "f" else np.zeros(got.shape, bool),
                          np.isnan(expected)), f"{what}: mask {got}"
    ok = ~np.isnan(expected)
    assert np.array_equal(got[ok].astype("f8"), expected[ok]), f"{what}: {got}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_missing_values_and_defaults_decode_as_meant(tool, tmp_path, monkeypatch, fmt):
    store = tmp_path / f"v{fmt}.zarr"
    # A coordinate with a real 0.0 first, no missing value given.
    build(tool, tmp_path, monkeypatch, store, "x", "<f8", np.array([0.0, 1.0, 2.0, 3.0]),
          fmt=fmt)
    for dtype, m in MISSING:
        # Written: a real zero, the missing value; cells 4 and 5 are never written.
        data = np.array([0, 1, m, 3, 0, 0], dtype=dtype)
        name = f"m_{np.dtype(dtype).name}"
        build(tool, tmp_path, monkeypatch, store, name, dtype, data[:4], fmt=fmt, missing=m,
              dims="y")
        tool.resize(store, name, [6])
        # The same without a missing value.
        build(tool, tmp_path, monkeypatch, store, f"plain_{np.dtype(dtype).name}", dtype,
              data[:4], fmt=fmt)
    build(tool, tmp_path, monkeypatch, store, "crs", "<i4", np.array(0, dtype="<i4"), fmt=fmt,
          dims="", chunks="")
    ds = open_zarr(store)
    nan = np.nan
    assert_decoded(ds["x"], np.array([0.0, 1.0, 2.0, 3.0]), "coordinate x")
    assert "_FillValue" not in ds["x"].attrs
    for dtype, m in MISSING:
        name = np.dtype(dtype).name
        var = ds[f"m_{name}"]
        what = f"v{fmt} {dtype} missing {m}"
        assert_decoded(var, np.array([0, 1, nan, 3, nan, nan]), what)
        assert var.encoding["_FillValue"] == m, what
        assert var.encoding["dtype"] == np.dtype(dtype), what
        plain = ds[f"plain_{name}"]
        what = f"v{fmt} {dtype} without a missing value"
        assert_decoded(plain, np.array([0, 1, m, 3]).astype("f8"), what)
        assert plain.dtype == np.dtype(dtype), what
        assert "_FillValue" not in plain.attrs, what
        fill = plain.encoding.get("_FillValue")
        if np.dtype(dtype).kind == "f":
            assert fill is None or np.isnan(fill), what
        else:
            assert fill is None, what
    assert ds["crs"].dims == ()
    assert ds["crs"].dtype == np.dtype("<i4")
    assert int(ds["crs"].values) == 0


CDL = """netcdf cf {
dimensions:
  time = 2 ; x = 3 ; station = 2 ;
variables:
  double time(time) ;
    time:units = "days since 2000-01-01" ;
  double x(x) ;
  int crs ;
    crs:grid_mapping_name = "latitude_longitude" ;
  int64 station_id(station) ;
  float t2m(time, x) ;
    t2m:_FillValue = -9999.f ;
    t2m:units = "K" ;
  short q(time, x) ;
    q:missing_value = -1s ;
  byte flag(x) ;
    flag:_FillValue = 127b ;
  float implicit(x) ;
data:
  time = 0, 1 ;
  x = 0, 1.5, 3 ;
  crs = 0 ;
  station_id = 0, 7 ;
  t2m = 280, _, 0, 281, 282, _ ;
  q = 0, -1, 5, 6, 7, 8 ;
  flag = 0, _, 1 ;
  implicit = 0, _, 2 ;
}
"""

# netCDF's default fill values, which stay data (xarray reading the .nc masks nothing).
NC_DEFAULT_FILL = {"float": np.float32(9.96921e36).item(), "double": 9.969209968386869e36}


def ncdump_values(nc) -> dict:
    """Each variable's values as ncdump prints them; `_` (netCDF's fill) is None."""
    text = subprocess.run(["ncdump", str(nc)], capture_output=True, text=True,
                          check=True).stdout
    data = text.split("data:", 1)[1]
    out = {}
    for name, body in re.findall(r"(\w+) =\s*([^;]*);", data):
        out[name] = [None if t.strip() == "_" else float(t) for t in body.split(",")]
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_netcdf_import_decodes_as_netcdf_shows(zarrtool, tmp_path, fmt):
    cdl = tmp_path / "cf.cdl"
    cdl.write_text(CDL)
    nc = tmp_path / "cf.nc"
    subprocess.run(["ncgen", "-k", "nc4", "-o", str(nc), str(cdl)], check=True)
    store = tmp_path / f"cf{fmt}.zarr"
    run(zarrtool, "import", nc, store, "--format", fmt)
    ds = open_zarr(store)
    theirs = ncdump_values(nc)
    # Variables with an explicit _FillValue or missing_value: netCDF's `_` and the missing
    # value are NaN; the rest is exact.
    masked = {"t2m": -9999.0, "q": -1.0, "flag": 127.0}
    for name, values in theirs.items():
        want = []
        for v in values:
            if name in masked and (v is None or v == masked[name]):
                want.append(np.nan)
            elif v is None:  # an implicit fill: the default value, unmasked
                want.append(NC_DEFAULT_FILL["float"])
            else:
                want.append(v)
        var = ds[name]
        what = f"v{fmt} {name}"
        if name == "time":
            assert var.values.astype("datetime64[D]").astype(int).tolist() == [10957, 10958]
            assert "_FillValue" not in var.encoding or np.isnan(var.encoding["_FillValue"])
            continue
        got = np.atleast_1d(var.values).ravel().astype("f8")
        assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}: {got}"
        ok = ~np.isnan(want)
        assert np.allclose(got[ok], np.array(want)[ok], rtol=1e-7, atol=0), f"{what}: {got}"
        if name in masked:
            assert var.encoding["_FillValue"] == masked[name], what
        else:
            # Implicit netCDF fills add no mask (as xarray reading the .nc).
            fill = var.encoding.get("_FillValue")
            assert fill is None or np.isnan(fill), f"{what}: _FillValue {fill}"
    # Stored types as netCDF has them (crs and station_id stay integers).
    assert ds["crs"].dtype == np.dtype("int32") and ds["crs"].dims == ()
    assert ds["station_id"].dtype == np.dtype("int64")
    assert ds["x"].values[0] == 0.0
    meta = json.loads((store / ("crs/.zattrs" if fmt == 2 else "crs/zarr.json")).read_text())
    if fmt == 2:
        assert meta["_ARRAY_DIMENSIONS"] == []


@pytest.mark.skipif(ZARR_MAJOR < 3, reason="zarr-python 2 leaves the unwritten chunks of a "
                    "null-fill array uninitialised (its own arrays with fill_value=None too)")
def test_null_fill_reads_as_zeros(tool, tmp_path, monkeypatch):
    """A v2 integer array made without a fill value has a null fill: libzarr, zarr-python 3
    and tensorstore read its unwritten cells as zeros."""
    store = tmp_path / "null.zarr"
    build(tool, tmp_path, monkeypatch, store, "n", "<i2", np.array([5, 6], dtype="<i2"), fmt=2)
    tool.resize(store, "n", [6])
    assert json.loads((store / "n" / ".zarray").read_text())["fill_value"] is None
    want = [5, 6, 0, 0, 0, 0]
    assert zarr.open_array(str(store / "n"), mode="r")[:].tolist() == want
    data, _ = tool.dump(tmp_path, store, "n", "C")
    assert np.frombuffer(data, dtype="<i2").tolist() == want
    ts = pytest.importorskip("tensorstore")
    spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": str(store / "n")}}
    assert ts.open(spec).result().read().result().tolist() == want
