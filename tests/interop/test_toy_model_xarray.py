"""A C program writing like a weather model is read by xarray as the model meant.

tests/interop/toy_model.c writes, through libzarr's C API, a 4-D float32 field ``t``
(time, level, lat, lon) with a CF missing value, its coordinates, and CF attributes set by
the typed attribute calls; ``time`` and ``t`` grow one step at a time by
``zarr_array_append`` (the last step by resize, writing one level of the three). xarray
(``xr.open_zarr``, decoding and masking on) must give: the cells written as the missing
value and the cells never written NaN, every other value exact; coordinates (holding 0.0)
unmasked; time as datetime64; the attributes with the types JSON keeps. Zarr v2 and v3.
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings

import numpy as np
import pytest
import zarr

from test_v2_interop import tool  # noqa: F401  (the session fixture)

xr = pytest.importorskip("xarray")
ZARR_MAJOR = int(zarr.__version__.split(".")[0])
FORMATS = [2, 3] if ZARR_MAJOR >= 3 else [2]
HERE = os.path.dirname(os.path.abspath(__file__))

NLEV, NLAT, NLON, STEPS = 3, 3, 4, 4


@pytest.fixture(scope="module")
def toy_model(tool):  # noqa: F811  (the fixture imported above)
    """toy_model.c compiled against the library the session snapshotted for the tool."""
    libdir = tool.exe.parent / "lib"
    exe = tool.exe.parent / "toy_model"
    if not exe.exists():
        subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Wextra", "-Werror",
                        "-I", os.path.join(HERE, "..", "..", "include"),
                        os.path.join(HERE, "toy_model.c"), "-L", str(libdir), "-lzarr",
                        f"-Wl,-rpath,{libdir}", "-o", str(exe)], check=True)
    return exe


def expected_field():
    """What toy_model.c means: its formula, NaN where it wrote the missing value and where
    it wrote nothing (levels 1 and 2 of the last step)."""
    s, k, j, i = np.meshgrid(np.arange(STEPS), np.arange(NLEV), np.arange(NLAT),
                             np.arange(NLON), indexing="ij")
    t = (250 + 10 * k + j + 0.25 * i + 0.5 * s).astype(np.float32)
    for step in range(STEPS):
        t[step, step % NLEV, 1, step % NLON] = np.nan
    t[STEPS - 1, 1:] = np.nan
    return t


@pytest.mark.parametrize("fmt", FORMATS)
def test_toy_model_reads_in_xarray_as_written(toy_model, tmp_path, fmt):
    store = tmp_path / f"toy{fmt}.zarr"
    proc = subprocess.run([str(toy_model), str(store), str(fmt)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(str(store), consolidated=False).load()

    t = ds["t"]
    assert t.dims == ("time", "level", "lat", "lon")
    assert t.dtype == np.float32
    np.testing.assert_array_equal(t.values, expected_field())
    assert t.encoding["_FillValue"] == -9999.0
    assert t.encoding["dtype"] == np.float32
    # The never-written levels of the last step have no chunks: they read as missing.
    if fmt == 2:
        assert not (store / "t" / "3.1.0.0").exists()
    else:
        assert not (store / "t" / "c" / "3" / "1").exists()

    # Coordinates: real zeros, nothing masked; time decoded from "hours since".
    np.testing.assert_array_equal(ds["lat"].values, [-10.0, 0.0, 10.0])
    np.testing.assert_array_equal(ds["lon"].values, [0.0, 90.0, 180.0, 270.0])
    np.testing.assert_array_equal(ds["level"].values, np.array([1000, 850, 500], np.float32))
    assert ds["lat"].dtype == np.float64 and ds["level"].dtype == np.float32
    for name in ("lat", "lon", "level", "time"):
        assert "_FillValue" not in ds[name].attrs, name
    assert ds["time"].dtype == np.dtype("datetime64[ns]")
    start = np.datetime64("2000-01-01T00:00", "ns")
    np.testing.assert_array_equal(ds["time"].values,
                                  start + np.array([0, 6, 12, 18], dtype="timedelta64[h]"))
    assert set(ds.coords) == {"time", "level", "lat", "lon"}

    # Attributes: JSON keeps strings, integers and doubles; a float32 is written as its
    # shortest decimal, so xarray's double is the value meant (0.1, not 0.100000001...).
    attrs = t.attrs
    assert attrs == {"units": "K", "standard_name": "air_temperature", "accuracy": 0.1,
                     "valid_range": [150.0, 350.0], "reference_temperature": 273.15,
                     "ensemble_member": 7}
    assert type(attrs["accuracy"]) is float and np.float32(attrs["accuracy"]) == np.float32(0.1)
    assert type(attrs["ensemble_member"]) is int
    assert all(type(v) is float for v in attrs["valid_range"])
    assert ds["level"].attrs == {"units": "hPa", "positive": "down"}
    assert ds["time"].encoding["units"] == "hours since 2000-01-01 00:00:00"
    assert ds["time"].encoding["calendar"] == "standard"
    assert ds.attrs == {"Conventions": "CF-1.8", "title": "toy model", "model_version": 2}
    assert type(ds.attrs["model_version"]) is int
    meta = (store / "t" / (".zattrs" if fmt == 2 else "zarr.json")).read_text()
    text = json.dumps(json.loads(meta))
    assert '"accuracy": 0.1,' in text
