#!/usr/bin/env bash
# session 23, call 1 (as run): the whole GPU test binary of f983352 (covers 3ae3313:
# 'sssp,pr' on one engine re-uploads with the in-edges), and beside it the multi-GPU
# test twice more, three processes on the one GPU, each with the crash debugger
# (cuda-gdb) attached on a SIGSEGV to print every thread's stack.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
export CHATTY_DATASETS=$(realpath .device-data/datasets)
export CHATTY_CRASH_DEBUGGER=$(command -v cuda-gdb || command -v gdb)
echo "debugger: $CHATTY_CRASH_DEBUGGER"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
( timeout 540 $B/gpu-test --test-threads 1 --nocapture > $OUT/full.txt 2>&1; echo "full exit $? at $SECONDS s" ) &
sleep 20
for run in mg1 mg2; do
  ( timeout 500 $B/gpu-test --test-threads 1 --nocapture multi_gpu_matches > $OUT/$run.txt 2>&1; echo "$run exit $? at $SECONDS s" ) &
done
wait
for run in full mg1 mg2; do
  echo "== $run"; grep -E "^test |test result|panicked|fault address" $OUT/$run.txt | head -30
  grep -E "multi-GPU vs" $OUT/$run.txt | tail -1
done
cd $OUT && tar -czf logs.tgz *.txt && rm -f *.txt
