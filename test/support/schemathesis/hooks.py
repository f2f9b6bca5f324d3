"""Schemathesis hooks for test/integration/openapi-fuzz.test.ts (loaded through SCHEMATHESIS_HOOKS).

Three things, each as narrow as it can be:

1. The key under test is never revoked: `DELETE /v1/api-keys/{id}` with its id (SY_FUZZ_KEY_ID) is
   dropped before it is sent (the keys Schemathesis creates itself are revoked like any other).
2. Inbound hooks to the fixture workflow (SY_FUZZ_HOOK_WORKFLOW) are signed with its hook secret, as a
   real sender signs them (docs/webhooks.md#signing-a-request), so that the fuzzer reaches what lies
   behind the signature check; cases without the header or with a malformed one are sent as drawn.
3. `positive_data_acceptance` failures are dropped only where the API answers 400 to a request that the
   document's schemas allow, as docs/api.md#errors says it does, for a rule that no JSON Schema can
   state (a cursor from another list, a JSONata expression that does not parse, input that fails the
   workflow's own input_schema, text the database cannot store, more steps than the workspace allows);
   the document describes each one, and
   SEMANTIC_400 below lists them with the error code and the detail the service answers with. Any other
   400 to a schema-valid request, and every failure of every other check, still fails the run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import time

import schemathesis

KEY_ID = os.environ.get("SY_FUZZ_KEY_ID", "")
HOOK_WORKFLOW = os.environ.get("SY_FUZZ_HOOK_WORKFLOW", "")
HOOK_SECRET = os.environ.get("SY_FUZZ_HOOK_SECRET", "")


def operation_id(case) -> str:
    return case.operation.definition.raw.get("operationId", "")


@schemathesis.hook
def filter_case(context, case) -> bool:
    if operation_id(case) == "revokeApiKey" and KEY_ID:
        return (case.path_parameters or {}).get("id") != KEY_ID
    return True


@schemathesis.hook
def before_call(context, case, kwargs) -> None:
    if operation_id(case) == "revokeApiKey" and (case.path_parameters or {}).get("id") == KEY_ID:
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


# operationId -> rules: (error code, JSON pointer of the detail, what its message says). A rejection is
# accepted only when the answer is 400 with that code and *every* detail matches one of the rules.
LIST_CURSOR = ("invalid_request", r"/cursor", r"(is invalid|does not match the filters)")
DEFINITION_RULES = [
    # The checks `checkDefinition` (src/definitions/validate.ts) runs after the schema has passed.
    ("invalid_definition", r"/steps/\d+(/.*)?", r"(expression|template \{\{ .* \}\}) does not parse: .*"),
    ("invalid_definition", r"/steps/\d+(/.*)?", r"(expression|template \{\{ .* \}\}) refers to step \".*\", which does not come earlier in the workflow"),
    ("invalid_definition", r"/steps/\d+(/.*)?", r"(expression|template \{\{ .* \}\}) (reads secrets|mixes secrets|must name the secret).*"),
    ("invalid_definition", r"/steps/\d+(/.*)?", r"empty template \{\{ \}\}"),
    ("invalid_definition", r"/steps/\d+(/.*)?", r"a string that uses secrets cannot hold other templates.*"),
    ("invalid_definition", r"/steps/\d+/id", r"duplicate step id \".*\""),
    ("invalid_definition", r"/steps/\d+/output_schema", r"is not a valid JSON Schema: .*"),
    ("invalid_definition", r"/input_schema", r"is not a valid JSON Schema: .*"),
    ("invalid_definition", r"/trigger/timezone", r"(must be an IANA time zone name.*|must be spelt \".*\")"),
    ("invalid_definition", r"/trigger/input(/.*)?", r".*\(the schedule's input must satisfy the input_schema\)"),
    ("invalid_definition", r"/trigger/cron", r".*"),
    # The workspace's steps_per_definition (200 by default), below the schema's 500.
    ("invalid_definition", r"/steps", r"has \d+ steps; this workspace allows at most \d+ per definition \(limit steps_per_definition\)"),
]
# Stored text cannot hold U+0000 (PostgreSQL cannot store it; the document's description says so).
NUL = ("invalid_request", r"", r"contains U\+0000")
SEMANTIC_400: dict[str, list[tuple[str, str, str]]] = {
    "listApiKeys": [LIST_CURSOR],
    "listWorkflows": [LIST_CURSOR],
    "listExecutions": [LIST_CURSOR],
    "listSecrets": [LIST_CURSOR],
    "listWebhooks": [LIST_CURSOR],
    "listWebhookDeliveries": [LIST_CURSOR],
    "listWorkflowVersions": [LIST_CURSOR],
    "createWorkflow": [*DEFINITION_RULES, NUL],
    "saveWorkflowVersion": [
        *DEFINITION_RULES,
        NUL,
        # The body's id, when given, must be the URL's.
        ("invalid_definition", r"/id", r"must be '.*'"),
    ],
    # Trigger input is checked against the workflow's own input_schema, which the document cannot know.
    "triggerWorkflow": [("invalid_input", r"(/.*)?", r".*")],
    "triggerHook": [("invalid_input", r"(/.*)?", r".*")],
    "retryExecution": [("invalid_input", r"/input(/.*)?", r".*")],
    "createApiKey": [NUL],
    "createWebhook": [NUL],
    "putSecret": [NUL],
}


def documented_semantic_rejection(case, response) -> bool:
    rules = SEMANTIC_400.get(operation_id(case))
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
            error.get("code") == code
            and re.fullmatch(path, str(detail.get("path", "")))
            and re.fullmatch(message, str(detail.get("message", "")), re.DOTALL)
            for code, path, message in rules
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
