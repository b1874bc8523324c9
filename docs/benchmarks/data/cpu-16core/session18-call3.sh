#!/usr/bin/env bash
# session 18, issue 19, call 3 (as run): BC with level bitmaps written whole from the
# depths, no atomic bit sets, small levels tested by depth, α 6 (new = 6d18adb's build;
# base = 7388e99, session 17's last), GAPBS b5e3e19 built here. Ours from
# the same 4 sources (--sources 4 --seed 1) in base and new, GAPBS from its own 4 (-i 4),
# median of 3 trials; then the 1-thread rows of urand22 and kron22 (new and GAPBS, 1 trial).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bc converter > /dev/null 2>&1
export CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets CHATTY_DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
G="twitter web moscow roadNE urand22 kron22"
for g in $G; do make_graph $g 2>> gen.log; done
echo "graphs made at $SECONDS s"
med() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%.5f" % statistics.median(d["trial_seconds"]))' "$1"; }
row() { # graph threads
  local g=$1 t=$2
  local line="bc $g t=$t"
  for x in base new; do
    $B/chatty-$x run bc $g.cgr --sources 4 --seed 1 -n 3 --json --engine cpu --threads $t > r.json 2>/dev/null && line="$line $x $(med r.json)"
  done
  OMP_NUM_THREADS=$t $GAPBS/bc -f $g.sg -n 3 -i 4 > gl.txt
  line="$line gapbs $(awk '/Trial Time:/ {print $3}' gl.txt | python3 -c 'import sys,statistics; print("%.5f" % statistics.median(float(x) for x in sys.stdin))')"
  echo "$line" | tee -a $OUT/bc-base-new-gapbs.txt
}
row1() { # graph: one trial each, new and GAPBS, one thread
  local g=$1 line="bc $g t=1"
  $B/chatty-new run bc $g.cgr --sources 4 --seed 1 -n 1 --json --engine cpu --threads 1 > r.json 2>/dev/null && line="$line new $(med r.json)"
  OMP_NUM_THREADS=1 $GAPBS/bc -f $g.sg -n 1 -i 4 > gl.txt
  echo "$line gapbs $(awk '/Trial Time:/ {print $3}' gl.txt)" | tee -a $OUT/bc-new-gapbs-1thread.txt
}
for round in 1 2; do
  for g in twitter web urand22 kron22 moscow roadNE; do row $g 16; done
  for g in twitter web urand22 kron22 moscow roadNE; do row $g 4; done
  for g in twitter web moscow roadNE; do row $g 1; done
  echo "round $round done at $SECONDS s"
  [ $SECONDS -lt 330 ] || break
done
for g in urand22 kron22; do row1 $g; [ $SECONDS -lt 500 ] || break; done
echo "all done at $SECONDS s"
