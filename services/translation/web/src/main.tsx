// Entry point: mounts the app into the page's #app element.
import './styles.css';
import { render } from 'preact';
import { App } from './app.tsx';

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
