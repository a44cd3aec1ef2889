/// Apple's numeric storefront identifiers for the storefronts a scenario is likely to use;
/// an unlisted country gets a stable made-up identifier.
enum Storefronts {
    static let identifiers: [String: String] = [
        "USA": "143441", "GBR": "143444", "FRA": "143442", "DEU": "143443", "JPN": "143462", "CAN": "143455",
        "AUS": "143460", "ITA": "143450", "ESP": "143454", "NLD": "143452", "BRA": "143503", "IND": "143467",
        "CHN": "143465", "KOR": "143466", "MEX": "143468", "CHE": "143459", "SWE": "143456",
    ]

    static func identifier(for country: String) -> String {
        if let known = identifiers[country] { return known }
        // Deterministic across runs (Swift's hashValue is seeded per process).
        let sum = country.unicodeScalars.reduce(0) { $0 &* 31 &+ Int($1.value) }
        return String(149_000 + abs(sum) % 1000)
    }
}
