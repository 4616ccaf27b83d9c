"""``zarrtool copy --format`` output read by zarr-python.

zarr-python writes an array, ``zarrtool copy`` converts it (v2 -> v3 with shards and a new
chunk shape under zarr-python 3; v3 -> v2 read by zarr-python 2), and zarr-python reads the
copy back value for value. The binary is target/release/zarrtool (built here with
``cargo build --release`` unless ZARR_INTEROP_NO_BUILD=1); ZARRTOOL names another one.
"""

from __future__ import annotations

import json
import os
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
    assert dict(back.attrs) == {"units": "m"}
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
