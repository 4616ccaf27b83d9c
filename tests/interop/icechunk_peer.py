"""Runs inside the Debian 13 chroot that scripts/setup-test-env.sh makes, with Python's icechunk
and zarr-python 3.4: `python icechunk_peer.py write|read|xarray DIR`. tests/interop/
test_icechunk_interop.py copies this file into the chroot and reads what it leaves in DIR.

read: opens the repository named in DIR/plan.json at each of its references (a branch, a
tag or a snapshot id), walks the hierarchy, saves every array as
DIR/out/<label>/<path with / as __>.npy and prints one JSON object: per label the nodes
(kind, attributes, dtype, shape) and the snapshot read, plus the main branch's ancestry.

xarray: opens the branch main of the repository named in DIR/plan.json with
`xr.open_zarr(session.store)` (decoding and masking on), allowing virtual chunks from the
containers (URL prefixes) the plan lists, saves every variable as DIR/xr/<name>.npy and
prints its dimensions and attributes as JSON.

virtualizarr: writes an HDF5 file with h5py and a repository of VirtualiZarr's virtual
references to its chunks (see `virtualizarr`).

write: creates the repository DIR/repo with icechunk, commits twice and tags the first commit
`first`, saving the expected arrays of each commit as DIR/expect/<commit>/<name>.npy; prints
the snapshot ids and the ancestry as JSON.
"""

import json
import sys
from pathlib import Path

import numpy as np


def ancestry(repo, **ref):
    return [{"id": s.id, "parent_id": s.parent_id, "message": s.message}
            for s in repo.ancestry(**ref)]


def walk(group, prefix, out, nodes):
    """Saves every array under `group` and records every node's kind and attributes."""
    import zarr

    for name, node in sorted(group.members(), key=lambda m: m[0]):
        path = f"{prefix}{name}"
        if isinstance(node, zarr.Array):
            np.save(out / (path.replace("/", "__") + ".npy"), node[...])
            nodes[path] = {"kind": "array", "attrs": dict(node.attrs), "dtype": str(node.dtype),
                           "shape": list(node.shape)}
        else:
            nodes[path] = {"kind": "group", "attrs": dict(node.attrs)}
            walk(node, f"{path}/", out, nodes)


def read(base: Path):
    import icechunk
    import zarr

    plan = json.loads((base / "plan.json").read_text())
    repo = icechunk.Repository.open(icechunk.local_filesystem_storage(plan["repo"]))
    report = {"ancestry": ancestry(repo, branch="main"), "refs": {}}
    for label, ref in plan["refs"].items():
        session = repo.readonly_session(**ref)
        out = base / "out" / label
        out.mkdir(parents=True, exist_ok=True)
        root = zarr.open_group(session.store, mode="r")
        nodes = {"": {"kind": "group", "attrs": dict(root.attrs)}}
        walk(root, "", out, nodes)
        report["refs"][label] = {"snapshot": session.snapshot_id, "nodes": nodes}
    print(json.dumps(report))


def expected(base: Path, commit: str, arrays: dict):
    out = base / "expect" / commit
    out.mkdir(parents=True, exist_ok=True)
    for name, a in arrays.items():
        np.save(out / (name.replace("/", "__") + ".npy"), a)


def write(base: Path):
    import icechunk
    import zarr

    repo = icechunk.Repository.create(icechunk.local_filesystem_storage(str(base / "repo")))
    session = repo.writable_session("main")
    root = zarr.open_group(session.store, mode="a")
    obs = root.create_group("obs", attributes={"source": "icechunk-python", "n": 3,
                                               "levels": [1.5, -2.0]})
    rng = np.random.default_rng(7)
    temp = (rng.standard_normal((50, 70)) * 10).astype("<f4")
    t = obs.create_array("temp", shape=temp.shape, chunks=(20, 30), dtype="<f4",
                         fill_value=-9999.0, attributes={"units": "K"})
    t[...] = temp
    counts = np.arange(1000, dtype="<i8") * 7919 % 100003 - 50000
    c = root.create_array("counts", shape=counts.shape, chunks=(50,), shards=(200,),
                          dtype="<i8", fill_value=0)
    c[...] = counts
    first = session.commit("python: obs/temp and counts")
    expected(base, "first", {"obs/temp": temp, "counts": counts})
    repo.create_tag("first", snapshot_id=first)

    session = repo.writable_session("main")
    root = zarr.open_group(session.store, mode="a")
    temp[10:30, 5:65] = np.float32(1.25)
    root["obs/temp"][10:30, 5:65] = np.float32(1.25)
    counts[250:420] = -1
    root["counts"][250:420] = -1
    flags = (np.arange(300) % 7).astype("|u1")
    f = root.create_array("obs/flags", shape=flags.shape, chunks=(64,), dtype="|u1",
                          fill_value=255)
    f[...] = flags
    second = session.commit("python: overwrite regions, add obs/flags")
    expected(base, "second", {"obs/temp": temp, "counts": counts, "obs/flags": flags})
    print(json.dumps({"first": first, "second": second,
                      "ancestry": ancestry(repo, branch="main")}))


def xarray(base: Path):
    import icechunk
    import xarray as xr

    plan = json.loads((base / "plan.json").read_text())
    # Virtual chunks are read from the containers the plan allows, and from nowhere else.
    allowed = icechunk.containers_credentials(
        {prefix: None for prefix in plan.get("containers", [])})
    repo = icechunk.Repository.open(icechunk.local_filesystem_storage(plan["repo"]),
                                    authorize_virtual_chunk_access=allowed or None)
    ds = xr.open_zarr(repo.readonly_session(branch="main").store, consolidated=False)
    out = base / "xr"
    out.mkdir(parents=True, exist_ok=True)
    report = {}
    for name, var in ds.variables.items():
        np.save(out / f"{name}.npy", var.values)
        report[name] = {"dims": list(var.dims),
                        "attrs": json.loads(json.dumps(dict(var.attrs), default=str))}
    print(json.dumps(report))


def virtualizarr(base: Path):
    """An HDF5 file written with h5py (a chunked deflate + shuffle float32 dataset with an
    attribute, a contiguous big-endian int32 one) and the repository DIR/repo whose chunks
    are VirtualiZarr's virtual references to it, the file's directory its virtual chunk
    container; the expected arrays go to DIR/expect/virtual/. Prints the container."""
    import h5py
    import icechunk
    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import LocalStore
    from virtualizarr import open_virtual_dataset
    from virtualizarr.parsers import HDFParser

    data = base / "data"
    data.mkdir()
    path = data / "fields.h5"
    rng = np.random.default_rng(11)
    temp = (rng.standard_normal((6, 20, 30)) * 5 + 280).astype("<f4")
    # The same shape as temp: HDF5 datasets without dimension scales get dimensions named
    # by position, which must agree in length.
    counts = (np.arange(6 * 20 * 30, dtype=">i4").reshape(6, 20, 30) * 37) % 1001 - 500
    with h5py.File(path, "w") as f:
        t = f.create_dataset("temp", data=temp, chunks=(1, 10, 15), compression="gzip",
                             compression_opts=4, shuffle=True)
        t.attrs["units"] = "K"
        f.create_dataset("counts", data=counts)
    prefix = f"file://{data}/"
    registry = ObjectStoreRegistry({prefix: LocalStore(prefix=str(data))})
    vds = open_virtual_dataset(url=f"file://{path}", parser=HDFParser(), registry=registry)
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(
        icechunk.VirtualChunkContainer(prefix, icechunk.local_filesystem_store(str(data))))
    repo = icechunk.Repository.create(
        icechunk.local_filesystem_storage(str(base / "repo")), config,
        authorize_virtual_chunk_access=icechunk.containers_credentials({prefix: None}))
    session = repo.writable_session("main")
    vds.vz.to_icechunk(session.store)
    session.commit("virtual references by VirtualiZarr")
    expected(base, "virtual", {"temp": temp, "counts": counts})
    print(json.dumps({"container": prefix}))


def main():
    action, base = sys.argv[1], Path(sys.argv[2])
    {"write": write, "read": read, "xarray": xarray, "virtualizarr": virtualizarr}[action](base)


if __name__ == "__main__":
    main()
