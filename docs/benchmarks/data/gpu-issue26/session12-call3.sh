#!/usr/bin/env bash
# session 12, issue 26, third call: BLEST (delbek/blest 9be20d9, fetched for comparison
# only, in .device-data/blest, patched here beforehand by blest_local_input.py to read
# <dir>/kron22.mtx instead of downloading from SuiteSparse) beside ours on
# the same kron22 (scripts/gapbs_graphs.sh's: deduplicated, no self-loops), same sources.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; W=$B/work; mkdir -p $W; C=$B/chatty-new
[ -x $C ] || { xz -dc .device-data/bin/chatty-new.xz > $C; chmod +x $C; }
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1); echo "nvcc: $NVCC"
( cd .device-data/blest && $NVCC --version | tail -2 && time $NVCC -std=c++20 -arch=sm_90 -O3 -Xcompiler -fopenmp -I. -IDataStructures -IBFS -ICC -IMBFS -IGorder \
    main.cu Gorder/Graph.cpp Gorder/Util.cpp Gorder/UnitHeap.cpp -lcuda -lgomp -o $B/blest ) > $OUT/blest-build.txt 2>&1 &
if [ ! -f $W/kron22.cgr ]; then
  $C generate rmat -s 22 -e 16 --undirected --weights 255 -o $W/raw.cgr -q && $C convert $W/raw.cgr -o $W/kron22.cgr --dedup --drop-self-loops -q && rm $W/raw.cgr
fi
echo "kron22 at $SECONDS s"; time $C convert $W/kron22.cgr -o $W/kron22.mtx -q; head -c 300 $W/kron22.mtx | head -3
echo "mtx at $SECONDS s"
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "kernel %.3f ms (min %.3f) levels %s reached %s %s reorder %.3f s" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d["result"].get("reached"), d.get("verification"), d["detail"].get("reorder_seconds", 0)))' $B/r.json "$1"; }
for s in 2894007 1; do for f in "" "--reorder degree"; do
  $C run bfs $W/kron22.cgr --engine gpu --gpus 1 -r $s -n 10 $f --json > $B/r.json 2>$B/r.err && row "ours $s ${f:-natural}" || tail -2 $B/r.err
done; done | tee $OUT/ours.txt
wait; tail -3 $OUT/blest-build.txt; echo "blest built at $SECONDS s"
printf '2894007\n2894007\n2894007\n2894007\n2894007\n1\n1\n1\n1\n1\n' > $W/kron22.txt
( cd $W && time timeout $((235 - SECONDS)) $B/blest -d $W/ -g kron22 -j 1 -w 65536 ) > $OUT/blest-run.txt 2>&1
grep -v "^Source" $OUT/blest-run.txt | tail -25; grep "^Source" $OUT/blest-run.txt
echo "done at $SECONDS s"
