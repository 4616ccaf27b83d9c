"""tensorstore doing the workloads of benches/bench_peers.rs on the same data, for the
comparison in the same run. One workload per process; prints one JSON line with the
seconds it took and the process's peak resident memory (VmHWM) in MiB.

    python tensorstore_bench.py OP STORE DATA CODEC [ARGS]

OP: write (the whole array from the raw float32 file DATA), read (the whole array into
memory tensorstore allocates, as the other libraries do; checked after the clock stops), rmw
(write the region given as START,COUNT into the existing array), random (1000 reads of the
16^3 regions listed in the file ARGS), durable-write (write with every file synced).
CODEC: blosc, zstd, none or sharded (256^3 shards of 32^3 blosc chunks), as bench_peers.rs
writes them."""

import json
import sys
import time

import numpy as np
import tensorstore as ts

SHAPE = [1024, 1024, 256]
CHUNK = [64, 64, 64]
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                            "typesize": 4, "blocksize": 0}}
CODECS = {
    "blosc": [BYTES, BLOSC],
    "zstd": [BYTES, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
    "none": [BYTES],
    "sharded": [{"name": "sharding_indexed",
                 "configuration": {"chunk_shape": [32, 32, 32], "codecs": [BYTES, BLOSC],
                                   "index_codecs": [BYTES, {"name": "crc32c"}],
                                   "index_location": "end"}}],
}


def peak_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def open_array(path: str, codec: str, create: bool, sync: bool = False):
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path},
            "context": {"data_copy_concurrency": {"limit": "shared"},
                        "file_io_sync": sync}}
    if create:
        spec["metadata"] = {"shape": SHAPE, "data_type": "float32",
                            "chunk_grid": {"name": "regular",
                                           "configuration": {
                                               "chunk_shape": [256] * 3 if codec == "sharded"
                                               else CHUNK}},
                            "chunk_key_encoding": {"name": "default"},
                            "fill_value": 0, "codecs": CODECS[codec]}
        spec["create"] = True
        spec["delete_existing"] = True
    return ts.open(spec).result()


def main() -> None:
    op, path, data_path, codec = sys.argv[1:5]
    extra = sys.argv[5:]
    data = np.fromfile(data_path, dtype="<f4").reshape(SHAPE)
    if op in ("write", "durable-write"):
        t = open_array(path, codec, True, sync=op == "durable-write")
        start = time.perf_counter()
        t.write(data).result()
    elif op == "read":
        t = open_array(path, codec, False)
        start = time.perf_counter()
        out = t.read().result()
        seconds = time.perf_counter() - start
        assert np.array_equal(out, data), "tensorstore read other data"
        print(json.dumps({"seconds": seconds, "peak_mib": peak_mib()}))
        return
    elif op == "rmw":
        first, count = ([int(v) for v in s.split(",")] for s in extra[0].split(":"))
        region = tuple(slice(f, f + c) for f, c in zip(first, count))
        values = np.ascontiguousarray(data[region] * 2)
        t = open_array(path, codec, False)
        start = time.perf_counter()
        t[region].write(values).result()
    elif op == "random":
        starts = np.loadtxt(extra[0], dtype=np.int64).reshape(-1, 3)
        t = open_array(path, codec, False)
        start = time.perf_counter()
        for z, y, x in starts:
            t[z:z + 16, y:y + 16, x:x + 16].read().result()
    else:
        raise SystemExit(f"unknown operation {op}")
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "peak_mib": peak_mib()}))


if __name__ == "__main__":
    main()
