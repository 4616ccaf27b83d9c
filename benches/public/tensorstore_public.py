"""tensorstore on the workloads of zarr_benchmarks, written as that suite's own tensorstore
scripts (tensorstore_python_benchmark_read.py and ..._roundtrip.py) are: one workload per
process, timed from outside (scripts/bench-public.sh runs it under /usr/bin/time -v).

    python tensorstore_public.py read-all PATH
    python tensorstore_public.py read-chunks PATH          # shards when sharded, one at a time
    python tensorstore_public.py read-inner-chunks PATH    # inner chunks, one at a time
    python tensorstore_public.py roundtrip INPUT OUTPUT    # batches of cpu_count() chunks
    python tensorstore_public.py roundtrip-unsynced INPUT OUTPUT   # without file_io_sync
    python tensorstore_public.py check PATH D0,D1,D2       # exit 1 unless PATH holds the
                                                           # benchmark values (numpy)
"""

import itertools
import multiprocessing
import sys

import numpy as np
import tensorstore as ts


def open_array(path: str):
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()


def chunk_slices(shape, chunks):
    """Every chunk of `shape` in `chunks`, as tuples of slices, in C order."""
    per_dim = [tuple(slice(i * c, min(d, i * c + c)) for i in range(-(-d // c)))
               for c, d in zip(chunks, shape)]
    return tuple(itertools.product(*per_dim))


def read_one_by_one(path: str, inner: bool) -> None:
    dataset = open_array(path)
    layout = dataset.chunk_layout
    chunks = layout.read_chunk.shape if inner else layout.write_chunk.shape
    for region in chunk_slices(dataset.domain.shape, chunks):
        dataset[region].read().result()


def roundtrip(path: str, output: str, sync: bool) -> None:
    dataset = open_array(path)
    new_dataset = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": output},
                           "context": {"file_io_sync": sync},
                           "create": True, "delete_existing": True,
                           "schema": dataset.schema}).result()
    chunks = dataset.chunk_layout.write_chunk.shape
    threads = multiprocessing.cpu_count()
    regions = chunk_slices(new_dataset.shape, chunks)
    for first in range(0, len(regions), threads):  # itertools.batched, before Python 3.12
        batch = regions[first:first + threads]
        with ts.Transaction() as txn:
            for region in batch:
                new_dataset.with_transaction(txn)[region] = dataset[region]


def expected(shape) -> np.ndarray:
    """The benchmark values, computed independently of libzarr's generator."""
    x0, x1, x2 = np.indices(shape, dtype=np.uint64)
    return ((x2 + (x1 * x1) // 32 + x0 * x0 * x0) % 65536).astype(np.uint16)


def main() -> None:
    op, args = sys.argv[1], sys.argv[2:]
    if op == "read-all":
        open_array(args[0]).read().result()
    elif op in ("read-chunks", "read-inner-chunks"):
        read_one_by_one(args[0], op == "read-inner-chunks")
    elif op in ("roundtrip", "roundtrip-unsynced"):
        roundtrip(args[0], args[1], op == "roundtrip")
    elif op == "check":
        shape = tuple(int(v) for v in args[1].split(","))
        got = open_array(args[0]).read().result()
        if got.shape != shape or not np.array_equal(got, expected(shape)):
            sys.exit(f"check: {args[0]} does not hold the benchmark values of shape {shape}")
    else:
        sys.exit(f"unknown workload {op!r}: read-all, read-chunks, read-inner-chunks, "
                 "roundtrip, roundtrip-unsynced or check")


if __name__ == "__main__":
    main()
