// The type table and head-dimension rules of kv-formats.md.
#include "kvcache/types.hpp"

#include <array>
#include <string>

#include "kvcache/error.hpp"

namespace tkv {
namespace {

// Codebooks and midpoints exactly as the spec lists them (fp32 literals): the midpoints are what
// the llama.cpp turbo fork compares against, so using these literals keeps the bytes identical.
constexpr float kC2[] = {-0.133462f, -0.039994f, 0.039994f, 0.133462f};
constexpr float kM2[] = {-0.086728f, 0.0f, 0.086728f};

constexpr float kC3[] = {-0.190685f, -0.117832f, -0.065717f, -0.021460f,
                         0.021460f,  0.065717f,  0.117832f,  0.190685f};
constexpr float kM3[] = {-0.154259f, -0.091775f, -0.043589f, 0.0f,
                         0.043589f,  0.091775f,  0.154259f};

constexpr float kC4[] = {-0.241556f, -0.182907f, -0.143047f, -0.111065f, -0.083317f, -0.058069f,
                         -0.034311f, -0.011353f, 0.011353f,  0.034311f,  0.058069f,  0.083317f,
                         0.111065f,  0.143047f,  0.182907f,  0.241556f};
constexpr float kM4[] = {-0.212232f, -0.162977f, -0.127056f, -0.097191f, -0.070693f,
                         -0.046190f, -0.022832f, 0.0f,       0.022832f,  0.046190f,
                         0.070693f,  0.097191f,  0.127056f,  0.162977f,  0.212232f};

// One row per type, indexed by the KvType value (ggml type_traits style).
const TypeTraits kTraits[] = {
    {KvType::f16, "f16", 1, 2, 16, false, {}, {}},
    {KvType::q8_0, "q8_0", 32, 34, 8, false, {}, {}},
    {KvType::turbo2, "turbo2", 128, 34, 2, true, kC2, kM2},
    {KvType::turbo3, "turbo3", 128, 50, 3, true, kC3, kM3},
    {KvType::turbo4, "turbo4", 128, 68, 4, true, kC4, kM4},
};

// Sign strings copied from the spec ("seed 42", index 0 first). Parsed rather than hand-converted
// so they can be compared with the spec text directly; tests check them against the hex masks.
constexpr std::string_view kSigns1 =
    "-++--+-+--+++++++-+-+--+++-++----++-++-+-++--+-++++-----+-++++-+--+---+---+---+++--+++--++-++-+"
    "--++-+-+-++++-+-++-++-----++-++-+";
constexpr std::string_view kSigns2 =
    "++++-++-+---+---++--+-+-+--+-+++++---+------+++-+-+++--+------+++-+----+-+-+--++-+-++-+----+--"
    "+-+-+++--+-+-++--+-+-++-+-+-----+-";

std::array<float, 128> parse_signs(std::string_view s) {
  if (s.size() != 128) fail(ErrorCode::invalid_argument, "internal: sign string is not 128 long");
  std::array<float, 128> out{};
  for (size_t i = 0; i < s.size(); ++i) out[i] = s[i] == '-' ? -1.0f : 1.0f;
  return out;
}

uint32_t round_up(uint32_t v, uint32_t m) { return (v + m - 1) / m * m; }

}  // namespace

const TypeTraits& traits(KvType type) {
  const auto i = static_cast<uint32_t>(type);
  if (i >= std::size(kTraits))
    fail(ErrorCode::invalid_argument, "unknown KvType value " + std::to_string(i));
  return kTraits[i];
}

std::string_view type_name(KvType type) { return traits(type).name; }

KvType parse_type(std::string_view name) {
  for (const auto& t : kTraits)
    if (t.name == name) return t.type;
  std::string valid;
  for (const auto& t : kTraits) {
    if (!valid.empty()) valid += ", ";
    valid += t.name;
  }
  fail(ErrorCode::invalid_argument,
       "unknown KV type '" + std::string(name) + "' (valid types: " + valid + ")");
}

void check_head_dim(uint32_t head_dim) {
  if (head_dim == 0 || head_dim > 256)
    fail(ErrorCode::invalid_argument,
         "head_dim " + std::to_string(head_dim) + " is out of range (must be 1..256)");
}

uint32_t turbo_group_size(uint32_t head_dim) {
  check_head_dim(head_dim);
  return head_dim % 128 == 0 ? 128 : 64;
}

uint32_t padded_head_dim(KvType type, uint32_t head_dim) {
  check_head_dim(head_dim);
  const TypeTraits& t = traits(type);
  if (t.is_turbo) return round_up(head_dim, turbo_group_size(head_dim));
  if (type == KvType::q8_0) return round_up(head_dim, 32);
  return head_dim;
}

uint32_t blocks_per_row(KvType type, uint32_t head_dim) {
  const TypeTraits& t = traits(type);
  const uint32_t padded = padded_head_dim(type, head_dim);
  if (t.is_turbo) return padded / turbo_group_size(head_dim);
  return padded / t.block_elems;
}

uint32_t block_bytes(KvType type, uint32_t head_dim) {
  check_head_dim(head_dim);
  const TypeTraits& t = traits(type);
  if (!t.is_turbo) return t.block_bytes;
  const uint32_t g = turbo_group_size(head_dim);
  // Header (norm, plus turbo4's reserved f16) is fixed; the index arrays scale with G.
  const uint32_t header = type == KvType::turbo4 ? 4 : 2;
  return header + g * t.index_bits / 8;
}

size_t row_bytes(KvType type, uint32_t head_dim) {
  return static_cast<size_t>(blocks_per_row(type, head_dim)) * block_bytes(type, head_dim);
}

std::span<const float> rotation_signs1() {
  static const std::array<float, 128> s = parse_signs(kSigns1);
  return s;
}

std::span<const float> rotation_signs2() {
  static const std::array<float, 128> s = parse_signs(kSigns2);
  return s;
}

}  // namespace tkv
