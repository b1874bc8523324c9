#!/usr/bin/env bash
# The SSD engine benchmark of docs/benchmarks/ssd.md, one call: fio (or dd) on the
# disk holding DIR, then every kernel on the SSD engine (with and without binning for
# PR and SpMV) and on the in-memory CPU engine, on rmat graphs and datasets laid out
# in DIR. Prints a table; raw JSON lines go to DIR/ssd-runs.jsonl.
# usage: CHATTY=target/release/chatty SCALES="22 24" STRIPES=2 ITERS=5 scripts/bench_ssd.sh DIR
set -euo pipefail
CHATTY=${CHATTY:-target/release/chatty}
DIR=${1:?usage: scripts/bench_ssd.sh DIR (on the disk to measure)}
SCALES=${SCALES:-"22 24"}
STRIPES=${STRIPES:-2}
ITERS=${ITERS:-5}
DATASETS=${DATASETS:-}
mkdir -p "$DIR"
OUT="$DIR/ssd-runs.jsonl"
: > "$OUT"

echo "== device: $(df -h "$DIR" | tail -1 | awk '{print $1}')"
if command -v fio >/dev/null; then
    fio --name=seq --filename="$DIR/fio.test" --size=2G --rw=read --bs=1M --direct=1 --ioengine=io_uring --iodepth=32 \
        --output-format=terse --minimal | awk -F';' '{printf "fio sequential read (1 MiB, QD32, O_DIRECT): %.0f MB/s\n", $7*1.024/1000}'
    fio --name=rand --filename="$DIR/fio.test" --size=2G --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=32 \
        --runtime=20 --time_based --output-format=terse --minimal | awk -F';' '{printf "fio random read (4 KiB, QD32, O_DIRECT): %.0f MB/s, %d IOPS\n", $7*1.024/1000, $8}'
    rm -f "$DIR/fio.test"
else
    dd if=/dev/zero of="$DIR/dd.test" bs=1M count=2048 oflag=direct status=none
    dd if="$DIR/dd.test" of=/dev/null bs=1M iflag=direct 2>&1 | tail -1 | sed 's/^/dd sequential read (1 MiB, O_DIRECT): /'
    rm -f "$DIR/dd.test"
fi

run() { # name graph alg engine-args...
    local name=$1 graph=$2 alg=$3; shift 3
    "$CHATTY" run "$alg" "$graph" --json --max-iters "$ITERS" --tolerance 0 "$@" | python3 -c "
import json, sys
r = json.loads(sys.stdin.read()); r['name'] = '$name'; r['variant'] = '${*}'
print(json.dumps(r))" >> "$OUT"
}

graphs=()
for s in $SCALES; do
    [ -f "$DIR/rmat$s.cgr" ] || "$CHATTY" -q generate rmat --scale "$s" -o "$DIR/rmat$s.cgr"
    graphs+=("rmat$s:$DIR/rmat$s.cgr")
done
for d in $DATASETS; do graphs+=("$(basename "$d" | cut -d. -f1):$d"); done

for entry in "${graphs[@]}"; do
    name=${entry%%:*}; src=${entry#*:}
    layout="$DIR/$name.ssd"
    [ -f "$layout" ] || "$CHATTY" -q convert "$src" -o "$layout" --layout ssd --stripes "$STRIPES"
    data=$(python3 -c "import os,glob; print(sum(os.path.getsize(f) for f in glob.glob('$layout.*')))")
    budget=$(( data / 2 > (384 << 20) ? data / 2 : (384 << 20) ))
    echo "== $name: $data bytes of pages in $STRIPES stripes per side; --mem-budget $budget"
    for alg in pr spmv bfs wcc bc; do
        run "$name" "$layout" "$alg" --engine ssd --mem-budget "$budget"
        run "$name" "$src" "$alg" --engine cpu
    done
    for alg in pr spmv; do
        run "$name" "$layout" "$alg" --engine ssd --mem-budget "$budget" --no-binning
    done
done

python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{'graph':<10} {'alg':<5} {'engine':<26} {'seconds':>9} {'iters':>5} {'GB/s':>7} {'ampl':>6} {'skew':>5} {'peak MiB':>9} {'vs cpu':>7}")
for r in rows:
    cpu = [c for c in rows if c['name'] == r['name'] and c['algorithm'] == r['algorithm'] and c['engine'] == 'cpu']
    ssd = r.get('detail') or {}
    eng = r['engine'] + ('' if r['engine'] == 'cpu' else (' binned' if ssd.get('binning') else ' atomic'))
    ratio = r['average_seconds'] / cpu[0]['average_seconds'] if cpu and r['engine'] == 'ssd' else float('nan')
    print(f"{r['name']:<10} {r['algorithm']:<5} {eng:<26} {r['average_seconds']:>9.3f} {r['iterations']:>5} "
          f"{ssd.get('gb_per_s', float('nan')):>7.3f} {ssd.get('amplification', float('nan')):>6.2f} {ssd.get('skew', float('nan')):>5.2f} "
          f"{r['peak_memory_bytes']/2**20:>9.0f} {ratio:>7.2f}")
PY
