# Sourced by the scripts in this folder: repository root, build folder, CUDA on PATH, job count.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${WSV_BUILD_DIR:-$top/build}
export PATH="/usr/local/cuda/bin:$PATH"
jobs=${WSV_JOBS:-$(nproc)}

# configure <build-dir> [cmake args...]: configures the folder (again: cheap, and the args win).
configure() {
  local dir=$1; shift
  # Always run: a folder configured before keeps its cache, but the options given here win.
  # -g1 (line tables, enough for perf and backtraces) instead of -g: a fresh build on CI's two
  # cores compiles a quarter faster (the analyzer's largest test file: 15.2 s to 11.1 s).
  cmake -S "$top" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "$@" >/dev/null
}
