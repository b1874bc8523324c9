#!/usr/bin/env bash
# Prepared in session 27 for issue 19; run in session 29 (session29-call1.sh, ours = 7ebc5d3 there), whose
# median column came out empty: the values were joined without commas (fixed here since).
# pr (the table's stopping rule) of ours (e826044) and GAPBS's pr_spmv, alternating five
# times, each pinned with taskset to the same cores (core 2; cores 2-5) and unpinned, on
# moscow and road-NE at 1 and 4 threads: average trial of 3, seconds. It tests whether
# moscow's one-thread PageRank gap is where each process ran rather than its code.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
xz -dc .device-data/bin/chatty-new.xz > $B/chatty-new; chmod +x $B/chatty-new
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
export CHATTY_DATASETS=$REPO/.device-data/datasets
(cd $B/work && CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$CHATTY_DATASETS bash -c "source $REPO/scripts/gapbs_graphs.sh; for g in moscow roadNE; do make_graph \$g; done") > /dev/null 2>&1
avg() { grep "Average Time" | awk '{print $3}'; }
for g in moscow roadNE; do
  n=$($B/chatty-new info $B/work/$g.cgr --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["vertices"])')
  tol=$(python3 -c "print(1e-4/$n)")
  for t in 1 4; do
    for pin in "taskset -c $([ $t = 1 ] && echo 2 || echo 2-5)" ""; do
      o=(); p=()
      for r in 1 2 3 4 5; do
        o+=($($pin $B/chatty-new run pr $B/work/$g.cgr --engine cpu --threads $t --tolerance $tol --max-iters 1000 -n 3 2>/dev/null | avg))
        p+=($(OMP_NUM_THREADS=$t $pin $B/gapbs/pr_spmv -f $B/work/$g.sg -t 1e-4 -i 1000 -n 3 | avg))
      done
      echo "$g threads $t ${pin:-unpinned} | ours ${o[*]} | gapbs ${p[*]} | median gapbs/ours $(python3 -c "import statistics as s; print(round(s.median([$(IFS=,; echo "${p[*]}")])/s.median([$(IFS=,; echo "${o[*]}")]),2))")"
    done
  done
done 2>&1 | tee $OUT/pinned.txt
echo "done at $SECONDS s"
