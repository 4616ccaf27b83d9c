"""Zarr v2 interoperability between libzarr and zarr-python 2.18 / 3.x and tensorstore.

Runs under either test environment (see scripts/setup-test-env.sh): with zarr-python 2 it
uses the zarr 2 API, with zarr-python 3 the zarr 3 API (``zarr_format=2``), and the
tensorstore tests run wherever ``import tensorstore`` works.

Directions:
  (a) zarr-python / tensorstore write -> ``zarr_tool dump`` (libzarr) reads;
  (b) ``zarr_tool create`` / ``build`` / ``write-region`` (libzarr) write -> zarr-python /
      tensorstore read.
Everything is compared byte for byte (native byte order, C order), so NaN payloads count.
The C helper ``zarr_tool.c`` is compiled once per session against target/release/libzarr.so.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

try:
    import tensorstore as ts
except ImportError:  # zarr-python 2 environment
    ts = None

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ZARR_MAJOR = int(zarr.__version__.split(".")[0])
NUMCODECS_BLOSC = set(numcodecs.blosc.list_compressors())

# --------------------------------------------------------------------------------------
# The C tool
# --------------------------------------------------------------------------------------


class ToolError(AssertionError):
    pass


class Tool:
    def __init__(self, exe: Path):
        self.exe = exe

    def run(self, *args) -> str:
        proc = subprocess.run(
            [str(self.exe), *map(str, args)], capture_output=True, text=True, timeout=120
        )
        if proc.returncode != 0:
            raise ToolError(
                f"zarr_tool {' '.join(map(str, args[:1]))} exited {proc.returncode}:\n"
                f"{proc.stderr.strip()}"
            )
        return proc.stdout

    def dump(self, scratch: Path, store: Path, path: str, order: str):
        out = _scratch_file(scratch, "dump.bin")
        info = json.loads(self.run("dump", store, path, out, order))
        return out.read_bytes(), info

    def read_region(self, scratch, store, path, start, count, order):
        out = _scratch_file(scratch, "region.bin")
        info = json.loads(self.run("read-region", store, path, _csv(start), _csv(count), out, order))
        return out.read_bytes(), info

    def create(self, scratch, store, path, zarray: dict, data: bytes, order: str):
        meta = _scratch_file(scratch, "zarray.json")
        meta.write_text(json.dumps(zarray))
        blob = _scratch_file(scratch, "data.bin")
        blob.write_bytes(data)
        self.run("create", store, path, meta, blob, order)

    def build(self, scratch, store, path, *, dtype, shape, chunks, fill, order, sep,
              compressor, data: bytes, buf_order: str):
        blob = _scratch_file(scratch, "data.bin")
        blob.write_bytes(data)
        self.run("build", store, path, dtype, _csv(shape), chunks, fill, order, sep,
                 compressor, blob, buf_order)

    def write_region(self, scratch, store, path, start, count, data: bytes, order: str):
        blob = _scratch_file(scratch, "region-in.bin")
        blob.write_bytes(data)
        self.run("write-region", store, path, _csv(start), _csv(count), blob, order)

    def resize(self, store, path, shape):
        self.run("resize", store, path, _csv(shape))

    def append(self, scratch, store, path, axis, count, data: bytes, order: str):
        blob = _scratch_file(scratch, "append.bin")
        blob.write_bytes(data)
        self.run("append", store, path, axis, _csv(count), blob, order)


_counter = itertools.count()


def run_tree(tool: Tool, tmp_path: Path, lines) -> list:
    """Runs a zarr_tree script (tests/interop/zarr_tree.c, built beside the tool on first use):
    one tab-joined line per tuple; returns the JSON objects it printed."""
    tree = tool.exe.parent / "zarr_tree"
    if not tree.exists():
        libdir = tool.exe.parent / "lib"
        here = os.path.dirname(__file__)
        subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Wextra", "-Werror",
                        "-I", os.path.join(here, "..", "..", "include"),
                        os.path.join(here, "zarr_tree.c"), "-L", str(libdir), "-lzarr",
                        f"-Wl,-rpath,{libdir}", "-o", str(tree)], check=True)
    script = tmp_path / "script.txt"
    script.write_text("\n".join("\t".join(line) for line in lines) + "\n")
    proc = subprocess.run([str(tree), str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    decoder, text, pos, values = json.JSONDecoder(), proc.stdout, 0, []
    while (start := text.find("{", pos)) >= 0:
        value, pos = decoder.raw_decode(text, start)
        values.append(value)
    return values


def _scratch_file(scratch: Path, name: str) -> Path:
    scratch.mkdir(parents=True, exist_ok=True)
    return scratch / f"{next(_counter)}-{name}"


def _csv(values) -> str:
    return ",".join(str(int(v)) for v in values)


@pytest.fixture(scope="session")
def tool(tmp_path_factory) -> Tool:
    """Builds libzarr (cargo build --release) and compiles zarr_tool.c against it.

    The library is snapshotted into a private directory (as libzarr.so and its soname
    libzarr.so.0) so that concurrent cargo builds cannot swap it mid-session and the tool
    finds its soname even where target/release has no libzarr.so.0 link. Set
    ZARR_INTEROP_NO_BUILD=1 to use target/release as it is (run.sh does, after building).
    A failing build or compile stops the session at once.
    """
    if not os.environ.get("ZARR_INTEROP_NO_BUILD"):
        proc = subprocess.run(["cargo", "build", "--release"], cwd=ROOT,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.exit(f"cargo build --release failed:\n{proc.stderr[-4000:]}", returncode=1)
    built = ROOT / "target" / "release" / "libzarr.so"
    if not built.exists():
        pytest.exit("target/release/libzarr.so is missing (run cargo build --release)", returncode=1)
    workdir = tmp_path_factory.mktemp("zarr_tool")
    libdir = workdir / "lib"
    libdir.mkdir()
    shutil.copy2(built, libdir / "libzarr.so")
    os.symlink("libzarr.so", libdir / "libzarr.so.0")
    exe = workdir / "zarr_tool"
    cmd = [os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Wextra", "-Werror",
           "-I", str(ROOT / "include"), str(HERE / "zarr_tool.c"),
           "-L", str(libdir), "-lzarr", f"-Wl,-rpath,{libdir}", "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.exit(f"compiling zarr_tool.c failed:\n{proc.stderr}", returncode=1)
    return Tool(exe)


# --------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------

DTYPES = ["|b1", "|i1", "<i2", ">i2", "<i4", ">i4", "<i8", "|u1", "<u2", ">u4", "<u8",
          "<f2", ">f2", "<f4", ">f4", "<f8", ">f8", "<c8", ">c16", "<M8[ns]", "<m8[s]"]


def _blosc(cname, clevel=5, shuffle=1, blocksize=0):
    return {"id": "blosc", "cname": cname, "clevel": clevel, "shuffle": shuffle,
            "blocksize": blocksize}


COMPRESSORS = {
    "none": None,
    "blosc-lz4": _blosc("lz4", 5, 1),
    "blosc-zstd-bitshuffle": _blosc("zstd", 3, 2),
    "blosc-blosclz-noshuffle": _blosc("blosclz", 5, 0),
    "blosc-snappy": _blosc("snappy", 5, 1),
    "blosc-lz4hc": _blosc("lz4hc", 9, 1),
    "blosc-zlib": _blosc("zlib", 5, 1),
    "blosc-autoshuffle": _blosc("lz4", 5, -1),
    "blosc-blocksize": _blosc("zstd", 5, 1, 256),
    "blosc-clevel0": _blosc("lz4", 0, 1),  # stored uncompressed ("memcpyed") by blosc
    "zlib": {"id": "zlib", "level": 6},
    "gzip": {"id": "gzip", "level": 5},
    "bz2": {"id": "bz2", "level": 9},
    "lzma": {"id": "lzma", "format": 1, "check": -1, "preset": None, "filters": None},
    "lzma-alone": {"id": "lzma", "format": 2, "check": -1, "preset": 1, "filters": None},
    "zstd": {"id": "zstd", "level": 3},
    "zstd-checksum": {"id": "zstd", "level": 3, "checksum": True},
    "lz4": {"id": "lz4", "acceleration": 1},
}

# Codecs tensorstore 0.1.86 does not register for its zarr driver.
TS_UNSUPPORTED_CODECS = {"lz4", "lzma"}


def codec_id(name):
    cfg = COMPRESSORS[name]
    return None if cfg is None else cfg["id"]


@dataclasses.dataclass(frozen=True)
class Case:
    dtype: str
    compressor: str
    fill: str
    shape: tuple
    chunks: tuple
    chunk_order: str = "C"
    buf_order: str = "C"
    sep: str | None = "."  # None: no dimension_separator key in .zarray
    path: str = "arr"

    @property
    def id(self):
        dt = self.dtype
        order = {"<": "le", ">": "be", "|": ""}[dt[0]]
        body = dt[1:].replace("[", "").replace("]", "")
        shape = "x".join(map(str, self.shape)) or "scalar"
        chunks = "x".join(map(str, self.chunks)) or "scalar"
        sep = {".": "dot", "/": "slash", None: "nosep"}[self.sep]
        path = {"arr": ""}.get(self.path, "-path_" + (self.path.replace("/", "_") or "root"))
        return (f"{body}{order}-{self.compressor}-fill_{self.fill}-{shape}c{chunks}"
                f"-{self.chunk_order}{self.buf_order}-{sep}{path}")

    @property
    def ndtype(self) -> np.dtype:
        return np.dtype(self.dtype)


def fills_for(dtype: str):
    kind = np.dtype(dtype).kind
    if kind == "b":
        return ["zero", "true", "null"]
    fills = ["zero", "nonzero", "null"]
    if kind == "f":
        fills += ["nan", "inf", "ninf", "inexact"]
    if kind == "c":
        fills += ["nan"]
    if kind in "Mm":
        fills += ["nat"]
    return fills


NONZERO = {
    "i1": -100, "i2": -12345, "i4": -123456789, "i8": -(2**63),
    "u1": 200, "u2": 60000, "u4": 4000000000, "u8": 2**64 - 1,
    "f2": -3.25, "f4": -1234.5, "f8": -1234.5,
}


def fill_spec(dtype: str, fill: str):
    """(python value for writers, JSON value libzarr is expected to write back)."""
    dt = np.dtype(dtype)
    code = f"{dt.kind}{dt.itemsize}"
    if fill == "null":
        return None, None
    if dt.kind == "b":
        return {"zero": (False, False), "true": (True, True)}[fill]
    if dt.kind in "Mm":
        # NaT is int64's minimum, which zarr-python 2 and 3 write as the fill value.
        value = {"zero": 0, "nonzero": 1234567890123 if dt.kind == "M" else -5,
                 "nat": -(2**63)}[fill]
        return np.array(value, dtype="<i8").view(dt.newbyteorder("<"))[()], value
    if dt.kind in "iu":
        value = {"zero": 0, "nonzero": NONZERO[code]}[fill]
        return value, value
    if dt.kind == "f":
        return {"zero": (0.0, 0.0), "nonzero": (NONZERO[code], NONZERO[code]),
                "nan": (math.nan, "NaN"), "inf": (math.inf, "Infinity"),
                "ninf": (-math.inf, "-Infinity"),
                # 0.1 is not representable: the JSON holds the value the type stores.
                "inexact": (0.1, float(np.array(0.1, dtype=dt).item()))}[fill]
    if dt.kind == "c":
        return {"zero": (0j, [0.0, 0.0]), "nonzero": (1 + 2j, [1.0, 2.0]),
                "nan": (complex(math.nan, 1.0), ["NaN", 1.0])}[fill]
    raise AssertionError(dtype)


def fill_bytes(dtype: str, fill: str) -> bytes:
    """The fill value as one native-endian element (zeros for null)."""
    value, _ = fill_spec(dtype, fill)
    dt = native_dtype(np.dtype(dtype))
    if value is None:
        return bytes(dt.itemsize)
    return np.array(value).astype(dt).tobytes() if dt.kind in "Mm" else \
        np.array(value, dtype=dt).tobytes()


def _cycle(seq, i):
    return seq[i % len(seq)]


SHAPE_2D = ((13, 17), (5, 6))
SHAPE_3D = ((5, 6, 7), (2, 4, 3))
SHAPE_BIG = ((40, 50), (16, 32))


def _make_cases():
    cases = {}

    def add(**kw):
        case = Case(**kw)
        cases.setdefault(case.id, case)

    # Every dtype x chunk order x buffer order (compressor, separator, shape rotate).
    for i, dt in enumerate(DTYPES):
        for j, (co, bo) in enumerate(itertools.product("CF", "CF")):
            shape, chunks = SHAPE_3D if (i + j) % 2 else SHAPE_2D
            add(dtype=dt, compressor=_cycle(["none", "blosc-lz4", "zstd"], i + j), fill="nonzero"
                if np.dtype(dt).kind != "b" else "true", shape=shape, chunks=chunks,
                chunk_order=co, buf_order=bo, sep=_cycle([".", "/"], i + j // 2))
    # Every dtype x {none, blosc lz4, zstd}.
    for i, dt in enumerate(DTYPES):
        for j, comp in enumerate(["none", "blosc-lz4", "zstd"]):
            shape, chunks = SHAPE_2D if j != 1 else SHAPE_3D
            add(dtype=dt, compressor=comp, fill=_cycle(fills_for(dt), i + j), shape=shape,
                chunks=chunks, chunk_order=_cycle("CF", i + j + 1), buf_order=_cycle("FC", i),
                sep=_cycle(["/", "."], j))
    # Every compressor x {<f8, >i4, |u1} x separator.
    for i, comp in enumerate(COMPRESSORS):
        for j, dt in enumerate(["<f8", ">i4", "|u1"]):
            for k, sep in enumerate([".", "/"]):
                shape, chunks = SHAPE_BIG
                add(dtype=dt, compressor=comp, fill=_cycle(["nonzero", "zero"], i + j),
                    shape=shape, chunks=chunks, chunk_order=_cycle("CF", i + k),
                    buf_order=_cycle("CF", j + k), sep=sep)
    # Every dtype x every fill value it has.
    for i, dt in enumerate(DTYPES):
        for j, fill in enumerate(fills_for(dt)):
            shape, chunks = _cycle([SHAPE_2D, SHAPE_3D], i + j)
            add(dtype=dt, compressor=_cycle(["blosc-lz4", "zlib", "none"], i + j), fill=fill,
                shape=shape, chunks=chunks, chunk_order=_cycle("FC", i + j),
                buf_order=_cycle("CF", j), sep=_cycle([".", "/"], i))
    # Shapes: 0-d, zero-length dimensions, 1-d, chunks larger than the array, 1x1 chunks;
    # paths: root, nested; no dimension_separator key.
    for dt, comp, fill, co in [("<f8", "none", "nonzero", "C"), ("|b1", "zstd", "true", "C"),
                               (">i2", "blosc-lz4", "zero", "F"), ("<c8", "zlib", "nan", "C")]:
        add(dtype=dt, compressor=comp, fill=fill, shape=(), chunks=(), chunk_order=co)
    for dt, shape, chunks, sep in [("<f4", (0, 5), (2, 2), "."), (">u4", (4, 0, 3), (2, 2, 2), "/"),
                                   ("|u1", (0,), (3,), ".")]:
        for co in "CF":
            add(dtype=dt, compressor="blosc-lz4", fill="nonzero", shape=shape, chunks=chunks,
                chunk_order=co, buf_order=co, sep=sep)
    for dt in ["<i8", ">f4", "|i1"]:
        add(dtype=dt, compressor="zstd", fill="nonzero", shape=(100,), chunks=(7,))
        add(dtype=dt, compressor="blosc-lz4", fill="zero", shape=(3, 4), chunks=(10, 10),
            chunk_order="F", buf_order="F", sep="/")
        add(dtype=dt, compressor="none", fill="nonzero", shape=(4, 5), chunks=(1, 1),
            chunk_order="F", buf_order="C", sep="/")
    add(dtype="<f8", compressor="zstd", fill="nan", shape=(2, 3, 1, 4, 2),
        chunks=(1, 2, 1, 3, 2), chunk_order="F", buf_order="C", sep="/")
    add(dtype=">i2", compressor="blosc-lz4", fill="nonzero", shape=(2, 3, 1, 4, 2),
        chunks=(2, 2, 1, 1, 1), chunk_order="C", buf_order="F", sep=".")
    # Other datetime units and byte orders.
    for dt, fill in [(">M8[ns]", "nat"), ("<M8[D]", "nonzero"), (">m8[ms]", "zero"),
                     ("<m8[us]", "nat")]:
        add(dtype=dt, compressor="blosc-lz4", fill=fill, shape=SHAPE_2D[0], chunks=SHAPE_2D[1],
            chunk_order="F", buf_order="C", sep="/")
    # Many chunks: libzarr's parallel chunk I/O.
    add(dtype="<f8", compressor="zstd", fill="nonzero", shape=(200, 300), chunks=(7, 9),
        chunk_order="C", buf_order="F", sep="/")
    add(dtype=">c16", compressor="blosc-zstd-bitshuffle", fill="nonzero", shape=(60, 70, 8),
        chunks=(7, 9, 3), chunk_order="F", buf_order="C", sep=".")
    for dt, sep in [("<f8", None), (">i2", None), ("|u1", None)]:
        add(dtype=dt, compressor="zlib", fill="nonzero", shape=SHAPE_2D[0], chunks=SHAPE_2D[1],
            sep=sep, buf_order="F")
    for path in ["", "grp/sub/arr"]:
        add(dtype="<f8", compressor="blosc-lz4", fill="nan", shape=SHAPE_2D[0],
            chunks=SHAPE_2D[1], sep="/", path=path)
        add(dtype=">i4", compressor="zstd", fill="nonzero", shape=SHAPE_3D[0],
            chunks=SHAPE_3D[1], chunk_order="F", sep=".", path=path)
    return list(cases.values())


CASES = _make_cases()
CASE_PARAMS = [pytest.param(c, id=c.id) for c in CASES]
# Without tensorstore its tests are not generated (pytest reports one skip for each).
TS_CASE_PARAMS = CASE_PARAMS if ts is not None else []

# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------


def native_dtype(dt: np.dtype) -> np.dtype:
    return dt.newbyteorder("=")


def native(a) -> np.ndarray:
    a = np.asarray(a)
    return a.astype(native_dtype(a.dtype))


def chunk_grid(shape, chunks):
    return [math.ceil(s / c) for s, c in zip(shape, chunks)]


def chunk_slices(idx, shape, chunks):
    return tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, shape))


def hole_chunks(shape, chunks):
    """Chunks the data sets entirely to the fill value: an interior one and the last (edge)."""
    grid = chunk_grid(shape, chunks)
    if not shape or 0 in grid:
        return []
    holes = {tuple(g - 1 for g in grid)}
    if grid[-1] > 1:
        holes.add(tuple([0] * (len(grid) - 1) + [1]))
    return sorted(holes)


def make_data(case: Case, seed: int | None = None) -> np.ndarray:
    """Deterministic data of the case's dtype (stored byte order) with some special values
    and some chunks entirely equal to the fill value (zeros when the fill is null)."""
    dt = case.ndtype
    nat = native_dtype(dt)
    if seed is None:
        seed = sum(case.id.encode()) * 7919 % 2**32
    rng = np.random.default_rng(seed)
    n = math.prod(case.shape)
    if dt.kind == "b":
        vals = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(nat)
        vals = rng.integers(info.min, info.max, n, endpoint=True, dtype=nat)
        if n >= 3:
            vals[:3] = [info.min, info.max, 0]
    elif dt.kind in "Mm":
        vals = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
        vals[5::17] = np.iinfo(np.int64).min  # NaT
        vals = vals.view(nat)
    elif dt.kind == "f":
        vals = (rng.standard_normal(n) * 100).astype(nat)
        fi = np.finfo(nat)
        vals[1::11] = np.nan
        vals[2::13] = np.inf
        vals[3::17] = -np.inf
        vals[4::19] = fi.smallest_subnormal
        vals[6::23] = fi.max
        # A quiet NaN with a payload: only a byte comparison sees it.
        ibits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[nat.itemsize]
        payload = {2: 0x7E01, 4: 0x7FC00123, 8: 0x7FF8000000000123}[nat.itemsize]
        vals.view(ibits)[7::29] = payload
    elif dt.kind == "c":
        half = np.dtype(f"f{nat.itemsize // 2}")
        re = (rng.standard_normal(n) * 100).astype(half)
        im = (rng.standard_normal(n) * 100).astype(half)
        re[1::11] = np.nan
        im[2::13] = -np.inf
        vals = np.empty(n, dtype=nat)
        vals.real = re
        vals.imag = im
    else:
        raise AssertionError(dt)
    a = vals.reshape(case.shape).astype(dt)
    hole_value = np.frombuffer(fill_bytes(case.dtype, case.fill), dtype=nat)[0]
    for idx in hole_chunks(case.shape, case.chunks):
        a[chunk_slices(idx, case.shape, case.chunks)] = hole_value
    return a


def chunk_key(idx, sep):
    return (sep or ".").join(map(str, idx)) if idx else "0"


def expected_chunk_keys(a: np.ndarray, case: Case):
    """Keys of the chunks a writer that skips fill-only chunks stores (all chunks when the
    fill value is null)."""
    keys = set()
    fill = fill_bytes(case.dtype, case.fill)
    nat = native(a)
    for idx in itertools.product(*[range(g) for g in chunk_grid(case.shape, case.chunks)]):
        region = nat[chunk_slices(idx, case.shape, case.chunks)]
        if case.fill != "null" and region.tobytes() == fill * region.size:
            continue
        keys.add(chunk_key(idx, case.sep))
    return keys


def chunk_keys_on_disk(store: Path, path: str):
    base = store / path if path else store
    keys = set()
    for p in base.rglob("*"):
        rel = p.relative_to(base).as_posix()
        if p.is_file() and not p.name.startswith("."):
            keys.add(rel)
    return keys


def assert_bytes_equal(actual: bytes, expected: np.ndarray, order: str, what: str):
    exp = native(expected)
    exp_bytes = exp.tobytes(order=order)
    if actual == exp_bytes:
        return
    assert len(actual) == len(exp_bytes), f"{what}: {len(actual)} bytes, expected {len(exp_bytes)}"
    got = np.frombuffer(actual, dtype=exp.dtype).reshape(exp.shape, order=order)
    bad = [i for i in np.ndindex(exp.shape) if got[i].tobytes() != exp[i].tobytes()]
    first = bad[0]
    raise AssertionError(f"{what}: {len(bad)} of {exp.size} elements differ; first at {first}: "
                         f"got {got[first]!r}, expected {exp[first]!r}")


def assert_arrays_identical(actual: np.ndarray, expected: np.ndarray, what: str):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert_bytes_equal(native(actual).tobytes(), expected, "C", what)


def norm_codec(cfg):
    """A compressor config as numcodecs normalises it (all defaults filled in)."""
    if cfg is None:
        return None
    try:
        return numcodecs.get_codec(dict(cfg)).get_config()
    except Exception:  # e.g. a key this numcodecs does not know (typesize in 0.15)
        return dict(cfg)


def canonical_dtype(dtype: str) -> str:
    return "|" + dtype[1:] if np.dtype(dtype).itemsize == 1 else dtype


# --------------------------------------------------------------------------------------
# zarr-python and tensorstore adapters
# --------------------------------------------------------------------------------------


def zarr_python_write(store: Path, case: Case, a: np.ndarray):
    cfg = COMPRESSORS[case.compressor]
    codec = None if cfg is None else numcodecs.get_codec(dict(cfg))
    fill, _ = fill_spec(case.dtype, case.fill)
    sep = case.sep or "."
    if ZARR_MAJOR == 2:
        z = zarr.open_array(str(store), mode="w", path=case.path, shape=case.shape,
                            chunks=case.chunks, dtype=case.dtype, compressor=codec,
                            fill_value=fill, order=case.chunk_order, dimension_separator=sep,
                            write_empty_chunks=False)
    else:
        z = zarr.create_array(store=str(store), name=case.path or None, shape=case.shape,
                              chunks=case.chunks, dtype=case.dtype, compressors=codec,
                              filters=None, fill_value=fill, order=case.chunk_order,
                              zarr_format=2,
                              chunk_key_encoding={"name": "v2", "separator": sep},
                              config={"write_empty_chunks": False}, overwrite=True)
    z[...] = a
    if case.sep is None:
        drop_dimension_separator(store, case.path)


def drop_dimension_separator(store: Path, path: str):
    meta_path = (store / path / ".zarray") if path else store / ".zarray"
    meta = json.loads(meta_path.read_text())
    meta.pop("dimension_separator", None)
    meta_path.write_text(json.dumps(meta, indent=4))


def zarr_python_open(store: Path, path: str, mode="r"):
    if ZARR_MAJOR == 2:
        return zarr.open_array(str(store), mode=mode, path=path)
    return zarr.open_array(store=str(store), path=path, mode=mode, zarr_format=2)


def zarr_python_read(store: Path, path: str):
    z = zarr_python_open(store, path)
    return z, np.asarray(z[...])


def zarr_python_meta(z):
    """(dtype, fill value, order, compressor config or None) as zarr-python sees them."""
    if ZARR_MAJOR == 2:
        comp = z.compressor
        return np.dtype(z.dtype), z.fill_value, z.order, None if comp is None else comp.get_config()
    meta = z.metadata
    comp = meta.compressor
    cfg = None if comp is None else comp.get_config()
    return np.dtype(z.dtype), meta.fill_value, meta.order, cfg


def zarr_python_unsupported(case: Case):
    if case.compressor == "blosc-snappy" and "snappy" not in NUMCODECS_BLOSC:
        return "numcodecs' blosc is built without snappy"
    return None


def ts_spec(store: Path, path: str):
    kv_path = str(store / path if path else store) + "/"
    return {"driver": "zarr", "kvstore": {"driver": "file", "path": kv_path}}


def ts_unsupported(case: Case):
    if ts is None:
        return "tensorstore is not installed in this environment"
    if case.ndtype.kind in "Mm":
        return "tensorstore's zarr driver does not support datetime64/timedelta64"
    if codec_id(case.compressor) in TS_UNSUPPORTED_CODECS:
        return "tensorstore's zarr driver does not register the lz4 and lzma codecs"
    if "checksum" in (COMPRESSORS[case.compressor] or {}):
        return 'tensorstore\'s zarr zstd codec rejects the "checksum" member (numcodecs writes it)'
    return None


def ts_write_unsupported(case: Case):
    reason = ts_unsupported(case)
    if reason:
        return reason
    if len(case.shape) <= 1 and case.chunk_order == "F":
        return 'tensorstore refuses to create rank-0/1 arrays with "order": "F"'
    return None


def ts_read(store: Path, path: str) -> np.ndarray:
    t = ts.open(ts_spec(store, path), open=True, read=True).result()
    return np.asarray(t.read().result())


def ts_write(store: Path, case: Case, a: np.ndarray):
    _, fill_json = fill_spec(case.dtype, case.fill)
    meta = {"shape": list(case.shape), "chunks": list(case.chunks), "dtype": case.dtype,
            "compressor": COMPRESSORS[case.compressor], "fill_value": fill_json,
            "order": case.chunk_order, "filters": None, "dimension_separator": case.sep or "."}
    spec = dict(ts_spec(store, case.path), metadata=meta)
    t = ts.open(spec, create=True).result()
    t[...] = native(a)
    if case.sep is None:
        drop_dimension_separator(store, case.path)


# --------------------------------------------------------------------------------------
# libzarr adapters
# --------------------------------------------------------------------------------------


def zarray_doc(case: Case) -> dict:
    _, fill_json = fill_spec(case.dtype, case.fill)
    doc = {"zarr_format": 2, "shape": list(case.shape), "chunks": list(case.chunks),
           "dtype": case.dtype, "compressor": COMPRESSORS[case.compressor],
           "fill_value": fill_json, "order": case.chunk_order, "filters": None}
    if case.sep is not None:
        doc["dimension_separator"] = case.sep
    return doc


def libzarr_write(tool: Tool, tmp: Path, store: Path, case: Case, a: np.ndarray, method: str):
    data = native(a).tobytes(order=case.buf_order)
    scratch = tmp / "scratch"
    if method == "create":
        tool.create(scratch, store, case.path, zarray_doc(case), data, case.buf_order)
        return
    _, fill_json = fill_spec(case.dtype, case.fill)
    # Exercise zarr_array_builder_set_fill_value (raw bytes) for half of the cases.
    if fill_json is not None and sum(case.id.encode()) % 2:
        fill_arg = "hex:" + fill_bytes(case.dtype, case.fill).hex()
    else:
        fill_arg = json.dumps(fill_json)
    tool.build(scratch, store, case.path, dtype=case.dtype, shape=case.shape,
               chunks=_csv(case.chunks), fill=fill_arg, order=case.chunk_order,
               sep=case.sep or "-", compressor=json.dumps(COMPRESSORS[case.compressor]),
               data=data, buf_order=case.buf_order)


def check_libzarr_metadata(store: Path, case: Case):
    """The .zarray libzarr wrote says what was asked, in the form zarr-python writes."""
    meta_path = (store / case.path if case.path else store) / ".zarray"
    doc = json.loads(meta_path.read_text())
    _, fill_json = fill_spec(case.dtype, case.fill)
    assert doc["zarr_format"] == 2
    assert doc["shape"] == list(case.shape)
    assert doc["chunks"] == list(case.chunks)
    assert doc["dtype"] == canonical_dtype(case.dtype)
    assert doc["fill_value"] == fill_json, (doc["fill_value"], fill_json)
    assert doc["order"] == case.chunk_order
    assert doc["filters"] is None
    assert doc.get("dimension_separator", ".") == (case.sep or ".")
    assert norm_codec(doc["compressor"]) == norm_codec(COMPRESSORS[case.compressor])
    return doc


def check_zarr_python_view(z, case: Case):
    dtype, fill, order, comp = zarr_python_meta(z)
    assert dtype == case.ndtype
    assert order == case.chunk_order
    assert comp == norm_codec(COMPRESSORS[case.compressor])
    expected_fill, _ = fill_spec(case.dtype, case.fill)
    if expected_fill is None:
        assert fill is None
    else:
        assert np.asarray(fill).astype(case.ndtype).tobytes() == \
            np.asarray(expected_fill).astype(case.ndtype).tobytes(), (fill, expected_fill)


def check_dump_info(info: dict, case: Case):
    assert info["shape"] == list(case.shape)
    assert info["chunks"] == list(case.chunks)
    assert info["dtype_name"] == canonical_dtype(case.dtype)
    assert info["order"] == case.chunk_order
    assert info["zarr_format"] == 2
    assert info["fill_is_null"] == (case.fill == "null")
    assert bytes.fromhex(info["fill_hex"]) == fill_bytes(case.dtype, case.fill)


def check_others_chunk_keys(writer: str, on_disk: set, a: np.ndarray, case: Case):
    """The chunks zarr-python or tensorstore stored: fill-only chunks are skipped (so libzarr
    has to read missing chunks). Not checked for null fills, where writers differ."""
    if case.fill == "null":
        return
    expected = expected_chunk_keys(a, case)
    if writer == "zarr" and ZARR_MAJOR == 2 and case.fill in ("nan", "nat") \
            and case.ndtype.kind in "cMm":
        # zarr-python 2's emptiness check treats neither complex NaN nor NaT as equal to
        # itself, so it stores fill-only chunks of such arrays.
        assert expected <= on_disk
    else:
        assert on_disk == expected


# --------------------------------------------------------------------------------------
# (a) others write, libzarr reads
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_zarr_python_writes_libzarr_reads(tool, tmp_path, case):
    reason = zarr_python_unsupported(case)
    if reason:
        pytest.skip(reason)
    store = tmp_path / "store"
    a = make_data(case)
    zarr_python_write(store, case, a)
    on_disk = chunk_keys_on_disk(store, case.path)
    check_others_chunk_keys("zarr", on_disk, a, case)
    data, info = tool.dump(tmp_path / "scratch", store, case.path, case.buf_order)
    assert_bytes_equal(data, a, case.buf_order, "libzarr read of zarr-python's array")
    check_dump_info(info, case)
    assert info["nchunks_initialized"] == len(on_disk)


@pytest.mark.parametrize("case", TS_CASE_PARAMS)
def test_tensorstore_writes_libzarr_reads(tool, tmp_path, case):
    reason = ts_write_unsupported(case)
    if reason:
        pytest.skip(reason)
    store = tmp_path / "store"
    a = make_data(case)
    ts_write(store, case, a)
    on_disk = chunk_keys_on_disk(store, case.path)
    check_others_chunk_keys("tensorstore", on_disk, a, case)
    data, info = tool.dump(tmp_path / "scratch", store, case.path, case.buf_order)
    assert_bytes_equal(data, a, case.buf_order, "libzarr read of tensorstore's array")
    check_dump_info(info, case)


# --------------------------------------------------------------------------------------
# (b) libzarr writes, others read
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["create", "build"])
@pytest.mark.parametrize("case", CASE_PARAMS)
def test_libzarr_writes_zarr_python_reads(tool, tmp_path, case, method):
    store = tmp_path / "store"
    a = make_data(case)
    libzarr_write(tool, tmp_path, store, case, a, method)
    check_libzarr_metadata(store, case)
    # Fill-only chunks are not stored; with a null fill every chunk is (zarr-python 2 leaves
    # missing chunks of such arrays uninitialised).
    assert chunk_keys_on_disk(store, case.path) == expected_chunk_keys(a, case)
    # libzarr reads back what it wrote, in the other buffer order too.
    other = "F" if case.buf_order == "C" else "C"
    data, info = tool.dump(tmp_path / "scratch", store, case.path, other)
    assert_bytes_equal(data, a, other, "libzarr read of its own array")
    check_dump_info(info, case)
    reason = zarr_python_unsupported(case)
    if reason:
        pytest.skip(reason)
    z, got = zarr_python_read(store, case.path)
    assert_arrays_identical(got, a, f"zarr-python {zarr.__version__} read of libzarr's array")
    check_zarr_python_view(z, case)


@pytest.mark.parametrize("method", ["create", "build"])
@pytest.mark.parametrize("case", TS_CASE_PARAMS)
def test_libzarr_writes_tensorstore_reads(tool, tmp_path, case, method):
    reason = ts_unsupported(case)
    if reason:
        pytest.skip(reason)
    store = tmp_path / "store"
    a = make_data(case)
    libzarr_write(tool, tmp_path, store, case, a, method)
    got = ts_read(store, case.path)
    assert_arrays_identical(got, a, "tensorstore read of libzarr's array")


# --------------------------------------------------------------------------------------
# Partial writes (read-modify-write, missing chunks created and erased) and partial reads
# --------------------------------------------------------------------------------------

# (start, count) regions for shape (13, 17), chunks (5, 6); None means "write the fill
# value over the whole of chunk (0, 0)", which must erase that chunk again.
REGION_STEPS = [
    ((1, 1), (2, 3)),      # inside chunk (0, 0): creates it, the rest is fill
    ((3, 4), (6, 9)),      # partly covers six chunks: read-modify-write and creation
    ((10, 12), (3, 5)),    # exactly the (edge) corner chunk
    ((5, 6), (5, 6)),      # exactly chunk (1, 1)
    ((0, 13), (13, 4)),    # the last, narrow column of chunks
    ((0, 0), (0, 5)),      # an empty region: nothing happens
    None,                  # fill over chunk (0, 0): erased
]


def region_values(case: Case, count, step: int) -> np.ndarray:
    sub = dataclasses.replace(case, shape=tuple(count), chunks=tuple(max(c, 1) for c in count))
    return make_data(sub, seed=1000 + step)


def apply_regions(write, model: np.ndarray, case: Case):
    """Applies REGION_STEPS through `write(start, count, values)` and to `model`."""
    for step, region in enumerate(REGION_STEPS):
        if region is None:
            start, count = (0, 0), case.chunks
            fill = np.frombuffer(fill_bytes(case.dtype, case.fill), native_dtype(case.ndtype))[0]
            values = np.full(count, fill, dtype=case.ndtype)
        else:
            start, count = region
            values = region_values(case, count, step)
        write(start, count, values)
        model[tuple(slice(s, s + c) for s, c in zip(start, count))] = values


REGION_CASES = [
    Case("<f8", "blosc-lz4", "nan", (13, 17), (5, 6), "C", "C", "."),
    Case(">i2", "zlib", "nonzero", (13, 17), (5, 6), "F", "C", "/"),
    Case("|b1", "zstd", "true", (13, 17), (5, 6), "C", "F", "."),
    Case("<c8", "none", "nonzero", (13, 17), (5, 6), "F", "F", "/"),
    Case(">u4", "blosc-zstd-bitshuffle", "zero", (13, 17), (5, 6), "C", "F", "/"),
]


def _libzarr_region_writer(tool, tmp, store, case):
    def write(start, count, values):
        tool.write_region(tmp / "scratch", store, case.path, start, count,
                          native(values).tobytes(order=case.buf_order), case.buf_order)
    return write


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in REGION_CASES])
def test_libzarr_write_region_others_read(tool, tmp_path, case):
    """libzarr creates an all-fill array (no chunk stored), then writes regions."""
    store = tmp_path / "store"
    fill = np.frombuffer(fill_bytes(case.dtype, case.fill), native_dtype(case.ndtype))[0]
    model = np.full(case.shape, fill, dtype=case.ndtype)
    tool.create(tmp_path / "scratch", store, case.path, zarray_doc(case),
                native(model).tobytes(), "C")
    assert chunk_keys_on_disk(store, case.path) == set(), "an all-fill array stores no chunk"
    apply_regions(_libzarr_region_writer(tool, tmp_path, store, case), model, case)
    assert chunk_keys_on_disk(store, case.path) == expected_chunk_keys(model, case)
    data, _ = tool.dump(tmp_path / "scratch", store, case.path, "C")
    assert_bytes_equal(data, model, "C", "libzarr read after write-region")
    _, got = zarr_python_read(store, case.path)
    assert_arrays_identical(got, model, "zarr-python read after libzarr write-region")
    if ts_unsupported(case) is None:
        assert_arrays_identical(ts_read(store, case.path), model,
                                "tensorstore read after libzarr write-region")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in REGION_CASES])
def test_zarr_python_array_libzarr_write_region(tool, tmp_path, case):
    """Read-modify-write by libzarr of chunks zarr-python compressed."""
    store = tmp_path / "store"
    model = make_data(case)
    zarr_python_write(store, case, model)
    apply_regions(_libzarr_region_writer(tool, tmp_path, store, case), model, case)
    assert chunk_keys_on_disk(store, case.path) == expected_chunk_keys(model, case)
    _, got = zarr_python_read(store, case.path)
    assert_arrays_identical(got, model, "zarr-python read after libzarr write-region")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in REGION_CASES])
def test_tensorstore_array_libzarr_write_region(tool, tmp_path, case):
    """Read-modify-write by libzarr of chunks tensorstore wrote."""
    reason = ts_write_unsupported(case)
    if reason:
        pytest.skip(reason)
    store = tmp_path / "store"
    model = make_data(case)
    ts_write(store, case, model)
    apply_regions(_libzarr_region_writer(tool, tmp_path, store, case), model, case)
    assert chunk_keys_on_disk(store, case.path) == expected_chunk_keys(model, case)
    assert_arrays_identical(ts_read(store, case.path), model,
                            "tensorstore read after libzarr write-region")


READ_REGIONS = {
    (13, 17): [((0, 0), (1, 1)), ((12, 16), (1, 1)), ((4, 5), (7, 8)), ((0, 0), (13, 17)),
               ((2, 0), (0, 17)), ((10, 3), (3, 14))],
    (5, 6, 7): [((1, 2, 3), (3, 3, 4)), ((4, 5, 6), (1, 1, 1)), ((0, 0, 0), (5, 6, 7)),
                ((0, 3, 0), (5, 0, 7)), ((2, 0, 2), (1, 6, 5))],
    (): [((), ())],
}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in [
    Case("<f8", "blosc-lz4", "nan", (13, 17), (5, 6), "F", "C", "/"),
    Case(">i4", "zstd", "nonzero", (5, 6, 7), (2, 4, 3), "C", "F", "."),
    Case("<c8", "lz4", "nonzero", (5, 6, 7), (2, 4, 3), "F", "F", "/"),
    Case("|u1", "none", "zero", (), (), "C", "C", "."),
]])
def test_libzarr_partial_reads(tool, tmp_path, case):
    reason = zarr_python_unsupported(case)
    if reason:
        pytest.skip(reason)
    store = tmp_path / "store"
    a = make_data(case)
    zarr_python_write(store, case, a)
    for start, count in READ_REGIONS[case.shape]:
        for order in "CF":
            data, _ = tool.read_region(tmp_path / "scratch", store, case.path, start, count, order)
            expected = a[tuple(slice(s, s + c) for s, c in zip(start, count))]
            assert_bytes_equal(data, expected, order, f"libzarr read of region {start}+{count}")


# --------------------------------------------------------------------------------------
# Specific edge cases
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("spelled", ["<u1", ">u1", ">i1", "<i1", "<b1", ">b1"])
def test_one_byte_dtypes_spelled_with_byte_order(tool, tmp_path, spelled):
    """Others may write 1-byte types as "<u1", ">i1", "<b1": libzarr reads them, and writes
    "|u1" itself."""
    canonical = canonical_dtype(spelled)
    case = Case(canonical, "blosc-lz4", "true" if spelled[1] == "b" else "nonzero",
                (13, 17), (5, 6), "C", "C", ".")
    store = tmp_path / "store"
    model = make_data(case)
    zarr_python_write(store, case, model)
    meta_path = store / case.path / ".zarray"
    meta = json.loads(meta_path.read_text())
    meta["dtype"] = spelled
    meta_path.write_text(json.dumps(meta, indent=4))

    data, info = tool.dump(tmp_path / "scratch", store, case.path, "C")
    assert_bytes_equal(data, model, "C", f"libzarr read of a {spelled} array")
    assert info["dtype_name"] == canonical
    # libzarr writes into it (read-modify-write) and reads it back.
    apply_regions(_libzarr_region_writer(tool, tmp_path, store, case), model, case)
    assert json.loads(meta_path.read_text())["dtype"] in (spelled, canonical)
    data, _ = tool.dump(tmp_path / "scratch", store, case.path, "F")
    assert_bytes_equal(data, model, "F", "libzarr read after its write-region")
    if ts is not None:
        assert_arrays_identical(ts_read(store, case.path), model,
                                f"tensorstore read of the {spelled} array libzarr wrote into")
    if ZARR_MAJOR == 2:
        _, got = zarr_python_read(store, case.path)
        assert_arrays_identical(got, model, "zarr-python read after libzarr write-region")
    else:
        # zarr-python 3.1 refuses such type strings, which is why libzarr writes "|u1".
        with pytest.raises(ValueError, match="No Zarr data type"):
            zarr_python_read(store, case.path)

    # libzarr creating arrays with the spelled type writes the canonical "|" form.
    spelled_case = dataclasses.replace(case, dtype=spelled)
    for method in ["create", "build"]:
        store2 = tmp_path / f"store-{method}"
        libzarr_write(tool, tmp_path, store2, spelled_case, model, method)
        doc = json.loads((store2 / case.path / ".zarray").read_text())
        assert doc["dtype"] == canonical, method
        _, got = zarr_python_read(store2, case.path)
        assert_arrays_identical(got, model, f"zarr-python read of libzarr's {method} array")


TS_DEFAULT_DTYPES = ["uint8", "bool", "int16", "float32", "float16", "complex128", "uint64"]


@pytest.mark.parametrize("dtype", TS_DEFAULT_DTYPES)
def test_tensorstore_default_metadata_libzarr_reads(tool, tmp_path, dtype):
    """tensorstore's own v2 defaults: blosc lz4 with shuffle -1 (bit shuffle for 1-byte
    types), fill_value null, chunks it chooses; unwritten chunks are missing."""
    if ts is None:
        pytest.skip("tensorstore is not installed in this environment")
    store = tmp_path / "store"
    t = ts.open(ts_spec(store, "arr"), create=True, dtype=getattr(ts, dtype), shape=[13, 17],
                chunk_layout=ts.ChunkLayout(read_chunk_shape=[5, 6])).result()
    meta = json.loads((store / "arr" / ".zarray").read_text())
    assert meta["fill_value"] is None
    assert meta["compressor"] == {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1,
                                  "blocksize": 0}
    case = Case(meta["dtype"], "blosc-autoshuffle", "null", (13, 17), (5, 6))
    region = make_data(dataclasses.replace(case, shape=(7, 11), chunks=(7, 11)))
    t[2:9, 3:14] = native(region)
    model = np.zeros((13, 17), dtype=np.dtype(meta["dtype"]))
    model[2:9, 3:14] = region
    stored = chunk_keys_on_disk(store, "arr")
    assert 0 < len(stored) < 9, "some chunks are missing"
    data, info = tool.dump(tmp_path / "scratch", store, "arr", "F")
    assert_bytes_equal(data, model, "F", "libzarr read of tensorstore's default array")
    assert info["fill_is_null"] and info["fill_value_json"] is None
    assert_arrays_identical(ts_read(store, "arr"), model, "tensorstore's own read")


def padded_chunks(a: np.ndarray, chunks, order: str, fill: bytes):
    """{chunk index: raw chunk bytes in the stored dtype}, edge chunks padded with fill."""
    fill_value = np.frombuffer(fill, native_dtype(a.dtype))[0]
    out = {}
    for idx in itertools.product(*[range(g) for g in chunk_grid(a.shape, chunks)]):
        sl = chunk_slices(idx, a.shape, chunks)
        block = np.full(chunks, fill_value, dtype=a.dtype)
        block[tuple(slice(0, s.stop - s.start) for s in sl)] = a[sl]
        out[idx] = block.tobytes(order=order)
    return out


def write_raw_array(store: Path, path: str, meta: dict, chunk_bytes: dict, sep="."):
    base = store / path
    base.mkdir(parents=True, exist_ok=True)
    (base / ".zarray").write_text(json.dumps(meta, indent=4))
    for idx, blob in chunk_bytes.items():
        key = base / chunk_key(idx, sep)
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(blob)


def zstd_strip_content_size(frame: bytes) -> bytes:
    """Rewrites a single-segment zstd frame header (as numcodecs writes it, with the content
    size) into one without Frame_Content_Size, with a Window_Descriptor instead."""
    assert frame[:4] == b"\x28\xb5\x2f\xfd", "not a zstd frame"
    fhd = frame[4]
    fcs_flag, single, checksum, dict_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
    assert dict_flag == 0
    pos = 5
    window = None
    if not single:
        window = frame[pos]
        pos += 1
    fcs_size = [1 if single else 0, 2, 4, 8][fcs_flag]
    content = int.from_bytes(frame[pos:pos + fcs_size], "little") + (256 if fcs_flag == 1 else 0)
    pos += fcs_size
    if window is None:
        exponent = 0
        while (1 << (10 + exponent)) < content:
            exponent += 1
        window = exponent << 3
    return frame[:4] + bytes([checksum << 2, window]) + frame[pos:]


def zstd_has_content_size(frame: bytes) -> bool:
    fhd = frame[4]
    return bool(fhd >> 6) or bool((fhd >> 5) & 1)


@pytest.mark.parametrize("checksum", [False, True])
def test_zstd_frames_without_content_size(tool, tmp_path, checksum):
    """numcodecs' Zstd always records the content size; other writers (streaming zstd)
    do not. Such frames are made here by rewriting numcodecs' frame header (no `zstandard`
    package is needed). numcodecs 0.15/0.16 cannot decode them, so zarr-python is not
    asked; tensorstore validates them where it is installed."""
    case = Case("<f8", "zstd", "nonzero", (13, 17), (5, 6), "C", "C", ".")
    a = make_data(case)
    codec = numcodecs.Zstd(level=3, checksum=checksum)
    chunks = {}
    for idx, raw in padded_chunks(a, case.chunks, "C", fill_bytes(case.dtype, case.fill)).items():
        frame = zstd_strip_content_size(bytes(codec.encode(raw)))
        assert not zstd_has_content_size(frame)
        chunks[idx] = frame
    meta = zarray_doc(case)
    meta["compressor"] = {"id": "zstd", "level": 3}
    store = tmp_path / "store"
    write_raw_array(store, "arr", meta, chunks)
    data, _ = tool.dump(tmp_path / "scratch", store, "arr", "C")
    assert_bytes_equal(data, a, "C", "libzarr read of zstd frames without content size")
    if ts is not None:
        assert_arrays_identical(ts_read(store, "arr"), a, "tensorstore read (frame validity)")


def test_lz4_chunks_have_numcodecs_length_prefix(tool, tmp_path):
    case = Case("<i4", "lz4", "nonzero", (13, 17), (5, 6), "F", "C", ".")
    a = make_data(case)
    store = tmp_path / "store"
    libzarr_write(tool, tmp_path, store, case, a, "create")
    expected = padded_chunks(a, case.chunks, "F", fill_bytes(case.dtype, case.fill))
    for idx in [(0, 0), (1, 1), (2, 0)]:
        raw = (store / "arr" / chunk_key(idx, ".")).read_bytes()
        assert int.from_bytes(raw[:4], "little") == len(expected[idx])
        assert bytes(numcodecs.LZ4().decode(raw)) == expected[idx], idx


@pytest.mark.parametrize("compressor", [
    {"id": "lz4", "acceleration": 0},
    {"id": "lz4", "acceleration": 70000},
    {"id": "zlib", "level": -1},
    {"id": "gzip", "level": -1},
    {"id": "zstd", "level": 30},
    {"id": "zstd", "level": -200000},
], ids=lambda c: f"{c['id']}-{list(c.values())[1]}")
def test_codec_parameters_numcodecs_passes_to_its_libraries(tool, tmp_path, compressor):
    """numcodecs hands these values to LZ4, zlib and zstd, which read them as their default
    or clamp them: arrays written with them are read, and libzarr writes them back as given."""
    case = Case("<f8", "zstd", "nonzero", (13, 17), (5, 6), "C", "C", ".")
    a = make_data(case)
    codec = numcodecs.get_codec(dict(compressor))
    fill = fill_bytes(case.dtype, case.fill)
    chunks = {idx: bytes(codec.encode(raw))
              for idx, raw in padded_chunks(a, case.chunks, "C", fill).items()}
    meta = zarray_doc(case)
    meta["compressor"] = compressor
    store = tmp_path / "store"
    write_raw_array(store, "arr", meta, chunks)
    data, _ = tool.dump(tmp_path / "scratch", store, "arr", "C")
    assert_bytes_equal(data, a, "C", f"libzarr read of {compressor}")
    out = tmp_path / "out"
    tool.create(tmp_path / "scratch", out, "arr", meta, native(a).tobytes(), "C")
    assert json.loads((out / "arr" / ".zarray").read_text())["compressor"] == compressor
    _, got = zarr_python_read(out, "arr")
    assert_arrays_identical(got, a, f"zarr-python read of libzarr's {compressor}")


def blosc_header(blob: bytes):
    """(flags, typesize, nbytes, blocksize) of a blosc 1 chunk."""
    return blob[2], blob[3], int.from_bytes(blob[4:8], "little"), \
        int.from_bytes(blob[8:12], "little")


BLOSC_SHUFFLE_BITS = 0x01 | 0x04  # byte shuffle, bit shuffle


@pytest.mark.parametrize("dtype", ["|u1", "<i2", ">f4", "<f8", ">c16"])
@pytest.mark.parametrize("comp", ["blosc-lz4", "blosc-zstd-bitshuffle", "blosc-blosclz-noshuffle",
                                  "blosc-autoshuffle", "blosc-blocksize"])
def test_blosc_headers_match_numcodecs(tool, tmp_path, dtype, comp):
    """libzarr's blosc chunks carry the typesize and shuffle numcodecs would use (typesize =
    item size; shuffle -1 = bit shuffle for 1-byte items, else byte shuffle) and an explicit
    blocksize."""
    case = Case(dtype, comp, "zero", (40, 50), (16, 32), "C", "C", ".")
    a = make_data(case)
    store = tmp_path / "store"
    libzarr_write(tool, tmp_path, store, case, a, "build")
    raw_chunks = padded_chunks(a, case.chunks, "C", fill_bytes(case.dtype, case.fill))
    ref_codec = numcodecs.get_codec(dict(COMPRESSORS[comp]))
    for idx in [(0, 0), (2, 0)]:
        ours = blosc_header((store / "arr" / chunk_key(idx, ".")).read_bytes())
        theirs = blosc_header(bytes(ref_codec.encode(np.frombuffer(raw_chunks[idx], a.dtype))))
        assert ours[1] == theirs[1] == case.ndtype.itemsize, "typesize"
        assert ours[2] == theirs[2] == len(raw_chunks[idx]), "nbytes"
        assert ours[0] & BLOSC_SHUFFLE_BITS == theirs[0] & BLOSC_SHUFFLE_BITS, "shuffle flags"
        if COMPRESSORS[comp]["blocksize"]:
            assert ours[3] == theirs[3] == COMPRESSORS[comp]["blocksize"], "blocksize"


def test_blosc_typesize_key(tool, tmp_path):
    """A blosc config with an explicit "typesize" (numcodecs >= 0.16 accepts one; it does not
    write it): libzarr reads such chunks and, writing, uses and keeps it."""
    case = Case("<i2", "blosc-zstd-bitshuffle", "nonzero", (40, 50), (16, 32), "C", "C", ".")
    a = make_data(case)
    cfg = dict(COMPRESSORS[case.compressor], typesize=4)
    chunks = {}
    for idx, raw in padded_chunks(a, case.chunks, "C", fill_bytes(case.dtype, case.fill)).items():
        blob = bytes(numcodecs.blosc.compress(np.frombuffer(raw, "<u4"), b"zstd", 3, 2))
        assert blosc_header(blob)[1] == 4
        chunks[idx] = blob
    meta = dict(zarray_doc(case), compressor=cfg)
    store = tmp_path / "store"
    write_raw_array(store, "arr", meta, chunks)
    data, _ = tool.dump(tmp_path / "scratch", store, "arr", "C")
    assert_bytes_equal(data, a, "C", "libzarr read of blosc chunks with typesize 4")

    store2 = tmp_path / "store2"
    tool.create(tmp_path / "scratch", store2, "arr", meta, native(a).tobytes(), "C")
    written = json.loads((store2 / "arr" / ".zarray").read_text())
    assert written["compressor"].get("typesize") == 4
    assert blosc_header((store2 / "arr" / "0.0").read_bytes())[1] == 4
    try:
        numcodecs.get_codec(dict(cfg))
    except TypeError:
        pytest.skip(f"numcodecs {numcodecs.__version__} does not accept a blosc typesize")
    _, got = zarr_python_read(store2, "arr")
    assert_arrays_identical(got, a, "zarr-python read of libzarr's typesize-4 blosc array")


def test_zarr_python_default_compressor_libzarr_reads(tool, tmp_path):
    """zarr-python's own defaults (2: blosc lz4 shuffle; 3: zstd level 0 for v2)."""
    case = Case("<f4", "none", "zero", (40, 50), (16, 32))
    a = make_data(case)
    store = tmp_path / "store"
    if ZARR_MAJOR == 2:
        z = zarr.open_array(str(store), mode="w", path="arr", shape=a.shape, chunks=case.chunks,
                            dtype=a.dtype)
    else:
        z = zarr.create_array(store=str(store), name="arr", shape=a.shape, chunks=case.chunks,
                              dtype=a.dtype, zarr_format=2)
    z[...] = a
    comp = json.loads((store / "arr" / ".zarray").read_text())["compressor"]
    assert comp["id"] == ("blosc" if ZARR_MAJOR == 2 else "zstd")
    data, _ = tool.dump(tmp_path / "scratch", store, "arr", "C")
    assert_bytes_equal(data, a, "C", "libzarr read of zarr-python's default array")


def test_builder_defaults_follow_zarr_python_2(tool, tmp_path):
    """zarr_array_builder_new defaults: chunks guessed as zarr-python 2 does, fill NaN for
    floats (as xarray writes, so no real 0 is masked), C order, "." separator, and
    libzarr's own compressor, blosc zstd level 1 with byte shuffle in 1 MiB blocks, which
    zarr-python and tensorstore read."""
    shape = (700, 900)
    a = np.arange(math.prod(shape), dtype="<f4").reshape(shape)
    store = tmp_path / "store"
    tool.build(tmp_path / "scratch", store, "arr", dtype="<f4", shape=shape, chunks="-",
               fill="-", order="-", sep="-", compressor="-", data=native(a).tobytes(),
               buf_order="C")
    doc = json.loads((store / "arr" / ".zarray").read_text())
    assert doc["compressor"] == _blosc("zstd", 1, 1, blocksize=1 << 20)
    assert doc["fill_value"] == "NaN"
    assert doc["order"] == "C"
    assert doc.get("dimension_separator", ".") == "."
    if ZARR_MAJOR == 2:
        from zarr.util import guess_chunks
    else:
        from zarr.core.chunk_grids import _guess_chunks as guess_chunks
    assert tuple(doc["chunks"]) == tuple(guess_chunks(shape, 4))
    _, got = zarr_python_read(store, "arr")
    assert_arrays_identical(got, a, "zarr-python read of a default-built array")
    if ts is not None:
        assert_arrays_identical(ts_read(store, "arr"), a,
                                "tensorstore read of a default-built array")


def test_nat_fill_value_string(tool, tmp_path):
    """libzarr accepts the fill value "NaT" and writes it as zarr-python does (int64 min)."""
    for dtype in ["<M8[ns]", "<m8[s]"]:
        case = Case(dtype, "zlib", "nat", (13, 17), (5, 6))
        a = make_data(case)
        store = tmp_path / dtype[1]
        doc = dict(zarray_doc(case), fill_value="NaT")
        tool.create(tmp_path / "scratch", store, "arr", doc, native(a).tobytes(), "C")
        check_libzarr_metadata(store, case)
        assert chunk_keys_on_disk(store, "arr") == expected_chunk_keys(a, case)
        z, got = zarr_python_read(store, "arr")
        assert_arrays_identical(got, a, "zarr-python read of a NaT-filled array")
        check_zarr_python_view(z, case)


UNSUPPORTED_METADATA = {
    "filters": ({"filters": [{"id": "zfpy", "mode": 4}]}, "ZARR_ERR_CODEC_UNSUPPORTED", "zfpy"),
    "filter-dtype": ({"filters": [{"id": "delta", "dtype": "<f8"}]}, "ZARR_ERR_METADATA", "<f8"),
    "object-codec": ({"dtype": "|O", "fill_value": None, "filters": [{"id": "pickle"}]},
                     "ZARR_ERR_CODEC_UNSUPPORTED", "pickle"),
    "unknown-codec": ({"compressor": {"id": "blosc2", "cname": "zstd"}},
                      "ZARR_ERR_CODEC_UNSUPPORTED", "blosc2"),
}


@pytest.mark.parametrize("what", list(UNSUPPORTED_METADATA))
def test_unsupported_features_fail_cleanly(tool, tmp_path, what):
    """Arrays others write with features libzarr 0.1 lacks are refused with a clear status
    and message, never read wrongly."""
    changes, status, word = UNSUPPORTED_METADATA[what]
    case = Case("<i4", "none", "zero", (4, 5), (2, 2))
    store = tmp_path / "store"
    write_raw_array(store, "arr", dict(zarray_doc(case), **changes), {(0, 0): bytes(16)})
    with pytest.raises(ToolError) as err:
        tool.dump(tmp_path / "scratch", store, "arr", "C")
    message = str(err.value)
    assert "exited 1" in message and status in message and word in message, message


def test_libzarr_create_replaces_existing_array(tool, tmp_path):
    """ZARR_MODE_W over an array zarr-python wrote (nested keys) leaves none of its chunks."""
    old = Case(">i4", "blosc-lz4", "zero", (13, 17), (3, 4), "C", "C", "/")
    store = tmp_path / "store"
    zarr_python_write(store, old, make_data(old))
    assert chunk_keys_on_disk(store, "arr")
    new = Case("<f8", "zlib", "nonzero", (13, 17), (5, 6), "F", "C", ".")
    fill = np.frombuffer(fill_bytes(new.dtype, new.fill), native_dtype(new.ndtype))[0]
    model = np.full(new.shape, fill, dtype=new.ndtype)
    tool.create(tmp_path / "scratch", store, "arr", zarray_doc(new), native(model).tobytes(), "C")
    assert chunk_keys_on_disk(store, "arr") == set()
    z, got = zarr_python_read(store, "arr")
    assert_arrays_identical(got, model, "zarr-python read of the replaced array")
    check_zarr_python_view(z, new)


RESIZE_CASES = [
    Case("<f8", "blosc-lz4", "nan", (13, 17), (5, 6), "C", "C", "/"),
    Case(">i2", "zstd", "nonzero", (5, 6, 7), (2, 4, 3), "F", "F", "."),
    Case("|u1", "none", "zero", (13, 17), (5, 6), "F", "C", None),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in RESIZE_CASES])
def test_libzarr_resize_and_append_on_zarr_python_array(tool, tmp_path, case):
    """libzarr rewrites .zarray (resize, append) of a zarr-python array: zarr-python still
    reads it, every other metadata field is kept, and chunks wholly outside the new shape
    are erased."""
    store = tmp_path / "store"
    a = make_data(case)
    zarr_python_write(store, case, a)
    meta_path = store / "arr" / ".zarray"
    before = json.loads(meta_path.read_text())

    small = tuple(max(1, s // 2) for s in case.shape)
    tool.resize(store, "arr", small)
    model = a[tuple(slice(0, s) for s in small)]
    after = json.loads(meta_path.read_text())
    assert after["shape"] == list(small)
    for key in ["chunks", "dtype", "fill_value", "order", "filters"]:
        assert after[key] == before[key], key
    # libzarr re-renders the compressor config: equal once numcodecs fills in defaults
    # (numcodecs 0.15 writes zstd's "checksum": false, libzarr leaves it out).
    assert norm_codec(after["compressor"]) == norm_codec(before["compressor"])
    assert after.get("dimension_separator", ".") == before.get("dimension_separator", ".")
    grid_small = chunk_grid(small, case.chunks)
    for key in chunk_keys_on_disk(store, "arr"):
        idx = tuple(int(i) for i in key.replace("/", ".").split("."))
        assert all(i < g for i, g in zip(idx, grid_small)), f"chunk {key} outside the new shape"
    _, got = zarr_python_read(store, "arr")
    assert_arrays_identical(got, model, "zarr-python read after libzarr resize")

    extra_shape = (3,) + small[1:]
    extra = make_data(dataclasses.replace(case, shape=extra_shape, chunks=extra_shape), seed=77)
    tool.append(tmp_path / "scratch", store, "arr", 0, extra_shape,
                native(extra).tobytes(order=case.buf_order), case.buf_order)
    model = np.concatenate([model, extra], axis=0)
    _, got = zarr_python_read(store, "arr")
    assert_arrays_identical(got, model, "zarr-python read after libzarr append")
    data, info = tool.dump(tmp_path / "scratch", store, "arr", "C")
    assert_bytes_equal(data, model, "C", "libzarr read after its append")
    assert info["shape"] == list(model.shape)
