/** Whether the session's event stream is open: `live` while a response body flows, else `reconnecting`. */
export type StreamState = 'connecting' | 'live' | 'reconnecting';

/**
 * A `fetch` that reports the state of the streams it opens: the SDK reconnects by itself and says
 * nothing, so the page learns of a drop here (the body ending or breaking) and of the way back (the
 * next answer).
 */
export function watchedFetch(inner: typeof fetch, onState: (state: StreamState) => void): typeof fetch {
  return async (input, init) => {
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      if (!init?.signal?.aborted) onState('reconnecting');
      throw error;
    }
    if (!response.ok || !response.body) return response;
    onState('live');
    const reader = response.body.getReader();
    const ended = () => {
      if (!init?.signal?.aborted) onState('reconnecting');
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            ended();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          ended();
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
