"""Zarr v3 interop: arrays libzarr writes (builder with format 3) are read exactly by
zarr-python 3 and tensorstore; arrays they write are read exactly by libzarr (zarr_tool
dump, which detects the format). Runs only where zarr-python 3 is installed."""

import json
from pathlib import Path

import numpy as np
import pytest
import zarr

from test_v2_interop import Tool, run_tree, tool  # noqa: F401  (the session fixture)

if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("Zarr v3 needs zarr-python 3", allow_module_level=True)

try:
    import tensorstore as ts
except ImportError:  # pragma: no cover - the zp3 environment has it
    ts = None

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
COMPRESSORS = {
    "none": "null",
    "zstd": '{"id": "zstd", "level": 3}',
    "zstd-checksum": '{"id": "zstd", "level": 1, "checksum": true}',
    "gzip": '{"id": "gzip", "level": 5}',
    "blosc": '{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}',
    "blosc-bit": '{"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}',
    "crc32c": '{"id": "crc32c"}',
}


def make_data(dtype: str, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == bool:
        a = rng.random(shape) > 0.5
    elif dt.kind == "c":
        a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    elif dt.kind == "f":
        a = (rng.standard_normal(shape) * 100).astype(dt)
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if len(shape) == 2 and shape[0] >= 4:
        a[:4, :4] = 0  # a whole chunk of fill value: not stored, reads back as fill
    return a


def native_bytes(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("=")).tobytes()


CASES = [(d, c, o, s) for i, d in enumerate(DTYPES) for j, (c, o, s) in enumerate(
    [("zstd", "C", "/"), ("none", "F", "."), ("blosc", "C", "."), ("crc32c", "F", "/")]) ]
CASES += [("float32", c, "C", "/") for c in COMPRESSORS]


@pytest.mark.parametrize("dtype,compressor,order,sep", CASES)
def test_libzarr_writes_v3(tool, tmp_path, monkeypatch, dtype, compressor, order, sep):
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    shape = (9, 11)
    a = make_data(dtype, shape, seed=len(dtype) + len(compressor))
    store = tmp_path / "store"
    endian = ">" if dtype in ("int32", "float64") else "<"
    name = np.dtype(dtype).newbyteorder(endian).str if np.dtype(dtype).itemsize > 1 else dtype
    tool.build(tmp_path / "s", store, "g/a", dtype=name, shape=shape, chunks="4,4", fill="0",
               order=order, sep=sep, compressor=COMPRESSORS[compressor],
               data=native_bytes(a), buf_order="C")
    doc = json.loads((store / "g" / "a" / "zarr.json").read_text())
    assert doc["zarr_format"] == 3 and doc["node_type"] == "array"
    assert doc["data_type"] == dtype
    assert json.loads((store / "g" / "zarr.json").read_text())["node_type"] == "group"
    assert not (store / "g" / "a" / "c" / "0" / "0").exists() and not (store / "g" / "a" / "c.0.0").exists()
    z = zarr.open_array(store=str(store), path="g/a", mode="r")
    assert z.metadata.zarr_format == 3
    assert native_bytes(z[...]) == native_bytes(a)
    if ts is not None and not (dtype == "float16" and compressor == "crc32c"):
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store / "g" / "a")}},
                    open=True, read=True).result()
        assert native_bytes(t.read().result()) == native_bytes(a)


def zp3_cases():
    codecs = {
        "default": None,
        "gzip": [zarr.codecs.GzipCodec(level=4)],
        "blosc": [zarr.codecs.BloscCodec(cname="lz4", shuffle="bitshuffle")],
        "zstd-crc": [zarr.codecs.ZstdCodec(level=2), zarr.codecs.Crc32cCodec()],
        "none": [],
    }
    for dtype in DTYPES:
        for name in (["default", "none"] if dtype not in ("float64", "int16") else list(codecs)):
            yield dtype, name, codecs[name]


@pytest.mark.parametrize("dtype,codec_name,codecs", list(zp3_cases()),
                         ids=[f"{d}-{c}" for d, c, _ in zp3_cases()])
def test_zarr_python_writes_v3(tool, tmp_path, dtype, codec_name, codecs):
    store = tmp_path / "store"
    kwargs = {} if codecs is None else {"compressors": codecs}
    z = zarr.create_array(store=str(store / "x"), shape=(10, 7), chunks=(4, 3), dtype=dtype,
                          zarr_format=3, fill_value=1, dimension_names=["y", None], **kwargs)
    a = make_data(dtype, (10, 7), seed=3)
    z[...] = a
    data, info = tool.dump(tmp_path / "s", store, "x", "C")
    assert data == native_bytes(a)
    assert info["shape"] == [10, 7]


@pytest.mark.skipif(ts is None, reason="tensorstore is not installed")
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_tensorstore_writes_v3(tool, tmp_path, endian, order):
    store = tmp_path / "store"
    codecs = [{"name": "bytes", "configuration": {"endian": endian}}, {"name": "zstd", "configuration": {"level": 1}}]
    if order == "F":
        codecs.insert(0, {"name": "transpose", "configuration": {"order": [2, 1, 0]}})
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store / "t")},
            "metadata": {"shape": [5, 6, 7], "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 4, 3]}},
                         "data_type": "int32", "codecs": codecs, "fill_value": -5},
            "create": True, "delete_existing": True}
    t = ts.open(spec).result()
    a = make_data("int32", (5, 6, 7), seed=9)
    t[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "t", "C")
    assert data == native_bytes(a)
    data, _ = tool.dump(tmp_path / "s", store, "t", "F")
    assert data == np.asfortranarray(a).tobytes(order="F")


SHARD_CODECS = {
    "zstd": [zarr.codecs.ZstdCodec(level=1)],
    "blosc": [zarr.codecs.BloscCodec(cname="lz4", shuffle="shuffle")],
    "gzip-crc": [zarr.codecs.GzipCodec(level=2), zarr.codecs.Crc32cCodec()],
    "none": [],
}


@pytest.mark.parametrize("codec", list(SHARD_CODECS))
@pytest.mark.parametrize("dtype", ["int16", "float64", "uint8"])
def test_zarr_python_writes_sharded(tool, tmp_path, dtype, codec):
    store = tmp_path / "store"
    z = zarr.create_array(store=str(store / "sh"), shape=(11, 13), chunks=(2, 3), shards=(4, 6),
                          dtype=dtype, zarr_format=3, fill_value=0, compressors=SHARD_CODECS[codec])
    a = make_data(dtype, (11, 13), seed=5)
    z[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "sh", "C")
    assert data == native_bytes(a)


@pytest.mark.parametrize("compressor", ["zstd", "none", "blosc", "gzip"])
def test_libzarr_writes_sharded(tool, tmp_path, monkeypatch, compressor):
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    monkeypatch.setenv("ZARR_TOOL_SHARDS", "4,6")
    a = make_data("float32", (11, 13), seed=8)
    a[4:8, 6:12] = 0  # a whole shard of fill value: not stored
    store = tmp_path / "store"
    tool.build(tmp_path / "s", store, "sh", dtype="<f4", shape=a.shape, chunks="2,3", fill="0",
               order="C", sep="/", compressor=COMPRESSORS[compressor], data=native_bytes(a),
               buf_order="C")
    assert not (store / "sh" / "c" / "1" / "1").exists()
    z = zarr.open_array(store=str(store / "sh"), mode="r")
    assert z.shards == (4, 6) and z.chunks == (2, 3)
    assert native_bytes(z[...]) == native_bytes(a)
    if ts is not None:
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store / "sh")}},
                    open=True, read=True).result()
        assert native_bytes(t.read().result()) == native_bytes(a)


@pytest.mark.parametrize("codec", ["none", "zstd", "crc32c"])
def test_sharded_bytes_match_zarr_python(tool, tmp_path, monkeypatch, codec):
    """One level of shards: libzarr lays chunks out in Morton order as zarr-python does,
    byte for byte."""
    ours_json, theirs_codecs = NESTED_CODECS[codec]
    a = nested_data("int16")
    store = tmp_path / "store"
    z = zarr.create_array(store=str(store / "zp"), shape=a.shape, chunks=(2, 3), shards=(4, 6),
                          dtype="int16", zarr_format=3, fill_value=0, compressors=theirs_codecs)
    z[...] = a
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    monkeypatch.setenv("ZARR_TOOL_SHARDS", "4,6")
    tool.build(tmp_path / "s", store, "ours", dtype="<i2", shape=a.shape, chunks="2,3",
               fill="0", order="C", sep="/", compressor=ours_json, data=native_bytes(a),
               buf_order="C")
    assert shard_files(store / "ours") == shard_files(store / "zp")


@pytest.mark.skipif(ts is None, reason="tensorstore is not installed")
@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_tensorstore_writes_sharded(tool, tmp_path, location, endian):
    store = tmp_path / "store"
    inner = [{"name": "bytes", "configuration": {"endian": endian}}, {"name": "zstd", "configuration": {"level": 1}}]
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store / "t")},
            "metadata": {"shape": [9, 10], "data_type": "uint16", "fill_value": 3,
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 5]}},
                         "codecs": [{"name": "sharding_indexed", "configuration": {
                             "chunk_shape": [2, 5], "codecs": inner, "index_location": location,
                             "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                              {"name": "crc32c"}]}}]},
            "create": True, "delete_existing": True}
    t = ts.open(spec).result()
    a = make_data("uint16", (9, 10), seed=11)
    a[0:2, 0:5] = 3  # one inner chunk of fill value: marked empty in its shard
    t[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "t", "C")
    assert data == native_bytes(a)


NESTED_CODECS = {
    "none": ("null", []),
    "zstd": ('{"id": "zstd", "level": 1}', [zarr.codecs.ZstdCodec(level=1)]),
    "gzip": ('{"id": "gzip", "level": 5}', [zarr.codecs.GzipCodec(level=5)]),
    "crc32c": ('{"id": "crc32c"}', [zarr.codecs.Crc32cCodec()]),
}


def nested_codec(inner_codecs, outer_loc="end", inner_loc="end"):
    from zarr.codecs import BytesCodec, ShardingCodec
    inner = ShardingCodec(chunk_shape=(2, 3), codecs=[BytesCodec(), *inner_codecs],
                          index_location=inner_loc)
    return ShardingCodec(chunk_shape=(4, 6), codecs=[inner], index_location=outer_loc)


def nested_data(dtype):
    a = make_data(dtype, (10, 12), seed=21)
    a[0:4, 6:12] = 0  # a whole inner shard of fill value: marked empty in the outer index
    a[4:6, 0:3] = 0   # one chunk of fill value: marked empty in its inner shard's index
    return a


def shard_files(root: Path):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "c").rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("codec", list(NESTED_CODECS))
@pytest.mark.parametrize("dtype", ["int32", "float64", "uint8"])
def test_nested_sharding_byte_exact_with_zarr_python(tool, tmp_path, monkeypatch, dtype, codec):
    """zarr-python 3 writes shards of inner shards; libzarr reads them exactly and writes
    the very same bytes for the same data and settings."""
    ours_json, theirs_codecs = NESTED_CODECS[codec]
    a = nested_data(dtype)
    store = tmp_path / "store"
    z = zarr.create(store=str(store / "zp"), shape=a.shape, chunks=(8, 12), dtype=dtype,
                    fill_value=0, zarr_format=3, codecs=[nested_codec(theirs_codecs)])
    z[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "zp", "C")
    assert data == native_bytes(a)
    data, _ = tool.read_region(tmp_path / "s", store, "zp", (5, 7), (1, 1), "C")
    assert data == native_bytes(a[5:6, 7:8])

    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    monkeypatch.setenv("ZARR_TOOL_SHARDS", "8,12;4,6")
    tool.build(tmp_path / "s", store, "ours", dtype=np.dtype(dtype).newbyteorder("<").str,
               shape=a.shape, chunks="2,3", fill="0", order="C", sep="/",
               compressor=ours_json, data=native_bytes(a), buf_order="C")
    ours = shard_files(store / "ours")
    assert sorted(ours) == ["c/0/0", "c/1/0"]
    theirs_files = shard_files(store / "zp")
    if codec == "gzip":
        # numcodecs' gzip stamps the time into each member and its deflate differs from
        # ours by a byte here and there: the same objects, read back exactly below.
        assert sorted(ours) == sorted(theirs_files)
    else:
        assert ours == theirs_files
    z2 = zarr.open_array(store=str(store / "ours"), mode="r")
    assert native_bytes(z2[...]) == native_bytes(a)
    doc = json.loads((store / "ours" / "zarr.json").read_text())
    theirs = json.loads((store / "zp" / "zarr.json").read_text())
    assert doc["codecs"] == theirs["codecs"]


@pytest.mark.parametrize("outer_loc,inner_loc", [("start", "end"), ("end", "start"), ("start", "start")])
def test_zarr_python_nested_index_locations(tool, tmp_path, outer_loc, inner_loc):
    a = nested_data("int16")
    store = tmp_path / "store"
    z = zarr.create(store=str(store / "zp"), shape=a.shape, chunks=(8, 12), dtype="int16",
                    fill_value=0, zarr_format=3,
                    codecs=[nested_codec([zarr.codecs.ZstdCodec(level=2)], outer_loc, inner_loc)])
    z[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "zp", "F")
    assert data == np.asfortranarray(a).tobytes(order="F")


@pytest.mark.skipif(ts is None, reason="tensorstore is not installed")
@pytest.mark.parametrize("compressor", ["zstd", "none"])
def test_nested_sharding_with_tensorstore(tool, tmp_path, monkeypatch, compressor):
    """libzarr's nested shards read exactly by tensorstore; tensorstore's (inner index at
    the start, big-endian chunks) read exactly by libzarr."""
    a = nested_data("float32")
    store = tmp_path / "store"
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    monkeypatch.setenv("ZARR_TOOL_SHARDS", "8,12;4,6")
    tool.build(tmp_path / "s", store, "ours", dtype="<f4", shape=a.shape, chunks="2,3",
               fill="0", order="C", sep="/", compressor=COMPRESSORS[compressor],
               data=native_bytes(a), buf_order="C")
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store / "ours")}},
                open=True, read=True).result()
    assert native_bytes(t.read().result()) == native_bytes(a)

    inner_codecs = [{"name": "bytes", "configuration": {"endian": "big"}}]
    if compressor == "zstd":
        inner_codecs.append({"name": "zstd", "configuration": {"level": 1}})
    index = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store / "t")},
            "metadata": {"shape": [10, 12], "data_type": "float32", "fill_value": 0,
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 12]}},
                         "codecs": [{"name": "sharding_indexed", "configuration": {
                             "chunk_shape": [4, 6], "index_codecs": index, "index_location": "end",
                             "codecs": [{"name": "sharding_indexed", "configuration": {
                                 "chunk_shape": [2, 3], "codecs": inner_codecs,
                                 "index_codecs": index, "index_location": "start"}}]}}]},
            "create": True, "delete_existing": True}
    t = ts.open(spec).result()
    t[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "t", "C")
    assert data == native_bytes(a)
    data, _ = tool.read_region(tmp_path / "s", store, "t", (3, 2), (4, 9), "C")
    assert data == native_bytes(a[3:7, 2:11])


def test_v3_consolidated_metadata_both_ways(tool, tmp_path, monkeypatch):
    """zarr-python 3 consolidates a v3 tree and libzarr walks it through the root
    zarr.json alone; libzarr consolidates a tree it built and zarr-python opens it."""
    import os

    def run(script_lines):
        return run_tree(tool, tmp_path, script_lines)

    # zarr-python 3 writes and consolidates; only the root document then describes "arr".
    theirs = tmp_path / "theirs"
    g = zarr.open_group(str(theirs), mode="w", zarr_format=3)
    g.attrs["title"] = "v3"
    a = g.create_array("sub/arr", shape=(5,), chunks=(2,), dtype="i4", fill_value=0)
    a[:] = np.arange(5, dtype="i4") + 1
    zarr.consolidate_metadata(str(theirs))
    os.remove(theirs / "sub" / "arr" / "zarr.json")
    out = tmp_path / "walk"
    out.mkdir()
    walked = run([("store", "S", f"dir:{theirs}", "r"), ("walk", "S", "", str(out), "consolidated")])
    arrays = [w for w in walked if w.get("kind") == "array"]
    assert [w["path"] for w in arrays] == ["sub/arr"] and arrays[0]["zarr_format"] == 3
    assert Path(arrays[0]["data"]).read_bytes() == (np.arange(5, dtype="i4") + 1).tobytes()

    # libzarr builds v3 arrays (and their v3 parent groups) and consolidates.
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    ours = tmp_path / "ours"
    data = np.arange(12, dtype="<f8").reshape(3, 4)
    for path in ("x/y/a", "b"):
        tool.build(tmp_path / "s", ours, path, dtype="<f8", shape=(3, 4), chunks="2,2", fill="0",
                   order="C", sep="/", compressor="-", data=data.tobytes(), buf_order="C")
    run([("store", "S", f"dir:{ours}", "r+"), ("consolidate", "S", "")])
    doc = json.loads((ours / "zarr.json").read_text())
    assert sorted(doc["consolidated_metadata"]["metadata"]) == ["b", "x", "x/y", "x/y/a"]
    root = zarr.open_consolidated(str(ours), zarr_format=3)
    assert sorted(k for k, _ in root.members(max_depth=None)) == ["b", "x", "x/y", "x/y/a"]
    assert root["x/y/a"][...].tobytes() == data.tobytes()


def _v3_doc(shape, chunk_shape, codecs):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunk_shape)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0.0, "codecs": codecs}


def _peers_read_exactly(array_dir, a):
    """zarr-python 3 and (when installed) tensorstore read the array at `array_dir` as `a`."""
    z = zarr.open_array(store=str(array_dir), mode="r")
    assert native_bytes(z[...]) == native_bytes(a)
    if ts is not None:
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(array_dir)}},
                    open=True, read=True).result()
        assert native_bytes(t.read().result()) == native_bytes(a)


BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}
GZIP = {"name": "gzip", "configuration": {"level": 1}}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
CRC = {"name": "crc32c"}
CHAINS = {"gzip-zstd": [GZIP, ZSTD], "zstd-gzip": [ZSTD, GZIP], "zstd-crc-gzip": [ZSTD, CRC, GZIP]}


@pytest.mark.parametrize("chain", list(CHAINS))
def test_several_bytes_codecs_both_ways(tool, tmp_path, chain):
    """Chains of several bytes-to-bytes codecs in any order: libzarr's read exactly by
    zarr-python 3 and tensorstore, zarr-python 3's read exactly by libzarr."""
    a = make_data("float32", (9, 11), seed=11)
    store = tmp_path / "store"
    tool.create(tmp_path / "s", store, "ours", _v3_doc(a.shape, (4, 4), [BYTES_LE] + CHAINS[chain]),
                native_bytes(a), "C")
    _peers_read_exactly(store / "ours", a)
    names = {"gzip": zarr.codecs.GzipCodec(level=1), "zstd": zarr.codecs.ZstdCodec(level=1),
             "crc": zarr.codecs.Crc32cCodec()}
    z = zarr.create_array(store=str(store / "theirs"), shape=a.shape, chunks=(4, 4),
                          dtype="float32", zarr_format=3, fill_value=0,
                          compressors=[names[n] for n in chain.split("-")])
    z[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "theirs", "C")
    assert data == native_bytes(a)


def _sharded(chunk_shape, codecs, location="end"):
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk_shape), "codecs": codecs, "index_location": location,
        "index_codecs": [BYTES_LE, CRC]}}]


def test_sharding_three_deep_with_zstd_both_ways(tool, tmp_path):
    """Sharding nested three levels with zstd inside: libzarr's read exactly by zarr-python 3
    and tensorstore, tensorstore's (inner indexes at the start) read exactly by libzarr."""
    a = make_data("float32", (16, 16), seed=12)
    store = tmp_path / "store"
    codecs = _sharded((8, 8), _sharded((4, 4), _sharded((2, 2), [BYTES_LE, ZSTD])))
    tool.create(tmp_path / "s", store, "ours", _v3_doc(a.shape, (16, 16), codecs),
                native_bytes(a), "C")
    z = zarr.open_array(store=str(store), path="ours", mode="r")
    assert native_bytes(z[...]) == native_bytes(a)
    data, _ = tool.read_region(tmp_path / "s", store, "ours", (3, 5), (7, 9), "C")
    assert data == native_bytes(a[3:10, 5:14])
    if ts is None:
        return
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store / "ours")}},
                open=True, read=True).result()
    assert native_bytes(t.read().result()) == native_bytes(a)
    codecs = _sharded((8, 8), _sharded((4, 4), _sharded((2, 2), [BYTES_LE, ZSTD], "start"),
                                       "start"))
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store / "t")},
                 "metadata": _v3_doc(a.shape, (16, 16), codecs), "create": True,
                 "delete_existing": True}).result()
    t[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "t", "C")
    assert data == native_bytes(a)


@pytest.mark.parametrize("orders", [[[2, 0, 1]], [[1, 2, 0]], [[1, 0, 2], [0, 2, 1]]],
                         ids=["201", "120", "twice"])
def test_transpose_permutations_both_ways(tool, tmp_path, orders):
    """Transposes of any permutation (and two in a row): libzarr's chunks read exactly by
    zarr-python 3 and tensorstore, zarr-python 3's read exactly by libzarr."""
    a = make_data("int16", (4, 6, 5), seed=13)
    store = tmp_path / "store"
    codecs = [{"name": "transpose", "configuration": {"order": o}} for o in orders]
    doc = _v3_doc(a.shape, (2, 3, 5), codecs + [BYTES_LE])
    doc["data_type"] = "int16"
    doc["fill_value"] = 0
    tool.create(tmp_path / "s", store, "ours", doc, native_bytes(a), "C")
    _peers_read_exactly(store / "ours", a)
    z = zarr.create_array(store=str(store / "theirs"), shape=a.shape, chunks=(2, 3, 5),
                          dtype="int16", zarr_format=3, fill_value=0, compressors=None,
                          filters=[zarr.codecs.TransposeCodec(order=o) for o in orders])
    z[...] = a
    assert (store / "theirs" / "c" / "0" / "0" / "0").read_bytes() == \
        (store / "ours" / "c" / "0" / "0" / "0").read_bytes()
    data, _ = tool.dump(tmp_path / "s", store, "theirs", "C")
    assert data == native_bytes(a)
    data, _ = tool.read_region(tmp_path / "s", store, "theirs", (1, 2, 3), (3, 3, 2), "F")
    assert data == np.asfortranarray(a[1:4, 2:5, 3:5]).tobytes(order="F")


def test_transpose_beside_an_elementwise_filter_both_ways(tool, tmp_path):
    """A transpose beside a filter that works item by item (numcodecs.astype): libzarr's
    chunks read exactly by zarr-python 3, zarr-python 3's read exactly by libzarr."""
    numcodecs_zarr3 = pytest.importorskip("numcodecs.zarr3")
    a = make_data("float32", (6, 5), seed=17)
    store = tmp_path / "store"
    astype = {"name": "numcodecs.astype",
              "configuration": {"encode_dtype": "<f8", "decode_dtype": "<f4"}}
    codecs = [{"name": "transpose", "configuration": {"order": [1, 0]}}, astype, BYTES_LE, ZSTD]
    tool.create(tmp_path / "s", store, "ours", _v3_doc(a.shape, (4, 3), codecs),
                native_bytes(a), "C")
    z = zarr.open_array(store=str(store / "ours"), mode="r")
    assert native_bytes(z[...]) == native_bytes(a)
    z = zarr.create_array(store=str(store / "theirs"), shape=a.shape, chunks=(4, 3),
                          dtype="float32", zarr_format=3, fill_value=0,
                          filters=[zarr.codecs.TransposeCodec(order=(1, 0)),
                                   numcodecs_zarr3.AsType(encode_dtype="<f8", decode_dtype="<f4")],
                          compressors=[zarr.codecs.ZstdCodec(level=1)])
    z[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "theirs", "C")
    assert data == native_bytes(a)


@pytest.mark.parametrize("sep", [".", "/"])
def test_builder_v2_chunk_key_encoding(tool, tmp_path, monkeypatch, sep):
    """The builder's v2 chunk key encoding: keys without the c prefix, read exactly by
    zarr-python 3 and tensorstore; zarr-python 3's own such arrays read by libzarr."""
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    monkeypatch.setenv("ZARR_TOOL_KEY_ENCODING", "v2")
    a = make_data("int32", (9, 11), seed=21)
    store = tmp_path / "store"
    tool.build(tmp_path / "s", store, "k", dtype="<i4", shape=a.shape, chunks="4,4", fill="0",
               order="C", sep=sep, compressor=COMPRESSORS["zstd"], data=native_bytes(a),
               buf_order="C")
    doc = json.loads((store / "k" / "zarr.json").read_text())
    assert doc["chunk_key_encoding"] == {"name": "v2", "configuration": {"separator": sep}}
    assert (store / "k" / ("2.2" if sep == "." else "2/2")).is_file()
    assert not (store / "k" / "c").exists()
    _peers_read_exactly(store / "k", a)
    z = zarr.create_array(store=str(store / "theirs"), shape=a.shape, chunks=(4, 4), dtype="int32",
                          zarr_format=3, fill_value=0,
                          chunk_key_encoding={"name": "v2", "separator": sep})
    z[...] = a
    data, _ = tool.dump(tmp_path / "s", store, "theirs", "C")
    assert data == native_bytes(a)


@pytest.mark.parametrize("perm", ["1,2,0", "2,0,1", "0,2,1"])
def test_builder_chunk_permutation(tool, tmp_path, monkeypatch, perm):
    """Any chunk permutation from the builder is written as a transpose codec; zarr-python
    3 and tensorstore read the array exactly, and the chunks are byte for byte zarr-python
    3's for the same transpose."""
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    monkeypatch.setenv("ZARR_TOOL_PERMUTATION", perm)
    a = make_data("float32", (5, 6, 7), seed=4)
    store = tmp_path / "store"
    tool.build(tmp_path / "s", store, "ours", dtype="<f4", shape=a.shape, chunks="2,3,4",
               fill="0", order="-", sep="/", compressor="null", data=native_bytes(a),
               buf_order="C")
    order = [int(p) for p in perm.split(",")]
    doc = json.loads((store / "ours" / "zarr.json").read_text())
    assert doc["codecs"][0] == {"name": "transpose", "configuration": {"order": order}}
    _peers_read_exactly(store / "ours", a)
    z = zarr.create_array(store=str(store / "zp"), shape=a.shape, chunks=(2, 3, 4),
                          dtype="float32", zarr_format=3, fill_value=0, compressors=None,
                          filters=[zarr.codecs.TransposeCodec(order=order)])
    z[...] = a
    ours = sorted(p.relative_to(store / "ours") for p in (store / "ours" / "c").rglob("*") if p.is_file())
    assert ours == sorted(p.relative_to(store / "zp") for p in (store / "zp" / "c").rglob("*") if p.is_file())
    for key in ours:
        assert (store / "ours" / key).read_bytes() == (store / "zp" / key).read_bytes(), key


@pytest.mark.parametrize("index", ["start", "start,nocrc", "end,nocrc"])
def test_builder_shard_index_settings(tool, tmp_path, monkeypatch, index):
    """The builder's shard index location and checksum: the metadata says so, the shard
    files are byte for byte zarr-python 3's for the same settings, and both peers read."""
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    monkeypatch.setenv("ZARR_TOOL_SHARDS", "4,6")
    monkeypatch.setenv("ZARR_TOOL_SHARD_INDEX", index)
    a = nested_data("int16")
    store = tmp_path / "store"
    tool.build(tmp_path / "s", store, "ours", dtype="<i2", shape=a.shape, chunks="2,3", fill="0",
               order="C", sep="/", compressor=NESTED_CODECS["zstd"][0], data=native_bytes(a),
               buf_order="C")
    sharding = json.loads((store / "ours" / "zarr.json").read_text())["codecs"][0]["configuration"]
    location = index.split(",")[0]
    assert sharding["index_location"] == location
    index_codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if "nocrc" not in index:
        index_codecs.append({"name": "crc32c"})
    assert sharding["index_codecs"] == index_codecs
    _peers_read_exactly(store / "ours", a)
    theirs_index = [zarr.codecs.BytesCodec()] + ([] if "nocrc" in index else [zarr.codecs.Crc32cCodec()])
    sharding = zarr.codecs.ShardingCodec(
        chunk_shape=(2, 3), codecs=[zarr.codecs.BytesCodec(), *NESTED_CODECS["zstd"][1]],
        index_codecs=theirs_index, index_location=location)
    z = zarr.create(store=str(store / "zp"), shape=a.shape, chunks=(4, 6), dtype="int16",
                    fill_value=0, zarr_format=3, codecs=[sharding])
    z[...] = a
    assert shard_files(store / "ours") == shard_files(store / "zp")


def test_builder_compressor_list(tool, tmp_path, monkeypatch):
    """A list of bytes-to-bytes codecs from the builder (zstd, then the crc32c checksum):
    written in that order and read exactly by zarr-python 3 and tensorstore."""
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    a = make_data("float64", (9, 11), seed=22)
    store = tmp_path / "store"
    tool.build(tmp_path / "s", store, "l", dtype="<f8", shape=a.shape, chunks="4,4", fill="0",
               order="C", sep="/", compressor='[{"id": "zstd", "level": 2}, {"id": "crc32c"}]',
               data=native_bytes(a), buf_order="C")
    codecs = json.loads((store / "l" / "zarr.json").read_text())["codecs"]
    assert [c["name"] for c in codecs] == ["bytes", "zstd", "crc32c"]
    _peers_read_exactly(store / "l", a)


def test_group_with_attributes_in_a_zip_both_ways(tool, tmp_path):
    """A v3 group created with its attributes goes into a zip (each entry written once);
    zarr-python 3 reads the group and its attributes from the zip; a group zarr-python 3
    writes into a zip with its attributes is read by libzarr."""
    zip_path = tmp_path / "g.zip"
    run_tree(tool, tmp_path, [("store", "Z", f"zip:{zip_path}", "w"),
                              ("cgroup", "Z", "top/g", "w-", "3", '{"title": "zip", "n": [1, 2]}'),
                              ("close", "Z")])
    store = zarr.storage.ZipStore(str(zip_path), mode="r")
    g = zarr.open_group(store, path="top/g", mode="r", zarr_format=3)
    assert dict(g.attrs) == {"title": "zip", "n": [1, 2]}
    store.close()
    theirs = tmp_path / "theirs.zip"
    store = zarr.storage.ZipStore(str(theirs), mode="w")
    zarr.create_group(store, path="top/h", zarr_format=3, attributes={"from": "zarr-python", "k": 3})
    store.close()
    got = run_tree(tool, tmp_path, [("store", "Z", f"zip:{theirs}", "r"),
                                    ("member", "Z", "top", "plain", "h")])
    members = [r for r in got if "member" in r]
    assert [(m["kind"], m["attrs"]) for m in members] == [("group", {"from": "zarr-python", "k": 3})]


def test_unnamed_and_empty_dimension_names_both_ways(tool, tmp_path, monkeypatch):
    """An unnamed dimension (null) and a dimension named "" stay apart both ways."""
    monkeypatch.setenv("ZARR_TREE_FORMAT", "3")
    ours = tmp_path / "ours"
    run_tree(tool, tmp_path, [
        ("store", "S", f"dir:{ours}", "w"),
        ("array", "S", "", "a", "int16", "2,3,4", "2,3,4", "0", "C", "/", "-", "-", "~,,x", "-", "w")])
    z = zarr.open_array(str(ours / "a"), mode="r")
    assert z.metadata.dimension_names == (None, "", "x")
    theirs = tmp_path / "theirs"
    zarr.create_array(str(theirs), shape=(2, 3), chunks=(2, 3), dtype="int16", zarr_format=3,
                      dimension_names=("", None))
    dumped = run_tree(tool, tmp_path, [("store", "S", f"dir:{theirs}", "r"),
                                       ("dump", "S", "", str(tmp_path / "out.bin"))])
    assert [d["dims"] for d in dumped if "dims" in d] == [["", None]]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8"])
def test_default_compressor_read_by_peers(tool, tmp_path, monkeypatch, dtype):
    """A v3 array built without a compressor gets libzarr's default, blosc zstd level 1
    with byte shuffle in 1 MiB blocks (typesize the item size): zarr-python 3 and
    tensorstore read it exactly."""
    monkeypatch.setenv("ZARR_TOOL_FORMAT", "3")
    a = make_data(dtype, (40, 70), seed=5)
    store = tmp_path / "store"
    tool.build(tmp_path / "s", store, "arr", dtype=np.dtype(dtype).str, shape=a.shape,
               chunks="16,32", fill="0", order="C", sep="/", compressor="-",
               data=native_bytes(a), buf_order="C")
    doc = json.loads((store / "arr" / "zarr.json").read_text())
    assert doc["codecs"][1:] == [{"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 1, "shuffle": "shuffle", "typesize": a.itemsize,
        "blocksize": 1 << 20}}]
    _peers_read_exactly(store / "arr", a)
