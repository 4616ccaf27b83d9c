# Loopback servers for the S3 benchmarks, sourced by scripts/bench-s3.sh and
# scripts/bench-icechunk.sh. Needs PY (a Python) and BENCH_DIR (logs go to BENCH_DIR/logs);
# every server started is recorded in PIDS for the caller's cleanup.
PIDS=()

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_port() {
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "${0##*/}: nothing listens on port $1 (see $BENCH_DIR/logs)" >&2
  exit 1
}

start() {  # start NAME PORT COMMAND...: runs COMMAND in the background, logging to NAME.log
  local name=$1 port=$2; shift 2
  "$@" >"$BENCH_DIR/logs/$name.log" 2>&1 &
  PIDS+=($!)
  wait_port "$port"
}

make_moto_bucket() {  # make_moto_bucket PORT: creates the bucket `bench` in moto
  # moto does not check signatures but wants one.
  "$PY" - "$1" <<'PYEOF'
import sys, urllib.request
auth = ("AWS4-HMAC-SHA256 Credential=bench-key/20260101/us-east-1/s3/aws4_request, "
        "SignedHeaders=host, Signature=00")
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/bench", method="PUT", data=b"",
                             headers={"Authorization": auth})
urllib.request.urlopen(req, timeout=30).close()
PYEOF
}
