"""The 2022 draft layout of Zarr v3 against zarr-python 2.18's experimental v3 API
(``meta/root/…``, ``data/root/…``): trees it writes are read exactly by libzarr
(zarr_tool dump, which detects the layout from the root ``zarr.json``), and arrays libzarr
writes in its variant (format 31) are read exactly by it. libzarr's own draft scheme
(format 30: ``meta/…``, ``data/…``) is checked key by key and read back. zarr-python runs
in a subprocess, because its experimental API is switched on by an environment variable
read at import. Runs only where zarr-python 2.18 is installed."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import zarr

from test_v2_interop import Tool, run_tree, tool  # noqa: F401  (the session fixture)

if not zarr.__version__.startswith("2.18"):
    pytest.skip("the draft layout's interop needs zarr-python 2.18", allow_module_level=True)

DRAFT = 30
ZARR_PYTHON = 31

# (numpy type, zarr-python compressor expression, libzarr compressor JSON)
CASES = [
    ("<i4", "Blosc(cname='lz4', clevel=5, shuffle=1)",
     '{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}'),
    (">f8", "None", "null"),
    ("|b1", "Zlib(level=3)", '{"id": "zlib", "level": 3}'),
    ("<u2", "Zstd(level=2)", '{"id": "zstd", "level": 2}'),
    ("<f2", "GZip(level=4)", '{"id": "gzip", "level": 4}'),
    (">i8", "BZ2(level=5)", '{"id": "bz2", "level": 5}'),
    ("|u1", "LZ4(acceleration=1)", '{"id": "lz4", "acceleration": 1}'),
    ("<f4", "LZMA(preset=1)", '{"id": "lzma", "format": 1, "check": -1, "preset": 1, "filters": null}'),
    ("|i1", "Blosc(cname='zstd', clevel=3, shuffle=2)",
     '{"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}'),
]


def zp2(script: str) -> str:
    """Runs `script` under zarr-python 2.18 with its experimental v3 API."""
    env = dict(os.environ, ZARR_V3_EXPERIMENTAL_API="1", PYTHONWARNINGS="ignore")
    prelude = "import json, numpy as np, zarr\n" \
              "from numcodecs import BZ2, LZ4, LZMA, Blosc, GZip, Zlib, Zstd\n" \
              "from zarr._storage.v3 import DirectoryStoreV3\n"
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def make_data(dtype: str, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        a = rng.random(shape) > 0.5
    elif dt.kind == "f":
        a = (rng.standard_normal(shape) * 100).astype(dt)
    else:
        native_dt = dt.newbyteorder("=")
        info = np.iinfo(native_dt)
        a = rng.integers(info.min, info.max, size=shape, dtype=native_dt, endpoint=True).astype(dt)
    a[:2, :3] = 0  # a chunk of fill value
    return a


def native(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("=")).tobytes()


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("sep", ["/", "."])
def test_zarr_python_writes_draft_tree(tool, tmp_path, order, sep):
    store = tmp_path / "store"
    arrays = {}
    for i, (dtype, compressor, _) in enumerate(CASES):
        arrays[f"g/sub/a{i}" if i % 2 else f"g/a{i}"] = (dtype, compressor, make_data(dtype, (5, 7), i))
    script = f"store = DirectoryStoreV3({str(store)!r})\n"
    script += "g = zarr.group(store=store, path='g', zarr_version=3)\ng.attrs['title'] = 'draft'\n"
    for path, (dtype, compressor, a) in arrays.items():
        script += (f"z = zarr.create(store=store, path={path!r}, shape=(5, 7), chunks=(2, 3), "
                   f"dtype={dtype!r}, fill_value=0, compressor={compressor}, order={order!r}, "
                   f"dimension_separator={sep!r}, zarr_version=3)\n"
                   f"z[...] = np.frombuffer({native(a)!r}, dtype={np.dtype(dtype).newbyteorder('=').str!r}).reshape(5, 7)\n")
    zp2(script)
    assert json.loads((store / "zarr.json").read_text())["zarr_format"] == \
        "https://purl.org/zarr/spec/protocol/core/3.0"
    assert not (store / "meta" / "root" / "g" / "sub.group.json").exists()  # implicit
    for path, (dtype, _, a) in arrays.items():
        data, info = tool.dump(tmp_path / "s", store, path, "C")
        assert info["zarr_format"] == ZARR_PYTHON
        assert data == native(a), path


@pytest.mark.parametrize("case", range(len(CASES)))
def test_zarr_python_reads_our_variant(tool, tmp_path, monkeypatch, case):
    dtype, _, ours = CASES[case]
    a = make_data(dtype, (5, 7), 40 + case)
    store = tmp_path / "store"
    monkeypatch.setenv("ZARR_TOOL_FORMAT", str(ZARR_PYTHON))
    order = "F" if case % 2 else "C"
    sep = "." if case % 3 == 0 else "/"
    for path in ("x/y/arr", "x/other"):
        tool.build(tmp_path / "s", store, path, dtype=np.dtype(dtype).str, shape=a.shape,
                   chunks="2,3", fill="0", order=order, sep=sep, compressor=ours,
                   data=native(a), buf_order="C")
    assert (store / "meta" / "root" / "x" / "y" / "arr.array.json").exists()
    names = {p.name for p in (store / "data" / "root" / "x" / "y" / "arr").iterdir()}
    assert ("c1" in names) if sep == "/" else ("c1.1" in names or "c1.0" in names)
    out = zp2(f"""
        store = DirectoryStoreV3({str(store)!r})
        z = zarr.open_array(store=store, path='x/y/arr', mode='r', zarr_version=3)
        # 'x' is implicit: zarr-python opens it through Group, not open_group.
        g = zarr.hierarchy.Group(store, path='x', read_only=True, zarr_version=3)
        print(json.dumps({{"data": z[...].astype(z.dtype.newbyteorder('=')).tobytes().hex(),
                          "dtype": z.dtype.str, "order": z.order, "chunks": list(z.chunks),
                          "compressor": None if z.compressor is None else z.compressor.get_config(),
                          "groups": sorted(g.group_keys()), "arrays": sorted(g.array_keys())}}))
    """)
    got = json.loads(out)
    assert bytes.fromhex(got["data"]) == native(a)
    assert got["dtype"] == np.dtype(dtype).str and got["order"] == order
    assert got["chunks"] == [2, 3]
    assert got["groups"] == ["y"] and got["arrays"] == ["other"]
    expected = json.loads(ours)
    if expected is None:
        assert got["compressor"] is None
    else:
        assert {k: v for k, v in got["compressor"].items() if k in expected} == expected


def test_our_draft_scheme(tool, tmp_path, monkeypatch):
    """Format 30 writes the draft's own keys and reads them back exactly."""
    store = tmp_path / "store"
    monkeypatch.setenv("ZARR_TOOL_FORMAT", str(DRAFT))
    for i, (dtype, _, ours) in enumerate(CASES):
        a = make_data(dtype, (5, 7), 70 + i)
        tool.build(tmp_path / "s", store, f"g/a{i}", dtype=np.dtype(dtype).str, shape=a.shape,
                   chunks="2,3", fill="0", order="C", sep="/", compressor=ours,
                   data=native(a), buf_order="C")
        doc = json.loads((store / "meta" / "g" / f"a{i}.array.json").read_text())
        assert doc["chunk_grid"] == {"type": "regular", "chunk_shape": [2, 3], "separator": "/"}
        assert (store / "data" / "g" / f"a{i}" / "c1").is_dir()  # chunk keys c1/0 ...
        data, info = tool.dump(tmp_path / "s", store, f"g/a{i}", "F")
        assert info["zarr_format"] == DRAFT
        assert data == np.asfortranarray(a).astype(a.dtype.newbyteorder("=")).tobytes(order="F")
    entry = json.loads((store / "zarr.json").read_text())
    assert entry["zarr_format"] == "https://purl.org/zarr/spec/core/3.0"
    assert not (store / "meta" / "g.group.json").exists()


def test_groups_and_attributes_both_ways(tool, tmp_path, monkeypatch):
    # zarr-python 2.18 writes explicit and implicit groups with attributes; libzarr walks
    # them through the root without being told the layout.
    theirs = tmp_path / "theirs"
    zp2(f"""
        store = DirectoryStoreV3({str(theirs)!r})
        g = zarr.group(store=store, path='g', zarr_version=3)
        g.attrs['title'] = 'draft'
        a = zarr.create(store=store, path='g/sub/arr', shape=(3,), chunks=(2,), dtype='<i2',
                        fill_value=0, zarr_version=3)
        a[...] = [1, 2, 3]
        a.attrs['units'] = 'm'
    """)
    out = tmp_path / "walk"
    out.mkdir()
    walked = run_tree(tool, tmp_path, [("store", "S", f"dir:{theirs}", "r"),
                                       ("walk", "S", "", str(out), "plain")])
    by_path = {w["path"]: w for w in walked if "path" in w}
    assert sorted(by_path) == ["", "g", "g/sub", "g/sub/arr"]
    assert by_path["g"]["kind"] == "group" and by_path["g"]["attrs"] == {"title": "draft"}
    assert by_path["g/sub"]["kind"] == "group" and by_path["g/sub"]["attrs"] == {}
    arr = by_path["g/sub/arr"]
    assert arr["kind"] == "array" and arr["zarr_format"] == ZARR_PYTHON
    assert arr["attrs"] == {"units": "m"}
    assert Path(arr["data"]).read_bytes() == np.array([1, 2, 3], dtype="=i2").tobytes()

    # libzarr writes groups in zarr-python's variant (the store's layout wins once its
    # entry point is there); zarr-python reads their attributes and members.
    ours = tmp_path / "ours"
    monkeypatch.setenv("ZARR_TOOL_FORMAT", str(ZARR_PYTHON))
    tool.build(tmp_path / "s", ours, "x/y/arr", dtype="<i2", shape=(3,), chunks="2", fill="0",
               order="C", sep="/", compressor="null",
               data=np.array([4, 5, 6], dtype="<i2").tobytes(), buf_order="C")
    run_tree(tool, tmp_path, [("store", "S", f"dir:{ours}", "r+"),
                              ("gattrs", "S", "x", '{"k": 1}'),
                              ("group", "S", "x/new", "a"),
                              ("gattr", "S", "x/new", "n", '"v"')])
    assert (ours / "meta" / "root" / "x.group.json").exists()
    assert not (ours / "meta" / "root" / "x" / "y.group.json").exists()
    got = json.loads(zp2(f"""
        store = DirectoryStoreV3({str(ours)!r})
        x = zarr.open_group(store=store, path='x', mode='r', zarr_version=3)
        new = zarr.open_group(store=store, path='x/new', mode='r', zarr_version=3)
        arr = zarr.open_array(store=store, path='x/y/arr', mode='r', zarr_version=3)
        print(json.dumps({{"x": dict(x.attrs), "new": dict(new.attrs),
                          "groups": sorted(x.group_keys()), "data": arr[...].tolist()}}))
    """))
    assert got == {"x": {"k": 1}, "new": {"n": "v"}, "groups": ["new", "y"], "data": [4, 5, 6]}


@pytest.mark.parametrize("dtype", ["<f8", ">i4", "|u1"])
def test_zero_dimensional_arrays_both_ways(tool, tmp_path, monkeypatch, dtype):
    """A 0-d array's one chunk: zarr-python 2.18 names it `c0` (its chunk coordinates of a
    0-d array are (0,)); libzarr reads and writes that key in zarr-python's variant, and `c`
    (the draft's rule: the empty index) in its own scheme."""
    value = np.array(-1234.5 if dtype == "<f8" else 77, dtype=dtype)
    theirs = tmp_path / "theirs"
    zp2(f"""
        store = DirectoryStoreV3({str(theirs)!r})
        z = zarr.create(store=store, path='s', shape=(), dtype={dtype!r}, fill_value=3,
                        zarr_version=3)
        z[...] = np.array({value.item()!r}, dtype={dtype!r})
    """)
    assert (theirs / "data" / "root" / "s" / "c0").is_file()
    data, info = tool.dump(tmp_path / "s", theirs, "s", "C")
    assert info["zarr_format"] == ZARR_PYTHON
    assert data == native(value)

    ours = tmp_path / "ours"
    monkeypatch.setenv("ZARR_TOOL_FORMAT", str(ZARR_PYTHON))
    tool.build(tmp_path / "s", ours, "s", dtype=np.dtype(dtype).str, shape=(), chunks="",
               fill="3", order="C", sep="/", compressor="null", data=native(value), buf_order="C")
    assert (ours / "data" / "root" / "s" / "c0").is_file()
    out = zp2(f"""
        store = DirectoryStoreV3({str(ours)!r})
        z = zarr.open_array(store=store, path='s', mode='r', zarr_version=3)
        print(z[...].astype(z.dtype.newbyteorder('=')).tobytes().hex())
    """)
    assert bytes.fromhex(out.strip()) == native(value)

    own = tmp_path / "own"
    monkeypatch.setenv("ZARR_TOOL_FORMAT", str(DRAFT))
    tool.build(tmp_path / "s", own, "s", dtype=np.dtype(dtype).str, shape=(), chunks="",
               fill="3", order="C", sep="/", compressor="null", data=native(value), buf_order="C")
    assert (own / "data" / "s" / "c").is_file()
    data, info = tool.dump(tmp_path / "s", own, "s", "C")
    assert info["zarr_format"] == DRAFT and data == native(value)


def _items_file(items) -> bytes:
    return b"".join(len(i).to_bytes(8, "little") + i for i in items)


def _parse_items(blob: bytes):
    out, at = [], 0
    while at < len(blob):
        n = int.from_bytes(blob[at:at + 8], "little")
        out.append(blob[at + 8:at + 8 + n])
        at += 8 + n
    return out


WORDS = ["", "alpha", "héllo", "日本", "x" * 40]


def test_zarr_python_draft_extension_types_read(tool, tmp_path):
    """zarr-python 2.18's draft arrays of extension types: a structured type as an
    extension object with its field list, object arrays whose object codec and filters sit
    in the attributes (strings, bytes, numeric arrays), a filtered numeric array. libzarr
    reads each exactly and does not show the filters as attributes."""
    store = tmp_path / "theirs"
    zp2(f"""
        import numcodecs
        store = DirectoryStoreV3({str(store)!r})
        dt = np.dtype([('a', '<i4'), ('b', '>f8', (2,)), ('c', 'S3')])
        r = zarr.create(store=store, path='rec', shape=(3,), chunks=(2,), dtype=dt,
                        fill_value=None, zarr_version=3)
        r[...] = np.array([(1, (2., 3.), b'x'), (4, (5., 6.), b'yy'), (7, (8., 9.), b'zzz')], dtype=dt)
        s = zarr.create(store=store, path='str', shape=(5,), chunks=(2,), dtype=str, zarr_version=3)
        s[...] = np.array({WORDS!r}, dtype=object)
        s.attrs['units'] = 'none'
        b = zarr.create(store=store, path='vb', shape=(3,), chunks=(2,), dtype=object,
                        object_codec=numcodecs.VLenBytes(), zarr_version=3)
        b[...] = np.array([b'a', b'', b'bcd'], dtype=object)
        v = zarr.create(store=store, path='va', shape=(2,), chunks=(2,), dtype=object,
                        object_codec=numcodecs.VLenArray('<i4'), zarr_version=3)
        v[...] = np.array([np.array([1, 2], dtype='<i4'), np.array([3], dtype='<i4')], dtype=object)
        f = zarr.create(store=store, path='filt', shape=(6,), chunks=(4,), dtype='<i4',
                        filters=[numcodecs.Delta(dtype='<i4')], zarr_version=3)
        f[...] = np.arange(6) * 3
    """)
    doc = json.loads((store / "meta" / "root" / "rec.array.json").read_text())
    assert doc["data_type"]["type"] == [["a", "<i4"], ["b", ">f8", [2]], ["c", "|S3"]]
    dt = np.dtype([("a", "<i4"), ("b", ">f8", (2,)), ("c", "S3")])
    rec = np.array([(1, (2., 3.), b"x"), (4, (5., 6.), b"yy"), (7, (8., 9.), b"zzz")], dtype=dt)
    data, info = tool.dump(tmp_path / "s", store, "rec", "C")
    assert data == rec.tobytes()
    data, info = tool.dump(tmp_path / "s", store, "str", "C")
    assert [i.decode() for i in _parse_items(data)] == WORDS
    members = run_tree(tool, tmp_path, [("store", "S", f"dir:{store}", "r"),
                                        ("member", "S", "", "plain", "str"),
                                        ("member", "S", "", "plain", "filt")])
    attrs = {m["member"]: m["attrs"] for m in members if "member" in m}
    assert attrs == {"str": {"units": "none"}, "filt": {}}
    data, _ = tool.dump(tmp_path / "s", store, "vb", "C")
    assert _parse_items(data) == [b"a", b"", b"bcd"]
    data, _ = tool.dump(tmp_path / "s", store, "va", "C")
    assert _parse_items(data) == [np.array([1, 2], "<i4").tobytes(), np.array([3], "<i4").tobytes()]
    data, _ = tool.dump(tmp_path / "s", store, "filt", "C")
    assert data == (np.arange(6, dtype="<i4") * 3).tobytes()


def test_zarr_python_reads_our_draft_extension_types(tool, tmp_path, monkeypatch):
    """libzarr writes the same kinds in zarr-python 2.18's variant (format 31): records as
    an extension object, object arrays with their object codec (and any filters) in the
    attributes; zarr-python 2.18 reads them exactly, user attributes unmixed."""
    store = tmp_path / "ours"
    monkeypatch.setenv("ZARR_TOOL_FORMAT", str(ZARR_PYTHON))
    dt = np.dtype([("a", "<i4"), ("b", ">f8", (2,)), ("c", "S3")])
    rec = np.array([(1, (2., 3.), b"x"), (4, (5., 6.), b"yy"), (7, (8., 9.), b"zzz")], dtype=dt)
    tool.build(tmp_path / "s", store, "rec", dtype=json.dumps(dt.descr), shape=(3,), chunks="2",
               fill="-", order="C", sep="/", compressor='{"id": "zstd", "level": 1}',
               data=rec.tobytes(), buf_order="C")
    tool.build(tmp_path / "s", store, "str", dtype="string", shape=(5,), chunks="2", fill="-",
               order="C", sep="/", compressor='{"id": "zstd", "level": 1}',
               data=_items_file([w.encode() for w in WORDS]), buf_order="C")
    tool.build(tmp_path / "s", store, "vb", dtype="bytes", shape=(3,), chunks="2", fill="-",
               order="C", sep="/", compressor="null", data=_items_file([b"a", b"", b"bcd"]),
               buf_order="C")
    va = [np.array([1, 2], "<i2"), np.array([], "<i2"), np.array([-3], "<i2")]
    tool.build(tmp_path / "s", store, "va", dtype='{"id": "vlen-array", "dtype": "<i2"}',
               shape=(3,), chunks="2", fill="-", order="C", sep="/", compressor="null",
               data=_items_file([v.tobytes() for v in va]), buf_order="C")
    monkeypatch.setenv("ZARR_TOOL_FILTERS", '[{"id": "delta", "dtype": "<i4"}]')
    tool.build(tmp_path / "s", store, "filt", dtype="<i4", shape=(6,), chunks="4", fill="0",
               order="C", sep="/", compressor='{"id": "zlib", "level": 1}',
               data=(np.arange(6, dtype="<i4") * 3).tobytes(), buf_order="C")
    doc = json.loads((store / "meta" / "root" / "str.array.json").read_text())
    assert doc["data_type"]["type"] == "|O"
    assert doc["attributes"] == {"filters": [{"id": "vlen-utf8"}]}
    out = zp2(f"""
        store = DirectoryStoreV3({str(store)!r})
        get = lambda p: zarr.open_array(store=store, path=p, mode='r', zarr_version=3)
        rec = get('rec')
        print(json.dumps({{
            "rec": rec[...].tobytes().hex(), "rec_dtype": str(rec.dtype.descr),
            "str": list(get('str')[...]),
            "vb": [x.hex() for x in get('vb')[...]],
            "va": [x.tolist() for x in get('va')[...]],
            "filt": get('filt')[...].tolist(),
            "filt_filters": [f.get_config()['id'] for f in get('filt').filters],
        }}))
    """)
    got = json.loads(out)
    assert bytes.fromhex(got["rec"]) == rec.tobytes() and got["rec_dtype"] == str(dt.descr)
    assert got["str"] == WORDS
    assert got["vb"] == [b"a".hex(), "", b"bcd".hex()]
    assert got["va"] == [[1, 2], [], [-3]]
    assert got["filt"] == [0, 3, 6, 9, 12, 15] and got["filt_filters"] == ["delta"]


# The other extension objects zarr-python 2.18 writes in the draft: complex, byte and
# unicode strings (either byte order), datetimes and timedeltas, and void (which it writes
# as a record of one unnamed field).
OTHER_EXTENSION_TYPES = ["<c8", ">c16", "|S4", "<U3", ">U2", "<M8[ms]", ">m8[s]", "|V3"]


def _other_values(dtype: str, n: int) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (np.arange(n) * (1.5 - 2.25j) + 0.5j).astype(dt)
    if dt.kind == "S":
        return np.array([b"", b"a", b"bcde", b"\x00x", b"zz"][:n], dtype=dt)
    if dt.kind == "U":
        return np.array(["", "é", "日本", "a\x00", "z"][:n], dtype=dt)
    if dt.kind in "Mm":
        return (np.arange(n, dtype="i8") * 123456789 - 7).view(dt.newbyteorder("=")).astype(dt)
    return np.frombuffer(bytes(range(1, 1 + n * dt.itemsize)), dtype=dt)


@pytest.mark.parametrize("dtype", OTHER_EXTENSION_TYPES)
def test_draft_extension_objects_both_ways(tool, tmp_path, monkeypatch, dtype):
    """Arrays of each kind that zarr-python 2.18 writes are read exactly by libzarr; the
    same arrays written by libzarr in zarr-python's variant are read exactly by it."""
    values = _other_values(dtype, 5)
    theirs = tmp_path / "theirs"
    zp2(f"""
        store = DirectoryStoreV3({str(theirs)!r})
        a = zarr.create(store=store, path='a', shape=(6,), chunks=(4,), dtype={dtype!r},
                        zarr_version=3)
        a[:5] = np.frombuffer(bytes.fromhex({values.tobytes().hex()!r}), dtype={dtype!r})
    """)
    data, _ = tool.dump(tmp_path / "s", theirs, "a", "C")
    fill = np.zeros(1, dtype=dtype)
    assert data == native(values) + native(fill), dtype

    ours = tmp_path / "ours"
    monkeypatch.setenv("ZARR_TOOL_FORMAT", str(ZARR_PYTHON))
    tool.build(tmp_path / "s", ours, "a", dtype=dtype, shape=(5,), chunks="4", fill="-",
               order="C", sep="/", compressor='{"id": "zlib", "level": 1}',
               data=native(values), buf_order="C")
    out = zp2(f"""
        store = DirectoryStoreV3({str(ours)!r})
        a = zarr.open_array(store=store, path='a', mode='r', zarr_version=3)
        print(json.dumps({{"dtype": a.dtype.str, "data": a[...].tobytes().hex()}}))
    """)
    got = json.loads(out)
    assert got["dtype"] == np.dtype(dtype).str
    assert bytes.fromhex(got["data"]) == values.tobytes()
