#!/usr/bin/python3
"""Watch one process for a fixed window: memory and CPU, from /proc, in one JSON object.

  procstat.py PID SECONDS > stat.json

rss_peak_kb: the highest resident set seen, sampled every 0.5 s; rss_end_kb: the same at the
end; anon_kb, file_kb: of it anonymous memory (heap, stacks) and mapped files (binary and
libraries: the lab guest's root fs is in RAM, so its files' pages are shmem) at the end. These
come from /proc/PID/smaps_rollup, which walks the page tables: VmRSS in /proc/PID/status is
kept per thread and folded into the process's count only every 64 page faults of that thread
(Linux before 6.2), so after strapd hands pages back (CodePages) the pages its threads map
again can stay out of VmRSS for good (a streaming strapd showed 4 kB of mapped files there).
vmrss_peak_kb, vmrss_end_kb: VmRSS as top and ps show it, for comparison; hwm_kb: VmHWM at the
end (the lifetime peak of VmRSS, start-up included); cpu_s: utime +
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


def rollup(pid):
    """Rss and Anonymous of /proc/PID/smaps_rollup, in kB."""
    out = {}
    with open('/proc/%d/smaps_rollup' % pid) as f:
        for line in f:
            k, _, v = line.partition(':')
            if k in ('Rss', 'Anonymous'):
                out[k] = int(v.split()[0])
    return out


def cpu(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TCK    # utime, stime (fields 14, 15)


def main():
    pid, secs = int(sys.argv[1]), float(sys.argv[2])
    t0, c0 = time.monotonic(), cpu(pid)
    peak, at_peak, vm_peak = 0, None, 0
    while True:
        st, ro = status(pid), rollup(pid)
        vm_peak = max(vm_peak, st['VmRSS'])
        if ro['Rss'] > peak:
            peak, at_peak = ro['Rss'], (time.monotonic() - t0, ro)
        if time.monotonic() - t0 >= secs:
            break
        time.sleep(0.5)
    c1, t1 = cpu(pid), time.monotonic()
    st, ro = status(pid), rollup(pid)
    print(json.dumps({'pid': pid, 'window_s': round(t1 - t0, 2), 'cpu_s': round(c1 - c0, 2),
                      'cpu_s_per_h': round((c1 - c0) / (t1 - t0) * 3600, 1), 'rss_peak_kb': max(peak, ro['Rss']),
                      'rss_end_kb': ro['Rss'], 'anon_kb': ro['Anonymous'], 'file_kb': ro['Rss'] - ro['Anonymous'],
                      'vmrss_peak_kb': max(vm_peak, st['VmRSS']), 'vmrss_end_kb': st['VmRSS'], 'hwm_kb': st['VmHWM'],
                      'threads': st['Threads'],
                      'peak_at_s': round(at_peak[0], 1), 'peak_anon_kb': at_peak[1]['Anonymous'],
                      'peak_file_kb': at_peak[1]['Rss'] - at_peak[1]['Anonymous'],
                      't0': round(t0, 3), 't1': round(t1, 3)}))


if __name__ == '__main__':
    main()
