#!/usr/bin/env bash
# session 21, call 3 (as run): issue 25, the answer's host array made ready while the
# kernels run (pages faulted in on other cores), against the build before it, two
# rounds of scripts/bench_wall_time.sh on rmat25 (1 GPU and two parts on it); first the
# GPU tests of the one-GPU kernels, of four parts, and of the job calibration.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; mkdir -p $B/work
for f in chatty-mpi chatty-old gpu-test; do xz -dc .device-data/bin/$f.xz > $B/$f; chmod +x $B/$f; done
export CHATTY_CACHE_DIR=$B/cache
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 250 $B/gpu-test --test-threads 1 a_job_calibration gpu_matches_the_cpu_references four_parts > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
for round in 1 2; do
  CHATTY=$B/chatty-mpi CHATTY_OLD=$B/chatty-old OUT=$B/r$round WORK=$B/work TRIALS=5 SPECS="rmat25:pr rmat25:spmv rmat25:bfs" \
    bash scripts/bench_wall_time.sh 2>&1 | tail -14
  echo "round $round done at $SECONDS s"
done
tar czf $OUT/wall-rounds.tgz -C $B r1 r2
