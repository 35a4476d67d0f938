/**
 * With BENCH_CPU_PROFILE=<file>, a process run with plain `node` profiles its CPU on SIGUSR2 as
 * Studio's launcher does (profile-on-signal.mjs):
 *   BENCH_CPU_PROFILE=<file> node --import ./bench/lib/cpu-profile-preload.mjs bench/gateway/thin-proxy.mjs
 */
import { cpuProfileOnSignal } from './profile-on-signal.mjs';

const file = process.env.BENCH_CPU_PROFILE;
if (file) cpuProfileOnSignal(file, (error) => process.stderr.write(`the CPU profiler failed: ${error}\n`));
