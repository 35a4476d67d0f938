import { useEffect, useState } from 'preact/hooks';
import { RemoteAgent, type SessionStreamItem } from '../../../../sdk/index.ts';
import { runtimeFetch } from '../../api/runtime.ts';
import { asFailure } from '../failure.ts';
import { emptyTranscript, fold, type Transcript } from './transcript.ts';
import { type StreamState, watchedFetch } from './watched-fetch.ts';

/**
 * Follows a session from its first event: the transcript as it grows, and the state of the stream.
 * A dropped connection is resumed by the SDK from the last revision seen (`Last-Event-ID`); a reload
 * folds the log again from the start. Items of one tick are folded together (one render per batch).
 */
export function useSessionStream(sessionId: string) {
  const [transcript, setTranscript] = useState<Transcript>(emptyTranscript);
  const [state, setState] = useState<StreamState>('connecting');
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    setTranscript(emptyTranscript());
    setError(undefined);
    setState('connecting');
    const controller = new AbortController();
    const agent = new RemoteAgent({
      baseUrl: window.location.origin,
      fetch: watchedFetch(runtimeFetch, setState),
    });
    let batch: SessionStreamItem[] = [];
    const flush = () => {
      const items = batch;
      batch = [];
      setTranscript((current) => fold(current, items));
    };
    void (async () => {
      try {
        for await (const item of agent.events(sessionId, { signal: controller.signal })) {
          if (batch.length === 0) setTimeout(flush, 0);
          batch.push(item);
        }
      } catch (failure) {
        if (!controller.signal.aborted) setError(asFailure(failure));
      }
    })();
    return () => controller.abort();
  }, [sessionId]);

  return { transcript, state, error };
}
