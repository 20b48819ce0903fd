import { money, plural } from '../format.js';

export interface SalesDay {
  date: string;
  sales: number;
  amount_micro: string;
  net_micro: string;
}

/**
 * Sales per day as bars. Heights compare bigint amounts exactly (scaled to whole pixels); the
 * same numbers are in a table for screen readers.
 */
export function SalesChart({ days }: { days: SalesDay[] }) {
  const height = 120;
  const barWidth = 10;
  const gap = 3;
  const max = days.reduce(
    (top, day) => (BigInt(day.amount_micro) > top ? BigInt(day.amount_micro) : top),
    0n,
  );
  const width = days.length * (barWidth + gap);
  const total = days.reduce((sum, day) => sum + BigInt(day.amount_micro), 0n);
  const count = days.reduce((sum, day) => sum + day.sales, 0);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`Sales over the last ${days.length} days: ${plural(count, 'sale')}, ${money(total.toString())}`}
      >
        {days.map((day, index) => {
          const amount = BigInt(day.amount_micro);
          const bar = max === 0n ? 0 : Number((amount * BigInt(height - 4)) / max) + (amount > 0n ? 2 : 0);
          return (
            <rect
              key={day.date}
              x={index * (barWidth + gap)}
              y={height - bar}
              width={barWidth}
              height={bar}
              class="bar"
            >
              <title>{`${day.date}: ${plural(day.sales, 'sale')}, ${money(day.amount_micro)}`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption>
        {plural(count, 'sale')}, {money(total.toString())} gross over the last {days.length} days (UTC)
      </figcaption>
      <details>
        <summary>Per day</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Sales</th>
              <th scope="col">Gross</th>
              <th scope="col">Net</th>
            </tr>
          </thead>
          <tbody>
            {days
              .filter((day) => day.sales > 0)
              .map((day) => (
                <tr key={day.date}>
                  <td>{day.date}</td>
                  <td>{day.sales}</td>
                  <td>{money(day.amount_micro)}</td>
                  <td>{money(day.net_micro)}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
