/**
 * A definition as a diagram, read-only (docs/console.md#composition): its steps top to bottom, each a box
 * with its id, name, kind and `if` (a sleep's with how long it sleeps, a wait_for_event's with the event it
 * waits for, its match and its timeout); a parallel step's branches and a
 * switch's cases side by side; a map's and a loop's steps in a box saying what they repeat over; a
 * workflow step linking to the workflow it starts. Nested lists with names, so that assistive technology (and the tests) can walk it.
 */
import type { Workflow } from '@switchyard/client/browser';
import type { ComponentChildren } from 'preact';
import { Link } from 'wouter-preact';

/**
 * What the diagram reads of a step (docs/definitions.md). Typed here: the generated union of step types
 * is `unknown` as a whole, since the rules step's schema ends in `| unknown` (its `anyOf`).
 */
interface StepBase {
  id: string;
  name?: string;
  if?: string;
}
type Steps = readonly DefinitionStep[];
type DefinitionStep =
  | (StepBase & {
      kind: 'parallel';
      branches: { id: string; steps: Steps; on_error?: 'fail' | 'continue' }[];
    })
  | (StepBase & {
      kind: 'map';
      items: string;
      as?: string;
      concurrency?: number;
      tolerated_failures?: number | string;
      steps: Steps;
    })
  | (StepBase & { kind: 'switch'; cases: { id: string; when: string; steps: Steps }[]; default?: Steps })
  | (StepBase & { kind: 'loop'; until: string; max_iterations: number; steps: Steps })
  | (StepBase & { kind: 'workflow'; workflow: string; version?: number; wait?: boolean })
  | (StepBase & { kind: 'connector'; request: { method?: string; url: string } })
  | (StepBase & { kind: 'approval'; message?: string })
  | (StepBase & { kind: 'sleep'; duration?: string; until?: string })
  | (StepBase & {
      kind: 'wait_for_event';
      event: string;
      match?: string;
      timeout?: string;
      on_timeout?: 'fail' | 'continue';
    })
  | (StepBase & { kind: 'rules' | 'ai' });
type Of<K extends DefinitionStep['kind']> = Extract<DefinitionStep, { kind: K }>;

export function DefinitionDiagram({ steps, label }: { steps: Workflow['steps']; label: string }) {
  return (
    <div class="diagram" data-testid="diagram">
      <StepList steps={steps as Steps} label={label} />
    </div>
  );
}

function StepList({ steps, label }: { steps: Steps; label: string }) {
  return (
    <ol class="flow" aria-label={label}>
      {steps.map((step) => (
        <li key={step.id} class="flow-item">
          <StepBox step={step} />
        </li>
      ))}
    </ol>
  );
}

function StepBox({ step }: { step: DefinitionStep }) {
  return (
    <div
      class={`node kind-${step.kind}`}
      role="group"
      aria-label={`Step ${step.id}, ${step.kind}`}
      data-step={step.id}
    >
      <div class="node-head">
        <span class="mono node-id">{step.id}</span>
        {step.name && <span class="node-name">{step.name}</span>}
        <span class="badge kind">{step.kind}</span>
      </div>
      {step.if && (
        <p class="node-line">
          if <code>{step.if}</code>
        </p>
      )}
      <StepBody step={step} />
    </div>
  );
}

function StepBody({ step }: { step: DefinitionStep }) {
  switch (step.kind) {
    case 'parallel':
      return <Parallel step={step} />;
    case 'switch':
      return <Switch step={step} />;
    case 'map':
      return <MapBody step={step} />;
    case 'loop':
      return <LoopBody step={step} />;
    case 'workflow':
      return <Called step={step} />;
    case 'connector':
      return (
        <p class="node-line">
          <code>
            {step.request.method ?? 'GET'} {step.request.url}
          </code>
        </p>
      );
    case 'approval':
      return step.message ? <p class="node-line">asks “{step.message}”</p> : null;
    case 'sleep':
      return (
        <p class="node-line">
          {step.duration !== undefined ? (
            <>sleeps {step.duration}</>
          ) : (
            <>
              sleeps until <code>{step.until}</code>
            </>
          )}
        </p>
      );
    case 'wait_for_event':
      return <EventWait step={step} />;
    default:
      return null;
  }
}

/** What a wait_for_event waits for, and what happens when nothing comes (the defaults: docs/definitions.md). */
function EventWait({ step }: { step: Of<'wait_for_event'> }) {
  return (
    <>
      <p class="node-line">
        waits for event <span class="mono">{step.event}</span>
        {step.match !== undefined && (
          <>
            {' '}
            where <code>{step.match}</code>
          </>
        )}
      </p>
      <p class="node-line">
        times out after {step.timeout ?? '30d'}, then{' '}
        {step.on_timeout === 'continue' ? 'goes on (output null)' : 'fails'}
      </p>
    </>
  );
}

/** Lists of steps side by side (a parallel step's branches, a switch's cases), each with its heading. */
function Lanes({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <ul class="lanes" aria-label={label}>
      {children}
    </ul>
  );
}

function Lane({
  label,
  heading,
  steps,
  stepsLabel,
}: {
  label: string;
  heading: ComponentChildren;
  steps: Steps | undefined;
  stepsLabel: string;
}) {
  return (
    <li class="lane" aria-label={label}>
      <div class="lane-head">{heading}</div>
      {steps && steps.length > 0 ? (
        <StepList steps={steps} label={stepsLabel} />
      ) : (
        <p class="hint">Nothing runs.</p>
      )}
    </li>
  );
}

function Parallel({ step }: { step: Of<'parallel'> }) {
  return (
    <Lanes label={`Branches of ${step.id}`}>
      {step.branches.map((branch) => (
        <Lane
          key={branch.id}
          label={`Branch ${branch.id}`}
          heading={
            <>
              branch <span class="mono">{branch.id}</span>
              {branch.on_error === 'continue' && <span class="hint"> (a failure continues)</span>}
            </>
          }
          steps={branch.steps}
          stepsLabel={`Steps of branch ${branch.id}`}
        />
      ))}
    </Lanes>
  );
}

function Switch({ step }: { step: Of<'switch'> }) {
  return (
    <Lanes label={`Cases of ${step.id}`}>
      {step.cases.map((item) => (
        <Lane
          key={item.id}
          label={`Case ${item.id}`}
          heading={
            <>
              case <span class="mono">{item.id}</span> when <code>{item.when}</code>
            </>
          }
          steps={item.steps}
          stepsLabel={`Steps of case ${item.id}`}
        />
      ))}
      <Lane
        label="Default"
        heading="default: when no case holds"
        steps={step.default}
        stepsLabel={`Default steps of ${step.id}`}
      />
    </Lanes>
  );
}

/** The steps a map or a loop repeats, in a box whose heading says over what. */
function Body({ stepId, heading, steps }: { stepId: string; heading: ComponentChildren; steps: Steps }) {
  return (
    <div class="body-box">
      <div class="lane-head">{heading}</div>
      <StepList steps={steps} label={`Steps repeated by ${stepId}`} />
    </div>
  );
}

function MapBody({ step }: { step: Of<'map'> }) {
  return (
    <Body
      stepId={step.id}
      steps={step.steps}
      heading={
        <>
          for each <span class="mono">{step.as ?? 'item'}</span> of <code>{step.items}</code>, at most{' '}
          {step.concurrency ?? 10} at once
          {step.tolerated_failures !== undefined && step.tolerated_failures !== 0 && (
            <>, tolerating {String(step.tolerated_failures)} failed</>
          )}
        </>
      }
    />
  );
}

function LoopBody({ step }: { step: Of<'loop'> }) {
  return (
    <Body
      stepId={step.id}
      steps={step.steps}
      heading={
        <>
          repeat until <code>{step.until}</code>, at most {step.max_iterations} times
        </>
      }
    />
  );
}

function Called({ step }: { step: Of<'workflow'> }) {
  const href = `/workflows/${encodeURIComponent(step.workflow)}${step.version ? `?version=${step.version}` : ''}`;
  return (
    <p class="node-line">
      starts workflow <Link href={href}>{step.workflow}</Link>
      {step.version ? ` version ${step.version}` : ' (its latest version)'}
      {step.wait === false ? ' and goes on at once' : ' and waits for it'}
    </p>
  );
}
