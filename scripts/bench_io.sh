#!/usr/bin/env bash
# Graph-layer benchmark: parse throughput of a generated edge list of at least 1 GB
# (plain and gzip), and the time and peak memory of generating rmat scale 24 and 26.
#
# usage: scripts/bench_io.sh [WORK_DIR]   (default data/bench-io, git-ignored; needs ~15 GB free)
# Environment: SCALES (default "24 26"), PARSE_SCALE (default 22: ~1.1 GB of text).
set -euo pipefail
WORK=${1:-data/bench-io}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHATTY=$ROOT/target/release/chatty
(cd "$ROOT" && cargo build --release --locked --bin chatty -q)
mkdir -p "$WORK"
cd "$WORK"

peak() { # command... ; prints "seconds peak_MiB"
    /usr/bin/time -f "%e %M" -o time.txt "$@" > /dev/null 2>cmd.err || { cat cmd.err >&2; exit 1; }
    awk '{printf "%s %.0f\n", $1, $2 / 1024}' time.txt
}

echo "## Parse throughput"
echo
s=${PARSE_SCALE:-22}
[ -f "rmat$s.el" ] || "$CHATTY" generate rmat -s "$s" -e 16 -o "rmat$s.el" -q 2>/dev/null
[ -f "rmat$s.el.gz" ] || gzip -1 -k -f "rmat$s.el"
echo "| input | bytes | read + build CSR (s) | MB/s | peak memory (MiB) |"
echo "|---|---|---|---|---|"
for f in "rmat$s.el" "rmat$s.el.gz"; do
    cat "$f" > /dev/null # warm the page cache: measure parsing, not the disk
    read -r secs mib < <(peak "$CHATTY" convert "$f" -o parsed.cgr -q)
    bytes=$(stat -c %s "$f")
    python3 -c 'import sys; f,b,t,m=sys.argv[1:]; print(f"| {f} | {int(b):,} | {float(t):.2f} | {int(b)/1e6/float(t):.0f} | {m} |")' "$f" "$bytes" "$secs" "$mib"
done
rm -f parsed.cgr
echo
echo "## Generation (rmat, edge factor 16, directed, written to .cgr)"
echo
echo "| scale | vertices | edges | generate + write (s) | peak memory (MiB) | .cgr bytes |"
echo "|---|---|---|---|---|---|"
for s in ${SCALES:-24 26}; do
    read -r secs mib < <(peak "$CHATTY" generate rmat -s "$s" -e 16 -o "rmat$s.cgr" -q)
    edges=$("$CHATTY" info "rmat$s.cgr" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["edges"])')
    python3 -c 'import sys; s,e,t,m,b=sys.argv[1:]; print(f"| {s} | {2**int(s):,} | {int(e):,} | {float(t):.1f} | {m} | {int(b):,} |")' "$s" "$edges" "$secs" "$mib" "$(stat -c %s "rmat$s.cgr")"
    rm -f "rmat$s.cgr"
done
