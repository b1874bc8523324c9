#!/usr/bin/env bash
# session 29, issue 19, calls 2-5 (as run, each its own device call on the machine call 1
# left warm, so /tmp/b held the binaries, GAPBS and the graphs): ours (7ebc5d3), session 27's
# build (e826044) as BASE, GAPBS b5e3e19.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; export CHATTY_DATASETS=$(pwd)/.device-data/datasets
case $1 in
2)  # kron22 and urand22, one round (the table finished in 572 s; the log tar after it ran out the call's time)
    timeout 575 env CHATTY=$B/chatty-new BASE=$B/chatty-old THREADS="1 4 16" TRIALS=3 ROUNDS=1 KERNELS="bfs sssp pr wcc bc" \
      GRAPHS="kron22 urand22" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table22.md 2>&1 ;;
3)  # call 2's two rows furthest from its base column, again: their trials, then more rounds
    (cd $B/work && grep -h "Trial Time" gapbs-bfs-kron22.sg-16-r1.log
     python3 -c 'import json; [print(f, json.load(open(f))["trial_seconds"]) for f in ["ours-bfs-kron22-16-r1.json","base-bfs-kron22-16-r1.json","ours-pr-urand22-4-r1.json","base-pr-urand22-4-r1.json"]]') > $OUT/trials.txt 2>&1
    timeout 150 env CHATTY=$B/chatty-new BASE=$B/chatty-old THREADS="16" TRIALS=3 ROUNDS=5 KERNELS="bfs" GRAPHS="kron22" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/bfs16.md 2>&1
    timeout 150 env CHATTY=$B/chatty-new BASE=$B/chatty-old THREADS="4" TRIALS=3 ROUNDS=3 KERNELS="pr" GRAPHS="urand22" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/pr4.md 2>&1 ;;
4|5)  # scale-22 rows in three rounds, as many as the device time left allowed
    run() { timeout $1 env CHATTY=$B/chatty-new BASE=$B/chatty-old THREADS="$2" TRIALS=3 ROUNDS=3 KERNELS="$3" GRAPHS="$4" bash scripts/bench_cpu.sh $B/gapbs $B/work 2>&1 | grep -E "^\| (bfs|sssp|wcc|pr|bc) " >> $OUT/rows3.md; }
    if [ "$1" = 4 ]; then run 70 "1 4" bfs kron22; run 80 16 sssp "kron22 urand22"; run 90 "1 4 16" wcc urand22
    else run 55 "1 4 16" bfs urand22; run 55 "1 4 16" wcc kron22; run 75 "1 4" sssp kron22; fi ;;  # sssp kron22 x4 did not fit its 75 s
esac
