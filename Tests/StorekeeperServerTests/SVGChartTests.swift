import Testing

@testable import StorekeeperServer

/// The chart renderer alone: exact SVG for given data (coordinates worked out by hand from the
/// 640 × 240 view box, 48/8/12/28 margins, so a 584 × 200 plot).
@Suite struct SVGChartTests {
    @Test("a line chart: grid at 0, half and a rounded-up maximum, points across the plot")
    func lineChart() {
        let chart = SVGChart(
            id: "c", title: "T", kind: .line, labels: ["a", "b", "c"],
            series: [.init(name: "S", values: [0, 5, 10])])
        #expect(chart.scaleMaximum == 10)
        let expected =
            #"<svg viewBox="0 0 640 240" role="img" aria-labelledby="c-title c-desc">"#
            + #"<title id="c-title">T</title><desc id="c-desc">S: 0 at a to 10 at c.</desc>"#
            + #"<line class="grid" x1="48" y1="212" x2="632" y2="212"/>"#
            + #"<text class="axis" x="44" y="212" text-anchor="end" dominant-baseline="middle">0</text>"#
            + #"<line class="grid" x1="48" y1="112" x2="632" y2="112"/>"#
            + #"<text class="axis" x="44" y="112" text-anchor="end" dominant-baseline="middle">5</text>"#
            + #"<line class="grid" x1="48" y1="12" x2="632" y2="12"/>"#
            + #"<text class="axis" x="44" y="12" text-anchor="end" dominant-baseline="middle">10</text>"#
            + #"<text class="axis" x="48" y="232" text-anchor="start">a</text>"#
            + #"<text class="axis" x="632" y="232" text-anchor="end">c</text>"#
            + #"<polyline class="series-0" fill="none" points="48,212 340,112 632,12"/>"#
            + #"<text class="legend" x="48" y="10"><tspan class="legend-0">■ S</tspan> </text></svg>"#
        #expect(chart.svg().markup == expected)
    }

    @Test("a bar chart of two series: slots, bar widths, a missing value left out, a 1-2-5 maximum")
    func barChart() {
        let chart = SVGChart(
            id: "b", title: "Bars", kind: .bars, labels: ["x", "y"],
            series: [.init(name: "A", values: [1, 2]), .init(name: "B", values: [nil, 4])])
        // Largest 4 rounds up to 5; slot 584 / 2 = 292, bar 292 × 0.8 / 2 = 116.8.
        #expect(chart.scaleMaximum == 5)
        let expected =
            #"<svg viewBox="0 0 640 240" role="img" aria-labelledby="b-title b-desc">"#
            + #"<title id="b-title">Bars</title><desc id="b-desc">A: 1 at x to 2 at y. B: 4 at y to 4 at y.</desc>"#
            + #"<line class="grid" x1="48" y1="212" x2="632" y2="212"/>"#
            + #"<text class="axis" x="44" y="212" text-anchor="end" dominant-baseline="middle">0</text>"#
            + #"<line class="grid" x1="48" y1="112" x2="632" y2="112"/>"#
            + #"<text class="axis" x="44" y="112" text-anchor="end" dominant-baseline="middle">2.5</text>"#
            + #"<line class="grid" x1="48" y1="12" x2="632" y2="12"/>"#
            + #"<text class="axis" x="44" y="12" text-anchor="end" dominant-baseline="middle">5</text>"#
            + #"<text class="axis" x="48" y="232" text-anchor="start">x</text>"#
            + #"<text class="axis" x="632" y="232" text-anchor="end">y</text>"#
            + #"<rect class="series-0" x="77.2" y="172" width="116.8" height="40"/>"#
            + #"<rect class="series-0" x="369.2" y="132" width="116.8" height="80"/>"#
            + #"<rect class="series-1" x="486" y="52" width="116.8" height="160"/>"#
            + #"<text class="legend" x="48" y="10"><tspan class="legend-0">■ A</tspan> "#
            + #"<tspan class="legend-1">■ B</tspan> </text></svg>"#
        #expect(chart.svg().markup == expected)
        #expect(
            chart.table().markup
                == #"<details><summary>Data</summary><table class="data"><thead><tr><th scope="col"></th>"#
                + #"<th scope="col">A</th><th scope="col">B</th></tr></thead><tbody><tr><th scope="row">x</th>"#
                + #"<td>1</td><td></td></tr><tr><th scope="row">y</th><td>2</td><td>4</td></tr></tbody></table>"#
                + #"</details>"#)
    }

    @Test("no data: a scale of 1, one centred label, no points")
    func emptyChart() {
        let chart = SVGChart(id: "e", title: "E", kind: .line, labels: ["d"], series: [.init(name: "S", values: [nil])])
        #expect(chart.scaleMaximum == 1)
        #expect(chart.description == "S: no data.")
        #expect(chart.svg().markup.contains(#"<text class="axis" x="340" y="232" text-anchor="middle">d</text>"#))
        #expect(chart.svg().markup.contains(#"<polyline class="series-0" fill="none" points=""/>"#))
    }

    @Test("titles, labels and series names are escaped")
    func escaping() {
        let chart = SVGChart(
            id: "h", title: "<script>alert(1)</script>", kind: .line, labels: ["\"><img src=x>"],
            series: [.init(name: "a&b'", values: [1])])
        let markup = chart.render().markup
        #expect(!markup.contains("<script>"))
        #expect(!markup.contains("<img"))
        #expect(markup.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(markup.contains("&quot;&gt;&lt;img src=x&gt;"))
        #expect(markup.contains("■ a&amp;b&#39;"))
    }

    @Test("numbers: at most two decimals, no trailing zeros")
    func numbers() {
        #expect(SVGChart.number(12) == "12")
        #expect(SVGChart.number(12.5) == "12.5")
        #expect(SVGChart.number(1.0 / 3) == "0.33")
        #expect(SVGChart.number(29.200000000000003) == "29.2")
    }
}
