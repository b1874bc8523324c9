#!/usr/bin/env bash
# session 21, call 1 (as run): issue 21 item 1, the link between processes calibrated.
# GPU tests of the job calibration and of parts in several processes; `mpirun -np 2
# chatty topo --calibrate` (measured, then cached); `--engine gpu` across 2 processes
# with --comm auto (one GPU: NCCL refused, MPI, said why) and --comm nccl (refused).
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
C=$B/chatty
export CHATTY_CACHE_DIR=$W/cache
M="mpirun --oversubscribe --bind-to none --timeout 200 -x NCCL_NVLS_ENABLE -x CHATTY_CACHE_DIR -np 2"
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 200 $B/gpu-test --test-threads 1 a_job_calibration parts_in_several > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(time $M $C topo --calibrate --max-bytes 64M) > $OUT/topo-1.txt 2>&1; echo "topo exit $?"; cat $OUT/topo-1.txt
(time $M $C topo --calibrate --max-bytes 64M) 2>&1 | grep -E "cached|real"
$C generate rmat -s 20 -e 16 --weights 255 -o $W/rmat20.cgr -q
$M $C run bfs,sssp,pr,wcc,spmv $W/rmat20.cgr --engine gpu -n 2 --verify > $OUT/run-auto.txt 2>&1; echo "run auto exit $?"
grep -E "note|Verification|nccl|transport" $OUT/run-auto.txt | sort | uniq -c
$M $C run bfs $W/rmat20.cgr --engine gpu --comm nccl 2>&1 | grep -vE "^\[|mpi-abort|orte_base" | head -4
ls $W/cache
