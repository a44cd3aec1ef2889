import AppStoreModels
import Entitlements
import Foundation

/// The OpenAPI 3.1 document served at `/openapi.json`: paths and operations from the route
/// list that also builds the router, component schemas written out below.
/// - Note: Stateless; thread-safe.
public enum OpenAPIDocument {
    /// The document for `routes`.
    public static func build(routes: [APIRoute]) -> JSONValue {
        var paths: [String: [String: JSONValue]] = [:]
        for route in routes {
            var operation: [String: JSONValue] = [
                "operationId": .string(route.operationId), "summary": .string(route.summary),
                "tags": .array([.string(route.tag)]),
                "security": route.access == .open || route.access == .appStore || route.access == .googlePlayPush
                    ? .array([]) : .array([.object(["bearerAuth": .array([])])]),
            ]
            var parameters: [JSONValue] = []
            for segment in route.path.split(separator: "/") where segment.hasPrefix("{") {
                let name = String(segment.dropFirst().dropLast())
                var schema: [String: JSONValue] = [
                    "type": .string("string"), "minLength": .integer(1), "maxLength": .integer(256),
                ]
                // The analytics metrics served (docs/analytics.md); another name is a 400.
                if name == "metric" {
                    schema["enum"] = .array(
                        (AnalyticsMetric.allCases.map(\.rawValue) + AnalyticsCohortMetric.allCases.map(\.rawValue)).map
                        {
                            .string($0)
                        })
                }
                parameters.append(
                    .object([
                        "name": .string(name), "in": .string("path"), "required": .bool(true),
                        "schema": .object(schema),
                    ]))
            }
            for name in route.query {
                var schema: [String: JSONValue] = ["type": .string("string")]
                if name == "cursor" { schema["pattern"] = .string("^[0-9]{1,18}$") }
                if name == "limit" { schema["pattern"] = .string("^[1-9][0-9]{0,17}$") }
                if name == "kind" {
                    schema["enum"] = .array(["transaction", "renewalInfo", "notification"].map(JSONValue.string))
                }
                if name == "outcome" {
                    schema["enum"] = .array(RecentNotificationsController.outcomes.map(JSONValue.string))
                }
                if name == "type" { schema["pattern"] = .string("^[A-Z0-9_]{1,64}$") }
                // Analytics (docs/analytics.md): days, buckets and the answer's format.
                if name == "from" || name == "to" { schema["format"] = .string("date") }
                if name == "resolution" {
                    schema["enum"] = .array(["day", "week", "month", "quarter", "year"].map(JSONValue.string))
                }
                if name == "format" { schema["enum"] = .array(["json", "csv"].map(JSONValue.string)) }
                if name == "store" { schema["enum"] = .array(AnalyticsStore.allCases.map { .string($0.rawValue) }) }
                if name == "environment" {
                    schema["enum"] = .array(["Production", "Sandbox", "Xcode", "LocalTesting"].map(JSONValue.string))
                }
                parameters.append(
                    .object([
                        "name": .string(name), "in": .string("query"), "required": .bool(false),
                        "schema": .object(schema),
                    ]))
            }
            for name in route.requestHeaders {
                parameters.append(
                    .object([
                        "name": .string(name), "in": .string("header"), "required": .bool(false),
                        "description": .string(headerDescription(name)),
                        "schema": .object(["type": .string("string"), "maxLength": .integer(1024)]),
                    ]))
            }
            if !parameters.isEmpty { operation["parameters"] = .array(parameters) }
            if let request = route.requestSchema {
                operation["requestBody"] = .object([
                    "required": .bool(route.path.hasSuffix("/restore") || route.path.hasSuffix("/sync") ? false : true),
                    "content": .object(["application/json": .object(["schema": reference(request)])]),
                ])
            }
            var responses: [String: JSONValue] = [:]
            // Every body is held to `maxBodySize` by the HTTP core before any route sees it, so
            // every operation that takes one can answer 413 (schemathesis sent 2.9 MB of analytics
            // settings and found it undocumented).
            var declared = route.responses
            if route.requestSchema != nil, declared[413] == nil { declared[413] = "Error" }
            for (status, schema) in declared {
                var response: [String: JSONValue] = ["description": .string(description(status))]
                if let schema {
                    if schema == "PrometheusText" {
                        response["content"] = .object([
                            "text/plain": .object(["schema": .object(["type": .string("string")])])
                        ])
                    } else if schema == "AnalyticsSeries" {
                        // `format=csv` answers the same series as CSV.
                        response["content"] = .object([
                            "application/json": .object(["schema": reference(schema)]),
                            "text/csv": .object(["schema": .object(["type": .string("string")])]),
                        ])
                    } else {
                        response["content"] = .object(["application/json": .object(["schema": reference(schema)])])
                    }
                }
                if let headers = route.responseHeaders[status] {
                    response["headers"] = .object(
                        Dictionary(
                            uniqueKeysWithValues: headers.map { name in
                                (
                                    name,
                                    JSONValue.object([
                                        "required": .bool(true), "description": .string(headerDescription(name)),
                                        "schema": .object(
                                            name == "ETag"
                                                ? ["type": .string("string"), "pattern": .string(#"^"[0-9]+"$"#)]
                                                : ["type": .string("string")]),
                                    ])
                                )
                            }))
                } else if status == 429 {
                    response["headers"] = .object([
                        "Retry-After": .object([
                            "description": .string("Seconds to wait before asking again."),
                            "schema": .object(["type": .string("integer")]),
                        ])
                    ])
                }
                responses[String(status)] = .object(response)
            }
            operation["responses"] = .object(responses)
            paths[route.path, default: [:]][route.method.rawValue.lowercased()] = .object(operation)
        }
        return .object([
            "openapi": .string("3.1.0"),
            "info": .object([
                "title": .string("Storekeeper"), "version": .string("1"),
                "description": .string(
                    "Self-hosted App Store purchase validation and entitlements. Errors are always {\"error\": {\"code\", \"message\"}}."
                ),
            ]),
            "paths": .object(paths.mapValues { .object($0) }),
            "components": .object([
                "securitySchemes": .object([
                    "bearerAuth": .object([
                        "type": .string("http"), "scheme": .string("bearer"),
                        "description": .string("An app's public or secret key, or an admin key."),
                    ])
                ]),
                "schemas": schemas,
            ]),
        ])
    }

    private static func reference(_ name: String) -> JSONValue {
        .object(["$ref": .string("#/components/schemas/\(name)")])
    }

    private static func headerDescription(_ name: String) -> String {
        switch name {
        case "If-Match":
            return "Apply the write only if the resource's version is still the one this ETag names "
                + "(* for any); otherwise 412 version_mismatch. Without it, the write applies to the current version."
        case "ETag": return "The resource's version as a strong entity tag, e.g. \"3\"; send it back as If-Match."
        case "Location": return "Where to watch what the request started (an analytics rebuild's status)."
        default: return name
        }
    }

    private static func description(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No content"
        case 304: return "Not modified (If-None-Match matched the ETag)"
        case 400: return "Malformed request or a payload that failed verification"
        case 401: return "Missing or invalid API key (or V1 shared secret)"
        case 403: return "The key may not use this route or app"
        case 404: return "Not found"
        case 409: return "Conflict (e.g. app_exists: the id is taken) or the app is not configured for this"
        case 412: return "If-Match names a version that is no longer current (version_mismatch; ETag: the current one)"
        case 413: return "Body too large"
        case 415: return "Body must be application/json"
        case 422: return "Unsupported value"
        case 429: return "Too many requests for this customer; wait Retry-After seconds"
        case 501: return "Not implemented yet"
        case 502: return "The App Store answered with something unusable"
        case 503: return "Unavailable now (database, App Store or OCSP); retry"
        default: return "Response"
        }
    }

    /// Component schemas (JSON Schema 2020-12, as OpenAPI 3.1 uses).
    static let schemas: JSONValue = {
        let text = #"""
            {
              "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object",
                "required": ["code", "message"], "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}},
              "Health": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}},
              "Readiness": {"type": "object", "required": ["status", "database", "migrations", "missingMigrations"],
                "properties": {"status": {"type": "string", "enum": ["ready", "not_ready"]}, "database": {"type": "string"},
                  "migrations": {"type": "string"}, "missingMigrations": {"type": "array", "items": {"type": "string"}}}},
              "OpenAPIDocument": {"type": "object", "required": ["openapi", "paths"]},
              "AppStoreNotification": {"type": "object", "description": "V2: {\"signedPayload\": JWS}. V1: Apple's StatusUpdateNotification body (recognised by notification_type).",
                "properties": {"signedPayload": {"type": "string"}, "notification_type": {"type": "string"}, "password": {"type": "string"}}},
              "NotificationAccepted": {"type": "object", "required": ["outcome", "notificationType", "notificationId"],
                "properties": {"outcome": {"type": "string", "enum": ["applied", "unclaimed", "recorded", "duplicate"]},
                  "notificationType": {"type": "string"}, "notificationId": {"type": "string"}}},
              "PubSubPush": {"type": "object", "required": ["message"], "description": "Cloud Pub/Sub push: message.data is a base64 DeveloperNotification.",
                "properties": {"message": {"type": "object", "required": ["messageId"], "properties": {"data": {"type": "string"},
                  "messageId": {"type": "string", "minLength": 1, "maxLength": 512}, "publishTime": {"type": "string"},
                  "attributes": {"type": "object", "additionalProperties": {"type": "string"}}}}, "subscription": {"type": "string"}}},
              "GooglePlayNotificationAccepted": {"type": "object", "required": ["outcome", "kind"],
                "properties": {"outcome": {"type": "string", "enum": ["applied", "unclaimed", "recorded", "duplicate"]},
                  "kind": {"type": "string", "enum": ["subscription", "oneTimeProduct", "voidedPurchase", "test"]}}},
              "PostGooglePlayPurchase": {"type": "object", "required": ["packageName", "productId", "purchaseToken", "type"],
                "properties": {"packageName": {"type": "string", "minLength": 1, "maxLength": 512},
                  "productId": {"type": "string", "minLength": 1, "maxLength": 512},
                  "purchaseToken": {"type": "string", "minLength": 1, "maxLength": 4096},
                  "type": {"type": "string", "enum": ["subscription", "product"]}}},
              "PostTransaction": {"type": "object", "properties": {"signedTransaction": {"type": "string"},
                "transactionId": {"type": "string", "pattern": "^[0-9]{1,64}$"},
                "environment": {"type": "string", "enum": ["Production", "Sandbox", "Xcode", "LocalTesting"]}}},
              "PostReceipt": {"type": "object", "required": ["receipt"], "properties": {"receipt": {"type": "string", "minLength": 1},
                "environment": {"type": "string", "enum": ["Production", "Sandbox", "Xcode", "LocalTesting"]}}},
              "Restore": {"type": "object", "properties": {"environment": {"type": "string", "enum": ["Production", "Sandbox", "Xcode", "LocalTesting"]}}},
              "AddAlias": {"type": "object", "required": ["alias"], "properties": {"alias": {"type": "string", "minLength": 1, "maxLength": 256}}},
              "CustomerInfo": {"type": "object", "required": ["customerId", "environment", "evaluatedAt", "entitlements",
                  "subscriptions", "nonSubscriptionPurchases", "introOfferEligibility", "revenue", "eventIds", "notes"],
                "properties": {"customerId": {"type": "string"}, "environment": {"type": "string"},
                  "evaluatedAt": {"type": "integer", "description": "Milliseconds since 1970."},
                  "entitlements": {"type": "object", "additionalProperties": {"type": "object"}},
                  "subscriptions": {"type": "object", "additionalProperties": {"type": "object"}},
                  "nonSubscriptionPurchases": {"type": "array", "items": {"type": "object"}},
                  "introOfferEligibility": {"type": "object"}, "revenue": {"type": "array", "items": {"type": "object"}},
                  "eventIds": {"type": "array", "items": {"type": "string"}}, "notes": {"type": "array", "items": {"type": "string"}}}},
              "PostedTransaction": {"description": "CustomerInfo after the post, plus whether the App Store Server API completed it: complete (its statuses and history are applied), pending (Apple did not answer within purchaseCompletionWaitMilliseconds: the verified signed transaction grants now and a purchase_completion job applies Apple's data later), skipped (the app has no App Store Connect key). The ETag is the CustomerInfo's, as GET answers it.",
                "allOf": [{"$ref": "#/components/schemas/CustomerInfo"}, {"type": "object", "required": ["completion"],
                  "properties": {"completion": {"type": "string", "enum": ["complete", "pending", "skipped"]}}}]},
              "EventPage": {"type": "object", "required": ["events"], "properties": {"events": {"type": "array", "items": {"type": "object",
                  "required": ["sequence", "createdAt", "event"], "properties": {"sequence": {"type": "integer"},
                  "createdAt": {"type": "integer"}, "event": {"type": "object"}}}},
                "nextCursor": {"type": ["string", "null"]}}},
              "FactPage": {"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {"type": "object",
                  "required": ["sequence", "kind", "signedDate", "receivedAt"], "properties": {"sequence": {"type": "integer"},
                  "kind": {"type": "string"}, "environment": {"type": "string"}, "originalTransactionId": {"type": "string"},
                  "signedDate": {"type": "integer"}, "raw": {"type": "string"}, "fact": {"type": "object"}, "receivedAt": {"type": "integer"}}}},
                "nextCursor": {"type": ["string", "null"]}}},
              "AppInput": {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"},
                "bundleId": {"type": "string"}, "appAppleId": {"type": "integer"},
                "environments": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["Production", "Sandbox", "Xcode", "LocalTesting"]}},
                "sharedSecret": {"type": "string"}, "rootCertificatesPEM": {"type": "array", "items": {"type": "string"}},
                "appStoreConnect": {"type": "object", "required": ["keyId", "issuerId", "privateKeyPEM"], "properties": {
                  "keyId": {"type": "string"}, "issuerId": {"type": "string"}, "privateKeyPEM": {"type": "string"}, "baseURL": {"type": "string"}}},
                "transferPolicy": {"type": "string", "enum": ["transfer_to_newest", "keep_with_first", "share"]},
                "legacyReceiptFlow": {"type": "boolean"}, "answerConsumptionRequests": {"type": "boolean"},
                "onlineVerification": {"type": "boolean"}, "verifyReceiptProductionURL": {"type": "string"},
                "verifyReceiptSandboxURL": {"type": "string"},
                "recovery": {"type": "object", "properties": {"historyReplay": {"type": "boolean"},
                  "statusPolling": {"type": "boolean"}, "onDemandSync": {"type": "boolean"},
                  "playVoidedPolling": {"type": "boolean"}, "playReread": {"type": "boolean"}}},
                "consumption": {"$ref": "#/components/schemas/ConsumptionPolicy"}}},
              "ConsumptionPolicy": {"type": "object", "properties": {
                "refundPreference": {"type": "string", "enum": ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]},
                "sampleContentProvided": {"type": "boolean"},
                "defaultDeliveryStatus": {"type": "string", "enum": ["DELIVERED", "UNDELIVERED_QUALITY_ISSUE",
                  "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"]},
                "estimateSubscriptionUsage": {"type": "boolean"}}},
              "ConsumptionConsent": {"type": "object", "required": ["consented"], "properties": {"consented": {"type": "boolean"}}},
              "ConsumptionConsentView": {"type": "object", "required": ["appUserId", "consented"],
                "properties": {"appUserId": {"type": "string"}, "consented": {"type": "boolean"}}},
              "ConsumptionReport": {"type": "object", "required": ["deliveryStatus"], "properties": {
                "deliveryStatus": {"type": "string", "enum": ["DELIVERED", "UNDELIVERED_QUALITY_ISSUE",
                  "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"]},
                "consumptionPercentage": {"type": "integer", "minimum": 0, "maximum": 100000,
                  "description": "Thousandths of a percent; must be 0 when deliveryStatus is not DELIVERED."}},
                "if": {"required": ["deliveryStatus"], "properties": {"deliveryStatus": {"not": {"const": "DELIVERED"}}}},
                "then": {"properties": {"consumptionPercentage": {"const": 0}}}},
              "ConsumptionReportView": {"type": "object", "required": ["transactionId", "deliveryStatus"], "properties": {
                "transactionId": {"type": "string"}, "deliveryStatus": {"type": "string"},
                "consumptionPercentage": {"type": "integer"}}},
              "App": {"type": "object", "required": ["id", "bundleId", "environments", "hasSharedSecret", "rootCertificates",
                  "transferPolicy", "legacyReceiptFlow", "answerConsumptionRequests", "onlineVerification", "version"],
                "properties": {"id": {"type": "string"}, "bundleId": {"type": "string"}, "appAppleId": {"type": "integer"},
                  "environments": {"type": "array", "items": {"type": "string"}}, "hasSharedSecret": {"type": "boolean"},
                  "rootCertificates": {"type": "array", "items": {"type": "string"}}, "appStoreConnect": {"type": "object"},
                  "transferPolicy": {"type": "string"}, "legacyReceiptFlow": {"type": "boolean"},
                  "answerConsumptionRequests": {"type": "boolean"}, "onlineVerification": {"type": "boolean"},
                  "version": {"type": "integer", "minimum": 1, "description": "1 when created, one more on every change; the ETag is this number in quotes."},
                  "recovery": {"type": "object", "required": ["historyReplay", "statusPolling", "onDemandSync",
                      "playVoidedPolling", "playReread"],
                    "properties": {"historyReplay": {"type": "boolean"}, "statusPolling": {"type": "boolean"},
                      "onDemandSync": {"type": "boolean"}, "playVoidedPolling": {"type": "boolean"},
                      "playReread": {"type": "boolean"}}},
                  "consumption": {"$ref": "#/components/schemas/ConsumptionPolicy"}}},
              "GooglePlaySettingsInput": {"type": "object", "properties": {
                "packageName": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z][A-Za-z0-9_]*)+$", "maxLength": 255},
                "serviceAccountKey": {"type": "string", "maxLength": 16384, "description": "The service account's JSON key file; never returned."},
                "rtdnAudience": {"type": "string", "minLength": 1, "maxLength": 2048},
                "pushServiceAccountEmail": {"type": "string", "minLength": 1, "maxLength": 2048},
                "acknowledgePurchases": {"type": "boolean"}, "readOrderRevenue": {"type": "boolean"}}},
              "GooglePlaySettings": {"type": "object", "required": ["appId", "packageName", "hasServiceAccountKey", "acknowledgePurchases", "readOrderRevenue", "version"],
                "properties": {"appId": {"type": "string"}, "packageName": {"type": "string"}, "hasServiceAccountKey": {"type": "boolean"},
                  "rtdnAudience": {"type": "string"}, "pushServiceAccountEmail": {"type": "string"},
                  "acknowledgePurchases": {"type": "boolean"}, "readOrderRevenue": {"type": "boolean"},
                  "version": {"type": "integer", "minimum": 1}}},
              "PlayUnmatchedVoided": {"type": "object", "required": ["count", "voided"], "properties": {
                "count": {"type": "integer", "minimum": 0}, "voided": {"type": "array", "items": {"type": "object",
                  "required": ["purchaseToken", "voidedAt", "refundType", "source", "receivedAt"], "properties": {
                    "purchaseToken": {"type": "string"}, "orderId": {"type": "string"},
                    "productType": {"type": "string", "enum": ["subscription", "oneTime"]}, "voidedAt": {"type": "integer"},
                    "refundType": {"type": "string", "enum": ["full", "quantityBasedPartial"]},
                    "voidedQuantity": {"type": "integer"}, "voidedReason": {"type": "integer"}, "source": {"type": "string"},
                    "receivedAt": {"type": "integer"}}}}}},
              "AppList": {"type": "object", "required": ["apps"], "properties": {"apps": {"type": "array", "items": {"$ref": "#/components/schemas/App"}}}},
              "AppKeyInput": {"type": "object", "required": ["kind"], "properties": {"kind": {"type": "string", "enum": ["public", "secret"]},
                "label": {"type": "string", "maxLength": 200}}},
              "AdminKeyInput": {"type": "object", "required": ["kind"], "properties": {"kind": {"type": "string", "enum": ["admin"]},
                "label": {"type": "string", "maxLength": 200}}},
              "KeyCreated": {"type": "object", "required": ["id", "kind", "label", "key"], "properties": {"id": {"type": "string"},
                "appId": {"type": "string"}, "kind": {"type": "string"}, "label": {"type": "string"}, "key": {"type": "string"}}},
              "Catalog": {"type": "object", "required": ["products"], "properties": {"products": {"type": "array", "items": {"type": "object",
                  "required": ["productId", "kind", "entitlementIds"], "properties": {"productId": {"type": "string", "minLength": 1, "maxLength": 255},
                  "kind": {"type": "string", "enum": ["AUTO_RENEWABLE", "NON_RENEWING", "NON_CONSUMABLE", "CONSUMABLE"]},
                  "subscriptionGroup": {"type": "string"}, "groupLevel": {"type": "integer"},
                  "duration": {"type": "string", "pattern": "^P[1-9][0-9]*[DWMY]$", "description": "ISO 8601 period, e.g. P1M."},
                  "entitlementIds": {"type": "array", "items": {"type": "string"}},
                  "referencePrice": {"type": "object", "required": ["milliunits", "currency"], "properties": {"milliunits": {"type": "integer"}, "currency": {"type": "string"}}}}}},
                "isSmallBusinessProgram": {"type": "boolean"},
                "version": {"type": "integer", "minimum": 0, "description": "In answers: 0 while none is stored, then one more on every PUT (the ETag). Ignored in a PUT: send If-Match."}}},
              "AnalyticsSeries": {"type": "object", "required": ["appId", "metric", "environment", "from", "to", "resolution", "filters"],
                "description": "A time series (points) for every metric but retention and ltv, which answer cohorts instead.",
                "properties": {"appId": {"type": "string"}, "metric": {"type": "string"}, "environment": {"type": "string", "enum": ["Production", "Sandbox"]},
                  "from": {"type": "string", "format": "date"}, "to": {"type": "string", "format": "date"},
                  "resolution": {"type": "string", "enum": ["day", "week", "month", "quarter", "year"]},
                  "filters": {"type": "object", "properties": {"productId": {"type": ["string", "null"]}, "storefront": {"type": ["string", "null"]},
                    "subscriptionGroup": {"type": ["string", "null"]}, "store": {"type": ["string", "null"], "enum": ["appStore", "googlePlay", null]}}},
                  "reportingCurrency": {"type": ["string", "null"]},
                  "points": {"type": "array", "items": {"type": "object", "required": ["period", "periodEnd"],
                    "properties": {"period": {"type": "string", "format": "date"}, "periodEnd": {"type": "string", "format": "date"},
                      "count": {"type": "integer"}, "familyShared": {"type": "integer"},
                      "byCurrency": {"type": "array", "items": {"type": "object", "required": ["currency"], "properties": {"currency": {"type": "string"}}}},
                      "reporting": {"type": ["object", "null"], "properties": {"currency": {"type": "string"}, "unconverted": {"type": "array", "items": {"type": "string"}}}},
                      "activeAtStart": {"type": "integer", "minimum": 0}, "expired": {"type": "integer", "minimum": 0},
                      "resubscribed": {"type": "integer", "minimum": 0}, "churned": {"type": "integer"},
                      "churnRate": {"type": ["number", "null"]}, "refundRate": {"type": ["number", "null"]}, "conversionRate": {"type": ["number", "null"]},
                      "byReason": {"type": "object", "additionalProperties": {"type": "integer"}},
                      "movementFrom": {"type": "string", "format": "date"}, "movementTo": {"type": "string", "format": "date"},
                      "reversals": {"type": "integer", "minimum": 0}, "familyRevocations": {"type": "integer", "minimum": 0},
                      "partial": {"type": "integer", "minimum": 0},
                      "consumptionRequests": {"type": "object", "required": ["count", "granted", "declined", "noOutcome"], "properties": {
                        "count": {"type": "integer"}, "granted": {"type": "integer"}, "declined": {"type": "integer"}, "noOutcome": {"type": "integer"}}}},
                    "description": "Fields by metric: docs/analytics.md. Money in milliunits."}},
                  "cohorts": {"type": "array", "description": "retention and ltv only: one entry per cohort month (and product, for retention).",
                    "items": {"type": "object", "required": ["cohort"], "properties": {
                      "cohort": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$"}, "productId": {"type": "string"},
                      "size": {"type": "integer", "minimum": 0}, "stillPaying": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                      "customers": {"type": "integer", "minimum": 0},
                      "byCurrency": {"type": "array", "items": {"type": "object", "required": ["currency", "d7", "d30", "d90", "d365"], "properties": {
                        "currency": {"type": "string"}, "d7": {"type": ["integer", "null"]}, "d30": {"type": ["integer", "null"]},
                        "d90": {"type": ["integer", "null"]}, "d365": {"type": ["integer", "null"]}}}},
                      "reporting": {"type": ["object", "null"], "properties": {"currency": {"type": "string"},
                        "d7": {"type": ["integer", "null"]}, "d30": {"type": ["integer", "null"]}, "d90": {"type": ["integer", "null"]},
                        "d365": {"type": ["integer", "null"]}, "unconverted": {"type": "array", "items": {"type": "string"}}}}}}}}},
              "AnalyticsOverview": {"type": "object", "required": ["appId", "environment", "from", "to", "previousFrom", "previousTo", "cards"],
                "properties": {"appId": {"type": "string"}, "environment": {"type": "string"},
                  "from": {"type": "string", "format": "date"}, "to": {"type": "string", "format": "date"},
                  "previousFrom": {"type": "string", "format": "date"}, "previousTo": {"type": "string", "format": "date"},
                  "reportingCurrency": {"type": ["string", "null"]},
                  "cards": {"type": "array", "items": {"type": "object", "required": ["metric", "value", "previous", "change"], "properties": {
                    "metric": {"type": "string"}, "value": {"type": ["integer", "null"]}, "previous": {"type": ["integer", "null"]},
                    "change": {"type": ["number", "null"]}, "currency": {"type": ["string", "null"]}, "byCurrency": {"type": "array"}}}}}},
              "AnalyticsSettings": {"type": "object", "properties": {
                "reportingCurrency": {"type": ["string", "null"], "pattern": "^[A-Z]{3}$"},
                "smallBusinessProgram": {"type": "array", "maxItems": 100, "items": {"type": "object", "required": ["from"], "properties": {
                  "from": {"type": "string", "format": "date"}, "to": {"type": ["string", "null"], "format": "date"}}}},
                "commissionRates": {"type": "object", "properties": {
                  "default": {"$ref": "#/components/schemas/CommissionRates"},
                  "byStorefront": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/CommissionRates"}}}},
                "exchangeRates": {"type": "array", "maxItems": 10000, "items": {"type": "object", "required": ["currency", "from", "rate"], "properties": {
                  "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}, "from": {"type": "string", "format": "date"},
                  "rate": {"type": "string", "pattern": "^[0-9]{1,9}(\\.[0-9]{1,6})?$", "description": "One unit of currency in the reporting currency."}}}},
                "googlePlay": {"type": "object", "description": "Google Play's service fee: 15 % on auto-renewing subscriptions; on other products 15 % up to the day each year's earnings passed 1M USD (thresholdCrossings) for an enrolled developer, 30 % from it, 30 % throughout when not enrolled.",
                  "properties": {"isEnrolled": {"type": "boolean"},
                    "thresholdCrossings": {"type": "array", "maxItems": 100, "items": {"type": "string", "format": "date"}}}},
                "version": {"type": "integer", "minimum": 0, "description": "In answers: 0 while none is stored (the ETag). Ignored in a PUT."},
                "rebuild": {"oneOf": [{"$ref": "#/components/schemas/AnalyticsRebuild"}, {"type": "null"}],
                  "description": "In answers to a PUT: the rebuild of the aggregates it queued (202), null when the commission terms did not change (200). Ignored in a PUT."}}},
              "AnalyticsRebuild": {"type": "object", "required": ["id", "appId", "settingsVersion", "status", "customersDone", "customersTotal", "requestedAt", "href"],
                "properties": {"id": {"type": "integer"}, "appId": {"type": "string"},
                  "settingsVersion": {"type": "integer", "description": "The analytics settings version whose commission terms asked for it."},
                  "status": {"type": "string", "enum": ["queued", "running", "completed", "superseded", "failed"]},
                  "customersDone": {"type": "integer", "minimum": 0}, "customersTotal": {"type": "integer", "minimum": 0},
                  "contributionsChanged": {"type": "integer", "minimum": 0},
                  "rowsRepaired": {"type": ["integer", "null"], "description": "Once completed: aggregate rows set back to the sum of the customers' contributions."},
                  "changed": {"type": ["boolean", "null"], "description": "Once completed: whether anything stored differed from what the facts give."},
                  "supersededBy": {"type": ["integer", "null"], "description": "The rebuild a later change of the commission terms queued instead."},
                  "requestedAt": {"type": "integer", "description": "Milliseconds since 1970."},
                  "startedAt": {"type": ["integer", "null"]}, "finishedAt": {"type": ["integer", "null"]},
                  "attempts": {"type": "integer", "minimum": 0, "description": "Runs of its job (one more when another instance took over after a lease ran out)."},
                  "error": {"type": ["string", "null"], "description": "The last run's error, if any."},
                  "href": {"type": "string", "description": "This status's path."}}},
              "CommissionRates": {"type": "object", "required": ["standard", "reduced"], "properties": {
                "standard": {"type": "integer", "minimum": 0, "maximum": 10000, "description": "Basis points: 3000 = 30 %."},
                "reduced": {"type": "integer", "minimum": 0, "maximum": 10000}}},
              "WebhookEndpointInput": {"type": "object", "properties": {"url": {"type": "string", "format": "uri"},
                "secret": {"type": "string", "minLength": 16, "maxLength": 256}, "enabled": {"type": "boolean"}}},
              "WebhookEndpoint": {"type": "object", "required": ["id", "url", "enabled", "version"], "properties": {"id": {"type": "string"},
                "url": {"type": "string"}, "enabled": {"type": "boolean"}, "secret": {"type": "string"},
                "version": {"type": "integer", "minimum": 1, "description": "1 when created, one more on every change; the ETag is this number in quotes."}}},
              "WebhookEndpointList": {"type": "object", "required": ["endpoints"], "properties": {"endpoints": {"type": "array",
                "items": {"$ref": "#/components/schemas/WebhookEndpoint"}}}},
              "FailedDeliveryList": {"type": "object", "required": ["deliveries"], "properties": {"deliveries": {"type": "array",
                "items": {"type": "object", "required": ["deliveryId", "endpointId", "eventSequence", "attempts"], "properties": {
                  "deliveryId": {"type": "integer"}, "endpointId": {"type": "string"}, "eventSequence": {"type": "integer"},
                  "attempts": {"type": "integer"}, "lastError": {"type": "string"}, "deadLetteredAt": {"type": "integer"},
                  "deliveredAt": {"type": "integer"}}}}}},
              "ReplayAccepted": {"type": "object", "required": ["deliveryId"], "properties": {"deliveryId": {"type": "integer"}}},
              "KeyList": {"type": "object", "required": ["keys"], "properties": {"keys": {"type": "array", "items": {"type": "object",
                "required": ["id", "kind", "prefix", "label", "createdAt"], "additionalProperties": false, "properties": {
                  "id": {"type": "string"}, "appId": {"type": "string"}, "kind": {"type": "string", "enum": ["public", "secret", "admin"]},
                  "prefix": {"type": "string", "enum": ["sk_pub_", "sk_sec_", "sk_adm_"], "description": "How the key begins; the key itself was shown once, at creation, and only its hash is stored."},
                  "label": {"type": "string"}, "createdAt": {"type": "integer", "description": "Milliseconds since 1970."},
                  "revokedAt": {"type": "integer", "description": "Milliseconds since 1970; absent while the key is active."}}}}}},
              "WebhookTestResult": {"type": "object", "required": ["endpointId", "eventId", "delivered"], "properties": {
                "endpointId": {"type": "string"}, "eventId": {"type": "string", "description": "The TEST event's id (evt_test_…), also sent as Storekeeper-Event-Id."},
                "delivered": {"type": "boolean", "description": "The endpoint answered 2xx."},
                "status": {"type": "integer", "description": "The endpoint's HTTP status; absent when it did not answer."},
                "error": {"type": "string", "description": "Why it was not delivered: http_status_NNN, connection_failed, timeout, dns_failed, tls_failed, destination_refused, signing_secret_unavailable, …"},
                "response": {"type": "string", "description": "The start of the endpoint's answer (up to 1024 bytes)."}}},
              "NotificationPage": {"type": "object", "required": ["notifications"], "properties": {"notifications": {"type": "array",
                "items": {"type": "object", "required": ["id", "notificationUUID", "notificationType", "signedDate", "receivedAt"], "properties": {
                  "id": {"type": "integer"}, "notificationUUID": {"type": "string"}, "notificationType": {"type": "string"},
                  "subtype": {"type": "string"}, "environment": {"type": "string"}, "originalTransactionId": {"type": "string"},
                  "signedDate": {"type": "integer"}, "receivedAt": {"type": "integer"},
                  "outcome": {"type": "string", "enum": ["applied", "unclaimed", "recorded"]}}}},
                "nextCursor": {"type": ["string", "null"], "description": "Pass as cursor for older notifications; absent on the last page."}}}
            }
            """#
        return (try? AppStoreJSON.decode(JSONValue.self, from: Data(text.utf8))) ?? .object([:])
    }()
}
