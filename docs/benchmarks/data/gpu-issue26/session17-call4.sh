#!/usr/bin/env bash
# session 17, call 4 (as run): bc.cu's review leftovers (one level_sum<BITS> for the
# bottom-up parents and the backward successors, level_begin in both sweeps, the
# bitmap count named BC_BITMAPS) verified on the GPU: BC rows with --verify, base
# (d35b382, bc.cu as session 15 left it) and new interleaved, then the GPU test
# binary's BC test and gpu_matches_the_cpu_references.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; W=$B/work; mkdir -p $W
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
D=$(realpath .device-data/datasets); C=$B/chatty-new
mk() { local name=$1; shift; $C "$@" -o $W/$name.raw.cgr -q && $C convert $W/$name.raw.cgr -o $W/$name.cgr --dedup --drop-self-loops -q && rm $W/$name.raw.cgr; }
mk kron22 generate rmat -s 22 -e 16 --undirected --weights 255 &
mk urand22 generate urand -s 22 -e 16 --undirected --weights 255 &
mk twitter convert $D/social/ego-Twitter.undirected.el.gz &
mk web convert $D/web/cnr-2000.el.gz &
mk moscow convert $D/road/moscow-osm.gr.gz &
$C generate grid --width 5000 --height 1 -o $W/path5k.cgr -q &
wait 2>/dev/null; echo "graphs made at $SECONDS s"
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "kernel %.3f ms min %.3f %s" % (statistics.median(t)*1e3, t[0]*1e3, d.get("verification")))' $B/r.json "$1"; }
run() { # label binary graph trials [flags]
  local label=$1 x=$2 g=$3 n=$4; shift 4
  timeout 150 $B/chatty-$x run bc $W/$g.cgr --engine gpu -n $n "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
}
{
run "kron22 8 verify" new kron22 1 --sources 8 --verify
run "urand22 4 verify" new urand22 1 --sources 4 --verify
run "twitter 64 verify" new twitter 1 --sources 64 --verify
run "web 8 verify" new web 1 --sources 8 --verify
run "moscow 8 verify" new moscow 1 -r 1 --sources 8 --verify
run "path5k all verify" new path5k 1 --sources all --verify
} > $OUT/rows.txt
echo "verified at $SECONDS s"; cat $OUT/rows.txt
ROWS=("kron22 5 -r 2894007" "kron22 2 --sources 64" "urand22 5 -r 1" "twitter 3 --sources 64" "web 5 -r 217849" "moscow 5 -r 1")
for r in "${ROWS[@]}"; do
  set -- $r; g=$1 n=$2; shift 2
  run "$g $* base" base $g $n "$@"
  run "$g $* new" new $g $n "$@"
done >> $OUT/rows.txt
echo "== timed at $SECONDS s"; sed 1,6d $OUT/rows.txt
CHATTY_DATASETS=$D timeout $((440 - SECONDS)) $B/gpu-test --test-threads 1 bc_from_every_source gpu_matches_the_cpu_references > $OUT/tests.txt 2>&1
grep -E "^test |test result" $OUT/tests.txt
echo "done at $SECONDS s"
