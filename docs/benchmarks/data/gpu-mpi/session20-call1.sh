#!/usr/bin/env bash
# session 20, call 1 (as run): --mode gmpi across processes (issue 21, item 2) on the
# one lent H200: two processes share GPU 0 (time-sliced), bfs and sssp with --verify
# and their answers byte-compared with one GPU's; the same runs with --mode bsp for
# the time per level; single-process gmpi on two parts of the GPU (--devices 0,0);
# then the GPU test binary's messaging and multi-GPU tests.
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
C=$B/chatty
mpi() { mpirun --oversubscribe --bind-to none --timeout 120 -x NCCL_NVLS_ENABLE -np "$@"; }
ompi_info | grep -i "thread support"
$C generate rmat -s 16 -e 16 --weights 255 -o $W/rmat16.cgr -q
$C generate rmat -s 16 -e 8 --undirected --weights 100 -o $W/rmat16u.cgr -q
$C generate urand -s 15 -e 8 -o $W/urand15.cgr -q
$C generate grid --width 300 --height 200 -o $W/grid.cgr -q
$C convert .device-data/datasets/road/moscow-osm.gr.gz -o $W/moscow.cgr -q
common=(--source 0 --zero-based -n 2)
{
for g in rmat16 rmat16u urand15 grid moscow; do
  $C run bfs,sssp $W/$g.cgr --engine gpu --gpus 1 "${common[@]}" -o $W/$g.one.txt > $B/one.log 2>&1 || echo "$g one GPU FAILED: $(tail -2 $B/one.log)"
  echo "$g one GPU: $(grep -E 'Average' $B/one.log | tr '\n' ' ')"
  for setup in "gmpi" "gmpi --partition bfs" "bsp" "bsp --partition bfs"; do
    tag=$(echo $setup | tr ' ' '_')
    t0=$(date +%s%N)
    timeout 150 bash -c "$(declare -f mpi); mpi 2 $C run bfs,sssp $W/$g.cgr --engine gpu ${common[*]} --verify -o $W/$g.$tag.txt --mode $setup" > $B/job.log 2>&1
    rc=$?
    same=""
    for a in bfs sssp; do cmp -s $W/$g.one.$a.txt $W/$g.$tag.$a.txt && same="$same $a=same" || same="$same $a=DIFF"; done
    echo "$g np2 --mode $setup: exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms wall, PASS $(grep -c 'Verification:        PASS' $B/job.log) of 4,$same; $(grep -E 'Average' $B/job.log | sort -u | tr '\n' ' ')"
    [ $rc = 0 ] || { grep -iE 'error|panick' $B/job.log | head -3; cp $B/job.log $OUT/fail-$g-$tag.log; }
  done
  timeout 100 $C run bfs,sssp $W/$g.cgr --engine gpu --devices 0,0 --mode gmpi --verify "${common[@]}" > $B/pair.log 2>&1
  echo "$g one process, parts 0,0 --mode gmpi: exit $?, PASS $(grep -c "Verification:        PASS" $B/pair.log) of 4; $(grep -E 'Average' $B/pair.log | tr '\n' ' ')"
done
} 2>&1 | tee $OUT/rows.txt
echo "runs done at $SECONDS s"
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 330 $B/gpu-test --test-threads 1 device_messaging four_parts parts_in_several multi_gpu_matches > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
