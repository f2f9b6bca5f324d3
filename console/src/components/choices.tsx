/**
 * A fieldset of options, each an input with its own label: radio buttons for one choice (a key's scope),
 * checkboxes for several (an endpoint's events). Each input's id is `${name}-${option}`.
 */
export function Choices<T extends string>({
  legend,
  type,
  name,
  options,
  checked,
  onChange,
  hint,
}: {
  legend: string;
  type: 'radio' | 'checkbox';
  /** The radio group's name, and the prefix of the inputs' ids. */
  name: string;
  options: readonly T[];
  checked: (option: T) => boolean;
  onChange: (option: T, checked: boolean) => void;
  /** Said after an option's name. */
  hint?: (option: T) => string;
}) {
  const radio = type === 'radio';
  return (
    <fieldset>
      <legend>{legend}</legend>
      {options.map((option) => (
        <div class="checkbox" key={option}>
          <input
            id={`${name}-${option}`}
            type={type}
            name={radio ? name : undefined}
            value={radio ? option : undefined}
            checked={checked(option)}
            onChange={(e) => onChange(option, e.currentTarget.checked)}
          />
          <label for={`${name}-${option}`}>
            {option}
            {hint && <span class="hint">{hint(option)}</span>}
          </label>
        </div>
      ))}
    </fieldset>
  );
}
