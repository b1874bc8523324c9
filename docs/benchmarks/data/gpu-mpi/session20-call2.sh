#!/usr/bin/env bash
# session 20, call 2 (as run): GMPI across processes (issue 21, item 3's ping-pong) on
# the one lent H200: `mpirun -np 2 chatty bench messaging`, both processes on GPU 0,
# kernel-initiated through the proxies and MPI against host-initiated MPI with the
# same GPU buffers, 4 B to 64 MiB; then the one-process bench (two ranks on GPU 0 and
# a host rank) as before, for the messaging layer's own figures after the change.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; mkdir -p $B
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
C=$B/chatty
mpirun --oversubscribe --bind-to none --timeout 400 -x NCCL_NVLS_ENABLE -np 2 $C bench messaging --max-bytes 64M --rounds 200 \
  --rows $OUT/across-rows.jsonl > $OUT/across.md 2> $OUT/across.err
echo "across: exit $? at $SECONDS s"; cat $OUT/across.md; tail -3 $OUT/across.err
timeout 150 $C bench messaging --max-bytes 64M --rounds 500 --rows $OUT/one-process-rows.jsonl > $OUT/one-process.md 2> $OUT/one-process.err
echo "one process: exit $? at $SECONDS s"; cat $OUT/one-process.md
