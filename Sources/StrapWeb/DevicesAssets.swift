/// The devices page's files, compiled in like the other pages': strapd's devices from
/// `GET /api/devices`, a scan, and pair and forget per device. Every one of these needs strapd's
/// `admin` grant, which the packaged strapd-web lacks: the page reads `GET /api/access` first
/// and, without it, says so and disables the buttons rather than letting each click fail.
/// Device names come from the air (anyone nearby can advertise any name): they go in with
/// `textContent` only.
public enum DevicesAssets {
    public static func asset(at path: String) -> DashboardAssets.Asset? {
        PageShell.asset(path, paths: ["/devices"], files: "devices", html: page, script: script, style: style)
    }

    static let page = """
        \(PageShell.head(title: "strapd devices", files: "devices"))
        <header><a href="/">strapd</a><a href="/workout">workout</a><a href="/history">history</a><a href="/profile">profile</a><h1>Devices</h1><span id="state">loading…</span></header>
        <p id="grant" hidden></p>
        <p id="message" role="alert"></p>
        <table id="devices"><thead><tr><th>name</th><th>address</th><th>connected</th><th>paired</th><th></th></tr></thead><tbody></tbody></table>
        <p><button id="scan" type="button" disabled>Scan</button> <span id="scan-state"></span></p>
        <table id="found" hidden><thead><tr><th>found</th><th>address</th><th>RSSI</th><th></th></tr></thead><tbody></tbody></table>
        </body>
        </html>
        """

    static let style = PageShell.listPageStyle + """
        #grant { color: #fc6; }
        table { border-collapse: collapse; margin-bottom: 1rem; }
        td, th { padding: 0.3rem 0.8rem 0.3rem 0; text-align: left; font-weight: normal; }
        th { color: #aaa; }
        td.address { font-family: ui-monospace, monospace; }
        button { min-height: 48px; min-width: 6rem; font-size: 1.05rem; background: #234; color: #eee; border: 1px solid #7cf; border-radius: 4px; margin-right: 0.4rem; }
        button:disabled { opacity: 0.4; }
        button.confirm { background: #622; border-color: #f88; }
        """

    static let script = #"""
        'use strict';
        // The devices page (docs/web.md, "The devices page"). Names are set with textContent
        // only: a device's name is whatever it advertises.
        const $ = (id) => document.getElementById(id);
        let admin = false;

        function say(text) { $('message').textContent = text; }

        function cell(row, text, cls) {
          const td = document.createElement('td');
          td.textContent = text;
          if (cls) { td.className = cls; }
          row.append(td);
          return td;
        }

        function button(label, action, data) {
          const b = document.createElement('button');
          b.type = 'button';
          b.textContent = label;
          b.dataset.action = action;
          b.dataset.address = data;
          b.disabled = !admin;
          return b;
        }

        async function call(method, path, body) {
          const init = { method, credentials: 'same-origin' };
          if (body !== undefined) {
            init.headers = { 'Content-Type': 'application/json' };
            init.body = JSON.stringify(body);
          }
          const r = await fetch(path, init);
          const answer = await r.json().catch(() => ({}));
          if (!r.ok) { throw new Error(answer.error || (path + ': ' + r.status)); }
          return answer;
        }

        // A row of a listed or a found device: its name (as text) and address, then the caller's cells.
        function deviceRow(d) {
          const row = document.createElement('tr');
          row.dataset.address = d.address;
          cell(row, d.name == null ? '' : String(d.name), 'name');
          cell(row, d.address, 'address');
          return row;
        }

        async function loadDevices() {
          const answer = await call('GET', '/api/devices');
          const body = $('devices').tBodies[0];
          body.replaceChildren();
          for (const d of answer.devices || []) {
            const row = deviceRow(d);
            cell(row, d.connected ? 'yes' : 'no', 'connected');
            cell(row, d.paired ? 'yes' : 'no', 'paired');
            const actions = cell(row, '');
            if (!d.paired) { actions.append(button('Pair', 'pair', d.address)); }
            actions.append(button('Forget', 'forget', d.address));
            body.append(row);
          }
        }

        // strapd-web's own grants: without admin strapd refuses every button here.
        async function loadAccess() {
          const access = await call('GET', '/api/access');
          admin = Boolean(access.grants && access.grants.admin);
          $('scan').disabled = !admin;
          $('grant').hidden = admin;
          $('grant').textContent = admin ? '' : "strapd-web lacks strapd's admin grant: scanning, pairing and " +
            'forgetting are off. An administrator grants it in strapd.conf ([access] admin, docs/web.md).';
        }

        async function scan() {
          $('scan').disabled = true;
          $('scan-state').textContent = 'scanning…';
          say('');
          try {
            const answer = await call('POST', '/api/devices/scan', {});
            const body = $('found').tBodies[0];
            body.replaceChildren();
            for (const d of answer.devices || []) {
              const row = deviceRow(d);
              cell(row, typeof d.rssi === 'number' ? d.rssi + ' dBm' : '–', 'rssi');
              cell(row, '').append(button('Pair', 'pair', d.address));
              body.append(row);
            }
            $('found').hidden = false;
            $('scan-state').textContent = 'found ' + (answer.devices || []).length;
          } catch (e) {
            $('scan-state').textContent = 'scan failed';
            say(e.message);
          } finally {
            $('scan').disabled = !admin;
          }
        }

        // Forget removes the bond: the first click asks, the second forgets.
        async function act(b) {
          const { action, address } = b.dataset;
          if (action === 'forget' && !b.classList.contains('confirm')) {
            b.classList.add('confirm');
            b.textContent = 'Forget?';
            return;
          }
          b.disabled = true;
          $('state').textContent = action + '…';
          let outcome;
          try {
            await call('POST', '/api/devices/' + encodeURIComponent(address) + '/' + action);
            say('');
            outcome = (action === 'pair' ? 'paired ' : 'forgot ') + address;
          } catch (e) {
            outcome = action + ' failed';
            say(e.message);
          }
          // The outcome shows once the list is strapd's again, never beside the old list.
          await loadDevices().catch((e) => say(e.message));
          $('state').textContent = outcome;
        }

        document.addEventListener('DOMContentLoaded', () => {
          $('scan').addEventListener('click', scan);
          document.body.addEventListener('click', (e) => {
            const b = e.target.closest('button[data-action]');
            if (b && !b.disabled) { act(b); }
          });
          loadAccess()
            .then(loadDevices)
            .then(() => { $('state').textContent = 'loaded'; })
            .catch((e) => { $('state').textContent = 'not loaded'; say(e.message); });
        });
        """#
}
