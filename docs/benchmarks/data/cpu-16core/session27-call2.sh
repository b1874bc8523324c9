#!/usr/bin/env bash
# session 27, issue 19, call 2 (as run): page faults and trial times of ours (e826044) under
# glibc malloc settings (GLIBC_TUNABLES: mmap_max=0, arena_max=1, both) on grid and road-NE;
# then the table's scale-22 rows (kron22, urand22) with ours under mmap_max=0 (a wrapper) beside
# the plain build as BASE, and GAPBS b5e3e19 built here, one round.
# (The survey above left out --engine cpu and so measured the GPU engine on that host; its output is
# kept marked as unusable: session27-call2-faults-gpu-engine.txt.)
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
xz -dc .device-data/bin/chatty-new.xz > $B/chatty-new; chmod +x $B/chatty-new
printf '#!/bin/sh\nGLIBC_TUNABLES=glibc.malloc.mmap_max=0 exec %s "$@"\n' $B/chatty-new > $B/chatty-nommap; chmod +x $B/chatty-nommap
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
echo "gapbs built at $SECONDS s; glibc $(ldd --version | head -1)"
export CHATTY_DATASETS=$REPO/.device-data/datasets
(cd $B/work && CHATTY=$B/chatty-new GAPBS=$B/gapbs DATASETS=$CHATTY_DATASETS bash -c "source $REPO/scripts/gapbs_graphs.sh; for g in roadNE grid; do make_graph \$g; done") > /dev/null 2>&1
python3 - $B <<'PY' 2>&1 | tee $OUT/faults.txt
import os, re, resource, statistics, subprocess, sys
b = sys.argv[1]
def run(tun, args):
    env = dict(os.environ)
    if tun: env["GLIBC_TUNABLES"] = tun
    f0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    out = subprocess.run(args, env=env, capture_output=True, text=True).stdout
    f1 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    return f1 - f0, [float(x) for x in re.findall(r"Trial Time:\s+([\d.]+)", out)]
cases = [("pr", "grid", []), ("pr", "roadNE", []), ("bc", "roadNE", ["--zero-based", "--sources", "7,7,7,7"])]
for k, g, extra in cases:
    for t in ("1", "16"):
        for tun in ("", "glibc.malloc.mmap_max=0", "glibc.malloc.arena_max=1", "glibc.malloc.arena_max=1:glibc.malloc.mmap_max=0"):
            args = [f"{b}/chatty-new", "run", k, f"{b}/work/{g}.cgr", "--threads", t] + extra
            f1, _ = run(tun, args + ["-n", "1"])
            f11, times = run(tun, args + ["-n", "11"])
            later = times[1:]
            print(f"{k} {g} threads {t:>2} {tun or 'default':48} faults per later trial {(f11 - f1) / 10:8.0f} | first trial {times[0]:.4f} s, later median {statistics.median(later):.4f} min {min(later):.4f}", flush=True)
PY
echo "faults done at $SECONDS s"
timeout $((585 - SECONDS)) env CHATTY=$B/chatty-nommap BASE=$B/chatty-new THREADS="1 4 16" TRIALS=3 ROUNDS=1 KERNELS="bfs sssp pr wcc bc" \
  GRAPHS="kron22 urand22" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"
grep "|" $OUT/table.md | tail -6
