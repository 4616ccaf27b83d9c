#!/usr/bin/env bash
# libzarr on the public comparison of Zarr implementations, zarrs/zarr_benchmarks: its three
# 1024^3 uint16 arrays (chunks 256^3: uncompressed, zstd level 0, and zstd level 0 in 256^3
# shards of 64^3 chunks, filled with (x2 + x1*x1/32 + x0*x0*x0) mod 65536) and its
# workloads (round trip, read all, read chunk by chunk, read inner chunk by inner chunk;
# the round trip also without syncing what it writes, as zarrs writes by default),
# each the best of $BENCH_REPS (default 5) runs in a fresh process under /usr/bin/time -v,
# the page cache dropped before every run when this user may (root), for zarrs
# (zarrs_tools from crates.io), tensorstore (PyPI) and libzarr (benches/public/*.c against
# zarr.h). Prints one table: seconds and peak RSS (GB) per implementation and libzarr's
# time over the best peer's. Not part of the test suite: figures are printed, never
# asserted. Downloads and builds the peers, and writes the arrays (about 2.6 GB, or 0.4 GB
# with --quick), under $BENCH_PUBLIC_DIR (default target/bench-public); the first run
# builds zarrs_tools (about 15 minutes on 2 cores). See docs/guide/performance.md.
#
#   scripts/bench-public.sh            # the 1024^3 arrays (about 30 minutes with 5 runs)
#   scripts/bench-public.sh --quick    # 512^3 arrays, for a fast check
set -euo pipefail
cd "$(dirname "$0")/.."

ZARRS_TOOLS_VERSION=0.8.1
TENSORSTORE_VERSION=0.1.86
edge=1024
for arg in "$@"; do
  case "$arg" in
    --quick) edge=512 ;;
    *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
  esac
done
reps="${BENCH_REPS:-5}"
case "$reps" in ''|*[!0-9]*|0) echo "bench-public: BENCH_REPS='$reps' is not a positive integer" >&2; exit 2 ;; esac
work="${BENCH_PUBLIC_DIR:-$PWD/target/bench-public}"
target="${CARGO_TARGET_DIR:-$PWD/target}"
mkdir -p "$work/bin" "$work/data" "$work/out"
work="$(cd "$work" && pwd)"

echo "bench-public: building libzarr (release) and the programs of benches/public"
cargo build --release --lib --quiet
for program in generate read_all read_chunks roundtrip; do
  cc -O2 -Wall -Wextra -Werror -Iinclude -o "$work/bin/$program" "benches/public/$program.c" \
    -L"$target/release" -lzarr -Wl,-rpath,"$target/release"
done

if [ ! -x "$work/venv/bin/python" ] ||
   ! "$work/venv/bin/python" -c "import importlib.metadata as m, sys
sys.exit(m.version('tensorstore') != '$TENSORSTORE_VERSION')" 2>/dev/null; then
  echo "bench-public: installing tensorstore $TENSORSTORE_VERSION (PyPI) into $work/venv"
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet "tensorstore==$TENSORSTORE_VERSION" numpy
fi
python="$work/venv/bin/python"
tensorstore=(benches/public/tensorstore_public.py)
zarrs="$work/zarrs/bin"
if [ ! -x "$zarrs/zarrs_benchmark_read_sync" ] || [ ! -x "$zarrs/zarrs_reencode" ]; then
  echo "bench-public: building zarrs_tools $ZARRS_TOOLS_VERSION (crates.io) into $work/zarrs"
  cargo install zarrs_tools --version "$ZARRS_TOOLS_VERSION" --locked --features benchmark \
    --root "$work/zarrs" --target-dir "$work/zarrs-build" --quiet
fi

# The generator against an independent computation (numpy, read back by tensorstore) on a
# small shape that is neither cubic nor a multiple of the chunks.
for encoding in none zstd sharded; do
  small="$work/data/check-$encoding.zarr"
  rm -rf "$small"
  "$work/bin/generate" create "$small" "$encoding" 40,50,70 16
  "$python" "${tensorstore[@]}" check "$small" 40,50,70
done
echo "bench-public: the generator matches numpy's values on a 40x50x70 array (3 encodings)"

arrays=(none zstd sharded)
for encoding in "${arrays[@]}"; do
  array="$work/data/$edge-$encoding.zarr"
  if [ ! -f "$array/.complete" ]; then
    echo "bench-public: generating $array"
    rm -rf "$array"
    "$work/bin/generate" create "$array" "$encoding" "$edge,$edge,$edge" 256
    "$work/bin/generate" check "$array"
    touch "$array/.complete"
  fi
done

if [ -w /proc/sys/vm/drop_caches ]; then
  cache=cold
  drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
else
  cache=hot
  drop() { :; }
  echo "bench-public: cannot drop the page cache (needs root): every run is hot" >&2
fi

out="$work/out/roundtrip.zarr"
command_of() {  # command_of IMPL WORKLOAD ARRAY: the command line, in the array `cmd`
  local impl=$1 workload=$2 array=$3
  case "$impl/$workload" in
    zarrs/roundtrip*) cmd=("$zarrs/zarrs_reencode" "$array" "$out") ;;
    zarrs/read-all) cmd=("$zarrs/zarrs_benchmark_read_sync" --read-all "$array") ;;
    zarrs/read-chunks) cmd=("$zarrs/zarrs_benchmark_read_sync" --concurrent-chunks 1 "$array") ;;
    zarrs/read-inner-chunks)
      cmd=("$zarrs/zarrs_benchmark_read_sync" --concurrent-chunks 1 --inner-chunks "$array") ;;
    tensorstore/roundtrip*) cmd=("$python" "${tensorstore[@]}" "$workload" "$array" "$out") ;;
    tensorstore/*) cmd=("$python" "${tensorstore[@]}" "$workload" "$array") ;;
    libzarr/roundtrip) cmd=("$work/bin/roundtrip" "$array" "$out") ;;
    libzarr/roundtrip-unsynced) cmd=("$work/bin/roundtrip" --unsynced "$array" "$out") ;;
    libzarr/read-all) cmd=("$work/bin/read_all" "$array") ;;
    libzarr/read-chunks) cmd=("$work/bin/read_chunks" "$array") ;;
    libzarr/read-inner-chunks) cmd=("$work/bin/read_chunks" --inner "$array") ;;
  esac
}

log="$work/bench-public.log"
: > "$log"
best=()  # "seconds GB" of the last measure
measure() {  # measure IMPL WORKLOAD ARRAY: best wall time and least peak RSS of $reps runs
  local impl=$1 workload=$2 array=$3 rep seconds=nan gb=nan
  command_of "$impl" "$workload" "$array"
  for ((rep = 1; rep <= reps; rep++)); do
    rm -rf "$out"
    drop
    if /usr/bin/time -v -o "$work/time.txt" "${cmd[@]}" > "$work/run.txt" 2>&1; then
      read -r s kb < <(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0
          for (i = 1; i <= n; i++) s = s * 60 + t[i]}
        /Maximum resident set size/ {kb = $2} END {print s, kb}' "$work/time.txt")
      echo "RUN|$impl|$workload|$array|$rep|$s|$kb|$(awk -F': ' '/Minor/ {print $2}' "$work/time.txt")" >> "$log"
      seconds=$(awk -v a="$seconds" -v b="$s" 'BEGIN {print (a == "nan" || b < a) ? b : a}')
      gb=$(awk -v a="$gb" -v b="$kb" 'BEGIN {b /= 1e6; print (a == "nan" || b < a) ? b : a}')
    else
      echo "bench-public: $impl $workload $array failed:" >&2
      tail -n 5 "$work/run.txt" >&2
    fi
  done
  if [[ "$impl/$workload" == libzarr/roundtrip* ]] && [ -d "$out" ]; then
    "$work/bin/generate" check "$out"  # libzarr's copy holds the data it read
  fi
  best=("$seconds" "$gb")
}

rows=()
for encoding in "${arrays[@]}"; do
  array="$work/data/$edge-$encoding.zarr"
  workloads=(roundtrip roundtrip-unsynced read-all read-chunks)
  [ "$encoding" = sharded ] && workloads+=(read-inner-chunks)
  for workload in "${workloads[@]}"; do
    row="$edge^3 $encoding|$workload"
    times=()
    for impl in zarrs tensorstore libzarr; do
      echo "bench-public: $impl $workload $encoding ($reps runs, $cache)"
      measure "$impl" "$workload" "$array"
      row+=$(printf '|%.2f|%.2f' "${best[0]}" "${best[1]}" 2>/dev/null || echo "|nan|nan")
      times+=("${best[0]}")
    done
    ratio=$(awk -v z="${times[0]}" -v t="${times[1]}" -v l="${times[2]}" 'BEGIN {
      p = (z == "nan") ? t : (t == "nan" || z < t) ? z : t
      if (p == "nan" || l == "nan" || p == 0) print "-"; else printf "%.2f", l / p }')
    rows+=("$row|$ratio")
  done
done

echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr)"
echo "versions: zarrs_tools $ZARRS_TOOLS_VERSION ($("$zarrs/zarrs_reencode" --version | awk '{print $NF}' | tr -d '()')), tensorstore $TENSORSTORE_VERSION, libzarr $(git describe --always --dirty)"
echo "command: scripts/bench-public.sh $*  (best of $reps, page cache $cache; runs in $log)"
echo
{
  printf 'array|workload|zarrs s|zarrs GB|tensorstore s|tensorstore GB|libzarr s|libzarr GB|libzarr / best peer\n'
  printf -- '---|---|---|---|---|---|---|---|---\n'
  printf '%s\n' "${rows[@]}"
} | column -t -s'|'
