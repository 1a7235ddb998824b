# Sourced by the CLI bad-input tests, whose arguments are <tilesim> [<source dir>]: sets $tilesim,
# $src, a scratch folder $work (removed at exit) and $failures = 0. Then expect "<name>" "<words
# expected on stderr>" <tilesim args...> runs $tilesim with the args (60 s at most) and counts a
# failure in $failures unless it exits non-zero, without crashing or hanging, with exactly one line
# on stderr that holds the words and none of a library's raw exception text.
tilesim=$1
src=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

expect() {
  local name=$1 words=$2
  shift 2
  local rc=0
  timeout 60 "$tilesim" "$@" >"$work/out" 2>"$work/err" || rc=$?
  local lines problem=""
  lines=$(wc -l <"$work/err")
  if ((rc == 0)); then problem="exit 0"
  elif ((rc == 124)); then problem="hung (killed after 60 s)"
  elif ((rc > 128)); then problem="crashed (signal $((rc - 128)))"
  elif [[ $lines -ne 1 ]]; then problem="$lines lines on stderr"
  elif ! grep -qF -- "$words" "$work/err"; then problem="no '$words'"
  elif grep -qE 'json\.exception|type_error|basic_filebuf|bad_alloc|_M_default_append|what\(\)' "$work/err"; then
    problem="library text"
  fi
  if [[ -n $problem ]]; then
    echo "FAIL $name: $problem: $(head -c 400 "$work/err")"
    failures=$((failures + 1))
  else
    echo "ok   $name: $(cat "$work/err")"
  fi
}
