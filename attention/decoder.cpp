#include "attention/decoder.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "attention/timeline.hpp"
#include "kvcache/error.hpp"
#include "kvcache/fp16.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"

namespace tkv {
namespace {

struct DecodePush {
  float scale;
  float softcap;
  uint32_t window;
  uint32_t chunk;
  uint32_t splits;
  uint32_t q_offset;
  uint32_t out_offset;
  uint32_t zero;  // always 0 (keeps profile mode 4's loads alive)
  uint32_t inline_seqs;  // sequences whose (length, page table offset) follow the header (below)
  uint32_t unused;
  uint32_t k_new;  // fused append: elements to the new K rows, and to the new V rows
  uint32_t v_new;
};
// After the header: INLINE_SEQS (length, page table offset) pairs, as many as the device's push
// constant bytes hold (Vulkan's 128: 10), at most kMaxInlineSeqs. A batch that fits passes its
// pairs there, so that no buffer update and barrier precede the dispatch. H200, turboprof profile,
// us per call, through the buffer / inline (bench/results/2026-11-29-session43, run 5): batch 2
// f16 1K 16.9 / 10.8, 8K 32.8 / 24.3; batch 16 f16 1K 32.3 / 24.1, 8K 112.1 / 102.9; turbo3 alike
// (-5.9 to -8.8). (Run 4's timeline: batch 2's 1K call had 7.7 us outside its workgroups, batch
// 1's 3.5, and a longer span.)
constexpr uint32_t kMaxInlineSeqs = 26;  // (256 bytes in all)
uint32_t inline_capacity(const DeviceCaps& caps) {
  const uint32_t room = caps.max_push_constants > sizeof(DecodePush) ? caps.max_push_constants - sizeof(DecodePush) : 0;
  return std::clamp<uint32_t>(room / 8, 1, kMaxInlineSeqs);
}

size_t element_bytes(TensorFormat f) { return f == TensorFormat::f16 ? 2 : 4; }

// ---------------------------------------------------------------------------------------------
// Argument checks made at the entry of the public calls (before any planning or GPU work), so
// that values cast from integers or computed wrongly by a caller are named, never passed on to
// a shader as specialization constants.

void check_options(const DecodeOptions& o, const char* call) {
  if (!(o.scale >= 0.0f) || !std::isfinite(o.scale))
    fail(ErrorCode::invalid_argument, std::string(call) + ": scale " + std::to_string(o.scale) +
                                          " must be finite and non-negative (0: 1/sqrt(head_dim))");
  if (!(o.softcap >= 0.0f) || !std::isfinite(o.softcap))
    fail(ErrorCode::invalid_argument, std::string(call) + ": softcap " + std::to_string(o.softcap) +
                                          " must be finite and non-negative (0: off)");
  if (o.variant != Variant::automatic &&
      std::find(std::begin(kAllVariants), std::end(kAllVariants), o.variant) == std::end(kAllVariants))
    fail(ErrorCode::invalid_argument, std::string(call) + ": Variant value " + std::to_string(uint32_t(o.variant)) +
                                          " is not a known variant");
  if (std::find(std::begin(kAllModes), std::end(kAllModes), o.profile_mode) == std::end(kAllModes))
    fail(ErrorCode::invalid_argument, std::string(call) + ": ProfileMode value " +
                                          std::to_string(uint32_t(o.profile_mode)) + " is not in 0..4");
}

void check_format(TensorFormat f, const char* call, const char* what) {
  if (f != TensorFormat::f32 && f != TensorFormat::f16)
    fail(ErrorCode::invalid_argument, std::string(call) + ": " + what + " TensorFormat value " +
                                          std::to_string(uint32_t(f)) + " is neither f32 (0) nor f16 (1)");
}

// Host queries only (device tensors are not read back to check): NaN / Inf is named.
void check_finite_queries(const HostTensor& q, size_t n, uint32_t head_dim) {
  for (size_t i = 0; i < n; ++i) {
    const float v = q.format == TensorFormat::f16 ? half_to_float(static_cast<const uint16_t*>(q.data)[i])
                                                  : static_cast<const float*>(q.data)[i];
    if (!std::isfinite(v))
      fail(ErrorCode::numeric, "decode: q value " + std::to_string(v) + " at row " + std::to_string(i / head_dim) +
                                   ", element " + std::to_string(i % head_dim) + " is not finite");
  }
}

}  // namespace

PolicyChoice resolve_request(const DispatchPolicy& policy, const DecodeShape& shape, const DecodeOptions& options) {
  PolicyChoice c = apply_environment(policy.choose(shape));
  std::string changed;
  if (options.variant != Variant::automatic) {
    c.request.variant = options.variant;
    c.variant_forced = true;
    changed += " variant " + std::string(variant_name(options.variant));
  }
  if (options.splits) {
    c.request.splits = options.splits;
    changed += " splits " + std::to_string(options.splits);
  }
  if (options.dims_per_lane) {
    c.request.dims_per_lane = options.dims_per_lane;
    changed += " dims per lane " + std::to_string(options.dims_per_lane);
  }
  if (options.unroll) {
    c.request.unroll = options.unroll;
    changed += " unroll " + std::to_string(options.unroll);
  }
  if (options.subgroups) {
    c.request.subgroups = options.subgroups;
    changed += " subgroups " + std::to_string(options.subgroups);
  }
  if (options.rows16.has_value()) {
    c.request.rows16 = options.rows16;
    changed += std::string(" rows16 ") + (*options.rows16 ? "on" : "off");
  }
  c.request.mode = options.profile_mode;
  if (!changed.empty()) c.reason += "; options:" + changed;
  return c;
}

Decoder::Decoder(KvCache& cache, uint32_t q_heads) : cache_(cache), q_heads_(q_heads) {
  const uint32_t kv = cache.config().kv_heads;
  if (q_heads == 0 || q_heads % kv != 0 || q_heads / kv > 16)
    fail(ErrorCode::invalid_argument, "decoder: " + std::to_string(q_heads) + " query heads must be " +
                                          std::to_string(kv) + " KV heads times a GQA ratio of 1 to 16");
  std::string warning;
  policy_ = DispatchPolicy::for_device(cache.context().caps(), "", &warning);
  if (const char* s = std::getenv("TKV_SPECIALIZE"); s && std::string(s) == "0") host_specialize_ = false;
  if (!warning.empty()) spdlog::warn("turbokv dispatch policy: {}", warning);
  spdlog::debug("turbokv dispatch policy: {}", policy_.source());
}

Decoder::~Decoder() = default;

size_t Decoder::elements(uint32_t batch, uint32_t m) const {
  return size_t(batch) * m * q_heads_ * cache_.config().head_dim;
}

DecodeShape Decoder::shape(uint32_t layer, std::span<const SequenceId> seqs, uint32_t m) const {
  if (seqs.empty()) fail(ErrorCode::invalid_argument, "decode: no sequences given");
  if (seqs.size() > 65535) fail(ErrorCode::invalid_argument, "decode: batch above 65535 sequences");
  if (m == 0 || m > 8) fail(ErrorCode::invalid_argument, "decode: m = " + std::to_string(m) + " is not in 1..8");
  const auto& c = cache_.config();
  if (layer >= c.layers)
    fail(ErrorCode::invalid_argument, "decode: layer " + std::to_string(layer) + " is out of range (the cache has " +
                                          std::to_string(c.layers) + ")");
  DecodeShape s{c.k_type, c.v_type, c.head_dim, q_heads_, c.kv_heads, uint32_t(seqs.size()), m, 0, c.page_size};
  for (SequenceId seq : seqs) {
    const uint32_t len = cache_.length(seq, layer);  // throws not_found for unknown sequences
    if (m > len)
      fail(ErrorCode::invalid_argument, "decode: m = " + std::to_string(m) + " queries but sequence " +
                                            std::to_string(seq) + " has only " + std::to_string(len) +
                                            " tokens on layer " + std::to_string(layer));
    s.max_context = std::max(s.max_context, len);
    s.lengths.push_back(len);
  }
  return s;
}

DecodePlan Decoder::make_plan(const DecodeShape& s, const DecodeOptions& options) const {
  const auto& caps = cache_.context().caps();
  PolicyChoice c = resolve_request(policy_, s, options);
  DecodePlan p;
  try {
    p = plan_decode(caps, s, c.request);
  } catch (const Error& e) {
    // A tuned variant was measured on other shapes; its shared-memory tables (qlut, smem) may
    // not fit this one. The plan's own variant keeps the call running; a variant the caller or
    // the environment named is not second-guessed.
    if (c.variant_forced || c.request.variant == Variant::automatic || e.code() != ErrorCode::invalid_argument) throw;
    const Variant base = policy_.base_variant();
    const bool base_differs = base != c.request.variant;
    c.reason += std::string("; ") + std::string(variant_name(c.request.variant)) + " cannot run this shape (" +
                e.what() + "), " + (base_differs ? std::string(variant_name(base)) : "the plan's variant") + " instead";
    c.request.variant = base_differs ? base : Variant::automatic;
    try {
      p = plan_decode(caps, s, c.request);
    } catch (const Error&) {
      if (c.request.variant == Variant::automatic) throw;
      c.request.variant = Variant::automatic;
      p = plan_decode(caps, s, c.request);
    }
  }
  p.reason = c.reason + "; " + p.reason;
  return p;
}

DecodePlan Decoder::make_fused_plan(DecodeShape& s, const DecodeOptions& options) const {
  // The tc kernel plans on the appended shape; another kernel on its tails' (fused_append_shape),
  // keeping the variant the first plan chose.
  const DecodeShape appended = s;
  s = fused_append_shape(appended, Variant::tc);
  const DecodePlan p = make_plan(s, options);
  if (p.variant == Variant::tc) return p;
  DecodeOptions pinned = options;
  pinned.variant = p.variant;
  s = fused_append_shape(appended, p.variant);
  return make_plan(s, pinned);
}

DecodePlan Decoder::plan(uint32_t layer, std::span<const SequenceId> seqs, uint32_t m,
                         const DecodeOptions& options) const {
  check_options(options, "plan");  // entry checks
  const DecodePlan p = make_plan(shape(layer, seqs, m), options);
  if (spdlog::should_log(spdlog::level::debug)) spdlog::debug("turbokv plan layer {}: {}", layer, p.describe());
  return p;
}

bool Decoder::ensure(vk::Buffer& buffer, uint64_t bytes, vk::MemoryKind kind) {
  if (buffer && buffer.size() >= bytes) return false;
  if (buffer) retired_.push_back(std::move(buffer));
  buffer = vk::Buffer(cache_.context(), std::max<uint64_t>(bytes, 256), kind);
  return true;
}

void Decoder::check_call(const vk::Recorder& r, const DecodeOptions& options, const DeviceTensor& q,
                         const DeviceTensor& out, const char* call) const {
  if (&r.context() != &cache_.context())
    fail(ErrorCode::invalid_argument, std::string(call) + ": the recorder belongs to another Vulkan context (" +
                                          r.context().caps().name + ") than the cache's (" +
                                          cache_.context().caps().name + ")");
  check_options(options, call);
  check_format(q.format, call, "q");
  check_format(out.format, call, "out");
}

void Decoder::record(vk::Recorder& r, uint32_t layer, std::span<const SequenceId> seqs, uint32_t m, DeviceTensor q,
                     DeviceTensor out, const DecodeOptions& options) {
  record_dispatch(r, layer, seqs, m, q, out, options, nullptr, nullptr);
}

void Decoder::record_append_decode(vk::Recorder& r, uint32_t layer, std::span<const SequenceId> seqs, uint32_t m,
                                   DeviceTensor k, DeviceTensor v, DeviceTensor q, DeviceTensor out,
                                   const DecodeOptions& options) {
  // Entry checks before the lengths change (record_dispatch checks the rest again).
  check_call(r, options, q, out, "append_decode");
  check_format(k.format, "append_decode", "K");
  check_format(v.format, "append_decode", "V");
  if (seqs.empty()) fail(ErrorCode::invalid_argument, "append_decode: no sequences given");
  if (m == 0 || m > 8) fail(ErrorCode::invalid_argument, "append_decode: m = " + std::to_string(m) + " is not in 1..8");
  const auto& c = cache_.config();
  if (layer >= c.layers)
    fail(ErrorCode::invalid_argument, "append_decode: layer " + std::to_string(layer) +
                                          " is out of range (the cache has " + std::to_string(c.layers) + ")");
  std::vector<SequenceId> sorted(seqs.begin(), seqs.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    fail(ErrorCode::invalid_argument, "append_decode: sequence " + std::to_string(*std::adjacent_find(sorted.begin(), sorted.end())) +
                                          " is listed twice (its new tokens would be appended twice)");
  for (SequenceId seq : seqs) cache_.length(seq, layer);  // throws not_found for unknown sequences
  const uint64_t rows = uint64_t(seqs.size()) * m * c.kv_heads * c.head_dim;
  for (const auto& [t, name] : {std::pair{&k, "K"}, std::pair{&v, "V"}}) {
    if (!t->buffer) fail(ErrorCode::invalid_argument, std::string("append_decode: ") + name + " buffer is null");
    if (t->bytes < rows * element_bytes(t->format))
      fail(ErrorCode::invalid_argument, std::string("append_decode: ") + name + " rows hold " + std::to_string(t->bytes) +
                                            " bytes, the call needs " + std::to_string(rows * element_bytes(t->format)) +
                                            " (batch " + std::to_string(seqs.size()) + " x m " + std::to_string(m) +
                                            " x " + std::to_string(c.kv_heads) + " KV heads x " +
                                            std::to_string(c.head_dim) + ")");
    if (t->offset % element_bytes(t->format))
      fail(ErrorCode::invalid_argument, std::string("append_decode: ") + name + " offset must be a multiple of the element size");
  }
  if (uint32_t(options.fusion) > 2)
    fail(ErrorCode::invalid_argument, "append_decode: AppendFusion value " + std::to_string(uint32_t(options.fusion)) +
                                          " is not automatic (0), fused (1) or separate (2)");
  const bool fuse = options.fusion != AppendFusion::separate;
  size_t extended = 0;
  bool done = false;
  try {
    if (fuse) {
      for (; extended < seqs.size(); ++extended) cache_.record_extend(r, seqs[extended], layer, m);
      done = record_dispatch(r, layer, seqs, m, q, out, options, &k, &v);
    }
  } catch (...) {
    for (size_t i = 0; i < extended; ++i) cache_.retract_extend(seqs[i], layer, m);
    throw;
  }
  if (done) return;
  // Separate, or the plan's kernel with the tail does not fit the device's shared memory (e.g.
  // the qlut variant's tables on a 32 KiB device): an append per sequence, then a decode.
  for (size_t i = 0; i < extended; ++i) cache_.retract_extend(seqs[i], layer, m);
  const uint64_t per_seq = uint64_t(m) * c.kv_heads * c.head_dim;
  auto rows_of = [&](const DeviceTensor& t, size_t b) {
    return DeviceRows{t.buffer, t.offset + b * per_seq * element_bytes(t.format),
                      t.format == TensorFormat::f16 ? RowFormat::f16 : RowFormat::f32};
  };
  size_t appended = 0;
  try {
    for (; appended < seqs.size(); ++appended)
      cache_.record_append(r, seqs[appended], layer, m, rows_of(k, appended), rows_of(v, appended));
    record(r, layer, seqs, m, q, out, options);
  } catch (...) {
    for (size_t i = 0; i < appended; ++i) cache_.retract_extend(seqs[i], layer, m);
    throw;
  }
}

bool Decoder::record_dispatch(vk::Recorder& r, uint32_t layer, std::span<const SequenceId> seqs, uint32_t m,
                              DeviceTensor q, DeviceTensor out, const DecodeOptions& options,
                              const DeviceTensor* new_k, const DeviceTensor* new_v) {
  const bool fused = new_k != nullptr;
  check_call(r, options, q, out, "decode");  // entry checks
  DecodeShape s = shape(layer, seqs, m);
  const auto& caps = cache_.context().caps();
  const DecodePlan p = fused ? make_fused_plan(s, options) : make_plan(s, options);
  // describe() builds a string: only when someone listens (record runs once per layer and token).
  if (spdlog::should_log(spdlog::level::debug)) spdlog::debug("turbokv decode layer {}: {}", layer, p.describe());
  const auto& c = cache_.config();
  const size_t n = elements(s.batch, m);
  if (!q.buffer) fail(ErrorCode::invalid_argument, "decode: q buffer is null");
  if (!out.buffer) fail(ErrorCode::invalid_argument, "decode: out buffer is null");
  if (q.bytes < n * element_bytes(q.format))
    fail(ErrorCode::invalid_argument, "decode: q holds " + std::to_string(q.bytes) + " bytes, the call needs " +
                                          std::to_string(n * element_bytes(q.format)) + " (batch " +
                                          std::to_string(s.batch) + " x m " + std::to_string(m) + " x " +
                                          std::to_string(q_heads_) + " heads x " + std::to_string(c.head_dim) + ")");
  if (out.bytes < n * element_bytes(out.format))
    fail(ErrorCode::invalid_argument, "decode: output buffer holds " + std::to_string(out.bytes) +
                                          " bytes, the call needs " + std::to_string(n * element_bytes(out.format)));
  if (q.offset % element_bytes(q.format) || out.offset % element_bytes(out.format))
    fail(ErrorCode::invalid_argument, "decode: q / out offsets must be multiples of the element size");
  if (!(options.scale >= 0.0f) || !std::isfinite(options.scale) || !(options.softcap >= 0.0f) ||
      !std::isfinite(options.softcap))
    fail(ErrorCode::invalid_argument, "decode: scale and softcap must be finite and non-negative");

  // Per-sequence info: (length on this layer, page table offset).
  std::vector<uint32_t> info(4 * s.batch, 0);
  for (uint32_t b = 0; b < s.batch; ++b) {
    info[4 * b] = cache_.length(seqs[b], layer);
    info[4 * b + 1] = cache_.page_table_offset(seqs[b]);
  }
  ensure(seq_info_, info.size() * 4, vk::MemoryKind::device);
  const uint32_t v_dim = cache_.layout(Side::v).row.stored_dim;
  const uint32_t rm = s.m * (q_heads_ / c.kv_heads);
  // The scalar kernel's fused append tail is one more split slot (shaders/append_tail.glsl), always merged.
  const bool tail = fused && p.variant != Variant::tc;
  const bool direct = p.direct() && !fused;
  const uint32_t slots = p.splits + (tail ? 1 : 0);
  if (!direct) {
    // Partials per (query row, split): m, l, 2 unused, o (shaders/split_merge.glsl); one arrival
    // counter per (sequence, KV head, row chunk), zero between calls.
    ensure(partials_, uint64_t(s.batch) * c.kv_heads * rm * slots * (v_dim + 4) * 4, vk::MemoryKind::device);
    // A new counter buffer is zeroed now, in a submission of its own: a fill recorded into the
    // caller's command buffer would be lost if that buffer were never submitted.
    if (ensure(arrivals_, uint64_t(s.batch) * c.kv_heads * p.row_chunks * 4, vk::MemoryKind::device))
      cache_.context().run([&](vk::Recorder& z) { z.fill(arrivals_, 0, VK_WHOLE_SIZE, 0); });
  }

  // Storage-buffer offsets must be aligned; bind at 256-byte boundaries, pass the rest in elements.
  auto split_offset = [](uint64_t offset, size_t eb) {
    const uint64_t aligned = offset & ~uint64_t(255);
    return std::pair<uint64_t, uint32_t>{aligned, uint32_t((offset - aligned) / eb)};
  };
  const auto [q_bind, q_elem] = split_offset(q.offset, element_bytes(q.format));
  const auto [out_bind, out_elem] = split_offset(out.offset, element_bytes(out.format));

  const auto& kl = cache_.layout(Side::k).row;
  const auto& vl = cache_.layout(Side::v).row;
  // The specialization constants of the plan's shader, in id order: shaders/decode_tc.comp for the
  // tensor-core variant, shaders/decode.comp otherwise (built once per call, the chosen one only).
  const bool tc = p.variant == Variant::tc;
  std::vector<uint32_t> constants =
      tc ? std::vector<uint32_t>{uint32_t(c.k_type), uint32_t(c.v_type), c.head_dim, kl.stored_dim,
                                 kl.bits_row_bytes,  vl.bits_row_bytes,  c.page_size, c.kv_heads,
                                 q_heads_ / c.kv_heads, m, p.rows, uint32_t(q.format), uint32_t(p.mode),
                                 uint32_t(out.format)}
         : std::vector<uint32_t>{
               uint32_t(c.k_type),    uint32_t(c.v_type),   c.head_dim,         kl.stored_dim,
               kl.groups,             kl.group_elems,       kl.bits_row_bytes,  vl.stored_dim,
               vl.groups,             vl.group_elems,       vl.bits_row_bytes,  c.page_size,
               c.kv_heads,            q_heads_ / c.kv_heads, m,                 p.rows,
               p.workgroup,           p.dims_per_lane,      p.team,             p.unroll,
               direct ? 1u : 0u,      uint32_t(q.format),   uint32_t(out.format), uint32_t(p.variant),
               uint32_t(p.mode),      caps.smallest_subgroup()};
  const bool timeline = timeline_.buffer != VK_NULL_HANDLE;
  if (timeline) {
    if (!cache_.context().device_clock())
      fail(ErrorCode::invalid_argument, "decode timeline: device " + caps.name +
                                            " offers no shader device clock (VK_KHR_shader_clock)");
    const TimelineGrid grid = timeline_grid(p, c.kv_heads, s.batch, tail);
    if (timeline_.bytes < grid.bytes())
      fail(ErrorCode::invalid_argument, "decode timeline: the trace range holds " + std::to_string(timeline_.bytes) +
                                            " bytes, the call's " + std::to_string(grid.workgroups()) +
                                            " workgroups need " + std::to_string(grid.bytes()));
    timeline_grid_ = grid;
  }
  if (fused) {
    constants.push_back(uint32_t(new_k->format));
    constants.push_back(uint32_t(new_v->format));
    const uint32_t budget = std::min<uint32_t>(caps.max_shared_memory ? caps.max_shared_memory : 16384, 49152);
    const uint32_t bytes = p.shared_bytes + fused_tail_shared_bytes(p);
    if (bytes > budget) {
      spdlog::debug("turbokv append_decode: the fused kernel needs {} B of shared memory, the device offers {}: "
                    "append, then decode", bytes, budget);
      return false;
    }
  }
  const bool khr = tc && cache_.context().coopmat_khr();
  if (tc) {  // B_NATIVE (id 16): B fragments in mma's order (KHR matrices, kvcache/vk/coopmat_khr.hpp);
             // WG (17): the workgroup's invocations; ROWS16 (18): the rows on the MMAs' 16-row side;
             // TAB256 (19): turbo4's table of 256 entries
    if (!fused) constants.insert(constants.end(), {0u, 0u});
    constants.push_back(khr ? 1u : 0u);
    constants.push_back(p.workgroup);
    constants.push_back(p.rows16 ? 1u : 0u);
    constants.push_back(p.tab256 ? 1u : 0u);
  } else if (!fused) {
    constants.insert(constants.end(), {0u, 0u});  // (K_NEW_F16, V_NEW_F16: ids 26, 27)
  }
  const uint32_t inline_cap = inline_capacity(caps);  // INLINE_SEQS: tc id 20, scalar id 28
  constants.push_back(inline_cap);
  if (tc) constants.push_back(p.v_ahead ? 1u : 0u);  // V_AHEAD_ROW (21): q8_0 V one tile ahead, one row
  auto& pipelines = cache_.context().pipelines();
  // The scalar kernel is specialized on the host (kvcache/vk/specialize.hpp): its per-token arrays
  // stay in registers only once every loop over them is unrolled (H100, turbo3 smem at 128K: 1598
  // -> 313 us). The tc kernel is left to the driver: host-specialized it grew 4x in code and was
  // slower (turbo4 128K 128 -> 265 us). Both run without the driver's bounds checks where the
  // device allows it: every address they form comes from the page tables, lengths and shapes
  // checked above.
  const std::string shader =
      std::string(tc ? "decode_tc" : "decode") + (fused ? "_append" : "") + (timeline ? "_timeline" : "");
  const uint32_t binding_count = (fused ? 12u : 8u) + (timeline ? 1u : 0u);  // (the trace last: 8, or 12 fused)
  const auto& decode = pipelines.get({shader, constants, binding_count, uint32_t(sizeof(DecodePush) + 8 * inline_cap),
                                      0, !tc && host_specialize_, false, khr});

  const float scale = options.scale > 0.0f ? options.scale : 1.0f / std::sqrt(float(c.head_dim));
  // A batch of at most inline_cap sequences: their (length, page table offset) pairs travel in
  // the push constants. A larger one: a buffer update, and a barrier before the dispatch reads it.
  const bool inline_seqs = s.batch <= inline_cap;
  DecodePush push{scale, options.softcap, options.window, p.chunk, p.splits, q_elem, out_elem, 0,
                  inline_seqs ? s.batch : 0u, 0u, 0u, 0u};
  std::vector<vk::BufferRange> bindings;
  if (fused) {
    const auto [k_bind, k_elem] = split_offset(new_k->offset, element_bytes(new_k->format));
    const auto [v_bind, v_elem] = split_offset(new_v->offset, element_bytes(new_v->format));
    push.k_new = k_elem;
    push.v_new = v_elem;
    // 8, 9: the new rows; 10, 11: the pools again, which the tails write (shaders/append_tail.glsl)
    bindings = {vk::BufferRange(new_k->buffer, k_bind), vk::BufferRange(new_v->buffer, v_bind),
                cache_.buffer(layer, Side::k), cache_.buffer(layer, Side::v)};
  }

  if (!inline_seqs) {
    r.update(seq_info_, 0, std::as_bytes(std::span(info)));
    r.barrier();
  }
  const vk::Buffer& partials = direct ? seq_info_ : partials_;  // unused bindings when direct
  const vk::Buffer& arrivals = direct ? seq_info_ : arrivals_;
  bindings.insert(bindings.begin(),
                  {cache_.buffer(layer, Side::k), cache_.buffer(layer, Side::v), cache_.page_table(), seq_info_,
                   vk::BufferRange(q.buffer, q_bind), vk::BufferRange(out.buffer, out_bind), partials, arrivals});
  if (timeline) bindings.push_back(vk::BufferRange(timeline_.buffer, timeline_.offset, timeline_.bytes));
  std::vector<uint32_t> pushed(sizeof(DecodePush) / 4 + 2 * inline_cap, 0);
  std::memcpy(pushed.data(), &push, sizeof(DecodePush));
  for (uint32_t b = 0; inline_seqs && b < s.batch; ++b) {
    pushed[sizeof(DecodePush) / 4 + 2 * b] = info[4 * b];
    pushed[sizeof(DecodePush) / 4 + 2 * b + 1] = info[4 * b + 1];
  }
  r.bind(decode, std::span<const vk::BufferRange>(bindings), std::as_bytes(std::span(pushed)));
  r.dispatch(slots, c.kv_heads * p.row_chunks, s.batch);
  r.barrier();
  return true;
}

void Decoder::set_timeline(DeviceTensor trace) {
  if (trace.buffer != VK_NULL_HANDLE && trace.offset % 256 != 0)
    fail(ErrorCode::invalid_argument, "decode timeline: offset " + std::to_string(trace.offset) +
                                          " is not a multiple of 256");
  timeline_ = trace;
}

void Decoder::decode(uint32_t layer, std::span<const SequenceId> seqs, uint32_t m, HostTensor q, HostOutput out,
                     const DecodeOptions& options) {
  // Entry checks (the finiteness of q follows the size checks below).
  check_options(options, "decode");
  check_format(q.format, "decode", "q");
  check_format(out.format, "decode", "out");
  const DecodeShape s = shape(layer, seqs, m);
  const size_t n = elements(s.batch, m);
  if (!q.data) fail(ErrorCode::invalid_argument, "decode: q is null (" + std::to_string(q.bytes) + " bytes)");
  if (!out.data) fail(ErrorCode::invalid_argument, "decode: out is null (" + std::to_string(out.bytes) + " bytes)");
  if (q.bytes != n * element_bytes(q.format))
    fail(ErrorCode::invalid_argument, "decode: q has " + std::to_string(q.bytes) + " bytes, expected " +
                                          std::to_string(n * element_bytes(q.format)) + " (batch " +
                                          std::to_string(s.batch) + " x m " + std::to_string(m) + " x " +
                                          std::to_string(q_heads_) + " heads x " +
                                          std::to_string(cache_.config().head_dim) + ")");
  if (out.bytes < n * element_bytes(out.format))
    fail(ErrorCode::invalid_argument, "decode: output has " + std::to_string(out.bytes) + " bytes, the call needs " +
                                          std::to_string(n * element_bytes(out.format)));
  check_finite_queries(q, n, cache_.config().head_dim);  // entry check
  retired_.clear();  // nothing recorded before this call is still pending (callers serialise)
  ensure(q_staging_, q.bytes, vk::MemoryKind::upload);
  ensure(out_staging_, n * element_bytes(out.format), vk::MemoryKind::readback);
  std::memcpy(q_staging_.mapped(), q.data, q.bytes);
  auto& ctx = cache_.context();
  ctx.run([&](vk::Recorder& r) {
    record(r, layer, seqs, m, {q_staging_.handle(), 0, q_staging_.size(), q.format},
           {out_staging_.handle(), 0, out_staging_.size(), out.format}, options);
    r.host_barrier();
  });
  std::memcpy(out.data, out_staging_.mapped(), n * element_bytes(out.format));
  retired_.clear();
}

}  // namespace tkv
