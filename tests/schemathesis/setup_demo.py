"""Creates the demo data that tests/schemathesis/run.sh fuzzes against.

usage: setup_demo.py BASE_URL ADMIN_KEY STOREKEEPER_BINARY CA_DIR

Through the admin API: the app `demo` (Sandbox, trusting the CA in CA_DIR), a catalog, a public
and a secret key; then, with the app's public key, a transaction signed by that CA for
`demo-user`, so that the customer, event and fact routes answer with real data. Prints the keys
as shell assignments (SK_PUBLIC_KEY=…, SK_SECRET_KEY=…) on standard output.
"""

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

BASE, ADMIN_KEY, BINARY, CA = sys.argv[1:5]
BUNDLE_ID = "com.example.demo"


def call(method, path, key, body=None, expect=(200, 201)):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    if status not in expect:
        sys.exit(f"setup: {method} {path} answered {status}: {text}")
    return json.loads(text) if text else None


def sign(payload):
    chain = ",".join(f"{CA}/{name}.pem" for name in ("leaf", "intermediate", "root"))
    result = subprocess.run(
        [BINARY, "jws", "sign", "--key", f"{CA}/leaf.key.pem", "--chain", chain, "-"],
        input=json.dumps(payload), capture_output=True, text=True, check=True)
    return result.stdout.strip()


with open(f"{CA}/root.pem") as file:
    root_pem = file.read()

call("POST", "/v1/admin/apps", ADMIN_KEY, {
    "id": "demo", "bundleId": BUNDLE_ID, "environments": ["Sandbox"], "rootCertificatesPEM": [root_pem],
    "sharedSecret": "demo-shared-secret-0123456789",
})
public_key = call("POST", "/v1/admin/apps/demo/keys", ADMIN_KEY, {"kind": "public", "label": "ios"})["key"]
secret_key = call("POST", "/v1/admin/apps/demo/keys", ADMIN_KEY, {"kind": "secret", "label": "backend"})["key"]
call("PUT", "/v1/apps/demo/catalog", secret_key, {"products": [
    {"productId": "com.example.demo.monthly", "kind": "AUTO_RENEWABLE", "subscriptionGroup": "group",
     "groupLevel": 1, "duration": "P1M", "entitlementIds": ["pro"],
     "referencePrice": {"milliunits": 9990, "currency": "USD"}},
    {"productId": "com.example.demo.lifetime", "kind": "NON_CONSUMABLE", "entitlementIds": ["pro", "extras"]},
]})

now = int(time.time() * 1000)
transaction = sign({
    "transactionId": "2000000001", "originalTransactionId": "2000000001", "webOrderLineItemId": "w2000000001",
    "bundleId": BUNDLE_ID, "productId": "com.example.demo.monthly", "subscriptionGroupIdentifier": "group",
    "purchaseDate": now - 86_400_000, "originalPurchaseDate": now - 86_400_000,
    "expiresDate": now + 29 * 86_400_000, "quantity": 1, "type": "Auto-Renewable Subscription",
    "inAppOwnershipType": "PURCHASED", "signedDate": now - 86_400_000, "environment": "Sandbox",
    "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441", "price": 9990,
    "currency": "USD",
})
info = call("POST", "/v1/apps/demo/customers/demo-user/transactions", public_key, {"signedTransaction": transaction})
if "pro" not in info.get("entitlements", {}):
    sys.exit(f"setup: the demo transaction did not unlock pro: {json.dumps(info)}")
print(f"SK_PUBLIC_KEY={public_key}")
print(f"SK_SECRET_KEY={secret_key}")
