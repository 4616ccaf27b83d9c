"""Writes tests/data/lossy_codec_vectors.json: zfpy and pcodec chunks made by numcodecs
(its full configuration, the array's type and shape, input bytes, encoded bytes, and the
bytes numcodecs decodes them to), checked by libzarr's unit tests. Made with numcodecs
0.16.1, zfpy 1.0.1 and pcodec 1.1.0 (the versions are recorded in the file).
Run: python tests/interop/gen_lossy_vectors.py"""
import json, pathlib
import numpy as np, numcodecs, zfpy, pcodec
from importlib.metadata import version

rng = np.random.default_rng(11)
cases = []


def field(shape, dtype):
    n = int(np.prod(shape))
    x = np.arange(n, dtype="f8")
    v = 15 + 10 * np.sin(x / 50) * np.cos(x / 7) + rng.standard_normal(n) * 0.1
    if np.dtype(dtype).kind in "iu":
        v = v * 1000
    return v.astype(dtype).reshape(shape)


def add(config, data):
    codec = numcodecs.get_codec(dict(config))
    enc = bytes(codec.encode(data))
    dec = np.asarray(codec.decode(enc)).astype(data.dtype).tobytes()
    cases.append({"config": codec.get_config(), "dtype": data.dtype.str,
                  "shape": list(data.shape), "data": data.tobytes().hex(),
                  "encoded": enc.hex(), "decoded": dec.hex()})


for dtype in ["<f4", "<f8", "<i4", "<i8"]:
    for shape in [(8, 6, 5), (7,), (3, 5), (2, 3, 4, 5)]:
        data = field(shape, dtype)
        add({"id": "zfpy", "mode": zfpy.mode_fixed_rate, "rate": 8}, data)
        add({"id": "zfpy", "mode": zfpy.mode_fixed_precision, "precision": 12}, data)
        if dtype[1] == "f":
            add({"id": "zfpy", "mode": zfpy.mode_fixed_accuracy, "tolerance": 0.01}, data)
# numcodecs' default: fixed accuracy with tolerance -1, which zfpy takes as reversible.
add({"id": "zfpy"}, field((8, 6, 5), "<f8"))
for dtype in ["<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8"]:
    add({"id": "pcodec"}, field((8, 6, 5), dtype))
add({"id": "pcodec", "level": 3, "mode_spec": "classic"}, field((300,), "<f8"))
add({"id": "pcodec", "delta_spec": "try_consecutive", "delta_encoding_order": 2,
     "equal_pages_up_to": 100}, field((300,), "<i8"))
add({"id": "pcodec", "delta_spec": "none"}, field((300,), "<f4"))

out = {"versions": {p: version(p) for p in ["numcodecs", "zfpy", "pcodec", "numpy"]},
       "cases": cases}
path = pathlib.Path(__file__).resolve().parents[1] / "data" / "lossy_codec_vectors.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(len(cases), "cases written to", path)
