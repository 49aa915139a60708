/* A C program using the installed C API: one decode over an f16 cache, checked against attention
 * computed here in double precision; then, given a path (argv[1]), the sequence saved to a cache
 * file, removed and loaded back, decoding to the same output. Exit status 0 when all agree. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <turbokv/turbokv.h>

enum { KV_HEADS = 2, Q_HEADS = 4, DIM = 64, TOKENS = 40 };

static float next_value(unsigned* state) { /* a small LCG: values in [-1, 1) */
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static int fail(const char* what, tkv_status s) {
  fprintf(stderr, "consumer_c: %s failed: %s: %s\n", what, tkv_status_name(s), tkv_last_error());
  return 1;
}

int main(int argc, char** argv) {
  static float k[TOKENS * KV_HEADS * DIM], v[TOKENS * KV_HEADS * DIM], q[Q_HEADS * DIM], out[Q_HEADS * DIM],
      again[Q_HEADS * DIM];
  unsigned state = 12345u;
  tkv_engine* engine = NULL;
  tkv_cache* cache = NULL;
  tkv_decoder* decoder = NULL;
  tkv_cache_config config;
  tkv_device_info info;
  uint32_t seq = 0;
  tkv_status s;
  double worst = 0.0;
  int i, h, t, d;

  for (i = 0; i < TOKENS * KV_HEADS * DIM; ++i) {
    k[i] = next_value(&state);
    v[i] = next_value(&state);
  }
  for (i = 0; i < Q_HEADS * DIM; ++i) q[i] = next_value(&state);

  if ((s = tkv_engine_create(NULL, &engine)) != TKV_SUCCESS) return fail("tkv_engine_create", s);
  if ((s = tkv_engine_get_info(engine, &info)) != TKV_SUCCESS) return fail("tkv_engine_get_info", s);
  tkv_cache_config_init(&config);
  config.layers = 1;
  config.kv_heads = KV_HEADS;
  config.head_dim = DIM;
  config.capacity_tokens = 64;
  config.max_sequences = 1;
  if ((s = tkv_cache_create(engine, &config, &cache)) != TKV_SUCCESS) return fail("tkv_cache_create", s);
  if ((s = tkv_decoder_create(cache, Q_HEADS, &decoder)) != TKV_SUCCESS) return fail("tkv_decoder_create", s);
  if ((s = tkv_cache_create_sequence(cache, &seq)) != TKV_SUCCESS) return fail("tkv_cache_create_sequence", s);
  if ((s = tkv_cache_append(cache, seq, 0, TOKENS, k, TKV_FORMAT_F32, v, TKV_FORMAT_F32)) != TKV_SUCCESS)
    return fail("tkv_cache_append", s);
  if ((s = tkv_decode(decoder, 0, &seq, 1, 1, q, sizeof q, TKV_FORMAT_F32, out, sizeof out, TKV_FORMAT_F32, NULL)) !=
      TKV_SUCCESS)
    return fail("tkv_decode", s);
  /* A failing call reports a status and a message, no crash. */
  if (tkv_cache_length(cache, seq + 7, 0, &seq) != TKV_ERROR_NOT_FOUND || tkv_last_error()[0] == '\0') {
    fprintf(stderr, "consumer_c: an unknown sequence was not reported as TKV_ERROR_NOT_FOUND\n");
    return 1;
  }

  for (h = 0; h < Q_HEADS; ++h) { /* exact attention, query head h reads KV head h / (Q_HEADS / KV_HEADS) */
    const int kv = h / (Q_HEADS / KV_HEADS);
    double scores[TOKENS], max = -1e300, sum = 0.0, diff = 0.0, norm = 0.0;
    for (t = 0; t < TOKENS; ++t) {
      double dot = 0.0;
      for (d = 0; d < DIM; ++d) dot += (double)q[h * DIM + d] * k[(t * KV_HEADS + kv) * DIM + d];
      scores[t] = dot / sqrt((double)DIM);
      if (scores[t] > max) max = scores[t];
    }
    for (t = 0; t < TOKENS; ++t) sum += scores[t] = exp(scores[t] - max);
    for (d = 0; d < DIM; ++d) {
      double o = 0.0;
      for (t = 0; t < TOKENS; ++t) o += scores[t] / sum * v[(t * KV_HEADS + kv) * DIM + d];
      diff += (out[h * DIM + d] - o) * (out[h * DIM + d] - o);
      norm += o * o;
    }
    if (sqrt(diff / norm) > worst) worst = sqrt(diff / norm);
  }
  if (argc > 1) { /* the cache file round trip: the loaded sequence decodes bit for bit the same */
    tkv_cache_file_info file;
    uint32_t loaded[1], count = 0;
    if ((s = tkv_cache_save(cache, &seq, 1, argv[1])) != TKV_SUCCESS) return fail("tkv_cache_save", s);
    if ((s = tkv_cache_file_inspect(argv[1], &file)) != TKV_SUCCESS) return fail("tkv_cache_file_inspect", s);
    if ((s = tkv_cache_remove_sequence(cache, seq)) != TKV_SUCCESS) return fail("tkv_cache_remove_sequence", s);
    if ((s = tkv_cache_load(cache, argv[1], loaded, 1, &count)) != TKV_SUCCESS) return fail("tkv_cache_load", s);
    if ((s = tkv_decode(decoder, 0, loaded, 1, 1, q, sizeof q, TKV_FORMAT_F32, again, sizeof again, TKV_FORMAT_F32,
                        NULL)) != TKV_SUCCESS)
      return fail("tkv_decode after the load", s);
    if (file.sequence_count != 1 || file.tokens != TOKENS || count != 1 || memcmp(out, again, sizeof out) != 0) {
      fprintf(stderr, "consumer_c: the cache file round trip changed the sequence\n");
      return 1;
    }
    remove(argv[1]);
    printf("consumer_c: cache file of %llu bytes saved and loaded back: the same output\n",
           (unsigned long long)file.file_bytes);
  }
  tkv_decoder_destroy(decoder);
  tkv_cache_destroy(cache);
  tkv_engine_destroy(engine);
  printf("consumer_c: turbokv %s on %s: worst head error %.2e\n", tkv_version(), info.name, worst);
  return worst < 1e-2 ? 0 : 1;
}
