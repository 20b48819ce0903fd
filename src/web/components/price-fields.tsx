import { parseUsd } from '../../platform/money/usd.js';

/**
 * Prices are typed in dollars and sent as micro-USDC strings, converted exactly (no float): "19.99"
 * is "19990000". An amount that is not dollars and cents (up to six decimals) is refused here.
 */
export function microFromDollars(typed: string, field: string): string {
  const amount = parseUsd(typed);
  if (amount === undefined) {
    throw new Error(`${field}: enter dollars such as 19.99 (at most six decimals, no separators)`);
  }
  return amount.toString();
}

export function PriceInput({
  id,
  label,
  value,
  onInput,
  help,
}: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  help: string;
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
          aria-describedby={`${id}-help`}
          value={value}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
        <span>USDC</span>
      </div>
      <p id={`${id}-help`} class="muted small">
        {help}
      </p>
    </>
  );
}
