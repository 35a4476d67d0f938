/**
 * A browser as far as an OAuth sign-in needs one: follows redirects itself (`redirect: 'manual'`),
 * keeps cookies per host and path, and submits the HTML forms it is shown.
 */

interface Cookie {
  name: string;
  value: string;
  host: string;
  path: string;
}

export interface Visit {
  /** The page's URL; when `stopped`, the URL a redirect pointed to (not loaded). */
  url: URL;
  stopped: boolean;
  status: number;
  headers: Headers;
  body: string;
}

export interface Form {
  action: URL;
  fields: Record<string, string>;
}

const decodeEntities = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

export class Browser {
  #cookies: Cookie[] = [];

  /** Loads `url` and follows redirects until a page, or until the next URL matches `stopAt` (not loaded). */
  async visit(
    url: URL | string,
    options: { method?: 'GET' | 'POST'; form?: Record<string, string>; stopAt?: (url: URL) => boolean } = {},
  ): Promise<Visit> {
    let current = new URL(url);
    let method = options.method ?? 'GET';
    let body: string | undefined = options.form ? new URLSearchParams(options.form).toString() : undefined;
    for (let hop = 0; hop < 20; hop++) {
      const headers: Record<string, string> = { accept: 'text/html' };
      const cookie = this.#cookieHeader(current);
      if (cookie) headers.cookie = cookie;
      if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      const res = await fetch(current, { method, headers, body, redirect: 'manual' });
      for (const line of res.headers.getSetCookie()) this.#store(line, current);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.arrayBuffer();
        const next = new URL(location, current);
        if (options.stopAt?.(next))
          return { url: next, stopped: true, status: res.status, headers: res.headers, body: '' };
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        current = next;
        continue;
      }
      return {
        url: current,
        stopped: false,
        status: res.status,
        headers: res.headers,
        body: await res.text(),
      };
    }
    throw new Error(`too many redirects from ${String(url)}`);
  }

  /** Submits `form` with extra fields, as a person filling it in would. */
  submit(form: Form, fill: Record<string, string> = {}, stopAt?: (url: URL) => boolean): Promise<Visit> {
    return this.visit(form.action, { method: 'POST', form: { ...form.fields, ...fill }, stopAt });
  }

  #cookieHeader(url: URL): string {
    return this.#cookies
      .filter(
        (c) =>
          c.host === url.host &&
          (url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`)),
      )
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  #store(line: string, url: URL): void {
    const [pair, ...attributes] = line.split(';').map((s) => s.trim());
    const at = pair!.indexOf('=');
    const name = pair!.slice(0, at);
    const value = pair!.slice(at + 1);
    let path = url.pathname.slice(0, url.pathname.lastIndexOf('/')) || '/';
    let expired = false;
    for (const attribute of attributes) {
      const [key, val = ''] = attribute.split('=');
      const k = key!.toLowerCase();
      if (k === 'path') path = val || '/';
      if (k === 'max-age' && Number(val) <= 0) expired = true;
      if (k === 'expires' && Date.parse(val) <= Date.now()) expired = true;
    }
    this.#cookies = this.#cookies.filter((c) => !(c.name === name && c.host === url.host && c.path === path));
    if (!expired) this.#cookies.push({ name, value, host: url.host, path });
  }
}

/** The first POST form of a page: its action and its hidden fields. */
export function formOf(page: Visit): Form {
  const form = /<form\b[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(page.body);
  if (!form) throw new Error(`no form on ${page.url.href} (${page.status}): ${page.body.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input\b[^>]*>/gi)) {
    const tag = input[0];
    const name = /\bname="([^"]*)"/.exec(tag)?.[1];
    const type = /\btype="([^"]*)"/.exec(tag)?.[1] ?? 'text';
    if (name && type === 'hidden') fields[name] = decodeEntities(/\bvalue="([^"]*)"/.exec(tag)?.[1] ?? '');
  }
  return { action: new URL(decodeEntities(form[1]!), page.url), fields };
}
