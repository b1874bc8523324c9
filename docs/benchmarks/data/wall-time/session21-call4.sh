#!/usr/bin/env bash
# session 21, call 4 (as run): where an upload's time goes (the --json breakdown: the
# edges' allocations and copies, the host's copies into the pinned staging), rmat25 on
# one GPU and as two parts; a single-thread host copy for scale; and whether Open MPI's
# CMA single copy works on this host (the job calibration's mpi-host row).
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; mkdir -p $B/work
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
export CHATTY_CACHE_DIR=$B/cache
CHATTY=$B/chatty OUT=$B/r WORK=$B/work TRIALS=3 SPECS="rmat25:spmv rmat25:bfs" bash scripts/bench_wall_time.sh 2>&1 | tail -6
python3 -c "
import numpy as np, time
a = np.ones(1 << 27); b = np.empty_like(a); np.copyto(b, a)
t = time.perf_counter(); np.copyto(b, a); s = time.perf_counter() - t
print(f'numpy copy, one thread: {a.nbytes / s / 1e9:.1f} GB/s')"
grep -E "MemTotal|Hugepagesize" /proc/meminfo; lscpu | grep -E "Model name|^CPU\(s\)|NUMA node\(s\)|L3"
for mech in none cma; do
  echo "== vader single copy: $mech"
  timeout 60 mpirun --bind-to none --timeout 50 -x OMPI_MCA_btl_vader_single_copy_mechanism=$mech -x CHATTY_CACHE_DIR -np 2 $B/chatty topo --calibrate --recalibrate --max-bytes 64M 2>&1 | grep -E "^ +[0-9]+ |mpi us|rror" | head -9
done
cp $B/r/wall.csv $OUT/
