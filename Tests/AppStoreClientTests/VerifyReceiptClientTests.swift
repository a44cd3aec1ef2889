import AppStoreClient
import AppStoreModels
import Foundation
import Testing

/// The legacy verifyReceipt client against two loopback stubs (production and sandbox).
struct VerifyReceiptClientTests {
    static func status(_ code: Int64, extra: String = "") -> StubReply {
        .json(Data(#"{"status":\#(code)\#(extra)}"#.utf8))
    }

    static let validSandboxAnswer = StubReply.json(
        Data(
            #"""
            {"status":0,"environment":"Sandbox","latest_receipt":"BASE64",
             "receipt":{"bundle_id":"com.example","in_app":[]},
             "latest_receipt_info":[
               {"transaction_id":"3","original_transaction_id":"1","product_id":"p","purchase_date_ms":"1700000300000","quantity":"1"},
               {"transaction_id":"1","original_transaction_id":"1","product_id":"p","purchase_date_ms":"1700000100000","quantity":"1"},
               {"transaction_id":"2","original_transaction_id":"1","product_id":"p","purchase_date_ms":"1700000200000","quantity":"1"}]}
            """#.utf8))

    func client(
        production: StubAppStore, sandbox: StubAppStore, secret: String? = "shared-secret",
        clock: VirtualRetryClock = VirtualRetryClock()
    ) -> VerifyReceiptClient {
        VerifyReceiptClient(
            configuration: VerifyReceiptConfiguration(
                sharedSecret: secret, productionURL: production.baseURL.appendingPathComponent("verifyReceipt"),
                sandboxURL: sandbox.baseURL.appendingPathComponent("verifyReceipt"),
                retry: ClientFixture.retry(maxAttempts: 3)),
            clock: clock)
    }

    func failure(_ body: () async throws -> Void) async -> AppStoreClientError? {
        do {
            try await body()
            Issue.record("expected an error")
        } catch let error as AppStoreClientError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
        }
        return nil
    }

    @Test func sandboxReceiptSentToProductionGoesToSandbox() async throws {
        let production = try StubAppStore([Self.status(21007)])
        let sandbox = try StubAppStore([Self.validSandboxAnswer])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let result = try await client(production: production, sandbox: sandbox)
            .verify(receiptData: "MIIreceipt", excludeOldTransactions: true)
        #expect(result.environment == .sandbox)
        #expect(result.status == .valid)
        #expect(result.attempts == 2)
        #expect(result.latestReceiptInfo.map(\.transactionId) == ["1", "2", "3"])
        for stub in [production, sandbox] {
            let request = try #require(stub.requests.first)
            #expect(request.method == "POST")
            #expect(request.path == "/verifyReceipt")
            #expect(request.bodyJSON?["receipt-data"] as? String == "MIIreceipt")
            #expect(request.bodyJSON?["password"] as? String == "shared-secret")
            #expect(request.bodyJSON?["exclude-old-transactions"] as? Bool == true)
        }
    }

    @Test func productionReceiptSentToSandboxGoesToProduction() async throws {
        let production = try StubAppStore([Self.status(0, extra: #","environment":"Production""#)])
        let sandbox = try StubAppStore([Self.status(21008)])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let result = try await client(production: production, sandbox: sandbox)
            .verify(receiptData: "MIIreceipt", startingEnvironment: .sandbox)
        #expect(result.environment == .production)
        #expect(sandbox.requests.count == 1)
        #expect(production.requests.count == 1)
        #expect(production.requests.first?.bodyJSON?["exclude-old-transactions"] as? Bool == false)
    }

    @Test func pingPongBetweenEnvironmentsIsABadRequest() async throws {
        let production = try StubAppStore([Self.status(21007)])
        let sandbox = try StubAppStore([Self.status(21008)])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let error = try #require(
            await failure { _ = try await client(production: production, sandbox: sandbox).verify(receiptData: "x") })
        #expect(error.code == .receiptBadRequest)
    }

    @Test func sharedSecretMismatchIsAConfigurationError() async throws {
        let production = try StubAppStore([Self.status(21004)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let error = try #require(
            await failure { _ = try await client(production: production, sandbox: sandbox).verify(receiptData: "x") })
        #expect(error.code == .receiptSharedSecretMismatch)
        #expect(error.detail.contains("configuration error"))
        #expect(error.detail.contains("shared secret"))
        #expect(!error.description.contains("shared-secret"))
        #expect(error.receiptStatus?.rawValue == 21004)
    }

    @Test(arguments: [Int64(21002), 21003, 21010])
    func badReceipts(code: Int64) async throws {
        let production = try StubAppStore([Self.status(code)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let error = try #require(
            await failure { _ = try await client(production: production, sandbox: sandbox).verify(receiptData: "x") })
        #expect(error.code == .receiptInvalid)
        #expect(error.receiptStatus?.rawValue == code)
        #expect(production.requests.count == 1)
    }

    @Test(arguments: [Int64(21000), 21001])
    func badRequests(code: Int64) async throws {
        let production = try StubAppStore([Self.status(code)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let error = try #require(
            await failure { _ = try await client(production: production, sandbox: sandbox).verify(receiptData: "x") })
        #expect(error.code == .receiptBadRequest)
    }

    @Test(arguments: [Int64(21005), 21009, 21100, 21199])
    func retryableStatusesAreRetriedWithBackoff(code: Int64) async throws {
        let production = try StubAppStore([Self.status(code, extra: #","is-retryable":true"#), Self.status(0)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let clock = VirtualRetryClock()
        let result = try await client(production: production, sandbox: sandbox, clock: clock).verify(receiptData: "x")
        #expect(result.status == .valid)
        #expect(result.environment == .production)
        #expect(result.attempts == 2)
        #expect(clock.sleeps == [.milliseconds(100)])
    }

    @Test func retryableStatusGivesUpAfterTheLimit() async throws {
        let production = try StubAppStore([Self.status(21009), Self.status(21009), Self.status(21009)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let clock = VirtualRetryClock()
        let error = try #require(
            await failure {
                _ = try await client(production: production, sandbox: sandbox, clock: clock).verify(receiptData: "x")
            })
        #expect(error.code == .receiptServiceUnavailable)
        #expect(error.attempts == 3)
        #expect(error.isTransient)
        #expect(clock.sleeps == [.milliseconds(100), .milliseconds(200)])
    }

    @Test func expiredIOS6SubscriptionIsStillAnAnswer() async throws {
        let production = try StubAppStore([Self.status(21006)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let result = try await client(production: production, sandbox: sandbox).verify(receiptData: "x")
        #expect(result.status.kind == .validButSubscriptionExpired)
    }

    @Test func unknownStatusIsReported() async throws {
        let production = try StubAppStore([Self.status(29999)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let error = try #require(
            await failure { _ = try await client(production: production, sandbox: sandbox).verify(receiptData: "x") })
        #expect(error.code == .receiptUnknownStatus)
    }

    @Test func serverErrorIsRetried() async throws {
        let production = try StubAppStore([.empty(status: 503), Self.status(0)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let result = try await client(production: production, sandbox: sandbox).verify(receiptData: "x")
        #expect(result.attempts == 2)
    }

    @Test func noSharedSecretSendsNoPassword() async throws {
        let production = try StubAppStore([Self.status(0)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        _ = try await client(production: production, sandbox: sandbox, secret: nil).verify(receiptData: "x")
        #expect(production.requests.first?.bodyJSON?["password"] == nil)
    }
}
