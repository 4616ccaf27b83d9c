#!/usr/bin/env bash
# Runs the C and C++ tests (c-tests/) under memory checkers, against the release library:
#   1. AddressSanitizer + UndefinedBehaviorSanitizer: the tests compiled with
#      -fsanitize=address,undefined -fno-sanitize-recover=all (any report fails the test),
#      leak detection on (LeakSanitizer reports memory no longer reachable at exit);
#   2. valgrind memcheck on the uninstrumented tests: any invalid access, use of
#      uninitialised memory or definitely/indirectly lost block fails the test.
# Excluded: test_copy_memory (a 1 GiB array, minutes natively; not built into the default
# ctest run either); test_mpi_collective runs under ASan without leak detection (OpenMPI's
# allocations outlive it) and not under valgrind. The Fortran tests are not C tests and are
# left to the ctest stage.
#
#   bash scripts/sanitize.sh            # both
#   SANITIZE=asan bash scripts/sanitize.sh  /  SANITIZE=valgrind bash scripts/sanitize.sh
#   SANITIZE=valgrind VALGRIND_TESTS="test_lifecycle test_v3" bash scripts/sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
what=${SANITIZE:-asan valgrind}
build=${SANITIZE_BUILD_DIR:-$root/build-sanitize}
# The tests (built only when asked for), against the release library of the cargo target
# directory the other stages use (not one cargo build per CMake build directory).
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DZARR_FORTRAN=OFF -DZARR_BUILD_TESTS=ON
            -DZARR_CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}")

if [[ " $what " == *" asan "* ]]; then
  echo "--- AddressSanitizer + UndefinedBehaviorSanitizer"
  flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
  cmake -S . -B "$build/asan" "${cmake_args[@]}" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build "$build/asan" -j2
  asan_options=abort_on_error=0:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
  ASAN_OPTIONS=detect_leaks=1:$asan_options UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$build/asan" --output-on-failure -E '^(test_copy_memory|test_mpi_collective)$'
  # The MPI layer's test (when MPI was found) without leak detection: OpenMPI's own
  # allocations live until the process ends and are reported as leaks.
  if ctest --test-dir "$build/asan" -N -R '^test_mpi_collective$' | grep -q 'Total Tests: 1'; then
    ASAN_OPTIONS=detect_leaks=0:$asan_options UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$build/asan" --output-on-failure -R '^test_mpi_collective$'
  fi
fi

if [[ " $what " == *" valgrind "* ]]; then
  echo "--- valgrind memcheck"
  command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 1; }
  cmake -S . -B "$build/valgrind" "${cmake_args[@]}" >/dev/null
  cmake --build "$build/valgrind" -j2
  # Each test's command line as ctest runs it, run under valgrind in its working directory;
  # VALGRIND_JOBS of them at once (default: one per core; memcheck runs a process's threads
  # one at a time, so a single test keeps one core busy).
  mapfile -t tests < <(ctest --test-dir "$build/valgrind" -N | sed -n 's/^ *Test *#[0-9]*: //p')
  jobs=${VALGRIND_JOBS:-$(nproc)}
  failed=()
  selected=()
  for name in "${tests[@]}"; do
    # test_copy_memory: minutes natively; test_mpi_collective: MPI runs under mpirun, and
    # OpenMPI under memcheck reports its own errors.
    [[ $name == test_copy_memory || $name == test_mpi_collective ]] && continue
    [[ -z ${VALGRIND_TESTS:-} || " $VALGRIND_TESTS " == *" $name "* ]] || continue
    exe=$(find "$build/valgrind/c-tests" -maxdepth 1 -type f -name "$name" -perm -u+x | head -n1)
    [[ -n $exe ]] || { echo "no executable for $name"; failed+=("$name"); continue; }
    selected+=("$name")
    log="$build/valgrind/$name.memcheck.log"
    # Leaks counted: definitely and indirectly lost. Memory still reachable at exit (the
    # thread pool's threads and thread-locals, which live until the process ends) and
    # "possibly lost" blocks (interior pointers held by those threads) are not.
    # Forked children (test_lifecycle, test_concurrency) share the log; their exit status
    # is not the verdict (check.h: check_child_passed), so memory errors of any process are
    # found in the log. Leaks are judged for the parent only: a child forked while worker
    # threads exist cannot reach (nor free) those threads' memory.
    (
      rc=0
      cd "$build/valgrind/c-tests" && valgrind --tool=memcheck --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
        --track-origins=yes --error-exitcode=99 --log-file="$log" "$exe" >"$log.out" 2>&1 || rc=$?
      echo "$rc" >"$log.rc"
    ) &
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
  done
  wait
  ran=0
  for name in "${selected[@]}"; do
    log="$build/valgrind/$name.memcheck.log"
    rc=$(cat "$log.rc")
    printf '%-28s ' "$name"
    # 77: the test skipped itself (as ctest's SKIP_RETURN_CODE: a codec this build lacks).
    if [[ $rc == 77 ]]; then
      echo "skipped"
      continue
    fi
    if [[ $rc == 0 ]] && ! grep -qE 'Invalid (read|write|free)|uninitialised|Mismatched free|overlap|Syscall param|Process terminating' "$log"; then
      # The test's own summary (the first process in the log; forked children follow).
      pid=$(sed -n '1s/^==\([0-9]*\)==.*/\1/p' "$log")
      grep -E "^==$pid== +(ERROR SUMMARY|definitely lost|indirectly lost)" "$log" |
        sed 's/^==[0-9]*== *//; s/ *(suppressed.*//' | tr '\n' ' '
      echo
      ran=$((ran + 1))
    else
      echo "FAILED"
      tail -n 80 "$log" "$log.out"
      failed+=("$name")
    fi
  done
  if ((${#failed[@]})); then
    echo "valgrind failures: ${failed[*]}"
    exit 1
  fi
  echo "valgrind: $ran tests, no errors, no leaks"
fi
