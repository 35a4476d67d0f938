/** The `data` of every event of these types (comma-separated) in the log, read page by page over HTTP. */
export async function auditData<Data>(url: string, adminKey: string, types: string): Promise<Data[]> {
  const found: Data[] = [];
  for (let after = 0; ; ) {
    const res = await fetch(`${url}/v1/audit/events?type=${types}&after=${after}&limit=1000`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    if (res.status !== 200) throw new Error(`audit/events answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as { items: { data: Data }[]; next_after: number | null };
    found.push(...page.items.map((item) => item.data));
    if (page.next_after === null) return found;
    after = page.next_after;
  }
}
