#!/usr/bin/env bash
# session 31, issue 19, call 2: the table's wcc rows with e88b764 (one sampling pass,
# path halving), 04716d0 as BASE, GAPBS b5e3e19's cc beside them, three rounds; then,
# as time allows, the bfs rows of the small graphs with e88b764 (the main thread as
# worker 0 since 335a65c; session 30's table predates it).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; W=$B/work; mkdir -p $B/gapbs $W
for v in e88 head; do xz -dc .device-data/bin/chatty-$v.xz > $B/chatty-$v; chmod +x $B/chatty-$v; done
[ -x $B/gapbs/cc ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
lscpu | grep -E "Model name|^CPU\(s\)|NUMA node\(s\)" > $OUT/host.txt
export CHATTY=$B/chatty-e88 CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 400 env THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="wcc" BASE=$B/chatty-head \
  GRAPHS="kron22 urand22 grid roadNE moscow twitter web" \
  bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-wcc.md 2>&1
echo "wcc done at $SECONDS s" >> $OUT/host.txt
left=$((560 - SECONDS))
[ $left -gt 30 ] && timeout $left env THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="bfs" \
  GRAPHS="twitter web moscow roadNE grid" \
  bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-bfs.md 2>&1
echo "bfs done at $SECONDS s" >> $OUT/host.txt
cd $W && tar -cJf $OUT/logs2.tar.xz ours-*.json base-*.json gapbs-*.log rows.md 2>/dev/null
grep "|" $OUT/table-wcc.md $OUT/table-bfs.md; cat $OUT/host.txt
