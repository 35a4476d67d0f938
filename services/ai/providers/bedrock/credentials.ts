import type { AwsCredentials } from './sign.ts';

type Chain = () => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }>;

/** One chain for the process: it keeps what it found (an instance role's credentials, say) until they near expiry. */
let chain: Promise<Chain> | undefined;

/**
 * The standard AWS credential chain (env `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/
 * `AWS_SESSION_TOKEN`, shared config and credentials files, SSO, web identity, container and
 * instance roles), for connections that name no key pair. The SDK's provider is loaded on first
 * use, since most gateways never need it; a failed look-up is tried again on the next call.
 */
export function awsDefaultCredentials(): () => Promise<AwsCredentials> {
  return async () => {
    chain ??= import('@aws-sdk/credential-provider-node').then(({ defaultProvider }) => defaultProvider());
    const { accessKeyId, secretAccessKey, sessionToken } = await (await chain)();
    return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  };
}
