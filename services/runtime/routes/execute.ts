import { z } from 'zod';
import { defineEndpoint } from '../../../shared/http/action.ts';
import type { SessionService } from '../../sessions/service.ts';
import type { PromptAnswered } from '../../sessions/types.ts';
import type { RuntimeRouteDeps } from './deps.ts';

export const sessionIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, 'letters, digits, "_" or "-"');
export const instructions = z.string().trim().min(1, 'instructions must not be empty');

/** A completed prompt as the runtime's routes answer it. */
export function turnAnswer(sessionId: string, { turnId, message }: PromptAnswered) {
  return {
    sessionId,
    turnId,
    message: message ? { id: message.id, role: message.role, parts: message.parts } : null,
  };
}

/** POST /api/execute: runs one turn, in the named session (made when new) or a new one. */
export function executeRoutes(deps: Pick<RuntimeRouteDeps, 'sessions' | 'model'>) {
  const sessions: SessionService = deps.sessions;
  return [
    defineEndpoint({
      method: 'POST',
      path: '/api/execute',
      input: z.strictObject({ instructions, chatId: sessionIdSchema.optional() }),
      handler: async (input) => {
        let id = input.chatId;
        if (id === undefined || !sessions.get(id)) {
          id = (
            await sessions.create({
              sessionId: id,
              kind: 'api',
              title: input.instructions.slice(0, 80),
              model: deps.model,
              system: '',
            })
          ).session.id;
        }
        return turnAnswer(id, await sessions.prompt(id, { text: input.instructions, source: 'execute' }));
      },
    }),
  ];
}
