#!/usr/bin/env bash
# session 21, call 2 (as run): where the ~300 µs of a small exchange between two
# processes goes. The job calibration (mpi: GPU copies + all-gather; mpi-host: the
# all-gather alone) under several Open MPI settings; the GPU test of the calibration.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
C=$B/chatty
export CHATTY_CACHE_DIR=$W/cache
timeout 100 $B/gpu-test --test-threads 1 a_job_calibration > $OUT/tests.txt 2>&1
echo "tests exit $?"; grep -E "^test |test result" $OUT/tests.txt
row() { # label, mpirun options
  echo "== $1"
  timeout 120 mpirun $2 --timeout 100 -x NCCL_NVLS_ENABLE -x CHATTY_CACHE_DIR -np 2 $C topo --calibrate --recalibrate --max-bytes 4M 2>&1 | grep -E "^ +[0-9]+ |mpi us|error" | head -9
}
row "as call 1: --oversubscribe --bind-to none" "--oversubscribe --bind-to none"
row "no oversubscribe, --bind-to none" "--bind-to none"
row "bind to core" "--bind-to core"
row "yield_when_idle 0" "--oversubscribe --bind-to none --mca mpi_yield_when_idle 0"
row "btl self,tcp" "--bind-to none --mca btl self,tcp"
row "pml ob1, btl self,vader" "--bind-to none --mca pml ob1 --mca btl self,vader"
ompi_info --param btl vader --level 9 2>/dev/null | grep -E "single_copy|polling" | head -4
