#!/usr/bin/env node
// The `studio` command. Studio is written in TypeScript and runs through tsx, so there is no build step.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
