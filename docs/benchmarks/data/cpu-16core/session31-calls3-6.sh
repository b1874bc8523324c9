#!/usr/bin/env bash
# session 31, issue 19, calls 3-6: the rest of the table with e88b764, on the machine of
# call 2 (kept warm: its /tmp/b holds the binaries, GAPBS and the graphs), as run.
export NCCL_NVLS_ENABLE=0; REPO=$(pwd); B=/tmp/b; W=$B/work
export CHATTY=$B/chatty-e88 CHATTY_DATASETS=$REPO/.device-data/datasets
case ${1:-3} in
3) timeout 540 env THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="sssp bc" GRAPHS="twitter web moscow roadNE grid" \
     bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-sssp-bc.md 2>&1 ;;
4) timeout 170 env THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="pr" GRAPHS="twitter web moscow roadNE grid" \
     bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-pr.md 2>&1
   timeout $((440 - SECONDS)) env THREADS="16 4 1" TRIALS=3 ROUNDS=3 KERNELS="bfs sssp" GRAPHS="kron22 urand22" \
     bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-22-bfs-sssp.md 2>&1 ;;
5) timeout 280 env THREADS="16 4 1" TRIALS=3 ROUNDS=3 KERNELS="pr" GRAPHS="kron22 urand22" \
     bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-22-pr.md 2>&1
   timeout $((430 - SECONDS)) env THREADS="16 4" TRIALS=3 ROUNDS=2 KERNELS="bc" GRAPHS="kron22 urand22" \
     bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-22-bc.md 2>&1 ;;
6) timeout 150 env THREADS="1" TRIALS=2 ROUNDS=1 KERNELS="bc" GRAPHS="kron22 urand22" \
     bash $REPO/scripts/bench_cpu.sh $B/gapbs $W > $OUT/table-22-bc1.md 2>&1 ;;
esac
