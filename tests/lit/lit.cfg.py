# -*- Python -*-
# lit configuration for the encc FileCheck tests (tests/lit/**).
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ENCC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.encc_obj_root, "tests", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%encc_src_root", config.encc_src_root))

# Tests may need the real model (frontend tests): pass its location through.
for var in ["ENCC_MINILM_DIR", "HOME"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

llvm_config.use_default_substitutions()  # FileCheck, not, count from llvm_tools_dir

# Our own tools live in <build>/bin; search it first so new tools there are found.
tool_dirs = [config.encc_tools_dir, config.llvm_tools_dir]
llvm_config.with_environment("PATH", config.encc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tools = [
    "enc-opt",
    ToolSubst("encc", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# `REQUIRES: nvcc`: tests that build CUDA fatbins (the CUDA toolkit is optional).
import shutil
if os.environ.get("NVCC") or shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"):
    config.available_features.add("nvcc")
for var in ["NVCC"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

# `REQUIRES: encc-serve`: built only where zlib1g-dev and nlohmann-json3-dev are installed.
if os.path.exists(os.path.join(config.encc_tools_dir, "encc-serve")):
    config.available_features.add("encc-serve")
