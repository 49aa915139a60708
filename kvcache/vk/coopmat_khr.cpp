#include "kvcache/vk/coopmat_khr.hpp"

#include <cstring>
#include <map>
#include <string_view>

#include "kvcache/error.hpp"

namespace tkv::vk {
namespace {

// Opcodes and enumerants (SPIR-V 1.6 unified grammar; SPV_NV/KHR_cooperative_matrix).
enum : uint32_t {
  kOpExtension = 10, kOpCapability = 17, kOpTypeInt = 21, kOpTypeFloat = 22, kOpConstantTrue = 41,
  kOpConstantFalse = 42, kOpConstant = 43,
  kNvType = 5358, kNvLoad = 5359, kNvStore = 5360, kNvMulAdd = 5361, kNvLength = 5362,
  kKhrType = 4456, kKhrLoad = 4457, kKhrStore = 4458, kKhrMulAdd = 4459, kKhrLength = 4460,
  kCapNv = 5357, kCapKhr = 6022,
};

void put_string(std::vector<uint32_t>& out, const std::string& s) {
  const size_t n = s.size() / 4 + 1;  // with the terminating NUL
  const size_t at = out.size();
  out.resize(at + n, 0);
  for (size_t i = 0; i < s.size(); ++i) out[at + i / 4] |= uint32_t(uint8_t(s[i])) << (8 * (i % 4));
}

// An instruction's literal string operand starting at its word 1, read within its n words.
std::string_view literal(const uint32_t* w, uint32_t n) {
  const char* s = reinterpret_cast<const char*>(w + 1);
  return {s, strnlen(s, 4 * size_t(n - 1))};
}

void bad(const std::string& why) { fail(ErrorCode::invalid_argument, "coopmat_nv_to_khr: " + why); }

}  // namespace

std::vector<uint32_t> coopmat_nv_to_khr(std::span<const uint32_t> words) {
  if (words.size() < 5 || words[0] != 0x07230203u) bad("not a SPIR-V module");
  // Pass 1: what the rewrite needs to know: 32-bit unsigned int type, float widths, constants,
  // booleans, and whether any NV matrix is used.
  uint32_t uint_type = 0;
  std::map<uint32_t, uint32_t> float_width, constant, boolean;
  bool any = false;
  for (size_t i = 5; i < words.size();) {
    const uint32_t op = words[i] & 0xffffu, n = words[i] >> 16;
    if (n == 0 || i + n > words.size()) bad("truncated instruction");
    const uint32_t* w = &words[i];
    if (op == kOpTypeInt && w[2] == 32 && w[3] == 0 && !uint_type) uint_type = w[1];
    if (op == kOpTypeFloat) float_width[w[1]] = w[2];
    if (op == kOpConstant && n == 4) constant[w[2]] = w[3];
    if (op == kOpConstantTrue) boolean[w[2]] = 1;
    if (op == kOpConstantFalse) boolean[w[2]] = 0;
    if (op == kNvType) any = true;
    i += n;
  }
  if (!any) return {};
  if (!uint_type) bad("no 32-bit unsigned integer type to hold the use and layout constants");

  std::vector<uint32_t> out(words.begin(), words.begin() + 5);
  const uint32_t c0 = out[3], c1 = c0 + 1, c2 = c0 + 2;  // constants 0, 1, 2 (uses; layouts)
  out[3] = c0 + 3;
  for (size_t i = 5; i < words.size();) {
    const uint32_t op = words[i] & 0xffffu, n = words[i] >> 16;
    const uint32_t* w = &words[i];
    auto emit = [&](uint32_t opcode, std::initializer_list<uint32_t> operands, size_t rest_from = 0) {
      const size_t rest = rest_from ? n - rest_from : 0;
      out.push_back(uint32_t((1 + operands.size() + rest) << 16) | opcode);
      out.insert(out.end(), operands.begin(), operands.end());
      if (rest) out.insert(out.end(), w + rest_from, w + n);
    };
    if (op == kOpCapability && w[1] == kCapNv) {
      emit(kOpCapability, {kCapKhr});
    } else if (op == kOpExtension && literal(w, n) == "SPV_NV_cooperative_matrix") {
      std::vector<uint32_t> s;
      put_string(s, "SPV_KHR_cooperative_matrix");
      out.push_back(uint32_t((1 + s.size()) << 16) | kOpExtension);
      out.insert(out.end(), s.begin(), s.end());
    } else if (op == kNvType) {
      const auto fw = float_width.find(w[2]);
      const auto rows = constant.find(w[4]), cols = constant.find(w[5]);
      if (fw == float_width.end() || rows == constant.end() || cols == constant.end())
        bad("a matrix type with a non-float component or non-constant shape");
      uint32_t use;
      if (fw->second == 32) use = c2;
      else if (fw->second == 16 && rows->second == 16 && cols->second == 16) use = c0;
      else if (fw->second == 16 && rows->second == 16 && cols->second == 8) use = c1;
      else bad("a matrix type whose use its shape does not tell");
      emit(kKhrType, {w[1], w[2], w[3], w[4], w[5], use});
    } else if (op == kNvLoad) {  // type, result, pointer, stride, column major[, memory access]
      const auto b = boolean.find(w[5]);
      if (b == boolean.end()) bad("a load whose column-major operand is not a constant");
      emit(kKhrLoad, {w[1], w[2], w[3], b->second ? c1 : c0, w[4]}, 6);
    } else if (op == kNvStore) {  // pointer, object, stride, column major[, memory access]
      const auto b = boolean.find(w[4]);
      if (b == boolean.end()) bad("a store whose column-major operand is not a constant");
      emit(kKhrStore, {w[1], w[2], b->second ? c1 : c0, w[3]}, 5);
    } else if (op == kNvMulAdd) {
      emit(kKhrMulAdd, {w[1], w[2], w[3], w[4], w[5]});
    } else if (op == kNvLength) {
      emit(kKhrLength, {w[1], w[2], w[3]});
    } else {
      out.insert(out.end(), w, w + n);
    }
    if (op == kOpTypeInt && w[1] == uint_type) {  // the new constants right after their type
      emit(kOpConstant, {uint_type, c0, 0});
      emit(kOpConstant, {uint_type, c1, 1});
      emit(kOpConstant, {uint_type, c2, 2});
    }
    i += n;
  }
  return out;
}

}  // namespace tkv::vk
