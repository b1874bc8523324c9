#!/usr/bin/env bash
# session 29, issue 19, call 1: session 28's pinned PageRank test (session28-next-pinned.sh,
# ours = 7ebc5d3 here), then the table's road, grid, web and social rows: ours (7ebc5d3)
# beside session 27's build (e826044) as BASE and GAPBS b5e3e19 built here, three rounds.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for v in new old; do xz -dc .device-data/bin/chatty-$v.xz > $B/chatty-$v; chmod +x $B/chatty-$v; done
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
echo "gapbs built at $SECONDS s; $(nproc) cores"
lscpu | grep -E "Model name|Thread|Core|Socket|NUMA|L2|L3"
OUT=$OUT timeout 150 bash docs/benchmarks/data/cpu-16core/session28-next-pinned.sh
echo "pinned done at $SECONDS s"
export CHATTY_DATASETS=$REPO/.device-data/datasets
timeout $((570 - SECONDS)) env CHATTY=$B/chatty-new BASE=$B/chatty-old THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="bfs sssp pr wcc bc" \
  GRAPHS="roadNE moscow grid web twitter" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"
(cd $B/work && tar -cJf $OUT/logs.tar.xz *.json *.log *.err rows.md 2>/dev/null)
grep "|" $OUT/table.md | tail -6
