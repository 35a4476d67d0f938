import { queuePosition, type Transcript } from './transcript.ts';

const firstLine = (text: string) => {
  const words = text.replace(/<file [^>]*>[\s\S]*?<\/file>\n*/g, '').trim();
  return words.length > 120 ? `${words.slice(0, 120)}…` : words;
};

/** The turn running and the turns waiting behind it, with their place (the running turn is 1). */
export function QueueList({ transcript }: { transcript: Transcript }) {
  const running = transcript.running ? transcript.turns.get(transcript.running) : undefined;
  return (
    <section aria-labelledby="queue-title">
      <h2 id="queue-title">Queue</h2>
      {!running && transcript.queue.length === 0 ? (
        <p class="muted">No turn is running or waiting.</p>
      ) : (
        <ol class="queue" aria-label="Turns running and waiting">
          {running && (
            <li>
              <span class="badge warn">running</span> {firstLine(running.text)}
            </li>
          )}
          {transcript.queue.map((turnId) => (
            <li key={turnId}>
              <span class="badge">position {queuePosition(transcript, turnId)}</span>{' '}
              {firstLine(transcript.turns.get(turnId)?.text ?? '')}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
