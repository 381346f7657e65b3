#!/usr/bin/python3
"""Stand-in strapctl client for the stand-in daemon (standin_strapd.py); `decode` goes to the
real static strapctl (STRAPCTL_REAL). Interface as assumed by Tests/lab/guest/daemon.sh:
  strapctl [--socket PATH] [--json] scan [--timeout S] | pair ADDR | connect ADDR | status |
           anchored [--anchor N] | decode ...
"""
import json
import os
import socket
import sys

argv = sys.argv[1:]
sock_path = '/run/strapd/strapd.sock'
as_json = False
while argv and argv[0].startswith('--'):
    if argv[0] == '--socket':
        sock_path = argv[1]
        argv = argv[2:]
    elif argv[0] == '--json':
        as_json = True
        argv = argv[1:]
    else:
        break
if not argv:
    sys.exit('usage: strapctl [--socket P] [--json] COMMAND')
cmd, rest = argv[0], argv[1:]
if cmd == 'decode':
    real = os.environ.get('STRAPCTL_REAL', '/usr/local/bin/strapctl.real')
    os.execv(real, [real] + argv)


def opt(name, default):
    return rest[rest.index(name) + 1] if name in rest else default


req = {'status': lambda: {'op': 'status'},
       'scan': lambda: {'op': 'devices.scan', 'timeout': float(opt('--timeout', 30))},
       'pair': lambda: {'op': 'devices.pair', 'address': rest[0]},
       'connect': lambda: {'op': 'devices.connect', 'address': rest[0]},
       'anchored': lambda: {'op': 'samples.anchored', 'anchor': int(opt('--anchor', 0))}}.get(cmd)
if req is None:
    sys.exit('strapctl (stand-in): unknown command %s' % cmd)
msg = dict(req(), id=1)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sock_path)
s.sendall((json.dumps(msg) + '\n').encode())
buf = b''
while b'\n' not in buf:
    d = s.recv(1 << 20)
    if not d:
        break
    buf += d
rep = json.loads(buf.split(b'\n', 1)[0])
if not rep.get('ok'):
    print('strapctl: %s' % rep.get('error'), file=sys.stderr)
    sys.exit(1)
print(json.dumps(rep['result']) if as_json else json.dumps(rep['result'], indent=1))
