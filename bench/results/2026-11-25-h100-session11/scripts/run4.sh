# Session 11, run 4: mode 0 against mode 1 in the tc tile loop's machine code (8ffcdb9, turbo3,
# 32K): does mode 1 drop the fields' extraction? Instruction mix of both loops, and the times.
source bench/gpu_env.sh build-run/profile/turboprof_base
I=/tmp/s11r4; rm -rf $I; mkdir -p $I
TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache timeout 90 build-run/profile/turboprof_base profile \
  --workload llama8b --ctx 32k,128k --types turbo3 --modes 0,1 --repeat 30 > $I/run.txt 2>&1
python3 bench/sass_dump.py $I/sass $I/cache > $I/sass_index.txt 2>&1
for f in $I/sass/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops.txt 2>&1
grep "decode_tc" $I/run.txt | grep "Register Count" | cut -c1-300 > $I/stats.txt
rm -rf $I/cache
tar czf $OUT/run4.tar.gz -C /tmp s11r4
