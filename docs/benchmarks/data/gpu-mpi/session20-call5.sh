#!/usr/bin/env bash
# session 20, call 5 (as run): the defaults as they landed (--mode auto = bsp, --reorder
# auto = bfs on road-like graphs), --verify, on two parts of the one lent H200 and on
# two processes sharing it; then the whole GPU test binary.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
C=$B/chatty
$C convert .device-data/datasets/road/moscow-osm.gr.gz -o $W/moscow.cgr -q
$C convert .device-data/datasets/road/USA-road-NE.pace.gr.gz -o $W/roadNE.cgr -q
$C generate grid --width 1024 --height 1024 --weights 100 -o $W/grid.cgr -q
$C generate rmat -s 20 -e 16 --weights 255 -o $W/rmat20.cgr -q
{
for g in moscow roadNE grid rmat20; do
  timeout 120 $C run bfs,sssp,pr,wcc $W/$g.cgr --engine gpu --devices 0,0 -r 1 -n 3 --verify > $B/pair.log 2>&1
  echo "$g parts 0,0 defaults: exit $?, PASS $(grep -c 'Verification:        PASS' $B/pair.log) of 12; $(grep -E 'auto' $B/pair.log | sort -u | tr '\n' ' ')"
  echo "  $(grep -E '^== |Average' $B/pair.log | tr '\n' ' ')"
  timeout 200 mpirun --oversubscribe --bind-to none --timeout 180 -x NCCL_NVLS_ENABLE -np 2 $C run bfs,sssp,pr,wcc $W/$g.cgr --engine gpu -r 1 -n 2 --verify > $B/job.log 2>&1
  echo "$g np2 defaults: exit $?, PASS $(grep -c 'Verification:        PASS' $B/job.log) of 8; $(grep -E 'auto' $B/job.log | sort -u | tr '\n' ' ')"
done
} 2>&1 | tee $OUT/rows.txt
echo "runs done at $SECONDS s"
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 420 $B/gpu-test --test-threads 1 > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
