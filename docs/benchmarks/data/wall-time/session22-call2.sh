#!/usr/bin/env bash
# session 22, call 2 (as run): call 1's segfault (inside libcuda, in
# multi_gpu_matches_the_cpu_references): the new test binary with its progress shown;
# if it crashes again, the test binary of 3277098 (before 0413cf0's review) the same.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B
for f in gpu-test gpu-test-old; do xz -dc .device-data/bin/$f.xz > $B/$f; chmod +x $B/$f; done
export CHATTY_DATASETS=$(realpath .device-data/datasets)
RUST_BACKTRACE=1 timeout 250 $B/gpu-test --test-threads 1 --nocapture multi_gpu_matches > $OUT/new.txt 2>&1
rc=$?; echo "new exit $rc at $SECONDS s"; grep -E "multi-GPU vs|test result|panicked" $OUT/new.txt | tail -4; tail -5 $OUT/new.txt
[ $rc = 0 ] && exit 0
RUST_BACKTRACE=1 timeout 250 $B/gpu-test-old --test-threads 1 --nocapture multi_gpu_matches > $OUT/old.txt 2>&1
echo "old exit $? at $SECONDS s"; grep -E "multi-GPU vs|test result|panicked" $OUT/old.txt | tail -4; tail -5 $OUT/old.txt
