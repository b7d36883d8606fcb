//===- Failure.h - The runtime's internal error ---------------------------===//
//
// Internally the runtime reports errors by throwing Failure (a status code and
// a one-line message); the C API turns it into an encrt_status.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_FAILURE_H
#define ENCRT_FAILURE_H

#include "encrt/encrt.h"

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace encrt::rt {

class Failure : public std::runtime_error {
public:
  Failure(encrt_status_code code, std::string message)
      : std::runtime_error(std::move(message)), code_(code) {}
  encrt_status_code code() const { return code_; }

private:
  encrt_status_code code_;
};

/// Throws Failure(code, the concatenation of parts).
template <typename... Parts>
[[noreturn]] void fail(encrt_status_code code, const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Failure(code, os.str());
}

} // namespace encrt::rt

#endif // ENCRT_FAILURE_H
