#!/usr/bin/env bash
# session 19, call 1 (as run): issue 26's stored order. gk22 = GAPBS `converter -g22
# -k16` (b5e3e19, built here), read as the issue did; gk22-deg = `chatty convert
# gk22.cgr --reorder degree` (the order stored with the input's ids). GPU BFS from
# 3474147 in the own order (N), renumbered per run (D, --reorder degree) and on the
# stored order (S); every kernel on S with --verify, S's answers byte-compared with N's;
# the CPU engine at 16 threads on both files; the GPU test binary's reference test
# (every kernel in all three --reorder orders) for chatty_algo::renumber.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; W=$B/work; mkdir -p $W $B/gapbs
xz -dc .device-data/bin/chatty-new.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
D=$(realpath .device-data/datasets); C=$B/chatty
CHATTY_DATASETS=$D timeout 300 $B/gpu-test --test-threads 1 gpu_matches_the_cpu_references > $OUT/tests.txt 2>&1 &
TESTS=$!
( tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs converter > /dev/null 2>&1 && cd $W && \
  $B/gapbs/converter -g22 -k16 -e gk22.el > /dev/null 2>&1 && \
  $C convert gk22.el --format el -o gk22.cgr --symmetrize --dedup --drop-self-loops -q && rm gk22.el )
echo "gk22 made at $SECONDS s"
for t in 16 4; do
  RAYON_NUM_THREADS=$t $C convert $W/gk22.cgr -o $W/gk22-deg.cgr --reorder degree 2>&1 | sed "s/^/convert $t threads: /"
done
$C info $W/gk22-deg.cgr --check | grep -E "renumbered|checked|edges"
wait $TESTS; grep -E "^test |test result" $OUT/tests.txt; echo "tests done at $SECONDS s"
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "kernel %.3f ms min %.3f iters %s %s e2e %.1f ms reorder %.3f s upload %.3f s load %.3f s renumbered %s sources %s" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3, d["detail"].get("reorder_seconds", 0), d["detail"].get("upload_seconds", 0), d["load_seconds"], d["graph"]["renumbered"], d["parameters"]["sources"][:3]))' $B/r.json "$1"; }
run() { # label algorithm graph engine trials [flags]
  local label=$1 a=$2 g=$3 e=$4 n=$5; shift 5
  timeout 150 $C run $a $W/$g.cgr --engine $e -n $n "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
}
{
run "bfs N verify" bfs gk22 gpu 2 -r 3474147 --verify -o $B/bfs-N.txt
run "bfs D verify" bfs gk22 gpu 2 -r 3474147 --verify --reorder degree -o $B/bfs-D.txt
run "bfs S verify" bfs gk22-deg gpu 2 -r 3474147 --verify -o $B/bfs-S.txt
for a in wcc pr; do
  run "$a N" $a gk22 gpu 1 -o $B/$a-N.txt
  run "$a S verify" $a gk22-deg gpu 2 --verify -o $B/$a-S.txt
done
run "bc S verify" bc gk22-deg gpu 1 -r 3474147 --verify
run "bc S 8 sources verify" bc gk22-deg gpu 1 --sources 8 --verify
run "sssp S verify" sssp gk22-deg gpu 2 -r 3474147 --verify
run "bfs S random sources verify" bfs gk22-deg gpu 3 --verify
run "bfs N random sources" bfs gk22 gpu 3
} > $OUT/rows.txt
for a in bfs wcc; do cmp $B/$a-N.txt $B/$a-S.txt && echo "$a: stored order's answer identical to the own order's"; done >> $OUT/rows.txt
cmp $B/bfs-N.txt $B/bfs-D.txt && echo "bfs: --reorder degree's answer identical" >> $OUT/rows.txt
python3 -c 'import sys
a=[float(l.split()[1]) for l in open(sys.argv[1])]; b=[float(l.split()[1]) for l in open(sys.argv[2])]
print("pr: stored against own order, largest relative difference %.2e over %d vertices" % (max(abs(x-y)/max(abs(x),1e-300) for x,y in zip(a,b)), len(a)))' $B/pr-N.txt $B/pr-S.txt >> $OUT/rows.txt
echo "verified at $SECONDS s"; cat $OUT/rows.txt
for r in 1 2; do for g in gk22 gk22-deg; do
  run "bfs $g round $r" bfs $g gpu 10 -r 3474147
  run "bfs $g --reorder degree round $r" bfs $g gpu 10 -r 3474147 --reorder degree
done; done > $OUT/timed.txt
for g in gk22 gk22-deg; do for a in bfs pr wcc bc; do
  f=(); case $a in bfs|bc) f=(-r 3474147);; esac
  RAYON_NUM_THREADS=16 run "cpu16 $g $a" $a $g cpu 5 "${f[@]}"
done; done >> $OUT/timed.txt
echo "== timed at $SECONDS s"; cat $OUT/timed.txt
