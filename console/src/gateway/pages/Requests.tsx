import { useEffect, useRef, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import {
  downloadRequestsCsv,
  formatMs,
  listRequests,
  type RequestAttempt,
  type RequestDetail,
  type RequestFilters,
  type RequestItem,
  type RequestOutcome,
  rangeStart,
  requestDetail,
  TIME_RANGES,
  type TimeRangeId,
} from '../../api/requests.ts';
import { Busy } from '../../ui/Busy.tsx';
import { count } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatUsd, formatWhen } from '../../ui/format.ts';
import { LiveStatus } from '../../ui/LiveStatus.tsx';
import { TableScroll } from '../../ui/TableScroll.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';
import type { PageProps } from './index.ts';
import { useGenerationsFollow, useStudioScope, useTokens } from './Overview.tsx';

const PAGE = 50;
/** What one refresh re-reads at most: the pages already shown, so a refresh leaves no gap. */
const MOST = 500;
const OUTCOMES: readonly RequestOutcome[] = ['answered', 'failed', 'refused'];
const STATUSES = [400, 401, 402, 403, 404, 408, 413, 422, 429, 500, 502, 503, 504] as const;
const BADGE: Record<RequestOutcome, string> = { answered: 'ok', failed: 'bad', refused: 'warn' };

interface Form {
  range: TimeRangeId | 'all';
  token_id: string;
  model: string;
  status: string;
  code: string;
}
const NO_FILTERS: Form = { range: '24h', token_id: '', model: '', status: '', code: '' };

/** The filters of `form` (its range as a name: `from` is taken when a request is made). */
const filtersOf = (
  form: Form,
  studioId: string | undefined,
): Omit<RequestFilters, 'from'> & Pick<Form, 'range'> => ({
  studio_id: studioId,
  range: form.range,
  token_id: form.token_id || undefined,
  model: form.model || undefined,
  status:
    form.status === ''
      ? undefined
      : OUTCOMES.includes(form.status as RequestOutcome)
        ? (form.status as RequestOutcome)
        : Number(form.status),
  code: form.code || undefined,
});
type Filters = ReturnType<typeof filtersOf>;

/** What the API takes: a relative range made a `from`, now. */
const resolve = ({ range, ...filters }: Filters): RequestFilters =>
  range === 'all' ? filters : { ...filters, from: rangeStart(range) };

/**
 * The newest requests matching the filters, and older pages by cursor on demand. A refresh (a new
 * request, live) re-reads as many as are shown, so what was loaded stays in one list without gaps.
 */
function useRequestLog(filters: Filters | undefined) {
  const key = JSON.stringify(filters ?? null);
  const shown = useRef({ key, count: 0 });
  if (shown.current.key !== key) shown.current = { key, count: 0 };
  const head = useResource(async () => {
    if (filters === undefined) return undefined;
    const limit = Math.min(MOST, Math.max(PAGE, shown.current.count));
    return { key, page: await listRequests(resolve(filters), { limit }) };
  }, [key]);
  const [older, setOlder] = useState<{ items: RequestItem[]; next: number | null; of: unknown }>();
  const current = older !== undefined && older.of === head.data ? older : undefined;
  const items = [...(head.data?.page.items ?? []), ...(current?.items ?? [])];
  // What a previous filter's answer shows is not what this filter's refresh re-reads.
  if (head.data?.key === key) shown.current.count = items.length;
  const next = current ? current.next : (head.data?.page.next_cursor ?? null);
  const more = useAction(async () => {
    if (filters === undefined || next === null) return;
    const page = await listRequests(resolve(filters), { cursor: next, limit: PAGE });
    setOlder({ items: [...(current?.items ?? []), ...page.items], next: page.next_cursor, of: head.data });
  });
  return { head, items, next, more, counted: head.data?.page.refusals_counted ?? 0 };
}

/**
 * The request log: every generation request of the studio (or, for the admin, of every studio),
 * newest first, filtered, paged by cursor, live on demand, as CSV; a request's details in a dialog.
 */
export function RequestsPage({ identity }: PageProps) {
  const scope = useStudioScope(identity, 'requests-studio');
  const tokens = useTokens(identity, scope.studioIds, scope.loaded);
  const [form, setForm] = useState<Form>(NO_FILTERS);
  const filters = scope.loaded ? filtersOf(form, scope.studioId) : undefined;
  const log = useRequestLog(filters);
  const [tailing, setTailing] = useState(false);
  const live = useGenerationsFollow(identity, tailing, log.head.reload);
  const download = useAction(async () => {
    if (filters === undefined) return;
    await downloadRequestsCsv(resolve(filters), `requests-${scope.studioId ?? 'all'}.csv`);
  });
  const [opened, setOpened] = useState<string | undefined>(undefined);
  const tokenName = (id: string | null) => (id === null ? undefined : tokens.data?.get(id)?.name);
  const filtered = form.token_id || form.model || form.status || form.code;
  const where = scope.studioId === undefined ? 'any studio' : `studio ${scope.studioId}`;

  return (
    <section aria-labelledby="requests-title">
      <h1 id="requests-title">Requests</h1>
      <form
        class="card row"
        aria-label="Filter the requests"
        onSubmit={(event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          const field = (name: string) => String(data.get(name) ?? '').trim();
          setForm({
            range: (field('range') || '24h') as Form['range'],
            token_id: field('token_id'),
            model: field('model'),
            status: field('status'),
            code: field('code'),
          });
        }}
      >
        {scope.picker}
        <div class="field">
          <label for="requests-range">Time range</label>
          <select id="requests-range" name="range">
            {TIME_RANGES.map((r) => (
              <option key={r.id} value={r.id} selected={r.id === NO_FILTERS.range}>
                {r.label}
              </option>
            ))}
            <option value="all">All kept</option>
          </select>
        </div>
        <div class="field">
          <label for="requests-token">Token</label>
          <select id="requests-token" name="token_id">
            <option value="">Any token</option>
            {[...(tokens.data?.values() ?? [])].map((token) => (
              <option key={token.id} value={token.id}>
                {token.name} ({token.id})
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="requests-model">Model</label>
          <input id="requests-model" name="model" maxLength={300} placeholder="dev/echo" />
        </div>
        <div class="field">
          <label for="requests-status">Outcome or status</label>
          <select id="requests-status" name="status">
            <option value="">Any</option>
            {OUTCOMES.map((outcome) => (
              <option key={outcome} value={outcome}>
                {outcome}
              </option>
            ))}
            {STATUSES.map((status) => (
              <option key={status} value={String(status)}>
                HTTP {status}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="requests-code">Error code</label>
          <input id="requests-code" name="code" maxLength={100} placeholder="rate_limited" />
        </div>
        <div class="field">
          <button type="submit" class="primary">
            Filter
          </button>
        </div>
      </form>

      <div class="row">
        <label class="inline">
          <input
            type="checkbox"
            checked={tailing}
            onChange={(event) => setTailing(event.currentTarget.checked)}
          />{' '}
          Live tail
        </label>
        <LiveStatus follow={live} />
        <button type="button" disabled={download.busy || filters === undefined} onClick={download.act}>
          {download.busy ? 'Preparing…' : 'Download CSV'}
        </button>
      </div>
      <ErrorNotice error={download.error ?? log.head.error ?? log.more.error ?? tokens.error} />
      {log.head.loading && !log.head.data && <Busy label="Loading requests" />}
      {log.head.data && log.items.length === 0 && (
        <EmptyState
          what={
            filtered ? 'No requests match these filters.' : `No requests from ${where} in this time range.`
          }
          how={
            filtered ? (
              'Change or clear the filters above, or choose a longer time range.'
            ) : (
              <>
                Every request a token makes to a model (answered, failed or refused) shows here, newest first
                {identity.kind === 'admin' ? (
                  <>
                    {' '}
                    (issue a token on the <Link href="/tokens">Tokens</Link> page)
                  </>
                ) : null}
                ; tick "Live tail" to see them as they come.
              </>
            )
          }
        />
      )}
      {log.items.length > 0 && (
        <TableScroll label="Requests">
          <table>
            <caption class="muted">
              {count(log.items.length, 'request')}, newest first
              {log.counted > 0 &&
                `; ${count(log.counted, 'refusal')} beyond the per-minute bound counted only`}
            </caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Outcome</th>
                <th scope="col">Status</th>
                <th scope="col">Model</th>
                <th scope="col">Token</th>
                <th scope="col">Latency</th>
                <th scope="col">Tokens in · out</th>
                <th scope="col">Cost</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {log.items.map((item) => (
                <tr key={item.id} data-request-id={item.id}>
                  <th scope="row">{formatWhen(item.at)}</th>
                  <td>
                    <span class={`badge ${BADGE[item.outcome]}`}>{item.outcome}</span>
                  </td>
                  <td>
                    {item.status}
                    {item.error_code && (
                      <div>
                        <code>{item.error_code}</code>
                      </div>
                    )}
                  </td>
                  <td>
                    <ModelOf item={item} />
                  </td>
                  <td>{tokenName(item.token_id) ?? <code>{item.token_id ?? '–'}</code>}</td>
                  <td>{formatMs(item.latency_ms)}</td>
                  <td>
                    {item.input_tokens.toLocaleString()} · {item.output_tokens.toLocaleString()}
                  </td>
                  <td>{formatUsd(item.cost_usd)}</td>
                  <td>
                    <button type="button" onClick={() => setOpened(item.id)}>
                      Details <span class="skip">of request {item.id}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {log.next !== null && log.items.length > 0 && (
        <button type="button" disabled={log.more.busy} onClick={log.more.act}>
          {log.more.busy ? 'Loading…' : 'Load more'}
        </button>
      )}
      <RequestDialog id={opened} tokenName={tokenName} onClose={() => setOpened(undefined)} />
    </section>
  );
}

function ModelOf({ item }: { item: RequestItem }) {
  return (
    <>
      <code>{item.model ?? '–'}</code>
      {item.target !== null && item.target !== item.model && (
        <div class="muted">
          served by <code>{item.target}</code>
        </div>
      )}
    </>
  );
}

/** A route's attempts as recorded; a model asked for directly made one, the request itself. */
const attemptsOf = (item: RequestItem): RequestAttempt[] =>
  item.attempts.length > 0
    ? item.attempts
    : [
        {
          model: item.target ?? item.model ?? '–',
          outcome: item.outcome === 'answered' ? 'answered' : 'failed',
          latencyMs: item.latency_ms,
          ...(item.error_code ? { reason: item.error_code } : {}),
        },
      ];

const bodyText = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body, null, 2));

/** One request in full: attempts, timings, tokens, cost, its error, and its bodies when captured. */
function RequestDialog(props: {
  id: string | undefined;
  tokenName: (id: string | null) => string | undefined;
  onClose(): void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const detail = useResource(
    async () => (props.id === undefined ? undefined : requestDetail(props.id)),
    [props.id],
  );
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (props.id !== undefined && !element.open) element.showModal();
    if (props.id === undefined && element.open) element.close();
  }, [props.id]);
  const item: RequestDetail | undefined = detail.data?.id === props.id ? detail.data : undefined;
  return (
    <dialog
      ref={dialog}
      aria-labelledby="request-title"
      onClose={props.onClose}
      style={{ maxWidth: 'min(48rem, 95vw)', width: '100%' }}
    >
      <h2 id="request-title">Request {props.id}</h2>
      <ErrorNotice error={detail.error} />
      {!item && detail.loading && <Busy label="Loading the request" />}
      {item && (
        <>
          <dl>
            <dt>Time</dt>
            <dd>{formatWhen(item.at)}</dd>
            <dt>Outcome</dt>
            <dd>
              <span class={`badge ${BADGE[item.outcome]}`}>{item.outcome}</span> · HTTP {item.status}
              {item.cache === 'hit' && ' · from the cache'}
            </dd>
            {item.error_code !== null && (
              <>
                <dt>Error</dt>
                <dd data-field="error">
                  <code>{item.error_code}</code>: {item.error_message}
                </dd>
              </>
            )}
            <dt>Studio · token</dt>
            <dd>
              <code>{item.studio_id}</code> · {props.tokenName(item.token_id) ?? ''}{' '}
              <code>{item.token_id ?? '–'}</code>
            </dd>
            <dt>Route · model</dt>
            <dd>
              {item.format ?? '–'} · <ModelOf item={item} />
            </dd>
            <dt>Timings</dt>
            <dd>
              latency {formatMs(item.latency_ms)}
              {item.ttfb_ms !== null && <> · first byte after {formatMs(item.ttfb_ms)}</>}
            </dd>
            <dt>Tokens</dt>
            <dd>
              {item.input_tokens.toLocaleString()} in · {item.output_tokens.toLocaleString()} out
            </dd>
            <dt>Cost</dt>
            <dd>{formatUsd(item.cost_usd)}</dd>
          </dl>
          <h3>Attempts</h3>
          {item.outcome === 'refused' ? (
            <p class="muted">None: refused before any model was called.</p>
          ) : (
            <TableScroll label="Attempts">
              <table>
                {item.attempts.length === 0 && (
                  <caption class="muted">One: the model was asked for directly, not through a route</caption>
                )}
                <thead>
                  <tr>
                    <th scope="col">Model</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Latency</th>
                    <th scope="col">Reason</th>
                  </tr>
                </thead>
                <tbody>
                  {attemptsOf(item).map((attempt, i) => (
                    <tr key={i}>
                      <th scope="row">
                        <code>{attempt.model}</code>
                      </th>
                      <td>{attempt.outcome.replace('_', ' ')}</td>
                      <td>{formatMs(attempt.latencyMs)}</td>
                      <td>{attempt.reason ?? '–'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
          <h3>Payload</h3>
          {item.payload === null ? (
            <p class="muted">
              Not captured: a studio keeps request and response bodies only when an admin sets its capture to
              "full".
            </p>
          ) : item.payload.erased ? (
            <p data-field="payload">Erased: the key of its bodies was destroyed.</p>
          ) : (
            <>
              {item.payload.truncated && <p class="notice">Cut at 1 MiB: the bodies are shown in part.</p>}
              <h4>Request body</h4>
              <pre class="mono" data-field="request-body">
                {bodyText(item.payload.request)}
              </pre>
              <h4>
                Response body <span class="muted">(HTTP {item.payload.response.status}, </span>
                <span class="muted">{item.payload.response.content_type})</span>
              </h4>
              <pre class="mono" data-field="response-body">
                {bodyText(item.payload.response.body)}
              </pre>
            </>
          )}
        </>
      )}
      <form method="dialog" class="row">
        <button type="submit" class="primary">
          Close
        </button>
      </form>
    </dialog>
  );
}
