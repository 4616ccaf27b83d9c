"""Data types beyond numbers, both directions: fixed-width byte and unicode strings, void,
structured records (nested, sub-arrays, mixed byte orders) and variable-length strings,
bytes and arrays — written by zarr-python (2.18 or 3.x) and read exactly by libzarr
(zarr_tool dump), and written by libzarr and read exactly by zarr-python. Under zarr-python
3 the v3 names (string, bytes, fixed_length_utf32, null_terminated_bytes, raw_bytes) are
tested too."""

import base64
import json
import struct

import numcodecs
import numpy as np
import pytest
import zarr

from test_v2_interop import tool  # noqa: F401  (the session fixture)

ZP3 = int(zarr.__version__.split(".")[0]) >= 3

STRUCTURED = np.dtype([("a", "<i4"), ("b", ">f8", (2,)), ("c", [("x", "|u1"), ("y", "<U2")])])
FLAT_STRUCTURED = np.dtype([("a", "<i4"), ("b", ">f8"), ("s", "|S3"), ("u", ">U1")])
FIXED = ["|S5", "<U4", ">U3", "|V3", STRUCTURED, FLAT_STRUCTURED]
COMPRESSORS = {
    "none": None,
    "blosc": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "zlib": numcodecs.Zlib(level=3),
}
WORDS = ["", "alpha", "héllo wörld", "😀 non-BMP", "nul\0inside", "x" * 300, "last"]


def fixed_data(dtype, n: int, seed: int) -> np.ndarray:
    """`n` items of `dtype` with every byte meaningful (no NaN payloads in floats)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    if dt.kind == "U":
        chars = "aé😀Zq\0"
        return np.array(["".join(rng.choice(list(chars), size=rng.integers(0, dt.itemsize // 4 + 1)))
                         for _ in range(n)], dtype=dt)
    if dt.kind == "S":
        return np.array([bytes(rng.integers(1, 256, size=rng.integers(0, dt.itemsize + 1), dtype=np.uint8))
                         for _ in range(n)], dtype=dt)
    if dt.fields is not None:
        a = np.zeros(n, dtype=dt)
        a["a"] = rng.integers(-1000, 1000, size=n)
        if dt == FLAT_STRUCTURED:
            a["b"] = rng.standard_normal(n)
            a["s"] = [[b"ab", b"", b"xyz", b"\x00q"][i % 4] for i in range(n)]
            a["u"] = "é"
            return a
        a["b"] = rng.standard_normal((n, 2))
        a["c"]["x"] = rng.integers(0, 256, size=n)
        a["c"]["y"] = [["ab", "é", "", "😀z"][i % 4] for i in range(n)]
        return a
    return np.frombuffer(rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8).tobytes(), dtype=dt)


def raw_bytes(a: np.ndarray) -> bytes:
    """What libzarr's raw items hold: stored bytes, unicode in native byte order."""
    if a.dtype.kind == "U":
        return a.astype(a.dtype.newbyteorder("=")).tobytes()
    return np.ascontiguousarray(a).tobytes()


def native_records(dt: np.dtype) -> np.dtype:
    """`dt` with every field (nested and sub-array ones too) in native byte order."""
    if dt.fields is None:
        if dt.subdtype is not None:
            base, shape = dt.subdtype
            return np.dtype((native_records(base), shape))
        return dt.newbyteorder("=") if dt.byteorder in "<>" else dt
    return np.dtype({"names": list(dt.names),
                     "formats": [native_records(dt.fields[n][0]) for n in dt.names],
                     "offsets": [dt.fields[n][1] for n in dt.names], "itemsize": dt.itemsize})


def descr(value):
    """A numpy dtype from a v2 `dtype` value (nested lists of fields become tuples)."""
    if isinstance(value, str):
        return np.dtype(value)

    def field(f):
        return (f[0], descr(f[1])) + ((tuple(f[2]),) if len(f) > 2 else ())

    return np.dtype([field(f) for f in value])


def bytes_dtype():
    """The dtype argument zarr-python takes for variable-length bytes."""
    if ZP3:
        from zarr.core.dtype import VariableLengthBytes
        return VariableLengthBytes()
    return object


def items_file(items) -> bytes:
    return b"".join(struct.pack("<Q", len(i)) + i for i in items)


def parse_items(blob: bytes):
    out, at = [], 0
    while at < len(blob):
        (n,) = struct.unpack_from("<Q", blob, at)
        out.append(blob[at + 8:at + 8 + n])
        at += 8 + n
    return out


def peer_v2_array(store, dtype, shape, chunks, compressor, fill_value=None, object_codec=None):
    """A v2 array created by zarr-python 2 or 3."""
    if ZP3:
        filters = [object_codec] if object_codec is not None else None
        return zarr.create_array(store=str(store), shape=shape, chunks=chunks, dtype=dtype,
                                 zarr_format=2, compressors=compressor, filters=filters,
                                 fill_value=fill_value)
    return zarr.open_array(str(store), mode="w", shape=shape, chunks=chunks, dtype=dtype,
                           compressor=compressor, fill_value=fill_value,
                           object_codec=object_codec)


@pytest.mark.parametrize("compressor", list(COMPRESSORS))
@pytest.mark.parametrize("dtype", FIXED, ids=lambda d: d if isinstance(d, str) else ("structured" if d == STRUCTURED else "flat"))
def test_peer_writes_fixed_types(tool, tmp_path, monkeypatch, dtype, compressor):
    a = fixed_data(dtype, 10, seed=len(str(dtype)))
    store = tmp_path / "s"
    zero = np.zeros((), dtype=dtype)[()]
    z = peer_v2_array(store, np.dtype(dtype), (13,), (4,), COMPRESSORS[compressor],
                      fill_value=zero)
    z[:10] = a  # the last chunk stays missing and reads as the fill value
    data, info = tool.dump(tmp_path, store, "", "C")
    assert info["mem_dtype"] == "raw"
    assert info["item_size"] == np.dtype(dtype).itemsize
    expected = raw_bytes(z[:])
    assert data == expected
    if np.dtype(dtype).fields is not None:
        # zarr_array_records_to_native: every field in this machine's byte order.
        monkeypatch.setenv("ZARR_TOOL_RECORDS_NATIVE", "1")
        data, _ = tool.dump(tmp_path, store, "", "C")
        # (The type as stored: zarr-python 3 may store the fields in another byte order.)
        stored_dt = descr(json.loads((store / ".zarray").read_text())["dtype"])
        stored = np.frombuffer(expected, dtype=stored_dt)
        assert data == stored.astype(native_records(stored_dt)).tobytes()


@pytest.mark.parametrize("compressor", list(COMPRESSORS))
@pytest.mark.parametrize("dtype", FIXED, ids=lambda d: d if isinstance(d, str) else ("structured" if d == STRUCTURED else "flat"))
def test_libzarr_writes_fixed_types(tool, tmp_path, dtype, compressor):
    dt = np.dtype(dtype)
    if ZP3 and dt == STRUCTURED:
        pytest.skip("zarr-python 3 reads no nested or sub-array structured type (it cannot "
                    "read back its own)")
    a = fixed_data(dt, 11, seed=7)
    name = json.dumps(dt.descr) if dt.fields is not None else dt.str
    cfg = COMPRESSORS[compressor]
    tool.build(tmp_path, tmp_path / "s", "a", dtype=name, shape=(11,), chunks="4", fill="-",
               order="C", sep=".", compressor=json.dumps(cfg.get_config()) if cfg else "null",
               data=raw_bytes(a), buf_order="C")
    meta = json.loads((tmp_path / "s" / "a" / ".zarray").read_text())
    assert descr(meta["dtype"]) == dt
    got = zarr.open_array(str(tmp_path / "s" / "a"), mode="r")[:]
    assert got.dtype == dt
    assert got.tobytes() == a.tobytes()


def test_fill_values_of_fixed_types(tool, tmp_path):
    cases = [("|S3", b"ab"), ("<U2", "é"), ("|V2", b"\x01\x02")]
    for i, (dtype, fill) in enumerate(cases):
        store = tmp_path / f"s{i}"
        z = peer_v2_array(store, dtype, (4,), (2,), None, fill_value=np.array(fill, dtype=dtype)[()])
        z[:2] = np.array([fill, fill], dtype=dtype)
        data, info = tool.dump(tmp_path, store, "", "C")
        assert data == raw_bytes(np.array([fill] * 4, dtype=dtype)), dtype


@pytest.mark.parametrize("compressor", ["none", "blosc", "zlib"])
@pytest.mark.parametrize("codec", ["vlen-utf8", "vlen-bytes", "vlen-array"])
def test_peer_writes_object_arrays(tool, tmp_path, codec, compressor):
    if codec == "vlen-array" and ZP3:
        pytest.skip("zarr-python 3 does not write vlen-array")
    store = tmp_path / "s"
    if codec == "vlen-utf8":
        values = WORDS
        object_codec, expect = numcodecs.VLenUTF8(), [w.encode() for w in WORDS]
    elif codec == "vlen-bytes":
        values = [w.encode() + b"\xff\x00" for w in WORDS]
        object_codec, expect = numcodecs.VLenBytes(), values
    else:
        values = [np.arange(i, dtype=">i4") - 3 for i in range(len(WORDS))]
        object_codec = numcodecs.VLenArray(">i4")
        expect = [v.astype("=i4").tobytes() for v in values]
    z = peer_v2_array(store, str if ZP3 and codec == "vlen-utf8" else bytes_dtype(),
                      (len(WORDS) + 3,), (3,), COMPRESSORS[compressor],
                      object_codec=object_codec)
    arr = np.empty(len(WORDS), dtype=object)
    arr[:] = values
    z[: len(WORDS)] = arr
    blob, info = tool.dump(tmp_path, store, "", "C")
    items = parse_items(blob)
    assert items[: len(WORDS)] == expect
    assert info["mem_dtype"] == ("string" if codec == "vlen-utf8" else "bytes")
    # zarr_array_vlen_item_dtype: what an item holds.
    item = {"vlen-utf8": ("string", 1), "vlen-bytes": ("bytes", 1), "vlen-array": ("int32", 4)}
    assert (info["vlen_item_dtype"], info["vlen_item_size"]) == item[codec]
    # The unwritten tail reads as the fill value as zarr-python reads it.
    tail = z[len(WORDS):]
    for got, peer in zip(items[len(WORDS):], tail):
        if codec == "vlen-utf8":
            assert got.decode() == str(peer if peer is not None else "")
        elif codec == "vlen-bytes":
            assert got == (peer or b"")
        else:
            assert got == b""


@pytest.mark.parametrize("dtype,codec", [("string", "vlen-utf8"), ("bytes", "vlen-bytes"),
                                         ('{"id": "vlen-array", "dtype": "<i2"}', "vlen-array")])
def test_libzarr_writes_object_arrays(tool, tmp_path, dtype, codec):
    if codec == "vlen-array" and ZP3:
        pytest.skip("zarr-python 3 does not read vlen-array")
    if codec == "vlen-array":
        values = [np.arange(i, dtype="<i2") * 7 for i in range(len(WORDS))]
        items = [v.tobytes() for v in values]
    else:
        items = [w.encode() for w in WORDS]
    tool.build(tmp_path, tmp_path / "s", "a", dtype=dtype, shape=(len(WORDS),), chunks="3",
               fill="-", order="C", sep=".",
               compressor='{"id": "zstd", "level": 1}', data=items_file(items), buf_order="C")
    meta = json.loads((tmp_path / "s" / "a" / ".zarray").read_text())
    assert meta["dtype"] == "|O" and meta["filters"][0]["id"] == codec
    got = zarr.open_array(str(tmp_path / "s" / "a"), mode="r")[:]
    if codec == "vlen-utf8":
        assert list(got) == WORDS
    elif codec == "vlen-bytes":
        assert [bytes(g) for g in got] == items
    else:
        assert [g.tobytes() for g in got] == items


@pytest.mark.skipif(ZP3, reason="zarr-python 3 reads no json2 object arrays")
@pytest.mark.parametrize("shape,chunks", [((8,), (3,)), ((4, 5), (3, 2)), ((), None)],
                         ids=["1d", "2d", "0d"])
def test_json2_string_arrays_both_ways(tool, tmp_path, shape, chunks):
    """Strings under zarr-python 2's JSON object codec: libzarr reads what zarr-python 2 wrote
    (its unwritten items hold the fill value 0, read as "0" as a string fill value 0 is),
    writes into such an array keeping the codec, and zarr-python 2 reads that back."""
    n = int(np.prod(shape))
    words = (WORDS * 3)[:n]
    store = tmp_path / "s"
    z = zarr.open_array(str(store), mode="w", shape=shape, chunks=chunks, dtype=object,
                        object_codec=numcodecs.JSON())
    values = np.empty(n, dtype=object)
    values[:] = words
    if shape == ():
        z[...] = words[0]
    else:
        flat = values.reshape(shape)
        z[tuple(slice(0, d - 1) for d in shape)] = flat[tuple(slice(0, d - 1) for d in shape)]
    blob, info = tool.dump(tmp_path, store, "", "C")
    assert info["mem_dtype"] == "string"
    expected = [str(v).encode() for v in np.asarray(z[...], dtype=object).ravel()]
    assert parse_items(blob) == expected
    assert b"0" in expected or shape == ()
    # libzarr writes every item; the chunks stay json2 and zarr-python 2 reads them.
    new = [w[::-1] + "!" for w in words]
    start, count = [0] * len(shape), list(shape)
    tool.write_region(tmp_path, store, "", start, count, items_file([w.encode() for w in new]),
                      "C")
    meta = json.loads((store / ".zarray").read_text())
    assert meta["filters"][0]["id"] == "json2"
    back = zarr.open_array(str(store), mode="r")[...]
    assert np.asarray(back, dtype=object).ravel().tolist() == new
    first_chunk = "0" if shape == () else ".".join("0" * len(shape))
    raw = (store / first_chunk).read_bytes()
    if meta["compressor"] is not None:
        raw = numcodecs.get_codec(meta["compressor"]).decode(raw)
    assert json.loads(bytes(raw))[-2:] == ["|O", list(chunks or ())]


def test_invalid_utf8_from_a_peer_is_an_error(tool, tmp_path):
    store = tmp_path / "s"
    z = peer_v2_array(store, bytes_dtype(), (2,), (2,), None,
                      object_codec=numcodecs.VLenBytes())
    arr = np.empty(2, dtype=object)
    arr[:] = [b"ok", b"\xff\xfe"]
    z[:] = arr
    meta_path = store / ".zarray"
    meta = json.loads(meta_path.read_text())
    meta["filters"] = [{"id": "vlen-utf8"}]
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(AssertionError, match="ZARR_ERR_CODEC.*UTF-8"):
        tool.dump(tmp_path, store, "", "C")


# ---- Zarr v3 names (zarr-python 3 only) ------------------------------------------------

V3_FIXED = ["<U4", "|S5", "|V3"]


@pytest.mark.skipif(not ZP3, reason="Zarr v3 needs zarr-python 3")
@pytest.mark.parametrize("dtype", V3_FIXED)
def test_peer_writes_v3_fixed_types(tool, tmp_path, dtype):
    a = fixed_data(dtype, 10, seed=3)
    z = zarr.create_array(store=str(tmp_path / "s"), shape=(12,), chunks=(4,), dtype=dtype,
                          zarr_format=3)
    z[:10] = a
    doc = json.loads((tmp_path / "s" / "zarr.json").read_text())
    assert doc["data_type"]["name"] in ("fixed_length_utf32", "null_terminated_bytes", "raw_bytes")
    data, info = tool.dump(tmp_path, tmp_path / "s", "", "C")
    assert data == raw_bytes(z[:])


@pytest.mark.skipif(not ZP3, reason="Zarr v3 needs zarr-python 3")
@pytest.mark.parametrize("dtype", ["<U4", "|S5", "|V3"])
def test_libzarr_writes_v3_fixed_types(tool, tmp_path, monkeypatch, dtype):
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    a = fixed_data(dtype, 9, seed=5)
    tool.build(tmp_path, tmp_path / "s", "a", dtype=dtype, shape=(9,), chunks="4", fill="-",
               order="C", sep="/", compressor='{"id": "zstd", "level": 1}', data=raw_bytes(a),
               buf_order="C")
    got = zarr.open_array(str(tmp_path / "s" / "a"), mode="r")[:]
    assert got.tobytes() == a.astype(np.dtype(dtype).newbyteorder("<")).tobytes() or \
        got.tobytes() == a.tobytes()
    assert list(got) == list(a)


@pytest.mark.skipif(not ZP3, reason="Zarr v3 needs zarr-python 3")
def test_v3_blosc_typesize_of_wide_items_both_ways(tool, tmp_path, monkeypatch):
    """zarr-python 3 writes the item size of 300-byte items as blosc's typesize (c-blosc
    shuffles by 1 beyond 255): libzarr reads such arrays and writes ones zarr-python reads."""
    from zarr.codecs import BloscCodec

    a = fixed_data("|V300", 5, seed=11)
    z = zarr.create_array(store=str(tmp_path / "p"), shape=(5,), chunks=(2,), dtype="|V300",
                          zarr_format=3, compressors=BloscCodec(cname="lz4", shuffle="shuffle"))
    z[...] = a
    doc = json.loads((tmp_path / "p" / "zarr.json").read_text())
    assert doc["codecs"][-1]["configuration"]["typesize"] == 300
    data, _ = tool.dump(tmp_path, tmp_path / "p", "", "C")
    assert data == raw_bytes(a)
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    tool.build(tmp_path, tmp_path / "l", "a", dtype="|V300", shape=(5,), chunks="2", fill="-",
               order="C", sep="/",
               compressor='{"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "shuffle"}}',
               data=raw_bytes(a), buf_order="C")
    doc = json.loads((tmp_path / "l" / "a" / "zarr.json").read_text())
    assert doc["codecs"][-1]["configuration"]["typesize"] == 300
    got = zarr.open_array(str(tmp_path / "l" / "a"), mode="r")[...]
    assert got.tobytes() == a.tobytes()


@pytest.mark.skipif(not ZP3, reason="Zarr v3 needs zarr-python 3")
@pytest.mark.parametrize("kind", ["string", "bytes"])
def test_v3_variable_length_both_ways(tool, tmp_path, monkeypatch, kind):
    values = WORDS if kind == "string" else [w.encode() + b"\x00\xff" for w in WORDS]
    items = [v.encode() if kind == "string" else v for v in values]
    # zarr-python writes, libzarr reads (a missing chunk at the end).
    z = zarr.create_array(store=str(tmp_path / "p"), shape=(len(WORDS) + 2,), chunks=(3,),
                          dtype=str if kind == "string" else bytes_dtype(), zarr_format=3)
    arr = np.empty(len(WORDS), dtype=object)
    arr[:] = values
    z[: len(WORDS)] = arr
    blob, info = tool.dump(tmp_path, tmp_path / "p", "", "C")
    got = parse_items(blob)
    assert got[: len(WORDS)] == items
    assert got[len(WORDS):] == [b"", b""]
    # libzarr writes, zarr-python reads.
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    tool.build(tmp_path, tmp_path / "l", "a", dtype=kind, shape=(len(WORDS),), chunks="3",
               fill="-", order="C", sep="/", compressor='{"id": "zstd", "level": 1}',
               data=items_file(items), buf_order="C")
    doc = json.loads((tmp_path / "l" / "a" / "zarr.json").read_text())
    assert doc["data_type"] == kind
    assert doc["codecs"][0]["name"] == ("vlen-utf8" if kind == "string" else "vlen-bytes")
    back = zarr.open_array(str(tmp_path / "l" / "a"), mode="r")[:]
    assert [v if kind == "string" else bytes(v) for v in back] == values


@pytest.mark.skipif(not ZP3, reason="Zarr v3 needs zarr-python 3")
@pytest.mark.parametrize("kind", ["string", "bytes"])
@pytest.mark.parametrize("shards", ["6", "12;6"], ids=["sharded", "nested"])
def test_v3_sharded_variable_length_both_ways(tool, tmp_path, monkeypatch, kind, shards):
    """Variable-length items in shards: libzarr writes one object per shard that zarr-python 3
    reads exactly (checksums included); zarr-python 3's shards read exactly by libzarr."""
    values = WORDS if kind == "string" else [w.encode() + b"\x00\xff" for w in WORDS]
    items = [v.encode() if kind == "string" else v for v in values]
    n = len(WORDS)
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    monkeypatch.setenv("ZARR_TOOL_SHARDS", shards)
    tool.build(tmp_path, tmp_path / "l", "a", dtype=kind, shape=(n,), chunks="3",
               fill="-", order="C", sep="/", compressor='{"id": "zstd", "level": 1}',
               data=items_file(items), buf_order="C")
    doc = json.loads((tmp_path / "l" / "a" / "zarr.json").read_text())
    assert doc["codecs"][0]["name"] == "sharding_indexed"
    stored = sorted(p.name for p in (tmp_path / "l" / "a" / "c").iterdir())
    assert stored == [str(i) for i in range(-(-n // int(shards.split(";")[0])))]
    back = zarr.open_array(str(tmp_path / "l" / "a"), mode="r")[:]
    assert [v if kind == "string" else bytes(v) for v in back] == values
    # zarr-python writes shards of 6 (inner chunks of 3), libzarr reads.
    z = zarr.create_array(store=str(tmp_path / "p"), shape=(n + 2,), chunks=(3,), shards=(6,),
                          dtype=str if kind == "string" else bytes_dtype(), zarr_format=3)
    arr = np.empty(n, dtype=object)
    arr[:] = values
    z[:n] = arr
    blob, _ = tool.dump(tmp_path, tmp_path / "p", "", "C")
    got = parse_items(blob)
    assert got[:n] == items
    assert got[n:] == [b"", b""]


@pytest.mark.skipif(not ZP3, reason="Zarr v3 needs zarr-python 3")
def test_libzarr_writes_raw_bytes_that_both_peers_read(tool, tmp_path, monkeypatch):
    """Opaque items are written as `raw_bytes` with a base64 fill value, which zarr-python
    3 reads (values and fill exactly) and tensorstore opens (its Python binding gives no
    values for its byte type: the shape it sees is checked)."""
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    a = bytes(range(24))
    tool.build(tmp_path, tmp_path / "s", "a", dtype="r48", shape=(4,), chunks="2",
               fill=json.dumps(base64.b64encode(b"\x09\x08\x07\x06\x05\x04").decode()),
               order="C", sep="/", compressor="null", data=a, buf_order="C")
    path = tmp_path / "s" / "a" / "zarr.json"
    doc = json.loads(path.read_text())
    assert doc["data_type"] == {"name": "raw_bytes", "configuration": {"length_bytes": 6}}
    assert doc["fill_value"] == "CQgHBgUE"
    assert doc["codecs"] == [{"name": "bytes"}]
    doc["shape"] = [5]  # the fifth item is in a chunk never written: the fill value
    path.write_text(json.dumps(doc))
    data, info = tool.dump(tmp_path, tmp_path / "s", "a", "C")
    assert data == a + b"\x09\x08\x07\x06\x05\x04"
    z = zarr.open_array(str(tmp_path / "s" / "a"), mode="r")
    assert np.asarray(z[:]).tobytes() == data
    ts = _tensorstore()
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file",
                                                "path": str(tmp_path / "s" / "a")}}).result()
    assert tuple(t.shape) == (5, 6) and str(t.dtype) == 'dtype("byte")'


def test_tensorstore_reads_records_field_by_field(tool, tmp_path):
    """tensorstore reads a record type one field at a time (numeric fields: its Python
    binding gives no bytes for S/V values, and it has no U)."""
    try:
        import tensorstore as ts
    except ImportError:
        pytest.skip("tensorstore is installed only in the zarr-python 3 environment (zp3)")
    dt = np.dtype([("a", "<i4"), ("b", ">f8"), ("c", "|u1")])
    rng = np.random.default_rng(2)
    a = np.zeros(7, dtype=dt)
    a["a"], a["b"], a["c"] = rng.integers(-9, 9, 7), rng.standard_normal(7), np.arange(7)
    tool.build(tmp_path, tmp_path / "s", "a", dtype=json.dumps(dt.descr), shape=(7,),
               chunks="3", fill="-", order="C", sep=".",
               compressor='{"id": "zlib", "level": 1}', data=a.tobytes(), buf_order="C")
    spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": str(tmp_path / "s" / "a")}}
    for field in dt.names:
        got = ts.open(dict(spec, field=field)).result().read().result()
        assert got.tolist() == a[field].tolist(), field


def test_categorize_on_unicode_arrays_both_ways(tool, tmp_path, monkeypatch):
    labels = ["red", "green", "blü😀"]
    words = np.array(["green", "red", "", "blü😀", "other", "red", "green"], dtype="<U5")
    codec = numcodecs.Categorize(labels=labels, dtype="<U5", astype="|u1")
    # zarr-python writes, libzarr reads (the last chunk missing: fill "").
    store = tmp_path / "p"
    if ZP3:
        z = zarr.create_array(store=str(store), shape=(9,), chunks=(3,), dtype="<U5",
                              zarr_format=2, filters=[codec], compressors=None, fill_value="")
    else:
        z = zarr.open_array(str(store), mode="w", shape=(9,), chunks=(3,), dtype="<U5",
                            filters=[codec], compressor=None, fill_value="")
    z[:7] = words
    data, _ = tool.dump(tmp_path, store, "", "C")
    assert data == raw_bytes(z[:])
    assert (store / "0").read_bytes() == bytes([2, 1, 0])
    # libzarr writes, zarr-python reads.
    monkeypatch.setenv("ZARR_TOOL_FILTERS", json.dumps([codec.get_config()]))
    tool.build(tmp_path, tmp_path / "l", "a", dtype="<U5", shape=(7,), chunks="3", fill='""',
               order="C", sep=".", compressor="null", data=raw_bytes(words), buf_order="C")
    assert (tmp_path / "l" / "a" / "0").read_bytes() == bytes([2, 1, 0])
    got = zarr.open_array(str(tmp_path / "l" / "a"), mode="r")[:]
    assert list(got) == ["green", "red", "", "blü😀", "", "red", "green"]


# ---- Zarr v3 extension types (tensorstore, zarr-python 3) -------------------------------

def _tensorstore():
    try:
        import tensorstore as ts
    except ImportError:
        pytest.skip("tensorstore is installed only in the zarr-python 3 environment (zp3)")
    return ts


# The extension types tensorstore 0.1.86 writes, with a fill value each can hold.
TS_EXTENSION_TYPES = {
    "bfloat16": 1.5, "float8_e4m3fn": -448.0, "float8_e4m3fnuz": 1.5,
    "float8_e4m3b11fnuz": 1.5, "float8_e5m2": "-Infinity", "float8_e5m2fnuz": 1.5,
    "float8_e3m4": 1.5, "float8_e8m0fnu": 0.25, "float4_e2m1fn": -6.0, "int4": -3, "int2": -2,
}


def _ext_values(name, n, seed):
    """`n` values of the extension type `name` (ml_dtypes), NaN-free, as a numpy array."""
    import ml_dtypes  # noqa: F401  (registers the types with numpy)
    dt = np.dtype(name)
    rng = np.random.default_rng(seed)
    if name.startswith("int"):
        bits = int(name[3:])
        return rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), n).astype(dt)
    if name == "float8_e8m0fnu":
        return (2.0 ** rng.integers(-20, 20, n)).astype(dt)
    return rng.choice(np.array([0.0, -0.0, 1.0, -1.5, 0.25, 3.0, -6.0, 0.5], dtype=np.float32),
                      n).astype(dt)


def _canonical_bytes(name, a):
    """The bytes libzarr gives for items of `name`: int2/int4 sign-extended, the other
    narrow types in their low bits."""
    raw = np.frombuffer(a.tobytes(), dtype=np.uint8).copy()
    if name in ("int2", "int4"):
        bits = int(name[3:])
        raw = ((raw.astype(np.int16) << (8 - bits) & 0xff).astype(np.uint8).view(np.int8)
               >> (8 - bits)).view(np.uint8)
    elif name in ("float4_e2m1fn", "uint4"):
        raw &= 0x0F
    elif name == "uint2":
        raw &= 0x03
    elif name.startswith("float6"):
        raw &= 0x3F
    return raw.tobytes()


@pytest.mark.parametrize("name", list(TS_EXTENSION_TYPES))
def test_tensorstore_extension_types_both_ways(tool, tmp_path, monkeypatch, name):
    """Each extension type tensorstore writes: its arrays and fill values read by libzarr
    bit for bit; libzarr's arrays of it read by tensorstore value for value."""
    ts = _tensorstore()
    import ml_dtypes  # noqa: F401
    fill = TS_EXTENSION_TYPES[name]
    dt = np.dtype(name)
    data = _ext_values(name, 10, seed=len(name))
    fill_item = np.array([float(fill)], dtype=np.float64).astype(dt)
    # tensorstore writes (two chunks of 4 written, the last chunk missing), libzarr reads.
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "t")},
            "metadata": {"data_type": name, "shape": [12],
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
                         "fill_value": fill}, "create": True}
    t = ts.open(spec).result()
    t[:8].write(data[:8]).result()
    blob, info = tool.dump(tmp_path, tmp_path / "t", "", "C")
    assert info["mem_dtype"] == name
    expected = np.concatenate([data[:8], np.repeat(fill_item, 4)])
    assert blob == _canonical_bytes(name, expected)
    assert bytes.fromhex(info["fill_hex"]) == _canonical_bytes(name, fill_item)
    # libzarr writes, tensorstore reads.
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    tool.build(tmp_path, tmp_path / "l", "a", dtype=name, shape=(10,), chunks="4",
               fill=json.dumps(fill), order="C", sep="/", compressor='{"id": "zstd", "level": 1}',
               data=_canonical_bytes(name, data), buf_order="C")
    doc = json.loads((tmp_path / "l" / "a" / "zarr.json").read_text())
    assert doc["data_type"] == name
    assert doc["fill_value"] == fill
    got = ts.open({"driver": "zarr3", "kvstore": {"driver": "file",
                                                  "path": str(tmp_path / "l" / "a")}}).result()
    assert got.dtype.numpy_dtype == dt
    assert got.read().result().astype(np.float64).tolist() == data.astype(np.float64).tolist()
    ts_fill = np.array(got.fill_value).astype(np.float64).item()
    if name == "float8_e8m0fnu":
        # tensorstore 0.1.86 converts float8_e8m0fnu JSON fill values 64 binades off (it
        # reads 1.0 as 2^-64 and writes the bits of 2^-2 as 2^62); libzarr follows the
        # data type's specification and ml_dtypes, as the read above checks.
        assert ts_fill == float(fill) * 2.0**-64
    else:
        assert ts_fill == float(fill)


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "int4"])
def test_tensorstore_v2_extension_names_both_ways(tool, tmp_path, monkeypatch, name):
    """tensorstore's Zarr v2 arrays of extension types (`"dtype": "bfloat16"`) read by
    libzarr bit for bit, and libzarr's v2 arrays of them read by tensorstore."""
    ts = _tensorstore()
    import ml_dtypes  # noqa: F401
    fill = TS_EXTENSION_TYPES[name]
    dt = np.dtype(name)
    data = _ext_values(name, 6, seed=len(name) + 2)
    fill_item = np.array([float(fill)], dtype=np.float64).astype(dt)
    t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(tmp_path / "t")},
                 "metadata": {"dtype": name, "shape": [9], "chunks": [3], "fill_value": fill,
                              "compressor": {"id": "zlib", "level": 1}},
                 "create": True}).result()
    t[:6].write(data).result()
    assert json.loads((tmp_path / "t" / ".zarray").read_text())["dtype"] == name
    blob, info = tool.dump(tmp_path, tmp_path / "t", "", "C")
    assert info["mem_dtype"] == name and info["zarr_format"] == 2
    assert blob == _canonical_bytes(name, np.concatenate([data, np.repeat(fill_item, 3)]))
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "2")
    tool.build(tmp_path, tmp_path / "l", "a", dtype=name, shape=(6,), chunks="4",
               fill=json.dumps(fill), order="C", sep=".", compressor='{"id": "zlib", "level": 1}',
               data=_canonical_bytes(name, data), buf_order="C")
    assert json.loads((tmp_path / "l" / "a" / ".zarray").read_text())["dtype"] == name
    got = ts.open({"driver": "zarr", "kvstore": {"driver": "file",
                                                 "path": str(tmp_path / "l" / "a")}}).result()
    assert got.dtype.numpy_dtype == dt
    assert got.read().result().astype(np.float64).tolist() == data.astype(np.float64).tolist()


def test_nan_payload_fill_values_both_ways(tool, tmp_path, monkeypatch):
    """A NaN with a payload is written as hex bits, which zarr-python 3 and tensorstore read
    as that NaN; hex fill values written by a peer are read exactly."""
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    tool.build(tmp_path, tmp_path / "l", "a", dtype="float32", shape=(3,), chunks="2",
               fill='"0x7fc00001"', order="C", sep="/", compressor="null",
               data=b"\0" * 12, buf_order="C")
    doc = json.loads((tmp_path / "l" / "a" / "zarr.json").read_text())
    assert doc["fill_value"] == "0x7fc00001"
    if ZP3:
        z = zarr.open_array(str(tmp_path / "l" / "a"), mode="r")
        assert np.float32(z.fill_value).view(np.uint32) == 0x7FC00001
    try:
        import tensorstore as ts
    except ImportError:
        ts = None
    if ts is not None:
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file",
                                                    "path": str(tmp_path / "l" / "a")}}).result()
        assert np.array(t.fill_value, dtype=np.float32).view(np.uint32) == 0x7FC00001
        # tensorstore writes a payload NaN fill value; libzarr reads its bits.
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "t")},
                     "metadata": {"data_type": "float64", "shape": [2],
                                  "chunk_grid": {"name": "regular",
                                                 "configuration": {"chunk_shape": [2]}},
                                  "fill_value": "0xfff0000000000123"},
                     "create": True}).result()
        blob, info = tool.dump(tmp_path, tmp_path / "t", "", "C")
        assert np.frombuffer(blob, dtype="<u8").tolist() == [0xFFF0000000000123] * 2
        assert info["fill_value_json"] == "0xfff0000000000123"


@pytest.mark.skipif(not ZP3, reason="Zarr v3 needs zarr-python 3")
@pytest.mark.parametrize("dtype", ["<M8[10s]", "<m8[ms]", ">M8[ns]"])
def test_v3_times_both_ways(tool, tmp_path, monkeypatch, dtype):
    """numpy.datetime64 / numpy.timedelta64 with unit and scale factor, NaT fill values."""
    dt = np.dtype(dtype)
    values = [0, 1, -5, 2**40, -(2**62)]
    a = np.array(values, dtype="=i8").view(dt.newbyteorder("=")).astype(dt)
    z = zarr.create_array(store=str(tmp_path / "p"), shape=(7,), chunks=(3,), dtype=dt,
                          fill_value=np.array("NaT", dtype=dt)[()], zarr_format=3)
    z[:5] = a
    doc = json.loads((tmp_path / "p" / "zarr.json").read_text())
    unit, scale = np.datetime_data(dt)
    assert doc["data_type"]["configuration"] == {"unit": unit, "scale_factor": scale}
    blob, info = tool.dump(tmp_path, tmp_path / "p", "", "C")
    assert info["mem_dtype"] == "int64"
    got = np.frombuffer(blob, dtype="=i8")
    assert got[:5].tolist() == values
    assert got[5:].tolist() == [np.iinfo(np.int64).min] * 2
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    tool.build(tmp_path, tmp_path / "l", "a", dtype=dtype, shape=(5,), chunks="2",
               fill='"NaT"', order="C", sep="/", compressor="null",
               data=np.array(values, dtype="=i8").tobytes(), buf_order="C")
    doc = json.loads((tmp_path / "l" / "a" / "zarr.json").read_text())
    assert doc["data_type"]["name"] == ("numpy.datetime64" if dt.kind == "M" else
                                        "numpy.timedelta64")
    assert doc["fill_value"] == "NaT"
    assert doc["codecs"][0] == {"name": "bytes", "configuration": {
        "endian": "big" if dt.byteorder == ">" else "little"}}
    back = zarr.open_array(str(tmp_path / "l" / "a"), mode="r")
    assert back.dtype.newbyteorder("=") == dt.newbyteorder("=")
    assert back[:].astype(dt.newbyteorder("=")).view("=i8").tolist() == values
    assert np.isnat(back.fill_value)


@pytest.mark.skipif(not ZP3, reason="Zarr v3 needs zarr-python 3")
def test_v3_records_both_ways(tool, tmp_path, monkeypatch):
    """Records both ways with zarr-python 3.1 in its "structured" form ([name, type] pairs,
    base64 fill value, little endian): what it writes libzarr reads exactly, and what libzarr
    writes it reads exactly, fill value included. (libzarr also reads the registry's newer
    "struct" form.)"""
    dt = np.dtype([("id", "<i4"), ("x", "<f8"), ("tag", "S2"), ("in", [("k", "<u2")])])
    a = np.zeros(5, dtype=dt)
    a["id"], a["x"], a["tag"] = [1, -2, 3, 4, 5], [0.5, -1.0, 2.25, 1e9, 0], [b"ab", b"", b"q", b"zz", b"\0x"]
    a["in"]["k"] = [9, 8, 7, 6, 65535]
    z = zarr.create_array(store=str(tmp_path / "p"), shape=(6,), chunks=(4,), dtype=dt,
                          zarr_format=3)
    z[:5] = a
    doc = json.loads((tmp_path / "p" / "zarr.json").read_text())
    assert doc["data_type"]["name"] == "structured"
    blob, info = tool.dump(tmp_path, tmp_path / "p", "", "C")
    assert blob == z[:].tobytes()
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    fill = np.array((7, np.nan, b"ab", (3,)), dtype=dt)
    tool.build(tmp_path, tmp_path / "l", "a", dtype=json.dumps(dt.descr), shape=(6,), chunks="4",
               fill="hex:" + fill.tobytes().hex(), order="C", sep="/",
               compressor='{"id": "zstd", "level": 1}', data=np.concatenate([a, a[:1]]).tobytes(),
               buf_order="C")
    doc = json.loads((tmp_path / "l" / "a" / "zarr.json").read_text())
    assert doc["data_type"] == {"name": "structured", "configuration": {"fields": [
        ["id", "int32"], ["x", "float64"],
        ["tag", {"name": "null_terminated_bytes", "configuration": {"length_bytes": 2}}],
        ["in", {"name": "structured", "configuration": {"fields": [["k", "uint16"]]}}]]}}
    assert base64.b64decode(doc["fill_value"]) == fill.tobytes()
    back = zarr.open_array(str(tmp_path / "l" / "a"), mode="r")
    assert back.dtype == dt
    assert back[:5].tobytes() == a.tobytes()
    assert np.asarray(back.fill_value).tobytes() == fill.tobytes()


def test_raw_bits_fill_value_forms(tool, tmp_path, monkeypatch):
    """The core `r<N>` type (which libzarr reads and writes as `raw_bytes`) with both fill
    value forms: the specification's list of bytes and tensorstore's base64."""
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    tool.build(tmp_path, tmp_path / "l", "a", dtype="r16", shape=(4,), chunks="2",
               fill="null", order="C", sep="/", compressor="null", data=b"abcdefgh",
               buf_order="C")
    path = tmp_path / "l" / "a" / "zarr.json"
    doc = json.loads(path.read_text())
    doc["data_type"] = "r16"
    doc["shape"] = [6]  # items 4 and 5: a chunk never written, the fill value
    for fill in ([1, 2], "AQI="):
        doc["fill_value"] = fill
        path.write_text(json.dumps(doc))
        blob, info = tool.dump(tmp_path, tmp_path / "l", "a", "C")
        assert blob == b"abcdefgh\x01\x02\x01\x02", fill
        assert info["fill_hex"] == "0102"


def test_v1_records_created_and_migrated(tool, tmp_path, monkeypatch):
    """libzarr creates v1 arrays (records included); their `meta` holds the v2 field list,
    which zarr-python 2's migrate_1to2 turns into an array it reads exactly."""
    if ZP3:
        pytest.skip("zarr-python 3 has no v1 support (migrate_1to2 is zarr-python 2's)")
    from zarr.storage import migrate_1to2
    dt = np.dtype([("a", "<i2"), ("b", ">f4")])
    a = np.zeros(5, dtype=dt)
    a["a"], a["b"] = [1, 2, 3, -4, 5], [0.5, 1.5, -2.0, 3.25, 0]
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "1")
    # A null fill value: migrate_1to2 copies the v1 fill value as if it were decoded, so a
    # record's base64 text would stop it.
    tool.build(tmp_path, tmp_path / "l", "", dtype=json.dumps(dt.descr), shape=(5,), chunks="2",
               fill="null", order="C", sep="-", compressor='{"id": "zlib", "level": 1}',
               data=a.tobytes(), buf_order="C")
    meta = json.loads((tmp_path / "l" / "meta").read_text())
    assert meta["zarr_format"] == 1 and meta["dtype"] == [["a", "<i2"], ["b", ">f4"]]
    blob, info = tool.dump(tmp_path, tmp_path / "l", "", "C")
    assert blob == a.tobytes()
    store = zarr.DirectoryStore(str(tmp_path / "l"))
    migrate_1to2(store)
    got = zarr.open_array(store, mode="r")[:]
    assert got.tobytes() == a.tobytes()


ALL_EXTENSION_TYPES = ["bfloat16", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
                       "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e3m4",
                       "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
                       "int2", "int4", "uint2", "uint4"]


@pytest.mark.parametrize("name", ALL_EXTENSION_TYPES)
def test_extension_fill_values_round_as_ml_dtypes(tool, tmp_path, monkeypatch, name):
    """Numbers given as fill values become the bits ml_dtypes rounds them to (ties to even),
    and the JSON written is the exact value of those bits."""
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        pytest.skip("ml_dtypes is installed only in the zarr-python 3 environment (zp3)")
    dt = np.dtype(name)
    if name.startswith(("int", "uint")):
        info = ml_dtypes.iinfo(dt)
        values = list(range(int(info.min), int(info.max) + 1))
    else:
        values = [0.0, 1.0, -1.5, 0.1, 3.3, 0.3, 2.75, 0.0625, 5.5, 1e-3]
        if name == "float8_e8m0fnu":
            values = [1.0, 0.25, 3.0, 6.0, 0.1, 2.0**-100, 1e30]
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    for i, v in enumerate(values):
        expected = np.array([v], dtype=np.float64).astype(dt)
        tool.build(tmp_path, tmp_path / "s", str(i), dtype=name, shape=(1,), chunks="1",
                   fill=json.dumps(v), order="C", sep="/", compressor="null",
                   data=b"\0" * dt.itemsize, buf_order="C")
        _, info = tool.dump(tmp_path, tmp_path / "s", str(i), "C")
        assert bytes.fromhex(info["fill_hex"]) == _canonical_bytes(name, expected), (name, v)
        doc = json.loads((tmp_path / "s" / str(i) / "zarr.json").read_text())
        assert doc["fill_value"] == expected.astype(np.float64).item(), (name, v)
