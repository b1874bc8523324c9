#!/usr/bin/env bash
# session 17, issue 19, call 5 (as run): SSSP's inlined relaxation (new = 9b67b09's
# build, base = d35b382) from the same sources beside GAPBS, then the table's kron22 bc
# rows that call 2 did not reach.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for x in new base; do xz -dc .device-data/bin/chatty-$x.xz > $B/chatty-$x; chmod +x $B/chatty-$x; done
tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1
export CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets CHATTY_DATASETS=$REPO/.device-data/datasets
cd $B/work && source $REPO/scripts/gapbs_graphs.sh
for g in moscow grid; do make_graph $g 2>> gen.log; done
echo "graphs made at $SECONDS s"
med() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%.5f" % statistics.median(d["trial_seconds"]))' "$1"; }
gmed() { awk '/Trial Time:/ {print $3}' gl.txt | python3 -c 'import sys,statistics; print("%.5f" % statistics.median(float(x) for x in sys.stdin))'; }
for round in 1 2; do
  for g in moscow grid; do
    base=$($CHATTY run bfs $g.cgr -n 1 --json --engine cpu 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["graph"]["id_base"])')
    for t in 1 16; do
      line="sssp $g t=$t"
      for x in base new; do
        $B/chatty-$x run sssp $g.cgr -r $((base + 1)) --delta 2000 -n 7 --json --engine cpu --threads $t > r.json 2>/dev/null && line="$line $x $(med r.json)"
      done
      OMP_NUM_THREADS=$t $GAPBS/sssp -f $g.wsg -n 7 -r 1 -d 2000 > gl.txt
      echo "$line gapbs $(gmed)" | tee -a $OUT/sssp-base-new-gapbs.txt
    done
  done
done
echo "sssp done at $SECONDS s"
cd $REPO
timeout $((285 - SECONDS)) env CHATTY=$B/chatty-new THREADS="16 4 1" TRIALS=3 KERNELS="bc" GRAPHS="kron22" \
  bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table-bc-kron22.md 2>&1
grep "|" $OUT/table-bc-kron22.md
echo "all done at $SECONDS s"
