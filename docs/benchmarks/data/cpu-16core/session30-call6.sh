#!/usr/bin/env bash
# session 30, issue 19, call 6 (same machine as calls 1-5): bc at 1 thread, one round, on the scale-22
# graphs with 0f010d0 (chatty-new), one round.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; W=$B/work
export CHATTY=$B/chatty-new CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 290 env THREADS=1 TRIALS=3 ROUNDS=1 KERNELS=bc GRAPHS="kron22 urand22" \
  bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-22-bc1.md 2>&1
echo "done at $SECONDS s"
cd $W && tar -cJf $OUT/logs6.tar.xz ours-*.json gapbs-*.log rows.md 2>/dev/null
grep "|" $OUT/table-22-bc1.md
