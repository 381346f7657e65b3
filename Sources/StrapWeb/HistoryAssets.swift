/// The history page's files, compiled in like the dashboard's (DashboardAssets): the saved
/// workouts from `/api/workouts`, and for the one chosen its heart-rate curve (an inline SVG
/// polyline, one point per stored sample), laps, zone times, HRV and its exports. Every figure
/// is strapd's, shown as it comes; the script computes none. Script in a file of its own (the
/// CSP has no inline script); every daemon-provided text goes in with `textContent`.
public enum HistoryAssets {
    public static func asset(at path: String) -> DashboardAssets.Asset? {
        PageShell.asset(path, paths: ["/history"], files: "history", html: page, script: script, style: style)
    }

    static let page = """
        \(PageShell.head(title: "strapd history", files: "history"))
        <header><a href="/">strapd</a><a href="/workout">workout</a><a id="profile-link" href="/profile">profile</a><a href="/devices">devices</a><h1>History</h1><span id="state">loading…</span></header>
        <p id="message" role="alert"></p>
        <ul id="workouts"></ul>
        <section id="detail" hidden>
        <h2 id="title"></h2>
        <p id="figures"></p>
        <svg id="curve" viewBox="0 0 1000 200" preserveAspectRatio="none" role="img" aria-label="heart rate">
        <polyline id="line" points="" fill="none"></polyline>
        </svg>
        <p id="range"></p>
        <nav id="downloads">
        <a id="fit" download>FIT</a> <a id="tcx" download>TCX</a> <a id="csv" download>CSV</a>
        </nav>
        <h3>Laps</h3>
        <table id="laps"><thead><tr><th>lap</th><th>start</th><th>time</th><th>avg HR</th><th>max HR</th></tr></thead><tbody></tbody></table>
        <h3>Time in zones</h3>
        <table id="zones"><tbody></tbody></table>
        <p id="zones-note" class="note"></p>
        <h3>HRV</h3>
        <table id="hrv"><tbody></tbody></table>
        <p id="hrv-note" class="note"></p>
        </section>
        </body>
        </html>
        """

    static let style = PageShell.listPageStyle + """
        .note { color: #aaa; }
        #workouts { list-style: none; padding: 0; }
        #workouts button { width: 100%; min-height: 48px; text-align: left; margin: 2px 0; padding: 0.5rem;
                           background: #222; color: #eee; border: 1px solid #444; font-size: 1rem; }
        #workouts button.chosen { border-color: #7cf; }
        #curve { width: 100%; height: 200px; background: #1a1a1a; }
        #line { stroke: #f55; stroke-width: 2; vector-effect: non-scaling-stroke; }
        table { border-collapse: collapse; }
        td, th { padding: 0.2rem 0.8rem 0.2rem 0; text-align: left; }
        #downloads a { display: inline-block; min-height: 48px; line-height: 48px; padding: 0 1rem; margin-right: 0.5rem;
                       background: #234; border-radius: 4px; text-decoration: none; }
        """

    static let script = #"""
        'use strict';
        // The history page (docs/web.md, "The history page"). Every text from strapd is set
        // with textContent; the figures are strapd's own, shown as they come.
        const $ = (id) => document.getElementById(id);

        function say(text) { $('message').textContent = text; }

        async function getJSON(path) {
          const r = await fetch(path, { credentials: 'same-origin' });
          const body = await r.json().catch(() => ({}));
          if (!r.ok) { throw new Error(body.error || (path + ': ' + r.status)); }
          return body;
        }

        function clock(seconds) {
          if (typeof seconds !== 'number') { return '–'; }
          const s = Math.round(seconds), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
          return (h > 0 ? h + ':' + String(m).padStart(2, '0') : String(m)) + ':' + String(r).padStart(2, '0');
        }

        function when(text) {
          const d = new Date(text);
          return isNaN(d) ? String(text || '?') : d.toLocaleString();
        }

        function number(value, unit) {
          return typeof value === 'number' ? (Math.round(value * 10) / 10) + (unit ? ' ' + unit : '') : '–';
        }

        function cell(row, text) {
          const td = document.createElement('td');
          td.textContent = text;
          row.appendChild(td);
        }

        function rows(table, pairs) {
          const body = table.tBodies[0];
          body.replaceChildren();
          for (const [name, value] of pairs) {
            const tr = document.createElement('tr');
            cell(tr, name);
            cell(tr, value);
            body.appendChild(tr);
          }
        }

        // One point per stored heart-rate sample, in time order: x is the time within the
        // workout's span, y the value within the samples' range.
        function drawCurve(workout, samples) {
          const start = Date.parse(workout.start), end = Date.parse(workout.end);
          const points = samples.map((s) => ({ t: Date.parse(s.start), v: s.value }))
            .filter((p) => !isNaN(p.t) && typeof p.v === 'number')
            .sort((a, b) => a.t - b.t);
          const span = Math.max(1, end - start);
          let low = Infinity, high = -Infinity;
          for (const p of points) { low = Math.min(low, p.v); high = Math.max(high, p.v); }
          const range = Math.max(1, high - low);
          $('line').setAttribute('points', points.map((p) => {
            const x = Math.min(1000, Math.max(0, (p.t - start) / span * 1000));
            const y = 190 - (p.v - low) / range * 180;
            return x.toFixed(1) + ',' + y.toFixed(1);
          }).join(' '));
          $('range').textContent = points.length
            ? points.length + ' heart-rate samples, ' + low + '–' + high + ' bpm'
            : 'no heart-rate samples stored';
        }

        async function choose(id, button) {
          for (const b of document.querySelectorAll('#workouts button')) { b.classList.toggle('chosen', b === button); }
          say('');
          let answer;
          try {
            answer = await getJSON('/api/workouts/' + encodeURIComponent(id));
          } catch (e) {
            say(e.message);
            return;
          }
          const w = answer.workout, summary = w.summary || {};
          $('detail').hidden = false;
          $('detail').dataset.workout = w.uuid;
          $('title').textContent = w.activityType + ', ' + when(w.start);
          $('figures').textContent = 'time ' + clock(summary.elapsedTime) + ' · average ' + number(summary.heartRateAverage, 'bpm')
            + ' · maximum ' + number(summary.heartRateMaximum, 'bpm');
          drawCurve(w, answer.heartRate.samples);
          for (const format of ['fit', 'tcx', 'csv']) {
            $(format).href = '/api/workouts/' + encodeURIComponent(w.uuid) + '/export?format=' + format;
          }
          const laps = $('laps').tBodies[0];
          laps.replaceChildren();
          (w.laps || []).forEach((lap, i) => {
            const s = lap.summary || {}, tr = document.createElement('tr');
            cell(tr, String(i + 1));
            cell(tr, when(lap.start));
            cell(tr, clock(s.elapsedTime));
            cell(tr, number(s.heartRateAverage));
            cell(tr, number(s.heartRateMaximum));
            laps.appendChild(tr);
          });
          const zones = [['below zone 1', summary.timeBelowZone1]];
          for (let z = 1; z <= 5; z++) { zones.push(['zone ' + z, summary['timeInZone' + z]]); }
          rows($('zones'), zones.map(([name, s]) => [name, clock(s)]));
          const hrv = [['RMSSD', number(summary.hrvRMSSD, 'ms')], ['SDNN', number(summary.hrvSDNN, 'ms')],
                       ['mean NN', number(summary.hrvMeanNN, 'ms')], ['pNN50', number(summary.hrvPNN50, '%')],
                       ['intervals', number(summary.hrvIntervals)]];
          rows($('hrv'), hrv);
          // strapd says why a figure is missing (no zones without a maximum heart rate, no HRV without RR intervals).
          const info = w.info || {};
          $('zones-note').textContent = info.heartRateZonesReason || '';
          $('hrv-note').textContent = info.hrvReason || '';
        }

        async function load() {
          let answer;
          try {
            answer = await getJSON('/api/workouts');
          } catch (e) {
            $('state').textContent = 'strapd unavailable';
            say(e.message);
            return;
          }
          const list = $('workouts');
          list.replaceChildren();
          for (const w of answer.workouts) {
            const li = document.createElement('li'), b = document.createElement('button');
            b.type = 'button';
            b.dataset.workout = w.uuid;
            b.textContent = when(w.start) + ' · ' + w.activityType + ' · ' + clock((w.summary || {}).elapsedTime);
            b.addEventListener('click', () => choose(w.uuid, b));
            li.appendChild(b);
            list.appendChild(li);
          }
          $('state').textContent = answer.workouts.length + ' saved workouts';
        }

        load();
        """#
}
