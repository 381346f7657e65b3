/// The athlete profile page's files, compiled in like the history page's: the profile from
/// `GET /api/profile` and a form whose changed fields go back through `PUT /api/profile`.
/// strapd validates them; its message is shown as it comes when it refuses. Script in a file
/// of its own (the CSP has no inline script); every text from strapd goes in with `textContent`
/// or as an input's value.
public enum ProfileAssets {
    public static func asset(at path: String) -> DashboardAssets.Asset? {
        PageShell.asset(path, paths: ["/profile"], files: "profile", html: page, script: script, style: style)
    }

    static let page = """
        \(PageShell.head(title: "strapd profile", files: "profile"))
        <header><a href="/">strapd</a><a href="/workout">workout</a><a href="/history">history</a><a href="/devices">devices</a><h1>Profile</h1><span id="state">loading…</span></header>
        <p id="message" role="alert"></p>
        <h2 id="athlete"></h2>
        <table id="derived"><tbody>
        <tr><th>maximum heart rate</th><td id="maximum">–</td></tr>
        <tr><th>age</th><td id="age">–</td></tr>
        <tr><th>heart-rate zones</th><td id="zones">–</td></tr>
        </tbody></table>
        <form id="form">
        <label>date of birth <input id="dateOfBirth" name="dateOfBirth" type="date"></label>
        <label>sex <input id="biologicalSex" name="biologicalSex" type="text" placeholder="female, male, other"></label>
        <label>weight (kg) <input id="weight" name="weight" type="number" step="any"></label>
        <label>height (cm) <input id="height" name="height" type="number" step="any"></label>
        <label>resting heart rate (bpm) <input id="restingHeartRate" name="restingHeartRate" type="number" step="1"></label>
        <label>maximum heart rate (bpm) <input id="maximumHeartRate" name="maximumHeartRate" type="number" step="1"></label>
        <label>FTP (W) <input id="functionalThresholdPower" name="functionalThresholdPower" type="number" step="1"></label>
        <button id="save" type="submit">Save</button>
        </form>
        </body>
        </html>
        """

    static let style = PageShell.listPageStyle + """
        table { border-collapse: collapse; margin-bottom: 1rem; }
        td, th { padding: 0.2rem 0.8rem 0.2rem 0; text-align: left; font-weight: normal; }
        th { color: #aaa; }
        form { display: grid; gap: 0.6rem; max-width: 28rem; }
        label { display: flex; justify-content: space-between; gap: 1rem; align-items: center; }
        input { width: 12rem; box-sizing: border-box; min-height: 40px; font-size: 1rem; background: #222; color: #eee; border: 1px solid #444; padding: 0 0.4rem; }
        button { min-height: 48px; font-size: 1.1rem; background: #234; color: #eee; border: 1px solid #7cf; border-radius: 4px; }
        """

    static let script = #"""
        'use strict';
        // The athlete profile page (docs/web.md, "The profile page"). strapd's texts are set
        // with textContent or as an input's value; strapd checks every value on save.
        const $ = (id) => document.getElementById(id);
        const fields = ['dateOfBirth', 'biologicalSex', 'weight', 'height', 'restingHeartRate',
                        'maximumHeartRate', 'functionalThresholdPower'];
        const numeric = new Set(['weight', 'height', 'restingHeartRate', 'maximumHeartRate', 'functionalThresholdPower']);
        const athlete = new URLSearchParams(location.search).get('athlete') || 'default';
        const api = '/api/profile?athlete=' + encodeURIComponent(athlete);
        let shown = {};

        function say(text) { $('message').textContent = text; }

        // The form's text of each field as strapd gave it: what a change is measured against.
        function show(answer) {
          const profile = answer.profile || {};
          shown = {};
          for (const f of fields) {
            const v = profile[f];
            shown[f] = v === undefined || v === null ? '' : String(v);
            $(f).value = shown[f];
          }
          const max = answer.maximumHeartRate;
          $('maximum').textContent = max && typeof max.value === 'number'
            ? max.value + ' bpm' + (max.estimated ? ' (estimated' + (max.formula ? ', ' + max.formula : '') + ')' : '') : '–';
          $('age').textContent = typeof answer.age === 'number' ? String(answer.age) : '–';
          const zones = profile.heartRateZones;
          $('zones').textContent = zones && Array.isArray(zones.bounds)
            ? (zones.method ? zones.method + ': ' : '') + zones.bounds.join(' / ') + ' %' : '–';
        }

        async function load() {
          $('athlete').textContent = athlete;
          const r = await fetch(api, { credentials: 'same-origin' });
          const body = await r.json().catch(() => ({}));
          if (r.ok) { show(body); $('state').textContent = 'loaded'; return; }
          if (body.code === 'noData') { show({}); $('state').textContent = 'no profile yet'; return; }
          $('state').textContent = 'not loaded';
          say(body.error || ('profile: ' + r.status));
        }

        // Only the fields whose text changed are sent; an emptied field is null (cleared).
        async function save(event) {
          event.preventDefault();
          const changes = {};
          for (const f of fields) {
            const text = $(f).value.trim();
            if (text === shown[f]) { continue; }
            changes[f] = text === '' ? null : (numeric.has(f) ? Number(text) : text);
          }
          if (Object.keys(changes).length === 0) { say('nothing changed'); return; }
          $('state').textContent = 'saving…';
          const r = await fetch(api, { method: 'PUT', credentials: 'same-origin',
                                       headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(changes) });
          const body = await r.json().catch(() => ({}));
          if (!r.ok) { $('state').textContent = 'not saved'; say(body.error || ('save: ' + r.status)); return; }
          say('');
          await load();
          $('state').textContent = 'saved';
        }

        document.addEventListener('DOMContentLoaded', () => {
          $('form').addEventListener('submit', save);
          load().catch((e) => say(String(e.message || e)));
        });
        """#
}
