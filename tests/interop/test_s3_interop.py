"""S3 interop: arrays libzarr writes to a bucket (zarr_tool with an s3:// store URL) are read
exactly by zarr-python 3 through obstore and by tensorstore's s3 driver, and arrays they
write there are read exactly by libzarr; v2 and v3, sharded and not. Hierarchies go both
ways too, consolidated (v2 .zmetadata and v3 consolidated zarr.json) and not (zarr_tree
with a url: store). The bucket is served by the moto S3 server, started here on a loopback
port. Runs in the `objstore` environment of scripts/setup-test-env.sh (moto, zarr-python 3,
obstore, tensorstore) and skips elsewhere."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import zarr

from test_hierarchy_interop import (  # noqa: F401  (tree_tool: the session fixture)
    Script, compare_snapshots, default_tree, expected_snapshot, libzarr_build_script,
    libzarr_snapshot, libzarr_walk, tree_tool, zarr_python_build, zarr_python_snapshot,
    zp_consolidate, zp_open_group)
from test_v2_interop import Tool, tool  # noqa: F401  (the session fixture)

if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("the obstore store needs zarr-python 3", allow_module_level=True)
obstore = pytest.importorskip("obstore")
from obstore.store import S3Store  # noqa: E402
from zarr.storage import ObjectStore  # noqa: E402

ts = pytest.importorskip("tensorstore")

# zarr-python 3 warns that v3 consolidated metadata is not in the spec yet: it is tested here.
pytestmark = pytest.mark.filterwarnings("ignore:Consolidated metadata:UserWarning")

MOTO = Path(sys.executable).parent / "moto_server"
BUCKET = "zarr-interop"
# moto does not check signatures, but refuses unsigned reads as anonymous.
AUTH = ("AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, "
        "SignedHeaders=host, Signature=00")


@pytest.fixture(scope="module")
def s3():
    """The moto server's port, with the bucket made; stopped after the module."""
    if not MOTO.exists():
        pytest.skip(f"{MOTO} is not installed (scripts/setup-test-env.sh installs it)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(MOTO), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        req = urllib.request.Request(f"http://127.0.0.1:{port}/{BUCKET}", method="PUT",
                                     data=b"", headers={"Authorization": AUTH})
        urllib.request.urlopen(req, timeout=30).close()
        yield port
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def options(s3, monkeypatch):
    """The store options zarr_tool passes to zarr_store_open_url."""
    opts = {"endpoint": f"http://127.0.0.1:{s3}", "region": "us-east-1",
            "access_key_id": "testing", "secret_access_key": "testing"}
    monkeypatch.setenv("ZARR_TOOL_STORE_OPTIONS", json.dumps(opts))
    return opts


def ts_spec(port: int, prefix: str, fmt: str) -> dict:
    """A tensorstore spec of the array at `prefix` in the bucket (credentials from the
    AWS_* variables the `ts_credentials` fixture sets)."""
    return {"driver": "zarr3" if fmt == "3" else "zarr",
            "kvstore": {"driver": "s3", "bucket": BUCKET, "path": prefix.rstrip("/") + "/",
                        "endpoint": f"http://127.0.0.1:{port}", "aws_region": "us-east-1"}}


@pytest.fixture
def ts_credentials(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")


def zp_store(port: int, prefix: str, read_only: bool = False) -> ObjectStore:
    store = S3Store(BUCKET, prefix=prefix, endpoint=f"http://127.0.0.1:{port}",
                    region="us-east-1", access_key_id="testing", secret_access_key="testing",
                    client_options={"allow_http": True})
    return ObjectStore(store, read_only=read_only)


def data(dtype: str, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    a[:2, :3] = 0  # a whole chunk of fill value: not stored
    return a


def native(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("=")).tobytes()


# (format, shards): what libzarr writes and zarr-python reads, and the reverse.
LAYOUTS = [("2", None), ("3", None), ("3", "4,6")]


@pytest.mark.parametrize("fmt,shards", LAYOUTS)
def test_libzarr_writes_zarr_python_reads(tool, tmp_path, monkeypatch, s3, options,  # noqa: F811
                                          fmt, shards):
    monkeypatch.setenv("ZARR_TOOL_FORMAT", fmt)
    if shards:
        monkeypatch.setenv("ZARR_TOOL_SHARDS", shards)
    prefix = f"lz-{fmt}-{shards or 'plain'}".replace(",", "x")
    a = data("float32", (11, 13), seed=int(fmt) + (7 if shards else 0))
    tool.build(tmp_path / "s", f"s3://{BUCKET}/{prefix}", "g/a", dtype="<f4", shape=a.shape,
               chunks="2,3", fill="0", order="C", sep="/", compressor='{"id": "zstd", "level": 3}',
               data=native(a), buf_order="C")
    z = zarr.open_array(store=zp_store(s3, prefix, read_only=True), path="g/a", mode="r")
    assert z.metadata.zarr_format == int(fmt)
    if shards:
        assert z.shards == (4, 6)
    assert native(z[...]) == native(a)


@pytest.mark.parametrize("fmt,shards", LAYOUTS)
def test_zarr_python_writes_libzarr_reads(tool, tmp_path, s3, options, fmt, shards):  # noqa: F811
    prefix = f"zp-{fmt}-{shards or 'plain'}".replace(",", "x")
    a = data("int16", (11, 13), seed=3 + int(fmt))
    kwargs = {"shards": tuple(map(int, shards.split(",")))} if shards else {}
    z = zarr.create_array(store=zp_store(s3, prefix), name="g/a", shape=a.shape, chunks=(2, 3),
                          dtype="int16", zarr_format=int(fmt), fill_value=0, **kwargs)
    z[...] = a
    got, info = tool.dump(tmp_path / "s", f"s3://{BUCKET}/{prefix}", "g/a", "C")
    assert got == native(a)
    assert info["shape"] == [11, 13]


@pytest.mark.parametrize("fmt,shards", LAYOUTS)
def test_libzarr_writes_tensorstore_reads(tool, tmp_path, monkeypatch, s3, options,  # noqa: F811
                                          ts_credentials, fmt, shards):
    monkeypatch.setenv("ZARR_TOOL_FORMAT", fmt)
    if shards:
        monkeypatch.setenv("ZARR_TOOL_SHARDS", shards)
    prefix = f"lz-ts-{fmt}-{shards or 'plain'}".replace(",", "x")
    a = data("float64", (11, 13), seed=20 + int(fmt) + (7 if shards else 0))
    tool.build(tmp_path / "s", f"s3://{BUCKET}/{prefix}", "g/a", dtype="<f8", shape=a.shape,
               chunks="2,3", fill="0", order="C", sep="/", compressor='{"id": "zstd", "level": 3}',
               data=native(a), buf_order="C")
    t = ts.open(ts_spec(s3, f"{prefix}/g/a", fmt), open=True).result()
    assert native(t.read().result()) == native(a)
    if shards:
        assert t.chunk_layout.write_chunk.shape == (4, 6)
        assert t.chunk_layout.read_chunk.shape == (2, 3)


# (format, codecs): what tensorstore writes; its v3 sharded layout puts the index first.
TS_LAYOUTS = [
    ("2", {"compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}}),
    ("3", {"codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                      {"name": "gzip", "configuration": {"level": 5}}]}),
    ("3", {"codecs": [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 3],
        "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                   {"name": "zstd", "configuration": {"level": 1}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": "start"}}]}),
]


@pytest.mark.parametrize("fmt,codecs", TS_LAYOUTS, ids=["v2-blosc", "v3-gzip", "v3-sharded"])
def test_tensorstore_writes_libzarr_reads(tool, tmp_path, s3, options, ts_credentials,  # noqa: F811
                                          fmt, codecs):
    prefix = f"ts-{fmt}-{len(json.dumps(codecs))}"
    a = data("uint16", (11, 13), seed=40 + int(fmt))
    sharded = "sharding_indexed" in json.dumps(codecs)
    if fmt == "2":
        metadata = {"shape": list(a.shape), "chunks": [2, 3], "dtype": "<u2", "fill_value": 0,
                    **codecs}
    else:
        chunk = [4, 6] if sharded else [2, 3]
        metadata = {"shape": list(a.shape), "data_type": "uint16", "fill_value": 0,
                    "chunk_grid": {"name": "regular",
                                   "configuration": {"chunk_shape": chunk}}, **codecs}
    spec = {**ts_spec(s3, f"{prefix}/g/a", fmt), "metadata": metadata}
    t = ts.open(spec, create=True).result()
    t[...] = a
    got, info = tool.dump(tmp_path / "s", f"s3://{BUCKET}/{prefix}", "g/a", "C")
    assert got == native(a)
    assert info["shape"] == [11, 13]


# --------------------------------------------------------------------------------------
# Hierarchies, consolidated and not
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("consolidated", [False, True], ids=["plain", "consolidated"])
def test_libzarr_tree_zarr_python_reads(tree_tool, tmp_path, s3, options,  # noqa: F811
                                        consolidated):
    prefix = f"lz-tree-{consolidated}"
    tree, scratch = default_tree(), tmp_path / "scratch"
    spec = f"url:s3://{BUCKET}/{prefix}"
    script = Script().op("store", "S", spec, "w")
    libzarr_build_script(script, "S", tree, scratch, zip_writer=False)
    if consolidated:
        script.op("consolidate", "S", "")
    tree_tool.run(script, scratch)
    expected = expected_snapshot(tree)
    root = zp_open_group(zp_store(s3, prefix, read_only=True), consolidated=consolidated)
    compare_snapshots(zarr_python_snapshot(root), expected,
                      f"zarr-python reading libzarr's S3 tree (consolidated={consolidated})")
    results = libzarr_walk(tree_tool, tmp_path, spec, "consolidated" if consolidated else "plain")
    compare_snapshots(libzarr_snapshot(results), expected, "libzarr reading its S3 tree")


@pytest.mark.parametrize("consolidated", [False, True], ids=["plain", "consolidated"])
def test_zarr_python_tree_libzarr_reads(tree_tool, tmp_path, s3, options,  # noqa: F811
                                        consolidated):
    prefix = f"zp-tree-{consolidated}"
    tree = default_tree()
    store = zp_store(s3, prefix)
    zarr_python_build(store, tree)
    if consolidated:
        zp_consolidate(store)
    results = libzarr_walk(tree_tool, tmp_path, f"url:s3://{BUCKET}/{prefix}",
                           "consolidated" if consolidated else "plain")
    compare_snapshots(libzarr_snapshot(results), expected_snapshot(tree),
                      f"libzarr reading zarr-python's S3 tree (consolidated={consolidated})")


def v3_arrays() -> dict:
    """The arrays of the small v3 tree: path -> data."""
    return {"a": np.arange(30, dtype="<i4").reshape(5, 6),
            "g/b": np.linspace(0, 1, 21, dtype="<f8").reshape(3, 7),
            "g/h/c": (np.arange(16, dtype="<u1") * 7).reshape(4, 4)}


def walked_arrays(results: list) -> dict:
    """path -> (zarr_format, data bytes) of every array a zarr_tree walk dumped."""
    return {r["path"]: (r["zarr_format"], Path(r["data"]).read_bytes())
            for r in results if r.get("op") == "walk" and r["kind"] == "array"}


def test_v3_consolidated_tree_both_ways(tree_tool, tmp_path, s3, options,  # noqa: F811
                                        monkeypatch):
    arrays = v3_arrays()
    # zarr-python writes a v3 tree and consolidates it into the root zarr.json.
    store = zp_store(s3, "zp-v3-tree")
    root = zarr.open_group(store=store, mode="w", zarr_format=3, attributes={"by": "zp"})
    for path, a in arrays.items():
        z = root.create_array(path, shape=a.shape, chunks=(2, 3), dtype=a.dtype,
                              fill_value=0)
        z[...] = a
    zarr.consolidate_metadata(store)
    got = walked_arrays(libzarr_walk(tree_tool, tmp_path, f"url:s3://{BUCKET}/zp-v3-tree",
                                     "consolidated"))
    assert got == {p: (3, a.tobytes()) for p, a in arrays.items()}

    # libzarr writes the same tree as v3 and consolidates; zarr-python opens it consolidated.
    monkeypatch.setenv("ZARR_TREE_FORMAT", "3")
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    script = Script().op("store", "S", f"url:s3://{BUCKET}/lz-v3-tree", "w")
    script.op("group", "S", "", "w").op("gattrs", "S", "", json.dumps({"by": "libzarr"}))
    for path, a in arrays.items():
        parent, _, name = path.rpartition("/")
        if parent:
            script.op("group", "S", parent, "a")
        data = scratch / f"{name}.bin"
        data.write_bytes(a.tobytes())
        script.op("array", "S", parent, name, a.dtype.str, ",".join(map(str, a.shape)), "2,3",
                  "0", "C", "/", "null", "-", "-", str(data), "w-")
    script.op("consolidate", "S", "")
    tree_tool.run(script, scratch)
    root = zarr.open_consolidated(store=zp_store(s3, "lz-v3-tree", read_only=True),
                                  zarr_format=3, mode="r")
    assert root.attrs["by"] == "libzarr"
    assert sorted(p for p, _ in root.arrays()) == ["a"]
    assert sorted(root.metadata.consolidated_metadata.flattened_metadata) == \
        ["a", "g", "g/b", "g/h", "g/h/c"]
    for path, a in arrays.items():
        z = root[path]
        assert z.metadata.zarr_format == 3
        assert np.asarray(z[...]).tobytes() == a.tobytes()
