#!/usr/bin/env bash
# session 30, issue 19, call 4 (same machine as calls 1-3): bc at 4 and 16 threads on the scale-22
# graphs with 0f010d0 (chatty-new), three rounds, as time allows.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; W=$B/work
export CHATTY=$B/chatty-new CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 490 env THREADS="4 16" TRIALS=3 ROUNDS=3 KERNELS=bc GRAPHS="kron22 urand22" \
  bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-22-bc.md 2>&1
echo "done at $SECONDS s"
cd $W && tar -cJf $OUT/logs4.tar.xz ours-*.json gapbs-*.log rows.md 2>/dev/null
grep "|" $OUT/table-22-bc.md
