#!/usr/bin/env bash
# session 20, call 9 (as run): issue 18's BC row on its own graph: a 5,000-vertex path
# with a star (a path of 4,000 vertices, 1,000 leaves on its middle vertex), BC from
# every source on one GPU, --verify; the 5,000-vertex path without the star beside it.
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
C=$B/chatty
python3 -c '
edges = [(v - 1, v) for v in range(1, 4000)] + [(2000, 4000 + i) for i in range(1000)]
open("/tmp/b/work/pathstar.el", "w").write("".join(f"{u} {v}\n" for u, v in edges))'
$C convert $W/pathstar.el --format el --symmetrize -o $W/pathstar.cgr -q
$C generate grid --width 5000 --height 1 -o $W/path5k.cgr -q
for g in pathstar path5k; do
  $C info $W/$g.cgr | grep -E "vertices|edges" | tr '\n' ' '; echo
  timeout 120 $C run bc $W/$g.cgr --engine gpu --gpus 1 --sources all -n 3 --verify --json > $B/r.json 2> $B/r.err \
    && python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print(sys.argv[2], "BC all %d sources: kernel median %.1f ms (%s), e2e %.1f ms, %s" % (d["parameters"]["source_count"], statistics.median(d["trial_seconds"])*1e3, ", ".join("%.1f" % (t*1e3) for t in d["trial_seconds"]), statistics.median(d["end_to_end_seconds"])*1e3, d["verification"]))' $B/r.json $g \
    || echo "$g FAILED: $(tail -2 $B/r.err)"
done 2>&1 | tee $OUT/rows.txt
