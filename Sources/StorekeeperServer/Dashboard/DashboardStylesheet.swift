import Foundation

/// The dashboard's only asset, served by the binary at `/dashboard/assets/dashboard.css`, so
/// the dashboard works without a network. Readable from 390 px wide (one column, tables scroll
/// sideways) to wide screens; focus is always visible.
/// - Note: Stateless; thread-safe.
enum DashboardStylesheet {
    static let path = "/dashboard/assets/dashboard.css"

    static let text = """
        :root { --ink: #1d2430; --muted: #5b6576; --line: #d5dae3; --panel: #f6f7f9; --accent: #1f5fbf;
          --bad: #a3231f; --good: #1d7a3a; color-scheme: light; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
          background: #fff; }
        a { color: var(--accent); }
        :focus-visible { outline: 3px solid #f0a020; outline-offset: 2px; }
        .skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem 1rem; z-index: 2; }
        .skip:focus { left: .5rem; }
        header { border-bottom: 1px solid var(--line); background: var(--panel); }
        nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; max-width: 1200px;
          margin: 0 auto; padding: .6rem 1rem; }
        nav .brand { font-weight: 700; margin-right: auto; }
        nav a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--ink); }
        nav form { margin: 0; }
        main { max-width: 1200px; margin: 0 auto; padding: 1rem; }
        main:focus { outline: none; }
        h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
        h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
        .cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: .75rem;
          padding: 0; list-style: none; }
        .card { border: 1px solid var(--line); border-radius: 6px; padding: .75rem; background: var(--panel); }
        .card span { display: block; }
        .card .label { color: var(--muted); font-size: .875rem; }
        .card .value { font-size: 1.4rem; font-weight: 700; overflow-wrap: anywhere; }
        .card .change { font-size: .875rem; color: var(--muted); }
        .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 480px), 1fr));
          gap: 1rem; }
        figure.chart { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: .5rem; }
        figure.chart figcaption { font-weight: 600; }
        figure.chart svg { width: 100%; height: auto; display: block; }
        svg .grid { stroke: var(--line); stroke-width: 1; }
        svg .axis, svg .legend { font-size: 15px; fill: var(--muted); }
        svg polyline { stroke-width: 2; }
        .series-0, .legend-0 { stroke: #1f5fbf; fill: #1f5fbf; }
        .series-1, .legend-1 { stroke: #d4572a; fill: #d4572a; }
        .series-2, .legend-2 { stroke: #1d7a3a; fill: #1d7a3a; }
        .series-3, .legend-3 { stroke: #7d3cb5; fill: #7d3cb5; }
        .series-4, .legend-4 { stroke: #a07a00; fill: #a07a00; }
        .series-5, .legend-5 { stroke: #555; fill: #555; }
        polyline.series-0, polyline.series-1, polyline.series-2, polyline.series-3, polyline.series-4,
        polyline.series-5 { fill: none; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: .9rem; }
        th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line);
          vertical-align: top; overflow-wrap: break-word; }
        th { white-space: nowrap; }
        td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
        form.filters, form.search { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: flex-end;
          margin: .5rem 0 1rem; }
        label { display: flex; flex-direction: column; font-size: .875rem; color: var(--muted); gap: .2rem; }
        input, select, button { font: inherit; padding: .4rem .5rem; border: 1px solid #9aa3b2; border-radius: 4px;
          min-height: 2.5rem; }
        button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
        button.secondary { background: #fff; color: var(--accent); }
        pre { white-space: pre-wrap; word-break: break-all; background: var(--panel); padding: .5rem;
          font-size: .8rem; max-height: 16rem; overflow: auto; }
        .notice { border-left: 4px solid var(--accent); background: var(--panel); padding: .5rem .75rem; }
        .error { border-left-color: var(--bad); }
        .muted { color: var(--muted); }
        .active { color: var(--good); font-weight: 600; }
        .inactive { color: var(--bad); font-weight: 600; }
        .rebuilt { font-size: .875rem; margin: -.5rem 0 1rem; }
        code { overflow-wrap: anywhere; }
        .signin { max-width: 28rem; }
        .signin input { width: 100%; }
        @media (max-width: 600px) { body { font-size: 15px; } main { padding: .75rem; }
          .charts { grid-template-columns: 1fr; } }

        """
}
