import AppStoreModels
import AppStoreTrust
import Foundation

/// Who may call the Server API, and how often.
extension AppStoreSimulator {
    /// Checks the bearer token like Apple: ES256 by a key registered for the app named in
    /// `bid`, issuer matching the key, audience `appstoreconnect-v1`, not expired, at most an
    /// hour long; `iat` optional. Then applies the app's rate limits: the test window
    /// (`RateLimit`) and the per-endpoint limits of `route` (`ServerAPIRateLimits`, Apple's by
    /// default). Returns the bundle id. During an outage nothing is checked: every call is a 503.
    func authenticate(authorization: String?, route: String = "") throws(SimulatorError) -> String {
        if outage {
            throw SimulatorError(
                .outage, "An unknown error occurred. Please try again.",
                apiErrorCode: APIError.generalInternalRetryable.rawValue)
        }
        guard let authorization, authorization.hasPrefix("Bearer ") else {
            throw SimulatorError(.unauthenticated, "missing bearer token")
        }
        let token = String(authorization.dropFirst("Bearer ".count)).trimmingCharacters(in: .whitespaces)
        let verified: (keyId: String, claims: AppStoreConnectClaims)
        do {
            verified = try tokenVerifier.verify(token, now: tokenClock.now)
        } catch {
            throw SimulatorError(.unauthenticated, "token refused: \(error.rule.rawValue)")
        }
        guard let key = keyOwners[verified.keyId], key.issuerId == verified.claims.iss,
            let app = state.apps[verified.claims.bid], app.apiKeys.contains(where: { $0.keyId == verified.keyId })
        else { throw SimulatorError(.unauthenticated, "token is not for a known app and issuer") }
        try checkRateLimit(bundleId: app.bundleId)
        try checkServerAPIRate(bundleId: app.bundleId, route: route)
        return app.bundleId
    }

    /// The endpoint's limit for the app, on the token clock (real time).
    private func checkServerAPIRate(bundleId: String, route: String) throws(SimulatorError) {
        guard let rate = serverAPIRateLimits.rate(route: route, environment: environment) else { return }
        if let wait = serverAPIRateState.admit(
            key: bundleId + " " + route, now: Double(tokenClock.now.millisecondsSince1970), rate: rate,
            burstSeconds: serverAPIRateLimits.burstSeconds)
        {
            throw SimulatorError(
                .rateLimited, "Rate limit exceeded.", apiErrorCode: APIError.rateLimitExceeded.rawValue,
                retryAfterSeconds: wait)
        }
    }

    /// Sliding window on the simulator's clock; the error carries the seconds until a slot frees.
    private func checkRateLimit(bundleId: String) throws(SimulatorError) {
        guard let rateLimit else { return }
        let now = clock.now
        let window = Int64(rateLimit.seconds * 1000)
        var recent = (recentRequests[bundleId] ?? []).filter { $0 > now.adding(milliseconds: -window) }
        guard recent.count < rateLimit.requests else {
            recentRequests[bundleId] = recent
            let wait = recent[0].millisecondsSince1970 + window - now.millisecondsSince1970
            throw SimulatorError(
                .rateLimited, "Rate limit exceeded.", apiErrorCode: APIError.rateLimitExceeded.rawValue,
                retryAfterSeconds: max(1, (wait + 999) / 1000))
        }
        recent.append(now)
        recentRequests[bundleId] = recent
    }
}
