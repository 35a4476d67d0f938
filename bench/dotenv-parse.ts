/**
 * `.env` parsing time against input size, for inputs that make a whole-file regular expression
 * backtrack (runs of blank lines, quotes never closed). Linear parsing shows as a flat µs-per-KB
 * column; the import route refuses more than 10,000 lines or 512 KiB before parsing at all.
 */
import { parse } from 'dotenv';
import { parseDotenv } from '../services/env/dotenv-file.ts';
import { switchFromEnv } from './lib/env.ts';

const QUICK = switchFromEnv('BENCH_QUICK');
const SIZES = QUICK ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
/** dotenv's own parser on the whole file, for comparison, only where it ends within seconds. */
const WHOLE_FILE_UP_TO = 20_000;

const INPUTS: [string, (bytes: number) => string][] = [
  ['blank lines', (n) => '\n'.repeat(n)],
  ['whitespace lines', (n) => ' \t\n'.repeat(n / 3)],
  ['quotes never closed', (n) => 'A="x\n'.repeat(n / 5)],
  ['assignments', (n) => 'KEY_NAME=some value\n'.repeat(n / 20)],
];

function time(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

const rows = [
  '| input | bytes | parseDotenv ms | µs per KB | dotenv.parse (whole file) ms |',
  '|---|---:|---:|---:|---:|',
];
for (const [label, make] of INPUTS) {
  for (const size of SIZES) {
    const content = make(size);
    time(() => parseDotenv(content)); // warm up
    const ours = Math.min(...Array.from({ length: 5 }, () => time(() => parseDotenv(content))));
    const theirs = size <= WHOLE_FILE_UP_TO ? time(() => parse(content)).toFixed(1) : 'not run';
    rows.push(
      `| ${label} | ${content.length} | ${ours.toFixed(1)} | ${((ours * 1000) / (content.length / 1024)).toFixed(0)} | ${theirs} |`,
    );
  }
}
process.stdout.write(`## .env parsing\n\n${rows.join('\n')}\n`);
