/**
 * The 400s an operation answers to a request its JSON Schemas allow: rules no JSON Schema can state (a
 * cursor bound to the list it came from, JSONata that must parse, input checked against the workflow's
 * own input_schema, a host that must resolve, text PostgreSQL cannot store). Each route lists its own
 * (route.ts `semanticErrors`); the OpenAPI document shows them in the operation's 400 response, in prose
 * and as `x-semantic-errors` (openapi.ts), and the Schemathesis hooks (test/support/schemathesis/hooks.py)
 * read that extension from the served document: a schema-valid request may be refused only for a reason
 * listed there, so the list and the document cannot drift apart.
 */
import type { ErrorCode } from '../../platform/errors';

export interface SemanticError {
  /** The error code of the 400 body. */
  code: ErrorCode;
  /** A regular expression (whole match) over each detail's `path`. */
  path: string;
  /** A regular expression (whole match) over each detail's `message`. */
  message: string;
  /** What the rule is, for the reader of the document. */
  description: string;
}

/** Every list: its cursor must be one the same list issued, in this workspace, for the same filters. */
export const LIST_CURSOR: SemanticError = {
  code: 'invalid_request',
  path: '/cursor',
  message: '(is invalid|does not match the filters)',
  description:
    "`cursor` is not a next_cursor this list issued for this workspace and these filters (a cursor is opaque: only the service's own is valid).",
};

/** Text the service stores cannot hold U+0000 (PostgreSQL cannot store it). */
export const NUL_TEXT: SemanticError = {
  code: 'invalid_request',
  path: '',
  message: 'contains U\\+0000',
  description: 'A string the service would store contains U+0000, which PostgreSQL cannot store.',
};

/** The checks `checkDefinition` (src/definitions/validate.ts) runs once the definition's schema has passed. */
export const DEFINITION_ERRORS: SemanticError[] = [
  {
    code: 'invalid_definition',
    path: '/(steps/\\d+|output)(/.*)?',
    message: '(expression|template \\{\\{ .* \\}\\}) does not parse: .*',
    description:
      "A JSONata expression (`if`, `when`, a map's `items`, a loop's `until`) or a `{{ }}` template (in a step or the definition's `output`) does not parse.",
  },
  {
    code: 'invalid_definition',
    path: '/(steps/\\d+|output)(/.*)?',
    message: '(expression|template \\{\\{ .* \\}\\}) refers to step ".*", which .*',
    description:
      'An expression or template reads a step it cannot see: one that does not exist or does not come earlier, a step inside a container from outside it, a step of another branch or case, or a container from inside it.',
  },
  {
    code: 'invalid_definition',
    path: '/(steps/\\d+|output)(/.*)?',
    message: '(expression|template \\{\\{ .* \\}\\}) (reads secrets|mixes secrets|must name the secret).*',
    description:
      'An expression reads secrets, or a template mixes a secret with other values or does not name one secret.',
  },
  {
    code: 'invalid_definition',
    path: '/(steps/\\d+|output)(/.*)?',
    message: 'empty template \\{\\{ \\}\\}',
    description: 'A template `{{ }}` is empty.',
  },
  {
    code: 'invalid_definition',
    path: '/steps/\\d+(/.*)?',
    message: 'a string that uses secrets cannot hold other templates.*',
    description: 'A string that uses a secret holds other templates too.',
  },
  {
    code: 'invalid_definition',
    path: '/steps/\\d+(/.*)?/id',
    message: 'duplicate (step|branch|case) id ".*" \\(also at .*\\)',
    description:
      'Two steps share an id (step ids are unique in the whole definition, nested steps included), or two branches of a parallel step, or two cases of a switch.',
  },
  {
    code: 'invalid_definition',
    path: '/steps/\\d+(/.*)?/cases/\\d+/id',
    message: '"default" names the default steps.*',
    description: 'A switch case has the id `default`, which names the default steps in its output and runs.',
  },
  {
    code: 'invalid_definition',
    path: '/steps/\\d+(/.*)?',
    message: 'is nested \\d+ levels deep; steps nest at most \\d+ levels.*',
    description: 'Steps nest at most 5 levels (top-level steps are level 1).',
  },
  {
    code: 'invalid_definition',
    path: '/steps/\\d+(/.*)?/items',
    message: 'must be one expression .* or one whole template .*',
    description: "A map's `items` is text around templates, not one expression or one whole template.",
  },
  {
    code: 'invalid_definition',
    path: '/steps/\\d+(/.*)?/until',
    message: 'must be an RFC 3339 time .*, or a template giving one .*',
    description:
      "A sleep's `until` written out (without a template) is not an RFC 3339 time (a date that does not exist, such as February 30th, is not one).",
  },
  {
    code: 'invalid_definition',
    path: '/steps/\\d+(/.*)?/output_schema',
    message: 'is not a valid JSON Schema: .*',
    description:
      "A step's `output_schema` is not a JSON Schema the service can compile within its bounds (size, depth, RE2 patterns).",
  },
  {
    code: 'invalid_definition',
    path: '/input_schema',
    message: 'is not a valid JSON Schema: .*',
    description:
      '`input_schema` is not a JSON Schema the service can compile within its bounds (size, depth, RE2 patterns).',
  },
  {
    code: 'invalid_definition',
    path: '/trigger/timezone',
    message: '(must be an IANA time zone name.*|must be spelt ".*")',
    description:
      "The schedule's `timezone` is not an IANA time zone name as spelt in the time zone database.",
  },
  {
    code: 'invalid_definition',
    path: '/trigger/input(/.*)?',
    message: ".*\\(the schedule's input must satisfy the input_schema\\)",
    description: "The schedule's `input` does not satisfy the definition's `input_schema`.",
  },
  {
    code: 'invalid_definition',
    path: '/trigger/cron',
    message: '.*',
    description: "The schedule's `cron` is not a cron expression the scheduler accepts.",
  },
  {
    code: 'invalid_definition',
    path: '/trigger/if',
    message: 'expression does not parse: .*',
    description:
      "An event trigger's `if` is not valid JSONata (or holds a regular expression RE2 cannot run).",
  },
  {
    code: 'invalid_definition',
    path: '/(concurrency/key|throttle/key|debounce/key|priority)',
    message: 'expression does not parse: .*',
    description:
      "Flow control's `concurrency.key`, `throttle.key`, `debounce.key` or `priority` is not valid JSONata.",
  },
  {
    code: 'invalid_definition',
    path: '/throttle/period',
    message: 'must be at least 1s',
    description: "A throttle's `period` shorter than one second.",
  },
  {
    code: 'invalid_definition',
    path: '/debounce/period',
    message: 'must be at least 1s',
    description: "A debounce's `period` shorter than one second.",
  },
  {
    code: 'invalid_definition',
    path: '/debounce/max_wait',
    message: 'must be at least the period \\(.*\\)',
    description: "A debounce's `max_wait` shorter than its `period`.",
  },
  {
    code: 'invalid_definition',
    path: '/(concurrency/key|throttle/key|debounce/key|priority)',
    message: 'expression reads .*; it is evaluated before any step and sees only input',
    description:
      "Flow control's `concurrency.key`, `throttle.key`, `debounce.key` or `priority` reads steps, secrets or the execution: it is evaluated before any step, over the input only.",
  },
  {
    code: 'invalid_definition',
    path: '/steps',
    message:
      'has \\d+ steps?( \\(\\d+ top-level, \\d+ nested\\))?; this workspace allows at most \\d+ per definition \\(limit steps_per_definition\\)',
    description:
      "More steps than the workspace's `steps_per_definition` limit, nested steps and containers included (200 by default).",
  },
  {
    code: 'invalid_definition',
    path: '/steps',
    message:
      'has \\d+ steps \\(\\d+ top-level, \\d+ nested\\); a definition holds at most \\d+, nested steps included',
    description: 'More than 500 steps, nested steps and containers included, whatever the workspace allows.',
  },
];

/** Trigger input is checked against the workflow's own input_schema, which the document cannot know. */
export const TRIGGER_INPUT: SemanticError = {
  code: 'invalid_input',
  path: '(/.*)?',
  message: '.*',
  description:
    "The input does not satisfy the workflow's `input_schema`, or the definition's `debounce.key` fails on it.",
};

/** A retry's new input, checked against the workflow's input_schema. */
export const RETRY_INPUT: SemanticError = {
  code: 'invalid_input',
  path: '/input(/.*)?',
  message: '.*',
  description: "The new `input` does not satisfy the workflow's `input_schema`.",
};

/** A webhook URL's host is checked by DNS: it must resolve, and only to public addresses. */
export const WEBHOOK_URL: SemanticError = {
  code: 'invalid_webhook_url',
  path: '/url',
  message: '.*',
  description:
    "The URL's host does not resolve, or resolves to a private, loopback or link-local address (or the URL is plain http, has credentials, or is not a URL the guard can parse) where the operator did not set ALLOW_PRIVATE_DESTINATIONS.",
};

/** A new version's body may repeat the workflow's id, but only the URL's. */
export const VERSION_ID: SemanticError = {
  code: 'invalid_definition',
  path: '/id',
  message: "must be '.*'",
  description: "The body's `id` is not the URL's (it may be left out).",
};

/** An event's data is bounded in bytes as JSON, which no JSON Schema keyword states. */
export const EVENT_DATA_SIZE: SemanticError = {
  code: 'invalid_request',
  path: '(/\\d+)?/data',
  message: "is \\d+ bytes as JSON; an event's data holds at most \\d+",
  description: "An event's `data` is larger than 256 KiB (262,144 bytes) as JSON.",
};
/** A schedule backfill's window (src/schedules/backfill.ts): what its two RFC 3339 times must also be. */
export const BACKFILL_WINDOW: SemanticError[] = [
  {
    code: 'invalid_request',
    path: '/start',
    message: 'must not be before 1970-01-01T00:00:00Z',
    description: '`start` is before 1970-01-01T00:00:00Z.',
  },
  {
    code: 'invalid_request',
    path: '/end',
    message: 'must be later than start',
    description: '`end` is not later than `start`.',
  },
  {
    code: 'invalid_request',
    path: '/end',
    message: 'must not be in the future',
    description: '`end` is in the future: a backfill covers the past only.',
  },
  {
    code: 'invalid_request',
    path: '/end',
    message: 'the window holds more than \\d+ runs',
    description: 'The window holds more runs of the schedule than one backfill starts (1,000).',
  },
];
