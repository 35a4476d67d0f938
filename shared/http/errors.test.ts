import { describe, expect, it } from 'vitest';
import { UnstorableIdentifier } from '../event-store/types.ts';
import { toApiError } from './errors.ts';

describe('toApiError', () => {
  it('a stream id or event type no store can keep is the request’s fault: 400 validation_failed', () => {
    const error = toApiError(new UnstorableIdentifier('stream id', 'chat-a\u0000b'));
    expect(error).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(error?.message).toContain('chat-a\\u0000b');
  });
});
