// The signed-out page: what the service is, sign-in, and the public playground.
import { useEffect } from 'preact/hooks';
import { SIGN_IN_URL } from '../api/endpoints.ts';
import { markInteractive } from '../lib/timing.ts';
import { Playground } from './playground.tsx';

export function Landing({ notice }: { notice?: string | null }) {
  useEffect(markInteractive, []);
  return (
    <main id="main" class="page" tabIndex={-1}>
      <section class="hero">
        <h1>Translate your product’s strings, metered and checked</h1>
        <p>
          Send batches of strings with a style and a glossary; get translations that keep ICU arguments, placeholders
          and your terms intact, with token counts against your plan and a quality judge scoring each result.
        </p>
        {notice && <p role="status">{notice}</p>}
        <p>
          <a class="button" href={SIGN_IN_URL}>
            Sign in with GitHub
          </a>
        </p>
        <p class="muted">
          Signed in, you manage organizations and members, API keys, usage, the review queue and your account’s
          security. The API is described in the <a href="/api/v1/openapi.json">OpenAPI document</a>.
        </p>
      </section>
      <Playground />
    </main>
  );
}
