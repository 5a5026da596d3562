#!/usr/bin/env bash
# The probes of issue 39 ("nothing lost, whatever the input"), as a script that any build of the
# toolkit can be held to: each hostile but realistic input must end with one clear line on stderr
# and a non-zero exit, and leave every file that was there before byte for byte (and nothing new,
# unless the probe says what it may add). ctest runs it (test_e2e_nothing_lost); run it by hand
# against another binary to see what that one does:
#
#   tests/e2e/nothing_lost_probes.sh build/orchestra [PROBE...]   (names: see `probes` at the end)
#
# Every probe works in its own copy of a sandbox: an experiment's results with a user's own file
# beside them, a sibling folder, a file above the results, a real run of two processes. Exit
# status: the number of probes that failed (0: all held).
set -uo pipefail

binary="$(realpath "${1:?usage: nothing_lost_probes.sh ORCHESTRA_BINARY [PROBE...]}")"
shift
source_dir="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/nothing-lost.XXXXXX")"
trap 'rm -rf "$work"' EXIT
failures=0
export ORCHESTRA_PROGRESS_EVERY_S=3600
# The Fashion-MNIST folder: ctest passes configure's ORCHESTRA_TEST_FASHION_MNIST (a GPU machine's
# unpacked copy, say); by hand, Debian's dataset-fashion-mnist.
data_dir="${ORCHESTRA_TEST_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}"

say() { printf '%s\n' "$*"; }
probe_failed=0
fail() { say "FAIL $probe: $*"; failures=$((failures + 1)); probe_failed=1; }
# The verdict of one probe: ok with what it said, unless something failed.
verdict() { if [ "$probe_failed" -eq 0 ]; then say "ok   $probe: $*"; fi; probe_failed=0; }

# Every path under a folder (names quoted, so that a newline in one cannot hide another) with its
# bytes' hash: two listings are equal iff nothing was changed, removed or added.
listing() { (cd "$1" && find . -mindepth 1 -print0 | sort -z | while IFS= read -r -d '' path; do
  if [ -f "$path" ] && [ ! -L "$path" ]; then printf 'f %q %s\n' "$path" "$(sha256sum < "$path" | cut -c1-16)"; else printf 'd %q\n' "$path"; fi
done); }

base_config() {  # the issue's base: Fashion-MNIST (2000 samples), MLP [16], 1 epoch, two workers
  cat <<EOF
name: ${1:-probe}
seed: 1
data: {dataset: fashion-mnist, path: "$data_dir", train_limit: 2000, test_limit: 500}
model: {arch: mlp, hidden: [16]}
training: {global_batch: 64, epochs: 1, target_accuracy: 0.5}
cluster:
  workers:
    - {name: a, time_model: {coefficients: [5, 0.1]}, max_batch: 256}
    - {name: b, time_model: {coefficients: [10, 0.2]}, max_batch: 256}
EOF
}

real_config() {  # a real two-process run on synthetic data (seconds)
  cat <<EOF
name: real
seed: 7
data: {dataset: synthetic, synthetic: {train: 512, test: 128, channels: 1, side: 8}}
model: {arch: mlp, hidden: [${1:-32}]}
training: {global_batch: 64, lr: ${2:-0.05}, epochs: ${3:-1}, target_accuracy: 0.5}
cluster:
  mode: real
  workers:
    - {name: fast, max_batch: 64}
    - {name: slow, max_batch: 64}
policies: [dsgd, {name: lbb, repetitions: 2, window: 4}]
EOF
}

# The template every probe starts from: results/exp/ (a finished experiment and notes.txt, a
# user's file), results/important/ (a sibling), results/keep.txt (above the results).
make_template() {
  local t="$work/template"
  mkdir -p "$t/results/important"
  (cd "$t" && { base_config; echo "policies: [dsgd, {name: local-sgd, H: 4}]"; } > base.yaml &&
    "$binary" run base.yaml --out results/exp --quiet > /dev/null) || { say "cannot make the template: the base run failed"; exit 99; }
  echo "my notes" > "$t/results/exp/notes.txt"
  echo "important" > "$t/results/important/data.txt"
  echo "keep me" > "$t/results/keep.txt"
  echo "user file" > "$t/README.user"
}

sandbox() { rm -rf "$work/sb"; cp -a "$work/template" "$work/sb"; cd "$work/sb" || exit 99; }

# Runs a command that must be refused: non-zero exit, exactly one line on stderr, every earlier
# file byte for byte and nothing new (the listing of the sandbox unchanged). $1: what the line must
# contain (a grep -E pattern), then the command.
refused() {
  local pattern="$1"; shift
  local before; before="$(listing "$work/sb")"
  timeout 120 "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  local lines; lines="$(grep -c . "$work/err")"
  if [ "$rc" -eq 0 ]; then fail "exit 0 (expected a refusal): $*"; fi
  if [ "$rc" -eq 124 ]; then fail "timed out: $*"; fi
  if [ "$rc" -gt 128 ]; then fail "killed by signal $((rc - 128)): $*"; fi
  if [ "$lines" -ne 1 ]; then fail "$lines lines on stderr (expected one):"; sed 's/^/    /' "$work/err" | head -8; fi
  if ! grep -qE -- "$pattern" "$work/err"; then fail "stderr does not say /$pattern/: $(head -c 400 "$work/err")"; fi
  # A clear line is one of the toolkit's own errors, not a library's exception passed through
  # ("orchestra: error: filesystem error: ...") or a crash.
  if grep -qE -- '^orchestra: error: |terminate called|Aborted|Segmentation' "$work/err"; then fail "not one of the toolkit's errors: $(head -c 300 "$work/err")"; fi
  if [ "$(listing "$work/sb")" != "$before" ]; then
    fail "the sandbox changed:"; diff <(echo "$before") <(listing "$work/sb") | sed 's/^/    /' | head -12
  fi
  if [ -e "$work/escaped" ] || [ -e "$work/x" ]; then fail "something was written outside the sandbox"; rm -rf "$work/escaped" "$work/x"; fi
  verdict "$(head -c 300 "$work/err")"
}

with_policies() { { base_config "${2:-probe}"; echo "policies: $1"; } > probe.yaml; }

# --- the probes ---------------------------------------------------------------------------------

probe_labels() {  # a label is a name, never a path (and never two policies' name)
  local label pattern
  for label in '"."' '".."' '""' '"../important"' '"../../x"' '"a/b"' '"dsgd"' '"tab\there"' '"new\nline"' '".hidden"' '"checkpoints"'; do
    probe="label $label"; sandbox
    with_policies "[dsgd, {name: local-sgd, H: 4, label: $label}]"
    pattern='probe\.yaml:[0-9]+: policies\[1\]\.label: '
    refused "$pattern" "$binary" run probe.yaml --out results/exp --quiet
  done
  probe="a sweep whose label would hold a separator"; sandbox
  with_policies "[{name: fixed-t, T_ms: [100, 200], label: \"x/y\"}]"
  refused 'policies\[0\]\.label' "$binary" run probe.yaml --out results/exp --quiet
}

probe_names() {  # an experiment's name becomes results/<name>
  local name
  for name in '"../../escaped"' '"."' '".."' '""' '"a/b"' '"bell\a"'; do
    probe="name $name"; sandbox
    { base_config; echo "policies: [dsgd]"; } | sed "s|^name: .*|name: $name|" > probe.yaml
    refused 'probe\.yaml:1: name: ' "$binary" run probe.yaml --quiet
  done
  probe="a config whose stem is not a name"; sandbox
  { base_config; echo "policies: [dsgd]"; } | grep -v '^name:' > '..yaml'
  refused "name" "$binary" run '..yaml' --quiet
  probe="worker names that are not names"; sandbox
  { base_config; echo "policies: [dsgd]"; } | sed 's/{name: b,/{name: "x,y",/' > probe.yaml
  refused 'probe\.yaml:[0-9]+: cluster\.workers\[1\]\.name' "$binary" run probe.yaml --out results/exp --quiet
}

probe_lock() {  # two runs into one folder: the second exits at once, naming the first's pid
  probe="two runs into one --out"; sandbox
  # The first run long enough (3 epochs of 30,000 samples) that the second, started once the first holds the folder,
  # meets it there whatever the machine's speed.
  { base_config; echo "policies: [dsgd, {name: local-sgd, H: 4}]"; } | sed 's/epochs: 1,/epochs: 3,/; s/train_limit: 2000/train_limit: 30000/' > long.yaml
  "$binary" run long.yaml --out results/exp --quiet --overwrite > /dev/null 2> "$work/first.err" &
  local first=$!
  local waited=0
  while [ ! -e results/exp/.orchestra.lock ] && [ $waited -lt 400 ]; do sleep 0.05; waited=$((waited + 1)); done
  timeout 60 "$binary" run base.yaml --out results/exp --quiet > /dev/null 2> "$work/err"
  local rc=$?
  wait $first
  local first_rc=$?
  [ "$rc" -ne 0 ] || fail "the second run exited 0"
  [ "$(grep -c . "$work/err")" -eq 1 ] || fail "the second run printed $(grep -c . "$work/err") lines"
  grep -q "pid $first" "$work/err" || fail "the second run does not name the first's pid $first: $(cat "$work/err")"
  [ "$first_rc" -eq 0 ] || fail "the first run failed: $(cat "$work/first.err")"
  [ -f results/exp/notes.txt ] || fail "notes.txt is gone"
  [ ! -e results/exp/.orchestra.lock ] || fail "the lock file stayed behind"
  verdict "$(cat "$work/err")"
}

probe_other_experiment() {  # a folder of another experiment: refused, then --overwrite removes only its folders
  probe="--seed 9 into another run's folder"; sandbox
  refused 'results/exp: .*seed' "$binary" run base.yaml --seed 9 --out results/exp --quiet
  probe="another experiment into its folder"; sandbox
  with_policies "[{name: osa}]" other
  refused 'results/exp: .*(dsgd|local-sgd)' "$binary" run probe.yaml --out results/exp --quiet
  probe="--overwrite"; sandbox
  with_policies "[{name: osa}]" other
  if "$binary" run probe.yaml --out results/exp --quiet --overwrite > /dev/null 2> "$work/err"; then
    [ -d results/exp/osa ] || fail "no osa folder"
    [ ! -e results/exp/dsgd ] && [ ! -e results/exp/local-sgd ] || fail "the other experiment's folders are still there"
    [ "$(cat results/exp/notes.txt)" = "my notes" ] || fail "notes.txt changed"
    [ "$(cat results/keep.txt)" = "keep me" ] && [ -f results/important/data.txt ] || fail "files outside --out changed"
    verdict "$(cat "$work/err")"
  else
    fail "--overwrite was refused: $(cat "$work/err")"
  fi
  probe="the same experiment again"; sandbox
  "$binary" run base.yaml --out results/exp --quiet > /dev/null 2> "$work/err" || fail "rerunning the same experiment was refused: $(cat "$work/err")"
  [ "$(cat results/exp/notes.txt)" = "my notes" ] || fail "notes.txt changed"
  verdict "replaced its own results"
  probe="a user's folder named like a label"; sandbox
  with_policies "[{name: osa}]" other
  mkdir -p results/fresh/osa && echo "mine" > results/fresh/osa/mine.txt
  refused 'osa' "$binary" run probe.yaml --out results/fresh --quiet --overwrite
}

probe_out() {  # --out that cannot be written: one line, before any training
  probe="--out is a file"; sandbox
  refused 'results/keep\.txt' "$binary" run base.yaml --out results/keep.txt --quiet
  probe="--out in a read-only folder"; sandbox
  if [ "$(id -u)" -eq 0 ] && ! command -v setpriv > /dev/null; then say "skip $probe: root ignores permissions"; return; fi
  mkdir ro && chmod 555 ro
  if [ "$(id -u)" -eq 0 ]; then
    refused 'ro/out' setpriv --reuid=65534 --regid=65534 --clear-groups "$binary" run base.yaml --out ro/out --quiet
  else
    refused 'ro/out' "$binary" run base.yaml --out ro/out --quiet
  fi
  chmod 755 ro
}

probe_numbers() {  # finite numbers in their ranges, from YAML and traces alike
  local c
  for c in '[1e308, 1e308]' '[1e300, 0.2]' '[.inf]' '[.nan, 1]'; do
    probe="coefficients $c"; sandbox
    { base_config; echo "policies: [dsgd]"; } | sed "s/coefficients: \[10, 0.2\]/coefficients: $c/" > probe.yaml
    refused 'probe\.yaml:[0-9]+: cluster\.workers\[1\]\.time_model\.coefficients' "$binary" run probe.yaml --out results/exp --quiet
  done
  probe="a perturbation trace slowdown of 1e308"; sandbox
  printf 'time_s,worker,slowdown\n0,a,1e308\n5,a,1\n' > slow.csv
  { base_config; echo "  perturbations: {trace: slow.csv}"; echo "policies: [dsgd]"; } > probe.yaml
  refused 'slow\.csv:2: slowdown' "$binary" run probe.yaml --out results/exp --quiet
  probe="a YAML slowdown past its range"; sandbox
  { base_config; echo "  perturbations: [{worker: a, slowdown: 1e308}]"; echo "policies: [dsgd]"; } > probe.yaml
  refused 'probe\.yaml:[0-9]+: cluster\.perturbations\[0\]\.slowdown' "$binary" run probe.yaml --out results/exp --quiet
  probe="a step trace of zeros"; sandbox
  printf 'clock_ms,batch,ms\n0,32,0\n1,32,0\n2,32,0\n' > zeros.csv
  { base_config; echo "policies: [dsgd]"; } | sed 's/time_model: {coefficients: \[10, 0.2\]}/time_model: {trace: zeros.csv}/' > probe.yaml
  refused 'probe\.yaml:[0-9]+: .*zeros\.csv' "$binary" run probe.yaml --out results/exp --quiet
  probe="a step trace of 1e308 ms"; sandbox
  printf 'clock_ms,batch,ms\n0,32,1e308\n1,32,5\n' > huge.csv
  { base_config; echo "policies: [dsgd]"; } | sed 's/time_model: {coefficients: \[10, 0.2\]}/time_model: {trace: huge.csv}/' > probe.yaml
  refused 'huge\.csv:2: ms' "$binary" run probe.yaml --out results/exp --quiet
}

probe_sweep() {  # a sweep is sized before it is expanded
  probe="a sweep of 10^6 runs"; sandbox
  local h; h="$(seq -s, 1 1000)"
  with_policies "[{name: local-sgd, H: [$h], batch: [$h]}]"
  refused 'probe\.yaml:[0-9]+: policies\[0\].*1000000' timeout 20 "$binary" run probe.yaml --out results/exp --quiet
}

probe_evaluate() {  # evaluate's own inputs are named as the flags they came from, and nothing is left behind
  probe="evaluate --sweep-ms 100,100"; sandbox
  refused '^orchestra evaluate: --sweep-ms' "$binary" evaluate "$source_dir/pretrained/orchestra-a3c.pt" base.yaml --sweep-ms 100,100 --out results/eval --quiet
  probe="evaluate a config whose stem is not a name"; sandbox
  cp base.yaml '...yaml'
  refused '\.\.\.yaml' "$binary" evaluate "$source_dir/pretrained/orchestra-a3c.pt" '...yaml' --sweep-ms 100 --out results/eval --quiet
  probe="evaluate into another experiment's folder"; sandbox
  refused 'results/exp' "$binary" evaluate "$source_dir/pretrained/orchestra-a3c.pt" base.yaml --sweep-ms 100 --out results/exp --quiet
}

probe_compare() {  # compare refuses what it cannot trust, and says what it skipped
  probe="compare: a summary out of range"; sandbox
  sed -i 's/"final_accuracy": [0-9.e-]*/"final_accuracy": 7.5/; s/"time_to_target_s": [0-9.e-]*/"time_to_target_s": -1/' results/exp/dsgd/summary.json
  refused 'summary\.json: (final_accuracy|time_to_target_s)' "$binary" compare results/exp --quiet
  probe="compare: a label that is a path"; sandbox
  sed -i 's|"label": "dsgd"|"label": "../../x"|' results/exp/dsgd/summary.json
  refused 'summary\.json: label' "$binary" compare results/exp --html --out results/exp --quiet
  probe="compare: epochs.csv cut short"; sandbox
  head -1 results/exp/dsgd/epochs.csv > cut && cp cut results/exp/dsgd/epochs.csv && rm cut
  refused 'epochs\.csv' "$binary" compare results/exp --quiet
  probe="compare: only a multi-seed run and an evaluation"; sandbox
  mkdir -p mixed/seeds/seed-1 mixed/eval/cluster/seed-1 && cp -a results/exp/dsgd mixed/seeds/seed-1/ && cp -a results/exp/dsgd mixed/eval/cluster/seed-1/
  echo "seeds: [1]" > mixed/eval/cluster/evaluate.yaml
  refused 'mixed/seeds.*(seed|several)' "$binary" compare mixed --quiet
  probe="compare: a mixed folder says what it skipped"; sandbox
  mkdir -p results/exp/seed-1 && cp -a results/exp/dsgd results/exp/seed-1/
  if "$binary" compare results/exp --out cmp > /dev/null 2> "$work/err"; then
    grep -q 'skipped.*seed-1' "$work/err" || fail "compare does not say it skipped seed-1: $(cat "$work/err")"
    verdict "$(cat "$work/err")"
  else
    fail "compare failed: $(cat "$work/err")"
  fi
}

# A real run (two processes) with checkpoints, then resumed with another config.
probe_resume() {
  probe="launch --resume with another model"; sandbox
  real_config 32 0.05 1 > real.yaml
  "$binary" launch --nproc 2 real.yaml --out results/real --quiet > /dev/null 2> "$work/err" || { fail "the real run failed: $(cat "$work/err")"; return; }
  # As if cut off after its first epoch of two: every checkpoint unfinished.
  sed -i 's/"finished":true/"finished":false/' results/real/checkpoints/*.json
  cp -a "$work/sb" "$work/real-template"
  real_config 16 0.05 2 > real.yaml
  refused 'model\.hidden' "$binary" launch --nproc 2 real.yaml --out results/real --resume --quiet
  probe="launch --resume with other epochs and lr"; rm -rf "$work/sb"; cp -a "$work/real-template" "$work/sb"; cd "$work/sb" || exit 99
  real_config 32 0.1 3 > real.yaml
  refused 'training\.(epochs|lr).*training\.(epochs|lr)' "$binary" launch --nproc 2 real.yaml --out results/real --resume --quiet

  # calibrate on damaged copies of the real run
  local damage
  for damage in nan negative truncated garbage; do
    probe="calibrate: rounds.csv $damage"; rm -rf "$work/sb"; cp -a "$work/real-template" "$work/sb"; cd "$work/sb" || exit 99
    local rounds=results/real/dsgd/rounds.csv
    case $damage in
      nan) awk -F, 'NR==3{OFS=","; $6="nan"} {print}' OFS=, $rounds > x && mv x $rounds ;;     # compute_ms
      negative) awk -F, 'NR==3{OFS=","; $6="-4"} {print}' OFS=, $rounds > x && mv x $rounds ;;
      truncated) head -6 $rounds > x && mv x $rounds ;;
      garbage) echo '{"real": 1, "data": {"dataset": 5}, "cluster": 5, "policy": {"name": "lbb"}}' > results/real/lbb/config.json ;;
    esac
    refused 'results/real/(dsgd|lbb)/(rounds\.csv|config\.json)' "$binary" calibrate results/real --out sim.yaml --quiet
  done
  probe="calibrate --traces with a label that is a path"; rm -rf "$work/sb"; cp -a "$work/real-template" "$work/sb"; cd "$work/sb" || exit 99
  sed -i 's|"label": "dsgd"|"label": "../../escaped"|' results/real/dsgd/summary.json
  refused 'summary\.json: label' "$binary" calibrate results/real --out sim.yaml --traces traces --quiet
}

probe_full_disk() {  # a full disk leaves no staging folder behind
  probe="a full disk"
  if ! unshare -rm true 2> /dev/null; then say "skip $probe: no user namespace to mount a tiny tmpfs in"; return; fi
  sandbox
  mkdir tiny
  # Room for the earlier results (a page per file and folder) and a few pages more: the rerun's
  # first policy folder does not fit.
  local size; size=$(( $(du -sk results/exp | cut -f1) + 8 ))
  unshare -rm sh -c "mount -t tmpfs -o size=${size}k none tiny && cp -a results/exp tiny/exp &&
    (cd tiny/exp && find . -type f -exec sha256sum {} + | sort) > '$work/before' &&
    '$binary' run base.yaml --out tiny/exp --quiet > /dev/null 2> '$work/err'; echo \$? > '$work/rc';
    ls -A tiny/exp > '$work/after'; (cd tiny/exp && find . -type f -exec sha256sum {} + | sort) > '$work/after-sums'"
  [ "$(cat "$work/rc")" -ne 0 ] || fail "the run on a full disk exited 0"
  if grep -q 'staging' "$work/after"; then fail "a staging folder stayed behind: $(cat "$work/after")"; fi
  [ "$(grep -c . "$work/err")" -eq 1 ] || fail "$(grep -c . "$work/err") lines on stderr: $(cat "$work/err")"
  grep -q 'No space left on device' "$work/err" || fail "the line does not say the disk is full: $(cat "$work/err")"
  # Only the run's own earlier results may have been replaced by then; nothing else.
  diff <(grep -v -e ' ./dsgd/' -e ' ./local-sgd/' -e ' ./comparison.md' "$work/before") \
       <(grep -v -e ' ./dsgd/' -e ' ./local-sgd/' -e ' ./comparison.md' "$work/after-sums") > /dev/null || fail "a file besides the run's own changed"
  verdict "$(cat "$work/err")"
}

make_template
all=(labels names lock other_experiment out numbers sweep evaluate compare resume full_disk)
for p in "${@:-${all[@]}}"; do "probe_$p"; cd "$work" || exit 99; done
say "$failures probe(s) failed"
exit "$failures"
