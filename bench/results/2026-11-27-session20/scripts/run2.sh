# Session 20: tc workgroups of 4 / 6 / 8 subgroups (branch tc-subgroups), short calls, progress to $OUT.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS
lg() { echo "[$((SECONDS-T0))s] $*" >> $R/progress.txt; }
for round in 1 2; do
  for g in 4 6; do
    TKV_SUBGROUPS=$g timeout 60 build-slim/profile/turboprof profile --types turbo3,turbo2,turbo4,f16,q8_0 \
      --ctx 8k,32k,64k,128k --modes 0 --repeat 10 2>&1 | grep -E '^(f16|q8_0|turbo)|rror' | sed "s/^/$round sg$g /" >> $R/times.txt
    lg "r$round sg$g rc $?"
  done
  for g in 4 8; do
    TKV_SUBGROUPS=$g timeout 40 build-slim/profile/turboprof profile --types turbo3,f16,q8_0 \
      --ctx 1k,2k,4k --modes 0 --repeat 10 2>&1 | grep -E '^(f16|q8_0|turbo)|rror' | sed "s/^/$round sg$g /" >> $R/times.txt
    lg "r$round short sg$g rc $?"
  done
done
python3 bench/ab_summary.py $R/times.txt > $R/summary.txt 2>&1
cat $R/progress.txt $R/summary.txt
