#!/usr/bin/env bash
# session 14, issue 26, second call: new = ranges of rows no longer widened to 4096
# vertices (degree-order renumbering in parallel), packed-key degree order, BFS
# switching to bottom-up only while the frontier grows; base = 05d0d93. Configs:
# base; N = new; D = new --reorder degree; Db = base --reorder degree. gk22 is the
# issue's graph (GAPBS `converter -g22 -k16`, b5e3e19 built here). BC from one source
# in both orders (issue 18's <= 5 ms). Then BLEST
# (delbek/blest 9be20d9, patched by blest_local_input.py) on gk22 if time is left.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; W=$B/work; mkdir -p $W $B/gapbs
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
xz -dc .device-data/bin/relab.xz > $B/relab; chmod +x $B/relab
D=$(realpath .device-data/datasets); C=$B/chatty-new
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
( cd .device-data/blest && $NVCC -std=c++20 -arch=sm_90 -O3 -Xcompiler -fopenmp -I. -IDataStructures -IBFS -ICC -IMBFS -IGorder \
    main.cu Gorder/Graph.cpp Gorder/Util.cpp Gorder/UnitHeap.cpp -lcuda -lgomp -o $B/blest ) > $OUT/blest-build.txt 2>&1 &
mk() { local name=$1; shift; $C "$@" -o $W/$name.raw.cgr -q && $C convert $W/$name.raw.cgr -o $W/$name.cgr --dedup --drop-self-loops -q && rm $W/$name.raw.cgr; }
( tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs converter > /dev/null 2>&1 && cd $W && \
  $B/gapbs/converter -g22 -k16 -e gk22.el > /dev/null 2>&1 && \
  $C convert gk22.el --format el -o gk22.cgr --symmetrize --dedup --drop-self-loops -q && rm gk22.el ) &
mk kron22 generate rmat -s 22 -e 16 --undirected --weights 255 &
mk urand22 generate urand -s 22 -e 16 --undirected --weights 255 &
mk twitter convert $D/social/ego-Twitter.undirected.el.gz &
mk web convert $D/web/cnr-2000.el.gz &
mk moscow convert $D/road/moscow-osm.gr.gz &
wait; echo "graphs made at $SECONDS s"; ls $W
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "kernel %.3f ms min %.3f levels %s %s e2e %.1f ms reorder %.3f s upload %.3f s reached %s" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3, d["detail"].get("reorder_seconds", 0), d["detail"].get("upload_seconds", 0), d["result"].get("reached")))' $B/r.json "$1"; }
run() { # label config graph source trials [more flags]
  local label=$1 c=$2 g=$3 s=$4 n=$5; shift 5
  local x=new f=()
  case $c in base) x=base;; N) ;; D) f=(--reorder degree);; Db) x=base; f=(--reorder degree);; esac
  timeout 120 $B/chatty-$x run bfs $W/$g.cgr --engine gpu -r $s -n $n "${f[@]}" "$@" --json > $B/r.json 2>$B/r.err && row "$label" || echo "$label FAILED $(tail -1 $B/r.err)"
}
CHATTY_TRACE_STEPS=1 $C run bfs $W/gk22.cgr --engine gpu -r 3474147 -n 1 > /dev/null 2> $OUT/trace-gk22-N.txt
CHATTY_TRACE_STEPS=1 $C run bfs $W/gk22.cgr --engine gpu -r 3474147 -n 1 --reorder degree > /dev/null 2> $OUT/trace-gk22-D.txt
GS="gk22:3474147 kron22:2894007 kron22:1 urand22:1 twitter:109 web:217849 moscow:1"
for c in N D; do for gs in $GS; do
  run "${gs%%:*} $c verify" $c ${gs%%:*} ${gs##*:} 2 --verify
done; done > $OUT/rows.txt
for g in kron22:2894007 twitter:109 moscow:1; do run "${g%%:*} two-parts verify" N ${g%%:*} ${g##*:} 2 --verify --gpus 2 --devices 0,0; done >> $OUT/rows.txt
echo "verified at $SECONDS s"
for c in base N D Db; do for gs in $GS; do
  run "${gs/:/-} $c" $c ${gs%%:*} ${gs##*:} 10
done; done >> $OUT/rows.txt
for g in kron22:2894007 gk22:3474147; do for f in "" "--reorder degree"; do
  timeout 120 $C run bc $W/${g%%:*}.cgr --engine gpu -r ${g##*:} -n 5 $f --json > $B/r.json 2>$B/r.err && row "${g%%:*} bc ${f:-natural}" || echo "bc ${g%%:*} $f FAILED $(tail -1 $B/r.err)"
done; done >> $OUT/rows.txt
echo "== rows at $SECONDS s"; cat $OUT/rows.txt | sed 's/ reached.*//'
( $B/relab 22; RAYON_NUM_THREADS=4 $B/relab 22 ) > $OUT/host-relabel.txt 2>&1; grep -v "^$" $OUT/host-relabel.txt
echo "relab done at $SECONDS s"; tail -2 $OUT/blest-build.txt
if [ $SECONDS -lt 330 ] && [ -x $B/blest ]; then
  $C convert $W/gk22.cgr -o $W/gk22.mtx -q; echo "mtx at $SECONDS s"
  printf '3474147\n3474147\n3474147\n3474147\n3474147\n' > $W/gk22.txt
  ( cd $W && time timeout $((560 - SECONDS)) $B/blest -d $W/ -g gk22 -j 1 -w 65536 ) > $OUT/blest-run.txt 2>&1
  grep -v "^Source" $OUT/blest-run.txt | tail -12; grep "^Source" $OUT/blest-run.txt | head
fi
echo "done at $SECONDS s"
