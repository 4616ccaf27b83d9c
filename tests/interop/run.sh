#!/usr/bin/env bash
# Runs the Zarr v2 interop tests (tests/interop) under both Python environments made by
# scripts/setup-test-env.sh: zp2 (zarr-python 2.18) and zp3 (zarr-python 3 + tensorstore, and
# kerchunk for the reference files of test_kerchunk_interop.py);
# then the zarr-python 3.4 and Icechunk interop tests (test_zp34_interop.py and
# test_icechunk_interop.py: zp3's pytest drives zarr-python 3.4 and Python's icechunk in the
# Debian 13 chroot $ZARR_TEST_ENV/trixie), then the S3 interop test
# (test_s3_interop.py) under objstore (moto, zarr-python 3, obstore).
# $ZARR_TEST_ENV overrides the directory holding them (default: .test-env in the repo).
# Extra arguments go to pytest (e.g. -k lz4, -x). Exits non-zero if anything fails.
# ZARR_TEST_COPY_MEMORY=1 also runs tests/interop/copy_memory.sh (zarr_copy of a 1 GiB array
# in bounded memory; about 2 GiB of temporary disk), which is not run by default.
set -uo pipefail
cd "$(dirname "$0")/../.."

ENV_DIR="${ZARR_TEST_ENV:-$PWD/.test-env}"

# With zarrtool's netCDF import when the system netCDF library is there (as CMake builds it),
# and Icechunk repositories (off by default) whenever the toolchain is Rust 1.95 or newer,
# as the crate needs: test_icechunk_interop.py then must run (ZARR_INTEROP_ICECHUNK=1).
# scripts/test.sh passes its own choice (ZARR_TEST_FEATURES), the same for every stage.
list=""
if rustc --version | awk '{ split($2, v, "."); exit !(v[1] > 1 || v[2] >= 95) }'; then
  list=icechunk
fi
if command -v nc-config >/dev/null 2>&1; then list=netcdf${list:+,$list}; fi
list=${ZARR_TEST_FEATURES-$list}
if [[ ",$list," == *,icechunk,* ]]; then export ZARR_INTEROP_ICECHUNK=1; fi
features=(--features "zfp${list:+,$list}")
echo "interop: cargo build --release ${features[*]}"
if ! cargo build --release "${features[@]}"; then
  echo "interop: cargo build --release failed" >&2
  exit 1
fi
# Both environments test this build (each session snapshots target/release/libzarr.so).
export ZARR_INTEROP_NO_BUILD=1

status=0
summary=()
for env in zp2 zp3; do
  py="$ENV_DIR/$env/bin/python"
  if [ ! -x "$py" ]; then
    echo "interop: $py is missing (run scripts/setup-test-env.sh)" >&2
    summary+=("$env: environment missing")
    status=1
    continue
  fi
  versions=$("$py" -c 'import zarr, numcodecs, numpy
try:
    import tensorstore
    ts = " tensorstore (installed)"
except ImportError:
    ts = ""
print(f"zarr {zarr.__version__} numcodecs {numcodecs.__version__} numpy {numpy.__version__}{ts}")')
  echo "interop: === $env: $versions ==="
  start=$(date +%s)
  log=$(mktemp)
  PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -q -rsx -p no:cacheprovider tests/interop \
    --ignore=tests/interop/test_zp34_interop.py --ignore=tests/interop/test_icechunk_interop.py \
    "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - start ))
  last=$(grep -E '(passed|failed|error|skipped|deselected|no tests ran)' "$log" | tail -n 1)
  rm -f "$log"
  summary+=("$env ($versions): ${last:-no pytest summary} [exit $rc, ${secs}s]")
  [ "$rc" -eq 0 ] || status=1
done

# zarr-python 3.4 and Python's icechunk both ways, once (their Python runs in the chroot;
# pytest runs under zp3).
py="$ENV_DIR/zp3/bin/python"
if [ -x "$py" ]; then
  echo "interop: === zp34: zarr-python 3.4 and icechunk in $ENV_DIR/trixie ==="
  start=$(date +%s)
  log=$(mktemp)
  PYTHONDONTWRITEBYTECODE=1 ZARR_TEST_ENV="$ENV_DIR" "$py" -m pytest -q -rsx -p no:cacheprovider \
    tests/interop/test_zp34_interop.py tests/interop/test_icechunk_interop.py "$@" 2>&1 \
    | tee "$log"
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - start ))
  last=$(grep -E '(passed|failed|error|skipped|deselected|no tests ran)' "$log" | tail -n 1)
  rm -f "$log"
  summary+=("zp34 (zarr-python 3.4 and icechunk in the Debian 13 chroot): ${last:-no pytest summary} [exit $rc, ${secs}s]")
  # Exit 5: the module skipped itself (no chroot, or not root), which it does only outside CI.
  [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ] || status=1
fi

# S3 both ways (zarr-python 3 through obstore, against the moto server the test starts).
py="$ENV_DIR/objstore/bin/python"
if [ -x "$py" ]; then
  echo "interop: === objstore: S3 through moto ==="
  start=$(date +%s)
  log=$(mktemp)
  PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -q -rsx -p no:cacheprovider tests/interop/test_s3_interop.py "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - start ))
  last=$(grep -E '(passed|failed|error|skipped|deselected|no tests ran)' "$log" | tail -n 1)
  rm -f "$log"
  summary+=("objstore (S3 via moto): ${last:-no pytest summary} [exit $rc, ${secs}s]")
  [ "$rc" -eq 0 ] || status=1
else
  echo "interop: $py is missing (run scripts/setup-test-env.sh)" >&2
  summary+=("objstore: environment missing")
  status=1
fi

if [ "${ZARR_TEST_COPY_MEMORY:-}" = "1" ]; then
  echo "interop: === bounded-memory copy (tests/interop/copy_memory.sh) ==="
  start=$(date +%s)
  bash tests/interop/copy_memory.sh
  rc=$?
  secs=$(( $(date +%s) - start ))
  case $rc in
    0) summary+=("copy-memory: passed [${secs}s]") ;;
    77) summary+=("copy-memory: skipped (see its output) [${secs}s]") ;;
    *) summary+=("copy-memory: FAILED [exit $rc, ${secs}s]"); status=1 ;;
  esac
fi

echo "interop: ==== summary ===="
for line in "${summary[@]}"; do
  echo "interop: $line"
done
exit $status
