// What a screen does when a form is sent or a button pressed: busy while it runs (the buttons are disabled), then its
// outcome as one message, a success or the error described for what the person was doing.
import { useState } from 'preact/hooks';
import { type Action, describeError } from './messages.ts';

export interface ActionMessage {
  kind: 'error' | 'success';
  text: string;
}

export interface ActionState {
  busy: boolean;
  message: ActionMessage | null;
  /**
   * Runs `work` with `busy` set and the last message cleared. A string it resolves to becomes the success message
   * (said once everything it awaited is done); an error it throws becomes the error message.
   */
  run: (work: () => Promise<unknown>) => Promise<void>;
  /** A form's submit handler that runs `work` instead of sending the form. */
  submit: (work: () => Promise<unknown>) => (e: Event) => void;
}

/** @example const { busy, message, submit } = useAction('session'); <form onSubmit={submit(save)}> */
export function useAction(describeAs: Action): ActionState {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<ActionMessage | null>(null);
  const run = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setMessage(null);
    try {
      const done = await work();
      if (typeof done === 'string') setMessage({ kind: 'success', text: done });
    } catch (e) {
      setMessage({ kind: 'error', text: describeError(e, describeAs) });
    } finally {
      setBusy(false);
    }
  };
  const submit = (work: () => Promise<unknown>) => (e: Event) => {
    e.preventDefault();
    void run(work);
  };
  return { busy, message, run, submit };
}
