#!/usr/bin/env bash
# session 21, issue 19, call 7 (as run): the bc column again with both systems from the
# same four sources (one vertex, four times: ours --sources S,S,S,S, GAPBS -r S -i 4),
# every graph of the table, 1, 4 and 16 threads. Ours: release build of the commit that
# gave --sources a list (CPU kernels as in session 19's 5eea09c); GAPBS b5e3e19.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
tar -xf .device-data/gapbs.tar -C $B/gapbs
CHATTY=$B/chatty CHATTY_DATASETS=$REPO/.device-data/datasets GRAPHS="twitter web moscow roadNE grid kron22 urand22" KERNELS=bc \
  THREADS="1 4 16" TRIALS=3 timeout 540 bash scripts/bench_cpu.sh $B/gapbs $B/work 2>&1 | tee $OUT/bc-table.md
echo "done at $SECONDS s"
