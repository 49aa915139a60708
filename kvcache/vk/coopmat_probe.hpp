// Whether a device's cooperative-matrix fragments (VK_NV_cooperative_matrix) are laid out as
// NVIDIA's mma.m16n8k16, in the element order NVIDIA's driver uses (H100, driver 580: lane 4g + c
// holds A elements (g, 2c..2c+1), (g, 2c+8..2c+9), (g+8, 2c..2c+1), (g+8, 2c+8..2c+9),
// accumulator elements (g, 2c..2c+1), (g+8, 2c..2c+1), and B (k x n) elements (k = g, n =
// 2c..2c+1), (k = g+8, n = 2c..2c+1), which the driver transposes into mma's B registers): the tc
// decode variant (shaders/decode_tc.comp) builds its A and B fragments and reads its accumulators
// element by element, assuming that layout. The layout is implementation-defined, so it is
// measured on the device (shaders/coopmat_probe.comp) once per context, never assumed from the
// vendor.
#pragma once

#include <string>

namespace tkv::vk {

class Context;

// True when every lane's elements of a 16x16 f16 A fragment, a 16x8 f16 B fragment and a 16x8 f32
// accumulator sit where the layout above puts them; false (and `why` says what differed) otherwise.
// khr: the probe's matrices run as KHR ones (PipelineKey::coopmat_khr), whose B fragment must
// then be in mma's own order (lane 4g + c: k = 2c, 2c+1, 2c+8, 2c+9, n = g).
bool probe_mma_fragment_layout(Context& ctx, bool khr, std::string* why = nullptr);

}  // namespace tkv::vk
