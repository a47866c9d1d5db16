# Sourced by the scripts in this folder: repository root, build folder, CUDA on PATH, job count.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${WSV_BUILD_DIR:-$top/build}
export PATH="/usr/local/cuda/bin:$PATH"
jobs=${WSV_JOBS:-$(nproc)}

# configure <build-dir> [cmake args...]: configures the folder (again: cheap, and the args win).
configure() {
  local dir=$1; shift
  # Always run: a folder configured before keeps its cache, but the options given here win.
  cmake -S "$top" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
}
