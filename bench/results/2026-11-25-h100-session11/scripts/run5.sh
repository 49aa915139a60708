# Session 11, run 5: the tc tile's word index masked to 30 bits (_mask: the loads' addresses as one
# base plus immediate offsets?) against 8a33894 (_base). test_decode_tc on _mask; each build's tile
# loop (turbo3, 32K, modes 0 and 1); modes 0 and 1 at 8K/32K/128K, turbo2/3/4, two rounds.
source bench/gpu_env.sh build-run/profile/turboprof_base
I=/tmp/s11r5; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
timeout 90 build-run/tests/test_decode_tc_mask --gtest_brief=1 > $I/tests.txt 2>&1; echo "tc rc $?" >> $I/tests.txt
for v in base mask; do
  TKV_CACHE_DIR=$I/cache_$v timeout 60 build-run/profile/turboprof_$v profile --workload llama8b --ctx 32k --types turbo3 --modes 0,1 --repeat 5 > /dev/null 2>&1
  python3 bench/sass_dump.py $I/sass_$v $I/cache_$v > /dev/null 2>&1
  for f in $I/sass_$v/*.sass; do grep -q HMMA "$f" && echo "$v $f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done >> $I/loops.txt 2>&1
  rm -rf $I/cache_$v
done
for round in 1 2; do
  for v in base mask; do
    timeout 100 build-run/profile/turboprof_$v profile --workload llama8b --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 \
      --modes 0,1 --repeat 20 > $I/prof_${v}_round$round.txt 2>&1
  done
done
tar czf $OUT/run5.tar.gz -C /tmp s11r5
