import { z } from 'zod';
import { commandHandler } from '../../../shared/command-handler.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { studioScope } from '../../studios/scope.ts';
import { studioId } from '../../studios/studio-id.ts';
import { CAPTURE_MODES, captureDecider, captureStreamId } from './capture.ts';
import type { PayloadCapture } from './payload-capture.ts';
import type { StudioKeys } from './studio-keys.ts';

/** The studio's capture writes: settings, and erasures (its keys are destroyed first). */
export function captureCommands(gw: GatewayContext) {
  return commandHandler(captureDecider, {
    events: gw.events,
    streamOf: (command) => captureStreamId(command.studioId),
    readModels: gw.projections,
  });
}

/** `/v1/studios/capture` and `/v1/studios/erase-payloads`: served by the studios service. */
export function captureActions(gw: GatewayContext, capture: PayloadCapture, keys: StudioKeys) {
  const run = captureCommands(gw);
  const view = (studio: string) => {
    const { mode, retentionDays } = capture.settingsOf(studio);
    return { studio_id: studio, capture: mode, retention_days: retentionDays };
  };
  return [
    defineAction({
      service: 'studios',
      action: 'capture',
      method: 'GET',
      identities: ['admin', 'user'],
      summary: "What the request log keeps of a studio's requests",
      input: z.strictObject({ studio_id: studioId }),
      handler: ({ studio_id }) => {
        studioScope(gw, studio_id, undefined);
        return view(studio_id);
      },
    }),
    defineAction({
      service: 'studios',
      action: 'capture/set',
      method: 'POST',
      identities: ['admin'],
      summary: 'Set what the request log keeps: none, metadata (default) or full (bodies, sealed)',
      input: z.strictObject({
        studio_id: studioId,
        capture: z.enum(CAPTURE_MODES),
        retention_days: z.number().int().min(1).max(3_650).default(30),
      }),
      handler: async ({ studio_id, capture: mode, retention_days }, ctx) => {
        studioScope(gw, studio_id, undefined);
        await run(
          { type: 'SetCapture', studioId: studio_id, settings: { mode, retentionDays: retention_days } },
          ctx.metadata,
        );
        return view(studio_id);
      },
    }),
    defineAction({
      service: 'studios',
      action: 'erase-payloads',
      method: 'POST',
      identities: ['admin'],
      summary: "Destroy a studio's payload keys: every payload captured so far becomes unreadable for good",
      input: z.strictObject({ studio_id: studioId }),
      handler: async ({ studio_id }, ctx) => {
        studioScope(gw, studio_id, undefined);
        const keyIds = await keys.destroy(studio_id);
        await run({ type: 'RecordErasure', studioId: studio_id, keyIds, reason: 'request' }, ctx.metadata);
        return { studio_id, keys_destroyed: keyIds.length };
      },
    }),
  ];
}
