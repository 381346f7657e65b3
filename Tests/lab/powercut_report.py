#!/usr/bin/env python3
"""The power-cut table: powercut_report.py OUTDIR MODE... (after Tests/lab/powercut.sh).

Reads OUTDIR/MODE/state/cut-*/check.json (written in the guest by powercut.py check) and
prints one markdown row per sync mode. Exit 1 when a cut was not judged or any verdict failed:
for always and interval every item a reader was given must be back with the same anchor, uuid
and content; for none the reader must be told anchorAhead whenever the store ended before its
anchor; in every mode no served anchor may lie outside a record whose CRC holds.
"""
import glob
import json
import os
import sys


def main():
    out, modes = sys.argv[1], sys.argv[2:]
    print('| sync | cuts judged | store opened | items given to the reader | given, lost | given, changed | '
          'served outside an intact record | torn tails (cut off, reported) | lost on recording: samples / '
          'window max (s) | reader ahead of the store: told `anchorAhead` |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    ok = True
    for mode in modes:
        cuts = sorted(glob.glob(os.path.join(out, mode, 'state', 'cut-*')),
                      key=lambda p: int(p.rsplit('-', 1)[1]))
        rows, unjudged = [], []
        for c in cuts:
            try:
                with open(os.path.join(c, 'check.json')) as f:
                    rows.append(json.load(f))
            except (FileNotFoundError, ValueError):
                unjudged.append(os.path.basename(c))
        if unjudged or not rows:
            ok = False
        if any(not all(r['verdict'].values()) for r in rows):
            ok = False
        s = lambda k: sum(r[k] for r in rows)  # noqa: E731
        ahead = [r for r in rows if r['readerAhead']]
        told = sum(1 for r in ahead if r['aheadToldRight'])
        torn = sum(1 for r in rows if r['tornBefore'])
        print('| %s | %d of %d%s | %d | %d | %d | %d | %d | %d | %d / %.3f | %d of %d |' % (
            mode, len(rows), len(cuts), (' (not judged: %s)' % ', '.join(unjudged)) if unjudged else '',
            sum(1 for r in rows if r['latest'] >= 0), s('given'), s('givenMissing'), s('givenChanged'),
            s('servedOutsideIntact'), torn, s('lost'), max([r['lossWindow'] for r in rows], default=0.0),
            told, len(ahead)))
    print()
    print('verdict: %s' % ('every cut held the promise of its sync mode' if ok else 'FAILED (see the check.json files)'))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
