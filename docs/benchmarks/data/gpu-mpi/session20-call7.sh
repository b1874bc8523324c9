#!/usr/bin/env bash
# session 20, call 7 (as run): issue 21 item 4 for GMPI across processes: the watchdog
# firing and rank 1 killed mid-run, --mode bsp and --mode gmpi (scripts/gpu_mpi.sh faults).
B=/tmp/b; mkdir -p $B
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
CHATTY=$B/chatty DATASETS=.device-data/datasets OUT=$OUT timeout 500 scripts/gpu_mpi.sh faults 2>&1 | tee $OUT/faults.txt
