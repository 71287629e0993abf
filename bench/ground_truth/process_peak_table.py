#!/usr/bin/env python3
"""The process-peak table of docs/ground-truth.md: ORT's measured heap high-water over session
creation and the first run (process_peak.results.jsonl, written by process_peak.js) beside this
tool's peak_bytes under --runtime onnxruntime-cpu (":noarena" for the arena-off rows).

usage: process_peak_table.py TOOL MODELS_DIR COPIES_DIR [RESULTS] [--only REGEX]
  MODELS_DIR  the shared corpus (the results name its models "shared:PATH")
  COPIES_DIR  the fp16/QDQ/dynamic copies tools/report_snapshot.sh --make-copies writes ("copies:NAME")
A row with "processes": N keeps the highest process peak of N processes (ORT's order of some
copies follows a hash map seeded per process; "process_peak_min" is the lowest).
Prints a Markdown table, then the acceptance count: rows whose measured peak is >= 1 MiB, how many
ours is within 10% of, how many under 0.9x. Exit 0 (the figures are for reading, not a gate).
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys

MIB = 1 << 20


def ours(tool, path, row):
    flags = [f"--input-shape={name}={dims}" for name, dims in row["inputs"].items()]
    runtime = "onnxruntime-cpu:noarena" if row["options"] == "noarena" else "onnxruntime-cpu"
    done = subprocess.run([tool, "analyze", path, *flags, "--dim-default", "1", "--runtime", runtime,
                           "--format", "json"], capture_output=True, text=True)
    try:
        return json.loads(done.stdout)["memory"]
    except (json.JSONDecodeError, KeyError):
        return None


def main(argv):
    only = None
    if "--only" in argv:
        at = argv.index("--only")
        only = argv[at + 1]
        del argv[at:at + 2]
    tool, models, copies = argv[1:4]
    results = argv[4] if len(argv) > 4 else os.path.join(os.path.dirname(__file__), "process_peak.results.jsonl")
    rows, paths = [], []
    for line in open(results):
        row = json.loads(line)
        kind, name = row["model"].split(":", 1)
        path = os.path.join(models if kind == "shared" else copies, name)
        if (only and not re.search(only, name)) or not os.path.exists(path):
            continue
        rows.append(row)
        paths.append(path)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        figures = list(pool.map(lambda args: ours(tool, *args), zip(paths, rows)))
    print("| model | options | load | run | process (phase) | ours (phase, step) | ours / process |")
    print("|---|---|---:|---:|---:|---:|---:|")
    counted = within = under = 0
    for row, memory in zip(rows, figures):
        measured = row["process_peak"]
        if memory is None:
            print(f"| {row['model']} | {row['options']} | | | | the tool failed | |")
            continue
        ratio = memory["peak_bytes"] / measured
        if measured >= MIB:
            counted += 1
            within += abs(ratio - 1) <= 0.1
            under += ratio < 0.9
        phase = "creation" if memory.get("runtime_peak_phase") == "session creation" else "run"
        step = f", {memory.get('runtime_load_peak_step')}" if phase == "creation" else ""
        name = row['model'].split(':', 1)[1] + (f" at 128 tokens ({row['tokens']})" if 'tokens' in row else '')
        print(f"| {name} | {row['options']} | {row['load_peak'] / MIB:.2f} MiB "
              f"| {row['run_peak'] / MIB:.2f} MiB | {measured / MIB:.2f} MiB ({row['phase']}) "
              f"| {memory['peak_bytes'] / MIB:.2f} MiB ({phase}{step}) | {ratio:.3f} |")
    print(f"\nmeasured >= 1 MiB: {counted}; ours within 10%: {within} ({100.0 * within / max(counted, 1):.1f}%); "
          f"under 0.9x: {under}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
