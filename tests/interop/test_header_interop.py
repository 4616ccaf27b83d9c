"""``zarrtool header`` says what xarray sees, and NCZarr stores copied by zarrtool open in xarray.

xarray writes a dataset (Zarr v2 under zarr-python 2, v2 and v3 under zarr-python 3);
``zarrtool header --json`` must give its dimensions with their lengths, each variable's
dimensions and the missing value xarray encoded. A netCDF-4 dataset written by ncgen as
NCZarr (netCDF-C's Zarr, which keeps no ``_ARRAY_DIMENSIONS`` in subgroups) and copied by
``zarrtool copy`` opens in xarray, subgroups included, without NCZarr's own keys among the
attributes. The binary is target/release/zarrtool (built here with ``cargo build
--release`` unless ZARR_INTEROP_NO_BUILD=1); ZARRTOOL names another one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import zarr

from test_cli_interop import zarrtool  # noqa: F401  (the session fixture)
from test_cli_interop import run

xr = pytest.importorskip("xarray")

ZARR_MAJOR = int(zarr.__version__.split(".")[0])
FORMATS = [2, 3] if ZARR_MAJOR >= 3 else [2]


def to_zarr(ds, path: Path, fmt: int) -> None:
    if ZARR_MAJOR >= 3:
        ds.to_zarr(path, zarr_format=fmt, consolidated=False)
    else:
        ds.to_zarr(path, consolidated=False)


@pytest.mark.parametrize("fmt", FORMATS)
def test_header_gives_what_xarray_wrote(zarrtool, tmp_path, fmt):
    ds = xr.Dataset(
        {
            "t2m": (("time", "lat"), np.arange(12, dtype="<f4").reshape(4, 3),
                    {"units": "K"}),
            "count": (("time",), np.arange(4, dtype="<i2")),
        },
        coords={"lat": ("lat", np.array([10.0, 20.0, 30.0]))},
        attrs={"Conventions": "CF-1.8"},
    )
    ds["t2m"].encoding["_FillValue"] = -9999.0
    ds["count"].encoding["_FillValue"] = -1
    path = tmp_path / f"x{fmt}.zarr"
    to_zarr(ds, path, fmt)
    doc = json.loads(run(zarrtool, "header", "--json", path))
    root = doc["root"]
    assert root["zarr_format"] == fmt
    assert {d["name"]: d["length"] for d in root["dimensions"]} == {"time": 4, "lat": 3}
    variables = {v["name"]: v for v in root["variables"]}
    assert set(variables) == {"t2m", "count", "lat"}
    assert variables["t2m"]["type"] == "float"
    assert variables["t2m"]["dimensions"] == ["time", "lat"]
    assert variables["t2m"]["missing_value"] == -9999.0
    assert variables["count"]["type"] == "short"
    assert variables["count"]["missing_value"] == -1
    attrs = {a["name"]: a for a in variables["t2m"]["attributes"]}
    assert attrs["units"] == {"name": "units", "type": "char", "value": "K"}
    assert attrs["_FillValue"] == {"name": "_FillValue", "type": "float", "value": -9999.0}
    assert "_ARRAY_DIMENSIONS" not in attrs
    back = xr.open_zarr(path, consolidated=False, mask_and_scale=False)
    assert back["t2m"].attrs["_FillValue"] == variables["t2m"]["missing_value"]
    assert back["count"].attrs["_FillValue"] == variables["count"]["missing_value"]

    text = run(zarrtool, "header", path)
    assert "\tfloat t2m(time, lat) ;\n\t\tt2m:units = \"K\" ;\n\t\tt2m:_FillValue = -9999.f ;\n" \
        in text


CDL = """netcdf nc {
dimensions:
	time = 4 ;
variables:
	float t2m(time) ;
		t2m:units = "K" ;
		t2m:_FillValue = -9999.f ;
data:
 t2m = 1, 2, _, 4 ;
group: forecast {
  dimensions:
  	step = 2 ;
  variables:
  	short tp(step, time) ;
  		tp:scale_factor = 0.5 ;
  }
}
"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_copied_nczarr_store_opens_in_xarray(zarrtool, tmp_path, fmt):
    if shutil.which("ncgen") is None:
        pytest.skip("ncgen (netCDF) is not installed")
    cdl = tmp_path / "nc.cdl"
    cdl.write_text(CDL)
    src = tmp_path / "nc.zarr"
    subprocess.run(["ncgen", "-k", "nc4", "-o", f"file://{src}#mode=nczarr,file", str(cdl)],
                   check=True)
    dst = tmp_path / f"copy{fmt}.zarr"
    run(zarrtool, "copy", src, dst, "--format", fmt)
    root = xr.open_zarr(dst, consolidated=False)
    assert root["t2m"].dims == ("time",)
    assert root["t2m"].attrs == {"units": "K"}
    np.testing.assert_array_equal(root["t2m"].values, [1, 2, np.nan, 4])
    forecast = xr.open_zarr(dst, group="forecast", consolidated=False, mask_and_scale=False)
    assert forecast["tp"].dims == ("step", "time")
    assert forecast["tp"].attrs == {"scale_factor": 0.5, "_FillValue": -32767}
    for attrs in (root.attrs, root["t2m"].attrs, forecast["tp"].attrs):
        assert not any(k.lower().startswith("_nczarr") for k in attrs), attrs
