#!/usr/bin/env bash
# session 11, issue 26 (h8): BFS pull by bits. Configs: A = old path (CHATTY_BFS_BITMAP=0),
# B = level bitmaps only (CHATTY_BFS_HUB_MASKS=0), C = bitmaps + hub masks (default),
# D = C in degree order (--reorder degree). Per-step traces on kron22 and twitter; timed rows
# interleaved on kron22 (two sources), urand22, twitter, web; --verify of each; single-GPU tests.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
xz -dc .device-data/bin/chatty-h8.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/gpu-test-h8.xz > $B/gpu-test; chmod +x $B/gpu-test
D=$(realpath .device-data/datasets)
C=$B/chatty; W=$B/work
$C generate rmat -s 22 -e 16 --undirected --weights 255 -o $W/kron22.cgr -q
$C generate urand -s 22 -e 16 --undirected -o $W/urand22.cgr -q
$C convert $D/social/ego-Twitter.undirected.el.gz -o $W/twitter.cgr -q
$C convert $D/web/cnr-2000.el.gz -o $W/web.cgr --transpose -q
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "%.3f %.3f %s %s %.1f reorder %.3f s upload %.3f s" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3, d["detail"].get("reorder_seconds", 0), d["detail"].get("upload_seconds", 0)))' $B/r.json "$1"; }
cfg() { # config letter -> env and flags
  case $1 in A) echo "env CHATTY_BFS_BITMAP=0";; B) echo "env CHATTY_BFS_HUB_MASKS=0";; C) echo "env";; D) echo "env --reorder degree";; esac; }
run() { # label config graph source trials [more flags]
  local label=$1 c=$2 g=$3 s=$4 n=$5; shift 5
  local e f; read -r e f <<< "$(cfg $c)"
  timeout 120 $e $C run bfs $W/$g.cgr --engine gpu --gpus 1 -r $s -n $n $f "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
}
for c in A B C D; do
  for gs in kron22:2894007 twitter:109; do g=${gs%%:*}; s=${gs##*:}
    read -r e f <<< "$(cfg $c)"
    CHATTY_TRACE_STEPS=1 $e $C run bfs $W/$g.cgr --engine gpu --gpus 1 -r $s -n 1 $f > /dev/null 2> $OUT/trace-$g-$c.txt
  done
done
for c in C D A B; do for gs in kron22:2894007 urand22:1 twitter:109 web:217849; do
  run "${gs%%:*} $c verify" $c ${gs%%:*} ${gs##*:} 2 --verify
done; done | tee $OUT/rows.txt
for r in 1 2; do for c in A B C D; do for gs in kron22:2894007 kron22:1 urand22:1 twitter:109 web:217849; do
  run "${gs%%:*}-${gs##*:} $c" $c ${gs%%:*} ${gs##*:} 10
done; done; done | tee -a $OUT/rows.txt
( CHATTY_DATASETS=$D timeout 240 $B/gpu-test --nocapture --test-threads 1 gpu_matches_the_cpu_references 2>&1 | tail -15 ) > $OUT/tests.txt
echo "== summary"; grep -v verify $OUT/rows.txt | sort; grep -h "verify" $OUT/rows.txt | awk '{print $1,$2,$3,$7}'; tail -4 $OUT/tests.txt
head -30 $OUT/trace-kron22-A.txt; head -30 $OUT/trace-kron22-D.txt
