/**
 * The guard of one evaluation: JSONata's evaluation hooks count steps and measure every value built,
 * and the built-ins that allocate in proportion to their arguments are wrapped to check first.
 */
import { LIMIT_CODES, type JsonataFailure } from './errors';
import type { EvaluationBudget, EvaluationLimits } from './limits';
import { MAX_STEP_DATA_DEPTH } from '../step-data';

export const EVALUATE_ENTRY = Symbol.for('jsonata.__evaluate_entry');
export const EVALUATE_EXIT = Symbol.for('jsonata.__evaluate_exit');

export interface JsonataNode {
  type?: string;
  value?: unknown;
  group?: unknown;
  lhs?: unknown;
  rhs?: unknown;
  arguments?: unknown[];
  [key: string]: unknown;
}

export interface JsonataFunction {
  implementation: (this: unknown, ...args: unknown[]) => unknown;
  signature?: unknown;
}

/** What happens to a node's value next, when that costs work proportional to its size. */
type Role = 'serialized' | 'compared' | 'argument';

/** Nodes whose value is new (as opposed to a reference to existing data, or a pass-through). */
const CREATING_NODES = new Set([
  'function',
  'partial',
  'apply',
  'binary',
  'unary',
  'path',
  'wildcard',
  'descendant',
]);

/**
 * Marks the AST nodes whose values are serialized (`&` turns objects into JSON), deep-compared (`=`,
 * `!=`, `in`) or passed to a function (built-ins cost time proportional to their arguments).
 */
export function nodeRoles(ast: unknown): Map<object, Role> {
  const roles = new Map<object, Role>();
  const pending: unknown[] = [ast];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) {
      pending.push(...(node as unknown[]));
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    const n = node as JsonataNode;
    const mark = (child: unknown, role: Role) => {
      if (typeof child === 'object' && child !== null && !roles.has(child)) roles.set(child, role);
    };
    if (n.type === 'binary' && n.value === '&') [n.lhs, n.rhs].forEach((c) => mark(c, 'serialized'));
    if (n.type === 'binary' && ['=', '!=', 'in'].includes(n.value as string))
      [n.lhs, n.rhs].forEach((c) => mark(c, 'compared'));
    if ((n.type === 'function' || n.type === 'partial') && Array.isArray(n.arguments))
      n.arguments.forEach((c) => mark(c, 'argument'));
    if (n.type === 'apply') mark(n.lhs, 'argument');
    for (const child of Object.values(n)) if (typeof child === 'object') pending.push(child);
  }
  return roles;
}

function isJsonataFunction(value: unknown): boolean {
  return (
    typeof value === 'function' ||
    (typeof value === 'object' &&
      value !== null &&
      ((value as { _jsonata_function?: boolean })._jsonata_function === true ||
        (value as { _jsonata_lambda?: boolean })._jsonata_lambda === true))
  );
}

/**
 * The limits of one evaluation: a step count, and the size of the values it builds and works on.
 * Every failure is deterministic (counts, never clocks), so a workflow replays it identically.
 */
export class Guard {
  /** The first limit hit: JSONata may wrap errors (e.g. `$eval`), the evaluation reports this one. */
  failure: JsonataFailure | undefined;

  constructor(
    private readonly limits: EvaluationLimits,
    private readonly budget: EvaluationBudget,
  ) {}

  private fail(code: string, message: string): never {
    this.failure ??= { code, message };
    throw this.failure;
  }

  /** JSONata awaits what this returns: now and then a pause (EvaluationBudget.pauseAt). */
  step(): Promise<void> | undefined {
    this.budget.steps += 1;
    if (this.budget.steps > this.limits.maxSteps)
      this.fail(LIMIT_CODES.budget, `evaluation exceeded ${this.limits.maxSteps} steps`);
    if (this.budget.clockDue(this.budget.steps)) this.checkTime();
    return this.budget.pauseAt(this.budget.steps);
  }

  /** Fails the evaluation once it has evaluated for longer than maxActiveMs. */
  checkTime(): void {
    if (this.budget.elapsedMs() > this.limits.maxActiveMs)
      this.fail(LIMIT_CODES.time, `evaluation took longer than ${this.limits.maxActiveMs} ms`);
  }

  charge(units: number): void {
    this.budget.work += units;
    if (this.budget.work > this.limits.maxWork) {
      this.fail(
        LIMIT_CODES.budget,
        `evaluation exceeded its work budget of ${this.limits.maxWork} (characters and items built, copied or compared)`,
      );
    }
  }

  unsafeRegex(problem: string): never {
    return this.fail(LIMIT_CODES.unsafeRegex, problem);
  }

  tooLarge(what: string, limit = this.limits.maxValueSize): never {
    return this.fail(LIMIT_CODES.tooLarge, `evaluation built ${what}, more than the limit of ${limit}`);
  }

  checkString(length: number): void {
    if (length > this.limits.maxValueSize) this.tooLarge(`a string of ${length} characters`);
  }

  checkCount(count: number, what: string): void {
    if (count > this.limits.maxSequence) this.tooLarge(`${what} of ${count} items`, this.limits.maxSequence);
  }

  /**
   * The estimated JSON size of a value (characters; numbers count 8), walked without recursion and
   * given up as soon as it passes the value limit or nests deeper than MAX_STEP_DATA_DEPTH. Shared or
   * cyclic structures (`{"a": $x, "b": $x}` nested a few times describes exabytes of JSON) thus cost
   * at most the limit. The walk is charged as work.
   */
  measure(value: unknown, indent = 0): number {
    const limit = this.limits.maxValueSize;
    let size = 0;
    const pending: [unknown, number][] = [[value, 0]];
    while (pending.length > 0) {
      const [item, depth] = pending.pop()!;
      size += indent > 0 ? depth * indent + 1 : 0;
      if (typeof item === 'string') size += item.length + 2;
      else if (typeof item === 'number') size += 8;
      else if (typeof item === 'boolean') size += 5;
      else if (item === null || item === undefined || isJsonataFunction(item)) size += 4;
      else if (depth >= MAX_STEP_DATA_DEPTH) {
        // What is serialized next (JSON.stringify, Temporal, the API) recurses: keep it shallow enough.
        this.fail(
          LIMIT_CODES.tooLarge,
          `evaluation built a value nested deeper than ${MAX_STEP_DATA_DEPTH} levels`,
        );
      } else if (Array.isArray(item)) {
        size += 2 + item.length;
        for (const child of item as unknown[]) pending.push([child, depth + 1]);
      } else if (typeof item === 'object') {
        size += 2;
        for (const [key, child] of Object.entries(item)) {
          size += key.length + 4;
          pending.push([child, depth + 1]);
        }
      }
      if (size > limit) {
        this.charge(limit);
        this.fail(
          LIMIT_CODES.tooLarge,
          `evaluation built a value larger than the limit of ${limit} characters as JSON`,
        );
      }
    }
    this.charge(size);
    return size;
  }

  /** Called by JSONata after every node: checks and charges the value it produced. */
  exit(node: JsonataNode, value: unknown, role: Role | undefined): void {
    if (value === undefined || value === null) return;
    const creates = CREATING_NODES.has(node.type ?? '') || node.group !== undefined;
    if (typeof value === 'string') {
      this.checkString(value.length);
      if (creates) this.charge(value.length);
      if (role === 'argument' || role === 'compared') this.charge(value.length);
      return;
    }
    if (typeof value !== 'object' || isJsonataFunction(value)) return;
    if (role === 'serialized' || role === 'compared') {
      this.measure(value);
      return;
    }
    if (!creates && role !== 'argument') return;
    const count = Array.isArray(value) ? value.length : Object.keys(value).length;
    this.checkCount(count, Array.isArray(value) ? 'an array' : 'an object');
    if (creates) this.charge(count);
    if (role === 'argument') this.charge(count);
  }
}

/**
 * Built-in functions that allocate (or loop) in proportion to a number or a nested structure before
 * any hook sees their result: the wrappers check and charge the size first, then call JSONata's own.
 */
export function guardedBuiltins(
  holder: GuardHolder,
  builtins: Record<string, JsonataFunction>,
): Record<string, { signature: string; implementation: (this: unknown, ...args: never[]) => unknown }> {
  const original = (name: string) => builtins[name]!.implementation;
  // The guard of the evaluation under way (one instance serves one evaluation at a time).
  const current = (): Guard => holder.guard!;
  return {
    pad: {
      signature: '<s-ns?:s>',
      implementation: function (this: unknown, str: unknown, width: unknown, char?: unknown) {
        if (typeof width === 'number' && Number.isFinite(width)) {
          current().checkString(Math.abs(Math.trunc(width)));
          current().charge(Math.abs(Math.trunc(width)));
        }
        return original('pad').call(this, str, width, char);
      },
    },
    join: {
      signature: '<a<s>s?:s>',
      implementation: function (this: unknown, strs: unknown, separator?: unknown) {
        if (Array.isArray(strs)) {
          const sep = typeof separator === 'string' ? separator.length : 0;
          let length = 0;
          for (const item of strs as unknown[]) length += (typeof item === 'string' ? item.length : 0) + sep;
          current().checkString(length);
          current().charge(length);
        }
        return original('join').call(this, strs, separator);
      },
    },
    string: {
      signature: '<x-b?:s>',
      implementation: function (this: unknown, arg: unknown, prettify?: unknown) {
        if (typeof arg === 'object' && arg !== null) current().measure(arg, prettify === true ? 2 : 0);
        return original('string').call(this, arg, prettify);
      },
    },
    clone: {
      signature: '<(oa)-:o>',
      implementation: function (this: unknown, arg: unknown) {
        // A clone is a JSON round trip: twice the size, and the copy is new.
        if (typeof arg === 'object' && arg !== null) current().charge(current().measure(arg));
        return original('clone').call(this, arg);
      },
    },
    distinct: {
      signature: '<x:x>',
      // JSONata's own compares every value with every one kept (quadratic, and deep): this one keys
      // values instead, objects by their JSON with sorted keys (JSONata's equality ignores key order).
      implementation: function (this: unknown, arr: unknown) {
        if (!Array.isArray(arr) || arr.length <= 1) return arr;
        current().charge(arr.length);
        const focus = this as { createSequence(): unknown[] };
        const results = (arr as { sequence?: boolean }).sequence === true ? focus.createSequence() : [];
        const seen = new Set<unknown>();
        const seenJson = new Set<string>();
        for (const value of arr as unknown[]) {
          if (typeof value === 'object' && value !== null && !isJsonataFunction(value)) {
            current().measure(value);
            const json = JSON.stringify(value, sortedKeys);
            if (seenJson.has(json)) continue;
            seenJson.add(json);
          } else {
            if (seen.has(value)) continue;
            seen.add(value);
          }
          results.push(value);
        }
        return results;
      },
    },
  };
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, record[key]]),
  );
}

/** Where an instance's hooks and wrapped built-ins find the guard of the evaluation under way. */
export interface GuardHolder {
  guard: Guard | undefined;
}
