// The end of a split-K decode call, inside the decode dispatch itself (decode.comp, decode_tc.comp):
// each split of a (sequence, KV head, row chunk) group writes its partials (m, l, o per query
// row), counts itself in, and the group's last workgroup to arrive merges them and finishes the
// rows (normalise, undo the V rotation, store). So a call is one dispatch. (H100, turbo3: leaving
// out the separate merge dispatch this replaced saved 5.3 us per call at 64 tokens and 9.5 at 128K;
// this tail costs most of that back, a chain of round trips to L2: the fence before the count, the
// count, the partials' loads. Net: 0.8-2 us faster per call at 64 tokens to 128K.)
//
// Partials: row gr of group (b, kvh), split s at vec4 ((((b KV_HEADS + kvh) RM + gr) slots + s)
// PSTRIDE4: (m, l, -, -), then o[V_DIM] as vec4s. Stored and loaded a vec4 at a time: NVIDIA's
// kernels pay for each access to a coherent buffer (H200, session 15: the same stores as floats
// cost 0.3-1.3 us more per call).
// Arrivals: one counter per group, zero between calls: the last arrival sets it back to 0 (the
// host zeroes the buffer when it makes it).
//
// Needs, before inclusion: codebooks.glsl, rotation.glsl; the constants
// V_TYPE, HEAD_DIM, V_DIM, V_GROUP, KV_HEADS, GQA, M, RM, Q_HEADS, ROWS, OUT_F16; the
// push constants pc.splits, pc.out_offset; the outputs out32 / out16.
#ifndef TKV_SPLIT_MERGE_GLSL
#define TKV_SPLIT_MERGE_GLSL

// Bindings 6 and 7 of both decode shaders.
layout(std430, binding = 6) coherent buffer Partials { vec4 part4[]; };
layout(std430, binding = 7) coherent buffer Arrivals { uint arrivals[]; };

const uint PSTRIDE4 = V_DIM / 4 + 1;  // vec4s per partial row

// Split slots per query row: the grid's splits, and with the scalar kernel's fused append
// (TKV_APPEND_TAIL, append_tail.glsl) one more for the tail.
#ifdef TKV_APPEND_TAIL
uint split_slots() { return pc.splits + 1u; }
#else
uint split_slots() { return pc.splits; }
#endif

// Where split `split` of group (b, kvh) keeps query row gr's partials: vec4 k4 0 is (m, l, -, -),
// 1 + d4 is o[4 d4 .. 4 d4 + 3].
uint partial_index4(uint b, uint kvh, uint gr, uint split, uint k4) {
  return (((b * KV_HEADS + kvh) * RM + gr) * split_slots() + split) * PSTRIDE4 + k4;
}

// The first o dim of a row's vec4 k4 (0 for k4 0, which holds m and l): the splits store their
// partials in a loop over (row, k4) < (ROWS, PSTRIDE4).
uint partial_dim4(uint k4) { return 4u * (max(k4, 1u) - 1u); }

// Splits of a sequence of `len` tokens that hold tokens (the others leave at once).
uint splits_with_tokens(uint len, uint chunk) { return min(pc.splits, (len + chunk - 1u) / chunk); }

shared uint merge_last;
shared float merge_l[ROWS];  // per row: the merged l

// The arrival counter of group (sequence b, KV head kvh, row chunk): one per (z, y) of the grid,
// whose y is row chunk x KV_HEADS + KV head (attention/decoder.cpp).
uint group_of(uint b, uint kvh, uint row_chunk) { return b * gl_NumWorkGroups.y + row_chunk * KV_HEADS + kvh; }

// After the workgroup wrote its partials: true in the group's last workgroup to get here, whose
// reads of the partials then see every split's writes (a fence on each side of the count, as in
// CUDA's threadfence reduction). Uniform over the workgroup.
bool arrive_last(uint group, uint n) {
  memoryBarrierBuffer();  // this invocation's partials are written device-wide before the count
  barrier();
  if (gl_LocalInvocationIndex == 0u) {
    const bool last = atomicAdd(arrivals[group], 1u) == n - 1u;
    if (last) atomicExchange(arrivals[group], 0u);  // every split arrived: ready for the next call
    merge_last = last ? 1u : 0u;
  }
  barrier();
  const bool last = merge_last != 0u;
  if (last) memoryBarrierBuffer();
  return last;
}

// Merges the n splits' partials of the group's query rows row0 .. row0 + ROWS - 1 into unscaled
// output rows SET(j, d, value) and their sums merge_l[j] (ends with a barrier). An invocation per
// vec4 of a row merges it over the splits online (running maximum), MERGE_BATCH splits' loads in
// flight at a time: each batch costs one round trip to L2, the tail's critical path. 17, not 16:
// the plans' split counts are mostly multiples of 16 (32, 48; 49 at m 1 128K), and a fused call
// has one slot more (its tail's), so 16 left a batch of one for 33 or 49 slots (3 and 4 round
// trips where 2 and 3 hold them).
const uint MERGE_BATCH = 17;
#define TKV_DEFINE_MERGE_SPLITS(NAME, SET)                                                          \
  void NAME(uint b, uint kvh, uint row0, uint n, uint tid, uint nthreads) {                        \
    for (uint e = tid; e < ROWS * (V_DIM / 4u); e += nthreads) {                                    \
      const uint j = e / (V_DIM / 4u), d4 = e % (V_DIM / 4u), gr = row0 + j;                        \
      if (gr >= RM) continue;                                                                       \
      float run_m = -1.0 / 0.0, run_l = 0.0;                                                        \
      vec4 acc = vec4(0.0);                                                                         \
      for (uint s0 = 0; s0 < n; s0 += MERGE_BATCH) {                                                \
        float mb[MERGE_BATCH], lb[MERGE_BATCH];                                                     \
        vec4 ob[MERGE_BATCH];                                                                       \
        [[unroll]] for (uint i = 0; i < MERGE_BATCH; ++i) {                                         \
          const uint s = min(s0 + i, n - 1u);                                                       \
          const vec4 ml = part4[partial_index4(b, kvh, gr, s, 0u)];                                 \
          mb[i] = s0 + i < n ? ml.x : -1.0 / 0.0;                                                   \
          lb[i] = ml.y;                                                                             \
          ob[i] = part4[partial_index4(b, kvh, gr, s, 1u + d4)];                                    \
        }                                                                                           \
        float mx = run_m;                                                                           \
        [[unroll]] for (uint i = 0; i < MERGE_BATCH; ++i) mx = max(mx, mb[i]);                     \
        if (mx == -1.0 / 0.0) continue;                                                             \
        const float a = run_m == -1.0 / 0.0 ? 0.0 : exp(run_m - mx);                                \
        acc *= a;                                                                                   \
        run_l *= a;                                                                                 \
        [[unroll]] for (uint i = 0; i < MERGE_BATCH; ++i) {                                         \
          const float w = mb[i] == -1.0 / 0.0 ? 0.0 : exp(mb[i] - mx);                              \
          acc += w * ob[i];                                                                         \
          run_l += w * lb[i];                                                                       \
        }                                                                                           \
        run_m = mx;                                                                                 \
      }                                                                                             \
      [[unroll]] for (uint i = 0; i < 4u; ++i) SET(j, 4u * d4 + i, acc[i]);                         \
      if (d4 == 0u) merge_l[j] = run_l;                                                             \
    }                                                                                               \
    barrier();                                                                                      \
  }

// Stores dim d of the group's query row gr, v normalised and inverse-rotated but for the last
// signs and scale (turbo V), to out.
void store_out(uint b, uint kvh, uint gr, uint d, float v) {
  if (V_TYPE >= TYPE_TURBO2) v *= sign1(d % V_GROUP) * inv_sqrt_group(V_GROUP);
  const uint m = gr / GQA, qh = kvh * GQA + gr % GQA;
  const uint index = pc.out_offset + ((b * M + m) * Q_HEADS + qh) * HEAD_DIM + d;
  if (OUT_F16 != 0) out16[index] = uint16_t(packHalf2x16(vec2(v, 0.0)) & 0xffffu);
  else out32[index] = v;
}

// Finishes the group's rows GET(j, d) (unscaled; sums merge_l[j]): normalises, undoes the V
// rotation (turbo V: signs, Hadamard over each group of V_GROUP dims, signs), stores to out.
// With whole subgroups of 32 a subgroup takes a row at a time in registers (dim lane + 32 i in
// x[i], TKV_HADAMARD_REGISTERS: no barrier); otherwise the rows are transformed in place in shared
// memory by the whole workgroup (HADAMARD, a barrier per level).
#define TKV_DEFINE_FINISH_ROWS(NAME, GET, SET, HADAMARD)                                            \
  void NAME(uint b, uint kvh, uint row0, uint tid, uint nthreads) {                                \
    if (gl_SubgroupSize == 32u && nthreads % 32u == 0u && V_DIM % 32u == 0u && V_DIM <= 256u &&     \
        V_GROUP >= 32u) {                                                                           \
      const uint lane = gl_SubgroupInvocationID, NR = V_DIM / 32u;                                  \
      for (uint j = gl_SubgroupID; j < ROWS; j += nthreads / 32u) {                                 \
        const uint gr = row0 + j;                                                                   \
        if (gr >= RM) break;                                                                        \
        const float inv_l = 1.0 / merge_l[j];                                                       \
        float x[8];                                                                                 \
        [[unroll]] for (uint i = 0; i < 8u; ++i) {                                                  \
          const uint d = lane + 32u * i;                                                            \
          x[i] = i < NR ? GET(j, d) * inv_l * (V_TYPE >= TYPE_TURBO2 ? sign2(d % V_GROUP) : 1.0) : 0.0; \
        }                                                                                           \
        if (V_TYPE >= TYPE_TURBO2) TKV_HADAMARD_REGISTERS(x, 8u, NR, V_GROUP, lane, 32u)                 \
        [[unroll]] for (uint i = 0; i < 8u; ++i)                                                    \
          if (i < NR && lane + 32u * i < HEAD_DIM) store_out(b, kvh, gr, lane + 32u * i, x[i]);     \
      }                                                                                             \
      return;                                                                                       \
    }                                                                                               \
    if (V_TYPE >= TYPE_TURBO2) {                                                                    \
      for (uint e = tid; e < ROWS * V_DIM; e += nthreads) {                                         \
        const uint j = e / V_DIM, d = e % V_DIM;                                                    \
        SET(j, d, GET(j, d) * sign2(d % V_GROUP));                                                  \
      }                                                                                             \
      barrier();                                                                                    \
      HADAMARD(ROWS, V_DIM, V_GROUP, tid, nthreads);                                                \
    }                                                                                               \
    for (uint e = tid; e < ROWS * HEAD_DIM; e += nthreads) {                                        \
      const uint j = e / HEAD_DIM, d = e % HEAD_DIM, gr = row0 + j;                                 \
      if (gr < RM) store_out(b, kvh, gr, d, GET(j, d) / merge_l[j]);                                \
    }                                                                                               \
  }

#endif
