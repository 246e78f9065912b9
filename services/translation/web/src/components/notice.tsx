// A message box: errors are announced at once (role=alert), other messages politely (role=status).
import type { ComponentChildren } from 'preact';

export function Notice({ kind, children }: { kind: 'error' | 'info' | 'success'; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}
