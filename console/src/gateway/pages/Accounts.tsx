import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { AccountRecord } from '../../api/records.ts';
import { Busy } from '../../ui/Busy.tsx';
import { CardForm } from '../../ui/CardForm.tsx';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { count } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { TableScroll } from '../../ui/TableScroll.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';
import { useStudioChoice } from '../StudioPicker.tsx';
import type { PageProps } from './index.ts';

const when = (iso: string | null) => (iso === null ? 'never' : new Date(iso).toLocaleString());

/** The accounts of a studio (people who sign in with a password or OAuth): list, create, remove. */
export function AccountsPage({ identity }: PageProps) {
  const { studioId, picker } = useStudioChoice(identity, 'accounts-studio');
  const removal = useConfirmation<AccountRecord>((item) => void remove.act(item));
  const accounts = useResource(async () => {
    if (studioId === undefined) return undefined;
    const answer = unwrap(
      await gateway.GET('/v1/accounts/list', { params: { query: { studio_id: studioId } } }),
    ) as { items: AccountRecord[] };
    return answer.items;
  }, [studioId]);
  const create = useAction(async (form: HTMLFormElement) => {
    if (studioId === undefined) return;
    const data = new FormData(form);
    const name = String(data.get('name') ?? '').trim();
    const password = String(data.get('password') ?? '');
    unwrap(
      await gateway.POST('/v1/accounts/create', {
        body: {
          studio_id: studioId,
          email: String(data.get('email') ?? '').trim(),
          ...(name ? { name } : {}),
          ...(password ? { password } : {}),
        },
      }),
    );
    form.reset();
    await accounts.reload();
  });
  const remove = useAction(async (account: AccountRecord) => {
    unwrap(await gateway.POST('/v1/accounts/remove', { body: { account_id: account.id } }));
    await accounts.reload();
  });

  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      {picker}
      {studioId !== undefined && (
        <CardForm title="Create an account" onSubmit={(form) => void create.act(form)}>
          <div class="row">
            <div class="field">
              <label for="account-email">Email</label>
              <input
                id="account-email"
                name="email"
                type="email"
                required
                maxLength={320}
                autoComplete="off"
              />
            </div>
            <div class="field">
              <label for="account-name">
                Name <span class="hint">(optional)</span>
              </label>
              <input id="account-name" name="name" maxLength={200} autoComplete="off" />
            </div>
            <div class="field">
              <label for="account-password">
                Password <span class="hint">(optional: OAuth only without)</span>
              </label>
              <input id="account-password" name="password" type="password" autoComplete="new-password" />
            </div>
            <div class="field">
              <button type="submit" class="primary" disabled={create.busy}>
                {create.busy ? 'Creating…' : 'Create account'}
              </button>
            </div>
          </div>
        </CardForm>
      )}
      <ErrorNotice error={create.error ?? remove.error ?? accounts.error} />
      {accounts.loading && studioId !== undefined && !accounts.data && <Busy label="Loading accounts" />}
      {accounts.data?.length === 0 && (
        <EmptyState
          what={`No accounts for ${studioId} yet.`}
          how="An account lets a person sign in to this studio with a password or OAuth: create one above."
        />
      )}
      {accounts.data && accounts.data.length > 0 && (
        <TableScroll label={`Accounts of ${studioId}`}>
          <table>
            <caption class="muted">
              {count(accounts.data.length, 'account')} of <code>{studioId}</code>
            </caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Sign-in</th>
                <th scope="col">Status</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {accounts.data.map((account) => (
                <tr key={account.id}>
                  <td>
                    {account.email ?? <span class="muted">none</span>}
                    <div class="muted">
                      <code>{account.id}</code>
                    </div>
                  </td>
                  <td>{account.name ?? ''}</td>
                  <td>
                    {[
                      ...(account.has_password ? ['password'] : []),
                      ...account.identities.map((identity) => identity.provider),
                    ].join(', ') || <span class="muted">none yet</span>}
                  </td>
                  <td>
                    <span class={`badge ${account.status === 'active' ? 'ok' : 'bad'}`}>
                      {account.status}
                    </span>
                  </td>
                  <td>{when(account.last_login_at)}</td>
                  <td>
                    {account.status === 'active' && (
                      <button
                        type="button"
                        class="danger"
                        disabled={remove.busy}
                        aria-label={`Remove ${account.email ?? account.id}`}
                        onClick={() => removal.ask(account)}
                      >
                        Remove
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove account ${removal.item?.email ?? removal.item?.id ?? ''}?`}
        confirmLabel="Remove account"
        danger
      >
        <p>
          It can no longer sign in, and the tokens its sign-ins issued are revoked. This cannot be undone.
        </p>
      </ConfirmDialog>
    </section>
  );
}
