#!/usr/bin/env bash
# session 16, issue 19, call 1 (as run): the whole table (bfs sssp pr wcc bc at 1/4/16
# threads, seven graphs) with this session's build (aa4a566: PageRank's per-vertex work,
# SSSP's stale test; session 15's pull step) against GAPBS b5e3e19 built here.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1
echo "gapbs built at $SECONDS s; perf: $(command -v perf || echo none); $(nproc) cores"
$B/chatty-new --version
export CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 545 env CHATTY=$B/chatty-new THREADS="1 4 16" TRIALS=3 KERNELS="bfs sssp pr wcc bc" \
  GRAPHS="roadNE moscow grid web twitter kron22 urand22" \
  bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"
grep "|" $OUT/table.md
