#!/usr/bin/env bash
# session 13, issue 19, call 1 (as run): the PageRank gather without per-edge bounds
# checks (new = 93c3133) against GAPBS, pr and bfs rows (bfs now from the same source on
# both sides), then base (d79ba5d) PageRank on the same graphs for before/after.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1
echo "gapbs built at $SECONDS s"
(lscpu | head -25; nproc; $B/chatty-new --version) > $OUT/machine.txt
export CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 420 env CHATTY=$B/chatty-new THREADS="1 4 16" TRIALS=3 KERNELS="pr bfs" GRAPHS="kron22 roadNE moscow grid web twitter urand22" \
  bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"
cd $B/work
for g in kron22 roadNE moscow grid web twitter urand22; do
  [ -f $g.cgr ] || continue
  tol=$($B/chatty-new info $g.cgr --json | python3 -c 'import json,sys; print(1e-4 / json.load(sys.stdin)["vertices"])')
  for t in 1 16; do
    for x in base new; do
      [ $SECONDS -lt 560 ] || break 3
      $B/chatty-$x run pr $g.cgr --tolerance $tol --max-iters 1000 -n 3 --json --engine cpu --threads $t > r.json 2>/dev/null
      python3 -c 'import json,sys; d=json.load(open("r.json")); print(sys.argv[1], sys.argv[2], sys.argv[3], "%.4f" % d["average_seconds"], d["iterations"])' $g $t $x | tee -a $OUT/base-vs-new.txt
    done
  done
done
echo "all done at $SECONDS s"
