// Errors: every failure the library reports is a tkv::Error whose message names the problem.
// Defined in the installed public header (include/turbokv/error.hpp) so that embedders catch the
// same type the library throws.
#pragma once

#include "turbokv/error.hpp"
