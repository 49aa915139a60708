// The turbo rotation on rows held in shared memory (kv-formats.md): rotate the query once per
// workgroup, inverse-rotate the output once. Never per cached element.
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

float inv_sqrt_group(uint group) { return group == 128 ? 0.08838834764831845 : 0.125; }

#endif
