#!/usr/bin/env bash
# session 20, call 8 (as run): after call 3, idle proxies look at the link (MPI) every
# 20 µs instead of continuously. `mpirun -np 2 chatty bench messaging` again, both
# processes on GPU 0, twice; then --mode gmpi across processes on moscow and rmat16
# (--verify, answers compared with one GPU's) for the per-level cost.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
C=$B/chatty
mpi() { mpirun --oversubscribe --bind-to none --timeout 300 -x NCCL_NVLS_ENABLE -np "$@"; }
for round in 1 2; do
  mpi 2 $C bench messaging --max-bytes 64M --rounds 200 --rows $OUT/across-rows-$round.jsonl > $OUT/across-$round.md 2> $B/across.err
  echo "across round $round: exit $? at $SECONDS s"
done
cat $OUT/across-1.md; grep -A3 Targets $OUT/across-2.md
$C convert .device-data/datasets/road/moscow-osm.gr.gz -o $W/moscow.cgr -q
$C generate rmat -s 16 -e 16 --weights 255 -o $W/rmat16.cgr -q
for g in moscow rmat16; do
  $C run bfs,sssp $W/$g.cgr --engine gpu --gpus 1 --source 0 --zero-based -n 2 -o $W/$g.one.txt > $B/one.log 2>&1
  timeout 200 bash -c "$(declare -f mpi); mpi 2 $C run bfs,sssp $W/$g.cgr --engine gpu --source 0 --zero-based -n 2 --verify --mode gmpi -o $W/$g.gmpi.txt" > $B/job.log 2>&1
  rc=$?; same=""
  for a in bfs sssp; do cmp -s $W/$g.one.$a.txt $W/$g.gmpi.$a.txt && same="$same $a=same" || same="$same $a=DIFF"; done
  echo "$g np2 --mode gmpi: exit $rc, PASS $(grep -c 'Verification:        PASS' $B/job.log) of 4,$same; $(grep Average $B/job.log | tr '\n' ' ')"
done | tee $OUT/rows.txt
