#!/usr/bin/env bash
# session 16, issue 19, call 2 (as run): base (f27ef0e, before sessions 15-16's CPU
# changes) against new (aa4a566), interleaved, three rounds, median of each run's trials;
# rows that read low in call 1 (bfs urand22/kron22/twitter at 16 threads, sssp moscow
# at 16) and PageRank before/after; then urand22's bc rows against GAPBS.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1
export CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets CHATTY_DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
for g in moscow roadNE twitter urand22 kron22; do make_graph $g 2>> gen.log; done
echo "graphs made at $SECONDS s"
src() { $B/chatty-new run bfs $1.cgr -n 1 --json --engine cpu 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["parameters"]["sources"][0])'; }
declare -A S; for g in moscow roadNE twitter urand22 kron22; do S[$g]=$(src $g); done
echo "sources: ${S[*]}"
med() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%.5f" % statistics.median(d["trial_seconds"]), d.get("iterations"))' "$1"; }
rows=(
  "bfs urand22 16 -n 5" "bfs urand22 4 -n 5" "bfs kron22 16 -n 5" "bfs twitter 16 -n 10" "bfs twitter 1 -n 10"
  "sssp moscow 16 -n 5 --delta 2000" "sssp moscow 4 -n 5 --delta 2000"
  "pr moscow 1 -n 3 --tolerance 2.43e-10 --max-iters 1000" "pr moscow 16 -n 3 --tolerance 2.43e-10 --max-iters 1000"
  "pr roadNE 1 -n 1 --tolerance 6.9e-11 --max-iters 1000" "pr roadNE 16 -n 3 --tolerance 6.9e-11 --max-iters 1000"
  "pr kron22 16 -n 3 --tolerance 2.4e-11 --max-iters 1000" "pr twitter 1 -n 3 --tolerance 1.2e-9 --max-iters 1000"
)
for round in 1 2 3; do
  for r in "${rows[@]}"; do
    set -- $r; k=$1 g=$2 t=$3; shift 3
    for x in base new; do
      [ $SECONDS -lt 400 ] || break 3
      $B/chatty-$x run $k $g.cgr -r ${S[$g]} --json --engine cpu --threads $t "$@" > r.json 2>/dev/null || { echo "$k $g $t $x failed"; continue; }
      echo "$k $g $t $x $(med r.json)" | tee -a $OUT/base-vs-new.txt
    done
  done
done
echo "compare done at $SECONDS s"
cd $REPO
timeout $((560 - SECONDS)) env CHATTY=$B/chatty-new THREADS="4 16" TRIALS=3 KERNELS="bc" GRAPHS="urand22" \
  bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table-bc-urand22.md 2>&1
grep "|" $OUT/table-bc-urand22.md
echo "all done at $SECONDS s"
