"""S3 interop: arrays libzarr writes to a bucket (zarr_tool with an s3:// store URL) are read
exactly by zarr-python 3 through obstore, and arrays zarr-python writes there are read
exactly by libzarr; v2 and v3, sharded and not. The bucket is served by the moto S3 server,
started here on a loopback port. Runs in the `objstore` environment of
scripts/setup-test-env.sh (moto, zarr-python 3, obstore) and skips elsewhere."""

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

from test_v2_interop import Tool, tool  # noqa: F401  (the session fixture)

if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("the obstore store needs zarr-python 3", allow_module_level=True)
obstore = pytest.importorskip("obstore")
from obstore.store import S3Store  # noqa: E402
from zarr.storage import ObjectStore  # noqa: E402

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
