import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { BudgetView } from '../../api/records.ts';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { count } from '../../ui/count.ts';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatUsd, formatWhen } from '../../ui/format.ts';
import { ListTable } from '../../ui/ListTable.tsx';
import { LiveStatus } from '../../ui/LiveStatus.tsx';
import { useReloadOnEvents } from '../../ui/use-follow.ts';
import { useAction, useResource } from '../../ui/use-resource.ts';
import { useStudioChoice } from '../StudioPicker.tsx';
import { useTokenScope } from '../TokenScope.tsx';
import type { PageProps } from './index.ts';

/** A studio's budgets: set, remove (after a confirmation), spent and remaining live as generations happen. */
export function BudgetsPage({ identity }: PageProps) {
  const { studioId, picker } = useStudioChoice(identity, 'budgets-studio');
  const { field: scopeField, scopeOf } = useTokenScope(studioId, 'budget-token');
  const budgets = useResource(async () => {
    if (studioId === undefined) return undefined;
    const answer = unwrap(
      await gateway.GET('/v1/studios/budgets/list', { params: { query: { studio_id: studioId } } }),
    ) as { items: BudgetView[] };
    return answer.items;
  }, [studioId]);
  // Every generation of the studio is an event of its usage stream: what is spent moves with it.
  const live = useReloadOnEvents(studioId ? { stream: `usage-${studioId}` } : undefined, budgets.reload);
  const removal = useConfirmation<BudgetView>((item) => void remove.act(item));
  const remove = useAction(async (budget: BudgetView) => {
    unwrap(
      await gateway.POST('/v1/studios/budgets/remove', {
        body: { studio_id: budget.studio_id, ...(budget.token_id ? { token_id: budget.token_id } : {}) },
      }),
    );
    await budgets.reload();
  });
  const set = useAction(async (form: HTMLFormElement) => {
    if (studioId === undefined) return;
    const data = new FormData(form);
    const tokenId = String(data.get('token_id') ?? '').trim();
    unwrap(
      await gateway.POST('/v1/studios/budgets/set', {
        body: {
          studio_id: studioId,
          ...(tokenId ? { token_id: tokenId } : {}),
          amount_usd: Number(data.get('amount_usd')),
          window: String(data.get('window')) as 'day' | 'month' | 'total',
          mode: String(data.get('mode')) as 'hard' | 'soft',
        },
      }),
    );
    await budgets.reload();
  });

  return (
    <section aria-labelledby="budgets-title">
      <h1 id="budgets-title">Budgets</h1>
      <div class="row">
        {picker}
        <LiveStatus follow={live} />
      </div>
      <form
        class="card row"
        aria-label="Set a budget"
        onSubmit={(event) => {
          event.preventDefault();
          void set.act(event.currentTarget);
        }}
      >
        {scopeField}
        <div class="field">
          <label for="budget-amount">Amount (USD)</label>
          <input id="budget-amount" name="amount_usd" type="number" min={0} step="any" required />
        </div>
        <div class="field">
          <label for="budget-window">Window</label>
          <select id="budget-window" name="window">
            <option value="day">per UTC day</option>
            <option value="month">per UTC month</option>
            <option value="total">in total</option>
          </select>
        </div>
        <div class="field">
          <label for="budget-mode">Mode</label>
          <select id="budget-mode" name="mode">
            <option value="hard">hard (refuse beyond)</option>
            <option value="soft">soft (record only)</option>
          </select>
        </div>
        <div class="field">
          <button type="submit" class="primary" disabled={set.busy || studioId === undefined}>
            {set.busy ? 'Setting…' : 'Set budget'}
          </button>
        </div>
      </form>
      <ErrorNotice error={set.error ?? remove.error ?? budgets.error} />
      <ListTable
        label="Budgets"
        list={budgets}
        caption={(items) => (
          <>
            {count(items.length, 'budget')} of {studioId}
          </>
        )}
        empty={{
          what: `No budgets for ${studioId} yet.`,
          how: 'Its generations are not capped. Set one above, for the whole studio or one of its tokens.',
        }}
        columns={['Scope', 'Amount', 'Spent', 'Reserved', 'Remaining', 'Resets', 'Actions']}
        row={(budget) => (
          <tr key={budget.token_id ?? ''}>
            <th scope="row">{scopeOf(budget)}</th>
            <td>
              {formatUsd(budget.amount_usd)} <span class="muted">{budget.window}</span>{' '}
              <span class={`badge ${budget.mode === 'hard' ? 'warn' : 'ok'}`}>{budget.mode}</span>
            </td>
            <td>
              <span data-field="spent">{formatUsd(budget.spent_usd)}</span>
              <div>
                <meter
                  aria-label={`Spent of the budget of ${scopeOf(budget)}`}
                  min={0}
                  max={budget.amount_usd || 1}
                  value={budget.spent_usd + budget.reserved_usd}
                  high={budget.amount_usd * 0.8}
                />
              </div>
            </td>
            <td>{formatUsd(budget.reserved_usd)}</td>
            <td data-field="remaining">{formatUsd(budget.remaining_usd)}</td>
            <td>{budget.resets_at ? formatWhen(budget.resets_at) : 'never'}</td>
            <td>
              <button type="button" class="danger" disabled={remove.busy} onClick={() => removal.ask(budget)}>
                Remove
              </button>
            </td>
          </tr>
        )}
      />
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove the budget of ${removal.item ? scopeOf(removal.item) : ''}?`}
        confirmLabel="Remove budget"
        danger
      >
        <p>Generations are no longer capped by it. What was spent stays recorded.</p>
      </ConfirmDialog>
    </section>
  );
}
