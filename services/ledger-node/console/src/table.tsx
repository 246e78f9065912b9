// A table that scrolls sideways on a narrow screen: a header row of column names (numeric columns right-aligned,
// class `n`), then one row per item.
import type { VNode } from 'preact';

export interface Column {
  label: string;
  /** Right-aligned: heights, counts, rounds. */
  numeric?: boolean;
}

export function Table<T>({
  class: className,
  columns,
  rows,
  row,
}: {
  class?: string;
  columns: readonly Column[];
  rows: readonly T[];
  /** The `<tr>` of an item, with its key. */
  row: (item: T, index: number) => VNode;
}) {
  return (
    <div class="table-wrap">
      <table class={className}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" class={c.numeric ? 'n' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{rows.map(row)}</tbody>
      </table>
    </div>
  );
}
