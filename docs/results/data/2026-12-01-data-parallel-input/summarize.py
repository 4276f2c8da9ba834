#!/usr/bin/env python3
"""Prints the tables of docs/results/2026-12-01-data-parallel-and-input.md
from the JSON files beside it (means over repetitions, as the suite writes)."""
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def means(path):
    out = {}
    for b in json.load(open(os.path.join(HERE, path)))["benchmarks"]:
        if b.get("aggregate_name") == "mean":
            out[b["run_name"].split("/iterations:")[0]] = b
    return out


def cv(path, name, counter):
    for b in json.load(open(os.path.join(HERE, path)))["benchmarks"]:
        if b.get("aggregate_name") == "cv" and b["run_name"].startswith(name):
            return b.get(counter)
    return None


print("## 64 MiB all-reduce (fp32), busbw against a copy of the same size\n")
print("| case | busbw out of place (GB/s) | in place (GB/s) | cv | / copy |")
print("| --- | --- | --- | --- | --- |")
local = means("allreduce_local.json")
mpi = means("allreduce_mpi.json")
copy_name = "allreduce/local/fp32/bytes:67108864/ranks:1"
copy = local[copy_name]["busbw"]
for path, table in (("allreduce_local.json", local), ("allreduce_mpi.json", mpi)):
    for name, b in sorted(table.items()):
        print(f"| {name} | {b['busbw']/1e9:.2f} | {b['busbw_inplace']/1e9:.2f} | "
              f"{cv(path, name, 'busbw'):.3f} | {b['busbw']/copy:.2f} |")

print("\n## Overlap: 2 CPU replicas x 1 thread, resnet50 batch 8 per replica\n")
print("| round | overlap on (images/s) | overlap off (images/s) | on / off | "
      "gradient all-reduce alone (ms/step, on run) | share of the step |")
print("| --- | --- | --- | --- | --- | --- |")
train = "train/resnet50/fp32/synthetic/batch:8/gpus:0/replicas:2"
grads = "grads/resnet50/local/bucket_mb:25/ranks:2"
for r in (1, 2):
    on = means(f"overlap_true_{r}.json")
    off = means(f"overlap_false_{r}.json")
    step_ms = on[train]["real_time"]
    g_ms = on[grads]["real_time"]
    print(f"| {r} | {on[train]['images_per_second']:.3f} | {off[train]['images_per_second']:.3f} | "
          f"{on[train]['images_per_second']/off[train]['images_per_second']:.3f} | {g_ms:.1f} | "
          f"{g_ms/step_ms:.3f} |")

print("\n## Real vs synthetic data: resnet50 batch 32, one process, oneDNN, 2 cores\n")
print("| round | synthetic (images/s) | real (images/s) | real / synthetic | input wait per step (s) |")
print("| --- | --- | --- | --- | --- |")
for r in (1, 2):
    m = means(f"real_{r}.json")
    s = m["train/resnet50/fp32/synthetic/batch:32/gpus:0"]
    q = m["train/resnet50/fp32/real/batch:32/gpus:0"]
    print(f"| {r} | {s['images_per_second']:.3f} | {q['images_per_second']:.3f} | "
          f"{q['images_per_second']/s['images_per_second']:.3f} | "
          f"{q.get('input_wait_seconds_per_step', 0):.2e} |")

print("\n## The pipeline alone (generated set, 200-500 px JPEGs, output 224x224, batch 32)\n")
print("| case | images/s | decode capacity (images/s) | images/s per decode thread |")
print("| --- | --- | --- | --- |")
inp = means("input.json")
for name, b in sorted(inp.items()):
    threads = int(name.rsplit("threads:", 1)[1])
    print(f"| {name} | {b['images_per_second']:.0f} | "
          f"{b['decode_capacity_images_per_second']:.0f} | "
          f"{b['images_per_second']/threads:.0f} |")
per_core = inp["input/tfrecord/train/threads:1"]["images_per_second"]
print("\nDecode threads needed to feed a device at a given training rate "
      f"(tfrecord, train preprocessing, {per_core:.0f} images/s per thread measured above):\n")
print("| training rate (images/s) | decode threads |")
print("| --- | --- |")
for rate in (1000, 2000, 3000, 5000):
    print(f"| {rate} | {rate/per_core:.1f} |")

print("\n## MPI in-place all-reduce staged through a kept buffer (before / after, same session)\n")
print("| round | case | before | after | after / before |")
print("| --- | --- | --- | --- | --- |")
for r in (1, 2):
    b = means(f"mpi_staging_before_{r}.json")
    a = means(f"mpi_staging_after_{r}.json")
    n = "allreduce/mpi/fp32/bytes:67108864/ranks:2"
    print(f"| {r} | {n} busbw in place (GB/s) | {b[n]['busbw_inplace']/1e9:.2f} | "
          f"{a[n]['busbw_inplace']/1e9:.2f} | {a[n]['busbw_inplace']/b[n]['busbw_inplace']:.2f} |")
    print(f"| {r} | {n} busbw out of place (GB/s) | {b[n]['busbw']/1e9:.2f} | "
          f"{a[n]['busbw']/1e9:.2f} | {a[n]['busbw']/b[n]['busbw']:.2f} |")
    g = "grads/resnet50/mpi/bucket_mb:25/ranks:2"
    print(f"| {r} | {g} (ms per step) | {b[g]['real_time']:.1f} | {a[g]['real_time']:.1f} | "
          f"{a[g]['real_time']/b[g]['real_time']:.2f} |")
b = means("mpi_staging_vgg_before.json")
a = means("mpi_staging_vgg_after.json")
g = "grads/vgg16/mpi/bucket_mb:25/ranks:2"
print(f"| 1 | {g} (ms per step) | {b[g]['real_time']:.0f} | {a[g]['real_time']:.0f} | "
      f"{a[g]['real_time']/b[g]['real_time']:.2f} |")
