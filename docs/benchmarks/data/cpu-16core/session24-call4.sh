#!/usr/bin/env bash
# session 24, issue 19, call 4 (as run): PageRank, 20 iterations (--tolerance 0), on
# f52ed54 (old) and 8b7f74e (new: the edge-balanced ranges without a search per range),
# alternating old and new five times per graph and thread count; then the ranges alone
# (crates/algo/examples/ranges.rs, not committed: the old search against the new cut).
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; W=$B/work; mkdir -p $W
for b in new old; do xz -dc .device-data/bin/chatty-$b.xz > $B/chatty-$b; chmod +x $B/chatty-$b; done
xz -dc .device-data/bin/ranges.xz > $B/ranges; chmod +x $B/ranges
C=$B/chatty-new; D=.device-data/datasets
$C convert $D/road/moscow-osm.gr.gz -o $W/raw-moscow.cgr -q
$C convert $D/road/USA-road-NE.pace.gr.gz -o $W/raw-roadNE.cgr -q
$C convert $D/web/cnr-2000.el.gz -o $W/raw-web.cgr -q
$C generate grid --width 2048 --height 2048 -o $W/raw-grid.cgr -q
$C generate rmat -s 22 -e 16 --undirected -o $W/raw-kron22.cgr -q
for g in moscow roadNE web grid kron22; do $C convert $W/raw-$g.cgr -o $W/$g.cgr --dedup --drop-self-loops --transpose -q; done
echo "graphs at $SECONDS s"
for t in 16 4; do for g in moscow roadNE web grid $([ $t = 16 ] && echo kron22); do
    line="$g threads $t:"
    for r in 1 2 3 4 5; do for b in old new; do
        s=$($B/chatty-$b run pr $W/$g.cgr -n 3 --json --engine cpu --threads $t --tolerance 0 --max-iters 20 | python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["average_seconds"])')
        line="$line $b $s"
    done; done
    echo "$line"
done; done 2>&1 | tee $OUT/pr-old-new.txt
$B/ranges $W/moscow.cgr $W/roadNE.cgr $W/web.cgr $W/grid.cgr $W/kron22.cgr 2>&1 | tee $OUT/ranges.txt
echo "done at $SECONDS s"
