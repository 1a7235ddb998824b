#!/usr/bin/env bash
# The fuzz targets' build and runs, for CTest (tests/fuzz/CMakeLists.txt) and by hand.
#   fuzz.sh build <source dir> <build dir>      configure a clang tree with TILESIM_FUZZ=ON, build the targets
#   fuzz.sh run <target> <seed corpus> <seconds> <work dir> [dictionary]
# Exit 77 (CTest: skipped) with a SKIP line where clang's libFuzzer is missing.
set -euo pipefail
case ${1:-} in
build)
  source_dir=$2 build_dir=$3
  if ! command -v clang++ >/dev/null; then
    echo "SKIP: clang++ not found; the fuzz targets need clang with libFuzzer (apt-get install clang libclang-rt-14-dev)"
    exit 77
  fi
  runtime=$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a)
  if [[ ! -f $runtime ]]; then
    echo "SKIP: clang's libFuzzer runtime (libclang_rt.fuzzer-x86_64.a) not found; apt-get install libclang-rt-14-dev"
    exit 77
  fi
  cmake -S "$source_dir" -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTILESIM_FUZZ=ON -DTILESIM_WITH_CUDA=OFF -DTILESIM_WITH_QT=OFF >/dev/null
  cmake --build "$build_dir" --target fuzz_targets -j"$(nproc)"
  ;;
run)
  target=$2 seeds=$3 seconds=$4 work=$5 dictionary=${6:+-dict=$6}
  if [[ ! -x $target ]]; then
    echo "SKIP: $target was not built (no clang with libFuzzer; see fuzz_build)"
    exit 77
  fi
  # New inputs go to a fresh folder in the build tree; the committed seeds are only read.
  rm -rf "$work" && mkdir -p "$work/corpus" "$work/findings"
  # libFuzzer exits 77 on a finding by default, which CTest would read as this script's skip.
  "$target" -seed=1 -max_total_time="$seconds" -timeout=10 -error_exitcode=1 -timeout_exitcode=1 -rss_limit_mb=2048 -max_len=65536 $dictionary \
    -artifact_prefix="$work/findings/" -print_final_stats=1 "$work/corpus" "$seeds"
  ;;
*)
  echo "usage: fuzz.sh build <source dir> <build dir> | run <target> <seed corpus> <seconds> <work dir> [dictionary]" >&2
  exit 2
  ;;
esac
