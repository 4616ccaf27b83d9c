#!/usr/bin/env bash
# Builds examples-c/mpi_write.c with mpicc and runs it with 4 OpenMPI ranks, with blocks
# aligned to chunks (no locking) and not aligned (process synchronization); each run is
# verified by rank 0 through libzarr and then by zarr-python 3 reading the array (Zarr v3,
# the default format).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
env_dir="${ZARR_TEST_ENV:-$root/.test-env}"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/target/release/libzarr.so" "$work/libzarr.so"
ln -sf libzarr.so "$work/libzarr.so.0"
mpicc -std=c11 -O2 -Wall -Wextra -Werror -I "$root/include" "$root/examples-c/mpi_write.c" \
  -L "$work" -lzarr -Wl,-rpath,"$work" -o "$work/mpi_write"
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
echo "mpi: 2 passed, 0 failed"
