#!/usr/bin/env bash
# session 14, call 4: the GPU test binary of the final build (every kernel on every
# dataset and generated graph against the CPU references, in all three orders; the
# multi-GPU engine on parts of the one lent GPU; processes; faults).
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 480 $B/gpu-test --test-threads 1 2>&1 | tail -30
