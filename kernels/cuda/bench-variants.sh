#!/usr/bin/env bash
# Builds variants of bench_cuda_quant (the quant kernels of kernels.cu against a copy kernel, in one
# process) and packs them with a runner, for one measurement on a GPU machine: a shape of the group
# kernel is judged by ratios measured in the same run, next to the variant it would replace.
#
#   kernels/cuda/bench-variants.sh OUT.tar.xz VARIANT...
#   VARIANT: NAME[@REV][:FLAGS]   REV: a git revision (default: the working tree); FLAGS: nvcc macros
#            separated by spaces, e.g. 'h1:-DQCK_LOAD_HINT=1' or 'old@8d2783e' (kernels.cu lists the
#            macros: QCK_UNROLL, QCK_GROUP_VMAX, QCK_NVFP4_VMAX, QCK_PREFETCH, QCK_LOAD_HINT,
#            QCK_GRID_PER_SM, QCK_GROUP_WAVES, QCK_NV_MIN_BLOCKS, QCK_GROUP_MIN_BLOCKS, QCK_NV_STAGES)
#   # on the GPU machine (only the driver is needed: the CUDA runtime is linked in statically):
#   mkdir v && tar -xJf OUT.tar.xz -C v && v/run.sh     # each variant twice, alternated
#
# Each variant is compiled as the backend is (kernels/cuda/CMakeLists.txt qc_cuda_options: no FMA
# contraction, no flush to zero, IEEE division) for sm_90, against $BUILD_DIR/reference/libqcref.a
# (BUILD_DIR=build by default; ci/build.sh makes it). About two minutes a variant on two cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: kernels/cuda/bench-variants.sh OUT.tar.xz NAME[@REV][:FLAGS]...}
shift
[ $# -gt 0 ] || { echo "bench-variants.sh: no variants named" >&2; exit 2; }
lib=$PWD/${BUILD_DIR:-build}/reference/libqcref.a
[ -f "$lib" ] || { echo "bench-variants.sh: $lib not built (ci/build.sh)" >&2; exit 1; }
# NAME[@REV][:FLAGS] -> the three, all checked before the first (slow) build
parse() {
  local head=${1%%:*}
  flags="" rev="" name=${head%%@*}
  [ "$head" != "$1" ] && flags=${1#*:}
  [ "$name" != "$head" ] && rev=${head#*@}
  return 0
}
names=()
for spec in "$@"; do
  parse "$spec"
  [[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "bench-variants.sh: bad variant name '$name' in '$spec'" >&2; exit 2; }
  [[ " ${names[*]} " != *" $name "* ]] || { echo "bench-variants.sh: variant '$name' named twice" >&2; exit 2; }
  [ -z "$rev" ] || git rev-parse -q --verify "$rev^{commit}" > /dev/null ||
    { echo "bench-variants.sh: no revision '$rev' in '$spec'" >&2; exit 2; }
  names+=("$name")
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/v"
for spec in "$@"; do
  parse "$spec"
  src=$PWD
  if [ -n "$rev" ]; then # that revision's sources, as committed (libqcref.a stays this build's)
    src=$work/src-$name
    mkdir "$src"
    git archive "$rev" kernels/cuda include reference | tar -x -C "$src"
  fi
  echo "== $name${rev:+ at $rev}${flags:+ with $flags}"
  # shellcheck disable=SC2086 # FLAGS are words by design
  (cd "$src/kernels/cuda" && nvcc -O2 -DNDEBUG -arch=sm_90 -std=c++17 --fmad=false -ftz=false -prec-div=true \
    -I. -I../../include -I../../reference $flags -cudart static bench_cuda_quant.cu kernels.cu "$lib" -lm \
    -o "$work/v/$name")
  printf '%s\t%s\t%s\n' "$name" "${rev:-working tree at $(git describe --always --dirty --abbrev=12)}" "${flags:-(defaults)}" \
    >> "$work/v/VARIANTS"
done
cat > "$work/v/run.sh" << EOF
#!/bin/bash
# Runs each variant twice, alternated (VARIANTS says what each is); the figures are bench_cuda_quant's.
cd "\$(dirname "\$0")"
nvidia-smi -L
cat VARIANTS
for b in ${names[*]} ${names[*]}; do echo "== \$b"; timeout 120 ./\$b | tail -n +2; done
EOF
chmod +x "$work/v/run.sh"
tar -C "$work/v" -cf - . | xz -9 -T2 > "$out"
ls -l "$out"
