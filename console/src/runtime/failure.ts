import { RemoteAgentError } from '../../../sdk/index.ts';
import { ApiFailure } from '../api/failure.ts';

/** The SDK's errors as the console's failures, so `ErrorNotice` shows their code and request id. */
export function asFailure(error: unknown): unknown {
  return error instanceof RemoteAgentError
    ? new ApiFailure(error.status, error.code, error.message, error.requestId)
    : error;
}
