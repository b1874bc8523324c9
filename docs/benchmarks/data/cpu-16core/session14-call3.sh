#!/usr/bin/env bash
# session 14, issue 19, call 3 (as run): Afforest's passes as plain loops over chunks of
# 4096 vertices (new = this session's build) against GAPBS cc, wcc rows at 1/4/16
# threads, then base (05d0d93) against new, interleaved, for before/after.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 cc converter > /dev/null 2>&1
echo "gapbs built at $SECONDS s"
export CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 330 env CHATTY=$B/chatty-new THREADS="1 4 16" TRIALS=3 KERNELS="wcc" GRAPHS="roadNE moscow grid web twitter kron22 urand22" \
  bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"; cat $OUT/table.md | grep "|"
cd $B/work
for round in 1 2; do
  for g in roadNE moscow grid web twitter kron22 urand22; do
    [ -f $g.cgr ] || continue
    for t in 1 16; do
      for x in base new; do
        [ $SECONDS -lt 480 ] || break 4
        $B/chatty-$x run wcc $g.cgr -n 5 --json --engine cpu --threads $t > r.json 2>/dev/null
        python3 -c 'import json,sys; d=json.load(open("r.json")); print(sys.argv[1], sys.argv[2], sys.argv[3], "%.5f" % d["average_seconds"])' $g $t $x >> $OUT/base-vs-new.txt
      done
    done
  done
done
cat $OUT/base-vs-new.txt | tr '\n' ';'
echo "all done at $SECONDS s"
