/** Why an input does not match a workflow's input schema, one problem per JSON pointer (validate-input.ts). */
import type { InputProblem } from '../validate-input';

export function InputProblems({ problems, id }: { problems: readonly InputProblem[]; id?: string }) {
  if (problems.length === 0) return null;
  return (
    <div class="notice notice-error" id={id} role="alert">
      <p class="notice-title">The input does not match the workflow's input schema</p>
      <ul class="notice-details">
        {problems.map((p) => (
          <li key={`${p.path}:${p.message}`}>
            <code>{p.path}</code> {p.message}
          </li>
        ))}
      </ul>
    </div>
  );
}
