import { useState } from 'preact/hooks';
import { failureOf } from '../../api/failure.ts';
import { gateway } from '../../api/gateway.ts';
import { consoleFetch, unwrap } from '../../api/http.ts';
import type { UsageGroup, UsageReport } from '../../api/records.ts';
import { BarChart, type BarSeries } from '../../ui/BarChart.tsx';
import { Busy } from '../../ui/Busy.tsx';
import { noun } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatUsd } from '../../ui/format.ts';
import { LiveStatus } from '../../ui/LiveStatus.tsx';
import { useReloadOnEvents } from '../../ui/use-follow.ts';
import { useAction, useResource } from '../../ui/use-resource.ts';
import { useStudioChoice } from '../StudioPicker.tsx';
import type { PageProps } from './index.ts';

interface Range {
  from: string;
  to: string;
}

/** The query of a report by day and model: dates as the day's bounds (UTC). */
function queryOf(studioId: string, range: Range): Record<string, string> {
  return {
    studio_id: studioId,
    group_by: 'day,model',
    ...(range.from ? { from: range.from } : {}),
    ...(range.to ? { to: `${range.to}T23:59:59Z` } : {}),
  };
}

/** One series per model over the days, of one measure. */
function byModel(groups: UsageGroup[], measure: (group: UsageGroup) => number) {
  const days = [...new Set(groups.map((g) => g.day ?? ''))].sort();
  const models = [...new Set(groups.map((g) => g.model ?? '–'))].sort();
  const series: BarSeries[] = models.map((model) => ({
    label: model,
    values: days.map((day) =>
      groups
        .filter((g) => g.day === day && (g.model ?? '–') === model)
        .reduce((sum, g) => sum + measure(g), 0),
    ),
  }));
  return { days, series };
}

/** "from 2025-01-01 to 2025-01-03: 12 in total; m1 10, m2 2" — what a chart shows, in words. */
function summaryOf(what: string, days: string[], series: BarSeries[], format: (n: number) => string) {
  if (days.length === 0) return `${what}: nothing recorded`;
  const totals = series.map((s) => ({ label: s.label, total: s.values.reduce((a, b) => a + b, 0) }));
  const all = totals.reduce((sum, t) => sum + t.total, 0);
  return `${what} from ${days[0]} to ${days.at(-1)}: ${format(all)} in total; ${totals
    .map((t) => `${t.label} ${format(t.total)}`)
    .join(', ')}`;
}

const tokensOf = (g: UsageGroup) => g.input_tokens + g.output_tokens;
const number = (n: number) => n.toLocaleString();

/** Spend and tokens per day and model, as charts and a table, live as generations happen; CSV download. */
export function UsagePage({ identity }: PageProps) {
  const { studioId, picker } = useStudioChoice(identity, 'usage-studio');
  const [range, setRange] = useState<Range>({ from: '', to: '' });
  const report = useResource(async () => {
    if (studioId === undefined) return undefined;
    return unwrap(
      await gateway.GET('/v1/ai/usage', { params: { query: queryOf(studioId, range) } }),
    ) as UsageReport;
  }, [studioId, range.from, range.to]);
  // A user token follows its own usage stream by default; the admin names the studio's.
  const live = useReloadOnEvents(
    studioId === undefined ? undefined : identity.kind === 'admin' ? { stream: `usage-${studioId}` } : {},
    report.reload,
  );
  const download = useAction(async () => {
    if (studioId === undefined) return;
    const query = new URLSearchParams({ ...queryOf(studioId, range), format: 'csv' });
    const response = await consoleFetch(`/v1/ai/usage?${query}`);
    if (!response.ok) throw failureOf(response, await response.json().catch(() => undefined));
    const url = URL.createObjectURL(await response.blob());
    const link = document.createElement('a');
    link.href = url;
    link.download = `usage-${studioId}.csv`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });

  const groups = report.data?.items ?? [];
  const spend = byModel(groups, (g) => g.cost_usd);
  const tokens = byModel(groups, tokensOf);
  const totalTokens = report.data ? report.data.totals.input_tokens + report.data.totals.output_tokens : 0;
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <div class="row">
        {picker}
        <div class="field">
          <label for="usage-from">From</label>
          <input
            id="usage-from"
            type="date"
            value={range.from}
            onChange={(event) => setRange({ ...range, from: event.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="usage-to">To</label>
          <input
            id="usage-to"
            type="date"
            value={range.to}
            onChange={(event) => setRange({ ...range, to: event.currentTarget.value })}
          />
        </div>
        <div class="field">
          <button type="button" disabled={download.busy || studioId === undefined} onClick={download.act}>
            {download.busy ? 'Preparing…' : 'Download CSV'}
          </button>
        </div>
        <LiveStatus follow={live} />
      </div>
      <ErrorNotice error={download.error ?? report.error} />
      {report.loading && !report.data && <Busy label="Loading usage" />}
      {report.data && (
        <>
          <p>
            <strong data-field="requests">{number(report.data.totals.requests)}</strong>{' '}
            {noun(report.data.totals.requests, 'request')} ·{' '}
            <strong data-field="tokens">{number(totalTokens)}</strong> {noun(totalTokens, 'token')} ·{' '}
            <strong data-field="cost">{formatUsd(report.data.totals.cost_usd)}</strong>
          </p>
          {groups.length === 0 && (
            <EmptyState
              what={`No usage of ${studioId}${range.from || range.to ? ' in these dates' : ' yet'}.`}
              how={
                range.from || range.to
                  ? 'Widen the dates above: spend and tokens per day and model show here.'
                  : "Spend and tokens per day and model show here, live, as the studio's tokens call models (issue one on the Tokens page)."
              }
            />
          )}
        </>
      )}
      {report.data && groups.length > 0 && (
        <>
          <div class="charts">
            <figure>
              <figcaption>Spend per day, by model</figcaption>
              <BarChart
                summary={summaryOf('Spend', spend.days, spend.series, formatUsd)}
                labels={spend.days}
                series={spend.series}
                format={formatUsd}
              />
            </figure>
            <figure>
              <figcaption>Tokens per day, by model</figcaption>
              <BarChart
                summary={summaryOf('Tokens', tokens.days, tokens.series, number)}
                labels={tokens.days}
                series={tokens.series}
              />
            </figure>
          </div>
          <div class="table-wrap">
            <table>
              <caption class="muted">Usage of {studioId} by day and model</caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Model</th>
                  <th scope="col">Requests</th>
                  <th scope="col">Failures</th>
                  <th scope="col">Input tokens</th>
                  <th scope="col">Output tokens</th>
                  <th scope="col">Cost</th>
                </tr>
              </thead>
              <tbody>
                {groups.map((g) => (
                  <tr key={`${g.day}|${g.model}`}>
                    <th scope="row">{g.day}</th>
                    <td>
                      <code>{g.model}</code>
                    </td>
                    <td>{number(g.requests)}</td>
                    <td>{number(g.failures)}</td>
                    <td>{number(g.input_tokens)}</td>
                    <td>{number(g.output_tokens)}</td>
                    <td>{formatUsd(g.cost_usd)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
