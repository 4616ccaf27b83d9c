#!/usr/bin/env python3
"""CI check of the C++ binding: include/zarr.hpp calls every function of include/zarr.h, so a
function added to the C API cannot be forgotten there (scripts/test.sh runs this).
Exits nonzero naming the functions zarr.hpp does not call."""
import re
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import zarr_h  # noqa: E402

text = (zarr_h.ROOT / "include" / "zarr.hpp").read_text(encoding="utf-8")
called = set(re.findall(r"\b(zarr_\w+)\(", text))
missing = [f.name for f in zarr_h.parse().functions if f.name not in called]
for name in missing:
    print(f"check_cxx: include/zarr.hpp does not call {name}")
if missing:
    sys.exit(1)
print("check_cxx: include/zarr.hpp calls every function of zarr.h")
