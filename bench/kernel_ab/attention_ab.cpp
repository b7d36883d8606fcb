// A/B of the CPU attention kernel across two versions of its header: build this
// file twice, once with -I on each kernels directory, and run the binaries in
// turns. Times enc_kernels::attentionPacked (the packed plans' kernel) on the
// shapes the peer tables use: MiniLM (12 heads of 32) 8 x 128 and BERT-base
// (12 of 64) 8 x 128 and 1 x 512, packed qkv, 2 tasks on 2 threads, fp32 p·v
// and bf16 p·v (the bf16 tier's), and on AMX the int8 tier's split products; prints the median ms of 31 runs of 20 calls
// each. It asks Linux for the AMX tile state first (a build with -mamx-tile runs
// tile instructions).
//
//   c++ -O3 -std=c++17 -march=x86-64-v4 -ffp-contract=fast -pthread -I OLD/kernels attention_ab.cpp -o old
//   c++ -O3 -std=c++17 -march=x86-64-v4 -ffp-contract=fast -pthread -I NEW/kernels attention_ab.cpp -o new
//
// Build it with the flags of the code object the models run (compiler/codegen/cpu: -march=x86-64-v4, plus
// -mavx512bf16 / -mamx-tile -mamx-bf16 -mamx-int8 for those objects), not -march=native: on Zen 4, GCC 12's
// znver4 tuning made BERT-base 1 x 512 5.5 ms a call where the x86-64-v4 build (and the model) take 4.2, and a
// change that was 1.3x faster under -march=native was 0.9x under the models' flags.
#include "enc_kernels.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

template <int NH, int D, bool PVBf16, bool Split = false> double timeShape(int64_t batch, int64_t seq) {
  constexpr int64_t H = int64_t(NH) * D;
  std::vector<int32_t> offsets(batch + 1);
  for (int64_t b = 0; b <= batch; ++b)
    offsets[b] = static_cast<int32_t>(b * seq);
  std::vector<float> qkv(batch * seq * 3 * H), y(batch * seq * H);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float &v : qkv)
    v = u(rng);
  // Task t of 2 (an older header has no Split parameter: named only when set).
  auto task = [&](int t) {
    if constexpr (Split)
      enc_kernels::attentionPacked<NH, D, PVBf16, Split>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H,
                                                         offsets.data(), nullptr, y.data(), batch, 0.125f, t, 2);
    else
      enc_kernels::attentionPacked<NH, D, PVBf16>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H,
                                                  offsets.data(), nullptr, y.data(), batch, 0.125f, t, 2);
  };
  auto call = [&] {
    std::thread other([&] { task(1); });
    task(0);
    other.join();
  };
  for (int i = 0; i < 5; ++i)
    call();
  std::vector<double> ms;
  for (int r = 0; r < 31; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i)
      call();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 20);
  }
  std::nth_element(ms.begin(), ms.begin() + 15, ms.end());
  return ms[15];
}

int main() {
  syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */);
  std::printf("minilm_8x128 %.3f\n", timeShape<12, 32, false>(8, 128));
  std::printf("bertbase_8x128 %.3f\n", timeShape<12, 64, false>(8, 128));
  std::printf("bertbase_1x512 %.3f\n", timeShape<12, 64, false>(1, 512));
  std::printf("minilm_8x128_bf16pv %.3f\n", timeShape<12, 32, true>(8, 128));
  std::printf("bertbase_8x128_bf16pv %.3f\n", timeShape<12, 64, true>(8, 128));
  std::printf("bertbase_1x512_bf16pv %.3f\n", timeShape<12, 64, true>(1, 512));
#if ENC_ATTN_AMX // the int8 tier's bf16_amx: split bf16 products on tiles
  std::printf("minilm_8x128_split %.3f\n", timeShape<12, 32, true, true>(8, 128));
  std::printf("bertbase_8x128_split %.3f\n", timeShape<12, 64, true, true>(8, 128));
  std::printf("bertbase_1x512_split %.3f\n", timeShape<12, 64, true, true>(1, 512));
#endif
}
