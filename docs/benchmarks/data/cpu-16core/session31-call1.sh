#!/usr/bin/env bash
# session 31, issue 19, call 1: the order of Afforest's sampled links (wcc).
# chatty-wccx = 04716d0 with wcc.rs's sampling chosen by environment (not committed):
#   R   CHATTY_WCC_LONG=huge   two rounds, each vertex's r-th neighbour per round (HEAD)
#   F   CHATTY_WCC_FUSED=1     one pass linking both sampled neighbours, one compression
# chatty-wccxh = chatty-wccx whose link halves the path it climbs (a non-root's parent
# set to its grandparent, a relaxed store); Rh and Fh are R and F with it.
# CHATTY_WCC_PHASES=1 prints each phase's milliseconds per trial on stderr.
# GAPBS b5e3e19's cc beside each row (its median trial, as ours). Seven graphs, 1/4/16 threads, two rounds, 5 trials.
export NCCL_NVLS_ENABLE=0
REPO=$(pwd); B=/tmp/b; W=$B/work; mkdir -p $B/gapbs $W
for v in wccx wccxh; do xz -dc .device-data/bin/chatty-$v.xz > $B/chatty-$v; chmod +x $B/chatty-$v; done
[ -x $B/gapbs/cc ] || { tar -xf .device-data/gapbs.tar -C $B/gapbs && make -C $B/gapbs -j 16 bfs sssp pr pr_spmv cc bc converter > /dev/null 2>&1; }
echo "gapbs built at $SECONDS s; $(nproc) cores" > $OUT/wcc.txt
export CHATTY=$B/chatty-wccx GAPBS=$B/gapbs DATASETS=$REPO/.device-data/datasets
cd $W && source $REPO/scripts/gapbs_graphs.sh
med() { python3 -c 'import json,sys,statistics; print("%.2f" % (1e3 * statistics.median(json.load(open(sys.argv[1]))["trial_seconds"])))' "$1"; }
for g in kron22 urand22 twitter web grid moscow roadNE; do
  make_graph $g
  echo "$g ready at $SECONDS s" >> $OUT/wcc.txt
  for t in 1 4 16; do
    for r in 1 2; do
      line="$g t=$t r=$r"
      for v in R F Rh Fh; do
        case $v in R*) e=CHATTY_WCC_LONG=4000000000 ;; F*) e=CHATTY_WCC_FUSED=1 ;; esac
        bin=$B/chatty-wccx; [[ $v == *h ]] && bin=$B/chatty-wccxh
        env $e CHATTY_WCC_PHASES=1 $bin run wcc $g.cgr --engine cpu --threads $t -n 5 --json > $v.json 2> ph-$v-$g-$t-$r.txt
        line="$line $v $(med $v.json)"
      done
      OMP_NUM_THREADS=$t $GAPBS/cc -f $g.sg -n 5 > gapbs.log
      line="$line gapbs $(awk '/Trial Time:/ {print $3 * 1000}' gapbs.log | sort -g | sed -n 3p)"
      echo "$line" >> $OUT/wcc.txt
    done
  done
  rm -f $g.sg $g.wsg
  [ $SECONDS -gt 540 ] && break
done
echo "done at $SECONDS s" >> $OUT/wcc.txt
tar -cJf $OUT/phases.tar.xz ph-*.txt
cat $OUT/wcc.txt
