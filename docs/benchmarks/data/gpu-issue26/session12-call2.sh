#!/usr/bin/env bash
# session 12, issue 26, second call: the road rows the first call missed (their vertices
# are numbered from 1), base against new, and the verification.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; W=$B/work; C=$B/chatty-new; D=$(realpath .device-data/datasets)
ls $W
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); t=sorted(d["trial_seconds"]); print(sys.argv[2], "%.3f %.3f %s %s %.1f" % (statistics.median(t)*1e3, t[0]*1e3, d.get("iterations"), d.get("verification"), statistics.median(d["end_to_end_seconds"])*1e3))' $B/r.json "$1"; }
for r in 1 2; do for x in base new; do for g in moscow roadNE; do
  timeout 60 $B/chatty-$x run bfs $W/$g.cgr --engine gpu --gpus 1 -r 1 -n 10 --json > $B/r.json 2>$B/r.err && row "$g-1 $x" || echo "$g $x FAILED $(tail -1 $B/r.err)"
done; done; done | tee $OUT/rows-road.txt
for g in moscow roadNE; do timeout 60 $C run bfs $W/$g.cgr --engine gpu --gpus 1 -r 1 -n 2 --verify --json > $B/r.json 2>$B/r.err && row "$g-1 new verify" || echo "$g verify FAILED"; done | tee -a $OUT/rows-road.txt
