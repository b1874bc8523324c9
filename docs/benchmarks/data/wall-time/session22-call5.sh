#!/usr/bin/env bash
# session 22, call 5 (as run): loading the kernels as machine code (CUBIN, new) against
# PTX the driver compiles (old, 0413cf0), with the driver's cache off and ours empty
# (cold) then filled (warm); then the GPU test binary of the new build, the multi-GPU
# test last, under cuda-gdb to catch the intermittent segfault of calls 1-3 with every
# thread's stack.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
for f in chatty-new chatty-old gpu-test; do xz -dc .device-data/bin/$f.xz > $B/$f; chmod +x $B/$f; done
export CHATTY_DATASETS=$(realpath .device-data/datasets)
$B/chatty-new generate rmat -s 20 -e 16 -o $B/work/r20.cgr -q
printf "%-4s %-5s %-12s %7s %8s %8s %8s\n" bin cache devices wall_s prep_s compile open_s
for b in old new; do for round in cold warm; do for dev in "--gpus 1" "--devices 0,0"; do
  [ $round = cold ] && rm -rf $B/kc-$b
  CUDA_CACHE_DISABLE=1 CHATTY_KERNEL_CACHE=$B/kc-$b /usr/bin/time -f %e -o $B/wall.txt $B/chatty-$b run pr $B/work/r20.cgr --engine gpu $dev -n 1 --json > $B/out.json 2> $B/err.txt || { echo "FAIL $b $round $dev"; tail -3 $B/err.txt; continue; }
  python3 - $b $round "$dev" "$(tail -1 $B/wall.txt)" $B/out.json <<'PY'
import json, sys
b, r, dev, wall, path = sys.argv[1:]
j = json.load(open(path)); d = j["detail"]
print("%-4s %-5s %-12s %7s %8.3f %8.3f %8s" % (b, r, dev.replace("--", ""), wall, j["prepare_seconds"], d["compile_seconds"], "%.3f" % d["open_seconds"] if "open_seconds" in d else "-"))
PY
done; done; done
echo "loading done at $SECONDS s"
timeout 150 $B/gpu-test --test-threads 1 --skip multi_gpu_matches > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
timeout 280 cuda-gdb -q -batch -ex "set pagination off" -ex run -ex "info threads" -ex "thread apply all bt 15" --args $B/gpu-test --test-threads 1 multi_gpu_matches > $OUT/multi-gdb.txt 2>&1
echo "multi under cuda-gdb exit $? at $SECONDS s"; grep -E "test result|SIGSEGV|exited" $OUT/multi-gdb.txt | head -5
