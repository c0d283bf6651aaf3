#!/usr/bin/env bash
# The verifier's checks that need a GPU, in the order a GPU session should run them (most telling
# first), each step's log under OUT and a line per step in OUT/progress.txt:
#   1. the GPU tests (`pytest -m gpu`): the device trace, the zygote, the GPU-only rules;
#   2. the parent's ops per timed run alone (benchmarks/parent_run_costs.py), free and under 26 GiB held;
#   3. the warm KernelBench L1 ReLU verdict with its stage split and the parent's op profile;
#   4. the attack and honest suites on CUDA (KGYM_TEST_DEVICE=cuda);
#   5. every task family's reference solution and known-wrong answer at full size;
#   6. the honest sweep's answers at KernelBench's own sizes (benchmarks/honest_sweep; needs a KernelBench
#      checkout: carry one and set KGYM_KERNELBENCH, ../shared does not travel to the device).
# Usage (from the repository root, on a CUDA machine):  bash benchmarks/gpu_checks.sh OUT [STEP ...]
# STEPs: gpu costs latency exploits solutions sweep (default: all, in that order). ~20 min on an H100 before sweep.
set -u
out=${1:?usage: gpu_checks.sh OUT [gpu costs latency exploits solutions sweep]}
shift
steps=${*:-gpu costs latency exploits solutions sweep}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
mark() { echo "=== $(date +%T) $1" >> "$out/progress.txt"; }
for step in $steps; do
  mark "$step"
  case $step in
    gpu) timeout 600 python -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py tests/test_gpu_rules.py \
           tests/test_zygote.py tests/test_gpu_prefetch.py tests/exploits/test_lent_segment_neighbours.py \
           tests/test_profile_events.py tests/test_cases.py > "$out/gpu_tests.txt" 2>&1 ;;
    costs) timeout 300 python benchmarks/parent_run_costs.py --device cuda --json "$out/costs.json" > "$out/costs.txt" 2>&1
           timeout 300 python benchmarks/parent_run_costs.py --device cuda --hold-gib 26 --json "$out/costs26.json" \
             > "$out/costs26.txt" 2>&1 ;;
    latency) timeout 600 python benchmarks/verify_latency.py --device cuda --candidates 5 --json "$out/latency.json" \
               --profile-parent "$out/profile.txt" > "$out/latency.txt" 2>&1 ;;
    exploits) KGYM_TEST_DEVICE=cuda timeout 1200 python -m pytest -q -p no:cacheprovider tests/exploits \
                tests/test_runtime_honest.py > "$out/exploits.txt" 2>&1 ;;
    solutions) timeout 1200 python benchmarks/task_solutions.py --no-compile --json "$out/solutions.json" \
                 > "$out/solutions.txt" 2>&1 ;;
    sweep) timeout 1800 python benchmarks/honest_sweep/run_sweep.py --device cuda --full-size --seeds 0 \
             > "$out/sweep.jsonl" 2> "$out/sweep.txt" ;;
    *) echo "unknown step $step (gpu costs latency exploits solutions sweep)" >&2; exit 2 ;;
  esac
  echo "    exit $?" >> "$out/progress.txt"
done
mark done
