// The MCP SDK (and its JSON-schema validator) is loaded on the first use of /v1/mcp or of a tool
// server, never at the gateway's start.

const load = async () => {
  const [client, stdio, streamable, sse, server, serverTransport, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    /** What the SDK hands every stdio child from the parent's environment unless told otherwise. */
    inheritedEnv: stdio.DEFAULT_INHERITED_ENV_VARS,
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
    SSEClientTransport: sse.SSEClientTransport,
    Server: server.Server,
    StreamableHTTPServerTransport: serverTransport.StreamableHTTPServerTransport,
    types,
  };
};

export type McpSdk = Awaited<ReturnType<typeof load>>;

let loading: Promise<McpSdk> | undefined;

/** The SDK's classes and schemas, imported once. */
export function mcpSdk(): Promise<McpSdk> {
  loading ??= load();
  return loading;
}
