#!/usr/bin/env bash
# session 21, call 5 (as run): the upload after the parallel top-k and one-pass bins
# (new) against the build before (old), rmat25 bfs and spmv on one GPU and as two parts,
# two rounds; then the whole GPU test binary.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; mkdir -p $B/work
for f in chatty-mpi chatty-old gpu-test; do xz -dc .device-data/bin/$f.xz > $B/$f; chmod +x $B/$f; done
export CHATTY_CACHE_DIR=$B/cache
for round in 1 2; do
  CHATTY=$B/chatty-mpi CHATTY_OLD=$B/chatty-old OUT=$B/r$round WORK=$B/work TRIALS=3 SPECS="rmat25:spmv rmat25:bfs" \
    bash scripts/bench_wall_time.sh 2>&1 | tail -9
  cp $B/r$round/wall.csv $OUT/round$round.csv
done
echo "bench done at $SECONDS s"
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 330 $B/gpu-test --test-threads 1 > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
