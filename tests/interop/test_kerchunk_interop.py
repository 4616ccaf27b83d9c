"""kerchunk reference files of netCDF archives read by libzarr (``reference:///PATH``).

netCDF4-python writes a CF file (an unlimited time axis, a float32 variable with
``_FillValue`` in deflate+shuffle chunks, a packed int16 variable with ``scale_factor`` and
``add_offset``, a contiguous variable and a variable small enough to be inlined in the
references); kerchunk describes it (``SingleHdf5ToZarr(...).translate()``, and
``NetCDF3ToZarr`` for a netCDF-3 file of the same variables); ``zarr_tool dump`` (libzarr's
C API through ``zarr_store_open_url``) reads every variable, which must equal netCDF4-python's
raw values (``set_auto_maskandscale(False)``) exactly. The references ``zarrtool virtualize``
makes of the same files (one, or several concatenated along time) are read by libzarr with
the same values, and by xarray through fsspec's reference filesystem as the same dataset as
``xr.open_dataset`` of the files. Runs where kerchunk, h5py and netCDF4 are installed (the
zp3 environment of scripts/setup-test-env.sh).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

netCDF4 = pytest.importorskip("netCDF4")
pytest.importorskip("h5py")
kerchunk_hdf = pytest.importorskip("kerchunk.hdf")

from test_cli_interop import run, zarrtool  # noqa: E402,F401  (the session fixture)
from test_v2_interop import Tool, tool  # noqa: E402,F401  (the session fixture)


def write_cf_file(path: Path, fmt: str) -> None:
    """A small CF file: every variable holds values that differ element by element."""
    with netCDF4.Dataset(path, "w", format=fmt) as ds:
        ds.Conventions = "CF-1.8"
        ds.createDimension("time", None)
        ds.createDimension("lat", 5)
        ds.createDimension("lon", 4)
        chunked = {"zlib": True, "shuffle": True, "chunksizes": (2, 3, 4)} if fmt == "NETCDF4" else {}
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "days since 2000-01-01"
        temp = ds.createVariable("temp", "f4", ("time", "lat", "lon"), fill_value=-999.0, **chunked)
        temp.units = "K"
        packed = ds.createVariable("packed", "i2", ("time", "lat", "lon"), fill_value=-32768)
        packed.scale_factor = 0.01
        packed.add_offset = 10.0
        contiguous = {"contiguous": True} if fmt == "NETCDF4" else {}
        elev = ds.createVariable("elev", "f8", ("lat", "lon"), **contiguous)
        flag = ds.createVariable("flag", "i1", ("lon",))
        for var in (time, temp, packed, elev, flag):
            var.set_auto_maskandscale(False)
        time[:] = np.arange(3) * 0.25
        values = np.random.default_rng(1).normal(280.0, 10.0, (3, 5, 4)).astype("f4")
        values[1, 2, 3] = -999.0  # a missing value, stored as the fill value
        temp[:] = values
        packed[:] = (np.arange(60, dtype="i2").reshape(3, 5, 4) - 30) * 321
        elev[:] = np.linspace(-100.0, 2500.0, 20).reshape(5, 4)
        flag[:] = np.array([1, -2, 3, -4], dtype="i1")


def raw_values(path: Path) -> dict:
    with netCDF4.Dataset(path) as ds:
        ds.set_auto_maskandscale(False)
        return {name: np.asarray(var[:]) for name, var in ds.variables.items()}


def check_every_variable(tool: Tool, tmp_path: Path, source: Path, refs: dict) -> None:
    refs_path = tmp_path / "refs.json"
    refs_path.write_text(json.dumps(refs))
    url = f"reference://{refs_path}"
    expected = raw_values(source)
    assert set(expected) == {"time", "temp", "packed", "elev", "flag"}
    for name, values in expected.items():
        data, info = tool.dump(tmp_path / "scratch", url, name, "C")
        got = np.frombuffer(data, dtype=values.dtype.newbyteorder("=")).reshape(values.shape)
        assert list(info["shape"]) == list(values.shape), name
        np.testing.assert_array_equal(got, values, err_msg=name, strict=True)


def test_netcdf4_file_through_kerchunk_references(tool, tmp_path):
    source = tmp_path / "cf.nc"
    write_cf_file(source, "NETCDF4")
    refs = kerchunk_hdf.SingleHdf5ToZarr(str(source), inline_threshold=50).translate()
    # The file as kerchunk describes it: chunks by byte range, `flag` inline, the CF
    # attributes in .zattrs.
    assert refs["version"] == 1
    assert refs["refs"]["temp/0.0.0"][0] == str(source)
    assert isinstance(refs["refs"]["flag/0"], str)
    zarray = json.loads(refs["refs"]["temp/.zarray"])
    assert zarray["fill_value"] == -999.0
    assert [f["id"] for f in zarray["filters"]] == ["shuffle", "zlib"]
    zattrs = json.loads(refs["refs"]["packed/.zattrs"])
    assert (zattrs["scale_factor"], zattrs["add_offset"]) == (0.01, 10.0)
    check_every_variable(tool, tmp_path, source, refs)


def test_netcdf3_file_through_kerchunk_references(tool, tmp_path):
    pytest.importorskip("scipy")
    from kerchunk.netCDF3 import NetCDF3ToZarr

    source = tmp_path / "cf3.nc"
    write_cf_file(source, "NETCDF3_64BIT_OFFSET")
    refs = NetCDF3ToZarr(str(source), inline_threshold=0).translate()
    check_every_variable(tool, tmp_path, source, refs)


def test_references_outside_their_directory_need_the_option(tool, tmp_path, monkeypatch):
    source = tmp_path / "data" / "cf.nc"
    source.parent.mkdir()
    write_cf_file(source, "NETCDF4")
    refs = kerchunk_hdf.SingleHdf5ToZarr(str(source), inline_threshold=0).translate()
    elsewhere = tmp_path / "refs"
    elsewhere.mkdir()
    refs_path = elsewhere / "refs.json"
    refs_path.write_text(json.dumps(refs))
    url = f"reference://{refs_path}"
    with pytest.raises(AssertionError, match=r'reference "temp/0\.0\.0" points to .*cf\.nc.*outside'):
        tool.dump(tmp_path / "scratch", url, "temp", "C")
    monkeypatch.setenv("ZARR_TOOL_STORE_OPTIONS", json.dumps({"allowed_targets": [str(source.parent)]}))
    data, _ = tool.dump(tmp_path / "scratch", url, "temp", "C")
    expected = raw_values(source)["temp"]
    np.testing.assert_array_equal(np.frombuffer(data, dtype="=f4").reshape(expected.shape), expected)


# ---- references made by `zarrtool virtualize` ------------------------------------------


def virtualize(zarrtool, *args) -> None:
    """Runs ``zarrtool virtualize``, or skips when the binary has no netCDF support."""
    features = subprocess.run([str(zarrtool), "version", "--features"], capture_output=True,
                              text=True).stdout
    if "references" not in features:
        if os.environ.get("ZARR_TEST_NETCDF") == "1":
            pytest.fail("ZARR_TEST_NETCDF=1 but zarrtool has no netCDF support")
        pytest.skip("this zarrtool has no netCDF support")
    run(zarrtool, "virtualize", *args)


def open_references(refs_path: Path):
    """xarray over the reference file through fsspec's reference filesystem (kerchunk's
    reader), not through libzarr."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("fsspec")
    return xr.open_dataset(
        "reference://", engine="zarr",
        backend_kwargs={"consolidated": False, "storage_options": {
            "fo": str(refs_path), "remote_protocol": "file", "asynchronous": True}})


@pytest.mark.parametrize("fmt", ["NETCDF4", "NETCDF3_64BIT_OFFSET", "NETCDF3_CLASSIC"])
def test_zarrtool_references_read_by_libzarr_and_by_xarray(zarrtool, tool, tmp_path, fmt):
    xr = pytest.importorskip("xarray")
    source = tmp_path / "cf.nc"
    write_cf_file(source, fmt)
    refs_path = tmp_path / "made.json"
    virtualize(zarrtool, source, "-o", refs_path)
    refs = json.loads(refs_path.read_text())
    check_every_variable(tool, tmp_path, source, refs)
    with open_references(refs_path) as ds, xr.open_dataset(source) as original:
        xr.testing.assert_identical(ds, original)


@pytest.mark.parametrize("fmt", ["NETCDF4", "NETCDF3_CLASSIC"])
def test_zarrtool_references_of_many_files_read_by_xarray(zarrtool, tool, tmp_path, fmt):
    """Six files of three steps each, concatenated along time: xarray over the references
    equals xarray's own concatenation of the files; libzarr reads the same values."""
    xr = pytest.importorskip("xarray")
    files = []
    for n in range(6):
        path = tmp_path / f"part{n}.nc"
        write_cf_file(path, fmt)
        with netCDF4.Dataset(path, "a") as ds:
            ds["time"][:] = np.arange(3) * 0.25 + 3 * n
            ds["temp"].set_auto_maskandscale(False)
            ds["temp"][:] = np.full((3, 5, 4), 270.0 + n, dtype="f4")
        files.append(path)
    refs_path = tmp_path / "all.json"
    virtualize(zarrtool, *files, "--concat", "time", "-o", refs_path)
    parts = [xr.open_dataset(f) for f in files]
    expected = xr.concat(parts, dim="time", data_vars="minimal", coords="minimal",
                         compat="override")
    with open_references(refs_path) as ds:
        xr.testing.assert_identical(ds, expected)
    data, info = tool.dump(tmp_path / "scratch", f"reference://{refs_path}", "temp", "C")
    assert list(info["shape"]) == [18, 5, 4]
    got = np.frombuffer(data, dtype="=f4").reshape(18, 5, 4)
    np.testing.assert_array_equal(got, np.repeat(270.0 + np.arange(6), 60).reshape(18, 5, 4))
    for part in parts:
        part.close()
