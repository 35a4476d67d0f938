import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { BudgetView, StudioRecord, TokenRecord } from '../../api/records.ts';
import {
  formatMs,
  formatShare,
  type RequestSummary,
  rangeStart,
  requestSummary,
  TIME_RANGES,
  type TimeRangeId,
} from '../../api/requests.ts';
import type { ConsoleIdentity } from '../../api/session.ts';
import { BarChart } from '../../ui/BarChart.tsx';
import { Busy } from '../../ui/Busy.tsx';
import { count, noun } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatUsd } from '../../ui/format.ts';
import { LiveStatus } from '../../ui/LiveStatus.tsx';
import { TableScroll } from '../../ui/TableScroll.tsx';
import { type Follow, useReloadOnEvents } from '../../ui/use-follow.ts';
import { useResource } from '../../ui/use-resource.ts';
import type { PageProps } from './index.ts';

/** The generation events of every studio: what the admin's pages follow to refresh (refusals too). */
const GENERATION_TYPES = 'GenerationCompleted,GenerationFailed,GenerationRefused';
const NEAR_LIMIT = 0.8;
const number = (n: number) => n.toLocaleString();

/**
 * The studios a request-log page is about: the admin every studio (`studioId` undefined) or the one
 * picked; a user token its own. `studioIds` lists them (empty while the admin's list loads).
 */
export function useStudioScope(identity: ConsoleIdentity, id: string) {
  const admin = identity.kind === 'admin';
  const studios = useResource(async () => {
    if (!admin) return [];
    const answer = unwrap(await gateway.GET('/v1/studios/list', { params: { query: {} } })) as {
      items: StudioRecord[];
    };
    return answer.items;
  });
  const [picked, setPicked] = useState('');
  const studioId = identity.kind === 'user' ? identity.studio_id : picked || undefined;
  const studioIds =
    identity.kind === 'user'
      ? [identity.studio_id]
      : studioId !== undefined
        ? [studioId]
        : (studios.data ?? []).map((s) => s.id);
  const picker =
    identity.kind === 'user' ? (
      <p class="muted">
        Studio <code>{identity.studio_id}</code>
      </p>
    ) : (
      <div class="field">
        <label for={id}>Studio</label>
        <select id={id} value={picked} onChange={(event) => setPicked(event.currentTarget.value)}>
          <option value="">All studios</option>
          {studios.data?.map((studio) => (
            <option key={studio.id} value={studio.id}>
              {studio.name} ({studio.id}){studio.status === 'active' ? '' : ` · ${studio.status}`}
            </option>
          ))}
        </select>
        <ErrorNotice error={studios.error} />
      </div>
    );
  return { studioId, studioIds, loaded: !admin || studios.data !== undefined, picker };
}

/** The tokens of `studioIds` by id (a user token: its own studio's, without naming it). */
export function useTokens(identity: ConsoleIdentity, studioIds: readonly string[], loaded: boolean) {
  return useResource(async () => {
    if (!loaded) return undefined;
    const lists = await Promise.all(
      (identity.kind === 'user' ? [undefined] : studioIds).map(async (studio_id) => {
        const query = studio_id === undefined ? {} : { studio_id };
        const answer = unwrap(await gateway.GET('/v1/studios/tokens/list', { params: { query } })) as {
          items: TokenRecord[];
        };
        return answer.items;
      }),
    );
    return new Map(lists.flat().map((token) => [token.id, token]));
  }, [loaded, studioIds.join(',')]);
}

/** Follows the generations the scope sees, calling `reload` after each burst. */
export function useGenerationsFollow(
  identity: ConsoleIdentity,
  on: boolean,
  reload: () => Promise<void>,
): Follow {
  // A user token follows its own studio's usage stream by default (its refusals are not on it).
  const query: Record<string, string> | undefined = !on
    ? undefined
    : identity.kind === 'admin'
      ? { type: GENERATION_TYPES }
      : {};
  return useReloadOnEvents(query, reload);
}

interface Bucket {
  key: string;
  label: string;
  requests: number;
  failures: number;
  cost: number;
}

/** The window in buckets, empty ones too: hours for a day, days for longer. */
function bucketsOf(summary: RequestSummary, hourly: boolean): Bucket[] {
  const keyOf = (iso: string) => (hourly ? iso.slice(0, 13) : iso.slice(0, 10));
  const step = hourly ? 3_600_000 : 86_400_000;
  const buckets = new Map<string, Bucket>();
  for (let t = Date.parse(summary.from); t <= Date.parse(summary.to) + step - 1; t += step) {
    const key = keyOf(new Date(Math.min(t, Date.parse(summary.to))).toISOString());
    if (!buckets.has(key))
      buckets.set(key, {
        key,
        label: hourly ? `${key.slice(11, 13)}:00` : key.slice(5),
        requests: 0,
        failures: 0,
        cost: 0,
      });
  }
  for (const point of summary.series) {
    const bucket = buckets.get(keyOf(`${point.hour}:00:00Z`));
    if (!bucket) continue;
    bucket.requests += point.requests;
    bucket.failures += point.failures;
    bucket.cost += point.cost_usd;
  }
  return [...buckets.values()];
}

/** Budgets of the scope at ≥ 80 % of their amount (admin only: a user token cannot list budgets). */
function useBudgetsNearLimit(admin: boolean, studioIds: readonly string[], loaded: boolean) {
  return useResource(async () => {
    if (!admin || !loaded) return undefined;
    const lists = await Promise.all(
      studioIds.map(async (studio_id) => {
        const answer = unwrap(
          await gateway.GET('/v1/studios/budgets/list', { params: { query: { studio_id } } }),
        ) as { items: BudgetView[] };
        return answer.items;
      }),
    );
    return lists
      .flat()
      .map((budget) => ({
        budget,
        share: budget.amount_usd === 0 ? 1 : budget.spent_usd / budget.amount_usd,
      }))
      .filter(({ share }) => share >= NEAR_LIMIT)
      .sort((a, b) => b.share - a.share);
  }, [admin, loaded, studioIds.join(',')]);
}

/**
 * The first page: requests and spend over time, the error rate, latency per model, the tokens that
 * spent most and the budgets near their limit, over the last day, week or month; live.
 */
export function OverviewPage({ identity }: PageProps) {
  const admin = identity.kind === 'admin';
  const scope = useStudioScope(identity, 'overview-studio');
  const [range, setRange] = useState<TimeRangeId>('24h');
  const summary = useResource(async () => {
    if (!scope.loaded) return undefined;
    return requestSummary({ studio_id: scope.studioId, from: rangeStart(range) });
  }, [scope.loaded, scope.studioId, range]);
  const tokens = useTokens(identity, scope.studioIds, scope.loaded);
  const budgets = useBudgetsNearLimit(admin, scope.studioIds, scope.loaded);
  const live = useGenerationsFollow(identity, true, async () => {
    await Promise.all([summary.reload(), budgets.reload()]);
  });

  const where = scope.studioId === undefined ? 'any studio' : `studio ${scope.studioId}`;
  const rangeLabel = TIME_RANGES.find((r) => r.id === range)?.label.toLowerCase() ?? '';
  const data = summary.data;
  const buckets = data ? bucketsOf(data, range === '24h') : [];
  const per = range === '24h' ? 'hour' : 'day';
  const tokenName = (id: string) => tokens.data?.get(id)?.name;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <div class="row">
        {scope.picker}
        <div class="field">
          <label for="overview-range">Time range</label>
          <select
            id="overview-range"
            value={range}
            onChange={(event) => setRange(event.currentTarget.value as TimeRangeId)}
          >
            {TIME_RANGES.filter((r) => r.id !== '1h').map((r) => (
              <option key={r.id} value={r.id}>
                {r.label}
              </option>
            ))}
          </select>
        </div>
        <LiveStatus follow={live} />
      </div>
      <ErrorNotice error={summary.error} />
      {!data && summary.loading && <Busy label="Loading the overview" />}
      {data && (
        <>
          <dl class="row card" aria-label="Totals">
            <Stat label="Requests" field="requests" value={number(data.requests)} />
            <Stat label="Answered" field="answered" value={number(data.answered)} />
            <Stat label="Failed" field="failed" value={number(data.failed)} />
            <Stat label="Refused" field="refused" value={number(data.refused)} />
            <Stat label="Error rate" field="error-rate" value={formatShare(data.error_rate)} />
            <Stat label="Spend" field="cost" value={formatUsd(data.cost_usd)} />
          </dl>
          {!data.complete && (
            <p class="notice">
              The request log no longer holds all of this window: the oldest requests are not counted here
              (they stay in the audit log).
            </p>
          )}
          {data.requests === 0 ? (
            <EmptyState
              what={`No requests from ${where} in the ${rangeLabel}.`}
              how={
                <>
                  Requests and spend over time, the error rate, latency per model and the tokens that spent
                  most show here as soon as a studio's token calls a model
                  {admin ? (
                    <>
                      {' '}
                      (issue one on the <Link href="/tokens">Tokens</Link> page)
                    </>
                  ) : null}
                  ; or choose a longer time range above.
                </>
              }
            />
          ) : (
            <div class="charts">
              <figure>
                <figcaption>Requests per {per}</figcaption>
                <BarChart
                  summary={`Requests per ${per}, ${rangeLabel}: ${count(data.requests, 'request')}, ${count(
                    data.requests - data.answered,
                    'failure',
                  )}`}
                  labels={buckets.map((b) => b.label)}
                  series={[
                    { label: 'answered', values: buckets.map((b) => b.requests - b.failures) },
                    { label: 'failed or refused', values: buckets.map((b) => b.failures) },
                  ]}
                />
              </figure>
              <figure>
                <figcaption>Spend per {per}</figcaption>
                <BarChart
                  summary={`Spend per ${per}, ${rangeLabel}: ${formatUsd(data.cost_usd)} in total`}
                  labels={buckets.map((b) => b.label)}
                  series={[{ label: 'spend', values: buckets.map((b) => b.cost) }]}
                  format={formatUsd}
                />
              </figure>
            </div>
          )}

          <h2>Latency per model</h2>
          {data.models.length === 0 ? (
            <EmptyState
              what="No model was called in this time range."
              how="Each model asked for shows here with its requests, failures, median (p50) and p95 latency of its answers, and its cost."
            />
          ) : (
            <TableScroll label="Latency per model">
              <table>
                <caption class="muted">
                  {count(data.models.length, 'model')}, {rangeLabel}; latency of answered requests
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Model</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Failures</th>
                    <th scope="col">p50</th>
                    <th scope="col">p95</th>
                    <th scope="col">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {data.models.map((m) => (
                    <tr key={m.model}>
                      <th scope="row">
                        <code>{m.model}</code>
                      </th>
                      <td>{number(m.requests)}</td>
                      <td>{number(m.failures)}</td>
                      <td>{formatMs(m.p50_ms)}</td>
                      <td>{formatMs(m.p95_ms)}</td>
                      <td>{formatUsd(m.cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}

          <h2>Top tokens by spend</h2>
          <ErrorNotice error={tokens.error} />
          {data.top_tokens.length === 0 ? (
            <EmptyState
              what="No token made a request in this time range."
              how="The ten tokens that spent most show here, with their requests and failures."
            />
          ) : (
            <TableScroll label="Top tokens by spend">
              <table>
                <caption class="muted">
                  The {count(data.top_tokens.length, 'token')} that spent most, {rangeLabel}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Token</th>
                    <th scope="col">Spend</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Failures</th>
                  </tr>
                </thead>
                <tbody>
                  {data.top_tokens.map((t) => (
                    <tr key={t.token_id}>
                      <th scope="row">
                        {tokenName(t.token_id) ?? <span class="muted">unknown token</span>}{' '}
                        <code class="muted">{t.token_id}</code>
                      </th>
                      <td>{formatUsd(t.cost_usd)}</td>
                      <td>{number(t.requests)}</td>
                      <td>{number(t.failures)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
        </>
      )}

      <h2>Budgets near their limit</h2>
      {!admin ? (
        <p class="muted">Budgets are set and watched by an admin; a request over one is refused.</p>
      ) : (
        <>
          <ErrorNotice error={budgets.error} />
          {!budgets.data && budgets.loading && <Busy label="Loading budgets" />}
          {budgets.data?.length === 0 && (
            <EmptyState
              what={`No budget of ${where} has ${formatShare(NEAR_LIMIT)} or more of it spent.`}
              how={
                <>
                  A budget that has shows here with what is spent of it; set budgets on the{' '}
                  <Link href="/budgets">Budgets</Link> page.
                </>
              }
            />
          )}
          {budgets.data && budgets.data.length > 0 && (
            <TableScroll label="Budgets near their limit">
              <table>
                <caption class="muted">
                  {count(budgets.data.length, 'budget')} at {formatShare(NEAR_LIMIT)} or more of{' '}
                  {noun(budgets.data.length, 'its', 'their')} amount
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Studio</th>
                    <th scope="col">Token</th>
                    <th scope="col">Window</th>
                    <th scope="col">Spent</th>
                    <th scope="col">Amount</th>
                    <th scope="col">Share</th>
                  </tr>
                </thead>
                <tbody>
                  {budgets.data.map(({ budget, share }) => (
                    <tr key={`${budget.studio_id}|${budget.token_id ?? ''}`}>
                      <th scope="row">
                        <code>{budget.studio_id}</code>
                      </th>
                      <td>
                        {budget.token_id === null
                          ? 'the whole studio'
                          : (tokenName(budget.token_id) ?? budget.token_id)}
                      </td>
                      <td>{budget.window}</td>
                      <td>{formatUsd(budget.spent_usd)}</td>
                      <td>{formatUsd(budget.amount_usd)}</td>
                      <td>
                        <span class={`badge ${share >= 1 ? 'bad' : 'warn'}`}>{formatShare(share)}</span>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
        </>
      )}
    </section>
  );
}

function Stat({ label, field, value }: { label: string; field: string; value: string }) {
  return (
    <div class="field">
      <dt class="muted">{label}</dt>
      <dd data-field={field}>
        <strong>{value}</strong>
      </dd>
    </div>
  );
}
