#!/usr/bin/env bash
# Runs libzarr's benchmark programs on local disk and prints one table: workload, libzarr,
# the peers doing the same work (zarrs, tensorstore, zarr-python), the limit measured in the
# same run, libzarr's ratio to the best peer, and peak memory. Not part of the test suite:
# figures are printed, never asserted. Needs the zp3 environment of scripts/setup-test-env.sh
# for tensorstore ($ZARR_TEST_ENV, default .test-env), builds the zarrs peer
# (benches/peers/zarrs-peer, crates.io) into target/zarrs-peer, installs Debian's eatmydata
# for zarrs' unsynced writes when missing (as root), and needs root for the cold-read rows
# (the page cache is dropped). About 30 minutes on 2 cores; data goes to $BENCH_DIR
# (default target/bench).
#
#   scripts/bench.sh            # every program
#   scripts/bench.sh --quick    # shorter appends and a smaller tree
#   scripts/bench.sh --s3       # also scripts/bench-s3.sh (object stores, ~35 minutes more)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
s3=false
for arg in "$@"; do
  case "$arg" in
    --quick) quick=true ;;
    --s3) s3=true ;;
    *) echo "usage: $0 [--quick] [--s3]" >&2; exit 2 ;;
  esac
done
ENV_DIR="${ZARR_TEST_ENV:-$PWD/.test-env}"
export ZARR_BENCH_PYTHON="${ZARR_BENCH_PYTHON:-$ENV_DIR/zp3/bin/python}"
[ -x "$ZARR_BENCH_PYTHON" ] || echo "bench: $ZARR_BENCH_PYTHON is missing: peers skipped (run scripts/setup-test-env.sh)" >&2
BENCH_DIR="${BENCH_DIR:-$PWD/target/bench}"
mkdir -p "$BENCH_DIR"
log="$BENCH_DIR/bench.log"
: > "$log"

echo "bench: building the benchmark programs (release) and the zarrs peer"
cargo bench --no-run --quiet 2>&1 | tail -n 3
cargo build --release --quiet --manifest-path benches/peers/zarrs-peer/Cargo.toml \
  --target-dir target/zarrs-peer 2>&1 | tail -n 3
export ZARR_BENCH_ZARRS="$PWD/target/zarrs-peer/release/zarrs-peer"
if ! command -v eatmydata >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get install -y -qq eatmydata >/dev/null || echo "bench: eatmydata could not be installed" >&2
fi

run() {  # run NAME ARGS...: one benchmark program, its output kept in the log
  local name=$1; shift
  echo "bench: $name $*"
  cargo bench --quiet --bench "$name" -- "$@" 2>&1 | tee -a "$log"
}
if $quick; then
  run bench_append "$BENCH_DIR/append" --quick
  run bench_tree "$BENCH_DIR/tree" --small
else
  run bench_append "$BENCH_DIR/append"
  run bench_tree "$BENCH_DIR/tree"
fi
run bench_cache "$BENCH_DIR/cache"
run bench_peers "$BENCH_DIR/peers"
if $s3; then
  bash scripts/bench-s3.sh | tee -a "$log"
fi

echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr)"
echo "command: scripts/bench.sh $*"
echo
{
  printf 'workload|libzarr|peers|limit|libzarr vs peer (or limit)|peak MiB / notes\n'
  printf -- '---|---|---|---|---|---\n'
  grep '^ROW|' "$log" | cut -d'|' -f2-
} | column -t -s'|'
