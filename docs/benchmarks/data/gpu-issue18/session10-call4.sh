#!/usr/bin/env bash
# session 10: h5 (no parameter copies to the stack in sssp.cu) vs h3, single GPU on roads and two parts of rmat20.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
for x in h1 h3 h5; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
D=$(realpath .device-data/datasets); W=$B/work
$B/chatty-h5 generate rmat -s 20 -e 16 --weights 255 -o $W/rmat20.cgr -q
$B/chatty-h5 convert $D/road/moscow-osm.gr.gz -o $W/moscow.cgr -q
$B/chatty-h5 convert $D/road/USA-road-NE.pace.gr.gz -o $W/roadNE.cgr -q
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "%.3f %.3f %s %s %.1f" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3))' $B/r.json "$1"; }
run() { local label=$1 x=$2; shift 2; timeout 30 $B/chatty-$x run "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"; }
for x in h3 h5 h3 h5; do
  for g in moscow roadNE; do for a in sssp bfs; do run "$g $a 1gpu $x" $x $a $W/$g.cgr --engine gpu --gpus 1 -r 1 -n 5; done; done
  run "rmat20 sssp 0,0 $x" $x sssp $W/rmat20.cgr --engine gpu --devices 0,0 -r 1 -n 5
done
run "moscow sssp 0,0 h5" h5 sssp $W/moscow.cgr --engine gpu --devices 0,0 --reorder bfs -r 1 -n 5 --verify
run "rmat20 sssp 0,0 h5" h5 sssp $W/rmat20.cgr --engine gpu --devices 0,0 -r 1 -n 5 --verify
run "moscow sssp 1gpu h5" h5 sssp $W/moscow.cgr --engine gpu --gpus 1 -r 1 -n 5 --verify
