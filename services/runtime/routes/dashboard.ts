import { z } from 'zod';
import { defineEndpoint, noInput } from '../../../shared/http/action.ts';
import { AttachmentSchema, MAX_ATTACHMENT_BYTES, materializePrompt } from '../../sessions/attachments.ts';
import type { RuntimeRouteDeps } from './deps.ts';
import { instructions, turnAnswer } from './execute.ts';

/** The dashboard's sessions: the list, and a prompt to one (a chat conversation's goes through its queue). */
export function dashboardRoutes(deps: Pick<RuntimeRouteDeps, 'sessions' | 'chat' | 'workspace'>) {
  const { sessions } = deps;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/api/dashboard/sessions',
      input: noInput,
      handler: () => ({
        sessions: sessions
          .list()
          .map((v) => v.session)
          .sort((a, b) => b.updated_at.localeCompare(a.updated_at)),
      }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/api/dashboard/sessions/:sessionId/execute',
      params: z.object({ sessionId: z.string() }),
      input: z.strictObject({
        instructions,
        attachments: z.array(AttachmentSchema).max(20).optional(),
      }),
      bodyLimitBytes: 8 * MAX_ATTACHMENT_BYTES,
      handler: async (input, { params: { sessionId: id } }) => {
        if (deps.chat.isConversation(id)) {
          const prompt = await materializePrompt(deps.workspace, id, input.instructions, input.attachments);
          const receipt = (await deps.chat.receiveFromDashboard(id, prompt.text)) as {
            queueItemId: string;
            queuePosition: number;
          };
          return {
            sessionId: id,
            queued: true,
            queueItemId: receipt.queueItemId,
            queuePosition: receipt.queuePosition,
          };
        }
        sessions.require(id);
        const answered = await sessions.prompt(id, {
          text: input.instructions,
          attachments: input.attachments,
          source: 'dashboard',
        });
        return turnAnswer(id, answered);
      },
    }),
  ];
}
