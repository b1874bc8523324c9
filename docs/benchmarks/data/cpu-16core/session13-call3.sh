#!/usr/bin/env bash
# session 13, issue 19, call 3: BC's sweeps in one region (new) against GAPBS, bc and bfs
# rows, then base (b37b55c, BC with a fork-join per level) against new, bc only, interleaved.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1
$B/chatty-new --version > $OUT/version.txt
export CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 300 env CHATTY=$B/chatty-new THREADS="1 4 16" TRIALS=3 KERNELS="bc bfs" GRAPHS="web twitter moscow roadNE" \
  bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"
cd $B/work
for round in 1 2; do
  for g in web twitter moscow roadNE; do
    for t in 4 16; do
      for x in base new; do
        [ $SECONDS -lt 420 ] || break 4
        $B/chatty-$x run bc $g.cgr --sources 4 -n 3 --json --engine cpu --threads $t > r.json 2>/dev/null
        python3 -c 'import json,sys; d=json.load(open("r.json")); print(sys.argv[1], sys.argv[2], sys.argv[3], "%.4f" % d["average_seconds"])' $g $t $x | tee -a $OUT/bc-base-vs-new.txt
      done
    done
  done
done
echo "all done at $SECONDS s"
