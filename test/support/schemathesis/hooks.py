"""Schemathesis hooks for test/integration/openapi-fuzz.test.ts and for a run against `npm start`
(docs/development.md; loaded through SCHEMATHESIS_HOOKS).

Three things, each as narrow as it can be:

1. The key under test is never revoked: `DELETE /v1/api-keys/{id}` with its id (SY_FUZZ_KEY_ID, or looked
   up from the key itself, SY_FUZZ_KEY) is dropped before it is sent (the keys Schemathesis creates
   itself are revoked like any other).
2. Inbound hooks to the fixture workflow (SY_FUZZ_HOOK_WORKFLOW) are signed with its hook secret, as a
   real sender signs them (docs/webhooks.md#signing-a-request), so that the fuzzer reaches what lies
   behind the signature check; cases without the header or with a malformed one are sent as drawn.
3. `positive_data_acceptance` failures are dropped only where the API answers 400 to a request that the
   document's schemas allow for a reason the document lists for that operation: its 400 response's
   `x-semantic-errors` (src/api/semantic-errors.ts), the rules no JSON Schema can state (a cursor from
   another list, a JSONata expression that does not parse, input that fails the workflow's own
   input_schema, a webhook host that does not resolve, text the database cannot store, more steps than
   the workspace allows), each with its error code and the patterns of the details' path and message.
   Any other 400 to a schema-valid request, and every failure of every other check, still fails the run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import time
import urllib.request

import schemathesis

_KEY_ID = os.environ.get("SY_FUZZ_KEY_ID", "")
# The key under test itself, for a run that does not know its id (against `npm start`, docs/development.md):
# its id is looked up once, among the workspace's keys, by the key's prefix.
KEY = os.environ.get("SY_FUZZ_KEY", "")
HOOK_WORKFLOW = os.environ.get("SY_FUZZ_HOOK_WORKFLOW", "")
HOOK_SECRET = os.environ.get("SY_FUZZ_HOOK_SECRET", "")


def operation_id(case) -> str:
    return case.operation.definition.raw.get("operationId", "")


def key_id(case) -> str:
    """The id of the key under test ("" when unknown)."""
    global _KEY_ID
    if _KEY_ID or not KEY:
        return _KEY_ID
    base = case.operation.schema.get_base_url().rstrip("/")
    cursor = ""
    for _ in range(1000):
        url = f"{base}/v1/api-keys?limit=100" + (f"&cursor={cursor}" if cursor else "")
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {KEY}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            page = json.load(answer)
        for item in page["data"]:
            if KEY.startswith(item["prefix"]):
                _KEY_ID = item["id"]
                return _KEY_ID
        cursor = page.get("next_cursor") or ""
        if not cursor:
            break
    raise RuntimeError("SY_FUZZ_KEY is not one of this workspace's keys")


@schemathesis.hook
def filter_case(context, case) -> bool:
    if operation_id(case) == "revokeApiKey" and key_id(case):
        return (case.path_parameters or {}).get("id") != key_id(case)
    return True


@schemathesis.hook
def before_call(context, case, kwargs) -> None:
    if operation_id(case) == "revokeApiKey" and (case.path_parameters or {}).get("id") == key_id(case):
        # A stateful link that carried the key's own id: send it to a key that cannot exist instead.
        case.path_parameters = {**case.path_parameters, "id": "key_kept_by_the_fuzz_test"}
    if operation_id(case) == "triggerHook" and HOOK_SECRET:
        # Only a positive case that carries the header is signed: cases without it, or with a value that
        # breaks its pattern, are there to see the service refuse them.
        headers = dict(case.headers or {})
        positive = case.meta is not None and case.meta.generation.mode.is_positive
        if (
            not positive
            or (case.path_parameters or {}).get("workflow") != HOOK_WORKFLOW
            or "X-Service-Signature" not in headers
            or not isinstance(case.body, (dict, list))
        ):
            return
        raw = json.dumps(case.body, separators=(",", ":")).encode()
        timestamp = str(int(time.time()))
        signature = hmac.new(HOOK_SECRET.encode(), f"{timestamp}.".encode() + raw, hashlib.sha256).hexdigest()
        headers["X-Service-Signature"] = f"t={timestamp},v1={signature}"
        case.headers = headers
        # Send exactly the bytes that were signed.
        kwargs["data"] = raw


def semantic_rules(case) -> list[dict]:
    """The operation's documented semantic 400s: `x-semantic-errors` of its 400 response (src/api/semantic-errors.ts)."""
    responses = case.operation.definition.raw.get("responses", {})
    return list((responses.get("400") or {}).get("x-semantic-errors") or [])


def documented_semantic_rejection(case, response) -> bool:
    rules = semantic_rules(case)
    if not rules or response.status_code != 400:
        return False
    try:
        error = response.json()["error"]
    except Exception:
        return False
    details = error.get("details") or []
    if not details:
        return False
    for detail in details:
        if not any(
            error.get("code") == rule["code"]
            and re.fullmatch(rule["path"], str(detail.get("path", "")))
            and re.fullmatch(rule["message"], str(detail.get("message", "")), re.DOTALL)
            for rule in rules
        ):
            return False
    return True


# Where dropped failures are listed (one JSON line each), to review what the rules above let through.
DROPPED_LOG = os.environ.get("SY_FUZZ_DROPPED_LOG", "")


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    if "positive_data_acceptance" in getattr(failure, "checks", ()) and documented_semantic_rejection(case, response):
        if DROPPED_LOG:
            with open(DROPPED_LOG, "a", encoding="utf-8") as log:
                log.write(json.dumps({"operation": operation_id(case), "error": response.json()["error"]}) + "\n")
        return False
    return True
