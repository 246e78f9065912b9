// The app marks the moment its first screen is rendered with its data and answers input (User Timing API), once per
// page load: the web benchmark reads it as the time to interactive.
export const INTERACTIVE_MARK = 'scriptorium:interactive';

let marked = false;

export function markInteractive(): void {
  if (marked) return;
  marked = true;
  performance.mark(INTERACTIVE_MARK);
}
