#!/usr/bin/env python3
"""Host-side assertions on one lab run: check-result.py OUTDIR [SCENARIO]

Reads OUTDIR/result.json (written in the guest by lib.sh: every check the scenario made) and
OUTDIR/lab-args, and asserts: the result belongs to SCENARIO, the guest's exit code agrees,
every check passed, and the checks this scenario must make are all there (so a scenario
that silently skips its work cannot pass). Exit 0 passed, 77 skipped (with its reason),
1 failed.
"""
import json
import os
import sys

DEFAULT_CHARS = '2a37,2a5b,2a53'


def required(scenario, args):
    """Names of the checks a scenario must report."""
    if scenario == 'smoke':
        return ['hci_vhci-loaded', 'dev-vhci', 'dbus-daemon', 'bluetoothd', 'bluetoothd-5.66', 'btvirt',
                'adapters-on-dbus']
    attach = ['strapd-running', 'scan', 'pair', 'connect', 'strapd-alive', 'delivery-2a37', 'decode-2a37']
    if scenario == 'hr-example':
        return attach + ['capture-delivery-2a37', 'capture-decode-2a37']
    if scenario == 'hr-bumble':
        return attach + ['capture-%s-%s' % (k, c) for k in ('delivery', 'decode') for c in DEFAULT_CHARS.split(',')]
    if scenario == 'daemon-pair-connect':
        # The store is checked on heart rate (one sample per notification); the raw capture
        # on every characteristic, exactly once and decoded to the encoded values.
        return ['strapd-running', 'scan', 'pair', 'connect', 'delivery-2a37', 'decode-2a37',
                'capture-delivery-2a37', 'capture-delivery-2a5b', 'capture-delivery-2a53',
                'capture-decode-2a37', 'capture-decode-2a5b', 'capture-decode-2a53'] + (
                    ['stalled-pair'] if args[3:4] == ['stall'] else [])
    if scenario == 'daemon-link-loss':
        return ['strapd-running', 'link-lost', 'reconnected-by-itself', 'resumed-streaming', 'gap-visible', 'delivery-2a37',
                'workout-started', 'workout-continued', 'workout-saved', 'workout-spans-gap']
    if scenario == 'daemon-bluetoothd-restart':
        return ['strapd-running', 'bluetoothd-restarted', 'strapd-survived', 'resumed', 'delivery-2a37']
    if scenario == 'daemon-four-sensors':
        return ['strapd-running'] + ['s%d-delivery-2a37' % i for i in range(1, 5)]
    if scenario == 'peer-bleak':
        return ['strapd-running'] + ['s%d-%s' % (i, k) for i in range(1, 5) for k in ('scan', 'pair', 'connect')] + [
            'logger-subscribed', 'strapd-accounted', 'logger-accounted', 'measured']
    if scenario == 'daemon-systemd':
        return ['pid1-systemd', 'units-installed', 'strapd.socket-active', 'socket-activation', 'strapd-notify-ready',
                'delivery-2a37', 'watchdog', 'group-member-reads', 'outsider-refused'] + (
                    ['package-installed', 'package-enabled', 'package-user-and-state'] if args[1:2] == ['deb'] else [])
    if scenario == 'systemd-deb-upgrade':
        return ['packages-staged', 'prev-installed', 'strapd-running', 'follower-following', 'upgraded', 'restarted-once',
                'resumed', 'delivery-2a37', 'follower-every-sample-once', 'remove-keeps-store', 'purge-deletes-store']
    if scenario == 'daemon-two-adapters':
        return ['adapters', 'strapd-running', 'spread', 'pinned', 'adapter-pulled', 'came-back', 'adapter-lost-logged'] + [
            's%d-%s' % (i, k) for i in range(1, 5) for k in ('scan', 'connect', 'delivery-2a37', 'decode-2a37')]
    if scenario == 'peer-trainer':
        return ['power-meter', 'trainer-reads', 'trainer-needs-indications', 'trainer-target-needs-control',
                'trainer-control-and-target', 'trainer-power-follows', 'trainer-range', 'trainer-reset', 'trainer-link-lost',
                'trainer-control-per-link', 'probe-finished', 'control-log']
    if scenario == 'daemon-erg':
        return ['strapd-running', 'scan', 'connect', 'plan-saved', 'workout-started', 'trainer-controlled', 'workout-saved',
                'workout-laps', 'erg-step1', 'erg-step2', 'erg-step3', 'link-lost', 'erg-resumed', 'erg-targets-in-order',
                'erg-reset', 'trainer-power-followed']
    if scenario == 'powercut':
        # args: mode, boot I, cuts N: boots up to N record and cut, boots after the first judge
        try:
            i, n = int(args[1]), int(args[2])
        except (IndexError, ValueError):
            return ['powercut-args']
        need = ['disk-ready']
        if i > 1:
            need += ['store-opens', 'given-kept', 'ahead-told', 'served-intact', 'loss-bounded', 'live-complete',
                     'reader-clean', 'torn-tail-reported']
        if i <= n:
            need += ['strapd-running', 'reader-following', 'cut']
        return need
    return []


def main():
    out = sys.argv[1]
    scenario = sys.argv[2] if len(sys.argv) > 2 else os.path.basename(os.path.normpath(out))
    path = os.path.join(out, 'result.json')
    try:
        with open(path) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        print('check-result: FAIL: no readable %s (%s): the guest did not report' % (path, e))
        return 1
    try:
        with open(os.path.join(out, 'lab-args')) as f:
            args = [l.rstrip('\n') for l in f]
    except OSError:
        args = []
    try:
        guest_rc = int(open(os.path.join(out, 'exit-code')).read().strip())
    except (OSError, ValueError):
        guest_rc = None
    fails = []
    if res.get('scenario') != scenario:
        fails.append('result.json is for scenario %r, not %r' % (res.get('scenario'), scenario))
    if guest_rc is not None and res.get('exit_code') != guest_rc:
        fails.append('result.json says exit %s, the guest recorded %s' % (res.get('exit_code'), guest_rc))
    if res.get('skipped'):
        if not res.get('reason'):
            fails.append('skipped without a reason')
        else:
            print('check-result: %s SKIPPED: %s' % (scenario, res['reason']))
            return 1 if fails else 77
    checks = res.get('checks', [])
    names = {c['name'] for c in checks}
    for c in checks:
        # a failure's whole detail: it is what CI's output keeps of a failed scenario
        print('check-result:   %-4s %-28s %s' % ('ok' if c['ok'] else 'FAIL', c['name'], c.get('detail', '')[:160 if c['ok'] else 800]))
        if not c['ok']:
            fails.append('check %s failed' % c['name'])
    for n in required(scenario, args):
        if n not in names:
            fails.append('required check %s missing' % n)
    if not checks:
        fails.append('no checks recorded')
    if res.get('exit_code') != 0:
        fails.append('scenario exit code %s' % res.get('exit_code'))
    if fails:
        for f in fails:
            print('check-result: FAIL: ' + f)
        return 1
    print('check-result: %s PASSED (%d checks)' % (scenario, len(checks)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
