import { useEffect, useState } from 'preact/hooks';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { TokenRecord } from '../../api/records.ts';
import { SPEND_WINDOW, type TokenActivity, tokenActivity } from '../../api/token-activity.ts';
import { Busy } from '../../ui/Busy.tsx';
import { CardForm } from '../../ui/CardForm.tsx';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { count } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatUsd, formatWhen } from '../../ui/format.ts';
import { TableScroll } from '../../ui/TableScroll.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';
import { useStudioChoice } from '../StudioPicker.tsx';
import type { PageProps } from './index.ts';

const DAY_S = 24 * 3600;
const EXPIRY_CHOICES = [
  ['', 'Never'],
  [String(3600), '1 hour'],
  [String(DAY_S), '1 day'],
  [String(30 * DAY_S), '30 days'],
  [String(90 * DAY_S), '90 days'],
  [String(365 * DAY_S), '1 year'],
] as const;

/** Model ids or `*` patterns, one a line or separated by commas; none means every model. */
const patternsOf = (text: string) =>
  text
    .split(/[\n,]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

const stateOf = (token: TokenRecord, now: number) =>
  token.revoked_at !== null
    ? { label: 'revoked', badge: 'bad' }
    : token.expires_at !== null && Date.parse(token.expires_at) <= now
      ? { label: 'expired', badge: 'warn' }
      : { label: 'active', badge: 'ok' };

/**
 * User tokens of a studio. The admin picks the studio, issues tokens (limited to some models, with
 * an expiry) and revokes them; a studio's user sees its own studio's tokens. A new token's secret
 * lives in this component's state only: shown once, gone when the page is left.
 */
export function TokensPage({ identity }: PageProps) {
  const admin = identity.kind === 'admin';
  const { studioId, picker } = useStudioChoice(identity, 'tokens-studio');
  const [issued, setIssued] = useState<{ secret: string; token: TokenRecord } | undefined>(undefined);
  // A secret shown for one studio is not left on screen when another is picked.
  useEffect(() => setIssued(undefined), [studioId]);
  const revocation = useConfirmation<TokenRecord>((item) => void revoke.act(item));

  const tokens = useResource(async () => {
    if (studioId === undefined) return undefined;
    // A user token lists its own studio's tokens without naming it.
    const query = admin ? { studio_id: studioId } : {};
    const answer = unwrap(await gateway.GET('/v1/studios/tokens/list', { params: { query } })) as {
      items: TokenRecord[];
    };
    return answer.items;
  }, [studioId]);
  // Last use and spend of each token, from the request log and budgets (its failure hides only them).
  const activity = useResource(async () => {
    if (studioId === undefined || !tokens.data) return undefined;
    return tokenActivity(
      studioId,
      tokens.data.map((t) => t.id),
      admin,
    ).catch(() => undefined);
  }, [studioId, tokens.data]);

  const apply = useAction(async (form: HTMLFormElement) => {
    if (studioId === undefined) return;
    const data = new FormData(form);
    const name = String(data.get('name') ?? '').trim();
    const models = patternsOf(String(data.get('models') ?? ''));
    const expires = String(data.get('expires_in_s') ?? '');
    const answer = unwrap(
      await gateway.POST('/v1/studios/tokens/apply', {
        body: {
          studio_id: studioId,
          ...(name ? { name } : {}),
          ...(models.length > 0 ? { models } : {}),
          ...(expires ? { expires_in_s: Number(expires) } : {}),
        },
      }),
    ) as { user_token: string; token: TokenRecord };
    setIssued({ secret: answer.user_token, token: answer.token });
    form.reset();
    await tokens.reload();
  });
  const revoke = useAction(async (token: TokenRecord) => {
    unwrap(await gateway.POST('/v1/studios/tokens/revoke', { body: { token_id: token.id } }));
    await tokens.reload();
  });

  const now = Date.now();
  return (
    <section aria-labelledby="tokens-title">
      <h1 id="tokens-title">Tokens</h1>
      {admin ? (
        picker
      ) : (
        <p class="muted">
          The tokens of studio <code>{identity.studio_id}</code>. Only an admin issues or revokes them.
        </p>
      )}
      {admin && studioId !== undefined && (
        <CardForm title="Issue a token" onSubmit={(form) => void apply.act(form)}>
          <div class="row">
            <div class="field">
              <label for="token-name">Name</label>
              <input id="token-name" name="name" maxLength={200} placeholder="token" />
            </div>
            <div class="field">
              <label for="token-expiry">Expires after</label>
              <select id="token-expiry" name="expires_in_s">
                {EXPIRY_CHOICES.map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <div class="field">
            <label for="token-models">
              Models <span class="hint">(ids or * patterns, one a line; empty: every model)</span>
            </label>
            <textarea id="token-models" name="models" rows={3} placeholder={'openai/*\ndev/echo'} />
          </div>
          <button type="submit" class="primary" disabled={apply.busy}>
            {apply.busy ? 'Issuing…' : 'Issue token'}
          </button>
        </CardForm>
      )}
      {issued && (
        <section class="notice ok" aria-label="New token">
          <p>
            <strong>Token {issued.token.name} issued.</strong> Copy it now: you will not see it again. Studio
            keeps only its hash.
          </p>
          <p class="secret" data-testid="new-token">
            {issued.secret}
          </p>
          <div class="row">
            <CopyButton text={issued.secret} label="Copy token" />
            <button type="button" onClick={() => setIssued(undefined)}>
              I have copied it
            </button>
          </div>
        </section>
      )}
      <ErrorNotice error={apply.error ?? revoke.error ?? tokens.error} />
      {tokens.loading && !tokens.data && <Busy label="Loading tokens" />}
      {tokens.data?.length === 0 && (
        <EmptyState
          what={`No tokens for ${studioId} yet.`}
          how={
            admin
              ? 'A token is what an app sends to call models as this studio: issue one above.'
              : 'Only an admin issues tokens.'
          }
        />
      )}
      {tokens.data && tokens.data.length > 0 && (
        <TableScroll label={`Tokens of ${studioId}`}>
          <table>
            <caption class="muted">
              {count(tokens.data.length, 'token')} of <code>{studioId}</code>
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id · prefix</th>
                <th scope="col">Models</th>
                <th scope="col">State</th>
                <th scope="col">Last used</th>
                <th scope="col">Spend</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                {admin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((token) => {
                const state = stateOf(token, now);
                return (
                  <tr key={token.id}>
                    <td>
                      {token.name}
                      {identity.kind === 'user' && identity.token_id === token.id && (
                        <>
                          {' '}
                          <span class="badge">this token</span>
                        </>
                      )}
                    </td>
                    <td>
                      <code>{token.id}</code>
                      <div class="muted">
                        <code>{token.prefix}…</code>
                      </div>
                    </td>
                    <td>
                      {token.models === null ? 'every model' : token.models.join(', ')}
                      <ToolsOf token={token} />
                    </td>
                    <td>
                      <span class={`badge ${state.badge}`}>{state.label}</span>
                    </td>
                    <UseOf activity={activity.data?.get(token.id)} loaded={activity.data !== undefined} />
                    <td>{new Date(token.created_at).toLocaleString()}</td>
                    <td>
                      {token.expires_at === null ? 'never' : new Date(token.expires_at).toLocaleString()}
                    </td>
                    {admin && (
                      <td>
                        {token.revoked_at === null && (
                          <button
                            type="button"
                            class="danger"
                            disabled={revoke.busy}
                            aria-label={`Revoke ${token.name} (${token.id})`}
                            onClick={() => revocation.ask(token)}
                          >
                            Revoke
                          </button>
                        )}
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      )}
      <ConfirmDialog
        {...revocation.dialog}
        title={`Revoke token ${revocation.item?.name ?? ''}?`}
        confirmLabel="Revoke token"
        danger
      >
        <p>
          Every request with <code>{revocation.item?.prefix}…</code> is refused from now on. This cannot be
          undone.
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** The tools a token may call, when its record says (tokens without the field show nothing). */
function ToolsOf({ token }: { token: TokenRecord }) {
  const tools = (token as { tools?: readonly string[] | null }).tools;
  if (tools === undefined) return null;
  return <div class="muted">tools: {tools === null ? 'every tool' : tools.join(', ') || 'none'}</div>;
}

/** A token's last use and spend in the current window (from the request log and its budget). */
function UseOf({ activity, loaded }: { activity: TokenActivity | undefined; loaded: boolean }) {
  if (!loaded || !activity)
    return (
      <>
        <td>–</td>
        <td>–</td>
      </>
    );
  return (
    <>
      <td data-field="last-used">
        {activity.lastUsed === null ? 'not in the request log' : formatWhen(activity.lastUsed)}
      </td>
      <td data-field="spend">
        {activity.spend ? (
          <>
            {formatUsd(activity.spend.usd)} <span class="muted">{SPEND_WINDOW[activity.spend.window]}</span>
          </>
        ) : (
          '–'
        )}
      </td>
    </>
  );
}
