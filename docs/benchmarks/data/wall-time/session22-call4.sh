#!/usr/bin/env bash
# session 22, call 4 (as run): where the multi-GPU test's segfault (libcuda's own
# thread, in old and new builds alike) happens: the test with a line per engine
# (start / ran / dropped), three at once, one under gdb where gdb is installed.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B
xz -dc .device-data/bin/gpu-test-diag.xz > $B/diag; chmod +x $B/diag
export CHATTY_DATASETS=$(realpath .device-data/datasets)
which gdb compute-sanitizer cuda-gdb; nvidia-smi --query-gpu=driver_version --format=csv,noheader
for run in 1 2 3; do
  if [ $run = 1 ] && which gdb > /dev/null; then
    ( timeout 330 gdb -q -batch -ex "handle SIGPIPE nostop" -ex run -ex "thread apply all bt 12" --args $B/diag --test-threads 1 --nocapture multi_gpu_matches > $OUT/run$run.txt 2>&1; echo "run $run exit $? at $SECONDS s" ) &
  else
    ( timeout 330 $B/diag --test-threads 1 --nocapture multi_gpu_matches > $OUT/run$run.txt 2>&1; echo "run $run exit $? at $SECONDS s" ) &
  fi
done
wait
for run in 1 2 3; do echo "== $run"; grep -E "^DIAG|multi-GPU vs" $OUT/run$run.txt | tail -3; grep -E "test result|panicked|SIGSEGV" $OUT/run$run.txt | head -3; done
