#!/usr/bin/env bash
# session 10: (1) multi-GPU SSSP/BFS rounds with the chase (h1) vs h0, two parts of one GPU;
# (2) BC one source on kron22: h1 vs h2 (warp-level gather) by blocks/SM; deep graphs;
# (3) the BC and single-GPU tests of h2's GPU test binary.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
for x in h0 h1 h2; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
xz -dc .device-data/bin/gpu-test-h2.xz > $B/gpu-test; chmod +x $B/gpu-test
D=$(realpath .device-data/datasets)
C=$B/chatty-h1; W=$B/work
$C generate rmat -s 22 -e 16 --undirected --weights 255 -o $W/kron22.cgr -q
$C generate rmat -s 20 -e 16 --weights 255 -o $W/rmat20.cgr -q
$C convert $D/road/moscow-osm.gr.gz -o $W/moscow.cgr -q
$C convert $D/road/USA-road-NE.pace.gr.gz -o $W/roadNE.cgr -q
$C generate grid --width 1024 --height 1024 --weights 100 -o $W/grid1m.cgr -q
$C generate grid --width 5000 --height 1 -o $W/path5k.cgr -q
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "%.3f %.3f %s %s %.1f" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3))' $B/r.json "$1"; }
run() { # label binary args...
  local label=$1 x=$2; shift 2
  timeout 120 $B/chatty-$x run "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
}
for x in h1 h2; do for b in 4 8; do
  CHATTY_PERSISTENT_BLOCKS_PER_SM=$b run "bc-kron22 b$b $x" $x bc $W/kron22.cgr --engine gpu --gpus 1 -r 2894007 -n 10 --verify
done; done | tee $OUT/bc.txt
for x in h1 h2 h1 h2; do for b in 4 8; do
  CHATTY_PERSISTENT_BLOCKS_PER_SM=$b run "bc-kron22 b$b $x" $x bc $W/kron22.cgr --engine gpu --gpus 1 -r 2894007 -n 10
done; done | tee -a $OUT/bc.txt
for x in h1 h2; do for b in 4 8; do
  CHATTY_PERSISTENT_BLOCKS_PER_SM=$b run "bc-moscow b$b $x" $x bc $W/moscow.cgr --engine gpu --gpus 1 -r 1 -n 5 --verify
  CHATTY_PERSISTENT_BLOCKS_PER_SM=$b run "bc-path5k-all b$b $x" $x bc $W/path5k.cgr --engine gpu --gpus 1 --sources all -n 1 --verify
done; done | tee -a $OUT/bc.txt
for g in moscow roadNE grid1m rmat20; do for a in sssp bfs; do for dev in 1gpu 0,0; do for x in h0 h1; do
  re=""; [ $g != rmat20 ] && [ $dev = 0,0 ] && re="--reorder bfs"
  run "$g $a $dev $x" $x $a $W/$g.cgr --engine gpu $([ $dev = 1gpu ] && echo --gpus 1 || echo --devices $dev) $re -r 1 -n 5 --verify
done; done; done; done | tee $OUT/multi.txt
CHATTY_DATASETS=$D timeout 200 $B/gpu-test --nocapture --test-threads 1 bc gpu_matches sssp_with > $OUT/gpu-test.log 2>&1; echo "gpu-test exit $?" >> $OUT/gpu-test.log
grep -E "^test |test result|panicked|exit" $OUT/gpu-test.log
