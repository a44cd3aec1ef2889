"""Schemathesis hooks for tests/schemathesis/run.sh (loaded through SCHEMATHESIS_HOOKS).

An app with `legacyReceiptFlow` sends posted receipts to Apple's verifyReceipt: generated app
settings never turn it on, so that no request of the run tries to leave the machine (the run
has no network; such a request would answer a correct but unhelpful 503 `app_store_unavailable`).
"""

import schemathesis


@schemathesis.hook
def map_case(context, case):
    if isinstance(case.body, dict) and case.body.get("legacyReceiptFlow"):
        case.body["legacyReceiptFlow"] = False
    return case
