/* A C caller of the C API (compiled as C99: the header must be pure C). Used by test_capi.cpp. */
#include <stddef.h>
#include <stdint.h>

#include "turbokv/turbokv.h"

/* One decode from C: an engine of its own, a one-layer f16 cache, one sequence of `tokens` rows,
 * one query per head. Returns the status of the first call that failed (its name in *step), or
 * TKV_SUCCESS with out filled ([q_heads][head_dim]). */
tkv_status capi_c_decode(uint32_t kv_heads, uint32_t q_heads, uint32_t head_dim, uint32_t tokens, const float* k,
                         const float* v, const float* q, float* out, const char** step) {
  tkv_engine* engine = NULL;
  tkv_cache* cache = NULL;
  tkv_decoder* decoder = NULL;
  tkv_cache_config config;
  tkv_decode_options options;
  uint32_t seq = 0, length = 0;
  const size_t elements = (size_t)q_heads * head_dim;
  tkv_status s;

  *step = "tkv_engine_create";
  s = tkv_engine_create(NULL, &engine);
  if (s != TKV_SUCCESS) goto done;
  tkv_cache_config_init(&config);
  config.layers = 1;
  config.kv_heads = kv_heads;
  config.head_dim = head_dim;
  config.page_size = 16;
  config.capacity_tokens = tokens;
  config.max_sequences = 1;
  *step = "tkv_cache_create";
  s = tkv_cache_create(engine, &config, &cache);
  if (s != TKV_SUCCESS) goto done;
  *step = "tkv_decoder_create";
  s = tkv_decoder_create(cache, q_heads, &decoder);
  if (s != TKV_SUCCESS) goto done;
  *step = "tkv_cache_create_sequence";
  s = tkv_cache_create_sequence(cache, &seq);
  if (s != TKV_SUCCESS) goto done;
  *step = "tkv_cache_append";
  s = tkv_cache_append(cache, seq, TKV_ALL_LAYERS, tokens, k, TKV_FORMAT_F32, v, TKV_FORMAT_F32);
  if (s != TKV_SUCCESS) goto done;
  *step = "tkv_cache_length";
  s = tkv_cache_length(cache, seq, TKV_ALL_LAYERS, &length);
  if (s != TKV_SUCCESS) goto done;
  if (length != tokens) {
    s = TKV_ERROR_INTERNAL;
    goto done;
  }
  tkv_decode_options_init(&options);
  *step = "tkv_decode";
  s = tkv_decode(decoder, 0, &seq, 1, 1, q, elements * sizeof(float), TKV_FORMAT_F32, out, elements * sizeof(float),
                 TKV_FORMAT_F32, &options);
done:
  /* Any order: the decoder holds the cache, the cache the engine. */
  tkv_engine_destroy(engine);
  tkv_cache_destroy(cache);
  tkv_decoder_destroy(decoder);
  return s;
}
