// The turbo rotation on rows held in shared memory or in a subgroup's registers (kv-formats.md):
// rotate the query once per workgroup, inverse-rotate the output once. Never per cached element.
// Needs, before inclusion: codebooks.glsl. The rows live in shared memory: GET(j, d) reads
// element d of row j (a float), SET(j, d, v) writes it.
#ifndef TKV_ROTATION_GLSL
#define TKV_ROTATION_GLSL

// In-place unnormalised Walsh-Hadamard butterflies over groups of `group` elements of `dims`
// elements in each of `rows` rows, by all invocations of the workgroup (ends with a barrier).
#define TKV_DEFINE_HADAMARD(NAME, GET, SET)                                            \
  void NAME(uint rows, uint dims, uint group, uint tid, uint nthreads) {               \
    const uint pairs = rows * (dims / 2);                                              \
    for (uint h = 1; h < group; h <<= 1) {                                             \
      for (uint p = tid; p < pairs; p += nthreads) {                                   \
        const uint j = p / (dims / 2), pr = p % (dims / 2);                            \
        const uint base = (pr / (group / 2)) * group, q = pr % (group / 2);           \
        const uint i = base + (q / h) * 2 * h + (q % h);                               \
        const float a = GET(j, i), b = GET(j, i + h);                                  \
        SET(j, i, a + b);                                                              \
        SET(j, i + h, a - b);                                                          \
      }                                                                                \
      barrier();                                                                       \
    }                                                                                  \
  }

// The same butterflies on a row held by a subgroup of WIDTH lanes in registers (dim lane +
// WIDTH i in x[i], i < REGS of the LEN the array has), over groups of GROUP dims: across lanes by
// shuffles (h < WIDTH), then across registers in pairs (h = WIDTH x 1, 2, ...), in ascending h as
// the shared-memory form; no shared memory, no barrier. A WIDTH wider than GROUP keeps each
// group within its lanes. (A macro, so that the array stays the caller's registers: LEN is a
// compile-time constant.) Needs GL_KHR_shader_subgroup_shuffle.
#define TKV_HADAMARD_REGISTERS(x, LEN, REGS, GROUP, lane, WIDTH)                       \
  {                                                                                    \
    [[unroll]] for (uint h_ = 1u; h_ < 64u; h_ <<= 1)                                  \
      if (h_ < (WIDTH) && h_ < (GROUP))                                                \
        [[unroll]] for (uint i_ = 0; i_ < (LEN); ++i_)                                 \
          if (i_ < (REGS)) {                                                           \
            const float o_ = subgroupShuffleXor(x[i_], h_);                            \
            x[i_] = ((lane) & h_) == 0u ? x[i_] + o_ : o_ - x[i_];                     \
          }                                                                            \
    [[unroll]] for (uint h_ = 1u; h_ < (LEN); h_ <<= 1) /* registers i, i + h */       \
      [[unroll]] for (uint i_ = 0; i_ < (LEN); ++i_)                                   \
        if ((i_ & h_) == 0u && i_ + h_ < (REGS) && (WIDTH) * h_ < (GROUP)) {           \
          const float a_ = x[i_], c_ = x[i_ + h_];                                     \
          x[i_] = a_ + c_;                                                             \
          x[i_ + h_] = a_ - c_;                                                        \
        }                                                                              \
  }

float inv_sqrt_group(uint group) { return group == 128 ? 0.08838834764831845 : 0.125; }

#endif
