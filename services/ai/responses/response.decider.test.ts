import { describe, it } from 'vitest';
import { deciderSpec } from '../../../shared/decider-spec.ts';
import { responseDecider, type StoredResponse } from './response.ts';

const spec = deciderSpec(responseDecider);
const stored: StoredResponse = {
  studioId: 'acme',
  input: [{ type: 'message', role: 'user', content: 'hi' }],
  native: false,
  response: {
    id: 'resp_0123456789abcdef01234567',
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: 'dev/echo',
    output: [],
    parallel_tool_calls: true,
    previous_response_id: null,
    store: true,
    usage: null,
  },
};

describe('response decider', () => {
  it('stores a response', () => {
    spec
      .given([])
      .when({ type: 'CreateResponse', stored })
      .thenEmits([{ type: 'ResponseCreated', data: stored }]);
  });

  it('never changes a stored response', () => {
    spec
      .given([{ type: 'ResponseCreated', data: stored }])
      .when({ type: 'CreateResponse', stored })
      .thenFails('conflict', /already exists/);
  });
});
