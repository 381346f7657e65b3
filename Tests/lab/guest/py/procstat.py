#!/usr/bin/python3
"""Watch one process for a fixed window: memory and CPU, from /proc, in one JSON object.

  procstat.py PID SECONDS > stat.json

rss_peak_kb: the highest VmRSS seen, sampled every 0.5 s; rss_end_kb: VmRSS at the end;
hwm_kb: VmHWM at the end (the process's lifetime peak, start-up included); anon_kb, file_kb:
RssAnon (heap, stacks) and RssFile + RssShmem (mapped binary and libraries: the lab
guest's root fs is in RAM, so its files' pages count as RssShmem) at the end; cpu_s: utime +
stime over the window (/proc/PID/stat, in clock ticks); cpu_s_per_h: cpu_s scaled to an hour
of the same window (wall, CLOCK_MONOTONIC); peak_at_s, peak_anon_kb, peak_file_kb: when in the
window the highest VmRSS was seen and what it was made of.
"""
import json
import os
import sys
import time

TCK = os.sysconf('SC_CLK_TCK')


def status(pid):
    out = {}
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            k, _, v = line.partition(':')
            if k in ('VmRSS', 'VmHWM', 'RssAnon', 'RssFile', 'RssShmem', 'Threads'):
                out[k] = int(v.split()[0])
    return out


def cpu(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TCK    # utime, stime (fields 14, 15)


def main():
    pid, secs = int(sys.argv[1]), float(sys.argv[2])
    t0, c0 = time.monotonic(), cpu(pid)
    peak, at_peak = 0, None
    while True:
        st = status(pid)
        if st['VmRSS'] > peak:
            peak, at_peak = st['VmRSS'], (time.monotonic() - t0, st)
        if time.monotonic() - t0 >= secs:
            break
        time.sleep(0.5)
    c1, t1 = cpu(pid), time.monotonic()
    st = status(pid)
    print(json.dumps({'pid': pid, 'window_s': round(t1 - t0, 2), 'cpu_s': round(c1 - c0, 2),
                      'cpu_s_per_h': round((c1 - c0) / (t1 - t0) * 3600, 1), 'rss_peak_kb': max(peak, st['VmRSS']),
                      'rss_end_kb': st['VmRSS'], 'hwm_kb': st['VmHWM'], 'anon_kb': st['RssAnon'], 'file_kb': st['RssFile'] + st['RssShmem'], 'threads': st['Threads'],
                      'peak_at_s': round(at_peak[0], 1), 'peak_anon_kb': at_peak[1]['RssAnon'],
                      'peak_file_kb': at_peak[1]['RssFile'] + at_peak[1]['RssShmem'],
                      't0': round(t0, 3), 't1': round(t1, 3)}))


if __name__ == '__main__':
    main()
