#!/usr/bin/env bash
# session 27, issue 19, call 4 (as run): PageRank's passes timed apart on kron22 at 1/4/16 threads
# (session27-prp.rs.txt, run as crates/algo/examples/prp.rs; 5 iterations a run, median of 7 runs) beside
# GAPBS's pr_spmv per iteration (5 iterations, median of 3 trials).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
xz -dc .device-data/bin/chatty-new.xz > $B/chatty-new; chmod +x $B/chatty-new
xz -dc .device-data/bin/prp.xz > $B/prp; chmod +x $B/prp
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
export CHATTY_DATASETS=$REPO/.device-data/datasets
(cd $B/work && CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$CHATTY_DATASETS bash -c "source $REPO/scripts/gapbs_graphs.sh; make_graph kron22") > /dev/null 2>&1
echo "kron22 made at $SECONDS s"
{
  timeout 240 $B/prp $B/work/kron22.cgr 5 16 4 1
  for t in 16 4 1; do
    s=$(OMP_NUM_THREADS=$t $B/gapbs/pr_spmv -f $B/work/kron22.sg -i 5 -t 0 -n 3 | grep "Trial Time" | awk '{print $3}' | sort -n | sed -n 2p)
    echo "gapbs pr_spmv kron22 threads $t: median trial $s s = $(python3 -c "print(round($s/5*1e6,1))") us an iteration"
  done
} 2>&1 | tee $OUT/prp-kron22.txt
echo "done at $SECONDS s"
