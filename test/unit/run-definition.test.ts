/**
 * The snapshot of a definition a run keeps (core/definitions/run-definition.ts): descriptions go at every
 * depth, the input_schema and the trigger at the top; everything else stays as written.
 */
import { expect } from 'chai';
import { runDefinition } from '../../core/definitions/run-definition';
import type { Definition } from '../../core/definitions/schema';

const rules = (id: string) => ({
  id,
  kind: 'rules' as const,
  description: `about ${id}`,
  rules: [{ when: 'true', output: { description: 'user data' } }],
});

describe('runDefinition', () => {
  const definition: Definition = {
    id: 'w',
    name: 'W',
    description: 'long',
    trigger: { type: 'api' },
    input_schema: { type: 'object' },
    steps: [
      {
        id: 'pick',
        kind: 'switch',
        description: 'a switch',
        cases: [{ id: 'one', when: 'true', steps: [rules('a')] }],
        default: [rules('b')],
      },
      { id: 'each', kind: 'map', items: 'input.list', steps: [rules('c')] },
      { id: 'again', kind: 'loop', until: 'true', max_iterations: 2, steps: [rules('d')] },
    ],
  };

  it('leaves out the description, input_schema and trigger of the definition, keeps its id and name', () => {
    const kept = runDefinition(definition);
    expect(kept).to.not.have.any.keys('description', 'input_schema', 'trigger');
    expect(kept).to.include({ id: 'w', name: 'W' });
  });

  it('leaves out the description of every step, nested ones included, and keeps user data', () => {
    const text = JSON.stringify(runDefinition(definition));
    expect(text).to.not.match(/"description":"(about|a switch)/);
    expect(text.match(/"description":"user data"/g)).to.have.length(4);
    expect(JSON.parse(text).steps[0].default[0]).to.deep.equal({
      id: 'b',
      kind: 'rules',
      rules: [{ when: 'true', output: { description: 'user data' } }],
    });
  });

  it('changes nothing in the definition it is given', () => {
    const before = JSON.stringify(definition);
    runDefinition(definition);
    expect(JSON.stringify(definition)).to.equal(before);
  });
});
