// Entry point: mounts the console into the page's #app element.
import './no-eval.ts';
import './styles.css';
import { render } from 'preact';
import { App } from './app.tsx';

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
