import { render } from 'preact';
import '../ui/styles.css';
import './runtime.css';
import { App } from './App.tsx';

render(<App />, document.getElementById('app')!);
