#!/usr/bin/env bash
# session 26, issue 19, call 3 (as run): the scale-22 rows at 1/4/16 threads, ours (25d24f8)
# against GAPBS b5e3e19 built here, one round (as session 19's call 3).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for v in new; do xz -dc .device-data/bin/chatty-$v.xz > $B/chatty-$v; chmod +x $B/chatty-$v; done
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
echo "gapbs built at $SECONDS s; $(nproc) cores"
export CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 550 env CHATTY=$B/chatty-new THREADS="1 4 16" TRIALS=3 KERNELS="bfs sssp pr wcc bc" \
  GRAPHS="kron22 urand22" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"
grep "|" $OUT/table.md
