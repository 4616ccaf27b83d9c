"""Writes tests/data/cast_value_vectors.json: the cast_value codec's conversions as the
reference implementation (the cast-value-rs package, 0.5.1) makes them, item by item, for
every rounding mode and out-of-range mode between float64 or int64 and integer and float
targets, and a scalar map. An item the reference refuses is null.
Run: python tests/interop/gen_cast_value_vectors.py (with numpy and cast-value-rs)."""
import json
import pathlib

import numpy as np
from cast_value_rs import cast_array

FLOATS = [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 2.4, -2.6,
          127.5, 128.0, -128.5, -129.0, 255.5, 256.0, 300.7, -1.0, 65504.0, 65519.99,
          65520.0, 1e10, -1e10, 3.4028235677973366e38, 1e39, 1e-8, -1e-40, 1e300,
          float("nan"), float("inf"), float("-inf"), 1 + 2.0**-24, 1 + 3 * 2.0**-24,
          2.0**63, -(2.0**63), 2.0**64, 16777217.0]
INTS = [0, 1, -1, 127, 128, -129, 255, 256, 32768, -32769, 65535, 2**31, 2**53 + 1,
        2**63 - 1, -(2**63), 16777217, 2049, -2049]
MODES = ["nearest-even", "towards-zero", "towards-positive", "towards-negative",
         "nearest-away"]
TARGETS = ["int8", "uint8", "int16", "uint16", "int32", "uint64", "float16", "float32"]


def one(value, source, target, mode, out_of_range, scalar_map):
    try:
        out = cast_array(np.array([value], dtype=source), target_dtype=target,
                         rounding_mode=mode, out_of_range_mode=out_of_range,
                         scalar_map_entries=scalar_map)
    except Exception:
        return None
    return out.astype(out.dtype.newbyteorder("<")).tobytes().hex()


cases = []
for source, values in [("float64", FLOATS), ("int64", INTS)]:
    data = np.array(values, dtype=source).astype(np.dtype(source).newbyteorder("<"))
    for target in TARGETS:
        ranges = [None, "clamp"] + (["wrap"] if target.startswith(("int", "uint")) else [])
        for mode in MODES:
            for out_of_range in ranges:
                cases.append({
                    "source": source, "target": target, "rounding": mode,
                    "out_of_range": out_of_range, "data": data.tobytes().hex(),
                    "results": [one(v, source, target, mode, out_of_range, None)
                                for v in values]})
data = np.array(FLOATS, dtype="<f8")
scalar_map = [(float("nan"), 0), (float("inf"), 255), (2.5, 7), (2.5, 9)]
cases.append({
    "source": "float64", "target": "uint8", "rounding": "towards-zero",
    "out_of_range": "wrap", "data": data.tobytes().hex(),
    "scalar_map": [["NaN", 0], ["Infinity", 255], [2.5, 7], [2.5, 9]],
    "results": [one(v, "float64", "uint8", "towards-zero", "wrap", scalar_map[:3])
                for v in FLOATS]})
out = pathlib.Path(__file__).resolve().parents[1] / "data" / "cast_value_vectors.json"
out.write_text(json.dumps(cases, indent=0) + "\n")
print(f"{len(cases)} cases written to {out}")
