import { useState } from 'preact/hooks';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { AuditEventView, VerifyReport } from '../../api/records.ts';
import { Busy } from '../../ui/Busy.tsx';
import { count } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatWhen } from '../../ui/format.ts';
import { LiveStatus } from '../../ui/LiveStatus.tsx';
import { useFollow } from '../../ui/use-follow.ts';
import { useAction, useResource } from '../../ui/use-resource.ts';

const PAGE = 50;
const LIVE_KEPT = 200;

interface Filters {
  stream: string;
  type: string;
}

const REASONS: Record<NonNullable<VerifyReport['first_break']>['reason'], string> = {
  edited: 'the event does not digest to what its seal holds (edited)',
  missing: 'a position its seal lists has no event (deleted)',
  unexpected: 'an event its seal does not list (inserted)',
  seal_unreadable: 'the seal is not a well-formed seal',
  seal_edited: 'the seal does not hash to what it holds (edited)',
  seal_chain_broken: 'the seal does not chain to the one before it',
};

const filterQuery = (filters: Filters) => ({
  ...(filters.stream ? { stream: filters.stream } : {}),
  ...(filters.type ? { type: filters.type } : {}),
});

/** The event log: filtered, paged by position, new events live, and its check against its seals. */
export function AuditPage() {
  const [filters, setFilters] = useState<Filters>({ stream: '', type: '' });
  const [pages, setPages] = useState<number[]>([0]);
  const after = pages.at(-1) ?? 0;
  const events = useResource(
    async () =>
      unwrap(
        await gateway.GET('/v1/audit/events', {
          params: { query: { after, limit: PAGE, ...filterQuery(filters) } },
        }),
      ) as { items: AuditEventView[]; next_after: number | null },
    [after, filters.stream, filters.type],
  );
  const [following, setFollowing] = useState(true);
  const [arrived, setArrived] = useState<AuditEventView[]>([]);
  const live = useFollow(following ? filterQuery(filters) : undefined, (event) => {
    const view = JSON.parse(event.data) as AuditEventView;
    setArrived((shown) => [view, ...shown].slice(0, LIVE_KEPT));
  });
  const verify = useAction(async () => unwrap(await gateway.GET('/v1/audit/verify', {})) as VerifyReport);
  const [report, setReport] = useState<VerifyReport | undefined>(undefined);

  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <form
        class="card row"
        aria-label="Filter the log"
        onSubmit={(event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          setFilters({
            stream: String(data.get('stream') ?? '').trim(),
            type: String(data.get('type') ?? '').trim(),
          });
          setPages([0]);
          setArrived([]);
        }}
      >
        <div class="field">
          <label for="audit-stream">Stream</label>
          <input id="audit-stream" name="stream" maxLength={300} placeholder="studio-acme" />
        </div>
        <div class="field">
          <label for="audit-type">
            Type <span class="hint">(several: comma-separated)</span>
          </label>
          <input id="audit-type" name="type" placeholder="StudioCreated,StudioPaused" />
        </div>
        <div class="field">
          <button type="submit" class="primary">
            Filter
          </button>
        </div>
      </form>

      <div class="card">
        <div class="row">
          <button type="button" disabled={verify.busy} onClick={async () => setReport(await verify.act())}>
            {verify.busy ? 'Verifying…' : 'Verify the log'}
          </button>
        </div>
        {verify.busy && <Busy label="Checking the log against its seals" />}
        <ErrorNotice error={verify.error} />
        {report && <VerifyResult report={report} />}
      </div>

      <h2 id="live-title">New events</h2>
      <div class="row">
        <label class="inline">
          <input
            type="checkbox"
            checked={following}
            onChange={(event) => setFollowing(event.currentTarget.checked)}
          />{' '}
          Follow new events
        </label>
        <LiveStatus follow={live} />
      </div>
      {arrived.length > 0 ? (
        <EventTable label="New events, newest first" events={arrived} />
      ) : (
        <EmptyState
          what="No new events since this page opened."
          how={
            following
              ? 'Events appended from now on (a change in the console, a generation) appear here as they happen.'
              : 'Tick "Follow new events" to see events as they are appended.'
          }
        />
      )}

      <h2>Stored events</h2>
      <ErrorNotice error={events.error} />
      {events.loading && !events.data && <Busy label="Reading the log" />}
      {events.data && (
        <>
          {events.data.items.length > 0 ? (
            <EventTable label={`Events after position ${after}`} events={events.data.items} />
          ) : (
            <EmptyState
              what={filters.stream || filters.type ? 'No events match these filters.' : 'No events yet.'}
              how={
                filters.stream || filters.type
                  ? 'Change the stream or type above (a stream is named like studio-acme; types like StudioCreated).'
                  : 'Everything done through the API or this console is recorded here as an event.'
              }
            />
          )}
          <nav class="row" aria-label="Pages of the log">
            <button type="button" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
              Previous page
            </button>
            <button
              type="button"
              disabled={events.data.next_after === null}
              onClick={() => {
                const next = events.data?.next_after;
                if (next !== null && next !== undefined) setPages([...pages, next]);
              }}
            >
              Next page
            </button>
          </nav>
        </>
      )}
    </section>
  );
}

function VerifyResult({ report }: { report: VerifyReport }) {
  const facts = `${count(report.events_checked, 'event')} in ${count(report.seals_checked, 'seal')}, sealed through position ${report.sealed_through}; ${count(report.unsealed, 'event')} after the last seal ${report.unsealed === 1 ? 'is' : 'are'} not sealed yet.`;
  if (report.ok)
    return (
      <div class="notice ok" role="status">
        <strong>The log is intact.</strong> {facts}
      </div>
    );
  const first = report.first_break;
  return (
    <div class="notice error" role="alert">
      <strong>The log does not match its seals: {count(report.breaks, 'break')}.</strong>
      {first && (
        <p>
          First at position <code>{first.position}</code>: {REASONS[first.reason]} (seal at position{' '}
          <code>{first.seal}</code>).
        </p>
      )}
      <p class="muted">{facts}</p>
    </div>
  );
}

function EventTable({ label, events }: { label: string; events: AuditEventView[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="muted">{label}</caption>
        <thead>
          <tr>
            <th scope="col">Position</th>
            <th scope="col">Type</th>
            <th scope="col">Stream</th>
            <th scope="col">Actor</th>
            <th scope="col">Time</th>
            <th scope="col">Data</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.position}>
              <th scope="row">{event.position}</th>
              <td>{event.type}</td>
              <td>
                <code>{event.stream}</code>
              </td>
              <td>{event.actor}</td>
              <td>{formatWhen(event.time)}</td>
              <td>
                <details>
                  <summary>
                    Data <span class="skip">of event {event.position}</span>
                  </summary>
                  <pre class="mono">{JSON.stringify(event.data, null, 2)}</pre>
                  {event.request_id && (
                    <div class="muted">
                      request id <code>{event.request_id}</code>
                    </div>
                  )}
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
