#!/usr/bin/env bash
# session 17, issue 19, call 3 (as run): base = d35b382 (session 16's last build), new
# = 21aceda (freed memory kept for reuse, per-trial arrays cleared by all threads,
# BFS's queue in the depth pass, SSSP one barrier a round, BC's resets in one pass),
# GAPBS b5e3e19 built here; each row from the same source for all three, base and new
# interleaved, three rounds, median of 7 trials (bc: 4 sources, 3 trials).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1
export CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets CHATTY_DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
G="twitter web moscow grid kron22 urand22"
for g in $G; do make_graph $g 2>> gen.log; done
echo "graphs made at $SECONDS s"
declare -A S BASE
for g in $G; do
  $CHATTY run bfs $g.cgr -n 1 --json --engine cpu > s.json 2>/dev/null
  S[$g]=$(python3 -c 'import json; d=json.load(open("s.json")); print(d["parameters"]["sources"][0])')
  BASE[$g]=$(python3 -c 'import json; d=json.load(open("s.json")); print(d["graph"]["id_base"])')
done
med() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%.5f" % statistics.median(d["trial_seconds"]))' "$1"; }
gmed() { awk '/Trial Time:/ {print $3}' gl.txt | python3 -c 'import sys,statistics; print("%.5f" % statistics.median(float(x) for x in sys.stdin))'; }
row() { # kernel graph threads
  local k=$1 g=$2 t=$3 s=${S[$2]} ours gap n=7 f=$2.sg
  local d=2; case $g in moscow|grid) d=2000 ;; esac
  case $k in
    bfs) ours="-r $s"; gap="-r $((s - BASE[$g]))" ;;
    sssp) ours="-r $s --delta $d"; gap="-r $((s - BASE[$g])) -d $d"; f=$g.wsg ;;
    pr) ours="--tolerance 1e-4 --max-iters 1000"; gap="-t 1e-4 -i 1000" ;;
    wcc) ours=""; gap="" ;;
    bc) ours="--sources 4"; gap="-i 4"; n=3 ;;
  esac
  local line="$k $g t=$t"
  for x in base new; do
    $B/chatty-$x run $k $g.cgr $ours -n $n --json --engine cpu --threads $t > r.json 2>/dev/null && line="$line $x $(med r.json)"
  done
  local prog=$k; case $k in pr) prog=pr_spmv ;; wcc) prog=cc ;; esac
  OMP_NUM_THREADS=$t $GAPBS/$prog -f $f -n $n $gap > gl.txt
  echo "$line gapbs $(gmed)" | tee -a $OUT/base-new-gapbs.txt
}
for round in 1 2 3; do
  for g in twitter web kron22 urand22; do row bfs $g 16; done
  for g in moscow grid; do row sssp $g 16; done
  for g in twitter web moscow kron22; do row bc $g 16; done
  row wcc kron22 16
  row bfs twitter 1; row bfs kron22 1
  echo "round $round done at $SECONDS s"
  [ $SECONDS -lt 300 ] || break
done
echo "all done at $SECONDS s"
