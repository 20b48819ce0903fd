import { formatUsd, MAX_MICRO_USDC, parseUsd } from '../../platform/money/usd.js';
import { FieldError, type FormErrors } from './form-errors.js';

/**
 * Prices are typed in dollars and sent as micro-USDC strings, converted exactly (no float): "19.99"
 * is "19990000". What is not an amount is refused here, saying which rule it breaks.
 */
export function priceProblem(typed: string, label: string): string | undefined {
  const text = dollars(typed);
  if (!text || parseUsd(text) !== undefined) return undefined;
  if (text.startsWith('-')) return `${label} cannot be negative.`;
  if (/^\d*\.\d{7,}$/.test(text)) return `${label} has at most six decimals (USDC has six), such as 19.99.`;
  if (/^\d+(\.\d+)?$/.test(text)) return `${label} is at most $${formatUsd(MAX_MICRO_USDC)}.`;
  if (/[,\s]/.test(text)) return `${label}: enter the amount without separators, such as 1999.50.`;
  return `${label}: enter an amount in dollars, such as 19.99.`;
}

/** What was typed, without the dollar sign a person may well type first. */
function dollars(typed: string): string {
  return typed.trim().replace(/^\$/, '');
}

/** `priceProblem` of each price input, by input id, in the form's order. */
export function pricedProblems(
  inputs: Array<{ id: string; label: string; typed: string }>,
): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const { id, label, typed } of inputs) {
    const problem = priceProblem(typed, label);
    if (problem) problems[id] = problem;
  }
  return problems;
}

/** The micro-USDC string of an amount `priceProblem` accepted. */
export function microFromDollars(typed: string): string {
  const amount = parseUsd(dollars(typed));
  if (amount === undefined) throw new Error(`not an amount: ${typed}`);
  return amount.toString();
}

export function PriceInput({
  id,
  label,
  value,
  onInput,
  help,
  form,
}: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  help: string;
  form: FormErrors;
}) {
  return (
    <>
      <label for={id}>{label}</label>
      <div class="money">
        <span aria-hidden="true">$</span>
        <input
          id={id}
          inputMode="decimal"
          autoComplete="off"
          placeholder="0.00"
          {...form.inputProps(id, `${id}-help`)}
          value={value}
          onInput={(event) => {
            form.edited(id);
            onInput(event.currentTarget.value);
          }}
        />
        <span>USDC</span>
      </div>
      <FieldError form={form} id={id} />
      <p id={`${id}-help`} class="muted small">
        {help}
      </p>
    </>
  );
}
