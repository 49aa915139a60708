# Session 13, run 5: the P1-P8 targets at 35f755e (KHR matrices by default), the correctness
# step skipped (run 1 ran test_decode_tc and test_append_decode under KHR on this commit).
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-run bash bench/gpu_session.sh devices targets
