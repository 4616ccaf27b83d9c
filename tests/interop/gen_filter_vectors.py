"""Writes tests/data/numcodecs_filter_vectors.json: filter and checksum codec vectors made
by numcodecs (configuration, numcodecs' full configuration, input type, input bytes,
encoded bytes, decoded bytes), checked by libzarr's unit tests. numcodecs 0.15.1 and
0.16.1 give the same file. Run: python tests/interop/gen_filter_vectors.py"""
import numpy as np, numcodecs, json, warnings, pathlib
warnings.simplefilter("ignore")
rng = np.random.default_rng(7)
cases = []
def add(config, data, codec=None):
    codec = codec or numcodecs.get_codec(dict(config))
    try:
        enc = codec.encode(data)
    except Exception as e:
        print("numcodecs refuses", config, data.dtype.str, "-", e); return
    enc = np.ascontiguousarray(enc).tobytes() if not isinstance(enc, bytes) else enc
    dec = np.ascontiguousarray(codec.decode(enc)).tobytes()
    full = codec.get_config()
    if full.get("prefix") is not None:
        full["prefix"] = full["prefix"].tolist()
    cases.append({"config": config, "full_config": full, "dtype": data.dtype.str,
                  "data": data.tobytes().hex(), "encoded": enc.hex(), "decoded": dec.hex()})
i2 = np.array([100, 102, 104, -32768, 32767, 0, 5, -7], dtype='<i2')
add({"id": "delta", "dtype": "<i2"}, i2)
add({"id": "delta", "dtype": "<i2", "astype": "<i1"}, i2)
add({"id": "delta", "dtype": ">i4", "astype": "<i8"}, i2.astype('>i4'))
add({"id": "delta", "dtype": "<u1"}, np.array([5, 3, 250, 1, 0, 255], 'u1'))
add({"id": "delta", "dtype": "<f4"}, (rng.standard_normal(9)*1e3).astype('<f4'))
add({"id": "delta", "dtype": "<f8", "astype": "<f4"}, rng.standard_normal(9)*1e6)
add({"id": "delta", "dtype": "<u8", "astype": "<i8"}, np.array([2**62, 0, 5, 2**63+9], "<u8"))
f8 = np.concatenate([np.linspace(1000, 1001, 10), [999.95, 1000.05, 1000.15, 1000.25, -3.5, np.nan]])
add({"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}, f8[:14])
add({"id": "fixedscaleoffset", "offset": 1000.5, "scale": 100.0, "dtype": "<f8", "astype": "<i4"}, f8)
add({"id": "fixedscaleoffset", "offset": 0.25, "scale": 3.3, "dtype": "<f4", "astype": ">i2"}, (rng.standard_normal(12)*100).astype('<f4'))
add({"id": "fixedscaleoffset", "offset": 7, "scale": 3, "dtype": "<i4", "astype": "<i2"}, np.arange(-20, 20, 3, dtype='<i4'))
add({"id": "fixedscaleoffset", "offset": 7, "scale": 0.5, "dtype": "<i2", "astype": "<f4"}, np.arange(-20, 20, 3, dtype='<i2'))
add({"id": "fixedscaleoffset", "offset": 1.5, "scale": 2, "dtype": "<u2", "astype": "<u2"}, np.arange(0, 40, 3, dtype='<u2'))
add({"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f8", "astype": "<f2"}, rng.standard_normal(8)*10)
for d in [0, 1, 2, 3, 5, -1]:
    add({"id": "quantize", "digits": d, "dtype": "<f8"}, rng.standard_normal(10)*50)
add({"id": "quantize", "digits": 2, "dtype": "<f4", "astype": "<f2"}, (rng.standard_normal(10)).astype('<f4'))
add({"id": "quantize", "digits": 3, "dtype": ">f8", "astype": "<f4"}, (rng.standard_normal(10)).astype('>f8'))
add({"id": "quantize", "digits": 1, "dtype": "<f2"}, (rng.standard_normal(10)).astype('<f2'))
for kb, dt in [(0, '<f8'), (3, '<f8'), (52, '<f8'), (10, '<f4'), (5, '<f2'), (23, '<f4')]:
    add({"id": "bitround", "keepbits": kb}, np.concatenate([rng.standard_normal(10)*1e3, [np.inf, -np.inf, 0.0, -0.0, 65504]]).astype(dt))
for n in [1, 7, 8, 9, 16, 21]:
    add({"id": "packbits"}, rng.random(n) > 0.5)
add({"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}, rng.standard_normal(8)*1e10)
add({"id": "astype", "encode_dtype": "|i1", "decode_dtype": "<f8"}, np.array([1.9, -1.9, 127.5, -128.7, 0.5, 300.0, -0.0, 2.5]))
add({"id": "astype", "encode_dtype": "<u2", "decode_dtype": "<i4"}, np.array([-1, 65536, 3, 70000], '<i4'))
add({"id": "astype", "encode_dtype": "<f2", "decode_dtype": "<i8"}, np.array([-1, 65536, 3, 70000, 2049], '<i8'))
add({"id": "astype", "encode_dtype": "<i8", "decode_dtype": ">f4"}, np.array([1.5, -2.5, 1e10, -1e10], '>f4'))
add({"id": "astype", "encode_dtype": "|b1", "decode_dtype": "<i4"}, np.array([0, 1, -5, 0], '<i4'))
add({"id": "astype", "encode_dtype": "<f8", "decode_dtype": "|b1"}, np.array([True, False, True]))
add({"id": "categorize", "labels": ["a", "bb", "ccc", "dddd", "bb"], "dtype": "<U3", "astype": "|u1"},
    np.array(["a", "bb", "ccc", "x", "", "dd", "bb", "a\u00e9"], dtype='<U3'))
add({"id": "categorize", "labels": ["\u00e9t\u00e9", "hiver", "\U0001F600"], "dtype": ">U5", "astype": "<i2"},
    np.array(["hiver", "\u00e9t\u00e9", "\U0001F600", "x"], dtype='>U5'))
raw = rng.integers(0, 256, 1001, dtype='u1')
for n in [0, 1, 2, 3, 12, 13, 24, 25, 720, 721, 1001]:
    for cid in [{"id": "crc32"}, {"id": "adler32"}, {"id": "fletcher32"}, {"id": "jenkins_lookup3"}]:
        if n == 0 and cid["id"] == "fletcher32":
            continue
        add(cid, raw[:n])
add({"id": "crc32", "location": "end"}, raw[:17])
add({"id": "adler32", "location": "end"}, raw[:17])
add({"id": "jenkins_lookup3", "initval": 5}, raw[:33])
# numcodecs takes the prefix as bytes (JSON can only hold it as a list of byte values).
add({"id": "jenkins_lookup3", "initval": 0, "prefix": [1, 2, 3]}, raw[:33],
    numcodecs.JenkinsLookup3(prefix=b"\x01\x02\x03"))
for es in [1, 2, 4, 8, 3]:
    add({"id": "shuffle", "elementsize": es}, raw[:24])
out = pathlib.Path(__file__).resolve().parents[1] / "data" / "numcodecs_filter_vectors.json"
out.write_text(json.dumps(cases, indent=0) + "\n")
