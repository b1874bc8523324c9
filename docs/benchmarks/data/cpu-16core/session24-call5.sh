#!/usr/bin/env bash
# session 24, issue 19, call 5 (as run): the table's pr rows at 16 and 4 threads on
# 8b7f74e, GAPBS b5e3e19 beside it (the last of the session's device time).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs
xz -dc .device-data/bin/chatty-new.xz > $B/chatty; chmod +x $B/chatty
tar -xf .device-data/gapbs.tar -C $B/gapbs
CHATTY=$B/chatty CHATTY_DATASETS=$REPO/.device-data/datasets GRAPHS="moscow roadNE grid web twitter kron22" \
  KERNELS=pr THREADS="16 4" TRIALS=3 timeout 150 bash scripts/bench_cpu.sh $B/gapbs $B/work5 2>&1 | tee $OUT/pr.md
echo "done at $SECONDS s"
