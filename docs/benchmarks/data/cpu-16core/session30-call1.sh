#!/usr/bin/env bash
# session 30, issue 19, call 1.
# 1. bfs on ego-Twitter (0.75 at 4 threads in session 29's table, no measured cause):
#    one fixed source on both sides, 20 trials, three turns; chatty-trace = 0f010d0 with
#    per-trial timestamps on stderr (session30-trace.diff.txt, not committed), chatty-new
#    = 0f010d0 untraced, the traced build again under CHATTY_WAIT_POLICY=active, GAPBS
#    b5e3e19's bfs, and once with -l (each step's time); chatty-cur = chatty-trace with the
#    CLI's thread pool built with rayon's use_current_thread (the main thread is worker 0,
#    so the kernel starts without waking a worker and ends without waking main).
# 2. The bfs and sssp rows again with bench_cpu.sh's fix (one source for both sides and
#    every trial; before, ours drew a new source per trial).
# 3. pr on the grid, 0f010d0 against 7ebc5d3 (session 29's table) as BASE: list_dangling.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; W=$B/work; mkdir -p $B/gapbs $W
for v in new trace t29 cur; do xz -dc .device-data/bin/chatty-$v.xz > $B/chatty-$v; chmod +x $B/chatty-$v; done
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
echo "gapbs built at $SECONDS s; $(nproc) cores"
export CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets CHATTY_DATASETS=$REPO/.device-data/datasets
cd $W && source $REPO/scripts/gapbs_graphs.sh
make_graph twitter
S=$("$CHATTY" run bfs twitter.cgr -n 1 --json --engine cpu | python3 -c 'import json,sys; print(json.load(sys.stdin)["parameters"]["sources"][0])')
echo "twitter ready at $SECONDS s; source $S"
avg() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["average_seconds"])' "$1"; }
{
for r in 1 2 3; do
  for t in 4 1 16; do
    OMP_NUM_THREADS=$t $GAPBS/bfs -f twitter.sg -r $S -n 20 > gapbs-$t-r$r.log
    echo "gapbs t=$t r=$r $(awk '/Average Time:/ {print $3}' gapbs-$t-r$r.log)"
    $B/chatty-trace run bfs twitter.cgr -r $S -n 20 --engine cpu --threads $t --json > tr-$t-r$r.json 2> tr-$t-r$r.err
    echo "trace t=$t r=$r $(avg tr-$t-r$r.json)"
    $B/chatty-new run bfs twitter.cgr -r $S -n 20 --engine cpu --threads $t --json > new-$t-r$r.json 2> /dev/null
    echo "new t=$t r=$r $(avg new-$t-r$r.json)"
    CHATTY_WAIT_POLICY=active $B/chatty-trace run bfs twitter.cgr -r $S -n 20 --engine cpu --threads $t --json > act-$t-r$r.json 2> act-$t-r$r.err
    echo "active t=$t r=$r $(avg act-$t-r$r.json)"
    $B/chatty-cur run bfs twitter.cgr -r $S -n 20 --engine cpu --threads $t --json > cur-$t-r$r.json 2> cur-$t-r$r.err
    echo "cur t=$t r=$r $(avg cur-$t-r$r.json)"
  done
done
for t in 1 4 16; do OMP_NUM_THREADS=$t $GAPBS/bfs -f twitter.sg -r $S -n 20 -l > gapbs-l-$t.log; done
} > $OUT/fixed-source.txt 2>&1
echo "fixed source done at $SECONDS s"
python3 - > $OUT/summary.txt <<'PY'
import json, statistics as st
for kind in ("gapbs", "tr", "new", "act", "cur"):
    for t in (1, 4, 16):
        xs = []
        for r in (1, 2, 3):
            if kind == "gapbs":
                xs += [float(l.split()[-1]) for l in open(f"gapbs-{t}-r{r}.log") if l.startswith("Trial Time:")]
            else:
                xs += json.load(open(f"{kind}-{t}-r{r}.json"))["trial_seconds"]
        print(f"{kind:6} t={t:2} median {st.median(xs)*1e3:.3f} ms  min {min(xs)*1e3:.3f}  n={len(xs)}")
PY
for k in tr act cur; do for t in 1 4 16; do
  cat $k-$t-r*.err > $k-$t.all; echo "$k t=$t"; python3 $REPO/docs/benchmarks/data/cpu-16core/session30-steps.py.txt $k-$t.all gapbs-l-$t.log
done; done >> $OUT/summary.txt 2>&1
cat $OUT/summary.txt
timeout $((470 - SECONDS)) env THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS="bfs sssp" GRAPHS="twitter moscow web roadNE grid" \
  bash $REPO/scripts/bench_cpu.sh $GAPBS $W > $OUT/table-bfs-sssp.md 2>&1
echo "bfs/sssp table done at $SECONDS s"
timeout $((560 - SECONDS)) env BASE=$B/chatty-t29 THREADS="1 4 16" TRIALS=3 ROUNDS=3 KERNELS=pr GRAPHS=grid \
  bash $REPO/scripts/bench_cpu.sh $GAPBS $W > $OUT/table-pr-grid.md 2>&1
echo "pr grid done at $SECONDS s"
tar -cJf $OUT/logs.tar.xz *.log *.err *.json rows.md 2>/dev/null
grep "|" $OUT/table-bfs-sssp.md | tail -6; grep "|" $OUT/table-pr-grid.md
