"""Google's own Python client as an independent client of the Play simulator.

Starts `storekeeper simulate play`, registers a service-account key this test generates, and
checks that google-api-python-client with google-auth (from PyPI) gets an access token from the
simulator's token endpoint, reads subscriptions v2, products and voided purchases, acknowledges
and consumes, and sees Google's error shapes; and that google-auth's own OIDC verifier, given
the simulator's JWKS, accepts the tokens on the simulator's real-time developer notification
pushes (and refuses them for another audience).
Usage: play_interop_test.py PATH_TO_STOREKEEPER_BINARY
"""
import base64
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request

import google.auth.exceptions
import google.auth.transport.requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.oauth2 import id_token, service_account
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

BINARY = os.path.abspath(sys.argv[1])
PACKAGE = "com.example.play"
AUDIENCE = "https://storekeeper.test/v1/apps/demo/notifications/googleplay"
SCOPE = "https://www.googleapis.com/auth/androidpublisher"
RESULTS = {"passed": 0, "failed": 0}
PUSHES = []


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


PORT = free_port()
BASE = f"http://127.0.0.1:{PORT}"


class PushReceiver(http.server.BaseHTTPRequestHandler):
    """The push endpoint: keeps each body and its Authorization header, answers 200."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        PUSHES.append((self.headers.get("Authorization"), json.loads(body)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def check(name, function):
    try:
        function()
        RESULTS["passed"] += 1
        print(f"ok   {name}")
    except Exception:
        RESULTS["failed"] += 1
        print(f"FAIL {name}")
        traceback.print_exc()


def expect(actual, expected, what):
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def admin(path, body):
    request = urllib.request.Request(
        BASE + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


def generated_key_file(email, key_id):
    """A service-account key file of a key generated here; its public half is registered."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private_pem, public_pem, {
        "type": "service_account", "project_id": "interop", "private_key_id": key_id, "private_key": private_pem,
        "client_email": email, "client_id": "1", "token_uri": BASE + "/token",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
    }


def service_for(info):
    credentials = service_account.Credentials.from_service_account_info(info, scopes=[SCOPE])
    return build(
        "androidpublisher", "v3", credentials=credentials, static_discovery=True, cache_discovery=False,
        client_options={"api_endpoint": BASE + "/"})


def main():
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PushReceiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    push_url = f"http://127.0.0.1:{receiver.server_address[1]}/push"
    process = subprocess.Popen(
        [BINARY, "simulate", "play", "--port", str(PORT), "--package", PACKAGE, "--push-url", push_url,
         "--push-audience", AUDIENCE],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(BASE + "/oauth2/v3/certs", timeout=2).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.time() > deadline or process.poll() is not None:
                    raise SystemExit("the Play simulator did not start")
                time.sleep(0.2)
        run_checks()
    finally:
        process.terminate()
        process.wait(timeout=20)
        receiver.shutdown()
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    sys.exit(1 if RESULTS["failed"] else 0)


def run_checks():
    email = "play-api@interop.iam.gserviceaccount.com"
    _, public_pem, info = generated_key_file(email, "interop-key-1")
    expect(admin("/play-admin/service-accounts", {"email": email, "publicKeyPem": public_pem,
                                                   "keyId": "interop-key-1"}), {"keyId": "interop-key-1"}, "keyId")
    service = service_for(info)
    purchases = service.purchases()
    state = {}

    def subscription_v2_get_and_acknowledge():
        token = admin("/play-admin/subscriptions", {"packageName": PACKAGE, "productId": "premium",
                                                     "obfuscatedAccountId": "acct-7"})["token"]
        state["subscription"] = token
        purchase = purchases.subscriptionsv2().get(packageName=PACKAGE, token=token).execute()
        expect(purchase["kind"], "androidpublisher#subscriptionPurchaseV2", "kind")
        expect(purchase["subscriptionState"], "SUBSCRIPTION_STATE_ACTIVE", "subscriptionState")
        expect(purchase["acknowledgementState"], "ACKNOWLEDGEMENT_STATE_PENDING", "acknowledgementState")
        expect(purchase["lineItems"][0]["productId"], "premium", "productId")
        expect(purchase["lineItems"][0]["autoRenewingPlan"], {"autoRenewEnabled": True}, "autoRenewingPlan")
        expect(purchase["externalAccountIdentifiers"], {"obfuscatedExternalAccountId": "acct-7"}, "account ids")
        expect(purchase["testPurchase"], {}, "testPurchase")
        purchases.subscriptions().acknowledge(
            packageName=PACKAGE, subscriptionId="premium", token=token, body={}).execute()
        purchase = purchases.subscriptionsv2().get(packageName=PACKAGE, token=token).execute()
        expect(purchase["acknowledgementState"], "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", "acknowledged")

    def upgrade_links_the_old_token():
        new = admin(f"/play-admin/subscriptions/{state['subscription']}/change", {"productId": "premium_plus"})["token"]
        purchase = purchases.subscriptionsv2().get(packageName=PACKAGE, token=new).execute()
        expect(purchase["linkedPurchaseToken"], state["subscription"], "linkedPurchaseToken")
        old = purchases.subscriptionsv2().get(packageName=PACKAGE, token=state["subscription"]).execute()
        expect(old["subscriptionState"], "SUBSCRIPTION_STATE_EXPIRED", "old state")
        expect(old["canceledStateContext"], {"replacementCancellation": {}}, "old cancellation")
        state["upgraded"] = new

    def products_get_acknowledge_consume():
        token = admin("/play-admin/products", {"packageName": PACKAGE, "productId": "coins", "quantity": 3})["token"]
        state["product"] = token
        product = purchases.products().get(packageName=PACKAGE, productId="coins", token=token).execute()
        expect(product["kind"], "androidpublisher#productPurchase", "kind")
        expect((product["purchaseState"], product["acknowledgementState"], product["consumptionState"]), (0, 0, 0),
               "states")
        expect(product["quantity"], 3, "quantity")
        purchases.products().acknowledge(packageName=PACKAGE, productId="coins", token=token, body={}).execute()
        purchases.products().consume(packageName=PACKAGE, productId="coins", token=token).execute()
        product = purchases.products().get(packageName=PACKAGE, productId="coins", token=token).execute()
        expect((product["acknowledgementState"], product["consumptionState"]), (1, 1), "after ack and consume")

    def voided_purchases_list_with_paging():
        admin(f"/play-admin/products/{state['product']}/void", {"quantity": 1})
        admin(f"/play-admin/subscriptions/{state['upgraded']}/void", {})
        seen, page_token, pages = [], None, 0
        while True:
            arguments = {"packageName": PACKAGE, "type": 1, "includeQuantityBasedPartialRefund": True,
                         "maxResults": 1}
            if page_token:
                arguments["token"] = page_token
            page = purchases.voidedpurchases().list(**arguments).execute()
            pages += 1
            seen += page.get("voidedPurchases", [])
            page_token = page.get("tokenPagination", {}).get("nextPageToken")
            if not page_token:
                break
        expect(pages, 2, "pages")
        expect([v["purchaseToken"] for v in seen], [state["product"], state["upgraded"]], "voided tokens")
        expect(seen[0]["voidedQuantity"], 1, "partial refund quantity")
        expect(seen[0]["kind"], "androidpublisher#voidedPurchase", "kind")
        only_products = purchases.voidedpurchases().list(packageName=PACKAGE).execute()
        expect(only_products.get("voidedPurchases", []), [], "default type 0 without partial refunds")

    def googles_error_shapes():
        try:
            purchases.subscriptionsv2().get(packageName=PACKAGE, token="no-such-token").execute()
            raise AssertionError("an unknown token was found")
        except HttpError as error:
            expect(error.resp.status, 404, "status")
            expect(error.reason, "The purchase token was not found.", "message")
            body = json.loads(error.content)
            expect(body["error"]["status"], "NOT_FOUND", "canonical status")
        _, _, stranger = generated_key_file(email, "interop-key-1")
        try:
            service_for(stranger).purchases().products().get(
                packageName=PACKAGE, productId="coins", token=state["product"]).execute()
            raise AssertionError("a key the simulator does not know got a token")
        except google.auth.exceptions.RefreshError as error:
            expect("invalid_grant" in str(error), True, f"OAuth error in {error}")

    def pushes_verify_with_google_auth():
        deadline = time.time() + 10
        while len(PUSHES) < 5 and time.time() < deadline:
            time.sleep(0.1)
        kinds = []
        for authorization, body in PUSHES:
            notification = json.loads(base64.b64decode(body["message"]["data"]))
            for key in ("subscriptionNotification", "oneTimeProductNotification", "voidedPurchaseNotification"):
                if key in notification:
                    kinds.append((key, notification[key].get("notificationType", notification[key].get("refundType"))))
            expect(notification["packageName"], PACKAGE, "packageName")
            expect(authorization.startswith("Bearer "), True, "bearer")
            claims = id_token.verify_token(
                authorization[len("Bearer "):], google.auth.transport.requests.Request(), audience=AUDIENCE,
                certs_url=BASE + "/oauth2/v3/certs")
            expect(claims["iss"], "https://accounts.google.com", "iss")
            expect(claims["email_verified"], True, "email_verified")
        expect(kinds, [("subscriptionNotification", 4), ("subscriptionNotification", 4),
                       ("oneTimeProductNotification", 1), ("voidedPurchaseNotification", 2),
                       ("voidedPurchaseNotification", 1)], "pushed notifications")
        try:
            id_token.verify_token(PUSHES[0][0][len("Bearer "):], google.auth.transport.requests.Request(),
                                  audience="https://elsewhere.test", certs_url=BASE + "/oauth2/v3/certs")
        except Exception as error:  # google-auth raises ValueError, PyJWT (JWKS key sets) InvalidAudienceError
            expect("udience" in f"{type(error).__name__} {error}", True, f"audience refusal, got {error!r}")
        else:
            raise AssertionError("a push token verified for another audience")

    check("subscriptionsv2.get and subscriptions.acknowledge", subscription_v2_get_and_acknowledge)
    check("an upgrade links the old token", upgrade_links_the_old_token)
    check("products.get, acknowledge and consume", products_get_acknowledge_consume)
    check("voidedpurchases.list with token paging", voided_purchases_list_with_paging)
    check("Google's error shapes (404, invalid_grant)", googles_error_shapes)
    check("push OIDC tokens verify with google-auth against the simulator's JWKS", pushes_verify_with_google_auth)


if __name__ == "__main__":
    main()
