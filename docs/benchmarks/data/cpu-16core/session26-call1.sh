#!/usr/bin/env bash
# session 26, issue 19, call 1 (as run): the road and web rows at 1/4/16 threads, ours (new:
# 25d24f8, idle workers awake through a kernel) beside its base (old: a1f75d4) and GAPBS
# b5e3e19 built here, two rounds.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; mkdir -p $B/gapbs $B/work
for v in new old; do xz -dc .device-data/bin/chatty-$v.xz > $B/chatty-$v; chmod +x $B/chatty-$v; done
[ -x $B/gapbs/pr_spmv ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
echo "gapbs built at $SECONDS s; $(nproc) cores; THP $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
echo "cpuidle: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>&1) $(cat /sys/devices/system/cpu/cpuidle/current_governor_ro 2>&1); haltpoll ns: $(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>&1)"
export CHATTY_DATASETS=$REPO/.device-data/datasets
timeout 540 env CHATTY=$B/chatty-new BASE=$B/chatty-old THREADS="1 4 16" TRIALS=3 ROUNDS=2 KERNELS="bfs sssp pr wcc bc" \
  GRAPHS="moscow roadNE web" bash scripts/bench_cpu.sh $B/gapbs $B/work > $OUT/table.md 2>&1
echo "table done at $SECONDS s"
grep "|" $OUT/table.md
