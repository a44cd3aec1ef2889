"""Apple's App Store Server Library (Python, PyPI) as an independent client of the simulator.

Starts `storekeeper simulate serve` (production at /, sandbox at /sandbox, one month = 1 s),
drives customers through the admin API, and checks that Apple's AppStoreServerAPIClient
completes every call it makes on the simulator and that Apple's SignedDataVerifier, given the
simulator's root, accepts every transaction, renewal info and notification it produced.
Usage: simulator_interop_test.py PATH_TO_STOREKEEPER_BINARY
"""
import atexit
import base64
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
import uuid

from appstoreserverlibrary.api_client import (
    APIException, AppStoreServerAPIClient, GetTransactionHistoryVersion)
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
from appstoreserverlibrary.models.Status import Status
from appstoreserverlibrary.models.TransactionHistoryRequest import Order, TransactionHistoryRequest
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

BINARY = os.path.abspath(sys.argv[1])
DATA = tempfile.mkdtemp(prefix="storekeeper-simulator-interop-")
# Removed at exit, whatever the outcome (runs had left their folders behind).
atexit.register(shutil.rmtree, DATA, ignore_errors=True)
BUNDLE = "com.example.storekeeper.demo"
MONTHLY, YEARLY = BUNDLE + ".monthly", BUNDLE + ".yearly"
LIFETIME, COINS = BUNDLE + ".lifetime", BUNDLE + ".coins100"
RESULTS = {"passed": 0, "failed": 0}
RECEIVED = []


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


PORT = free_port()
BASE = f"http://127.0.0.1:{PORT}"
SANDBOX = BASE + "/sandbox"


class Receiver(http.server.BaseHTTPRequestHandler):
    """The developer's server: answers 200 and keeps every signedPayload."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        RECEIVED.append(json.loads(body)["signedPayload"])
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def admin(method, path, body=None, base=SANDBOX):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + "/simulator/v1" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read()
        return json.loads(text) if text else None


def act(action, **fields):
    return admin("POST", "/actions", {"action": action, **fields})


def post_json(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def check(name, function):
    try:
        function()
        RESULTS["passed"] += 1
        print(f"ok   {name}")
    except Exception:
        RESULTS["failed"] += 1
        print(f"FAIL {name}")
        traceback.print_exc()


def client():
    with open(f"{DATA}/api-key.p8", "rb") as handle:
        key = handle.read()
    with open(f"{DATA}/api-key.json") as handle:
        meta = json.load(handle)
    api = AppStoreServerAPIClient(key, meta["keyId"], meta["issuerId"], BUNDLE, Environment.SANDBOX)
    # The library has no base-URL parameter; its requests go to `_base_url` + Apple's path.
    api._base_url = SANDBOX
    return api


def verifier():
    with open(f"{DATA}/ca/root.der", "rb") as handle:
        root = handle.read()
    return SignedDataVerifier([root], False, Environment.SANDBOX, BUNDLE, 6450000001)


def main():
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    server = subprocess.Popen([BINARY, "simulate", "serve", "--port", str(PORT), "--data", DATA,
                               "--month-seconds", "1",
                               "--notification-url", f"http://127.0.0.1:{receiver.server_port}/"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            try:
                admin("GET", "/health")
                break
            except Exception:
                time.sleep(0.1)
        run_checks()
    finally:
        server.terminate()
        server.wait(timeout=10)
        receiver.shutdown()
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    sys.exit(1 if RESULTS["failed"] else 0)


def run_checks():
    api, apple = client(), verifier()
    for name in ("alice", "bob", "carol"):
        admin("POST", "/customers", {"id": name, "familyGroup": "smiths" if name != "carol" else None,
                                     "appAccountToken": str(uuid.uuid4())})
    state = {}

    def journeys():
        state["sub"] = act("purchase", customer="alice", productId=YEARLY)["transactionId"]
        act("purchase", customer="alice", productId=LIFETIME)
        for _ in range(23):
            act("purchase", customer="alice", productId=COINS)
        act("purchase", customer="carol", productId=MONTHLY)
        act("billingIssue", customer="carol")
        time.sleep(0.6)  # carol's trial (a week = 0.23 s) ends in a failed renewal
        admin("POST", "/tick")
        act("billingRecovery", customer="carol")
        act("setAutoRenew", customer="carol", productId=MONTHLY, enabled=False)
        act("purchase", customer="alice", productId=MONTHLY)  # downgrade at next renewal
        act("purchase", customer="alice", productId=YEARLY)   # cancels the downgrade
        act("requestRefund", customer="alice", productId=COINS, reason="UNINTENDED_PURCHASE")
        act("refund", customer="alice", productId=COINS, reason="developerIssue")
        act("refund", customer="alice", productId=LIFETIME, reason="other", percentage=40)
        act("reverseRefund", customer="alice", productId=LIFETIME)
        act("increasePrice", productId=YEARLY, price=54990, requiresConsent=True)
        act("consentToPriceIncrease", customer="alice", productId=YEARLY)
        time.sleep(1.5)  # carol's month runs out with auto-renew off
        admin("POST", "/tick")
        assert len(admin("GET", "/notifications")) >= 15

    check("customer journeys through the admin API", journeys)

    def transaction_info():
        response = api.get_transaction_info(state["sub"])
        payload = apple.verify_and_decode_signed_transaction(response.signedTransactionInfo)
        assert payload.transactionId == state["sub"] and payload.productId == YEARLY
        assert payload.bundleId == BUNDLE and payload.environment == Environment.SANDBOX

    check("Get Transaction Info", transaction_info)

    def history(version):
        def run():
            revision, pages, signed = None, 0, []
            while True:
                page = api.get_transaction_history(state["sub"], revision,
                                                   TransactionHistoryRequest(sort=Order.ASCENDING), version)
                pages += 1
                signed += page.signedTransactions
                assert page.bundleId == BUNDLE and page.revision
                revision = page.revision
                if not page.hasMore:
                    break
            assert pages >= 2, f"{pages} page(s)"
            ids = [apple.verify_and_decode_signed_transaction(item).transactionId for item in signed]
            assert len(ids) == len(set(ids)) and len(ids) >= 25, len(ids)
        return run

    check("Get Transaction History v1, several pages", history(GetTransactionHistoryVersion.V1))
    check("Get Transaction History v2, several pages", history(GetTransactionHistoryVersion.V2))

    def statuses():
        response = api.get_all_subscription_statuses(state["sub"])
        assert response.bundleId == BUNDLE and response.data
        for group in response.data:
            for item in group.lastTransactions:
                apple.verify_and_decode_signed_transaction(item.signedTransactionInfo)
                renewal = apple.verify_and_decode_renewal_info(item.signedRenewalInfo)
                assert renewal.originalTransactionId == item.originalTransactionId
        filtered = api.get_all_subscription_statuses(state["sub"], [Status.ACTIVE])
        assert all(item.status == Status.ACTIVE for group in filtered.data for item in group.lastTransactions)

    check("Get All Subscription Statuses (with status filter)", statuses)

    def refunds():
        response = api.get_refund_history(state["sub"], None)
        refunded = [apple.verify_and_decode_signed_transaction(item) for item in response.signedTransactions]
        assert any(item.productId == COINS and item.revocationDate for item in refunded)
        assert response.revision and response.hasMore is False

    check("Get Refund History", refunds)

    def test_notification():
        token = api.request_test_notification().testNotificationToken
        for _ in range(50):
            status = api.get_test_notification_status(token)
            if status.sendAttempts:
                break
            time.sleep(0.1)
        payload = apple.verify_and_decode_notification(status.signedPayload)
        assert payload.notificationType.value == "TEST"
        assert status.sendAttempts[0].sendAttemptResult.value == "SUCCESS"

    check("Request a Test Notification and its status", test_notification)

    def extend():
        original = apple.verify_and_decode_signed_transaction(
            api.get_transaction_info(state["sub"]).signedTransactionInfo).originalTransactionId
        response = api.extend_subscription_renewal_date(original, ExtendRenewalDateRequest(
            extendByDays=7, extendReasonCode=ExtendReasonCode.CUSTOMER_SATISFACTION, requestIdentifier=str(uuid.uuid4())))
        assert response.success and response.originalTransactionId == original and response.effectiveDate
        request_id = str(uuid.uuid4())
        api.extend_renewal_date_for_all_active_subscribers(MassExtendRenewalDateRequest(
            extendByDays=3, extendReasonCode=ExtendReasonCode.OTHER, requestIdentifier=request_id, productId=YEARLY))
        status = api.get_status_of_subscription_renewal_date_extensions(request_id, YEARLY)
        assert status.complete and status.succeededCount >= 1
        try:
            api.extend_subscription_renewal_date(original, ExtendRenewalDateRequest(
                extendByDays=120, extendReasonCode=ExtendReasonCode.OTHER, requestIdentifier="x"))
            raise AssertionError("120 days accepted")
        except APIException as error:
            assert error.raw_api_error == 4000009 and error.http_status_code == 400

    check("Extend a Subscription Renewal Date (single and mass)", extend)

    def notification_history():
        now = int(time.time() * 1000)
        token, items = None, []
        while True:
            page = api.get_notification_history(token, NotificationHistoryRequest(startDate=now - 3600_000, endDate=now + 60_000))
            items += page.notificationHistory
            if not page.hasMore:
                break
            token = page.paginationToken
        assert len(items) > 20, len(items)
        for item in items:
            apple.verify_and_decode_notification(item.signedPayload)
            assert item.sendAttempts
        failures = api.get_notification_history(None, NotificationHistoryRequest(
            startDate=now - 3600_000, endDate=now + 60_000, onlyFailures=True))
        assert failures.notificationHistory == [] or failures.notificationHistory is None

    check("Get Notification History, several pages, onlyFailures", notification_history)

    def every_signed_item_verifies():
        payloads = [item["signedPayload"] for item in admin("GET", "/notifications")] + RECEIVED
        types, transactions, renewals = set(), 0, 0
        for signed in payloads:
            notification = apple.verify_and_decode_notification(signed)
            types.add(notification.rawNotificationType + "/" + str(notification.rawSubtype))
            if notification.data and notification.data.signedTransactionInfo:
                apple.verify_and_decode_signed_transaction(notification.data.signedTransactionInfo)
                transactions += 1
            if notification.data and notification.data.signedRenewalInfo:
                apple.verify_and_decode_renewal_info(notification.data.signedRenewalInfo)
                renewals += 1
        for name in ("alice", "bob", "carol"):
            listing = admin("GET", f"/customers/{name}/transactions")
            for signed in listing["signedTransactions"]:
                apple.verify_and_decode_signed_transaction(signed)
                transactions += 1
            for signed in listing["signedRenewalInfos"]:
                apple.verify_and_decode_renewal_info(signed)
                renewals += 1
        expected = {"SUBSCRIBED/INITIAL_BUY", "DID_RENEW/None", "DID_FAIL_TO_RENEW/GRACE_PERIOD",
                    "DID_RENEW/BILLING_RECOVERY", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED",
                    "DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "DID_CHANGE_RENEWAL_PREF/None", "ONE_TIME_CHARGE/None",
                    "CONSUMPTION_REQUEST/None", "REFUND/None", "REFUND_REVERSED/None", "REVOKE/None",
                    "PRICE_INCREASE/PENDING", "PRICE_INCREASE/ACCEPTED", "EXPIRED/VOLUNTARY",
                    "RENEWAL_EXTENDED/None", "RENEWAL_EXTENSION/SUMMARY", "TEST/None"}
        assert expected <= types, sorted(expected - types)
        assert RECEIVED, "the receiver got nothing"
        print(f"     {len(payloads)} notifications, {transactions} transactions, {renewals} renewal infos verified")

    check("Apple's SignedDataVerifier accepts everything the simulator signed", every_signed_item_verifies)

    def app_transaction_and_order():
        response = api.get_app_transaction_info(state["sub"])
        apple.verify_and_decode_app_transaction(response.signedAppTransactionInfo)

    check("Get App Transaction Info", app_transaction_and_order)

    def refusals():
        try:
            api.get_transaction_info("123456789")
            raise AssertionError("unknown transaction found")
        except APIException as error:
            assert error.http_status_code == 404 and error.raw_api_error == 4040010
        try:
            api.get_transaction_info("not-a-number")
            raise AssertionError("malformed id accepted")
        except APIException as error:
            assert error.raw_api_error == 4000006
        stranger = AppStoreServerAPIClient(
            open(f"{DATA}/ca/leaf.key.pem", "rb").read(), "UNKNOWNKEY", "issuer", BUNDLE, Environment.SANDBOX)
        stranger._base_url = SANDBOX
        try:
            stranger.get_transaction_info(state["sub"])
            raise AssertionError("unknown key accepted")
        except APIException as error:
            assert error.http_status_code == 401

    check("Apple's error codes and 401", refusals)

    def rate_limit():
        urllib.request.urlopen(urllib.request.Request(
            SANDBOX + "/simulator/v1/settings/rate-limit", data=b'{"requests": 2, "seconds": 60}', method="PUT"))
        try:
            api.get_transaction_info(state["sub"])
            api.get_transaction_info(state["sub"])
            try:
                api.get_transaction_info(state["sub"])
                raise AssertionError("third call within the limit")
            except APIException as error:
                assert error.http_status_code == 429 and error.raw_api_error == 4290000
        finally:
            urllib.request.urlopen(urllib.request.Request(
                SANDBOX + "/simulator/v1/settings/rate-limit", data=b"null", method="PUT"))

    check("429 when the rate limit is exceeded", rate_limit)

    def verify_receipt():
        receipt = admin("GET", "/customers/alice/receipt")["receiptData"]
        production = post_json(BASE + "/verifyReceipt", {"receipt-data": receipt, "password": "x"})
        assert production["status"] == 21007, production
        wrong = post_json(SANDBOX + "/verifyReceipt", {"receipt-data": receipt, "password": "wrong"})
        assert wrong["status"] == 21004, wrong
        good = post_json(SANDBOX + "/verifyReceipt",
                         {"receipt-data": receipt, "password": "0123456789abcdef0123456789abcdef"})
        assert good["status"] == 0 and good["environment"] == "Sandbox" and good["latest_receipt_info"]
        assert good["pending_renewal_info"] and good["receipt"]["bundle_id"] == BUNDLE
        malformed = post_json(SANDBOX + "/verifyReceipt", {"receipt-data": "bm90IGEgcmVjZWlwdA=="})
        assert malformed["status"] == 21002, malformed

    check("verifyReceipt: 21007, 21004, 21002 and a valid receipt", verify_receipt)


if __name__ == "__main__":
    main()
