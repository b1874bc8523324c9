#!/usr/bin/env bash
# session 22, call 3 (as run): which change brought call 1's and 2's segfault: the
# multi-GPU test alone, four at once on the one GPU: the test binaries of 3277098
# (old), 0413cf0 (mid) and today's split change (new, twice).
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B
for f in gpu-test gpu-test-old gpu-test-mid; do xz -dc .device-data/bin/$f.xz > $B/$f; chmod +x $B/$f; done
export CHATTY_DATASETS=$(realpath .device-data/datasets)
for run in old mid new new2; do
  bin=$B/gpu-test-$run; [ $run = new ] || [ $run = new2 ] && bin=$B/gpu-test
  ( timeout 400 $bin --test-threads 1 --nocapture multi_gpu_matches > $OUT/$run.txt 2>&1; echo "$run exit $? at $SECONDS s" ) &
done
wait
for run in old mid new new2; do echo "== $run"; grep -E "multi-GPU vs" $OUT/$run.txt | tail -1; grep -E "test result|panicked|libcuda" $OUT/$run.txt | head -3; done
