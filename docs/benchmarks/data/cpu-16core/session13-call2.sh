#!/usr/bin/env bash
# session 13, issue 19, call 2: the whole table, every kernel, this session's build,
# bfs/sssp from the same source on both sides.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
xz -dc .device-data/bin/chatty-new.xz > $B/chatty-new; chmod +x $B/chatty-new
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1
echo "gapbs built at $SECONDS s"
$B/chatty-new --version > $OUT/version.txt
export CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 555 env CHATTY=$B/chatty-new THREADS="1 4 16" TRIALS=3 KERNELS="bfs sssp pr wcc bc" GRAPHS="roadNE moscow grid web twitter kron22 urand22" \
  bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "done at $SECONDS s"
