#!/bin/bash
# Stage the stand-in daemon (NOT strapd: standin_strapd.py, see its docstring) as a host folder
# for run-lab.sh -H, to exercise the daemon scenarios before strapd exists:
#   DIR/strapd, DIR/strapctl   wrappers around the Python stand-ins (read from /lab in the guest)
#   DIR/strapctl.real          the static strapctl (decode)
#   DIR/root/                  stand-in strapd.service + strapd.socket (daemon-systemd)
#   stage.sh [DIR]   (default <repo>/.build/lab-standin); then e.g.
#   Tests/lab/run-lab.sh -H .build/lab-standin daemon-link-loss
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
DIR=${1:-$REPO/.build/lab-standin}
rm -rf "$DIR" && mkdir -p "$DIR/root/usr/lib/systemd/system"
"$REPO/Tests/lab/stage-binaries.sh" "$REPO/.build/lab-host" > /dev/null
cp "$REPO/.build/lab-host/strapctl" "$DIR/strapctl.real"
printf '#!/bin/sh\n# stand-in, not strapd\nexec python3 /lab/stand-in/standin_strapd.py "$@"\n' > "$DIR/strapd"
printf '#!/bin/sh\n# stand-in client\nexec python3 /lab/stand-in/standin_strapctl.py "$@"\n' > "$DIR/strapctl"
chmod +x "$DIR/strapd" "$DIR/strapctl"
cat > "$DIR/root/usr/lib/systemd/system/strapd.socket" <<'UNIT'
[Unit]
Description=strapd socket (lab stand-in)
[Socket]
ListenStream=/run/strapd/strapd.sock
SocketMode=0660
[Install]
WantedBy=sockets.target
UNIT
cat > "$DIR/root/usr/lib/systemd/system/strapd.service" <<'UNIT'
[Unit]
Description=strapd (lab stand-in)
Requires=strapd.socket
After=strapd.socket bluetooth.service
[Service]
Type=notify
NotifyAccess=main
ExecStart=/usr/local/bin/strapd --config /etc/strapd/strapd.conf --state-dir /var/lib/strapd
Environment=PYTHONUNBUFFERED=1
UNIT
ls -la "$DIR"
