#!/usr/bin/env bash
# session 24, issue 19, call 3 (as run): the table's pr rows on f52ed54 (old: each
# range searched over all offsets, sequentially, every iteration) and 144698c (new:
# blocks cut in parallel, one look at the offsets per block under budget), run after
# run; then PageRank iterations at 16 threads against a loop with its ranges cut
# once (crates/algo/examples/prx.rs, not committed).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs
for b in new old; do xz -dc .device-data/bin/chatty-$b.xz > $B/chatty-$b; chmod +x $B/chatty-$b; done
xz -dc .device-data/bin/prx.xz > $B/prx; chmod +x $B/prx
tar -xf .device-data/gapbs.tar -C $B/gapbs
run() { # binary threads tag
    CHATTY=$B/chatty-$1 CHATTY_DATASETS=$REPO/.device-data/datasets GRAPHS="moscow roadNE grid web twitter kron22 urand22" \
      KERNELS=pr THREADS="$2" TRIALS=3 timeout 150 bash scripts/bench_cpu.sh $B/gapbs $B/work 2>&1 | tee $OUT/pr-$1-$3.md
    echo "$1 $3 done at $SECONDS s"
}
run new "1 4 16" r1
run old "1 4 16" r1
run new 16 r2
run old 16 r2
for g in moscow roadNE grid web; do timeout 30 $B/prx $B/work/$g.cgr 16 20 5; done 2>&1 | tee $OUT/prx.txt
echo "done at $SECONDS s"
