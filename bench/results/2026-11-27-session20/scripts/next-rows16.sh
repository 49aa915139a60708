#!/usr/bin/env bash
# Prepared for the next GPU session (branch tc-rows16, not run in session 20: no device time left).
# The tc kernel's rows16 form: up to 16 query rows a workgroup on the MMAs' 16-row side (KHR
# matrices), which the plan takes above 8 rows (not for f16 rows unless asked) (llama8b m 3: 12 rows in one workgroup
# instead of two of 6; m 8: two of 16 instead of four of 8). Expected (H100, turbo3 32K, session
# 20's targets run): m 3 50.9 -> ~36 us (about m 2's 34.9: P6b 1.46x -> ~1.05x), m 8 88.3 -> ~70
# (P6a 3.05x -> ~2.4x); registers ~190 (two workgroups an SM, as the wide form). If the tests fail,
# their output says which rows / tokens / dims are wrong (header of shaders/decode_tc.comp: the
# fragment orders it assumes). Each step writes its progress to $OUT as it goes; a cold machine
# compiles every pipeline first (session 20: test_decode_tc 57 s cold, 3 s warm).
# Binaries from the branch's build, carried in .pk/bins.tar.xz: build-slim/profile/turboprof,
# build-slim/tests/test_decode_tc, test_append_decode, test_decode; and main's turboprof as
# build-slim/profile/turboprof_base (for the columns form's conditional rescale, m 1). `$0 tests`
# runs the tests, `$0 profile` rows16's timings, `$0 m1` the rescale's and the loops' machine code
# (each fits one call of 600 s on a cold machine; all three: `$0`).
PART=${1:-all}
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS
lg() { echo "[$((SECONDS-T0))s] $*" >> $R/progress.txt; }
lg start
if [[ $PART == all || $PART == tests ]]; then
timeout 150 build-slim/tests/test_decode_tc > $R/test_decode_tc.txt 2>&1; lg "test_decode_tc rc $?"
grep -E "rows16|FAILED|Failure" $R/test_decode_tc.txt | head -40 >> $R/progress.txt
timeout 120 build-slim/tests/test_append_decode --gtest_brief=1 > $R/test_append_decode.txt 2>&1; lg "test_append_decode rc $?"
timeout 60 build-slim/tests/test_decode --gtest_brief=1 --gtest_filter='*SplitInvariance*:*EveryTypePair*' > $R/test_decode.txt 2>&1; lg "test_decode rc $?"
fi
[[ $PART == tests ]] && { cat $R/progress.txt; exit 0; }
if [[ $PART == all || $PART == profile ]]; then
# rows16 off (the columns: wide 6/8-row chunks) against the plan's (rows16 above 8 rows), m 2 as
# the control (8 rows: the wide form either way) and m 1 with rows16 forced (4 live rows of 16).
for round in 1 2; do
  for r in 0 auto; do
    for m in 2 3 8; do
      env $([ $r = 0 ] && echo TKV_ROWS16=0) TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 60 build-slim/profile/turboprof profile \
        --types turbo3,turbo2,turbo4,q8_0 --ctx 8k,32k --m $m --modes 0 --repeat 10 2>&1 |
        grep -E '^(turbo|q8_0)|pipeline decode_tc|rror' | sed "s/^/$round r$r-m$m /" >> $R/profile.txt
      lg "r$round rows16=$r m$m rc $?"
    done
  done
  # 8 rows (m 2) on the MMAs' 16-row side against the wide form: whether m 2 should take it too (P6b)
  TKV_ROWS16=1 TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 60 build-slim/profile/turboprof profile \
    --types turbo3,turbo2,turbo4,q8_0 --ctx 8k,32k --m 2 --modes 0 --repeat 10 2>&1 |
    grep -E '^(turbo|q8_0)|pipeline decode_tc|rror' | sed "s/^/$round r1-m2 /" >> $R/profile.txt
  TKV_ROWS16=1 timeout 60 build-slim/profile/turboprof profile --types turbo3 --ctx 8k,32k --m 1 --modes 0 --repeat 10 2>&1 |
    grep -E '^(turbo)|rror' | sed "s/^/$round r1-m1 /" >> $R/profile.txt
  timeout 60 build-slim/profile/turboprof profile --types turbo3 --ctx 8k,32k --m 1 --modes 0 --repeat 10 2>&1 |
    grep -E '^(turbo)|rror' | sed "s/^/$round rauto-m1 /" >> $R/profile.txt
  for r in 0 1; do  # f16 rows: rows16 only on request (their words beside Q's and O's registers)
    TKV_ROWS16=$r TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 60 build-slim/profile/turboprof profile --types f16 --ctx 32k --m 3 \
      --modes 0 --repeat 10 2>&1 | grep -E '^(f16)|pipeline decode_tc|rror' | sed "s/^/$round r$r-f16m3 /" >> $R/profile.txt
  done
  lg "r$round m1 done"
done
fi
if [[ $PART == all || $PART == m1 ]]; then
# The columns form's outputs rescaled only where a maximum grew (branch) against main (base), m 1:
# expected a few % where the loop's issue binds (turbo 32K-128K), nothing at 8K.
for round in 1 2; do
  for v in base head; do
    P=build-slim/profile/turboprof; [ $v = base ] && P=build-slim/profile/turboprof_base
    timeout 60 $P profile --types turbo3,turbo2,turbo4,q8_0,f16 --ctx 8k,32k,128k --modes 0 --repeat 10 2>&1 |
      grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round $v-m1 /" >> $R/profile.txt
    lg "r$round $v m1 rc $?"
  done
done
# The tile loops' machine code (bench/sass_dump.py, sass_loop.py): rows16 against the wide form at
# m 3 32K, turbo3 and q8_0; MOV counts (B pairs from (hi, lo) table entries) and LDL / STL (spills).
I=/tmp/r16sass; rm -rf $I; mkdir -p $I
for r in 0 1; do
  TKV_ROWS16=$r TKV_CACHE_DIR=$I/cache$r timeout 60 build-slim/profile/turboprof profile --types turbo3,q8_0 --ctx 32k --m 3 \
    --modes 0 --repeat 3 > /dev/null 2>&1
  python3 bench/sass_dump.py $I/sass$r $I/cache$r > $I/index$r.txt 2>&1
  for f in $I/sass$r/*.sass; do grep -q HMMA "$f" && echo "r$r $f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ') LDL $(grep -c LDL $f) STL $(grep -c STL $f)"; done >> $R/loops.txt 2>&1
done
lg "sass done"
fi
grep -v Register $R/profile.txt > $R/times.txt; python3 bench/ab_summary.py $R/times.txt > $R/summary.txt 2>&1
grep Register $R/profile.txt | grep -o "^1 r[a-z0-9-]*\|Register Count = [0-9]*" | paste - - | sort -u > $R/registers.txt
cat $R/progress.txt $R/summary.txt $R/registers.txt; cut -c1-400 $R/loops.txt
