/** Where a log lives, for people: its URL or connection string without a password. */

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres';
  }
}

/** A KurrentDB connection string without its password, for logs and `location`. */
export function redactConnectionString(connectionString: string): string {
  return connectionString.replace(/^([a-z+]+:\/\/[^:@/]+:)[^@/]*@/i, '$1***@');
}
