#!/usr/bin/env bash
# session 19, call 2 (as run): sum_in's chunks cut by edges too (new = 5eea09c's build;
# base = e8f3299). PageRank at a fixed 10 iterations (--tolerance 0 --max-iters 10;
# GAPBS pr_spmv -i 10 -t 0) on the table's graphs and on kron22 stored in degree order
# (kron22-deg = chatty convert --reorder degree), base and new interleaved, two rounds,
# median of 3 trials; then BFS, WCC and BC on kron22 in both orders (new; GAPBS on the
# own order), 16 threads.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 pr_spmv bfs cc bc converter > /dev/null 2>&1
export CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
for g in kron22 moscow twitter web; do make_graph $g 2>> gen.log; done
$CHATTY convert kron22.cgr -o kron22-deg.cgr --reorder degree 2>&1 | head -1
echo "graphs made at $SECONDS s"
med() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%.5f" % statistics.median(d["trial_seconds"]))' "$1"; }
gmed() { awk '/Trial Time:/ {print $3}' "$1" | python3 -c 'import sys,statistics; print("%.5f" % statistics.median(float(x) for x in sys.stdin))'; }
for round in 1 2; do for t in 16 4; do for g in kron22 kron22-deg moscow twitter web; do
  line="pr $g t=$t round $round"
  for x in base new; do
    $B/chatty-$x run pr $g.cgr --tolerance 0 --max-iters 10 -n 3 --json --engine cpu --threads $t > r.json 2>/dev/null && line="$line $x $(med r.json)"
  done
  [ -f $g.sg ] && OMP_NUM_THREADS=$t $GAPBS/pr_spmv -f $g.sg -n 3 -i 10 -t 0 > gl.txt && line="$line gapbs $(gmed gl.txt)"
  echo "$line"
done; done; done | tee $OUT/pr-base-new-gapbs.txt
echo "pr done at $SECONDS s"
for a in bfs wcc bc; do for g in kron22 kron22-deg; do
  f=(); case $a in bfs) f=(--seed 1);; bc) f=(--sources 4 --seed 1);; esac
  line="$a $g t=16"
  $B/chatty-new run $a $g.cgr "${f[@]}" -n 3 --json --engine cpu --threads 16 > r.json 2>/dev/null && line="$line new $(med r.json)"
  if [ $g = kron22 ]; then
    case $a in bfs) OMP_NUM_THREADS=16 $GAPBS/bfs -f $g.sg -n 3 > gl.txt;; wcc) OMP_NUM_THREADS=16 $GAPBS/cc -f $g.sg -n 3 > gl.txt;; bc) OMP_NUM_THREADS=16 $GAPBS/bc -f $g.sg -n 3 -i 4 > gl.txt;; esac
    line="$line gapbs $(gmed gl.txt)"
  fi
  echo "$line"
done; done | tee $OUT/orders-new-gapbs.txt
echo "done at $SECONDS s"
