"""Filters interop: numcodecs filters (v2 `filters`, v3 `numcodecs.*` codecs) alone and in
chains, with and without a compressor, between libzarr and zarr-python (2.18: v2 arrays;
3.x: v2 arrays and v3 arrays), with a chunk of fill value left unstored.

- Codec vectors: the chunks libzarr stores are, byte for byte, what numcodecs' encoders
  make of the same chunk (and what zarr-python stores for the same array), and the
  filter configurations in the metadata are numcodecs' full `get_config()`.
- zarr-python writes, libzarr reads the same values zarr-python reads back.
- libzarr writes (builder with zarr_array_builder_set_filters_json), zarr-python reads the
  same values libzarr reads back (lossless chains: exactly the data written).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

from test_v2_interop import Tool, tool  # noqa: F401  (the session fixture)

ZP3 = int(zarr.__version__.split(".")[0]) >= 3

try:
    import tensorstore as ts
except ImportError:  # pragma: no cover - only the zp3 environment has it
    ts = None

SHAPE = (9, 11)
CHUNKS = (4, 4)

# (name, dtype, filters, lossless)
FILTERS = [
    ("delta", "<i4", [{"id": "delta", "dtype": "<i4"}], True),
    ("delta-be-astype", ">i4", [{"id": "delta", "dtype": ">i4", "astype": "<i8"}], True),
    # Small values: numcodecs refuses a first element that does not fit the narrow type.
    ("delta-narrow", "<i2", [{"id": "delta", "dtype": "<i2", "astype": "|i1"}], True),
    ("delta-float", "<f4", [{"id": "delta", "dtype": "<f4"}], False),
    ("fixedscaleoffset", "<f8",
     [{"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "<i4"}], False),
    ("fixedscaleoffset-float", "<f4",
     [{"id": "fixedscaleoffset", "offset": 0.5, "scale": 3.3, "dtype": "<f4", "astype": ">i2"}], False),
    ("fixedscaleoffset-int", "<i4",
     [{"id": "fixedscaleoffset", "offset": 7, "scale": 2, "dtype": "<i4", "astype": "<i8"}], True),
    ("quantize", "<f8", [{"id": "quantize", "digits": 2, "dtype": "<f8"}], False),
    ("quantize-astype", "<f4", [{"id": "quantize", "digits": 3, "dtype": "<f4", "astype": "<f2"}], False),
    ("bitround", "<f8", [{"id": "bitround", "keepbits": 12}], False),
    ("bitround-f4", "<f4", [{"id": "bitround", "keepbits": 5}], False),
    ("packbits", "|b1", [{"id": "packbits"}], True),
    ("astype", "<f8", [{"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}], False),
    ("astype-int", "<i8", [{"id": "astype", "encode_dtype": "<i2", "decode_dtype": "<i8"}], False),
    ("shuffle", "<u2", [{"id": "shuffle", "elementsize": 2}], True),
    ("shuffle-default", "<f8", [{"id": "shuffle", "elementsize": 4}], True),
    ("crc32", "<f8", [{"id": "crc32"}], True),
    ("crc32-end", "<i2", [{"id": "crc32", "location": "end"}], True),
    ("adler32", "<i4", [{"id": "adler32"}], True),
    ("fletcher32", "|u1", [{"id": "fletcher32"}], True),
    ("jenkins_lookup3", "<f4", [{"id": "jenkins_lookup3", "initval": 0, "prefix": None}], True),
    ("jenkins-initval", "<u2", [{"id": "jenkins_lookup3", "initval": 7, "prefix": None}], True),
    ("base64", "<i2", [{"id": "base64"}], True),
    ("chain-astype-delta-shuffle-crc32", "<f8",
     [{"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}, {"id": "delta", "dtype": "<f4"},
      {"id": "shuffle", "elementsize": 4}, {"id": "crc32"}], False),
    ("chain-delta-checksums", "<i4",
     [{"id": "delta", "dtype": "<i4"}, {"id": "fletcher32"}, {"id": "jenkins_lookup3", "initval": 0, "prefix": None}],
     True),
    ("chain-scale-delta-adler", "<f8",
     [{"id": "fixedscaleoffset", "offset": 0, "scale": 100, "dtype": "<f8", "astype": "<i4"},
      {"id": "delta", "dtype": "<i4", "astype": "<i4"}, {"id": "adler32", "location": "end"}], False),
    ("chain-bitround-shuffle", "<f4", [{"id": "bitround", "keepbits": 7}, {"id": "shuffle", "elementsize": 4}],
     False),
]

COMPRESSORS = {
    "none": None,
    "blosc": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "zlib": {"id": "zlib", "level": 1},
    "crc32": {"id": "crc32"},
    "base64": {"id": "base64"},
}
# Compressors whose output is the same whoever encodes (codec vectors compare bytes).
DETERMINISTIC = ("none", "crc32", "base64")

FILTER_IDS = [f[0] for f in FILTERS]
BYTES_IDS = {"shuffle", "crc32", "adler32", "fletcher32", "jenkins_lookup3", "base64"}


def make_data(dtype: str, seed: int, name: str = "") -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == bool:
        a = rng.random(SHAPE) > 0.5
    elif dt.kind == "f":
        a = (rng.standard_normal(SHAPE) * 100).astype(dt)
    else:
        info = np.iinfo(dt)
        lo, hi = max(info.min, -30000), min(info.max, 30000)
        a = rng.integers(lo, hi, size=SHAPE, endpoint=True).astype(dt)
    if name == "delta-narrow":
        a = (a % 50).astype(dt)
    a[:4, :4] = 0  # a whole chunk of fill value: not stored, reads back as fill
    return a


def native_bytes(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("=")).tobytes()


def codecs_of(filters):
    return [numcodecs.get_codec(dict(f)) for f in filters]


def zp_write_v2(path: Path, a: np.ndarray, filters, compressor):
    """zarr-python writes `a` as a v2 array with `filters` and `compressor`."""
    fl = codecs_of(filters) or None
    comp = numcodecs.get_codec(dict(compressor)) if compressor else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if ZP3:
            z = zarr.create_array(store=str(path), shape=a.shape, chunks=CHUNKS, dtype=a.dtype,
                                  zarr_format=2, filters=fl, compressors=comp, fill_value=0)
        else:
            z = zarr.open_array(str(path), mode="w", shape=a.shape, chunks=CHUNKS, dtype=a.dtype,
                                filters=fl, compressor=comp, fill_value=0)
        z[...] = a


def zp_read(path: Path) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(str(path), mode="r")[...]


def lib_write(tool: Tool, monkeypatch, tmp: Path, store: Path, a: np.ndarray, dtype: str,
              filters, compressor, fmt: int = 2):
    """libzarr writes `a` through the builder, with the filters as JSON."""
    monkeypatch.setenv("ZARR_TOOL_FILTERS", json.dumps(filters))
    monkeypatch.setenv("ZARR_TOOL_FORMAT", str(fmt))
    tool.build(tmp / "s", store, "a", dtype=dtype, shape=SHAPE, chunks="4,4", fill="0",
               order="C", sep="." if fmt == 2 else "/", compressor=json.dumps(compressor),
               data=native_bytes(a),
               buf_order="C")


def chunk_files(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and p.name not in (".zarray", ".zattrs", "zarr.json")}


def expected_chunk(a: np.ndarray, index, filters, compressor) -> bytes:
    """numcodecs' encoding of chunk `index` of `a` (edge chunks padded with the fill 0)."""
    chunk = np.zeros(CHUNKS, dtype=a.dtype)
    r0, c0 = index[0] * CHUNKS[0], index[1] * CHUNKS[1]
    part = a[r0:r0 + CHUNKS[0], c0:c0 + CHUNKS[1]]
    chunk[:part.shape[0], :part.shape[1]] = part
    data = chunk
    for codec in codecs_of(filters):
        data = codec.encode(data)
    if compressor:
        data = numcodecs.get_codec(dict(compressor)).encode(data)
    return bytes(np.ascontiguousarray(data).view("u1")) if isinstance(data, np.ndarray) else bytes(data)


# --------------------------------------------------------------------------------------
# Codec vectors: libzarr's stored chunks are numcodecs' encodings
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("compressor", DETERMINISTIC)
@pytest.mark.parametrize("name,dtype,filters,lossless", FILTERS, ids=FILTER_IDS)
def test_stored_chunks_are_numcodecs_encodings(tool, tmp_path, monkeypatch, name, dtype, filters,
                                               lossless, compressor):
    a = make_data(dtype, seed=len(name), name=name)
    comp = COMPRESSORS[compressor]
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    lib_write(tool, monkeypatch, tmp_path, ours, a, dtype, filters, comp)
    zp_write_v2(theirs, a, filters, comp)
    meta = json.loads((ours / "a" / ".zarray").read_text())
    assert meta["filters"] == [c.get_config() for c in codecs_of(filters)]
    assert meta["filters"] == json.loads((theirs / ".zarray").read_text())["filters"]
    files = chunk_files(ours / "a")
    assert "0.0" not in files
    for key, value in files.items():
        index = tuple(int(i) for i in key.split("."))
        assert value == expected_chunk(a, index, filters, comp), key
    # zarr-python 2 also stores chunks of fill value.
    assert files == {k: v for k, v in chunk_files(theirs).items() if k != "0.0"}


# --------------------------------------------------------------------------------------
# zarr-python writes v2, libzarr reads; libzarr writes v2, zarr-python reads
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("compressor", list(COMPRESSORS))
@pytest.mark.parametrize("name,dtype,filters,lossless", FILTERS, ids=FILTER_IDS)
def test_zarr_python_writes_v2_filters(tool, tmp_path, name, dtype, filters, lossless, compressor):
    a = make_data(dtype, seed=len(name) + 1, name=name)
    store = tmp_path / "store"
    zp_write_v2(store / "a", a, filters, COMPRESSORS[compressor])
    expected = zp_read(store / "a")
    if lossless:
        assert native_bytes(expected) == native_bytes(a)
    data, info = tool.dump(tmp_path / "s", store, "a", "C")
    assert data == native_bytes(expected)
    assert info["shape"] == list(SHAPE)


@pytest.mark.parametrize("compressor", list(COMPRESSORS))
@pytest.mark.parametrize("name,dtype,filters,lossless", FILTERS, ids=FILTER_IDS)
def test_libzarr_writes_v2_filters(tool, tmp_path, monkeypatch, name, dtype, filters, lossless,
                                   compressor):
    a = make_data(dtype, seed=len(name) + 2, name=name)
    store = tmp_path / "store"
    lib_write(tool, monkeypatch, tmp_path, store, a, dtype, filters, COMPRESSORS[compressor])
    assert not (store / "a" / "0.0").exists()
    ours, _ = tool.dump(tmp_path / "s", store, "a", "C")
    theirs = zp_read(store / "a")
    assert native_bytes(theirs) == ours
    if lossless:
        assert ours == native_bytes(a)


def test_tensorstore_and_filters(tool, tmp_path, monkeypatch):
    if ts is None:
        pytest.skip("tensorstore is not installed in this environment")
    a = make_data("<i4", seed=3)
    store = tmp_path / "store"
    lib_write(tool, monkeypatch, tmp_path, store, a, "<i4", [{"id": "delta", "dtype": "<i4"}], None)
    try:
        t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(store / "a")}},
                    open=True, read=True).result()
    except Exception as e:  # tensorstore refuses arrays with filters
        pytest.skip(f"tensorstore does not read v2 filters: {str(e).splitlines()[0][:200]}")
    assert native_bytes(t.read().result()) == native_bytes(a)


# --------------------------------------------------------------------------------------
# Zarr v3 with numcodecs.* codecs (zarr-python 3 only)
# --------------------------------------------------------------------------------------

# Left out, because zarr-python 3.1 cannot read back its own v3 arrays with them:
# - Quantize keeps the array's type for the bytes codec, so an `astype` other than `dtype`
#   is read with the wrong item size;
# - filter types in big-endian order: numcodecs views zarr-python's native-order arrays
#   (and the bytes codec's output) as the big-endian type without converting.
#   libzarr takes the types as the metadata says them (tests/filters.rs).
# zarr-python 3 (numcodecs 0.16) registers no numcodecs.base64.
V3_FILTERS = [f for f in FILTERS
              if f[0] not in ("quantize-astype", "delta-be-astype", "fixedscaleoffset-float", "base64")]


def v3_codecs(filters, compressor):
    """zarr-python 3's array-to-array filters and bytes-to-bytes codecs for a v2 chain."""
    from zarr.registry import get_codec_class

    def make(cfg):
        cfg = dict(cfg)
        return get_codec_class(f"numcodecs.{cfg.pop('id')}")(**cfg)

    array = [make(f) for f in filters if f["id"] not in BYTES_IDS]
    byte = [make(f) for f in filters if f["id"] in BYTES_IDS]
    if compressor:
        byte.append(make(compressor))
    return array, byte


def zp3_write_v3(path: Path, a: np.ndarray, filters, compressor):
    array, byte = v3_codecs(filters, compressor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(store=str(path), shape=a.shape, chunks=CHUNKS, dtype=a.dtype,
                              zarr_format=3, filters=array, compressors=byte, fill_value=0)
        z[...] = a


@pytest.mark.skipif(not ZP3, reason="Zarr v3 needs zarr-python 3")
@pytest.mark.parametrize("compressor", ["none", "zlib", "crc32"])
@pytest.mark.parametrize("name,dtype,filters,lossless", V3_FILTERS, ids=[f[0] for f in V3_FILTERS])
def test_v3_numcodecs_filters_both_ways(tool, tmp_path, monkeypatch, name, dtype, filters, lossless,
                                        compressor):
    # v3 arrays are little-endian in memory; big-endian filter types stay in the chain.
    a = make_data(dtype, seed=len(name) + 3, name=name)
    comp = COMPRESSORS[compressor]
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    zp3_write_v3(theirs / "a", a, filters, comp)
    expected = zp_read(theirs / "a")
    data, _ = tool.dump(tmp_path / "s", theirs, "a", "C")
    assert data == native_bytes(expected)
    lib_write(tool, monkeypatch, tmp_path, ours, a, dtype, filters, comp, fmt=3)
    doc = json.loads((ours / "a" / "zarr.json").read_text())
    names = [c["name"] for c in doc["codecs"]]
    assert names[names.index("bytes") + 1:][:len([f for f in filters if f["id"] in BYTES_IDS])] == [
        f"numcodecs.{f['id']}" for f in filters if f["id"] in BYTES_IDS]
    back = zp_read(ours / "a")
    ours_data, _ = tool.dump(tmp_path / "s", ours, "a", "C")
    assert native_bytes(back) == ours_data
    if lossless:
        assert ours_data == native_bytes(a)
    if compressor != "zlib":
        theirs_files = {k: v for k, v in chunk_files(theirs / "a").items() if k != "c/0/0"}
        assert chunk_files(ours / "a") == theirs_files
