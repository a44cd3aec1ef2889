import Foundation
import GooglePlayModels
import GooglePlayTrust
import HTTPServer

/// The Play simulator's admin API: create service accounts and purchases and run lifecycle
/// operations over HTTP (Google has no such API; the interop test and the CLI use it).
/// Errors use Google's error shape.
enum PlayAdminRoutes {
    /// `publicKeyPem` and `keyId` register a key the caller generated; without them the
    /// simulator generates the key and answers the whole key file.
    struct AccountRequest: Decodable {
        var email: String
        var publicKeyPem: String?
        var keyId: String?
    }
    struct KeyIdAnswer: Encodable { var keyId: String }
    struct PurchaseRequest: Decodable {
        var packageName: String
        var productId: String
        var basePlanId: String?
        var quantity: Int32?
        var obfuscatedAccountId: String?
        var periodMillis: Int64?
    }
    struct OperationRequest: Decodable {
        var resumeAtMillis: Int64?
        var productId: String?
        var quantity: Int32?
    }
    struct TokenAnswer: Encodable { var token: String }

    static func add(_ simulator: PlaySimulator, to router: inout Router, prefix: String) {
        route(&router, .post, prefix + "/play-admin/service-accounts") { request, _ in
            let body = try decode(AccountRequest.self, request)
            let host = request.headers["Host"] ?? "127.0.0.1"
            guard let tokenURI = URL(string: "http://\(host)\(prefix)/token") else {
                throw PlaySimulatorError.invalidArgument("Bad Host header.")
            }
            if let pem = body.publicKeyPem {
                let publicKey: RSAPublicKey
                do {
                    publicKey = try RSAPublicKey(pem: pem)
                } catch {
                    throw PlaySimulatorError.invalidArgument("publicKeyPem: \(error)")
                }
                let keyId = await simulator.registerServiceAccount(
                    email: body.email, publicKey: publicKey, keyId: body.keyId, tokenURI: tokenURI)
                return try HTTPResponse.json(KeyIdAnswer(keyId: keyId))
            }
            let key = try await simulator.createServiceAccount(email: body.email, tokenURI: tokenURI)
            return HTTPResponse.json(data: key.json)
        }
        route(&router, .post, prefix + "/play-admin/subscriptions") { request, _ in
            let body = try decode(PurchaseRequest.self, request)
            let token = try await simulator.purchaseSubscription(
                packageName: body.packageName, productId: body.productId, basePlanId: body.basePlanId ?? "monthly",
                periodMillis: body.periodMillis ?? 30 * 86_400_000, obfuscatedAccountId: body.obfuscatedAccountId)
            return try HTTPResponse.json(TokenAnswer(token: token))
        }
        route(&router, .post, prefix + "/play-admin/products") { request, _ in
            let body = try decode(PurchaseRequest.self, request)
            let token = try await simulator.purchaseProduct(
                packageName: body.packageName, productId: body.productId, quantity: body.quantity ?? 1,
                obfuscatedAccountId: body.obfuscatedAccountId)
            return try HTTPResponse.json(TokenAnswer(token: token))
        }
        route(&router, .post, prefix + "/play-admin/subscriptions/{token}/{operation}") { request, context in
            let token = try PlaySimulatorRoutes.parameter(context, "token")
            let body = try request.body.isEmpty ? OperationRequest() : decode(OperationRequest.self, request)
            switch try PlaySimulatorRoutes.parameter(context, "operation") {
            case "renew": try await simulator.renew(token)
            case "grace": try await simulator.enterGracePeriod(token)
            case "hold": try await simulator.hold(token)
            case "recover": try await simulator.recover(token)
            case "pause":
                guard let resumeAt = body.resumeAtMillis else {
                    throw PlaySimulatorError.invalidArgument("resumeAtMillis is required.")
                }
                try await simulator.pause(token, resumeAtMillis: resumeAt)
            case "resume": try await simulator.resume(token)
            case "cancel": try await simulator.cancel(token)
            case "restart": try await simulator.restart(token)
            case "revoke": try await simulator.revoke(token)
            case "expire": try await simulator.expire(token)
            case "void": try await simulator.voidSubscription(token)
            case "change":
                guard let productId = body.productId else {
                    throw PlaySimulatorError.invalidArgument("productId is required.")
                }
                return try HTTPResponse.json(
                    TokenAnswer(token: try await simulator.changePlan(token, toProductId: productId)))
            default: throw PlaySimulatorError.unknownMethod
            }
            return try HTTPResponse.json(TokenAnswer(token: token))
        }
        route(&router, .post, prefix + "/play-admin/products/{token}/void") { request, context in
            let token = try PlaySimulatorRoutes.parameter(context, "token")
            let body = try request.body.isEmpty ? OperationRequest() : decode(OperationRequest.self, request)
            try await simulator.voidProduct(token, quantity: body.quantity)
            return try HTTPResponse.json(TokenAnswer(token: token))
        }
        route(&router, .post, prefix + "/play-admin/tick") { _, _ in
            await simulator.tick()
            return HTTPResponse(status: .ok)
        }
    }

    static func route(
        _ router: inout Router, _ method: HTTPMethod, _ pattern: String,
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse
    ) {
        router.add(method, pattern) { request, context in
            do {
                return try await handler(request, context)
            } catch let error as PlaySimulatorError {
                return PlaySimulatorRoutes.errorResponse(error)
            } catch {
                return PlaySimulatorRoutes.errorResponse(.invalidArgument("\(error)"))
            }
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ request: HTTPRequest) throws(PlaySimulatorError) -> T {
        do {
            return try GooglePlayJSON.decode(T.self, from: request.body, maximumBytes: 64 * 1024)
        } catch {
            throw .invalidArgument(error.description)
        }
    }
}
