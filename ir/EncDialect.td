//===- EncDialect.td - The enc dialect --------------------------*- tablegen -*-===//
//
// Tensor-level ops of a Transformer encoder (BERT/MiniLM): what the frontends
// emit, the passes rewrite and the CPU codegen turns into plan steps.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_DIALECT_TD
#define ENC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Enc_Dialect : Dialect {
  let name = "enc";
  let cppNamespace = "::mlir::enc";
  let summary = "Tensor ops of Transformer encoder models";
  let description = [{
    The `enc` dialect describes one encoder forward pass on value-semantics
    tensors. Batch and sequence dimensions are dynamic (`?`); model
    dimensions are static. Weights are referenced by name (`enc.weight`) and
    live in a `WeightStore` beside the module, never in the IR text. All ops
    are pure.
  }];
  let extraClassDeclaration = [{
    /// The WeightStore that travels with the module being compiled, or null
    /// (enc-opt, lit). Passes that create weights (enc-fuse-qkv) write into it
    /// when set; the dialect does not own it.
    void setWeightStore(WeightStore *store) { weightStore = store; }
    WeightStore *getWeightStore() const { return weightStore; }

    /// Counters of the enc passes: pass short name -> statistic -> value
    /// ("fuse-qkv" -> "num-fused" -> 2). MLIR's Pass::Statistic is compiled
    /// out when LLVM is built with NDEBUG (Debian's packages), so each enc
    /// pass also adds its counts here after every run (thread-safe). The
    /// driver reads them for --pass-statistics and clears them between runs.
    using PassCounts = std::map<std::string, std::map<std::string, uint64_t>>;
    void addPassCount(llvm::StringRef pass, llvm::StringRef statistic,
                      uint64_t value);
    PassCounts getPassCounts() const;
    void clearPassCounts();

  private:
    WeightStore *weightStore = nullptr;
    mutable std::mutex passCountsMutex;
    PassCounts passCounts;

  public:
  }];
}

class Enc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Enc_Dialect, mnemonic, traits>;

#endif // ENC_DIALECT_TD
