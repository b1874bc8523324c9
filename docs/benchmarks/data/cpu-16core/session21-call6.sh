#!/usr/bin/env bash
# session 21, issue 19, call 6 (as run): the 14 rows of session 19's table below 1.0
# that had no cause beyond this host's noise (and BFS on ego-Twitter at 1 and 4
# threads), each run three rounds, ours and GAPBS interleaved (the order alternating by
# round), median of 3 trials each, to measure the noise band a row moves in. Ours:
# release build of badb8a7 (CPU kernels as in session 19's 5eea09c); GAPBS b5e3e19.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp cc bc converter > /dev/null 2>&1
export CHATTY=$B/chatty GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
for g in twitter moscow roadNE grid web; do make_graph $g 2>> gen.log; done
echo "graphs made at $SECONDS s"
med() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%.5f" % statistics.median(d["trial_seconds"]))' "$1"; }
src() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["parameters"]["sources"][0] - d["graph"]["id_base"])' "$1"; }
gmed() { awk '/Trial Time:/ {print $3}' "$1" | python3 -c 'import sys,statistics; print("%.5f" % statistics.median(float(x) for x in sys.stdin))'; }
one() { # round kernel graph threads
  local r=$1 k=$2 g=$3 t=$4 o p
  local ours_args=() theirs=() 
  case $k in
    bfs) ours_args=(bfs); theirs=(bfs -f $g.sg) ;;
    sssp) ours_args=(sssp --delta 2000); theirs=(sssp -f $g.wsg -d 2000) ;;
    wcc) ours_args=(wcc); theirs=(cc -f $g.sg) ;;
    bc) ours_args=(bc --sources 4); theirs=(bc -f $g.sg -i 4) ;;
  esac
  run_ours() { $CHATTY run ${ours_args[0]} $g.cgr "${ours_args[@]:1}" -n 3 --json --engine cpu --threads $t > o.json 2>/dev/null && o=$(med o.json); }
  run_theirs() {
    local extra=(); [[ $k == bfs || $k == sssp ]] && extra=(-r "$(src o.json)")
    OMP_NUM_THREADS=$t $GAPBS/${theirs[0]} "${theirs[@]:1}" -n 3 "${extra[@]}" > g.txt && p=$(gmed g.txt)
  }
  if (( r % 2 )); then run_ours; run_theirs; else $CHATTY run ${ours_args[0]} $g.cgr "${ours_args[@]:1}" -n 1 --json --engine cpu --threads $t > o.json 2>/dev/null; run_theirs; run_ours; fi
  echo "$k $g $t round $r ours $o gapbs $p ratio $(python3 -c "print('%.2f' % ($p / $o))")"
}
for r in 1 2 3; do
  for spec in "bfs twitter 1" "bfs twitter 4" "sssp moscow 1" "sssp moscow 16" "wcc roadNE 1" "wcc moscow 4" "wcc grid 16" "wcc twitter 1" \
              "bc roadNE 1" "bc roadNE 16" "bc moscow 1" "bc moscow 16" "bc web 4" "bc web 16"; do
    one $r $spec
  done
  echo "round $r done at $SECONDS s"
done | tee $OUT/noise-rows.txt
