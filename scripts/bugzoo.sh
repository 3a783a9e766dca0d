#!/usr/bin/env bash
# scripts/bugzoo.sh — measure the bug zoo (docs/bugzoo.md).
#
# For every fault of `schedra compile --inject list`, on the fault's target
# (or, for target-independent faults, on every target), for each seed run
#
#     schedra fuzz --target T --inject F --time 60s --seed S --jobs 1 --out DIR --json
#
# and record, from the JSON summary, the time of the first finding
# (`first_finding_s`, the time-to-find), its verifier kind and its
# minimized size. The first finding's case.ir is re-checked: it must be
# proven without the fault under the options the campaign used (column
# "own" counts the runs where it is, so a finding that is a real compiler
# bug, not the fault's, shows up). Column "min ok" counts the runs whose
# first finding's min.ir fails with the fault and is proven without it,
# under the options in its header. At most PAR campaigns run at once.
#
# Usage: scripts/bugzoo.sh [--time 60s] [--seeds "1 2 3 4 5"] [--par 2]
#                          [--out DIR] [--faults "f1 f2"] [--report]
#   --report   only print the table from an earlier run's DIR
# Env: SCHEDRA (default target/release/schedra, else $CARGO_TARGET_DIR/release/schedra)
#
# Output: one markdown table on standard output (also DIR/table.md); the
# per-run data stays in DIR/<fault>/<target>/s<seed>/ (summary.json,
# progress.log, load, first.txt).
set -euo pipefail

TIME=60s
SEEDS="1 2 3 4 5"
PAR=2
OUT=$PWD/bugzoo-runs
FAULTS=""
REPORT_ONLY=0
ALL_TARGETS="v3d71 gen8 r600 kepler"

while [ $# -gt 0 ]; do
  case "$1" in
    --time) TIME=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --par) PAR=$2; shift 2 ;;
    --out) OUT=$(realpath -m "$2"); shift 2 ;;
    --faults) FAULTS=$2; shift 2 ;;
    --report) REPORT_ONLY=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "bugzoo.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ -z "${SCHEDRA:-}" ]; then
  SCHEDRA=target/release/schedra
  [ -x "$SCHEDRA" ] || SCHEDRA=${CARGO_TARGET_DIR:-target}/release/schedra
fi
SCHEDRA=$(realpath "$SCHEDRA")
export SCHEDRA TIME OUT

# fault<TAB>target ("any" for target-independent faults)
# (faults marked `hangs` make the compiler loop forever: no zoo campaign)
LIST=$("$SCHEDRA" compile --inject list | awk -F'\t' '$4 != "hangs"' | cut -f1,2)
[ -n "$FAULTS" ] || FAULTS=$(echo "$LIST" | cut -f1 | tr '\n' ' ')
targets_of() { # fault -> targets to try
  local t
  t=$(echo "$LIST" | awk -F'\t' -v f="$1" '$1 == f { print $2 }')
  if [ "$t" = "any" ]; then echo "$ALL_TARGETS"; else echo "$t"; fi
}

# One campaign, then a re-check of its first finding.
run_one() {
  local fault=$1 target=$2 seed=$3
  local dir=$OUT/$fault/$target/s$seed
  rm -rf "$dir"; mkdir -p "$dir"
  cut -d' ' -f1 /proc/loadavg > "$dir/load"
  "$SCHEDRA" fuzz --target "$target" --inject "$fault" --time "$TIME" --seed "$seed" \
    --jobs 1 --out "$dir/work" --json > "$dir/summary.json" 2> "$dir/progress.log" || true
  cut -d' ' -f1 /proc/loadavg >> "$dir/load"
  # first.txt: "own kind" — own=1 when the first finding's source is proven
  # without the fault under the campaign's options, so the fault caused it.
  local fdir own=0 opts
  fdir=$(jq -r '[.findings[]] | sort_by(.found_s) | .[0].dir // empty' "$dir/summary.json" 2>/dev/null || true)
  if [ -n "$fdir" ] && [ -f "$fdir/case.ir" ]; then
    opts=$(sed -n 's/^# reproduce: schedra verify case.ir //p' "$fdir/case.ir" | sed 's/--inject [^ ]*//')
    # shellcheck disable=SC2086
    if "$SCHEDRA" verify "$fdir/case.ir" $opts --json 2>/dev/null | jq -e '.verdict == "proven"' >/dev/null; then own=1; fi
  fi
  echo "$own" > "$dir/first.txt"
  # min.txt: "ok" when the first finding's min.ir fails with the fault and is
  # proven without it, under the options in its header; else "bad" ("-": none).
  local mok=- mopts
  if [ -n "$fdir" ] && [ -f "$fdir/min.ir" ]; then
    mok=bad
    mopts=$(sed -n 's/^# reproduce: schedra verify min.ir //p' "$fdir/min.ir")
    # shellcheck disable=SC2086
    if "$SCHEDRA" verify "$fdir/min.ir" $mopts --json 2>/dev/null | jq -e '.verdict != "proven"' >/dev/null &&
       "$SCHEDRA" verify "$fdir/min.ir" $(echo "$mopts" | sed 's/--inject [^ ]*//') --json 2>/dev/null | jq -e '.verdict == "proven"' >/dev/null; then mok=ok; fi
  fi
  echo "$mok" > "$dir/min.txt"
  echo "done $fault $target seed $seed: $(jq -c '{first_finding_s, n: (.findings|length), execs}' "$dir/summary.json" 2>/dev/null)" >&2
}
export -f run_one

if [ "$REPORT_ONLY" = 0 ]; then
  mkdir -p "$OUT"
  jobs_file=$OUT/jobs.txt
  : > "$jobs_file"
  for f in $FAULTS; do
    for t in $(targets_of "$f"); do
      for s in $SEEDS; do echo "$f $t $s" >> "$jobs_file"; done
    done
  done
  echo "bugzoo: $(wc -l < "$jobs_file") campaigns of $TIME, $PAR at a time; load now $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  xargs -P "$PAR" -L 1 bash -c 'run_one "$@"' _ < "$jobs_file"
fi

# ---- report -------------------------------------------------------------
median() { # numbers (or "inf") on stdin -> median
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "inf"; exit } m = (NR % 2) ? v[(NR + 1) / 2] : ((v[NR / 2] == "inf" || v[NR / 2 + 1] == "inf") ? "inf" : (v[NR / 2] + v[NR / 2 + 1]) / 2); print m }'
}
fmt_s() { if [ "$1" = "inf" ]; then echo "not found"; else printf '%.1f s' "$1"; fi; }

{
  echo "| fault | target | kind (first finding) | median time-to-find | 5 seeds (s) | minimized size (first finding, per seed) | own | min ok | execs/s | load |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for f in $FAULTS; do
    for t in $(targets_of "$f"); do
      times="" kinds="" sizes="" own=0 runs=0 rates="" loads="" mok=0
      for s in $SEEDS; do
        d=$OUT/$f/$t/s$s
        [ -f "$d/summary.json" ] || continue
        runs=$((runs + 1))
        ft=$(jq -r '.first_finding_s // "inf"' "$d/summary.json" 2>/dev/null || echo inf)
        [ -n "$ft" ] || ft=inf
        times="$times $ft"
        k=$(jq -r '[.findings[]] | sort_by(.found_s) | .[0].kind // "-"' "$d/summary.json" 2>/dev/null || echo -)
        n=$(jq -r '[.findings[]] | sort_by(.found_s) | .[0].minimized_instructions // "-"' "$d/summary.json" 2>/dev/null || echo -)
        kinds="$kinds $k"; sizes="$sizes $n"
        own=$((own + $(cat "$d/first.txt" 2>/dev/null || echo 0)))
        [ "$(cat "$d/min.txt" 2>/dev/null)" = ok ] && mok=$((mok + 1))
        rates="$rates $(jq -r '.execs_per_sec' "$d/summary.json" 2>/dev/null || echo 0)"
        loads="$loads $(tr '\n' ' ' < "$d/load" 2>/dev/null)"
      done
      [ "$runs" -gt 0 ] || continue
      med=$(echo "$times" | tr ' ' '\n' | grep -v '^$' | median)
      vals=$(for x in $times; do if [ "$x" = inf ]; then printf -- '— '; else printf '%.1f ' "$x"; fi; done)
      ukinds=$(echo "$kinds" | tr ' ' '\n' | grep -v '^$' | sort | uniq -c | sort -rn | awk '{ printf "%s%s×%s", (NR > 1 ? ", " : ""), $2, $1 }')
      rate=$(echo "$rates" | tr ' ' '\n' | grep -v '^$' | median)
      load=$(echo "$loads" | tr ' ' '\n' | grep -v '^$' | median)
      printf '| %s | %s | %s | %s | %s| %s | %s/%s | %s/%s | %.1f | %s |\n' "$f" "$t" "$ukinds" "$(fmt_s "$med")" "$vals" "$(echo $sizes)" "$own" "$runs" "$mok" "$runs" "$rate" "$load"
    done
  done
} | tee "$OUT/table.md"
