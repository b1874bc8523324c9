#!/usr/bin/env bash
# session 19, issue 19, call 5 (as run): BC's deep-search test before the probing BFS
# (new = this session's last build; base = e8f3299), on moscow and road-NE, ours from the
# same sources in both builds (--seed 1), GAPBS from its own (-i), median of 3 trials,
# two rounds.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bc converter > /dev/null 2>&1
export CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
for g in moscow roadNE; do make_graph $g 2>> gen.log; done
echo "graphs made at $SECONDS s"
med() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%.5f" % statistics.median(d["trial_seconds"]))' "$1"; }
gmed() { awk '/Trial Time:/ {print $3}' "$1" | python3 -c 'import sys,statistics; print("%.5f" % statistics.median(float(x) for x in sys.stdin))'; }
for round in 1 2; do for g in moscow roadNE; do for ts in "1 4" "4 4" "16 4" "16 64"; do
  set -- $ts; t=$1 k=$2
  line="bc $g t=$t sources=$k round $round"
  for x in base new; do
    $B/chatty-$x run bc $g.cgr --sources $k --seed 1 -n 3 --json --engine cpu --threads $t > r.json 2>/dev/null && line="$line $x $(med r.json)"
  done
  OMP_NUM_THREADS=$t $GAPBS/bc -f $g.sg -n 3 -i $k > gl.txt && line="$line gapbs $(gmed gl.txt)"
  echo "$line"
done; done; done | tee $OUT/bc-base-new-gapbs.txt
echo "done at $SECONDS s"
