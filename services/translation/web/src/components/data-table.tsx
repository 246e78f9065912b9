// A table that scrolls sideways on a narrow screen: a caption for screen readers, a header row of column names (and
// an unnamed last column of buttons when `actions`), then the rows given.
import type { ComponentChildren } from 'preact';

export function DataTable({
  caption,
  columns,
  actions = false,
  children,
}: {
  caption: string;
  columns: readonly string[];
  actions?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
