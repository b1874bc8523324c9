#!/usr/bin/env bash
# session 14, issue 26: new = this session's build (bottom-up steps walk in-lists
# sorted by in-neighbour degree, built on the device at upload; degree order computed
# with packed keys and a parallel inverse); base = 05d0d93. Configs: base; N = new;
# N0 = new without the sorted lists (CHATTY_BFS_SORTED_PULL=0); D = new --reorder
# degree; Db = base --reorder degree. gk22 is the issue's own graph: GAPBS
# `converter -g22 -k16` (b5e3e19, built here), its edge list read by chatty.
# Then the host's renumbering phases (scratch program relab, 16 threads) and a
# transparent-huge-page first-touch test.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; W=$B/work; mkdir -p $W $B/gapbs
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
for x in relab thp; do xz -dc .device-data/bin/$x.xz > $B/$x; chmod +x $B/$x; done
D=$(realpath .device-data/datasets); C=$B/chatty-new
mk() { local name=$1; shift; $C "$@" -o $W/$name.raw.cgr -q && $C convert $W/$name.raw.cgr -o $W/$name.cgr --dedup --drop-self-loops -q && rm $W/$name.raw.cgr; }
( tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs converter > /dev/null 2>&1 && cd $W && \
  /usr/bin/time -f "gapbs converter %e s" $B/gapbs/converter -g22 -k16 -e gk22.el > $OUT/gk22-converter.txt 2>&1 && \
  /usr/bin/time -f "chatty convert %e s" $C convert gk22.el --format el -o gk22.cgr --symmetrize --dedup --drop-self-loops -q 2>> $OUT/gk22-converter.txt && rm gk22.el ) &
mk kron22 generate rmat -s 22 -e 16 --undirected --weights 255 &
mk urand22 generate urand -s 22 -e 16 --undirected --weights 255 &
mk twitter convert $D/social/ego-Twitter.undirected.el.gz &
mk web convert $D/web/cnr-2000.el.gz &
mk moscow convert $D/road/moscow-osm.gr.gz &
wait; echo "graphs made at $SECONDS s"; ls -la $W; cat $OUT/gk22-converter.txt | tail -3
$C info $W/gk22.cgr | head -5
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "%.3f %.3f %s %s %.1f reorder %.3f s upload %.3f s reached %s" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3, d["detail"].get("reorder_seconds", 0), d["detail"].get("upload_seconds", 0), d["result"].get("reached")))' $B/r.json "$1"; }
run() { # label config graph source trials [more flags]
  local label=$1 c=$2 g=$3 s=$4 n=$5; shift 5
  local x=new e=(CHATTY_X=1) f=()
  case $c in
    base) x=base;; N) ;; N0) e=(CHATTY_BFS_SORTED_PULL=0);; D) f=(--reorder degree);; Db) x=base; f=(--reorder degree);;
  esac
  timeout 120 env "${e[@]}" $B/chatty-$x run bfs $W/$g.cgr --engine gpu --gpus 1 -r $s -n $n "${f[@]}" "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
  grep TRACE $B/r.err | head -2
}
CHATTY_TRACE_STEPS=1 $C run bfs $W/gk22.cgr --engine gpu --gpus 1 -r 3474147 -n 1 > /dev/null 2> $OUT/trace-gk22-N.txt
CHATTY_TRACE_STEPS=1 CHATTY_BFS_SORTED_PULL=0 $C run bfs $W/gk22.cgr --engine gpu --gpus 1 -r 3474147 -n 1 > /dev/null 2> $OUT/trace-gk22-N0.txt
GS="gk22:3474147 kron22:2894007 kron22:1 urand22:1 twitter:109 web:217849 moscow:0"
for c in N D; do for gs in $GS; do
  run "${gs%%:*} $c verify" $c ${gs%%:*} ${gs##*:} 2 --verify
done; done | tee $OUT/rows.txt
echo "verified at $SECONDS s"
for round in 1 2; do for c in base N0 N D Db; do for gs in $GS; do
  [ $SECONDS -lt 470 ] || break 3
  run "${gs/:/-} $c r$round" $c ${gs%%:*} ${gs##*:} 10
done; done; done | tee -a $OUT/rows.txt
echo "== summary at $SECONDS s"; grep -v verify $OUT/rows.txt | grep -v TRACE | awk '{print $1,$2,$3,$4,$11,$14}'; grep -h "verify" $OUT/rows.txt | awk '{print $1,$2,$3,$7}' | tr '\n' ';'
echo; head -10 $OUT/trace-gk22-N.txt | cut -c1-60; head -10 $OUT/trace-gk22-N0.txt | cut -c1-60
( $B/thp; $B/thp huge; for w in "" w; do $B/relab 22 $w; RAYON_NUM_THREADS=4 $B/relab 22 $w; done ) > $OUT/host-relabel.txt 2>&1
cat $OUT/host-relabel.txt
echo "done at $SECONDS s"
