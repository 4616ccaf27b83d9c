"""Interop with Python's icechunk 2.3 (the package released with the icechunk crate libzarr
uses) and zarr-python 3.4, both ways, on local Icechunk repositories. Python's icechunk needs
Python >= 3.12: it runs in the Debian 13 chroot that scripts/setup-test-env.sh makes
($ZARR_TEST_ENV/trixie, venv /opt/zp34), driven by tests/interop/icechunk_peer.py, with the
repositories under the chroot's /tmp (the same files seen from here).

- libzarr (zarr_tool over icechunk:/// URLs, ZARR_TOOL_COMMIT) writes a repository in six
  commits (a root group and a group with attributes, int32 zstd, float64 in chunk files,
  uint16 sharded, then a region overwritten) and a tag; Python's icechunk opens the main
  branch, the tag and every snapshot and must read exactly those values, attributes and the
  history (ids and messages) libzarr reports.
- `zarrtool copy --commit` and `zarrtool tag` into a repository: Python reads the copy exactly.
- `zarrtool virtualize` of a netCDF-4 file into a repository (virtual chunks): xarray over
  Python's icechunk, allowing the file's directory, reads the file's dataset.
- VirtualiZarr references an HDF5 file from a repository: libzarr reads the virtual chunks
  exactly from the directory it allows, and nothing when it allows none.
- Python's icechunk writes two commits and a tag; libzarr must read each snapshot, the tag
  and the branch exactly, with the same attributes and history.

xarray (2026.9 in the chroot) opens, through a session's store, what toy_model.c wrote and
zarrtool copied into a repository, and means there what xarray here reads in the source.
Needs libzarr built with the `icechunk` feature, which tests/interop/run.sh does whenever the
toolchain is Rust 1.95 or newer (and then the tests must run); otherwise they are skipped.
Without the chroot the module is skipped, except under CI=true, where that is an error.
"""

import json
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest

from test_toy_model_xarray import toy_model  # noqa: F401  (the module fixture)
from test_v2_interop import ROOT, tool  # noqa: F401  (the session fixture)
from trixie import CHROOT, CHROOT_EXE, PEER_PYTHON, require

PEER_SCRIPT = Path(__file__).resolve().parent / "icechunk_peer.py"

require("icechunk==2.3.0", "icechunk interop")


@pytest.fixture(scope="module", autouse=True)
def built_with_icechunk(tool):
    """Skips when the library under test lacks the icechunk feature (it needs Rust 1.95),
    except when tests/interop/run.sh built it with the feature (ZARR_INTEROP_ICECHUNK=1):
    then that is a failure."""
    import ctypes

    header = (ROOT / "include" / "zarr.h").read_text()
    found = re.search(r"#define ZARR_HAS_ICECHUNK (\d+)", header)
    assert found, "zarr.h defines no ZARR_HAS_ICECHUNK"
    lib = ctypes.CDLL(str(tool.exe.parent / "lib" / "libzarr.so"))
    lib.zarr_features.restype = ctypes.c_uint32
    if not lib.zarr_features() & int(found.group(1)):
        why = "libzarr is built without the icechunk feature (cargo build --features icechunk)"
        assert os.environ.get("ZARR_INTEROP_ICECHUNK") != "1", why
        pytest.skip(why)


@pytest.fixture
def peer_dir():
    """A scratch directory inside the chroot, removed afterwards."""
    base = CHROOT / "tmp" / f"zarr-icechunk-{uuid.uuid4().hex[:12]}"
    base.mkdir(parents=True)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def inside(path: Path) -> str:
    return "/" + str(path.relative_to(CHROOT))


def run_peer(action: str, base: Path) -> dict:
    shutil.copy2(PEER_SCRIPT, base / "icechunk_peer.py")
    proc = subprocess.run([CHROOT_EXE, str(CHROOT), PEER_PYTHON, f"{inside(base)}/icechunk_peer.py",
                           action, inside(base)], capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
                               "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, f"icechunk {action} failed:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def url(repo: Path, query: str = "") -> str:
    return f"icechunk://{repo}{query}"


def commit(tool, message: str, *args) -> str:
    """Runs zarr_tool with ZARR_TOOL_COMMIT=message; returns the new snapshot id."""
    proc = subprocess.run([str(tool.exe), *map(str, args)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "ZARR_TOOL_COMMIT": message})
    assert proc.returncode == 0, f"zarr_tool {args[0]} failed:\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])["snapshot"]


def v3_doc(dtype, shape, chunks, codecs, fill):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": {}}


BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}


def native(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("=")).tobytes()


def create(tool, scratch: Path, repo: Path, path: str, doc: dict, data: np.ndarray,
           message: str) -> str:
    meta, blob = scratch / "meta.json", scratch / "data.bin"
    meta.write_text(json.dumps(doc))
    blob.write_bytes(native(data))
    return commit(tool, message, "create", url(repo), path, meta, blob, "C")


def group(tool, scratch: Path, repo: Path, path: str, attrs: dict, message: str) -> str:
    blob = scratch / "attrs.json"
    blob.write_text(json.dumps(attrs))
    return commit(tool, message, "group", url(repo), path, blob)


def history(tool, ref_url: str) -> list:
    return json.loads(tool.run("history", ref_url))


def test_python_icechunk_reads_libzarr_repository(tool, tmp_path, peer_dir):
    repo = peer_dir / "repo"
    rng = np.random.default_rng(11)
    ints = (np.arange(4 * 6, dtype="<i4").reshape(4, 6) - 10) * 1000003
    floats = rng.standard_normal(20000)  # chunk files of their own (not inlined)
    sharded = rng.integers(0, 65535, (16, 12), dtype="<u2")
    root_attrs = {"title": "written by libzarr", "version": 2}
    sim_attrs = {"step": 1, "scale": [1.5, -2.25], "name": "Grüße"}

    # state[i]: what each snapshot holds (path -> array); None marks groups.
    state, ids, messages = [], [], []

    def step(message, snapshot, nodes):
        ids.append(snapshot)
        messages.append(message)
        state.append({k: (v.copy() if v is not None else None) for k, v in nodes.items()})

    nodes = {"": None}
    step("root group", group(tool, tmp_path, repo, "", root_attrs, "root group"), nodes)
    nodes["sim"] = None
    step("group sim", group(tool, tmp_path, repo, "sim", sim_attrs, "group sim"), nodes)
    doc = v3_doc("int32", ints.shape, (2, 3), [BYTES_LE, {"name": "zstd", "configuration":
                                                          {"level": 3, "checksum": True}}], -1)
    nodes["sim/ints"] = ints
    step("sim/ints", create(tool, tmp_path, repo, "sim/ints", doc, ints, "sim/ints"), nodes)
    tool.run("tag", url(repo, "?branch=main"), "v1")
    doc = v3_doc("float64", floats.shape, (5000,), [BYTES_LE], 0.0)
    nodes["floats"] = floats
    step("floats", create(tool, tmp_path, repo, "floats", doc, floats, "floats"), nodes)
    shard_codec = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 3],
        "codecs": [BYTES_LE, {"name": "gzip", "configuration": {"level": 5}}],
        "index_codecs": [BYTES_LE, {"name": "crc32c"}], "index_location": "end"}}
    doc = v3_doc("uint16", sharded.shape, (8, 6), [shard_codec], 7)
    nodes["sim/sharded"] = sharded
    step("sim/sharded", create(tool, tmp_path, repo, "sim/sharded", doc, sharded, "sim/sharded"),
         nodes)
    patch = np.full((2, 4), -123456, dtype="<i4")
    (tmp_path / "patch.bin").write_bytes(native(patch))
    ints = ints.copy()
    ints[1:3, 1:5] = patch
    nodes["sim/ints"] = ints
    step("patch sim/ints", commit(tool, "patch sim/ints", "write-region", url(repo), "sim/ints",
                                  "1,1", "2,4", tmp_path / "patch.bin", "C"), nodes)

    lz_history = history(tool, url(repo))
    assert [h["id"] for h in lz_history[:len(ids)]] == ids[::-1]
    assert [h["message"] for h in lz_history[:len(ids)]] == messages[::-1]
    assert len(lz_history) == len(ids) + 1  # the repository's first snapshot
    assert lz_history[-1]["parent"] is None

    refs = {"main": {"branch": "main"}, "tag": {"tag": "v1"}}
    refs.update({f"s{i}": {"snapshot_id": sid} for i, sid in enumerate(ids)})
    (peer_dir / "plan.json").write_text(json.dumps({"repo": inside(repo), "refs": refs}))
    report = run_peer("read", peer_dir)

    assert [a["id"] for a in report["ancestry"]] == [h["id"] for h in lz_history]
    assert [a["message"] for a in report["ancestry"]] == [h["message"] for h in lz_history]
    assert [a["parent_id"] for a in report["ancestry"]] == [h["parent"] for h in lz_history]
    attrs = {"": root_attrs, "sim": sim_attrs}
    expected = {f"s{i}": (ids[i], s) for i, s in enumerate(state)}
    expected["main"] = (ids[-1], state[-1])
    expected["tag"] = (ids[2], state[2])
    for label, (sid, snapshot) in expected.items():
        got = report["refs"][label]
        assert got["snapshot"] == sid, label
        assert sorted(got["nodes"]) == sorted(snapshot), label
        for path, want in snapshot.items():
            node = got["nodes"][path]
            if want is None:
                assert node == {"kind": "group", "attrs": attrs[path]}, (label, path)
                continue
            assert node["kind"] == "array" and node["shape"] == list(want.shape), (label, path)
            assert node["dtype"] == str(want.dtype.newbyteorder("=")), (label, path)
            read = np.load(peer_dir / "out" / label / (path.replace("/", "__") + ".npy"))
            assert read.dtype == want.dtype and np.array_equal(read, want), (label, path)


def test_libzarr_reads_python_icechunk_repository(tool, tmp_path, peer_dir):
    report = run_peer("write", peer_dir)
    repo = peer_dir / "repo"
    arrays = {"first": ["obs/temp", "counts"], "second": ["obs/temp", "counts", "obs/flags"]}
    refs = {"first": [f"?snapshot={report['first']}", "?tag=first"],
            "second": [f"?snapshot={report['second']}", "?branch=main", ""]}
    for commit_name, queries in refs.items():
        for query in queries:
            for path in arrays[commit_name]:
                name = path.replace("/", "__") + ".npy"
                want = np.load(peer_dir / "expect" / commit_name / name)
                out = tmp_path / "dump.bin"
                info = json.loads(tool.run("dump", url(repo, query), path, out, "C"))
                assert info["shape"] == list(want.shape), (query, path)
                assert out.read_bytes() == native(want), (query, path)
            assert json.loads(tool.run("attrs", url(repo, query), "obs")) == \
                {"source": "icechunk-python", "n": 3, "levels": [1.5, -2.0]}, query
        # A path the snapshot lacks reads as missing.
        if commit_name == "first":
            with pytest.raises(AssertionError, match="NOT_FOUND"):
                tool.run("dump", url(repo, queries[0]), "obs/flags", tmp_path / "x.bin", "C")

    lz_history = history(tool, url(repo))
    assert [h["id"] for h in lz_history] == [a["id"] for a in report["ancestry"]]
    assert [h["message"] for h in lz_history] == [a["message"] for a in report["ancestry"]]
    assert [h["parent"] for h in lz_history] == [a["parent_id"] for a in report["ancestry"]]
    assert lz_history[0]["id"] == report["second"] and lz_history[1]["id"] == report["first"]
    assert history(tool, url(repo, "?tag=first"))[0]["id"] == report["first"]


def test_python_icechunk_reads_zarrtool_copy_commit(tool, tmp_path, peer_dir):
    """`zarrtool copy SRC icechunk:///REPO --commit MESSAGE`, then `zarrtool tag`: Python's
    icechunk reads the copy exactly at the branch and the tag, with that message."""
    zarrtool = ROOT / "target" / "release" / "zarrtool"
    assert zarrtool.exists(), "target/release/zarrtool is missing (cargo build --release)"
    src = tmp_path / "src.zarr"
    values = (np.arange(30 * 40, dtype="<f8").reshape(30, 40) * 0.5 - 100.0)
    doc = v3_doc("float64", values.shape, (8, 16), [BYTES_LE, {"name": "zstd",
                                                               "configuration": {"level": 1}}], 0.0)
    (tmp_path / "meta.json").write_text(json.dumps(doc))
    (tmp_path / "data.bin").write_bytes(native(values))
    tool.run("create", src, "t", tmp_path / "meta.json", tmp_path / "data.bin", "C")
    repo = peer_dir / "repo"

    def run(*args):
        proc = subprocess.run([str(zarrtool), *map(str, args)], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, f"zarrtool {args[0]} failed:\n{proc.stderr}"
        return proc.stdout.strip()

    snapshot = run("copy", src, url(repo), "--commit", "copied by zarrtool")
    assert run("tag", url(repo), "copied") == snapshot
    (peer_dir / "plan.json").write_text(json.dumps({
        "repo": inside(repo), "refs": {"main": {"branch": "main"}, "tag": {"tag": "copied"}}}))
    report = run_peer("read", peer_dir)
    assert report["ancestry"][0]["id"] == snapshot
    assert report["ancestry"][0]["message"] == "copied by zarrtool"
    assert len(report["ancestry"]) == 2
    for label in ("main", "tag"):
        got = report["refs"][label]
        assert got["snapshot"] == snapshot
        assert got["nodes"]["t"]["shape"] == [30, 40]
        read = np.load(peer_dir / "out" / label / "t.npy")
        assert read.dtype == np.float64 and np.array_equal(read, values), label


def same_as_peer_xarray(here, peer_dir: Path) -> None:
    """Runs the peer's xarray action on the repository of DIR/plan.json and checks it gives
    the variables, dimensions, attributes and values of the dataset `here`."""
    report = run_peer("xarray", peer_dir)
    assert sorted(report) == sorted(here.variables)
    for name, var in here.variables.items():
        got = report[name]
        assert got["dims"] == list(var.dims), name
        want_attrs = json.loads(json.dumps(dict(var.attrs), default=str))
        assert got["attrs"] == want_attrs, name
        values = np.load(peer_dir / "xr" / f"{name}.npy", allow_pickle=False)
        assert values.dtype == var.values.dtype, name
        assert np.array_equal(values, var.values, equal_nan=values.dtype.kind in "fc"), name


def test_xarray_reads_a_simulation_committed_to_a_repository(tool, toy_model, tmp_path,
                                                             peer_dir):
    """toy_model.c's CF store (v3), copied into a repository by `zarrtool copy --commit`:
    xarray over Python icechunk's session gives the same variables, dimensions, attributes
    and values (missing cells NaN, time decoded) as xarray here reading the source."""
    xr = pytest.importorskip("xarray")
    zarrtool = ROOT / "target" / "release" / "zarrtool"
    src = tmp_path / "toy.zarr"
    subprocess.run([str(toy_model), str(src), "3"], check=True, timeout=120)
    repo = peer_dir / "repo"
    proc = subprocess.run([str(zarrtool), "copy", str(src), url(repo), "--commit", "run 1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    (peer_dir / "plan.json").write_text(json.dumps({"repo": inside(repo)}))
    same_as_peer_xarray(xr.open_zarr(src, consolidated=False), peer_dir)


def test_xarray_reads_zarrtool_virtual_chunks_of_a_netcdf_file(tool, tmp_path, peer_dir):
    """`zarrtool virtualize FILE -o icechunk:///REPO`: the repository holds the netCDF-4
    file's chunks as virtual chunks; xarray over Python icechunk's session, allowing the
    file's directory, gives the same variables, dimensions, attributes and values as
    xarray here reading the file. The file lies at the same absolute path inside and
    outside the chroot (two copies of the same bytes), as virtual chunks name it."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("netCDF4")
    from test_kerchunk_interop import write_cf_file

    zarrtool = ROOT / "target" / "release" / "zarrtool"
    features = subprocess.run([str(zarrtool), "version", "--features"], capture_output=True,
                              text=True).stdout
    if "references" not in features:
        assert os.environ.get("ZARR_TEST_NETCDF") != "1", "zarrtool has no netCDF support"
        pytest.skip("this zarrtool has no netCDF support")
    data = Path("/tmp") / f"zarr-virtual-{uuid.uuid4().hex[:12]}"
    inner = CHROOT / data.relative_to("/")
    try:
        data.mkdir()
        inner.mkdir(parents=True)
        source = data / "cf.nc"
        write_cf_file(source, "NETCDF4")
        shutil.copy2(source, inner / "cf.nc")
        repo = peer_dir / "repo"
        proc = subprocess.run([str(zarrtool), "virtualize", str(source), "-o", url(repo)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        # The repository holds references, no chunk of its own.
        chunks = repo / "chunks"
        assert not chunks.exists() or not any(chunks.iterdir())
        (peer_dir / "plan.json").write_text(json.dumps({
            "repo": inside(repo), "containers": [f"file://{data}/"]}))
        with xr.open_dataset(source) as here:
            same_as_peer_xarray(here, peer_dir)
    finally:
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(inner, ignore_errors=True)


def test_libzarr_reads_virtualizarr_virtual_chunks(tmp_path, peer_dir):
    """VirtualiZarr (in the chroot) references an HDF5 file's chunks from an Icechunk
    repository; libzarr (zarrtool, the file's directory allowed by the option
    virtual_chunk_containers) reads every array exactly, and refuses to read them when
    the directory is not allowed. The file lies at the same absolute path inside and
    outside the chroot (two copies of the same bytes), as virtual chunks name it."""
    zarrtool = ROOT / "target" / "release" / "zarrtool"
    assert zarrtool.exists(), "target/release/zarrtool is missing (cargo build --release)"
    report = run_peer("virtualizarr", peer_dir)
    container = report["container"]
    assert container == f"file://{inside(peer_dir)}/data/"
    outside = Path(inside(peer_dir))
    try:
        (outside / "data").mkdir(parents=True)
        shutil.copy2(peer_dir / "data" / "fields.h5", outside / "data" / "fields.h5")
        allowed = dict(os.environ, ZARRTOOL_STORE_OPTIONS=json.dumps(
            {"virtual_chunk_containers": [str(outside / "data")]}))
        for name in ("temp", "counts"):
            want = np.load(peer_dir / "expect" / "virtual" / f"{name}.npy")
            proc = subprocess.run([str(zarrtool), "dump", "-f", "raw", url(peer_dir / "repo"),
                                   name], capture_output=True, env=allowed, timeout=120)
            assert proc.returncode == 0, proc.stderr.decode()
            native = want.dtype.newbyteorder("=")
            got = np.frombuffer(proc.stdout, dtype=native).reshape(want.shape)
            np.testing.assert_array_equal(got, want.astype(native), err_msg=name, strict=True)
        proc = subprocess.run([str(zarrtool), "dump", url(peer_dir / "repo"), "temp"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode != 0 and "authorize the virtual chunk container" in proc.stderr
    finally:
        shutil.rmtree(outside, ignore_errors=True)
