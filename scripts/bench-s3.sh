#!/usr/bin/env bash
# Object-store speed benchmark (benches/s3/): libzarr beside zarr-python 3 (obstore) and
# tensorstore on one S3 bucket on loopback. Builds libzarr (release), starts the S3 servers
# of the test environment (s3s-fs, the benchmark's server, and moto, measured for
# comparison) and counting proxies adding 0 ms and 20 ms per request, runs
# benches/s3/bench.py and stops everything on exit.
#
#   scripts/bench-s3.sh [--quick] [other options of benches/s3/bench.py]
#
# Needs the `objstore` environment and the s3s-fs binary of scripts/setup-test-env.sh in
# $ZARR_TEST_ENV (default .test-env). Data and the servers' files go to $BENCH_DIR (default
# a new directory under target/); about 12 GB of disk for the full run.
set -euo pipefail
cd "$(dirname "$0")/.."

ENV_DIR="${ZARR_TEST_ENV:-$PWD/.test-env}"
PY="$ENV_DIR/objstore/bin/python"
S3S="$ENV_DIR/s3s/bin/s3s-fs"
MOTO="$ENV_DIR/objstore/bin/moto_server"
for f in "$PY" "$S3S" "$MOTO"; do
  [ -x "$f" ] || { echo "bench-s3: $f is missing (run scripts/setup-test-env.sh)" >&2; exit 1; }
done

TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
echo "bench-s3: building libzarr (release)"
cargo build --release --quiet --lib
LIB="$TARGET/release/libzarr.so"

BENCH_DIR="${BENCH_DIR:-$TARGET/bench-s3}"
mkdir -p "$BENCH_DIR"
rm -rf "$BENCH_DIR/s3s" "$BENCH_DIR/logs"
mkdir -p "$BENCH_DIR/s3s/bench" "$BENCH_DIR/logs"

KEY=bench-key
SECRET=bench-secret
source benches/s3/servers.sh
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$BENCH_DIR/s3s"
}
trap cleanup EXIT INT TERM

S3S_PORT=$(free_port)
start s3s-fs "$S3S_PORT" "$S3S" --host 127.0.0.1 --port "$S3S_PORT" \
  --access-key "$KEY" --secret-key "$SECRET" "$BENCH_DIR/s3s"
S3S_PID=${PIDS[-1]}
MOTO_PORT=$(free_port)
start moto "$MOTO_PORT" "$MOTO" -H 127.0.0.1 -p "$MOTO_PORT"
make_moto_bucket "$MOTO_PORT"

proxy() {  # proxy NAME UPSTREAM_PORT DELAY_MS: starts a proxy on port $PROXY_PORT
  PROXY_PORT=$(free_port)
  start "proxy-$1" "$PROXY_PORT" "$PY" benches/s3/proxy.py --listen "$PROXY_PORT" \
    --upstream "127.0.0.1:$2" --delay-ms "$3"
}
proxy s3s-0ms "$S3S_PORT" 0; P0=$PROXY_PORT
proxy s3s-20ms "$S3S_PORT" 20; P20=$PROXY_PORT
proxy moto-0ms "$MOTO_PORT" 0; PM=$PROXY_PORT

"$PY" benches/s3/bench.py --lib "$LIB" --work-dir "$BENCH_DIR" \
  --server "$(cat "$ENV_DIR/s3s/.pins")" --server-pid "$S3S_PID" --setup "http://127.0.0.1:$P0" \
  --key "$KEY" --secret "$SECRET" \
  --proxy "0=http://127.0.0.1:$P0" --proxy "20=http://127.0.0.1:$P20" \
  --raw "s3s-fs, direct=http://127.0.0.1:$S3S_PORT" \
  --raw "s3s-fs, through the 0 ms proxy=http://127.0.0.1:$P0" \
  --raw "s3s-fs, through the 20 ms proxy=http://127.0.0.1:$P20" \
  --raw "moto, direct=http://127.0.0.1:$MOTO_PORT" \
  --raw "moto, through a 0 ms proxy=http://127.0.0.1:$PM" \
  "$@"
