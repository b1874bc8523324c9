#!/usr/bin/env bash
# session 18, issue 19, call 1 (as run): BC's direction-optimizing forward sweep and
# level bitmaps (new = 0207125's build, base = 7388e99, session 17's last), GAPBS
# b5e3e19 built here; ours from the same 4 sources (--sources 4 --seed 1) in base and
# new, interleaved, GAPBS from its own 4 (-i 4, as bench_cpu.sh), median of 3 trials;
# then alpha (CHATTY_BC_ALPHA) 0 / 5 / 15 / 40 on the small-world graphs.
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
  local g=$1 t=$2 line="bc $g t=$t"
  for x in base new; do
    $B/chatty-$x run bc $g.cgr --sources 4 --seed 1 -n 3 --json --engine cpu --threads $t > r.json 2>/dev/null && line="$line $x $(med r.json)"
  done
  OMP_NUM_THREADS=$t $GAPBS/bc -f $g.sg -n 3 -i 4 > gl.txt
  line="$line gapbs $(awk '/Trial Time:/ {print $3}' gl.txt | python3 -c 'import sys,statistics; print("%.5f" % statistics.median(float(x) for x in sys.stdin))')"
  echo "$line" | tee -a $OUT/bc-base-new-gapbs.txt
}
for round in 1 2; do
  for g in twitter web urand22 kron22 moscow roadNE; do row $g 16; done
  for g in twitter web kron22; do row $g 4; done
  for g in twitter web; do row $g 1; done
  echo "round $round done at $SECONDS s"
  [ $SECONDS -lt 330 ] || break
done
for a in 0 5 15 40; do
  for g in twitter urand22 kron22; do
    CHATTY_BC_ALPHA=$a $B/chatty-new run bc $g.cgr --sources 4 --seed 1 -n 3 --json --engine cpu --threads 16 > r.json 2>/dev/null
    echo "alpha $a $g t=16 $(med r.json)" | tee -a $OUT/bc-alpha.txt
  done
  [ $SECONDS -lt 520 ] || break
done
echo "all done at $SECONDS s"
