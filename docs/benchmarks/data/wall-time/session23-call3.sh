#!/usr/bin/env bash
# session 23, call 3 (as run): call 2's four processes shared the one GPU too slowly to
# finish (none crashed); here the whole GPU test binary alone, then the multi-GPU test
# alone again, the crash debugger attached as before.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
export CHATTY_DATASETS=$(realpath .device-data/datasets)
export CHATTY_CRASH_DEBUGGER=$(command -v cuda-gdb || command -v gdb)
timeout 320 $B/gpu-test --test-threads 1 --nocapture > $OUT/full.txt 2>&1; echo "full exit $? at $SECONDS s"
timeout $((470 - SECONDS)) $B/gpu-test --test-threads 1 --nocapture multi_gpu_matches > $OUT/mg.txt 2>&1; echo "mg exit $? at $SECONDS s"
for run in full mg; do
  echo "== $run"; grep -E "^test |test result|panicked|fault address" $OUT/$run.txt | head -30
  grep -E "multi-GPU vs" $OUT/$run.txt | tail -1
done
cd $OUT && tar -czf logs.tgz *.txt && rm -f *.txt
