"""``zarrtool copy --format`` and ``zarrtool import`` of netCDF output read by zarr-python.

zarr-python writes an array, ``zarrtool copy`` converts it (v2 -> v3 with shards and a new
chunk shape under zarr-python 3; v3 -> v2 read by zarr-python 2), and zarr-python reads the
copy back value for value. A netCDF-4 file made by ncgen, imported by ``zarrtool import``,
is read by zarr-python (and xarray, where installed) with its values, dimension names,
attributes and fill values. xarray sees what ``attrs set``, ``mv`` and ``rm`` change in a
store with consolidated metadata (which zarrtool rewrites). The binary is target/release/zarrtool (built here with
``cargo build --release`` unless ZARR_INTEROP_NO_BUILD=1); ZARRTOOL names another one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import zarr

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ZARR_MAJOR = int(zarr.__version__.split(".")[0])


@pytest.fixture(scope="session")
def zarrtool() -> Path:
    if os.environ.get("ZARRTOOL"):
        return Path(os.environ["ZARRTOOL"])
    if not os.environ.get("ZARR_INTEROP_NO_BUILD"):
        proc = subprocess.run(["cargo", "build", "--release", "--bin", "zarrtool"], cwd=ROOT,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.exit(f"cargo build --release failed:\n{proc.stderr[-4000:]}", returncode=1)
    exe = ROOT / "target" / "release" / "zarrtool"
    if not exe.exists():
        pytest.exit("target/release/zarrtool is missing (cargo build --release)", returncode=1)
    return exe


def run(exe: Path, *args) -> str:
    proc = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
    assert proc.returncode == 0, f"zarrtool {args[0]} exited {proc.returncode}: {proc.stderr}"
    return proc.stdout


@pytest.mark.skipif(ZARR_MAJOR < 3, reason="Zarr v3 needs zarr-python 3")
def test_copy_v2_to_v3_sharded_read_by_zarr_python(zarrtool, tmp_path):
    src = tmp_path / "v2.zarr"
    data = np.arange(12 * 10, dtype="<f8").reshape(12, 10) / 7
    data[3, 4] = np.nan
    a = zarr.create_array(str(src), name="x", shape=data.shape, chunks=(5, 5), dtype="<f8",
                          fill_value=-1.0, zarr_format=2)
    a[...] = data
    a.attrs["units"] = "m"
    dst = tmp_path / "v3.zarr"
    run(zarrtool, "copy", src, dst, "--format", "3", "--rechunk", "3,5", "--shards", "6,10",
        "--codec", '{"id": "zstd", "level": 3}')
    back = zarr.open_array(str(dst), path="x", mode="r")
    assert back.metadata.zarr_format == 3
    assert back.shards == (6, 10)
    assert back.chunks == (3, 5)
    assert back.fill_value == -1.0
    # The v2 fill value -1.0 is xarray's missing value: in v3 it needs the attribute too.
    assert dict(back.attrs) == {"units": "m", "_FillValue": "AAAAAAAA8L8="}
    np.testing.assert_array_equal(back[...], data)
    meta = json.loads((dst / "x" / "zarr.json").read_text())
    assert meta["codecs"][0]["name"] == "sharding_indexed"
    assert [c["name"] for c in meta["codecs"][0]["configuration"]["codecs"]] == ["bytes", "zstd"]
    # And zarrtool finds the two equal by value.
    proc = subprocess.run([str(zarrtool), "diff", src, dst])
    assert proc.returncode == 0


@pytest.mark.skipif(ZARR_MAJOR >= 3, reason="checks zarr-python 2's reading of a v2 copy")
def test_copy_v3_to_v2_read_by_zarr_python_2(zarrtool, tmp_path):
    raw = tmp_path / "a.bin"
    data = np.arange(30, dtype="<i2").reshape(5, 6)
    raw.write_bytes(data.tobytes())
    src = tmp_path / "v3.zarr"
    run(zarrtool, "import", raw, src, "a", "--dtype", "<i2", "--shape", "5,6", "--format", "3")
    dst = tmp_path / "v2.zarr"
    run(zarrtool, "copy", src, dst, "--format", "2", "--rechunk", "2,6",
        "--compressor", '{"id": "zlib", "level": 1}')
    back = zarr.open_array(str(dst), path="a", mode="r")
    assert back.chunks == (2, 6)
    np.testing.assert_array_equal(back[...], data)


@pytest.mark.skipif(ZARR_MAJOR >= 3, reason="checks zarr-python 2's reading of a v2 copy")
def test_copy_v3_blosc_to_v2_read_by_zarr_python_2(zarrtool, tmp_path):
    """Zarr v3 always states blosc's typesize; numcodecs before 0.16 refuses the key, so the
    v2 copy leaves it out where it is the item size (the compressor given in v3's form)."""
    raw = tmp_path / "a.bin"
    data = (np.arange(7 * 9) / 3).astype(">f4").reshape(7, 9)
    raw.write_bytes(data.tobytes())
    src = tmp_path / "v3.zarr"
    run(zarrtool, "import", raw, src, "a", "--dtype", ">f4", "--shape", "7,9", "--format", "3",
        "--chunks", "4,4", "--compressor",
        '{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}')
    doc = json.loads((src / "a" / "zarr.json").read_text())
    assert doc["codecs"][-1]["configuration"]["typesize"] == 4
    dst = tmp_path / "v2.zarr"
    run(zarrtool, "copy", src, dst, "--format", "2")
    meta = json.loads((dst / "a" / ".zarray").read_text())
    assert meta["compressor"] == {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1,
                                  "blocksize": 0}
    back = zarr.open_array(str(dst), path="a", mode="r")
    np.testing.assert_array_equal(back[...], data)


NETCDF_CDL = """netcdf sample {
dimensions:
\ttime = UNLIMITED ;
\tlat = 2 ;
\tlon = 3 ;
variables:
\tdouble time(time) ;
\t\ttime:units = "days since 2000-01-01" ;
\tfloat lat(lat) ;
\tfloat temp(time, lat, lon) ;
\t\ttemp:_FillValue = -999.f ;
\t\ttemp:long_name = "air temperature" ;
\t\ttemp:_ChunkSizes = 1, 2, 3 ;
\tstring label(lat) ;
\tchar code(lat, lon) ;

// global attributes:
\t\t:title = "netCDF import" ;
\t\t:ratios = 0.5f, 0.1f ;
data:
 time = 0, 1.5 ;
 lat = -45, 45 ;
 temp = 1, 2, 3, 4, 5, 6, _, 8.5, 9, 10, 11, 12 ;
 label = "one", "tw\u00f6 \u2713" ;
 code = "ab", "xyz" ;

group: sub {
  variables:
  \tint v(lat) ;
  \t\tv:note = "in a group" ;
  data:
   v = 7, 8 ;
  } // group sub
}
"""

TEMP = np.array([[[1, 2, 3], [4, 5, 6]], [[-999, 8.5, 9], [10, 11, 12]]], dtype="<f4")


def netcdf_file(zarrtool: Path, tmp_path: Path) -> Path:
    """The sample as a netCDF-4 file, or a skip when zarrtool or ncgen cannot."""
    features = subprocess.run([str(zarrtool), "version", "--features"], capture_output=True,
                              text=True, check=True).stdout
    if not any(line.startswith("netcdf: import") for line in features.splitlines()):
        if os.environ.get("ZARR_TEST_NETCDF") == "1":
            pytest.fail("ZARR_TEST_NETCDF=1 but zarrtool has no netCDF import")
        pytest.skip("this zarrtool has no netCDF import")
    if shutil.which("ncgen") is None:
        pytest.fail("ncgen (netcdf-bin) is missing: run scripts/setup-test-env.sh")
    cdl = tmp_path / "sample.cdl"
    cdl.write_text(NETCDF_CDL, encoding="utf-8")
    nc = tmp_path / "sample.nc"
    subprocess.run(["ncgen", "-k", "nc4", "-o", str(nc), str(cdl)], check=True)
    return nc


@pytest.mark.parametrize("fmt", [2, 3])
def test_netcdf_import_read_by_zarr_python(zarrtool, tmp_path, fmt):
    if fmt == 3 and ZARR_MAJOR < 3:
        pytest.skip("Zarr v3 needs zarr-python 3")
    nc = netcdf_file(zarrtool, tmp_path)
    store = tmp_path / f"v{fmt}.zarr"
    run(zarrtool, "import", nc, store, "--format", fmt)
    root = zarr.open_group(str(store), mode="r")
    # The numeric attributes' netCDF types in NCZarr's record, which NCZarr and export read.
    assert dict(root.attrs) == {"title": "netCDF import", "ratios": [0.5, 0.1],
                                "_NCZARR_ATTR": {"types": {"ratios": "<f4"}}}
    temp = root["temp"]
    np.testing.assert_array_equal(temp[...], TEMP)
    assert temp.fill_value == -999.0
    assert temp.chunks == (1, 2, 3)
    attrs = dict(temp.attrs)
    if fmt == 2:
        assert attrs.pop("_ARRAY_DIMENSIONS") == ["time", "lat", "lon"]
        # The missing value as NCZarr reads it: a number, typed in NCZarr's record.
        assert attrs.pop("_FillValue") == -999.0
        assert attrs.pop("_NCZARR_ATTR") == {"types": {"_FillValue": "<f4"}}
    else:
        assert temp.metadata.dimension_names == ("time", "lat", "lon")
        # xarray's encoding of the missing value -999.0 beside the fill value.
        assert attrs.pop("_FillValue") == "AAAAAAA4j8A="
    assert attrs == {"long_name": "air temperature"}
    np.testing.assert_array_equal(root["time"][...], np.array([0, 1.5]))
    assert list(root["label"][...]) == ["one", "tw\u00f6 \u2713"]
    assert list(root["code"][...]) == [b"ab", b"xyz"]
    assert root["code"].dtype == np.dtype("S3")
    np.testing.assert_array_equal(root["sub/v"][...], np.array([7, 8], dtype="<i4"))
    assert dict(root["sub/v"].attrs).get("note") == "in a group"


@pytest.mark.skipif(ZARR_MAJOR < 3, reason="xarray is installed with zarr-python 3")
@pytest.mark.parametrize("fmt", [2, 3])
def test_netcdf_import_read_by_xarray(zarrtool, tmp_path, fmt):
    xr = pytest.importorskip("xarray")
    nc = netcdf_file(zarrtool, tmp_path)
    store = tmp_path / f"x{fmt}.zarr"
    run(zarrtool, "import", nc, store, "--format", fmt)
    ds = xr.open_zarr(str(store), consolidated=False)
    assert ds["temp"].dims == ("time", "lat", "lon")
    # The missing value is masked in both formats: v2 by its fill value, v3 by the
    # _FillValue attribute the import writes in xarray's encoding.
    expected = TEMP.astype("f8")
    expected[1, 0, 0] = np.nan
    np.testing.assert_array_equal(ds["temp"].values, expected)
    assert ds["time"].values[1] == np.datetime64("2000-01-02T12:00:00", "ns")
    assert ds.attrs["title"] == "netCDF import"
    assert list(ds["label"].values) == ["one", "tw\u00f6 \u2713"]


@pytest.mark.skipif(ZARR_MAJOR < 3, reason="xarray is installed with zarr-python 3")
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_xarray_sees_attrs_set_mv_rm_through_consolidated_metadata(zarrtool, tmp_path,
                                                                   zarr_format):
    xr = pytest.importorskip("xarray")
    store = tmp_path / "ds.zarr"
    ds = xr.Dataset({"t2m": (("time", "x"), np.arange(6.0).reshape(2, 3), {"units": "K"}),
                     "tp": (("time",), np.array([1.0, 2.0]))})
    ds.to_zarr(store, zarr_format=zarr_format, consolidated=True)
    run(zarrtool, "attrs", "set", store, "t2m", "units", '"degC"')
    run(zarrtool, "mv", store, "tp", "precip")
    run(zarrtool, "attrs", "set", store, "/", "title", '"t"')
    back = xr.open_zarr(store, consolidated=True)
    assert back["t2m"].attrs["units"] == "degC"
    assert sorted(back.data_vars) == ["precip", "t2m"]
    assert back.attrs["title"] == "t"
    np.testing.assert_array_equal(back["precip"].values, [1.0, 2.0])
    run(zarrtool, "rm", store, "precip")
    assert sorted(xr.open_zarr(store, consolidated=True).data_vars) == ["t2m"]
