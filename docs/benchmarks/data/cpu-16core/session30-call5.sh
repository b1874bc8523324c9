#!/usr/bin/env bash
# session 30, issue 19, call 5 (same machine as calls 1-4): the main thread as the
# pool's worker 0 (chatty-cur: use_current_thread) against the same build without it
# (chatty-trace) as BASE, GAPBS beside, on the short kernels.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; W=$B/work
export CHATTY=$B/chatty-cur CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 320 env BASE=$B/chatty-trace THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="bfs wcc bc" GRAPHS="twitter web moscow" \
  bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-cur.md 2>&1
echo "done at $SECONDS s"
grep "|" $OUT/table-cur.md
