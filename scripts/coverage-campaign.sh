#!/usr/bin/env bash
# scripts/coverage-campaign.sh — the line coverage of compiler/src reached by
# a fuzz campaign (docs/performance.md, "Coverage of a 10-minute campaign").
#
# 1. builds `schedra` with `-C instrument-coverage` into its own target
#    directory (COV_TARGET_DIR, default target/coverage-campaign), for the
#    host triple given explicitly so that build scripts and proc macros stay
#    uninstrumented, and with `--cfg schedra_coverage` so that the binary
#    writes its profile before it ends with `_exit` (src/main.rs `end`);
# 2. runs `schedra fuzz --target all --time TIME --jobs JOBS --seed SEED`
#    with LLVM_PROFILE_FILE naming one .profraw per process (%p) under
#    OUT/profraw;
# 3. merges them with llvm-profdata and prints `llvm-cov report` restricted
#    to compiler/src (per-file table and TOTAL), also written to
#    OUT/compiler.txt; then the five files with the lowest line coverage
#    and the total line coverage on one line each.
#
# Usage: scripts/coverage-campaign.sh [--time 10m] [--jobs N] [--seed S]
#                                     [--out DIR] [--html]
#   --html   also write an HTML report of compiler/src to OUT/html/
# Env: CARGO (default cargo), COV_TARGET_DIR.
# Needs llvm-tools (`rustup component add llvm-tools-preview`; added here
# when rustup is present and the tools are missing).
set -euo pipefail

TIME=10m
JOBS=$(nproc 2>/dev/null || echo 1)
SEED=0
OUT=$PWD/coverage-campaign
HTML=0

while [ $# -gt 0 ]; do
  case "$1" in
    --time) TIME=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --out) OUT=$(realpath -m "$2"); shift 2 ;;
    --html) HTML=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "coverage-campaign.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CARGO=${CARGO:-cargo}
HOST=$(rustc -vV | sed -n 's/host: //p')
LLVM_BIN=$(rustc --print sysroot)/lib/rustlib/$HOST/bin
COV_TARGET_DIR=${COV_TARGET_DIR:-$ROOT/target/coverage-campaign}
BIN=$COV_TARGET_DIR/$HOST/release/schedra

if [ ! -x "$LLVM_BIN/llvm-profdata" ] || [ ! -x "$LLVM_BIN/llvm-cov" ]; then
  command -v rustup >/dev/null 2>&1 && rustup component add llvm-tools-preview >&2
fi
for tool in llvm-profdata llvm-cov; do
  [ -x "$LLVM_BIN/$tool" ] || { echo "coverage-campaign.sh: $LLVM_BIN/$tool missing (rustup component add llvm-tools-preview)" >&2; exit 2; }
done

echo "== build (instrumented) -> $BIN" >&2
(cd "$ROOT" && RUSTFLAGS="${RUSTFLAGS:-} -C instrument-coverage --cfg schedra_coverage" CARGO_TARGET_DIR=$COV_TARGET_DIR \
  "$CARGO" build --release --target "$HOST" -p schedra >&2)

rm -rf "$OUT/profraw" "$OUT/work"
mkdir -p "$OUT/profraw"
echo "== schedra fuzz --target all --time $TIME --jobs $JOBS --seed $SEED" >&2
START=$(date +%s)
# The campaign's own status is 0 when it ran; anything else is reported.
(cd "$ROOT" && LLVM_PROFILE_FILE="$OUT/profraw/schedra-%p-%m.profraw" \
  "$BIN" fuzz --target all --time "$TIME" --jobs "$JOBS" --seed "$SEED" --out "$OUT/work" --json \
  > "$OUT/summary.json" 2> "$OUT/progress.log") || { echo "coverage-campaign.sh: schedra fuzz failed, see $OUT/progress.log" >&2; exit 1; }
echo "== campaign took $(( $(date +%s) - START )) s: $(head -c 120 "$OUT/summary.json")..." >&2

shopt -s nullglob
RAW=("$OUT"/profraw/*.profraw)
[ ${#RAW[@]} -gt 0 ] || { echo "coverage-campaign.sh: no .profraw written" >&2; exit 1; }
"$LLVM_BIN/llvm-profdata" merge -sparse "${RAW[@]}" -o "$OUT/campaign.profdata"

"$LLVM_BIN/llvm-cov" report "$BIN" -instr-profile="$OUT/campaign.profdata" "$ROOT/compiler/src" | tee "$OUT/compiler.txt"
if [ "$HTML" = 1 ]; then
  "$LLVM_BIN/llvm-cov" show -format=html -output-dir="$OUT/html" "$BIN" \
    -instr-profile="$OUT/campaign.profdata" "$ROOT/compiler/src"
  echo "html: $OUT/html/index.html" >&2
fi

# Columns of llvm-cov report: Filename, Regions, Missed, Cover, Functions,
# Missed, Executed, Lines, Missed Lines, Cover, Branches, Missed, Cover.
echo
echo "lowest line coverage:"
grep -E '\.rs ' "$OUT/compiler.txt" | awk '{print $10, $1, "(" $9 " of " $8 " lines missed)"}' | sort -n | head -5 | sed 's/^/  /'
awk '/^TOTAL/ {print "compiler/src line coverage: " $10 " (" $8 - $9 " of " $8 " lines) after a " T " campaign"}' T="$TIME" "$OUT/compiler.txt"
