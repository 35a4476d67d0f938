import { Agent, fetch } from 'undici';
import type { ApiResponse } from '../../support/gateway.ts';

const agents = new Map<string, Agent>();

/**
 * A JSON request sent from another loopback address (127.0.0.2, 127.0.0.3, …: all of 127/8 is this
 * machine), so per-address rate limits can be tested apart from each other.
 */
function agentFor(address: string): Agent {
  let agent = agents.get(address);
  if (!agent) {
    agent = new Agent({ localAddress: address });
    agents.set(address, agent);
  }
  return agent;
}

/** A GET from another loopback address; redirects are not followed. */
export async function getFrom(address: string, url: string) {
  const res = await fetch(url, { dispatcher: agentFor(address), redirect: 'manual' });
  return { status: res.status, headers: res.headers as unknown as Headers, body: await res.text() };
}

export async function fromAddress(
  address: string,
  url: string,
  body: unknown,
  token?: string,
): Promise<ApiResponse> {
  const res = await fetch(url, {
    method: 'POST',
    dispatcher: agentFor(address),
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers as unknown as Headers, json, text };
}

export async function closeAgents(): Promise<void> {
  await Promise.all([...agents.values()].map((a) => a.close()));
  agents.clear();
}
