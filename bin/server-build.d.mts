export const SOURCE_FOLDERS: readonly string[];
export const BUILD_DIR: string;
export const STAMP_FILE: string;
export const SERVER_BUILD_OPTIONS: import('esbuild').BuildOptions;
export function newestSourceMtime(root: string): number;
export function chooseEntry(root: string): { kind: 'build'; path: string } | { kind: 'tsx'; reason: string };
