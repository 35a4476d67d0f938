import type { MessageView } from '../../projections/sessions.ts';
import type { Attachment } from './attachments.ts';
import type { SessionCommand, TurnAttachment } from './session.ts';

export interface Turn {
  sessionId: string;
  turnId: string;
  text: string;
  attachments: TurnAttachment[];
}

export interface PromptInput {
  text: string;
  attachments?: readonly Attachment[];
  /** Who sent it: `sdk`, `execute`, `dashboard`. */
  source: string;
  /** Wait for the turn to end (default), or answer once it is queued. */
  wait?: boolean;
}

export type PromptQueued = { queued: true; turnId: string; queuePosition: number };
export type PromptAnswered = {
  queued: false;
  turnId: string;
  status: 'completed';
  message: MessageView | undefined;
};

export type TurnOutcome =
  | { status: 'completed'; turnId: string }
  | { status: 'failed'; turnId: string; error: string }
  | { status: 'cancelled'; turnId: string; reason: string };

/** Runs one turn's work (the agent loop); what happens is appended through `record`. */
export type TurnRunner = (
  turn: Turn,
  ctx: { signal: AbortSignal; record: (command: SessionCommand) => Promise<void> },
) => Promise<void>;
