// turbokv::Decoder over tkv::Decoder.
#include "turbokv/decoder.hpp"

#include <span>
#include <string>

#include "attention/api/convert.hpp"
#include "attention/decoder.hpp"
#include "attention/plan.hpp"
#include "kvcache/error.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"

namespace turbokv {
namespace {

std::span<const SequenceId> to_span(SequenceList seqs) {
  if (seqs.size() && !seqs.data()) tkv::fail(tkv::ErrorCode::invalid_argument, "decode: the sequence list is null");
  return {seqs.data(), seqs.size()};
}

tkv::DeviceTensor to_tensor(const DeviceSpan& s, const char* what) {
  return {s.buffer, s.offset, s.bytes, detail::tensor_format(s.format, what)};
}

}  // namespace

Decoder::Decoder(const Cache& cache, uint32_t q_heads) : cache_(cache), q_heads_(q_heads) {
  auto internal_cache = cache.cache_;
  if (!internal_cache) tkv::fail(tkv::ErrorCode::invalid_argument, "decoder: the cache handle is empty");
  // The decoder refers to the cache: its deleter keeps the cache alive until the decoder is gone.
  decoder_ = std::shared_ptr<tkv::Decoder>(new tkv::Decoder(*internal_cache, q_heads),
                                           [internal_cache](tkv::Decoder* d) { delete d; });
}

tkv::Decoder& Decoder::get() const {
  if (!decoder_) tkv::fail(tkv::ErrorCode::invalid_argument, "decoder: the handle is empty");
  return *decoder_;
}

uint32_t Decoder::q_heads() const { return get().q_heads(); }

Cache Decoder::cache() const {
  get();
  return cache_;
}

size_t Decoder::elements(uint32_t batch, uint32_t m) const { return get().elements(batch, m); }

Plan Decoder::plan(uint32_t layer, SequenceList seqs, uint32_t m, const DecodeOptions& options) const {
  const tkv::DecodePlan p = get().plan(layer, to_span(seqs), m, detail::to_internal(options));
  Plan out;
  out.splits = p.splits;
  out.chunk = p.chunk;
  out.workgroup = p.workgroup;
  out.workgroups = p.workgroups;
  out.rows = p.rows;
  out.dims_per_lane = p.dims_per_lane;
  out.team = p.team;
  out.unroll = p.unroll;
  out.shared_bytes = p.shared_bytes;
  out.variant = Variant(uint32_t(p.variant));
  out.reason = p.reason;
  out.description = p.describe();
  return out;
}

void Decoder::decode(uint32_t layer, SequenceList seqs, uint32_t m, HostTensor q, HostOutput out,
                     const DecodeOptions& options) {
  get().decode(layer, to_span(seqs), m, {q.data, q.bytes, detail::tensor_format(q.format, "decode q")},
               {out.data, out.bytes, detail::tensor_format(out.format, "decode out")}, detail::to_internal(options));
}

void Decoder::record(VkCommandBuffer command_buffer, uint32_t layer, SequenceList seqs, uint32_t m, DeviceSpan q,
                     DeviceSpan out, const DecodeOptions& options) {
  auto& decoder = get();
  if (!command_buffer) tkv::fail(tkv::ErrorCode::invalid_argument, "record: the command buffer is VK_NULL_HANDLE");
  const auto ids = to_span(seqs);
  const auto internal_options = detail::to_internal(options);
  const tkv::DeviceTensor qt = to_tensor(q, "record q"), ot = to_tensor(out, "record out");
  tkv::vk::Recorder r(cache_.get().context(), command_buffer);
  r.barrier();  // the host's compute / transfer writes of q (and earlier uses of out) -> ours
  decoder.record(r, layer, ids, m, qt, ot, internal_options);
}

void Decoder::record_append_decode(VkCommandBuffer command_buffer, uint32_t layer, SequenceList seqs, uint32_t m,
                                   DeviceSpan k, DeviceSpan v, DeviceSpan q, DeviceSpan out,
                                   const DecodeOptions& options) {
  auto& decoder = get();
  if (!command_buffer)
    tkv::fail(tkv::ErrorCode::invalid_argument, "record_append_decode: the command buffer is VK_NULL_HANDLE");
  const auto ids = to_span(seqs);
  const auto internal_options = detail::to_internal(options);
  const tkv::DeviceTensor kt = to_tensor(k, "record_append_decode K"), vt = to_tensor(v, "record_append_decode V");
  const tkv::DeviceTensor qt = to_tensor(q, "record_append_decode q"), ot = to_tensor(out, "record_append_decode out");
  tkv::vk::Recorder r(cache_.get().context(), command_buffer);
  r.barrier();  // the host's compute / transfer writes of the rows and q (and earlier uses of out) -> ours
  decoder.record_append_decode(r, layer, ids, m, kt, vt, qt, ot, internal_options);
}

}  // namespace turbokv
