#!/usr/bin/env bash
# session 27, issue 19, call 3 (as run): PageRank's iteration at one thread written as plain
# loops (session27-prm.rs.txt, run as crates/algo/examples/prm.rs): GAPBS's shape (f32 scores and sums) on the
# mapped graph and on heap copies, f64 sums of f32 contributions (ours), the library; GAPBS's
# pr_spmv per iteration beside; then ours (e826044) under glibc's mmap_max=0 against the plain build
# on the grid, three rounds.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
xz -dc .device-data/bin/chatty-new.xz > $B/chatty-new; chmod +x $B/chatty-new
xz -dc .device-data/bin/prm.xz > $B/prm; chmod +x $B/prm
printf '#!/bin/sh\nGLIBC_TUNABLES=glibc.malloc.mmap_max=0 exec %s "$@"\n' $B/chatty-new > $B/chatty-nommap; chmod +x $B/chatty-nommap
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
echo "gapbs built at $SECONDS s; perf: $(command -v perf || echo none)"
export CHATTY_DATASETS=$REPO/.device-data/datasets
(cd $B/work && CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$CHATTY_DATASETS bash -c "source $REPO/scripts/gapbs_graphs.sh; for g in moscow roadNE web grid; do make_graph \$g; done") > /dev/null 2>&1
for g in moscow roadNE web grid; do
  echo "== $g (ms an iteration, one thread)"
  $B/prm $B/work/$g.cgr 20
  s=$(OMP_NUM_THREADS=1 $B/gapbs/pr_spmv -f $B/work/$g.sg -i 20 -t 0 -n 5 | grep "Trial Time" | awk '{print $3}' | sort -n | sed -n 3p)
  echo "gapbs pr_spmv: $(python3 -c "print(round($s/20*1e3,3))") ms an iteration (median of 5 trials)"
done 2>&1 | tee $OUT/prm.txt
echo "prm done at $SECONDS s"
timeout 300 env CHATTY=$B/chatty-nommap BASE=$B/chatty-new THREADS="1 16" TRIALS=3 ROUNDS=3 KERNELS="bfs sssp pr wcc" \
  GRAPHS="grid" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/grid.md 2>&1
echo "grid done at $SECONDS s"
grep "|" $OUT/grid.md
