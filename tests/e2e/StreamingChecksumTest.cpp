//===- StreamingChecksumTest.cpp - The streamed .encm checksum ------------===//
//
// The artifact writer computes the trailer checksum piece by piece
// (compiler/driver/StreamingChecksum.h); the runtime recomputes it with
// encm_checksum64 over the whole file. Both must agree for every length (the
// 32-byte blocks, the tail) and every way of cutting the bytes.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/StreamingChecksum.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

TEST(StreamingChecksum, EqualsTheWholeBufferChecksumForEverySplit) {
  std::mt19937 rng(17);
  std::vector<uint8_t> bytes(5000);
  for (uint8_t &b : bytes)
    b = static_cast<uint8_t>(rng());
  for (size_t size : {size_t(0), size_t(1), size_t(31), size_t(32), size_t(33), size_t(64), size_t(95), size_t(4999)}) {
    const uint64_t want = encm_checksum64(bytes.data(), size);
    for (int trial = 0; trial < 50; ++trial) {
      encc::StreamingChecksum sum;
      size_t at = 0;
      while (at < size) {
        const size_t n = std::min(size - at, size_t(rng() % 70)); // empty pieces too
        sum.add(bytes.data() + at, n);
        at += n;
      }
      ASSERT_EQ(sum.finish(), want) << size << " bytes, trial " << trial;
    }
  }
  // One large piece after a small one, as the writer does (the table, then a weight).
  encc::StreamingChecksum sum;
  sum.add(bytes.data(), 7);
  sum.add(bytes.data() + 7, bytes.size() - 7);
  EXPECT_EQ(sum.finish(), encm_checksum64(bytes.data(), bytes.size()));
}

} // namespace
