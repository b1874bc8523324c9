#!/usr/bin/env bash
# session 20, call 3 (as run): after call 2, the proxies copy messages between a GPU
# and pageable host memory through pinned staging. Again `mpirun -np 2 chatty bench
# messaging` (both processes on GPU 0), twice; --mode gmpi across processes on rmat20
# (messages of megabytes: the staged path) and rmat16, --verify, answers compared with
# one GPU's; the GPU test binary's messaging and several-processes tests.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
C=$B/chatty
mpi() { mpirun --oversubscribe --bind-to none --timeout 300 -x NCCL_NVLS_ENABLE -np "$@"; }
for round in 1 2; do
  mpi 2 $C bench messaging --max-bytes 64M --rounds 200 --rows $OUT/across-rows-$round.jsonl > $OUT/across-$round.md 2> $B/across.err
  echo "across round $round: exit $? at $SECONDS s"; tail -3 $B/across.err
done
cat $OUT/across-1.md; grep -A3 Targets $OUT/across-2.md
$C generate rmat -s 20 -e 16 --weights 255 -o $W/rmat20.cgr -q
$C generate rmat -s 16 -e 16 --weights 255 -o $W/rmat16.cgr -q
for g in rmat20 rmat16; do
  $C run bfs,sssp $W/$g.cgr --engine gpu --gpus 1 --source 0 --zero-based -n 2 -o $W/$g.one.txt > $B/one.log 2>&1
  echo "$g one GPU: $(grep Average $B/one.log | tr '\n' ' ')"
  timeout 200 bash -c "$(declare -f mpi); mpi 2 $C run bfs,sssp $W/$g.cgr --engine gpu --source 0 --zero-based -n 2 --verify --mode gmpi -o $W/$g.gmpi.txt" > $B/job.log 2>&1
  rc=$?; same=""
  for a in bfs sssp; do cmp -s $W/$g.one.$a.txt $W/$g.gmpi.$a.txt && same="$same $a=same" || same="$same $a=DIFF"; done
  echo "$g np2 --mode gmpi: exit $rc, PASS $(grep -c 'Verification:        PASS' $B/job.log) of 4,$same; $(grep Average $B/job.log | tr '\n' ' ')"
  [ $rc = 0 ] || grep -iE 'error|panick' $B/job.log | head -3
done
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 200 $B/gpu-test --test-threads 1 device_messaging parts_in_several > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
