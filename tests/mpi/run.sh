#!/usr/bin/env bash
# Builds examples-c/mpi_write.c with mpicc and runs it with 4 OpenMPI ranks, with blocks
# aligned to chunks (no locking) and not aligned (process synchronization); each run is
# verified by rank 0 through libzarr and then by zarr-python 3 reading the array (Zarr v3,
# the default format). Then examples-c/mpi_write_s3.c writes a sharded array into a bucket
# of the moto S3 server (started here on loopback), with every shard owned by one rank and
# with shards shared by two ranks (versioned writes); zarr-python 3 reads it through obstore.
# Then examples-c/mpi_rectilinear.c writes uneven subdomains, one chunk of a rectilinear
# grid per rank (no synchronizer), verified by rank 0 through libzarr, and its Fortran
# version examples-c/mpi_rectilinear.f90 (module zarr, built here with mpifort) does the
# same from Fortran. When the toolchain builds Icechunk (Rust 1.95 or newer, as
# scripts/test.sh decides), the library is built with it and examples-c/mpi_icechunk.c has the
# ranks write each step in sessions of their own that rank 0 merges and commits as one
# snapshot; rank 0 checks the history and the values; and tests/mpi/commit.c does the same
# through the MPI layer (zarr_mpi_write, then zarr_mpi_commit) on 1, 2 and 3 ranks, and
# tests/mpi/collective_f.f90 from Fortran on 2 ranks.
# Last, the MPI layer (include/zarr_mpi.h, src-mpi/zarr_mpi.c): tests/mpi/collective.c (its
# collective writes and appends, two-phase I/O, collective errors) on 1, 2, 3, 4 and 8 ranks,
# on 3 ranks in S3, and once with the aggregators and their buffer set from the environment,
# a job with a rank killed during a collective append (the steps before it must be intact),
# a collective append on a disk that fills up (a small tmpfs, where this user may mount one),
# tests/mpi/collective_f.f90 (the Fortran module zarr_mpi) on 1 to 4 ranks, then
# examples-c/mpi_collective.c (a CF dataset appended per step from 4 ranks), read back by
# zarr-python 3 through its consolidated metadata.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
env_dir="${ZARR_TEST_ENV:-$root/.test-env}"
examples=(mpi_write mpi_write_s3 mpi_rectilinear)
list=""
if rustc --version | awk '{ split($2, v, "."); exit !(v[1] > 1 || v[2] >= 95) }'; then
  list=icechunk
fi
# scripts/test.sh passes the features of its other stages, so this build is theirs.
list=${ZARR_TEST_FEATURES-$list}
features=()
[ -z "$list" ] || features=(--features "$list")
[[ ",$list," != *,icechunk,* ]] || examples+=(mpi_icechunk)
cargo build --release --quiet ${features[@]+"${features[@]}"} --manifest-path "$root/Cargo.toml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "${CARGO_TARGET_DIR:-$root/target}/release/libzarr.so" "$work/libzarr.so"
ln -sf libzarr.so "$work/libzarr.so.0"
for example in "${examples[@]}"; do
  mpicc -std=c11 -O2 -Wall -Wextra -Werror -I "$root/include" "$root/examples-c/$example.c" \
    -L "$work" -lzarr -Wl,-rpath,"$work" -o "$work/$example"
done
mkdir "$work/mod"
mpifort -O2 -Wall -Werror -fcheck=all -J "$work/mod" "$root/bindings/fortran/src/zarr_c.f90" \
  "$root/bindings/fortran/src/zarr.f90" "$root/examples-c/mpi_rectilinear.f90" \
  -L "$work" -lzarr -Wl,-rpath,"$work" -o "$work/mpi_rectilinear_f"
mpirun_flags=(--oversubscribe -np 4)
[ "$(id -u)" -eq 0 ] && mpirun_flags+=(--allow-run-as-root)
for layout in aligned unaligned; do
  store="$work/$layout.zarr"
  OMPI_MCA_rmaps_base_oversubscribe=1 mpirun "${mpirun_flags[@]}" "$work/mpi_write" "$store" "$layout"
  "$env_dir/zp3/bin/python" - "$store" <<'PY'
import sys
import numpy as np
import zarr
a = zarr.open_array(sys.argv[1] + "/field", mode="r")
i, j, k = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in a.shape), indexing="ij")
expected = i * 1e6 + j * 1e3 + k
assert a.dtype == np.float64 and a[...].tobytes() == expected.tobytes(), "zarr-python read differs"
print(f"zarr-python 3 reads {sys.argv[1].rsplit('/', 1)[-1]} {a.shape} exactly")
PY
done

# Object storage: a moto server on a free loopback port, stopped on exit.
py="$env_dir/objstore/bin/python"
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$py" "$root/tests/common/moto_server.py" -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto=$!
trap 'kill $moto 2>/dev/null; rm -rf "$work"' EXIT
"$py" - "$port" <<'PY'
import socket, sys, time, urllib.request
port = int(sys.argv[1])
deadline = time.time() + 60
while True:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        if time.time() > deadline:
            raise
        time.sleep(0.1)
auth = ("AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, "
        "SignedHeaders=host, Signature=00")
req = urllib.request.Request(f"http://127.0.0.1:{port}/mpi", method="PUT", data=b"",
                             headers={"Authorization": auth})
urllib.request.urlopen(req, timeout=30).close()
PY
options="{\"endpoint\": \"http://127.0.0.1:$port\", \"region\": \"us-east-1\", \"access_key_id\": \"testing\", \"secret_access_key\": \"testing\", \"allow_http\": true}"
for sharing in owned shared; do
  OMPI_MCA_rmaps_base_oversubscribe=1 mpirun "${mpirun_flags[@]}" "$work/mpi_write_s3" \
    "s3://mpi/$sharing" "$options" "$sharing"
  "$py" - "$port" "$sharing" <<'PY'
import sys
import numpy as np
import zarr
from obstore.store import S3Store
from zarr.storage import ObjectStore
port, sharing = sys.argv[1], sys.argv[2]
s3 = S3Store("mpi", prefix=sharing, endpoint=f"http://127.0.0.1:{port}", region="us-east-1",
             access_key_id="testing", secret_access_key="testing",
             client_options={"allow_http": True})
group = zarr.open_consolidated(ObjectStore(s3, read_only=True), mode="r")
a = group["field"]
t, y, x = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in a.shape), indexing="ij")
expected = (t * 10000 + y * 100 + x).astype(np.float32)
assert a.shape == (8, 64, 64) and a.shards == (4, 32, 32), (a.shape, a.shards)
assert a[...].tobytes() == expected.tobytes(), "zarr-python read differs"
print(f"zarr-python 3 reads s3://mpi/{sharing} {a.shape} (consolidated) exactly")
PY
done
OMPI_MCA_rmaps_base_oversubscribe=1 mpirun "${mpirun_flags[@]}" "$work/mpi_rectilinear" \
  "$work/rectilinear.zarr"
OMPI_MCA_rmaps_base_oversubscribe=1 mpirun "${mpirun_flags[@]}" "$work/mpi_rectilinear_f" \
  "$work/rectilinear_f.zarr"
passed=6

# The MPI layer: its library as CMake builds it (a separate libzarr_mpi.so over libzarr.so).
mpicc -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -fPIC -shared -I "$root/include" \
  "$root/src-mpi/zarr_mpi.c" -L "$work" -lzarr -Wl,-rpath,"$work" -o "$work/libzarr_mpi.so"
for program in tests/mpi/collective examples-c/mpi_collective; do
  mpicc -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -I "$root/include" "$root/$program.c" \
    -L "$work" -lzarr_mpi -lzarr -lm -Wl,-rpath,"$work" -o "$work/${program##*/}"
done
root_flags=()
[ "$(id -u)" -eq 0 ] && root_flags+=(--allow-run-as-root)
for ranks in 1 2 3 4 8; do
  OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --oversubscribe -np "$ranks" \
    ${root_flags[@]+"${root_flags[@]}"} "$work/collective" "$work/collective-$ranks"
done
# The same cases on S3 (the moto server above): 3 ranks, every object a PUT of its own.
OMPI_MCA_rmaps_base_oversubscribe=1 COLLECTIVE_STORE_OPTIONS="$options" \
  mpirun --oversubscribe -np 3 ${root_flags[@]+"${root_flags[@]}"} \
  -x COLLECTIVE_STORE_OPTIONS "$work/collective" "s3://mpi/collective"
# A job whose last rank is killed (SIGKILL) during the collective append of step 6 of a
# sharded series: mpirun must fail, and the 6 steps completed before must be there, exact.
if OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --oversubscribe -np 4 \
    ${root_flags[@]+"${root_flags[@]}"} "$work/collective" --kill-at 6 "$work/killed" \
    >"$work/killed.log" 2>&1; then
  cat "$work/killed.log"
  echo "mpi: the job with a killed rank did not fail" >&2
  exit 1
fi
OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --oversubscribe -np 1 \
  ${root_flags[@]+"${root_flags[@]}"} "$work/collective" --check-killed 6 "$work/killed"
# A disk that fills up during a collective append: a tmpfs of 384 KiB (mounting one needs
# root; elsewhere the case is skipped, saying so). Every rank gets the error naming the
# aggregator whose write failed; the steps before stay intact.
mkdir "$work/full"
if mount -t tmpfs -o size=384k tmpfs "$work/full" 2>/dev/null; then
  trap 'umount "$work/full" 2>/dev/null || true; kill $moto 2>/dev/null; rm -rf "$work"' EXIT
  OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --oversubscribe -np 3 \
    ${root_flags[@]+"${root_flags[@]}"} "$work/collective" --full "$work/full"
  umount "$work/full"
  passed=$((passed + 1))
else
  echo "mpi: a tmpfs cannot be mounted here (not root): the full-disk case is skipped" >&2
fi
# One aggregator per 2 of 3 ranks and 4 KiB rounds, from the environment (the test's cases
# before its own settings use them).
OMPI_MCA_rmaps_base_oversubscribe=1 ZARR_MPI_AGGREGATORS=2 ZARR_MPI_BUFFER_BYTES=4k \
  mpirun --oversubscribe -np 3 ${root_flags[@]+"${root_flags[@]}"} \
  -x ZARR_MPI_AGGREGATORS -x ZARR_MPI_BUFFER_BYTES "$work/collective" "$work/collective-env"
# The Fortran module zarr_mpi (mpi_f08) over the same layer.
mpifort -O2 -Wall -Werror -fcheck=all -J "$work/mod" "$root/bindings/fortran/src/zarr_c.f90" \
  "$root/bindings/fortran/src/zarr.f90" "$root/bindings/fortran/src/zarr_mpi.f90" \
  "$root/tests/mpi/collective_f.f90" -L "$work" -lzarr_mpi -lzarr -Wl,-rpath,"$work" \
  -o "$work/collective_f"
for ranks in 1 2 3 4; do
  OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --oversubscribe -np "$ranks" \
    ${root_flags[@]+"${root_flags[@]}"} "$work/collective_f" "$work/collective_f-$ranks"
done
OMPI_MCA_rmaps_base_oversubscribe=1 mpirun "${mpirun_flags[@]}" "$work/mpi_collective" \
  "$work/collective.zarr" 12
"$env_dir/zp3/bin/python" - "$work/collective.zarr" <<'PY'
import sys
import numpy as np
import zarr
group = zarr.open_consolidated(sys.argv[1], mode="r")
tas, time = group["tas"], group["time"]
assert tas.shape == (12, 90, 180) and tas.shards == (1, 90, 180), (tas.shape, tas.shards)
assert tas.attrs["units"] == "K" and time.attrs["calendar"] == "standard"
assert time[...].tolist() == [6.0 * t for t in range(12)]
t, y, x = np.meshgrid(np.arange(12.0), np.arange(90.0), np.arange(180.0), indexing="ij")
s = np.sin(np.radians(-89.0 + 2.0 * y))
expected = (288.0 - 30.0 * s * s + 5.0 * np.cos(np.radians((x - 15.0 * t) * 2.0))).astype(np.float32)
assert np.allclose(tas[...], expected, rtol=1e-6, atol=0), "zarr-python read differs"
print(f"zarr-python 3 reads {sys.argv[1].rsplit('/', 1)[-1]} {tas.shape} (consolidated)")
PY
passed=$((passed + 13))  # collective on 1-4 and 8 ranks, in S3, from the environment, killed; collective_f on 1-4; mpi_collective
if [ -x "$work/mpi_icechunk" ]; then
  OMPI_MCA_rmaps_base_oversubscribe=1 mpirun "${mpirun_flags[@]}" "$work/mpi_icechunk" \
    "$work/icechunk-repo"
  # The MPI layer's collective commit: one snapshot per step from 1, 2 and 3 ranks.
  mpicc -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -I "$root/include" \
    "$root/tests/mpi/commit.c" -L "$work" -lzarr_mpi -lzarr -Wl,-rpath,"$work" \
    -o "$work/commit"
  for ranks in 1 2 3; do
    OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --oversubscribe -np "$ranks" \
      ${root_flags[@]+"${root_flags[@]}"} "$work/commit" "$work/commit-$ranks"
  done
  # And from Fortran (module zarr_mpi's zarr_mpi_commit), on 2 ranks.
  OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --oversubscribe -np 2 \
    ${root_flags[@]+"${root_flags[@]}"} "$work/collective_f" "$work/collective_f-commit" \
    "$work/commit-f"
  passed=$((passed + 5))
else
  echo "mpi: mpi_icechunk skipped (Icechunk needs Rust 1.95 or newer)"
fi
echo "mpi: $passed passed, 0 failed"
