// The device layout of kvcache/layout.hpp, from specialization constants the host derives from
// RowLayout / PageLayout (one source of truth: the host computes, the shader only reads).
// A shader that includes this declares, before the include, the constant ids it uses via
// TKV_LAYOUT_ID_BASE (first of 8 consecutive ids) and a prefix-free set of names.
#ifndef TKV_LAYOUT_GLSL
#define TKV_LAYOUT_GLSL

#define TYPE_F16 0u
#define TYPE_Q8_0 1u
#define TYPE_TURBO2 2u
#define TYPE_TURBO3 3u
#define TYPE_TURBO4 4u

#endif
