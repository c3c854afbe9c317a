#!/usr/bin/env bash
# The MOSES run of docs/RESULTS.md ("On MOSES: the full train set"): all 1,584,663 SMILES of
# MOSES's train set (1% held out), the smiles-gpt small preset, batch 128, peak lr 1e-3,
# 5 epochs in 60 checkpointed parts, seed 0, at nice 19. Resumable: run it again after any
# interruption (even kill -9) and it continues from the last complete part.
#
#   cargo build -p xtask --features full                   # once
#   mkdir -p ~/molattn-runs/bin && cp "${CARGO_TARGET_DIR:-target}"/debug/xtask ~/molattn-runs/bin/xtask
#   (setsid nohup bash docs/moses/train-full.sh >> ~/molattn-runs/moses-full.log 2>&1 < /dev/null &)
#
# The binary is a frozen copy, so that rebuilding the workspace does not change the code a
# resumed part runs. MOLATTN_RUNS (default ~/molattn-runs) holds the binary, the run folder
# and its log; the data comes from `xtask data moses` (pip download of the molsets wheel).
# A resumed run must read the same file as the run it continues (run.json records its path:
# ~/.cache/molattn/moses/train.csv for root, unless MOLATTN_CACHE or XDG_CACHE_HOME is set).
#
# Machines are not kept between every two sessions (the runs of 2026-12-03 and 07 were lost
# with theirs), so a session that stops before the run ends saves its last complete part
# into the repository: `docs/moses/train-full.sh --snapshot` (the run paused meanwhile) copies
# it to docs/moses/resume/moses-full/ (about 10 MB), and a later run with no checkpoint of
# its own starts from there.
set -euo pipefail
shopt -s nullglob
runs="${MOLATTN_RUNS:-$HOME/molattn-runs}"
bin="${XTASK_BIN:-$runs/bin/xtask}"
run="$runs/moses-full"
snapshot="$(cd "$(dirname "$0")" && pwd)/resume/moses-full"
has_checkpoint() { compgen -G "$run/checkpoint/model-*.bpk" > /dev/null; }

if [ "${1:-}" = "--snapshot" ]; then
  # The last part whose model, optimizer and scheduler files are all there.
  last=$(for f in "$run"/checkpoint/scheduler-*.bpk; do
           n=${f##*-}; n=${n%.bpk}
           if [ -f "$run/checkpoint/model-$n.bpk" ] && [ -f "$run/checkpoint/optim-$n.bpk" ]; then echo "$n"; fi
         done | sort -n | tail -1)
  [ -n "$last" ] || { echo "no complete part in $run/checkpoint" >&2; exit 1; }
  rm -rf "$snapshot" && mkdir -p "$snapshot/checkpoint"
  for f in run.json vocab.json engine.json data.json skipped.json training_time.json best_model.bpk; do
    if [ -e "$run/$f" ]; then cp "$run/$f" "$snapshot/"; fi
  done
  for split in train valid; do
    for d in "$run/$split"/epoch-*; do
      n=${d##*-}
      if [ "$n" -le "$last" ]; then mkdir -p "$snapshot/$split" && cp -r "$d" "$snapshot/$split/"; fi
    done
  done
  for f in optim scheduler; do cp "$run/checkpoint/$f-$last.bpk" "$snapshot/checkpoint/"; done
  # Every model the engine kept up to $last: the best part's too, which the run loads as
  # best_model.bpk when it ends.
  for f in "$run"/checkpoint/model-*.bpk; do
    n=${f##*-}; n=${n%.bpk}
    if [ "$n" -le "$last" ]; then cp "$f" "$snapshot/checkpoint/"; fi
  done
  echo "part $last of $run -> $snapshot ($(du -sh "$snapshot" | cut -f1))"
  exit 0
fi

if ! has_checkpoint && [ -d "$snapshot/checkpoint" ]; then
  echo "== restoring $snapshot into $run"
  mkdir -p "$run" && cp -r "$snapshot/." "$run/"
fi
"$bin" data moses
data="${MOLATTN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/molattn}/moses/train.csv"
mode=(--force)
if has_checkpoint; then mode=(--resume); fi
echo "== $(date -u +%FT%TZ) ${mode[*]}"
exec nice -n 19 "$bin" train --model smiles-gpt --data "$data" --smiles-column SMILES \
  --valid-fraction 0.01 --epochs 5 --batch-size 128 --lr 1e-3 --checkpoints-per-epoch 12 --seed 0 \
  --out "$run" "${mode[@]}"
