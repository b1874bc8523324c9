#!/usr/bin/env bash
# session 21, call 9 (as run): the multi-GPU split without the weights the kernel does
# not read: the GPU tests of split runs (two and four parts of the one GPU, two
# "processes"), then rmat24 bfs and pr as two parts, old (before) and new, the split's
# and the upload's seconds.
export NCCL_NVLS_ENABLE=0
B=/tmp/b; mkdir -p $B/work
for f in chatty-mpi chatty-old gpu-test; do xz -dc .device-data/bin/$f.xz > $B/$f; chmod +x $B/$f; done
CHATTY_DATASETS=$(realpath .device-data/datasets) timeout 170 $B/gpu-test --test-threads 1 multi_gpu_matches four_parts parts_in_several > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E "^test |test result" $OUT/tests.txt
[ $SECONDS -lt 180 ] || exit 0
$B/chatty-mpi generate rmat -s 24 -e 16 --weights 255 -o $B/work/r24.cgr -q
for alg in bfs pr; do for b in old mpi; do
  $B/chatty-$b run $alg $B/work/r24.cgr --engine gpu --devices 0,0 -n 2 --json --max-iters 10 --tolerance 0 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); d=j['detail']
print('$alg $b', 'split %.3f s' % d['split_seconds'], 'upload %.3f s' % d['upload_seconds'], '%.2f GB' % (d['upload_bytes']/1e9), 'prepare %.3f s' % j['prepare_seconds'])"
done; done
echo "done at $SECONDS s"
