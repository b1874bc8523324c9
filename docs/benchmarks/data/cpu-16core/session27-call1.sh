#!/usr/bin/env bash
# session 27, issue 19, call 1 (as run): PageRank's passes timed apart at 1/4/16 threads
# (session27-prp.rs.txt, run as crates/algo/examples/prp.rs) beside GAPBS's pr_spmv per iteration; then the
# table's road, grid, web and social rows: ours (e826044) beside its base (a1f75d4) and GAPBS
# b5e3e19 built here, three rounds.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for v in new old; do xz -dc .device-data/bin/chatty-$v.xz > $B/chatty-$v; chmod +x $B/chatty-$v; done
xz -dc .device-data/bin/prp.xz > $B/prp; chmod +x $B/prp
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
echo "gapbs built at $SECONDS s; $(nproc) cores; THP $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
lscpu | grep -E "Model name|Thread|Core|Socket|NUMA|L2|L3" 
export CHATTY_DATASETS=$REPO/.device-data/datasets
# the graphs (the table's make_graph)
(cd $B/work && CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$CHATTY_DATASETS bash -c "source $REPO/scripts/gapbs_graphs.sh; for g in moscow roadNE web grid; do make_graph \$g; done")
echo "graphs at $SECONDS s"
for g in moscow roadNE web grid; do
  $B/prp $B/work/$g.cgr 20 1 4 16
  for t in 1 4 16; do
    s=$(OMP_NUM_THREADS=$t $B/gapbs/pr_spmv -f $B/work/$g.sg -i 20 -t 0 -n 7 | grep "Trial Time" | awk '{print $3}' | sort -n | sed -n 4p)
    echo "gapbs pr_spmv $g threads $t: median trial $s s = $(python3 -c "print(round($s/20*1e6,1))") us an iteration"
  done
done 2>&1 | tee $OUT/prp.txt
echo "prp done at $SECONDS s"
timeout 420 env CHATTY=$B/chatty-new BASE=$B/chatty-old THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="bfs sssp pr wcc bc" \
  GRAPHS="roadNE moscow grid web twitter" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"
grep "|" $OUT/table.md | tail -8
