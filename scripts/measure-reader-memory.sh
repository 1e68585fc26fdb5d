#!/usr/bin/env bash
# Peak RSS and throughput of reading a trace with `tracetwin inspect`, against
# the uncompressed size of the trace. Usage:
#   scripts/measure-reader-memory.sh [trace=/tmp/big_et.json] [build-dir=build]
# Without an existing trace, makes a ~1 GB one with scripts/make-big-trace.py.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
trace="${1:-/tmp/big_et.json}"
build="${2:-$root/build}"
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 3; }
if [ ! -f "$trace" ]; then
  python3 "$root/scripts/make-big-trace.py" --out "$trace"
fi
if [ "$(head -c2 "$trace" | od -An -tx1 | tr -d ' ')" = "1f8b" ]; then
  bytes=$(gzip -dc "$trace" | wc -c)
else
  bytes=$(stat -c %s "$trace")
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# bench/read_trace holds nothing but the reader (the tracetwin binary also
# maps LibTorch, ~150 MB of RSS that is not the reader's).
reader=("$build/bench/read_trace")
[ -x "${reader[0]}" ] || reader=("$build/tracetwin" inspect --json)
/usr/bin/time -v "${reader[@]}" "$trace" 2>"$log" >"$log.json"
rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
cpu_s=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$log")
parse_ms=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["parse_ms"])' "$log.json")
ops=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["nodes"], d["top_level_ops"])' "$log.json")
rm -f "$log.json"
python3 - "$bytes" "$rss_kb" "$parse_ms" "$trace" "$ops" "$cpu_s" <<'PY'
import sys
size, rss_kb, ms, trace, ops = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
cpu = float(sys.argv[6])
rss = rss_kb * 1024
print(f"{trace}: {size/1e6:.1f} MB uncompressed, nodes/top-level {ops}")
print(f"read in {ms/1000:.2f} s wall ({size/1e6/(ms/1000):.0f} MB/s incl. file read); whole "
      f"process {cpu:.2f} s CPU ({size/1e6/cpu:.0f} MB/s of CPU time)")
print(
f"peak RSS {rss/1e6:.1f} MB = {rss/size:.2f}x the uncompressed trace (target <= 3x)")
PY
