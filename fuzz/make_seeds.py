"""Writes the seed corpora of the fuzz targets under fuzz/corpus/<target>/.

Run with a Python that has zarr-python 3 and numcodecs (the interop environment):
    python3 fuzz/make_seeds.py
The seeds are small, valid (and a few nearly valid) inputs; libFuzzer mutates from them.
"""
import io
import json
import os
import struct
import zipfile
import zlib

import numcodecs
import numpy as np
import zarr

HERE = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def zarray(**over):
    doc = {"zarr_format": 2, "shape": [10, 20], "chunks": [5, 7], "dtype": "<f8",
           "compressor": {"id": "zlib", "level": 1}, "fill_value": "NaN", "order": "C",
           "filters": None}
    doc.update(over)
    return json.dumps(doc)


# --- meta_v2 ---
put("meta_v2", "zarray_f8", zarray())
put("meta_v2", "zarray_i2_F_blosc", zarray(dtype=">i2", order="F", fill_value=-3,
    compressor={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}))
put("meta_v2", "zarray_bool_nested", zarray(dtype="|b1", fill_value=True, dimension_separator="/"))
put("meta_v2", "zarray_c16", zarray(dtype="<c16", fill_value=["NaN", 1.5], compressor=None))
put("meta_v2", "zarray_scalar", zarray(shape=[], chunks=[], dtype="<u8", fill_value=0))
put("meta_v2", "zarray_datetime", zarray(dtype="<M8[s]", fill_value=0))
put("meta_v2", "zgroup", '{"zarr_format": 2}')
put("meta_v2", "zattrs", '{"a": [1, 2.5, "x", null, {"b": NaN}], "c": -Infinity}')

# --- meta_v3 ---
def v3_array(**over):
    doc = {"zarr_format": 3, "node_type": "array", "shape": [10, 20], "data_type": "float32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 7]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": "NaN",
           "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                      {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
           "attributes": {"k": [1, 2]}, "dimension_names": ["y", None]}
    doc.update(over)
    return json.dumps(doc)

put("meta_v3", "array_f4", v3_array())
put("meta_v3", "array_sharded", v3_array(codecs=[{"name": "sharding_indexed", "configuration": {
    "chunk_shape": [5, 1],
    "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    "index_location": "start"}}]))
put("meta_v3", "array_transpose_v2keys", v3_array(
    data_type="int64", fill_value=-1,
    chunk_key_encoding={"name": "v2", "configuration": {"separator": "."}},
    codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 8, "blocksize": 0}}]))
put("meta_v3", "array_complex", v3_array(data_type="complex128", fill_value=[1.0, "-Infinity"]))
put("meta_v3", "array_rectilinear", v3_array(chunk_grid={"name": "rectilinear", "configuration": {
    "kind": "inline", "chunk_shapes": [[[1, 3], 3, 4], 7]}}))
put("meta_v3", "array_rectilinear_overflow", v3_array(chunk_grid={"name": "rectilinear", "configuration": {
    "kind": "inline", "chunk_shapes": [[4, 4, 4], [[5, 2], 6, 6]]}}))
put("meta_v3", "group", '{"zarr_format": 3, "node_type": "group", "attributes": {"a": {"b": [true]}}}')

# --- zmetadata ---
put("zmetadata", "consolidated", json.dumps({"zarr_consolidated_format": 1, "metadata": {
    ".zgroup": {"zarr_format": 2}, ".zattrs": {"title": "t"},
    "a/.zarray": json.loads(zarray()), "a/.zattrs": {"_ARRAY_DIMENSIONS": ["y", "x"]},
    "g/.zgroup": {"zarr_format": 2}, "g/b/.zarray": json.loads(zarray(dtype="|u1", fill_value=0, shape=[3], chunks=[2]))}}))
put("zmetadata", "empty", '{"zarr_consolidated_format": 1, "metadata": {}}')

def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


# --- codec_decode: byte 0 selects the codec (fuzz_targets/codec_decode.rs CODECS order),
# bytes 1-2 the expected decoded size (little endian), the rest is the encoded data. ---
raw = bytes(np.arange(64, dtype="<u4").tobytes())
codecs = [
    numcodecs.Blosc("lz4", 5, 1),
    numcodecs.Blosc("zstd", 1, 2),
    numcodecs.Blosc("zlib", 1, 0),
    numcodecs.Blosc("blosclz", 9, 1),
    numcodecs.Zlib(1), numcodecs.GZip(1), numcodecs.BZ2(1), numcodecs.LZMA(),
    numcodecs.Zstd(1), numcodecs.LZ4(1), None,
]
for i, c in enumerate(codecs):
    name = type(c).__name__.lower() if c is not None else "crc32c"
    if c is None:
        enc = raw + struct.pack("<I", crc32c(raw))
    else:
        enc = c.encode(raw)
    put("codec_decode", f"{i:02d}_{name}", bytes([i]) + struct.pack("<H", len(raw)) + bytes(enc))
    put("codec_decode", f"{i:02d}_{name}_short", bytes([i]) + struct.pack("<H", len(raw)) + bytes(enc)[: len(enc) // 2])

# --- typed_decode: byte 0 selects the configuration (fuzz_targets/typed_decode.rs CODECS
# order), then two bytes each the rank less one and every extent less one, then the stream:
# chunks numcodecs made with zfpy and pcodec (tests/data/lossy_codec_vectors.json). ---
with open(os.path.join(HERE, "..", "tests", "data", "lossy_codec_vectors.json")) as f:
    vectors = json.load(f)["cases"]
for index, (cid, dtype) in {5: ("zfpy", "<i4"), 6: ("zfpy", "<f8"), 7: ("pcodec", "<f4"),
                            8: ("pcodec", "<i2"), 9: ("pcodec", "<u8")}.items():
    for n, case in enumerate(c for c in vectors if c["config"]["id"] == cid and c["dtype"] == dtype):
        if n == 2:
            break
        shape = case["shape"]
        head = bytes([index]) + struct.pack("<H", len(shape) - 1) + b"".join(struct.pack("<H", d - 1) for d in shape)
        enc = bytes.fromhex(case["encoded"])
        put("typed_decode", f"{index:02d}_{cid}_{n}", head + enc)
        put("typed_decode", f"{index:02d}_{cid}_{n}_short", head + enc[: len(enc) // 2])

# --- shard: byte 0 selects the variant (bit 0 index at start, bit 1 crc32c, bit 2 zstd),
# the rest is the shard (4 x 6 uint16 in 2 x 3 inner chunks). ---
for variant in range(8):
    at_start, checksum, zstd = variant & 1, variant & 2, variant & 4
    index_codecs = [zarr.codecs.BytesCodec(endian="little")] + ([zarr.codecs.Crc32cCodec()] if checksum else [])
    store = zarr.storage.MemoryStore()
    a = zarr.create_array(store, name="s", shape=(8, 12), chunks=(2, 3), shards=(4, 6), dtype="uint16",
                          fill_value=7, compressors=[zarr.codecs.ZstdCodec(level=1)] if zstd else None,
                          serializer=zarr.codecs.BytesCodec(endian="little"))
    # Re-create with the index placement and codecs of this variant.
    codec = zarr.codecs.ShardingCodec(chunk_shape=(2, 3),
                                      codecs=[zarr.codecs.BytesCodec(endian="little")] + ([zarr.codecs.ZstdCodec(level=1)] if zstd else []),
                                      index_codecs=index_codecs,
                                      index_location="start" if at_start else "end")
    a = zarr.create_array(store, name="t", shape=(8, 12), chunks=(4, 6), dtype="uint16", fill_value=7,
                          serializer=codec, compressors=None)
    data = np.arange(96, dtype="uint16").reshape(8, 12)
    data[0:2, 0:3] = 7  # one empty inner chunk
    a[:] = data
    import asyncio
    from zarr.core.buffer import default_buffer_prototype
    shard = asyncio.run(store.get("t/c/0/0", prototype=default_buffer_prototype())).to_bytes()
    put("shard", f"variant{variant}", bytes([variant]) + shard)
put("shard", "empty", b"\x00")

# --- region: arbitrary choices; a few fixed byte strings ---
put("region", "rank2", bytes([2, 0, 6, 0, 9, 0, 1, 0, 2, 0, 0, 0, 1, 0] + list(range(40))))
put("region", "rank3_sharded", bytes([3, 0, 5, 0, 4, 0, 3, 0, 1, 0, 1, 0, 2, 0, 2, 0, 1, 1, 1, 0, 1, 0] + list(range(200, 255))))
put("region", "rank0", bytes([0, 0, 1, 0, 1, 0, 1, 1]))
put("region", "rank4_f", bytes([4, 0] + [5, 0] * 4 + [2, 0] * 4 + [1, 0, 1, 1, 0] + list(range(100))))

# --- zip_store: a small v2 hierarchy in a zip, stored and deflated ---
for method, name in ((zipfile.ZIP_STORED, "stored"), (zipfile.ZIP_DEFLATED, "deflated")):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        z.writestr(".zgroup", '{"zarr_format": 2}')
        z.writestr("a/.zarray", zarray(shape=[4], chunks=[2], dtype="<i2", fill_value=0, compressor=None))
        z.writestr("a/0", struct.pack("<2h", 1, 2))
        z.writestr("a/1", struct.pack("<2h", 3, 4))
    put("zip_store", name, buf.getvalue())

# --- vlen: byte 0 selects the variant (bits 0-1: v2 strings, v2 bytes, v2 <i2 arrays, v3
# strings; bit 2: zstd), the rest is a chunk of 3 items in numcodecs' vlen format. ---
def vlen(items):
    return struct.pack("<I", len(items)) + b"".join(struct.pack("<I", len(i)) + i for i in items)


put("vlen", "strings", bytes([0]) + vlen([b"", b"ab", "é😀".encode()]))
put("vlen", "bytes", bytes([1]) + vlen([b"\x00\xff", b"", b"xyz"]))
put("vlen", "arrays", bytes([2]) + vlen([struct.pack("<3h", 1, -2, 3), b"", struct.pack("<h", 7)]))
put("vlen", "v3_strings", bytes([3]) + vlen([b"a", b"b", b"c"]))
put("vlen", "past_end", bytes([0]) + struct.pack("<II", 3, 200) + b"x")


# --- fs_store: choices as the target reads them (each a little-endian u16, raw bytes for
# contents and values) ---
def choices(*values):
    return b"".join(struct.pack("<H", v) for v in values)


FS_NAMES = {"a": 0, "b": 1, "c": 2, "0": 3, "x": 4, ".zarray": 5, "zarr.json": 6, "l": 7}
FS_TARGETS = ["a", "..", "../a", "../..", "../../outside", "../outside/x", "@/outside",
              "@/root/a", "missing", "l", ".", "../../../../../../etc"]
FS_ODD = ["..", ".", "", "\\", "C:", ".zarr-tmp.1", "\0", "outside"]


def fs_path(path):
    names = path.split("/")
    return choices(len(names) - 1, *(FS_NAMES[n] for n in names))


def fs_node(path, kind, arg=b"", outside=False):
    """A tree node: kind "file" (arg: content), "dir", "link" (arg: target) or "fifo"."""
    head = choices(0 if outside else 1) + fs_path(path)
    if kind == "file":
        return head + choices(0, len(arg)) + arg
    if kind == "dir":
        return head + choices(1)
    if kind == "link":
        return head + choices(2, FS_TARGETS.index(arg))
    return head + choices(4)


def fs_key(path, form="plain", odd=None, tail="a"):
    if form == "dir":
        return choices(3) + fs_path(path)
    if form == "odd":
        return choices(0) + fs_path(path) + choices(FS_ODD.index(odd)) + fs_path(tail)
    if form == "absolute":
        return choices(1) + fs_path(path)
    if form == "long":
        return choices(2)
    return choices(4) + fs_path(path)


FS_OPS = {"get": 0, "get_into": 2, "get_range": 3, "size": 4, "set": 5, "erase": 7,
          "erase_prefix": 8, "list": 9, "list_dir": 10, "durability": 11}


def fs_op(name, key, *args, value=b""):
    tail = choices(len(value)) + value if name == "set" else b""
    return key + choices(FS_OPS[name], *args) + tail


def fs_seed(name, nodes, ops):
    put("fs_store", name, choices(len(nodes)) + b"".join(nodes) + b"".join(ops))


fs_seed("escape_through_dir_link", [
    fs_node("a/b/x", "file", b"in"),
    fs_node("a/l", "link", "../outside/x"),
    fs_node("b/l", "link", "../../outside"),
], [
    fs_op("get", fs_key("b/l/x")),
    fs_op("set", fs_key("b/l/c"), value=b"evil"),
    fs_op("erase", fs_key("a/l")),
    fs_op("erase_prefix", fs_key("b/l", form="dir")),
    fs_op("list", fs_key("b", form="dir")),
    fs_op("erase_prefix", fs_key("b", form="dir")),
])
fs_seed("fifo_chunks", [
    fs_node("a/.zarray", "file", b"{}"),
    fs_node("a/0", "fifo"),
    fs_node("x", "fifo"),
], [
    fs_op("get", fs_key("a/0")),
    fs_op("get_into", fs_key("x"), 4),
    fs_op("get_range", fs_key("a/0"), 0, 1),
    fs_op("size", fs_key("x")),
    fs_op("set", fs_key("a/0"), value=b"value"),
    fs_op("list_dir", fs_key("a", form="dir")),
])
fs_seed("absolute_links_and_cycles", [
    fs_node("a/x", "file", b"1"),
    fs_node("c", "link", "@/root/a"),
    fs_node("a/l", "link", ".."),
    fs_node("b", "link", "a"),
    fs_node("l", "link", "l"),
    fs_node("x", "link", "missing"),
], [
    fs_op("list", fs_key("a", form="dir")),
    fs_op("list_dir", fs_key("b", form="dir")),
    fs_op("get", fs_key("c/x")),
    fs_op("get", fs_key("b/l/b/x")),
    fs_op("set", fs_key("x"), value=b"through dangling"),
    fs_op("erase_prefix", fs_key("b/l", form="dir")),
])
fs_seed("escape_attempts_in_keys", [
    fs_node("a", "dir"),
    fs_node("x", "file", b"x", outside=True),
], [
    fs_op("set", fs_key("a", form="odd", odd="..", tail="x"), value=b"v"),
    fs_op("get", fs_key("a/b", form="odd", odd=".zarr-tmp.1", tail="x")),
    fs_op("set", fs_key("x", form="absolute"), value=b"v"),
    fs_op("set", fs_key("", form="long"), value=b"v"),
    fs_op("erase_prefix", fs_key("a", form="odd", odd="outside", tail="a")),
])
fs_seed("durability_levels", [
    fs_node("a/b", "dir"),
], [
    fs_op("durability", fs_key("a"), 1),
    fs_op("set", fs_key("a/b/c"), value=b"flushed"),
    fs_op("durability", fs_key("a"), 3),
    fs_op("durability", fs_key("a"), 2),
    fs_op("set", fs_key("c/0"), value=b"synced"),
    fs_op("erase", fs_key("c/0")),
    fs_op("erase_prefix", fs_key("a", form="dir")),
])
