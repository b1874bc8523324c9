#!/usr/bin/env bash
# session 23, issue 19, call 4 (as run): session 21 call 8 again on f983352 with the
# two later changes to bc's probe (narrow levels over a quarter of the edges count as
# deep; short of the gate it runs n / 16 edges at most), the same sources on both
# sides; kron22 and urand22 are not rerun (their first search widens at once).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs
xz -dc .device-data/bin/chatty-new.xz > $B/chatty; chmod +x $B/chatty
tar -xf .device-data/gapbs.tar -C $B/gapbs
CHATTY=$B/chatty CHATTY_DATASETS=$REPO/.device-data/datasets GRAPHS="web twitter moscow roadNE" KERNELS=bc \
  THREADS="1 4 16" TRIALS=3 timeout 360 bash scripts/bench_cpu.sh $B/gapbs $B/work 2>&1 | tee $OUT/bc-table.md
echo "done at $SECONDS s"
