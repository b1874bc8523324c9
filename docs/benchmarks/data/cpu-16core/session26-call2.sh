#!/usr/bin/env bash
# session 26, issue 19, call 2 (as run; four tries were refused before it): the parts of 25d24f8 one by one, at 1/4/16 threads,
# three rounds each: (a) worker = 25d24f8 with the kernel on a pool worker and no workers
# kept awake, against old = a1f75d4; (b) new = 25d24f8 (workers awake) against worker;
# (c) gentle = new with 64 pauses between its workers' looks for work, against worker.
# GAPBS b5e3e19 built here beside every row.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for v in new old worker gentle; do xz -dc .device-data/bin/chatty-$v.xz > $B/chatty-$v; chmod +x $B/chatty-$v; done
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
echo "gapbs built at $SECONDS s; $(nproc) cores"
export CHATTY_DATASETS=$REPO/.device-data/datasets
run() { # name chatty base rounds graphs timeout
    timeout "$6" env CHATTY=$B/chatty-$2 BASE=$B/chatty-$3 THREADS="1 4 16" TRIALS=3 ROUNDS=$4 KERNELS="bfs sssp pr wcc bc" \
      GRAPHS="$5" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/$1.md 2>&1
    echo "$1 done at $SECONDS s"
}
run a-worker-vs-old worker old 3 "moscow roadNE web" 160
run b-new-vs-worker new worker 3 "moscow roadNE web" 160
run c-gentle-vs-worker gentle worker 3 "moscow roadNE web" 160
grep -h "|" $OUT/*.md | grep -v "^|---"
