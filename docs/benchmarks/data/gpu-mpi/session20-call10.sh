#!/usr/bin/env bash
# session 20, call 10 (as run): after the review (one copy-and-wait, the staging taking
# its stream alone): the GPU tests of messaging, of parts in several processes and of
# BC on several GPUs; a run whose upload and download take the staged path (rmat20,
# --verify); the ping-pong across processes up to 16 MiB (the proxies' staged copies).
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
C=$B/chatty
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 150 $B/gpu-test --test-threads 1 device_messaging parts_in_several bc_splits > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
$C generate rmat -s 20 -e 16 --weights 255 -o $W/rmat20.cgr -q
timeout 60 $C run bfs,pr $W/rmat20.cgr --engine gpu -n 2 --verify 2>&1 | grep -E "Verification|Average" | sort | uniq -c
mpirun --oversubscribe --bind-to none --timeout 120 -x NCCL_NVLS_ENABLE -np 2 $C bench messaging --max-bytes 16M --rounds 50 2>/dev/null | tail -8
