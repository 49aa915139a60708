// turbokv's public C++ API (C++17): a flash-attention decode engine over a compressed KV cache,
// on Vulkan compute, to embed as an inference engine's attention backend.
//
//   auto engine = turbokv::Engine::create();                    // or Engine::adopt(host's device)
//   turbokv::Cache cache(engine, {.layers = 32, .kv_heads = 8, .head_dim = 128,
//                                 .k_type = turbokv::KvType::turbo3, .v_type = turbokv::KvType::turbo3,
//                                 .capacity_tokens = 1 << 16});
//   turbokv::Decoder decoder(cache, /*q_heads=*/32);
//   auto seq = cache.create_sequence();
//   cache.append(seq, layer, n, {k_rows}, {v_rows});            // [n][kv_head][head_dim] f32
//   decoder.decode(layer, seq, 1, {q, q_bytes}, {out, out_bytes});
//
// Every failure throws turbokv::Error (= tkv::Error) with a code and a message naming the
// problem; allocation failure throws std::bad_alloc. The C API is turbokv/turbokv.h.
#pragma once

#include "turbokv/cache.hpp"
#include "turbokv/decoder.hpp"
#include "turbokv/engine.hpp"
#include "turbokv/error.hpp"
#include "turbokv/types.hpp"
