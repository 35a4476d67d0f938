import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/**
 * The MCP config file (`STUDIO_MCP_CONFIG`, default `<data dir>/mcp.json`):
 * `{ "servers": { "<name>": { "command": "npx", "args": ["…"], "env": {…}, "cwd": "…" } } }`.
 */
export const McpConfigSchema = z.strictObject({
  servers: z.record(
    z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'a server name is letters, digits, "_" or "-"'),
    z.strictObject({
      command: z.string().min(1),
      args: z.array(z.string()).default([]),
      env: z.record(z.string(), z.string()).default({}),
      cwd: z.string().optional(),
    }),
  ),
});
export type McpConfig = z.infer<typeof McpConfigSchema>;

export type ConfigResult = { ok: true; config: McpConfig } | { ok: false; reason: string };

export async function readMcpConfig(path: string): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return { ok: false, reason: `no MCP config at ${path}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: `${path} is not valid JSON` };
  }
  const parsed = McpConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: `${path}: ${issue?.path.join('.') || 'config'}: ${issue?.message ?? 'invalid'}`,
    };
  }
  if (Object.keys(parsed.data.servers).length === 0) return { ok: false, reason: `${path} lists no servers` };
  return { ok: true, config: parsed.data };
}
