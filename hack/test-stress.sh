#!/usr/bin/env bash
# make test-stress: runs tests while other processes keep every CPU busy, to find the tests that fail only
# on a loaded machine (docs/development.md). STRESS_PKGS (default ./...) are the packages, STRESS_COUNT
# (default 3) how many times each test runs, STRESS_RUN an optional -run pattern, STRESS_HOGS (default the
# number of CPUs) how many busy loops run meanwhile. The busy loops stop when the tests end, however they end.
set -euo pipefail
pkgs=${STRESS_PKGS:-./...}
count=${STRESS_COUNT:-3}
hogs=${STRESS_HOGS:-$(nproc)}
timeout=${STRESS_TIMEOUT:-90m}
pids=()
stop() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT INT TERM
for _ in $(seq "$hogs"); do
	( while :; do :; done ) &
	pids+=($!)
done
echo "test-stress: $hogs busy loops running (pids ${pids[*]}); go test -count=$count $pkgs" >&2
# shellcheck disable=SC2086 # pkgs is a list of packages.
go test -count="$count" -timeout "$timeout" ${STRESS_RUN:+-run "$STRESS_RUN"} $pkgs
