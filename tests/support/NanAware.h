//===- NanAware.h - Error accumulation that does not lose a NaN -----------===//
//
// std::max(a, NaN) returns a (a < NaN is false), so `err = std::max(err,
// |got - want|)` silently skips a NaN output and a test of `err <= tol`
// passes on all-NaN results. Accumulate errors with errorMax instead: a NaN
// anywhere makes the result NaN, and every `<=` gate on it fails.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_SUPPORT_NANAWARE_H
#define ENCC_TESTS_SUPPORT_NANAWARE_H

#include <algorithm>
#include <cmath>

namespace encc::testing {

/// max(a, b), NaN if either is NaN.
inline double errorMax(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}

} // namespace encc::testing

#endif // ENCC_TESTS_SUPPORT_NANAWARE_H
