#!/usr/bin/env bash
# session 11, issue 26, second call: h9 = 8 blocks/SM for bfs_persistent off roads, mid-degree
# vertices of small frontiers set aside to hub groups; h8 = the first call's binary.
# Configs: A = no bit tests (CHATTY_BFS_BITMAP=0), B = level bitmaps only, C = default,
# D = C in degree order, C1/C2/C4 = C at 1/2/4 blocks per SM; h8A = before (h8, A).
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
for x in h8 h9; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
D=$(realpath .device-data/datasets)
C=$B/chatty-h9; W=$B/work
$C generate rmat -s 22 -e 16 --undirected --weights 255 -o $W/kron22.cgr -q
$C generate urand -s 22 -e 16 --undirected -o $W/urand22.cgr -q
$C convert $D/social/ego-Twitter.undirected.el.gz -o $W/twitter.cgr -q
$C convert $D/web/cnr-2000.el.gz -o $W/web.cgr --transpose -q
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "%.3f %.3f %s %s %.1f reorder %.3f s upload %.3f s" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3, d["detail"].get("reorder_seconds", 0), d["detail"].get("upload_seconds", 0)))' $B/r.json "$1"; }
run() { # label config graph source trials [more flags]
  local label=$1 c=$2 g=$3 s=$4 n=$5; shift 5
  local x=h9 e=() f=()
  case $c in
    A) e=(CHATTY_BFS_BITMAP=0);; B) e=(CHATTY_BFS_HUB_MASKS=0);; C) ;; D) f=(--reorder degree);;
    C1|C2|C4) e=(CHATTY_PERSISTENT_BLOCKS_PER_SM=${c#C});; h8A) x=h8; e=(CHATTY_BFS_BITMAP=0);;
  esac
  timeout 120 env "${e[@]}" $B/chatty-$x run bfs $W/$g.cgr --engine gpu --gpus 1 -r $s -n $n "${f[@]}" "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
}
CHATTY_TRACE_STEPS=1 $C run bfs $W/kron22.cgr --engine gpu --gpus 1 -r 2894007 -n 1 > /dev/null 2> $OUT/trace-kron22-C.txt
CHATTY_TRACE_STEPS=1 $C run bfs $W/kron22.cgr --engine gpu --gpus 1 -r 2894007 -n 1 --reorder degree > /dev/null 2> $OUT/trace-kron22-D.txt
for c in C D A; do for gs in kron22:2894007 urand22:1 twitter:109 web:217849; do
  run "${gs%%:*} $c verify" $c ${gs%%:*} ${gs##*:} 2 --verify
done; done | tee $OUT/rows.txt
for r in 1 2; do for c in h8A A B C D C1 C2 C4; do for gs in kron22:2894007 kron22:1 urand22:1 twitter:109 web:217849; do
  run "${gs%%:*}-${gs##*:} $c" $c ${gs%%:*} ${gs##*:} 10
done; done; done | tee -a $OUT/rows.txt
echo "== summary"; grep -v verify $OUT/rows.txt | sort | awk '{print $1,$2,$3,$8,$11}'; grep -h "verify" $OUT/rows.txt | awk '{print $1,$2,$3,$7}' | tr '\n' ';'
echo; tail -n +1 $OUT/trace-kron22-C.txt | head -12 | cut -c1-120
