#!/usr/bin/env bash
# session 21, issue 19, call 8 (as run): the bc rows of the graphs with small components
# and the roads after `bc: searches ... that end within a few levels decide alone`, the
# same sources on both sides as in call 7; kron22 and urand22 are not rerun (their
# first search widens at once: the choice there is as before).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
tar -xf .device-data/gapbs.tar -C $B/gapbs
CHATTY=$B/chatty CHATTY_DATASETS=$REPO/.device-data/datasets GRAPHS="web twitter moscow roadNE" KERNELS=bc \
  THREADS="1 4 16" TRIALS=3 timeout 200 bash scripts/bench_cpu.sh $B/gapbs $B/work 2>&1 | tee $OUT/bc-table.md
echo "done at $SECONDS s"
