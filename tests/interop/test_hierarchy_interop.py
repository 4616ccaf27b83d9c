"""Hierarchy interoperability between libzarr and zarr-python 2.18 / 3.x (and xarray).

Runs under either test environment (see scripts/setup-test-env.sh), with the zarr 2 API
or the zarr 3 API (``zarr_format=2``). The C helper ``zarr_tree.c`` runs scripts of
hierarchy operations through libzarr's C API (groups, attributes, arrays, consolidated
metadata, zip stores, copies, v1 migration); it is compiled once per session against
target/release/libzarr.so, as ``zarr_tool.c`` is by test_v2_interop.py.

Covered:
  * libzarr builds a tree (directory, consolidated, zip stored / deflated / consolidated
    in place) -> zarr-python lists it, reads attributes (exact JSON) and data (byte-exact);
  * zarr-python builds the same tree (directory, consolidated, its ZipStore, a deflated
    zip and ZIP64 zips made with zipfile, a stale .zmetadata) -> libzarr walks it;
  * zarr_copy between directory, zip and memory stores, with and without re-encoding;
  * v1 arrays written by hand as zarr 1 / zarr-python 2.1 did: libzarr reads and writes
    them, zarr_migrate_1to2 matches zarr-python 2's migrate_1to2;
  * zarr_group_delete / zarr_group_move as zarr-python then sees them;
  * error paths (node type, escaping zip entries, zip rewrites, malformed documents,
    read-only groups);
  * xarray opens the dataset examples-c/hierarchy.c writes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import math
import os
import shutil
import struct
import subprocess
import warnings
import zipfile
import zlib
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

try:
    import xarray as xr
except ImportError:  # only the zarr-python 3 environment has xarray
    xr = None

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ZARR_MAJOR = int(zarr.__version__.split(".")[0])

# zarr-python's ZipStore writes an entry again whenever a document changes (zipfile warns
# about the duplicate name; readers take the last one). Not what these tests are about.
pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")

# --------------------------------------------------------------------------------------
# The C tool
# --------------------------------------------------------------------------------------


class TreeToolError(AssertionError):
    pass


def _field(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    assert "\t" not in text and "\n" not in text, f"field {text!r} holds a tab or newline"
    return text


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _csv(values) -> str:
    return ",".join(str(int(v)) for v in values)


def parse_json_stream(text: str) -> list:
    """The JSON objects printed one after the other (an object may span lines)."""
    decoder = json.JSONDecoder()
    out, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return out
        obj, pos = decoder.raw_decode(text, pos)
        out.append(obj)


class Script:
    """A zarr_tree script: one operation a line, fields separated by tabs."""

    def __init__(self):
        self.lines: list[str] = []

    def op(self, name, *fields):
        self.lines.append("\t".join([name, *map(_field, fields)]))
        return self

    def may_fail(self, name, *fields):
        return self.op("!" + name, *fields)


class TreeTool:
    _counter = itertools.count()

    def __init__(self, exe: Path, hierarchy_exe: Path):
        self.exe = exe
        self.hierarchy_exe = hierarchy_exe

    def run(self, script: Script, scratch: Path) -> list:
        scratch.mkdir(parents=True, exist_ok=True)
        path = scratch / f"script-{next(self._counter)}.txt"
        path.write_text("\n".join(script.lines) + "\n", encoding="utf-8")
        proc = subprocess.run([str(self.exe), str(path)], capture_output=True, timeout=300)
        stdout = proc.stdout.decode("utf-8")
        if proc.returncode != 0:
            raise TreeToolError(
                f"zarr_tree exited {proc.returncode}:\n{proc.stderr.decode('utf-8', 'replace')}"
                f"\nscript:\n{path.read_text(encoding='utf-8')}")
        return parse_json_stream(stdout)


def statuses(results: list) -> list:
    """The (op, status, message) of the "!" operations, in order."""
    return [(r["op"], r["status"], r.get("message", "")) for r in results if "status" in r]


@pytest.fixture(scope="session")
def tree_tool(tmp_path_factory) -> TreeTool:
    """Compiles zarr_tree.c and examples-c/hierarchy.c against a private snapshot of
    target/release/libzarr.so (building it first unless ZARR_INTEROP_NO_BUILD is set)."""
    if not os.environ.get("ZARR_INTEROP_NO_BUILD"):
        proc = subprocess.run(["cargo", "build", "--release"], cwd=ROOT,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.exit(f"cargo build --release failed:\n{proc.stderr[-4000:]}", returncode=1)
    built = ROOT / "target" / "release" / "libzarr.so"
    if not built.exists():
        pytest.exit("target/release/libzarr.so is missing (run cargo build --release)",
                    returncode=1)
    workdir = tmp_path_factory.mktemp("zarr_tree")
    libdir = workdir / "lib"
    libdir.mkdir()
    shutil.copy2(built, libdir / "libzarr.so")
    os.symlink("libzarr.so", libdir / "libzarr.so.0")
    cc = os.environ.get("CC", "cc")
    exes = {}
    for name, source in [("zarr_tree", HERE / "zarr_tree.c"),
                         ("hierarchy", ROOT / "examples-c" / "hierarchy.c")]:
        exe = workdir / name
        cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
               "-I", str(ROOT / "include"), str(source), "-L", str(libdir), "-lzarr", "-lm",
               f"-Wl,-rpath,{libdir}", "-o", str(exe)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.exit(f"compiling {source.name} failed:\n{proc.stderr}", returncode=1)
        exes[name] = exe
    return TreeTool(exes["zarr_tree"], exes["hierarchy"])


# --------------------------------------------------------------------------------------
# The tree
# --------------------------------------------------------------------------------------

ROOT_ATTRS = {
    "title": "libzarr hierarchy interop",
    "unicode": "Grüße, 世界, Ελληνικά, עברית",
    "non_bmp": "😀 𝄞 𐍈 🇺🇳",
    "escapes": "quote \" backslash \\ slash / newline \n tab \t bell \u0007 nul \u0000",
    "int_2_53_plus_1": 2**53 + 1,
    "int64_max": 2**63 - 1,
    "int64_min": -(2**63),
    "uint64_max": 2**64 - 1,
    "ints": [0, -1, 1, 2**31, -(2**31) - 1, 2**32 + 7],
    "null": None,
    "floats": [0.1, -2.5, 1e-7, 123456789.125, 1.7976931348623157e308, 5e-324, -0.0,
               2.2250738585072014e-308, 1e22, 3.0],
    "bools": [True, False],
    "nested": {"list": [1, [2, [3, {"deep": "yes", "none": None}]]], "empty_obj": {},
               "empty_list": [], "obj": {"a": {"b": {"c": {"d": [1.5, "x"]}}}}},
    "empty_string": "",
    "ключ": "значение",
}

GROUPS = {
    "": ROOT_ATTRS,
    "a": {"level": 1, "name": "a"},
    "a/b": {"level": 2, "nested": {"x": [1, 2, {"y": None}]}},
    "a/b/c": {"level": 3, "big": [2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1]},
    "empty": {},
    "empty/child": {"note": "a group without members"},
    "ünï": {"名前": "ünï", "emoji": "🙂"},
}


def _blosc(cname, clevel, shuffle):
    return {"id": "blosc", "cname": cname, "clevel": clevel, "shuffle": shuffle, "blocksize": 0}


BLOSC_LZ4 = _blosc("lz4", 5, 1)
BLOSC_ZSTD_BIT = _blosc("zstd", 3, 2)
ZSTD = {"id": "zstd", "level": 3}
ZLIB = {"id": "zlib", "level": 1}
GZIP = {"id": "gzip", "level": 5}
BZ2 = {"id": "bz2", "level": 9}


@dataclasses.dataclass(frozen=True)
class ArraySpec:
    path: str
    dtype: str
    shape: tuple
    chunks: tuple
    fill_json: object  # the metadata's fill_value (what libzarr is given)
    fill_py: object  # the same value for zarr-python writers
    compressor: dict | None
    order: str = "C"
    sep: str = "."
    attrs: dict = dataclasses.field(default_factory=dict)
    dims: tuple | None = None
    written: bool = True  # False: no data is written (every chunk is missing)

    @property
    def parent(self) -> str:
        return self.path.rpartition("/")[0]

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]

    @property
    def all_attrs(self) -> dict:
        attrs = dict(self.attrs)
        if self.dims is not None:
            attrs["_ARRAY_DIMENSIONS"] = list(self.dims)
        return attrs


ARRAYS = [
    ArraySpec("temperature", "<f4", (6, 8, 10), (2, 3, 4), "NaN", math.nan, BLOSC_LZ4,
              attrs={"units": "K", "long_name": "température 🌡"},
              dims=("time", "lat", "lon")),
    # zarr-python 2 drops the compressor of 0-d arrays: none here. A v2 scalar has the
    # empty dimension list xarray needs (libzarr writes it).
    ArraySpec("scalar", "<f8", (), (), None, None, None, attrs={"kind": "0-d"}, dims=()),
    ArraySpec("a/counts", "<i4", (20, 30), (7, 8), -1, -1, ZSTD, order="F", sep="/",
              dims=("y", "x")),
    ArraySpec("a/cplx", "<c8", (4, 3), (2, 2), [1.0, -2.0], complex(1.0, -2.0), BZ2),
    ArraySpec("a/b/mask", "|b1", (10,), (4,), False, False, None, attrs={"flag": True}),
    ArraySpec("a/b/times", "<M8[s]", (12,), (5,), -(2**63), np.datetime64("NaT", "s"),
              BLOSC_LZ4, dims=("t",)),
    ArraySpec("a/b/be16", ">i2", (9, 7), (4, 4), -12345, -12345, BLOSC_ZSTD_BIT, sep="/"),
    ArraySpec("a/b/c/deep", ">f8", (5, 5), (2, 2), 0.0, 0.0, ZLIB, sep="/",
              attrs={"nested": {"list": [1, 2.5, None, "s"], "big": 2**63 - 1}},
              dims=("row", "col")),
    ArraySpec("a/b/c/u64", "<u8", (17,), (5,), 2**64 - 1, 2**64 - 1, GZIP),
    ArraySpec("a/b/c/never_written", "|i1", (6, 6), (3, 3), 7, 7, ZSTD, written=False),
    ArraySpec("ünï/données", "<i2", (3, 4), (2, 2), 0, 0, ZSTD, dims=("lignes", "colonnes")),
]


@dataclasses.dataclass
class Tree:
    groups: dict
    arrays: list

    def array(self, path) -> ArraySpec:
        return next(a for a in self.arrays if a.path == path)


def default_tree() -> Tree:
    return Tree(dict(GROUPS), list(ARRAYS))


def chunk_grid(shape, chunks):
    return [math.ceil(s / c) for s, c in zip(shape, chunks)]


def chunk_slices(idx, shape, chunks):
    return tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, shape))


def native_dtype(dt) -> np.dtype:
    return np.dtype(dt).newbyteorder("=")


def fill_bytes(fill_json, dtype) -> bytes | None:
    """A metadata fill value as one native-endian element (None for null)."""
    dt = native_dtype(dtype)
    if fill_json is None:
        return None
    special = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
    if dt.kind in "Mm":
        value = -(2**63) if fill_json == "NaT" else int(fill_json)
        return np.array(value, dtype=np.int64).tobytes()
    if dt.kind == "c":
        re, im = (special.get(v, v) for v in fill_json)
        return np.array(complex(re, im), dtype=dt).tobytes()
    return np.array(special.get(fill_json, fill_json), dtype=dt).tobytes()


def python_fill_bytes(fill, dtype) -> bytes | None:
    """A fill value as zarr-python reports it, as one native-endian element."""
    if fill is None:
        return None
    dt = native_dtype(dtype)
    return np.asarray(fill).astype(dt).tobytes()


def make_data(spec: ArraySpec) -> np.ndarray:
    """Deterministic data with special values, and (when the fill value is not null) an
    interior and the last chunk entirely equal to the fill value, which writers skip."""
    dt = np.dtype(spec.dtype)
    nat = native_dtype(dt)
    n = math.prod(spec.shape)
    rng = np.random.default_rng(zlib.crc32(spec.path.encode()))
    if not spec.written:
        return np.frombuffer(fill_bytes(spec.fill_json, dt) * n, dtype=nat).reshape(spec.shape)
    if dt.kind == "b":
        vals = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(nat)
        vals = rng.integers(info.min, info.max, n, endpoint=True, dtype=nat)
    elif dt.kind == "M":
        vals = rng.integers(0, 2**40, n, dtype=np.int64)
        vals[3::7] = np.iinfo(np.int64).min
        vals = vals.view(nat)
    elif dt.kind == "f":
        vals = (rng.standard_normal(n) * 100).astype(nat)
        if n > 5:
            vals[1::11] = np.nan
            vals[2::13] = np.inf
            vals[3::17] = -0.0
    elif dt.kind == "c":
        vals = np.empty(n, dtype=nat)
        vals.real = rng.standard_normal(n)
        vals.imag = rng.standard_normal(n)
    else:
        raise AssertionError(dt)
    a = vals.reshape(spec.shape)
    fb = fill_bytes(spec.fill_json, dt)
    if fb is not None and spec.shape:
        grid = chunk_grid(spec.shape, spec.chunks)
        holes = {tuple(g - 1 for g in grid)}
        if len(grid) > 1 or grid[0] > 2:
            holes.add(tuple([0] * (len(grid) - 1) + [1]))
        hole_value = np.frombuffer(fb, dtype=nat)[0]
        for idx in holes:
            a[chunk_slices(idx, spec.shape, spec.chunks)] = hole_value
    return a


def norm_codec(cfg):
    if cfg is None:
        return None
    return numcodecs.get_codec(dict(cfg)).get_config()


# --------------------------------------------------------------------------------------
# Snapshots: what a reader sees of a tree, in one comparable form
# --------------------------------------------------------------------------------------


def same_json(a, b) -> bool:
    """JSON equality that also tells 1 from 1.0 and True, and -0.0 from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b


def assert_same_json(actual, expected, what):
    assert same_json(actual, expected), f"{what}:\n  got      {actual!r}\n  expected {expected!r}"


def expected_snapshot(tree: Tree, compressor=dataclasses.MISSING) -> dict:
    """The snapshot every reader must produce (optionally with every array re-encoded)."""
    snap = {}
    for path, attrs in tree.groups.items():
        prefix = path + "/" if path else ""
        def children(names):
            return sorted(n[len(prefix):] for n in names if n.startswith(prefix) and n != path
                          and "/" not in n[len(prefix):])

        snap[path] = {"kind": "group", "attrs": attrs, "groups": children(tree.groups),
                      "arrays": children(a.path for a in tree.arrays)}
    for spec in tree.arrays:
        comp = spec.compressor if compressor is dataclasses.MISSING else compressor
        snap[spec.path] = {
            "kind": "array", "attrs": spec.all_attrs, "shape": list(spec.shape),
            "chunks": list(spec.chunks), "dtype": np.dtype(spec.dtype).str, "order": spec.order,
            "compressor": norm_codec(comp), "fill": fill_bytes(spec.fill_json, spec.dtype),
            "data": make_data(spec).astype(native_dtype(spec.dtype)).tobytes(),
        }
    return snap


def compare_snapshots(actual: dict, expected: dict, who: str):
    assert sorted(actual) == sorted(expected), f"{who}: nodes differ"
    for path, exp in expected.items():
        got = actual[path]
        what = f"{who}: {exp['kind']} {path!r}"
        assert got["kind"] == exp["kind"], what
        assert_same_json(got["attrs"], exp["attrs"], f"{what} attributes")
        if exp["kind"] == "group":
            assert got["groups"] == exp["groups"], f"{what} subgroups"
            assert got["arrays"] == exp["arrays"], f"{what} arrays"
            continue
        for key in ("shape", "chunks", "dtype", "order", "compressor", "fill"):
            assert got[key] == exp[key], f"{what} {key}: {got[key]!r} != {exp[key]!r}"
        if got["data"] != exp["data"]:
            dt = native_dtype(exp["dtype"])
            g = np.frombuffer(got["data"], dtype=dt)
            e = np.frombuffer(exp["data"], dtype=dt)
            bad = [i for i in range(min(len(g), len(e))) if g[i].tobytes() != e[i].tobytes()]
            raise AssertionError(f"{what} data: {len(bad)} of {len(e)} elements differ "
                                 f"(lengths {len(g)}, {len(e)}), first at flat index "
                                 f"{bad[:1]}")


def libzarr_snapshot(results: list, *, dir_store: Path | None = None) -> dict:
    """The snapshot of a zarr_tree walk (checking the walk's own consistency)."""
    snap = {}
    for r in results:
        if r.get("op") != "walk":
            continue
        assert "status" not in r, r
        path = r["path"]
        if r["kind"] == "group":
            assert r["group_path"] == path
            assert r["members"] == sorted(r["groups"] + r["arrays"]), r
            for name in r["groups"]:
                assert r["contains"][name] == ["group", "group"], (path, name, r["contains"])
            for name in r["arrays"]:
                assert r["contains"][name] == ["array", "array"], (path, name, r["contains"])
            snap[path] = {"kind": "group", "attrs": r["attrs"], "groups": r["groups"],
                          "arrays": r["arrays"]}
            continue
        meta = r["metadata"]
        assert r["zarr_format"] == 2
        assert meta["dtype"] == r["dtype_name"]
        assert r["dims"] == r["attrs"].get("_ARRAY_DIMENSIONS"), r
        snap[path] = {
            "kind": "array", "attrs": r["attrs"], "shape": r["shape"], "chunks": r["chunks"],
            "dtype": np.dtype(r["dtype_name"]).str, "order": r["order"],
            "compressor": norm_codec(meta["compressor"]),
            "fill": fill_bytes(r["fill_value"], r["dtype_name"]),
            "data": Path(r["data"]).read_bytes(),
        }
        if dir_store is not None:
            base = dir_store / path
            stored = [p for p in base.rglob("*") if p.is_file() and not p.name.startswith(".")]
            assert r["nchunks_initialized"] == len(stored), (path, r["nchunks_initialized"])
    return snap


def zp_open_group(store, *, consolidated=False, mode="r"):
    """Opens the root group with zarr-python (store: a directory path or a ZipStore)."""
    if ZARR_MAJOR == 2:
        if consolidated:
            return zarr.open_consolidated(store if not isinstance(store, Path) else str(store),
                                          mode=mode)
        return zarr.open_group(store if not isinstance(store, Path) else str(store), mode=mode)
    store = str(store) if isinstance(store, Path) else store
    if consolidated:
        return zarr.open_consolidated(store=store, zarr_format=2, mode=mode)
    return zarr.open_group(store=store, mode=mode, zarr_format=2, use_consolidated=False)


def zp_zipstore(path: Path, mode: str):
    if ZARR_MAJOR == 2:
        return zarr.ZipStore(str(path), mode=mode)
    return zarr.storage.ZipStore(str(path), mode=mode)


@contextlib.contextmanager
def zp_zip_reader(path: Path):
    """zarr-python's ZipStore on `path`, read-only."""
    zs = zp_zipstore(path, "r")
    try:
        yield zs
    except BaseException:
        with contextlib.suppress(Exception):  # zarr 3 cannot close a store it never opened
            zs.close()
        raise
    zs.close()


def zp_array_meta(z):
    if ZARR_MAJOR == 2:
        comp = z.compressor
        return (z.order, None if comp is None else comp.get_config(), z.fill_value,
                np.dtype(z.dtype).str)
    meta = z.metadata
    comp = meta.compressor
    return (meta.order, None if comp is None else comp.get_config(), meta.fill_value,
            np.dtype(z.dtype).str)


def zarr_python_snapshot(root) -> dict:
    snap = {}

    def walk(group, path):
        groups = sorted(group.group_keys())
        arrays = sorted(group.array_keys())
        snap[path] = {"kind": "group", "attrs": dict(group.attrs), "groups": groups,
                      "arrays": arrays}
        for name in arrays:
            z = group[name]
            full = f"{path}/{name}" if path else name
            order, comp, fill, dtype = zp_array_meta(z)
            data = np.asarray(z[...])
            snap[full] = {
                "kind": "array", "attrs": dict(z.attrs), "shape": list(z.shape),
                "chunks": list(z.chunks), "dtype": dtype, "order": order,
                "compressor": norm_codec(comp), "fill": python_fill_bytes(fill, dtype),
                "data": data.astype(native_dtype(data.dtype)).tobytes(),
            }
        for name in groups:
            walk(group[name], f"{path}/{name}" if path else name)

    walk(root, "")
    return snap


# --------------------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------------------


def data_file(scratch: Path, spec: ArraySpec) -> Path:
    scratch.mkdir(parents=True, exist_ok=True)
    path = scratch / f"data-{zlib.crc32(spec.path.encode()):08x}.bin"
    a = make_data(spec)
    path.write_bytes(a.astype(native_dtype(a.dtype)).tobytes())
    return path


def libzarr_build_script(script: Script, store: str, tree: Tree, scratch: Path, *,
                         zip_writer: bool):
    """Operations building `tree` in the opened store named `store`. In a zip opened "w"
    every entry is written once: groups are created "w-" and attributes set in one call,
    and dimension names go with the creation attributes unless there are none."""
    by_depth = sorted(tree.groups.items(), key=lambda kv: kv[0].count("/") if kv[0] else -1)
    for i, (path, attrs) in enumerate(by_depth):
        if path == "":
            script.op("group", store, "", "w")
        else:
            script.op("group", store, path, "w-" if zip_writer or i % 2 else "a")
        if not attrs:
            continue
        if zip_writer or i % 2 == 0:
            script.op("gattrs", store, path, _json(attrs))
        else:  # one attribute at a time
            for key, value in attrs.items():
                script.op("gattr", store, path, key, _json(value))
    for spec in tree.arrays:
        attrs, dims = dict(spec.attrs), spec.dims
        if zip_writer and attrs and dims is not None:
            attrs, dims = spec.all_attrs, None
        data = data_file(scratch, spec) if spec.written else "-"
        script.op("array", store, spec.parent, spec.name, spec.dtype, _csv(spec.shape),
                  _csv(spec.chunks), _json(spec.fill_json), spec.order, spec.sep,
                  _json(spec.compressor), _json(attrs) if attrs else "-",
                  ",".join(dims) if dims is not None else "-", str(data), "w-")


def zarr_python_build(store, tree: Tree):
    """Writes `tree` with zarr-python (store: a directory path or a ZipStore). Chunks equal
    to the fill value are not stored, except in a ZipStore, which cannot delete them."""
    if ZARR_MAJOR == 2:
        root = zarr.open_group(str(store) if isinstance(store, Path) else store, mode="w")
    else:
        root = zarr.open_group(store=str(store) if isinstance(store, Path) else store,
                               mode="w", zarr_format=2)
    for path, attrs in sorted(tree.groups.items()):
        g = root if path == "" else (root.require_group(path) if ZARR_MAJOR == 2 else
                                     _zp3_require_group(root, path))
        if attrs:
            g.attrs.update(attrs)
    zarr_python_build_arrays(root, tree.arrays, write_empty=not isinstance(store, Path))
    return root


def _zp3_require_group(root, path):
    g = root
    for part in path.split("/"):
        g = g.require_group(part)
    return g


def zp_consolidate(store):
    if ZARR_MAJOR == 2:
        zarr.consolidate_metadata(str(store) if isinstance(store, Path) else store)
    else:
        zarr.consolidate_metadata(str(store) if isinstance(store, Path) else store,
                                  zarr_format=2)


def zip_directory(src: Path, dest: Path, *, compression, force_zip64=False):
    """Zips a directory tree with Python's zipfile (entries in sorted order)."""
    with zipfile.ZipFile(dest, "w", compression=compression, allowZip64=True) as zf:
        for p in sorted(src.rglob("*")):
            if p.is_file():
                name = p.relative_to(src).as_posix()
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = compression
                with zf.open(info, "w", force_zip64=force_zip64) as f:
                    f.write(p.read_bytes())


def metadata_documents(directory: Path) -> dict:
    """Every .zarray, .zgroup and .zattrs below a directory, parsed: what .zmetadata holds."""
    return {p.relative_to(directory).as_posix(): json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(directory.rglob("*"))
            if p.is_file() and p.name in (".zarray", ".zgroup", ".zattrs")}


def tree_files(directory: Path) -> dict:
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def libzarr_walk(tree_tool, tmp: Path, spec: str, how="plain", path="") -> list:
    out = tmp / f"walk-{next(TreeTool._counter)}"
    out.mkdir(parents=True)
    script = Script().op("store", "S", spec, "r").op("walk", "S", path, str(out), how)
    return tree_tool.run(script, tmp / "scratch")


# --------------------------------------------------------------------------------------
# 1. libzarr builds a tree, zarr-python reads it
# --------------------------------------------------------------------------------------

LIBZARR_VARIANTS = ["dir", "dir-consolidated", "zip-stored", "zip-deflated",
                    "zip-consolidated-appended"]


@pytest.mark.parametrize("variant", LIBZARR_VARIANTS)
def test_libzarr_tree_zarr_python_reads(tree_tool, tmp_path, variant):
    tree = default_tree()
    scratch = tmp_path / "scratch"
    expected = expected_snapshot(tree)
    script = Script()
    if variant.startswith("dir"):
        target = tmp_path / "tree.zarr"
        script.op("store", "S", f"dir:{target}", "w")
        libzarr_build_script(script, "S", tree, scratch, zip_writer=False)
        if variant == "dir-consolidated":
            script.op("consolidate", "S", "")
        spec = f"dir:{target}"
    else:
        target = tmp_path / "tree.zip"
        kind = "zipd" if variant == "zip-deflated" else "zip"
        script.op("store", "S", f"{kind}:{target}", "w")
        libzarr_build_script(script, "S", tree, scratch, zip_writer=True)
        script.op("close", "S").op("free", "S")
        if variant == "zip-consolidated-appended":
            # Consolidation reads what is in the zip: reopen it to add .zmetadata.
            script.op("store", "A", f"zip:{target}", "a").op("consolidate", "A", "")
            script.op("close", "A")
        spec = f"zip:{target}"
    tree_tool.run(script, scratch)

    consolidated = "consolidated" in variant
    if variant.startswith("dir"):
        compare_snapshots(zarr_python_snapshot(zp_open_group(target, consolidated=consolidated)),
                          expected, f"zarr-python reading libzarr's {variant}")
        if consolidated:
            doc = json.loads((target / ".zmetadata").read_text(encoding="utf-8"))
            assert doc["zarr_consolidated_format"] == 1
            assert_same_json(doc["metadata"], metadata_documents(target), ".zmetadata")
        # The chunks libzarr skipped (equal to the fill value) are missing on disk too.
        assert not (target / "a" / "counts" / "2" / "3").exists()
        assert (target / "a" / "counts" / "0" / "0").exists()
        assert not any((target / "a/b/c/never_written").glob("[0-9]*"))
    else:
        with zipfile.ZipFile(target) as zf:
            infos = zf.infolist()
            names = [i.filename for i in infos]
            assert len(names) == len(set(names)), "libzarr wrote an entry twice"
            method = zipfile.ZIP_DEFLATED if variant == "zip-deflated" else zipfile.ZIP_STORED
            assert {i.compress_type for i in infos} == {method}
            assert zf.testzip() is None
            assert "a/counts/0/0" in names and "a/counts/2/3" not in names
            if consolidated:
                doc = json.loads(zf.read(".zmetadata"))
                extracted = tmp_path / "extracted"
                zf.extractall(extracted)
                assert_same_json(doc["metadata"], metadata_documents(extracted), ".zmetadata")
        with zp_zip_reader(target) as zs:
            compare_snapshots(zarr_python_snapshot(zp_open_group(zs, consolidated=consolidated)),
                              expected, f"zarr-python ZipStore reading libzarr's {variant}")
    # libzarr reads back what it wrote, through the same walk as for zarr-python's trees.
    results = libzarr_walk(tree_tool, tmp_path, spec, "consolidated" if consolidated else "plain")
    compare_snapshots(libzarr_snapshot(results), expected, f"libzarr reading its {variant}")


# --------------------------------------------------------------------------------------
# 2. zarr-python builds a tree, libzarr walks it
# --------------------------------------------------------------------------------------

ZARR_PYTHON_VARIANTS = ["dir", "dir-consolidated", "zipstore", "zipstore-consolidated",
                        "zip-deflated", "zip64-entries", "zip64-archive"]


def zarr_python_tree(tmp_path: Path, variant: str, tree: Tree):
    """Writes `tree` with zarr-python as `variant`; returns (store spec, consolidated)."""
    directory = tmp_path / "tree.zarr"
    if variant.startswith("zipstore"):
        target = tmp_path / "tree.zip"
        zs = zp_zipstore(target, "w")
        zarr_python_build(zs, tree)
        if variant == "zipstore-consolidated":
            zp_consolidate(zs)
        zs.close()
        return f"zip:{target}", variant.endswith("consolidated")
    zarr_python_build(directory, tree)
    if variant == "dir-consolidated":
        zp_consolidate(directory)
    if variant.startswith("dir"):
        return f"dir:{directory}", variant.endswith("consolidated")
    target = tmp_path / "tree.zip"
    if variant == "zip-deflated":
        zip_directory(directory, target, compression=zipfile.ZIP_DEFLATED)
    elif variant == "zip64-entries":
        # Every local header carries a ZIP64 extra field (sizes 0xFFFFFFFF).
        zip_directory(directory, target, compression=zipfile.ZIP_DEFLATED, force_zip64=True)
    else:
        # A ZIP64 archive throughout: ZIP64 extra fields in the central directory too and
        # the ZIP64 end-of-central-directory record, as zipfile writes for huge archives.
        limits = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 0, 0
        try:
            zip_directory(directory, target, compression=zipfile.ZIP_STORED, force_zip64=True)
        finally:
            zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = limits
        raw = target.read_bytes()
        assert b"PK\x06\x06" in raw and b"PK\x06\x07" in raw, "no ZIP64 end records"
    return f"zip:{target}", False


@pytest.mark.parametrize("variant", ZARR_PYTHON_VARIANTS)
def test_zarr_python_tree_libzarr_reads(tree_tool, tmp_path, variant):
    tree = default_tree()
    expected = expected_snapshot(tree)
    spec, consolidated = zarr_python_tree(tmp_path, variant, tree)
    dir_store = tmp_path / "tree.zarr" if spec.startswith("dir:") else None
    # zarr-python agrees with itself (guards the expectations).
    if dir_store is not None:
        compare_snapshots(zarr_python_snapshot(zp_open_group(dir_store, consolidated=consolidated)),
                          expected, "zarr-python reading its own tree")
    else:
        with zp_zip_reader(Path(spec[len("zip:"):])) as zs:
            compare_snapshots(zarr_python_snapshot(zp_open_group(zs, consolidated=consolidated)),
                              expected, "zarr-python reading its own zip")
    for how in ["plain", "consolidated"] if consolidated else ["plain"]:
        results = libzarr_walk(tree_tool, tmp_path, spec, how)
        compare_snapshots(libzarr_snapshot(results, dir_store=dir_store), expected,
                          f"libzarr reading zarr-python's {variant} ({how})")
    # zarr_group_attr_get gives the large integers exactly.
    script = Script().op("store", "S", spec, "r")
    for key in ["int_2_53_plus_1", "int64_max", "int64_min", "uint64_max", "floats", "non_bmp"]:
        script.op("gattr-get", "S", "", key)
    script.may_fail("gattr-get", "S", "", "missing")
    results = tree_tool.run(script, tmp_path / "scratch")
    values = [r["value"] for r in results if "value" in r]
    for key, value in zip(["int_2_53_plus_1", "int64_max", "int64_min", "uint64_max", "floats",
                           "non_bmp"], values):
        assert_same_json(value, ROOT_ATTRS[key], f"attribute {key}")
    assert [s[1] for s in statuses(results)] == ["ZARR_ERR_NOT_FOUND"]


def test_stale_consolidated_metadata(tree_tool, tmp_path):
    """Walking a hierarchy opened through zarr_group_open_consolidated shows what the
    consolidated metadata holds, as zarr-python's consolidated view does (nodes added later
    are not listed, attributes updated later are not seen: no listing or document request
    goes to the store); nodes added later still open when asked for by path."""
    tree = default_tree()
    directory = tmp_path / "tree.zarr"
    zarr_python_build(directory, tree)
    zp_consolidate(directory)
    # Added without consolidating again.
    late = Tree({"late": {"added": "after consolidation"}, "late/deeper": {}},
                [ArraySpec("late/deeper/arr", "<f8", (7,), (3,), 1.5, 1.5, ZSTD,
                           attrs={"late": True}),
                 ArraySpec("a/late_array", "<u2", (4, 4), (2, 2), 3, 3, None, dims=("p", "q"))])
    root = zp_open_group(directory, mode="r+")
    for path, attrs in late.groups.items():
        g = root.require_group(path) if ZARR_MAJOR == 2 else _zp3_require_group(root, path)
        g.attrs.update(attrs)
    zarr_python_build_arrays(root, late.arrays)
    # An attribute changed after consolidation: consolidated readers keep the old value.
    root["a"].attrs["level"] = 100

    full = Tree({**tree.groups, **late.groups}, tree.arrays + late.arrays)
    expected = expected_snapshot(full)
    plain = libzarr_snapshot(libzarr_walk(tree_tool, tmp_path, f"dir:{directory}", "plain"))
    expected["a"] = dict(expected["a"], attrs={"level": 100, "name": "a"},
                         arrays=sorted(expected["a"]["arrays"]))
    compare_snapshots(plain, expected, "libzarr plain walk")
    consolidated = libzarr_snapshot(
        libzarr_walk(tree_tool, tmp_path, f"dir:{directory}", "consolidated"))
    compare_snapshots(consolidated, expected_snapshot(tree), "libzarr consolidated walk")

    # By path, from the consolidated root (zarr_group_contains, then open_group/open_array
    # with nested paths): the new nodes are there, next to consolidated ones.
    script = Script().op("store", "S", f"dir:{directory}", "r")
    members = ["late", "late/deeper", "late/deeper/arr", "a/late_array", "a/b/c/deep",
               "a/b", "a/nothing"]
    for member in members:
        script.op("member", "S", "", "consolidated", member)
    script.may_fail("open-group", "S", "late", "r", "consolidated")  # no late/.zmetadata
    results = tree_tool.run(script, tmp_path / "scratch")
    found = {r["member"]: (r["kind"], r["attrs"]) for r in results if "member" in r}
    assert found == {
        "late": ("group", {"added": "after consolidation"}), "late/deeper": ("group", {}),
        "late/deeper/arr": ("array", {"late": True}),
        "a/late_array": ("array", {"_ARRAY_DIMENSIONS": ["p", "q"]}),
        "a/b/c/deep": ("array", tree.array("a/b/c/deep").all_attrs),
        "a/b": ("group", GROUPS["a/b"]), "a/nothing": ("none", None)}
    assert [s[1] for s in statuses(results)] == ["ZARR_ERR_NOT_FOUND"]
    assert ".zmetadata" in statuses(results)[-1][2]
    # zarr-python's consolidated view has the old value too.
    assert zp_open_group(directory, consolidated=True)["a"].attrs["level"] == 1


def zarr_python_build_arrays(root, arrays, write_empty=False):
    for spec in arrays:
        parent = root[spec.parent] if spec.parent else root
        codec = None if spec.compressor is None else numcodecs.get_codec(dict(spec.compressor))
        if ZARR_MAJOR == 2:
            z = parent.create_dataset(spec.name, shape=spec.shape, chunks=spec.chunks,
                                      dtype=spec.dtype, compressor=codec, filters=None,
                                      fill_value=spec.fill_py, order=spec.order,
                                      dimension_separator=spec.sep,
                                      write_empty_chunks=write_empty)
            if spec.all_attrs:
                z.attrs.update(spec.all_attrs)
        else:
            z = parent.create_array(name=spec.name, shape=spec.shape, chunks=spec.chunks,
                                    dtype=spec.dtype, compressors=codec, filters=None,
                                    fill_value=spec.fill_py, order=spec.order,
                                    chunk_key_encoding={"name": "v2", "separator": spec.sep},
                                    attributes=spec.all_attrs or None,
                                    config={"write_empty_chunks": write_empty})
        if spec.written:
            z[...] = make_data(spec)


# --------------------------------------------------------------------------------------
# 3. zarr_copy between directory, zip and memory stores
# --------------------------------------------------------------------------------------

ZSTD1 = {"id": "zstd", "level": 1}

# (name, steps): each step copies the previous result: (source kind, target kind, compressor
# or None for "as stored"). Kinds: dir, zip (stored entries), zipd (deflated), mem. The
# first source is zarr-python's tree (dir) or its ZipStore zip (zip).
COPY_CHAINS = {
    "dir-dir": [("dir", "dir", None)],
    "dir-dir-zstd": [("dir", "dir", ZSTD1)],
    "dir-zip": [("dir", "zip", None)],
    "dir-zipd-uncompressed": [("dir", "zipd", "null")],
    "zip-dir": [("zip", "dir", None)],
    "zip-mem-dir-blosc": [("zip", "mem", BLOSC_LZ4), ("mem", "dir", None)],
    "dir-mem-zip-zlib": [("dir", "mem", None), ("mem", "zip", ZLIB)],
}


@pytest.mark.parametrize("chain", list(COPY_CHAINS))
def test_zarr_copy(tree_tool, tmp_path, chain):
    tree = default_tree()
    steps = COPY_CHAINS[chain]
    source_dir = tmp_path / "source.zarr"
    source_zip = tmp_path / "source.zip"
    if steps[0][0] == "dir":
        zarr_python_build(source_dir, tree)
        source = f"dir:{source_dir}"
    else:
        zs = zp_zipstore(source_zip, "w")
        zarr_python_build(zs, tree)
        zs.close()
        source = f"zip:{source_zip}"
    script = Script().op("store", "S0", source, "r")
    final_compressor = dataclasses.MISSING
    target = None
    for i, (_, kind, compressor) in enumerate(steps, start=1):
        if kind == "mem":
            spec = "mem"
        elif kind == "dir":
            target = tmp_path / f"copy{i}.zarr"
            spec = f"dir:{target}"
        else:
            target = tmp_path / f"copy{i}.zip"
            spec = f"{kind}:{target}"
        script.op("store", f"S{i}", spec, "w")
        script.op("copy", f"S{i - 1}", "", f"S{i}", "", "-" if compressor is None else
                  _json(None if compressor == "null" else compressor), "w")
        if kind.startswith("zip"):
            script.op("close", f"S{i}")
        if compressor is not None:
            final_compressor = None if compressor == "null" else compressor
    tree_tool.run(script, tmp_path / "scratch")

    expected = expected_snapshot(tree, final_compressor)
    if target.suffix == ".zip":
        with zipfile.ZipFile(target) as zf:
            method = zipfile.ZIP_DEFLATED if steps[-1][1] == "zipd" else zipfile.ZIP_STORED
            assert {i.compress_type for i in zf.infolist()} == {method}
        with zp_zip_reader(target) as zs:
            got = zarr_python_snapshot(zp_open_group(zs))
    else:
        got = zarr_python_snapshot(zp_open_group(target))
    compare_snapshots(got, expected, f"zarr-python reading the copy ({chain})")
    if chain == "dir-dir":
        # Copied as stored: the same chunk files, byte for byte, and the same metadata
        # documents (as JSON; an absent .zattrs is an empty one).
        src, dst = tree_files(source_dir), tree_files(target)
        is_doc = lambda k: k.rsplit("/", 1)[-1].startswith(".z")  # noqa: E731
        assert {k: v for k, v in dst.items() if not is_doc(k)} == \
            {k: v for k, v in src.items() if not is_doc(k)}
        assert {k for k in dst if k.endswith((".zarray", ".zgroup"))} == \
            {k for k in src if k.endswith((".zarray", ".zgroup"))}
        for key in {k for k in list(src) + list(dst) if is_doc(k)}:
            empty = b"{}" if key.endswith(".zattrs") else None
            got, want = json.loads(dst.get(key, empty)), json.loads(src.get(key, empty))
            if key.endswith(".zarray"):
                # libzarr renders the codec's configuration without defaults zarr-python
                # spells out (zstd "checksum": false).
                got["compressor"] = norm_codec(got["compressor"])
                want["compressor"] = norm_codec(want["compressor"])
                # ... and always writes the separator.
                want.setdefault("dimension_separator", ".")
            assert_same_json(got, want, f"copied {key}")


def test_zarr_copy_single_array_and_modes(tree_tool, tmp_path):
    """An array copied to a nested path (parents created), re-encoded; w- refuses an
    existing target, a adds to it; the source is unchanged."""
    tree = default_tree()
    source = tmp_path / "source.zarr"
    zarr_python_build(source, tree)
    before = tree_files(source)
    target = tmp_path / "target.zarr"
    script = (Script().op("store", "S", f"dir:{source}", "r").op("store", "T", f"dir:{target}", "w")
              .op("copy", "S", "a/counts", "T", "x/y/counts", _json(ZSTD1), "w")
              .may_fail("copy", "S", "a/counts", "T", "x/y/counts", "-", "w-")
              .may_fail("copy", "S", "a/b", "T", "x", "-", "w-")
              .op("copy", "S", "a/b", "T", "x", "-", "a")
              .may_fail("copy", "S", "nothing/here", "T", "z", "-", "w")
              .may_fail("copy", "S", "a", "T", "z", "-", "r"))
    results = tree_tool.run(script, tmp_path / "scratch")
    assert [s[1] for s in statuses(results)] == [
        "ZARR_ERR_EXISTS", "ZARR_ERR_EXISTS", "ZARR_ERR_NOT_FOUND", "ZARR_ERR_INVALID_ARG"]
    assert tree_files(source) == before
    root = zp_open_group(target)
    assert sorted(root["x"].group_keys()) == ["c", "y"]
    assert sorted(root["x"].array_keys()) == ["be16", "mask", "times"]
    counts = tree.array("a/counts")
    z = root["x/y/counts"]
    assert norm_codec(zp_array_meta(z)[1]) == norm_codec(ZSTD1)
    assert np.asarray(z[...]).tobytes() == make_data(counts).tobytes()
    assert dict(z.attrs) == counts.all_attrs
    deep = tree.array("a/b/c/deep")
    assert np.asarray(root["x/c/deep"][...]).astype(">f8").tobytes() == \
        make_data(deep).astype(">f8").tobytes()
    assert_same_json(dict(root["x/c"].attrs), GROUPS["a/b/c"], "x/c attributes")


def test_zarr_copy_into_itself_is_refused(tree_tool, tmp_path):
    directory = tmp_path / "tree.zarr"
    zarr_python_build(directory, default_tree())
    before = tree_files(directory)
    script = (Script().op("store", "S", f"dir:{directory}", "r+")
              .may_fail("copy", "S", "a", "S", "a/b/copy", "-", "w")
              .may_fail("copy", "S", "", "S", "copy", "-", "w"))
    got = statuses(tree_tool.run(script, tmp_path / "scratch"))
    assert [s[1] for s in got] == ["ZARR_ERR_INVALID_ARG"] * 2, got
    assert tree_files(directory) == before


def test_zarr_copy_into_itself_through_two_handles(tree_tool, tmp_path):
    directory = tmp_path / "tree.zarr"
    zarr_python_build(directory, Tree({"": {}, "a": {}},
                                      [ArraySpec("a/x", "<i4", (4,), (2,), 0, 0, None)]))
    script = (Script().op("store", "S", f"dir:{directory}", "r")
              .op("store", "T", f"dir:{directory}", "r+")
              .may_fail("copy", "S", "a", "T", "a/copy", "-", "w"))
    path = tmp_path / "script.txt"
    path.write_text("\n".join(script.lines) + "\n", encoding="utf-8")
    try:
        # Fixed, this takes milliseconds; the recursion takes about a minute.
        proc = subprocess.run([str(tree_tool.exe), str(path)], capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("zarr_copy did not return within 10 s")
    got = statuses(parse_json_stream(proc.stdout.decode("utf-8")))
    assert [s[1] for s in got] == ["ZARR_ERR_INVALID_ARG"], [s[:2] for s in got]


# --------------------------------------------------------------------------------------
# 4. zarr_group_delete and zarr_group_move, as zarr-python then sees them
# --------------------------------------------------------------------------------------


def test_delete_and_move(tree_tool, tmp_path):
    tree = default_tree()
    directory = tmp_path / "tree.zarr"
    zarr_python_build(directory, tree)
    script = (Script().op("store", "S", f"dir:{directory}", "r+")
              .op("delete", "S", "a", "b/c", "r+", "plain")
              .op("delete", "S", "", "scalar", "r+", "plain")
              .op("move", "S", "", "empty", "moved/deeper/empty2")
              .op("move", "S", "a", "counts", "b/counts_moved")
              .may_fail("move", "S", "", "a", "a/b/inside")
              .may_fail("move", "S", "", "temperature", "a")
              .may_fail("delete", "S", "", "no/such/node", "r+", "plain"))
    results = tree_tool.run(script, tmp_path / "scratch")
    assert [s[1] for s in statuses(results)] == [
        "ZARR_ERR_INVALID_ARG", "ZARR_ERR_EXISTS", "ZARR_ERR_NOT_FOUND"]

    moved = Tree(
        {path if not path.startswith("empty") else "moved/deeper/empty2" + path[5:]: attrs
         for path, attrs in tree.groups.items() if not path.startswith("a/b/c")},
        [dataclasses.replace(a, path="a/b/counts_moved") if a.path == "a/counts" else a
         for a in tree.arrays if not a.path.startswith("a/b/c/") and a.path != "scalar"])
    moved.groups["moved"] = {}
    moved.groups["moved/deeper"] = {}
    expected = expected_snapshot(moved)
    # make_data is seeded by path: the moved array keeps the original data.
    expected["a/b/counts_moved"]["data"] = expected_snapshot(tree)["a/counts"]["data"]
    compare_snapshots(zarr_python_snapshot(zp_open_group(directory)), expected,
                      "zarr-python after libzarr's delete and move")
    assert not (directory / "a" / "b" / "c").exists()
    assert not (directory / "empty").exists()


# --------------------------------------------------------------------------------------
# 5. v1 arrays
# --------------------------------------------------------------------------------------

V1_CASES = {
    "blosc": dict(dtype="<f8", shape=(7, 9), chunks=(3, 4), compression="blosc",
                  compression_opts={"cname": "lz4", "clevel": 5, "shuffle": 1},
                  fill_value=0.0, order="C"),
    "blosc-zstd-F": dict(dtype="<i2", shape=(6, 5, 4), chunks=(4, 2, 3), compression="blosc",
                         compression_opts={"cname": "zstd", "clevel": 3, "shuffle": 2},
                         fill_value=-7, order="F"),
    "zlib": dict(dtype="<i4", shape=(10,), chunks=(4,), compression="zlib",
                 compression_opts=1, fill_value=42, order="C"),
    "none": dict(dtype=">u2", shape=(5, 6), chunks=(5, 2), compression="none",
                 compression_opts=None, fill_value=None, order="F"),
}
V1_ATTRS = {"v1": True, "big": 2**63 - 1, "unicode": "ä😀", "nested": {"l": [1, None]}}


def v1_codec(case):
    if case["compression"] == "blosc":
        return numcodecs.Blosc(**case["compression_opts"])
    if case["compression"] == "zlib":
        return numcodecs.Zlib(case["compression_opts"])
    return None


def write_v1_array(directory: Path, case: dict, data: np.ndarray, missing: set):
    """A v1 array as zarr 1.x / zarr-python 2.1 laid it out: `meta`, `attrs` and one file
    per chunk named "i.j", each the whole (edge-padded) chunk in the array's order."""
    directory.mkdir(parents=True)
    meta = {"zarr_format": 1, "shape": list(case["shape"]), "chunks": list(case["chunks"]),
            "dtype": case["dtype"], "compression": case["compression"],
            "compression_opts": case["compression_opts"], "fill_value": case["fill_value"],
            "order": case["order"]}
    (directory / "meta").write_text(json.dumps(meta, indent=4, sort_keys=True))
    (directory / "attrs").write_text(json.dumps(V1_ATTRS, indent=4, sort_keys=True,
                                                ensure_ascii=False), encoding="utf-8")
    codec = v1_codec(case)
    dt = np.dtype(case["dtype"])
    fill = 0 if case["fill_value"] is None else case["fill_value"]
    for idx in itertools.product(*map(range, chunk_grid(case["shape"], case["chunks"]))):
        if idx in missing:
            continue
        block = np.full(case["chunks"], fill, dtype=dt)
        part = data[chunk_slices(idx, case["shape"], case["chunks"])]
        block[tuple(slice(0, s) for s in part.shape)] = part
        raw = block.tobytes(order=case["order"])
        (directory / ".".join(map(str, idx))).write_bytes(codec.encode(raw) if codec else raw)


def read_v1_chunk(directory: Path, case: dict, idx) -> np.ndarray:
    raw = (directory / ".".join(map(str, idx))).read_bytes()
    codec = v1_codec(case)
    if codec:
        raw = codec.decode(raw)
    return np.frombuffer(bytes(raw), dtype=np.dtype(case["dtype"])).reshape(
        case["chunks"], order=case["order"])


@pytest.mark.parametrize("name", list(V1_CASES))
def test_v1_read_write_migrate(tree_tool, tmp_path, name):
    case = V1_CASES[name]
    dt = np.dtype(case["dtype"])
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    shape = case["shape"]
    if dt.kind == "f":
        data = rng.standard_normal(shape).astype(dt)
    else:
        info = np.iinfo(dt)
        data = rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    grid = chunk_grid(shape, case["chunks"])
    missing = {tuple(g - 1 for g in grid)}
    fill = 0 if case["fill_value"] is None else case["fill_value"]
    for idx in missing:
        data[chunk_slices(idx, shape, case["chunks"])] = fill
    directory = tmp_path / "v1"
    write_v1_array(directory, case, data, missing)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    nat = native_dtype(dt)

    # libzarr reads it.
    out = scratch / "dump.bin"
    results = tree_tool.run(Script().op("store", "S", f"dir:{directory}", "r")
                            .op("dump", "S", "", str(out)), scratch)
    info = results[0]
    assert info["zarr_format"] == 1
    assert info["shape"] == list(shape) and info["chunks"] == list(case["chunks"])
    assert info["order"] == case["order"]
    assert info["dtype_name"] == dt.str
    assert info["nchunks_initialized"] == math.prod(grid) - len(missing)
    assert_same_json(info["attrs"], V1_ATTRS, "v1 attributes")
    assert out.read_bytes() == data.astype(nat).tobytes()

    # libzarr writes into it (a region across chunks), as v1 chunks.
    start = [s // 3 for s in shape]
    count = [max(1, s // 2) for s in shape]
    region = tuple(slice(b, b + c) for b, c in zip(start, count))
    values = (np.arange(math.prod(count)) % 100 + 1).astype(dt).reshape(count)
    blob = scratch / "region.bin"
    blob.write_bytes(values.astype(nat).tobytes())
    data[region] = values
    tree_tool.run(Script().op("store", "S", f"dir:{directory}", "r+")
                  .op("write", "S", "", _csv(start), _csv(count), str(blob))
                  .op("dump", "S", "", str(out)), scratch)
    assert out.read_bytes() == data.astype(nat).tobytes()
    assert sorted(p.name for p in directory.iterdir() if not p.name[0].isdigit()) == \
        ["attrs", "meta"], "libzarr must keep the array v1"
    for idx in itertools.product(*map(range, grid)):
        if (directory / ".".join(map(str, idx))).exists():
            block = read_v1_chunk(directory, case, idx)
            part = data[chunk_slices(idx, shape, case["chunks"])]
            got = block[tuple(slice(0, s) for s in part.shape)]
            assert got.tobytes() == part.tobytes(), f"v1 chunk {idx} as numcodecs decodes it"

    # zarr_migrate_1to2, compared with zarr-python 2's migrate_1to2 on a copy.
    reference = tmp_path / "v1-reference"
    shutil.copytree(directory, reference)
    tree_tool.run(Script().op("store", "S", f"dir:{directory}", "r+")
                  .op("migrate", "S", ""), scratch)
    assert not (directory / "meta").exists() and not (directory / "attrs").exists()
    zarray = json.loads((directory / ".zarray").read_text())
    assert_same_json(json.loads((directory / ".zattrs").read_text(encoding="utf-8")), V1_ATTRS,
                     "migrated .zattrs")
    if ZARR_MAJOR == 2:
        z = zarr.open_array(str(directory), mode="r")
    else:
        z = zarr.open_array(store=str(directory), mode="r", zarr_format=2)
    assert np.asarray(z[...]).tobytes() == data.tobytes()
    assert_same_json(dict(z.attrs), V1_ATTRS, "attributes zarr-python reads")
    if ZARR_MAJOR == 2:
        zarr.storage.migrate_1to2(zarr.storage.DirectoryStore(str(reference)))
        expected = json.loads((reference / ".zarray").read_text())
        # libzarr always writes "dimension_separator"; migrate_1to2 leaves the default out.
        assert zarray.pop("dimension_separator") == "."
        assert "dimension_separator" not in expected
        assert_same_json(zarray, expected, ".zarray of zarr_migrate_1to2 vs migrate_1to2")
        assert tree_files(directory).keys() == tree_files(reference).keys()


def test_v1_records_read(tree_tool, tmp_path):
    """A v1 array of records (its `dtype` a list of fields, mixed byte orders, a nested
    record) laid out as zarr 1.x wrote it: libzarr reads the stored records exactly, the
    missing chunk as zeros (fill value null)."""
    dt = np.dtype([("a", "<i2"), ("b", ">f4"), ("c", [("x", "|u1"), ("y", ">i8")])])
    fields = [["a", "<i2"], ["b", ">f4"], ["c", [["x", "|u1"], ["y", ">i8"]]]]
    data = np.zeros(7, dtype=dt)
    data["a"] = [1, -2, 3, -4, 5, 0, 0]
    data["b"] = [0.5, 1.5, -2.0, 3.25, 1e30, 0, 0]
    data["c"]["x"] = [1, 2, 3, 4, 255, 0, 0]
    data["c"]["y"] = [-(2**62), 7, 8, 9, 10, 0, 0]
    directory = tmp_path / "v1"
    directory.mkdir()
    codec = numcodecs.Zlib(1)
    for i in range(2):  # chunk 2 (items 6..7) is missing
        block = np.zeros(3, dtype=dt)
        part = data[3 * i:3 * i + 3]
        block[:len(part)] = part
        (directory / str(i)).write_bytes(codec.encode(block.tobytes()))
    meta = {"zarr_format": 1, "shape": [7], "chunks": [3], "dtype": fields,
            "compression": "zlib", "compression_opts": 1, "fill_value": None, "order": "C"}
    (directory / "meta").write_text(json.dumps(meta))
    (directory / "attrs").write_text("{}")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = scratch / "dump.bin"
    info = tree_tool.run(Script().op("store", "S", f"dir:{directory}", "r")
                         .op("dump", "S", "", str(out)), scratch)[0]
    assert info["zarr_format"] == 1 and info["shape"] == [7]
    assert out.read_bytes() == data.tobytes()


# --------------------------------------------------------------------------------------
# 6. Error paths
# --------------------------------------------------------------------------------------


def test_error_node_type(tree_tool, tmp_path):
    directory = tmp_path / "tree.zarr"
    zarr_python_build(directory, default_tree())
    script = (Script().op("store", "S", f"dir:{directory}", "r+")
              .may_fail("open-group", "S", "a/counts", "r", "plain")
              .may_fail("open-group", "S", "a/counts", "a", "plain")
              .may_fail("open-group", "S", "a/counts", "w-", "plain")
              .may_fail("open-array", "S", "a/b", "r")
              .op("kind", "S", "a/counts").op("kind", "S", "a/b").op("kind", "S", "nope"))
    results = tree_tool.run(script, tmp_path / "scratch")
    got = statuses(results)
    assert [s[1] for s in got] == ["ZARR_ERR_NODE_TYPE"] * 4
    assert all("a/counts" in s[2] for s in got[:3]) and "a/b" in got[3][2]
    assert [r["kind"] for r in results if "kind" in r] == ["array", "group", "none"]


def test_error_zip_entry_escaping(tree_tool, tmp_path):
    for i, evil in enumerate(["../evil", "a/../../evil", "/abs/evil"]):
        target = tmp_path / f"evil{i}.zip"
        with zipfile.ZipFile(target, "w") as zf:
            zf.writestr(".zgroup", '{"zarr_format": 2}')
            info = zipfile.ZipInfo("placeholder")
            info.filename = evil  # zipfile would otherwise clean the name
            zf.writestr(info, b"x")
        assert evil in zipfile.ZipFile(target).namelist()
        script = (Script().may_fail("store", "Z", f"zip:{target}", "r")
                  .may_fail("store", "Z2", f"zip:{target}", "a"))
        got = statuses(tree_tool.run(script, tmp_path / "scratch"))
        assert [s[1] for s in got] == ["ZARR_ERR_INVALID_KEY"] * 2, (evil, got)
        assert evil in got[0][2], got


@pytest.mark.filterwarnings("ignore:Object at extra-key is not recognized")
def test_error_zip_rewrite(tree_tool, tmp_path):
    target = tmp_path / "w.zip"
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"first")
    script = (Script().op("store", "Z", f"zip:{target}", "w")
              .op("group", "Z", "", "w")
              .op("gattrs", "Z", "", _json({"v": 1}))
              .may_fail("gattrs", "Z", "", _json({"v": 2}))
              .op("set", "Z", "extra-key", str(blob))
              .may_fail("set", "Z", "extra-key", str(blob))
              .op("array", "Z", "", "arr", "<i4", "4", "2", "0", "C", ".", "null", "-", "-",
                  "-", "w-")
              .may_fail("array", "Z", "", "arr", "<i4", "4", "2", "0", "C", ".", "null", "-",
                        "-", "-", "w")
              .op("close", "Z"))
    got = statuses(tree_tool.run(script, tmp_path / "scratch"))
    assert [s[1] for s in got][:2] == ["ZARR_ERR_EXISTS", "ZARR_ERR_EXISTS"], got
    assert ".zattrs" in got[0][2] and "extra-key" in got[1][2], got
    assert got[2][1] != "ZARR_OK", got  # replacing an array would rewrite its entries
    with zipfile.ZipFile(target) as zf:
        names = zf.namelist()
        assert len(names) == len(set(names)), names
        assert json.loads(zf.read(".zattrs")) == {"v": 1}
        assert zf.read("extra-key") == b"first"
    with zp_zip_reader(target) as zs:
        root = zp_open_group(zs)
        assert dict(root.attrs) == {"v": 1}
        assert list(root.array_keys()) == ["arr"]


MALFORMED = {
    ".zgroup-invalid-json": ("bad/.zgroup", b"{not json"),
    ".zgroup-not-object": ("bad/.zgroup", b"[2]"),
    ".zgroup-wrong-format": ("bad/.zgroup", b'{"zarr_format": 3}'),
    ".zattrs-list": ("bad/.zattrs", b"[1, 2]"),
    ".zattrs-string": ("bad/.zattrs", b'"attributes"'),
    ".zattrs-invalid-json": ("bad/.zattrs", b'{"a": '),
    "array-.zattrs-number": ("bad/arr/.zattrs", b"17"),
    ".zmetadata-invalid-json": (".zmetadata", b"{"),
    ".zmetadata-not-object": (".zmetadata", b"[]"),
    ".zmetadata-metadata-not-object": (".zmetadata",
                                       b'{"metadata": 3, "zarr_consolidated_format": 1}'),
    ".zmetadata-wrong-format": (".zmetadata",
                                b'{"metadata": {}, "zarr_consolidated_format": 2}'),
    ".zmetadata-entry-not-object": (
        ".zmetadata", b'{"metadata": {".zgroup": 5}, "zarr_consolidated_format": 1}'),
    ".zmetadata-escaping-entry": (
        ".zmetadata",
        b'{"metadata": {"../x/.zgroup": {"zarr_format": 2}}, "zarr_consolidated_format": 1}'),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_error_malformed_documents(tree_tool, tmp_path, case):
    key, content = MALFORMED[case]
    directory = tmp_path / "tree.zarr"
    root = zarr_python_build(directory, Tree({"": {"ok": 1}, "bad": {"x": 1}},
                                             [ArraySpec("bad/arr", "<i4", (4,), (2,), 0, 0, None)]))
    zp_consolidate(directory)
    del root
    (directory / key).write_bytes(content)
    out = tmp_path / "dump.bin"
    script = Script().op("store", "S", f"dir:{directory}", "r")
    if key == "bad/.zgroup":
        script.may_fail("open-group", "S", "bad", "r", "plain")
    elif key == "bad/.zattrs":
        script.may_fail("gattrs-get", "S", "bad")
    elif key == "bad/arr/.zattrs":
        script.may_fail("dump", "S", "bad/arr", str(out))
    else:
        script.may_fail("open-group", "S", "", "r", "consolidated")
    got = statuses(tree_tool.run(script, tmp_path / "scratch"))
    expected = "ZARR_ERR_INVALID_KEY" if case == ".zmetadata-escaping-entry" else \
        "ZARR_ERR_METADATA"
    assert [s[1] for s in got] == [expected], got
    message = got[0][2]
    if key == "bad/.zgroup":
        # The group's path and the document are named.
        assert "bad/.zgroup" in message, message
    elif case != ".zmetadata-escaping-entry":
        assert key in message, message
    else:
        assert "../x/.zgroup" in message, message


def test_error_delete_read_only(tree_tool, tmp_path):
    directory = tmp_path / "tree.zarr"
    zarr_python_build(directory, default_tree())
    before = tree_files(directory)
    script = (Script().op("store", "RW", f"dir:{directory}", "r+")
              .op("store", "RO", f"dir:{directory}", "r")
              .may_fail("delete", "RW", "", "a", "r", "plain")
              .may_fail("delete", "RW", "a", "counts", "r", "plain")
              .may_fail("delete", "RO", "", "a", "r", "plain")
              .may_fail("delete", "RO", "", "a", "r+", "plain")
              .may_fail("open-group", "RO", "a", "w", "plain"))
    got = statuses(tree_tool.run(script, tmp_path / "scratch"))
    assert [s[1] for s in got] == ["ZARR_ERR_READ_ONLY"] * 5, got
    assert tree_files(directory) == before, "a refused delete removed something"
    # The same through consolidated metadata, then a permitted delete.
    zp_consolidate(directory)
    before = tree_files(directory)
    script = (Script().op("store", "RW", f"dir:{directory}", "r+")
              .may_fail("delete", "RW", "", "a", "r", "consolidated")
              .may_fail("delete", "RW", "", "a/b/c", "r", "consolidated"))
    got = statuses(tree_tool.run(script, tmp_path / "scratch"))
    assert [s[1] for s in got] == ["ZARR_ERR_READ_ONLY"] * 2
    assert tree_files(directory) == before
    tree_tool.run(Script().op("store", "RW", f"dir:{directory}", "r+")
                  .op("delete", "RW", "", "a", "r+", "consolidated"), tmp_path / "scratch")
    assert not (directory / "a").exists()
    assert sorted(zp_open_group(directory).group_keys()) == ["empty", "ünï"]


# --------------------------------------------------------------------------------------
# 7. Attribute values beyond strict JSON that zarr-python writes
# --------------------------------------------------------------------------------------


def test_zarr_python_nan_attributes(tree_tool, tmp_path):
    directory = tmp_path / "tree.zarr"
    root = zarr_python_build(directory, Tree({"": {}}, []))
    root.attrs.update({"nan": math.nan, "inf": math.inf, "ninf": -math.inf, "ok": 1})
    assert b"NaN" in (directory / ".zattrs").read_bytes()
    results = tree_tool.run(Script().op("store", "S", f"dir:{directory}", "r")
                            .may_fail("gattrs-get", "S", ""), tmp_path / "scratch")
    assert statuses(results)[0][1] == "ZARR_OK", statuses(results)


def test_zarr_python_huge_integer_attributes(tree_tool, tmp_path):
    directory = tmp_path / "tree.zarr"
    attrs = {"u64_plus_1": 2**64 + 1, "i64_min_minus_1": -(2**63) - 1, "googol": 10**100}
    root = zarr_python_build(directory, Tree({"": attrs}, []))
    del root
    results = tree_tool.run(Script().op("store", "S", f"dir:{directory}", "r+")
                            .op("gattr", "S", "", "other", "1")
                            .op("gattrs-get", "S", ""), tmp_path / "scratch")
    assert_same_json(results[-1]["attrs"], {**attrs, "other": 1}, "attributes")


# --------------------------------------------------------------------------------------
# 8. xarray opens examples-c/hierarchy.c's dataset
# --------------------------------------------------------------------------------------


def test_xarray_opens_hierarchy_example(tree_tool, tmp_path):
    if xr is None:
        pytest.skip("xarray is installed only in the zarr-python 3 environment (zp3)")
    target = tmp_path / "hierarchy.zarr"
    proc = subprocess.run([str(tree_tool.hierarchy_exe), str(target)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "4 variables" in proc.stdout, proc.stdout
    # A Zarr v3 tree (the default format) with consolidated metadata in the root document.
    root_doc = json.loads((target / "zarr.json").read_text())
    assert root_doc["zarr_format"] == 3 and "consolidated_metadata" in root_doc

    nt, ny, nx = 10, 18, 36
    lat = (np.float32(-85.0) + np.float32(10.0) * np.arange(ny, dtype=np.float32))
    lon = (np.float32(5.0) + np.float32(10.0) * np.arange(nx, dtype=np.float32))
    temperature = np.empty((nt, ny, nx), dtype=np.float32)
    for t in range(nt):
        for y in range(ny):
            # The C expression, in double as C evaluates it, then rounded to float.
            temperature[t, y, :] = np.float32(
                288.0 + 30.0 * math.cos(float(lat[y]) * 3.14159265 / 180.0) + 0.1 * t)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr 3 warns that consolidated metadata is unstable
        ds = xr.open_zarr(str(target))
        raw = xr.open_zarr(str(target), decode_times=False)
    try:
        assert dict(ds.sizes) == {"time": nt, "lat": ny, "lon": nx}
        assert ds["temperature"].dims == ("time", "lat", "lon")
        assert set(ds.data_vars) == {"temperature"}
        assert set(ds.coords) == {"time", "lat", "lon"}
        assert ds.attrs == {"title": "libzarr example dataset", "Conventions": "CF-1.8"}
        assert ds["temperature"].attrs["units"] == "K"
        assert ds["lat"].attrs["units"] == "degrees_north"
        got = ds["temperature"].values
        assert got.dtype == np.float32 and got.tobytes() == temperature.tobytes()
        assert ds["lat"].values.tobytes() == lat.tobytes()
        assert ds["lon"].values.tobytes() == lon.tobytes()
        expected_times = np.datetime64("2000-01-01", "ns") + \
            np.arange(nt).astype("timedelta64[D]").astype("timedelta64[ns]")
        assert (ds["time"].values == expected_times).all()
        assert raw["time"].values.dtype == np.int64
        assert raw["time"].values.tolist() == list(range(nt))
        assert raw["time"].attrs["units"] == "days since 2000-01-01"
    finally:
        ds.close()
        raw.close()
