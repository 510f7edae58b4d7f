#!/usr/bin/env bash
# scripts/timed.sh LOG COMMAND...: runs COMMAND; when it succeeds, appends its wall time in
# seconds and the command to LOG (a tab between). `make bench-smoke` sums LOG at the end.
set -euo pipefail
log=$1
shift
start=$(date +%s.%N)
"$@"
end=$(date +%s.%N)
printf '%s\t%s\n' "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" "$*" >>"$log"
