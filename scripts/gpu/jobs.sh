# Shared by the GPU end-to-end scripts (scripts/gpu-llamacpp-e2e, scripts/gpu-moe-e2e): the
# step log, the results kept across device calls, the jobs loop under the call's deadline,
# and what comes back. Sourced after ROOT, SB, WORK and OUT are set.
#
#   gpu_steps_init          steps.tsv in $OUT; `step NAME NOTE COMMAND...` runs and times one
#   gpu_restore_results     $WORK/results from SEED_RESULTS (an earlier call's results.tar.xz)
#   gpu_run_jobs            the jobs in $JOBS, in order (below); sets run_rc
#   gpu_pack PATTERN        results.tar.xz, logs.tar.xz and server-timeline.txt (the log lines
#                           matching PATTERN, an extended regex) into $OUT; exits with run_rc

gpu_steps_init() {
  STEPS="$OUT/steps.tsv"
  [ -f "$STEPS" ] || printf 'step\tseconds\tnote\n' > "$STEPS"
}

step() { # step NAME NOTE COMMAND...
  local name="$1" note="$2"; shift 2
  local t0; t0=$(date +%s.%N)
  echo "== $name: $note"
  local rc=0
  "$@" || rc=$?
  local t1; t1=$(date +%s.%N)
  local dt; dt=$(python3 -c "print(f'{$t1-$t0:.1f}')")
  printf '%s\t%s\t%s (exit %s)\n' "$name" "$dt" "$note" "$rc" >> "$STEPS"
  echo "== $name done in ${dt}s (exit $rc)"
  return "$rc"
}

gpu_restore_results() {
  RES="$WORK/results"
  # A fresh machine has none of the last call's results: SEED_RESULTS (a results.tar.xz an
  # earlier call returned, carried back in) restores them, so that an interrupted run resumes.
  if [ ! -d "$RES" ] && [ -f "${SEED_RESULTS:-$ROOT/.gpu/results.tar.xz}" ]; then
    echo "== restoring results from ${SEED_RESULTS:-$ROOT/.gpu/results.tar.xz}"
    tar xJf "${SEED_RESULTS:-$ROOT/.gpu/results.tar.xz}" -C "$WORK"
  fi
  mkdir -p "$RES"
}

latest() { # latest result file (not a .compare/.rerun one) under results/<name>/
  ls -t "$RES/$1"/*.json 2>/dev/null | grep -E '/[0-9]{8}T[0-9]{6}Z-[0-9a-z]+\.json$' | head -1 || true
}

# The jobs, in order (JOBS, space-separated): `run:SPEC` runs a spec — resuming its latest
# result when that one is not complete — then `compare` and `report`; `run:SPEC@A,B,…` adds
# the run options A B … (e.g. `@--trials,5,--set,trials.until_decided=null`: a fixed design);
# `rerun:RESULT` re-runs a published result (its stored spec) and judges what reproduces, and
# `rerun:latest:NAME` the latest result of spec NAME made here. With ONLY_UNFINISHED=1 a
# `run:` job whose latest result is complete is skipped, so that the same call can be made
# again until every job is done.
# The device call has a hard limit (DEADLINE seconds from the script's start, default 570):
# each job gets what is left less a minute for compare, report and packing, and is stopped
# with SIGINT when it runs out, which keeps every finished trial; the next call resumes it.
gpu_run_jobs() {
  run_rc=0
  local job kind arg extra left rc name resume PREV RESULT report_dir
  for job in $JOBS; do
    kind="${job%%:*}" arg="${job#*:}" extra=()
    case "$arg" in *@*) IFS=, read -r -a extra <<< "${arg#*@}"; arg="${arg%%@*}" ;; esac
    left=$(( ${DEADLINE:-570} - SECONDS - 60 ))
    if [ "$left" -le 30 ]; then
      echo "== $job: only ${left}s left of DEADLINE=${DEADLINE:-570}: not started (run again: the set-up and finished trials are kept)"
      run_rc=124
      break
    fi
    rc=0
    if [ "$kind" = rerun ]; then
      case "$arg" in latest:*) arg="$(latest "${arg#latest:}")" ;; esac
      [ -f "$arg" ] || { echo "== $job: no result to re-run"; run_rc=1; continue; }
      name="$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['spec_name'])" "$arg")"
      step rerun "servebench rerun $arg (at most ${left}s)" \
        timeout -s INT -k 30 "$left" "$SB" rerun "$arg" --results-dir "$RES" --no-bars || rc=$?
      RESULT="$(latest "$name")"
      [ -z "$RESULT" ] || "$SB" rerun "$arg" --with "$RESULT" --json > "${RESULT%.json}.rerun.json" || true
      [ -z "$RESULT" ] || "$SB" rerun "$arg" --with "$RESULT" > "${RESULT%.json}.rerun.txt" || true
    else
      "$SB" validate "$arg"
      name="$("$SB" plan "$arg" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['name'])")"
      resume=()
      PREV="$(latest "$name")"
      if [ -n "$PREV" ] && python3 -c "import json,sys; sys.exit(0 if json.load(open('$PREV'))['status'] != 'complete' else 1)"; then
        echo "== resuming $PREV"
        resume=(--resume "$PREV")
      elif [ -n "$PREV" ] && [ "${ONLY_UNFINISHED:-0}" = 1 ]; then
        echo "== $job: $PREV is complete (ONLY_UNFINISHED=1): skipped"
        continue
      fi
      step run "servebench run $arg ${extra[*]} ${resume[*]} (at most ${left}s)" \
        timeout -s INT -k 30 "$left" "$SB" run "$arg" "${extra[@]}" --results-dir "$RES" --no-bars "${resume[@]}" || rc=$?
      RESULT="$(latest "$name")"
    fi
    [ -n "$RESULT" ] || { echo "== $job wrote no result (exit $rc)"; run_rc=1; continue; }
    step compare "servebench compare $(basename "$RESULT")" "$SB" compare "$RESULT" || true
    "$SB" compare "$RESULT" --json > "${RESULT%.json}.compare.json" || true
    report_dir="${RESULT%.json}.report"
    step report "servebench report $(basename "$RESULT")" "$SB" report "$RESULT" --output "$report_dir" || true
    # rerun exits 1 when a value is not reproduced: that is its answer, not a broken call
    if [ "$rc" -ne 0 ] && ! { [ "$kind" = rerun ] && [ "$rc" -eq 1 ]; }; then run_rc=$rc; fi
  done
}

# What comes back from a device call is at most 16 MiB a file: the results (result files,
# comparisons, reports; request sidecars compressed) in one archive; the server logs in
# another; and the timeline of every server start and stop, with the verify lines, as text.
gpu_pack() {
  export XZ_OPT=-T0
  tar cJf "$OUT/results.tar.xz" -C "$WORK" --exclude='*.logs' results
  (cd "$WORK" && tar cJf "$OUT/logs.tar.xz" results/*/*.logs) || true
  local d
  for d in "$RES"/*/; do
    grep -H -E "$1" "$d"*.logs/*.log 2>/dev/null | sed "s|^$RES/||"
  done > "$OUT/server-timeline.txt" || true
  ls -la "$OUT"
  echo "jobs exit $run_rc"
  exit "$run_rc"
}
