"""Runs inside the Debian 13 chroot that scripts/setup-test-env.sh makes, with zarr-python 3.4
(Python 3.13): `python zp34_peer.py write|read DIR`. tests/interop/test_zp34_interop.py copies
this file into the chroot and reads what it leaves in DIR.

write: for each spec in DIR/specs.json, creates the array DIR/<name>/store (path "a") with
zarr-python, writes the spec's data (or the spec's region of it), reads the array back and
saves the data it wrote (input.npy) and what zarr-python decodes (decoded.npy).
read: for each spec in DIR/specs.json, opens the array DIR/<name>/store at the spec's path
and saves what zarr-python decodes (decoded.npy; variable-length strings as decoded.json).
Each prints one JSON object: name -> {"ok": true} or {"error": "..."}.
"""

import json
import sys
import traceback
from pathlib import Path

import numpy as np

# Imported by main(): the host's test imports make_data from here without zarr-python 3.4.
zarr = numcodecs = None

WORDS = ["", "a", "zarr", "Grüße", "日本語", "x" * 40, "tab\tnew\nline", "∂u/∂t"]


def make_data(dtype: str, shape, seed: int) -> np.ndarray:
    """Deterministic data of each kind: a smooth field with noise for floats (what lossy
    codecs are for), NaNs where the spec asks, spread values for integers."""
    rng = np.random.default_rng(seed)
    if dtype == "string":
        a = np.empty(shape, dtype=object)
        flat = a.reshape(-1)
        for i in range(flat.size):
            flat[i] = WORDS[i % len(WORDS)] + str(i)
        return a
    dt = np.dtype(dtype)
    if dt == bool:
        return rng.random(shape) > 0.5
    grid = np.indices(shape, dtype=np.float64)
    smooth = 20.0 + sum(np.sin(g * (0.3 + 0.1 * k)) * 5.0 for k, g in enumerate(grid))
    smooth += rng.standard_normal(shape) * 0.05
    if dt.kind == "c":
        return (smooth + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind == "f":
        return smooth.astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(int(info.min), -30000), min(int(info.max), 30000)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dt)


def codecs_v2(items):
    return None if items is None else [numcodecs.get_codec(dict(c)) for c in items]


def write(spec, out: Path):
    a = make_data(spec["dtype"], tuple(spec["shape"]), spec.get("seed", 1))
    for index in spec.get("nans", []):
        a[tuple(index)] = np.nan
    fill = spec.get("fill_value")
    if isinstance(fill, list):  # a complex number as its JSON pair
        fill = complex(*fill)
    kwargs = {"shape": spec["shape"], "chunks": spec["chunks"], "zarr_format": spec["format"],
              "fill_value": fill,
              "dtype": str if spec["dtype"] == "string" else spec["dtype"]}
    if spec.get("shards") is not None:
        kwargs["shards"] = spec["shards"]
    if spec["format"] == 2:
        if "compressor" in spec:
            kwargs["compressors"] = codecs_v2(spec["compressor"])
        if "filters" in spec:
            kwargs["filters"] = codecs_v2(spec["filters"])
    else:
        for key in ("filters", "serializer", "compressors"):
            if key in spec:
                kwargs[key] = spec[key]
    z = zarr.create_array(store=str(out / "store"), name="a", **kwargs)
    region = tuple(slice(b, e) for b, e in spec.get("region", [[0, n] for n in spec["shape"]]))
    z[region] = a[region]
    back = zarr.open_array(store=str(out / "store"), path="a", mode="r")[...]
    save(out, back)
    if spec["dtype"] != "string":
        np.save(out / "input.npy", a)


def read(spec, out: Path):
    z = zarr.open_array(store=str(out / "store"), path=spec.get("path", "a"), mode="r")
    save(out, z[...])


def save(out: Path, values):
    if values.dtype.kind in "OTU":
        (out / "decoded.json").write_text(json.dumps([str(v) for v in values.reshape(-1)]))
    else:
        np.save(out / "decoded.npy", values)


def main():
    global zarr, numcodecs
    import numcodecs
    import zarr

    zarr.config.set({"array.rectilinear_chunks": True})
    action, base = sys.argv[1], Path(sys.argv[2])
    report = {}
    for spec in json.loads((base / "specs.json").read_text()):
        out = base / spec["name"]
        out.mkdir(parents=True, exist_ok=True)
        try:
            (write if action == "write" else read)(spec, out)
            report[spec["name"]] = {"ok": True}
        except Exception as e:  # reported per case; the test names it
            report[spec["name"]] = {"error": f"{type(e).__name__}: {e}",
                                    "trace": traceback.format_exc(limit=3)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
