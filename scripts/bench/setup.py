"""Prepares the data for scripts/bench-http.sh.

usage: setup.py BASE_URL ADMIN_KEY STOREKEEPER_BINARY CA_DIR OUT_DIR NOTIFICATIONS

Through the API of a running server: the app `bench` (Sandbox, trusting the CA), its catalog and
keys, and the customer `bench-user` with three ingested transactions signed by the CA. Then
writes, signed with `storekeeper jws sign`:
  OUT_DIR/notifications.jsonl  NOTIFICATIONS distinct V2 notification bodies, one per line
                               (DID_RENEW of the customer's subscription, each with its own
                               notificationUUID, cycling through 50 signed renewal transactions)
  OUT_DIR/keys.env             PUBLIC_KEY=… and SECRET_KEY=…
  OUT_DIR/customer.json        the CustomerInfo body, for the same-size static file
  OUT_DIR/notification.json    one notification response body, likewise
"""

import concurrent.futures
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

BASE, ADMIN_KEY, BINARY, CA, OUT = sys.argv[1:6]
COUNT = int(sys.argv[6])
BUNDLE_ID = "com.example.bench"
CHAIN = ",".join(f"{CA}/{name}.pem" for name in ("leaf", "intermediate", "root"))
DAY = 86_400_000
# Signed a minute ago: inside the validity of the certificates `storekeeper ca init` just made.
SIGNED = int(time.time() * 1000) - 60_000


def call(method, path, key, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read()
    except urllib.error.HTTPError as error:
        sys.exit(f"bench setup: {method} {path} answered {error.code}: {error.read().decode()}")


def sign(payload):
    result = subprocess.run(
        [BINARY, "jws", "sign", "--key", f"{CA}/leaf.key.pem", "--chain", CHAIN, "-"],
        input=json.dumps(payload), capture_output=True, text=True, check=True)
    return result.stdout.strip()


def transaction(transaction_id, original_id, product, kind, purchase, expires=None):
    payload = {
        "transactionId": transaction_id, "originalTransactionId": original_id, "bundleId": BUNDLE_ID,
        "productId": product, "purchaseDate": purchase, "originalPurchaseDate": purchase, "quantity": 1,
        "type": kind, "inAppOwnershipType": "PURCHASED", "signedDate": SIGNED, "environment": "Sandbox",
        "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441", "price": 9990,
        "currency": "USD",
    }
    if expires is not None:
        payload.update(expiresDate=expires, webOrderLineItemId=f"w{transaction_id}",
                       subscriptionGroupIdentifier="group")
    return payload


with open(f"{CA}/root.pem") as file:
    root_pem = file.read()
call("POST", "/v1/admin/apps", ADMIN_KEY,
     {"id": "bench", "bundleId": BUNDLE_ID, "environments": ["Sandbox"], "rootCertificatesPEM": [root_pem]})
public_key = json.loads(call("POST", "/v1/admin/apps/bench/keys", ADMIN_KEY, {"kind": "public"}))["key"]
secret_key = json.loads(call("POST", "/v1/admin/apps/bench/keys", ADMIN_KEY, {"kind": "secret"}))["key"]
call("PUT", "/v1/apps/bench/catalog", secret_key, {"products": [
    {"productId": "bench.monthly", "kind": "AUTO_RENEWABLE", "subscriptionGroup": "group", "groupLevel": 1,
     "duration": "P1M", "entitlementIds": ["pro"]},
    {"productId": "bench.lifetime", "kind": "NON_CONSUMABLE", "entitlementIds": ["extras"]},
    {"productId": "bench.coins", "kind": "CONSUMABLE", "entitlementIds": []},
]})

now = int(time.time() * 1000)
start = now - 40 * DAY
purchases = [
    transaction("4000000001", "4000000001", "bench.monthly", "Auto-Renewable Subscription", start, start + 30 * DAY),
    transaction("4000000002", "4000000002", "bench.lifetime", "Non-Consumable", start + DAY),
    transaction("4000000003", "4000000003", "bench.coins", "Consumable", start + 2 * DAY),
]
for payload in purchases:
    call("POST", "/v1/apps/bench/customers/bench-user/transactions", public_key, {"signedTransaction": sign(payload)})
customer = call("GET", "/v1/apps/bench/customers/bench-user", public_key)
if b'"pro"' not in customer:
    sys.exit("bench setup: the customer did not get its entitlement")

workers = os.cpu_count() or 2
with concurrent.futures.ThreadPoolExecutor(workers) as pool:
    renewals = list(pool.map(sign, [
        transaction(str(4100000000 + n), "4000000001", "bench.monthly", "Auto-Renewable Subscription",
                    now - 10 * DAY + n * 1000, now + 20 * DAY + n * 1000)
        for n in range(50)]))
    notifications = [{
        "notificationType": "DID_RENEW", "notificationUUID": str(uuid.uuid4()), "version": "2.0",
        "signedDate": now - 1000, "data": {
            "environment": "Sandbox", "bundleId": BUNDLE_ID, "signedTransactionInfo": renewals[n % len(renewals)]},
    } for n in range(COUNT + 1)]
    signed = list(pool.map(sign, notifications))

with open(f"{OUT}/notifications.jsonl", "w") as file:
    for payload in signed[:COUNT]:
        file.write(json.dumps({"signedPayload": payload}) + "\n")
with open(f"{OUT}/keys.env", "w") as file:
    file.write(f"PUBLIC_KEY={public_key}\nSECRET_KEY={secret_key}\n")
with open(f"{OUT}/customer.json", "wb") as file:
    file.write(customer)
# One more notification, ingested now, gives the size of an answer.
with open(f"{OUT}/notification.json", "wb") as file:
    file.write(call("POST", "/v1/apps/bench/notifications/appstore", None, {"signedPayload": signed[COUNT]}))
