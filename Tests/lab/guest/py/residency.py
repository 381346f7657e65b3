#!/usr/bin/python3
"""Where a process's resident set lies: every mapping of PID with its Rss and Anonymous (from
/proc/PID/smaps) and, for mappings of files, the file offsets of its pages that are in its page
tables (/proc/PID/pagemap, bit 63), so that a host can name what is resident (sections,
symbols) from the same binary.

  residency.py PID > residency.json      (a JSON list, one object per mapping)
"""
import json
import struct
import sys


def mappings(pid):
    out, cur = [], None
    with open('/proc/%d/smaps' % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and '-' in parts[0] and ':' in parts[3]:
                lo, hi = (int(x, 16) for x in parts[0].split('-'))
                cur = {'start': lo, 'end': hi, 'perms': parts[1], 'offset': int(parts[2], 16),
                       'path': parts[5] if len(parts) > 5 else ''}
                out.append(cur)
            elif cur is not None and parts[0] in ('Rss:', 'Anonymous:'):
                cur[parts[0][:-1].lower() + '_kb'] = int(parts[1])
    return out


def main():
    pid = int(sys.argv[1])
    maps = mappings(pid)
    with open('/proc/%d/pagemap' % pid, 'rb') as pm:
        for m in maps:
            if not m['path'].startswith('/') or m.get('rss_kb', 0) == 0:
                continue
            pm.seek(m['start'] // 4096 * 8)
            data = pm.read((m['end'] - m['start']) // 4096 * 8)
            m['resident'] = [m['offset'] + i * 4096 for i in range(len(data) // 8)
                             if struct.unpack_from('<Q', data, i * 8)[0] >> 63]
    json.dump(maps, sys.stdout)


if __name__ == '__main__':
    main()
