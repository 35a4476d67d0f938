/**
 * The AWS SDK's signer, loaded at the first signature: a gateway that never calls Bedrock keeps it
 * out of its heap ("The server compiled ahead of time" in docs/decisions.md).
 */
let signing:
  | Promise<[typeof import('@aws-crypto/sha256-js'), typeof import('@smithy/signature-v4')]>
  | undefined;
const loadSigning = () =>
  (signing ??= Promise.all([import('@aws-crypto/sha256-js'), import('@smithy/signature-v4')]));

/** A key pair, and the session token that comes with temporary credentials. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigningInput {
  method: 'GET' | 'POST';
  /** As it is sent: its path already percent-encoded (the signer encodes it once more, as AWS wants). */
  url: URL;
  /** The headers sent besides those signing adds; all of them are signed. */
  headers: Record<string, string>;
  body?: string;
  region: string;
  service: string;
  credentials: AwsCredentials;
  /** Default now. */
  date?: Date;
  /** Sent but left out of the signature (lowercase names). */
  unsignedHeaders?: readonly string[];
}

/**
 * Signs a request with AWS Signature Version 4, using the AWS SDK's own signer. Answers every header
 * to send: the given ones, `host` (the upstream client must send this very value), `x-amz-date`,
 * `x-amz-security-token` with a session token, and `authorization`. No `x-amz-content-sha256`: only
 * S3 wants the payload hash in a header; it is signed into the canonical request all the same.
 */
export async function signRequest(input: SigningInput): Promise<Record<string, string>> {
  const [{ Sha256 }, { SignatureV4 }] = await loadSigning();
  const signer = new SignatureV4({
    service: input.service,
    region: input.region,
    credentials: input.credentials,
    sha256: Sha256,
    applyChecksum: false,
  });
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of input.url.searchParams) {
    const seen = query[key];
    query[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  const signed = await signer.sign(
    {
      method: input.method,
      protocol: input.url.protocol,
      hostname: input.url.hostname,
      ...(input.url.port ? { port: Number(input.url.port) } : {}),
      path: input.url.pathname,
      query,
      headers: { ...lowercased(input.headers), host: input.url.host },
      body: input.body,
    },
    {
      signingDate: input.date ?? new Date(),
      ...(input.unsignedHeaders ? { unsignableHeaders: new Set(input.unsignedHeaders) } : {}),
    },
  );
  return lowercased(signed.headers);
}

const lowercased = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
