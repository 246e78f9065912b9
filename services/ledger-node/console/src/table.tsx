// A table that scrolls sideways on a narrow screen: a header row of column names (numeric columns right-aligned,
// class `n`), then the rows given.
import type { ComponentChildren } from 'preact';

export interface Column {
  label: string;
  /** Right-aligned: heights, counts, rounds. */
  numeric?: boolean;
}

export function Table({
  class: className,
  columns,
  children,
}: {
  class?: string;
  columns: readonly Column[];
  children: ComponentChildren;
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
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
