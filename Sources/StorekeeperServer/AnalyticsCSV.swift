import AppStoreModels
import Foundation
import HTTPServer

/// The CSV form of an analytics series (`format=csv`): a header row, then one row per bucket,
/// or per bucket and currency for money metrics (the reporting total as `reporting:<code>`).
/// Nested counts become dotted columns (`byReason.developerIssue`); money is in decimal units
/// with three decimals. Fields are quoted when they contain a comma, quote or line break.
enum AnalyticsCSV {
    static func response(metric: AnalyticsMetric, points: [JSONValue]) -> HTTPResponse {
        var header: [String] = []
        var rows: [[String: String]] = []
        func column(_ name: String) { if !header.contains(name) { header.append(name) } }
        for case .object(let point) in points {
            var scalars: [String: String] = [:]
            var moneyRows: [[String: String]] = []
            for key in point.keys.sorted() {
                switch point[key]! {
                case .integer(let value): scalars[key] = String(value)
                case .number(let value): scalars[key] = String(value)
                case .string(let value): scalars[key] = value
                case .null: scalars[key] = ""
                case .object(let nested) where key == "reporting":
                    moneyRows.append(money(nested, currency: "reporting:" + (text(nested["currency"]) ?? "")))
                case .object(let nested):
                    for (name, value) in nested { scalars["\(key).\(name)"] = text(value) ?? "" }
                case .array(let entries) where key == "byCurrency":
                    for case .object(let entry) in entries {
                        moneyRows.append(money(entry, currency: text(entry["currency"]) ?? ""))
                    }
                case .array, .bool: continue
                }
            }
            for name in ["period", "periodEnd"] + scalars.keys.sorted() { column(name) }
            if moneyRows.isEmpty {
                rows.append(scalars)
            } else {
                for moneyRow in moneyRows {
                    column("currency")
                    for name in moneyRow.keys.sorted() where name != "currency" { column(name) }
                    rows.append(scalars.merging(moneyRow) { $1 })
                }
            }
        }
        var output = header.map(quote).joined(separator: ",") + "\r\n"
        for row in rows { output += header.map { quote(row[$0] ?? "") }.joined(separator: ",") + "\r\n" }
        var response = HTTPResponse(status: .ok, body: Data(output.utf8))
        response.headers["Content-Type"] = "text/csv; charset=utf-8"
        response.headers["Content-Disposition"] = "attachment; filename=\"\(metric.rawValue).csv\""
        return response
    }

    private static func money(_ entry: [String: JSONValue], currency: String) -> [String: String] {
        var row = ["currency": currency]
        for (name, value) in entry where name != "currency" {
            switch value {
            case .integer(let milliunits) where name != "transactions": row[name] = decimal(milliunits)
            case .array(let list): row[name] = list.compactMap(text).joined(separator: " ")
            default: row[name] = text(value) ?? ""
            }
        }
        return row
    }

    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: return text
        case .integer(let number)?: return String(number)
        case .number(let number)?: return String(number)
        case .bool(let flag)?: return String(flag)
        default: return nil
        }
    }

    /// Milliunits as units with three decimals (`9990` → `9.990`).
    static func decimal(_ milliunits: Int64) -> String {
        let magnitude = milliunits.magnitude
        let fraction = String(magnitude % 1000)
        return (milliunits < 0 ? "-" : "") + "\(magnitude / 1000)." + String(repeating: "0", count: 3 - fraction.count)
            + fraction
    }

    private static func quote(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
