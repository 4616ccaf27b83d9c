#!/usr/bin/env bash
# Fuzzes libzarr for a bounded time: builds every cargo-fuzz target in fuzz/ (libFuzzer,
# AddressSanitizer on the Rust code, debug assertions on) and runs each for
# FUZZ_SECONDS seconds (default 25) from its committed seed corpus in fuzz/corpus/<target>/.
# Fails on any crash, panic, leak, timeout or out-of-memory; the input that caused it is
# left in fuzz/artifacts/<target>/ (reproduce with `cargo fuzz run <target> <file>`).
#
#   FUZZ_SECONDS=300 bash scripts/fuzz.sh              # longer runs
#   FUZZ_TARGETS="codec_decode shard" bash scripts/fuzz.sh
#
# Needs a nightly toolchain (cargo +nightly) or, failing that, stable with RUSTC_BOOTSTRAP=1;
# installs the pinned cargo-fuzz when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${FUZZ_SECONDS:-25}
cargo_fuzz_version=0.13.1

if cargo +nightly --version >/dev/null 2>&1; then
  cargo=(cargo +nightly)
else
  echo "no nightly toolchain: building the fuzz targets with RUSTC_BOOTSTRAP=1 on $(rustc --version)"
  export RUSTC_BOOTSTRAP=1
  cargo=(cargo)
fi
if [[ "$(cargo fuzz --version 2>/dev/null || true)" != *" $cargo_fuzz_version"* ]]; then
  cargo install cargo-fuzz --version "$cargo_fuzz_version" --locked
fi

cd fuzz
targets=${FUZZ_TARGETS:-$("${cargo[@]}" fuzz list)}
"${cargo[@]}" fuzz build -O --debug-assertions
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in $targets; do
  # libFuzzer writes new inputs into its first corpus directory: give it a scratch copy.
  mkdir -p "$scratch/$target"
  cp -r "corpus/$target/." "$scratch/$target/" 2>/dev/null || true
  printf -- '--- %s: %ss from %d seeds\n' "$target" "$seconds" "$(ls "corpus/$target" | wc -l)"
  if "${cargo[@]}" fuzz run -O --debug-assertions "$target" "$scratch/$target" -- \
      -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 >"$scratch/$target.log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$scratch/$target.log" || true
    printf '    corpus now %d inputs\n' "$(ls "$scratch/$target" | wc -l)"
  else
    tail -n 60 "$scratch/$target.log"
    echo "FUZZ FAILURE in $target: input saved under $root/fuzz/artifacts/$target/"
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz targets that failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: $(wc -w <<<"$targets") targets, ${seconds}s each, no failures"
