#!/usr/bin/env bash
# session 16, issue 19, call 3 (as run): the rows of call 1 that read far below 1.0,
# re-run beside GAPBS from the same sources with every trial printed: sssp moscow at
# 16 threads from 8 sources (call 1: 0.25), bfs urand22 and twitter at 16 threads
# from 4 sources (0.40, 0.54); then the Gauss-Seidel PageRank rows (ours
# --pr-method gauss-seidel against GAPBS pr).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
xz -dc .device-data/bin/chatty-new.xz > $B/chatty; chmod +x $B/chatty
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1
export CHATTY=$B/chatty GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets CHATTY_DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
for g in moscow twitter urand22; do make_graph $g 2>> gen.log; done
echo "graphs made at $SECONDS s"
# one search: ours (median and every trial) then GAPBS from the same 0-based source
pair() { # kernel graph threads source0 extra-ours -- extra-gapbs
  local k=$1 g=$2 t=$3 s=$4 base
  base=$($CHATTY run bfs $g.cgr -n 1 --json --engine cpu 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["graph"]["id_base"])')
  $CHATTY run $k $g.cgr -r $((s + base)) -n 7 --json --engine cpu --threads $t $5 > r.json 2>/dev/null
  o=$(python3 -c 'import json,sys,statistics; d=json.load(open("r.json")); t=d["trial_seconds"]; print("%.5f" % statistics.median(t), " ".join("%.4f" % x for x in t))')
  f=$g.sg; [ $k = sssp ] && f=$g.wsg
  OMP_NUM_THREADS=$t $GAPBS/$k -f $f -n 7 -r $s $6 > gl.txt
  p=$(awk '/Trial Time:/ {print $3}' gl.txt | python3 -c 'import sys,statistics; t=[float(x) for x in sys.stdin]; print("%.5f" % statistics.median(t), " ".join("%.4f" % x for x in t))')
  echo "$k $g t=$t src=$s | ours $o | gapbs $p" | tee -a $OUT/pairs.txt
}
for s in 0 1000 50000 100000 150000 200000 300000 400000; do pair sssp moscow 16 $s "--delta 2000" "-d 2000"; pair sssp moscow 4 $s "--delta 2000" "-d 2000"; done
echo "sssp done at $SECONDS s"
for s in 7 1000 2000000 4000000; do pair bfs urand22 16 $s; done
for s in 5 100 20000 60000; do pair bfs twitter 16 $s; pair bfs twitter 1 $s; done
echo "bfs done at $SECONDS s"
cd $REPO
timeout $((560 - SECONDS)) env CHATTY=$B/chatty THREADS="1 4 16" TRIALS=3 KERNELS="pr-gs" GRAPHS="moscow twitter urand22" \
  bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table-pr-gs.md 2>&1
grep "|" $OUT/table-pr-gs.md
echo "all done at $SECONDS s"
