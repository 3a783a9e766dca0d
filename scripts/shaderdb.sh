#!/usr/bin/env bash
# shader-db style measurements over the corpus (corpus/*/*.ir, bugzoo excluded).
#
# For every shader and each of the four compiler modes (--ra split|graph x
# --sched topdown|bottomup) it runs
#   schedra compile FILE --ra R --sched S --stats -o /dev/null   (the stats line)
#   schedra verify  FILE --ra R --sched S --json                 (verdict, obligations)
# and prints, as Markdown:
#   1. totals per target and mode: instructions, cycles, spills, fills,
#      max-live, nops, shaders, proven;
#   2. a shader-db report.py-style comparison of each mode against the
#      default (split/topdown), per target and over all targets:
#      "total instructions in shared programs: A -> B (x%)", helped/HURT
#      and the 95% confidence-interval verdict on the mean change;
#   3. the share of verifier obligations closed without Z3, per target and mode.
#
# Usage: scripts/shaderdb.sh [BIN]   (default target/release/schedra, or $BIN)
#        SHADERDB_RAW=FILE keeps the raw per-shader table (TSV).
#        SHADERDB_SHADERS="DIR..." measures the shaders in those directories
#        (.vert .frag .wgsl .spv; glmark2's templates are completed with the
#        substitutions of frontend/src/glmark2.rs, a template nothing fills
#        is rejected like any unsupported shader) instead of the corpus: each
#        is lowered and compiled for every target; one the front end rejects for a target
#        (its stage, a texture, an unsupported construct: status 2) is counted
#        as not lowered there, with the reason, and a section per target
#        counts shaders lowered and proven in all four modes, followed by the
#        per-shader shader-db lines.
# A shader that fails to compile counts as "failed" and is left out of totals.

set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-${BIN:-target/release/schedra}}
[ -x "$BIN" ] || { echo "shaderdb.sh: $BIN not found (cargo build --release)" >&2; exit 2; }

RAW=${SHADERDB_RAW:-$(mktemp)}
trap '[ -n "${SHADERDB_RAW:-}" ] || rm -f "$RAW"' EXIT
MODES="split/topdown split/bottomup graph/topdown graph/bottomup"

REAL=${SHADERDB_SHADERS:-}
UNSUPPORTED=$(mktemp)
LINES=$(mktemp)
trap '[ -n "${SHADERDB_RAW:-}" ] || rm -f "$RAW"; rm -f "$UNSUPPORTED" "$LINES"' EXIT

# The inputs: corpus files, or "target<TAB>file" pairs for real shaders.
inputs() {
  local d f t
  if [ -z "$REAL" ]; then
    for f in corpus/*/*.ir; do
      case "$f" in corpus/bugzoo/*) continue;; esac
      printf -- '-\t%s\n' "$f"
    done
    return
  fi
  for d in $REAL; do
    [ -d "$d" ] || { echo "shaderdb.sh: $d is not a directory" >&2; exit 2; }
    for f in "$d"/*.vert "$d"/*.frag "$d"/*.wgsl "$d"/*.spv; do
      [ -f "$f" ] || continue
      for t in $("$BIN" targets | awk '/^[a-z0-9][a-z0-9-]* / { print $1 }'); do printf '%s\t%s\n' "$t" "$f"; done
    done
  done
}

# One raw line per (mode, shader):
# mode target file inst cycles spills fills maxlive nops verdict total syntactic smt
# (for real shaders the file column is target:file, one shader per target)
collect() {
  local f mode ra sched stats json t key rc
  local -a targ
  while IFS=$'\t' read -r t f; do
    targ=(); key=$f
    if [ "$t" != "-" ]; then targ=(--target "$t"); key="$t:$f"; fi
    for mode in $MODES; do
      ra=${mode%/*}; sched=${mode#*/}
      rc=0
      stats=$("$BIN" compile "$f" "${targ[@]}" --ra "$ra" --sched "$sched" --stats -o /dev/null 2>&1) || rc=$?
      if [ "$rc" = 2 ] && [ "$t" != "-" ]; then
        printf '%s\t%s\t%s\n' "$t" "$f" "${stats#*: }" >>"$UNSUPPORTED"
        break
      fi
      if [ "$rc" != 0 ]; then
        printf '%s\t%s\t%s\tfailed\n' "$mode" "${t/#-/$(basename "$(dirname "$f")")}" "$key"
        continue
      fi
      [ "$t" = "-" ] || printf '%s %s\n' "$mode" "$(grep ' shader: ' <<<"$stats")" >>"$LINES"
      json=$("$BIN" verify "$f" "${targ[@]}" --ra "$ra" --sched "$sched" --json 2>/dev/null || true)
      awk -v mode="$mode" -v file="$key" -v json="$json" '
        / shader: / {
          target = $3
          for (i = 5; i < NF; i += 2) { v = $i; k = $(i + 1); sub(/,$/, "", k); val[k] = v }
          verdict = json ~ /"verdict":"proven"/ ? "proven" : (json ~ /"verdict":"unknown"/ ? "unknown" : "violation")
          tot = syn = smt = 0
          if (match(json, /"total":[0-9]+/)) tot = substr(json, RSTART + 8, RLENGTH - 8)
          if (match(json, /"syntactic":[0-9]+/)) syn = substr(json, RSTART + 12, RLENGTH - 12)
          if (match(json, /"smt":[0-9]+/)) smt = substr(json, RSTART + 6, RLENGTH - 6)
          printf "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\n", mode, target, file,
            val["inst"], val["cycles"], val["spills"], val["fills"], val["max-live"], val["nops"],
            verdict, tot, syn, smt
        }' <<<"$stats"
    done
  done < <(inputs)
}

collect >"$RAW"

echo "## shader-db totals per target and mode"
echo
echo "| target | mode | shaders | inst | cycles | spills | fills | max-live | nops | proven | failed |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
awk -F'\t' -v modes="$MODES" '
  { k = $2 SUBSEP $1; if (!($2 in t)) { t[$2] = 1; T_[++nt] = $2 }
    if ($4 == "failed") { fail[k]++; next }
    n[k]++; i[k] += $4; c[k] += $5; s[k] += $6; f[k] += $7; m[k] += $8; z[k] += $9
    if ($10 == "proven") p[k]++ }
  END { split(modes, M, " ")
    for (x = 1; x <= nt; x++) for (j = 1; j in M; j++) { tg = T_[x]; k = tg SUBSEP M[j]
      printf "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", tg, M[j], n[k], i[k], c[k], s[k], f[k], m[k], z[k], p[k], fail[k] } }' "$RAW"

echo
echo "## report.py-style comparison against split/topdown"
echo
echo "Only shaders that compiled in both modes count (\"shared programs\"); a"
echo "shader is helped/HURT when the metric went down/up."
echo
# Raw lines are in corpus order (targets alphabetical), so first appearance
# gives a stable target order (mawk has no sorted iteration).
awk -F'\t' -v modes="$MODES" '
  function pct(a, b) { return a == 0 ? (b == 0 ? "+0.00%" : "+inf%") : sprintf("%+.2f%%", 100.0 * (b - a) / a) }
  # Student t quantiles for a two-sided 95% interval, by degrees of freedom.
  function tq(df,    t) { if (df >= 30) return 1.96
    split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045", t, " ")
    return t[df] + 0 }
  # Mesa report.py verdict: the 95% confidence interval of the mean relative
  # change over affected programs (a program that was 0 counts as +100%).
  function verdict(name,    mean, sd, i, h) {
    if (NA < 2) return ""
    mean = 0; for (i = 1; i <= NA; i++) mean += R[i]; mean /= NA
    sd = 0; for (i = 1; i <= NA; i++) sd += (R[i] - mean) ^ 2; sd = sqrt(sd / (NA - 1))
    h = tq(NA - 1) * sd / sqrt(NA)
    if (mean - h > 0 || mean + h < 0)
      return sprintf("%s are %s (mean %+.2f%%, 95%% CI %+.2f%% .. %+.2f%%).", name, mean < 0 ? "helped" : "HURT", mean, mean - h, mean + h)
    return sprintf("Inconclusive result for %s (mean %+.2f%%, 95%% CI %+.2f%% .. %+.2f%% includes 0).", name, mean, mean - h, mean + h) }
  function compare(T, j, x,    fl, k, p, q) {
    A = B = H = U = AA = AB = NA = 0
    for (k = 1; k <= nf; k++) { fl = F[k]
      if (T != "" && tgt[fl] != T) continue
      if (!((M[1], fl) in ok) || !((M[j], fl) in ok)) continue
      p = v[M[1], fl, X[x]]; q = v[M[j], fl, X[x]]; A += p; B += q
      if (q < p) H++
      if (q > p) U++
      if (q != p) { AA += p; AB += q; R[++NA] = p == 0 ? 100.0 : 100.0 * (q - p) / p } } }
  $4 != "failed" { v[$1, $3, "instructions"] = $4; v[$1, $3, "cycles"] = $5; v[$1, $3, "spills"] = $6
                   v[$1, $3, "fills"] = $7; ok[$1, $3] = 1
                   if (!($3 in tgt)) { tgt[$3] = $2; F[++nf] = $3 }
                   if (!($2 in seen)) { seen[$2] = 1; T_[++nt] = $2 } }
  END { split(modes, M, " "); split("instructions cycles spills fills", X, " ")
    for (j = 2; j in M; j++) {
      printf "%s vs split/topdown, all targets:\n\n```\n", M[j]
      for (x = 1; x in X; x++) { compare("", j, x)
        printf "total %s in shared programs: %d -> %d (%s)\n", X[x], A, B, pct(A, B)
        printf "%s in affected programs: %d -> %d (%s)\n", X[x], AA, AB, pct(AA, AB)
        printf "helped: %d\nHURT: %d\n", H, U
        if (verdict(X[x]) != "") print verdict(X[x])
        if (x < 4) print "" }
      print "```\n" }
    print "Per target (total in shared programs, helped/HURT):\n"
    print "| target | mode | instructions | cycles | spills | fills |"
    print "| --- | --- | --- | --- | --- | --- |"
    for (t = 1; t <= nt; t++) for (j = 2; j in M; j++) {
      printf "| %s | %s |", T_[t], M[j]
      for (x = 1; x in X; x++) { compare(T_[t], j, x); printf " %d -> %d (%s), %d/%d |", A, B, pct(A, B), H, U }
      print "" } }' "$RAW"
echo

echo "## Obligations closed without Z3"
echo
echo "| target | mode | shaders | obligations | syntactic | smt | syntactic share |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
awk -F'\t' -v modes="$MODES" '
  $4 != "failed" { k = $2 SUBSEP $1; if (!($2 in t)) { t[$2] = 1; T_[++nt] = $2 }; n[k]++; a[k] += $11; s[k] += $12; z[k] += $13
                   ta[$2] += $11; ts[$2] += $12; tz[$2] += $13; tn[$2]++
                   A += $11; S += $12; Z += $13; N++ }
  function share(s, a) { return a ? sprintf("%.1f%%", 100.0 * s / a) : "-" }
  END { split(modes, M, " ")
    for (x = 1; x <= nt; x++) { tg = T_[x]; for (j = 1; j in M; j++) { k = tg SUBSEP M[j]
        printf "| %s | %s | %d | %d | %d | %d | %s |\n", tg, M[j], n[k], a[k], s[k], z[k], share(s[k], a[k]) }
      printf "| **%s** | all four | %d | %d | %d | %d | **%s** |\n", tg, tn[tg], ta[tg], ts[tg], tz[tg], share(ts[tg], ta[tg]) }
    printf "| **all** | all four | %d | %d | %d | %d | **%s** |\n", N, A, S, Z, share(S, A) }' "$RAW"

if [ -n "$REAL" ]; then
  echo
  echo "## Real shaders: lowered and proven per target"
  echo
  echo "| target | lowered | proven in all four modes | not lowered |"
  echo "| --- | ---: | ---: | ---: |"
  awk -F'\t' -v unsup="$UNSUPPORTED" '
    FNR == NR { u[$1]++; if (!($1 in seen)) { seen[$1] = 1; T_[++nt] = $1 }; next }
    { split($3, kf, ":"); t = kf[1]; if (!(t in seen)) { seen[t] = 1; T_[++nt] = t }
      if (!($3 in any)) { any[$3] = 1; low[t]++ }
      if ($4 == "failed" || $10 != "proven") bad[$3] = 1; files[$3] = t }
    END { for (f in files) if (!(f in bad)) good[files[f]]++
      for (x = 1; x <= nt; x++) { t = T_[x]; printf "| %s | %d | %d | %d |\n", t, low[t], good[t], u[t] } }' "$UNSUPPORTED" "$RAW"
  echo
  echo "Not lowered (target: reason, shaders):"
  echo
  awk -F'\t' '{ r = $3; sub(/^[0-9]+:[0-9]+: /, "", r); n[$1 ": " r]++ } END { for (k in n) printf "- %s: %d\n", k, n[k] }' "$UNSUPPORTED" | sort
  echo
  echo "## Per-shader lines (shader-db format, mode first)"
  echo
  echo '```'
  cat "$LINES"
  echo '```'
fi

# The exit status says whether every shader compiled and was proven in every
# mode (make run uses this as its corpus gate).
bad=$(awk -F'\t' '$4 == "failed" || $10 != "proven" { print $1 " " $3 }' "$RAW")
if [ -n "$bad" ]; then
  echo
  echo "NOT PROVEN (mode file):"
  echo "$bad"
  exit 1
fi
