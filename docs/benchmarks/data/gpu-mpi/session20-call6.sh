#!/usr/bin/env bash
# session 20, call 6 (as run): BC on several GPUs, its sources split (issue 22, item 3).
# The GPU tests for it, then `chatty run bc` from 64 sources on rmat20 and moscow with
# one GPU and with two and four copies on the one lent H200 (--devices 0,0 / 0,0,0,0:
# the copies share the GPU, so these rows show the split's cost, not its gain); kernel
# ms median of 3; the four-copy run again with --verify (one trial).
export NCCL_NVLS_ENABLE=0
B=/tmp/b; W=$B/work; mkdir -p $W
xz -dc .device-data/bin/chatty-mpi.xz > $B/chatty; chmod +x $B/chatty
xz -dc .device-data/bin/gpu-test.xz > $B/gpu-test; chmod +x $B/gpu-test
C=$B/chatty
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 300 $B/gpu-test --test-threads 1 bc_ > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result|panicked" $OUT/tests.txt
$C generate rmat -s 20 -e 16 --undirected -o $W/rmat20u.cgr -q
$C convert .device-data/datasets/road/moscow-osm.gr.gz -o $W/moscow.cgr -q
row() { python3 -c 'import json,sys,statistics; d=json.load(open(sys.argv[1])); print("%-8s %-12s kernel %9.2f ms  e2e %9.2f ms  sources %s  %s" % (sys.argv[2], sys.argv[3], statistics.median(d["trial_seconds"])*1e3, statistics.median(d["end_to_end_seconds"])*1e3, d["parameters"]["source_count"], d.get("verification") or ""))' $B/r.json "$@"; }
for g in rmat20u moscow; do
  for setup in "--gpus 1" "--devices 0,0" "--devices 0,0,0,0"; do
    timeout 200 $C run bc $W/$g.cgr --engine gpu $setup --sources 64 --seed 1 -n 3 --json > $B/r.json 2> $B/r.err && row $g "${setup#--}" || echo "$g $setup FAILED: $(tail -2 $B/r.err)"
  done
  timeout 200 $C run bc $W/$g.cgr --engine gpu --devices 0,0,0,0 --sources 64 --seed 1 -n 1 --verify --json > $B/r.json 2> $B/r.err && row $g "4 copies" || echo "$g verify FAILED: $(tail -2 $B/r.err)"
done 2>&1 | tee $OUT/rows.txt
