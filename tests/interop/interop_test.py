"""Interop between Storekeeper and Apple's App Store Server Library (Python, from PyPI).

Apple's library is the independent oracle: its SignedDataVerifier must accept what
`storekeeper jws sign` produces, our verifiers must accept what its signature creators
produce, and PyJWT must accept our App Store Server API tokens.
Usage: interop_test.py PATH_TO_STOREKEEPER_BINARY
"""
import atexit
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import uuid

import jwt
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
from appstoreserverlibrary.jws_signature_creator import (
    IntroductoryOfferEligibilitySignatureCreator,
    PromotionalOfferV2SignatureCreator,
)

BINARY = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="storekeeper-interop-")
# Removed at exit, whatever the outcome (runs had left their folders behind).
atexit.register(shutil.rmtree, WORK, ignore_errors=True)
BUNDLE = "com.example.interop"
APP_APPLE_ID = 987654321
NOW_MS = int(time.time() * 1000)


def storekeeper(*arguments, stdin=None, check=True):
    result = subprocess.run([BINARY, *arguments], input=stdin, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"storekeeper {' '.join(arguments)} failed: {result.stderr}")
    return result


def sign(payload):
    chain = ",".join(f"{WORK}/ca/{name}.der" for name in ("leaf", "intermediate", "root"))
    return storekeeper("jws", "sign", "--key", f"{WORK}/ca/leaf.key.pem", "--chain", chain, "-",
                       stdin=json.dumps(payload)).stdout.strip()


def apple_verifier(environment=Environment.SANDBOX):
    with open(f"{WORK}/ca/root.der", "rb") as handle:
        root = handle.read()
    return SignedDataVerifier([root], False, environment, BUNDLE, APP_APPLE_ID)


def transaction_payload():
    return {
        "transactionId": "3000000001", "originalTransactionId": "3000000001", "bundleId": BUNDLE,
        "productId": "com.example.interop.monthly", "type": "Auto-Renewable Subscription",
        "purchaseDate": NOW_MS, "originalPurchaseDate": NOW_MS, "expiresDate": NOW_MS + 2592000000,
        "signedDate": NOW_MS, "environment": "Sandbox", "inAppOwnershipType": "PURCHASED",
        "transactionReason": "PURCHASE", "price": 9990, "currency": "USD", "quantity": 1, "storefront": "USA",
    }


def test_apple_verifies_our_transaction():
    decoded = apple_verifier().verify_and_decode_signed_transaction(sign(transaction_payload()))
    assert decoded.transactionId == "3000000001", decoded
    assert decoded.expiresDate == NOW_MS + 2592000000
    assert decoded.price == 9990 and decoded.currency == "USD"


def test_apple_verifies_our_renewal_info():
    payload = {"originalTransactionId": "3000000001", "productId": "com.example.interop.monthly",
               "autoRenewProductId": "com.example.interop.yearly", "autoRenewStatus": 1,
               "signedDate": NOW_MS, "environment": "Sandbox", "renewalDate": NOW_MS + 2592000000}
    decoded = apple_verifier().verify_and_decode_renewal_info(sign(payload))
    assert decoded.autoRenewProductId == "com.example.interop.yearly"
    assert decoded.renewalDate == NOW_MS + 2592000000


def test_apple_verifies_our_notification():
    payload = {"notificationType": "DID_RENEW", "notificationUUID": str(uuid.uuid4()), "version": "2.0",
               "signedDate": NOW_MS, "data": {"bundleId": BUNDLE, "appAppleId": APP_APPLE_ID,
                                              "environment": "Sandbox", "status": 1,
                                              "signedTransactionInfo": sign(transaction_payload())}}
    decoded = apple_verifier().verify_and_decode_notification(sign(payload))
    assert decoded.notificationType == NotificationTypeV2.DID_RENEW
    inner = apple_verifier().verify_and_decode_signed_transaction(decoded.data.signedTransactionInfo)
    assert inner.transactionId == "3000000001"


def test_apple_verifies_our_app_transaction():
    payload = {"receiptType": "Sandbox", "appAppleId": APP_APPLE_ID, "bundleId": BUNDLE,
               "applicationVersion": "7", "receiptCreationDate": NOW_MS, "originalPurchaseDate": NOW_MS,
               "originalApplicationVersion": "1"}
    decoded = apple_verifier().verify_and_decode_app_transaction(sign(payload))
    assert decoded.applicationVersion == "7"


def test_apple_rejects_tampered_token():
    header, body, signature = sign(transaction_payload()).split(".")
    forged = dict(transaction_payload(), expiresDate=NOW_MS + 10 * 365 * 86400000)
    forged_body = base64.urlsafe_b64encode(json.dumps(forged).encode()).decode().rstrip("=")
    try:
        apple_verifier().verify_and_decode_signed_transaction(f"{header}.{forged_body}.{signature}")
    except VerificationException:
        return
    raise AssertionError("Apple's verifier accepted a tampered token")


def test_our_verifier_accepts_what_we_sign_and_apple_checks_the_same_claims():
    token = sign(transaction_payload())
    out = storekeeper("verify", "--root", f"{WORK}/ca/root.der", "--bundle-id", BUNDLE,
                      "--environment", "Sandbox", "-", stdin=token).stdout
    assert json.loads(out)["transactionId"] == "3000000001"
    refused = storekeeper("verify", "--root", f"{WORK}/ca/root.der", "--bundle-id", BUNDLE,
                          "--environment", "Production", "--app-apple-id", str(APP_APPLE_ID), "-",
                          stdin=token, check=False)
    assert refused.returncode == 1 and "environment.mismatch" in refused.stderr, refused.stderr
    try:
        apple_verifier(Environment.PRODUCTION).verify_and_decode_signed_transaction(token)
        raise AssertionError("Apple's verifier accepted a Sandbox token in Production")
    except VerificationException:
        pass


def private_key_pem():
    with open(f"{WORK}/ca/leaf.key.pem", "rb") as handle:
        return handle.read()


def test_apple_promotional_offer_v1_verifies_with_us():
    nonce = uuid.uuid4()
    signature = PromotionalOfferSignatureCreator(private_key_pem(), "KEYID12345", BUNDLE).create_signature(
        "com.example.interop.monthly", "WINBACK50", "8B2A1DEA-2A2B-4C6E-8E1D-1D6D6F7E8F90", nonce, NOW_MS)
    storekeeper("offer", "verify", "--public-key", f"{WORK}/ca/leaf.key.pem", "--key-id", "KEYID12345",
                "--bundle-id", BUNDLE, "--product-id", "com.example.interop.monthly", "--offer-id", "WINBACK50",
                "--app-account-token", "8B2A1DEA-2A2B-4C6E-8E1D-1D6D6F7E8F90", "--nonce", str(nonce),
                "--timestamp", str(NOW_MS), "--signature", signature)
    refused = storekeeper("offer", "verify", "--public-key", f"{WORK}/ca/leaf.key.pem", "--key-id", "KEYID12345",
                          "--bundle-id", BUNDLE, "--product-id", "com.example.interop.yearly", "--offer-id",
                          "WINBACK50", "--nonce", str(nonce), "--timestamp", str(NOW_MS), "--signature", signature,
                          check=False)
    assert refused.returncode == 1


def test_our_promotional_offer_v1_verifies_with_python():
    nonce = uuid.uuid4()
    signature = storekeeper("offer", "sign", "--key", f"{WORK}/ca/leaf.key.pem", "--key-id", "KEYID12345",
                            "--bundle-id", BUNDLE, "--product-id", "com.example.interop.monthly",
                            "--offer-id", "WINBACK50", "--app-account-token", "ABC-Token", "--nonce", str(nonce),
                            "--timestamp", str(NOW_MS)).stdout.strip()
    message = "\u2063".join([BUNDLE, "KEYID12345", "com.example.interop.monthly", "WINBACK50", "abc-token",
                             str(nonce).lower(), str(NOW_MS)])
    key = serialization.load_pem_private_key(private_key_pem(), password=None).public_key()
    key.verify(base64.b64decode(signature), message.encode(), ec.ECDSA(hashes.SHA256()))


def test_apple_signature_creators_verify_with_us():
    promo = PromotionalOfferV2SignatureCreator(private_key_pem(), "KEYID12345", "issuer-1", BUNDLE).create_signature(
        "com.example.interop.monthly", "WINBACK50", "3000000001")
    claims = json.loads(storekeeper("jws", "verify", "--public-key", f"{WORK}/ca/leaf.key.pem", "-",
                                    stdin=promo).stdout)
    assert claims["header"]["kid"] == "KEYID12345"
    assert claims["payload"]["aud"] == "promotional-offer"
    assert claims["payload"]["offerIdentifier"] == "WINBACK50"
    intro = IntroductoryOfferEligibilitySignatureCreator(private_key_pem(), "KEYID12345", "issuer-1", BUNDLE).create_signature(
        "com.example.interop.monthly", False, "3000000001")
    claims = json.loads(storekeeper("jws", "verify", "--public-key", f"{WORK}/ca/leaf.key.pem", "-",
                                    stdin=intro).stdout)
    assert claims["payload"]["aud"] == "introductory-offer-eligibility"
    assert claims["payload"]["allowIntroductoryOffer"] is False


def public_key():
    return serialization.load_pem_private_key(private_key_pem(), password=None).public_key()


def test_our_signature_creators_verify_with_pyjwt():
    common = ["--key", f"{WORK}/ca/leaf.key.pem", "--key-id", "KEYID12345", "--issuer-id", "issuer-1",
              "--bundle-id", BUNDLE]
    promo = storekeeper("offer", "jws", "--audience", "promotional-offer", *common, "--product-id", "p1",
                        "--offer-id", "o1", "--transaction-id", "3000000001").stdout.strip()
    claims = jwt.decode(promo, public_key(), algorithms=["ES256"], audience="promotional-offer")
    assert claims["productId"] == "p1" and claims["offerIdentifier"] == "o1" and claims["bid"] == BUNDLE
    assert claims["iss"] == "issuer-1" and str(uuid.UUID(claims["nonce"])) == claims["nonce"]
    assert jwt.get_unverified_header(promo)["kid"] == "KEYID12345"
    intro = storekeeper("offer", "jws", "--audience", "introductory-offer-eligibility", *common,
                        "--product-id", "p1", "--transaction-id", "3000000001", "--allow-intro", "true").stdout.strip()
    claims = jwt.decode(intro, public_key(), algorithms=["ES256"], audience="introductory-offer-eligibility")
    assert claims["allowIntroductoryOffer"] is True and claims["transactionId"] == "3000000001"
    commerce = storekeeper("offer", "jws", "--audience", "advanced-commerce-api", *common,
                           "--request", '{"operation":"CREATE_SUBSCRIPTION"}').stdout.strip()
    claims = jwt.decode(commerce, public_key(), algorithms=["ES256"], audience="advanced-commerce-api")
    assert json.loads(base64.b64decode(claims["request"])) == {"operation": "CREATE_SUBSCRIPTION"}


def test_pyjwt_verifies_our_api_token():
    token = storekeeper("token", "--key", f"{WORK}/ca/leaf.key.pem", "--key-id", "KEYID12345",
                        "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--bundle-id", BUNDLE).stdout.strip()
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "ES256", "kid": "KEYID12345", "typ": "JWT"}, header
    claims = jwt.decode(token, public_key(), algorithms=["ES256"], audience="appstoreconnect-v1")
    assert claims["iss"] == "57246542-96fe-1a63-e053-0824d011072a" and claims["bid"] == BUNDLE
    assert claims["exp"] - claims["iat"] == 1200


def main():
    storekeeper("ca", "init", f"{WORK}/ca", "--name", "Interop")
    tests = [(name, function) for name, function in globals().items() if name.startswith("test_")]
    passed = failed = 0
    for name, function in tests:
        try:
            function()
            passed += 1
            print(f"ok   {name}")
        except Exception:
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
    print(f"interop: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
