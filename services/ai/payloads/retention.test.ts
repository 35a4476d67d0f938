import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../../shared/crypto.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { memoryKeyVault } from '../../../shared/key-vault/memory.ts';
import { runAlone } from '../../../shared/leadership.ts';
import { waitUntil } from '../../../shared/testing/wait.ts';
import type { CaptureSettings } from './capture.ts';
import { keepPayloadRetention } from './retention.ts';
import { StudioKeys } from './studio-keys.ts';

const DAY = 86_400_000;

describe('payload retention', () => {
  it("destroys each studio's keys of days past its retention, and records it; keeps the rest", async () => {
    const vault = memoryKeyVault();
    const master = new SecretBox(Buffer.alloc(32, 7));
    let now = Date.parse('2026-11-20T12:00:00Z');
    const keys = new StudioKeys(vault, master, () => now);
    for (let day = 0; day < 10; day++, now += DAY) {
      await keys.current('acme');
      await keys.current('globex');
    }
    now -= DAY; // today: 2026-11-29
    const settings = new Map<string, CaptureSettings>([
      ['acme', { mode: 'full', retentionDays: 3 }],
      ['globex', { mode: 'full', retentionDays: 30 }],
    ]);
    const logger = pino({ level: 'silent' });
    const gw = {
      projections: { state: () => settings },
      logger,
      singleton: (_name: string, task: Parameters<typeof runAlone>[0]) => runAlone(task, logger),
    } as unknown as GatewayContext;
    const recorded: [string, string[]][] = [];
    const retention = keepPayloadRetention(
      gw,
      keys,
      async (studio, ids) => recorded.push([studio, ids]),
      () => now,
    );
    await waitUntil(() => recorded.length > 0, 'the first sweep');
    await retention.stop();

    expect(recorded).toEqual([['acme', expect.any(Array)]]);
    expect(recorded[0]![1].map(StudioKeys.dayOf).sort()).toEqual([
      '2026-11-20',
      '2026-11-21',
      '2026-11-22',
      '2026-11-23',
      '2026-11-24',
      '2026-11-25',
      '2026-11-26',
    ]);
    expect((await vault.list('payload.acme.')).map(StudioKeys.dayOf).sort()).toEqual([
      '2026-11-27',
      '2026-11-28',
      '2026-11-29',
    ]);
    expect(await vault.list('payload.globex.')).toHaveLength(10);
    expect(await keys.open('payload.acme.2026-11-26')).toBeUndefined();
  });
});
