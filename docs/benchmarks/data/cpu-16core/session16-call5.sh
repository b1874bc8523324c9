#!/usr/bin/env bash
# session 16, issue 19, call 5 (as run): BFS's top-down claim in a function of its own
# (new = d35b382) against a41e4af (base: the whole search in one region, the claim
# inlined), and GAPBS bfs from the same source; three rounds, median of 7 trials each.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs converter > /dev/null 2>&1
export CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets CHATTY_DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
G="twitter web moscow roadNE grid kron22"
for g in $G; do make_graph $g 2>> gen.log; done
echo "graphs made at $SECONDS s"
declare -A S BASE
for g in $G; do
  $CHATTY run bfs $g.cgr -n 1 --json --engine cpu > s.json 2>/dev/null
  S[$g]=$(python3 -c 'import json; d=json.load(open("s.json")); print(d["parameters"]["sources"][0])')
  BASE[$g]=$(python3 -c 'import json; d=json.load(open("s.json")); print(d["graph"]["id_base"])')
done
med() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%.5f" % statistics.median(d["trial_seconds"]))' "$1"; }
for round in 1 2 3; do
  for g in $G; do
    for t in 16 4 1; do
      [ $SECONDS -lt 180 ] || break 3
      line="bfs $g t=$t"
      for x in base new; do
        $B/chatty-$x run bfs $g.cgr -r ${S[$g]} -n 7 --json --engine cpu --threads $t > r.json 2>/dev/null && line="$line $x $(med r.json)"
      done
      OMP_NUM_THREADS=$t $GAPBS/bfs -f $g.sg -n 7 -r $((S[$g] - BASE[$g])) > gl.txt
      line="$line gapbs $(awk '/Trial Time:/ {print $3}' gl.txt | python3 -c 'import sys,statistics; print("%.5f" % statistics.median(float(x) for x in sys.stdin))')"
      echo "$line" | tee -a $OUT/bfs-base-new-gapbs.txt
    done
  done
done
echo "all done at $SECONDS s"
