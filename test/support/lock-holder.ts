/**
 * Locks a data dir and holds it until killed, for the lock tests:
 *   node --import tsx test/support/lock-holder.ts <dataDir> <platform>
 * Prints `locked` once it holds the lock.
 */
import { lockDataDir } from '../../shared/data-dir-lock.ts';

const [dataDir, platform] = process.argv.slice(2);
if (!dataDir || !platform) throw new Error('usage: lock-holder.ts <dataDir> <platform>');
await lockDataDir(dataDir, platform as NodeJS.Platform);
process.stdout.write('locked\n');
setInterval(() => {}, 60_000);
