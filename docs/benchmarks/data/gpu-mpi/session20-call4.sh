#!/usr/bin/env bash
# session 20, call 4 (as run): what --mode auto should choose, measured. Two parts on
# the one lent H200 (--devices 0,0: a code comparison, not scaling), bfs and sssp on
# road-like graphs (moscow, road-NE, a 1024² grid with weights 1..100) and a power-law
# one (rmat20): host-driven rounds (bsp; in bfs order they chase within blocks) against
# the GPU-driven modes (async, gmpi), in both orders; then the defaults (--mode auto
# --reorder auto) with --verify, and one GPU. Kernel ms, median of 5 trials.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
C=$B/chatty
$C convert .device-data/datasets/road/moscow-osm.gr.gz -o $W/moscow.cgr -q
$C convert .device-data/datasets/road/USA-road-NE.pace.gr.gz -o $W/roadNE.cgr -q
$C generate grid --width 1024 --height 1024 --weights 100 -o $W/grid.cgr -q
$C generate rmat -s 20 -e 16 --weights 255 -o $W/rmat20.cgr -q
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=d["trial_seconds"]; x=d["detail"] or {}; print("%-8s %-5s %-22s kernel %9.3f ms  e2e %9.3f ms  iters %6s  mode %s reorder %s  %s" % (sys.argv[2], sys.argv[3], sys.argv[4], statistics.median(t)*1e3, statistics.median(d["end_to_end_seconds"])*1e3, d["iterations"], x.get("mode","-"), x.get("reorder", "-"), d.get("verification") or ""))' $B/r.json "$@"; }
for g in moscow roadNE grid rmat20; do
  for a in bfs sssp; do
    run() { local label=$1; shift; timeout 120 $C run $a $W/$g.cgr --engine gpu -r 1 -n 5 --json "$@" > $B/r.json 2> $B/r.err && row $g $a "$label" || echo "$g $a $label FAILED: $(tail -1 $B/r.err)"; }
    run "one GPU" --gpus 1
    for o in bfs none; do
      for m in bsp async gmpi; do run "$m $o" --devices 0,0 --mode $m --reorder $o; done
    done
    run "defaults --verify" --devices 0,0 --verify
    grep -E "^note|auto" $B/r.err | head -3
  done
done 2>&1 | tee $OUT/rows.txt
