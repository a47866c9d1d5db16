# Sourced by the scripts in this folder: repository root, build folder, CUDA on PATH, job count.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${WSV_BUILD_DIR:-$top/build}
export PATH="/usr/local/cuda/bin:$PATH"
jobs=${WSV_JOBS:-$(nproc)}

# configure <build-dir> [cmake args...]: configures once, then only rebuilds.
configure() {
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$top" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
  fi
}
