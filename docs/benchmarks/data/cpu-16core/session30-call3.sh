#!/usr/bin/env bash
# session 30, issue 19, call 3 (same machine as calls 1-2): pr and wcc on the scale-22
# graphs with 0f010d0 (chatty-new), three rounds, as time allows.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; W=$B/work
export CHATTY=$B/chatty-new CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 520 env THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="wcc pr" GRAPHS="kron22 urand22" \
  bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-22-pr-wcc.md 2>&1
echo "done at $SECONDS s"
cd $W && tar -cJf $OUT/logs3.tar.xz ours-*.json gapbs-*.log rows.md 2>/dev/null
grep "|" $OUT/table-22-pr-wcc.md
