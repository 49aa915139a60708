#!/usr/bin/env bash
# Session 18 run 5 (diagnostic): the machine code of the plain and fused timeline kernels (turbo3
# tc, f16 scalar at 4K), each pipeline cache apart, through bench/sass_dump.py and sass_loop.py.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/run5; mkdir -p $R
for mode in plain fused; do
  f=""; [ $mode = fused ] && f=--fused
  TKV_CACHE_DIR=/tmp/c-$mode timeout 60 build-ab/turboprof-head timeline $f --types turbo3,f16 --ctx 4k --repeat 5 > $R/timeline-$mode.txt 2>&1
  python3 bench/sass_dump.py $R/sass-$mode /tmp/c-$mode > $R/dump-$mode.txt 2>&1
  for s in $R/sass-$mode/*.sass; do
    echo "== $s $(grep -c '/\*[0-9a-f]*\*/' $s) lines; MATCH $(grep -c MATCH $s) VOTE $(grep -c VOTE $s) BRA.CONV $(grep -c 'BRA.CONV\|BRA.DIV' $s) WARPSYNC $(grep -c WARPSYNC $s) BSSY $(grep -c BSSY $s) HMMA $(grep -c HMMA $s)"
    python3 bench/sass_loop.py $s --holds HMMA 2>&1 | head -12
  done > $R/loops-$mode.txt 2>&1
done
tar czf $OUT/run5.tar.gz -C /tmp run5
cat $R/dump-plain.txt $R/dump-fused.txt | cut -c1-200; grep -h "==" $R/loops-*.txt
