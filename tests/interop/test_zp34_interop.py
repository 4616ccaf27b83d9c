"""Interop with zarr-python 3.4.2, which needs Python >= 3.12: it runs in the Debian 13 chroot
that scripts/setup-test-env.sh makes ($ZARR_TEST_ENV/trixie, a venv at /opt/zp34), driven by
tests/interop/zp34_peer.py with the stores under the chroot's /tmp (the same files seen from
here). Both ways, for the rectilinear chunk grid (plain and as the outer grid of shards), the
scale_offset and cast_value codecs, numcodecs.bitround/packbits/zfpy/pcodec (v3) and zfpy and
pcodec (v2), complex data, and a smoke test of the kinds of v3 store the zarr-python 3.1
tests cover (data types, compressors, sharding, strings, fill values):

- zarr-python 3.4 writes; it also saves what it decodes; libzarr (zarr_tool dump) must read
  exactly that, bit for bit (for lossy codecs too).
- libzarr (zarr_tool create, from the array's metadata document) writes; zarr-python 3.4 must
  decode exactly what libzarr decodes, and that must equal the data written (lossless) or lie
  within the codec's stated bound of it (lossy).

Run once, by tests/interop/run.sh under the zp3 environment. Without the chroot the module is
skipped, except under CI=true, where that is an error. Running Python in a chroot needs root.
"""

import ctypes
import json
import os
import re
import shutil
import struct
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest

from test_v2_interop import ROOT, ToolError, tool  # noqa: F401  (the session fixture)
from trixie import CHROOT, CHROOT_EXE, PEER_PYTHON, require
from zp34_peer import make_data

PEER_SCRIPT = Path(__file__).resolve().parent / "zp34_peer.py"

require("zarr==3.4.2", "zarr-python 3.4 interop")

# Codecs that are cargo features of libzarr, by the ZARR_HAS_* bit zarr_features() reports them
# with: the cases of a codec the library under test was built without are skipped, saying so.
OPTIONAL_CODECS = {"zfp": "ZARR_HAS_ZFP", "pcodec": "ZARR_HAS_PCODEC"}


def native_bytes(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("=")).tobytes()


def items_file(items) -> bytes:
    return b"".join(struct.pack("<Q", len(i)) + i for i in items)


def parse_items(blob: bytes):
    out, at = [], 0
    while at < len(blob):
        (n,) = struct.unpack_from("<Q", blob, at)
        out.append(blob[at + 8:at + 8 + n])
        at += 8 + n
    return out


@pytest.fixture(scope="session")
def peer_dir():
    """A scratch directory inside the chroot, removed at the end of the session."""
    base = CHROOT / "tmp" / f"zarr-interop-{uuid.uuid4().hex[:12]}"
    base.mkdir(parents=True)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def run_peer(action: str, base: Path, specs) -> dict:
    """Runs zp34_peer.py `action` in the chroot on the cases `specs` under `base`."""
    base.mkdir(parents=True, exist_ok=True)
    (base / "specs.json").write_text(json.dumps(specs))
    shutil.copy2(PEER_SCRIPT, base / "zp34_peer.py")
    inside = "/" + str(base.relative_to(CHROOT))
    proc = subprocess.run([CHROOT_EXE, str(CHROOT), PEER_PYTHON, f"{inside}/zp34_peer.py",
                           action, inside], capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
                               "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, f"zarr-python 3.4 {action} failed:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def skip_unless_built_with_codec(tool, name: str):
    """Skips the case `name` when it uses an optional codec the library under test lacks (its
    ZARR_HAS_* bit is clear in zarr_features(), or zarr.h has no such bit)."""
    for codec, bit in OPTIONAL_CODECS.items():
        if codec not in name:
            continue
        found = re.search(rf"#define {bit} (\d+)", (ROOT / "include" / "zarr.h").read_text())
        lib = ctypes.CDLL(str(tool.exe.parent / "lib" / "libzarr.so"))
        lib.zarr_features.restype = ctypes.c_uint32
        if found is None or not lib.zarr_features() & int(found.group(1)):
            pytest.skip(f"this libzarr is built without {codec} ({bit})")


# --------------------------------------------------------------------------------------
# Metadata pieces, spelled as zarr-python 3.4 writes them.

def regular(chunks):
    return {"name": "regular", "configuration": {"chunk_shape": list(chunks)}}


def rectilinear(chunk_shapes):
    return {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}}


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES_BE = {"name": "bytes", "configuration": {"endian": "big"}}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 5}}
BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                             "typesize": 4, "blocksize": 0}}
CRC = {"name": "crc32c"}
VLEN_UTF8 = {"name": "vlen-utf8"}
TRANSPOSE = {"name": "transpose", "configuration": {"order": [1, 0]}}


def sharding(inner, codecs, location="end"):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs,
        "index_codecs": [BYTES, CRC], "index_location": location}}


def scale_offset(offset, scale):
    return {"name": "scale_offset", "configuration": {"offset": offset, "scale": scale}}


def cast_value(data_type, **config):
    return {"name": "cast_value", "configuration": {"data_type": data_type, **config}}


def zfpy_v3(mode, **values):
    config = {"mode": mode, "tolerance": -1, "rate": -1, "precision": -1, **values}
    return {"name": "numcodecs.zfpy", "configuration": config}


PCODEC_CONFIG = {"level": 8, "mode_spec": "auto", "delta_spec": "auto",
                 "paging_spec": "equal_pages_up_to", "delta_encoding_order": None,
                 "equal_pages_up_to": 262144}
PCODEC_V3 = {"name": "numcodecs.pcodec", "configuration": PCODEC_CONFIG}
ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]
V3_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128"]

# --------------------------------------------------------------------------------------
# zarr-python 3.4 writes, libzarr reads. Each spec is zp34_peer.write's input; "bound" is the
# codec's stated error bound, checked on zarr-python's own decode (absent: lossless).

WRITES = [
    dict(name="rect-int32-missing-chunks", dtype="int32", shape=[13, 12],
         chunks=[[3, 4, 6], [5, 5, 2]], fill_value=7, region=[[0, 7], [0, 10]]),
    dict(name="rect-float64-3d-runs", dtype="float64", shape=[12, 7, 5],
         chunks=[[2, 2, 2, 2, 4], [3, 4], [5]], fill_value=0.0, compressors=[GZIP]),
    dict(name="rect-sharded-uint16", dtype="uint16", shape=[13, 12], chunks=[1, 2],
         shards=[[6, 4, 3], [10, 2]], fill_value=3, region=[[0, 10], [0, 12]]),
    dict(name="rect-transpose-float32", dtype="float32", shape=[11, 9], chunks=[[5, 6], [2, 3, 4]],
         fill_value=-1.0, filters=[TRANSPOSE], region=[[0, 11], [0, 5]]),
    dict(name="rect-strings", dtype="string", shape=[11], chunks=[[4, 4, 3]], fill_value=""),
    dict(name="scale_offset-cast_value-int16", dtype="float64", shape=[20, 30], chunks=[8, 8],
         fill_value=0.0, filters=[scale_offset(20, 100), cast_value("int16")], bound=0.005),
    dict(name="cast_value-scalar_map-uint8", dtype="float32", shape=[15, 9], chunks=[4, 4],
         fill_value="NaN", nans=[[0, 0], [3, 7], [14, 8]],
         filters=[scale_offset(10, 5),
                  cast_value("uint8", rounding="towards-zero", out_of_range="clamp",
                             scalar_map={"encode": [["NaN", 255]], "decode": [[255, "NaN"]]})],
         bound=0.2),
    *[dict(name=f"cast_value-{mode}", dtype="float64", shape=[10, 10], chunks=[5, 5],
           fill_value=0.0, filters=[scale_offset(0, 10), cast_value("int32", rounding=mode)],
           bound=0.1) for mode in ROUNDINGS],
    dict(name="cast_value-wrap-int8", dtype="int32", shape=[9, 9], chunks=[4, 4], fill_value=0,
         filters=[cast_value("int8", out_of_range="wrap")], lossy=True),
    dict(name="cast_value-float32", dtype="float64", shape=[12, 10], chunks=[5, 5], fill_value=0.0,
         filters=[cast_value("float32")], lossy=True),
    dict(name="scale_offset-int32", dtype="int32", shape=[9, 9], chunks=[4, 4], fill_value=0,
         filters=[scale_offset(1000, 3)]),
    dict(name="numcodecs.bitround-float32", dtype="float32", shape=[16, 16], chunks=[8, 8],
         fill_value=0.0, filters=[{"name": "numcodecs.bitround", "configuration": {"keepbits": 10}}],
         compressors=[ZSTD], lossy=True),
    dict(name="numcodecs.packbits-bool", dtype="bool", shape=[13, 7], chunks=[5, 5],
         fill_value=False, filters=[{"name": "numcodecs.packbits", "configuration": {}}]),
    dict(name="numcodecs.zfpy-rate-float64", dtype="float64", shape=[16, 12, 8], chunks=[8, 8, 8],
         fill_value=0.0, serializer=zfpy_v3(2, rate=16), compressors=[], lossy=True),
    dict(name="numcodecs.zfpy-precision-float32", dtype="float32", shape=[16, 12], chunks=[8, 8],
         fill_value=0.0, serializer=zfpy_v3(3, precision=20), compressors=[], lossy=True),
    dict(name="numcodecs.zfpy-accuracy-float64", dtype="float64", shape=[16, 12, 8],
         chunks=[8, 8, 8], fill_value=0.0, serializer=zfpy_v3(4, tolerance=0.01), compressors=[],
         bound=0.01),
    dict(name="numcodecs.pcodec-float64", dtype="float64", shape=[20, 30], chunks=[8, 16],
         fill_value=0.0, serializer=PCODEC_V3, compressors=[]),
    dict(name="numcodecs.pcodec-int64", dtype="int64", shape=[40], chunks=[16], fill_value=0,
         serializer=PCODEC_V3, compressors=[]),
    dict(name="v2-zfpy-accuracy-float64", format=2, dtype="float64", shape=[16, 12],
         chunks=[8, 8], fill_value=0.0, compressor=[{"id": "zfpy", "mode": 4, "tolerance": 0.001}],
         bound=0.001),
    dict(name="v2-zfpy-rate-float32", format=2, dtype="float32", shape=[16, 12], chunks=[8, 8],
         fill_value=0.0, compressor=[{"id": "zfpy", "mode": 2, "rate": 12}], lossy=True),
    dict(name="v2-pcodec-int32", format=2, dtype="int32", shape=[20, 30], chunks=[8, 16],
         fill_value=0, compressor=[{"id": "pcodec", "level": 4}]),
    dict(name="complex64-fill", dtype="complex64", shape=[9, 8], chunks=[4, 4],
         fill_value=[1.0, -2.0], region=[[0, 5], [0, 8]]),
    dict(name="complex128", dtype="complex128", shape=[9, 8], chunks=[4, 3], fill_value=[0.0, 0.0]),
    # The smoke test's reverse: plain v3 arrays of zarr-python 3.4.
    dict(name="v3-float32-default", dtype="float32", shape=[10, 7], chunks=[4, 3], fill_value=1.0),
    dict(name="v3-uint64-fill-max", dtype="uint64", shape=[10, 7], chunks=[4, 3],
         fill_value=2**64 - 1, region=[[0, 6], [0, 7]]),
    dict(name="v3-int16-sharded", dtype="int16", shape=[17, 13], chunks=[4, 3], shards=[8, 6],
         fill_value=0, region=[[0, 16], [0, 13]]),
    dict(name="v3-strings-sharded", dtype="string", shape=[14], chunks=[3], shards=[6],
         fill_value="", region=[[0, 12]]),
]
for _spec in WRITES:
    _spec.setdefault("format", 3)
WRITE_NAMES = [s["name"] for s in WRITES]


@pytest.fixture(scope="session")
def peer_written(peer_dir):
    """Every WRITES array written by zarr-python 3.4 (one run of the chroot's Python)."""
    base = peer_dir / "written"
    return base, run_peer("write", base, WRITES)


@pytest.mark.parametrize("name", WRITE_NAMES)
def test_zarr_python_34_writes(tool, tmp_path, peer_written, name):
    base, report = peer_written
    spec = next(s for s in WRITES if s["name"] == name)
    assert report[name].get("ok"), f"zarr-python 3.4 could not write {name}: {report[name]}"
    case = base / name
    skip_unless_built_with_codec(tool, name)
    blob, info = tool.dump(tmp_path, case / "store", "a", "C")
    assert info["shape"] == spec["shape"]
    if spec["dtype"] == "string":
        decoded = json.loads((case / "decoded.json").read_text())
        assert parse_items(blob) == [v.encode() for v in decoded]
        return
    decoded = np.load(case / "decoded.npy")
    assert blob == native_bytes(decoded), f"libzarr reads {name} otherwise than zarr-python 3.4"
    written = np.load(case / "input.npy")
    region = tuple(slice(b, e) for b, e in spec.get("region", [[0, n] for n in spec["shape"]]))
    if "bound" in spec:
        err = np.abs(decoded[region].astype(np.float64) - written[region].astype(np.float64))
        assert np.nanmax(err) <= spec["bound"]
        assert np.array_equal(np.isnan(decoded[region]), np.isnan(written[region]))
    elif not spec.get("lossy"):
        assert native_bytes(decoded[region]) == native_bytes(written[region])


# --------------------------------------------------------------------------------------
# libzarr writes, zarr-python 3.4 reads. Each case: the metadata document zarr_tool create
# gets, the data's dtype/shape/seed, the chunks set to the fill value (not stored, read back as
# the fill value), and the check against the written data: "exact", an error bound, or
# "lossy" (no bound: zarr-python's decode must still equal libzarr's exactly).

def v3_doc(dtype, shape, grid, codecs, fill=0):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": grid if isinstance(grid, dict) else regular(grid),
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": {}}


def v2_doc(dtype, shape, chunks, compressor, fill=0.0):
    return {"zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": dtype,
            "compressor": compressor, "fill_value": fill, "order": "C", "filters": None}


def read_case(name, doc, check="exact", *, seed=2, nans=(), fill_region=None, fill=None):
    return dict(name=name, doc=doc, check=check, seed=seed, nans=list(nans),
                fill_region=fill_region, fill=fill)


def _smoke_cases():
    """The kinds of v3 store the zarr-python 3.1 tests read from libzarr."""
    chains = [[BYTES, ZSTD], [BYTES_BE, GZIP], [TRANSPOSE, BYTES, BLOSC], [BYTES, ZSTD, CRC]]
    for i, dtype in enumerate(V3_DTYPES):
        fill = False if dtype == "bool" else ([0.0, 0.0] if dtype.startswith("complex") else 0)
        yield read_case(f"smoke-{dtype}", v3_doc(dtype, (9, 11), (4, 4), chains[i % len(chains)],
                                                 fill), fill_region=[[0, 4], [0, 4]], fill=0)
    yield read_case("smoke-sharded", v3_doc("float32", (17, 13), (8, 6), [sharding((4, 3), [BYTES, ZSTD])]),
                    fill_region=[[8, 16], [0, 6]], fill=0)
    yield read_case("smoke-sharded-nested", v3_doc(
        "int32", (17, 13), (8, 12), [sharding((4, 6), [sharding((2, 3), [BYTES, GZIP], "start")])]),
        fill_region=[[0, 8], [0, 12]], fill=0)
    yield read_case("smoke-strings", v3_doc("string", (11,), (4,), [VLEN_UTF8, ZSTD], ""))
    yield read_case("smoke-strings-sharded", v3_doc("string", (14,), (6,), [sharding((3,), [VLEN_UTF8, ZSTD])], ""))
    for fill_name, fill_json, fill_value in [("nan", "NaN", np.nan), ("inf", "Infinity", np.inf),
                                             ("-inf", "-Infinity", -np.inf),
                                             ("hex", "0x7fc00001", None), ("number", 2.5, 2.5)]:
        # The hex NaN payload cannot come from a Python float: those chunks hold data.
        yield read_case(f"smoke-fill-{fill_name}", v3_doc("float32", (9, 11), (4, 4), [BYTES, ZSTD], fill_json),
                        fill_region=None if fill_value is None else [[0, 4], [4, 8]], fill=fill_value)
    yield read_case("smoke-fill-int", v3_doc("int64", (9, 11), (4, 4), [BYTES], -9), fill_region=[[4, 8], [0, 4]], fill=-9)
    yield read_case("smoke-fill-complex", v3_doc("complex128", (9, 11), (4, 4), [BYTES], [1.5, "NaN"]),
                    fill_region=[[0, 4], [0, 4]], fill=complex(1.5, np.nan))


READS = [
    read_case("rect-int32", v3_doc("int32", (13, 12), rectilinear([[3, 4, 6], [5, 5, 2]]), [BYTES, ZSTD], 7),
              fill_region=[[7, 13], [0, 12]], fill=7),
    read_case("rect-float64-3d-runs", v3_doc("float64", (12, 7, 5), rectilinear([[[2, 4], 4], [3, 4], 5]),
                                             [BYTES, GZIP], 0.0)),
    read_case("rect-sharded-uint16", v3_doc("uint16", (13, 12), rectilinear([[6, 4, 3], [10, 2]]),
                                            [sharding((1, 2), [BYTES, ZSTD])], 3),
              fill_region=[[10, 13], [0, 12]], fill=3),
    read_case("rect-transpose-float32", v3_doc("float32", (11, 9), rectilinear([[5, 6], [2, 3, 4]]),
                                               [TRANSPOSE, BYTES, ZSTD], -1.0),
              fill_region=[[5, 11], [5, 9]], fill=-1.0),
    read_case("rect-strings", v3_doc("string", (11,), rectilinear([[4, 4, 3]]), [VLEN_UTF8, ZSTD], "")),
    read_case("scale_offset-cast_value-int16", v3_doc("float64", (20, 30), (8, 8), [
        scale_offset(20, 100), cast_value("int16"), BYTES, ZSTD], 0.0), 0.005),
    read_case("cast_value-scalar_map-uint8", v3_doc("float32", (15, 9), (4, 4), [
        scale_offset(10, 5), cast_value("uint8", rounding="towards-zero", out_of_range="clamp",
                                        scalar_map={"encode": [["NaN", 255]], "decode": [[255, "NaN"]]}),
        BYTES], "NaN"), 0.2, nans=[[0, 0], [3, 7], [14, 8]]),
    *[read_case(f"cast_value-{mode}", v3_doc("float64", (10, 10), (5, 5), [
        scale_offset(0, 10), cast_value("int32", rounding=mode), BYTES], 0.0), 0.1) for mode in ROUNDINGS],
    read_case("cast_value-wrap-int8", v3_doc("int32", (9, 9), (4, 4), [
        cast_value("int8", out_of_range="wrap"), BYTES], 0), "lossy"),
    read_case("cast_value-float32", v3_doc("float64", (12, 10), (5, 5), [cast_value("float32"), BYTES], 0.0),
              "lossy"),
    read_case("scale_offset-int32", v3_doc("int32", (9, 9), (4, 4), [scale_offset(1000, 3), BYTES], 0)),
    read_case("numcodecs.bitround-float32", v3_doc("float32", (16, 16), (8, 8), [
        {"name": "numcodecs.bitround", "configuration": {"keepbits": 10}}, BYTES, ZSTD], 0.0), "lossy"),
    read_case("numcodecs.packbits-bool", v3_doc("bool", (13, 7), (5, 5), [{"name": "numcodecs.packbits", "configuration": {}}, BYTES],
                                                False)),
    read_case("numcodecs.zfpy-rate-float64", v3_doc("float64", (16, 12, 8), (8, 8, 8), [zfpy_v3(2, rate=16)], 0.0),
              "lossy"),
    read_case("numcodecs.zfpy-precision-float32", v3_doc("float32", (16, 12), (8, 8), [zfpy_v3(3, precision=20)],
                                                         0.0), "lossy"),
    read_case("numcodecs.zfpy-accuracy-float64", v3_doc("float64", (16, 12, 8), (8, 8, 8),
                                                        [zfpy_v3(4, tolerance=0.01)], 0.0), 0.01),
    read_case("numcodecs.pcodec-float64", v3_doc("float64", (20, 30), (8, 16), [PCODEC_V3], 0.0)),
    read_case("numcodecs.pcodec-int64", v3_doc("int64", (40,), (16,), [PCODEC_V3], 0)),
    read_case("v2-zfpy-accuracy-float64", v2_doc("<f8", (16, 12), (8, 8), {"id": "zfpy", "mode": 4,
                                                                           "tolerance": 0.001}), 0.001),
    read_case("v2-zfpy-rate-float32", v2_doc("<f4", (16, 12), (8, 8), {"id": "zfpy", "mode": 2, "rate": 12}),
              "lossy"),
    read_case("v2-pcodec-int32", v2_doc("<i4", (20, 30), (8, 16), {"id": "pcodec", "level": 4}, 0)),
    read_case("complex64-fill", v3_doc("complex64", (9, 8), (4, 4), [BYTES, ZSTD], [1.0, -2.0]),
              fill_region=[[4, 8], [0, 4]], fill=complex(1.0, -2.0)),
    *_smoke_cases(),
]
READ_NAMES = [c["name"] for c in READS]


def case_data(case) -> np.ndarray:
    doc = case["doc"]
    dtype = doc["data_type"] if doc["zarr_format"] == 3 else np.dtype(doc["dtype"]).name
    a = make_data(dtype, tuple(doc["shape"]), case["seed"])
    for index in case["nans"]:
        a[tuple(index)] = np.nan
    if case["fill_region"] is not None:
        a[tuple(slice(b, e) for b, e in case["fill_region"])] = case["fill"]
    return a


@pytest.fixture(scope="session")
def peer_read(tool, peer_dir, tmp_path_factory):
    """Every READS array written by libzarr, then read by zarr-python 3.4 (one run of the
    chroot's Python). Returns the directory, libzarr's errors by case, and the peer's report."""
    base = peer_dir / "ours"
    scratch = tmp_path_factory.mktemp("zp34-writes")
    errors, specs = {}, []
    for case in READS:
        a = case_data(case)
        data = items_file([v.encode() for v in a.reshape(-1)]) if a.dtype == object else native_bytes(a)
        try:
            tool.create(scratch, base / case["name"] / "store", "a", case["doc"], data, "C")
            specs.append({"name": case["name"], "path": "a"})
        except ToolError as err:
            errors[case["name"]] = err
    return base, errors, run_peer("read", base, specs)


@pytest.mark.parametrize("name", READ_NAMES)
def test_zarr_python_34_reads(tool, tmp_path, peer_read, name):
    base, errors, report = peer_read
    case = next(c for c in READS if c["name"] == name)
    skip_unless_built_with_codec(tool, name)
    if name in errors:
        raise errors[name]
    assert report[name].get("ok"), f"zarr-python 3.4 could not read libzarr's {name}: {report[name]}"
    written = case_data(case)
    if written.dtype == object:
        decoded = json.loads((base / name / "decoded.json").read_text())
        assert decoded == list(written.reshape(-1))
        return
    decoded = np.load(base / name / "decoded.npy")
    ours, _ = tool.dump(tmp_path, base / name / "store", "a", "C")
    assert native_bytes(decoded) == ours, f"zarr-python 3.4 decodes libzarr's {name} otherwise than libzarr"
    check = case["check"]
    if check == "exact":
        assert native_bytes(decoded) == native_bytes(written)
    elif check != "lossy":
        err = np.abs(decoded.astype(np.float64) - written.astype(np.float64))
        assert np.nanmax(err) <= check
        assert np.array_equal(np.isnan(decoded), np.isnan(written))
