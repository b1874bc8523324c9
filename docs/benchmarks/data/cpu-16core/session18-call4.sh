#!/usr/bin/env bash
# session 18, issue 19, call 4 (as run): BC's choice between one source per thread and
# the level sweep (new = 02fef71's build: many sources run one per thread only where
# the sweep would not go bottom-up; base = 6d18adb's, call 3's new), GAPBS b5e3e19
# built here. Ours from the same sources (--sources K --seed 1) in base and new, GAPBS
# from its own K (-i K), one trial each (three on the small graphs).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bc converter > /dev/null 2>&1
export CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets CHATTY_DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
G="twitter web urand22 kron22"
for g in $G; do make_graph $g 2>> gen.log; done
echo "graphs made at $SECONDS s"
med() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%.5f" % statistics.median(d["trial_seconds"]))' "$1"; }
row() { # graph threads sources trials
  local g=$1 t=$2 k=$3 n=$4
  local line="bc $g t=$t sources=$k"
  for x in base new; do
    $B/chatty-$x run bc $g.cgr --sources $k --seed 1 -n $n --json --engine cpu --threads $t > r.json 2>/dev/null && line="$line $x $(med r.json)"
  done
  OMP_NUM_THREADS=$t $GAPBS/bc -f $g.sg -n $n -i $k > gl.txt
  line="$line gapbs $(awk '/Trial Time:/ {print $3}' gl.txt | python3 -c 'import sys,statistics; print("%.5f" % statistics.median(float(x) for x in sys.stdin))')"
  echo "$line" | tee -a $OUT/bc-choice-base-new-gapbs.txt
}
for g in twitter web; do row $g 1 4 3; row $g 4 16 3; row $g 16 64 3; done
row kron22 16 64 1; row kron22 1 4 1; row kron22 4 16 1
echo "kron22 done at $SECONDS s"
[ $SECONDS -lt 380 ] && row urand22 16 64 1
[ $SECONDS -lt 440 ] && row urand22 1 4 1
echo "all done at $SECONDS s"
