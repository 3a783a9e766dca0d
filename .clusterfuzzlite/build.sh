#!/bin/bash -eu
# Build every cargo-fuzz target of schedra (fuzz/fuzz_targets/*.rs) the way
# OSS-Fuzz and ClusterFuzzLite expect: `cargo fuzz build -O`, each binary
# copied to $OUT under the target's name, with Z3's shared library in
# $OUT/lib (the binaries find it through an $ORIGIN/lib run path).
#
# Environment (all optional outside the builder image):
#   SRC                the directory holding the checkout `schedra/`
#                      (default: the parent of this repository, so that
#                      $SRC/schedra is the repository)
#   OUT                where the fuzz targets go (default: /tmp/cfl-out)
#   CARGO_TARGET_DIR   cargo's target directory (default: $SRC/schedra/target)
#   FUZZ_SANITIZER     cargo-fuzz's --sanitizer. Default: cargo-fuzz's own
#                      (address, what OSS-Fuzz runs) on a nightly toolchain;
#                      `none` on stable, where sanitizers are unavailable —
#                      the targets build and run on stable that way.
#   CARGO_FUZZ_FLAGS   extra flags for `cargo fuzz build` (e.g. --dev)
#
# Locally: `cargo install cargo-fuzz --locked` once (and libz3-dev, see
# `make deps`), then
#   OUT=/tmp/cfl-out bash .clusterfuzzlite/build.sh
# builds the four targets into /tmp/cfl-out (the first build compiles the
# whole workspace with fuzzing instrumentation: minutes).

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -d "${SRC:-}/schedra/fuzz" ]; then
  repo="$SRC/schedra"
else
  repo="$here"
fi
OUT="${OUT:-/tmp/cfl-out}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
mkdir -p "$OUT/lib"
cd "$repo"

if [ -z "${FUZZ_SANITIZER:-}" ] && ! rustc -V | grep -q nightly; then
  FUZZ_SANITIZER=none
fi
sanitizer=()
if [ -n "${FUZZ_SANITIZER:-}" ]; then
  sanitizer=(--sanitizer "$FUZZ_SANITIZER")
fi

host="$(rustc -vV | sed -n 's/host: //p')"
# shellcheck disable=SC2086 # CARGO_FUZZ_FLAGS is a list of flags
cargo fuzz build -O "${sanitizer[@]}" --features libfuzzer ${CARGO_FUZZ_FLAGS:-}

built="$CARGO_TARGET_DIR/$host/release"
for src in fuzz/fuzz_targets/*.rs; do
  name="$(basename "$src" .rs)"
  if [ ! -x "$built/$name" ]; then
    echo "build.sh: $built/$name was not built" >&2
    exit 1
  fi
  cp "$built/$name" "$OUT/$name"
  # Z3 is a shared library the runner image lacks: ship it beside the
  # target and point the target's run path at it.
  for lib in $(ldd "$OUT/$name" | awk '/libz3/ { print $3 }'); do
    cp -L "$lib" "$OUT/lib/"
  done
  if command -v patchelf >/dev/null; then
    patchelf --set-rpath '$ORIGIN/lib' "$OUT/$name"
  fi
  echo "build.sh: $OUT/$name"
done
