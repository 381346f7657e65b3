/// The workout page's files, compiled in like the dashboard's (DashboardAssets): a phone on
/// the handlebar steers strapd's sessions through `/api/workout/*` and mirrors every session
/// on the box from `/events`, so one started by strapctl or another tab shows up and its
/// buttons work. Script in a file of its own (the CSP has no inline script); every text goes
/// in with `textContent`.
public enum WorkoutAssets {
    public static func asset(at path: String) -> DashboardAssets.Asset? {
        PageShell.asset(path, paths: ["/workout"], files: "workout", html: page, script: script, style: style)
    }

    /// The activities offered first; strapd takes every HealthKit name (docs/workouts.md).
    static let activities = ["cycling", "running", "walking", "rowing", "elliptical", "hiking", "crossTraining",
                             "highIntensityIntervalTraining", "other"]

    static let page = """
        \(PageShell.head(title: "strapd workout", files: "workout"))
        <header><a href="/">strapd</a><a id="history-link" href="/history">history</a><a id="profile-link" href="/profile">profile</a><a href="/devices">devices</a><h1>Workout</h1><span id="state">connecting…</span></header>
        <p id="message" role="alert"></p>
        <section id="session" hidden>
        <select id="pick" hidden aria-label="session"></select>
        <div id="title"></div>
        <div class="figures">
        <div><div id="elapsed" class="big">0:00</div><div class="label">elapsed</div></div>
        <div><div id="hr" class="big">–</div><div class="label">heart rate</div></div>
        <div><div id="laps" class="big">–</div><div class="label">lap</div></div>
        </div>
        <div class="controls">
        <button id="lap" type="button">Lap</button>
        <button id="pause" type="button">Pause</button>
        <button id="end" type="button" class="stop">End</button>
        </div>
        <button id="new" type="button" class="small">New workout…</button>
        </section>
        <section id="setup">
        <label>Activity <select id="activity">
        \(activities.map { "<option value=\"\($0)\">\($0)</option>" }.joined(separator: "\n"))
        </select></label>
        <label>Location <select id="location">
        <option value="indoor">indoor</option>
        <option value="outdoor">outdoor</option>
        </select></label>
        <fieldset id="devices"><legend>Devices (none ticked: every connected one no other session holds)</legend></fieldset>
        <button id="start" type="button">Start</button>
        </section>
        </body>
        </html>

        """

    static let style = """
        body { font-family: system-ui, sans-serif; margin: 0; background: #111; color: #eee; }
        [hidden] { display: none !important; }
        header { display: flex; gap: 1em; align-items: baseline; padding: 0.5em 1em; }
        header a { color: #8cf; }
        h1 { font-size: 1.2em; margin: 0; }
        #state { color: #999; }
        #message { color: #f88; min-height: 1.2em; margin: 0 1em; overflow-wrap: anywhere; }
        section { padding: 1em; display: grid; gap: 1em; max-width: 40em; margin: 0 auto; }
        #title { font-size: 1.3em; color: #ccc; }
        .figures { display: grid; grid-template-columns: repeat(3, 1fr); gap: 0.5em; text-align: center; }
        .big { font-size: 3em; font-variant-numeric: tabular-nums; }
        .label { color: #999; }
        .controls { display: grid; grid-template-columns: 1fr 1fr; gap: 0.75em; }
        .controls .stop { grid-column: span 2; }
        button { min-height: 4.5rem; font-size: 1.6rem; border: 0; border-radius: 0.5em; background: #2a6; color: #fff; }
        button:disabled { opacity: 0.4; }
        button.stop { background: #b33; }
        button.small { min-height: 3rem; font-size: 1.1rem; background: #333; }
        select, label { font-size: 1.3rem; }
        select { min-height: 3rem; width: 100%; }
        label { display: grid; gap: 0.3em; }
        fieldset { border: 1px solid #333; border-radius: 0.5em; display: grid; gap: 0.5em; }
        fieldset label { display: flex; gap: 0.6em; align-items: center; min-height: 3rem; }
        fieldset input { width: 1.8rem; height: 1.8rem; }

        """

    static let script = """
        'use strict';
        // Open sessions as /api/sessions gives them ({session, statistics}), the one shown, and
        // when its statistics were read (the elapsed time runs on from there between reads).
        let sessions = [];
        let shownID = null;
        let readAt = 0;
        let busy = false;
        // The start form while a session is shown, opened by "New workout…".
        let showSetup = false;
        const liveHeartRates = new Map();
        const $ = (id) => document.getElementById(id);

        function say(text) { $('message').textContent = text || ''; }

        async function api(method, path, body) {
          const init = { method, credentials: 'same-origin' };
          if (body !== undefined) {
            init.headers = { 'Content-Type': 'application/json' };
            init.body = JSON.stringify(body);
          }
          const r = await fetch(path, init);
          let json = null;
          try { json = await r.json(); } catch (e) { json = null; }
          if (!r.ok) throw new Error((json && json.error) || (path + ': HTTP ' + r.status));
          return json;
        }

        function shown() { return sessions.find((s) => s.session.session === shownID) || null; }

        async function loadSessions() {
          const body = await api('GET', '/api/sessions');
          sessions = body.sessions;
          readAt = performance.now();
          if (!shown()) {
            const last = sessions[sessions.length - 1];
            shownID = last ? last.session.session : null;
          }
          render();
        }

        async function loadDevices() {
          const body = await api('GET', '/api/devices');
          const box = $('devices');
          const ticked = new Set([...box.querySelectorAll('input:checked')].map((i) => i.value));
          for (const l of box.querySelectorAll('label')) l.remove();
          for (const d of body.devices) {
            const label = document.createElement('label');
            const input = document.createElement('input');
            input.type = 'checkbox';
            input.name = 'device';
            input.value = d.address;
            input.checked = ticked.has(d.address);
            const name = document.createElement('span');
            name.textContent = (d.name || d.address) + (d.connected ? '' : ' (not connected)');
            label.append(input, name);
            box.append(label);
          }
        }

        function clock(seconds) {
          const s = Math.max(0, Math.floor(seconds));
          const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
          const mm = h > 0 ? String(m).padStart(2, '0') : String(m);
          return (h > 0 ? h + ':' : '') + mm + ':' + String(r).padStart(2, '0');
        }

        function heartRate(info) {
          for (const address of info.session.deviceIDs || []) {
            if (liveHeartRates.has(address)) return liveHeartRates.get(address);
          }
          const recent = info.statistics && info.statistics.heartRateMostRecent;
          return recent != null ? recent : null;
        }

        function tick() {
          const info = shown();
          if (!info) return;
          const stats = info.statistics || {};
          const running = info.session.state === 'running';
          const elapsed = (stats.elapsedTime || 0) + (running ? (performance.now() - readAt) / 1000 : 0);
          $('elapsed').textContent = clock(elapsed);
          const hr = heartRate(info);
          $('hr').textContent = hr == null ? '–' : String(Math.round(hr));
        }

        function render() {
          const info = shown();
          $('session').hidden = !info;
          $('setup').hidden = !!info && !showSetup;
          const pick = $('pick');
          pick.hidden = sessions.length < 2;
          pick.replaceChildren(...sessions.map((s) => {
            const o = document.createElement('option');
            o.value = s.session.session;
            o.textContent = s.session.configuration.activityType + ' · ' + s.session.state + ' · ' + s.session.session.slice(0, 8);
            return o;
          }));
          if (!info) return;
          pick.value = shownID;
          const s = info.session;
          $('session').dataset.session = s.session;
          $('session').dataset.state = s.state;
          $('title').textContent = s.configuration.activityType + ' · ' + s.state;
          const laps = (info.statistics && info.statistics.laps) || [];
          $('laps').textContent = String(laps.length || 1);
          const steerable = s.state === 'running' || s.state === 'paused';
          $('lap').disabled = busy || !steerable;
          $('pause').disabled = busy || !steerable;
          $('pause').textContent = s.state === 'paused' ? 'Resume' : 'Pause';
          $('end').disabled = busy || s.state === 'ended';
          tick();
        }

        async function command(name) {
          const info = shown();
          if (!info || busy) return;
          busy = true;
          render();
          say('');
          try {
            const result = await api('POST', '/api/workout/' + name, { session: info.session.session });
            if (name === 'end') say('saved: workout ' + result.workout.uuid);
            else {
              const i = sessions.findIndex((x) => x.session.session === result.session.session);
              if (i >= 0) sessions[i] = result;
              readAt = performance.now();
            }
          } catch (e) {
            say(e.message);
          } finally {
            busy = false;
            await loadSessions().catch((e) => say(e.message));
          }
        }

        async function start() {
          if (busy) return;
          busy = true;
          say('');
          const devices = [...$('devices').querySelectorAll('input:checked')].map((i) => i.value);
          const body = { activityType: $('activity').value, locationType: $('location').value };
          if (devices.length > 0) body.devices = devices;
          try {
            const result = await api('POST', '/api/workout/start', body);
            shownID = result.session.session;
            showSetup = false;
          } catch (e) {
            say(e.message);
          } finally {
            busy = false;
            await loadSessions().catch((e) => say(e.message));
          }
        }

        function follow() {
          const events = new EventSource('/events');
          events.onopen = () => {
            $('state').textContent = 'live';
            // What changed while the stream was down is in no event: read it.
            loadSessions().catch((e) => say(e.message));
          };
          events.onerror = () => { $('state').textContent = 'reconnecting…'; };
          events.addEventListener('sample', (e) => {
            const s = JSON.parse(e.data);
            if (s.type !== 'heartRate' || !s.device) return;
            // A non-reading (no skin contact) shows as none, not as 0 bpm.
            const reading = !(s.figures && s.figures.reading === false);
            liveHeartRates.set(s.device.address, reading ? s.value : null);
            tick();
          });
          for (const kind of ['watching', 'created', 'state', 'saved', 'discarded']) {
            events.addEventListener('workout.' + kind, () => { loadSessions().catch((e) => say(e.message)); });
          }
          events.addEventListener('workout.failed', (e) => {
            const f = JSON.parse(e.data);
            say(f.operation + ' failed: ' + f.message);
            loadSessions().catch(() => {});
          });
          events.addEventListener('link', () => { loadDevices().catch(() => {}); });
        }

        $('lap').addEventListener('click', () => command('lap'));
        $('pause').addEventListener('click', () => command(shown() && shown().session.state === 'paused' ? 'resume' : 'pause'));
        $('end').addEventListener('click', () => command('end'));
        $('start').addEventListener('click', start);
        $('new').addEventListener('click', () => { showSetup = !showSetup; render(); });
        $('pick').addEventListener('change', () => { shownID = $('pick').value; render(); });
        setInterval(tick, 500);
        // Laps from another client and fresh figures of the shown session: workout.watch carries
        // neither. New sessions come by /events alone, so an idle page asks nothing.
        setInterval(() => { if (shown()) loadSessions().catch(() => {}); }, 5000);
        loadDevices().catch((e) => say(e.message));
        loadSessions().catch((e) => say(e.message));
        follow();

        """
}
