//===- RandomWeightsFolder.h - A model folder with encc's random weights --===//
#ifndef ENCC_TESTS_E2E_RANDOMWEIGHTSFOLDER_H
#define ENCC_TESTS_E2E_RANDOMWEIGHTSFOLDER_H

#include <cstdint>
#include <string>

namespace encc::testing {

/// Makes `dir` a model folder: `configPath` copied as its config.json and
/// encc::randomWeights(config, seed) written as its model.safetensors (F32,
/// the checkpoint's tensor names: a WeightSpec::concatOf tensor split into
/// its parts, synthesized zeros left out). These are the weights a recorder
/// gave transformers through its port of RandomWeights.cpp
/// (tests/reference/modernbert/record_modernbert.py). Throws
/// std::runtime_error on failure.
void writeRandomWeightsFolder(const std::string &configPath, uint64_t seed, const std::string &dir);

} // namespace encc::testing

#endif
