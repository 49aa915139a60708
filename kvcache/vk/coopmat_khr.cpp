#include "kvcache/vk/coopmat_khr.hpp"

#include <array>
#include <cstring>
#include <map>
#include <set>
#include <string_view>

#include "kvcache/error.hpp"

namespace tkv::vk {
namespace {

// Opcodes and enumerants (SPIR-V 1.6 unified grammar; SPV_NV/KHR_cooperative_matrix).
enum : uint32_t {
  kOpExtension = 10, kOpCapability = 17, kOpTypeInt = 21, kOpTypeFloat = 22, kOpTypePointer = 32,
  kOpConstantTrue = 41, kOpConstantFalse = 42, kOpConstant = 43, kOpVariable = 59, kOpLoad = 61,
  kOpStore = 62, kStorageFunction = 7,
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
  std::map<uint32_t, uint32_t> load_from, function_variable, function_pointer;  // load -> pointer, ...
  std::map<uint32_t, std::array<uint32_t, 3>> nv_type;                          // width, rows, cols
  std::vector<std::array<uint32_t, 3>> muladds;                                 // A, B, C operands
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
    if (op == kNvType) {
      any = true;
      const auto fw = float_width.find(w[2]);
      const auto rows = constant.find(w[4]), cols = constant.find(w[5]);
      if (fw == float_width.end() || rows == constant.end() || cols == constant.end())
        bad("a matrix type with a non-float component or non-constant shape");
      nv_type[w[1]] = {fw->second, rows->second, cols->second};
    }
    if (op == kOpTypePointer && w[2] == kStorageFunction) function_pointer[w[1]] = w[3];
    if (op == kOpVariable && w[3] == kStorageFunction) function_variable[w[2]] = w[1];
    if (op == kOpLoad) load_from[w[2]] = w[3];
    if (op == kNvMulAdd) muladds.push_back({w[3], w[4], w[5]});
    i += n;
  }
  if (!any) return {};
  // A type's use from its shape: f32 accumulator; f16 16x16 A; f16 16x8 and 8x8 B (k 16 or 8).
  auto shape_use = [&](uint32_t type) -> uint32_t {
    const auto& [width, rows, cols] = nv_type.at(type);
    if (width == 32) return 2;
    if (width == 16 && rows == 16 && cols == 16) return 0;
    if (width == 16 && (rows == 16 || rows == 8) && cols == 8) return 1;
    bad("a matrix type whose use its shape does not tell");
    return 0;
  };
  // A 16x8x8 MMA's A is f16 16x8 too, B by its shape: a function variable whose loads are such A
  // operands gets that type's A twin (a new type of use A, and a pointer to it), its loads too.
  // Each value is a load from such a variable; one loaded as B or stored whole is an error.
  auto variable_of = [&](uint32_t value) -> uint32_t {
    const auto l = load_from.find(value);
    return l != load_from.end() && function_variable.count(l->second) ? l->second : 0;
  };
  auto pointee = [&](uint32_t variable) { return function_pointer.at(function_variable.at(variable)); };
  std::set<uint32_t> a_variable;
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> a_twin;  // B-shaped type -> (twin, its pointer)
  for (const auto& m : muladds) {
    const uint32_t v = variable_of(m[0]);
    if (v && nv_type.count(pointee(v)) && shape_use(pointee(v)) == 1) a_variable.insert(v);
  }
  for (const auto& m : muladds)
    if (a_variable.count(variable_of(m[1])) || a_variable.count(variable_of(m[2])))
      bad("a matrix variable loaded as both an A operand and another one");
  if (!uint_type) bad("no 32-bit unsigned integer type to hold the use and layout constants");

  std::vector<uint32_t> out(words.begin(), words.begin() + 5);
  const uint32_t c0 = out[3], c1 = c0 + 1, c2 = c0 + 2;  // constants 0, 1, 2 (uses; layouts)
  out[3] = c0 + 3;
  for (const uint32_t v : a_variable)
    if (!a_twin.count(pointee(v))) {
      a_twin[pointee(v)] = {out[3], out[3] + 1};
      out[3] += 2;
    }
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
      emit(kKhrType, {w[1], w[2], w[3], w[4], w[5], c0 + shape_use(w[1])});
      if (const auto t = a_twin.find(w[1]); t != a_twin.end()) {
        emit(kKhrType, {t->second.first, w[2], w[3], w[4], w[5], c0});
        emit(kOpTypePointer, {t->second.second, kStorageFunction, t->second.first});
      }
    } else if (op == kOpVariable && a_variable.count(w[2])) {
      emit(kOpVariable, {a_twin.at(pointee(w[2])).second, w[2]}, 3);
    } else if (op == kOpLoad && a_variable.count(w[3])) {
      emit(kOpLoad, {a_twin.at(pointee(w[3])).first, w[2]}, 3);
    } else if (op == kOpStore && a_variable.count(w[1])) {
      bad("a whole matrix stored into a variable whose loads are A operands of a 16x8x8 MMA");
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
