// A value the service shows only once (a new API key, an invitation link): what it is, the value itself, and a
// button that copies it, with `actions` beside that button when given.
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { CopyButton } from './copy-button.tsx';
import { Notice } from './notice.tsx';

export function ShownOnce({
  kind,
  value,
  copyLabel,
  actions,
  children,
}: {
  kind: 'info' | 'success';
  value: string;
  copyLabel: string;
  actions?: ComponentChildren;
  /** What the value is, and that it is not shown again. */
  children: ComponentChildren;
}) {
  const id = useId();
  const copy = <CopyButton text={value} label={copyLabel} targetId={id} />;
  return (
    <Notice kind={kind}>
      {children}
      <p>
        <code id={id} class="secret">
          {value}
        </code>
      </p>
      {actions ? (
        <div class="actions">
          {copy}
          {actions}
        </div>
      ) : (
        copy
      )}
    </Notice>
  );
}
