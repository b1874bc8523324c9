#!/usr/bin/env bash
# session 14, issue 19, call 5 (as run): BC from 4 sources on the roads, one source per
# thread (the default there) against marked-successor sweeps over all threads (forced
# by a temporary CHATTY_BC_FORCE_MARKED in an unlanded build), interleaved.
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-exp.xz > $B/chatty; chmod +x $B/chatty
D=$(realpath .device-data/datasets)
for g in moscow:road/moscow-osm.gr.gz roadNE:road/USA-road-NE.pace.gr.gz; do
  $B/chatty convert $D/${g##*:} -o $W/${g%%:*}.raw.cgr -q && $B/chatty convert $W/${g%%:*}.raw.cgr -o $W/${g%%:*}.cgr --dedup --drop-self-loops -q
done
for round in 1 2; do for g in moscow roadNE; do for t in 4 16; do for e in by-source marked; do
  [ $SECONDS -lt 200 ] || break 4
  env $([ $e = marked ] && echo CHATTY_BC_FORCE_MARKED=1) $B/chatty run bc $W/$g.cgr --sources 4 -n 3 --json --engine cpu --threads $t > $B/r.json 2>/dev/null
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(*sys.argv[2:], "%.4f" % d["average_seconds"])' $B/r.json $g $t $e
done; done; done; done
