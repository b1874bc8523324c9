#!/usr/bin/env bash
# session 23, call 5 (as run): the in-edges' build on the 16-core host after the graph
# builder stages less (ebe5158, dd29629): rmat24 without its transpose stored, as in
# session 22's call 1 (in_edges_seconds 1.280 and 1.309 s there, build 6e3f676).
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
xz -dc .device-data/bin/chatty-new.xz > $B/chatty; chmod +x $B/chatty
$B/chatty generate rmat -s 24 -e 16 --weights 255 -o $B/work/r24.cgr -q
echo "generated at $SECONDS s"
for round in 1 2 3; do
  for k in bfs pr; do
    $B/chatty run $k $B/work/r24.cgr --engine gpu --gpus 1 -n 1 --json > $OUT/$k-$round.json 2> /dev/null
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], "in_edges_seconds", d["in_edges_seconds"], "prepare", d.get("prepare_seconds"))' $OUT/$k-$round.json $k $round
  done
done
cd $OUT && tar -czf json.tgz *.json && rm -f *.json
