#!/usr/bin/env bash
# session 10, last call: BC blocks per SM (h1: 4; h3: 6 with registers bounded; h4: 8),
# mg_sssp_step bounded to 32 registers (h3) vs h1 on rmat20/kron22 two parts; road rows of h3;
# the BC and multi-GPU tests of h3's GPU test binary.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
for x in h1 h3 h4; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
xz -dc .device-data/bin/gpu-test-h3.xz > $B/gpu-test; chmod +x $B/gpu-test
D=$(realpath .device-data/datasets)
C=$B/chatty-h3; W=$B/work
$C generate rmat -s 22 -e 16 --undirected --weights 255 -o $W/kron22.cgr -q
$C generate rmat -s 20 -e 16 --weights 255 -o $W/rmat20.cgr -q
$C convert $D/road/moscow-osm.gr.gz -o $W/moscow.cgr -q
$C convert $D/road/USA-road-NE.pace.gr.gz -o $W/roadNE.cgr -q
$C generate grid --width 5000 --height 1 -o $W/path5k.cgr -q
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "%.3f %.3f %s %s %.1f" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3))' $B/r.json "$1"; }
run() { # label binary args...
  local label=$1 x=$2; shift 2
  timeout 120 $B/chatty-$x run "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
}
for x in h1 h3 h4; do run "bc-kron22 $x" $x bc $W/kron22.cgr --engine gpu --gpus 1 -r 2894007 -n 10 --verify; done | tee $OUT/rows.txt
for r in 1 2 3; do for x in h1 h3 h4; do run "bc-kron22 $x" $x bc $W/kron22.cgr --engine gpu --gpus 1 -r 2894007 -n 10; done; done | tee -a $OUT/rows.txt
for x in h1 h3; do
  run "bc-moscow $x" $x bc $W/moscow.cgr --engine gpu --gpus 1 -r 1 -n 5 --verify
  run "bc-path5k-all $x" $x bc $W/path5k.cgr --engine gpu --gpus 1 --sources all -n 1 --verify
done | tee -a $OUT/rows.txt
for r in 1 2; do for x in h1 h3; do
  run "rmat20 sssp 0,0 $x" $x sssp $W/rmat20.cgr --engine gpu --devices 0,0 -r 1 -n 5 $([ $r = 1 ] && echo --verify)
  run "kron22 sssp 0,0 $x" $x sssp $W/kron22.cgr --engine gpu --devices 0,0 -r 2894007 -n 5
done; done | tee -a $OUT/rows.txt
for g in moscow roadNE; do for a in sssp bfs; do
  run "$g $a 0,0 h3" h3 $a $W/$g.cgr --engine gpu --devices 0,0 --reorder bfs -r 1 -n 5 --verify
  run "$g $a 0,0 natural h3" h3 $a $W/$g.cgr --engine gpu --devices 0,0 -r 1 -n 5
done; done | tee -a $OUT/rows.txt
CHATTY_DATASETS=$D timeout 200 $B/gpu-test --nocapture --test-threads 1 bc multi_gpu_matches > $OUT/gpu-test.log 2>&1; echo "gpu-test exit $?" >> $OUT/gpu-test.log
grep -E "^test |test result|panicked|exit" $OUT/gpu-test.log
