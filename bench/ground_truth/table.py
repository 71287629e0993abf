"""Prints the ground-truth table of run.sh's results.jsonl, and the shares.

Columns: the ISA whose rules --runtime onnxruntime-cpu applied (the host's,
the one ORT ran with: avx2 or avx512 decide ORT's NCHWc block); ORT's create-retained and run-peak heap bytes; our weights (+ folded
weights) and arena, with the default modes and with --runtime onnxruntime-cpu;
each arena against ORT's run peak; the --runtime figure is the runtime
tensors (ORT's own planner at its worst step, runtime_buffers.h) plus the
runtime overhead (what ORT holds during a run besides tensors), the
predicted peak working memory. "within 10%" counts the models whose
--runtime figure is within 10% of ORT's run peak; "under >10%" those below it
by more than 10% (the dangerous direction for a gate).
Usage: python3 table.py results.jsonl [--markdown]
"""
import json
import sys

kBig = 256 * 1024
kMid = 64 * 1024  # Above ORT's ~13 KB per-run overhead by 5x and more.


def short(path):
    parts = path.split('/')
    if parts[-1] == 'model.onnx':
        return '/'.join(parts[-3:-1])
    return '/'.join(parts[-2:])


def ratio(ours, theirs):
    return '' if ours is None or not theirs else '%.3f' % (ours / theirs)


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    markdown = '--markdown' in sys.argv
    header = ['model', 'ISA', 'ORT create-retained', 'ORT run peak', 'our weights', 'folded', 'arena (default)',
              'ratio', 'arena (--runtime)', 'workspace', 'runtime tensors', 'overhead', 'ratio']
    table = []
    skipped = []
    within = under = measured = 0
    mid_within = mid_under = mid = 0
    big_within = big_under = big = 0  # Models whose ORT run peak is at least kBig: malloc noise is below 1%.
    isas = set()  # The ISAs of the rows: one per machine measured.
    folded = folded_over = 0  # Models where folding applies, and those whose default arena is above ORT's.
    for row in rows:
        if 'skipped' in row:
            skipped.append((short(row['model']), row['skipped'].strip().split('\n')[0][:100]))
            continue
        d, r = row.get('default'), row.get('runtime')
        run = row['run_peak']
        cells = [short(row['model']), (r or {}).get('isa') or '-', row['create_retained'], run]
        isas.add(cells[1])
        cells += [d['weights_bytes'], d.get('folded_weights_bytes') or 0, d['arena_bytes']] if d else ['-'] * 3
        cells.append(ratio(d and d['arena_bytes'], run))
        tensors = r and r.get('runtime_tensor_bytes', r['arena_bytes'])  # Older results: the arena.
        working = r and tensors + (r.get('runtime_overhead_bytes') or 0)
        cells += [r['arena_bytes'], r.get('workspace_bytes') or 0, tensors, r.get('runtime_overhead_bytes') or 0] \
            if r else ['-'] * 4
        cells.append(ratio(working, run))
        if r and run:
            measured += 1
            q = working / run
            within += abs(q - 1) <= 0.10
            under += q < 0.90
            if run >= kMid:
                mid += 1
                mid_within += abs(q - 1) <= 0.10
                mid_under += q < 0.90
            if run >= kBig:
                big += 1
                big_within += abs(q - 1) <= 0.10
                big_under += q < 0.90
        if d and (d.get('folded_weights_bytes') or 0) > 0:
            folded += 1
            folded_over += d['arena_bytes'] > run
        table.append(cells)
    if markdown:
        print('| ' + ' | '.join(header) + ' |')
        print('|' + '---|' * len(header))
        for cells in table:
            print('| ' + ' | '.join('{:,}'.format(c) if isinstance(c, int) else str(c) for c in cells) + ' |')
    else:
        widths = [max(len(header[i]), *(len('{:,}'.format(c) if isinstance(c, int) else str(c)) for c in
                                        (t[i] for t in table))) if table else len(header[i])
                  for i in range(len(header))]
        fmt = lambda cells: '  '.join(
            ('{:,}'.format(c) if isinstance(c, int) else str(c)).rjust(w) if i else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths)))
        print(fmt(header))
        for cells in table:
            print(fmt(cells))
    print()
    print('ISA: %s' % (', '.join(sorted(isas)) or '-'))
    if measured:
        print('--runtime onnxruntime-cpu: %d models, within 10%% of ORT run peak: %d (%.0f%%), under by more '
              'than 10%%: %d' % (measured, within, 100.0 * within / measured, under))
    if mid:
        print('  of them with an ORT run peak of at least %d KiB: %d, within 10%%: %d (%.0f%%), under by more than '
              '10%%: %d' % (kMid // 1024, mid, mid_within, 100.0 * mid_within / mid, mid_under))
    if big:
        print('  of them with an ORT run peak of at least %d KiB: %d, within 10%%: %d (%.0f%%), under by more than '
              '10%%: %d' % (kBig // 1024, big, big_within, 100.0 * big_within / big, big_under))
    print('default modes, models where folding applies: %d, arena above ORT run peak: %d' % (folded, folded_over))
    print('skipped (ORT refused or failed): %d' % len(skipped))
    for name, reason in skipped:
        print('  %s: %s' % (name, reason))


if __name__ == '__main__':
    main()
