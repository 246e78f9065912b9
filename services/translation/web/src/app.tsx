// The app: a skip link, the header, and the screen for the current address.
import { Landing } from './screens/landing.tsx';

/** Moves focus to the main region (a button: a `#main` link would change the hash route). */
const skipToMain = () => document.getElementById('main')?.focus();

export function App() {
  return (
    <>
      <button type="button" class="skip" onClick={skipToMain}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href="#/">
          Scriptorium
        </a>
      </header>
      <Landing />
    </>
  );
}
