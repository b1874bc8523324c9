#!/usr/bin/env bash
# session 22, call 1 (as run): where the multi-GPU engine's preparation goes (open,
# split, upload, finish, in-edges) against one GPU's, old (0413cf0) and new (the split
# by binary search), rmat24 with and without its transpose stored, wall time of the
# whole command beside it; then the whole GPU test binary.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
for f in chatty-new chatty-old gpu-test; do xz -dc .device-data/bin/$f.xz > $B/$f; chmod +x $B/$f; done
export CHATTY_KERNEL_CACHE=$B/kcache
$B/chatty-new generate rmat -s 24 -e 16 --weights 255 -o $B/work/r24.cgr -q
$B/chatty-new convert $B/work/r24.cgr -o $B/work/r24t.cgr --transpose -q
echo "graphs at $SECONDS s"
$B/chatty-new run pr $B/work/r24t.cgr --engine gpu --devices 0,0 -n 1 --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin)['detail']; print('warm-up: compile %.2f s' % d['compile_seconds'])"
CUDA_CACHE_DISABLE=1 $B/chatty-new run pr $B/work/r24t.cgr --engine gpu --devices 0,0 -n 1 --json 2>/dev/null | python3 -c "import json,sys; j=json.load(sys.stdin); d=j['detail']; print('no driver JIT cache: open %.3f s prepare %.3f s' % (d['open_seconds'], j['prepare_seconds']))"
printf "%-5s %-4s %-4s %-12s %7s %7s %7s %7s %7s %7s %7s %7s\n" graph alg bin devices wall_s prep_s in_edge open split upload finish e2e_ms
for g in r24t r24; do for alg in bfs pr; do for b in old new; do for dev in "--gpus 1" "--devices 0,0"; do
  /usr/bin/time -f "%e" -o $B/wall.txt $B/chatty-$b run $alg $B/work/$g.cgr --engine gpu $dev -n 2 --json --max-iters 10 --tolerance 0 -r 1 > $B/out.json 2>$B/err.txt || { echo "FAIL $g $alg $b $dev"; tail -3 $B/err.txt; continue; }
  python3 - "$g" "$alg" "$b" "$dev" "$(tail -1 $B/wall.txt)" $B/out.json <<'PY'
import json, sys
g, alg, b, dev, wall, path = sys.argv[1:]
j = json.load(open(path)); d = j["detail"]
f = lambda k: "%7.3f" % d[k] if k in d else "%7s" % "-"
print("%-5s %-4s %-4s %-12s %7s %7.3f %s %s %s %s %s %7.1f" % (g, alg, b, dev.replace("--", ""), wall, j["prepare_seconds"],
      f("in_edges_seconds"), f("open_seconds"), f("split_seconds"), f("upload_seconds"), f("finish_seconds"), 1e3 * j["end_to_end_seconds"][-1]))
PY
done; done; done; done
echo "bench done at $SECONDS s"
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 330 $B/gpu-test --test-threads 1 > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
