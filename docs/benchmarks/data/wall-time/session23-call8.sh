#!/usr/bin/env bash
# session 23, call 8 (as run): the whole command's wall time before (057210a, "head")
# and after (the parallel one-pass summary, "new"), interleaved, rmat24 with its
# transpose stored, one GPU. Call 7 had found 0.13-0.44 s between the report's
# elapsed time and the engine's drop: the answer's summary (PageRank's every vertex
# sorted for its top ten).
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
for b in head new; do xz -dc .device-data/bin/chatty-$b.xz > $B/chatty-$b; chmod +x $B/chatty-$b; done
export CHATTY_KERNEL_CACHE=$B/kcache
$B/chatty-new generate rmat -s 24 -e 16 --weights 255 -o $B/work/r24.cgr -q
$B/chatty-new convert $B/work/r24.cgr -o $B/work/r24t.cgr --transpose -q
$B/chatty-new run bfs $B/work/r24t.cgr --engine gpu --gpus 1 -n 1 > /dev/null 2>&1 # fills the kernel cache
echo "graphs at $SECONDS s"
for round in 1 2 3; do for alg in bfs pr wcc; do for b in head new; do
  /usr/bin/time -f "%e" -o $B/wall.txt $B/chatty-$b run $alg $B/work/r24t.cgr --engine gpu --gpus 1 -n 2 --json --max-iters 10 --tolerance 0 -r 1 > $B/out.json 2>$B/err.txt || { echo "FAIL"; tail -3 $B/err.txt; continue; }
  echo "$round $alg $b wall $(tail -1 $B/wall.txt) elapsed $(python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["elapsed_seconds"])' $B/out.json)"
done; done; done
echo "done at $SECONDS s"
