#!/usr/bin/env bash
# Regenerates the report tests' golden outputs, and with --fixtures first the
# fixtures themselves:
#   --fixtures: each *.spec here -> *.json, real Google Benchmark JSON written
#      by //tests/tools:fixture_gen (the library runs the cases; the counter
#      values come from the spec); dgx1.json from dgx1_published.tsv;
#   always: golden/* from //tools:report over those fixtures.
# Review the diff before committing: the goldens are what the tests expect.
#   tests/tools/testdata/regenerate.sh [--fixtures]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
./bazelw build //tests/tools:fixture_gen //tools:report
gen=bazel-bin/tests/tools/fixture_gen
report=bazel-bin/tools/report
d=tests/tools/testdata

fixture() {  # spec out.json [--benchmark_* flags]
  local spec=$1 out=$2
  shift 2
  "$gen" "$spec" --benchmark_out="$out" --benchmark_out_format=json "$@" >/dev/null 2>&1
}

# The DGX-1 tables as if measured: three repetitions around each published
# number a, a/1.004, a and a/0.996, so that total work over total time (what
# the report takes of a rate) is the number; the published N/A becomes a
# failed case.
dgx1_spec() {
  cat "$d/dgx1_context.spec"
  awk -F'\t' '
    BEGIN {
      name["InceptionV3"] = "inception3"; name["ResNet-50"] = "resnet50";
      name["ResNet-152"] = "resnet152"; name["AlexNet"] = "alexnet"; name["VGG16"] = "vgg16";
      main["InceptionV3"] = 64; main["ResNet-50"] = 64; main["ResNet-152"] = 64;
      main["AlexNet"] = 512; main["VGG16"] = 64;
    }
    /^#/ { next }
    /^table / { split($0, t, " "); data = t[2]; batch = t[3]; next }
    $1 == "GPUs" { for (i = 2; i <= NF; i++) col[i] = $i; next }
    {
      for (i = 2; i <= NF; i++) {
        b = (batch == "main") ? main[col[i]] : batch;
        c = sprintf("train/%s/fp32/%s/batch:%d/gpus:%d", name[col[i]], data, b, $1);
        if ($i == "N/A") {
          printf "fail %s input pipeline saturated: excluded, as on the published page\n", c;
        } else {
          printf "case %s images_per_second=%.10g,%.10g,%.10g\n", c, $i / 1.004, $i, $i / 0.996;
        }
      }
    }' "$d/dgx1_published.tsv"
}
if [[ "${1:-}" == --fixtures ]]; then
  dgx1_spec > "$d/dgx1.spec.generated"
  fixture "$d/dgx1.spec.generated" "$d/dgx1.json" --benchmark_repetitions=3
  rm "$d/dgx1.spec.generated"

  fixture "$d/gpu_box.spec" "$d/gpu_box.json" --benchmark_repetitions=3
  fixture "$d/gpu_box_base.spec" "$d/gpu_box_base.json" --benchmark_repetitions=3
  fixture "$d/cpu_box.spec" "$d/cpu_box.json" --benchmark_repetitions=3
  fixture "$d/cpu_box_more.spec" "$d/cpu_box_more.json" --benchmark_repetitions=2 \
    --benchmark_report_aggregates_only=true
  fixture "$d/no_train.spec" "$d/no_train.json" --benchmark_repetitions=2
  fixture "$d/bad_names.spec" "$d/bad_names.json"
  fixture "$d/noisy.spec" "$d/noisy.json" --benchmark_repetitions=3
  fixture "$d/noisy_steps5.spec" "$d/noisy_steps5.json" --benchmark_repetitions=3
  fixture "$d/nonfinite.spec" "$d/nonfinite.json" --benchmark_repetitions=3
  fixture "$d/cpu_replicas.spec" "$d/cpu_replicas.json" --benchmark_repetitions=3
  fixture "$d/peer_pytorch.spec" "$d/peer_pytorch.json" --benchmark_repetitions=3
  fixture "$d/peer_tensorflow.spec" "$d/peer_tensorflow.json" --benchmark_repetitions=3
  fixture "$d/peer_onnxruntime.spec" "$d/peer_onnxruntime.json" --benchmark_repetitions=3
  fixture "$d/peer_openvino.spec" "$d/peer_openvino.json" --benchmark_repetitions=3
  fixture "$d/cpu_peak.spec" "$d/cpu_peak.json" --benchmark_repetitions=3
  fixture "$d/cpu_peak_no_bf16.spec" "$d/cpu_peak_no_bf16.json" --benchmark_repetitions=3
  # collectives_nccl_tests.txt, its expected nccl-tests layout, is written
  # by hand: never regenerated.
  fixture "$d/collectives.spec" "$d/collectives.json" --benchmark_repetitions=2
  fixture "$d/inference.spec" "$d/inference.json" --benchmark_repetitions=3
  fixture "$d/drift.spec" "$d/drift.json" --benchmark_repetitions=2
fi

# Golden outputs: two platforms, one of them from two files.
mkdir -p "$d/golden"
runs=("$d/gpu_box.json" "$d/cpu_box.json" "$d/cpu_box_more.json")
"$report" --format=markdown "${runs[@]}" > "$d/golden/two_platforms.md"
"$report" --format=csv "${runs[@]}" > "$d/golden/two_platforms.csv"
"$report" --format=jsonl "${runs[@]}" > "$d/golden/two_platforms.jsonl"
"$report" --format=markdown --compare="$d/gpu_box_base.json" "$d/gpu_box.json" \
  > "$d/golden/compare.md" 2>/dev/null
"$report" --format=markdown "$d/dgx1.json" > "$d/golden/dgx1.md"
echo "regenerated fixtures and goldens under $d"
