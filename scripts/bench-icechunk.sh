#!/usr/bin/env bash
# Icechunk time-series benchmark (benches/bench_icechunk.rs): 100 steps of four arrays
# appended per step, in a plain directory, an Icechunk repository on local disk, plain
# objects on S3 and an Icechunk repository on S3 (a commit per step in the repositories).
# Starts the moto S3 server of the test environment (tests/common/moto_server.py) behind the
# counting proxy of the object-store benchmark (benches/s3/proxy.py, 0 ms added), which
# counts the S3 requests; stops both on exit. Figures are printed, never asserted.
#
#   scripts/bench-icechunk.sh [--steps N]
#
# Needs the `objstore` environment of scripts/setup-test-env.sh in $ZARR_TEST_ENV (default
# .test-env); without it only the local rows run. Data and logs go to $BENCH_DIR (default
# target/bench-icechunk).
set -euo pipefail
cd "$(dirname "$0")/.."

ENV_DIR="${ZARR_TEST_ENV:-$PWD/.test-env}"
PY="$ENV_DIR/objstore/bin/python"
BENCH_DIR="${BENCH_DIR:-$PWD/target/bench-icechunk}"
mkdir -p "$BENCH_DIR/logs"

echo "bench-icechunk: building the benchmark (release)"
cargo bench --features icechunk --bench bench_icechunk --no-run --quiet 2>&1 | tail -n 3

source benches/s3/servers.sh
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

if [ -x "$PY" ] && [ -x "$ENV_DIR/objstore/bin/moto_server" ]; then
  MOTO_PORT=$(free_port)
  start moto "$MOTO_PORT" "$PY" tests/common/moto_server.py -H 127.0.0.1 -p "$MOTO_PORT"
  make_moto_bucket "$MOTO_PORT"
  PROXY_PORT=$(free_port)
  start proxy "$PROXY_PORT" "$PY" benches/s3/proxy.py --listen "$PROXY_PORT" \
    --upstream "127.0.0.1:$MOTO_PORT" --delay-ms 0
  export ZARR_BENCH_S3="http://127.0.0.1:$PROXY_PORT"
else
  echo "bench-icechunk: $PY or moto is missing (run scripts/setup-test-env.sh): S3 rows skipped" >&2
fi

cargo bench --quiet --features icechunk --bench bench_icechunk -- "$BENCH_DIR/data" "$@"
