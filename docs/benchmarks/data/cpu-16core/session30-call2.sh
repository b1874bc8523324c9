#!/usr/bin/env bash
# session 30, issue 19, call 2 (same machine as call 1): the table's other rows with
# 0f010d0 (chatty-new) and the fixed bench_cpu.sh: pr, wcc, bc on the small graphs,
# then bfs and sssp on the scale-22 graphs as time allows.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; W=$B/work
export CHATTY=$B/chatty-new CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 330 env THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="pr wcc bc" GRAPHS="twitter moscow web roadNE grid" \
  bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-pr-wcc-bc.md 2>&1
echo "small graphs done at $SECONDS s"
timeout $((560 - SECONDS)) env THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="bfs sssp" GRAPHS="kron22 urand22" \
  bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-22.md 2>&1
echo "scale 22 done at $SECONDS s"
cd $W && tar -cJf $OUT/logs2.tar.xz ours-*.json gapbs-*.log rows.md 2>/dev/null
grep "|" $OUT/table-pr-wcc-bc.md | tail -6; grep "|" $OUT/table-22.md
