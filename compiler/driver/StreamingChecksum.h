//===- StreamingChecksum.h - The .encm checksum over bytes in pieces ------===//
//
// The artifact writer streams the file (weights produced one at a time), so
// it cannot call encm_checksum64 over the whole buffer; this is the same
// function fed piece by piece (tests/e2e/StreamingChecksumTest.cpp checks the
// two agree for every split).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_DRIVER_STREAMINGCHECKSUM_H
#define ENCC_COMPILER_DRIVER_STREAMINGCHECKSUM_H

#include "encrt/checksum.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace encc {

/// encm_checksum64 (encrt/checksum.h) over bytes that arrive in pieces: the
/// same four lanes over 32-byte blocks, the same tail and finish.
class StreamingChecksum {
public:
  void add(const uint8_t *p, size_t n) {
    if (n == 0)
      return;
    size_ += n;
    if (pending_ != 0) {
      const size_t take = std::min(n, sizeof(block_) - pending_);
      std::memcpy(block_ + pending_, p, take);
      pending_ += take, p += take, n -= take;
      if (pending_ < sizeof(block_))
        return;
      mixBlock(block_);
      pending_ = 0;
    }
    for (; n >= sizeof(block_); p += sizeof(block_), n -= sizeof(block_))
      mixBlock(p);
    std::memcpy(block_, p, n);
    pending_ = n;
  }
  uint64_t finish() const {
    uint64_t h = encm_mix64(encm_mix64(encm_mix64(encm_mix64(size_, lane_[0]), lane_[1]), lane_[2]), lane_[3]);
    for (size_t i = 0; i < pending_; ++i)
      h = encm_mix64(h, block_[i]);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
  }

private:
  void mixBlock(const uint8_t *p) {
    uint64_t w[4];
    std::memcpy(w, p, sizeof(w));
    for (int i = 0; i < 4; ++i)
      lane_[i] = encm_mix64(lane_[i], w[i]);
  }
  uint64_t lane_[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                       0x082EFA98EC4E6C89ull};
  uint8_t block_[32];
  size_t pending_ = 0;
  uint64_t size_ = 0;
};

} // namespace encc

#endif // ENCC_COMPILER_DRIVER_STREAMINGCHECKSUM_H
