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
        .reading { display: flex; align-items: baseline; gap: 0.4em; }
        .hr { font-size: 3em; font-variant-numeric: tabular-nums; }
        .zone { font-weight: bold; }
        .figures { display: grid; grid-template-columns: auto 1fr; gap: 0.1em 0.6em; margin: 0.4em 0; }
        .figures [hidden] { display: none; }
        .figure { display: contents; }
        .figure .value { font-variant-numeric: tabular-nums; font-size: 1.3em; }
        .figure .unit { white-space: nowrap; }
        .meta { color: #aaa; font-size: 0.9em; }

        """ + zoneStyle

    /// The overlay's zone colours, so a zone looks the same on both pages.
    static let zoneStyle = OverlayPage.zoneColours.enumerated().map { zone, colour in
        ".z\(zone) .hr, .z\(zone) .zone { color: \(colour); }\n"
    }.joined()

    static let script = """
        'use strict';
        // Tiles by device address; every text goes in through textContent. The figures beside a
        // sample's value (zone, RR, RMSSD, km/h, pace) come worked out from strapd-web, as the
        // sample's `figures`: this script formats them and computes none.
        const tiles = new Map();
        // The rows a tile may show, in order: [key, label, unit].
        const rows = [['rr', 'RR', 'ms'], ['rmssd', 'RMSSD', 'ms (1 min)'], ['speed', 'speed', 'km/h'],
                      ['cadence', 'cadence', 'rpm'], ['pace', 'pace', 'min/km']];

        function tile(address, name) {
          let t = tiles.get(address);
          if (!t) {
            const root = document.createElement('section');
            root.className = 'tile';
            const title = document.createElement('div');
            title.className = 'name';
            const reading = document.createElement('div');
            reading.className = 'reading';
            const hr = document.createElement('div');
            hr.className = 'hr';
            hr.textContent = '–';
            const zone = document.createElement('span');
            zone.className = 'zone';
            reading.append(hr, zone);
            const figures = document.createElement('div');
            figures.className = 'figures';
            const values = {};
            for (const [key, label, unit] of rows) {
              const row = document.createElement('div');
              row.className = 'figure';
              row.dataset.figure = key;
              row.hidden = true;
              const l = document.createElement('span');
              l.className = 'label';
              l.textContent = label;
              const v = document.createElement('span');
              const value = document.createElement('span');
              value.className = 'value';
              const u = document.createElement('span');
              u.className = 'unit';
              u.textContent = ' ' + unit;
              v.append(value, u);
              row.append(l, v);
              figures.append(row);
              values[key] = { row, value, unit: u };
            }
            const meta = document.createElement('div');
            meta.className = 'meta';
            root.append(title, reading, figures, meta);
            document.getElementById('tiles').append(root);
            t = { root, title, reading, hr, zone, values, meta };
            tiles.set(address, t);
          }
          if (name) t.title.textContent = name;
          return t;
        }

        function show(t, key, text, unit) {
          const v = t.values[key];
          v.value.textContent = text;
          if (unit) v.unit.textContent = ' ' + unit;
          v.row.hidden = false;
        }

        const number = (x) => typeof x === 'number' && Number.isFinite(x);

        function pace(secondsPerKilometre) {
          const s = Math.round(secondsPerKilometre);
          return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
        }

        function showSample(s) {
          const t = tile(s.device.address, s.device.name);
          const f = (s.figures && typeof s.figures === 'object') ? s.figures : {};
          switch (s.type) {
            case 'heartRate':
              t.hr.textContent = f.reading === false ? '–' : String(Math.round(s.value));
              // No zone figure: strapd's default athlete has no zones (or this is no reading).
              t.reading.className = 'reading' + (Number.isInteger(f.zone) ? ' z' + f.zone : '');
              t.zone.textContent = Number.isInteger(f.zone) && f.zone > 0 ? 'Z' + f.zone : '';
              break;
            case 'heartbeatSeries':
              if (number(f.lastRR)) show(t, 'rr', String(Math.round(f.lastRR)));
              if (number(f.rmssd)) show(t, 'rmssd', String(Math.round(f.rmssd)));
              break;
            case 'cyclingSpeed':
            case 'runningSpeed':
              if (number(f.kilometresPerHour)) show(t, 'speed', f.kilometresPerHour.toFixed(1));
              if (number(f.secondsPerKilometre)) show(t, 'pace', pace(f.secondsPerKilometre));
              break;
            case 'cyclingCadence':
              if (number(s.value)) show(t, 'cadence', String(Math.round(s.value)), 'rpm');
              break;
            case 'runningCadence':
              if (number(s.value)) show(t, 'cadence', String(Math.round(s.value)), '/min');
              break;
          }
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
            if (!s.device || typeof s.device.address !== 'string') return;
            showSample(s);
          });
          events.addEventListener('link', () => { loadDevices().catch(() => {}); });
          events.addEventListener('device', () => { loadDevices().catch(() => {}); });
        }

        loadDevices().catch((e) => { document.getElementById('state').textContent = e.message; });
        follow();

        """
}
