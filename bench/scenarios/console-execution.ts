/**
 * The console's run page with 200 steps (the goal: it opens in under a second): a finished execution of
 * 200 rules steps, opened in headless Chromium (the machine's, as the browser tests use it) from a
 * signed-in session, timed from the navigation's start until all its step rows are on the page. Cold is
 * the first load (nothing cached); warm loads reuse the cached assets, as a person moving between runs
 * does. Each load's split: the GET /v1/executions/{id} call (auth, describe and history from Temporal,
 * JSON), and the render after its answer.
 *
 * Not in the full run: `BENCH_SCENARIOS=console_execution npm run bench` (BENCH_CONSOLE_LOADS warm loads,
 * 10 by default).
 */
import type { Definition } from '../../core/definitions/schema';
import { launchBrowser } from '../../test/support/browser';
import { progress } from '../stack';
import { round, summarizeLatencies } from '../stats';
import type { BenchContext } from './common';

const WORKFLOW_ID = 'bench-console-200';
export const CONSOLE_STEP_COUNT = 200;

function twoHundredSteps(): Definition {
  return {
    id: WORKFLOW_ID,
    name: 'Benchmark: a 200-step run to open in the console',
    steps: Array.from({ length: CONSOLE_STEP_COUNT }, (_, index) => ({
      id: `s${String(index + 1).padStart(3, '0')}`,
      kind: 'rules' as const,
      rules: [],
      default: {
        step: index + 1,
        note: `output of step ${index + 1}`,
        values: [index, index * 2, index * 3],
      },
    })),
  };
}

interface Load {
  total_ms: number;
  api_ms: number;
  render_ms: number;
}

export async function benchConsoleExecution(ctx: BenchContext, loads: number) {
  const { stack, api } = ctx;
  progress(`console_execution: a run of ${CONSOLE_STEP_COUNT} steps`);
  await api.createWorkflow(twoHundredSteps());
  const executionId = await api.trigger(WORKFLOW_ID, {});
  for (let waited = 0; ; waited += 250) {
    const body = JSON.parse(await api.getExecution(executionId)) as { status: string; steps: unknown[] };
    if (body.status === 'success' && body.steps.length === CONSOLE_STEP_COUNT + 1) break;
    if (body.status !== 'running' || waited > 120_000)
      throw new Error(`console_execution: the run ended ${body.status} with ${body.steps.length} steps`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  const browser = await launchBrowser();
  try {
    // The page forbids eval (its CSP); the measuring predicate below needs it, and nothing else changes.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    const signIn = await context.request.post(`${stack.baseUrl}/console/session`, {
      data: { api_key: stack.apiKey },
    });
    if (signIn.status() !== 201) throw new Error(`console_execution: sign-in answered ${signIn.status()}`);
    const page = await context.newPage();
    // The console asks for its session only when this browser signed in through it before.
    await page.goto(`${stack.baseUrl}/favicon.svg`);
    await page.evaluate(`localStorage.setItem('switchyard.console.signed-in', '1')`);

    const rows = CONSOLE_STEP_COUNT + 1; // the trigger, then every step
    const measure = async (): Promise<Load> => {
      await page.goto(`${stack.baseUrl}/runs/${executionId}`, { waitUntil: 'commit' });
      await page.waitForFunction(
        `document.querySelectorAll('[data-testid="step"]').length >= ${rows} && (window.__rendered ??= performance.now())`,
        undefined,
        { polling: 'raf', timeout: 30_000 },
      );
      return page.evaluate<Load>(`(() => {
        const call = performance.getEntriesByType('resource').find((e) => e.name.includes('/v1/executions/'));
        return {
          total_ms: window.__rendered,
          api_ms: call ? call.responseEnd - call.startTime : NaN,
          render_ms: call ? window.__rendered - call.responseEnd : NaN,
        };
      })()`);
    };

    const cold = await measure();
    const warm: Load[] = [];
    for (let i = 0; i < loads; i++) warm.push(await measure());
    const summary = (pick: (load: Load) => number) => summarizeLatencies(warm.map(pick));
    const result = {
      steps: CONSOLE_STEP_COUNT,
      loads,
      cold: { total_ms: round(cold.total_ms), api_ms: round(cold.api_ms), render_ms: round(cold.render_ms) },
      warm_total_ms: summary((l) => l.total_ms),
      warm_api_ms: summary((l) => l.api_ms),
      warm_render_ms: summary((l) => l.render_ms),
    };
    progress(
      `console_execution: cold ${result.cold.total_ms} ms, warm p50 ${result.warm_total_ms.p50} ms (API ${result.warm_api_ms.p50} ms, render ${result.warm_render_ms.p50} ms)`,
    );
    return result;
  } finally {
    await browser.close();
  }
}
