#!/usr/bin/env bash
# session 12, issue 26: new = this session's build (level bitmaps and hub masks for the
# bottom-up steps, 8 blocks per SM off roads, small frontiers' mid-degree vertices to hub
# groups, direct relabel); base = 26cf139, before issue 26. Configs: base; A = new
# without bit tests (CHATTY_BFS_BITMAP=0); B = level bitmaps only (CHATTY_BFS_HUB_MASKS=0);
# C = new default; D = C with --reorder degree; C1 = C at 1 block per SM.
# Graphs as scripts/gapbs_graphs.sh makes them (deduplicated, no self-loops).
# Then the single- and multi-GPU correctness tests in the time left.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
D=$(realpath .device-data/datasets); C=$B/chatty-new; W=$B/work
mk() { local name=$1; shift; $C "$@" -o $W/$name.raw.cgr -q && $C convert $W/$name.raw.cgr -o $W/$name.cgr --dedup --drop-self-loops --transpose -q && rm $W/$name.raw.cgr; }
mk kron22 generate rmat -s 22 -e 16 --undirected --weights 255 &
mk urand22 generate urand -s 22 -e 16 --undirected --weights 255 &
mk twitter convert $D/social/ego-Twitter.undirected.el.gz &
mk web convert $D/web/cnr-2000.el.gz &
mk moscow convert $D/road/moscow-osm.gr.gz &
mk roadNE convert $D/road/USA-road-NE.pace.gr.gz &
wait; echo "graphs made at $SECONDS s"; ls -la $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "%.3f %.3f %s %s %.1f reorder %.3f s upload %.3f s" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3, d["detail"].get("reorder_seconds", 0), d["detail"].get("upload_seconds", 0)))' $B/r.json "$1"; }
run() { # label config graph source trials [more flags]
  local label=$1 c=$2 g=$3 s=$4 n=$5; shift 5
  local x=new e=(CHATTY_X=1) f=()
  case $c in
    base) x=base;; A) e=(CHATTY_BFS_BITMAP=0);; B) e=(CHATTY_BFS_HUB_MASKS=0);; C) ;; D) f=(--reorder degree);;
    C1) e=(CHATTY_PERSISTENT_BLOCKS_PER_SM=1);;
  esac
  timeout 120 env "${e[@]}" $B/chatty-$x run bfs $W/$g.cgr --engine gpu --gpus 1 -r $s -n $n "${f[@]}" "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
}
CHATTY_TRACE_STEPS=1 $C run bfs $W/kron22.cgr --engine gpu --gpus 1 -r 2894007 -n 1 > /dev/null 2> $OUT/trace-kron22-C.txt
CHATTY_TRACE_STEPS=1 $C run bfs $W/kron22.cgr --engine gpu --gpus 1 -r 2894007 -n 1 --reorder degree > /dev/null 2> $OUT/trace-kron22-D.txt
GS="kron22:2894007 kron22:1 urand22:1 twitter:109 web:217849 moscow:0 roadNE:0"
for c in C D; do for gs in $GS; do
  run "${gs%%:*} $c verify" $c ${gs%%:*} ${gs##*:} 2 --verify
done; done | tee $OUT/rows.txt
echo "verified at $SECONDS s"
for c in base A B C D C1; do for gs in $GS; do
  run "${gs/:/-} $c" $c ${gs%%:*} ${gs##*:} 10
done; done | tee -a $OUT/rows.txt
echo "== summary at $SECONDS s"; grep -v verify $OUT/rows.txt | awk '{print $1,$2,$3,$8,$11}'; grep -h "verify" $OUT/rows.txt | awk '{print $1,$2,$3,$7}' | tr '\n' ';'
echo; head -14 $OUT/trace-kron22-C.txt | cut -c1-120
left=$((420 - SECONDS)); echo "tests with $left s left"
( CHATTY_DATASETS=$D timeout $left $B/gpu-test --nocapture --test-threads 1 gpu_matches_the_cpu_references multi_gpu_matches_the_cpu_references 2>&1 | tail -25 ) > $OUT/tests.txt
grep -h "test result\|panicked\|FAIL\|^test " $OUT/tests.txt | head -8
