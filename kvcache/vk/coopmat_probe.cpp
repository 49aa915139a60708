#include "kvcache/vk/coopmat_probe.hpp"

#include <cstring>
#include <vector>

#include "kvcache/vk/buffer.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/pipeline.hpp"

namespace tkv::vk {

bool probe_mma_fragment_layout(Context& ctx, bool khr, std::string* why) {
  constexpr uint32_t kLanes = 32, kPerLane = 19;
  Buffer out(ctx, kLanes * kPerLane * 4, MemoryKind::readback);
  PipelineKey key{"coopmat_probe", {}, 1, 0};
  key.coopmat_khr = khr;
  const Pipeline& probe = ctx.pipelines().get(key);
  ctx.run([&](Recorder& r) {
    r.bind(probe, {out});
    r.dispatch(1);
    r.host_barrier();
  });
  std::vector<float> v(kLanes * kPerLane);
  std::memcpy(v.data(), out.mapped(), v.size() * 4);
  auto differ = [&](const std::string& what) {
    if (why) {  // the first lanes' positions, to tell what the layout is instead
      *why = what + "; positions (A | accumulator | B) of lanes 0, 1, 4, 5:";
      for (uint32_t lane : {0u, 1u, 4u, 5u}) {
        *why += " [";
        for (uint32_t i = 0; i < kPerLane; ++i) *why += (i ? " " : "") + std::to_string(int(v[lane * kPerLane + i]));
        *why += "]";
      }
    }
    return false;
  };
  for (uint32_t lane = 0; lane < kLanes; ++lane) {
    const float* x = v.data() + lane * kPerLane;
    const uint32_t g = lane / 4, c = lane % 4;
    if (x[0] != 8 || x[9] != 4 || x[14] != 4)
      return differ("fragment lengths " + std::to_string(x[0]) + " (A), " + std::to_string(x[9]) +
                    " (accumulator) and " + std::to_string(x[14]) + " (B), expected 8, 4 and 4");
    for (uint32_t i = 0; i < 8; ++i) {  // A: (g, 2c..2c+1), (g, 2c+8..2c+9), (g+8, 2c..2c+1), (g+8, 2c+8..2c+9)
      const uint32_t row = g + 8 * (i >> 2), col = 2 * c + (i & 1) + 8 * ((i >> 1) & 1);
      if (x[1 + i] != float(row * 16 + col))
        return differ("lane " + std::to_string(lane) + " A element " + std::to_string(i) + " holds position " +
                      std::to_string(x[1 + i]) + ", mma.m16n8k16 puts " + std::to_string(row * 16 + col) + " there");
    }
    for (uint32_t i = 0; i < 4; ++i) {  // accumulator: rows g, g+8 x columns 2c, 2c+1
      const uint32_t row = g + 8 * (i >> 1), col = 2 * c + (i & 1);
      if (x[10 + i] != float(row * 8 + col))
        return differ("lane " + std::to_string(lane) + " accumulator element " + std::to_string(i) +
                      " holds position " + std::to_string(x[10 + i]) + ", mma.m16n8k16 puts " +
                      std::to_string(row * 8 + col) + " there");
    }
    for (uint32_t i = 0; i < 4; ++i) {  // B (k x n): k = g, g+8 x n = 2c, 2c+1 (the driver's NV order);
      // KHR matrices of use B (coopmat_khr.hpp): mma's own, k = 2c, 2c+1, 2c+8, 2c+9 x n = g
      const uint32_t k = khr ? 2 * c + (i & 1) + 8 * (i >> 1) : g + 8 * (i >> 1), n = khr ? g : 2 * c + (i & 1);
      if (x[15 + i] != float(k * 8 + n))
        return differ("lane " + std::to_string(lane) + " B element " + std::to_string(i) + " holds position " +
                      std::to_string(x[15 + i]) + ", expected " + std::to_string(k * 8 + n));
    }
  }
  return true;
}

}  // namespace tkv::vk
