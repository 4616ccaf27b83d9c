"""Interop of the Fortran binding with zarr-python 2.18 (run by ctest):

    python interop.py <test_interop executable> <scratch directory>

1. The Fortran program writes arrays; zarr-python must read them with the shape reversed
   and exactly the values the Fortran indices give (a(i, j, k) is arr[k-1, j-1, i-1]).
2. zarr-python writes an array; the Fortran program must read it back reversed (it checks
   the values itself).
"""
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import zarr

exe, scratch = sys.argv[1], Path(sys.argv[2])
shutil.rmtree(scratch, ignore_errors=True)
scratch.mkdir(parents=True)
subprocess.run([exe, "write", str(scratch)], check=True)

root = zarr.open_group(str(scratch), mode="r")
failures = []


def expect(name, got, want):
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        failures.append(f"{name}: got {got.dtype} {got.shape} {got!r}, want {want.dtype} {want.shape} {want!r}")


k, j, i = np.meshgrid(np.arange(1, 3), np.arange(1, 4), np.arange(1, 5), indexing="ij")
expect("f8", root["f8"][...], (100 * i + 10 * j + k + 0.5).astype("<f8"))
f8 = root["f8"]
if f8.chunks != (1, 2, 3):
    failures.append(f"f8 chunks {f8.chunks}")
if dict(f8.attrs) != {"_ARRAY_DIMENSIONS": ["z", "y", "x"], "units": "K", "scale": 0.25, "count": 7}:
    failures.append(f"f8 attributes {dict(f8.attrs)}")

j, i = np.meshgrid(np.arange(1, 8), np.arange(1, 6), indexing="ij")
expect("i2", root["i2"][...], (i * 1000 - j * 3).astype("<i2"))
if root["i2"].chunks != (3, 2) or root["i2"].compressor.codec_id != "zstd":
    failures.append(f"i2 chunks {root['i2'].chunks} compressor {root['i2'].compressor}")

j, i = np.meshgrid(np.arange(1, 3), np.arange(1, 4), indexing="ij")
expect("flags", root["flags"][...], (i + j) % 2 == 0)
expect("c8", root["c8"][...], np.array([complex(n, -2 * n) for n in range(1, 4)], dtype="<c16"))
expect("scalar", root["scalar"][...], np.array(2.75, dtype="<f4"))

k, j, i = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")
zarr.open_array(str(scratch / "from_python"), mode="w", shape=(2, 3, 4), chunks=(1, 2, 3),
                dtype="<f4")[...] = (100 * k + 10 * j + i).astype("<f4")
read = subprocess.run([exe, "read", str(scratch)])
if read.returncode != 0:
    failures.append("the Fortran program did not read from_python exactly")

for failure in failures:
    print("FAILED:", failure)
print(f"interop.py: zarr {zarr.__version__}: {'FAILED' if failures else 'all arrays exact'}")
sys.exit(1 if failures else 0)
