#!/usr/bin/env bash
# session 24, issue 19, call 1 (as run): PageRank's gather, blocks of 256 sums then
# the finish (the default) against each vertex finished at once (PRX_FRESH=1, a
# switch of this build only), the table's pr rows both ways; then one thread's
# iteration in loop variants (crates/algo/examples/prx.rs, not committed).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs
xz -dc .device-data/bin/chatty-new.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/prx.xz > $B/prx; chmod +x $B/prx
tar -xf .device-data/gapbs.tar -C $B/gapbs
for mode in blocks fresh; do
    if [ $mode = fresh ]; then export PRX_FRESH=1; else unset PRX_FRESH; fi
    CHATTY=$B/chatty CHATTY_DATASETS=$REPO/.device-data/datasets GRAPHS="moscow roadNE grid web twitter kron22 urand22" \
      KERNELS=pr THREADS="1 4 16" TRIALS=3 timeout 220 bash scripts/bench_cpu.sh $B/gapbs $B/work 2>&1 | tee $OUT/pr-$mode.md
    echo "$mode done at $SECONDS s"
done
unset PRX_FRESH
for g in moscow roadNE grid kron22; do echo "== $g"; taskset -c 3 timeout 60 $B/prx $B/work/$g.cgr; done 2>&1 | tee $OUT/prx.txt
echo "done at $SECONDS s"
