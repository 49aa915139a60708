// IEEE half <-> float conversion (round to nearest even), independent of compiler support.
#pragma once

#include <cstdint>

namespace tkv {

uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}  // namespace tkv
