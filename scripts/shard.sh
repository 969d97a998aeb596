#!/usr/bin/env bash
# Runs one Go package's tests as N test processes at once, its top-level
# tests dealt out among them in turn, and fails if any fails. The
# supervisor's end-to-end tests spend most of their time waiting on X
# servers, apps and compositors rather than on the CPU, and each starts a
# desktop of its own, so N of them at once finish sooner than one after
# another. The package is compiled once.
#
# Usage: scripts/shard.sh N PACKAGE [go test build flags, e.g. -race]
# With SKIP set to a regexp, the tests whose names match it are left out.
set -euo pipefail

shards=$1 pkg=$2
shift 2
dir=$(go list -f '{{.Dir}}' "$pkg")
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/pkg.test" "$@" "$pkg"

mapfile -t tests < <(cd "$dir" && "$bin/pkg.test" -test.list '.*' | grep -E '^(Test|Example)' |
  if [[ -n ${SKIP:-} ]]; then grep -vE "$SKIP"; else cat; fi)
if ((${#tests[@]} == 0)); then
  echo "shard.sh: $pkg has no tests" >&2
  exit 1
fi

pids=()
for ((s = 0; s < shards; s++)); do
  names=()
  for ((i = s; i < ${#tests[@]}; i += shards)); do
    names+=("${tests[i]}")
  done
  ((${#names[@]} > 0)) || continue
  echo "${#names[@]}" >"$bin/shard$s.count"
  pattern="^($(IFS='|'; echo "${names[*]}"))\$"
  # set +e: a failing shard must still write its status, not end here.
  (set +e; cd "$dir" && "$bin/pkg.test" -test.run "$pattern" -test.count=1 -test.timeout 30m \
    >"$bin/shard$s.log" 2>&1; echo $? >"$bin/shard$s.rc") &
  pids+=($!)
done
wait "${pids[@]}" || true

rc=0
for ((s = 0; s < shards; s++)); do
  [[ -e $bin/shard$s.count ]] || continue
  code=$(cat "$bin/shard$s.rc" 2>/dev/null || echo "none")
  if [[ $code != 0 ]]; then
    echo "=== $pkg shard $((s + 1))/$shards failed (exit $code):"
    cat "$bin/shard$s.log"
    rc=1
  else
    echo "ok   $pkg shard $((s + 1))/$shards: $(cat "$bin/shard$s.count") tests"
  fi
done
exit $rc
