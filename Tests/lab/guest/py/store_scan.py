#!/usr/bin/python3
"""An independent reader of strapd's segment files, written from docs/storage.md alone.

  store_scan.py STORE_DIR [--out FILE]

Walks every seg-<hex>.log: checks the 44-byte header (magic, version, CRC-32), then each record
frame (varint length, CRC-32 of the body) and counts the anchors each record takes (bit 7 of the
kind byte: one; else the varint that follows). It stops a segment at the first frame that is
incomplete, zero, oversized or fails its checksum, and says why and where. It does not decode
samples: its job is to say which anchors lie in records whose checksum holds, so the power-cut
check can assert that strapd never serves one that does not.

Prints (or writes) JSON: {"segments": [{"file", "firstAnchor", "size", "validEnd", "records",
"anchors", "stop": "eof" | "torn" | "crc" | "zero" | "length" | "header", "stopOffset"}],
"valid": [[first, last], ...] (anchor ranges in intact records, merged), "latest": N}.
"""
import argparse
import json
import os
import re
import struct
import sys
import zlib

HEADER = 44
MAX_BODY = 64 << 20


def varint(buf, pos):
    """(value, next position) or None when the varint runs past the end or past 10 bytes."""
    v = shift = 0
    for i in range(10):
        if pos + i >= len(buf):
            return None
        b = buf[pos + i]
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, pos + i + 1
        shift += 7
    return None


# Segment format versions strapd reads (docs/storage.md, "Format versions"): 2 added type
# codes only, so this scan reads both alike.
READABLE_VERSIONS = (1, 2)


def scan_segment(path):
    with open(path, 'rb') as f:
        buf = f.read()
    seg = {'file': os.path.basename(path), 'size': len(buf), 'records': 0, 'anchors': 0}
    if len(buf) < HEADER or buf[:8] != b'STRPSEG1' or \
            struct.unpack_from('<I', buf, 40)[0] != zlib.crc32(buf[:40]) or struct.unpack_from('<H', buf, 8)[0] not in READABLE_VERSIONS:
        seg.update(firstAnchor=None, validEnd=0, stop='header', stopOffset=0)
        return seg, []
    first = struct.unpack_from('<Q', buf, 24)[0]
    seg['firstAnchor'] = first
    pos, anchor, ranges = HEADER, first, []
    stop = 'eof'
    while pos < len(buf):
        lv = varint(buf, pos)
        if lv is None:
            stop = 'torn'
            break
        length, p = lv
        if length == 0:
            stop = 'zero'
            break
        if length > MAX_BODY:
            stop = 'length'
            break
        if p + 4 + length > len(buf):
            stop = 'torn'
            break
        crc = struct.unpack_from('<I', buf, p)[0]
        body = buf[p + 4:p + 4 + length]
        if zlib.crc32(body) != crc:
            stop = 'crc'
            break
        kind = body[0]
        if kind & 0x80:
            items = 1
        else:
            iv = varint(body, 1)
            if iv is None:
                stop = 'crc'   # checksum holds but the frame is not readable: as bad as a crc failure
                break
            items = iv[0]
        if items:
            ranges.append([anchor, anchor + items - 1])
        anchor += items
        seg['records'] += 1
        seg['anchors'] += items
        pos = p + 4 + length
    seg.update(validEnd=pos, stop=stop, stopOffset=pos)
    return seg, ranges


def merge(ranges):
    out = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def scan(store_dir):
    segs, ranges = [], []
    for name in sorted(os.listdir(store_dir)):
        if re.fullmatch(r'seg-[0-9a-f]{16}\.log', name):
            s, r = scan_segment(os.path.join(store_dir, name))
            segs.append(s)
            ranges += r
    valid = merge(ranges)
    return {'segments': segs, 'valid': valid, 'latest': valid[-1][1] if valid else 0}


def covered(valid, anchor):
    """Whether anchor lies in one of the merged ranges (binary search)."""
    lo, hi = 0, len(valid)
    while lo < hi:
        mid = (lo + hi) // 2
        if valid[mid][1] < anchor:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(valid) and valid[lo][0] <= anchor <= valid[lo][1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('store')
    ap.add_argument('--out')
    a = ap.parse_args()
    result = scan(a.store)
    text = json.dumps(result, indent=1)
    if a.out:
        with open(a.out, 'w') as f:
            f.write(text + '\n')
    else:
        print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
