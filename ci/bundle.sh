#!/usr/bin/env bash
# Packs binaries with the shared libraries they need that are not glibc's (the lent host's image has
# none of our Debian libraries; built on Debian 12's glibc 2.36, they run on its newer glibc) into
# DIR.tar.xz, holding DIR/ (the binaries) and DIR/lib/. libcuda and cuBLAS(Lt) are never carried:
# the host's own are loaded. ci/gpu-bundle.sh, ci/amx-bundle.sh and ci/fuzz-bundle.sh use it.
#   ci/bundle.sh DIR BINARY...        then carry DIR.tar.xz; on the host: tar xJf, LD_LIBRARY_PATH=DIR/lib
set -euo pipefail
out=$1
shift
rm -rf "$out"
mkdir -p "$out/lib"
cp "$@" "$out/"
ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64|libcuda|libcublas|libcublasLt)\.so' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
ls -l "$out.tar.xz"
