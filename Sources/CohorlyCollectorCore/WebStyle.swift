/// The web pages' one stylesheet, served at `path` (the CSP allows `style-src 'self'` and nothing inline). Narrow
/// screens get one column: tables scroll sideways inside their box, stacks wrap long names.
enum WebStyle {
    /// Where it is served (no session needed: it holds nothing but this text).
    static let path = "/web.css"

    /// The stylesheet as an answer.
    static var response: HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [("Content-Type", "text/css; charset=utf-8")]
                + WebPage.securityHeaders.filter { $0.0 != "Cache-Control" } + [("Cache-Control", "max-age=3600")],
            body: Array(text.utf8))
    }

    static let text = """
        :root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fff; --muted: #6b6b70; --line: #d9d9de;
          --accent: #3b5bdb; --fatal: #c92a2a; --error: #e8590c; --warning: #e0a100; --ok: #2f9e44;
          --code: #f4f4f6; }
        @media (prefers-color-scheme: dark) {
          :root { --fg: #e8e8ea; --bg: #161618; --muted: #9a9aa2; --line: #34343a; --accent: #91a7ff;
            --code: #222226; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
          background: var(--bg); }
        a { color: var(--accent); text-decoration: none; }
        a:hover { text-decoration: underline; }
        .bar { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1rem;
          border-bottom: 1px solid var(--line); }
        .brand { font-weight: 600; color: var(--fg); }
        .bar nav { display: flex; gap: 1rem; flex: 1; }
        .logout { margin: 0; }
        button { font: inherit; padding: .25rem .7rem; border: 1px solid var(--line); border-radius: 6px;
          background: var(--code); color: var(--fg); cursor: pointer; }
        main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
        h1 { font-size: 1.35rem; margin: .2rem 0 .8rem; overflow-wrap: anywhere; }
        h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
        .sub { color: var(--muted); overflow-wrap: anywhere; margin: -.4rem 0 .8rem; }
        .muted { color: var(--muted); }
        .short-id { color: var(--muted); font-size: .8rem; white-space: nowrap; }
        p.error { color: var(--fatal); overflow-wrap: anywhere; }
        code, .stack { font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-weight: 600; color: var(--muted); font-size: .85rem; }
        td.num { text-align: right; font-variant-numeric: tabular-nums; }
        tr.crashing-task td { font-weight: 600; }
        .title { overflow-wrap: anywhere; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
        dl.facts dt { color: var(--muted); }
        dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        .badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: .8rem;
          border: 1px solid currentColor; white-space: nowrap; }
        .level-fatal { color: var(--fatal); } .level-error { color: var(--error); }
        .level-warning { color: var(--warning); }
        .state-open, .state-regressed { color: var(--fatal); } .state-resolved { color: var(--ok); }
        .state-muted { color: var(--muted); }
        ol.frames { list-style: none; margin: 0; padding: 0; }
        ol.frames > li { padding: .3rem .5rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
        ol.frames > li.app { background: var(--code); }
        .fn { font-weight: 600; }
        .where, .addr { color: var(--muted); }
        .kind { font-size: .75rem; color: var(--accent); margin-right: .3rem; }
        ol.inlined { list-style: none; margin: .15rem 0 0 1.2rem; padding: 0; }
        details { margin: .4rem 0; }
        summary { cursor: pointer; }
        svg.chart { display: block; max-width: 100%; height: auto; }
        svg.chart rect { fill: var(--accent); }
        svg.chart rect.empty { fill: var(--line); }
        svg.chart text { fill: var(--muted); font-size: 10px; unicode-bidi: isolate; }
        svg.chart.bars text { fill: var(--fg); font-size: 12px; }
        ul.occurrences { padding-left: 1.2rem; }
        nav.pager a { margin-right: 1rem; }
        div.tags { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: 0 1.5rem; }
        div.tags h3 { font-size: .95rem; margin: .6rem 0 .2rem; }
        table.breakdown td { padding: .2rem .4rem; }
        table.breakdown td.value { overflow-wrap: anywhere; }
        table.breakdown meter { width: 4rem; }
        .culprit code { overflow-wrap: anywhere; }
        form.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0; }
        input { font: inherit; padding: .2rem .4rem; border: 1px solid var(--line); border-radius: 6px;
          background: var(--bg); color: var(--fg); }
        @media (max-width: 40rem) {
          main { padding: .6rem; }
          .wide { display: none; }
          dl.facts { grid-template-columns: 1fr; }
          dl.facts dd { margin-bottom: .3rem; }
        }

        """
}
