import { randomUUID } from 'node:crypto';
import { ApiError } from '../../shared/errors.ts';
import { writeWorkspaceFile } from '../../shared/workspace/files.ts';
import type { Attachment } from './schemas.ts';
import type { TurnAttachment } from './session.ts';

export const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;

export type { Attachment } from './schemas.ts';
export { Attachment as AttachmentSchema } from './schemas.ts';

/** A name safe to put in a path: no folders, no traversal, no control characters. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  // Anything but letters, digits, dot, dash, underscore and space (control characters included) becomes `_`.
  const cleaned = base
    .replace(/[^A-Za-z0-9._ -]/g, '_')
    .replace(/^\.+/, '')
    .trim()
    .slice(0, 120);
  return cleaned || 'file';
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/**
 * Writes each attachment under `attachments/<session>/<uuid>-<safe name>` in the workspace (never
 * through a link that leads out of it) and returns the file tags to place before the instruction,
 * plus what the turn records.
 */
export async function materialize(
  workspace: string,
  sessionId: string,
  attachments: readonly Attachment[],
): Promise<{ tags: string; files: TurnAttachment[] }> {
  for (const [index, a] of attachments.entries()) {
    if (a.fileName.split(/[\\/]/).includes('..') || a.fileName.startsWith('/')) {
      throw new ApiError('validation_failed', `attachment ${index}: the file name must not be a path`, {
        param: `attachments.${index}.fileName`,
      });
    }
    if (Buffer.byteLength(a.content) > MAX_ATTACHMENT_BYTES) {
      throw new ApiError('payload_too_large', `attachment ${a.fileName} is larger than 5 MiB`);
    }
  }
  if (attachments.length === 0) return { tags: '', files: [] };
  const dir = `attachments/${safeFileName(sessionId)}`;
  const tags: string[] = [];
  const files: TurnAttachment[] = [];
  for (const [index, a] of attachments.entries()) {
    const name = safeFileName(a.fileName);
    const relativePath = `${dir}/${randomUUID()}-${name}`;
    await writeWorkspaceFile(workspace, relativePath, a.content, {
      exclusive: true,
      param: `attachments.${index}`,
    });
    files.push({ name, path: relativePath, mime_type: a.contentType });
    tags.push(
      `<file name="${escapeAttribute(name)}" path="${escapeAttribute(relativePath)}" type="${escapeAttribute(a.contentType)}">${a.content}</file>`,
    );
  }
  return { tags: tags.join('\n'), files };
}

/** A prompt's text with its attachments written to the workspace and their tags placed before it. */
export async function materializePrompt(
  workspace: string,
  sessionId: string,
  text: string,
  attachments: readonly Attachment[] = [],
): Promise<{ text: string; files: TurnAttachment[] }> {
  const { tags, files } = await materialize(workspace, sessionId, attachments);
  return { text: tags ? `${tags}\n\n${text}` : text, files };
}
