#!/usr/bin/env bash
# session 24, issue 19, call 2 (as run): call 1 again after the edge-balanced ranges
# are searched within their extent (not over every offset, per range, per iteration):
# the table's pr rows with blocks of sums (the default) and each vertex finished at
# once (PRX_FRESH=1, this build only), then PageRank iterations at 1, 4 and 16 threads
# in four forms (crates/algo/examples/prx.rs, not committed).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs
xz -dc .device-data/bin/chatty-new.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/prx.xz > $B/prx; chmod +x $B/prx
tar -xf .device-data/gapbs.tar -C $B/gapbs
for mode in blocks fresh; do
    if [ $mode = fresh ]; then export PRX_FRESH=1; else unset PRX_FRESH; fi
    CHATTY=$B/chatty CHATTY_DATASETS=$REPO/.device-data/datasets GRAPHS="moscow roadNE grid web twitter kron22 urand22" \
      KERNELS=pr THREADS="1 4 16" TRIALS=3 timeout 200 bash scripts/bench_cpu.sh $B/gapbs $B/work 2>&1 | tee $OUT/pr-$mode.md
    echo "$mode done at $SECONDS s"
done
unset PRX_FRESH
for g in moscow roadNE grid web twitter; do timeout 40 $B/prx $B/work/$g.cgr 1,4,16 20 5; done 2>&1 | tee $OUT/prx.txt
for g in kron22 urand22; do timeout 60 $B/prx $B/work/$g.cgr 16,4 5 3; done 2>&1 | tee -a $OUT/prx.txt
echo "done at $SECONDS s"
