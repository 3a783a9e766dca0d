#!/usr/bin/env bash
# Behaviour identity for performance work: the outputs a change must leave
# byte-identical, written to OUT and compared with BASE (an earlier OUT).
#
#   scripts/identity.sh OUT            # outputs of this checkout (a baseline)
#   scripts/identity.sh OUT BASE       # ... then SAME/DIFF per output against BASE
#   IDENTITY_QUICK=1 ...               # skip the stress compiles and false_alarms
#
# Outputs (see each example's doc comment):
#   gen/               2,000 generated programs (fuzz/examples/gen_dump.rs)
#   cdump.txt          every compile of BASE's (else OUT's) gen/ and the corpus in
#                      four modes, with each fault of the target (compiler/examples/compile_dump.rs);
#                      corpus/spec (the contract's example pairs) is left to the tests
#   cdump-stress.txt   the same for 400 of them under --stress-regalloc 1, 2, 4, 8
#   digest.txt         every interpreter run (fuzz/examples/interp_digest.rs)
#   pairs.jsonl        every verifier report over BASE's (else OUT's) pairs/, 1,915
#                      source/machine pairs with mutants (fuzz/examples/verify_pairs.rs,
#                      verify/benches/pairs.rs)
#   false_alarms.txt   the verifier's soundness/false-alarm table (benches/false_alarms.rs)
# The compiler and verifier are fed BASE's inputs, so that a generator change
# does not hide a compiler change.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/identity.sh OUT [BASE]}; BASE=${2:-}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
[ -n "$BASE" ] && BASE=$(cd "$BASE" && pwd)
IN=${BASE:-$OUT}
T=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p schedra-fuzz --example gen_dump --example interp_digest --example verify_pairs
cargo build --release -q -p schedra-compiler --example compile_dump
E=$T/release/examples
rm -rf "$OUT/gen"; mkdir -p "$OUT/gen"; "$E/gen_dump" "$OUT/gen" 2000 >/dev/null
if [ ! -d "$IN/pairs" ]; then mkdir -p "$IN/pairs"; "$E/verify_pairs" "$IN/pairs" >/dev/null; fi
CORPUS=$(find corpus -name '*.ir' -not -path 'corpus/spec/*' | sort)
"$E/compile_dump" "$IN"/gen/*.ir $CORPUS > "$OUT/cdump.txt" 2>&1
if [ -z "${IDENTITY_QUICK:-}" ]; then
  COMPILE_DUMP_STRESS=1 "$E/compile_dump" $(ls "$IN"/gen/*.ir | head -400) $CORPUS > "$OUT/cdump-stress.txt" 2>&1
fi
"$E/interp_digest" 2>&1 | sed "s|^$PWD/||" > "$OUT/digest.txt"
cargo bench -q -p schedra-verify --bench pairs -- "$IN/pairs" > "$OUT/pairs.jsonl" 2>/dev/null
if [ -z "${IDENTITY_QUICK:-}" ]; then
  cargo bench -q --bench false_alarms 2>/dev/null | tail -5 > "$OUT/false_alarms.txt"
fi
[ -n "$BASE" ] || exit 0
status=0
for f in cdump.txt cdump-stress.txt digest.txt pairs.jsonl false_alarms.txt; do
  [ -f "$OUT/$f" ] || continue
  if cmp -s "$OUT/$f" "$BASE/$f"; then echo "SAME $f"; else echo "DIFF $f"; status=1; fi
done
if diff -rq "$OUT/gen" "$BASE/gen" >/dev/null; then echo "SAME gen"; else echo "DIFF gen"; status=1; fi
exit $status
