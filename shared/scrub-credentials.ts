/**
 * Removes credentials from text that leaves the process (an error reaching a client, an event or a
 * log): the given secrets wherever they occur, key-like tokens, the userinfo of any URL
 * (`https://user:pass@host` → `https://***@host`) and the values of query parameters named like a
 * credential (`?access_token=…`, `&X-Amz-Signature=…`, `client_secret=…` in a message). Linear in the text's length.
 */
export function scrubCredentials(text: string, secrets: readonly (string | undefined)[] = []): string {
  let result = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) result = result.split(secret).join('***');
  }
  return (
    result
      // Upstreams echo keys partially ("Incorrect API key provided: sk-abc***xyz"): mask anything key-like.
      .replace(KEY_LIKE, '$1-***')
      .replace(URL_USERINFO, '$1***@')
      .replace(QUERY_PARAM, (param, lead: string, name: string, value: string) =>
        value && CREDENTIAL_NAME.test(name) ? `${lead}${name}=***` : param,
      )
  );
}

/** Whether `text` holds something `scrubCredentials` would remove (listed secrets aside). */
export function containsCredentials(text: string): boolean {
  return scrubCredentials(text) !== text;
}

const KEY_LIKE = /\b(sk|stk|key)[-_][A-Za-z0-9_*-]{6,}/g;
/** `scheme://` then userinfo up to the `@` before the host; never crosses a path, query or space. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,30}:\/\/)[^\s/?#@]+@/gi;
/**
 * A `name=value` pair of a query, a form body or a message (after `?`, `&`, `;`, a space, `(` or `,`):
 * its name (bounded, so a long run is never rescanned) and its value.
 */
const QUERY_PARAM = /(^|[?&;\s(,])([^=&#;?\s(,]{1,100})=([^&#;,\s"'<>)]*)/g;
/** Names ending in a credential word: `access_token`, `apiKey`, `X-Amz-Signature`; not `max_tokens`. */
const CREDENTIAL_NAME =
  /(?:token|key|secret|signature|sig|password|passwd|pwd|auth|authorization|credential)$/i;
