import AppStoreModels
import Foundation
import HTTPServer

/// `POST /verifyReceipt` as Apple's buy/sandbox hosts answer it: always HTTP 200, the verdict in
/// `status`; any other method gets status 21000.
enum VerifyReceiptRoutes {
    static func add(_ simulator: AppStoreSimulator, to router: inout Router, prefix: String) {
        router.post(prefix + "/verifyReceipt") { request, _ in
            let response = await simulator.verifyReceipt(body: request.body)
            return HTTPResponse.json(data: AppStoreJSON.encode(response))
        }
        router.get(prefix + "/verifyReceipt") { _, _ in
            var response = VerifyReceiptResponseBody()
            response.status = .notPOST
            return HTTPResponse.json(data: AppStoreJSON.encode(response))
        }
    }
}
