import express from 'express';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config.ts';
import { createLogger } from '../logger.ts';
import { listen } from './server.ts';

describe('listen', () => {
  it('a port already taken is a configuration error naming the address, not a crash', async () => {
    const logger = createLogger('silent');
    const first = await listen(express(), '127.0.0.1', 0, logger);
    const port = Number(new URL(first.url).port);
    try {
      const second = listen(express(), '127.0.0.1', port, logger);
      await expect(second).rejects.toBeInstanceOf(ConfigError);
      await expect(second).rejects.toThrow(`127.0.0.1:${port} is already in use`);
    } finally {
      await new Promise((resolve) => first.server.close(resolve));
    }
  });
});
