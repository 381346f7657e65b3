import FoundationEssentials
import StrapModel
import StrapWire

/// `/overlay`: the current heart rate, big, in its zone's colour, on a transparent page for an
/// OBS browser source (docs/web.md, "The overlay"). Its settings come from the query, and
/// each is checked against a pattern or a list here, on the server: a value that does not
/// fit is dropped for the default, so nothing a URL carries reaches the page's markup or its
/// stylesheet but what these lists allow. The page is HTML, a stylesheet made from the
/// checked settings (`/overlay.css?…`: the CSP allows no inline style) and a script file
/// that writes with `textContent` only.
public enum OverlayPage {
    public static let paths: Set<String> = ["/overlay", "/overlay.css", "/overlay.js"]

    /// The overlay's settings, each valid or its default.
    public struct Options: Equatable, Sendable {
        public enum Layout: String, Sendable { case stack, row, number }

        /// Only this strap's heart rate (its address, upper case); nil: the first strap heard.
        public var device: String? = nil
        /// The heart rate's height in CSS pixels.
        public var size = 120
        /// A CSS colour from `colourNames` or `#rgb`/`#rrggbb`: the text, and the number when
        /// zones are off.
        public var colour = "white"
        public var font = "sans"
        public var showZone = true
        public var layout = Layout.stack
        /// The maximum heart rate the default zones are fractions of; nil: the athlete's zones.
        public var maxHeartRate: Int? = nil
        /// Whose profile gives the zones when `max` is not given.
        public var athlete = "default"
        public static let defaultMaximum = 190

        public static let sizes = 12...600
        public static let maxHeartRates = 100...240
        /// Named colours a URL may give: a list, not a pattern, so no CSS syntax gets through.
        public static let colourNames: Set<String> = [
            "white", "black", "red", "green", "blue", "yellow", "orange", "purple", "pink", "cyan", "magenta",
            "lime", "gray", "grey", "silver", "gold", "navy", "teal", "crimson", "tomato", "transparent",
        ]
        public static let fonts = ["sans": "system-ui, sans-serif", "serif": "Georgia, serif",
                                   "mono": "ui-monospace, monospace", "rounded": "ui-rounded, system-ui, sans-serif"]

        public init() {}

        /// From the query's decoded values; `lookup` is `HTTPRequest.query`.
        public init(_ lookup: (String) -> String?) {
            if let d = lookup("device")?.uppercased(), Self.isAddress(d) { device = d }
            if let s = lookup("size").flatMap({ Int($0) }), Self.sizes.contains(s) { size = s }
            if let c = (lookup("color") ?? lookup("colour"))?.lowercased(), Self.isColour(c) { colour = c }
            if let f = lookup("font")?.lowercased(), Self.fonts[f] != nil { font = f }
            if let z = lookup("zone")?.lowercased() { showZone = ["y", "yes", "1", "true"].contains(z) ? true : ["n", "no", "0", "false"].contains(z) ? false : showZone }
            if let l = lookup("layout").flatMap({ Layout(rawValue: $0.lowercased()) }) { layout = l }
            if let m = lookup("max").flatMap({ Int($0) }), Self.maxHeartRates.contains(m) { maxHeartRate = m }
            if let a = lookup("athlete"), (1...64).contains(a.utf8.count),
               a.utf8.allSatisfy({ $0 == 45 || $0 == 46 || $0 == 95 || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }) {
                athlete = a
            }
        }

        static func isAddress(_ text: String) -> Bool {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
        }

        static func isColour(_ text: String) -> Bool {
            if colourNames.contains(text) { return true }
            let digits = text.dropFirst()
            return text.first == "#" && (digits.count == 3 || digits.count == 6) && digits.allSatisfy(\.isHexDigit)
        }

        /// The settings the stylesheet needs, as its URL's query: checked values only.
        var styleQuery: String {
            "color=\(colour.hasPrefix("#") ? "%23" + colour.dropFirst() : colour)&size=\(size)&font=\(font)&layout=\(layout.rawValue)"
        }
    }

    static func response(_ path: String, _ request: HTTPRequest, link: DaemonLink) -> HTTPResponse {
        let options = Options { request.query($0) }
        let (type, text) = switch path {
        case "/overlay.css": ("text/css; charset=utf-8", style(options))
        case "/overlay.js": ("text/javascript; charset=utf-8", script)
        default: ("text/html; charset=utf-8", page(options, zones: zones(options, link)))
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", type)], body: .bytes(Array(text.utf8)))
    }

    /// Zones 1–5's lower bounds in bpm: from `max` when given (50, 60, 70, 80, 90 % of it),
    /// else the athlete's own zones as strapd's workouts use them (HeartRateZones from the
    /// profile strapd-web reads with its own grant; the overlay token reads no profile), else
    /// 50–90 % of 190 when the profile is missing or cannot give zones.
    static func zones(_ o: Options, _ link: DaemonLink) -> [Int] {
        let byMaximum = { (max: Int) in [50, 60, 70, 80, 90].map { ($0 * max + 50) / 100 } }
        if let max = o.maxHeartRate { return byMaximum(max) }
        guard let reply = try? link.request("profile.get", ["athlete": .string(o.athlete)]),
              let zones = AthleteZones.zones(profileReply: reply) else {
            return byMaximum(Options.defaultMaximum)
        }
        return zones.bpm.prefix(5).map { Int($0.rounded()) }
    }

    static func page(_ o: Options, zones: [Int]) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>strapd overlay</title>
        <link rel="stylesheet" href="/overlay.css?\(escaped(o.styleQuery))">
        <script src="/overlay.js" defer></script>
        </head>
        <body class="\(o.showZone ? "zones" : "plain") \(o.layout.rawValue)" data-device="\(escaped(o.device ?? ""))" data-zones="\(zones.map(String.init).joined(separator: ","))">
        <div id="overlay"><span id="hr">–</span><span id="unit">bpm</span><span id="zone"></span><span id="name"></span></div>
        </body>
        </html>

        """
    }

    /// The values are already from lists and patterns; escaping keeps that true if one grows.
    static func escaped(_ text: String) -> String {
        text.map { c -> String in
            switch c {
            case "&": "&amp;"
            case "\"": "&quot;"
            case "<": "&lt;"
            case ">": "&gt;"
            default: String(c)
            }
        }.joined()
    }

    /// Zone colours by zone number, 0 below zone 1.
    static let zoneColours = ["#bdbdbd", "#9e9e9e", "#42a5f5", "#66bb6a", "#ffa726", "#ef5350"]

    static func style(_ o: Options) -> String {
        var css = """
            html, body { margin: 0; padding: 0; background: transparent; overflow: hidden; }
            body { font-family: \(Options.fonts[o.font] ?? "sans-serif"); color: \(o.colour); }
            #overlay { display: inline-flex; flex-direction: column; align-items: center; padding: 0.2em; line-height: 1;
                       text-shadow: 0 0 4px rgba(0, 0, 0, 0.8); }
            .row #overlay { flex-direction: row; align-items: baseline; gap: 0.4em; }
            #hr { font-size: \(o.size)px; font-weight: 700; font-variant-numeric: tabular-nums; }
            #unit, #zone, #name { font-size: \(max(o.size / 4, 10))px; }
            .number #unit, .number #name, .number #zone, .plain #zone { display: none; }
            .offline #hr { opacity: 0.4; }

            """
        for (zone, colour) in zoneColours.enumerated() {
            css += ".zones .z\(zone) #hr, .zones .z\(zone) #zone { color: \(colour); }\n"
        }
        return css
    }

    static let script = """
        'use strict';
        // The settings are the server's checked ones (data-*); every text goes in by textContent.
        const device = document.body.dataset.device || '';
        // Zones 1–5's lower bounds in bpm, from the server (max=, the athlete's profile, or 50–90 % of 190).
        const bounds = (document.body.dataset.zones || '').split(',').map(Number).filter(Number.isFinite);
        const box = document.getElementById('overlay');
        const hr = document.getElementById('hr');
        const zone = document.getElementById('zone');
        const name = document.getElementById('name');
        let followed = device;

        function zoneOf(bpm) {
          let z = 0;
          for (const [i, bound] of bounds.entries()) if (bpm >= bound) z = i + 1;
          return z;
        }

        const events = new EventSource('/events');
        events.onopen = () => { box.classList.remove('offline'); };
        events.onerror = () => { box.classList.add('offline'); };
        events.addEventListener('sample', (e) => {
          const s = JSON.parse(e.data);
          if (s.type !== 'heartRate' || !s.device || typeof s.device.address !== 'string') return;
          const address = s.device.address.toUpperCase();
          // Without ?device= the first strap heard is kept: two straps would make it flicker.
          if (!followed) followed = address;
          if (address !== followed) return;
          if (s.reading === false) {
            hr.textContent = '–';
            zone.textContent = '';
            box.className = 'z0';
            return;
          }
          const bpm = Math.round(Number(s.value));
          if (!Number.isFinite(bpm)) return;
          const z = zoneOf(bpm);
          hr.textContent = String(bpm);
          zone.textContent = z ? 'Z' + z : '';
          name.textContent = s.device.name || s.device.address;
          box.className = 'z' + z;
        });

        """
}
