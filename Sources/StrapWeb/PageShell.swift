/// What the compiled-in pages (dashboard, workout, history, profile, devices) share: each is an HTML
/// document with a stylesheet and a deferred script in files of their own, named after the page
/// (the CSP allows no inline script or style), served from memory.
enum PageShell {
    /// The document up to and including `<body>`.
    static func head(title: String, files name: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        <link rel="stylesheet" href="/\(name).css">
        <script src="/\(name).js" defer></script>
        </head>
        <body>
        """
    }

    /// The opening rules of the history, profile and devices pages' stylesheets: one look for
    /// the pages of lists and forms (the dashboard and workout pages are laid out for a glance).
    static let listPageStyle = """
        body { font-family: system-ui, sans-serif; margin: 0; padding: 0 1rem 2rem; background: #111; color: #eee; }
        header { display: flex; gap: 1rem; align-items: baseline; }
        header h1 { flex: 1; font-size: 1.4rem; }
        a { color: #7cf; }
        #message { color: #f88; min-height: 1em; }

        """

    /// `requested` among a page's files: the HTML at any of `paths`, `/NAME.js` and `/NAME.css`.
    static func asset(_ requested: String, paths: Set<String>, files name: String,
                      html: String, script: String, style: String) -> DashboardAssets.Asset? {
        if paths.contains(requested) { return .init(type: "text/html; charset=utf-8", bytes: Array(html.utf8)) }
        switch requested {
        case "/\(name).js": return .init(type: "text/javascript; charset=utf-8", bytes: Array(script.utf8))
        case "/\(name).css": return .init(type: "text/css; charset=utf-8", bytes: Array(style.utf8))
        default: return nil
        }
    }
}
