/// The dashboard's files, compiled in: no CDN, no build step, nothing fetched from elsewhere,
/// so the page works without a network. The script is a file of its own (the CSP allows
/// `script-src 'self'` only, no inline script), and it writes names with `textContent`,
/// never `innerHTML`: a device named `<img src=x onerror=…>` shows as text.
public enum DashboardAssets {
    public struct Asset: Sendable {
        public let type: String
        public let bytes: [UInt8]
    }

    public static func asset(at path: String) -> Asset? {
        PageShell.asset(path, paths: ["/", "/index.html"], files: "app", html: index, script: script, style: style)
    }

    static let index = """
        \(PageShell.head(title: "strapd", files: "app"))
        <header><h1>strapd</h1><a id="workout-link" href="/workout">workout</a><a id="history-link" href="/history">history</a><a id="profile-link" href="/profile">profile</a><a id="devices-link" href="/devices">devices</a><span id="state">connecting…</span></header>
        <main id="tiles"></main>
        </body>
        </html>

        """

    static let style = """
        body { font-family: system-ui, sans-serif; margin: 0; background: #111; color: #eee; }
        header { display: flex; gap: 1em; align-items: baseline; padding: 0.5em 1em; }
        h1 { font-size: 1.2em; margin: 0; }
        #state { color: #999; }
        header a { color: #8cf; }
        #tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(14em, 1fr)); gap: 1em; padding: 1em; }
        .tile { background: #222; border-radius: 0.5em; padding: 1em; }
        .tile.down { opacity: 0.5; }
        .name { font-weight: bold; overflow-wrap: anywhere; }
        .hr { font-size: 3em; font-variant-numeric: tabular-nums; }
        .meta { color: #aaa; font-size: 0.9em; }

        """

    static let script = """
        'use strict';
        // Tiles by device address; every text goes in through textContent.
        const tiles = new Map();

        function tile(address, name) {
          let t = tiles.get(address);
          if (!t) {
            const root = document.createElement('section');
            root.className = 'tile';
            const title = document.createElement('div');
            title.className = 'name';
            const hr = document.createElement('div');
            hr.className = 'hr';
            hr.textContent = '–';
            const meta = document.createElement('div');
            meta.className = 'meta';
            root.append(title, hr, meta);
            document.getElementById('tiles').append(root);
            t = { root, title, hr, meta };
            tiles.set(address, t);
          }
          if (name) t.title.textContent = name;
          return t;
        }

        function showDevice(d) {
          const t = tile(d.address, d.name || d.address);
          t.root.classList.toggle('down', !d.connected);
          const parts = [d.connected ? 'connected' : 'not connected'];
          if (d.battery != null) parts.push('battery ' + d.battery + ' %');
          if (d.rssi != null) parts.push(d.rssi + ' dBm');
          t.meta.textContent = parts.join(' · ');
        }

        async function loadDevices() {
          const r = await fetch('/api/devices', { credentials: 'same-origin' });
          if (!r.ok) throw new Error('devices: HTTP ' + r.status);
          const body = await r.json();
          for (const d of body.devices) showDevice(d);
        }

        function follow() {
          const state = document.getElementById('state');
          const events = new EventSource('/events');
          events.onopen = () => { state.textContent = 'live'; };
          events.onerror = () => { state.textContent = 'reconnecting…'; };
          events.addEventListener('sample', (e) => {
            const s = JSON.parse(e.data);
            if (s.type !== 'heartRate' || !s.device) return;
            tile(s.device.address, s.device.name).hr.textContent = String(Math.round(s.value));
          });
          events.addEventListener('link', () => { loadDevices().catch(() => {}); });
          events.addEventListener('device', () => { loadDevices().catch(() => {}); });
        }

        loadDevices().catch((e) => { document.getElementById('state').textContent = e.message; });
        follow();

        """
}
