#!/usr/bin/env bash
# session 23, call 6 (as run): where a one-GPU command's wall time goes, with the
# report's new elapsed_seconds (command start to report) and detail.open_seconds:
# rmat24 with its transpose stored, bfs and pr, one GPU and two parts (0,0), twice
# each (the first run fills the kernel cache), wall time of the whole command beside.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
xz -dc .device-data/bin/chatty-new.xz > $B/chatty; chmod +x $B/chatty
export CHATTY_KERNEL_CACHE=$B/kcache
$B/chatty generate rmat -s 24 -e 16 --weights 255 -o $B/work/r24.cgr -q
$B/chatty convert $B/work/r24.cgr -o $B/work/r24t.cgr --transpose -q
echo "graphs at $SECONDS s"
printf "%-4s %-12s %-3s %6s %7s %7s %7s %7s %7s %7s %7s %7s\n" alg devices run wall elapsed load open compile prepare warm_up trials exit
for alg in bfs pr; do for dev in "--gpus 1" "--devices 0,0"; do for run in 1 2; do
  /usr/bin/time -f "%e" -o $B/wall.txt $B/chatty run $alg $B/work/r24t.cgr --engine gpu $dev -n 2 --json --max-iters 10 --tolerance 0 -r 1 > $B/out.json 2>$B/err.txt || { echo "FAIL $alg $dev"; tail -3 $B/err.txt; continue; }
  python3 - "$alg" "$dev" "$run" "$(tail -1 $B/wall.txt)" $B/out.json <<'PY'
import json, sys
alg, dev, run, wall, path = sys.argv[1:]
j = json.load(open(path)); d = j["detail"]
trials = sum(j["end_to_end_seconds"])
print("%-4s %-12s %-3s %6s %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f" % (alg, dev.replace("--", ""), run, wall, j["elapsed_seconds"], j["load_seconds"],
      d.get("open_seconds", 0), d.get("compile_seconds", 0), j["prepare_seconds"], j["warm_up_seconds"], trials, float(wall) - j["elapsed_seconds"]))
PY
done; done; done
echo "done at $SECONDS s"
