import Foundation

/// A small chart renderer: series over labelled points as an inline SVG line or bar chart,
/// with a data table beside it (screen readers and exact values). No script, no styles
/// inline: colours come from the stylesheet's `series-N` classes, so the page's content
/// security policy holds.
///
/// The output is a pure function of the input, so tests compare it byte for byte.
/// - Note: Immutable value; `Sendable`.
struct SVGChart: Sendable, Hashable {
    enum Kind: String, Sendable, Hashable {
        case line
        case bars
    }

    /// One named series; `values[i]` belongs to `labels[i]` (`nil`: no value there).
    struct Series: Sendable, Hashable {
        var name: String
        var values: [Double?]
    }

    /// Unique within the page: it names the title and description elements.
    var id: String
    var title: String
    var kind: Kind
    /// The x axis, one label per point (dates, cohorts…).
    var labels: [String]
    var series: [Series]

    static let width = 640
    static let height = 240
    static let left = 48
    static let right = 8
    static let top = 12
    static let bottom = 28

    /// The SVG and its data table.
    func render() -> HTML {
        """
        <figure class="chart" id="\(id)"><figcaption>\(title)</figcaption>\(svg())\(table())</figure>
        """
    }

    /// The largest value rounded up to 1, 2 or 5 times a power of ten (1 when there is none).
    var scaleMaximum: Double {
        let largest = series.flatMap { $0.values.compactMap { $0 } }.max() ?? 0
        guard largest > 0 else { return 1 }
        let magnitude = pow(10, floor(log10(largest)))
        for step in [1.0, 2, 5, 10] where step * magnitude >= largest { return step * magnitude }
        return 10 * magnitude
    }

    func svg() -> HTML {
        let plotWidth = Double(Self.width - Self.left - Self.right)
        let plotHeight = Double(Self.height - Self.top - Self.bottom)
        let maximum = scaleMaximum
        let count = labels.count
        func y(_ value: Double) -> Double { Double(Self.top) + plotHeight * (1 - value / maximum) }
        func x(_ index: Int) -> Double {
            count <= 1
                ? Double(Self.left) + plotWidth / 2
                : Double(Self.left) + plotWidth * Double(index) / Double(count - 1)
        }
        var parts: [HTML] = []
        // Grid: zero, half and the maximum, labelled on the left.
        for fraction in [0.0, 0.5, 1.0] {
            let value = maximum * fraction
            let lineY = Self.number(y(value))
            parts.append(
                """
                <line class="grid" x1="\(Self.left)" y1="\(lineY)" x2="\(Self.width - Self.right)" y2="\(lineY)"/>\
                <text class="axis" x="\(Self.left - 4)" y="\(lineY)" text-anchor="end" dominant-baseline="middle">\
                \(Self.number(value))</text>
                """)
        }
        // First and last labels under the axis (more would collide at 390 px).
        if let first = labels.first {
            parts.append(
                """
                <text class="axis" x="\(Self.number(x(0)))" y="\(Self.height - 8)" text-anchor="\
                \(count <= 1 ? "middle" : "start")">\(first)</text>
                """)
        }
        if count > 1, let last = labels.last {
            parts.append(
                """
                <text class="axis" x="\(Self.number(x(count - 1)))" y="\(Self.height - 8)" text-anchor="end">\(last)</text>
                """)
        }
        for (index, series) in series.enumerated() {
            switch kind {
            case .line:
                let points = series.values.enumerated().compactMap { position, value in
                    value.map { "\(Self.number(x(position))),\(Self.number(y($0)))" }
                }
                parts.append(
                    """
                    <polyline class="series-\(index % 6)" fill="none" points="\(points.joined(separator: " "))"/>
                    """)
            case .bars:
                let slot = plotWidth / Double(max(count, 1))
                let barWidth = slot * 0.8 / Double(max(self.series.count, 1))
                for (position, value) in series.values.enumerated() {
                    guard let value else { continue }
                    let barX = Double(Self.left) + slot * Double(position) + slot * 0.1 + barWidth * Double(index)
                    parts.append(
                        """
                        <rect class="series-\(index % 6)" x="\(Self.number(barX))" y="\(Self.number(y(value)))" \
                        width="\(Self.number(barWidth))" height="\(Self.number(y(0) - y(value)))"/>
                        """)
                }
            }
        }
        let legend = series.enumerated().map { index, series -> HTML in
            "<tspan class=\"legend-\(index % 6)\">■ \(series.name)</tspan> "
        }
        return """
            <svg viewBox="0 0 \(Self.width) \(Self.height)" role="img" aria-labelledby="\(id)-title \(id)-desc">\
            <title id="\(id)-title">\(title)</title><desc id="\(id)-desc">\(description)</desc>\
            \(parts)<text class="legend" x="\(Self.left)" y="\(Self.top - 2)">\(legend)</text></svg>
            """
    }

    /// One sentence per series for the SVG's `desc`: its name, first and last value and where.
    var description: String {
        series.map { series in
            let points = series.values.enumerated().compactMap { index, value in
                value.map { (index < labels.count ? labels[index] : String(index), $0) }
            }
            guard let first = points.first, let last = points.last else { return "\(series.name): no data." }
            return "\(series.name): \(Self.number(first.1)) at \(first.0) to \(Self.number(last.1)) at \(last.0)."
        }.joined(separator: " ")
    }

    func table() -> HTML {
        let head = series.map { series -> HTML in "<th scope=\"col\">\(series.name)</th>" }
        let rows = labels.enumerated().map { position, label -> HTML in
            let cells = series.map { series -> HTML in
                let value = position < series.values.count ? series.values[position] : nil
                return "<td>\(value.map(Self.number) ?? "")</td>"
            }
            return "<tr><th scope=\"row\">\(label)</th>\(cells)</tr>"
        }
        return """
            <details><summary>Data</summary><table class="data"><thead><tr><th scope="col">\
            </th>\(head)</tr></thead><tbody>\(rows)</tbody></table></details>
            """
    }

    /// At most two decimals, without trailing zeros: `12`, `12.5`, `0.33`.
    static func number(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        if rounded == rounded.rounded() { return String(Int64(rounded)) }
        var text = String(format: "%.2f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
