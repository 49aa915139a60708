// Codebooks and midpoints of kv-formats.md, as the same fp32 literals kvcache/types.cpp uses.
#ifndef TKV_CODEBOOKS_GLSL
#define TKV_CODEBOOKS_GLSL

const float C2[4] = float[](-0.133462, -0.039994, 0.039994, 0.133462);
const float M2[3] = float[](-0.086728, 0.0, 0.086728);
const float C3[8] = float[](-0.190685, -0.117832, -0.065717, -0.021460, 0.021460, 0.065717, 0.117832, 0.190685);
const float M3[7] = float[](-0.154259, -0.091775, -0.043589, 0.0, 0.043589, 0.091775, 0.154259);
const float C4[16] = float[](-0.241556, -0.182907, -0.143047, -0.111065, -0.083317, -0.058069, -0.034311, -0.011353,
                             0.011353, 0.034311, 0.058069, 0.083317, 0.111065, 0.143047, 0.182907, 0.241556);
const float M4[15] = float[](-0.212232, -0.162977, -0.127056, -0.097191, -0.070693, -0.046190, -0.022832, 0.0,
                             0.022832, 0.046190, 0.070693, 0.097191, 0.127056, 0.162977, 0.212232);

// Rotation sign masks ("seed 42"): bit i set where the sign is -1; word 0 holds bits 0..31.
const uint S1[4] = uint[](0xe46a0359u, 0x42f85949u, 0xa4c63bbbu, 0x49f250a9u);
const uint S2[4] = uint[](0x16acee90u, 0x3f628fdcu, 0xb7a5357au, 0xbea56562u);
// (Words picked by selects, not by a computed index: in unrolled code a computed index into a
// constant array made Mesa's compiler copy the array per use.)
#define TKV_SIGN_WORD(S, i) (((i) & 64u) != 0u ? (((i) & 32u) != 0u ? S[3] : S[2]) : (((i) & 32u) != 0u ? S[1] : S[0]))
float sign1(uint i) { return ((TKV_SIGN_WORD(S1, i) >> (i & 31u)) & 1u) != 0u ? -1.0 : 1.0; }
float sign2(uint i) { return ((TKV_SIGN_WORD(S2, i) >> (i & 31u)) & 1u) != 0u ? -1.0 : 1.0; }

#endif
