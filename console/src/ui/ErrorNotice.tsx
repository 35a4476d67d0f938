import { ApiFailure } from '../api/failure.ts';

/** What went wrong, as the server said it, with the request id to quote to an operator. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  const failure = error instanceof ApiFailure ? error : undefined;
  const message = failure?.message ?? (error instanceof Error ? error.message : String(error));
  return (
    <div class="notice error" role="alert">
      <strong>{message}</strong>
      {failure && (
        <div class="muted">
          <span>{failure.code}</span>
          {failure.requestId && (
            <>
              {' · request id '}
              <code>{failure.requestId}</code>
            </>
          )}
        </div>
      )}
    </div>
  );
}
