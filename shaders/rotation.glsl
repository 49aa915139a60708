// The turbo rotation on rows held in shared memory (kv-formats.md): rotate the query once per
// workgroup, inverse-rotate the output once. Never per cached element.
// Needs, before inclusion: codebooks.glsl, and a shared float array named by ROT_ARRAY laid out
// so that element d of row j is at ROT_INDEX(j, d).
#ifndef TKV_ROTATION_GLSL
#define TKV_ROTATION_GLSL

// In-place unnormalised Walsh-Hadamard butterflies over groups of `group` elements of `dims`
// elements in each of `rows` rows, by all invocations of the workgroup (ends with a barrier).
#define TKV_DEFINE_HADAMARD(NAME, ARRAY, INDEX)                                        \
  void NAME(uint rows, uint dims, uint group, uint tid, uint nthreads) {               \
    const uint pairs = rows * (dims / 2);                                              \
    for (uint h = 1; h < group; h <<= 1) {                                             \
      for (uint p = tid; p < pairs; p += nthreads) {                                   \
        const uint j = p / (dims / 2), pr = p % (dims / 2);                            \
        const uint base = (pr / (group / 2)) * group, q = pr % (group / 2);           \
        const uint i = base + (q / h) * 2 * h + (q % h);                               \
        const float a = ARRAY[INDEX(j, i)], b = ARRAY[INDEX(j, i + h)];               \
        ARRAY[INDEX(j, i)] = a + b;                                                    \
        ARRAY[INDEX(j, i + h)] = a - b;                                                \
      }                                                                                \
      barrier();                                                                       \
    }                                                                                  \
  }

float inv_sqrt_group(uint group) { return group == 128 ? 0.08838834764831845 : 0.125; }

#endif
