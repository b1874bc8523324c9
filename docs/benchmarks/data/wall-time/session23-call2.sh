#!/usr/bin/env bash
# session 23, call 2 (as run): call 1 again after the primary contexts are held for the
# process's life (call 1 caught the crash: libcuda's event thread while a Crew's drop
# released the last retain): the whole binary and the multi-GPU test three more times,
# four processes on the one GPU, the crash debugger (cuda-gdb) attached on a SIGSEGV.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
export CHATTY_DATASETS=$(realpath .device-data/datasets)
export CHATTY_CRASH_DEBUGGER=$(command -v cuda-gdb || command -v gdb)
echo "debugger: $CHATTY_CRASH_DEBUGGER"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
( timeout 520 $B/gpu-test --test-threads 1 --nocapture > $OUT/full.txt 2>&1; echo "full exit $? at $SECONDS s" ) &
sleep 20
for run in mg1 mg2 mg3; do
  ( timeout 480 $B/gpu-test --test-threads 1 --nocapture multi_gpu_matches > $OUT/$run.txt 2>&1; echo "$run exit $? at $SECONDS s" ) &
done
wait
# 3ae3313 from the command line: sssp (out-edges) then pr (in-edges, built by the
# harness) on one GPU engine, each verified against the CPU reference.
xz -dc .device-data/bin/chatty-new.xz > $B/chatty; chmod +x $B/chatty
$B/chatty run sssp,pr .device-data/datasets/social/cit-HepPh.el.gz --engine gpu --gpus 1 --verify -n 2 2>&1 | grep -iE "verif|error" | head -4
echo "sssp,pr exit ${PIPESTATUS[0]}"
for run in full mg1 mg2 mg3; do
  echo "== $run"; grep -E "^test |test result|panicked|fault address" $OUT/$run.txt | head -30
  grep -E "multi-GPU vs" $OUT/$run.txt | tail -1
done
cd $OUT && tar -czf logs.tgz *.txt && rm -f *.txt
