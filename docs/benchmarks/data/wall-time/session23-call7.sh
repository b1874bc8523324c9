#!/usr/bin/env bash
# session 23, call 7 (as run): where call 6's exit time goes. A scratch build (not
# committed) prints when run() drops its engine and how long that takes, and when
# main calls exit; with SCRATCH_LEAK set it leaks the engine instead of dropping it.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
xz -dc .device-data/bin/chatty-scratch.xz > $B/chatty; chmod +x $B/chatty
export CHATTY_KERNEL_CACHE=$B/kcache
$B/chatty generate rmat -s 24 -e 16 --weights 255 -o $B/work/r24.cgr -q
$B/chatty convert $B/work/r24.cgr -o $B/work/r24t.cgr --transpose -q
$B/chatty run bfs $B/work/r24t.cgr --engine gpu --gpus 1 -n 1 > /dev/null 2>&1 # fills the kernel cache
echo "graphs at $SECONDS s"
for round in 1 2; do for alg in bfs pr; do for dev in "--gpus 1" "--devices 0,0"; do for mode in drop leak; do
  leak=""; [ $mode = leak ] && leak=1
  SCRATCH_LEAK=$leak /usr/bin/time -f "%e" -o $B/wall.txt $B/chatty run $alg $B/work/r24t.cgr --engine gpu $dev -n 2 --json --max-iters 10 --tolerance 0 -r 1 > $B/out.json 2>$B/err.txt || { echo "FAIL"; tail -3 $B/err.txt; continue; }
  echo "$alg ${dev#--} $mode wall $(tail -1 $B/wall.txt) elapsed $(python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["elapsed_seconds"])' $B/out.json) | $(grep scratch $B/err.txt | tr '\n' ' ')"
done; done; done; done
echo "done at $SECONDS s"
