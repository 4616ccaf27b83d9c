"""Object-store speed benchmark: libzarr beside zarr-python 3 (obstore) and tensorstore on one
S3 bucket, through a counting and delaying proxy (proxy.py), for a float32 array of
1024 x 512 x 512 (1 GiB) in 64^3 chunks and in 256^3 shards of 32^3 chunks, zstd level 1
(v3), every backend at its default settings.

Workloads: full write (each backend its own new prefix), full read, 1000 random 16^3
regions and 1000 random inner chunks, one call after another (the reads on the array
libzarr wrote, each from a freshly opened array; every backend's bytes are checked against
the source data). Each (backend, workload) runs in its own process: its peak RSS is the
process's own high-water mark (VmHWM), its requests come from the proxy's counters. Beside
each full read, taking turns with the backends, the transfer limit: every object of the
array fetched whole with nothing decoded. Also printed: what the machine allows
(memcpy, zstd, the S3 servers' raw GET/PUT of 1 MiB objects with many in flight) and a
sweep of libzarr's `max_requests`.

Run it with scripts/bench-s3.sh, which starts the servers and proxies and passes their
addresses; `python bench.py --help` lists the options.
"""

import argparse
import asyncio
import ctypes
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

BUCKET = "bench"
REGION = "us-east-1"
BACKENDS = ("libzarr", "zarr-python", "tensorstore")
WORKLOADS = ("write", "read", "regions", "chunks")
REGION_EDGE = 16
ZSTD_LEVEL = 1
SWEEP = (8, 16, 32, 64, 128)
# The transfer limit measured beside every full read ([`get_all`]), as if a backend.
GET_ALL = "get-all"


def s3_store(endpoint: str, key: str, secret: str, prefix=None):
    """An obstore store on the benchmark's bucket at `endpoint` (plain HTTP), under `prefix`."""
    from obstore.store import S3Store
    return S3Store(BUCKET, prefix=prefix, endpoint=endpoint, region=REGION,
                   access_key_id=key, secret_access_key=secret,
                   client_options={"allow_http": True})


# ---- the data and what reading it must give ------------------------------------------------

# The array: 1024 x 512 x 512 float32 (1 GiB); --quick: 256^3 (64 MiB) with every edge of
# the layouts halved.
FULL, QUICK = (1024, 512, 512), (256, 256, 256)


def layouts(shape) -> dict:
    """The two layouts: (chunk edge, shard edge or None); 64^3 chunks, and 256^3 shards of
    32^3 chunks (halved for the quick array)."""
    scale = 512 if tuple(shape) == FULL else 256
    return {"chunks": (scale // 8, None), "shards": (scale // 16, scale // 2)}


def nbytes(shape) -> int:
    return 4 * int(np.prod(shape))


def region_starts(shape, count: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    return np.stack([rng.integers(0, s - REGION_EDGE + 1, size=count) for s in shape], axis=1)


def chunk_indices(shape, chunk: int, count: int) -> np.ndarray:
    rng = np.random.default_rng(2)
    return np.stack([rng.integers(0, s // chunk, size=count) for s in shape], axis=1)


def make_data(path: Path, shape) -> None:
    """A smooth field plus noise, float32, C order, written plane by plane."""
    rng = np.random.default_rng(0)
    a, b, c = (f(np.linspace(0, 6 * np.pi, s, dtype=np.float32))
               for f, s in zip((np.sin, lambda x: np.cos(0.7 * x),
                                lambda x: np.sin(1.3 * x + 0.5)), shape))
    with open(path, "wb") as f:
        for i in range(shape[0]):
            plane = 10 * a[i] * b[:, None] + 5 * c[None, :] + 20
            plane += rng.standard_normal(shape[1:], dtype=np.float32) * 0.05
            f.write(plane.astype(np.float32).tobytes())


def expected_digests(data: np.ndarray, reads: int) -> dict:
    """Digests of what each read workload must give, per layout."""
    shape = data.shape
    out = {"read": digest(data)}
    h = hashlib.blake2b(digest_size=16)
    for z, y, x in region_starts(shape, reads):
        h.update(np.ascontiguousarray(data[z:z + 16, y:y + 16, x:x + 16]).tobytes())
    out["regions"] = h.hexdigest()
    for name, (chunk, _) in layouts(shape).items():
        h = hashlib.blake2b(digest_size=16)
        for idx in chunk_indices(shape, chunk, reads):
            s = tuple(slice(i * chunk, (i + 1) * chunk) for i in idx)
            h.update(np.ascontiguousarray(data[s]).tobytes())
        out[f"chunks/{name}"] = h.hexdigest()
    return out


def digest(a: np.ndarray) -> str:
    return hashlib.blake2b(memoryview(np.ascontiguousarray(a)).cast("B"),
                           digest_size=16).hexdigest()


# ---- the proxy's counters --------------------------------------------------------------------

def proxy_stats(endpoint: str) -> dict:
    """The proxy's counters (zeros when `endpoint` is the server itself)."""
    if endpoint is None:
        return {"kinds": {}, "statuses": {}, "requests": 0, "bytes_down": 0, "bytes_up": 0,
                "max_in_flight": 0, "cpu_seconds": 0.0}
    with urllib.request.urlopen(f"{endpoint}/__proxy__/stats", timeout=30) as r:
        return json.load(r)


def stats_delta(before: dict, after: dict) -> dict:
    kinds = {k: after["kinds"].get(k, 0) - before["kinds"].get(k, 0) for k in after["kinds"]}
    statuses = {k: after["statuses"].get(k, 0) - before["statuses"].get(k, 0)
                for k in after["statuses"]}
    return {"requests": after["requests"] - before["requests"],
            "kinds": {k: v for k, v in kinds.items() if v},
            "statuses": {k: v for k, v in statuses.items() if v},
            "bytes_down": after["bytes_down"] - before["bytes_down"],
            "bytes_up": after["bytes_up"] - before["bytes_up"],
            "max_in_flight": after["max_in_flight"],
            "proxy_cpu": after["cpu_seconds"] - before["cpu_seconds"]}


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))


def cpu_bound(r: dict) -> float:
    """The least wall time the CPU seconds of a run's timed work (its process's, the
    server's and the proxy's) take on the cores: a run near it is bound by the CPU, not by
    the network or the library's waiting. The server's and the proxy's are counted over
    the whole backend process, which asks nothing of them outside its timed work."""
    cpu = r["timed_cpu"] + r["server_cpu"] + r["stats"]["proxy_cpu"]
    return cpu / cores()


def cpu_shares(r: dict) -> str:
    """The CPU seconds of a run's timed work and the bound they set, when known."""
    if r.get("timed_cpu") is None or r.get("server_cpu") is None:
        return ""
    return (f" (timed {r['timed_cpu']:.1f}s +server {r['server_cpu']:.1f}s +proxy "
            f"{r['stats']['proxy_cpu']:.1f}s ≥{cpu_bound(r):.2f}s)")


def process_cpu(pid):
    """CPU seconds (user and system) process `pid` has used so far; None without a pid or
    when the process is gone."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except FileNotFoundError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---- libzarr through its C API ---------------------------------------------------------------

class LibZarr:
    """The few calls of include/zarr.h the benchmark needs, through ctypes."""
    FLOAT32, ORDER_C, MODE_R, MODE_W_MINUS = 11, 0, 0, 4

    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path)
        u64s = ctypes.POINTER(ctypes.c_uint64)
        handle = ctypes.c_void_p
        for name, args in {
            "zarr_store_open_url": [ctypes.c_char_p, ctypes.c_int32, ctypes.c_char_p,
                                    ctypes.POINTER(handle)],
            "zarr_array_builder_new": [ctypes.c_int32, ctypes.c_size_t, u64s,
                                       ctypes.POINTER(handle)],
            "zarr_array_builder_set_chunk_shape": [handle, ctypes.c_size_t, u64s],
            "zarr_array_builder_set_shard_shape": [handle, ctypes.c_size_t, u64s],
            "zarr_array_builder_set_compressor_json": [handle, ctypes.c_char_p],
            "zarr_array_builder_set_fill_value_json": [handle, ctypes.c_char_p],
            "zarr_array_builder_set_zarr_format": [handle, ctypes.c_int32],
            "zarr_array_create": [handle, handle, ctypes.c_char_p, ctypes.c_int32,
                                  ctypes.POINTER(handle)],
            "zarr_array_open": [handle, ctypes.c_char_p, ctypes.c_int32,
                                ctypes.POINTER(handle)],
            "zarr_array_read": [handle, ctypes.c_size_t, u64s, u64s, ctypes.c_int32,
                                ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t],
            "zarr_array_write": [handle, ctypes.c_size_t, u64s, u64s, ctypes.c_int32,
                                 ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t],
            "zarr_store_close": [handle],
            "zarr_last_error": [ctypes.c_char_p, ctypes.c_size_t,
                                ctypes.POINTER(ctypes.c_size_t)],
        }.items():
            getattr(self.lib, name).argtypes = args
            getattr(self.lib, name).restype = ctypes.c_int32
        for name in ("zarr_array_free", "zarr_store_free", "zarr_array_builder_free"):
            getattr(self.lib, name).argtypes = [handle]
            getattr(self.lib, name).restype = None

    def call(self, name: str, *args) -> None:
        status = getattr(self.lib, name)(*args)
        if status != 0:
            buf = ctypes.create_string_buffer(4096)
            self.lib.zarr_last_error(buf, len(buf), None)
            raise RuntimeError(f"{name}: status {status}: {buf.value.decode()}")

    @staticmethod
    def u64(values) -> ctypes.Array:
        return (ctypes.c_uint64 * len(values))(*[int(v) for v in values])

    def open_store(self, url: str, options: dict, writable: bool) -> ctypes.c_void_p:
        store = ctypes.c_void_p()
        mode = self.MODE_W_MINUS if writable else self.MODE_R
        self.call("zarr_store_open_url", url.encode(), mode, json.dumps(options).encode(),
                  ctypes.byref(store))
        return store

    def create(self, store, shape, chunk: int, shard) -> ctypes.c_void_p:
        builder = ctypes.c_void_p()
        self.call("zarr_array_builder_new", self.FLOAT32, 3, self.u64(shape),
                  ctypes.byref(builder))
        try:
            self.call("zarr_array_builder_set_chunk_shape", builder, 3, self.u64([chunk] * 3))
            if shard:
                self.call("zarr_array_builder_set_shard_shape", builder, 3,
                          self.u64([shard] * 3))
            self.call("zarr_array_builder_set_compressor_json", builder,
                      json.dumps({"id": "zstd", "level": ZSTD_LEVEL}).encode())
            self.call("zarr_array_builder_set_fill_value_json", builder, b"0")
            self.call("zarr_array_builder_set_zarr_format", builder, 3)
            array = ctypes.c_void_p()
            self.call("zarr_array_create", builder, store, b"", self.MODE_W_MINUS,
                      ctypes.byref(array))
        finally:
            self.lib.zarr_array_builder_free(builder)
        return array

    def open_array(self, store) -> ctypes.c_void_p:
        array = ctypes.c_void_p()
        self.call("zarr_array_open", store, b"", self.MODE_R, ctypes.byref(array))
        return array

    def read(self, array, start, count, out: np.ndarray) -> None:
        self.call("zarr_array_read", array, 3, self.u64(start), self.u64(count), self.FLOAT32,
                  self.ORDER_C, out.ctypes.data, out.nbytes)

    def write(self, array, start, count, data: np.ndarray) -> None:
        self.call("zarr_array_write", array, 3, self.u64(start), self.u64(count),
                  self.FLOAT32, self.ORDER_C, data.ctypes.data, data.nbytes)


# ---- the backends, each run in a child process -----------------------------------------------

class Backend:
    """Opens, creates and reads an array at `prefix` of the bucket behind `endpoint`."""

    def __init__(self, job: dict):
        self.job = job
        self.shape = tuple(job["shape"])
        self.chunk, self.shard = layouts(self.shape)[job["layout"]]


def plain_empty(shape) -> np.ndarray:
    """An uninitialised float32 array in anonymous memory, as C's malloc gives a large buffer
    and as tensorstore allocates its output: numpy asks for transparent huge pages for large
    arrays, whose first touch costs several times more on some virtual machines, and the
    libraries would not be compared on the same memory."""
    import mmap
    count = int(np.prod(shape))
    buf = mmap.mmap(-1, max(count * 4, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return np.frombuffer(buf, dtype=np.float32, count=count).reshape(shape)


class LibZarrBackend(Backend):
    def __init__(self, job):
        super().__init__(job)
        self.z = LibZarr(job["lib"])
        self.options = {"endpoint": job["endpoint"], "region": REGION,
                        "access_key_id": job["key"], "secret_access_key": job["secret"]}
        if job.get("max_requests"):
            self.options["max_requests"] = job["max_requests"]
        self.url = f"s3://{BUCKET}/{job['prefix']}"

    def create(self):
        self.store = self.z.open_store(self.url, self.options, writable=True)
        self.array = self.z.create(self.store, self.shape, self.chunk, self.shard)

    def write_all(self, data):
        self.z.write(self.array, [0, 0, 0], data.shape, data)
        self.z.call("zarr_store_close", self.store)

    def open(self):
        self.store = self.z.open_store(self.url, self.options, writable=False)
        self.array = self.z.open_array(self.store)

    def read(self, start, count):
        out = plain_empty(count)
        self.z.read(self.array, start, count, out)
        return out


class ZarrPythonBackend(Backend):
    def __init__(self, job):
        super().__init__(job)
        global zarr
        import zarr
        from zarr.storage import ObjectStore
        self.make_store = lambda read_only: ObjectStore(
            s3_store(job["endpoint"], job["key"], job["secret"], job["prefix"]),
            read_only=read_only)

    def create(self):
        from zarr.codecs import ZstdCodec
        self.array = zarr.create_array(
            self.make_store(False), shape=self.shape, dtype="float32",
            chunks=(self.chunk,) * 3, shards=(self.shard,) * 3 if self.shard else None,
            compressors=ZstdCodec(level=ZSTD_LEVEL, checksum=False), fill_value=0.0,
            zarr_format=3)

    def write_all(self, data):
        self.array[...] = data

    def open(self):
        self.array = zarr.open_array(self.make_store(True), mode="r", zarr_format=3)

    def read(self, start, count):
        return self.array[tuple(slice(s, s + c) for s, c in zip(start, count))]


class TensorstoreBackend(Backend):
    def __init__(self, job):
        super().__init__(job)
        global ts
        import tensorstore as ts
        self.spec = {"driver": "zarr3",
                     "kvstore": {"driver": "s3", "bucket": BUCKET, "path": job["prefix"] + "/",
                                 "endpoint": job["endpoint"], "aws_region": REGION}}

    def create(self):
        inner = [{"name": "bytes", "configuration": {"endian": "little"}},
                 {"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}]
        if self.shard:
            grid, codecs = self.shard, [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [self.chunk] * 3, "codecs": inner,
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}],
                "index_location": "end"}}]
        else:
            grid, codecs = self.chunk, inner
        metadata = {"shape": list(self.shape), "data_type": "float32",
                    "chunk_grid": {"name": "regular",
                                   "configuration": {"chunk_shape": [grid] * 3}},
                    "chunk_key_encoding": {"name": "default"}, "codecs": codecs,
                    "fill_value": 0}
        self.array = ts.open(dict(self.spec, metadata=metadata), create=True).result()

    def write_all(self, data):
        self.array.write(data).result()

    def open(self):
        self.array = ts.open(self.spec, open=True, read=True).result()

    def read(self, start, count):
        return self.array[tuple(slice(s, s + c) for s, c in zip(start, count))].read().result()


BACKEND_CLASSES = {"libzarr": LibZarrBackend, "zarr-python": ZarrPythonBackend,
                   "tensorstore": TensorstoreBackend}


def peak_rss_mib() -> float:
    """This process's peak resident memory (VmHWM: from its exec on, threads included)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def get_all(job: dict) -> dict:
    """The transfer limit of a full read, in this (child) process: every object under the
    array's prefix (listed first, untimed) fetched whole by obstore with 64 requests in
    flight, nothing decoded or copied out. No client reading the array through this
    endpoint can be faster by much."""
    import obstore
    proxy = job.get("proxy")
    store = s3_store(job["endpoint"], job["key"], job["secret"], job["prefix"])
    objects = [meta for batch in obstore.list(store) for meta in batch]
    limit = asyncio.Semaphore(64)

    async def get(path) -> int:
        async with limit:
            return len(await (await obstore.get_async(store, path)).bytes_async())

    async def get_every() -> int:
        return sum(await asyncio.gather(*(get(meta["path"]) for meta in objects)))

    loop = asyncio.new_event_loop()
    before = proxy_stats(proxy)
    t0, cpu0 = time.perf_counter(), time.process_time()
    got = loop.run_until_complete(get_every())
    seconds, timed_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    stored = sum(meta["size"] for meta in objects)
    if got != stored:
        raise RuntimeError(f"fetched {got} bytes of objects listed at {stored}")
    return {"seconds": seconds, "timed_cpu": timed_cpu, "stored_bytes": stored,
            "stats": stats_delta(before, proxy_stats(proxy))}


def run_child(job: dict) -> dict:
    """One workload of one backend, in this (child) process."""
    if job["backend"] == GET_ALL:
        return get_all(job)
    shape, proxy = tuple(job["shape"]), job.get("proxy")
    if job["workload"] == "write":
        data = np.fromfile(job["data"], dtype=np.float32).reshape(shape)
    backend = BACKEND_CLASSES[job["backend"]](job)
    before = proxy_stats(proxy)
    t0, cpu0 = time.perf_counter(), time.process_time()
    if job["workload"] == "write":
        backend.create()
        backend.write_all(data)
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "timed_cpu": time.process_time() - cpu0,
                "stats": stats_delta(before, proxy_stats(proxy))}
    backend.open()
    t_open = time.perf_counter() - t0
    opened = proxy_stats(proxy)
    h = hashlib.blake2b(digest_size=16)
    if job["workload"] == "read":
        out = backend.read([0, 0, 0], shape)
        seconds = time.perf_counter() - t0
        timed_cpu = time.process_time() - cpu0
        h.update(memoryview(np.ascontiguousarray(out)).cast("B"))
    else:
        timed_cpu = None  # the timed reads are interleaved with untimed hashing
        if job["workload"] == "regions":
            boxes = [(s, [REGION_EDGE] * 3) for s in region_starts(shape, job["reads"])]
        else:
            c = backend.chunk
            boxes = [(i * c, [c] * 3) for i in chunk_indices(shape, c, job["reads"])]
        seconds = t_open
        for start, count in boxes:
            t = time.perf_counter()
            out = backend.read(start, count)
            seconds += time.perf_counter() - t
            h.update(np.ascontiguousarray(out).tobytes())  # not timed
    after = proxy_stats(proxy)
    return {"seconds": seconds, "timed_cpu": timed_cpu, "open_seconds": t_open,
            "digest": h.hexdigest(),
            "open_requests": stats_delta(before, opened)["requests"],
            "stats": stats_delta(before, after)}


# ---- the parent: runs the children and prints the tables -------------------------------------

class Runner:
    def __init__(self, args):
        self.args = args
        self.work = Path(args.work_dir)
        self.shape = args.shape
        self.results = {}

    def child(self, job: dict) -> dict:
        """Runs `job` in a new process: its result with its peak RSS (MiB)."""
        env = dict(os.environ, AWS_ACCESS_KEY_ID=self.args.key,
                   AWS_SECRET_ACCESS_KEY=self.args.secret, AWS_REGION=REGION,
                   AWS_CONFIG_FILE="/dev/null", AWS_SHARED_CREDENTIALS_FILE="/dev/null",
                   AWS_EC2_METADATA_DISABLED="true")
        # The child's messages (tensorstore's credential chain is chatty) are shown only
        # when it fails.
        with open(self.work / "child-stderr.log", "w+") as err:
            p = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(job)],
                                 stdout=subprocess.PIPE, stderr=err, env=env)
            out = p.stdout.read()
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            if p.returncode != 0:
                err.seek(0)
                sys.stderr.write(err.read())
                raise RuntimeError(f"{job['backend']} {job['workload']} failed "
                                   f"(exit {p.returncode})")
        result = json.loads(out.decode().strip().splitlines()[-1])
        # wait4's ru_maxrss is at least the parent's peak when the child was started (Linux
        # carries the high-water mark over exec): the child's own VmHWM is reported.
        result["wait4_maxrss_mib"] = usage.ru_maxrss / 1024
        result["cpu_seconds"] = usage.ru_utime + usage.ru_stime
        return result

    def job(self, backend, workload, layout, endpoint, prefix, **extra) -> dict:
        extra.setdefault("proxy", endpoint)
        return dict(backend=backend, workload=workload, layout=layout, shape=self.shape,
                    endpoint=endpoint, prefix=prefix, key=self.args.key,
                    secret=self.args.secret, lib=self.args.lib, reads=self.args.reads,
                    data=str(self.work / "data.f32"), **extra)

    def remove_prefix(self, prefix: str) -> None:
        """Erases a prefix (between measurements: not counted)."""
        import obstore
        store = s3_store(self.args.setup, self.args.key, self.args.secret, prefix)
        paths = [m["path"] for batch in obstore.list(store) for m in batch]
        for i in range(0, len(paths), 1000):
            obstore.delete(store, paths[i:i + 1000])

    def reference_present(self, layout: str) -> bool:
        """Whether the bucket holds the reference array of `layout` with this run's shape."""
        import obstore
        store = s3_store(self.args.setup, self.args.key, self.args.secret)
        try:
            doc = json.loads(bytes(obstore.get(store, f"ref/{layout}/zarr.json").bytes()))
        except FileNotFoundError:
            return False
        chunk, shard = layouts(self.shape)[layout]
        grid = doc["chunk_grid"]["configuration"]["chunk_shape"]
        return doc["shape"] == list(self.shape) and grid == [shard or chunk] * 3

    # -- setup

    def prepare(self) -> None:
        data_path = self.work / "data.f32"
        size = nbytes(self.shape)
        expected_path = self.work / f"expected-{size}-{self.args.reads}.json"
        if not data_path.exists() or data_path.stat().st_size != size:
            print(f"generating {size / 2 ** 20:.0f} MiB of data ...", flush=True)
            make_data(data_path, self.shape)
        if not expected_path.exists():
            data = np.memmap(data_path, dtype=np.float32, mode="r").reshape(self.shape)
            expected_path.write_text(json.dumps(expected_digests(data, self.args.reads)))
        self.expected = json.loads(expected_path.read_text())
        # The array every backend reads, written by libzarr.
        for layout in layouts(self.shape):
            if self.args.reuse_reference and self.reference_present(layout):
                continue
            self.remove_prefix(f"ref/{layout}")
            r = self.child(self.job("libzarr", "write", layout, self.args.setup,
                                    f"ref/{layout}", proxy=None))
            print(f"reference array ({layout}) written by libzarr in {r['seconds']:.1f} s",
                  flush=True)

    # -- what the machine allows

    def limits(self) -> None:
        print("\n== What the machine allows (same run) ==")
        n = 1 << 28  # 1 GiB of float32
        src = np.ones(n, dtype=np.float32)
        dst = np.empty_like(src)
        dst[:] = 0
        t = time.perf_counter()
        np.copyto(dst, src)
        print(f"memcpy 1 GiB (1 thread):                {src.nbytes / (time.perf_counter() - t) / 1e6:8.0f} MB/s")
        del src, dst
        from numcodecs import Zstd
        data = np.fromfile(self.work / "data.f32", dtype=np.float32, count=64 * 64 * 64 * 64)
        chunks = [data[i * 64 ** 3:(i + 1) * 64 ** 3].tobytes() for i in range(64)]
        codec = Zstd(level=ZSTD_LEVEL)
        t = time.perf_counter()
        encoded = [codec.encode(c) for c in chunks]
        enc = time.perf_counter() - t
        t = time.perf_counter()
        for e in encoded:
            codec.decode(e)
        dec = time.perf_counter() - t
        size = sum(len(c) for c in chunks)
        ratio = sum(len(e) for e in encoded) / size
        print(f"zstd level {ZSTD_LEVEL} of 1 MiB chunks (1 thread): encode {size / enc / 1e6:6.0f} MB/s, "
              f"decode {size / dec / 1e6:6.0f} MB/s, stored size {ratio:.0%} of raw")
        print(f"CPU cores: {os.cpu_count()}")
        for i, (name, endpoint) in enumerate(self.args.raw):
            put, get = asyncio.run(raw_throughput(self.args, endpoint, f"raw/{i}"))
            print(f"{name:40s} 1 MiB objects, 64 in flight: PUT {put:6.0f} MB/s, "
                  f"GET {get:6.0f} MB/s")
        print(f"The benchmark's server: {self.args.server}.")

    # -- the comparison

    def run(self, backend, workload, layout, endpoint, latency, **extra) -> dict:
        """One run of a workload (a write goes to a new prefix, erased afterwards)."""
        if workload == "write":
            prefix = f"w/{latency}/{backend}/{layout}"
            self.remove_prefix(prefix)
        else:
            prefix = f"ref/{layout}"
        server_cpu = process_cpu(self.args.server_pid)
        r = self.child(self.job(backend, workload, layout, endpoint, prefix, **extra))
        server_after = process_cpu(self.args.server_pid)
        r["server_cpu"] = None if None in (server_cpu, server_after) else server_after - server_cpu
        if workload == "write":
            self.remove_prefix(prefix)
        elif backend != GET_ALL:
            key = f"chunks/{layout}" if workload == "chunks" else workload
            r["ok"] = r["digest"] == self.expected[key]
        return r

    def compare(self, latency: int, endpoint: str) -> None:
        args = self.args
        for layout in layouts(self.shape):
            for workload in args.workloads:
                # The median of several runs, the backends taking turns (the machine is
                # shared): full writes and reads, and at 0 ms the 1000 reads too (short,
                # so as easily slowed by other work); at 20 ms those take half a minute
                # or more of round trips and run once.
                repeat = args.repeat if workload in ("write", "read") or latency == 0 else 1
                takers = list(args.backends) + ([GET_ALL] if workload == "read" else [])
                runs = {b: [] for b in takers}
                for _ in range(repeat):
                    for backend in takers:
                        r = self.run(backend, workload, layout, endpoint, latency)
                        runs[backend].append(r)
                        flag = "" if r.get("ok", True) else "  DATA DIFFERS"
                        print(f"  {latency:>2} ms {workload:7s} {layout:6s} {backend:11s} "
                              f"{r['seconds']:7.2f} s {r['stats']['requests']:6d} req "
                              f"{r['rss_mib']:6.0f} MiB {r['cpu_seconds']:6.1f} s CPU{flag}",
                              flush=True)
                for backend, rs in runs.items():
                    # The median run (the faster of the middle two for an even count).
                    median = sorted(rs, key=lambda r: r["seconds"])[(len(rs) - 1) // 2]
                    median["ok"] = all(r.get("ok", True) for r in rs)
                    median["all_seconds"] = [r["seconds"] for r in rs]
                    self.results[(latency, workload, layout, backend)] = median
        self.table(latency)

    def table(self, latency: int) -> None:
        args = self.args
        mib = nbytes(self.shape) / 1e6
        shape = "x".join(map(str, self.shape))
        print(f"\n== {latency} ms per request: {shape} float32 ({nbytes(self.shape) / 2 ** 30:g} "
              f"GiB), zstd {ZSTD_LEVEL}, server {args.server} ==")
        runs = f"median of {args.repeat} runs" + ("" if latency == 0 else " for write and read")
        print(f"speed ({runs}): MB/s for write and read (MB = 10^6 bytes of the array), "
              f"reads/s for regions and chunks; req: requests (the open included for reads); "
              f"RSS: peak MiB")
        head = f"{'workload':8s} {'layout':6s} |"
        for b in args.backends:
            head += f" {b:^30s} |"
        print(head + " libzarr/best peer | transfer limit")
        sub = f"{'':15s} |" + "".join(f" {'s':>6s} {'speed':>8s} {'req':>6s} {'RSS':>6s} |"
                                       for _ in args.backends)
        print(sub + f" {'speed':>6s} {'req':>7s} | {'s':>6s} {'libzarr':>7s}")
        problems = []
        for workload in args.workloads:
            for layout in layouts(self.shape):
                line = f"{workload:8s} {layout:6s} |"
                speeds, reqs = {}, {}
                for b in args.backends:
                    r = self.results.get((latency, workload, layout, b))
                    if r is None:
                        line += f" {'':30s} |"
                        continue
                    amount = mib if workload in ("write", "read") else args.reads
                    speeds[b] = amount / r["seconds"]
                    reqs[b] = r["stats"]["requests"]
                    flag = "" if r.get("ok", True) else "!"
                    line += (f" {r['seconds']:6.2f} {speeds[b]:8.1f} {reqs[b]:6d} "
                             f"{r['rss_mib']:5.0f}{flag or ' '} |")
                    if flag:
                        problems.append(f"{b} read different bytes ({workload}, {layout})")
                peers = [b for b in speeds if b != "libzarr"]
                if "libzarr" in speeds and peers:
                    best = max(speeds[b] for b in peers)
                    fewest = min(reqs[b] for b in peers)
                    line += f" {speeds['libzarr'] / best:5.2f}x {reqs['libzarr']:>4d}/{fewest:<4d}"
                else:
                    line += f" {'':16s}"
                limit = self.results.get((latency, workload, layout, GET_ALL))
                if limit is not None:
                    line += f"| {limit['seconds']:6.2f}"
                    ours = self.results.get((latency, workload, layout, "libzarr"))
                    if ours is not None:
                        line += f" {limit['seconds'] / ours['seconds']:6.2f}x"
                print(line)
        print("transfer limit: every object of the array fetched whole by obstore, 64 "
              "requests in flight, nothing decoded (median run); libzarr: its speed as a "
              "share of that limit")
        print("the median runs: requests by kind (the open's requests of reads), MB each way, "
              "most requests in flight, CPU seconds of the backend's process (and for full "
              "writes and reads: of its timed work, the server and the proxy, and the least "
              f"time those CPU seconds take on the {cores()} cores, when the server's "
              "process id was given) ("
              + " | ".join(args.backends) + " | transfer limit):")
        for workload in args.workloads:
            for layout in layouts(self.shape):
                parts = []
                for b in list(args.backends) + [GET_ALL]:
                    r = self.results.get((latency, workload, layout, b))
                    if r:
                        kinds = " ".join(f"{k}:{v}" for k, v in sorted(r["stats"]["kinds"].items()))
                        extra = f" (open {r['open_requests']})" if "open_requests" in r else ""
                        parts.append(kinds + extra
                                     + f" MB↓{r['stats']['bytes_down'] / 1e6:.0f}"
                                     + f" MB↑{r['stats']['bytes_up'] / 1e6:.0f}"
                                     + f" in-flight≤{r['stats']['max_in_flight']}"
                                     + f" CPU {r['cpu_seconds']:.1f}s"
                                     + cpu_shares(r))
                print(f"  {workload:8s} {layout:6s} " + " | ".join(parts))
        if problems:
            print("DATA CHECK FAILED: " + "; ".join(problems))
        else:
            print("data check: every read gave exactly the source data's bytes")

    # -- libzarr's max_requests

    def sweep(self, endpoints: dict) -> None:
        rows = {}
        for latency, endpoint in endpoints.items():
            for layout in layouts(self.shape):
                for workload in ("write", "read"):
                    # The best of several runs, the values taking turns.
                    for _ in range(self.args.repeat):
                        for m in self.args.sweep:
                            r = self.run("libzarr", workload, layout, endpoint, latency,
                                         max_requests=m)
                            if not r.get("ok", True):
                                raise RuntimeError("libzarr read different bytes in the sweep")
                            speed = nbytes(self.shape) / 1e6 / r["seconds"]
                            key = (latency, layout, workload, m)
                            rows[key] = max(rows.get(key, 0), speed)
                            print(f"  {latency:>2} ms {workload:5s} {layout:6s} max_requests "
                                  f"{m:4d}: {speed:7.1f} MB/s (in flight at most "
                                  f"{r['stats']['max_in_flight']})", flush=True)
        print(f"\n== libzarr max_requests sweep (MB/s, best of {self.args.repeat}; full write "
              "and full read) ==")
        configs = [(lat, layout, w) for lat in endpoints for layout in layouts(self.shape)
                   for w in ("write", "read")]
        print(f"{'max_requests':>12s} | " + " | ".join(f"{f'{w} {layout} {lat}ms':>18s}"
                                                     for lat, layout, w in configs)
              + " | worst ratio to best")
        worst = {}
        for m in self.args.sweep:
            ratios = [rows[(lat, layout, w, m)] / max(rows[(lat, layout, w, k)]
                                                      for k in self.args.sweep)
                      for lat, layout, w in configs]
            worst[m] = min(ratios)
            print(f"{m:>12d} | " + " | ".join(f"{rows[(lat, layout, w, m)]:18.1f}"
                                              for lat, layout, w in configs)
                  + f" | {worst[m]:.2f}")
        good = [m for m in self.args.sweep if worst[m] >= 0.95]
        pick = min(good) if good else max(worst, key=worst.get)
        print(f"smallest max_requests within 5% of the best everywhere: {pick}"
              if good else f"no value is within 5% of the best everywhere; best worst case: {pick}")


async def raw_throughput(args, endpoint: str, prefix: str) -> tuple:
    """PUT then GET 256 objects of 1 MiB with 64 in flight through obstore: MB/s each way."""
    import obstore
    store = s3_store(endpoint, args.key, args.secret, prefix)
    payload = os.urandom(1 << 20)
    count, limit = 256, asyncio.Semaphore(64)

    async def put(i):
        async with limit:
            await obstore.put_async(store, f"o{i}", payload)

    async def get(i):
        async with limit:
            r = await obstore.get_async(store, f"o{i}")
            await r.bytes_async()

    t = time.perf_counter()
    await asyncio.gather(*(put(i) for i in range(count)))
    put_speed = count * len(payload) / (time.perf_counter() - t) / 1e6
    t = time.perf_counter()
    await asyncio.gather(*(get(i) for i in range(count)))
    get_speed = count * len(payload) / (time.perf_counter() - t) / 1e6
    await obstore.delete_async(store, [f"o{i}" for i in range(count)])
    return put_speed, get_speed


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        result = run_child(json.loads(sys.argv[2]))
        result["rss_mib"] = peak_rss_mib()
        print(json.dumps(result), flush=True)
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lib", required=True, help="path of libzarr.so")
    p.add_argument("--work-dir", required=True, help="where the source data is kept")
    p.add_argument("--server", required=True, help="name of the S3 server, for the output")
    p.add_argument("--setup", required=True,
                   help="endpoint for writing the reference arrays and erasing (not counted)")
    p.add_argument("--proxy", action="append", default=[], metavar="MS=URL",
                   help="a proxy adding MS milliseconds per request (repeatable)")
    p.add_argument("--raw", action="append", default=[], metavar="LABEL=URL",
                   help="an endpoint whose raw GET/PUT throughput is printed (repeatable)")
    p.add_argument("--server-pid", type=int,
                   help="process id of the S3 server, whose CPU time each run reports")
    p.add_argument("--key", default="bench-key")
    p.add_argument("--secret", default="bench-secret")
    p.add_argument("--quick", action="store_true", help="256^3 (64 MiB) and 200 reads")
    p.add_argument("--backends", default=",".join(BACKENDS))
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--sweep", default=",".join(map(str, SWEEP)),
                   help="max_requests values for libzarr ('' for no sweep)")
    p.add_argument("--repeat", type=int, default=3,
                   help="runs of each full write and read (and sweep point): the median counts "
                        "(the best in the sweep)")
    p.add_argument("--reuse-reference", action="store_true",
                   help="keep the reference arrays found in the bucket (for iteration)")
    args = p.parse_args()
    args.shape, args.reads = (QUICK, 200) if args.quick else (FULL, 1000)
    args.backends = args.backends.split(",")
    args.workloads = args.workloads.split(",")
    args.sweep = [int(m) for m in args.sweep.split(",") if m]
    args.raw = [tuple(r.split("=", 1)) for r in args.raw]
    proxies = {int(m): url for m, url in (x.split("=", 1) for x in args.proxy)}
    runner = Runner(args)
    t0 = time.perf_counter()
    runner.prepare()
    runner.limits()
    for latency, endpoint in proxies.items():
        print(f"\n-- {latency} ms per request --", flush=True)
        runner.compare(latency, endpoint)
    if args.sweep:
        print("\n-- libzarr max_requests sweep --", flush=True)
        runner.sweep(proxies)
    print(f"\ntotal time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
