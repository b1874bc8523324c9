#!/usr/bin/env bash
# session 19, issue 19, call 3 (as run): the whole table, the two scale-22 graphs (bfs sssp pr wcc bc
# at 1/4/16 threads), release build of 5eea09c against GAPBS b5e3e19 built here.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
xz -dc .device-data/bin/chatty-new.xz > $B/chatty-new; chmod +x $B/chatty-new
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1
echo "gapbs built at $SECONDS s; $(nproc) cores; THP $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
export CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 540 env CHATTY=$B/chatty-new THREADS="1 4 16" TRIALS=3 KERNELS="bfs sssp pr wcc bc" \
  GRAPHS="urand22 kron22" \
  bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"
grep "|" $OUT/table.md
