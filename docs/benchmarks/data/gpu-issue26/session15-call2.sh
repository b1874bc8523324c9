#!/usr/bin/env bash
# session 15, call 2: which BC sweeps pay for the bitmaps. CHATTY_BC_BITS: 0 none
# (top-down only), 1 forward only (bottom-up levels on bits), 2 backward only, 3 both;
# base = f27ef0e. Each mode verified on three graphs, then base and the four modes
# interleaved per row.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; W=$B/work; mkdir -p $W
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
D=$(realpath .device-data/datasets); C=$B/chatty-new
mk() { local name=$1; shift; $C "$@" -o $W/$name.raw.cgr -q && $C convert $W/$name.raw.cgr -o $W/$name.cgr --dedup --drop-self-loops -q && rm $W/$name.raw.cgr; }
mk kron22 generate rmat -s 22 -e 16 --undirected --weights 255 &
mk urand22 generate urand -s 22 -e 16 --undirected --weights 255 &
mk twitter convert $D/social/ego-Twitter.undirected.el.gz &
mk web convert $D/web/cnr-2000.el.gz &
mk moscow convert $D/road/moscow-osm.gr.gz &
mk roadNE convert $D/road/USA-road-NE.pace.gr.gz &
$C generate grid --width 5000 --height 1 -o $W/path5k.cgr -q &
wait 2>/dev/null; echo "graphs made at $SECONDS s"
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "kernel %.3f ms min %.3f %s" % (statistics.median(t)*1e3, t[0]*1e3, d.get("verification")))' $B/r.json "$1"; }
run() { # label binary graph trials [flags]
  local label=$1 x=$2 g=$3 n=$4; shift 4
  timeout 150 $B/chatty-$x run bc $W/$g.cgr --engine gpu -n $n "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
}
for m in 0 1 2; do
  CHATTY_BC_BITS=$m run "kron22 8 verify mode $m" new kron22 1 --sources 8 --verify
  CHATTY_BC_BITS=$m run "web 8 verify mode $m" new web 1 --sources 8 --verify
  CHATTY_BC_BITS=$m run "moscow 8 verify mode $m" new moscow 1 -r 1 --sources 8 --verify
done > $OUT/rows.txt
echo "verified at $SECONDS s"; cat $OUT/rows.txt
ROWS=("kron22 5 -r 2894007" "kron22 2 --sources 64" "urand22 5 -r 1" "twitter 5 -r 109" "twitter 3 --sources 64"
      "web 5 -r 217849" "web 3 --sources 64" "moscow 5 -r 1" "roadNE 2 -r 1 --sources 64" "path5k 2 --sources all")
for r in "${ROWS[@]}"; do
  set -- $r; g=$1 n=$2; shift 2
  run "$g $* base" base $g $n "$@"
  for m in 0 1 2 3; do CHATTY_BC_BITS=$m run "$g $* mode $m" new $g $n "$@"; done
done >> $OUT/rows.txt
echo "== timed at $SECONDS s"; sed 1,9d $OUT/rows.txt
